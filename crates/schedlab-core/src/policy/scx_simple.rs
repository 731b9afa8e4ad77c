//! scx_simple: the kernel's minimal sched_ext scheduler, ported from
//! tools/sched_ext/scx_simple.bpf.c (torvalds/linux commit 25768de, the
//! version with `scx_bpf_dsq_insert`/`scx_bpf_dsq_move_to_local`, v6.13+;
//! the algorithm is unchanged since v6.12).
//!
//! One shared DSQ (id 0, created in `init`) holds every task that did not
//! find an idle CPU; all CPUs consume from it.
//! * `select_cpu`: `scx_bpf_select_cpu_dfl`; if it found an idle CPU, insert
//!   the task straight into that CPU's local DSQ with the default slice
//!   (20 ms), skipping `enqueue`.
//! * `enqueue`: FIFO mode: insert at the tail of DSQ 0. Weighted-vtime mode
//!   (default): insert into DSQ 0 ordered by `p->scx.dsq_vtime`, clamped to
//!   at least `vtime_now - SCX_SLICE_DFL` so a task that slept long gains
//!   at most one slice of credit.
//! * `dispatch`: move the first task of DSQ 0 to the CPU's local DSQ.
//! * `running`: the global `vtime_now` advances to the starting task's
//!   vtime (never backwards).
//! * `stopping`: charge the used part of the default slice scaled by the
//!   inverse weight: `dsq_vtime += (SCX_SLICE_DFL - slice) * 100 / weight`
//!   (so a yield, which zeroes the slice, is charged a whole slice).
//! * `enable`: a new task starts at `vtime_now`.
//!
//! With one CPU and always-runnable tasks, each task runs whole 20 ms slices
//! and the one with the smallest vtime goes next, so CPU time is shared in
//! proportion to `p->scx.weight` (100 at nice 0, 33 at nice 5 after the
//! kernel's rounding), i.e. within 1 % of the nice weights 1024:335.
//! There is no preemption: a waking task waits for the running one's slice
//! to end unless a CPU is idle. Options as in scx_simple.c: `-f` (tunable
//! `fifo`) and `-p` (tunable `partial`: only SCHED_EXT tasks).

use crate::class::ext::{
    switch_flags, Ctx, ExtOps, EXT_TUNABLES, PARTIAL_TUNABLE, SCX_DSQ_LOCAL, SCX_SLICE_DFL,
};
use crate::class::fair::tunables::EEVDF_TUNABLES;
use crate::cpuset::CpuId;
use crate::plugin::SchedulerDef;
use crate::task::TaskId;
use crate::tunable::{Tunable, TunableSet};

/// The shared DSQ (`SHARED_DSQ`).
const SHARED_DSQ: u64 = 0;

/// `vtime_before(a, b)`: wrapping comparison of vtimes.
fn vtime_before(a: u64, b: u64) -> bool {
    (a.wrapping_sub(b) as i64) < 0
}

/// The policy (`simple_ops`).
#[derive(Debug, Clone, Default)]
pub struct ScxSimple {
    /// FIFO mode (`fifo_sched`, `-f`).
    pub fifo: bool,
    /// Only SCHED_EXT tasks (`SCX_OPS_SWITCH_PARTIAL`, `-p`).
    pub partial: bool,
    /// `vtime_now`.
    pub vtime_now: u64,
    /// Tasks inserted straight into a local DSQ / into the shared DSQ
    /// (the BPF program's `stats` map).
    pub stats: [u64; 2],
}

impl ScxSimple {
    /// From the run's tunables (`fifo`, `partial`).
    pub fn from_tunables(t: &TunableSet) -> Self {
        ScxSimple {
            fifo: t.get("fifo").unwrap_or(0) != 0,
            partial: t.get("partial").unwrap_or(0) != 0,
            ..ScxSimple::default()
        }
    }
}

impl ExtOps for ScxSimple {
    type Task = ();

    fn name(&self) -> &str {
        "scx_simple"
    }

    fn flags(&self) -> u64 {
        switch_flags(self.partial)
    }

    fn select_cpu(
        &mut self,
        ctx: &mut Ctx<'_, ()>,
        p: TaskId,
        prev_cpu: CpuId,
        wake_flags: u64,
    ) -> CpuId {
        let (cpu, is_idle) = ctx.select_cpu_dfl(p, prev_cpu, wake_flags);
        if is_idle {
            self.stats[0] += 1;
            ctx.dsq_insert(p, SCX_DSQ_LOCAL, SCX_SLICE_DFL, 0);
        }
        cpu
    }

    fn enqueue(&mut self, ctx: &mut Ctx<'_, ()>, p: TaskId, enq_flags: u64) {
        self.stats[1] += 1;
        if self.fifo {
            ctx.dsq_insert(p, SHARED_DSQ, SCX_SLICE_DFL, enq_flags);
        } else {
            let mut vtime = ctx.task_vtime(p);
            // Limit the budget an idling task can accumulate to one slice.
            let floor = self.vtime_now.wrapping_sub(SCX_SLICE_DFL);
            if vtime_before(vtime, floor) {
                vtime = floor;
            }
            ctx.dsq_insert_vtime(p, SHARED_DSQ, SCX_SLICE_DFL, vtime, enq_flags);
        }
    }

    fn dispatch(&mut self, ctx: &mut Ctx<'_, ()>, _cpu: CpuId, _prev: Option<TaskId>) {
        ctx.dsq_move_to_local(SHARED_DSQ);
    }

    fn running(&mut self, ctx: &mut Ctx<'_, ()>, p: TaskId) {
        if self.fifo {
            return;
        }
        let v = ctx.task_vtime(p);
        if vtime_before(self.vtime_now, v) {
            self.vtime_now = v;
        }
    }

    fn stopping(&mut self, ctx: &mut Ctx<'_, ()>, p: TaskId, _runnable: bool) {
        if self.fifo {
            return;
        }
        let used = SCX_SLICE_DFL.saturating_sub(ctx.task_slice(p));
        let w = ctx.task_weight(p).max(1) as u64;
        let v = ctx.task_vtime(p).wrapping_add(used * 100 / w);
        ctx.set_dsq_vtime(p, v);
    }

    fn enable(&mut self, ctx: &mut Ctx<'_, ()>, p: TaskId) {
        ctx.set_dsq_vtime(p, self.vtime_now);
    }

    fn init(&mut self, ctx: &mut Ctx<'_, ()>) -> Result<(), String> {
        if ctx.create_dsq(SHARED_DSQ) {
            Ok(())
        } else {
            Err(format!("create_dsq({SHARED_DSQ}) failed"))
        }
    }
}

/// scx_simple's own tunables.
const OWN_TUNABLES: &[Tunable] = &[Tunable {
    name: "fifo",
    default: 0,
    min: 0,
    max: 1,
    unit: "bool",
    doc: "scx_simple -f: FIFO order on the shared DSQ instead of weighted vtime",
}];

const N: usize =
    EEVDF_TUNABLES.len() + EXT_TUNABLES.len() + OWN_TUNABLES.len() + PARTIAL_TUNABLE.len();

/// Every tunable of the scheduler: the 6.12 fair class's, the ext class's
/// and scx_simple's.
static TUNABLES: [Tunable; N] =
    crate::tunable::concat(&[EEVDF_TUNABLES, EXT_TUNABLES, OWN_TUNABLES, PARTIAL_TUNABLE]);

/// The registry entry.
pub const DEF: SchedulerDef = SchedulerDef {
    name: "scx_simple",
    description: "sched_ext scx_simple on Linux 6.12: global weighted-vtime (or FIFO) shared DSQ with idle-CPU direct dispatch, below EEVDF",
    source: "tools/sched_ext/scx_simple.bpf.c (25768de); kernel/sched/ext.c, ext_idle.c v6.12; formats.md §3",
    version: "6.12",
    classes: &["dl", "rt", "fair", "ext"],
    tunables: &TUNABLES,
    fair_policies: true,
    dl_orders: true,
    build: |ctx| crate::registry::sched_ext(ctx, ScxSimple::from_tunables(ctx.tunables)),
};
