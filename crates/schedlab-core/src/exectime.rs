//! Execution-time model: how fast a task's `run` work progresses on a CPU,
//! and the synthetic PMU counters a policy can read. Kept apart from the
//! scheduling classes and policies (DEVELOPERS.md).
//!
//! Work is measured in ns at full speed: a capacity-1024 CPU at its maximum
//! frequency. A task's memory intensity μ ∈ [0, 1] is the fraction of its
//! full-speed time spent stalled on memory, which does not speed up with
//! the core clock (seed-algorithms.md §1.1, §1.5):
//!
//!   T(f) = C_sense / f + T_nonsense,   P(f) = T(f_max) / T(f) = 1 / (μ + (1 − μ)·f_max/f)
//!
//! and the progress rate is capacity/1024 × P(f). μ = 0 (the default) is
//! the classic "work scales with frequency".

use crate::clock::Ns;
use crate::rng::Rng;
use crate::topology::{Cpu, CAPACITY_SCALE};

/// μ is carried in parts per million so every rate is an exact integer ratio.
pub const PPM: u64 = 1_000_000;

/// Progress per ns of a task with memory intensity `mem_ppm` on `cpu`
/// running at `freq_khz`, as (numerator, denominator).
pub fn progress_rate(cpu: &Cpu, freq_khz: u64, mem_ppm: u32) -> (u128, u128) {
    let mu = mem_ppm as u128;
    let (f, fmax) = (freq_khz as u128, cpu.max_freq_khz as u128);
    let num = cpu.capacity as u128 * f * PPM as u128;
    let den = CAPACITY_SCALE as u128 * (mu * f + (PPM as u128 - mu) * fmax);
    (num, den.max(1))
}

/// Counters of one quantum (a stretch of running between two switches), as
/// a PMU would report them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PmuSample {
    /// Wall time of the quantum, ns.
    pub t_run: Ns,
    /// Core cycles not stalled on memory.
    pub cycles: u64,
    /// Memory accesses that missed the caches (LLC misses).
    pub llc_misses: u64,
    /// Core frequency during the quantum, kHz.
    pub freq_khz: u64,
}

/// The PMU reading for a quantum of `t_run` ns in which `work` ns of
/// full-speed work were done by a task of memory intensity `mem_ppm` at
/// `freq_khz`: its stall time is μ·work (memory time does not scale), the
/// rest runs at the core clock; LLC misses = stall / `mem_latency_ns`.
/// `noise_pct` > 0 perturbs the miss count by a seeded uniform ±noise_pct %.
pub fn pmu_sample(
    t_run: Ns,
    work: u64,
    mem_ppm: u32,
    freq_khz: u64,
    mem_latency_ns: u64,
    noise_pct: u64,
    rng: &mut Rng,
) -> PmuSample {
    let stall = ((work as u128 * mem_ppm as u128) / PPM as u128).min(t_run as u128) as u64;
    let mut misses = stall / mem_latency_ns.max(1);
    if noise_pct > 0 {
        let span = 2 * noise_pct * misses / 100 + 1;
        misses = (misses + rng.below(span)).saturating_sub(noise_pct * misses / 100);
    }
    let busy = t_run - stall;
    PmuSample {
        t_run,
        cycles: (busy as u128 * freq_khz as u128 / 1_000_000) as u64,
        llc_misses: misses,
        freq_khz,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cpu(f: u64, fmax: u64) -> Cpu {
        Cpu {
            id: 0,
            core: 0,
            llc: 0,
            capacity: 1024,
            freq_khz: f,
            max_freq_khz: fmax,
        }
    }

    #[test]
    fn rate_follows_the_memory_model() {
        // Core-bound at half frequency: half speed.
        let (n, d) = progress_rate(&cpu(1_000_000, 2_000_000), 1_000_000, 0);
        assert_eq!(n * 2, d);
        // μ = 0.8 at half frequency: 1 / (0.8 + 0.2·2) = 1/1.2.
        let (n, d) = progress_rate(&cpu(1_000_000, 2_000_000), 1_000_000, 800_000);
        assert_eq!(n * 12, d * 10);
        // Full speed whatever μ at f_max.
        let (n, d) = progress_rate(&cpu(2_000_000, 2_000_000), 2_000_000, 300_000);
        assert_eq!(n, d);
    }

    #[test]
    fn pmu_reports_stall_as_misses() {
        let mut rng = Rng::new(1);
        let s = pmu_sample(4_000_000, 3_000_000, 500_000, 1_000_000, 100, 0, &mut rng);
        assert_eq!(s.llc_misses, 15_000);
        assert_eq!(s.cycles, 2_500_000);
    }
}
