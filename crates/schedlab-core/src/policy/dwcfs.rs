//! DW-CFS, dynamic-weight CFS for multi-threaded processes: seed 003
//! (../shared/seeds/003_966d5ac02bf4bec7.txt), formula and analysis in
//! seed-algorithms.md §3.1–§3.3.
//!
//! A thread of a process with N_t live threads on N_o online CPUs gets
//! w' = α·w with
//!
//!   α(N_t, N_o) = −| 1.2·(1 + c) / (N_t + c) − 1.1 | + 1.1,  c = 11·N_o − 12.
//!
//! α(1) = 1, it rises to 1.1 at N_t = N_o (a process using every CPU is
//! slightly favoured) and falls towards 0 beyond, so a process with many
//! more threads than CPUs gains total weight only sub-linearly: between
//! CFS (N_t·w per process) and PFS (w per process).
//!
//! Guard (§3.2): for N_o = 1 the formula degenerates (c = −1: α = 0 for
//! every N_t > 1, 0/0 at N_t = 1); α = 1 there, as the spec proposes.
//! Weights are recomputed when a process gains or loses a thread and when
//! CPUs go on or offline (N_o is the number of online CPUs).

use crate::class::fair::hooks::FairHooks;
use crate::plugin::FairPolicyDef;

/// One-line description for listings.
pub const DESCRIPTION: &str =
    "dynamic weights α(N_t, N_o)·w: up to 1.1 for processes with ~N_o threads, damped beyond (seed 003)";

/// Registry declaration (registry.rs, `FAIR_POLICIES`).
pub const DEF: FairPolicyDef = FairPolicyDef {
    name: "dwcfs",
    description: DESCRIPTION,
    source: "seed 003 (../shared/seeds/003); seed-algorithms.md §3.1-§3.3",
    tunables: &[],
    hooks: |_| Box::new(Dwcfs),
};

/// DW-CFS as fair-class hooks.
#[derive(Debug, Default)]
pub struct Dwcfs;

impl FairHooks for Dwcfs {
    fn name(&self) -> &'static str {
        "dwcfs"
    }

    fn effective_weight(&self, w: u64, threads: usize, cpus: usize) -> u64 {
        // At least 2, the kernel's smallest weight after scale_load_down.
        weight(w, threads, cpus).max(2)
    }

    fn thread_count_aware(&self) -> bool {
        true
    }
}

/// α(N_t, N_o).
pub fn alpha(threads: usize, cpus: usize) -> f64 {
    if cpus <= 1 || threads <= 1 {
        return 1.0;
    }
    let c = 11.0 * cpus as f64 - 12.0;
    -(1.2 * (1.0 + c) / (threads as f64 + c) - 1.1).abs() + 1.1
}

/// α·w rounded to the nearest integer weight.
pub fn weight(w: u64, threads: usize, cpus: usize) -> u64 {
    (alpha(threads, cpus) * w as f64).round() as u64
}

#[cfg(test)]
mod tests {
    use super::alpha;

    /// The spec's table (§3.3) and properties (§3.2).
    #[test]
    fn alpha_matches_the_spec_table() {
        let table = [
            (1, 1.0, 1.0),
            (2, 1.0353, 1.1),
            (3, 1.0686, 1.0154),
            (4, 1.1, 0.9429),
            (5, 1.0703, 0.88),
            (8, 0.99, 0.7333),
            (16, 0.825, 0.5077),
            (32, 0.6188, 0.3143),
            (128, 0.2475, 0.0957),
        ];
        for (n, a4, a2) in table {
            assert!(
                (alpha(n, 4) - a4).abs() < 5e-5,
                "N_t={n} N_o=4: {}",
                alpha(n, 4)
            );
            assert!(
                (alpha(n, 2) - a2).abs() < 5e-5,
                "N_t={n} N_o=2: {}",
                alpha(n, 2)
            );
        }
        for cpus in [2, 4, 8, 16] {
            assert_eq!(alpha(1, cpus), 1.0);
            assert!((alpha(cpus, cpus) - 1.1).abs() < 1e-12);
            for n in cpus..cpus + 40 {
                assert!(alpha(n + 1, cpus) < alpha(n, cpus), "decreasing beyond N_o");
            }
        }
        // N_o = 1 guard.
        assert_eq!(alpha(1, 1), 1.0);
        assert_eq!(alpha(7, 1), 1.0);
    }
}
