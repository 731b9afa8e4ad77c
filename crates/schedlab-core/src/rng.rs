//! The one seeded random number generator of a run (SplitMix64).
//!
//! The engine owns a single instance; nothing else in the simulator draws
//! random numbers, so a run is a pure function of (workload, config, seed).
//! [`keyed`] derives a draw from the same seed without advancing that
//! instance: a value fixed by (seed, key, n) whatever other draws came
//! first, so that two schedulers run on one workload and seed give, say,
//! a task's n-th wakeup the same random cost (common random numbers: the
//! difference between their results is the schedulers', not the draws').

/// SplitMix64 (Steele, Lea, Flood 2014): tiny, fast, and fully specified, so
/// the sequence is identical on every platform and Rust version.
#[derive(Debug, Clone)]
pub struct Rng {
    state: u64,
}

impl Rng {
    /// A generator whose whole future is fixed by `seed`.
    pub fn new(seed: u64) -> Self {
        Rng { state: seed }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A value in `0..n` (n > 0), by Lemire's multiply-shift (bias < 2^-32 for small n).
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }
}

/// The `n`-th draw of stream `key` under `seed` (SplitMix64's output
/// function over a state that mixes the three): independent of every
/// other draw of the run.
pub fn keyed(seed: u64, key: u64, n: u64) -> u64 {
    Rng::new(seed ^ key.wrapping_mul(0xD6E8_FEB8_6659_FD93) ^ n.wrapping_mul(0xA076_1D64_78BD_642F))
        .next_u64()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_sequence() {
        let mut a = Rng::new(42);
        let mut b = Rng::new(42);
        for _ in 0..100 {
            assert_eq!(a.next_u64(), b.next_u64());
        }
        assert_ne!(Rng::new(1).next_u64(), Rng::new(2).next_u64());
    }

    #[test]
    fn below_stays_in_range() {
        let mut r = Rng::new(7);
        for _ in 0..1000 {
            assert!(r.below(5) < 5);
        }
    }
}
