//! scx_bmq: Project C's BMQ (v6.0-r0, the version seed 002 ran) recast as
//! a sched_ext policy, so that the same algorithm runs in the simulator and,
//! as `scx/scx_bmq/scx_bmq.bpf.c`, in a real kernel (issue 19). Rules from
//! policy/bmq.rs (shootout.md §2.3; linux-tkg `0009-prjc_v6.0-r0.patch`,
//! bmq.h), mapped onto DSQs and kfuncs that exist in Linux 6.12:
//!
//! * One user DSQ per priority level: a task's level is
//!   `50 + (127 + nice + boost) / 2` (100..=126; 113 at nice 0), DSQ id =
//!   level; SCHED_IDLE tasks use level 127, below every other. Lower runs
//!   first, FIFO within a level: `dispatch` moves the head of the first
//!   non-empty level to the local DSQ.
//! * `boost` ∈ [−7, +7] (`MAX_PRIORITY_ADJ`): a task that used up its
//!   4 << 20 ns slice is deboosted (+1), seen in `ops.tick` when the slice
//!   reaches 0 (BMQ's `time_slice_expired` runs from the tick); a task that
//!   blocks less than `slice >> (8 − boost)` ns after it started running is
//!   boosted (−1, floor −7 for SCHED_NORMAL, 0 for SCHED_BATCH/IDLE:
//!   `sched_task_deactivate`); a wakeup after more than one slice asleep
//!   boosts once more (`sched_task_ttwu`); a forked task starts at +7
//!   (`sched_task_fork`), one present when the scheduler loads at 0.
//! * Strict priority at slice expiry, which sched_ext does not give by
//!   itself: `ops.dispatch` runs *before* an expired `prev` is enqueued
//!   again (balance_one, ext.c v6.12), so it would always hand the CPU to a
//!   waiting task. Instead `dispatch` keeps `prev` (refilling its slice:
//!   balance_one then sets `SCX_RQ_BAL_KEEP`) when no level above or equal
//!   to its own holds a task, as BMQ's requeue to the tail of its level
//!   would.
//! * A task keeps what is left of its slice across a sleep; only a used-up
//!   slice is refilled (Project C's `time_slice` is per task).
//!
//! Departures from BMQ (also in docs/model.md): no wakeup preemption (BMQ
//! preempts a running task of a lower level at wakeup; here the woken task
//! waits for an idle CPU or the end of a slice, at most 4 ms); placement is
//! `scx_bpf_select_cpu_dfl` (idle CPU near `prev_cpu`) instead of BMQ's
//! `select_task_rq` and pull-on-idle; SCHED_FIFO/RR and DEADLINE stay in
//! the kernel's own classes (sched_ext takes only SCHED_NORMAL, BATCH and
//! IDLE), where Project C would queue them in its bitmap too. Yield is the
//! kernel's default (slice to 0), not BMQ's boost +7.

use crate::class::ext::{
    switch_flags, Ctx, ExtOps, EXT_TUNABLES, PARTIAL_TUNABLE, SCX_DSQ_LOCAL, SCX_ENQ_WAKEUP,
};
use crate::class::fair::tunables::EEVDF_TUNABLES;
use crate::cpuset::CpuId;
use crate::plugin::SchedulerDef;
use crate::task::TaskId;
use crate::tunable::{Tunable, TunableSet};
use crate::workload::Policy;

/// `sched_timeslice_ns` (4 << 20 ns).
pub const SLICE_NS: u64 = 4 << 20;
/// `MAX_PRIORITY_ADJ` of v6.0.
pub const MAX_ADJ: i32 = 7;
/// DSQ id of the highest level (`50 + (127 − 20 − 7) / 2`).
pub const FIRST_LEVEL: u64 = 100;
/// DSQ id of SCHED_IDLE tasks, the lowest level.
pub const IDLE_LEVEL: u64 = 127;

/// Per-task state (BPF task-local storage `struct task_ctx`).
#[derive(Debug, Clone, Copy, Default)]
pub struct BmqTask {
    /// `boost_prio`.
    pub boost: i32,
    /// When it last started running (`rq->last_ts_switch`).
    pub last_ran: u64,
    /// When it last stopped running.
    pub last_stopped: u64,
}

/// The policy (`bmq_ops`).
#[derive(Debug, Clone, Default)]
pub struct ScxBmq {
    /// Only SCHED_EXT tasks (`SCX_OPS_SWITCH_PARTIAL`).
    pub partial: bool,
}

/// The level (DSQ id) of a task with `nice`, `boost` and `policy`.
pub fn level(nice: i32, boost: i32, policy: Policy) -> u64 {
    if policy == Policy::Idle {
        return IDLE_LEVEL;
    }
    (50 + (127 + nice.clamp(-20, 19) + boost) / 2) as u64
}

/// `boost_task`: one step up, not past the policy's floor.
fn boost(t: &mut BmqTask, policy: Policy) {
    let floor = if policy == Policy::Other { -MAX_ADJ } else { 0 };
    if t.boost > floor {
        t.boost -= 1;
    }
}

impl ScxBmq {
    fn level_of(ctx: &mut Ctx<'_, BmqTask>, p: TaskId) -> u64 {
        let (nice, policy) = (ctx.task_nice(p), ctx.task_policy(p));
        level(nice, ctx.task_data(p).boost, policy)
    }

    /// The slice to insert `p` with: what is left, or a full one.
    fn slice_of(ctx: &Ctx<'_, BmqTask>, p: TaskId) -> u64 {
        if ctx.task_slice(p) == 0 {
            SLICE_NS
        } else {
            0 // keep p->scx.slice
        }
    }

    /// The highest non-empty level.
    fn best_level(ctx: &Ctx<'_, BmqTask>) -> Option<u64> {
        (FIRST_LEVEL..=IDLE_LEVEL).find(|&l| ctx.dsq_nr_queued(l).unwrap_or(0) > 0)
    }
}

impl ExtOps for ScxBmq {
    type Task = BmqTask;

    fn name(&self) -> &str {
        "bmq"
    }

    fn flags(&self) -> u64 {
        switch_flags(self.partial)
    }

    fn select_cpu(
        &mut self,
        ctx: &mut Ctx<'_, BmqTask>,
        p: TaskId,
        prev_cpu: CpuId,
        wake_flags: u64,
    ) -> CpuId {
        let (cpu, is_idle) = ctx.select_cpu_dfl(p, prev_cpu, wake_flags);
        if is_idle {
            let slice = Self::slice_of(ctx, p);
            ctx.dsq_insert(p, SCX_DSQ_LOCAL, slice, 0);
        }
        cpu
    }

    fn runnable(&mut self, ctx: &mut Ctx<'_, BmqTask>, p: TaskId, enq_flags: u64) {
        if enq_flags & SCX_ENQ_WAKEUP != 0 {
            let (now, policy) = (ctx.now(), ctx.task_policy(p));
            let t = ctx.task_data(p);
            if now.saturating_sub(t.last_stopped) > SLICE_NS {
                boost(t, policy);
            }
        }
    }

    fn enqueue(&mut self, ctx: &mut Ctx<'_, BmqTask>, p: TaskId, enq_flags: u64) {
        let (dsq, slice) = (Self::level_of(ctx, p), Self::slice_of(ctx, p));
        ctx.dsq_insert(p, dsq, slice, enq_flags);
    }

    fn dispatch(&mut self, ctx: &mut Ctx<'_, BmqTask>, _cpu: CpuId, prev: Option<TaskId>) {
        let best = Self::best_level(ctx);
        if let Some(prev) = prev.filter(|&p| ctx.task_queued(p)) {
            // Its slice is used up (else the kernel kept it without asking).
            if best.is_none_or(|b| Self::level_of(ctx, prev) < b) {
                ctx.set_slice(prev, SLICE_NS);
                return;
            }
        }
        if let Some(b) = best {
            ctx.dsq_move_to_local(b);
        }
    }

    fn tick(&mut self, ctx: &mut Ctx<'_, BmqTask>, p: TaskId) {
        if ctx.task_slice(p) == 0 {
            let t = ctx.task_data(p);
            t.boost = (t.boost + 1).min(MAX_ADJ);
        }
    }

    fn running(&mut self, ctx: &mut Ctx<'_, BmqTask>, p: TaskId) {
        let now = ctx.now();
        ctx.task_data(p).last_ran = now;
    }

    fn stopping(&mut self, ctx: &mut Ctx<'_, BmqTask>, p: TaskId, runnable: bool) {
        let (now, policy) = (ctx.now(), ctx.task_policy(p));
        let t = ctx.task_data(p);
        t.last_stopped = now;
        if !runnable {
            // boost_threshold: slice >> (15 − MAX_PRIORITY_ADJ − boost_prio).
            let shift = (15 - MAX_ADJ - t.boost).clamp(0, 63) as u32;
            if now.saturating_sub(t.last_ran) < SLICE_NS >> shift {
                boost(t, policy);
            }
        }
    }

    fn init_task(
        &mut self,
        ctx: &mut Ctx<'_, BmqTask>,
        p: TaskId,
        fork: bool,
    ) -> Result<(), String> {
        let now = ctx.now();
        let t = ctx.task_data(p);
        t.boost = if fork { MAX_ADJ } else { 0 };
        t.last_stopped = now;
        Ok(())
    }

    fn enable(&mut self, ctx: &mut Ctx<'_, BmqTask>, p: TaskId) {
        ctx.set_slice(p, SLICE_NS);
    }

    fn init(&mut self, ctx: &mut Ctx<'_, BmqTask>) -> Result<(), String> {
        for l in FIRST_LEVEL..=IDLE_LEVEL {
            if !ctx.create_dsq(l) {
                return Err(format!("create_dsq({l}) failed"));
            }
        }
        Ok(())
    }
}

const N: usize = EEVDF_TUNABLES.len() + EXT_TUNABLES.len() + PARTIAL_TUNABLE.len();

/// Every tunable: the 6.12 fair class's, the ext class's and scx_bmq's.
static TUNABLES: [Tunable; N] =
    crate::tunable::concat(&[EEVDF_TUNABLES, EXT_TUNABLES, PARTIAL_TUNABLE]);

/// The registry entry.
pub const DEF: SchedulerDef = SchedulerDef {
    name: "scx_bmq",
    description: "BMQ v6.0-r0 as a sched_ext policy (runs in a 6.12 kernel as scx/scx_bmq): one DSQ per priority level, boost/deboost of ±7, strict priority, 4 ms slices, no wakeup preemption",
    source: "policy/bmq.rs rules (shootout.md §2.3; linux-tkg 0009-prjc_v6.0-r0.patch bmq.h) on kernel/sched/ext.c v6.12; scx/scx_bmq/scx_bmq.bpf.c",
    version: "6.12",
    classes: &["dl", "rt", "fair", "ext"],
    tunables: &TUNABLES,
    fair_policies: true,
    dl_orders: true,
    build: |ctx| crate::registry::sched_ext(ctx, ScxBmq::from_tunables(ctx.tunables)),
};

impl ScxBmq {
    /// From the run's tunables (`partial`).
    pub fn from_tunables(t: &TunableSet) -> Self {
        ScxBmq {
            partial: t.get("partial").unwrap_or(0) != 0,
        }
    }
}
