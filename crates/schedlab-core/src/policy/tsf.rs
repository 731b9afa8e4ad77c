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
//! the task's next period on (the fair class reweights it as it is switched
//! out: the `stopping` hook). The counters come from exectime.rs's synthetic
//! PMU.

use crate::class::fair::hooks::FairHooks;
use crate::class::fair::weights::nice_to_weight;
use crate::clock::Ns;
use crate::config::{Tunable, TunableSet};
use crate::cpuset::CpuId;
use crate::exectime::PmuSample;
use crate::machine::Machine;
use crate::plugin::FairPolicyDef;
use crate::task::TaskId;
use crate::workload::Policy;

/// One-line description for listings.
pub const DESCRIPTION: &str =
    "DVFS-aware weights: TSF = 1/P(f) from PMU counters at each switch, applied next period (seed 000)";

/// Registry declaration (registry.rs, `FAIR_POLICIES`).
pub const DEF: FairPolicyDef = FairPolicyDef {
    name: "tsf",
    description: DESCRIPTION,
    source: "seed 000 (../shared/seeds/000); seed-algorithms.md §1",
    tunables: TUNABLES,
    hooks: |t| Box::new(Tsf::new(t)),
};

/// TSF's tunables.
pub const TUNABLES: &[Tunable] = &[
    Tunable {
        name: "mem_latency_ns",
        default: 100,
        min: 1,
        max: 10_000,
        unit: "ns",
        doc: "memory latency L_mem: stall time per LLC miss in the synthetic PMU and for TSF's estimate",
    },
    Tunable {
        name: "pmu_noise_pct",
        default: 0,
        min: 0,
        max: 100,
        unit: "%",
        doc: "seeded uniform noise on synthetic PMU miss counts, +-percent",
    },
    Tunable {
        name: "tsf_cost_ns",
        default: 0,
        min: 0,
        max: 1_000_000,
        unit: "ns",
        doc: "CPU time one TSF computation costs at a context switch (reading and resetting PMU counters)",
    },
];

/// TSF as fair-class hooks.
#[derive(Debug)]
pub struct Tsf {
    mem_latency_ns: u64,
    pmu_noise_pct: u64,
    cost_ns: u64,
}

impl Tsf {
    /// TSF with the run's tunables.
    pub fn new(t: &TunableSet) -> Self {
        let get = |k: &str, d: i64| t.get(k).unwrap_or(d).max(0) as u64;
        Tsf {
            mem_latency_ns: get("mem_latency_ns", 100),
            pmu_noise_pct: get("pmu_noise_pct", 0),
            cost_ns: get("tsf_cost_ns", 0),
        }
    }
}

impl FairHooks for Tsf {
    fn name(&self) -> &'static str {
        "tsf"
    }

    /// Read the synthetic PMU for the quantum `t` just ran on `cpu` and
    /// return its weight for the next period.
    fn stopping(&mut self, m: &mut Machine, cpu: CpuId, t: TaskId, ran: Ns) -> Option<u64> {
        let task = &m.tasks[t];
        if task.policy == Policy::Idle || ran == 0 {
            return None;
        }
        let c = m.topo.cpu(cpu);
        let (f, fmax) = (m.freq(cpu), c.max_freq_khz);
        let st = &m.stats.tasks[t];
        let work = st.work_done - st.quantum_work.min(st.work_done);
        let (mem_ppm, nice) = (task.mem_ppm, task.nice);
        let lat = self.mem_latency_ns;
        let sample =
            crate::exectime::pmu_sample(ran, work, mem_ppm, f, lat, self.pmu_noise_pct, &mut m.rng);
        let factor = tsf(&sample, lat, f, fmax);
        let w = ((nice_to_weight(nice) as f64 * factor).round() as u64).max(2);
        m.charge_policy_overhead(cpu, self.cost_ns);
        Some(w)
    }

    /// Keeps the behaviour recorded when TSF was an engine special case:
    /// a thread created or exiting in a process resets its threads'
    /// weights to the nice weight until their next switch-out (see
    /// docs/model.md, "Weight policies").
    fn thread_count_aware(&self) -> bool {
        true
    }
}

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
