//! TSF, dynamic time-slice scaling under DVFS: seed 000
//! (../shared/seeds/000_2bfda8e48e1e19e7.txt), derivation in
//! seed-algorithms.md §1.
//!
//! At a lower core frequency f, a core-bound task loses the full factor
//! f/f_max of its progress while a memory-bound one loses little, yet CFS
//! and EEVDF keep giving both the same CPU time. TSF scales each task's
//! weight by the inverse of its normalised performance, TSF_i = 1/P_i(f),
//! so every task's compute resource falls by the same ratio (§1.3: 1/P,
//! not P).
//!
//! Online estimate at each context switch (§1.4), from the PMU counters
//! of the quantum just run at f_cur:
//!
//!   T_ns = min(N_mem × L_mem, T_run),  C_sense = (T_run − T_ns)·f_cur,
//!   P(f) = (C_sense/f_max + T_ns) / (C_sense/f + T_ns),  TSF = 1/P(f),
//!
//! with f the frequency expected for the next period (the current one: the
//! governors modelled so far are steady) and L_mem a platform constant
//! (tunable `mem_latency_ns`). The new weight TSF × nice weight applies from
//! the task's next period on (the engine reweights it as it is switched
//! out). The counters come from exectime.rs's synthetic PMU.

use crate::exectime::PmuSample;

/// One-line description for listings.
pub const DESCRIPTION: &str =
    "DVFS-aware weights: TSF = 1/P(f) from PMU counters at each switch, applied next period (seed 000)";

/// TSF from one quantum's counters, for running next at `f_next_khz` on a
/// CPU whose maximum is `f_max_khz`. 1.0 when nothing can be estimated.
pub fn tsf(s: &PmuSample, mem_latency_ns: u64, f_next_khz: u64, f_max_khz: u64) -> f64 {
    if s.t_run == 0 || s.freq_khz == 0 || f_next_khz == 0 {
        return 1.0;
    }
    let t_run = s.t_run as f64;
    let t_ns = (s.llc_misses as f64 * mem_latency_ns as f64).min(t_run);
    // Cycles in kHz·ns units: C/f is then in ns.
    let c_sense = (t_run - t_ns) * s.freq_khz as f64;
    let p = (c_sense / f_max_khz as f64 + t_ns) / (c_sense / f_next_khz as f64 + t_ns);
    if p > 0.0 {
        1.0 / p
    } else {
        1.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(t_run: u64, stall: u64, f: u64) -> PmuSample {
        PmuSample {
            t_run,
            cycles: 0,
            llc_misses: stall / 100,
            freq_khz: f,
        }
    }

    /// TSF = 1 at f_max; 1/P for core-bound (2 at half speed) and mixed tasks.
    #[test]
    fn tsf_is_the_inverse_of_normalised_performance() {
        assert!(
            (tsf(
                &sample(4_000_000, 1_000_000, 2_000_000),
                100,
                2_000_000,
                2_000_000
            ) - 1.0)
                .abs()
                < 1e-12
        );
        assert!(
            (tsf(&sample(4_000_000, 0, 1_000_000), 100, 1_000_000, 2_000_000) - 2.0).abs() < 1e-12
        );
        // The spec's Y (P = 0.9 at f_max/2): μ such that 1/(μ + 2(1−μ)) = 0.9 → μ = 8/9.
        // At f = f_max/2 a quantum of 1 ms holds stall = μ·work, work = 0.9 ms.
        let work = 900_000.0;
        let stall = (work * 8.0 / 9.0) as u64;
        let t = tsf(
            &sample(1_000_000, stall, 1_000_000),
            100,
            1_000_000,
            2_000_000,
        );
        assert!((t - 1.0 / 0.9).abs() < 1e-3, "{t}");
    }
}
