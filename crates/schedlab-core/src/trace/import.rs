//! `schedlab trace import`: read a recorded scheduler trace, check it,
//! measure it with the simulator's metrics, and turn it back into a
//! workload the simulator can replay (../shared/formats.md §2).
//!
//! Accepted text, one tracepoint per line (other lines are skipped):
//! * tracefs `trace` / `trace_pipe` (with or without the `record-tgid`
//!   column), and `trace-cmd report` (no flags column):
//!   `COMM-PID [(TGID)] [CPU] [FLAGS] SECS.USECS: sched_switch: ...`;
//! * `perf script` of `sched:*` events: `COMM PID [CPU] SECS.USECS: sched:sched_switch: ...`.
//!
//! Events used: sched_switch, sched_waking, sched_wakeup(_new),
//! sched_migrate_task, sched_process_exit, with the key=value fields of the
//! kernel's tracepoint formats (comm values may contain spaces).
//!
//! Strict mode refuses a trace whose transitions do not chain (a switch
//! whose prev is not what last switched in on that CPU, a task switched in
//! on two CPUs, time going backwards) and names the line. Tolerant mode
//! repairs them (out-of-order lines are sorted; a missing switch-out is
//! assumed at the next switch; a task seen on two CPUs is taken off the
//! first) and reports every repair.

use super::{PrevState, Record, TaskInfo, TraceData, TraceEvent};
use crate::clock::Ns;
use crate::stats::LatencyStats;
use std::collections::BTreeMap;
use std::fmt;

/// A line that cannot be used, in strict mode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportError {
    /// 1-based line number.
    pub line: usize,
    /// What is wrong.
    pub reason: String,
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.reason)
    }
}

use super::parse::{num, parse_line, Raw, RawEv};
pub use super::parse::{MAX_TRACE_CPUS, MAX_TRACE_SECS};

/// Per-task measurements along the timeline.
#[derive(Debug, Clone, Default)]
pub struct TaskTimeline {
    /// pid, tgid, last comm, prio.
    pub pid: u32,
    /// Thread group (pid if not recorded).
    pub tgid: u32,
    /// Last comm seen.
    pub comm: String,
    /// Last prio seen.
    pub prio: i32,
    /// First and last time seen.
    pub first: Ns,
    /// Exit time, if seen.
    pub exited: Option<Ns>,
    /// Time on a CPU.
    pub cpu_time: Ns,
    /// Runnable but not running.
    pub wait_time: Ns,
    /// Waking to running.
    pub latency: LatencyStats,
    /// Voluntary / involuntary switches.
    pub nvcsw: u64,
    /// Involuntary switches.
    pub nivcsw: u64,
    /// `sched_migrate_task` events.
    pub migrations: u64,
    /// The CPU of its first switch-in inside the window.
    pub first_cpu: Option<usize>,
    /// Run bursts and the sleeps after them, for replay: (run ns, sleep ns).
    pub bursts: Vec<(Ns, Ns)>,
    /// How far the kernel's account of its CPU time may lie from
    /// `cpu_time`, ns, from the skipped clock updates charged to it
    /// ([`import_with`]): the kernel read that clock in `try_to_wake_up`
    /// after `sched_waking` and before `sched_wakeup` (core.c v6.18:
    /// `ttwu_queue` updates the clock, `ttwu_do_wakeup` records the
    /// wakeup), and the import counts from the wakeup, so each such switch
    /// in may have been charged up to its waking-to-wakeup span more.
    pub clock_uncertainty: Ns,
    running_since: Option<Ns>,
    /// Where its CPU time counts from, when a skipped clock update put that
    /// before its switch in ([`import_with`]).
    charged_since: Option<Ns>,
    runnable_since: Option<Ns>,
    waking_since: Option<Ns>,
    sleeping_since: Option<Ns>,
    burst: Ns,
}

/// An imported trace.
#[derive(Debug, Clone)]
pub struct Imported {
    /// Events as the exporters take them.
    pub data: TraceData,
    /// Tasks, by id in `data.tasks`.
    pub tasks: Vec<TaskTimeline>,
    /// Per CPU: (busy ns, switches).
    pub cpus: Vec<(Ns, u64)>,
    /// What was measured: first and last timestamp, within the window.
    pub span: (Ns, Ns),
    /// Trace time of the first event (records are rebased to it).
    pub origin: Ns,
    /// What tolerant mode repaired (empty in strict mode).
    pub repairs: Vec<String>,
    /// Lines that were not scheduler tracepoints.
    pub skipped: usize,
}

/// Parse and check `text`; measure the whole trace.
pub fn import(text: &str, tolerant: bool) -> Result<Imported, ImportError> {
    import_window(text, tolerant, None)
}

/// Where the periodic tick falls in a trace's time: at `phase` plus whole
/// `period`s (trace ns). A host run's tracefs `mono` clock is
/// CLOCK_MONOTONIC, whose jiffy grid is whole TICK_NSECs (phase 0) unless
/// `skew_tick=1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TickGrid {
    /// Tick period, ns (> 0).
    pub period: Ns,
    /// Offset of the ticks, ns.
    pub phase: Ns,
}

impl TickGrid {
    /// Whether a tick falls in (`from`, `to`].
    fn between(&self, from: Ns, to: Ns) -> bool {
        let jiffy = |t: Ns| {
            (i128::from(t) - i128::from(self.phase)).div_euclid(i128::from(self.period.max(1)))
        };
        jiffy(to) > jiffy(from)
    }
}

/// Parse and check `text`, measuring only what happens inside `window`
/// (trace timestamps, ns): times are clipped to it and counts (switches,
/// wakeup latencies, migrations) kept only for events inside it, so a
/// run's metrics leave out its setup. The events themselves (for export
/// and replay) are all kept.
pub fn import_window(
    text: &str,
    tolerant: bool,
    window: Option<(Ns, Ns)>,
) -> Result<Imported, ImportError> {
    import_with(text, tolerant, window, None)
}

/// [`import_window`], with the trace's tick grid when known: CPU time is
/// then counted as the kernel accounts it (`sum_exec_runtime`, what /proc
/// reports), not switch to switch. A `sched_wakeup` recorded on its target
/// CPU with need-resched set asks the kernel to skip the clock update of
/// the `__schedule` that follows (kernel/sched/core.c v6.18
/// `wakeup_preempt`), so the task switched out is charged up to the
/// wakeup and the task switched in from it; later updates of that run
/// queue's clock (a wakeup onto it) move the time. A tick between the
/// wakeup and the switch means the skip was spent by a `__schedule` that
/// switched nothing (the trace shows none) and the tick's update counts:
/// no shift. Without the grid that cannot be told, and CPU time stays
/// switch to switch. docs/model.md, "Trace import".
pub fn import_with(
    text: &str,
    tolerant: bool,
    window: Option<(Ns, Ns)>,
    tick: Option<TickGrid>,
) -> Result<Imported, ImportError> {
    let mut raws = vec![];
    let mut skipped = 0;
    let mut repairs = vec![];
    let mut nr_cpus_hdr = 0;
    for (i, line) in text.lines().enumerate() {
        if let Some(p) = line.find("#P:") {
            let n: usize = num(line[p + 3..].split_whitespace().next().unwrap_or("")).unwrap_or(0);
            if n > MAX_TRACE_CPUS {
                let reason = format!("header #P:{n}: more than {MAX_TRACE_CPUS} CPUs");
                if !tolerant {
                    return Err(ImportError {
                        line: i + 1,
                        reason,
                    });
                }
                repairs.push(format!("line {}: ignored: {reason}", i + 1));
            } else {
                nr_cpus_hdr = n;
            }
        }
        match parse_line(line, i + 1) {
            Ok(Some(r)) => raws.push(r),
            Ok(None) => skipped += 1,
            Err(reason) if tolerant => {
                repairs.push(format!("line {}: skipped: {reason}", i + 1));
            }
            Err(reason) => {
                return Err(ImportError {
                    line: i + 1,
                    reason,
                })
            }
        }
    }
    if raws.is_empty() {
        return Err(ImportError {
            line: 0,
            reason: "no sched_switch/sched_waking/... tracepoints found; understood: tracefs `trace` text, `trace-cmd report` text (default or raw -R), trace-cmd trace.dat (through the trace-cmd tool) and `perf script` text".into(),
        });
    }
    if let Some(line) = raws
        .windows(2)
        .find(|w| w[1].ts < w[0].ts)
        .map(|w| w[1].line)
    {
        if !tolerant {
            return Err(ImportError {
                line,
                reason: "time goes backwards".into(),
            });
        }
        raws.sort_by_key(|r| r.ts);
        repairs.push(format!(
            "lines sorted by time (first out of order: line {line})"
        ));
    }
    let nr_cpus = raws
        .iter()
        .map(|r| r.cpu + 1)
        .max()
        .unwrap_or(1)
        .max(nr_cpus_hdr);
    let mut tl = Timeline::new(nr_cpus, tolerant, repairs, skipped);
    if let Some(w) = window {
        tl.window = w;
    }
    tl.tick = tick;
    tl.run(&raws)
}

struct Timeline {
    ids: BTreeMap<u32, usize>,
    tasks: Vec<TaskTimeline>,
    curr: Vec<Option<u32>>,
    cpus: Vec<(Ns, u64)>,
    busy_since: Vec<Option<Ns>>,
    records: Vec<Record>,
    tolerant: bool,
    repairs: Vec<String>,
    skipped: usize,
    /// What is measured: [start, end] in trace time.
    window: (Ns, Ns),
    /// The tick grid, if known ([`import_with`]).
    tick: Option<TickGrid>,
    /// Per CPU: a pending clock-update skip and the run queue's clock it
    /// keeps (RQCF_REQ_SKIP), with the earliest time the kernel can have
    /// read that clock (the `sched_waking` of the wakeup that set it).
    clock_skip: Vec<Option<(Ns, Ns)>>,
}

impl Timeline {
    /// Part of [s, e] inside the window.
    fn clip(&self, s: Ns, e: Ns) -> Ns {
        e.min(self.window.1).saturating_sub(s.max(self.window.0))
    }

    fn inside(&self, ts: Ns) -> bool {
        (self.window.0..=self.window.1).contains(&ts)
    }

    fn new(n: usize, tolerant: bool, repairs: Vec<String>, skipped: usize) -> Self {
        Timeline {
            ids: BTreeMap::new(),
            tasks: vec![],
            curr: vec![None; n],
            cpus: vec![(0, 0); n],
            busy_since: vec![None; n],
            records: vec![],
            tolerant,
            repairs,
            skipped,
            window: (0, Ns::MAX),
            tick: None,
            clock_skip: vec![None; n],
        }
    }

    /// Task id of `pid` (0 = idle: None).
    fn id(&mut self, t: &(u32, String, i32), ts: Ns, tgid: Option<u32>) -> Option<usize> {
        if t.0 == 0 {
            return None;
        }
        let n = self.tasks.len();
        let id = *self.ids.entry(t.0).or_insert(n);
        if id == n {
            self.tasks.push(TaskTimeline {
                pid: t.0,
                tgid: t.0,
                first: ts,
                ..TaskTimeline::default()
            });
        }
        let tl = &mut self.tasks[id];
        tl.comm = t.1.clone();
        tl.prio = t.2;
        if let Some(g) = tgid {
            tl.tgid = g;
        }
        Some(id)
    }

    fn problem(&mut self, line: usize, what: String) -> Result<(), ImportError> {
        if self.tolerant {
            self.repairs.push(format!("line {line}: {what}"));
            Ok(())
        } else {
            Err(ImportError { line, reason: what })
        }
    }

    fn switch_out(&mut self, id: usize, cpu: usize, ts: Ns, state: PrevState) {
        self.switch_out_at(id, cpu, ts, ts, state);
    }

    /// [`Self::switch_out`] at `ts`, charging CPU time up to `acct` (the run
    /// queue's clock there, [`Self::rq_clock_span_at_switch`]).
    fn switch_out_at(&mut self, id: usize, cpu: usize, ts: Ns, acct: Ns, state: PrevState) {
        let inside = u64::from(self.inside(ts));
        let ran = self.tasks[id].running_since.take();
        let charged = self.tasks[id].charged_since.take();
        let clipped = charged.or(ran).map_or(0, |s| self.clip(s, acct.max(s)));
        let t = &mut self.tasks[id];
        if let Some(s) = ran {
            t.cpu_time += clipped;
            t.burst += ts - s;
        }
        match state {
            PrevState::Runnable => {
                t.nivcsw += inside;
                t.runnable_since = Some(ts);
            }
            PrevState::Sleeping => {
                t.nvcsw += inside;
                t.sleeping_since = Some(ts);
            }
            PrevState::Dead => {}
        }
        if let Some(b) = self.busy_since[cpu].take() {
            self.cpus[cpu].0 += self.clip(b, ts);
        }
    }

    /// `n` starts running on `cpu` at `ts`, its CPU time counted from
    /// `acct` (the run queue's clock there, [`Self::rq_clock_span_at_switch`]),
    /// which the kernel may have read as early as `earliest`.
    fn switch_in(&mut self, n: usize, cpu: usize, ts: Ns, acct: Ns, earliest: Ns) {
        let inside = self.inside(ts);
        let waited = self.tasks[n]
            .runnable_since
            .take()
            .map_or(0, |s| self.clip(s, ts));
        let t = &mut self.tasks[n];
        if let Some(w) = t.waking_since.take() {
            if inside {
                t.latency.record(ts - w);
            }
        }
        t.wait_time += waited;
        if inside && t.first_cpu.is_none() {
            t.first_cpu = Some(cpu);
        }
        t.running_since = Some(ts);
        t.charged_since = (acct < ts).then_some(acct);
        if inside && acct < ts {
            t.clock_uncertainty += acct.saturating_sub(earliest);
        }
        self.busy_since[cpu] = Some(ts);
    }

    /// The run queue's clock in the `__schedule` that switches on `cpu` at
    /// `ts`: the pending skip's time if there is one and no tick came
    /// between ([`import_with`]), else `ts`; and the earliest time the
    /// kernel can have read that clock (the clock itself where no skip
    /// applies). Takes the skip.
    fn rq_clock_span_at_switch(&mut self, cpu: usize, ts: Ns) -> (Ns, Ns) {
        match (self.clock_skip[cpu].take(), self.tick) {
            (Some((t0, lo)), Some(g)) if t0 <= ts && !g.between(t0, ts) => (t0, lo),
            _ => (ts, ts),
        }
    }

    /// A record other than a switch ran in the context of task `pid` on
    /// `r.cpu` (its `COMM-PID` column) while the trace says another task
    /// (or idle) was current there: the switch to `pid` is missing (seen on
    /// Linux 6.18 VMs: the switch from idle to a task woken by a softirq or
    /// timer on an idle CPU, and PID 1's threads). The record context is
    /// proof that `pid` runs: switch it in here, at the latest time it can
    /// have started (its CPU time is then a lower bound and its latency an
    /// upper bound, by at most the gap), instead of charging its run to
    /// whatever was current before.
    fn recover_switch_in(&mut self, r: &Raw, pid: u32) -> Result<(), ImportError> {
        let (Some(known), Some(&id)) = (self.curr[r.cpu], self.ids.get(&pid)) else {
            return Ok(());
        };
        if known == pid || self.tasks[id].running_since.is_some() {
            return Ok(());
        }
        let what = format!(
            "cpu {}: pid {pid} runs here (record context) but its switch-in from pid {known} is missing; switched in at this record",
            r.cpu
        );
        self.problem(r.line, what)?;
        let prev = (known != 0)
            .then(|| self.ids.get(&known).copied())
            .flatten();
        let (acct, earliest) = self.rq_clock_span_at_switch(r.cpu, r.ts);
        if let Some(k) = prev {
            self.switch_out_at(k, r.cpu, r.ts, acct, PrevState::Runnable);
        }
        let t = &mut self.tasks[id];
        if let Some(s) = t.sleeping_since.take() {
            // Woken without a recorded wakeup: its sleep ends here.
            t.bursts.push((t.burst, r.ts - s));
            t.burst = 0;
        }
        self.switch_in(id, r.cpu, r.ts, acct, earliest);
        self.cpus[r.cpu].1 += u64::from(self.inside(r.ts));
        self.curr[r.cpu] = Some(pid);
        self.records.push(Record {
            ts: r.ts,
            cpu: r.cpu,
            ev: TraceEvent::Switch {
                prev,
                prev_state: PrevState::Runnable,
                next: Some(id),
            },
        });
        Ok(())
    }

    fn run(mut self, raws: &[Raw]) -> Result<Imported, ImportError> {
        for r in raws {
            if let (Some((pid, _)), false) = (r.tgid, matches!(r.ev, RawEv::Switch { .. })) {
                if pid != 0 {
                    self.recover_switch_in(r, pid)?;
                }
            }
            let tgid_of = |pid: u32| r.tgid.filter(|(p, _)| *p == pid).map(|(_, g)| g);
            match &r.ev {
                RawEv::Switch {
                    prev,
                    prev_state,
                    next,
                } => {
                    let p = self.id(prev, r.ts, tgid_of(prev.0));
                    let n = self.id(next, r.ts, None);
                    let state = match prev_state.trim_end_matches('+') {
                        "R" => PrevState::Runnable,
                        "X" | "Z" | "x" => PrevState::Dead,
                        _ => PrevState::Sleeping,
                    };
                    let known = self.curr[r.cpu];
                    if known.is_some() && known != Some(prev.0) {
                        let what = format!(
                            "cpu {}: switch from pid {} but pid {} was running there (its switch-out is missing from the trace, as for threads of PID 1 on some hosts; tolerant mode assumes it here)",
                            r.cpu,
                            prev.0,
                            known.unwrap_or(0)
                        );
                        self.problem(r.line, what)?;
                        if let Some(k) = known
                            .filter(|k| *k != 0)
                            .and_then(|k| self.ids.get(&k).copied())
                        {
                            self.switch_out(k, r.cpu, r.ts, PrevState::Runnable);
                        }
                    }
                    let (acct, earliest) = self.rq_clock_span_at_switch(r.cpu, r.ts);
                    if let Some(p) = p {
                        self.switch_out_at(p, r.cpu, r.ts, acct, state);
                    }
                    if let Some(n) = n {
                        let pid = next.0;
                        if let Some(other) =
                            (0..self.curr.len()).find(|c| *c != r.cpu && self.curr[*c] == Some(pid))
                        {
                            let what = format!(
                                "pid {pid} switched in on cpu {} while running on cpu {other}",
                                r.cpu
                            );
                            self.problem(r.line, what)?;
                            self.switch_out(n, other, r.ts, PrevState::Runnable);
                            self.curr[other] = Some(0);
                        }
                        self.switch_in(n, r.cpu, r.ts, acct, earliest);
                    }
                    self.cpus[r.cpu].1 += u64::from(self.inside(r.ts));
                    self.curr[r.cpu] = Some(next.0);
                    self.records.push(Record {
                        ts: r.ts,
                        cpu: r.cpu,
                        ev: TraceEvent::Switch {
                            prev: p,
                            prev_state: state,
                            next: n,
                        },
                    });
                }
                RawEv::Waking { task, target } => {
                    let Some(id) = self.id(task, r.ts, None) else {
                        continue;
                    };
                    let t = &mut self.tasks[id];
                    if let Some(s) = t.sleeping_since.take() {
                        t.bursts.push((t.burst, r.ts - s));
                        t.burst = 0;
                    }
                    // Waking a task that is still on a CPU (it had not
                    // switched out yet) is no wait at all.
                    if t.running_since.is_none() {
                        t.waking_since.get_or_insert(r.ts);
                        t.runnable_since.get_or_insert(r.ts);
                    }
                    self.records.push(Record {
                        ts: r.ts,
                        cpu: r.cpu,
                        ev: TraceEvent::Waking {
                            task: id,
                            target_cpu: *target,
                        },
                    });
                }
                RawEv::Wakeup {
                    task,
                    new,
                    target,
                    resched,
                } => {
                    // The wakeup updated its target's clock; need-resched
                    // seen on the target itself requests the skip.
                    let waking = self
                        .ids
                        .get(&task.0)
                        .and_then(|&i| self.tasks[i].waking_since)
                        .filter(|w| *w <= r.ts)
                        .unwrap_or(r.ts);
                    if let Some(skip) = self.clock_skip.get_mut(*target) {
                        if (*resched && r.cpu == *target) || skip.is_some() {
                            *skip = Some((r.ts, waking));
                        }
                    }
                    let Some(id) = self.id(task, r.ts, None) else {
                        continue;
                    };
                    // A new task's first run is waiting, not wakeup latency
                    // (as the simulator counts it).
                    self.tasks[id].runnable_since.get_or_insert(r.ts);
                    let ev = if *new {
                        TraceEvent::WakeupNew { task: id }
                    } else {
                        TraceEvent::Wakeup { task: id }
                    };
                    self.records.push(Record {
                        ts: r.ts,
                        cpu: r.cpu,
                        ev,
                    });
                }
                RawEv::Migrate { task, orig, dest } => {
                    let Some(id) = self.id(task, r.ts, None) else {
                        continue;
                    };
                    self.tasks[id].migrations += u64::from(self.inside(r.ts));
                    self.records.push(Record {
                        ts: r.ts,
                        cpu: r.cpu,
                        ev: TraceEvent::Migrate {
                            task: id,
                            orig_cpu: *orig,
                            dest_cpu: *dest,
                        },
                    });
                }
                RawEv::Exit { task } => {
                    let Some(id) = self.id(task, r.ts, tgid_of(task.0)) else {
                        continue;
                    };
                    self.tasks[id].exited = Some(r.ts);
                    self.records.push(Record {
                        ts: r.ts,
                        cpu: r.cpu,
                        ev: TraceEvent::Exit { task: id },
                    });
                }
                // Only its context counts (recover_switch_in, above).
                RawEv::Context => {}
            }
        }
        let end = raws.last().map_or(0, |r| r.ts);
        let start = raws.first().map_or(0, |r| r.ts);
        // Close what is still running at the end.
        for cpu in 0..self.curr.len() {
            if let Some(id) = self.curr[cpu]
                .filter(|p| *p != 0)
                .and_then(|p| self.ids.get(&p).copied())
            {
                self.switch_out(id, cpu, end, PrevState::Runnable);
                self.tasks[id].nivcsw -= u64::from(self.inside(end));
            }
        }
        // And what is still waiting to run: its wait counts to the end too,
        // as the simulator's does (it stopped at its last switch).
        for id in 0..self.tasks.len() {
            if let Some(s) = self.tasks[id].runnable_since.take() {
                let waited = self.clip(s, end);
                self.tasks[id].wait_time += waited;
            }
        }
        for t in &mut self.tasks {
            if t.burst > 0 || t.bursts.is_empty() {
                t.bursts.push((t.burst, 0));
            }
        }
        let tasks: Vec<TaskInfo> = self
            .tasks
            .iter()
            .map(|t| TaskInfo {
                comm: t.comm.clone(),
                pid: t.pid,
                tgid: t.tgid,
                prio: t.prio,
            })
            .collect();
        let mut processes: Vec<(u32, String)> = vec![];
        for t in &self.tasks {
            if !processes.iter().any(|(g, _)| *g == t.tgid) {
                let name = self
                    .tasks
                    .iter()
                    .find(|x| x.pid == t.tgid)
                    .map_or(t.comm.clone(), |x| x.comm.clone());
                processes.push((t.tgid, name));
            }
        }
        // Rebase times to the first event, as the simulator's traces start at 0.
        let records = self
            .records
            .iter()
            .map(|r| Record {
                ts: r.ts - start,
                ..*r
            })
            .collect();
        Ok(Imported {
            data: TraceData {
                counters: Default::default(),
                records,
                tasks,
                processes,
                nr_cpus: self.curr.len(),
            },
            tasks: self.tasks,
            cpus: self.cpus,
            span: {
                // An empty or inverted window measures nothing, never a
                // negative span.
                let s = start.max(self.window.0);
                (s, end.min(self.window.1).max(s))
            },
            origin: start,
            repairs: self.repairs,
            skipped: self.skipped,
        })
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod clock_skip_tests;
