//! Research policies layered on a kernel class. One file per policy, each
//! opening with the algorithm and its source, declared in the registry
//! (registry.rs) by one line.
//!
//! Fair-class policies implement `class::fair::hooks::FairHooks` and are
//! selected with a `+` suffix on the scheduler name (`eevdf+dwcfs`,
//! `cfs+pfs`, `eevdf+tsf`); the fair class itself (CFS 6.1 or EEVDF 6.12)
//! is unchanged.

pub mod dwcfs;
pub mod pfs;
pub mod tsf;
