//! LLF, least laxity first, for SCHED_DEADLINE tasks: the baseline of
//! seed 001 (../shared/seeds/001_34191d9a880cf9f0.txt), definitions in
//! seed-algorithms.md §2.1 and §2.3.
//!
//! A job with absolute deadline d and remaining execution R has, at time t,
//! laxity S = d − t − R (S < 0: a miss is unavoidable). LLF runs the jobs
//! of least laxity, re-evaluated at every tick; unlike EDF it runs a heavy
//! job with no slack at once, so the Dhall effect does not occur.
//!
//! Plugged into the deadline class as a [`DlOrder`] (class/dl/order.rs),
//! keeping CBS, push/pull and admission. R is the job's remaining runtime
//! (its CBS budget, the remaining work when the budget is the WCET). Since
//! S = (d − R) − t for every job, ordering by the key d − R ("latest start
//! time") is ordering by laxity at any instant; a waiting job's key is
//! constant and a running job's grows, which is exactly "a waiting job's
//! laxity decreases, a running job's is constant". The running job is
//! re-keyed at every tick, at activations on its CPU and when it is put
//! back; at a tick LLF switches as soon as a waiting job, here or pushable
//! from another CPU, has less laxity. Where the seed is silent ([choice]):
//! ties go to the earlier-queued job (rb-tree insertion order); migration
//! is the kernel's push/pull with the laxity key.

use crate::class::dl::{DlCtx, DlOrder};
use crate::clock::Ns;
use crate::plugin::DlOrderDef;
use crate::task::TaskId;

/// One-line description for listings.
pub const DESCRIPTION: &str =
    "least laxity first: latest start time d − R as key, re-evaluated at every tick (seed 001)";

/// Registry declaration (registry.rs, `DL_ORDERS`).
pub const DEF: DlOrderDef = DlOrderDef {
    name: "llf",
    description: DESCRIPTION,
    source: "seed 001 (../shared/seeds/001); seed-algorithms.md §2.1, §2.3",
    tunables: &[],
    order: |_| Box::new(Llf),
};

/// The latest start time d − R, the key under which laxity orders jobs
/// (laxity = key − now).
pub fn latest_start(deadline: Ns, runtime: i64) -> Ns {
    deadline.saturating_sub(runtime.max(0) as Ns)
}

/// Least laxity first.
#[derive(Debug, Clone, Copy, Default)]
pub struct Llf;

impl DlOrder for Llf {
    fn key(&self, deadline: Ns, runtime: i64) -> Ns {
        latest_start(deadline, runtime)
    }

    /// The running job's key is stale between re-keys.
    fn exact_keys(&self) -> bool {
        false
    }

    /// The running job's laxity is recomputed before the new job enters.
    fn before_activate(&self, ctx: &mut DlCtx) {
        if let Some(c) = ctx.curr() {
            ctx.update_curr();
            ctx.rekey(c);
        }
    }

    /// A preempted job waits with its current laxity.
    fn put_prev_task(&self, ctx: &mut DlCtx, prev: TaskId) {
        ctx.rekey(prev);
    }

    /// Laxity re-evaluated every tick: switch as soon as a waiting job
    /// (here, or waiting elsewhere) has less laxity.
    fn task_tick(&self, ctx: &mut DlCtx, c: TaskId) {
        ctx.rekey(c);
        let key = ctx.tree_key(c);
        let local = ctx.first().is_some_and(|f| f != c);
        let remote = (0..ctx.nr_cpus()).filter(|s| *s != ctx.cpu()).any(|s| {
            ctx.pushable(s)
                .is_some_and(|t| ctx.tree_key(t) < key && ctx.curr_on(s).is_some_and(|x| x != t))
        });
        if local || remote {
            ctx.resched();
        }
    }
}
