//! ILLF, improved least laxity first for multicore real-time tasks: seed
//! 001 (../shared/seeds/001_34191d9a880cf9f0.txt, a modification of
//! Linux 3.14's DL class), rules and pseudo-code in seed-algorithms.md §2.2.
//!
//! Laxity S = d − t − R as in LLF (llf.rs: the tree key is the latest start
//! time d − R, so S = key − t), big job R > S, small job R ≤ S. LLF's
//! per-tick re-evaluation switches jobs whenever laxities cross; ILLF
//! restricts when laxity is recomputed and when a switch may happen:
//! 1. the running job is re-keyed only (a) when a job is activated on its
//!    CPU or (b) when the current job finishes;
//! 2. at a tick only the least-laxity waiting job is checked;
//! 3. switches happen only (a) at an activation, (b) when a waiting job
//!    reaches zero laxity, or (c) when the current job finishes;
//! 4. the swap rule at activation and at pick: with K the job that would
//!    run and Q the one that wants to (the activated job, or the second
//!    least laxity at pick), if K is big (R_K > S_K), Q is small
//!    (R_Q ≤ S_Q), R_K > S_Q and R_Q ≤ S_K, Q runs (K can afford to wait
//!    R_Q, Q could not afford to wait R_K).
//!
//! Plugged into the deadline class as a [`DlOrder`] (class/dl/order.rs),
//! keeping CBS, push/pull and admission; switch points (3a, 3b, 4) force the
//! class's next pick. Equal laxities go to the job scheduled least recently
//! (seed 001 §2, tunable `laxity_ties`, as for LLF: llf.rs). Where the seed
//! is silent ([choice]): when rule 4 does not fire
//! at an activation, the job of least laxity of {K, Q} runs; migration is
//! the kernel's push/pull with the laxity key, as the seed keeps Linux
//! 3.14's DL-class structure. `swap_rule = false` turns rule 4 off (tunable
//! `illf_swap_rule=0`, an ablation).

use super::llf::{latest_start, LAXITY_TIES};
use crate::class::dl::{DlCtx, DlOrder};
use crate::clock::Ns;
use crate::plugin::DlOrderDef;
use crate::task::TaskId;
use crate::tunable::Tunable;

/// One-line description for listings.
pub const DESCRIPTION: &str =
    "improved LLF: laxity updated at activation/finish, restricted switch points, big/small swap rule (seed 001)";

/// ILLF's tunables.
pub const TUNABLES: &[Tunable] = &[
    Tunable {
        name: "illf_swap_rule",
        default: 1,
        min: 0,
        max: 1,
        unit: "bool",
        doc:
            "ILLF rule 4 (big/small swap at activation and pick); 0 = ablation with rules 1-3 only",
    },
    LAXITY_TIES,
];

/// Registry declaration (registry.rs, `DL_ORDERS`).
pub const DEF: DlOrderDef = DlOrderDef {
    name: "illf",
    description: DESCRIPTION,
    source: "seed 001 (../shared/seeds/001); seed-algorithms.md §2.2-§2.4",
    tunables: TUNABLES,
    order: |t| {
        let mut o = Illf::new(t.get("illf_swap_rule").unwrap_or(1) != 0);
        o.lru_ties = t.get("laxity_ties").unwrap_or(1) != 0;
        Box::new(o)
    },
};

/// Improved least laxity first.
#[derive(Debug, Clone, Copy)]
pub struct Illf {
    /// Rule 4 on (off for ablation).
    swap_rule: bool,
    /// Ties to the least recently scheduled job (seed 001 §2).
    pub lru_ties: bool,
}

impl Illf {
    /// ILLF, with or without the swap rule (rule 4).
    pub fn new(swap_rule: bool) -> Self {
        Illf {
            swap_rule,
            lru_ties: true,
        }
    }

    /// Rule 4: should `q` run instead of `k`?
    fn swap(&self, ctx: &DlCtx, k: TaskId, q: TaskId) -> bool {
        if !self.swap_rule {
            return false;
        }
        let (rk, sk) = (ctx.remaining(k), ctx.laxity(k));
        let (rq, sq) = (ctx.remaining(q), ctx.laxity(q));
        rk > sk && rq <= sq && rk > sq && rq <= sk
    }
}

impl DlOrder for Illf {
    fn key(&self, deadline: Ns, runtime: i64) -> Ns {
        latest_start(deadline, runtime)
    }

    fn lru_ties(&self) -> bool {
        self.lru_ties
    }

    /// Keys are recomputed only at the rule-1 points.
    fn exact_keys(&self) -> bool {
        false
    }

    fn select_with_renewed_key(&self) -> bool {
        true
    }

    /// Rule 1a: the running job's laxity is recomputed.
    fn before_activate(&self, ctx: &mut DlCtx) {
        if let Some(c) = ctx.curr() {
            ctx.update_curr();
            ctx.rekey(c);
        }
    }

    /// Rules 3a + 4 with K = the running job (or the one already forced to
    /// replace it), Q = the activated one.
    fn activate(&self, ctx: &mut DlCtx, t: TaskId) -> bool {
        let Some(k) = ctx.curr().filter(|c| ctx.queued(*c)) else {
            return false;
        };
        let k = ctx.forced().filter(|f| ctx.queued(*f)).unwrap_or(k);
        // [choice] without a swap, the least laxity of {K, Q} runs.
        if self.swap(ctx, k, t) || ctx.tree_key(t) < ctx.tree_key(k) {
            ctx.force(t);
            ctx.resched();
        }
        ctx.forced() == Some(t)
    }

    /// Decided at activation.
    fn wakeup_preempt(&self, _ctx: &DlCtx, _t: TaskId) -> bool {
        false
    }

    /// Rule 3: the running job keeps the CPU unless a switch point
    /// (activation, zero laxity: a forced pick) or its finish came; then
    /// rule 4 with K = least laxity, Q = second least.
    fn pick_task(&self, ctx: &DlCtx) -> Option<TaskId> {
        if let Some(c) = ctx.curr().filter(|c| ctx.queued(*c)) {
            return Some(c);
        }
        let mut it = ctx.queue();
        let k = it.next()?;
        Some(match it.next() {
            Some(q) if self.swap(ctx, k, q) => q,
            _ => k,
        })
    }

    /// Rules 2 + 3b: only the least-laxity waiting job is looked at; at
    /// zero laxity it runs.
    fn task_tick(&self, ctx: &mut DlCtx, c: TaskId) {
        let l = ctx.queue().find(|t| *t != c);
        if let Some(l) = l.filter(|l| ctx.laxity(*l) <= 0) {
            ctx.force(l);
            ctx.resched();
        }
    }
}
