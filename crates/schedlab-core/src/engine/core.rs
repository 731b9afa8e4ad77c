//! Scheduling mechanics shared by every class (kernel/sched/core.c):
//! `__schedule`, `try_to_wake_up`, migration, and the accounting of
//! execution segments (fork, sleep and exit: lifecycle.rs).

use super::Simulator;
use crate::class::{DequeueFlags, EnqueueFlags, WakeFlags, Waker};
use crate::class::{ServerActions, ServerRan};
use crate::clock::Ns;
use crate::cpuset::CpuId;
use crate::event::EventKind;
use crate::machine::MigrationKind;
use crate::task::{Busy, OnRq, Stamp, TaskId, TaskState};
use crate::trace::{PrevState, TraceEvent};
use crate::workload::Policy;

/// Bound on reschedule rounds for one event. A workload whose task loops
/// without consuming time and reschedules its CPU at every turn (a `yield`
/// with no `run` or `sleep`, alone on its CPU) reaches it; the run then
/// stops with an error naming the task (the per-instant step limit,
/// exec.rs, restarts at every instant, and these rounds let time move on).
const MAX_ROUNDS: usize = 10_000;

impl Simulator {
    /// Position in the stack of the class of task `t` (the class that
    /// takes its policy; `Simulator::new` refused workloads with a policy
    /// no class takes).
    #[inline]
    pub(crate) fn class_of(&self, t: TaskId) -> usize {
        self.class_for(self.m.tasks[t].policy)
    }

    /// Position of the class that takes `policy`.
    #[inline]
    pub(crate) fn class_for(&self, policy: Policy) -> usize {
        self.classes.class_for(policy).unwrap_or(0)
    }

    /// Carry out requested migrations and reschedules until nothing is
    /// pending.
    pub(crate) fn process_pending(&mut self) {
        for _ in 0..MAX_ROUNDS {
            self.apply_migrations();
            let Some(cpu) = self.m.resched_cpus.first() else {
                return;
            };
            self.schedule(cpu);
        }
        let Some(cpu) = self.m.resched_cpus.first() else {
            return;
        };
        let who = self.m.rqs[cpu].curr.map_or_else(
            || "the idle task".to_string(),
            |t| format!("task {}", self.m.tasks[t].name),
        );
        self.fail(super::SimError::Runtime(format!(
            "{}: CPU {cpu} rescheduled {MAX_ROUNDS} times at t={} ns without time passing ({who} running): a task's loop consumes no time (a yield or signal with no run or sleep); add a run, sleep or timer to it",
            self.wl.source, self.m.now
        )));
    }

    /// Carry out the classes' migration requests, if there are any: the
    /// test inline at each caller, since most events request none (a call
    /// per event was 1.6 % of the global-EDF anchor's instructions).
    #[inline]
    fn apply_migrations(&mut self) {
        if !self.m.migrations.is_empty() {
            self.carry_out_migrations();
        }
    }

    fn carry_out_migrations(&mut self) {
        while !self.m.migrations.is_empty() {
            // The requests made while these are carried out go to the
            // spare buffer, and these, drained, become the spare: no
            // allocation and free per batch (DEADLINE push and pull).
            let spare = std::mem::take(&mut self.migrations_spare);
            let mut reqs = std::mem::replace(&mut self.m.migrations, spare);
            for r in reqs.drain(..) {
                let t = &self.m.tasks[r.task];
                let movable =
                    t.is_queued() && self.m.rqs[t.cpu].curr != Some(r.task) && t.cpu != r.dst;
                if !movable {
                    continue;
                }
                self.m.stats.balance_migrations += 1;
                if r.kind == MigrationKind::Push {
                    // The pushing CPU asks the destination to reschedule
                    // from afar (resched_curr(later_rq)): an IPI.
                    let src = t.cpu;
                    let target = self.wake_target(r.dst, src);
                    self.move_queued_task(r.task, r.dst, src);
                    self.delay_push_resched(r.task, target);
                } else {
                    // A pull: the destination CPU runs it (its balancer).
                    // Departure: hotplug's moves also count as pulls here,
                    // where the kernel's migrate_tasks runs on the dying CPU.
                    self.move_queued_task(r.task, r.dst, r.dst);
                }
            }
            self.migrations_spare = reqs;
        }
    }

    /// Account the work the current task of `cpu` did since its segment began.
    pub(crate) fn settle(&mut self, cpu: CpuId) {
        let Some(t) = self.m.rqs[cpu].curr else {
            return;
        };
        let now = self.m.now;
        let start = self.m.rqs[cpu].seg_start;
        if now <= start {
            return;
        }
        self.m.rqs[cpu].seg_start = now;
        if let Some(Busy::Work(left)) = self.m.tasks[t].busy {
            let (num, den) = self.rate(cpu, t);
            let done = if num == den {
                (now - start).min(left) // exact: x·num/den = x
            } else {
                (((now - start) as u128 * num) / den).min(left as u128) as u64
            };
            self.m.tasks[t].busy = Some(Busy::Work(left - done));
            self.m.stats.tasks[t].work_done += done;
        }
    }

    /// Work rate of task `t` on `cpu` relative to the calibration CPU
    /// (exectime.rs: capacity, frequency and memory intensity; smt.rs: a
    /// busy sibling), as (num, den). Only the ratio counts: the callers
    /// take ⌊x·num/den⌋ and ⌈x·den/num⌉, which multiplying both by one
    /// factor leaves alone, so a rate may come unreduced or reduced.
    fn rate(&self, cpu: CpuId, t: TaskId) -> (u128, u128) {
        let (sn, sd) = self.smt_factor(cpu);
        if self.unit_progress_rate(cpu, t) {
            // The calibration cancels the CPU's own rate (n·cd = d·cn):
            // SMT's factor is all that is left, without the u128
            // products (a hot path, and on an SMT machine with busy
            // siblings the usual case: seed 002's laptop).
            return (sn, sd);
        }
        let (cn, cd) = self.calib_rate;
        let (n, d) = crate::exectime::progress_rate(
            self.m.topo.cpu(cpu),
            self.m.freq(cpu),
            self.m.tasks[t].mem_ppm,
        );
        (n * cd as u128 * sn, d * cn as u128 * sd)
    }

    /// Whether `t`'s work progresses on `cpu` at exactly the calibration
    /// rate before SMT: the usual machine (a full-capacity CPU at its top
    /// frequency, the calibration CPU's speed, no memory stalls), where
    /// `exectime::progress_rate` and the calibration cancel out. The
    /// timing paths then skip their u128 products (a hot path).
    pub(crate) fn unit_progress_rate(&self, cpu: CpuId, t: TaskId) -> bool {
        let (cn, cd) = self.calib_rate;
        let c = self.m.topo.cpu(cpu);
        cn == cd
            && self.m.tasks[t].mem_ppm == 0
            && c.capacity == crate::topology::CAPACITY_SCALE
            && self.m.freq(cpu) == c.max_freq_khz
    }

    /// Start (or restart) the current task's busy segment on `cpu`.
    pub(crate) fn start_segment(&mut self, cpu: CpuId, delay: Ns) {
        let Some(t) = self.m.rqs[cpu].curr else {
            return;
        };
        self.m.rqs[cpu].seg_start = self.m.now + delay;
        let start = self.m.rqs[cpu].seg_start;
        let end = match self.m.tasks[t].busy {
            Some(Busy::Work(left)) => {
                let (num, den) = self.rate(cpu, t);
                // At the calibration rate (num = den) the segment lasts
                // exactly its work: no u128 division (a hot path).
                if num == den {
                    Some(start + left)
                } else {
                    Some(start + (left as u128 * den).div_ceil(num) as Ns)
                }
            }
            Some(Busy::Until(u)) => Some(u.max(start)),
            None => None,
        };
        self.set_seg_end(cpu, end);
    }

    /// `t`'s class values (`SchedClass::task_debug`: vruntime, deadline,
    /// lag, ...) as counters of the trace, sampled at its switches; the
    /// caller asks whether the trace samples counters.
    fn trace_task_counters(&mut self, t: Option<TaskId>) {
        let Some(t) = t else {
            return;
        };
        let c = self.class_of(t);
        let now = self.m.now;
        if let Some(tr) = self.m.trace.as_mut() {
            let mut values = std::mem::take(&mut tr.counters.scratch);
            values.clear();
            self.classes.get_ref(c).task_debug_into(t, &mut values);
            tr.counters.sample(now, t, &values);
            tr.counters.scratch = values;
        }
    }

    /// Set `cpu`'s segment end in its run queue and in the event loop's index.
    pub(crate) fn set_seg_end(&mut self, cpu: CpuId, end: Option<Ns>) {
        self.m.rqs[cpu].seg_end = end;
        self.seg_ends.set(cpu, end);
    }

    /// Re-time `cpu`'s running segment at its current rate (after a
    /// frequency or SMT-sibling change settled the work done so far).
    pub(crate) fn retime_segment(&mut self, cpu: CpuId) {
        if self.m.rqs[cpu].seg_end.is_some() {
            let delay = self.m.rqs[cpu].seg_start.saturating_sub(self.m.now);
            self.start_segment(cpu, delay);
        }
    }

    /// `__schedule` on `cpu`. A clock update skip requested since the last
    /// one (`Rq::clock_skip_req`) is taken here ("Promote REQ to ACT"): the
    /// accounting inside reads the stale clock (`Machine::rq_clock`).
    pub(crate) fn schedule(&mut self, cpu: CpuId) {
        self.quiet_touch(cpu);
        self.m.clock_skip_act = self.m.rqs[cpu].clock_skip_req.take().map(|c| (cpu, c));
        self.schedule_with_clock(cpu);
        // Departure: a request made inside (a newly idle CPU pulling a task
        // onto itself) is dropped; 6.18 keeps it for the next `__schedule`,
        // whose clock is then the last tick's or enqueue's.
        self.m.clock_skip_act = None;
        self.m.rqs[cpu].clock_skip_req = None;
    }

    fn schedule_with_clock(&mut self, cpu: CpuId) {
        self.server_update(cpu);
        let prev = self.m.rqs[cpu].curr;
        if let Some(p) = prev {
            self.settle(cpu);
            self.deactivate_if_blocked(cpu, p);
        }
        let mut put_prev_done = false;
        let stopper_task = self.m.rqs[cpu].active_balance_task.take();
        if let Some(dst) = self.m.rqs[cpu].active_balance_to.take() {
            if let Some(t) = stopper_task.filter(|t| Some(*t) != prev) {
                // The stopper preempts the current task, whatever its class
                // (it resumes after: an involuntary switch), and moves the
                // queued task `t` (active_load_balance_cpu_stop →
                // detach_one_task). Departure: the stopper thread itself is
                // not traced and takes no time; the current task is traced
                // as switching to itself.
                if let Some(p) = prev.filter(|p| self.m.tasks[*p].is_queued()) {
                    self.stopper_preempts(cpu, p);
                    put_prev_done = true;
                }
                let task = &self.m.tasks[t];
                if task.is_queued() && task.cpu == cpu && task.affinity.contains(dst) {
                    self.m.stats.balance_migrations += 1;
                    self.move_queued_task(t, dst, cpu);
                }
            } else if let Some(p) = prev {
                let t = &self.m.tasks[p];
                if t.is_queued() && t.affinity.contains(dst) {
                    // The stopper preempts `p` and pushes it to `dst`.
                    self.stopper_preempts(cpu, p);
                    put_prev_done = true;
                    self.move_queued_task(p, dst, cpu);
                }
            }
        }
        if self.m.online.contains(cpu) {
            // An offline CPU pulls nothing (engine/hotplug.rs). After the
            // stopper ran, the schedule starts as from idle: no class pulls
            // (departure: the kernel's `prev` is then the stopper thread,
            // for which `balance_rt` may pull).
            self.prev_balance(cpu, if put_prev_done { None } else { prev });
        }
        self.apply_migrations();
        let mut next = None;
        // An active server whose entity comes first in its host class
        // (the fair server's deadline before every DL task's) runs its
        // class's tasks there, ahead of the classes in between (RT, §7).
        let server_first = self.classes.server.as_ref().and_then(|spec| {
            let runnable = self.classes.get_ref(spec.served).nr_runnable(cpu) > 0;
            self.classes
                .get_ref(spec.host)
                .server_runs_first(cpu, runnable)
                .then_some((spec.host, spec.served))
        });
        for c in 0..self.classes.len() {
            if let Some((_, served)) = server_first.filter(|(host, _)| *host == c) {
                if let Some(t) = self.classes.get(served).pick_task(&mut self.m, cpu) {
                    next = Some(t);
                    break;
                }
            }
            if let Some(t) = self.classes.get(c).pick_task(&mut self.m, cpu) {
                next = Some(t);
                break;
            }
        }
        self.m.clear_resched(cpu);
        let curr = self.m.rqs[cpu].curr;
        if let Some(n) = next.filter(|n| Some(*n) != curr) {
            self.prefetch_switch_in(n);
        }
        if next == curr && !put_prev_done {
            if let Some(p) = curr {
                self.resume_current(cpu, p);
            }
            return;
        }
        if let Some(p) = curr {
            let c = self.class_of(p);
            self.classes.get(c).put_prev_task(&mut self.m, cpu, p, next);
            self.switch_out(cpu, p);
        }
        if let Some(n) = next {
            let c = self.class_of(n);
            self.classes.get(c).set_next_task(&mut self.m, cpu, n);
        }
        self.switch_in(cpu, if put_prev_done { prev } else { curr }, next);
    }

    /// The stopper thread preempts `p`, the current task of `cpu`
    /// (`stop_one_cpu_nowait`): `p` is put back and switched out, and the
    /// CPU shows no current task until the pick.
    fn stopper_preempts(&mut self, cpu: CpuId, p: TaskId) {
        self.quiet_touch(cpu);
        let c = self.class_of(p);
        self.classes.get(c).put_prev_task(&mut self.m, cpu, p, None);
        self.switch_out(cpu, p);
        self.m.note_switch(cpu);
        self.m.rqs[cpu].curr = None;
        self.m.sync_idle(cpu);
    }

    /// `prev_balance` (kernel/sched/core.c, 6.12 and 6.18): before the
    /// pick, the class of `prev` and each class below it may pull work
    /// (`SchedClass::balance`), until one has a task to run here; a class
    /// above `prev`'s is not asked, and a class below one with a runnable
    /// task is not either (unless it asks to be, `balance_every_pick`). So
    /// a CPU pulls DEADLINE tasks only when its DEADLINE task left
    /// (`balance_dl`: `dl_task(prev)` and not queued), RT tasks only when
    /// its priority dropped (`balance_rt`), and balances the fair class
    /// newly idle only when nothing is runnable. From idle (`prev` None)
    /// every class is asked from the top: no class pulls for an idle
    /// `prev`, and the fair class's newly-idle balance runs when nothing is
    /// runnable, which is the kernel's fast path (`pick_next_task_fair`).
    /// Each class's pulls are carried out before the next class is asked,
    /// as the kernel's happen inside `balance`. A class that takes no
    /// policy is skipped, as `for_balance_class_range` skips the fair class
    /// when sched_ext has switched every task (`next_active_class`,
    /// kernel/sched/sched.h 6.12).
    fn prev_balance(&mut self, cpu: CpuId, prev: Option<TaskId>) {
        let start = prev.map_or(0, |p| self.class_of(p));
        let (mut runnable, mut first) = (false, true);
        for c in start..self.classes.len() {
            if !self.classes.is_active(c)
                || (runnable && !self.classes.get_ref(c).balance_every_pick())
            {
                continue;
            }
            let requested = self.m.migrations.len();
            runnable |= self.classes.get(c).balance(&mut self.m, cpu, prev);
            // A class that pulled has a task to run here.
            runnable |= self.m.migrations.len() > requested;
            self.apply_migrations();
            // The kernel's balance returns true for a runnable task of a
            // higher class too (`balance_rt`: `sched_dl_runnable() || ...`):
            // the first class asked pulls, and the classes below it stop
            // there.
            if first && !runnable {
                runnable = (0..start).any(|k| {
                    self.classes.is_active(k) && self.classes.get_ref(k).nr_runnable(cpu) > 0
                });
            }
            first = false;
        }
    }

    /// Positions of the server's host class and served class, if any.
    #[inline]
    fn server_classes(&self) -> Option<(usize, usize)> {
        self.classes.server.as_ref().map(|s| (s.host, s.served))
    }

    /// Bring `cpu`'s deadline server up to date (class/dl/server.rs): tell
    /// its host class what ran and how many served tasks are runnable.
    pub(crate) fn server_update(&mut self, cpu: CpuId) {
        let Some((host, served)) = self.server_classes() else {
            return;
        };
        let ran = match self.m.rqs[cpu].curr {
            None => ServerRan::Idle,
            Some(t) if self.class_of(t) != served => ServerRan::Other,
            Some(_) => ServerRan::Fair,
        };
        let nr_served = self.classes.get_ref(served).nr_runnable(cpu);
        let act = self
            .classes
            .get(host)
            .server_update(&mut self.m, cpu, ran, nr_served);
        self.server_apply(cpu, act);
    }

    /// The server timer of `cpu` fired.
    pub(crate) fn server_timer(&mut self, cpu: CpuId) {
        self.server_update(cpu);
        let Some((host, _)) = self.server_classes() else {
            return;
        };
        let over_queued = self.classes.server.as_ref().is_some_and(|spec| {
            spec.over
                .iter()
                .any(|c| self.classes.get_ref(*c).nr_runnable(cpu) > 0)
        });
        let act = self
            .classes
            .get(host)
            .server_timer(&mut self.m, cpu, over_queued);
        self.server_apply(cpu, act);
    }

    fn server_apply(&mut self, cpu: CpuId, act: ServerActions) {
        if let Some(at) = act.arm {
            self.events.push(at, EventKind::ServerTimer { cpu });
        }
        if act.resched {
            self.m.resched(cpu);
        }
    }

    /// A blocked or exiting current task leaves the run queue
    /// (`deactivate_task` in `__schedule`).
    fn deactivate_if_blocked(&mut self, cpu: CpuId, p: TaskId) {
        let state = self.m.tasks[p].state;
        if !matches!(state, TaskState::Sleeping | TaskState::Dead) || !self.m.tasks[p].is_queued() {
            return;
        }
        let flags = if state == TaskState::Dead {
            DequeueFlags::SPECIAL
        } else {
            DequeueFlags::SLEEP
        };
        let c = self.class_of(p);
        self.quiet_touch(cpu);
        let done = self.classes.get(c).dequeue_task(&mut self.m, cpu, p, flags);
        self.m.tasks[p].on_rq = if done { OnRq::No } else { OnRq::Delayed };
        self.m.rqs[cpu].nr_running -= 1;
        self.m.sync_idle(cpu);
        if state == TaskState::Dead {
            self.classes.get(c).task_dead(&mut self.m, p);
        }
    }

    /// The current task was picked again: continue where it was.
    fn resume_current(&mut self, cpu: CpuId, p: TaskId) {
        if self.m.tasks[p].state != TaskState::Running {
            return;
        }
        if self.m.tasks[p].busy.is_some() {
            self.start_segment(cpu, 0);
        } else if let Err(e) = self.step(p) {
            self.fail(e);
        }
    }

    /// Account the end of `p`'s time on `cpu`.
    fn switch_out(&mut self, cpu: CpuId, p: TaskId) {
        let now = self.m.now;
        // By the run queue's clock, as sum_exec_runtime: a skipped clock
        // update ends `p`'s time at the wakeup that preempted it.
        let ran = self
            .m
            .rq_clock(cpu)
            .saturating_sub(self.m.rqs[cpu].curr_since);
        let c = self.class_of(p);
        self.quiet_touch(cpu);
        self.classes.get(c).task_stopped(&mut self.m, cpu, p, ran);
        self.m.stats.tasks[p].cpu_time += ran;
        self.m.rqs[cpu].busy_ns += ran;
        self.set_seg_end(cpu, None);
        let t = &mut self.m.tasks[p];
        t.last_run_end = now;
        if t.state == TaskState::Running {
            t.state = TaskState::Runnable;
            t.runnable_since = Stamp::at(now);
        }
    }

    fn switch_in(&mut self, cpu: CpuId, prev: Option<TaskId>, next: Option<TaskId>) {
        let now = self.m.now;
        let prev_state = match prev.map(|p| self.m.tasks[p].state) {
            Some(TaskState::Sleeping) => PrevState::Sleeping,
            Some(TaskState::Dead) => PrevState::Dead,
            _ => PrevState::Runnable,
        };
        if let Some(p) = prev {
            let s = &mut self.m.stats.tasks[p];
            match prev_state {
                PrevState::Runnable => s.nivcsw += 1,
                PrevState::Sleeping => s.nvcsw += 1,
                PrevState::Dead => {}
            }
        } else if let Some(stamp) = self.m.rqs[cpu].idle_stamp.take() {
            // rq->avg_idle: running average of idle periods (update_avg, 1/8).
            let d = (now - stamp) as i64;
            let avg = self.m.rqs[cpu].avg_idle as i64;
            self.m.rqs[cpu].avg_idle = (avg + (d - avg) / 8).max(0) as Ns;
        }
        self.m.trace(
            cpu,
            TraceEvent::Switch {
                prev,
                prev_state,
                next,
            },
        );
        // Asked here, not in the call: a call for each of two tasks at
        // every switch, with no trace, was 1 % of the global-EDF anchor.
        if self.m.trace.as_ref().is_some_and(|tr| tr.sample_counters) {
            self.trace_task_counters(prev);
            self.trace_task_counters(next);
        }
        self.m.rqs[cpu].nr_switches += 1;
        if prev.is_some() && next.is_some() {
            self.m.rqs[cpu].nr_task_switches += 1;
        }
        let busy_changes = self.m.rqs[cpu].curr.is_some() != next.is_some();
        let sibs = if busy_changes {
            self.smt_settle_siblings(cpu)
        } else {
            crate::cpuset::CpuSet::empty()
        };
        self.m.note_switch(cpu);
        self.m.rqs[cpu].curr = next;
        self.m.sync_idle(cpu);
        self.m.rqs[cpu].curr_since = self.m.rq_clock(cpu);
        self.smt_retime(sibs);
        if let Some(n) = next {
            let st = &mut self.m.stats.tasks[n];
            st.awaiting.set(None);
            st.job_start.get_or_insert(now);
        }
        let Some(n) = next else {
            self.m.rqs[cpu].idle_stamp = Some(now);
            if self.idle_tick_retain {
                self.idle_tick_due.insert(cpu);
            }
            return;
        };
        let migrated = self.m.tasks[n].last_run_end == 0 && self.m.tasks[n].last_run_start != 0;
        let t = &mut self.m.tasks[n];
        t.state = TaskState::Running;
        if let Some(since) = t.runnable_since.take() {
            self.m.stats.tasks[n].wait_time += now - since;
        }
        if let Some(w) = t.waking_since.take() {
            self.m.stats.tasks[n].wakeup_latency.record(now - w);
        }
        t.last_run_start = now;
        let s = &mut self.m.stats.tasks[n];
        s.quantum_work = s.work_done;
        // A task that has run has CPU time (on the line just written): its
        // first CPU is then known, and its last line stays unread.
        if s.cpu_time == 0 && s.first_cpu.is_none() {
            s.first_cpu = Some(cpu);
        }
        let overhead = std::mem::take(&mut self.m.rqs[cpu].pending_overhead);
        let delay = self.cs_cost + overhead + if migrated { self.mig_cost } else { 0 };
        if self.m.tasks[n].busy.is_some() {
            self.start_segment(cpu, delay);
        } else {
            self.m.rqs[cpu].seg_start = now + delay;
            if let Err(e) = self.step(n) {
                self.fail(e);
            }
        }
    }

    /// `activate_task`: make `t` runnable on `cpu`.
    pub(super) fn activate(&mut self, t: TaskId, cpu: CpuId, flags: EnqueueFlags) {
        self.m.touch_rq_clock(cpu);
        self.quiet_touch(cpu);
        let c = self.class_of(t);
        self.classes.get(c).enqueue_task(&mut self.m, cpu, t, flags);
        let task = &mut self.m.tasks[t];
        task.on_rq = OnRq::Queued;
        task.state = TaskState::Runnable;
        task.runnable_since = Stamp::at(self.m.now);
        self.m.rqs[cpu].nr_running += 1;
        self.m.sync_idle(cpu);
    }

    /// `wakeup_preempt`: should the current task of `cpu` give way to `t`?
    pub(super) fn wakeup_preempt(&mut self, cpu: CpuId, t: TaskId, flags: WakeFlags) {
        self.quiet_touch(cpu);
        let ct = self.class_of(t);
        match self.m.rqs[cpu].curr {
            None => self.m.resched(cpu),
            Some(curr) => {
                let cc = self.class_of(curr);
                let served = self.server_classes().is_some_and(|(host, served)| {
                    ct == served && self.classes.get_ref(host).server_active(cpu)
                });
                if cc == ct {
                    self.classes
                        .get(ct)
                        .wakeup_preempt(&mut self.m, cpu, t, flags);
                } else if ct < cc || served {
                    // A higher class, or a fair task its active server runs.
                    self.m.resched(cpu);
                }
            }
        }
        // "A queue event has occurred, and we're going to schedule": the
        // kernel skips the next `__schedule`'s clock update (the current
        // task, idle included, is queued).
        if self.m.rqs[cpu].need_resched && self.classes.get_ref(ct).clock_update_skip() {
            self.m.rqs[cpu].clock_skip_req = Some(self.m.now);
        }
    }

    /// `set_task_cpu`: record a CPU change, traced on `on`, the CPU that
    /// makes it (as the kernel's `sched_migrate_task` is: the waker's CPU
    /// for a wakeup, the puller for a pull, the pusher for a push).
    fn set_task_cpu(&mut self, t: TaskId, cpu: CpuId, on: CpuId) {
        let from = self.m.tasks[t].cpu;
        if from == cpu {
            return;
        }
        self.m.trace(
            on,
            TraceEvent::Migrate {
                task: t,
                orig_cpu: from,
                dest_cpu: cpu,
            },
        );
        self.m.stats.tasks[t].migrations += 1;
        let task = &mut self.m.tasks[t];
        task.cpu = cpu;
        // exec_start = 0 after migration: never cache-hot on the new CPU.
        task.last_run_end = 0;
    }

    /// `move_queued_task`: move a queued, not running task to `dst`, on
    /// CPU `on` (where the move is traced).
    pub(crate) fn move_queued_task(&mut self, t: TaskId, dst: CpuId, on: CpuId) {
        let src = self.m.tasks[t].cpu;
        let c = self.class_of(t);
        self.m.touch_rq_clock(src);
        self.quiet_touch(src);
        self.classes
            .get(c)
            .dequeue_task(&mut self.m, src, t, DequeueFlags::MOVE);
        self.m.rqs[src].nr_running -= 1;
        self.m.sync_idle(src);
        self.m.tasks[t].on_rq = OnRq::No;
        let since = self.m.tasks[t].runnable_since;
        self.set_task_cpu(t, dst, on);
        self.activate(t, dst, EnqueueFlags::MIGRATED);
        self.m.tasks[t].runnable_since = since;
        self.wakeup_preempt(dst, t, WakeFlags::default());
    }

    /// `select_task_rq` (core.c): the task's class picks a CPU, and an
    /// offline choice falls back (`select_fallback_rq`).
    pub(super) fn select_task_rq(
        &mut self,
        t: TaskId,
        prev: CpuId,
        flags: WakeFlags,
        waker: Waker,
    ) -> CpuId {
        let c = self.class_of(t);
        self.quiet_touch(prev);
        let cpu = self
            .classes
            .get(c)
            .select_task_rq(&mut self.m, t, prev, flags, waker);
        self.quiet_touch(cpu);
        match self.m.online.contains(cpu) {
            true => cpu,
            false => self.fallback_cpu(t),
        }
    }

    /// `try_to_wake_up`.
    pub(crate) fn try_to_wake_up(&mut self, t: TaskId, waker: Waker) {
        if self.m.tasks[t].state != TaskState::Sleeping {
            return;
        }
        self.m.stats.wakeups += 1;
        let prev_cpu = self.m.tasks[t].cpu;
        self.m.trace(
            waker.cpu,
            TraceEvent::Waking {
                task: t,
                target_cpu: prev_cpu,
            },
        );
        match self.m.tasks[t].on_rq {
            OnRq::Queued => {
                // ttwu_runnable: blocked but not yet switched out.
                let running = self.m.rqs[prev_cpu].curr == Some(t);
                self.m.tasks[t].state = if running {
                    TaskState::Running
                } else {
                    TaskState::Runnable
                };
                if running {
                    self.m.resched(prev_cpu);
                }
                return;
            }
            OnRq::Delayed => {
                // 6.12: a delay-dequeued task is requeued where it is.
                let c = self.class_of(t);
                self.quiet_touch(prev_cpu);
                self.classes.get(c).enqueue_task(
                    &mut self.m,
                    prev_cpu,
                    t,
                    EnqueueFlags::DELAYED | EnqueueFlags::WAKEUP,
                );
                let task = &mut self.m.tasks[t];
                task.on_rq = OnRq::Queued;
                task.state = TaskState::Runnable;
                task.runnable_since = Stamp::at(self.m.now);
                task.waking_since = Stamp::at(self.m.now);
                self.m.rqs[prev_cpu].nr_running += 1;
                self.m.sync_idle(prev_cpu);
                self.m.trace(prev_cpu, TraceEvent::Wakeup { task: t });
                if !self.m.online.contains(prev_cpu) || !self.m.tasks[t].affinity.contains(prev_cpu)
                {
                    // Its CPU went offline while it was delay-dequeued there,
                    // or hotplug gave back a pinning that excludes it (the
                    // kernel's set_cpus_allowed moves a queued task, delayed
                    // ones included; enforce_affinity moves only Queued ones).
                    let dst = self.fallback_cpu(t);
                    self.move_queued_task(t, dst, waker.cpu);
                    return;
                }
                let target = self.wake_target(prev_cpu, waker.cpu);
                self.wakeup_preempt(prev_cpu, t, WakeFlags::TTWU);
                self.delay_wakeup_resched(t, target);
                return;
            }
            OnRq::No => {}
        }
        self.m.tasks[t].waking_since = Stamp::at(self.m.now);
        let c = self.class_of(t);
        let cpu = self.select_task_rq(t, prev_cpu, WakeFlags::TTWU, waker);
        let mut flags = EnqueueFlags::WAKEUP;
        let mut wf = WakeFlags::TTWU;
        if cpu != prev_cpu {
            self.classes.get(c).migrate_task_rq(&mut self.m, t, cpu);
            self.set_task_cpu(t, cpu, waker.cpu);
            flags = flags | EnqueueFlags::MIGRATED;
            wf = wf | WakeFlags::MIGRATED;
        }
        let target = self.wake_target(cpu, waker.cpu);
        self.activate(t, cpu, flags);
        self.m.trace(cpu, TraceEvent::Wakeup { task: t });
        self.wakeup_preempt(cpu, t, wf);
        self.delay_wakeup_resched(t, target);
    }

    /// Record a fatal run-time error; the run stops at this time.
    pub(crate) fn fail(&mut self, e: super::SimError) {
        if self.error.is_none() {
            self.error = Some(e);
        }
        self.finished_at = Some(self.m.now);
    }
}
