//! Scheduling entities and fair run queues (`struct sched_entity`,
//! `struct cfs_rq`), linux-cfs.md §1 and linux-eevdf.md §1.
//!
//! The running entity is not in the tree (`set_next_entity` removes it).
//! The tree is keyed by vruntime (CFS) or virtual deadline (EEVDF 6.12),
//! with an insertion sequence so equal keys keep FIFO order ("ties go to the
//! right"). EEVDF's `avg_vruntime`/`avg_load` sums cover tree entities only;
//! the current entity is added on the fly.

use super::weights::LoadWeight;
use crate::pelt::Pelt;
use crate::task::TaskId;
use std::collections::VecDeque;

/// Index into `Fair::se`.
pub type SeId = usize;
/// Index into `Fair::cfs`.
pub type RqId = usize;

/// A task or group scheduling entity.
#[derive(Debug, Clone)]
pub struct Entity {
    /// Weight and inverse.
    pub lw: LoadWeight,
    /// Virtual runtime.
    pub vruntime: i64,
    /// Virtual deadline (EEVDF).
    pub deadline: i64,
    /// Requested slice, wall ns (EEVDF).
    pub slice: u64,
    /// The slice was set explicitly (custom slice, or group min slice).
    pub custom_slice: bool,
    /// Saved virtual lag (EEVDF); equals `deadline` while slice-protected
    /// (6.12's marker).
    pub vlag: i64,
    /// 6.17+: the vruntime up to which the current entity is protected
    /// (`se->vprot`, `set_protect_slice`).
    pub vprot: i64,
    /// `deadline` holds a relative value (PLACE_REL_DEADLINE).
    pub rel_deadline: bool,
    /// Dequeue delayed (EEVDF DELAY_DEQUEUE).
    pub delayed: bool,
    /// Total runtime.
    pub sum_exec: u64,
    /// `sum_exec` when last picked.
    pub prev_sum_exec: u64,
    /// Start of the current accounting interval.
    pub exec_start: u64,
    /// Queued (includes current and delayed).
    pub on_rq: bool,
    /// Queue it is (or would be) on.
    pub cfs_rq: RqId,
    /// Parent group entity on the same CPU.
    pub parent: Option<SeId>,
    /// For group entities: the queue they represent.
    pub my_q: Option<RqId>,
    /// For task entities: the task.
    pub task: Option<TaskId>,
    /// Depth in the hierarchy (root-level entities: 0).
    pub depth: u32,
    /// Tree key while in the tree.
    pub key: (i64, u64),
    /// Insertion stamp of the last enqueue or put-back (reweighting keeps
    /// it): the position in the list of the CacULE/TT patches (order.rs).
    pub list_seq: u64,
    /// Load signal (weight while queued).
    pub load: Pelt,
    /// SCHED_IDLE task (or idle group).
    pub idle: bool,
}

impl Entity {
    /// A fresh entity.
    pub fn new(lw: LoadWeight, cfs_rq: RqId, now: u64) -> Self {
        Entity {
            lw,
            vruntime: 0,
            deadline: 0,
            slice: 0,
            custom_slice: false,
            vlag: 0,
            vprot: 0,
            rel_deadline: false,
            delayed: false,
            sum_exec: 0,
            prev_sum_exec: 0,
            exec_start: now,
            on_rq: false,
            cfs_rq,
            parent: None,
            my_q: None,
            task: None,
            depth: 0,
            key: (0, 0),
            list_seq: 0,
            load: Pelt::new(now, lw.weight),
            idle: false,
        }
    }

    /// Weight.
    pub fn w(&self) -> u64 {
        self.lw.weight
    }
}

/// A fair run queue: the root queue of a CPU or a group's queue on a CPU.
#[derive(Debug, Clone)]
pub struct CfsRq {
    /// CPU.
    pub cpu: usize,
    /// Task group (0 = root).
    pub group: usize,
    /// Queued entities except current, by (key, seq).
    pub tree: Timeline,
    /// The same entities by `Entity::list_seq`, oldest first: the list of
    /// the CacULE/TT patches read from the back (order.rs). Kept only
    /// under a queue-ordering policy (`Fair::ordered`), else empty.
    pub list: Vec<ListEntry>,
    /// Counts removals from `list` and insertions other than at its head.
    pub list_edits: u64,
    /// The last key scan of `list` (order.rs).
    pub scan_memo: Option<ScanMemo>,
    /// Entity running at this level.
    pub curr: Option<SeId>,
    /// Sum of weights of queued entities including current (`load.weight`).
    pub load: u64,
    /// Queued entities including current and delayed (`nr_running`).
    pub nr_running: u32,
    /// Runnable tasks in this hierarchy (delayed ones excluded).
    pub h_nr_running: u32,
    /// Monotonic minimum vruntime (CFS).
    pub min_vruntime: i64,
    /// Σ v·w over tree entities (EEVDF, v0 = 0; i128 cannot overflow).
    pub avg_vsum: i128,
    /// Σ w over tree entities (EEVDF).
    pub avg_load: u64,
    /// Last V computed while non-empty: V of an empty queue (EEVDF).
    pub last_v: i64,
    /// Next buddy.
    pub next: Option<SeId>,
    /// Last buddy (CFS).
    pub last: Option<SeId>,
    /// Skip buddy (CFS yield).
    pub skip: Option<SeId>,
    /// PELT of `load` (cfs_rq->avg.load_avg).
    pub pelt: Pelt,
    /// This queue's contribution to its group's load_avg.
    pub tg_contrib: i64,
}

impl CfsRq {
    /// An empty queue.
    pub fn new(cpu: usize, group: usize) -> Self {
        CfsRq {
            cpu,
            group,
            tree: Timeline::default(),
            list: vec![],
            list_edits: 0,
            scan_memo: None,
            curr: None,
            load: 0,
            nr_running: 0,
            h_nr_running: 0,
            min_vruntime: 0,
            avg_vsum: 0,
            avg_load: 0,
            last_v: 0,
            next: None,
            last: None,
            skip: None,
            pelt: Pelt::default(),
            tg_contrib: 0,
        }
    }

    /// Leftmost queued entity.
    pub fn first(&self) -> Option<SeId> {
        self.tree.first()
    }
}

/// An entry of `CfsRq::list`: what the pick's scan reads of an entity
/// without touching the entity itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListEntry {
    /// `Entity::list_seq`.
    pub seq: u64,
    /// The entity.
    pub se: SeId,
    /// Its task (None: a group entity).
    pub task: Option<crate::task::TaskId>,
}

/// The outcome of a key scan of a whole `CfsRq::list` (order.rs): at
/// `now`, with the policy's order generation `gen` and `list_edits` at
/// `edits`, the first of `list[..len]` (scanned from the back) with the
/// lowest key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScanMemo {
    /// Time of the scan.
    pub now: u64,
    /// `FairHooks::order_generation` then.
    pub gen: u64,
    /// `CfsRq::list_edits` then.
    pub edits: u64,
    /// Entries scanned.
    pub len: usize,
    /// The winner and its key (None: nothing scanned).
    pub best: Option<(u64, SeId)>,
}

/// The ordered queue of a fair run queue (the kernel's `tasks_timeline`
/// rbtree): entities by (key, insertion sequence), so equal keys keep FIFO
/// order.
///
/// Stored as a sorted ring buffer rather than a tree. Why: the hot pattern
/// is "take one entity near the left (pick), put one back near the right
/// (put_prev with a later vruntime/deadline)", and a ring buffer does both
/// by shifting only the shorter side, which for the queue lengths seen per
/// CPU (up to a few hundred) is several times cheaper than a B-tree's node
/// surgery. Lookup is a binary search, so the worst case (an insert in the
/// middle of a queue of n) is O(log n) compares plus an O(n) memmove.
/// Key and sequence are packed into one i128 so each compare is one integer
/// compare.
#[derive(Debug, Clone, Default)]
pub struct Timeline {
    q: VecDeque<(i128, SeId)>,
}

impl Timeline {
    fn pack(key: i64, seq: u64) -> i128 {
        ((key as i128) << 64) | seq as i128
    }

    /// Insert `se` at (key, seq); (key, seq) must be unique.
    pub fn insert(&mut self, key: i64, seq: u64, se: SeId) {
        let k = Self::pack(key, seq);
        if self.q.back().is_none_or(|e| e.0 < k) {
            // Common case: a put-back entity with the latest key.
            self.q.push_back((k, se));
            return;
        }
        let at = self.q.partition_point(|e| e.0 < k);
        self.q.insert(at, (k, se));
    }

    /// Remove the entity at (key, seq).
    pub fn remove(&mut self, key: i64, seq: u64) -> Option<SeId> {
        let k = Self::pack(key, seq);
        if self.q.front().is_some_and(|e| e.0 == k) {
            // Common case: the leftmost entity is picked.
            return self.q.pop_front().map(|e| e.1);
        }
        let at = self.q.partition_point(|e| e.0 < k);
        match self.q.get(at) {
            Some(e) if e.0 == k => self.q.remove(at).map(|e| e.1),
            _ => None,
        }
    }

    /// Leftmost entity.
    pub fn first(&self) -> Option<SeId> {
        self.q.front().map(|e| e.1)
    }

    /// Entities in key order.
    pub fn iter(&self) -> impl Iterator<Item = SeId> + '_ {
        self.q.iter().map(|e| e.1)
    }

    /// Entities strictly after (key, seq), in key order.
    pub fn after(&self, key: i64, seq: u64) -> impl Iterator<Item = SeId> + '_ {
        let k = Self::pack(key, seq);
        let at = self.q.partition_point(|e| e.0 <= k);
        self.q.range(at..).map(|e| e.1)
    }

    /// Number of entities.
    pub fn len(&self) -> usize {
        self.q.len()
    }

    /// No entities.
    pub fn is_empty(&self) -> bool {
        self.q.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::Timeline;

    #[test]
    fn timeline_orders_by_key_then_sequence() {
        let mut t = Timeline::default();
        t.insert(5, 1, 10);
        t.insert(-3, 2, 11);
        t.insert(5, 3, 12);
        t.insert(0, 4, 13);
        assert_eq!(t.iter().collect::<Vec<_>>(), vec![11, 13, 10, 12]);
        assert_eq!(t.after(5, 1).collect::<Vec<_>>(), vec![12]);
        assert_eq!(t.remove(5, 1), Some(10));
        assert_eq!(t.remove(5, 1), None);
        assert_eq!(t.first(), Some(11));
        assert_eq!(t.len(), 3);
    }
}
