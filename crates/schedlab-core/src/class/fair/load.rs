//! Load accounting of the fair class (kernel/sched/fair.c v6.18): the
//! queues' PELT load (`update_load_avg` on a cfs_rq), an entity's own
//! (`se->avg.load_avg`), the queue sums at enqueue and dequeue
//! (`account_entity_enqueue`, `account_entity_dequeue`) and a weight change
//! (`reweight_entity`). The queue orderings these keep in step are in
//! queue.rs; a task's utilisation and runnable signals in attach.rs.

use super::entity::{RqId, SeId};
use super::tunables::Version;
use super::weights::LoadWeight;
use super::Fair;
use crate::machine::Machine;

impl Fair {
    pub(super) fn rq_pelt(&mut self, m: &Machine, rq: RqId) {
        let load = self.cfs[rq].load;
        self.cfs[rq].pelt.update(m.now, load);
    }

    /// An entity's PELT load average (`se->avg.load_avg`): its weight times
    /// its unweighted runnable sum over the divider, brought up to now.
    pub(super) fn se_load_avg(&mut self, m: &Machine, se: SeId) -> u64 {
        let e = &mut self.se[se];
        e.load.update(m.now, u64::from(e.on_rq));
        (e.w() as u128 * e.load.sum() as u128 / e.load.divider() as u128) as u64
    }

    /// `account_entity_enqueue`.
    pub(super) fn account_enqueue(&mut self, m: &Machine, rq: RqId, se: SeId) {
        self.rq_pelt(m, rq);
        let w = self.se[se].w();
        self.se[se].load.update(m.now, 0);
        self.cfs[rq].load += w;
        self.cfs[rq].nr_running += 1;
        if self.cfs[rq].load == w {
            // From zero (a non-zero load keeps its CPU in the set).
            self.maybe_signals.insert(self.cfs[rq].cpu);
        }
    }

    /// `account_entity_dequeue`.
    pub(super) fn account_dequeue(&mut self, m: &Machine, rq: RqId, se: SeId) {
        self.rq_pelt(m, rq);
        let w = self.se[se].w();
        self.se[se].load.update(m.now, 1);
        self.cfs[rq].load -= w;
        self.cfs[rq].nr_running -= 1;
    }

    /// Change an entity's weight (`reweight_entity`), keeping queue sums
    /// consistent; EEVDF rescales lag and deadline (linux-eevdf.md §9).
    pub fn reweight_entity(&mut self, m: &mut Machine, se: SeId, weight: u64) {
        if self.se[se].w() == weight {
            return;
        }
        let rq = self.se[se].cfs_rq;
        let on_rq = self.se[se].on_rq;
        let is_curr = self.cfs[rq].curr == Some(se);
        let list_seq = self.se[se].list_seq;
        if on_rq {
            if is_curr {
                self.update_curr(m, rq);
            } else {
                self.tree_remove(rq, se);
            }
            self.rq_pelt(m, rq);
            self.cfs[rq].load -= self.se[se].w();
        }
        if self.p.version == Version::Eevdf {
            self.reweight_eevdf(rq, se, weight);
        }
        let old = self.se[se].w();
        // reweight_entity (fair.c v6.18): the entity's load average is
        // rescaled to the new weight at once (`se->avg.load_avg =
        // se_weight × load_sum / divider`), and its queue's average with it
        // (`dequeue_load_avg`, `enqueue_load_avg`: the queue's weighted sum
        // loses old × the entity's sum and gains new × it). Before
        // 2026-11-27 only the queue's future input changed, so a group
        // entity's share of its group's weight reached its CPU's load over
        // a hundred milliseconds; the host's CPU loads jump with it
        // (2-vCPU `sleepers2`: root loads 80,000 and 307,000 a moment
        // apart), and its balancer pulls the sleepers that the gap covers.
        self.se[se].load.update(m.now, u64::from(on_rq));
        if !on_rq {
            self.rq_pelt(m, rq);
        }
        let sum = self.se[se].load.sum() as i128;
        self.cfs[rq]
            .pelt
            .add_sum((weight as i128 - old as i128) * sum);
        self.maybe_signals.insert(self.cfs[rq].cpu);
        self.se[se].lw = LoadWeight::new(weight);
        if on_rq {
            self.cfs[rq].load += weight;
            if !is_curr {
                self.tree_insert(rq, se);
                // reweight_entity (6.1) does not move the entity in the list.
                self.se[se].list_seq = list_seq;
                if self.ordered {
                    if let Some(x) = self.cfs[rq].list.pop_back() {
                        self.hooks.list_changed(rq, self.cfs[rq].cpu, x, false);
                    }
                    self.cfs[rq].list_edits += 1;
                    self.list_insert(rq, se);
                }
            }
        }
    }
}
