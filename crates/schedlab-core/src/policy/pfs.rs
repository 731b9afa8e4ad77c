//! PFS, process-fair scheduling: the baseline of seed 003
//! (../shared/seeds/003_966d5ac02bf4bec7.txt, seed-algorithms.md §3.5).
//!
//! Every thread of a process with N_t live threads gets w / N_t, so a
//! process's threads together weigh what one thread of nice w would:
//! fairness between processes regardless of thread count, without cgroups.

use crate::class::fair::hooks::FairHooks;
use crate::plugin::FairPolicyDef;

/// One-line description for listings.
pub const DESCRIPTION: &str =
    "process-fair weights: each of a process's N_t threads gets w/N_t (seed 003 baseline)";

/// Registry declaration (registry.rs, `FAIR_POLICIES`).
pub const DEF: FairPolicyDef = FairPolicyDef {
    name: "pfs",
    description: DESCRIPTION,
    source: "seed 003 (../shared/seeds/003); seed-algorithms.md §3.5",
    tunables: &[],
    hooks: |_| Box::new(Pfs),
};

/// PFS as fair-class hooks.
#[derive(Debug, Default)]
pub struct Pfs;

impl FairHooks for Pfs {
    fn name(&self) -> &'static str {
        "pfs"
    }

    fn effective_weight(&self, w: u64, threads: usize, _cpus: usize) -> u64 {
        // The kernel's smallest weight is 2 after scale_load_down; 0 would
        // break vruntime arithmetic.
        weight(w, threads).max(2)
    }

    fn thread_count_aware(&self) -> bool {
        true
    }
}

/// w / N_t, rounded to the nearest integer weight.
pub fn weight(w: u64, threads: usize) -> u64 {
    let n = threads.max(1) as u64;
    (w + n / 2) / n
}

#[cfg(test)]
mod tests {
    #[test]
    fn splits_the_nice_weight() {
        assert_eq!(super::weight(1024, 1), 1024);
        assert_eq!(super::weight(1024, 4), 256);
        assert_eq!(super::weight(1024, 3), 341);
    }
}
