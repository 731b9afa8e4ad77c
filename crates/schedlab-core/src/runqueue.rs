//! The class-independent part of a CPU's run queue (`struct rq`): what runs
//! now, how many tasks are runnable, and the bookkeeping the engine needs.

use crate::clock::Ns;
use crate::task::TaskId;

/// Per-CPU engine state.
#[derive(Debug, Clone, Default)]
pub struct Rq {
    /// Current task; `None` = the idle task.
    pub curr: Option<TaskId>,
    /// Runnable tasks on this CPU including current, excluding delayed ones
    /// (`rq->nr_running`).
    pub nr_running: u32,
    /// `TIF_NEED_RESCHED` on the current task.
    pub need_resched: bool,
    /// A reschedule granted to a wakeup is on its way (the wakeup path's
    /// costs defer it, engine/latency.rs): in the kernel `need_resched` is
    /// already set, so tests of it (`task_woken_dl`, `task_woken_rt`) read
    /// [`crate::machine::Machine::resched_pending`].
    pub resched_deferred: bool,
    /// When the current task (or idle) started running, by the run
    /// queue's clock: its CPU time counts from here (`exec_start`), which
    /// after a skipped clock update is earlier than the switch.
    pub curr_since: Ns,
    /// `RQCF_REQ_SKIP`: a wakeup asked this CPU to reschedule, and the
    /// kernel skips the clock update of the `__schedule` that follows
    /// (`wakeup_preempt`, kernel/sched/core.c v6.18: "we can save a
    /// useless back to back clock update"). The value is the run queue's
    /// clock at its last update (the wakeup's, or a later tick's or
    /// enqueue's: `Machine::touch_rq_clock`).
    pub clock_skip_req: Option<Ns>,
    /// When the current execution segment ends (kept here, not in the
    /// event heap, so preemptions leave no stale events behind).
    pub seg_end: Option<Ns>,
    /// Start of the current execution segment (after switch costs).
    pub seg_start: Ns,
    /// Busy time so far.
    pub busy_ns: Ns,
    /// Context switches (`rq->nr_switches`).
    pub nr_switches: u64,
    /// Switches from one task straight to another (idle not involved).
    pub nr_task_switches: u64,
    /// Policy overhead to charge before the next task progresses.
    pub pending_overhead: u64,
    /// When the CPU last went idle (`rq->idle_stamp`), if idle.
    pub idle_stamp: Option<Ns>,
    /// Running average of idle period length (`rq->avg_idle`).
    pub avg_idle: Ns,
    /// Pending "push the current task to this CPU" (active balance).
    pub active_balance_to: Option<usize>,
    /// The task the pending active balance moves when it is not the
    /// current one: the stopper preempts the current task (of any class)
    /// and moves this queued task (`detach_one_task`); None: it moves the
    /// current task.
    pub active_balance_task: Option<usize>,
    /// Current core frequency, kHz (set by the governor, engine/governor.rs).
    pub freq_khz: u64,
    /// Time spent at each frequency level, for reports: (kHz, ns).
    pub freq_time: Vec<(u64, Ns)>,
    /// When `freq_khz` was last set.
    pub freq_since: Ns,
    /// `rq->avg_rt` + `rq->avg_dl` as one signal: PELT utilisation of the
    /// time this CPU ran a task of kernel priority below `MAX_RT_PRIO`
    /// (SCHED_FIFO, SCHED_RR, SCHED_DEADLINE), which the fair class takes
    /// off the CPU's capacity (`scale_rt_capacity`, kernel/sched/fair.c
    /// v6.18). Brought up to date at every switch (`Machine::note_switch`);
    /// read with `Machine::rt_dl_util`.
    pub avg_rt_dl: crate::pelt::Pelt,
    /// `distribute_cpu_mask_prev` (lib/cpumask.c): the CPU that
    /// `cpumask_any_and_distribute` last returned when run on this CPU
    /// (class/mod.rs `any_and_distribute`); 0 at boot, as the kernel's.
    pub distribute_prev: crate::cpuset::CpuId,
}

/// `MAX_RT_PRIO`: kernel priorities below it are RT and DEADLINE tasks'.
pub const MAX_RT_PRIO: i32 = 100;
