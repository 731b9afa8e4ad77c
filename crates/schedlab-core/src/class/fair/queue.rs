//! A fair run queue's orderings: the tree the kernel keeps (by vruntime
//! for CFS, by virtual deadline for EEVDF, with EEVDF's `avg_vruntime`
//! sums maintained on insert and remove: `__enqueue_entity`,
//! `__dequeue_entity`), and for queue-ordering policies (CacULE, TT:
//! order.rs) the insertion-order list their patches scan.

use super::entity::{ListEntry, RqId, SeId};
use super::tunables::Version;
use super::Fair;

/// The index of the first entry of `list` (sorted by seq) whose seq is at
/// least `seq`, searched from the front by doubling steps, then by
/// bisection: a pick takes an entity near the front (it waited longest)
/// far more often than one near the back, so this reads a line or two of
/// a long list where a bisection over all of it reads one per step.
fn seq_position(list: &std::collections::VecDeque<ListEntry>, seq: u64) -> usize {
    let (mut lo, mut step) = (0, 1);
    // Invariant: every entry before `lo` has a smaller seq.
    let mut hi = loop {
        let probe = lo + step - 1;
        match list.get(probe) {
            Some(x) if x.seq < seq => {
                lo = probe + 1;
                step *= 2;
            }
            Some(_) => break probe,
            None => break list.len(),
        }
    };
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        match list[mid].seq < seq {
            true => lo = mid + 1,
            false => hi = mid,
        }
    }
    lo
}

impl Fair {
    pub(super) fn tree_key(&self, se: SeId) -> i64 {
        match self.p.version {
            Version::Cfs => self.se[se].vruntime,
            Version::Eevdf => self.se[se].deadline,
        }
    }

    /// `__enqueue_entity`.
    pub(super) fn tree_insert(&mut self, rq: RqId, se: SeId) {
        self.seq += 1;
        let key = (self.tree_key(se), self.seq);
        self.se[se].key = key;
        self.se[se].list_seq = key.1;
        if self.timeline {
            let (v, slice) = (self.se[se].vruntime, self.se[se].slice);
            let ses = &self.se;
            self.cfs[rq]
                .tree
                .insert(key, se, v, slice, |s| ses[s].slice);
        }
        if self.ordered {
            // The newest entry: the head of the patches' list.
            let x = ListEntry {
                seq: key.1,
                se,
                task: self.se[se].task,
            };
            self.cfs[rq].list.push_back(x);
            self.hooks.list_changed(rq, self.cfs[rq].cpu, x, true);
        }
        if self.p.version == Version::Eevdf {
            let e = &self.se[se];
            let (v, w) = (e.vruntime as i128, e.w());
            self.cfs[rq].avg_vsum += v * w as i128;
            self.cfs[rq].avg_load += w;
        }
    }

    /// Put `se` back at its `list_seq` in `rq`'s list.
    pub(super) fn list_insert(&mut self, rq: RqId, se: SeId) {
        let e = ListEntry {
            seq: self.se[se].list_seq,
            se,
            task: self.se[se].task,
        };
        self.cfs[rq].list_edits += 1;
        let list = &mut self.cfs[rq].list;
        let at = list.partition_point(|x| x.seq < e.seq);
        list.insert(at, e);
        self.hooks.list_changed(rq, self.cfs[rq].cpu, e, true);
    }

    /// Take `se` out of `rq`'s list.
    pub(super) fn list_remove(&mut self, rq: RqId, se: SeId) {
        let seq = self.se[se].list_seq;
        self.cfs[rq].list_edits += 1;
        let list = &mut self.cfs[rq].list;
        let at = seq_position(list, seq);
        let i = match list.get(at).is_some_and(|x| x.se == se) {
            true => Some(at),
            false => list.iter().position(|x| x.se == se),
        };
        if let Some(x) = i.and_then(|i| list.remove(i)) {
            self.hooks.list_changed(rq, self.cfs[rq].cpu, x, false);
        }
    }

    /// `__dequeue_entity`.
    pub(super) fn tree_remove(&mut self, rq: RqId, se: SeId) {
        if self.timeline {
            let key = self.se[se].key;
            self.cfs[rq].tree.remove(key.0, key.1, self.se[se].slice);
        }
        if self.ordered {
            self.list_remove(rq, se);
        }
        if self.p.version == Version::Eevdf {
            let e = &self.se[se];
            let (v, w) = (e.vruntime as i128, e.w());
            self.cfs[rq].avg_vsum -= v * w as i128;
            self.cfs[rq].avg_load -= w;
        }
    }

    pub(super) fn in_tree(&self, rq: RqId, se: SeId) -> bool {
        self.cfs[rq].curr != Some(se) && self.se[se].on_rq
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    #[test]
    fn seq_position_is_the_partition_point() {
        let mut rng = crate::rng::Rng::new(11);
        for len in [0usize, 1, 2, 3, 7, 8, 9, 31, 125, 300] {
            // Start the ring buffer mid-way so that the entries wrap
            // around its end (both of its slices hold some).
            let mut list: VecDeque<ListEntry> = VecDeque::with_capacity(len);
            let cap = list.capacity();
            for _ in 0..cap / 2 {
                list.push_back(ListEntry {
                    seq: 0,
                    se: 0,
                    task: None,
                });
            }
            while list.pop_front().is_some() {}
            let mut seq = 0;
            for se in 0..len {
                seq += 1 + rng.next_u64() % 3;
                list.push_back(ListEntry {
                    seq,
                    se,
                    task: None,
                });
            }
            assert!(cap / 2 + len <= cap || !list.as_slices().1.is_empty());
            for target in 0..=seq + 2 {
                let want = list.partition_point(|x| x.seq < target);
                assert_eq!(seq_position(&list, target), want, "len {len}, seq {target}");
            }
        }
    }
}
