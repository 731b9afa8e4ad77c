//! The shared state of a simulated machine: clock, topology, tasks, per-CPU
//! run queues, task groups, statistics and trace. Classes get `&mut Machine`
//! in every hook and change engine-owned state only through the methods
//! below (class/mod.rs, "Contract").

use crate::clock::{tick_ns, Ns};
use crate::cpuset::CpuId;
use crate::rng::Rng;
use crate::runqueue::Rq;
use crate::stats::Stats;
use crate::task::{OnRq, Task, TaskId};
use crate::topology::Topology;
use crate::trace::{Trace, TraceEvent};

/// A task group (cgroup with `cpu.shares`, or an autogroup).
#[derive(Debug, Clone)]
pub struct TaskGroup {
    /// cgroup path (`/` for the root, `/autogroup-N` for autogroups).
    pub path: String,
    /// Parent group, `None` for the root.
    pub parent: Option<usize>,
    /// `tg->shares` (1024 = one nice-0 task).
    pub shares: u64,
}

/// A process: a thread group.
#[derive(Debug, Clone)]
pub struct Process {
    /// Name (the workload's `process` key).
    pub name: String,
    /// Thread-group id.
    pub tgid: u32,
    /// Threads, in creation order.
    pub threads: Vec<TaskId>,
    /// Threads not yet exited (kept by the engine at fork and exit, so
    /// thread-count-aware weights cost O(1) to read).
    pub live: usize,
}

/// Why a task is moved between CPUs (for statistics).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MigrationKind {
    /// Load balancing moved a queued task.
    Balance,
    /// A CPU pushed a queued task of its own to another CPU (the DEADLINE
    /// and RT classes' `push_dl_task` / `push_rt_task`): counted as a
    /// balance migration, and the destination's reschedule is remote, a
    /// resched IPI from the pushing CPU (`resched_curr(later_rq)`), so it
    /// pays the wakeup path's costs (engine/latency.rs).
    Push,
}

/// A class asks the engine to move a queued task to another CPU.
#[derive(Debug, Clone, Copy)]
pub struct MigrationRequest {
    /// Task to move.
    pub task: TaskId,
    /// Destination CPU.
    pub dst: CpuId,
    /// Why.
    pub kind: MigrationKind,
}

/// Simulated machine state shared by the engine and the classes.
#[derive(Debug)]
pub struct Machine {
    /// Current simulated time.
    pub now: Ns,
    /// `RQCF_ACT_SKIP`: inside a `__schedule` on that CPU that took a
    /// clock-update skip request (`Rq::clock_skip_req`), the stale clock
    /// it accounts with (`Machine::rq_clock`). Kept here, beside `now`,
    /// so that every other read of the clock stays one load.
    pub(crate) clock_skip_act: Option<(CpuId, Ns)>,
    /// CPUs.
    pub topo: Topology,
    /// Tick frequency.
    pub hz: u32,
    /// Where the jiffy grid sits after the run's start (`tick_phase_ns`,
    /// engine/nohz.rs): ticks fall at this plus whole tick periods.
    pub tick_phase: Ns,
    /// All tasks ever created, by id.
    pub tasks: Vec<Task>,
    /// Processes, by index.
    pub processes: Vec<Process>,
    /// Task groups; index 0 is the root group.
    pub groups: Vec<TaskGroup>,
    /// Per-CPU run queues.
    pub rqs: Vec<Rq>,
    /// The run's only random number generator.
    pub rng: Rng,
    /// The run's seed, for keyed draws (`rng::keyed`) that must not
    /// advance `rng`: values fixed once at the start.
    pub seed: u64,
    /// Statistics being collected.
    pub stats: Stats,
    /// Trace recorder, if tracing is on.
    pub trace: Option<Trace>,
    /// Migrations requested by classes, carried out by the engine.
    pub migrations: Vec<MigrationRequest>,
    /// Online CPUs (engine/hotplug.rs).
    pub online: crate::cpuset::CpuSet,
    /// Class timers requested (hrtimers such as the RT period timer or a
    /// DEADLINE replenishment timer), queued by the engine.
    pub timers: Vec<TimerRequest>,
    /// A fatal error raised by a class or policy (`Machine::fail`); the
    /// engine stops the run with it after the current event.
    pub error: Option<String>,
    /// Classes that asked to be disabled (`Machine::abort_class`), with why.
    pub aborts: Vec<(&'static str, String)>,
    /// CPUs whose `need_resched` is set, so the engine finds the next CPU
    /// to reschedule without scanning every run queue.
    pub(crate) resched_cpus: crate::cpuset::CpuSet,
    /// Some task has had SCHED_IDLE at some point (set by the engine when
    /// it creates a task or changes its policy; never cleared). Without one,
    /// `sched_idle_cpu` is false everywhere and needs no scan of a CPU's
    /// tasks (the kernel keeps a counter, `cfs.idle_h_nr_running`).
    pub(crate) any_sched_idle: bool,
    /// CPUs with nothing running or queued (`is_idle`), kept by the engine
    /// at every change of a run queue's `curr` or `nr_running`
    /// (`Machine::sync_idle`), so that idle scans test a bit rather than
    /// read a run queue each (issue 18: at 256 CPUs they were a fifth of
    /// the run time).
    pub(crate) idle: crate::cpuset::CpuSet,
}

/// A class asks to be called back (`SchedClass::timer`) at `at`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimerRequest {
    /// Absolute time.
    pub at: Ns,
    /// Name of the class that armed it (`SchedClass::name`).
    pub class: &'static str,
    /// CPU the timer belongs to.
    pub cpu: CpuId,
    /// Class-defined tag (e.g. a task id or a generation), handed back.
    pub tag: u64,
}

impl Machine {
    /// Length of a tick.
    pub fn tick_ns(&self) -> Ns {
        tick_ns(self.hz)
    }

    /// The first jiffy-grid instant strictly after `t` (ticks fall at
    /// `tick_phase` plus whole tick periods; time 0 itself is never one).
    pub fn next_tick_after(&self, t: Ns) -> Ns {
        let tick = self.tick_ns().max(1);
        if t < self.tick_phase {
            return self.tick_phase;
        }
        let last = t - (t - self.tick_phase) % tick;
        last.saturating_add(tick)
    }

    /// How far `now` is into its jiffy (since the last tick instant, or
    /// since the grid's would-be tick before the first one).
    pub fn into_jiffy(&self) -> Ns {
        self.now + self.tick_ns().max(1) - self.next_tick_after(self.now)
    }

    /// Whether a task has ever had SCHED_IDLE in this run.
    pub fn any_sched_idle(&self) -> bool {
        self.any_sched_idle
    }

    /// Number of CPUs.
    pub fn nr_cpus(&self) -> usize {
        self.rqs.len()
    }

    /// Ask for `cpu` to reschedule as soon as the current event is handled
    /// (`resched_curr`).
    pub fn resched(&mut self, cpu: CpuId) {
        self.rqs[cpu].need_resched = true;
        self.resched_cpus.insert(cpu);
    }

    /// `rq_clock(rq)` of `cpu` as the scheduler's accounting reads it
    /// (`update_curr`'s delta, `exec_start` of the next task): now, except
    /// inside a `__schedule` that follows a wakeup's reschedule request,
    /// whose clock update the kernel skips (RQCF_ACT_SKIP, kernel/sched/
    /// core.c v6.18 `wakeup_preempt` and `__schedule`). There the clock
    /// still reads the wakeup's time, so the span from the wakeup to the
    /// switch (the wakeup path's costs, engine/latency.rs) is charged to
    /// the task switched in, not to the one switched out.
    #[inline]
    pub fn rq_clock(&self, cpu: CpuId) -> Ns {
        match self.clock_skip_act {
            Some((c, clock)) if c == cpu => clock,
            _ => self.now,
        }
    }

    /// Something updated `cpu`'s run-queue clock (a tick, an enqueue or a
    /// dequeue there): a pending skip now keeps this time
    /// (`update_rq_clock` still runs while the skip is only requested).
    #[inline]
    pub(crate) fn touch_rq_clock(&mut self, cpu: CpuId) {
        let now = self.now;
        if let Some(c) = self.rqs[cpu].clock_skip_req.as_mut() {
            *c = now;
        }
    }

    /// Clear `cpu`'s `need_resched` (it is being rescheduled now, or the
    /// reschedule was deferred to a later event).
    pub(crate) fn clear_resched(&mut self, cpu: CpuId) {
        self.rqs[cpu].need_resched = false;
        self.rqs[cpu].resched_deferred = false;
        self.resched_cpus.remove(cpu);
    }

    /// Whether `cpu`'s current task is to be rescheduled, now or when a
    /// granted wakeup preemption's delay ends (`test_tsk_need_resched`).
    pub fn resched_pending(&self, cpu: CpuId) -> bool {
        self.rqs[cpu].need_resched || self.rqs[cpu].resched_deferred
    }

    /// Ask the engine to move queued (not current) task `task` to `dst`.
    pub fn request_migration(&mut self, task: TaskId, dst: CpuId, kind: MigrationKind) {
        self.migrations.push(MigrationRequest { task, dst, kind });
    }

    /// Ask for the `timer` hook of the class named `class` (the caller's
    /// own `SchedClass::name`) to run at `at` (never earlier than now).
    /// Timers cannot be cancelled: the class ignores stale ones by `tag`.
    pub fn arm_timer(&mut self, at: Ns, class: &'static str, cpu: CpuId, tag: u64) {
        let at = at.max(self.now);
        self.timers.push(TimerRequest {
            at,
            class,
            cpu,
            tag,
        });
    }

    /// Stop the run with an error (a policy misbehaved: the message names
    /// the policy, the hook, the task and the time). The first error wins.
    pub fn fail(&mut self, msg: String) {
        if self.error.is_none() {
            self.error = Some(msg);
        }
    }

    /// Ask the engine to disable the class named `class` (the kernel's
    /// `scx_error` → `scx_disable`): after the current event every task of
    /// that class moves to the stack's fallback class and `reason` is
    /// recorded in the run's warnings.
    pub fn abort_class(&mut self, class: &'static str, reason: String) {
        self.aborts.push((class, reason));
    }

    /// Ask the stopper to push the current task of `src` to `dst` at `src`'s
    /// next schedule (`active_load_balance_cpu_stop`); one request per CPU
    /// at a time. Returns false if one is already pending.
    pub fn request_active_balance(&mut self, src: CpuId, dst: CpuId) -> bool {
        if self.rqs[src].active_balance_to.is_some() {
            return false;
        }
        self.rqs[src].active_balance_to = Some(dst);
        true
    }

    /// Ask the stopper of `src` to move the queued task `t` to `dst`
    /// (`stop_one_cpu_nowait(active_load_balance_cpu_stop)`, fair.c): at
    /// `src`'s next schedule it preempts whatever runs there, whatever its
    /// class (an involuntary switch for that task, which then resumes), and
    /// moves `t` if it is still queued there and allowed on `dst`; if `t`
    /// is the current task by then, it moves it as
    /// [`Self::request_active_balance`] does. One request per CPU at a
    /// time; returns false if one is already pending.
    pub fn request_active_balance_of(&mut self, src: CpuId, dst: CpuId, t: TaskId) -> bool {
        if !self.request_active_balance(src, dst) {
            return false;
        }
        self.rqs[src].active_balance_task = Some(t);
        true
    }

    /// Set the load weight of `t` (a weight policy decided a new one; the
    /// class reweights its queues itself).
    pub fn set_weight(&mut self, t: TaskId, weight: u64) {
        self.tasks[t].weight = weight;
    }

    /// A policy computation that costs `cost` ns of CPU time ran on `cpu`
    /// at a context switch: counted, and it delays the next task's
    /// progress (TSF's PMU read, tunable `tsf_cost_ns`).
    pub fn charge_policy_overhead(&mut self, cpu: CpuId, cost: Ns) {
        self.stats.policy_updates += 1;
        self.stats.policy_overhead += cost;
        self.rqs[cpu].pending_overhead += cost;
    }

    /// A class completed the delayed dequeue of `t`: it is no longer queued.
    pub fn note_delayed_dequeue_done(&mut self, t: TaskId) {
        self.tasks[t].on_rq = OnRq::No;
    }

    /// `req` restricted to online CPUs, or every online CPU if that is empty.
    pub fn effective_affinity(&self, req: crate::cpuset::CpuSet) -> crate::cpuset::CpuSet {
        let a = req.and(&self.online);
        if a.is_empty() {
            self.online
        } else {
            a
        }
    }

    /// Current frequency of `cpu`, kHz.
    pub fn freq(&self, cpu: CpuId) -> u64 {
        self.rqs[cpu].freq_khz
    }

    /// Speed of `cpu` relative to a capacity-1024 CPU at its maximum
    /// frequency, at the current frequency, as (numerator, denominator)
    /// (`arch_scale_cpu_capacity` × `arch_scale_freq_capacity`).
    pub fn rate(&self, cpu: CpuId) -> (u64, u64) {
        let c = self.topo.cpu(cpu);
        (
            c.capacity * self.freq(cpu),
            crate::topology::CAPACITY_SCALE * c.max_freq_khz,
        )
    }

    /// The idle CPUs (`is_idle` of each, as one mask).
    pub fn idle_cpus(&self) -> &crate::cpuset::CpuSet {
        &self.idle
    }

    /// `available_idle_cpu`: nothing runs and nothing is queued.
    pub fn is_idle(&self, cpu: CpuId) -> bool {
        debug_assert_eq!(
            self.idle.contains(cpu),
            self.rqs[cpu].curr.is_none() && self.rqs[cpu].nr_running == 0,
            "idle mask out of step on CPU {cpu}"
        );
        self.idle.contains(cpu)
    }

    /// Bring `cpu`'s bit of the idle mask in step with its run queue, after
    /// `curr` or `nr_running` changed.
    pub(crate) fn sync_idle(&mut self, cpu: CpuId) {
        if self.rqs[cpu].curr.is_none() && self.rqs[cpu].nr_running == 0 {
            self.idle.insert(cpu);
        } else {
            self.idle.remove(cpu);
        }
    }

    /// Whether `cpu` runs an RT or DEADLINE task now (kernel priority below
    /// `MAX_RT_PRIO`): the state its `avg_rt_dl` signal accumulates.
    ///
    /// Read from the policy alone, in the task's first cache line:
    /// `prio()` reads the nice value too, another line, which a switch at
    /// 10,000 hogs on 8 CPUs found cold (issue 18).
    fn runs_rt_dl(&self, cpu: CpuId) -> bool {
        self.rqs[cpu].curr.is_some_and(|t| {
            let task = &self.tasks[t];
            debug_assert_eq!(
                task.policy.is_rt_or_dl(),
                task.prio() < crate::runqueue::MAX_RT_PRIO
            );
            task.policy.is_rt_or_dl()
        })
    }

    /// `cpu`'s current task is about to change: close its `avg_rt_dl`
    /// interval at now (the kernel updates `avg_rt`/`avg_dl` in the RT and
    /// DEADLINE classes' put_prev/set_next/tick; the signal is the same).
    pub(crate) fn note_switch(&mut self, cpu: CpuId) {
        let v = if self.runs_rt_dl(cpu) { 1024 } else { 0 };
        let now = self.now;
        self.rqs[cpu].avg_rt_dl.update(now, v);
    }

    /// `cpu_util_rt(rq) + cpu_util_dl(rq)`: the RT and DEADLINE
    /// utilisation of `cpu` as of now (0..=1024).
    pub fn rt_dl_util(&self, cpu: CpuId) -> u64 {
        let runs = self.runs_rt_dl(cpu);
        let mut p = self.rqs[cpu].avg_rt_dl;
        if p.sum() == 0 && !runs {
            // Zero with zero input stays zero: the update and the division
            // below would give 0 (issue 18: every fork reads this for every
            // CPU, and most machines run no RT or DEADLINE task).
            return 0;
        }
        p.update(self.now, if runs { 1024 } else { 0 });
        p.avg().min(1024)
    }

    /// Record a trace event if tracing is on.
    pub fn trace(&mut self, cpu: CpuId, ev: TraceEvent) {
        if let Some(t) = self.trace.as_mut() {
            t.push(self.now, cpu, ev);
        }
    }
}
