//! Research policies layered on a kernel class. One file per policy, each
//! opening with the algorithm and its source, declared in the registry
//! (registry.rs) by one line.
//!
//! Fair-class policies implement `class::fair::hooks::FairHooks` and are
//! selected with a `+` suffix on the scheduler name (`eevdf+dwcfs`,
//! `cfs+pfs`, `eevdf+tsf`); the fair class itself (CFS 6.1 or EEVDF 6.12)
//! is unchanged.
//!
//! Whole schedulers that patch the fair class in more places than a `+`
//! policy can (their own tunable defaults, a derived base slice) are
//! registry schedulers built from mainline's stack with their hooks:
//! `bore` (BORE 5.9.6 on EEVDF, `bore_eevdf`) and `bore-1.7` (BORE 1.7.3 on
//! CFS, `bore_cfs`).
//!
//! Deadline orders replace how the deadline class orders SCHED_DEADLINE
//! jobs through its `DlOrder` hook (class/dl/order.rs); CBS, push/pull and
//! admission stay the kernel's. They are selected with `--dl-policy`.
//!
//! Whole-scheduler replacements build their own class stack: Project C's
//! BMQ and PDS (bmq.rs, pds.rs on the shared framework projc.rs) take
//! every policy in one class.

pub mod baby;
pub mod bfs;
pub mod bmq;
pub mod bore_cfs;
pub mod bore_eevdf;
pub mod cacule;
pub mod ck;
pub mod dwcfs;
pub mod illf;
pub mod llf;
pub mod muqss;
pub mod pds;
pub mod pfs;
pub mod projc;
pub mod scx_bmq;
pub mod scx_pds;
pub mod scx_simple;
pub mod tsf;
pub mod tt;
