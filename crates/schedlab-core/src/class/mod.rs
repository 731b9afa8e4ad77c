//! Scheduling classes: the extension point that mirrors the kernel's
//! `struct sched_class` (kernel/sched/sched.h).
//!
//! The engine keeps a *class stack* ordered by priority, like the kernel's
//! linker-section order `stop > dl > rt > fair > ext > idle`. Picking walks
//! the stack and takes the first task offered; a CPU whose classes offer
//! nothing runs the idle class. The idle class has no state worth modelling
//! (kernel/sched/idle.c only runs the idle loop), so it is represented by
//! "no task": [`crate::runqueue::Rq::curr`] is `None`.
//!
//! The stack is data (engine/stack.rs), built by the scheduler's entry in
//! the registry (registry.rs): mainline is `[dl, rt, fair]`, a
//! whole-scheduler replacement is its own class for every policy it takes
//! (Project C's `bmq` or `pds`, RT levels in the same bitmap), and a
//! sched_ext policy runs in an `ext` class between fair and idle. The stack also says which class
//! takes which `SCHED_*` policy. The engine names no class: it walks the
//! stack, asks it for a task's class, and calls classes by position.
//!
//! # Contract
//! Classes own their run queues and per-task scheduling state (vruntime,
//! deadlines, ...). The engine owns everything else: which task is current
//! on each CPU, task states, the clock, statistics and the trace. A class
//! changes engine state only through [`Machine`]'s methods: `resched`,
//! `request_migration`, `note_delayed_dequeue_done`. It never calls another
//! class. All hooks run at `m.now` and take no simulated time.

pub mod dl;
pub mod ext;
pub mod fair;
pub mod rt;
pub mod stack;

pub use dl::server::{Actions as ServerActions, Ran as ServerRan};

use crate::clock::Ns;
use crate::cpuset::CpuId;
use crate::machine::Machine;
use crate::task::TaskId;
use crate::workload::Policy;

macro_rules! flags {
    ($(#[$m:meta])* $name:ident { $($(#[$fm:meta])* $f:ident = $v:expr),* $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
        pub struct $name(pub u32);
        impl $name {
            $($(#[$fm])* pub const $f: $name = $name($v);)*
            /// Whether every flag of `o` is set.
            pub fn has(self, o: $name) -> bool { self.0 & o.0 == o.0 && o.0 != 0 }
        }
        impl std::ops::BitOr for $name {
            type Output = $name;
            fn bitor(self, o: $name) -> $name { $name(self.0 | o.0) }
        }
    };
}

flags!(
    /// `ENQUEUE_*` flags (kernel/sched/sched.h).
    EnqueueFlags {
        /// The task wakes up from sleep (`ENQUEUE_WAKEUP`): placement applies.
        WAKEUP = 0x01,
        /// Re-enqueue after an attribute change (`ENQUEUE_RESTORE`).
        RESTORE = 0x02,
        /// The task arrives from another CPU (`ENQUEUE_MIGRATED`).
        MIGRATED = 0x40,
        /// First enqueue of a new task (`ENQUEUE_INITIAL`).
        INITIAL = 0x80,
        /// Wakeup of a task whose dequeue was delayed (`ENQUEUE_DELAYED`).
        DELAYED = 0x200,
    }
);

flags!(
    /// `DEQUEUE_*` flags.
    DequeueFlags {
        /// The task goes to sleep (`DEQUEUE_SLEEP`): EEVDF may delay it.
        SLEEP = 0x01,
        /// Temporary removal for an attribute change (`DEQUEUE_SAVE`).
        SAVE = 0x02,
        /// The task is being moved to another CPU (`DEQUEUE_MOVE`).
        MOVE = 0x04,
        /// Completion of a delayed dequeue (`DEQUEUE_DELAYED`).
        DELAYED = 0x200,
        /// Task exit and similar: never delay (`DEQUEUE_SPECIAL`).
        SPECIAL = 0x10000,
    }
);

flags!(
    /// `WF_*` wake flags.
    WakeFlags {
        /// A regular wakeup (`WF_TTWU`).
        TTWU = 0x08,
        /// Wakeup of a newly forked task (`WF_FORK`).
        FORK = 0x04,
        /// The waker is about to sleep (`WF_SYNC`).
        SYNC = 0x10,
        /// The wakee changed CPU (`WF_MIGRATED`).
        MIGRATED = 0x20,
    }
);

/// Who wakes a task, for wakeup placement (`select_task_rq`).
#[derive(Debug, Clone, Copy)]
pub struct Waker {
    /// CPU the wakeup runs on (`smp_processor_id()` in `try_to_wake_up`).
    pub cpu: CpuId,
    /// The task that issued the wakeup, if any (timers have none).
    pub task: Option<TaskId>,
}

/// The last step of `find_later_rq` (deadline.c) and `find_lowest_rq`
/// (rt.c), v6.18, once neither the task's CPU nor the executing one
/// qualifies: for each domain of `cpu` from the smallest (SMT siblings, LLC,
/// machine; all have SD_WAKE_AFFINE here), the first CPU of `allowed` in its
/// span that satisfies `ok`, after the one last chosen this way on
/// `this_cpu`, wrapping (`cpumask_any_and_distribute`: the executing CPU's
/// `distribute_cpu_mask_prev`, `Rq::distribute_prev`; "by injecting this
/// little bit of random in cpu selection, we reduce the chance two
/// competing balance operations working off the same lowest_mask pick the
/// same CPU", commit 14e292f8d453, v5.10). Taking the lowest CPU instead
/// stacked pushed DEADLINE tasks on the low CPUs.
pub fn any_and_distribute(
    m: &mut Machine,
    this_cpu: CpuId,
    cpu: CpuId,
    allowed: crate::cpuset::CpuSet,
    ok: impl Fn(CpuId) -> bool,
) -> Option<CpuId> {
    let spans = [m.topo.siblings(cpu), m.topo.llc(cpu), m.online];
    let after = m.rqs[this_cpu].distribute_prev;
    let next = spans
        .iter()
        .find_map(|span| allowed.and(span).iter_wrap(after).find(|c| ok(*c)))?;
    m.rqs[this_cpu].distribute_prev = next;
    Some(next)
}

/// Where a `select_task_rq` starts: `prev_cpu` if `t` may run there, else
/// the first CPU of its affinity; and whether the call is a real placement
/// (a wakeup or a fork) rather than an exec or a forced move.
pub fn select_start(m: &Machine, t: TaskId, prev_cpu: CpuId, flags: WakeFlags) -> (CpuId, bool) {
    let aff = m.tasks[t].affinity;
    let start = if aff.contains(prev_cpu) {
        prev_cpu
    } else {
        aff.first().unwrap_or(prev_cpu)
    };
    (
        start,
        flags.has(WakeFlags::TTWU) || flags.has(WakeFlags::FORK),
    )
}

/// The class interface, one hook per `struct sched_class` member the
/// simulator needs. "Current" means `m.rqs[cpu].curr`.
pub trait SchedClass {
    /// Short name, e.g. `"fair"`.
    fn name(&self) -> &'static str;

    /// `task_fork`: a new task of this class was created on `m.tasks[t].cpu`
    /// by `parent` (None: created by the simulated launcher). Called once,
    /// before its first `enqueue_task` (flag INITIAL). May set up per-task
    /// state from the parent (CFS copies the parent's vruntime).
    fn task_fork(&mut self, m: &mut Machine, t: TaskId, parent: Option<TaskId>);

    /// A hint, before the launcher creates the workload's `n` tasks, with
    /// no `struct sched_class` counterpart: a class may size its per-task
    /// state once instead of growing it task by task (growth by doubling
    /// left up to half of it unused: issue 18's bytes per task). Default:
    /// nothing.
    fn reserve_tasks(&mut self, _n: usize) {}

    /// `enqueue_task`: `t` becomes runnable on `cpu` (`m.tasks[t].cpu == cpu`).
    /// Called on wakeup (WAKEUP), first start (INITIAL), arrival from another
    /// CPU (MIGRATED), after an attribute change (RESTORE) and on wakeup of a
    /// delay-dequeued task (DELAYED, same CPU). The task is not current,
    /// except with RESTORE for a running task. May call `m.resched`.
    fn enqueue_task(&mut self, m: &mut Machine, cpu: CpuId, t: TaskId, flags: EnqueueFlags);

    /// `dequeue_task`: `t` stops being runnable on `cpu`: it sleeps (SLEEP),
    /// exits (SPECIAL), moves away (MOVE) or changes attributes (SAVE). The
    /// task may be current. Returns false if the class keeps the task queued
    /// for now (EEVDF delayed dequeue); it must then call
    /// `m.note_delayed_dequeue_done(t)` when it finally removes it.
    fn dequeue_task(&mut self, m: &mut Machine, cpu: CpuId, t: TaskId, flags: DequeueFlags)
        -> bool;

    /// `yield_task`: the current task of `cpu` called `sched_yield()`. The
    /// engine reschedules the CPU afterwards.
    fn yield_task(&mut self, m: &mut Machine, cpu: CpuId);

    /// `wakeup_preempt`: `t`, of this class, was just enqueued on `cpu` whose
    /// current task is also of this class. Calls `m.resched(cpu)` to preempt.
    fn wakeup_preempt(&mut self, m: &mut Machine, cpu: CpuId, t: TaskId, flags: WakeFlags);

    /// `balance`: `cpu` is about to pick and this class may pull work from
    /// other CPUs first (the fair class's newly-idle balance, `pull_dl_task`,
    /// `pull_rt_task`). `prev` is the task that was current when the
    /// schedule began (None: the CPU was idle); a task of this class that
    /// blocked has already left the queue. Returns whether this class has a
    /// task to run on `cpu` (a class that pulled counts as having one: the
    /// engine sees the migration it requested). Pulls go through
    /// `m.request_migration`, which the engine carries out on return.
    ///
    /// Called as the kernel's `prev_balance` calls it (kernel/sched/core.c,
    /// 6.12 and 6.18): for the class of `prev` first, then for each class
    /// below it, stopping after the first class that returns true or below
    /// a class that has a runnable task here; for an idle `prev`, from the
    /// top of the stack (which gives the kernel's fast path: the fair class
    /// balances newly idle only when nothing at all is runnable). A class
    /// above `prev`'s is not called.
    fn balance(&mut self, m: &mut Machine, cpu: CpuId, prev: Option<TaskId>) -> bool;

    /// Whether `balance` must run before every pick on the CPU, even below
    /// a class that has a runnable task (engine departure from
    /// `prev_balance`, for classes whose pick relies on it: sched_ext
    /// dispatches in `balance_scx`, which 6.12 forces for an idle `prev`
    /// and 6.13 works around where it was skipped; a class that clears
    /// per-schedule state there, like `hrtick_clear` in `__schedule`).
    /// Default: false.
    fn balance_every_pick(&self) -> bool {
        false
    }

    /// `pick_task`: the task this class wants to run next on `cpu`, if any.
    /// The current task (if of this class and still queued) is a candidate.
    /// Must not change what is current; may complete delayed dequeues.
    fn pick_task(&mut self, m: &mut Machine, cpu: CpuId) -> Option<TaskId>;

    /// `put_prev_task`: `prev` (of this class) stops being current on `cpu`,
    /// in favour of `next` (None: the CPU goes idle). Called after
    /// `pick_task` chose a different task; `prev` may be queued or not.
    fn put_prev_task(&mut self, m: &mut Machine, cpu: CpuId, prev: TaskId, next: Option<TaskId>);

    /// `set_next_task`: `next` (of this class, queued) becomes current on `cpu`.
    fn set_next_task(&mut self, m: &mut Machine, cpu: CpuId, next: TaskId);

    /// `select_task_rq`: the CPU `t` should be enqueued on, for a wakeup
    /// (flags TTWU) or a new task (FORK). `prev_cpu` is where it last ran.
    /// Must return a CPU in the task's affinity mask.
    fn select_task_rq(
        &mut self,
        m: &mut Machine,
        t: TaskId,
        prev_cpu: CpuId,
        flags: WakeFlags,
        waker: Waker,
    ) -> CpuId;

    /// `migrate_task_rq`: sleeping or queued-but-dequeued `t` is moving from
    /// `m.tasks[t].cpu` to `new_cpu` (called before the CPU changes).
    fn migrate_task_rq(&mut self, m: &mut Machine, t: TaskId, new_cpu: CpuId);

    /// `task_tick`: the scheduler tick hit `cpu` while `curr` ran. May call
    /// `m.resched(cpu)`.
    fn task_tick(&mut self, m: &mut Machine, cpu: CpuId, curr: TaskId);

    /// Until when [`Self::task_tick`] of `curr` on `cpu` stays quiet if
    /// nothing else happens: a tick at any time before the returned one
    /// would change nothing but runtime accounting that the class's next
    /// [`Self::update_curr`] (at the next event on `cpu`) does to the same
    /// bit (no throttling, preemption, re-keying, slice or timer). No
    /// kernel counterpart: the engine leaves such ticks' work out when
    /// every part of them is quiet ("quiet ticks", engine/nohz.rs), so a
    /// time past a tick that would act changes results. Default: 0 (every
    /// tick runs). The engine keeps the answer until it next calls a hook
    /// of any class for `cpu` or for a task on `cpu` (or changes the CPU's
    /// run queue, timers or rate), so it may depend only on state that
    /// such calls change, not on other CPUs' (engine/nohz.rs
    /// `quiet_touch`; builds with debug assertions check every kept
    /// answer against a fresh one).
    fn task_tick_quiet_until(&self, _m: &Machine, _cpu: CpuId, _curr: TaskId) -> Ns {
        0
    }

    /// `reweight_task` / `prio_changed`: the weight, nice or slice of `t`
    /// changed while it was dequeued with SAVE (the engine re-enqueues it).
    fn reweight_task(&mut self, m: &mut Machine, t: TaskId);

    /// `task_dead`: `t` exited and was dequeued; forget it.
    fn task_dead(&mut self, m: &mut Machine, t: TaskId);

    /// `t`, of this class, stopped running on `cpu` at a context switch
    /// after `ran` ns on the CPU since it was switched in (called after
    /// `put_prev_task`, as the engine accounts the switch; sched_ext's
    /// `ops.stopping`). Not called when a running task only changes
    /// attributes. Default: nothing.
    fn task_stopped(&mut self, _m: &mut Machine, _cpu: CpuId, _t: TaskId, _ran: Ns) {}

    /// `set_load_weight`: the load weight a thread of process `process`
    /// with `policy` and nice weight `base` gets in this class (weight
    /// policies scale it by the process's thread count). Default: `base`.
    fn effective_weight(&self, _m: &Machine, _process: usize, _policy: Policy, base: u64) -> u64 {
        base
    }

    /// Deadline-server hooks (6.12's `dl_server`, class/dl/server.rs), for
    /// the class the stack names as a server's host (`ServerSpec::host`);
    /// the defaults say "no server". `server_update`: account what `cpu`
    /// ran since the last update and start or stop the server for
    /// `nr_served` runnable tasks of the served class (`dl_server_update`,
    /// `dl_server_start`, `dl_server_stop`). Returns the timer to arm and
    /// whether to reschedule; the engine carries them out.
    fn server_update(
        &mut self,
        _m: &mut Machine,
        _cpu: CpuId,
        _ran: ServerRan,
        _nr_served: u32,
    ) -> ServerActions {
        ServerActions::default()
    }

    /// The server timer of `cpu` fired (after `server_update`);
    /// `over_queued`: tasks of the classes the server runs ahead of wait
    /// on `cpu` (starvation persists).
    fn server_timer(&mut self, _m: &mut Machine, _cpu: CpuId, _over_queued: bool) -> ServerActions {
        ServerActions::default()
    }

    /// Whether `cpu`'s server is active (runs its class ahead of others).
    fn server_active(&self, _cpu: CpuId) -> bool {
        false
    }

    /// Whether, at a pick on `cpu`, the server's entity comes before this
    /// class's own tasks (active, the served class has runnable tasks, and
    /// its deadline is earlier than the first queued task's): the engine
    /// then picks from the served class first.
    fn server_runs_first(&self, _cpu: CpuId, _served_runnable: bool) -> bool {
        false
    }

    /// Whether `effective_weight` depends on the number of live threads of
    /// a process or of online CPUs, so the engine must recompute it for
    /// every live thread when a process gains or loses one or CPUs go on or
    /// offline. Default: false.
    fn weights_track_threads(&self) -> bool {
        false
    }

    /// Whether this class asks for preemption with `resched_curr_lazy`
    /// (6.13+: the fair class's tick and wakeup preemption), which under
    /// `preempt=lazy` sends no IPI to a remote CPU (engine/latency.rs).
    /// Default: false (`resched_curr`).
    fn lazy_resched(&self) -> bool {
        false
    }

    /// Whether the core this class runs under skips the clock update of
    /// the `__schedule` that follows a wakeup's reschedule request
    /// (RQCF_REQ_SKIP/ACT_SKIP, kernel/sched/core.c v6.18 `wakeup_preempt`),
    /// so that the wakeup path's costs are charged to the task switched in
    /// (`Machine::rq_clock`). Default: true, mainline's core (fair, RT,
    /// DEADLINE, sched_ext, and classes patched into it). Whole-core
    /// replacements modelled with one plain clock per CPU say false.
    fn clock_update_skip(&self) -> bool {
        true
    }

    /// `update_curr`: bring the current task's runtime accounting up to
    /// `m.now` (called before the engine reads class state for reports).
    fn update_curr(&mut self, m: &mut Machine, cpu: CpuId);

    /// Periodic load balancing from the tick (`sched_balance_trigger` and
    /// the SCHED_SOFTIRQ handler). Not a `sched_class` member in the kernel,
    /// where only the fair class balances this way; here any class may.
    /// Called for a CPU whose tick is stopped by the NOHZ idle balancer
    /// (engine/nohz.rs), on an idle CPU's own tick with `nohz=0`.
    fn tick_balance(&mut self, m: &mut Machine, cpu: CpuId);

    /// Until when [`Self::tick_balance`] on `cpu` does nothing at all (no
    /// balancing due, no state touched) if nothing else happens; as
    /// [`Self::task_tick_quiet_until`], and kept by the engine the same
    /// way: it may depend only on `cpu`'s own state. Default: 0.
    fn tick_balance_quiet_until(&self, _m: &Machine, _cpu: CpuId) -> Ns {
        0
    }

    /// Whether [`Self::tick_balance`] passes, on every CPU, now change
    /// nothing but this class's own balancing bookkeeping of the CPU passed
    /// (when it is next due, its intervals): no task moved, no signal or
    /// clock brought up to date, no resched, timer, draw, cost or trace
    /// record, nothing that the engine, another class or the metrics read,
    /// and passes of different CPUs commute. While it holds, ticks whose
    /// only work is such a pass are quiet: the engine runs the pass itself,
    /// at the tick's time, without the rest of the tick
    /// (engine/private_balance.rs), and [`Self::tick_balance_quiet_until`]
    /// says when the next one is due. Unlike the quiet horizons it may
    /// depend on every CPU's state: the engine asks again after every
    /// handled event. Default: false. The fair class: while no CPU holds
    /// fair load or utilisation, every pass ends balanced with nothing to
    /// pull.
    fn tick_balance_private(&self, _m: &Machine) -> bool {
        false
    }

    /// Whether [`Self::tick_balance_private`] can ever answer true in this
    /// run (asked once, when the simulator is built, so that the engine
    /// asks only such classes after each event). Default: false.
    fn tick_balance_may_be_private(&self) -> bool {
        false
    }

    /// A digest of this class's balancing bookkeeping (per CPU: when it is
    /// next due, each domain's interval, last balance and failures), for
    /// tests that hold a shortcut to the full tick (tests/quiet_ticks.rs):
    /// state that the metrics may show only much later. Default: 0.
    fn balance_state_digest(&self) -> u64 {
        0
    }

    /// A hint, for speed alone (prefetch.rs): start loading what this
    /// class reads of task `t` when it wakes up (`select_task_rq`,
    /// `enqueue_task`), whichever class `t` is in. The engine calls it
    /// ahead of a wakeup it knows is coming (the next queued event, a batch
    /// of expired sleep timers), so that the task's misses overlap. It must
    /// change nothing. Default: nothing.
    fn prefetch_wakeup(&self, _t: TaskId) {}

    /// Runnable tasks of this class on `cpu`, the current one included
    /// (`rq->cfs.h_nr_queued`, `rq->rt.rt_nr_running`); read by the fair
    /// server.
    fn nr_runnable(&self, cpu: CpuId) -> u32;

    /// The set of online CPUs (`m.online`) changed (CPU hotplug). The fair
    /// class rebuilds its scheduling domains.
    fn cpus_changed(&mut self, _m: &mut Machine) {}

    /// A timer this class armed with `Machine::arm_timer` fired (the
    /// class's hrtimers: RT period timer, DEADLINE replenishment). `tag`
    /// is what the class passed; stale timers must be ignored by the class.
    /// May call `m.resched`.
    fn timer(&mut self, _m: &mut Machine, _cpu: CpuId, _tag: u64) {}

    /// Per-task debug values for reports (e.g. vruntime, lag), name → value.
    fn task_debug(&self, _t: TaskId) -> Vec<(&'static str, i64)> {
        vec![]
    }

    /// [`Self::task_debug`] appended to `out` (a traced run asks at every
    /// switch: a class may fill the caller's buffer instead of allocating).
    fn task_debug_into(&self, t: TaskId, out: &mut Vec<(&'static str, i64)>) {
        out.extend(self.task_debug(t));
    }

    /// Check the class's internal invariants (for tests): Err describes
    /// the first violation.
    fn check_invariants(&self, _m: &Machine) -> Result<(), String> {
        Ok(())
    }
}
