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
//! where g(T) is the least cache + starve over t in [0, T] (`FTable`: the
//! two terms are monotone step functions of t, one pair for the run; their
//! steps are found by search). Each queue keeps its entities sorted by K
//! (recomputed for all of them when the horizon passes, computed for one
//! as it joins); the pick scores entities in that order and stops at the
//! first whose K exceeds the best score so far (it cannot score lower, nor
//! equal to win on list order). Entities whose `exec_start` is after their
//! `last_run` (none, by the rules above, but the bound would not hold) are
//! kept apart and always scored. In the bench workload (125 entities per
//! CPU) a pick scores a few entities instead of 125.

use super::{interactivity_score, CacUle};
use crate::class::fair::entity::{ListEntry, RqId, SeId};
use crate::class::fair::hooks::EntityRef;
use crate::clock::{Ns, MSEC};
use crate::machine::Machine;
use crate::task::TaskId;
use crate::workload::Policy;
use std::collections::VecDeque;

/// How far ahead a queue's IS bound holds: longer means fewer rebuilds
/// (one IS per entity) but a looser bound.
const LB_HORIZON: Ns = 32 * MSEC;

/// Below this many entities the fair class's scan is as cheap.
const MIN_INDEXED: usize = 12;

/// Breakpoints searched for `FTable` (steps of f beyond are not bounded).
const FTABLE_MAX: usize = 1 << 14;

/// The time span `FTable` tries to cover.
const FTABLE_SPAN: Ns = 16_000 * MSEC;

/// g(T) = min over t ≤ T of cache(t) + starve(t), as a step function.
#[derive(Debug, Clone, Default)]
pub(super) struct FTable {
    /// Segment starts (the first is 0), increasing.
    starts: Vec<u64>,
    /// g on each segment, non-increasing.
    gmin: Vec<u64>,
    /// The table covers t < end.
    end: u64,
    /// cache(end): a lower bound of cache + starve beyond the table.
    tail: u64,
    /// Per 2^BUCKET_SHIFT ns of t: the segment holding its start.
    buckets: Vec<u32>,
}

/// `FTable::g` finds the segment from a per-bucket start (about 1 ms).
const BUCKET_SHIFT: u32 = 20;

/// The first t' in (t, end] where the monotone `h` differs from h(t), or
/// `end` if none.
fn next_change(h: &impl Fn(u64) -> u64, t: u64, end: u64) -> u64 {
    let v = h(t);
    let (mut lo, mut step) = (t, 1u64);
    loop {
        let hi = t.saturating_add(step).min(end);
        if h(hi) != v {
            let mut hi = hi;
            while hi - lo > 1 {
                let mid = lo + (hi - lo) / 2;
                match h(mid) == v {
                    true => lo = mid,
                    false => hi = mid,
                }
            }
            return hi;
        }
        if hi == end {
            return end;
        }
        lo = hi;
        step = step.saturating_mul(2);
    }
}

impl FTable {
    /// The table for the run's terms (`cache`, `starve`: monotone).
    pub(super) fn new(cache: impl Fn(u64) -> u64, starve: impl Fn(u64) -> u64) -> Self {
        let mut points = vec![0u64];
        let mut end = FTABLE_SPAN;
        for h in [&cache as &dyn Fn(u64) -> u64, &starve] {
            let h = |t| h(t);
            let mut t = 0;
            while t < end {
                t = next_change(&h, t, end);
                if t < end {
                    points.push(t);
                }
                if points.len() >= FTABLE_MAX {
                    // Cover only up to here (both terms' steps below it).
                    end = t;
                }
            }
        }
        points.retain(|p| *p < end);
        points.sort_unstable();
        points.dedup();
        let mut gmin = Vec::with_capacity(points.len());
        let mut g = u64::MAX;
        for &p in &points {
            g = g.min(cache(p) + starve(p));
            gmin.push(g);
        }
        let buckets = (0..=(end >> BUCKET_SHIFT))
            .map(|b| (points.partition_point(|s| *s <= b << BUCKET_SHIFT) - 1) as u32)
            .collect();
        FTable {
            starts: points,
            gmin,
            end,
            tail: cache(end),
            buckets,
        }
    }

    /// A lower bound of g(T) = min over t ≤ T of cache(t) + starve(t):
    /// exact below `end`; beyond it, also bounded by `tail` (the cache term
    /// only grows, the starvation term is at least 0).
    pub(super) fn g(&self, t: u64) -> u64 {
        if t >= self.end {
            let last = self.gmin.last().copied().unwrap_or(0);
            return last.min(self.tail);
        }
        // The segment lies between the bucket's first and the next's.
        let b = (t >> BUCKET_SHIFT) as usize;
        let lo = self.buckets[b] as usize;
        let hi = self
            .buckets
            .get(b + 1)
            .map_or(self.starts.len(), |h| *h as usize + 1);
        let i = lo + self.starts[lo..hi].partition_point(|s| *s <= t);
        self.gmin[i - 1]
    }
}

/// An indexed entity.
#[derive(Debug, Clone, Copy)]
struct IdxEnt {
    /// The bound K (while its queue's horizon holds).
    key: u64,
    last_run: u64,
    seq: u64,
    se: SeId,
    task: Option<TaskId>,
}

/// Sorts by (K, seq) in place. The keys of one queue keep most of their
/// order from one horizon to the next (entities with the same IS keep
/// their order by `last_run`, g being one non-increasing function), so
/// the few inversions make this cheaper than a general sort.
fn insertion_sort(ents: &mut [IdxEnt]) {
    for i in 1..ents.len() {
        let x = ents[i];
        let mut j = i;
        while j > 0 && (ents[j - 1].key, ents[j - 1].seq) > (x.key, x.seq) {
            ents[j] = ents[j - 1];
            j -= 1;
        }
        ents[j] = x;
    }
}

/// The best entity of a scan so far: (key, seq, entity).
type Best = (u64, u64, SeId);

/// One queue's entities by (K, seq).
#[derive(Debug, Clone, Default)]
pub(super) struct RqIndex {
    /// Sorted while `sorted` (else in no order, keys stale). A deque:
    /// picks take entities near the front (low bounds), put-backs join
    /// near the back (they just ran: high bounds).
    ents: VecDeque<IdxEnt>,
    /// Entities the bound does not cover (always scored).
    apart: Vec<IdxEnt>,
    /// The keys hold until then.
    horizon: u64,
    sorted: bool,
    /// The last answer without `except`: (time, best (key, seq, se)),
    /// kept while nothing but joins changed the list at that time (the
    /// tick's check and the pick after it, with the previous entity put
    /// back in between, see the same entities at the same time).
    memo: Option<(u64, Option<Best>)>,
}

/// Where an entity is indexed.
#[derive(Debug, Clone, Copy)]
pub(super) struct Listed {
    rq: RqId,
    ent: IdxEnt,
    apart: bool,
}

impl RqIndex {
    fn len(&self) -> usize {
        self.ents.len() + self.apart.len()
    }
}

impl CacUle {
    /// K of `e`, which last ran at `last_run`: its least score until
    /// `horizon` (0 where no bound applies).
    fn bound(&self, e: EntityRef, last_run: u64, horizon: u64) -> u64 {
        let (Some(ft), Some(waited)) = (&self.ftable, horizon.checked_sub(last_run)) else {
            return 0;
        };
        let n = self.node(e);
        let life = horizon.wrapping_sub(n.start_time);
        let is = n
            .is_memo
            .peek(life, n.vruntime)
            .unwrap_or_else(|| interactivity_score(life, n.vruntime, self.f.interactivity));
        u64::from(is) + ft.g(waited)
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
        if self.index.len() <= rq {
            self.index.resize(rq + 1, RqIndex::default());
        }
        if self.listed_at.len() <= x.se {
            self.listed_at.resize(x.se + 1, None);
        }
        let n = self.node(e);
        let apart = n.exec_start > n.last_run;
        let q = &self.index[rq];
        let key = match q.sorted && !apart {
            true => self.bound(e, n.last_run, q.horizon),
            false => 0,
        };
        let ent = IdxEnt {
            key,
            last_run: n.last_run,
            seq: x.seq,
            se: x.se,
            task: x.task,
        };
        if let Some((when, best)) = self.index[rq].memo {
            // Score the newcomer at the memo's time (used only if the next
            // pick comes at that time). A task might be SCHED_IDLE, which
            // `m` would tell: forget the memo instead.
            let score = self.fast_score(e, when);
            self.index[rq].memo = match x.task.is_none() && score < 1 << 31 {
                true => {
                    let k = u64::from(score);
                    let better = best.is_none_or(|(bk, bs, _)| k < bk || (k == bk && x.seq > bs));
                    Some((when, if better { Some((k, x.seq, x.se)) } else { best }))
                }
                false => None,
            };
        }
        let q = &mut self.index[rq];
        if apart {
            q.apart.push(ent);
        } else if q.sorted {
            let k = (ent.key, ent.seq);
            let at = q.ents.partition_point(|y| (y.key, y.seq) < k);
            q.ents.insert(at, ent);
        } else {
            q.ents.push_back(ent);
        }
        self.listed_at[x.se] = Some(Listed { rq, ent, apart });
    }

    /// `se` left queue `rq`'s list.
    pub(super) fn index_leave(&mut self, se: SeId) {
        let Some(Some(l)) = self.listed_at.get_mut(se).map(|l| l.take()) else {
            return;
        };
        let q = &mut self.index[l.rq];
        if q.memo
            .is_some_and(|(_, b)| b.is_some_and(|(_, _, s)| s == se))
        {
            q.memo = None;
        }
        if l.apart {
            if let Some(i) = q.apart.iter().position(|y| y.se == se) {
                q.apart.swap_remove(i);
            }
            return;
        }
        let at = match q.sorted {
            true => {
                let k = (l.ent.key, l.ent.seq);
                let at = q.ents.partition_point(|y| (y.key, y.seq) < k);
                Some(at).filter(|at| q.ents.get(*at).is_some_and(|y| y.se == se))
            }
            false => q.ents.iter().position(|y| y.se == se),
        };
        if let Some(at) = at {
            q.ents.remove(at);
        }
    }

    /// Entity `se`'s node changed: index it again if it is listed.
    pub(super) fn retouch(&mut self, se: SeId) {
        let Some(Some(l)) = self.listed_at.get(se).copied() else {
            return;
        };
        self.index_leave(se);
        let x = ListEntry {
            seq: l.ent.seq,
            se,
            task: l.ent.task,
        };
        self.index_join(l.rq, x);
        if let Some(t) = l.ent.task {
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
    }

    /// `FairHooks::order_first`: the scan's answer from the index.
    pub(super) fn bounded_first(
        &mut self,
        m: &Machine,
        rq: RqId,
        except: Option<SeId>,
    ) -> Option<Option<(u64, SeId)>> {
        self.ftable.as_ref()?;
        match self.index.get(rq) {
            Some(q) if q.len() >= MIN_INDEXED => {
                let mut q = std::mem::take(&mut self.index[rq]);
                let a = self.bounded_scan(m, &mut q, except);
                self.index[rq] = q;
                a
            }
            _ => None,
        }
    }

    /// Scores `y` into `best` (key, seq, se): whether it became the best,
    /// or None if its score has no key.
    fn consider(
        &mut self,
        m: &Machine,
        y: &IdxEnt,
        except: Option<SeId>,
        best: &mut Option<Best>,
    ) -> Option<bool> {
        if Some(y.se) == except {
            return Some(false);
        }
        let idle = y.task.is_some_and(|t| m.tasks[t].policy == Policy::Idle);
        let e = EntityRef {
            se: y.se,
            task: y.task,
            is_curr: false,
        };
        let score = self.fast_score(e, m.now);
        if score >= 1 << 31 {
            return None;
        }
        let k = (u64::from(idle) << 32) | u64::from(score);
        let better = best.is_none_or(|(bk, bs, _)| k < bk || (k == bk && y.seq > bs));
        if better {
            *best = Some((k, y.seq, y.se));
        }
        Some(better)
    }

    fn bounded_scan(
        &mut self,
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
        if !q.sorted || now > q.horizon {
            q.horizon = now.saturating_add(LB_HORIZON);
            let mut ents = std::mem::take(&mut q.ents);
            for y in ents.iter_mut() {
                let e = EntityRef {
                    se: y.se,
                    task: y.task,
                    is_curr: false,
                };
                y.key = self.bound(e, y.last_run, q.horizon);
                if let Some(Some(l)) = self.listed_at.get_mut(y.se) {
                    l.ent.key = y.key;
                }
            }
            insertion_sort(ents.make_contiguous());
            q.ents = ents;
            q.sorted = true;
        }
        // (key, seq, se) of the best so far.
        let mut best: Option<Best> = None;
        for y in &q.apart {
            self.consider(m, y, except, &mut best)?;
        }
        for y in &q.ents {
            if best.is_some_and(|(bk, _, _)| y.key > bk) {
                break;
            }
            self.consider(m, y, except, &mut best)?;
        }
        if except.is_none() {
            q.memo = Some((now, best));
        }
        Some(best.map(|(k, _, se)| (k, se)))
    }
}

#[cfg(test)]
mod tests {
    use super::super::fast::FastTerms;
    use super::super::Factors;
    use super::*;

    #[test]
    fn the_ftable_is_the_prefix_minimum_of_the_two_terms() {
        for f in [
            Factors::default(),
            Factors {
                interactivity: 7,
                cache: 5,
                cache_divisor: 1_000,
                starve: 3,
                starve_divisor: 7_000,
            },
        ] {
            let fast = FastTerms::new(&f);
            let cache = |t: u64| u64::from(fast.cache(t));
            let starve = |t: u64| u64::from(fast.starve(t));
            let table = FTable::new(cache, starve);
            let mut rng = crate::rng::Rng::new(5);
            let mut ts: Vec<u64> = (0..3000).map(|_| rng.next_u64() % table.end).collect();
            ts.extend(
                table
                    .starts
                    .iter()
                    .flat_map(|s| [*s, s.saturating_sub(1), s + 1]),
            );
            ts.sort_unstable();
            ts.dedup();
            // Brute-force prefix minimum over every step of f below each t.
            for t in ts.into_iter().filter(|t| *t < table.end) {
                let i = table.starts.partition_point(|s| *s <= t) - 1;
                assert_eq!(
                    cache(t) + starve(t),
                    cache(table.starts[i]) + starve(table.starts[i]),
                    "f is flat on its segment at {t}"
                );
                let g = table.starts[..=i]
                    .iter()
                    .map(|s| cache(*s) + starve(*s))
                    .min();
                assert_eq!(Some(table.gmin[i]), g, "g at {t}");
                assert_eq!(Some(table.g(t)), g, "FTable::g at {t}");
            }
            // Beyond the table: still a lower bound of f.
            for t in [table.end, table.end + 1, table.end * 3, u64::MAX] {
                assert!(table.g(t) <= cache(t) + starve(t), "tail at {t}");
            }
        }
    }
}
