//! A fixed-size CPU mask (`struct cpumask`), up to [`MAX_CPUS`] CPUs.

use serde::Serialize;

/// Largest CPU count a topology may have.
pub const MAX_CPUS: usize = 256;

/// CPU index.
pub type CpuId = usize;

/// A set of CPUs; `Copy` so masks can be passed around freely.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct CpuSet {
    bits: [u64; MAX_CPUS / 64],
}

impl CpuSet {
    /// The empty set.
    pub fn empty() -> Self {
        CpuSet::default()
    }

    /// CPUs `0..n`.
    pub fn first_n(n: usize) -> Self {
        let mut s = CpuSet::empty();
        for c in 0..n.min(MAX_CPUS) {
            s.insert(c);
        }
        s
    }

    /// Add `cpu`.
    pub fn insert(&mut self, cpu: CpuId) {
        self.bits[cpu / 64] |= 1 << (cpu % 64);
    }

    /// Remove `cpu`.
    pub fn remove(&mut self, cpu: CpuId) {
        self.bits[cpu / 64] &= !(1 << (cpu % 64));
    }

    /// Whether `cpu` is in the set.
    pub fn contains(&self, cpu: CpuId) -> bool {
        cpu < MAX_CPUS && self.bits[cpu / 64] & (1 << (cpu % 64)) != 0
    }

    /// Number of CPUs in the set (`cpumask_weight`).
    pub fn count(&self) -> usize {
        self.bits.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.bits.iter().all(|w| *w == 0)
    }

    /// Intersection.
    pub fn and(&self, other: &CpuSet) -> CpuSet {
        let mut s = *self;
        for (a, b) in s.bits.iter_mut().zip(other.bits.iter()) {
            *a &= *b;
        }
        s
    }

    /// Every CPU id below [`MAX_CPUS`] not in this set.
    pub fn complement(&self) -> CpuSet {
        let mut s = *self;
        for w in s.bits.iter_mut() {
            *w = !*w;
        }
        s
    }

    /// The CPUs of this set that are not in `other` (`cpumask_andnot`).
    pub fn and_not(&self, other: &CpuSet) -> CpuSet {
        let mut s = *self;
        for (a, b) in s.bits.iter_mut().zip(other.bits.iter()) {
            *a &= !*b;
        }
        s
    }

    /// Whether the set holds two CPUs or more: `count() >= 2` without
    /// counting (the build targets baseline x86-64, whose popcount is a
    /// dozen instructions a word; the idle balancer asks this at every
    /// tick of every busy CPU).
    pub fn has_two(&self) -> bool {
        let mut seen = false;
        for &w in &self.bits {
            if w != 0 {
                if seen || w & (w - 1) != 0 {
                    return true;
                }
                seen = true;
            }
        }
        false
    }

    /// Whether the two sets share a CPU.
    pub fn intersects(&self, other: &CpuSet) -> bool {
        !self.and(other).is_empty()
    }

    /// Lowest CPU in the set.
    pub fn first(&self) -> Option<CpuId> {
        let word = self.bits.iter().position(|w| *w != 0)?;
        Some(word * 64 + self.bits[word].trailing_zeros() as usize)
    }

    /// Highest CPU in the set (`cpumask_last`), read from the top word
    /// down.
    pub fn last(&self) -> Option<CpuId> {
        let word = self.bits.iter().rposition(|w| *w != 0)?;
        Some(word * 64 + 63 - self.bits[word].leading_zeros() as usize)
    }

    /// CPUs at or above `start`.
    pub fn from(&self, start: CpuId) -> CpuSet {
        let mut s = *self;
        for (i, w) in s.bits.iter_mut().enumerate() {
            let lo = i * 64;
            if start >= lo + 64 {
                *w = 0;
            } else if start > lo {
                *w &= u64::MAX << (start - lo);
            }
        }
        s
    }

    /// Lowest CPU in the set at or above `start` (`cpumask_next`: the
    /// words below `start`'s are skipped, not scanned bit by bit).
    pub fn first_from(&self, start: CpuId) -> Option<CpuId> {
        let mut word = start / 64;
        if word >= self.bits.len() {
            return None;
        }
        let mut w = self.bits[word] & (u64::MAX << (start % 64));
        loop {
            if w != 0 {
                return Some(word * 64 + w.trailing_zeros() as usize);
            }
            word += 1;
            if word == self.bits.len() {
                return None;
            }
            w = self.bits[word];
        }
    }

    /// CPUs in increasing order.
    pub fn iter(&self) -> Iter {
        self.into_iter_owned()
    }

    /// CPUs in the set starting after `start` and wrapping around
    /// (`for_each_cpu_wrap`), as the idle-CPU scan does.
    pub fn iter_wrap(&self, start: CpuId) -> impl Iterator<Item = CpuId> {
        // The CPUs above `start`, then those up to it, split with masks:
        // no allocation, and a scan that stops early reads no further
        // (it ran at every wakeup of a 256-CPU run, issue 18).
        let (mut after, mut before) = (*self, *self);
        for (i, (a, b)) in after
            .bits
            .iter_mut()
            .zip(before.bits.iter_mut())
            .enumerate()
        {
            let lo = i * 64;
            // Bits of word `i` at CPUs <= start.
            let upto = if start >= lo + 63 {
                u64::MAX
            } else if start < lo {
                0
            } else {
                (1u64 << (start - lo + 1)) - 1
            };
            *a &= !upto;
            *b &= upto;
        }
        after.into_iter_owned().chain(before.into_iter_owned())
    }

    /// The CPUs in ascending order, owning the set.
    fn into_iter_owned(self) -> Iter {
        Iter {
            word: 0,
            rest: self.bits[0],
            bits: self.bits,
        }
    }
}

/// The CPUs of a set in ascending order (`for_each_cpu`). Why a struct
/// rather than a `flat_map` over the words (issue 18): the fork path
/// iterates each one-CPU group of every domain at every fork, and the
/// adapter chain (fuse, the inner closure, the outer range) cost about 23
/// instructions more a group (256 CPUs × 10,000 forks: 782 → 722 M); this
/// is a word index and the word's bits not yet visited.
#[derive(Clone)]
pub struct Iter {
    bits: [u64; MAX_CPUS / 64],
    /// The word being visited.
    word: usize,
    /// Its bits not yet visited.
    rest: u64,
}

impl Iterator for Iter {
    type Item = CpuId;

    #[inline]
    fn next(&mut self) -> Option<CpuId> {
        while self.rest == 0 {
            self.word += 1;
            if self.word >= self.bits.len() {
                self.word = self.bits.len(); // stays done
                return None;
            }
            self.rest = self.bits[self.word];
        }
        let b = self.rest.trailing_zeros() as usize;
        self.rest &= self.rest - 1;
        Some(self.word * 64 + b)
    }
}

impl std::fmt::Debug for CpuSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl Serialize for CpuSet {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `iter` gives every member once, ascending, and then stays done:
    /// against a test of every CPU id, on sets with empty words between
    /// full ones, the last CPU, and none.
    #[test]
    fn iter_visits_the_members_in_order() {
        let mut rng = crate::rng::Rng::new(11);
        let mut sets = vec![CpuSet::empty(), CpuSet::first_n(MAX_CPUS)];
        let mut edges = CpuSet::empty();
        for c in [0, 63, 64, 191, 255] {
            edges.insert(c);
        }
        sets.push(edges);
        for _ in 0..300 {
            let mut s = CpuSet::empty();
            for _ in 0..(rng.next_u64() % 40) {
                s.insert((rng.next_u64() % MAX_CPUS as u64) as usize);
            }
            sets.push(s);
        }
        for s in sets {
            let want: Vec<CpuId> = (0..MAX_CPUS).filter(|c| s.contains(*c)).collect();
            let mut it = s.iter();
            assert_eq!(it.by_ref().collect::<Vec<_>>(), want);
            assert_eq!((it.next(), it.next()), (None, None));
            assert_eq!(s.count(), want.len());
        }
    }

    #[test]
    fn last_and_from_agree_with_iterating() {
        let mut rng = crate::rng::Rng::new(5);
        for _ in 0..200 {
            let mut s = CpuSet::empty();
            for _ in 0..(rng.next_u64() % 12) {
                s.insert((rng.next_u64() % MAX_CPUS as u64) as usize);
            }
            assert_eq!(s.last(), s.iter().last());
            let start = (rng.next_u64() % (MAX_CPUS as u64 + 2)) as usize;
            let want: Vec<CpuId> = s.iter().filter(|c| *c >= start).collect();
            assert_eq!(
                s.from(start).iter().collect::<Vec<_>>(),
                want,
                "from {start}"
            );
        }
    }

    #[test]
    fn first_from_finds_the_lowest_cpu_at_or_above_start() {
        let mut s = CpuSet::empty();
        for c in [3, 63, 64, 200] {
            s.insert(c);
        }
        let want = |start: usize| s.iter().find(|c| *c >= start);
        for start in 0..MAX_CPUS + 2 {
            assert_eq!(s.first_from(start), want(start), "start {start}");
        }
        assert_eq!(CpuSet::empty().first_from(0), None);
    }

    /// `iter_wrap` visits the CPUs after `start`, then those up to it.
    #[test]
    fn iter_wrap_orders_as_for_each_cpu_wrap() {
        let mut s = CpuSet::empty();
        for c in [0, 3, 63, 64, 65, 127, 128, 200, 255] {
            s.insert(c);
        }
        for start in [0, 3, 62, 63, 64, 100, 127, 128, 254, 255] {
            let want: Vec<CpuId> = s
                .iter()
                .filter(|c| *c > start)
                .chain(s.iter().filter(|c| *c <= start))
                .collect();
            assert_eq!(
                s.iter_wrap(start).collect::<Vec<_>>(),
                want,
                "start {start}"
            );
        }
    }

    #[test]
    fn set_operations() {
        let mut s = CpuSet::empty();
        s.insert(3);
        s.insert(70);
        assert!(s.contains(3) && s.contains(70) && !s.contains(4));
        assert_eq!(s.count(), 2);
        assert_eq!(s.iter().collect::<Vec<_>>(), vec![3, 70]);
        assert_eq!(s.iter_wrap(3).collect::<Vec<_>>(), vec![70, 3]);
        s.remove(3);
        assert_eq!(s.first(), Some(70));
        assert_eq!(CpuSet::first_n(4).and(&s).count(), 0);
        let c = s.complement();
        assert!(!c.contains(70) && c.contains(3) && c.contains(MAX_CPUS - 1));
        assert_eq!(c.count(), MAX_CPUS - 1);
    }

    /// `has_two` is `count() >= 2` and `and_not` the difference, for sets
    /// within one word and across words.
    #[test]
    fn has_two_and_and_not_agree_with_counting() {
        let mut rng = crate::rng::Rng::new(5);
        for _ in 0..2000 {
            let (mut a, mut b) = (CpuSet::empty(), CpuSet::empty());
            for _ in 0..rng.below(5) {
                a.insert(rng.below(MAX_CPUS as u64) as CpuId);
            }
            for _ in 0..rng.below(5) {
                b.insert(rng.below(MAX_CPUS as u64) as CpuId);
            }
            assert_eq!(a.has_two(), a.count() >= 2);
            let d = a.and_not(&b);
            assert_eq!(d.count(), a.count() - a.and(&b).count());
            assert!(d.iter().all(|c| a.contains(c) && !b.contains(c)));
        }
    }
}
