//! What an imported trace yields besides its events: the simulator's
//! metrics struct and a replay workload (`schedlab trace import`).

use super::import::{Imported, TaskTimeline};
use super::TraceEvent;
use crate::clock::Ns;

impl Imported {
    /// An rt-app workload replaying each task's recorded CPU bursts and
    /// sleeps (work in ns at full speed, `calibration` fixed), starting each
    /// task when it was first seen. Preemption and waiting are not part of
    /// it: the simulator's scheduler decides those.
    pub fn replay_workload(&self) -> String {
        // The whole trace, whatever window was measured.
        let start = self.origin;
        let end = self.data.records.last().map_or(start, |r| r.ts + start);
        let us = |ns: Ns| ns.div_ceil(1000).max(1);
        let mut tasks = vec![];
        for t in &self.tasks {
            let mut events = vec![];
            for (k, (run, sleep)) in t.bursts.iter().enumerate() {
                if *run > 0 {
                    events.push(format!("\"run{k}\": {}", us(*run)));
                }
                if *sleep > 0 {
                    events.push(format!("\"sleep{k}\": {}", us(*sleep)));
                }
            }
            if events.is_empty() {
                // Seen but never ran (woken at the very end, say): replayed
                // as a thread that does no work, so the workload stays valid
                // rt-app even when no task ran at all.
                events.push("\"run0\": 0".to_string());
            }
            let policy = if t.prio < 0 {
                // DEADLINE parameters are not in the trace.
                "\"policy\": \"SCHED_FIFO\", \"priority\": 99".to_string()
            } else if t.prio < 100 {
                // prio = 99 − rt_priority (`__normal_prio`); a prio of 99
                // (rt_priority 0) is no valid RT priority: the lowest, 1.
                format!(
                    "\"policy\": \"SCHED_FIFO\", \"priority\": {}",
                    (99 - t.prio).max(1)
                )
            } else {
                format!("\"priority\": {}", (t.prio - 120).clamp(-20, 19))
            };
            // Task names are [A-Za-z0-9_]: comm with other characters as _.
            let comm: String = t
                .comm
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
                .collect();
            tasks.push(format!(
                "    \"{comm}_{}\": {{\"process\": \"p{}\", \"loop\": 1, \"delay\": {}, {policy},\n      {}}}",
                t.pid,
                t.tgid,
                (t.first - start) / 1000,
                events.join(", ")
            ));
        }
        format!(
            "{{\n  \"global\": {{\"duration\": {}, \"calibration\": 100}},\n  \"tasks\": {{\n{}\n  }}\n}}\n",
            // rt-app takes whole seconds; every task ends by itself anyway.
            (end - start).div_ceil(1_000_000_000).max(1),
            tasks.join(",\n")
        )
    }
}

impl Imported {
    /// The simulator's metrics struct, filled with what a trace shows
    /// (fields the trace cannot tell, such as jobs, work or timer slack,
    /// are zero here and null in `RunMetrics::to_json`; `scheduler` is "trace").
    pub fn metrics(&self) -> crate::metrics::RunMetrics {
        self.metrics_for(None)
    }

    /// [`Self::metrics`] with the run-level counts (context switches, task
    /// switches, migrations, wakeups; per-CPU switches) restricted to the
    /// threads in `workload` (pids) when given: the host runner's
    /// definition, the same as the simulator's, whose runs hold only the
    /// workload's threads. A switch counts when its outgoing or incoming
    /// task is one of them. Task rows and CPU busy times stay whole-trace.
    pub fn metrics_for(&self, workload: Option<&[u32]>) -> crate::metrics::RunMetrics {
        use crate::metrics::{jain, CpuMetrics, RunMetrics, TaskMetrics};
        let (start, end) = self.span;
        let dur = (end - start).max(1);
        let to_us = |ns: Ns| ns as f64 / 1000.0;
        let unique = |t: &TaskTimeline| self.tasks.iter().filter(|x| x.comm == t.comm).count() == 1;
        let tasks: Vec<TaskMetrics> = self
            .tasks
            .iter()
            .map(|t| {
                let l = &t.latency;
                let q = |x: f64| to_us(l.quantile(x));
                let (policy, nice, rt) = match t.prio {
                    p if p < 0 => ("SCHED_DEADLINE", 0, 0),
                    p if p < 100 => ("SCHED_FIFO/RR", 0, (99 - p).max(1) as u32),
                    p => ("SCHED_OTHER", p - 120, 0),
                };
                TaskMetrics {
                    name: if unique(t) {
                        t.comm.clone()
                    } else {
                        format!("{}-{}", t.comm, t.pid)
                    },
                    task: t.comm.clone(),
                    process: self
                        .data
                        .processes
                        .iter()
                        .find(|p| p.0 == t.tgid)
                        .map_or(String::new(), |p| p.1.clone()),
                    pid: t.pid,
                    tgid: t.tgid,
                    policy: policy.into(),
                    nice,
                    rt_priority: rt,
                    group: String::new(),
                    cpu_time_us: to_us(t.cpu_time),
                    cpu_share: t.cpu_time as f64 / dur as f64,
                    wait_time_us: to_us(t.wait_time),
                    wakeups: l.count(),
                    wakeup_latency_min_us: to_us(l.min),
                    wakeup_latency_avg_us: l.mean() / 1000.0,
                    wakeup_latency_max_us: to_us(l.max),
                    wakeup_latency_p50_us: q(0.5),
                    wakeup_latency_p90_us: q(0.9),
                    wakeup_latency_p99_us: q(0.99),
                    wakeup_latency_p99_9_us: q(0.999),
                    nvcsw: t.nvcsw,
                    nivcsw: t.nivcsw,
                    migrations: t.migrations,
                    first_cpu: t.first_cpu,
                    work_done_us: 0.0,
                    loops_done: 0,
                    created_us: to_us(t.first.saturating_sub(start)),
                    // From the creation as `created_us` gives it: a thread made
                    // before the measured window (the host runner's set-up)
                    // starts with it, as the simulator's threads start with
                    // the run; turnaround never exceeds the window then.
                    turnaround_us: t
                        .exited
                        .map(|e| to_us(e.saturating_sub(t.first.max(start)))),
                    activations: 0,
                    missed_activations: 0,
                    slack_min_us: None,
                    slack_avg_us: None,
                    slack_max_us: None,
                    jobs_released: 0,
                    jobs_completed: 0,
                    deadline_misses: 0,
                    max_tardiness_us: 0.0,
                    response_avg_us: None,
                    response_max_us: None,
                    cpu: 0,
                    unreliable: None,
                }
            })
            .collect();
        let cpus = self.cpus.len();
        let counted = |id: Option<usize>| {
            id.is_some_and(|i| workload.is_none_or(|w| w.contains(&self.data.tasks[i].pid)))
        };
        let in_window = |ts: Ns| (start..=end).contains(&(ts + self.origin));
        // Per-CPU switches: every one, or those of the workload's threads.
        let per_cpu: Vec<u64> = match workload {
            None => self.cpus.iter().map(|c| c.1).collect(),
            Some(_) => {
                let mut n = vec![0u64; cpus];
                for r in &self.data.records {
                    if let TraceEvent::Switch { prev, next, .. } = r.ev {
                        if in_window(r.ts) && (counted(prev) || counted(next)) && r.cpu < cpus {
                            n[r.cpu] += 1;
                        }
                    }
                }
                n
            }
        };
        let cs: u64 = per_cpu.iter().sum();
        let secs = dur as f64 / 1e9;
        let xs: Vec<f64> = tasks.iter().map(|t| t.cpu_time_us).collect();
        let task_switches = self
            .data
            .records
            .iter()
            .filter(|r| {
                in_window(r.ts)
                    && matches!(
                        r.ev,
                        TraceEvent::Switch {
                            prev: Some(p),
                            next: Some(n),
                            ..
                        } if counted(Some(p)) || counted(Some(n))
                    )
            })
            .count();
        let of_workload = |t: &&TaskMetrics| workload.is_none_or(|w| w.contains(&t.pid));
        RunMetrics {
            scheduler: "trace".into(),
            dl_policy: String::new(),
            governor: String::new(),
            cpus,
            hz: 0,
            seed: 0,
            duration_us: to_us(dur),
            events: self.data.records.len() as u64,
            context_switches: cs,
            context_switches_per_sec: cs as f64 / secs,
            context_switches_per_sec_per_cpu: cs as f64 / secs / cpus as f64,
            task_switches_per_sec_per_cpu: task_switches as f64 / secs / cpus as f64,
            migrations: tasks.iter().filter(of_workload).map(|t| t.migrations).sum(),
            balance_migrations: 0,
            policy_updates: 0,
            policy_overhead_us: 0.0,
            work_done_us: 0.0,
            wakeups: tasks.iter().filter(of_workload).map(|t| t.wakeups).sum(),
            jain_fairness: jain(&xs),
            fairness_tasks: tasks.iter().map(|t| t.name.clone()).collect(),
            tunables: crate::config::TunableSet::default(),
            warnings: summarize_repairs(&self.repairs),
            cpu: self
                .cpus
                .iter()
                .enumerate()
                .map(|(i, (busy, _))| CpuMetrics {
                    cpu: i,
                    busy_us: to_us(*busy),
                    idle_us: to_us(dur - (*busy).min(dur)),
                    utilisation: *busy as f64 / dur as f64,
                    avg_freq_mhz: 0.0,
                    context_switches: per_cpu[i],
                })
                .collect(),
            tasks,
        }
    }
}

/// Repairs shown verbatim among the warnings; beyond them, one line per
/// kind of repair with its count (a 16-CPU trace can need 60,000 of one
/// kind, which as warnings made an 11 MB metrics file).
const REPAIRS_SHOWN: usize = 5;

/// The warnings for a list of trace repairs: the first REPAIRS_SHOWN as
/// they are, then each kind of the rest (the message with its numbers
/// replaced by `N`) with how often it occurred, most frequent first (ties
/// in message order, so the output is deterministic).
pub fn summarize_repairs(repairs: &[String]) -> Vec<String> {
    if repairs.len() <= REPAIRS_SHOWN {
        return repairs.to_vec();
    }
    let mut out: Vec<String> = repairs[..REPAIRS_SHOWN].to_vec();
    let mut kinds: Vec<(String, usize)> = vec![];
    let mut index = std::collections::BTreeMap::new();
    for r in &repairs[REPAIRS_SHOWN..] {
        let mut kind = String::with_capacity(r.len());
        let mut in_num = false;
        for ch in r.chars() {
            if ch.is_ascii_digit() {
                if !in_num {
                    kind.push('N');
                }
                in_num = true;
            } else {
                kind.push(ch);
                in_num = false;
            }
        }
        let i = *index.entry(kind.clone()).or_insert_with(|| {
            kinds.push((kind, 0));
            kinds.len() - 1
        });
        kinds[i].1 += 1;
    }
    kinds.sort_by_key(|k| std::cmp::Reverse(k.1));
    let more = repairs.len() - REPAIRS_SHOWN;
    out.push(format!("... and {more} more trace repairs, by kind:"));
    out.extend(kinds.into_iter().map(|(k, n)| format!("{n} x {k}")));
    out
}
