//! A latency histogram with HdrHistogram's bins (3 significant digits, lowest
//! discernible value 1 ns), stored sparsely.
//!
//! Why not the `hdrhistogram` crate itself: its counts array is dense, so one
//! histogram of nanosecond latencies covering a few hundred milliseconds
//! holds about 20,000 counters (~170 KB), grows by copying, and
//! `value_at_quantile` scans every counter. With one histogram per task that
//! was most of the memory and, at 10,000 tasks, most of the run time
//! (issue 18). A task's latencies fall into a few hundred distinct bins in
//! a run of seconds, a few thousand in ten simulated minutes, so the bins
//! that hold samples are kept here in a sorted vector.
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
    /// The occupied bins, ascending, each with its count up to 255.
    bins: Bins,
    /// What the bins at 255 counted beyond it (`Spill`); none until a bin
    /// first reaches 255.
    spill: Option<Box<Spill>>,
    /// Samples in all.
    total: u64,
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

/// The counts beyond 255 of the bins whose byte is full: (bin, count −
/// 255), ascending by bin. Why apart from the bins (issue 18, memory at
/// 600 s): a sleeper's latencies spread over thousands of bins, most of
/// which count a few samples (8-CPU run of the suite's big-machine mix,
/// 600 s: 4,785 occupied bins a sleeper, 28 % of them counting one, 2 of
/// them past 255). When every bin widened together the first time one
/// reached 256, as before, the whole histogram paid 4 bytes a bin (and 8
/// past 65,535) for those few.
type Spill = Vec<(u16, u64)>;

/// The occupied bins and their counts up to 255, in 2 bytes a bin: bins
/// are grouped in pages of 256 by their high byte (a bin is below 2^16),
/// and each entry holds the bin's low byte and its count. Why (issue 18,
/// memory at 600 s): 3 bytes a bin, the bin whole beside its count, were
/// most of a long run's memory; a sleeper's bins fall in about 55 pages.
#[derive(Debug, Clone, Default)]
struct Bins {
    /// (low byte, count) of every occupied bin, ascending by bin.
    entries: Vec<[u8; 2]>,
    /// The occupied pages, ascending, each with the index in `entries` of
    /// its first bin (a page's bins run to the next page's first).
    pages: Vec<Page>,
    /// Page and entry index of the last bin counted: consecutive samples
    /// of a task often share a bin, so this spares the searches.
    last: (usize, usize),
}

/// A page of bins: the high byte they share, and where they start.
#[derive(Debug, Clone, Copy)]
struct Page {
    high: u8,
    /// Below 2^16: there are fewer bins than that (`bin_of(u64::MAX)`).
    start: u16,
}

impl Bins {
    /// Count one sample in `bin`, unless its count is full (255): then
    /// false, and the caller counts it elsewhere.
    fn count_one(&mut self, bin: u32) -> bool {
        let (high, low) = ((bin >> 8) as u8, bin as u8);
        let (p, e) = self.last;
        let at = if self.pages.get(p).is_some_and(|pg| pg.high == high)
            && self.entries.get(e).is_some_and(|x| x[0] == low)
        {
            e
        } else {
            let p = self.page_or_insert(high);
            let e = self.entry_or_insert(p, low);
            self.last = (p, e);
            e
        };
        let count = &mut self.entries[at][1];
        if *count == u8::MAX {
            return false;
        }
        *count += 1;
        true
    }

    /// Index in `pages` of page `high`, inserted (empty) if absent.
    fn page_or_insert(&mut self, high: u8) -> usize {
        match self.pages.binary_search_by_key(&high, |pg| pg.high) {
            Ok(p) => p,
            Err(p) => {
                // Empty, it starts where the page it goes before starts.
                let start = self
                    .pages
                    .get(p)
                    .map_or(self.entries.len(), |pg| usize::from(pg.start));
                self.pages.insert(
                    p,
                    Page {
                        high,
                        start: start as u16,
                    },
                );
                p
            }
        }
    }

    /// Index in `entries` of bin `low` of page `p`, inserted (count 0) if
    /// absent; the pages after `p` start one later then.
    fn entry_or_insert(&mut self, p: usize, low: u8) -> usize {
        let start = usize::from(self.pages[p].start);
        let end = self.end_of(p);
        match self.entries[start..end].binary_search_by_key(&low, |x| x[0]) {
            Ok(i) => start + i,
            Err(i) => {
                // Grow by a quarter, not by doubling: a histogram lives as
                // long as its task and most stop growing early.
                if self.entries.len() == self.entries.capacity() {
                    self.entries.reserve_exact((self.entries.len() / 4).max(4));
                }
                self.entries.insert(start + i, [low, 0]);
                for pg in &mut self.pages[p + 1..] {
                    pg.start += 1;
                }
                start + i
            }
        }
    }

    /// Index in `entries` one past page `p`'s last bin.
    fn end_of(&self, p: usize) -> usize {
        self.pages
            .get(p + 1)
            .map_or(self.entries.len(), |pg| usize::from(pg.start))
    }

    /// Occupied bins.
    fn len(&self) -> usize {
        self.entries.len()
    }

    /// (bin, count up to 255) of each occupied bin, ascending.
    fn iter(&self) -> impl Iterator<Item = (u32, u8)> + '_ {
        self.pages.iter().enumerate().flat_map(move |(p, pg)| {
            let range = usize::from(pg.start)..self.end_of(p);
            self.entries[range]
                .iter()
                .map(move |&[low, n]| ((u32::from(pg.high) << 8) | u32::from(low), n))
        })
    }

    /// Bytes on the heap, as allocated.
    fn heap_bytes(&self) -> usize {
        self.entries.capacity() * 2 + self.pages.capacity() * std::mem::size_of::<Page>()
    }
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
        if !self.bins.count_one(bin) {
            self.spill_one(bin);
        }
        self.total += 1;
    }

    /// Count one more sample of full `bin` in the spill (saturating at
    /// 2^64 − 1 beyond its byte: no run comes near).
    #[cold]
    fn spill_one(&mut self, bin: u32) {
        let spill = self.spill.get_or_insert_with(Box::default);
        let bin = bin as u16;
        match spill.binary_search_by_key(&bin, |&(b, _)| b) {
            Ok(i) => spill[i].1 = spill[i].1.saturating_add(1),
            Err(i) => spill.insert(i, (bin, 1)),
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
        self.settled().bins.len()
    }

    /// Bytes this histogram holds on the heap (its bins' and its spill's
    /// buffers, as allocated).
    pub fn heap_bytes(&self) -> usize {
        let spill = self.spill.as_ref().map_or(0, |s| {
            std::mem::size_of::<Spill>() + s.capacity() * std::mem::size_of::<(u16, u64)>()
        });
        self.bins.heap_bytes() + spill
    }

    /// HdrHistogram's `value_at_quantile(q)`: the highest value equivalent
    /// to the sample of rank ⌈q·n⌉ (at least 1), the lowest equivalent for
    /// q = 0; 0 when empty. Like HdrHistogram it answers with a bin's upper
    /// edge, which can exceed the largest sample (callers clamp).
    pub fn value_at_quantile(&self, q: f64) -> Ns {
        let h = self.settled();
        let q = if q > 1.0 { 1.0 } else { q };
        let target = ((q * h.total as f64).ceil() as u64).max(1);
        // The spill's entries in bin order, met as their full bins are.
        // (A bin that has just reached 255 has no entry yet.)
        let mut spilled = h
            .spill
            .as_deref()
            .map_or(&[][..], |s| &s[..])
            .iter()
            .peekable();
        let mut cumulative = 0u64;
        for (bin, n) in h.bins.iter() {
            cumulative += u64::from(n);
            if n == u8::MAX {
                if let Some(&(_, extra)) = spilled.next_if(|&&(b, _)| u32::from(b) == bin) {
                    cumulative = cumulative.saturating_add(extra);
                }
            }
            if cumulative >= target {
                return if q == 0.0 {
                    lowest_of(bin)
                } else {
                    highest_of(bin)
                };
            }
        }
        0
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

    /// A bin past 255 samples counts the rest in the spill (and one
    /// that has just reached 255 has no spill entry yet); answers stay
    /// HdrHistogram's, also with bins on both sides of a full one.
    #[test]
    fn full_bins_spill_keeping_the_answers() {
        let mut samples: Vec<u64> = vec![1_000; 300];
        samples.extend(vec![900; 255]); // exactly full: no spill entry
        samples.extend((0..500).map(|i| 20_000 + 37 * i));
        samples.extend(vec![70_000; 1_000]);
        let r = reference(&samples);
        let mut h = LatencyHistogram::default();
        for &s in &samples {
            h.record(s);
        }
        h.settle();
        let spill = h.spill.as_deref().expect("two bins spilled");
        assert_eq!(spill.len(), 2, "{spill:?}");
        assert_eq!(spill[0], (bin_of(1_000) as u16, 45));
        assert_eq!(h.len(), samples.len() as u64);
        for q in QUANTILES {
            assert_eq!(h.value_at_quantile(q), r.value_at_quantile(q), "q {q}");
        }
        let mut quantiles = (1..1000).map(|k| f64::from(k) / 1000.0);
        assert!(quantiles.all(|q| h.value_at_quantile(q) == r.value_at_quantile(q)));
    }

    /// A bin past 65,535 samples (the old narrow width's limit) keeps
    /// counting; answers stay HdrHistogram's.
    #[test]
    fn large_counts_keep_the_answers() {
        let mut samples: Vec<u64> = (0..100_000).map(|i| 5 + (i % 3) / 2).collect();
        samples.extend((0..1_000).map(|i| 1_000_000 + 977 * i));
        let r = reference(&samples);
        let mut h = LatencyHistogram::default();
        for &s in &samples {
            h.record(s);
        }
        assert_eq!(h.len(), samples.len() as u64);
        for q in QUANTILES {
            assert_eq!(h.value_at_quantile(q), r.value_at_quantile(q), "q {q}");
        }
    }

    /// Two bytes a bin (and a quarter's growth room, and 4 bytes a page
    /// of 256 bins) however many samples some bins hold: a run of ten
    /// simulated minutes, as the suite's big machine's sleepers see
    /// (thousands of bins, a few of them past 255), where widening every
    /// bin cost 4 bytes a bin (and 8 past 65,535), and a bin beside its
    /// count 3.
    #[test]
    fn a_bin_costs_two_bytes_with_a_few_large_counts() {
        let mut h = LatencyHistogram::default();
        let mut rng = crate::rng::Rng::new(3);
        for _ in 0..40_000 {
            h.record(1_000 + rng.below(4_000_000));
        }
        for _ in 0..70_000 {
            h.record(5_000); // one bin past 65,535
        }
        h.settle();
        let bins = h.occupied_bins();
        assert!(bins > 4_000, "{bins}");
        assert_eq!(h.spill.as_deref().map(|s| s.len()), Some(1));
        let per_bin = h.heap_bytes() as f64 / bins as f64;
        assert!(per_bin <= 2.0 * 1.25 + 0.1, "{per_bin} bytes a bin");
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

        /// Few distinct values, many samples: full bins and their spill.
        #[test]
        fn quantiles_match_hdrhistogram_with_full_bins(
            samples in prop::collection::vec(
                prop_oneof![0u64..40, 100_000u64..100_200], 200..3_000)
        ) {
            let r = reference(&samples);
            let mut h = LatencyHistogram::default();
            for &s in &samples {
                h.record(s);
            }
            prop_assert_eq!(h.len(), samples.len() as u64);
            for q in QUANTILES.into_iter().chain((1..100).map(|k| f64::from(k) / 100.0)) {
                prop_assert_eq!(h.value_at_quantile(q), r.value_at_quantile(q), "q = {}", q);
            }
        }
    }
}
