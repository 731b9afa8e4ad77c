//! Research policies layered on a kernel class. One file per policy, each
//! opening with the algorithm and its source.
//!
//! Weight policies change the load weight the fair class sees for each
//! thread; the fair class itself (CFS 6.1 or EEVDF 6.12) is unchanged. They
//! are selected with a `+` suffix on the scheduler name (`eevdf+dwcfs`,
//! `cfs+pfs`).
//!
//! Deadline orders replace how the deadline class orders SCHED_DEADLINE
//! jobs through its [`DlOrder`] hook (class/dl/order.rs); CBS, push/pull
//! and admission stay the kernel's. They are selected with `--dl-policy`
//! ([`dl_order`]).

pub mod dwcfs;
pub mod illf;
pub mod llf;
pub mod pfs;
pub mod tsf;

use crate::class::dl::{DlOrder, Edf};
use crate::config::DlPolicy;
use serde::Serialize;

/// The deadline order for `policy`; `swap_rule` is ILLF's rule 4 (tunable
/// `illf_swap_rule`, ignored by the others).
pub fn dl_order(policy: DlPolicy, swap_rule: bool) -> Box<dyn DlOrder> {
    match policy {
        DlPolicy::Edf => Box::new(Edf),
        DlPolicy::Llf => Box::new(llf::Llf),
        DlPolicy::Illf => Box::new(illf::Illf::new(swap_rule)),
    }
}

/// How thread weights are derived from nice weights.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum WeightPolicy {
    /// The kernel's: the nice weight.
    #[default]
    None,
    /// Per-process fairness: w / N_t (pfs.rs).
    Pfs,
    /// Dynamic-weight CFS: α(N_t, N_o) · w (dwcfs.rs).
    Dwcfs,
    /// DVFS-aware time-slice scaling: TSF · w, TSF = 1/P(f) (tsf.rs).
    Tsf,
}

impl WeightPolicy {
    /// All policies with a name.
    pub const NAMED: [WeightPolicy; 3] =
        [WeightPolicy::Pfs, WeightPolicy::Dwcfs, WeightPolicy::Tsf];

    /// Suffix after `+` in a scheduler name ("" for none).
    pub fn name(self) -> &'static str {
        match self {
            WeightPolicy::None => "",
            WeightPolicy::Pfs => "pfs",
            WeightPolicy::Dwcfs => "dwcfs",
            WeightPolicy::Tsf => "tsf",
        }
    }

    /// One-line description.
    pub fn description(self) -> &'static str {
        match self {
            WeightPolicy::None => "nice weights",
            WeightPolicy::Pfs => pfs::DESCRIPTION,
            WeightPolicy::Dwcfs => dwcfs::DESCRIPTION,
            WeightPolicy::Tsf => tsf::DESCRIPTION,
        }
    }

    /// Parse a suffix.
    pub fn from_name(s: &str) -> Option<Self> {
        WeightPolicy::NAMED.into_iter().find(|p| p.name() == s)
    }

    /// Weight of a thread with nice weight `w` in a process of `threads`
    /// live threads on `cpus` online CPUs (at least 2: the kernel's
    /// smallest weight is 2 after scale_load_down, and 0 would break
    /// vruntime arithmetic).
    pub fn weight(self, w: u64, threads: usize, cpus: usize) -> u64 {
        let scaled = match self {
            // TSF does not depend on thread counts (its factor is applied
            // at context switches).
            WeightPolicy::None | WeightPolicy::Tsf => return w,
            WeightPolicy::Pfs => pfs::weight(w, threads),
            WeightPolicy::Dwcfs => dwcfs::weight(w, threads, cpus),
        };
        scaled.max(2)
    }
}
