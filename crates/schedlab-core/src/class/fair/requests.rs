//! What a [`FairHooks`](super::hooks::FairHooks) policy asks of the fair
//! class beyond the kernel's rules: a new weight for a task
//! (`requested_weight`, applied like `reweight_entity`), and the points
//! where a burst-tracking policy restarts a task's burst, at sleep
//! (`dequeue_task_fair` with DEQUEUE_SLEEP) and at `sched_yield`
//! (`yield_task_fair`). With the kernel's hooks (`NoHooks`) every function
//! here only calls hooks that do nothing.

use super::tunables::Version;
use super::Fair;
use crate::cpuset::CpuId;
use crate::machine::Machine;
use crate::task::TaskId;

impl Fair {
    /// Give `t` the weight its policy asks for, if any and if different:
    /// the task's weight changes and its entity is reweighted in place
    /// (queued or not, current or not; BORE 5.9.6 `reweight_task_by_prio`).
    pub(super) fn apply_requested_weight(&mut self, m: &mut Machine, t: TaskId) {
        let Some(w) = self.hooks.requested_weight(m, t) else {
            return;
        };
        if w == 0 || w == m.tasks[t].weight {
            return;
        }
        m.set_weight(t, w);
        let se = self.task_se[t];
        self.reweight_entity(m, se, w);
    }

    /// `t`, running on `cpu`, goes to sleep: the policy's `task_sleep`
    /// (charged up to now first when it asks, like BORE 5.9.6's
    /// `dequeue_task_fair`, which charges `rq->cfs` only when `t` is its
    /// current entity, i.e. not below a group), then its weight request.
    pub(super) fn task_sleep_hooks(&mut self, m: &mut Machine, cpu: CpuId, t: TaskId) {
        if self.hooks.charge_before_restart() {
            let root = self.root(cpu);
            if self.cfs[root].curr == Some(self.task_se[t]) {
                self.update_curr(m, root);
            }
        }
        self.hooks.task_sleep(m, t);
        self.apply_requested_weight(m, t);
    }

    /// The current task `t` yields: the policy's `burst_yield` (after
    /// charging `t`'s queue when it asks), its weight request, and on
    /// EEVDF the remaining request the policy sets after a reweight (BORE
    /// 5.9.6 `restart_burst_rescale_deadline`).
    pub(super) fn task_yield_hooks(&mut self, m: &mut Machine, t: TaskId) {
        let se = self.task_se[t];
        let rq = self.se[se].cfs_rq;
        if self.hooks.charge_before_restart() {
            self.update_curr(m, rq);
        }
        let old = self.se[se].lw;
        let vremain = self.se[se].deadline - self.se[se].vruntime;
        self.hooks.burst_yield(m, t);
        self.apply_requested_weight(m, t);
        let new = self.se[se].lw;
        if self.p.version == Version::Eevdf && new != old {
            if let Some(v) = self.hooks.yield_request(t, vremain, old, new) {
                self.set_remaining_request(rq, se, v);
            }
        }
    }

    /// Set the current entity `se`'s deadline to vruntime + `vremain`.
    /// The current entity is outside the tree, so no re-sort is needed.
    fn set_remaining_request(
        &mut self,
        rq: super::entity::RqId,
        se: super::entity::SeId,
        vremain: i64,
    ) {
        debug_assert!(self.cfs[rq].curr == Some(se));
        self.se[se].deadline = self.se[se].vruntime.saturating_add(vremain);
    }
}
