//! CacULE's score, computed faster with the same values: the IS memo of
//! each node and the cache/starvation terms with the run's divisions
//! precomputed (see the speed notes in the header of policy/cacule.rs).

use super::Factors;

/// An IS value with the lives over which it holds for one vruntime:
/// `interactivity_score(l, v, m) == val` for every `l` in `lo..=hi`.
#[derive(Debug, Clone, Copy)]
pub(super) struct IsMemo {
    v: u64,
    lo: u64,
    hi: u64,
    val: u32,
}

impl Default for IsMemo {
    fn default() -> Self {
        // An empty range: matches nothing.
        IsMemo {
            v: 0,
            lo: u64::MAX,
            hi: 0,
            val: 0,
        }
    }
}

impl IsMemo {
    /// The IS of a node with `life` and `vruntime`, from the memo when it
    /// covers them, else computed and memoised with the range of lives
    /// over which it stays the same.
    ///
    /// Exact because IS is monotone (non-increasing) in life for a fixed
    /// vruntime (s = (l − v)|1 grows with l; m/(s/v) and 2m − m/(v/s) both
    /// fall as s grows and meet at m) as long as 2·m fits the `unsigned
    /// int` result (m < 2^31, else nothing is memoised): a value found at
    /// both ends of a range holds across it, so the candidate end given
    /// by the formulas below is kept only if the IS there is the same.
    #[inline]
    pub(super) fn get(&mut self, life: u64, vruntime: u64, m: u32) -> u32 {
        if self.v == vruntime && self.lo <= life && life <= self.hi {
            return self.val;
        }
        self.fill(life, vruntime, m)
    }

    /// The memoised IS if the memo covers `life` and `vruntime`.
    #[inline]
    pub(super) fn peek(&self, life: u64, vruntime: u64) -> Option<u32> {
        (self.v == vruntime && self.lo <= life && life <= self.hi).then_some(self.val)
    }

    /// The memo's range of lives and value if it is for `vruntime`.
    pub(super) fn span(&self, vruntime: u64) -> Option<(u64, u64, u32)> {
        (self.v == vruntime && self.lo <= self.hi).then_some((self.lo, self.hi, self.val))
    }

    /// The last life this memo holds for (after [`Self::get`]: at least
    /// the life it was asked about).
    pub(super) fn last_life(&self) -> u64 {
        self.hi
    }

    #[cold]
    fn fill(&mut self, life: u64, vruntime: u64, m: u32) -> u32 {
        let (val, hi) = is_and_last_life(life, vruntime, m);
        *self = IsMemo {
            v: vruntime,
            lo: life,
            hi,
            val,
        };
        val
    }
}

/// `interactivity_score(life, vruntime, m)` and the last life up to which
/// it keeps that value (at least `life`), with the score's own quotients:
/// * s = (l − v)|1 ≥ v: IS = m/q with q = s/v, which only grows with l;
///   m/q keeps its value for q up to q_hi = m/(m/q) (forever once it is
///   0), i.e. while s ≤ (q_hi + 1)·v − 1 (a product beyond 2^64 bounds no
///   s);
/// * s < v: IS = 2m − m/r with r = v/s, which keeps its value while r
///   does, i.e. while s ≤ v/r;
/// * l ≤ v: s = 1 until l passes v;
///
/// and s ≤ l − v + 1, so s ≤ s_max for every l ≤ s_max + v − 1. Only where
/// 2·m fits the `unsigned int` result (m < 2^31) is IS monotone in l;
/// otherwise the span is `life` alone.
pub(super) fn is_and_last_life(life: u64, vruntime: u64, m: u32) -> (u32, u64) {
    let v = vruntime | 1;
    let mm = u64::from(m);
    let s = if life > v { (life - v) | 1 } else { 1 };
    let (score, s_max) = if s >= v {
        let q = s / v;
        let x = mm / q;
        let q_hi = match x {
            0 => u64::MAX,
            x => mm / x,
        };
        (
            x,
            q_hi.saturating_add(1).saturating_mul(v).saturating_sub(1),
        )
    } else {
        let r = v / s;
        ((mm << 1) - mm / r, v / r)
    };
    let last = match (m < 1 << 31, life <= v) {
        (false, _) => life,
        (true, true) => v,
        (true, false) => s_max.saturating_add(v).saturating_sub(1),
    };
    (score as u32, last.max(life))
}

/// Exact division by a divisor fixed for the run (`n / d` for every n):
/// one multiplication for n < 2^62 with m = ⌈2^k/d⌉, k = 63 + ⌊log2 d⌋
/// (so m ≤ 2^63): n·m/2^k = n/d + n·e/(d·2^k) with e = m·d − 2^k < d,
/// and n·e < 2^k whenever n < 2^k/d, which holds for n < 2^62.
#[derive(Debug, Clone, Copy)]
struct DivBy {
    d: u64,
    m: u64,
    k: u32,
}

impl DivBy {
    fn new(d: u64) -> Self {
        let d = d.max(1);
        let k = 63 + (63 - d.leading_zeros());
        let m = (1u128 << k).div_ceil(u128::from(d)) as u64;
        DivBy { d, m, k }
    }

    #[inline]
    fn div(&self, n: u64) -> u64 {
        if n < 1 << 62 {
            ((u128::from(n) * u128::from(self.m)) >> self.k) as u64
        } else {
            n / self.d
        }
    }
}

/// `m / q` for a factor m fixed for the run, from a table for small q.
#[derive(Debug, Clone)]
struct FactorDiv {
    m: u64,
    table: Vec<u64>,
}

impl FactorDiv {
    const TABLE: u64 = 4096;

    fn new(m: u32) -> Self {
        let m = u64::from(m);
        let n = Self::TABLE.min(m + 1);
        FactorDiv {
            m,
            table: (0..n).map(|q| m.checked_div(q).unwrap_or(0)).collect(),
        }
    }

    /// `m / q`, q ≥ 1.
    #[inline]
    fn of(&self, q: u64) -> u64 {
        match self.table.get(q as usize) {
            Some(x) => *x,
            None if q > self.m => 0,
            None => self.m / q,
        }
    }
}

/// `cache_score` and `starve_score` with the run's factors and divisors
/// precomputed (the same u64 arithmetic, divisions by the fixed divisors
/// and of the fixed factors replaced by exact shortcuts).
#[derive(Debug, Clone)]
pub(super) struct FastTerms {
    cache: FactorDiv,
    cache_div: DivBy,
    starve: FactorDiv,
    starve_div: DivBy,
}

impl FastTerms {
    pub(super) fn new(f: &Factors) -> Self {
        FastTerms {
            cache: FactorDiv::new(f.cache),
            cache_div: DivBy::new(f.cache_divisor),
            starve: FactorDiv::new(f.starve),
            starve_div: DivBy::new(f.starve_divisor),
        }
    }

    /// `cache_score(since_exec_start, m_C, cache_divisor)`.
    #[inline]
    pub(super) fn cache(&self, since_exec_start: u64) -> u32 {
        let (m, divisor) = (self.cache.m, self.cache_div.d);
        if m == 0 {
            return 0;
        }
        let p = since_exec_start | 1;
        let score = if divisor >= p {
            self.cache.of(divisor / p)
        } else {
            (m << 1) - self.cache.of(self.cache_div.div(p))
        };
        score as u32
    }

    /// `starve_score(since_last_run, m_S, starve_divisor)`.
    #[inline]
    pub(super) fn starve(&self, since_last_run: u64) -> u32 {
        let (m, divisor) = (self.starve.m, self.starve_div.d);
        if m == 0 {
            return 0;
        }
        let t = since_last_run | 1;
        let score = if divisor >= t {
            (m << 1) - self.starve.of(divisor / t)
        } else {
            self.starve.of(self.starve_div.div(t))
        };
        score as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::MSEC;
    use crate::policy::cacule::{cache_score, interactivity_score, starve_score, YIELD_MARK};
    use crate::rng::Rng;

    /// Values around the divisors, their multiples and the 2^62 switch.
    fn samples(rng: &mut Rng, scale: u64) -> Vec<u64> {
        let mut v: Vec<u64> = vec![0, 1, 2, 3, (1 << 62) - 1, 1 << 62, u64::MAX, u64::MAX - 1];
        for k in [1u64, 2, 3, 999, 1000, 4095, 4096, 4097, 1 << 20] {
            let x = k.saturating_mul(scale);
            v.extend([x.saturating_sub(1), x, x.saturating_add(1)]);
        }
        for _ in 0..2000 {
            let r = rng.next_u64();
            v.push(r >> (r % 64));
        }
        v
    }

    #[test]
    fn the_fast_terms_equal_the_kernel_formulas() {
        let mut rng = Rng::new(7);
        for (mc, c, ms, d) in [
            (13_107, MSEC, 19_660, 3 * MSEC),
            (0, 1, 0, 1),
            (1, 1, 1, 7),
            (i32::MAX as u32, 1_000_000_000, 5, 999_999_937),
            (4096, 4095, 4095, 4097),
        ] {
            let f = Factors {
                interactivity: 65_536,
                cache: mc,
                cache_divisor: c,
                starve: ms,
                starve_divisor: d,
            };
            let fast = FastTerms::new(&f);
            for x in samples(&mut rng, c.max(d)) {
                assert_eq!(fast.cache(x), cache_score(x, mc, c), "cache {x} {mc} {c}");
                assert_eq!(
                    fast.starve(x),
                    starve_score(x, ms, d),
                    "starve {x} {ms} {d}"
                );
            }
            for n in samples(&mut rng, c) {
                assert_eq!(DivBy::new(c).div(n), n / c, "{n} / {c}");
            }
        }
    }

    #[test]
    fn the_is_span_ends_where_the_score_may_change() {
        let mut rng = Rng::new(5);
        for m in [65_536u32, 1, 3, 4096, (1 << 31) - 1] {
            for _ in 0..20_000 {
                let v = rng.next_u64() >> (rng.next_u64() % 64);
                let life = rng.next_u64() >> (rng.next_u64() % 64);
                let (is, last) = is_and_last_life(life, v, m);
                assert_eq!(
                    is,
                    interactivity_score(life, v, m),
                    "life {life} v {v} m {m}"
                );
                assert!(last >= life);
                for l in [life + (last - life) / 2, last] {
                    assert_eq!(
                        interactivity_score(l, v, m),
                        is,
                        "life {life}..{l} v {v} m {m}"
                    );
                }
            }
        }
    }

    #[test]
    fn the_is_memo_returns_the_formula_at_every_life() {
        let mut rng = Rng::new(11);
        for m in [65_536u32, 1, 3, (1 << 31) - 1, 1 << 31, u32::MAX] {
            for v in [0u64, 1, 2, 1000, 4_000_000, YIELD_MARK | 77, u64::MAX] {
                let mut memo = IsMemo::default();
                let mut life = rng.next_u64() % 1000;
                for _ in 0..3000 {
                    assert_eq!(
                        memo.get(life, v, m),
                        interactivity_score(life, v, m),
                        "life {life} v {v} m {m}"
                    );
                    let r = rng.next_u64();
                    life = life.saturating_add(r >> (20 + r % 44));
                }
            }
        }
    }
}
