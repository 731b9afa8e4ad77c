//! A CPU's queued DEADLINE entities in key order: the kernel's
//! `dl_rq->root` rbtree (`__enqueue_dl_entity`, deadline.c), held as a
//! sorted vector of (key, tie-break, task).
//!
//! Why not a tree: a CPU holds few DEADLINE tasks (admission control caps
//! their total bandwidth; the global-EDF anchor has 16 on 4 CPUs, its wide
//! set 500 on 64), and for so few a binary search and a short shift cost
//! less than a B-tree's node walk and rebalancing (issue 18: 2 % fewer
//! instructions in the global-EDF anchor than with `BTreeSet`). Inserting and
//! removing are linear in the CPU's queue: with thousands of DEADLINE
//! tasks on one CPU a tree would be the better choice again.

use crate::clock::Ns;
use crate::task::TaskId;

/// (key, tie-break, task): the order of the kernel's rbtree, unique per
/// task (a task is queued once).
pub(super) type Entry = (Ns, u64, TaskId);

/// The queued entities of one CPU, ascending.
#[derive(Debug, Clone, Default)]
pub(super) struct Queue(Vec<Entry>);

impl Queue {
    /// Queue `e` (already there: nothing).
    pub(super) fn insert(&mut self, e: Entry) {
        if let Err(at) = self.0.binary_search(&e) {
            self.0.insert(at, e);
        }
    }

    /// Dequeue `e` (absent: nothing).
    pub(super) fn remove(&mut self, e: &Entry) {
        if let Ok(at) = self.0.binary_search(e) {
            self.0.remove(at);
        }
    }

    /// The leftmost entity.
    pub(super) fn first(&self) -> Option<&Entry> {
        self.0.first()
    }

    /// The entities in key order.
    pub(super) fn iter(&self) -> std::slice::Iter<'_, Entry> {
        self.0.iter()
    }

    pub(super) fn len(&self) -> usize {
        self.0.len()
    }

    pub(super) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn a_queue_is_the_btree_set_it_replaces() {
        // Scrambled inserts and removals, repeated ones included, against
        // the B-tree set the class used before.
        let (mut q, mut set) = (Queue::default(), BTreeSet::new());
        let mut x: u64 = 7;
        for _ in 0..4000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let e: Entry = ((x >> 40) % 8, (x >> 20) % 4, (x >> 33) as usize % 6);
            if x % 3 == 0 {
                q.remove(&e);
                set.remove(&e);
            } else {
                q.insert(e);
                set.insert(e);
            }
            assert_eq!(q.len(), set.len());
            assert_eq!(q.is_empty(), set.is_empty());
            assert_eq!(q.first(), set.first());
            assert!(q.iter().eq(set.iter()));
        }
    }
}
