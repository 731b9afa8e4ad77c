//! Run configuration: scheduler choice, machine shape, tunable overrides.

use crate::clock::Ns;
use crate::engine::latency::LATENCY_TUNABLES;
use crate::engine::nohz::NOHZ_TUNABLES;
use crate::engine::smt::SMT_TUNABLES;
pub use crate::tunable::{Tunable, TunableSet};
use serde::{Deserialize, Deserializer, Serialize};

/// Engine tunables, valid for every scheduler.
pub const ENGINE_TUNABLES: &[Tunable] = &ENGINE_TUNABLE_ARRAY;

const ENGINE_TUNABLE_ARRAY: [Tunable;
    BASE_TUNABLES.len() + LATENCY_TUNABLES.len() + NOHZ_TUNABLES.len() + SMT_TUNABLES.len()] =
    crate::tunable::concat(&[BASE_TUNABLES, LATENCY_TUNABLES, NOHZ_TUNABLES, SMT_TUNABLES]);

/// Engine tunables besides the wakeup path's (engine/latency.rs).
const BASE_TUNABLES: &[Tunable] = &[
    Tunable {
        name: "max_threads",
        default: 100_000,
        min: 1,
        max: 4_194_304,
        unit: "",
        doc: "threads a run may create (a fork beyond it ends the run with an error: fork loops); at most the kernel's PID_MAX_LIMIT",
    },
    Tunable {
        name: "max_events_per_instant",
        default: 1_000_000,
        min: 1_000,
        max: 2_000_000,
        unit: "",
        doc: "zero-time events the tasks may execute at one simulated instant before the run ends with an error (loops without run, sleep or timer); the maximum keeps one instant under a second, so Ctrl-C is served",
    },
    Tunable {
        name: "context_switch_ns",
        default: 3_800,
        min: 0,
        max: 10_000_000,
        unit: "ns",
        doc: "time a CPU spends switching tasks before the next one progresses, charged to the next (the rest of __schedule, switch_mm, the return to user space); default: half a pingpong round trip on a 2-vCPU 6.18 VM (7.5-7.9 us, an upper bound: it includes the socket calls); 0 with zero costs",
    },
    Tunable {
        name: "migration_ns",
        default: 0,
        min: 0,
        max: 10_000_000,
        unit: "ns",
        doc: "extra time before a task that changed CPU progresses (cache refill)",
    },
    Tunable {
        name: "noise_interval_us",
        default: 0,
        min: 0,
        max: 10_000_000,
        unit: "us",
        doc: "OS noise: mean gap between wakeups of a per-CPU kernel thread (uniform 0.5x..1.5x, seeded); 0 = off",
    },
    Tunable {
        name: "noise_runtime_us",
        default: 20,
        min: 1,
        max: 100_000,
        unit: "us",
        doc: "OS noise: CPU time each noise wakeup takes",
    },
    Tunable {
        name: "noise_per_cpu",
        default: 1,
        min: 0,
        max: 1,
        unit: "",
        doc: "OS noise: 1 = one thread pinned to each CPU (per-CPU kernel threads); 0 = one unpinned thread for the whole machine, placed by the scheduler like any task (a host's background daemon; schedlab fidelity replays each host run's other load this way)",
    },
];

/// Everything that defines a run besides the workload. This struct is the
/// one definition of every run option: the Python API sends its options as
/// JSON with exactly these field names (crates/schedlab-py), so there is no
/// second spelling to keep in step.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SimConfig {
    /// Scheduler: a name from the registry (registry.rs), optionally with
    /// a fair-class policy after `+` (`eevdf+tsf`).
    pub scheduler: String,
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
    /// A closed-form machine: every wakeup-path cost (engine/latency.rs:
    /// timer slack, wakeup, idle exit, IPI) is 0 unless `set` says
    /// otherwise. For tests against closed forms and for reproducing
    /// simulators that model no overheads.
    pub zero_costs: bool,
    /// Record a trace.
    pub trace: bool,
    /// With `trace`, also sample each task's class values (vruntime,
    /// deadline, lag, ...) at its switches as counters (Perfetto's counter
    /// tracks). Off, the trace holds the scheduler events alone: the
    /// samples are most of a traced run's extra work (a wakeup-heavy run's
    /// recording cost is almost all theirs), which a reader of wakeups and
    /// switches alone need not pay.
    pub trace_counters: bool,
    /// Tasks (by name) whose CPU times enter Jain's fairness index (empty = all).
    pub fairness_tasks: Vec<String>,
    /// How the deadline class orders SCHED_DEADLINE tasks: a deadline
    /// ordering from the registry (`edf`, the kernel's; `llf`, `illf`).
    pub dl_policy: String,
    /// CPU frequency governor (engine/governor.rs); in JSON its name
    /// (`ondemand`, `schedule:T=MHZ,...`).
    #[serde(deserialize_with = "governor_from_name")]
    pub governor: crate::engine::governor::Governor,
    /// Frequency levels in MHz (empty: 40 %..100 % of the maximum in 10 % steps).
    pub freq_levels_mhz: Vec<u64>,
    /// CPU hotplug plan (engine/hotplug.rs): (time, CPU, online); in
    /// JSON the plan text `T=-CPU,T=+CPU` (seconds) or null.
    #[serde(deserialize_with = "hotplug_from_plan")]
    pub hotplug: Vec<crate::engine::hotplug::HotplugStep>,
    /// Where some of the workload's own threads start, by thread name
    /// (`name` or `name-k`): each listed thread is put on that CPU when the
    /// launcher creates it, instead of where the fork path would place it.
    /// For replaying a host run's start (`schedlab fidelity`): how the host
    /// spreads threads that slept until a common start is not modelled
    /// (docs/model.md, "Known gaps"), so a replay begins where the host's
    /// threads first ran and judges what the scheduler does from there.
    pub start_cpus: Vec<(String, usize)>,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            scheduler: "eevdf".into(),
            cpus: 1,
            smt: 1,
            cpus_per_llc: 0,
            capacity: vec![],
            freq_mhz: vec![],
            hz: 250,
            duration: None,
            seed: 0,
            set: vec![],
            zero_costs: false,
            trace: false,
            trace_counters: true,
            fairness_tasks: vec![],
            dl_policy: "edf".into(),
            governor: crate::engine::governor::Governor::Userspace,
            freq_levels_mhz: vec![],
            hotplug: vec![],
            start_cpus: vec![],
        }
    }
}

impl SimConfig {
    /// The tunable overrides of the run: the zero costs if asked for, then
    /// `set` (later entries win).
    pub fn overrides(&self) -> Vec<(String, i64)> {
        let zero = crate::engine::latency::COST_TUNABLES
            .iter()
            .filter(|_| self.zero_costs)
            .map(|n| (n.to_string(), 0));
        zero.chain(self.set.iter().cloned()).collect()
    }
}

fn governor_from_name<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<crate::engine::governor::Governor, D::Error> {
    let name = String::deserialize(d)?;
    crate::engine::governor::Governor::parse(&name).map_err(serde::de::Error::custom)
}

fn hotplug_from_plan<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Vec<crate::engine::hotplug::HotplugStep>, D::Error> {
    match Option::<String>::deserialize(d)? {
        None => Ok(vec![]),
        Some(plan) => crate::engine::hotplug::parse(&plan).map_err(serde::de::Error::custom),
    }
}
