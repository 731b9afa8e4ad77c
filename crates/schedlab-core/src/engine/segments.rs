//! When each CPU's running segment ends, indexed for the event loop.
//!
//! The loop needs, at every event, the earliest segment end and the lowest
//! CPU that has it (segment ends go first at equal times, lowest CPU first:
//! mod.rs `run_bounded`). Scanning every run queue for that was most of an
//! event's cost on big machines (issue 18: 64 CPUs spent about half their
//! time in such scans), so the ends live here as well, in a tournament tree
//! over (time, CPU): O(log CPUs) to change one, O(1) to read the earliest.
//! `Rq::seg_end` stays the per-CPU record; the engine writes both through
//! `Simulator::set_seg_end`.

use crate::clock::Ns;
use crate::cpuset::CpuId;

/// A CPU without a running segment: above every key of a CPU with one
/// (a segment end of `Ns::MAX` on CPU `c` keys to `Ns::MAX << 64 | c`).
const NONE: u128 = u128::MAX;

/// The key of `cpu`'s segment end: the time in the high half, the CPU in
/// the low, so that one integer comparison orders by time, then by CPU.
/// Why packed (issue 18): as a `(Ns, CpuId)` tuple each step of an update
/// was two dependent compare-and-branch pairs and a 16-byte equality;
/// packed it is one 128-bit compare (two instructions) and a conditional
/// move. `set` runs at every segment start and end (with its callers
/// 4.7 % of the big machine's run, 256 CPUs: eight levels an update);
/// packed, that run took 0.4 % fewer instructions, the same output.
#[inline]
fn key(end: Option<Ns>, cpu: CpuId) -> u128 {
    end.map_or(NONE, |e| (u128::from(e) << 64) | cpu as u128)
}

/// Tournament tree of (segment end, CPU) keys, the minimum at the root.
#[derive(Debug, Clone)]
pub(crate) struct SegmentEnds {
    /// Leaves start at `width`; node i holds the minimum of 2i and 2i+1.
    tree: Vec<u128>,
    width: usize,
}

impl SegmentEnds {
    pub(crate) fn new(cpus: usize) -> Self {
        let width = cpus.max(1).next_power_of_two();
        SegmentEnds {
            tree: vec![NONE; 2 * width],
            width,
        }
    }

    /// Record `cpu`'s segment end (`None`: no running segment).
    pub(crate) fn set(&mut self, cpu: CpuId, end: Option<Ns>) {
        let mut i = self.width + cpu;
        let leaf = key(end, cpu);
        if self.tree[i] == leaf {
            return;
        }
        self.tree[i] = leaf;
        while i > 1 {
            let min = self.tree[i].min(self.tree[i ^ 1]);
            i /= 2;
            if self.tree[i] == min {
                // Unchanged here, so unchanged above.
                break;
            }
            self.tree[i] = min;
        }
    }

    /// The earliest segment end and the lowest CPU with it.
    pub(crate) fn earliest(&self) -> Option<(Ns, CpuId)> {
        let root = self.tree[1];
        (root != NONE).then_some(((root >> 64) as Ns, root as u64 as CpuId))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earliest_is_lowest_cpu_at_the_minimum_time() {
        let mut s = SegmentEnds::new(5);
        assert_eq!(s.earliest(), None);
        s.set(3, Some(40));
        s.set(1, Some(40));
        s.set(4, Some(10));
        assert_eq!(s.earliest(), Some((10, 4)));
        s.set(4, None);
        assert_eq!(s.earliest(), Some((40, 1)));
        s.set(1, Some(50));
        assert_eq!(s.earliest(), Some((40, 3)));
        s.set(3, None);
        s.set(1, None);
        assert_eq!(s.earliest(), None);
    }

    #[test]
    fn earliest_matches_a_scan_of_every_cpu() {
        // Scrambled updates on a width that is not a power of two, against
        // the minimum of the (end, CPU) pairs found by a plain scan.
        let cpus = 37;
        let mut s = SegmentEnds::new(cpus);
        let mut ends: Vec<Option<Ns>> = vec![None; cpus];
        let mut x: u64 = 99;
        for _ in 0..5000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let cpu = (x >> 33) as usize % cpus;
            // Few distinct times, so that ties between CPUs are common;
            // now and then the largest time there is.
            let end = match (x >> 20) % 8 {
                0 => None,
                1 => Some(Ns::MAX),
                _ => Some((x >> 40) % 16),
            };
            s.set(cpu, end);
            ends[cpu] = end;
            let scan = (0..cpus).filter_map(|c| ends[c].map(|e| (e, c))).min();
            assert_eq!(s.earliest(), scan);
        }
    }
}
