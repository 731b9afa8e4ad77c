//! Run configuration: scheduler choice, machine shape, tunables.

use crate::class::fair::tunables::{CFS_TUNABLES, EEVDF_TUNABLES};
use crate::clock::Ns;
use serde::Serialize;
use std::collections::BTreeMap;

/// A settable parameter with its default and documentation.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Tunable {
    /// Name used with `--set name=value`.
    pub name: &'static str,
    /// Default.
    pub default: i64,
    /// Smallest accepted value.
    pub min: i64,
    /// Largest accepted value.
    pub max: i64,
    /// What it does.
    pub doc: &'static str,
}

/// Engine tunables, valid for every scheduler.
pub const ENGINE_TUNABLES: &[Tunable] = &[
    Tunable {
        name: "context_switch_ns",
        default: 0,
        min: 0,
        max: 10_000_000,
        doc: "time a CPU spends switching tasks before the next one progresses",
    },
    Tunable {
        name: "migration_ns",
        default: 0,
        min: 0,
        max: 10_000_000,
        doc: "extra time before a task that changed CPU progresses (cache refill)",
    },
    Tunable {
        name: "illf_swap_rule",
        default: 1,
        min: 0,
        max: 1,
        doc: "ILLF rule 4 (big/small swap at activation and pick); 0 = ablation with rules 1-3 only",
    },
    Tunable {
        name: "mem_latency_ns",
        default: 100,
        min: 1,
        max: 10_000,
        doc: "memory latency L_mem: stall time per LLC miss in the synthetic PMU and for TSF's estimate",
    },
    Tunable {
        name: "pmu_noise_pct",
        default: 0,
        min: 0,
        max: 100,
        doc: "seeded uniform noise on synthetic PMU miss counts, +-percent",
    },
    Tunable {
        name: "tsf_cost_ns",
        default: 0,
        min: 0,
        max: 1_000_000,
        doc: "CPU time one TSF computation costs at a context switch (reading and resetting PMU counters)",
    },
    Tunable {
        name: "noise_interval_us",
        default: 0,
        min: 0,
        max: 10_000_000,
        doc: "OS noise: mean gap between wakeups of a per-CPU kernel thread (uniform 0.5x..1.5x, seeded); 0 = off",
    },
    Tunable {
        name: "noise_runtime_us",
        default: 20,
        min: 1,
        max: 100_000,
        doc: "OS noise: CPU time each noise wakeup takes",
    },
];

/// Tunable values for one run, by name (ordered: output never depends on
/// hash order).
#[derive(Debug, Clone, Default, Serialize)]
pub struct TunableSet(pub BTreeMap<String, i64>);

impl TunableSet {
    /// Value of `name`.
    pub fn get(&self, name: &str) -> Option<i64> {
        self.0.get(name).copied()
    }
}

/// A scheduler that can run a simulation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum SchedulerKind {
    /// EEVDF fair class, Linux 6.12.
    Eevdf,
    /// CFS fair class, Linux 6.1.
    Cfs,
}

/// Static description of a scheduler for listings.
#[derive(Debug, Clone, Serialize)]
pub struct SchedulerInfo {
    /// Name used with `--scheduler`.
    pub name: &'static str,
    /// One-line description.
    pub description: &'static str,
    /// Specification it implements.
    pub spec: &'static str,
    /// Its tunables (engine tunables excluded).
    pub tunables: &'static [Tunable],
}

impl SchedulerKind {
    /// All schedulers, default first.
    pub const ALL: [SchedulerKind; 2] = [SchedulerKind::Eevdf, SchedulerKind::Cfs];

    /// Parse a `--scheduler` name.
    pub fn from_name(s: &str) -> Option<Self> {
        SchedulerKind::ALL.into_iter().find(|k| k.info().name == s)
    }

    /// Parse `base` or `base+policy` (e.g. `eevdf+dwcfs`).
    pub fn parse_with_policy(s: &str) -> Option<(Self, crate::policy::WeightPolicy)> {
        match s.split_once('+') {
            None => Some((Self::from_name(s)?, crate::policy::WeightPolicy::None)),
            Some((base, pol)) => Some((
                Self::from_name(base)?,
                crate::policy::WeightPolicy::from_name(pol)?,
            )),
        }
    }

    /// Description and tunables.
    pub fn info(self) -> SchedulerInfo {
        match self {
            SchedulerKind::Eevdf => SchedulerInfo {
                name: "eevdf",
                description: "Linux 6.12 fair class: EEVDF with lag, eligibility, virtual deadlines, RUN_TO_PARITY and delayed dequeue (default)",
                spec: "linux-eevdf.md, linux-smp.md",
                tunables: EEVDF_TUNABLES,
            },
            SchedulerKind::Cfs => SchedulerInfo {
                name: "cfs",
                description: "Linux 6.1 fair class: CFS with sched_period/sched_slice, wakeup granularity, buddies and sleeper credit",
                spec: "linux-cfs.md, linux-smp.md",
                tunables: CFS_TUNABLES,
            },
        }
    }

    /// Defaults for this scheduler plus the engine tunables.
    pub fn default_tunables(self) -> TunableSet {
        let mut m = BTreeMap::new();
        for t in self.info().tunables.iter().chain(ENGINE_TUNABLES) {
            m.insert(t.name.to_string(), t.default);
        }
        TunableSet(m)
    }

    /// Defaults overridden by `overrides`; unknown names and out-of-range
    /// values are errors.
    pub fn tunables(self, overrides: &[(String, i64)]) -> Result<TunableSet, String> {
        let mut set = self.default_tunables();
        let specs: Vec<&Tunable> = self.info().tunables.iter().chain(ENGINE_TUNABLES).collect();
        for (k, v) in overrides {
            let Some(spec) = specs.iter().find(|t| t.name == k) else {
                let names: Vec<&str> = specs.iter().map(|t| t.name).collect();
                return Err(format!(
                    "unknown tunable \"{k}\" for scheduler {}; expected one of: {}",
                    self.info().name,
                    names.join(", ")
                ));
            };
            if *v < spec.min || *v > spec.max {
                return Err(format!(
                    "tunable {k}={v} out of range; expected {}..={}",
                    spec.min, spec.max
                ));
            }
            set.0.insert(k.clone(), *v);
        }
        Ok(set)
    }
}

/// Everything that defines a run besides the workload.
#[derive(Debug, Clone, Serialize)]
pub struct SimConfig {
    /// Scheduler.
    pub scheduler: SchedulerKind,
    /// Number of CPUs.
    pub cpus: usize,
    /// SMT threads per core.
    pub smt: usize,
    /// CPUs per LLC (0 = all in one).
    pub cpus_per_llc: usize,
    /// Per-CPU original capacity (1..=1024); one entry applies to all
    /// CPUs; empty = 1024 everywhere.
    pub capacity: Vec<u64>,
    /// Per-CPU (current, maximum) frequency in MHz; one entry applies to
    /// all CPUs; empty = 2000/2000 everywhere. `run` work scales with
    /// capacity × current / maximum.
    pub freq_mhz: Vec<(u64, u64)>,
    /// Tick frequency.
    pub hz: u32,
    /// Overrides the workload's duration.
    pub duration: Option<Ns>,
    /// RNG seed.
    pub seed: u64,
    /// Tunable overrides (`--set`).
    pub set: Vec<(String, i64)>,
    /// Record a trace.
    pub trace: bool,
    /// Tasks (by name) whose CPU times enter Jain's fairness index (empty = all).
    pub fairness_tasks: Vec<String>,
    /// How the deadline class orders SCHED_DEADLINE tasks.
    pub dl_policy: DlPolicy,
    /// Weight policy on top of the fair class (`eevdf+dwcfs`).
    pub weight_policy: crate::policy::WeightPolicy,
    /// CPU frequency governor (engine/governor.rs).
    pub governor: crate::engine::governor::Governor,
    /// Frequency levels in MHz (empty: 40 %..100 % of the maximum in 10 % steps).
    pub freq_levels_mhz: Vec<u64>,
    /// CPU hotplug plan (engine/hotplug.rs): (time, CPU, online).
    pub hotplug: Vec<crate::engine::hotplug::HotplugStep>,
}

/// Ordering of SCHED_DEADLINE tasks (class/dl.rs). `Edf` is the kernel's
/// SCHED_DEADLINE; the others are real-time policies from the literature
/// that replace its ordering (seed-algorithms.md §2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DlPolicy {
    /// Earliest deadline first (the kernel's SCHED_DEADLINE, global by push/pull).
    #[default]
    Edf,
    /// Least laxity first, laxity re-evaluated at every tick.
    Llf,
    /// Improved LLF of seed 001: laxity updated at activation/finish and for
    /// the least-laxity waiting job at ticks, restricted switch points, and
    /// the big/small swap rule.
    Illf,
}

impl DlPolicy {
    /// All policies.
    pub const ALL: [DlPolicy; 3] = [DlPolicy::Edf, DlPolicy::Llf, DlPolicy::Illf];

    /// Name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            DlPolicy::Edf => "edf",
            DlPolicy::Llf => "llf",
            DlPolicy::Illf => "illf",
        }
    }

    /// Parse a name.
    pub fn from_name(s: &str) -> Option<Self> {
        DlPolicy::ALL.into_iter().find(|p| p.name() == s)
    }
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            scheduler: SchedulerKind::Eevdf,
            cpus: 1,
            smt: 1,
            cpus_per_llc: 0,
            capacity: vec![],
            freq_mhz: vec![],
            hz: 250,
            duration: None,
            seed: 0,
            set: vec![],
            trace: false,
            fairness_tasks: vec![],
            dl_policy: DlPolicy::Edf,
            weight_policy: crate::policy::WeightPolicy::None,
            governor: crate::engine::governor::Governor::Userspace,
            freq_levels_mhz: vec![],
            hotplug: vec![],
        }
    }
}
