//! scx_pds: Project C's PDS (v6.0-r0, the version seed 002 ran) recast as
//! a sched_ext policy, so that the same algorithm runs in the simulator and,
//! as `scx/scx_pds/scx_pds.bpf.c`, in a real kernel (issue 19). Rules from
//! policy/pds.rs (shootout.md §2.4; linux-tkg `0009-prjc_v6.0-r0.patch`,
//! pds.h), mapped onto one vtime-ordered DSQ of Linux 6.12:
//!
//! * Time is counted in *edges* of 2^22 ns (4.19 ms: `sched_timeslice_shift`
//!   22). A task's virtual deadline is `edge + nice + 20`, set when it is
//!   created and renewed each time it uses up its 4 << 20 ns slice
//!   (`time_slice_expired`), never at wakeup: a sleeper keeps its old,
//!   early deadline and the rest of its slice.
//! * The DSQ is ordered by `max(deadline, edge − 24)` taken when the task
//!   is queued: PDS's level `deadline − edge + 24` clamped at 0, i.e. a
//!   deadline more than 24 edges past counts as 24 edges past. Equal keys
//!   are FIFO (the kernel's rbtree puts equal vtimes after existing ones,
//!   as PDS appends to a level's list).
//! * At slice expiry `ops.dispatch` runs before the expired `prev` is
//!   enqueued again (balance_one, ext.c v6.12), so `dispatch` renews
//!   `prev`'s deadline and keeps it running (refilled slice:
//!   `SCX_RQ_BAL_KEEP`) when its new key is earlier than the DSQ's first;
//!   otherwise it moves the first task to the local DSQ and `prev` is
//!   enqueued (and its deadline computed again at the same instant, which
//!   gives the same value unless an edge boundary falls in between).
//!
//! With CPU hogs the deadline offsets (15 edges at nice −5, 20 at 0, 25 at
//! 5) decide how often each one's renewed deadline is the earliest.
//!
//! Departures from PDS (also in docs/model.md): no wakeup preemption (PDS
//! preempts a running task with a later deadline); placement is
//! `scx_bpf_select_cpu_dfl`; migration does not clamp deadlines to
//! edge + 39 (`sanity_check`); SCHED_FIFO/RR/DEADLINE stay in the kernel's
//! classes; yield is the kernel's (slice to 0, so the deadline is renewed),
//! as PDS v6.0's yield type 1 does.

use crate::class::ext::{switch_flags, Ctx, ExtOps, EXT_TUNABLES, PARTIAL_TUNABLE, SCX_DSQ_LOCAL};
use crate::class::fair::tunables::EEVDF_TUNABLES;
use crate::cpuset::CpuId;
use crate::plugin::SchedulerDef;
use crate::task::TaskId;
use crate::tunable::{Tunable, TunableSet};

/// `sched_timeslice_ns` (4 << 20 ns).
pub const SLICE_NS: u64 = 4 << 20;
/// `sched_timeslice_shift`: an edge is 2^22 ns.
pub const EDGE_SHIFT: u32 = 22;
/// How far past its deadline a task still counts (`NORMAL_PRIO_NUM −
/// NICE_WIDTH`).
pub const PAST_EDGES: u64 = 24;
/// The shared vtime-ordered DSQ.
pub const SHARED_DSQ: u64 = 0;

/// Per-task state (BPF task-local storage `struct task_ctx`).
#[derive(Debug, Clone, Copy, Default)]
pub struct PdsTask {
    /// Virtual deadline, in edges.
    pub deadline: u64,
}

/// The policy (`pds_ops`).
#[derive(Debug, Clone, Default)]
pub struct ScxPds {
    /// Only SCHED_EXT tasks (`SCX_OPS_SWITCH_PARTIAL`).
    pub partial: bool,
}

impl ScxPds {
    /// From the run's tunables (`partial`).
    pub fn from_tunables(t: &TunableSet) -> Self {
        ScxPds {
            partial: t.get("partial").unwrap_or(0) != 0,
        }
    }

    fn edge(ctx: &Ctx<'_, PdsTask>) -> u64 {
        ctx.now() >> EDGE_SHIFT
    }

    /// `time_slice_expired`'s deadline: `edge + nice + 20`.
    fn renew(ctx: &mut Ctx<'_, PdsTask>, p: TaskId) {
        let d = Self::edge(ctx) + (ctx.task_nice(p).clamp(-20, 19) + 20) as u64;
        ctx.task_data(p).deadline = d;
    }

    /// The DSQ key: the deadline, at most `PAST_EDGES` before the edge.
    fn key(ctx: &mut Ctx<'_, PdsTask>, p: TaskId) -> u64 {
        let floor = Self::edge(ctx).saturating_sub(PAST_EDGES);
        ctx.task_data(p).deadline.max(floor)
    }

    /// The slice to insert `p` with: what is left, or (renewing the
    /// deadline) a full one.
    fn refill(ctx: &mut Ctx<'_, PdsTask>, p: TaskId) -> u64 {
        if ctx.task_slice(p) == 0 {
            Self::renew(ctx, p);
            SLICE_NS
        } else {
            0 // keep p->scx.slice
        }
    }
}

impl ExtOps for ScxPds {
    type Task = PdsTask;

    fn name(&self) -> &str {
        "pds"
    }

    fn flags(&self) -> u64 {
        switch_flags(self.partial)
    }

    fn select_cpu(
        &mut self,
        ctx: &mut Ctx<'_, PdsTask>,
        p: TaskId,
        prev_cpu: CpuId,
        wake_flags: u64,
    ) -> CpuId {
        let (cpu, is_idle) = ctx.select_cpu_dfl(p, prev_cpu, wake_flags);
        if is_idle {
            let slice = Self::refill(ctx, p);
            ctx.dsq_insert(p, SCX_DSQ_LOCAL, slice, 0);
        }
        cpu
    }

    fn enqueue(&mut self, ctx: &mut Ctx<'_, PdsTask>, p: TaskId, enq_flags: u64) {
        let slice = Self::refill(ctx, p);
        let key = Self::key(ctx, p);
        ctx.dsq_insert_vtime(p, SHARED_DSQ, slice, key, enq_flags);
    }

    fn dispatch(&mut self, ctx: &mut Ctx<'_, PdsTask>, _cpu: CpuId, prev: Option<TaskId>) {
        if let Some(prev) = prev.filter(|&p| ctx.task_queued(p)) {
            // Its slice is used up (else the kernel kept it without asking).
            Self::renew(ctx, prev);
            let key = Self::key(ctx, prev);
            let first = ctx.dsq_peek(SHARED_DSQ).map(|q| ctx.task_vtime(q));
            if first.is_none_or(|f| key < f) {
                ctx.set_slice(prev, SLICE_NS);
                return;
            }
        }
        ctx.dsq_move_to_local(SHARED_DSQ);
    }

    fn init_task(
        &mut self,
        ctx: &mut Ctx<'_, PdsTask>,
        p: TaskId,
        _fork: bool,
    ) -> Result<(), String> {
        Self::renew(ctx, p);
        Ok(())
    }

    fn enable(&mut self, ctx: &mut Ctx<'_, PdsTask>, p: TaskId) {
        ctx.set_slice(p, SLICE_NS);
    }

    fn init(&mut self, ctx: &mut Ctx<'_, PdsTask>) -> Result<(), String> {
        if ctx.create_dsq(SHARED_DSQ) {
            Ok(())
        } else {
            Err(format!("create_dsq({SHARED_DSQ}) failed"))
        }
    }
}

const N: usize = EEVDF_TUNABLES.len() + EXT_TUNABLES.len() + PARTIAL_TUNABLE.len();

/// Every tunable: the 6.12 fair class's, the ext class's and scx_pds's.
static TUNABLES: [Tunable; N] =
    crate::tunable::concat(&[EEVDF_TUNABLES, EXT_TUNABLES, PARTIAL_TUNABLE]);

/// The registry entry.
pub const DEF: SchedulerDef = SchedulerDef {
    name: "scx_pds",
    description: "PDS v6.0-r0 as a sched_ext policy (runs in a 6.12 kernel as scx/scx_pds): one deadline-ordered DSQ, deadline = edge + nice + 20 renewed at slice expiry, 4 ms slices, no wakeup preemption",
    source: "policy/pds.rs rules (shootout.md §2.4; linux-tkg 0009-prjc_v6.0-r0.patch pds.h) on kernel/sched/ext.c v6.12; scx/scx_pds/scx_pds.bpf.c",
    version: "6.12",
    classes: &["dl", "rt", "fair", "ext"],
    tunables: &TUNABLES,
    fair_policies: true,
    dl_orders: true,
    build: |ctx| crate::registry::sched_ext(ctx, ScxPds::from_tunables(ctx.tunables)),
};
