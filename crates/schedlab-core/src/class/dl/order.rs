//! The deadline-ordering hook: how the deadline class orders its jobs.
//!
//! [`Dl`] owns the CBS (budgets, deadlines, throttling), the per-CPU trees,
//! push/pull and admission; a [`DlOrder`] decides only which job a CPU
//! runs: the tree key of a job, and what happens at the points where a
//! policy may switch (activation, wakeup, pick, put_prev, tick). Every hook
//! has the kernel's EDF behaviour as its default, so the kernel's
//! SCHED_DEADLINE is [`Edf`], an order that overrides nothing. Research
//! orders live in `crate::policy` (llf.rs, illf.rs), one file each.
//!
//! Hooks see the class through a [`DlCtx`]: the run queue of one CPU, in
//! key order, plus the few actions an order may take (re-key a job, force
//! the next pick, ask for a reschedule, charge the running job).

use super::Dl;
use crate::clock::Ns;
use crate::cpuset::CpuId;
use crate::machine::Machine;
use crate::task::TaskId;
use std::fmt::Debug;

/// How the deadline class orders jobs, hook by hook (in the manner of the
/// kernel's `struct sched_class`). Hooks take `&self`: an order keeps no
/// per-job state; what it needs per job is the class's (deadline, remaining
/// runtime, tree key), read through [`DlCtx`].
pub trait DlOrder: Debug {
    /// Tree key of a job with absolute `deadline` and remaining CBS budget
    /// `runtime` (negative: overrun). Called whenever a job is inserted in
    /// a tree or re-keyed, and by `select_task_rq` for the key a waking job
    /// will have (with the renewed `now + D` and full budget when the CBS
    /// rule renews it). Smaller runs first; ties go to the earlier insertion.
    /// Must be a pure function of its arguments. Default: the deadline (EDF).
    fn key(&self, deadline: Ns, runtime: i64) -> Ns {
        let _ = runtime;
        deadline
    }

    /// Whether `select_task_rq` places a waking job by the key it will have
    /// once the CBS rule has run (renewed `now + D`, full budget), and a new
    /// job at its fork, rather than as the kernel does: by the key the task
    /// has now (at a wakeup after its deadline passed, the old one, so it
    /// stays and task_woken's push moves it), and a new task not at all
    /// (`select_task_rq_dl`: `!(flags & WF_TTWU)`). Default: false (the
    /// kernel's). Orders whose key is a laxity return true: a passed job's
    /// laxity says nothing of the next one.
    fn select_with_renewed_key(&self) -> bool {
        false
    }

    /// Whether ties of `key` go to the job scheduled least recently (switched
    /// in or out longest ago; never-run jobs first, then by task id) rather
    /// than to the earlier-queued one. Default: false (the kernel's rb-tree
    /// insertion order).
    fn lru_ties(&self) -> bool {
        false
    }

    /// Whether every queued job's tree key always equals `key(deadline,
    /// runtime)`. The class checks it in `check_invariants` when true.
    /// Orders whose key depends on the runtime and that re-key only at some
    /// points (the running job's budget shrinks between them) return false.
    /// Default: true (the deadline changes only while a job is out of the
    /// tree).
    fn exact_keys(&self) -> bool {
        true
    }

    /// A job is about to be inserted on `ctx.cpu()` as an activation (a
    /// wakeup, a first start, or a release by CBS replenishment while it
    /// waits), before it enters the tree. May charge and re-key the running
    /// job ([`DlCtx::update_curr`], [`DlCtx::rekey`]), which then ranks
    /// before the new job on a tie. Default: nothing.
    fn before_activate(&self, ctx: &mut DlCtx) {
        let _ = ctx;
    }

    /// Job `t` was just inserted on `ctx.cpu()` as an activation. May force
    /// the next pick and reschedule. Returns true when the job is to run
    /// here (the class then skips `task_woken_dl`'s push of waiting jobs to
    /// other CPUs). Default: false (the class pushes what will not run here).
    fn activate(&self, ctx: &mut DlCtx, t: TaskId) -> bool {
        let _ = (ctx, t);
        false
    }

    /// `wakeup_preempt`: queued job `t` was enqueued on `ctx.cpu()` while a
    /// DL task runs there ([`DlCtx::running`]). Returns true to preempt it
    /// (the class calls `resched`). Changes nothing. Default: preempt when
    /// `t`'s tree key is strictly smaller than the running task's
    /// (`dl_entity_preempt`).
    fn wakeup_preempt(&self, ctx: &DlCtx, t: TaskId) -> bool {
        ctx.running()
            .is_some_and(|c| ctx.queued(t) && ctx.tree_key(t) < ctx.tree_key(c))
    }

    /// `pick_task`: the job to run next on `ctx.cpu()`, among the queued
    /// ones ([`DlCtx::queue`], the running job included while queued).
    /// Called after a forced pick ([`DlCtx::force`]) has been honoured, so
    /// only when none is pending. Changes nothing. Default: the leftmost.
    fn pick_task(&self, ctx: &DlCtx) -> Option<TaskId> {
        ctx.first()
    }

    /// `put_prev_task`: `prev` stops running on `ctx.cpu()`; its runtime has
    /// just been charged and it may still be queued. May re-key it. Default:
    /// nothing.
    fn put_prev_task(&self, ctx: &mut DlCtx, prev: TaskId) {
        let _ = (ctx, prev);
    }

    /// `task_tick`: the tick hit `ctx.cpu()` while queued job `curr` ran;
    /// its runtime has just been charged (and it was not throttled). May
    /// re-key, force the next pick and reschedule. Default: nothing (EDF
    /// keys do not change while a job runs; throttling reschedules in the
    /// class).
    fn task_tick(&self, ctx: &mut DlCtx, curr: TaskId) {
        let _ = (ctx, curr);
    }

    /// Whether [`Self::task_tick`] does nothing, whatever the state (lets
    /// the class call a tick quiet: `SchedClass::task_tick_quiet_until`). An
    /// ordering that overrides `task_tick` keeps the default. Default:
    /// false.
    fn task_tick_is_noop(&self) -> bool {
        false
    }
}

/// Earliest deadline first: the kernel's SCHED_DEADLINE ordering, every
/// hook at its default.
#[derive(Debug, Clone, Copy, Default)]
pub struct Edf;

impl DlOrder for Edf {
    fn task_tick_is_noop(&self) -> bool {
        true
    }
}

/// The deadline class's run queue of one CPU, as a [`DlOrder`] hook sees it.
pub struct DlCtx<'a> {
    dl: &'a mut Dl,
    m: &'a mut Machine,
    cpu: CpuId,
}

impl<'a> DlCtx<'a> {
    pub(super) fn new(dl: &'a mut Dl, m: &'a mut Machine, cpu: CpuId) -> Self {
        DlCtx { dl, m, cpu }
    }

    /// The CPU whose run queue this is.
    pub fn cpu(&self) -> CpuId {
        self.cpu
    }

    /// Simulated time.
    pub fn now(&self) -> Ns {
        self.m.now
    }

    /// Number of CPUs.
    pub fn nr_cpus(&self) -> usize {
        self.m.nr_cpus()
    }

    /// The DL job the class runs on this CPU (set between `set_next_task`
    /// and `put_prev_task`).
    pub fn curr(&self) -> Option<TaskId> {
        self.dl.curr[self.cpu]
    }

    /// The DL job the class runs on `cpu`.
    pub fn curr_on(&self, cpu: CpuId) -> Option<TaskId> {
        self.dl.curr[cpu]
    }

    /// The task current on this CPU's run queue (any class).
    pub fn running(&self) -> Option<TaskId> {
        self.m.rqs[self.cpu].curr
    }

    /// Whether `t` is in a tree (queued and not throttled).
    pub fn queued(&self, t: TaskId) -> bool {
        self.dl.ent[t].in_tree
    }

    /// `t`'s tree key and insertion sequence (the order of the tree; valid
    /// while queued, the last one otherwise).
    pub fn tree_key(&self, t: TaskId) -> (Ns, u64) {
        self.dl.ent[t].key
    }

    /// `t`'s key computed now from its deadline and remaining runtime (may
    /// differ from its tree key until it is re-keyed).
    pub fn key(&self, t: TaskId) -> Ns {
        self.dl.key_of(t)
    }

    /// Laxity S = key − now of `t` under a latest-start-time key d − R
    /// (negative: the job can no longer make it).
    pub fn laxity(&self, t: TaskId) -> i64 {
        self.key(t) as i64 - self.now() as i64
    }

    /// Remaining runtime R of `t` (its CBS budget, at least 0).
    pub fn remaining(&self, t: TaskId) -> i64 {
        self.dl.ent[t].runtime.max(0)
    }

    /// `t`'s absolute deadline.
    pub fn deadline(&self, t: TaskId) -> Ns {
        self.dl.ent[t].deadline
    }

    /// The queued jobs of this CPU in tree order (smallest key first).
    pub fn queue(&self) -> impl Iterator<Item = TaskId> + '_ {
        self.dl.tree[self.cpu].iter().map(|k| k.2)
    }

    /// The leftmost queued job of this CPU.
    pub fn first(&self) -> Option<TaskId> {
        self.dl.tree[self.cpu].first().map(|k| k.2)
    }

    /// The leftmost waiting (queued, not running) job of `src` that may run
    /// on this CPU: what a pull from `src` would take.
    pub fn pushable(&self, src: CpuId) -> Option<TaskId> {
        self.dl.pushable(self.m, src, Some(self.cpu))
    }

    /// The job the next pick on this CPU must return, if still pending.
    pub fn forced(&self) -> Option<TaskId> {
        self.dl.forced[self.cpu]
    }

    /// Make the next pick on this CPU return `t` (if `t` is still queued
    /// here then); cleared when a job is set to run. Does not reschedule.
    pub fn force(&mut self, t: TaskId) {
        self.dl.forced[self.cpu] = Some(t);
    }

    /// Re-insert queued job `t` of this CPU under its current key (a no-op
    /// if unchanged or not queued); it then ranks last among equal keys.
    pub fn rekey(&mut self, t: TaskId) {
        self.dl.rekey(self.cpu, t);
    }

    /// Charge the running job's time up to now (`update_curr_dl`; may
    /// throttle it, taking it out of the tree).
    pub fn update_curr(&mut self) {
        self.dl.account(self.m, self.cpu);
    }

    /// Ask for a reschedule of this CPU.
    pub fn resched(&mut self) {
        self.m.resched(self.cpu);
    }
}
