//! g(T) = min over t ≤ T of cache(t) + starve(t): the least that the
//! cache and starvation terms of a waiting entity add to its score over
//! waits up to T, the second half of the pick's bound (cacule/pick.rs).
//! Both terms are monotone step functions of the wait t (policy/cacule.rs),
//! one pair for the run, so g is a step function too: its steps are found
//! by search once per run, and `FTable::g_bound` reads a log-bucketed copy
//! (one load from a few kilobytes) where `FTable::g` searches the steps.

use crate::clock::{Ns, MSEC};

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
    /// g at the last t of each log-spaced bucket of t ([`coarse_index`]):
    /// a lower bound of g over the bucket (g is non-increasing) read with
    /// one load from a few kilobytes, where `g` reads three large tables.
    coarse: Vec<u32>,
}

/// Log-spaced buckets: t below 2^COARSE_BITS has its own; above, each
/// octave is split into 2^COARSE_BITS buckets (a bucket spans under 1/64
/// of its t, where g moves little).
const COARSE_BITS: u32 = 6;

/// The bucket of `t` (non-decreasing in t).
fn coarse_index(t: u64) -> usize {
    let e = 63 - (t | 1).leading_zeros();
    if e < COARSE_BITS {
        return t as usize;
    }
    let shift = e - COARSE_BITS;
    ((((shift + 1) as u64) << COARSE_BITS) + ((t >> shift) & ((1 << COARSE_BITS) - 1))) as usize
}

/// The last t of bucket `i`.
fn coarse_last(i: usize) -> u64 {
    let i = i as u64;
    let per = 1u64 << COARSE_BITS;
    if i < per {
        return i;
    }
    let shift = (i >> COARSE_BITS) - 1;
    let mantissa = per + (i & (per - 1));
    let last = (u128::from(mantissa + 1) << shift) - 1;
    u64::try_from(last).unwrap_or(u64::MAX)
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
        let mut table = FTable {
            starts: points,
            gmin,
            end,
            tail: cache(end),
            buckets,
            coarse: Vec::new(),
        };
        table.coarse = (0..=coarse_index(end))
            .map(|i| u32::try_from(table.g(coarse_last(i))).unwrap_or(u32::MAX))
            .collect();
        table
    }

    /// A lower bound of g(t), looser than [`Self::g`] by at most g's fall
    /// over t's log-spaced bucket.
    #[inline]
    pub(super) fn g_bound(&self, t: u64) -> u64 {
        match self.coarse.get(coarse_index(t)) {
            Some(g) => u64::from(*g),
            None => self.g(t),
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
            // The coarse bound: g at the end of t's bucket, so at most g(t).
            let mut ts: Vec<u64> = (0..3000)
                .map(|_| rng.next_u64() % (table.end * 2))
                .collect();
            ts.extend([
                0,
                1,
                63,
                64,
                65,
                127,
                128,
                table.end - 1,
                table.end,
                u64::MAX,
            ]);
            for t in ts {
                let i = coarse_index(t);
                let last = coarse_last(i);
                assert!(last >= t && coarse_index(last) == i, "bucket of {t}");
                assert!(
                    last == u64::MAX || coarse_index(last + 1) == i + 1,
                    "bucket after {t}"
                );
                assert!(table.g_bound(t) <= table.g(t), "coarse bound at {t}");
                assert_eq!(
                    table.g_bound(t),
                    table.g(last).min(table.g(t)),
                    "coarse g at {t}"
                );
            }
        }
    }
}
