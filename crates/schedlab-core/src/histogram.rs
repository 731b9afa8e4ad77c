//! A latency histogram with HdrHistogram's bins (3 significant digits, lowest
//! discernible value 1 ns), stored sparsely.
//!
//! Why not the `hdrhistogram` crate itself: its counts array is dense, so one
//! histogram of nanosecond latencies covering a few hundred milliseconds
//! holds about 20,000 counters (~170 KB), grows by copying, and
//! `value_at_quantile` scans every counter. With one histogram per task that
//! was most of the memory and, at 10,000 tasks, most of the run time
//! (issue 18). A task's latencies fall into a few hundred distinct bins at
//! most, so the bins that hold samples are kept here in a sorted vector.
//!
//! The bins, and every answer of [`LatencyHistogram::value_at_quantile`], are
//! exactly those of `hdrhistogram::Histogram::<u64>::new(3)` (version 7.5/7.6,
//! `value_at_quantile`): a test records random samples into both and compares.
//!
//! HdrHistogram's layout with 3 significant digits and unit 1: a sub-bucket
//! count of 2048 (the power of two above 2·10³), so bucket 0 holds the values
//! 0..2047 at resolution 1 and bucket b ≥ 1 the values 1024·2^b..2048·2^b at
//! resolution 2^b; the counts index of a value is `((b + 1) << 10) + sub − 1024`
//! with `sub = value >> b`.

use crate::clock::Ns;

/// log2 of half the sub-bucket count (1024) for 3 significant digits.
const SUB_BUCKET_HALF_MAGNITUDE: u32 = 10;
/// Values below this (2048) fall in bucket 0.
const SUB_BUCKET_MASK: u64 = (1 << (SUB_BUCKET_HALF_MAGNITUDE + 1)) - 1;
/// `64 − unit_magnitude − sub_bucket_half_count_magnitude − 1` in HdrHistogram.
const LEADING_ZERO_COUNT_BASE: u32 = 64 - SUB_BUCKET_HALF_MAGNITUDE - 1;

/// HdrHistogram's counts index of `value`.
#[inline]
fn bin_of(value: u64) -> u32 {
    let bucket = LEADING_ZERO_COUNT_BASE - (value | SUB_BUCKET_MASK).leading_zeros();
    let sub = (value >> bucket) as u32; // < 2048
    ((bucket + 1) << SUB_BUCKET_HALF_MAGNITUDE) + sub - (1 << SUB_BUCKET_HALF_MAGNITUDE)
}

/// Bucket and sub-bucket of counts index `bin` (HdrHistogram's `value_for`).
#[inline]
fn location(bin: u32) -> (u32, u64) {
    let half = 1u32 << SUB_BUCKET_HALF_MAGNITUDE;
    let sub = u64::from((bin & (half - 1)) + half);
    match (bin >> SUB_BUCKET_HALF_MAGNITUDE).checked_sub(1) {
        Some(bucket) => (bucket, sub),
        None => (0, sub - u64::from(half)), // the lower half of bucket 0
    }
}

/// The smallest value that falls into `bin`.
#[inline]
fn lowest_of(bin: u32) -> u64 {
    let (bucket, sub) = location(bin);
    sub << bucket
}

/// The largest value that falls into `bin` (HdrHistogram's
/// `highest_equivalent`, saturating as it does).
#[inline]
fn highest_of(bin: u32) -> u64 {
    let (bucket, sub) = location(bin);
    (sub << bucket).saturating_add(1 << bucket) - 1
}

/// Counts of the occupied bins, in bin order.
#[derive(Debug, Clone, Default)]
pub struct LatencyHistogram {
    /// The occupied bins, ascending.
    bins: Bins,
    /// Samples in all.
    total: u64,
    /// Position in `bins` of the last sample's bin: consecutive samples of
    /// a task often share a bin, so this spares the binary search.
    last: usize,
    /// Samples below 2^32 not yet counted into `bins`, counted [`STAGED`]
    /// at a time. Why: with thousands of tasks each task's bins are cold
    /// when it records; a batch, sorted, walks them once while they are in
    /// the cache (at 256 CPUs × 10,000 tasks one sample cost about 85 ns).
    /// Counts do not depend on the order they were added in, so every
    /// answer is the same; readers count the staged samples too.
    staged: [u32; STAGED],
    nr_staged: u8,
}

/// Samples a histogram holds back before counting them into its bins.
const STAGED: usize = 8;

/// Occupied bins, each packed with its count: the bin (HdrHistogram's
/// counts index, below 2^16) and the count beside it. A histogram starts
/// tiny, 3 bytes a bin (a count up to 255), widens to 4 (counts to 65,535)
/// the first time a bin would count 256 samples, and to 8 after that
/// (issue 18: at 10,000 tasks the histograms, then two vectors of 12 bytes
/// a bin, were half the memory; a sleeper's latencies spread over so many
/// bins that most count a few samples, so 3 bytes serve most of a run).
#[derive(Debug, Clone)]
enum Bins {
    Tiny(Vec<Tiny>),
    Narrow(Vec<u32>),
    Wide(Vec<u64>),
}

impl Default for Bins {
    fn default() -> Self {
        Bins::Tiny(Vec::new())
    }
}

/// A bin (16 bits, little-endian) and a count up to 255 in 3 bytes
/// (alignment 1, so a vector of them takes 3 bytes an entry).
#[derive(Debug, Clone, Copy)]
struct Tiny([u8; 3]);

/// A bin and its count in one word.
trait Packed: Copy {
    /// The largest count the word holds; a wide bin stops counting there
    /// (2.8·10^14 samples: nine years of one task waking a million times a
    /// simulated second) rather than spill into the bin's number.
    const COUNT_MAX: u64;
    fn new(bin: u32) -> Self;
    /// `bin` holding `count` (at most `COUNT_MAX`).
    fn with_count(bin: u32, count: u64) -> Self;
    fn bin(self) -> u32;
    fn count(self) -> u64;
    fn bump(&mut self);
}

impl Packed for Tiny {
    const COUNT_MAX: u64 = 255;
    fn new(bin: u32) -> Self {
        let b = (bin as u16).to_le_bytes();
        Tiny([b[0], b[1], 0])
    }
    fn with_count(bin: u32, count: u64) -> Self {
        let b = (bin as u16).to_le_bytes();
        Tiny([b[0], b[1], count as u8])
    }
    fn bin(self) -> u32 {
        u32::from(u16::from_le_bytes([self.0[0], self.0[1]]))
    }
    fn count(self) -> u64 {
        u64::from(self.0[2])
    }
    fn bump(&mut self) {
        self.0[2] += 1;
    }
}

impl Packed for u32 {
    const COUNT_MAX: u64 = (1 << 16) - 1;
    fn new(bin: u32) -> Self {
        bin << 16
    }
    fn with_count(bin: u32, count: u64) -> Self {
        (bin << 16) | count as u32
    }
    fn bin(self) -> u32 {
        self >> 16
    }
    fn count(self) -> u64 {
        u64::from(self & 0xffff)
    }
    fn bump(&mut self) {
        *self += 1;
    }
}

impl Packed for u64 {
    const COUNT_MAX: u64 = (1 << 48) - 1;
    fn new(bin: u32) -> Self {
        u64::from(bin) << 48
    }
    fn with_count(bin: u32, count: u64) -> Self {
        (u64::from(bin) << 48) | count
    }
    fn bin(self) -> u32 {
        (self >> 48) as u32
    }
    fn count(self) -> u64 {
        self & Self::COUNT_MAX
    }
    fn bump(&mut self) {
        if self.count() != Self::COUNT_MAX {
            *self += 1;
        }
    }
}

/// Position of `bin` in `v`, inserting it (count 0) if absent.
fn find_or_insert<P: Packed>(v: &mut Vec<P>, last: usize, bin: u32) -> usize {
    if v.get(last).is_some_and(|e| e.bin() == bin) {
        return last;
    }
    match v.binary_search_by_key(&bin, |e| e.bin()) {
        Ok(pos) => pos,
        Err(pos) => {
            // Grow by a quarter, not by doubling: a histogram lives as long
            // as its task and most stop growing early.
            if v.len() == v.capacity() {
                v.reserve_exact((v.len() / 4).max(4));
            }
            v.insert(pos, P::new(bin));
            pos
        }
    }
}

/// Count `bin` in `v` (inserting it if absent) unless its count is at
/// the width's maximum: its position, or None when it must widen first.
fn try_bump<P: Packed>(v: &mut Vec<P>, last: usize, bin: u32) -> Option<usize> {
    let pos = find_or_insert(v, last, bin);
    (v[pos].count() < P::COUNT_MAX).then(|| {
        v[pos].bump();
        pos
    })
}

/// `v`'s entries at a wider packing, in the same order.
fn widened<P: Packed, Q: Packed>(v: &[P]) -> Vec<Q> {
    v.iter()
        .map(|&e| Q::with_count(e.bin(), e.count()))
        .collect()
}

/// HdrHistogram's `value_at_quantile` over packed bins.
fn quantile_of<P: Packed>(v: &[P], q: f64, target: u64) -> Ns {
    let mut cumulative = 0u64;
    for &e in v {
        cumulative += e.count();
        if cumulative >= target {
            return if q == 0.0 {
                lowest_of(e.bin())
            } else {
                highest_of(e.bin())
            };
        }
    }
    0
}

impl LatencyHistogram {
    /// Count one sample.
    pub fn record(&mut self, value: u64) {
        match u32::try_from(value) {
            Ok(v) => {
                self.staged[usize::from(self.nr_staged)] = v;
                self.nr_staged += 1;
                if usize::from(self.nr_staged) == STAGED {
                    self.count_staged();
                }
            }
            Err(_) => self.count(value),
        }
    }

    /// Count the staged samples into the bins, in ascending order.
    fn count_staged(&mut self) {
        let n = usize::from(std::mem::take(&mut self.nr_staged));
        let mut batch = self.staged;
        batch[..n].sort_unstable();
        for &v in &batch[..n] {
            self.count(u64::from(v));
        }
    }

    /// Count the samples held back now (readers give the same answers
    /// either way; this spares them a copy).
    pub fn settle(&mut self) {
        self.count_staged();
    }

    /// This histogram with every staged sample counted (for readers).
    fn settled(&self) -> std::borrow::Cow<'_, Self> {
        if self.nr_staged == 0 {
            return std::borrow::Cow::Borrowed(self);
        }
        let mut h = self.clone();
        h.count_staged();
        std::borrow::Cow::Owned(h)
    }

    /// Count one sample into its bin.
    fn count(&mut self, value: u64) {
        let bin = bin_of(value);
        loop {
            let counted = match &mut self.bins {
                Bins::Tiny(v) => try_bump(v, self.last, bin),
                Bins::Narrow(v) => try_bump(v, self.last, bin),
                Bins::Wide(v) => {
                    // Wide bins saturate rather than widen further.
                    let pos = find_or_insert(v, self.last, bin);
                    v[pos].bump();
                    Some(pos)
                }
            };
            if let Some(pos) = counted {
                self.last = pos;
                self.total += 1;
                return;
            }
            // The bin is full: widen every entry, keeping every position
            // (so `last` stays valid), and count again.
            self.bins = match std::mem::take(&mut self.bins) {
                Bins::Tiny(v) => Bins::Narrow(widened(&v)),
                Bins::Narrow(v) => Bins::Wide(widened(&v)),
                wide @ Bins::Wide(_) => wide, // never full: it saturates
            };
        }
    }

    /// Samples recorded.
    pub fn len(&self) -> u64 {
        self.total + u64::from(self.nr_staged)
    }

    /// No samples recorded.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Occupied bins (the memory this histogram holds is proportional to it).
    pub fn occupied_bins(&self) -> usize {
        match &self.settled().bins {
            Bins::Tiny(v) => v.len(),
            Bins::Narrow(v) => v.len(),
            Bins::Wide(v) => v.len(),
        }
    }

    /// HdrHistogram's `value_at_quantile(q)`: the highest value equivalent
    /// to the sample of rank ⌈q·n⌉ (at least 1), the lowest equivalent for
    /// q = 0; 0 when empty. Like HdrHistogram it answers with a bin's upper
    /// edge, which can exceed the largest sample (callers clamp).
    pub fn value_at_quantile(&self, q: f64) -> Ns {
        let h = self.settled();
        let q = if q > 1.0 { 1.0 } else { q };
        let target = ((q * h.total as f64).ceil() as u64).max(1);
        match &h.bins {
            Bins::Tiny(v) => quantile_of(v, q, target),
            Bins::Narrow(v) => quantile_of(v, q, target),
            Bins::Wide(v) => quantile_of(v, q, target),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn reference(samples: &[u64]) -> hdrhistogram::Histogram<u64> {
        let mut h = hdrhistogram::Histogram::<u64>::new(3).expect("3 significant digits");
        for &s in samples {
            h.record(s).expect("auto-resizing histogram");
        }
        h
    }

    const QUANTILES: [f64; 9] = [0.0, 0.001, 0.25, 0.5, 0.9, 0.99, 0.999, 1.0, 1.5];

    #[test]
    fn bins_match_hdrhistogram_at_bucket_edges() {
        let h = reference(&[0]);
        for v in [
            0u64,
            1,
            1023,
            1024,
            2047,
            2048,
            2049,
            4095,
            4096,
            1 << 40,
            u64::MAX / 4,
        ] {
            assert_eq!(
                lowest_of(bin_of(v)),
                h.lowest_equivalent(v),
                "lowest of {v}"
            );
            assert_eq!(
                highest_of(bin_of(v)),
                h.highest_equivalent(v),
                "highest of {v}"
            );
        }
    }

    /// Every bin fits the 16 bits an entry keeps for it.
    #[test]
    fn every_bin_fits_sixteen_bits() {
        assert!(bin_of(u64::MAX) < 1 << 16, "{}", bin_of(u64::MAX));
        assert!((0..64).all(|k| bin_of(1u64 << k) <= bin_of(u64::MAX)));
    }

    /// A bin past 255 samples widens a tiny histogram, past 65,535 a
    /// narrow one; answers stay HdrHistogram's at every width.
    #[test]
    fn tiny_widens_to_narrow_keeping_the_answers() {
        assert_eq!(std::mem::size_of::<Tiny>(), 3);
        let mut samples: Vec<u64> = vec![1_000; 300];
        samples.extend((0..500).map(|i| 20_000 + 37 * i));
        let r = reference(&samples);
        let mut h = LatencyHistogram::default();
        for &s in &samples[..200] {
            h.record(s);
        }
        h.settle();
        assert!(matches!(h.bins, Bins::Tiny(_)));
        for &s in &samples[200..] {
            h.record(s);
        }
        h.settle();
        assert!(matches!(h.bins, Bins::Narrow(_)));
        assert_eq!(h.len(), samples.len() as u64);
        for q in QUANTILES {
            assert_eq!(h.value_at_quantile(q), r.value_at_quantile(q), "q {q}");
        }
    }

    /// A bin past 65,535 samples widens the histogram; answers stay
    /// HdrHistogram's.
    #[test]
    fn widening_keeps_the_answers() {
        let mut samples: Vec<u64> = (0..100_000).map(|i| 5 + (i % 3) / 2).collect();
        samples.extend((0..1_000).map(|i| 1_000_000 + 977 * i));
        let r = reference(&samples);
        let mut h = LatencyHistogram::default();
        for &s in &samples {
            h.record(s);
        }
        assert!(matches!(h.bins, Bins::Wide(_)));
        assert_eq!(h.len(), samples.len() as u64);
        for q in QUANTILES {
            assert_eq!(h.value_at_quantile(q), r.value_at_quantile(q), "q {q}");
        }
    }

    #[test]
    fn empty_answers_zero() {
        let h = LatencyHistogram::default();
        assert_eq!(h.value_at_quantile(0.5), 0);
        assert!(h.is_empty());
    }

    proptest! {
        #[test]
        fn quantiles_match_hdrhistogram(
            samples in prop::collection::vec(
                prop_oneof![0u64..5_000, 0u64..50_000_000, 0u64..(1 << 45)], 1..400)
        ) {
            let r = reference(&samples);
            let mut h = LatencyHistogram::default();
            for &s in &samples {
                h.record(s);
            }
            prop_assert_eq!(h.len(), samples.len() as u64);
            for q in QUANTILES {
                prop_assert_eq!(h.value_at_quantile(q), r.value_at_quantile(q), "q = {}", q);
            }
        }
    }
}
