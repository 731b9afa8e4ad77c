//! Policy-ordered queues: CFS 6.1 with the choice among queued entities
//! made by a research policy's order (`FairHooks::queue_order`,
//! `FairHooks::before`), as the CacULE and TT patches do
//! (shootout.md §3.1, §3.2; alt-schedulers.md §5, §6).
//!
//! Both patches keep each queue as a doubly linked list with new entries
//! at the head (`__enqueue_entity`, called on enqueue and when the running
//! entity is put back) and pick by scanning it from the head, replacing
//! the candidate only when the next entry runs strictly before it: ties go
//! to the most recently queued entity. Here the queue stays the fair
//! class's timeline (CFS vruntime order, still maintained) and the list
//! order is the entities' insertion stamps (`Entity::list_seq`), newest
//! first, kept as a second index of the queue (`CfsRq::list`). The scan
//! is O(n) per pick, as in the patches; where the policy gives every
//! entity a key (`FairHooks::order_key`) it computes one key per entity
//! rather than two per comparison, with the same outcome.
//!
//! * Pick (`pick_next_entity`): CFS's rules with the policy's first entity
//!   in place of the leftmost and "curr runs before it" in place of the
//!   vruntime comparison; the skip/next/last buddies, where the policy
//!   keeps them (TT), are still judged on CFS vruntime with
//!   `wakeup_preempt_entity`. CacULE has no buddies, so its pick is the
//!   scan's winner unless curr runs strictly before it.
//! * Tick: TT keeps `check_preempt_tick` (slice used up; past
//!   min_granularity, stop if curr runs before the first entity, else
//!   preempt if curr's CFS vruntime lead exceeds the slice — compared as
//!   the kernel does, `s64` against `unsigned long`, so a negative lead
//!   also preempts); CacULE reschedules iff the pick is not curr.
//! * Wakeup (CacULE): after CFS's early exits the wakee preempts iff it
//!   runs before the running entity (cfs.rs `cfs_check_preempt_wakeup`).

use super::entity::{ListEntry, RqId, ScanMemo, SeId};
use super::hooks::{EntityRef, QueueOrder, TickPreempt};
use super::Fair;
use crate::machine::Machine;

impl Fair {
    /// The policy's queue order, if it has one (CFS only).
    pub(super) fn queue_order(&self) -> Option<QueueOrder> {
        match self.p.version {
            super::tunables::Version::Cfs => self.hooks.queue_order(),
            super::tunables::Version::Eevdf => None,
        }
    }

    /// Whether CFS's buddies are in use (always, unless a queue-ordering
    /// policy compiles them out).
    pub(super) fn buddies_enabled(&self) -> bool {
        self.queue_order().is_none_or(|o| o.buddies)
    }

    fn entity_ref(&self, se: SeId) -> EntityRef {
        let e = &self.se[se];
        EntityRef {
            se,
            task: e.task,
            is_curr: self.cfs[e.cfs_rq].curr == Some(se),
        }
    }

    /// Whether `a` runs before `b` in the policy's order.
    pub(super) fn order_before(&mut self, m: &Machine, a: SeId, b: SeId) -> bool {
        let (ra, rb) = (self.entity_ref(a), self.entity_ref(b));
        self.hooks.before(m, ra, rb)
    }

    /// The first queued entity of `rq` (curr excluded) in the policy's
    /// order, leaving out `except`: the list scan of `__pick_first_entity`
    /// (`except` None) or TT's `__pick_next_entity(cfs_rq, except)`.
    fn order_first(&mut self, m: &Machine, rq: RqId, except: Option<SeId>) -> Option<SeId> {
        self.order_first_keyed(m, rq, except).map(|(s, _)| s)
    }

    /// [`Self::order_first`] with the winner's `order_key` where the scan
    /// computed it.
    fn order_first_keyed(
        &mut self,
        m: &Machine,
        rq: RqId,
        except: Option<SeId>,
    ) -> Option<(SeId, Option<u64>)> {
        if let (1, Some(only)) = (self.cfs[rq].list.len(), self.cfs[rq].list.front()) {
            // One entity (a task's own autogroup): the scan's winner.
            return (Some(only.se) != except).then_some((only.se, None));
        }
        if let Some(best) = self.hooks.order_first(m, rq, &self.cfs[rq].list, except) {
            #[cfg(debug_assertions)]
            {
                let mut list = std::mem::take(&mut self.cfs[rq].list);
                let scanned = self.hooks.order_scan(m, list.make_contiguous(), except);
                self.cfs[rq].list = list;
                if let Some(scanned) = scanned {
                    assert_eq!(best, scanned, "order_first of queue {rq} at {}", m.now);
                }
            }
            return best.map(|(k, s)| (s, Some(k)));
        }
        let mut list = std::mem::take(&mut self.cfs[rq].list);
        let first = self
            .scan_keys(m, rq, list.make_contiguous(), except)
            .unwrap_or_else(|| {
                // Some entity has no key: compare pairwise, as the patches do.
                let mut best: Option<SeId> = None;
                for s in list
                    .iter()
                    .rev()
                    .map(|x| x.se)
                    .filter(|s| Some(*s) != except)
                {
                    best = match best {
                        Some(b) if !self.order_before(m, s, b) => Some(b),
                        _ => Some(s),
                    };
                }
                best.map(|s| (s, None))
            });
        self.cfs[rq].list = list;
        first
    }

    /// The list scan by `FairHooks::order_key` (head first, the next entry
    /// replacing the candidate only with a strictly lower key), or None if
    /// some entity has no key.
    ///
    /// A scan of the whole list (`except` None) is remembered
    /// (`CfsRq::scan_memo`). If the next one comes at the same time, with
    /// the policy's generation the same and the list only grown at its
    /// head, the entries scanned then have the same keys, so only the new
    /// ones are scanned: they come first in the list, so the first of them
    /// with the lowest key wins unless the remembered winner's key is
    /// strictly lower.
    fn scan_keys(
        &mut self,
        m: &Machine,
        rq: RqId,
        list: &[ListEntry],
        except: Option<SeId>,
    ) -> Option<Option<(SeId, Option<u64>)>> {
        let gen = self.hooks.order_generation().filter(|_| except.is_none());
        let edits = self.cfs[rq].list_edits;
        let memo = self.cfs[rq].scan_memo.filter(|c| {
            gen == Some(c.gen) && c.now == m.now && c.edits == edits && c.len <= list.len()
        });
        let from = memo.map_or(0, |c| c.len);
        let mut best = self.hooks.order_scan(m, &list[from..], except)?;
        if let Some((ok, os)) = memo.and_then(|c| c.best) {
            if best.is_none_or(|(bk, _)| ok < bk) {
                best = Some((ok, os));
            }
        }
        if let Some(gen) = gen {
            self.cfs[rq].scan_memo = Some(ScanMemo {
                now: m.now,
                gen,
                edits,
                len: list.len(),
                best,
            });
        }
        Some(best.map(|(k, s)| (s, Some(k))))
    }

    /// Whether the running entity `c` runs before `first`, whose key the
    /// scan may have left (`first_key`): then one key for `c` decides
    /// (`order_key`'s contract: keys order as `before` does), else
    /// `before`.
    fn curr_before(&mut self, m: &Machine, c: SeId, first: SeId, first_key: Option<u64>) -> bool {
        if let Some(fk) = first_key {
            if let Some(ck) = self.hooks.order_key(m, self.entity_ref(c)) {
                #[cfg(debug_assertions)]
                assert_eq!(
                    ck < fk,
                    self.order_before(m, c, first),
                    "keys against before()"
                );
                return ck < fk;
            }
        }
        self.order_before(m, c, first)
    }

    /// `pick_next_entity` under the policy's order.
    pub(super) fn ordered_pick(
        &mut self,
        m: &Machine,
        rq: RqId,
        order: QueueOrder,
    ) -> Option<SeId> {
        let curr = self.cfs[rq].curr.filter(|c| self.se[*c].on_rq);
        let keyed = self.order_first_keyed(m, rq, None);
        let first = keyed.map(|(s, _)| s);
        let left = match (keyed, curr) {
            (None, c) => c?,
            (Some((l, lk)), Some(c)) if self.curr_before(m, c, l, lk) => c,
            (Some((l, _)), _) => l,
        };
        if !order.buddies {
            return Some(left);
        }
        let mut se = left;
        let q = &self.cfs[rq];
        let (skip, next, last) = (q.skip, q.next, q.last);
        if skip == Some(se) {
            let second = if Some(se) == curr {
                first
            } else {
                match (self.order_first(m, rq, Some(se)), curr) {
                    (None, c) => c,
                    (Some(a), Some(c)) if self.order_before(m, c, a) => Some(c),
                    (a, _) => a,
                }
            };
            if let Some(s2) = second {
                if self.wakeup_preempt_entity(s2, left, false) < 1 {
                    se = s2;
                }
            }
        }
        if let Some(n) = next.filter(|n| self.wakeup_preempt_entity(*n, left, true) < 1) {
            se = n;
        } else if let Some(l) = last.filter(|l| self.wakeup_preempt_entity(*l, left, false) < 1) {
            se = l;
        }
        Some(se)
    }

    /// `check_preempt_tick` under the policy's order (`curr` runs on `rq`,
    /// which has another entity queued).
    pub(super) fn ordered_check_preempt_tick(
        &mut self,
        m: &mut Machine,
        rq: RqId,
        curr: SeId,
        order: QueueOrder,
    ) {
        let cpu = self.cfs[rq].cpu;
        match order.tick {
            TickPreempt::PickDiffers => {
                if self.ordered_pick(m, rq, order) != Some(curr) {
                    m.resched(cpu);
                }
            }
            TickPreempt::Slice => {
                let ideal = self.sched_slice(rq, curr);
                let e = &self.se[curr];
                let ran = e.sum_exec - e.prev_sum_exec;
                if ran > ideal {
                    m.resched(cpu);
                    self.clear_buddies(rq, curr);
                    return;
                }
                if ran < self.p.min_gran {
                    return;
                }
                let Some(first) = self.order_first(m, rq, None) else {
                    return;
                };
                if self.order_before(m, curr, first) {
                    return;
                }
                // `delta > ideal_runtime` compares s64 with unsigned long:
                // a negative lead converts to a huge value and preempts.
                let lead = self.se[curr].vruntime.wrapping_sub(self.se[first].vruntime);
                if lead as u64 > ideal {
                    m.resched(cpu);
                }
            }
        }
    }
}
