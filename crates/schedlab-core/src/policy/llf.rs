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
//! from another CPU, has less laxity. Equal laxities go to the job not
//! scheduled for the longest time (seed 001 §2: "当出现两个任务的松弛度相同时,
//! 按'最近最久未调度'原则调度"; tunable `laxity_ties` = 1); `laxity_ties=0`
//! gives them to the earlier-queued job (rb-tree insertion order), the
//! rule before the seed's was implemented. Where the seed is silent
//! ([choice]): migration is the kernel's push/pull with the laxity key.

use crate::class::dl::{DlCtx, DlOrder};
use crate::clock::Ns;
use crate::plugin::DlOrderDef;
use crate::task::TaskId;
use crate::tunable::Tunable;

/// The tie rule of LLF and ILLF (seed 001 §2).
pub const LAXITY_TIES: Tunable = Tunable {
    name: "laxity_ties",
    default: 1,
    min: 0,
    max: 1,
    unit: "bool",
    doc: "equal laxity: 1 = the job scheduled least recently runs first (seed 001 §2), 0 = the earlier-queued job",
};

/// One-line description for listings.
pub const DESCRIPTION: &str =
    "least laxity first: latest start time d − R as key, re-evaluated at every tick (seed 001)";

/// Registry declaration (registry.rs, `DL_ORDERS`).
pub const DEF: DlOrderDef = DlOrderDef {
    name: "llf",
    description: DESCRIPTION,
    source: "seed 001 (../shared/seeds/001); seed-algorithms.md §2.1, §2.3",
    tunables: &[LAXITY_TIES],
    order: |t| {
        Box::new(Llf {
            lru_ties: t.get("laxity_ties").unwrap_or(1) != 0,
        })
    },
};

/// The latest start time d − R, the key under which laxity orders jobs
/// (laxity = key − now).
pub fn latest_start(deadline: Ns, runtime: i64) -> Ns {
    deadline.saturating_sub(runtime.max(0) as Ns)
}

/// Least laxity first.
#[derive(Debug, Clone, Copy, Default)]
pub struct Llf {
    /// Ties to the least recently scheduled job (seed 001 §2).
    pub lru_ties: bool,
}

impl DlOrder for Llf {
    fn key(&self, deadline: Ns, runtime: i64) -> Ns {
        latest_start(deadline, runtime)
    }

    fn lru_ties(&self) -> bool {
        self.lru_ties
    }

    /// The running job's key is stale between re-keys.
    fn exact_keys(&self) -> bool {
        false
    }

    fn select_with_renewed_key(&self) -> bool {
        true
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
