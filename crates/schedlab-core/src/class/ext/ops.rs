//! The policy interface: [`ExtOps`], one method per member of the kernel's
//! `struct sched_ext_ops` (kernel/sched/ext.c in v6.12, moved to
//! kernel/sched/ext_internal.h later), with the kernel's constants.
//!
//! A policy is a value implementing [`ExtOps`]; the ext class
//! ([`super::ExtClass`]) calls its hooks at the points the kernel calls the
//! BPF scheduler's ops and hands each hook a [`Ctx`], the kfunc vocabulary
//! (`scx_bpf_*`). Every hook has a default that does what the kernel does
//! when a BPF scheduler leaves that op out, so `impl ExtOps for X {}` plus
//! a `name()` is a working (global FIFO) scheduler.
//!
//! Hook arguments are plain values (task ids, CPU ids, `u64` flags, `bool`)
//! so that a bridge (PyO3) can forward them to another language; the
//! numeric flag values are the kernel's.

use super::ctx::Ctx;
use crate::cpuset::{CpuId, CpuSet};
use crate::task::TaskId;

/// Default slice, ns (`SCX_SLICE_DFL`, 20 ms).
pub const SCX_SLICE_DFL: u64 = 20_000_000;
/// Infinite slice (`SCX_SLICE_INF`): the tick never expires it.
pub const SCX_SLICE_INF: u64 = u64::MAX;
/// Default watchdog timeout, ms (`SCX_WATCHDOG_MAX_TIMEOUT`, 30 s, also the
/// value used when `ops.timeout_ms` is 0).
pub const SCX_WATCHDOG_MAX_TIMEOUT_MS: u32 = 30_000;
/// Default `ops.dispatch_max_batch` (`SCX_DSP_DFL_MAX_BATCH`).
pub const SCX_DSP_DFL_MAX_BATCH: u32 = 32;
/// Rounds of `ops.dispatch` without progress before balance gives up
/// (`SCX_DSP_MAX_LOOPS`).
pub const SCX_DSP_MAX_LOOPS: u32 = 32;

// --- DSQ ids (`enum scx_dsq_id_flags`) -------------------------------------

/// Built-in DSQ flag (`SCX_DSQ_FLAG_BUILTIN`, bit 63).
pub const SCX_DSQ_FLAG_BUILTIN: u64 = 1 << 63;
/// "Local DSQ of CPU n" flag (`SCX_DSQ_FLAG_LOCAL_ON`, bit 62).
pub const SCX_DSQ_FLAG_LOCAL_ON: u64 = 1 << 62;
/// No DSQ (`SCX_DSQ_INVALID`).
pub const SCX_DSQ_INVALID: u64 = SCX_DSQ_FLAG_BUILTIN;
/// The global FIFO DSQ (`SCX_DSQ_GLOBAL`).
pub const SCX_DSQ_GLOBAL: u64 = SCX_DSQ_FLAG_BUILTIN | 1;
/// The local DSQ of the CPU the op runs on, or, from `ops.enqueue` and
/// `ops.select_cpu`, of the task's CPU (`SCX_DSQ_LOCAL`).
pub const SCX_DSQ_LOCAL: u64 = SCX_DSQ_FLAG_BUILTIN | 2;
/// `SCX_DSQ_LOCAL_ON | cpu`: the local DSQ of `cpu`.
pub const SCX_DSQ_LOCAL_ON: u64 = SCX_DSQ_FLAG_BUILTIN | SCX_DSQ_FLAG_LOCAL_ON;
/// CPU bits of a `SCX_DSQ_LOCAL_ON` id (`SCX_DSQ_LOCAL_CPU_MASK`).
pub const SCX_DSQ_LOCAL_CPU_MASK: u64 = 0xffff_ffff;

// --- enqueue flags (`enum scx_enq_flags`) ----------------------------------

/// The task woke up (`SCX_ENQ_WAKEUP` = `ENQUEUE_WAKEUP`).
pub const SCX_ENQ_WAKEUP: u64 = 1;
/// Insert at the head of a FIFO DSQ (`SCX_ENQ_HEAD`).
pub const SCX_ENQ_HEAD: u64 = 1 << 16;
/// Insert at the head of the target local DSQ and preempt its CPU's
/// current ext task (`SCX_ENQ_PREEMPT`).
pub const SCX_ENQ_PREEMPT: u64 = 1 << 32;
/// Re-enqueue of a task the kernel took back from a local DSQ
/// (`SCX_ENQ_REENQ`).
pub const SCX_ENQ_REENQ: u64 = 1 << 40;
/// The task is the last runnable one on its CPU, enqueued only because
/// `SCX_OPS_ENQ_LAST` is set (`SCX_ENQ_LAST`).
pub const SCX_ENQ_LAST: u64 = 1 << 41;

// --- dequeue flags (`enum scx_deq_flags`) ----------------------------------

/// The task goes to sleep (`SCX_DEQ_SLEEP` = `DEQUEUE_SLEEP`).
pub const SCX_DEQ_SLEEP: u64 = 1;
/// Core scheduling picked the task straight from the policy
/// (`SCX_DEQ_CORE_SCHED_EXEC`); never raised here (no core scheduling).
pub const SCX_DEQ_CORE_SCHED_EXEC: u64 = 1 << 32;

// --- wake flags (`enum scx_wake_flags`) ------------------------------------

/// Wakeup of a new task (`SCX_WAKE_FORK` = `WF_FORK`).
pub const SCX_WAKE_FORK: u64 = 0x04;
/// A regular wakeup (`SCX_WAKE_TTWU` = `WF_TTWU`).
pub const SCX_WAKE_TTWU: u64 = 0x08;
/// The waker goes to sleep (`SCX_WAKE_SYNC` = `WF_SYNC`).
pub const SCX_WAKE_SYNC: u64 = 0x10;

// --- kick flags (`enum scx_kick_flags`) ------------------------------------

/// Only kick the CPU if it is idle (`SCX_KICK_IDLE`).
pub const SCX_KICK_IDLE: u64 = 1;
/// Preempt the CPU's current ext task: its slice becomes 0
/// (`SCX_KICK_PREEMPT`).
pub const SCX_KICK_PREEMPT: u64 = 2;
/// Wait for the kicked CPU to reschedule (`SCX_KICK_WAIT`); accepted and
/// equivalent to a plain kick here (kicks take effect at once).
pub const SCX_KICK_WAIT: u64 = 4;

// --- ops flags (`enum scx_ops_flags`) --------------------------------------

/// Keep the built-in idle tracking although `ops.update_idle` is
/// implemented (`SCX_OPS_KEEP_BUILTIN_IDLE`).
pub const SCX_OPS_KEEP_BUILTIN_IDLE: u64 = 1 << 0;
/// Call `ops.enqueue` with `SCX_ENQ_LAST` for the last runnable task of a
/// CPU instead of keeping it running (`SCX_OPS_ENQ_LAST`).
pub const SCX_OPS_ENQ_LAST: u64 = 1 << 1;
/// Exiting tasks go through `ops.enqueue` too (`SCX_OPS_ENQ_EXITING`);
/// accepted, no effect (tasks exit from the CPU they run on).
pub const SCX_OPS_ENQ_EXITING: u64 = 1 << 2;
/// Only `SCHED_EXT` tasks are switched to the policy; `SCHED_OTHER`,
/// `SCHED_BATCH` and `SCHED_IDLE` stay in the fair class
/// (`SCX_OPS_SWITCH_PARTIAL`).
pub const SCX_OPS_SWITCH_PARTIAL: u64 = 1 << 3;

/// How a policy ended (`enum scx_exit_kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitKind {
    /// The run ended with the policy loaded (`SCX_EXIT_UNREG`).
    Unreg,
    /// The policy asked to exit (`scx_bpf_exit`, `SCX_EXIT_UNREG_BPF`).
    UnregBpf,
    /// The policy called `scx_bpf_error` (`SCX_EXIT_ERROR_BPF`).
    ErrorBpf,
    /// The kernel caught the policy misbehaving (`SCX_EXIT_ERROR`).
    Error,
    /// The watchdog found a stalled task (`SCX_EXIT_ERROR_STALL`).
    ErrorStall,
}

impl ExitKind {
    /// Whether this exit is an error (the kernel's `kind >= SCX_EXIT_ERROR`).
    pub fn is_error(self) -> bool {
        matches!(
            self,
            ExitKind::ErrorBpf | ExitKind::Error | ExitKind::ErrorStall
        )
    }
}

/// What `ops.exit` is told (`struct scx_exit_info`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExitInfo {
    /// Why.
    pub kind: ExitKind,
    /// Exit code (`scx_bpf_exit`'s code; 0 otherwise).
    pub exit_code: i64,
    /// Short reason (`ei->reason`), e.g. "runnable task stall".
    pub reason: String,
    /// The full message (`ei->msg`).
    pub msg: String,
}

/// A scheduling policy for the ext class: the simulator's
/// `struct sched_ext_ops`.
///
/// Task lifecycle (Documentation/scheduler/sched-ext.rst, "Task
/// lifecycle"): `init_task` → `enable` → [`select_cpu` → `runnable` →
/// (`enqueue` → `dispatch`)* → `running` → `tick`* → `stopping`]* →
/// `quiescent` … → `disable` → `exit_task`. A task the policy received in
/// `enqueue` and did not insert into a DSQ is *in the policy's custody*
/// (the kernel's `SCX_OPSS_QUEUED`): it must later insert it from
/// `dispatch` (or the watchdog aborts the policy).
///
/// Every hook runs at [`Ctx::now`] and takes no simulated time. A hook
/// reports misbehaviour through [`Ctx::error`]; the class catches kernel-
/// detected errors itself (see the class's module documentation).
pub trait ExtOps {
    /// Per-task storage (BPF task-local storage): one value per task,
    /// created with `Default` before `init_task`, reachable from every hook
    /// through [`Ctx::task_data`].
    type Task: Default;

    /// `ops.name`: the scheduler's name, used in every error message
    /// (the kernel's `scx_simple` registers as "simple").
    fn name(&self) -> &str;

    /// `ops.flags`: `SCX_OPS_*` bits. Default 0: switch every fair task,
    /// built-in idle tracking only without `update_idle`.
    fn flags(&self) -> u64 {
        0
    }

    /// `ops.timeout_ms`: the watchdog aborts the policy when a runnable
    /// task has not run for this long. 0 (default) means the kernel's
    /// maximum, 30 000 ms (`SCX_WATCHDOG_MAX_TIMEOUT`); larger values are
    /// rejected at load time in the kernel and clamped here.
    fn timeout_ms(&self) -> u32 {
        0
    }

    /// `ops.dispatch_max_batch`: how many tasks one `ops.dispatch` call may
    /// insert (the size of the dispatch buffer). 0 (default) means
    /// `SCX_DSP_DFL_MAX_BATCH` (32); inserting more is an error.
    fn dispatch_max_batch(&self) -> u32 {
        0
    }

    /// `ops.select_cpu(p, prev_cpu, wake_flags)`: pick the CPU a waking
    /// (`SCX_WAKE_TTWU`) or new (`SCX_WAKE_FORK`) task `p` is enqueued on;
    /// `prev_cpu` is where it last ran. Called before `runnable`/`enqueue`
    /// and only as an optimisation hint: the returned CPU must be in `p`'s
    /// affinity (otherwise the engine falls back as `select_fallback_rq`
    /// does) and is not a commitment to run `p` there. The hook may insert
    /// `p` itself with [`Ctx::dsq_insert`] (direct dispatch, typically into
    /// `SCX_DSQ_LOCAL` of an idle CPU it found); `ops.enqueue` is then
    /// skipped. It may also kick CPUs. Returning a CPU that does not exist
    /// is an error.
    ///
    /// Default (no `ops.select_cpu`, `select_task_rq_scx`): the built-in
    /// [`Ctx::select_cpu_dfl`]; if it found an idle CPU, `p` is inserted
    /// into that CPU's local DSQ with `SCX_SLICE_DFL`.
    fn select_cpu(
        &mut self,
        ctx: &mut Ctx<'_, Self::Task>,
        p: TaskId,
        prev_cpu: CpuId,
        wake_flags: u64,
    ) -> CpuId {
        let (cpu, idle) = ctx.select_cpu_dfl(p, prev_cpu, wake_flags);
        if idle {
            ctx.dsq_insert(p, SCX_DSQ_LOCAL, SCX_SLICE_DFL, 0);
        }
        cpu
    }

    /// `ops.enqueue(p, enq_flags)`: runnable task `p` is handed to the
    /// policy (after `runnable` on a wakeup, or after `stopping` when it
    /// used its slice or was preempted). Not called when `select_cpu`
    /// direct-dispatched `p`. The hook either inserts `p` into a DSQ
    /// ([`Ctx::dsq_insert`], [`Ctx::dsq_insert_vtime`]) or keeps it in its
    /// custody to insert from `dispatch` later. Flags: `SCX_ENQ_WAKEUP`,
    /// `SCX_ENQ_HEAD` (a preempted task), `SCX_ENQ_LAST`.
    ///
    /// Default (no `ops.enqueue`, `do_enqueue_task`): insert into
    /// `SCX_DSQ_GLOBAL` with `SCX_SLICE_DFL`.
    fn enqueue(&mut self, ctx: &mut Ctx<'_, Self::Task>, p: TaskId, enq_flags: u64) {
        ctx.dsq_insert(p, SCX_DSQ_GLOBAL, SCX_SLICE_DFL, enq_flags);
    }

    /// `ops.dequeue(p, deq_flags)`: `p`, which is in the policy's custody
    /// (enqueued but not inserted), leaves the ext class's queues: its
    /// attributes change, it moves CPU, or it exits. The policy must forget
    /// it (a later insert of `p` is an error). Not called for tasks already
    /// in a DSQ or running. Default: nothing.
    fn dequeue(&mut self, _ctx: &mut Ctx<'_, Self::Task>, _p: TaskId, _deq_flags: u64) {}

    /// `ops.dispatch(cpu, prev)`: `cpu`'s local DSQ and the global DSQ are
    /// empty and the CPU needs work (`balance_one`). Insert tasks from the
    /// policy's custody ([`Ctx::dsq_insert`], at most `dispatch_max_batch`)
    /// or move a DSQ's first task to this CPU ([`Ctx::dsq_move_to_local`]).
    /// `prev` is the ext task that ran on `cpu` until now, if any; if it is
    /// still runnable and nothing is dispatched it keeps running (its slice
    /// refilled). Called again while it dispatches tasks without filling the
    /// local DSQ (up to `SCX_DSP_MAX_LOOPS` rounds). Default: nothing.
    fn dispatch(&mut self, _ctx: &mut Ctx<'_, Self::Task>, _cpu: CpuId, _prev: Option<TaskId>) {}

    /// `ops.tick(p)`: the scheduler tick hit a CPU running ext task `p`,
    /// after its slice was charged. Setting the slice to 0
    /// ([`Ctx::set_slice`]) makes the CPU reschedule. Default: nothing.
    fn tick(&mut self, _ctx: &mut Ctx<'_, Self::Task>, _p: TaskId) {}

    /// `ops.runnable(p, enq_flags)`: `p` became runnable (woke up, was
    /// created, or came back after an attribute change); called before
    /// `enqueue` (or before the direct dispatch chosen in `select_cpu`).
    /// Not called for migrations between CPUs. Default: nothing.
    fn runnable(&mut self, _ctx: &mut Ctx<'_, Self::Task>, _p: TaskId, _enq_flags: u64) {}

    /// `ops.running(p)`: `p` starts running on [`Ctx::this_cpu`]
    /// (`set_next_task_scx`). Not called when a CPU keeps running the same
    /// task. Default: nothing.
    fn running(&mut self, _ctx: &mut Ctx<'_, Self::Task>, _p: TaskId) {}

    /// `ops.stopping(p, runnable)`: `p` stops running (`put_prev_task_scx`,
    /// or `dequeue_task_scx` for a running task); `runnable` is false when
    /// it goes to sleep or exits. Its slice has been charged, so
    /// `SCX_SLICE_DFL - slice` is what it used of a default slice.
    /// Default: nothing.
    fn stopping(&mut self, _ctx: &mut Ctx<'_, Self::Task>, _p: TaskId, _runnable: bool) {}

    /// `ops.quiescent(p, deq_flags)`: `p` stops being runnable (sleep:
    /// `SCX_DEQ_SLEEP`; exit or attribute change: 0); pairs with
    /// `runnable`. Not called for migrations. Default: nothing.
    fn quiescent(&mut self, _ctx: &mut Ctx<'_, Self::Task>, _p: TaskId, _deq_flags: u64) {}

    /// `ops.yield(from, to)`: running task `from` called `sched_yield()`
    /// (`to` is None; `yield_to()` is not modelled). Returns whether `to`
    /// should be preferred (ignored here). The CPU reschedules afterwards.
    ///
    /// Default (`yield_task_scx`): `from`'s slice becomes 0, so it is
    /// re-enqueued unless nothing else is runnable.
    fn yield_(&mut self, ctx: &mut Ctx<'_, Self::Task>, from: TaskId, _to: Option<TaskId>) -> bool {
        ctx.set_slice(from, 0);
        false
    }

    /// `ops.core_sched_before(a, b)`: whether `a` should run before `b` on
    /// an SMT core under core scheduling. The simulator does not model core
    /// scheduling, so the class never calls it; it is here for policies
    /// ported whole. Default (`scx_prio_less`): the task that became
    /// runnable first goes first.
    fn core_sched_before(&mut self, ctx: &mut Ctx<'_, Self::Task>, a: TaskId, b: TaskId) -> bool {
        ctx.task_runnable_at(a) < ctx.task_runnable_at(b)
    }

    /// `ops.set_weight(p, weight)`: `p`'s weight (1..=10000, nice 0 = 100)
    /// changed, or was set when it joined the policy (after `enable`). The
    /// class has already updated [`Ctx::task_weight`]. Default: nothing.
    fn set_weight(&mut self, _ctx: &mut Ctx<'_, Self::Task>, _p: TaskId, _weight: u32) {}

    /// `ops.set_cpumask(p, cpumask)`: `p`'s affinity changed (also called
    /// once when it joins the policy). Default: nothing.
    fn set_cpumask(&mut self, _ctx: &mut Ctx<'_, Self::Task>, _p: TaskId, _cpumask: CpuSet) {}

    /// `ops.update_idle(cpu, idle)`: `cpu` enters (`idle`) or leaves idle.
    /// Implementing this turns the built-in idle tracking off (and with it
    /// `select_cpu_dfl`, `pick_idle_cpu`, `test_and_clear_cpu_idle`) unless
    /// `flags()` has `SCX_OPS_KEEP_BUILTIN_IDLE`; a policy that overrides it
    /// must say so with [`ExtOps::has_update_idle`]. Default: nothing.
    fn update_idle(&mut self, _ctx: &mut Ctx<'_, Self::Task>, _cpu: CpuId, _idle: bool) {}

    /// Whether this policy implements `update_idle` (the kernel tests
    /// whether the op is set; Rust cannot see that). Default false.
    fn has_update_idle(&self) -> bool {
        false
    }

    /// `ops.init_task(p, fork)`: `p` joins the policy, at creation (`fork`
    /// true) or when the policy loads. Set up [`Ctx::task_data`] here.
    /// Returning `Err` fails the task (and the policy: the simulator has no
    /// fork failure). Default: Ok.
    fn init_task(
        &mut self,
        _ctx: &mut Ctx<'_, Self::Task>,
        _p: TaskId,
        _fork: bool,
    ) -> Result<(), String> {
        Ok(())
    }

    /// `ops.exit_task(p, cancelled)`: `p` leaves the policy for good (it
    /// exited, or the policy unloads); after `disable`. Default: nothing.
    fn exit_task(&mut self, _ctx: &mut Ctx<'_, Self::Task>, _p: TaskId, _cancelled: bool) {}

    /// `ops.enable(p)`: `p` starts being scheduled by the policy (after
    /// `init_task`; its weight is already set). Default: nothing.
    fn enable(&mut self, _ctx: &mut Ctx<'_, Self::Task>, _p: TaskId) {}

    /// `ops.disable(p)`: `p` stops being scheduled by the policy (exit, or
    /// the policy unloads). Default: nothing.
    fn disable(&mut self, _ctx: &mut Ctx<'_, Self::Task>, _p: TaskId) {}

    /// `ops.cpu_online(cpu)`: `cpu` came online. Default (`handle_hotplug`):
    /// a policy without `cpu_online`/`cpu_offline` cannot follow hotplug,
    /// so the kernel exits it ("cpu N going online, exiting scheduler");
    /// the default calls [`Ctx::exit`] the same way.
    fn cpu_online(&mut self, ctx: &mut Ctx<'_, Self::Task>, cpu: CpuId) {
        ctx.exit(0, &format!("cpu {cpu} going online, exiting scheduler"));
    }

    /// `ops.cpu_offline(cpu)`: `cpu` goes offline. Default: exits the
    /// policy like [`ExtOps::cpu_online`].
    fn cpu_offline(&mut self, ctx: &mut Ctx<'_, Self::Task>, cpu: CpuId) {
        ctx.exit(0, &format!("cpu {cpu} going offline, exiting scheduler"));
    }

    /// `ops.init()`: the policy loads, before any task joins. Create DSQs
    /// ([`Ctx::create_dsq`]) and arm timers here. `Err` aborts the load.
    /// Default: Ok.
    fn init(&mut self, _ctx: &mut Ctx<'_, Self::Task>) -> Result<(), String> {
        Ok(())
    }

    /// `ops.exit(info)`: the policy unloads (error, exit request, or end of
    /// the run). Default: nothing.
    fn exit(&mut self, _ctx: &mut Ctx<'_, Self::Task>, _info: &ExitInfo) {}

    /// A policy timer armed with [`Ctx::timer_start`] fired (the BPF
    /// program's `bpf_timer` callback) on [`Ctx::this_cpu`]; `tag` is what
    /// the policy passed. Default: nothing.
    fn timer(&mut self, _ctx: &mut Ctx<'_, Self::Task>, _tag: u64) {}
}
