//! The reported metrics: one serialisable structure per run, every field
//! described (scx_stats style). Names follow schbench/cyclictest
//! vocabulary; times are µs.

use crate::clock::{to_us, Ns};
use crate::config::{SimConfig, TunableSet};
use crate::machine::Machine;
use crate::trace::{TaskInfo, TraceData};
use crate::workload::Workload;
use serde::Serialize;

/// Declares a struct whose field doc comments double as run-time
/// descriptions (`FIELDS`), so reports and the Python API can explain every
/// number.
macro_rules! described {
    ($(#[$m:meta])* pub struct $name:ident { $( #[doc = $d:literal] pub $f:ident : $t:ty, )* }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Serialize)]
        pub struct $name { $( #[doc = $d] pub $f: $t, )* }
        impl $name {
            /// (field, description) for every field.
            pub const FIELDS: &'static [(&'static str, &'static str)] = &[ $( (stringify!($f), $d.trim_ascii()) ),* ];
        }
    };
}

described! {
    /// Metrics of one task (thread).
    pub struct TaskMetrics {
        /// Thread name (comm).
        pub name: String,
        /// Task object in the workload file.
        pub task: String,
        /// Process name (workload `process` key).
        pub process: String,
        /// Thread id.
        pub pid: u32,
        /// Process id (thread-group id).
        pub tgid: u32,
        /// Scheduling policy at the end of the run.
        pub policy: String,
        /// Nice value at the end of the run (fair policies).
        pub nice: i32,
        /// RT priority 1..99 at the end of the run (SCHED_FIFO/RR; 0 otherwise).
        pub rt_priority: u32,
        /// Task group (cgroup path or autogroup).
        pub group: String,
        /// Time spent running on a CPU, µs, as the kernel accounts it (sum_exec_runtime, /proc schedstat): after a wakeup's skipped clock update, the wakeup path's delay counts for the task switched in.
        pub cpu_time_us: f64,
        /// CPU time divided by the run's duration (1.0 = one full CPU).
        pub cpu_share: f64,
        /// Time runnable but waiting for a CPU (run-queue delay), µs.
        pub wait_time_us: f64,
        /// Number of wakeups whose latency was measured.
        pub wakeups: u64,
        /// Wakeup latency (sched_waking to running) minimum, µs.
        pub wakeup_latency_min_us: f64,
        /// Wakeup latency mean, µs.
        pub wakeup_latency_avg_us: f64,
        /// Wakeup latency maximum, µs.
        pub wakeup_latency_max_us: f64,
        /// Wakeup latency 50th percentile, µs (HDR histogram, 3 significant digits).
        pub wakeup_latency_p50_us: f64,
        /// Wakeup latency 90th percentile, µs.
        pub wakeup_latency_p90_us: f64,
        /// Wakeup latency 99th percentile, µs.
        pub wakeup_latency_p99_us: f64,
        /// Wakeup latency 99.9th percentile, µs.
        pub wakeup_latency_p99_9_us: f64,
        /// Voluntary context switches (the task blocked).
        pub nvcsw: u64,
        /// Involuntary context switches (preempted while runnable).
        pub nivcsw: u64,
        /// CPU changes.
        pub migrations: u64,
        /// The CPU of the task's first switch-in within the measured run (null if it never ran in it): where the start placed it.
        pub first_cpu: Option<usize>,
        /// rt-app `run` work completed, µs at the calibration CPU's speed.
        pub work_done_us: f64,
        /// Completed iterations of the task's phase list.
        pub loops_done: u64,
        /// Creation time, µs from the start.
        pub created_us: f64,
        /// Creation to exit, µs; null if still alive at the end.
        pub turnaround_us: Option<f64>,
        /// Timer activations (rt-app `timer` events reached).
        pub activations: u64,
        /// Activations reached after their deadline (negative slack).
        pub missed_activations: u64,
        /// Smallest slack before an activation, µs (negative = overrun).
        pub slack_min_us: Option<f64>,
        /// Mean slack, µs.
        pub slack_avg_us: Option<f64>,
        /// Largest slack, µs.
        pub slack_max_us: Option<f64>,
        /// Jobs (work between timer activations) released by the end of the run, the end included.
        pub jobs_released: u64,
        /// Jobs finished (the task reached its `timer` event).
        pub jobs_completed: u64,
        /// Jobs that finished after their deadline, or are unfinished with their deadline passed at the end (deadline: release + dl-deadline for SCHED_DEADLINE, + timer period otherwise).
        pub deadline_misses: u64,
        /// Largest tardiness (finish − deadline, at least 0), µs; an unfinished late job counts up to the end.
        pub max_tardiness_us: f64,
        /// Mean response time (finish − release) of completed jobs, µs.
        pub response_avg_us: Option<f64>,
        /// Largest response time of completed jobs, µs.
        pub response_max_us: Option<f64>,
        /// CPU at the end of the run.
        pub cpu: usize,
        /// Host runs: why this thread's trace-derived metrics (wakeups, latencies, migrations) are withheld as null, with the size of the disagreement between its trace and its /proc counters; null when they agree, and always in the simulator.
        pub unreliable: Option<Vec<String>>,
    }
}

described! {
    /// Metrics of one CPU.
    pub struct CpuMetrics {
        /// CPU index.
        pub cpu: usize,
        /// Time running a task, µs.
        pub busy_us: f64,
        /// Time idle, µs.
        pub idle_us: f64,
        /// busy / duration.
        pub utilisation: f64,
        /// Time-weighted mean core frequency over the run, MHz.
        pub avg_freq_mhz: f64,
        /// Context switches on this CPU (rq->nr_switches).
        pub context_switches: u64,
    }
}

described! {
    /// Metrics of a whole run.
    pub struct RunMetrics {
        /// Scheduler name.
        pub scheduler: String,
        /// Ordering of SCHED_DEADLINE tasks: edf (the kernel's), llf or illf.
        pub dl_policy: String,
        /// CPU frequency governor.
        pub governor: String,
        /// Number of CPUs.
        pub cpus: usize,
        /// Tick frequency.
        pub hz: u32,
        /// RNG seed.
        pub seed: u64,
        /// Simulated duration, µs.
        pub duration_us: f64,
        /// Events processed by the engine (ticks, segment ends, timer wakeups).
        pub events: u64,
        /// Context switches on all CPUs.
        pub context_switches: u64,
        /// Context switches per second of simulated time (all CPUs).
        pub context_switches_per_sec: f64,
        /// Context switches per second per CPU.
        pub context_switches_per_sec_per_cpu: f64,
        /// Switches from one task straight to another (to/from idle not counted) per second per CPU: seed 001's "task context switch frequency", the count its Table 1 matches.
        pub task_switches_per_sec_per_cpu: f64,
        /// CPU changes of all tasks.
        pub migrations: u64,
        /// Migrations done by load balancing.
        pub balance_migrations: u64,
        /// Weight-policy computations at context switches (TSF: one per switch-out of a fair task).
        pub policy_updates: u64,
        /// CPU time those computations cost, µs (tunable tsf_cost_ns each); delays the next task's progress.
        pub policy_overhead_us: f64,
        /// Full-speed work done by all tasks, µs (throughput: ns of work at capacity 1024 and f_max).
        pub work_done_us: f64,
        /// Successful wakeups.
        pub wakeups: u64,
        /// Jain's fairness index of CPU time over `fairness_tasks` (1 = equal).
        pub jain_fairness: f64,
        /// Tasks entering Jain's index (all tasks unless chosen).
        pub fairness_tasks: Vec<String>,
        /// Effective tunables.
        pub tunables: TunableSet,
        /// Workload keys accepted without effect, and similar notes.
        pub warnings: Vec<String>,
        /// Per task.
        pub tasks: Vec<TaskMetrics>,
        /// Per CPU.
        pub cpu: Vec<CpuMetrics>,
    }
}

/// What a recorded trace cannot tell (trace/measure.rs): serialised as
/// null, never as 0, for metrics measured from a trace (`scheduler` is
/// `"trace"`): run-level fields.
pub const TRACE_UNMEASURED_RUN: &[&str] = &[
    "dl_policy",
    "governor",
    "hz",
    "seed",
    "balance_migrations",
    "policy_updates",
    "policy_overhead_us",
    "work_done_us",
    "tunables",
];

/// Task fields a trace cannot tell.
pub const TRACE_UNMEASURED_TASK: &[&str] = &[
    "group",
    "work_done_us",
    "loops_done",
    "activations",
    "missed_activations",
    "jobs_released",
    "jobs_completed",
    "deadline_misses",
    "max_tardiness_us",
    "cpu",
];

/// Task fields with no value when no wakeup latency was measured.
pub const NO_WAKEUP_NULL: &[&str] = &[
    "wakeup_latency_min_us",
    "wakeup_latency_avg_us",
    "wakeup_latency_max_us",
    "wakeup_latency_p50_us",
    "wakeup_latency_p90_us",
    "wakeup_latency_p99_us",
    "wakeup_latency_p99_9_us",
];

/// CPU fields a trace cannot tell.
pub const TRACE_UNMEASURED_CPU: &[&str] = &["avg_freq_mhz"];

impl RunMetrics {
    /// The metrics as JSON, with what was not measured as null: the
    /// latencies of a task with no measured wakeup (`NO_WAKEUP_NULL`), and
    /// for an imported trace the fields in `TRACE_UNMEASURED_*`.
    pub fn to_json(&self) -> serde_json::Value {
        let mut v = serde_json::to_value(self).unwrap_or(serde_json::Value::Null);
        let null = |obj: &mut serde_json::Value, keys: &mut dyn Iterator<Item = &str>| {
            if let Some(o) = obj.as_object_mut() {
                for k in keys {
                    if let Some(x) = o.get_mut(k) {
                        *x = serde_json::Value::Null;
                    }
                }
            }
        };
        null(&mut v, &mut self.unmeasured_run().iter().copied());
        if let Some(items) = v.get_mut("tasks").and_then(|x| x.as_array_mut()) {
            for (t, item) in self.tasks.iter().zip(items) {
                null(item, &mut self.unmeasured_task(t));
            }
        }
        if let Some(items) = v.get_mut("cpu").and_then(|x| x.as_array_mut()) {
            for item in items {
                null(item, &mut self.unmeasured_cpu().iter().copied());
            }
        }
        v
    }

    /// Run-level fields serialised as null (not measured): for an imported
    /// trace (`scheduler` is `"trace"`) those of `TRACE_UNMEASURED_RUN`.
    pub fn unmeasured_run(&self) -> &'static [&'static str] {
        self.if_from_trace(TRACE_UNMEASURED_RUN)
    }

    /// Fields of task `t` serialised as null: its latencies when no wakeup
    /// latency was measured (`NO_WAKEUP_NULL`: null, not 0), and for an
    /// imported trace those of `TRACE_UNMEASURED_TASK`.
    pub fn unmeasured_task(&self, t: &TaskMetrics) -> impl Iterator<Item = &'static str> {
        let latency: &[&str] = if t.wakeups == 0 { NO_WAKEUP_NULL } else { &[] };
        let trace = self.if_from_trace(TRACE_UNMEASURED_TASK);
        latency.iter().chain(trace).copied()
    }

    /// CPU fields serialised as null: for an imported trace those of
    /// `TRACE_UNMEASURED_CPU`.
    pub fn unmeasured_cpu(&self) -> &'static [&'static str] {
        self.if_from_trace(TRACE_UNMEASURED_CPU)
    }

    /// `fields` for metrics measured from a trace, else none.
    fn if_from_trace(&self, fields: &'static [&'static str]) -> &'static [&'static str] {
        if self.scheduler == "trace" {
            fields
        } else {
            &[]
        }
    }
}

/// Everything a run produces.
#[derive(Debug, Clone)]
pub struct RunResult {
    /// Metrics.
    pub metrics: RunMetrics,
    /// Every timer activation: (task index, time µs, slack µs).
    pub activations: Vec<(usize, f64, f64)>,
    /// Every completed job: (task index, release, start, finish, deadline), µs.
    pub jobs: Vec<(usize, f64, f64, f64, f64)>,
    /// Trace, if recorded.
    pub trace: Option<TraceData>,
}

/// Job accounting of one task (issue: deadline accounting).
struct JobStats {
    released: u64,
    completed: u64,
    misses: u64,
    max_tardiness: Ns,
    response_avg_us: Option<f64>,
    response_max: Option<Ns>,
}

fn job_stats(m: &Machine, wl: &Workload, i: usize, end: Ns) -> JobStats {
    let t = &m.tasks[i];
    let s = &m.stats.tasks[i];
    let def = &wl.tasks[t.def];
    let first_period = def
        .phases
        .iter()
        .flat_map(|p| &p.events)
        .find_map(|e| match e {
            crate::workload::Event::Timer { period, .. } => Some(*period),
            _ => None,
        });
    let completed = s.activations.len() as u64;
    let mut misses = s.activations.iter().filter(|a| a.at > a.deadline).count() as u64;
    let mut max_tardiness = s
        .activations
        .iter()
        .map(|a| a.at.saturating_sub(a.deadline))
        .max()
        .unwrap_or(0);
    // The job in progress (or awaited) at the end.
    let mut released = completed;
    if let Some(period) = first_period.filter(|_| t.exited.is_none()) {
        let rel_deadline = if t.policy == crate::workload::Policy::Deadline && t.dl.deadline > 0 {
            t.dl.deadline
        } else {
            period
        };
        let (release, rel) = s.job.unwrap_or((t.created + def.delay, rel_deadline));
        let pending = match s.awaiting.get() {
            Some(r) => r <= end,
            None => release <= end,
        };
        if pending {
            released += 1;
            let deadline = release.saturating_add(rel);
            if deadline < end {
                misses += 1;
                max_tardiness = max_tardiness.max(end - deadline);
            }
        }
    }
    let resp: Vec<Ns> = s
        .activations
        .iter()
        .map(|a| a.at - a.release.min(a.at))
        .collect();
    JobStats {
        released,
        completed,
        misses,
        max_tardiness,
        response_avg_us: (!resp.is_empty())
            .then(|| resp.iter().sum::<Ns>() as f64 / resp.len() as f64 / 1000.0),
        response_max: resp.iter().copied().max(),
    }
}

/// Jain's fairness index (Σx)² / (n·Σx²).
pub fn jain(xs: &[f64]) -> f64 {
    let n = xs.len() as f64;
    let s: f64 = xs.iter().sum();
    let s2: f64 = xs.iter().map(|x| x * x).sum();
    if n == 0.0 || s2 == 0.0 {
        1.0
    } else {
        s * s / (n * s2)
    }
}

/// Build the result from the final machine state. Each task's latency
/// histogram and activation list are released once read (`m` is not used
/// after this): at 10,000 tasks they would otherwise sit beside the
/// metrics built from them at the run's peak of memory (issue 18).
pub fn collect(
    m: &mut Machine,
    recorded: Option<crate::trace::Trace>,
    wl: &Workload,
    cfg: &SimConfig,
    tun: &TunableSet,
    end: Ns,
) -> RunResult {
    let dur = end.max(1);
    let mut tasks = Vec::with_capacity(m.tasks.len());
    let mut activations = vec![];
    let mut jobs = vec![];
    for i in 0..m.tasks.len() {
        let t = &m.tasks[i];
        let js = job_stats(m, wl, i, end);
        for a in &m.stats.tasks[i].activations {
            jobs.push((
                i,
                to_us(a.release),
                to_us(a.start),
                to_us(a.at),
                to_us(a.deadline),
            ));
        }
        let s = &m.stats.tasks[i];
        let wl_lat = &s.wakeup_latency;
        let q = |x: f64| to_us(wl_lat.quantile(x));
        let slacks: Vec<f64> = s
            .activations
            .iter()
            .map(|a| a.slack as f64 / 1000.0)
            .collect();
        for a in &s.activations {
            activations.push((i, to_us(a.at), a.slack as f64 / 1000.0));
        }
        let nslack = slacks.len();
        tasks.push(TaskMetrics {
            name: t.name.clone(),
            task: wl.tasks[t.def].name.clone(),
            process: m.processes[t.process].name.clone(),
            pid: t.pid,
            tgid: t.tgid,
            policy: t.policy.name().to_string(),
            nice: t.nice,
            rt_priority: t.rt_priority,
            group: m.groups[t.group].path.clone(),
            cpu_time_us: to_us(s.cpu_time),
            cpu_share: s.cpu_time as f64 / dur as f64,
            wait_time_us: to_us(s.wait_time),
            wakeups: wl_lat.count(),
            wakeup_latency_min_us: to_us(wl_lat.min),
            wakeup_latency_avg_us: wl_lat.mean() / 1000.0,
            wakeup_latency_max_us: to_us(wl_lat.max),
            wakeup_latency_p50_us: q(0.5),
            wakeup_latency_p90_us: q(0.9),
            wakeup_latency_p99_us: q(0.99),
            wakeup_latency_p99_9_us: q(0.999),
            nvcsw: s.nvcsw,
            nivcsw: s.nivcsw,
            migrations: s.migrations,
            first_cpu: s.first_cpu,
            work_done_us: to_us(s.work_done),
            loops_done: s.loops_done,
            created_us: to_us(t.created),
            turnaround_us: t.exited.map(|e| to_us(e - t.created)),
            activations: nslack as u64,
            missed_activations: slacks.iter().filter(|x| **x < 0.0).count() as u64,
            slack_min_us: slacks.iter().copied().reduce(f64::min),
            slack_avg_us: (nslack > 0).then(|| slacks.iter().sum::<f64>() / nslack as f64),
            slack_max_us: slacks.iter().copied().reduce(f64::max),
            jobs_released: js.released,
            jobs_completed: js.completed,
            deadline_misses: js.misses,
            max_tardiness_us: to_us(js.max_tardiness),
            response_avg_us: js.response_avg_us,
            response_max_us: js.response_max.map(to_us),
            cpu: t.cpu,
            unreliable: None,
        });
        let s = &mut m.stats.tasks[i];
        s.wakeup_latency.hist = Default::default();
        s.activations = Vec::new();
    }
    let cpu: Vec<CpuMetrics> = m
        .rqs
        .iter()
        .enumerate()
        .map(|(i, r)| CpuMetrics {
            cpu: i,
            busy_us: to_us(r.busy_ns),
            idle_us: to_us(dur - r.busy_ns.min(dur)),
            utilisation: r.busy_ns as f64 / dur as f64,
            context_switches: r.nr_switches,
            avg_freq_mhz: {
                let tail = dur.saturating_sub(r.freq_since);
                let sum: u128 = r
                    .freq_time
                    .iter()
                    .map(|(f, t)| *f as u128 * *t as u128)
                    .sum::<u128>()
                    + r.freq_khz as u128 * tail as u128;
                sum as f64 / dur as f64 / 1000.0
            },
        })
        .collect();
    let fairness_tasks: Vec<String> = if cfg.fairness_tasks.is_empty() {
        // Every workload thread; engine daemons (OS noise) are not part of it.
        tasks
            .iter()
            .zip(&m.tasks)
            .filter(|(_, t)| !wl.tasks[t.def].daemon)
            .map(|(x, _)| x.name.clone())
            .collect()
    } else {
        tasks
            .iter()
            .filter(|t| {
                cfg.fairness_tasks
                    .iter()
                    .any(|n| *n == t.name || *n == t.task)
            })
            .map(|t| t.name.clone())
            .collect()
    };
    let fair_set: std::collections::BTreeSet<&str> =
        fairness_tasks.iter().map(String::as_str).collect();
    let xs: Vec<f64> = tasks
        .iter()
        .filter(|t| fair_set.contains(t.name.as_str()))
        .map(|t| t.cpu_time_us)
        .collect();
    let cs: u64 = m.rqs.iter().map(|r| r.nr_switches).sum();
    let secs = dur as f64 / 1e9;
    let metrics = RunMetrics {
        scheduler: cfg.scheduler.clone(),
        dl_policy: cfg.dl_policy.clone(),
        governor: cfg.governor.name().to_string(),
        cpus: m.nr_cpus(),
        hz: m.hz,
        seed: cfg.seed,
        duration_us: to_us(dur),
        events: m.stats.events,
        context_switches: cs,
        context_switches_per_sec: cs as f64 / secs,
        context_switches_per_sec_per_cpu: cs as f64 / secs / m.nr_cpus() as f64,
        task_switches_per_sec_per_cpu: m.rqs.iter().map(|r| r.nr_task_switches).sum::<u64>() as f64
            / secs
            / m.nr_cpus() as f64,
        migrations: m.stats.tasks.iter().map(|s| s.migrations).sum(),
        balance_migrations: m.stats.balance_migrations,
        policy_updates: m.stats.policy_updates,
        policy_overhead_us: to_us(m.stats.policy_overhead),
        work_done_us: to_us(m.stats.tasks.iter().map(|s| s.work_done).sum()),
        wakeups: m.stats.wakeups,
        jain_fairness: jain(&xs),
        fairness_tasks,
        tunables: tun.clone(),
        warnings: wl.warnings.clone(),
        tasks,
        cpu,
    };
    let trace = recorded.map(|mut tr| TraceData {
        records: {
            tr.counters.seal();
            tr.records.shrink_to_fit();
            tr.records
        },
        counters: tr.counters,
        tasks: m
            .tasks
            .iter()
            .map(|t| TaskInfo {
                comm: t.comm().to_string(),
                pid: t.pid,
                tgid: t.tgid,
                prio: t.prio(),
            })
            .collect(),
        processes: m
            .processes
            .iter()
            .map(|p| (p.tgid, p.name.clone()))
            .collect(),
        nr_cpus: m.nr_cpus(),
    });
    RunResult {
        metrics,
        activations,
        jobs,
        trace,
    }
}

/// Descriptions of every metric, by structure.
pub fn descriptions() -> Vec<(&'static str, &'static [(&'static str, &'static str)])> {
    vec![
        ("run", RunMetrics::FIELDS),
        ("task", TaskMetrics::FIELDS),
        ("cpu", CpuMetrics::FIELDS),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jain_index_bounds() {
        assert!((jain(&[1.0, 1.0, 1.0]) - 1.0).abs() < 1e-12);
        assert!((jain(&[1.0, 0.0]) - 0.5).abs() < 1e-12);
    }

    #[test]
    fn every_field_is_described() {
        for (_, fields) in descriptions() {
            for (name, desc) in fields {
                assert!(!desc.is_empty(), "{name} has no description");
            }
        }
        assert!(TaskMetrics::FIELDS
            .iter()
            .any(|f| f.0 == "wakeup_latency_p99_9_us"));
    }
}
