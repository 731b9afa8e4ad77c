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
///
/// `repr(C)` with the fields a pick, a put-back and a tick read first: a
/// switch to a task that has waited behind thousands of others finds its
/// entity out of cache, and the order decides how many lines that costs
/// (issue 18, cost per event flat in tasks per CPU). The PELT signal,
/// read at enqueue, dequeue and the running entity's tick, comes last.
/// Cache-line aligned at three lines exactly: at 200 bytes an entity
/// began at any multiple of 8 within a line, so its first 128 bytes
/// (ids, flags, vruntime, deadline, slice, key, weight) took three lines
/// for seven entities in eight; aligned they take two (cachegrind, 10,000
/// hogs on 8 CPUs, 10 s: 3.4 % fewer last-level and 4.4 % fewer L1 data
/// misses, instructions +0.1 %, the same output).
#[derive(Debug, Clone)]
#[repr(C, align(64))]
pub struct Entity {
    /// Queue it is (or would be) on.
    pub cfs_rq: RqId,
    /// For group entities: the queue they represent.
    pub my_q: Option<RqId>,
    /// Parent group entity on the same CPU.
    pub parent: Option<SeId>,
    /// For task entities: the task.
    pub task: Option<TaskId>,
    /// Queued (includes current and delayed).
    pub on_rq: bool,
    /// Dequeue delayed (EEVDF DELAY_DEQUEUE).
    pub delayed: bool,
    /// SCHED_IDLE task (or idle group).
    pub idle: bool,
    /// The slice was set explicitly (custom slice, or group min slice).
    pub custom_slice: bool,
    /// `deadline` holds a relative value (PLACE_REL_DEADLINE).
    pub rel_deadline: bool,
    /// Depth in the hierarchy (root-level entities: 0; at most
    /// `MAX_GROUP_DEPTH`, 15, so a u16 holds it and it fits the first
    /// line's padding).
    pub depth: u16,
    /// Virtual runtime.
    pub vruntime: i64,
    /// Virtual deadline (EEVDF).
    pub deadline: i64,
    /// Requested slice, wall ns (EEVDF).
    pub slice: u64,
    /// Tree key while in the tree.
    pub key: (i64, u64),
    /// Weight and inverse.
    pub lw: LoadWeight,
    /// Start of the current accounting interval.
    pub exec_start: u64,
    /// Total runtime.
    pub sum_exec: u64,
    /// `sum_exec` when last picked.
    pub prev_sum_exec: u64,
    /// Saved virtual lag (EEVDF); equals `deadline` while slice-protected
    /// (6.12's marker).
    pub vlag: i64,
    /// 6.17+: the vruntime up to which the current entity is protected
    /// (`se->vprot`, `set_protect_slice`).
    pub vprot: i64,
    /// Insertion stamp of the last enqueue or put-back (reweighting keeps
    /// it): the position in the list of the CacULE/TT patches (order.rs).
    pub list_seq: u64,
    /// Load signal (weight while queued).
    pub load: Pelt,
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
            // Unweighted, as the kernel's `se->avg.load_sum`: 1 while
            // runnable; the load average is the weight times its average
            // (`Fair::se_load_avg`). A new task's starts full
            // (init_entity_runnable_average, attach_entity_load_avg).
            load: Pelt::new(now, 1),
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
    /// under a queue-ordering policy (`Fair::ordered`), else empty. A
    /// deque: picks mostly take entities queued long ago (its front),
    /// put-backs join at its back.
    pub list: std::collections::VecDeque<ListEntry>,
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
            list: Default::default(),
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
/// Stored as sorted ring buffers (chunks) of at most [`CHUNK_MAX`] entries
/// rather than a tree. Why: the hot pattern is "take one entity near the left
/// (pick), put one back further right (put_prev with a later
/// vruntime/deadline)". For the few entities a CPU usually holds that is one
/// chunk, a sorted vector, cheaper than a tree's node surgery; with a
/// thousand or more (issue 18: 10,000 tasks on 8 CPUs) one flat vector
/// would move half its entries per insert, a chunk at most `CHUNK_MAX`.
/// Lookup is a binary search over the chunks' first keys, then within one
/// chunk. Key and sequence are packed into one i128 so each compare is one
/// integer compare.
#[derive(Debug, Clone, Default)]
pub struct Timeline {
    /// The leftmost chunk: the whole queue unless it outgrew [`CHUNK_MAX`],
    /// so small queues cost what one ring buffer costs.
    head: Chunk,
    /// Further chunks in key order, each non-empty; empty while `head`
    /// holds everything.
    more: VecDeque<Chunk>,
    /// The first key of each chunk of `more` (searched without touching
    /// the chunks' buffers).
    firsts: VecDeque<i128>,
    len: usize,
}

/// One timeline entry: the packed (key, seq), the entity, and the vruntime
/// it was queued with (which does not change while it is queued).
#[derive(Debug, Clone, Copy)]
struct Entry {
    k: i128,
    se: SeId,
    v: i64,
}

/// One sorted ring buffer of entries with a lower bound of their
/// vruntimes (exact after an insert or a split; removals leave it) and the
/// slices it holds: the kernel's augmented rbtree (`min_vruntime_cb`, 6.6+,
/// and `se->min_slice`, 6.12+), here per chunk. A chunk whose bound is not
/// eligible holds no eligible entity
/// ([`Timeline::find_first_v`]); the queue's smallest and largest slice
/// are a look at each chunk's ([`Timeline::slice_range`]).
#[derive(Debug, Clone)]
struct Chunk {
    q: VecDeque<Entry>,
    min_v: i64,
    /// (slice, entries with it): a queue holds few distinct slices (one,
    /// the base slice, unless tasks set their own), so this stays tiny and
    /// the entries stay 32 bytes.
    slices: Vec<(u64, u32)>,
}

impl Default for Chunk {
    fn default() -> Self {
        Chunk {
            q: VecDeque::new(),
            min_v: i64::MAX,
            slices: Vec::new(),
        }
    }
}

impl Chunk {
    fn add_slice(&mut self, slice: u64) {
        match self.slices.iter_mut().find(|s| s.0 == slice) {
            Some(s) => s.1 += 1,
            None => self.slices.push((slice, 1)),
        }
    }

    fn remove_slice(&mut self, slice: u64) {
        if let Some(i) = self.slices.iter().position(|s| s.0 == slice) {
            self.slices[i].1 -= 1;
            if self.slices[i].1 == 0 {
                self.slices.swap_remove(i);
            }
        }
    }

    fn recompute_min(&mut self) {
        self.min_v = self.q.iter().map(|e| e.v).min().unwrap_or(i64::MAX);
    }

    /// Keep the slices after an entry queued with `slice` left this chunk.
    /// `min_v` stays what it was: a lower bound of the chunk's vruntimes is
    /// all `Timeline::find_first_v` needs to skip a chunk (a chunk is
    /// skipped only if even its bound fails), and rescanning the chunk at
    /// every removal of its smallest (each pick, with equal slices) cost
    /// more than the occasional needless scan. Splits recompute it, and a
    /// search that scans the chunk through makes it exact.
    fn removed(&mut self, slice: u64) {
        self.remove_slice(slice);
        if self.q.is_empty() {
            self.min_v = i64::MAX;
        }
    }
}

/// A chunk that grows past this is split in two.
const CHUNK_MAX: usize = 64;

impl Timeline {
    fn pack(key: i64, seq: u64) -> i128 {
        ((key as i128) << 64) | seq as i128
    }

    /// Logical chunk `i` (0: `head`).
    fn chunk_mut(&mut self, i: usize) -> &mut Chunk {
        match i {
            0 => &mut self.head,
            _ => &mut self.more[i - 1],
        }
    }

    /// The chunk that holds, or would hold, `k`: the last whose first key is
    /// at most `k` (the head for keys before every chunk).
    fn chunk_for(&self, k: i128) -> usize {
        self.firsts.partition_point(|f| *f <= k)
    }

    /// Insert `se` at (key, seq), queued with vruntime `v` and `slice`
    /// (neither may change while it is queued); (key, seq) must be unique.
    /// `slice_of` gives a queued entity's slice (read when a chunk splits).
    pub fn insert(
        &mut self,
        (key, seq): (i64, u64),
        se: SeId,
        v: i64,
        slice: u64,
        slice_of: impl Fn(SeId) -> u64,
    ) {
        let k = Self::pack(key, seq);
        let e = Entry { k, se, v };
        self.len += 1;
        let ci = if self.more.is_empty() {
            0
        } else {
            self.chunk_for(k)
        };
        let chunk = self.chunk_mut(ci);
        chunk.min_v = chunk.min_v.min(v);
        chunk.add_slice(slice);
        if chunk.q.back().is_none_or(|b| b.k < k) {
            // Common case: a put-back entity with the latest key of its chunk.
            chunk.q.push_back(e);
        } else {
            let at = chunk.q.partition_point(|x| x.k < k);
            chunk.q.insert(at, e);
        }
        if chunk.q.len() > CHUNK_MAX {
            self.split(ci, slice_of);
        }
    }

    /// Split chunk `ci`, past [`CHUNK_MAX`], in two.
    fn split(&mut self, ci: usize, slice_of: impl Fn(SeId) -> u64) {
        let chunk = self.chunk_mut(ci);
        let mut upper = Chunk {
            q: chunk.q.split_off(CHUNK_MAX / 2),
            ..Chunk::default()
        };
        if let [(slice, count)] = chunk.slices[..] {
            // One slice throughout (the usual: every entity at the base
            // slice): each half's count is its length, and no entity is
            // read. Why: with thousands queued each read was a cache miss,
            // 32 of them a split (issue 18, 10,000 hogs on 8 CPUs,
            // cachegrind: 3.7 % of the last-level misses).
            let moved = upper.q.len() as u32;
            chunk.slices[0].1 = count - moved;
            upper.slices.push((slice, moved));
        } else {
            for i in 0..upper.q.len() {
                let slice = slice_of(upper.q[i].se);
                chunk.remove_slice(slice);
                upper.add_slice(slice);
            }
        }
        chunk.recompute_min();
        upper.recompute_min();
        self.firsts.insert(ci, upper.q[0].k);
        self.more.insert(ci, upper);
    }

    /// Remove the entity at (key, seq), queued with `slice`.
    pub fn remove(&mut self, key: i64, seq: u64, slice: u64) -> Option<SeId> {
        let k = Self::pack(key, seq);
        if self.head.q.front().is_some_and(|e| e.k == k) {
            // Common case: the leftmost entity is picked.
            let e = self.head.q.pop_front()?;
            self.head.removed(slice);
            self.after_removal(0);
            return Some(e.se);
        }
        let ci = if self.more.is_empty() {
            0
        } else {
            self.chunk_for(k)
        };
        let chunk = self.chunk_mut(ci);
        let at = chunk.q.partition_point(|e| e.k < k);
        if chunk.q.get(at).is_none_or(|e| e.k != k) {
            return None;
        }
        let e = chunk.q.remove(at)?;
        chunk.removed(slice);
        if at == 0 && ci > 0 {
            if let Some(f) = self.more[ci - 1].q.front() {
                self.firsts[ci - 1] = f.k;
            }
        }
        self.after_removal(ci);
        Some(e.se)
    }

    /// Drop chunk `ci` if the removal emptied it (the head is refilled from
    /// the next chunk; an empty head is kept, its buffer reused).
    fn after_removal(&mut self, ci: usize) {
        self.len -= 1;
        if ci > 0 {
            if self.more[ci - 1].q.is_empty() {
                self.more.remove(ci - 1);
                self.firsts.remove(ci - 1);
            }
        } else if self.head.q.is_empty() && !self.more.is_empty() {
            // A queue that drains from the left (every pick) moves on one
            // chunk at a time: O(1), not a shift of every later chunk.
            self.head = self.more.pop_front().unwrap_or_default();
            self.firsts.pop_front();
        }
    }

    /// The chunks in key order.
    fn chunks(&self) -> impl Iterator<Item = &Chunk> + '_ {
        std::iter::once(&self.head).chain(self.more.iter())
    }

    /// Leftmost entity.
    pub fn first(&self) -> Option<SeId> {
        self.head.q.front().map(|e| e.se)
    }

    /// Entities in key order.
    pub fn iter(&self) -> impl Iterator<Item = SeId> + '_ {
        self.chunks().flat_map(|c| c.q.iter()).map(|e| e.se)
    }

    /// The first entity in key order whose queued vruntime `ok` accepts,
    /// `ok` monotone (false for a value ⇒ false for every larger one): a
    /// chunk whose smallest vruntime fails is skipped whole. The pick's
    /// eligibility scan (`vruntime ≤ V`) reads the vruntime kept in the
    /// entry, not the entity. A chunk scanned to its end without a match
    /// leaves with its exact smallest vruntime as its bound (removals
    /// leave a looser one), so it is skipped next time.
    pub fn find_first_v(&mut self, ok: impl Fn(i64) -> bool) -> Option<SeId> {
        let more = self.more.iter_mut();
        for c in std::iter::once(&mut self.head).chain(more) {
            if !ok(c.min_v) {
                continue;
            }
            let mut min = i64::MAX;
            for e in &c.q {
                if ok(e.v) {
                    return Some(e.se);
                }
                min = min.min(e.v);
            }
            c.min_v = min;
        }
        None
    }

    /// The smallest and the largest slice queued (None: empty).
    pub fn slice_range(&self) -> Option<(u64, u64)> {
        self.chunks()
            .flat_map(|c| c.slices.iter())
            .map(|s| (s.0, s.0))
            .reduce(|a, b| (a.0.min(b.0), a.1.max(b.1)))
    }

    /// Entities strictly after (key, seq), in key order.
    pub fn after(&self, key: i64, seq: u64) -> impl Iterator<Item = SeId> + '_ {
        let k = Self::pack(key, seq);
        let ci = self.chunk_for(k);
        let chunk = if ci == 0 {
            &self.head
        } else {
            &self.more[ci - 1]
        };
        let at = chunk.q.partition_point(|e| e.k <= k);
        chunk
            .q
            .range(at..)
            .chain(self.more.iter().skip(ci).flat_map(|c| c.q.iter()))
            .map(|e| e.se)
    }

    /// Number of entities.
    pub fn len(&self) -> usize {
        self.len
    }

    /// No entities.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Each chunk's first key and slices are those of its entries and its
    /// vruntime bound is at most their smallest, `slice_of` giving each
    /// entity's (invariant checks).
    pub fn check_aug(&self, slice_of: impl Fn(SeId) -> u64) -> bool {
        let firsts: VecDeque<i128> = self.more.iter().map(|c| c.q[0].k).collect();
        firsts == self.firsts
            && self.chunks().all(|c| {
                let mut fresh = Chunk {
                    q: c.q.clone(),
                    ..Chunk::default()
                };
                fresh.recompute_min();
                for e in &c.q {
                    fresh.add_slice(slice_of(e.se));
                }
                let (mut a, mut b) = (fresh.slices, c.slices.clone());
                a.sort_unstable();
                b.sort_unstable();
                c.min_v <= fresh.min_v && a == b
            })
    }

    /// (entity, vruntime it was queued with), in key order.
    pub fn iter_kept(&self) -> impl Iterator<Item = (SeId, i64)> + '_ {
        self.chunks().flat_map(|c| c.q.iter()).map(|e| (e.se, e.v))
    }
}

#[cfg(test)]
mod tests {
    use super::{Entity, Timeline};
    use std::mem::{align_of, offset_of, size_of};

    /// An entity fills three whole cache lines, and what a pick reads of
    /// the entity it chose (its flags, its queue) sits in the first.
    #[test]
    fn an_entity_is_three_aligned_cache_lines() {
        assert_eq!(size_of::<Entity>(), 192);
        assert_eq!(align_of::<Entity>(), 64);
        assert!(offset_of!(Entity, depth) < 64 && offset_of!(Entity, delayed) < 64);
        assert_eq!(offset_of!(Entity, vruntime), 64);
    }

    #[test]
    fn timeline_orders_by_key_then_sequence() {
        let mut t = Timeline::default();
        let one = |_| 1;
        t.insert((5, 1), 10, 0, 1, one);
        t.insert((-3, 2), 11, 0, 1, one);
        t.insert((5, 3), 12, 0, 1, one);
        t.insert((0, 4), 13, 0, 1, one);
        assert_eq!(t.iter().collect::<Vec<_>>(), vec![11, 13, 10, 12]);
        assert_eq!(t.after(5, 1).collect::<Vec<_>>(), vec![12]);
        assert_eq!(t.remove(5, 1, 1), Some(10));
        assert_eq!(t.remove(5, 1, 1), None);
        assert_eq!(t.first(), Some(11));
        assert_eq!(t.len(), 3);
    }

    #[test]
    fn timeline_matches_a_sorted_list_across_chunk_splits() {
        // Insert and remove in a scrambled order, far past one chunk, and
        // compare every view with a plain sorted list; the search by
        // augmented value (skipping chunks by their smallest) finds what a
        // plain scan finds.
        let mut t = Timeline::default();
        let mut model: Vec<(i64, u64, usize, i64, u64)> = vec![];
        let mut x: u64 = 12345;
        for i in 0..3000usize {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let key = (x >> 33) as i64 % 500 - 250;
            if x % 3 == 0 && !model.is_empty() {
                let (k, s, se, _, sl) = model.remove((x >> 7) as usize % model.len());
                assert_eq!(t.remove(k, s, sl), Some(se));
                assert_eq!(t.remove(k, s, sl), None);
            } else {
                let aug = (x >> 40) as i64 % 1000;
                // Few distinct slices, as on a real queue: one alone for
                // the first half (a split's shortcut), then four.
                let slice = 1 + (x >> 50) % if i < 1500 { 1 } else { 4 };
                let slices: Vec<(usize, u64)> = model.iter().map(|m| (m.2, m.4)).collect();
                let slice_of = |se: usize| slices.iter().find(|m| m.0 == se).map_or(slice, |m| m.1);
                t.insert((key, i as u64), i, aug, slice, slice_of);
                model.push((key, i as u64, i, aug, slice));
            }
            model.sort();
            assert_eq!(t.len(), model.len());
            assert_eq!(t.first(), model.first().map(|m| m.2));
            assert!(t.check_aug(|se| model.iter().find(|m| m.2 == se).map_or(0, |m| m.4)));
            let thr = (x >> 20) as i64 % 1000 - 100;
            assert_eq!(
                t.find_first_v(|a| a <= thr),
                model.iter().find(|m| m.3 <= thr).map(|m| m.2)
            );
            let slices = model.iter().map(|m| m.4);
            assert_eq!(t.slice_range(), slices.clone().min().zip(slices.max()));
            if i % 97 == 0 {
                let all: Vec<usize> = model.iter().map(|m| m.2).collect();
                assert_eq!(t.iter().collect::<Vec<_>>(), all);
                for probe in [0usize, model.len() / 2, model.len().saturating_sub(1)] {
                    if let Some(&(k, s, _, _, _)) = model.get(probe) {
                        let after: Vec<usize> = model[probe + 1..].iter().map(|m| m.2).collect();
                        assert_eq!(t.after(k, s).collect::<Vec<_>>(), after);
                    }
                }
            }
        }
    }
}
