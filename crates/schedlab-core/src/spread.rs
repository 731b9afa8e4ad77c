//! A seeded random factor with a given median (1), p90 (r) and, if asked,
//! p99: how much one wakeup's path takes longer or shorter than its median.
//!
//! Why a distribution: on a real machine the time from `sched_waking` to
//! the switch that runs the wakee varies from wakeup to wakeup (interrupt
//! entry, cache state, the hypervisor). A constant delay makes a
//! simulated task's latency p50, p90 and p99 equal, so p90 and p99 can
//! never agree with a host's whose p99 is 3–8 times its p50 (issue 13;
//! traced on the 2-vCPU 6.18 VM, docs/model.md "Wakeup costs").
//!
//! Why log-logistic: its quantile function is closed-form,
//! Q(u) = (u / (1 − u))^s, so one uniform draw gives one factor, the
//! median is exactly 1 (u = ½) and the p90 is 9^s = r, so s = log₉ r; its
//! tail is heavier than a log-normal's of the same p90, as the host's is.
//! The host's is heavier still (wakeups beside hogs: p50 7, p90 13, p99
//! 36 µs; onto an idle CPU: p50 11, p90 21, p99 37–124 µs: p99 3–5 × p90
//! where one exponent gives 99^s / 9^s = 1.9 ×), so beyond the p90 the
//! exponent may be another, t = log₁₁ (p99 / p90): Q(u) = r · (x / 9)^t
//! for x = u / (1 − u) > 9, continuous at the p90.
//!
//! All arithmetic is on integers (Q16 fixed point, the powers of two from
//! integer square roots): the same seed gives the same factors on every
//! platform, which `f64::ln`/`exp` from the platform's libm would not
//! promise.

/// Fixed-point unit: values are in 1/65536ths.
const ONE: i64 = 1 << 16;

/// Largest factor drawn (64 × the median; the host's largest path-only
/// latency traced here was 25 × its median). With the default tail
/// (p90 1.8, p99 3.5 × p90) one draw in about 8,000 is capped; a plain
/// log-logistic of p90 1.8 reaches it once in 5 million.
const MAX_FACTOR_LOG2: i64 = 6;

/// log₂ x in Q16, x ≥ 1 (the fraction bit by bit, by squaring).
fn log2_q16(x: u64) -> i64 {
    debug_assert!(x > 0);
    let int = 63 - i64::from(x.max(1).leading_zeros());
    // The mantissa in [1, 2) as Q31 (below 2^32, so its square fits u64;
    // the bits below 2^-31 of a larger x do not reach a Q16 result).
    let mut y = if int >= 31 {
        x >> (int - 31)
    } else {
        x << (31 - int)
    };
    let mut frac = 0i64;
    for bit in (0..16).rev() {
        y = (y * y) >> 31;
        if y >= 1 << 32 {
            y >>= 1;
            frac |= 1 << bit;
        }
    }
    (int << 16) | frac
}

/// A log-logistic factor source: median 1, p90 `r`.
#[derive(Debug, Clone, Copy)]
pub struct Spread {
    /// The exponent s = log₉ r, Q16.
    shape: i64,
    /// The exponent beyond the p90, Q16 (`shape` for a plain
    /// log-logistic).
    tail: i64,
    /// 2^(2^−k) in Q30 for k = 1..=16: 2^f for a Q16 fraction f is the
    /// product of those whose bit is set (Q30: two such fit u64).
    roots: [u64; 16],
}

impl Spread {
    /// The spread whose p90 is `p90_pct` % of its median and whose p99 is
    /// `p99_pct` % of its p90 (0, or ≤ 100: the plain log-logistic's
    /// 11^s); None for a `p90_pct` of 0 or ≤ 100 (no spread: every factor
    /// would be 1).
    pub fn from_pcts(p90_pct: u64, p99_pct: u64) -> Option<Spread> {
        if p90_pct <= 100 {
            return None;
        }
        let log2_r = log2_q16(p90_pct) - log2_q16(100);
        let shape = log2_r * ONE / log2_q16(9);
        let tail = if p99_pct > 100 {
            (log2_q16(p99_pct) - log2_q16(100)) * ONE / log2_q16(11)
        } else {
            shape
        };
        let mut roots = [0u64; 16];
        let mut prev: u64 = 2 << 60; // 2 in Q60: its root is √2 in Q30
        for r in roots.iter_mut() {
            *r = prev.isqrt();
            prev = *r << 30;
        }
        Some(Spread { shape, tail, roots })
    }

    /// 2^(e / 65536) in Q16, e ≤ MAX_FACTOR_LOG2 · 65536.
    fn exp2_q16(&self, e: i64) -> u64 {
        let int = e >> 16; // floor
        let frac = e & 0xffff;
        let mut r: u64 = 1 << 30;
        for (k, root) in self.roots.iter().enumerate() {
            if frac & (1 << (15 - k)) != 0 {
                r = (r * root) >> 30;
            }
        }
        // r in [1, 2) as Q30; scale by 2^int (int ≤ 6) and return Q16.
        if int >= -16 {
            (r << (int + 16)) >> 30
        } else {
            0
        }
    }

    /// One factor in Q16 (65536 = the median), from 64 random bits.
    pub fn factor_q16(&self, bits: u64) -> u64 {
        let u = 1 + ((u128::from(bits) * ((1 << 32) - 1)) >> 64) as u64; // 1 ..= 2^32 − 1
        let logit = log2_q16(u) - log2_q16((1 << 32) - u);
        let nine = log2_q16(9);
        let e = if logit <= nine {
            (self.shape * logit) >> 16
        } else {
            ((self.shape * nine) >> 16) + ((self.tail * (logit - nine)) >> 16)
        };
        self.exp2_q16(e.min(MAX_FACTOR_LOG2 * ONE))
    }

    /// `median` scaled by the factor of 64 random bits.
    pub fn scale(&self, median: u64, bits: u64) -> u64 {
        ((u128::from(median) * u128::from(self.factor_q16(bits))) >> 16) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    #[test]
    fn log2_is_exact_on_powers_of_two_and_close_elsewhere() {
        assert_eq!(log2_q16(1), 0);
        assert_eq!(log2_q16(1 << 20), 20 << 16);
        // log2(9) = 3.169925: Q16 207,744.6 (truncated).
        assert!((log2_q16(9) - 207_744).abs() <= 1, "{}", log2_q16(9));
        assert!((log2_q16(100) - 435_411).abs() <= 1, "{}", log2_q16(100));
    }

    #[test]
    fn log2_agrees_with_floating_point_over_the_draws_range() {
        let mut rng = Rng::new(11);
        let xs = (1..2000u64).chain((0..20_000).map(|_| 1 + rng.below((1 << 32) - 1)));
        for x in xs {
            let want = ((x as f64).log2() * 65536.0).floor() as i64;
            assert!(
                (log2_q16(x) - want).abs() <= 1,
                "{x}: {} vs {want}",
                log2_q16(x)
            );
        }
    }

    #[test]
    fn powers_of_two_come_back() {
        let s = Spread::from_pcts(180, 0).expect("a spread");
        assert_eq!(s.exp2_q16(0), 1 << 16);
        assert_eq!(s.exp2_q16(3 << 16), 8 << 16);
        assert_eq!(s.exp2_q16(-(1 << 16)), 1 << 15);
        // 2^0.5 = 1.414214 (Q16 92,681.9).
        assert!((s.exp2_q16(1 << 15) as i64 - 92_681).abs() <= 1);
    }

    #[test]
    fn no_spread_at_or_below_the_median() {
        assert!(Spread::from_pcts(0, 0).is_none());
        assert!(Spread::from_pcts(100, 0).is_none());
    }

    #[test]
    fn drawn_factors_have_the_asked_median_and_p90() {
        for pct in [150u64, 180, 300] {
            let s = Spread::from_pcts(pct, 0).expect("a spread");
            let mut rng = Rng::new(7);
            let mut v: Vec<u64> = (0..40_000).map(|_| s.factor_q16(rng.next_u64())).collect();
            v.sort_unstable();
            let q = |p: f64| v[(p * v.len() as f64) as usize] as f64 / 65536.0;
            let r = pct as f64 / 100.0;
            assert!((q(0.5) - 1.0).abs() < 0.02, "{pct}: p50 {}", q(0.5));
            assert!((q(0.9) / r - 1.0).abs() < 0.03, "{pct}: p90 {}", q(0.9));
            // p10 mirrors p90 (the logit is symmetric), p99 is 99^s.
            assert!((q(0.1) * r - 1.0).abs() < 0.03, "{pct}: p10 {}", q(0.1));
            let p99 = 99f64.powf(r.ln() / 9f64.ln());
            assert!(
                (q(0.99) / p99 - 1.0).abs() < 0.08,
                "{pct}: p99 {} vs {p99}",
                q(0.99)
            );
            assert!(*v.last().unwrap_or(&0) <= 64 << 16);
        }
    }

    #[test]
    fn a_heavier_tail_moves_the_p99_and_keeps_the_body() {
        let s = Spread::from_pcts(180, 350).expect("a spread");
        let mut rng = Rng::new(5);
        let mut v: Vec<u64> = (0..100_000).map(|_| s.factor_q16(rng.next_u64())).collect();
        v.sort_unstable();
        let q = |p: f64| v[(p * v.len() as f64) as usize] as f64 / 65536.0;
        assert!((q(0.5) - 1.0).abs() < 0.02, "p50 {}", q(0.5));
        assert!((q(0.9) / 1.8 - 1.0).abs() < 0.03, "p90 {}", q(0.9));
        assert!(
            (q(0.99) / (1.8 * 3.5) - 1.0).abs() < 0.08,
            "p99 {}",
            q(0.99)
        );
        // Without the tail's own exponent, p99 is the log-logistic's 99^s.
        let plain = Spread::from_pcts(180, 0).expect("a spread");
        assert_eq!(plain.tail, plain.shape);
    }

    #[test]
    fn same_seed_same_factors() {
        let s = Spread::from_pcts(180, 0).expect("a spread");
        let (mut a, mut b) = (Rng::new(3), Rng::new(3));
        let x: Vec<u64> = (0..100).map(|_| s.scale(8_000, a.next_u64())).collect();
        let y: Vec<u64> = (0..100).map(|_| s.scale(8_000, b.next_u64())).collect();
        assert_eq!(x, y);
    }
}
