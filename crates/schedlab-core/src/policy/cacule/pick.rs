//! CacULE's pick without scoring every queued entity, with the scan's
//! result (`FairHooks::order_first`; the fair class's debug builds check
//! every answer against the full scan).
//!
//! The patch scores every entity of the list at each pick and tick. A
//! queued entity's score is IS + cache + starve (policy/cacule.rs), and
//! while it waits:
//! * its node does not change (nodes change only for the running entity,
//!   at enqueue, at a pick and at an RDB move, and each such change
//!   re-indexes the entity here: `CacUle::retouch`);
//! * its IS only falls as its life grows (fast.rs, `IsMemo`), so IS at a
//!   later time `horizon` bounds it from below until then;
//! * `exec_start` is 0 or equal to `last_run` (both are set to now
//!   together; migration and fork zero `exec_start`), and the cache term
//!   grows with the time since `exec_start`, so with t = now − last_run
//!   the cache term is at least `cache(t)`; the starvation term is
//!   exactly `starve(t)`.
//!
//! So from a time `now` up to `horizon`, an entity that last ran at
//! `last_run` scores at least K = IS(horizon) + g(horizon − last_run),
//! where g(T) is the least cache + starve over t in [0, T] (cacule/ftable.rs).
//! Each queue keeps its entities by K (recomputed for all of them when the
//! horizon passes: the lowest `SORTED_PREFIX` in order, the others behind
//! them unsorted with their least K known, sorted only if a scan gets
//! there), those that joined since in a short unsorted list (K computed as
//! they join); the pick scores entities in K order and stops at the first
//! whose K exceeds the best score so far (it cannot score lower, nor equal
//! to win on list order), then scores the joined ones whose K does not
//! exceed it. A leaving entity's slot is marked dead
//! and its entry skipped until the next re-keying or compaction drops it.
//! Entities whose `exec_start` is after their `last_run` (none, by the
//! rules above, but the bound would not hold) get the bound 0 and are
//! always scored. In the bench workload (125 entities per CPU) a pick
//! scores a few entities instead of 125.

use super::fast::{is_and_last_life, FastTerms};
use super::ftable::FTable;
use super::{CacUle, Factors};
use crate::class::fair::entity::{ListEntry, RqId, SeId};
use crate::class::fair::hooks::EntityRef;
use crate::clock::{Ns, MSEC};
use crate::machine::Machine;
use crate::task::TaskId;
use std::collections::VecDeque;

/// How far ahead a queue's IS bound holds: longer means fewer rebuilds
/// (one IS per entity and a re-sort) but a looser bound (more entities
/// scored per scan). On the bench workload 32 ms measured best while every
/// task had its own autogroup (equal group weights); with tasks of every
/// nice level in one queue, whose bounds reorder more between horizons,
/// 48 ms is 4 % quicker than 32 and on a par with 64 (96 misses more).
const LB_HORIZON: Ns = 48 * MSEC;

/// Dead entries beyond the live ones an index may hold before a join drops
/// them (an index that is also read re-keys earlier: `RESCAN_SLACK`).
pub(super) const COMPACT_SLACK: usize = 64;

/// Dead entries beyond the live ones a scan (or the balancer's search)
/// reads past before it re-keys ahead of its horizon.
pub(super) const RESCAN_SLACK: usize = 16;

/// Whether an index of `entries` entries, `live` of them current, holds
/// more than `slack` dead ones beyond the live.
pub(super) fn crowded(entries: usize, live: usize, slack: usize) -> bool {
    entries > 2 * live + slack
}

/// Below this many entities the fair class's scan is as cheap.
const MIN_INDEXED: usize = 12;

/// An indexed entity in its queue's order: its bound K in the high 32 bits
/// and its slot in the queue's slab in the low 32 (8 bytes: the order is
/// rebuilt at each horizon, and a shift moves one word).
/// Entities with equal bounds sort by slot; the scan reads every entry of
/// a run of equal bounds or none of it, so their order cannot change an
/// answer. K is below 2^31 wherever the pick is indexed (`ftable`: every
/// score is), and a bound lowered to fit stays a lower bound.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
struct IdxEnt(u64);

impl IdxEnt {
    fn new(key: u64, slot: u32) -> Self {
        IdxEnt((key.min(u64::from(u32::MAX)) << 32) | u64::from(slot))
    }

    /// The bound K (while its queue's horizon holds; 0: none).
    fn key(self) -> u64 {
        self.0 >> 32
    }

    /// Its `BoundIn` in the queue's slab.
    fn slot(self) -> u32 {
        self.0 as u32
    }
}

/// What the bound and the score of a listed entity read of its node
/// (which does not change while it is listed), kept in its queue's slab
/// so that a horizon's re-keying and a scan read one small array, never
/// the nodes (64 bytes, aligned: one cache line, where a slot straddling
/// two lines had cost a second miss in half the reads).
#[derive(Debug, Clone, Copy)]
#[repr(align(64))]
struct BoundIn {
    start_time: u64,
    vruntime: u64,
    last_run: u64,
    exec_start: u64,
    /// An IS memo for this vruntime (lives `memo_lo..=memo_hi` have IS
    /// `memo_val`; empty when `memo_lo > memo_hi`): the node's at the
    /// join, then refilled by the scan (not handed back to the node: that
    /// measured slower).
    memo_lo: u64,
    memo_hi: u64,
    memo_val: u32,
    /// Its task, or `u32::MAX` for a group entity.
    task: u32,
    /// Its list position (`ListEntry::seq`); `DEAD` once the entity
    /// left (the slot is not reused before the next re-keying).
    seq: u64,
}

impl BoundIn {
    fn entity(&self, se: u32) -> EntityRef {
        EntityRef {
            se: se as SeId,
            task: (self.task != u32::MAX).then_some(self.task as TaskId),
            is_curr: false,
        }
    }

    /// `last_run` where the bound holds (`exec_start` not after it).
    fn bounded_last_run(&self) -> Option<u64> {
        (self.exec_start <= self.last_run).then_some(self.last_run)
    }

    /// IS at `life`, from the memo or computed and memoised.
    #[inline]
    fn is_at(&mut self, life: u64, m: u32) -> u32 {
        if self.memo_lo <= life && life <= self.memo_hi {
            return self.memo_val;
        }
        let (val, hi) = is_and_last_life(life, self.vruntime, m);
        (self.memo_lo, self.memo_hi, self.memo_val) = (life, hi, val);
        val
    }
}

/// Sorts `v` by `key` in place, by insertion: both indexes re-sort their
/// bounds at each horizon, and bounds keep most of their order from one
/// horizon to the next (here, entities with the same IS keep their order
/// by `last_run`, g being one non-increasing function; in cand.rs, IS
/// changes rarely), so the few inversions make this cheaper than a
/// general sort.
pub(super) fn insertion_sort_by_key<T: Copy, K: Ord>(v: &mut [T], key: impl Fn(&T) -> K) {
    for i in 1..v.len() {
        let x = v[i];
        let mut j = i;
        while j > 0 && key(&v[j - 1]) > key(&x) {
            v[j] = v[j - 1];
            j -= 1;
        }
        v[j] = x;
    }
}

/// Sorts `kept` (in order but for what changed since it was sorted: by
/// insertion) and `joined` (in no order: by a general sort) by `key`, and
/// merges `joined` into `kept`. Appending the joined entries to the
/// insertion sort instead would move each of them across half the list.
/// Among equal keys the merge puts a kept entry first, and the general
/// sort leaves equal keys in some order: callers whose answers must not
/// depend on that order key by distinct values (cand.rs) or read every
/// entry of a run of equal keys or none of it.
pub(super) fn sort_and_merge<T: Copy, K: Ord>(
    kept: &mut Vec<T>,
    joined: &mut Vec<T>,
    key: impl Fn(&T) -> K,
) {
    insertion_sort_by_key(kept, &key);
    if joined.is_empty() {
        return;
    }
    joined.sort_unstable_by_key(&key);
    // Merge from the back, in place: entries of `kept` below every joined
    // one do not move.
    let (mut i, mut j) = (kept.len(), joined.len());
    kept.extend_from_slice(joined);
    let mut k = kept.len();
    while j > 0 {
        k -= 1;
        if i > 0 && key(&kept[i - 1]) > key(&joined[j - 1]) {
            i -= 1;
            kept[k] = kept[i];
        } else {
            j -= 1;
            kept[k] = joined[j];
        }
    }
    joined.clear();
}

/// Entries a re-keying puts in order at the front of a queue's index; the
/// rest wait unsorted until a scan needs them ([`bounded_sort`]).
const SORTED_PREFIX: usize = 32;

/// Orders the `cap` lowest entries of `v` at its front and leaves the rest
/// behind them in no order, each at least the front's largest: returns
/// the front's length and the least entry behind it (`u64::MAX` if none):
/// a selection, then an insertion sort of the front. A pick's scan reads a
/// few entries from the front (in the bench run one re-keying in 150
/// reaches the rest before the next); sorting every entry by insertion, as
/// the re-keying did, cost about 4.5 mispredicted-branch-bound shifts an
/// entry there, whose bounds reorder between horizons (tasks of every nice
/// level in one queue): this is 4 % quicker for more instructions.
fn bounded_sort(v: &mut [IdxEnt], cap: usize) -> (usize, IdxEnt) {
    if v.len() <= cap {
        insertion_sort_by_key(v, |y| *y);
        return (v.len(), IdxEnt(u64::MAX));
    }
    v.select_nth_unstable(cap);
    let tail_min = v[cap];
    insertion_sort_by_key(&mut v[..cap], |y| *y);
    (cap, tail_min)
}

/// The best entity of a scan so far: (key, seq, entity).
type Best = (u64, u64, SeId);

/// Whether an entity with key `k`, listed at `seq`, wins over `best`: the
/// scan's order (the lowest key; among equal keys the entity queued last).
fn beats(k: u64, seq: u64, best: Option<Best>) -> bool {
    best.is_none_or(|(bk, bs, _)| k < bk || (k == bk && seq > bs))
}

/// `BoundIn::seq` of a slot whose entity left.
const DEAD: u64 = u64::MAX;

/// One queue's entities by K: `ents` sorted at the last re-keying,
/// `joined` since then in no order. Leaving costs nothing: an entry whose
/// slot is marked dead is skipped, and dropped at the next re-keying or
/// compaction. A pick takes an entity and puts the previous one back, so
/// each switch would otherwise shift two sorted entries; a scan reads the
/// sorted prefix up to the best score, then the few joined entries whose
/// bound does not exceed it.
#[derive(Debug, Clone, Default)]
pub(super) struct RqIndex {
    /// Sorted by key while `sorted` (else keys stale).
    ents: Vec<IdxEnt>,
    /// Joined since the last re-keying, keyed at the current horizon.
    joined: Vec<IdxEnt>,
    /// The bound inputs of every entry, by `IdxEnt::slot`.
    slab: Vec<BoundIn>,
    /// The entity of every slot (beside the slab, whose line is full).
    slot_se: Vec<u32>,
    /// Slots of `slab` free for reuse: those of the entries a compaction
    /// dropped (a slot left behind by a leave is not reused before, so a
    /// stale entry never matches a current one).
    free: Vec<u32>,
    /// Entries that are current (the others were left behind by leaves):
    /// when they are outnumbered ([`crowded`]), a join compacts and a scan
    /// re-keys.
    live: usize,
    /// The keys hold until then.
    horizon: u64,
    sorted: bool,
    /// `ents[..sorted_len]` is in order and holds the lowest keys; the
    /// rest, its tail, is in no order, every key in it at least the
    /// prefix's and at least `tail_min`; a scan that reaches the tail
    /// sorts it ([`bounded_sort`]).
    sorted_len: usize,
    tail_min: IdxEnt,
    /// The last answer without `except`: (time, best (key, seq, se)),
    /// kept while nothing but joins changed the list at that time (the
    /// tick's check and the pick after it, with the previous entity put
    /// back in between, see the same entities at the same time).
    memo: Option<(u64, Option<Best>)>,
    /// Indexed at all: a queue is indexed from its first pick with at
    /// least `MIN_INDEXED` entities until a pick finds fewer (a task's own
    /// autogroup queue never is).
    active: bool,
}

impl RqIndex {
    /// Not indexed, empty (keeping its buffers for the next time the queue
    /// grows).
    fn clear(&mut self) {
        self.ents.clear();
        self.joined.clear();
        self.slab.clear();
        self.slot_se.clear();
        self.free.clear();
        self.live = 0;
        self.horizon = 0;
        self.sorted = false;
        self.sorted_len = 0;
        self.tail_min = IdxEnt(u64::MAX);
        self.memo = None;
        self.active = false;
    }

    /// Drops the entries whose slot is dead, freeing their slots, and hands
    /// each kept entry with its slot to `kept` (a compaction keeps their
    /// keys, a re-keying bounds them anew in the same pass).
    fn retain_live(&mut self, mut kept: impl FnMut(&mut IdxEnt, &BoundIn)) {
        let (slab, free) = (&self.slab, &mut self.free);
        let mut live = |y: &mut IdxEnt| {
            let b = &slab[y.slot() as usize];
            if b.seq == DEAD {
                free.push(y.slot());
                return false;
            }
            kept(y, b);
            true
        };
        // Entries of the sorted prefix seen, and kept (a compaction keeps
        // the prefix in order, shorter).
        let (mut seen, mut prefix) = (0, 0);
        let sorted_len = self.sorted_len;
        self.ents.retain_mut(|y| {
            seen += 1;
            let keep = live(y);
            prefix += usize::from(keep && seen <= sorted_len);
            keep
        });
        self.sorted_len = prefix;
        self.joined.retain_mut(live);
    }

    /// Stores `b`, of entity `se`, in a free slot.
    fn store(&mut self, b: BoundIn, se: u32) -> u32 {
        match self.free.pop() {
            Some(i) => {
                self.slab[i as usize] = b;
                self.slot_se[i as usize] = se;
                i
            }
            None => {
                self.slab.push(b);
                self.slot_se.push(se);
                u32::try_from(self.slab.len() - 1).expect("queues hold fewer than 2^32 entities")
            }
        }
    }
}

/// What the bounds and the scores read of CacULE: the run's factors and
/// tables (borrowed apart from the queues' indexes, so that a scan works
/// on its queue's index in place).
struct Terms<'a> {
    f: &'a Factors,
    fast: &'a FastTerms,
    ftable: &'a FTable,
}

impl CacUle {
    /// The scoring terms, if the pick is indexed at all (`ftable`).
    fn terms(&self) -> Option<Terms<'_>> {
        Some(Terms {
            f: &self.f,
            fast: &self.fast,
            ftable: self.ftable.as_ref()?,
        })
    }

    /// K of `b`: its least score until `horizon` (0 where no bound
    /// applies).
    fn bound(&self, b: &BoundIn, horizon: u64) -> u64 {
        self.terms().map_or(0, |t| t.bound(b, horizon))
    }

    /// `x` joined queue `rq`'s list.
    pub(super) fn index_join(&mut self, rq: RqId, x: ListEntry) {
        let e = EntityRef {
            se: x.se,
            task: x.task,
            is_curr: false,
        };
        if let Some(t) = x.task {
            if self.task_se.len() <= t {
                self.task_se.resize(t + 1, SeId::MAX);
            }
            self.task_se[t] = x.se;
        }
        if self.index.get(rq).is_none_or(|q| !q.active) {
            return;
        }
        if self.listed_at.len() <= x.se {
            self.listed_at.resize(x.se + 1, None);
        }
        let n = self.node(e);
        let (memo_lo, memo_hi, memo_val) = n.is_memo.span(n.vruntime).unwrap_or((1, 0, 0));
        let b = BoundIn {
            start_time: n.start_time,
            vruntime: n.vruntime,
            last_run: n.last_run,
            exec_start: n.exec_start,
            memo_lo,
            memo_hi,
            memo_val,
            task: x.task.map_or(u32::MAX, |t| {
                u32::try_from(t).expect("task ids fit 32 bits")
            }),
            seq: x.seq,
        };
        let q = &self.index[rq];
        let key = match q.sorted {
            true => self.bound(&b, q.horizon),
            false => 0,
        };
        if let Some((when, best)) = self.index[rq].memo {
            // Score the newcomer at the memo's time (used only if the next
            // pick comes at that time). A task might be SCHED_IDLE, which
            // `m` would tell: forget the memo instead.
            let score = self.fast_score(e, when);
            self.index[rq].memo = match x.task.is_none() && score < 1 << 31 {
                true => {
                    let k = u64::from(score);
                    let better = beats(k, x.seq, best);
                    Some((when, if better { Some((k, x.seq, x.se)) } else { best }))
                }
                false => None,
            };
        }
        let q = &mut self.index[rq];
        let slot = q.store(b, u32::try_from(x.se).expect("entity ids fit 32 bits"));
        q.joined.push(IdxEnt::new(key, slot));
        q.live += 1;
        self.listed_at[x.se] = Some((rq, slot));
        if crowded(q.ents.len() + q.joined.len(), q.live, COMPACT_SLACK) {
            // Joins and leaves without a scan in between (a queue whose
            // group is not picked): drop the dead entries now (the keys of
            // the others hold: same horizon, same order).
            q.retain_live(|_, _| {});
        }
        debug_assert!(!crowded(
            q.ents.len() + q.joined.len(),
            q.live,
            COMPACT_SLACK
        ));
    }

    /// `se` left its queue's list.
    pub(super) fn index_leave(&mut self, se: SeId) {
        self.index_take(se);
    }

    /// Take `se` out of the index that holds it: its queue, list position
    /// and entity.
    fn index_take(&mut self, se: SeId) -> Option<(RqId, u64, EntityRef)> {
        let (rq, slot) = self.listed_at.get_mut(se)?.take()?;
        let q = &mut self.index[rq];
        if q.memo
            .is_some_and(|(_, b)| b.is_some_and(|(_, _, s)| s == se))
        {
            q.memo = None;
        }
        q.live -= 1;
        let b = &mut q.slab[slot as usize];
        let seq = std::mem::replace(&mut b.seq, DEAD);
        let se32 = u32::try_from(se).expect("entity ids fit 32 bits");
        Some((rq, seq, b.entity(se32)))
    }

    /// Entity `se`'s node changed: index it again if it is listed.
    fn retouch(&mut self, se: SeId) {
        let Some((rq, seq, e)) = self.index_take(se) else {
            return;
        };
        let x = ListEntry {
            seq,
            se,
            task: e.task,
        };
        self.index_join(rq, x);
    }

    /// Entity `e`'s node changed: index it again where it is listed.
    pub(super) fn retouch_entity(&mut self, e: EntityRef) {
        self.retouch(e.se);
        if let Some(t) = e.task {
            self.cand_retouch(t);
        }
    }

    /// Task `t`'s node changed.
    pub(super) fn retouch_task(&mut self, t: TaskId) {
        if let Some(&se) = self.task_se.get(t) {
            if se != SeId::MAX {
                self.retouch(se);
            }
        }
        self.cand_retouch(t);
    }

    /// `FairHooks::order_first`: the scan's answer from the index.
    pub(super) fn bounded_first(
        &mut self,
        m: &Machine,
        rq: RqId,
        list: &VecDeque<ListEntry>,
        except: Option<SeId>,
    ) -> Option<Option<(u64, SeId)>> {
        self.ftable.as_ref()?;
        if self.index.len() <= rq {
            self.index.resize(rq + 1, RqIndex::default());
        }
        if list.len() < MIN_INDEXED {
            if self.index[rq].active {
                let mut q = std::mem::take(&mut self.index[rq]);
                for y in q.ents.iter().chain(&q.joined) {
                    if q.slab[y.slot() as usize].seq != DEAD {
                        self.listed_at[q.slot_se[y.slot() as usize] as SeId] = None;
                    }
                }
                q.clear();
                self.index[rq] = q;
            }
            return None;
        }
        if !self.index[rq].active {
            self.index[rq].active = true;
            for x in list {
                self.index_join(rq, *x);
            }
        }
        let terms = Terms {
            f: &self.f,
            fast: &self.fast,
            ftable: self.ftable.as_ref()?,
        };
        terms.scan(m, &mut self.index[rq], except)
    }
}

impl Terms<'_> {
    /// K of `b`: its least score until `horizon` (0 where no bound
    /// applies).
    fn bound(&self, b: &BoundIn, horizon: u64) -> u64 {
        let last_run = b.bounded_last_run().unwrap_or(u64::MAX);
        let Some(waited) = horizon.checked_sub(last_run) else {
            return 0;
        };
        // The join's memo when it covers the horizon, else the formula.
        let life = horizon.wrapping_sub(b.start_time);
        let is = match (b.memo_lo..=b.memo_hi).contains(&life) {
            true => b.memo_val,
            false => super::interactivity_score(life, b.vruntime, self.f.interactivity),
        };
        u64::from(is) + self.ftable.g_bound(waited)
    }

    /// Re-key `q` (a queue's index) for a horizon from `now`: its
    /// current entries bounded at the new horizon and sorted, the slots of
    /// the others freed.
    fn rekey(&self, q: &mut RqIndex, now: u64) {
        q.horizon = now.saturating_add(LB_HORIZON);
        let horizon = q.horizon;
        // Compaction and re-keying in one pass.
        q.retain_live(|y, b| *y = IdxEnt::new(self.bound(b, horizon), y.slot()));
        // The joined entries go in with the others: the prefix takes those
        // of them that belong there, the tail the rest.
        q.ents.append(&mut q.joined);
        (q.sorted_len, q.tail_min) = bounded_sort(&mut q.ents, SORTED_PREFIX);
        q.live = q.ents.len();
        q.sorted = true;
    }

    /// Scores the entity of index entry `y` into `best` (key, seq, se)
    /// unless its slot in `slab` is dead or it is `except` (None: its score
    /// has no key), scored from the slot (the node's values, so
    /// the same score as `fast_score`: debug builds check the scan's
    /// answer against the full scan's). Always inlined: out of line, its
    /// register saves and restores cost 24 M instructions of the bench
    /// run's ~1.3 M calls (cachegrind).
    #[inline(always)]
    fn consider_entry(
        &self,
        m: &Machine,
        (slab, slot_se): (&mut [BoundIn], &[u32]),
        y: IdxEnt,
        except: Option<SeId>,
        best: &mut Option<Best>,
    ) -> Option<()> {
        let b = &mut slab[y.slot() as usize];
        let se = slot_se[y.slot() as usize];
        if b.seq == DEAD || Some(se as SeId) == except {
            return Some(());
        }
        let now = m.now;
        let idle = super::is_sched_idle(m, b.entity(se).task);
        let is = b.is_at(now.wrapping_sub(b.start_time), self.f.interactivity);
        let cache = self.fast.cache(now.wrapping_sub(b.exec_start));
        let starve = self.fast.starve(now.wrapping_sub(b.last_run));
        let score = is.wrapping_add(cache).wrapping_add(starve);
        if score >= 1 << 31 {
            return None;
        }
        let k = (u64::from(idle) << 32) | u64::from(score);
        if beats(k, b.seq, *best) {
            *best = Some((k, b.seq, se as SeId));
        }
        Some(())
    }

    /// `FairHooks::order_first` of the queue whose index is `q`.
    fn scan(
        &self,
        m: &Machine,
        q: &mut RqIndex,
        except: Option<SeId>,
    ) -> Option<Option<(u64, SeId)>> {
        let now = m.now;
        if let (None, Some((when, best))) = (except, q.memo) {
            if when == now {
                return Some(best.map(|(k, _, se)| (k, se)));
            }
        }
        let entries = q.ents.len() + q.joined.len();
        if !q.sorted || now > q.horizon || crowded(entries, q.live, RESCAN_SLACK) {
            self.rekey(q, now);
        }
        // (key, seq, se) of the best so far: the sorted entries up to the
        // first key above the best score, then the joined ones whose key
        // does not exceed it.
        let mut best: Option<Best> = None;
        for i in 0..q.ents.len() {
            if i == q.sorted_len {
                // The tail: skipped while its least key is above the best
                // score, else sorted now, for the rest of the horizon.
                if best.is_some_and(|(bk, _, _)| q.tail_min.key() > bk) {
                    break;
                }
                q.ents[i..].sort_unstable();
                q.sorted_len = q.ents.len();
            }
            let y = q.ents[i];
            if best.is_some_and(|(bk, _, _)| y.key() > bk) {
                break;
            }
            self.consider_entry(m, (&mut q.slab, &q.slot_se), y, except, &mut best)?;
        }
        for &y in &q.joined {
            if best.is_none_or(|(bk, _, _)| y.key() <= bk) {
                self.consider_entry(m, (&mut q.slab, &q.slot_se), y, except, &mut best)?;
            }
        }
        if except.is_none() {
            q.memo = Some((now, best));
        }
        Some(best.map(|(k, _, se)| (k, se)))
    }
}

// A slot is one cache line (a field added to `BoundIn` must fit it).
const _: () = assert!(std::mem::size_of::<BoundIn>() == 64);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_sort_orders_the_lowest_and_bounds_the_rest() {
        let mut rng = crate::rng::Rng::new(5);
        for n in [0usize, 1, 5, 31, 32, 33, 64, 125, 300] {
            for cap in [1usize, 8, 32] {
                let v: Vec<IdxEnt> = (0..n)
                    .map(|i| IdxEnt::new(rng.next_u64() % 50, i as u32))
                    .collect();
                let mut want = v.clone();
                want.sort_unstable();
                let mut got = v.clone();
                let (p, tail_min) = bounded_sort(&mut got, cap);
                assert_eq!(p, n.min(cap), "{n} {cap}");
                assert_eq!(got[..p], want[..p], "{n} {cap}: the front");
                let mut tail = got[p..].to_vec();
                tail.sort_unstable();
                assert_eq!(tail, want[p..], "{n} {cap}: the rest");
                assert_eq!(tail_min, tail.first().copied().unwrap_or(IdxEnt(u64::MAX)));
            }
        }
    }

    #[test]
    fn sort_and_merge_sorts_both_parts_into_one() {
        let mut rng = crate::rng::Rng::new(3);
        for (n, m) in [
            (0, 0),
            (0, 5),
            (5, 0),
            (1, 1),
            (125, 8),
            (125, 64),
            (30, 200),
        ] {
            // Distinct keys; `kept` nearly in order, `joined` in none.
            let mut keys: Vec<u64> = (0..(n + m) as u64)
                .map(|k| k * 3 + rng.next_u64() % 3)
                .collect();
            keys.dedup();
            let (mut kept, mut joined) = (keys[..n].to_vec(), keys[n..].to_vec());
            for i in 1..kept.len() {
                if rng.next_u64() % 4 == 0 {
                    kept.swap(i - 1, i);
                }
            }
            for i in (1..joined.len()).rev() {
                let j = (rng.next_u64() % (i as u64 + 1)) as usize;
                joined.swap(i, j);
            }
            let mut want = keys.clone();
            want.sort_unstable();
            sort_and_merge(&mut kept, &mut joined, |k| *k);
            assert_eq!(kept, want, "{n} kept, {m} joined");
            assert!(joined.is_empty());
        }
    }
}
