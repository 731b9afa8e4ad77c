//! Nice-to-weight tables and `calc_delta_fair` (linux-cfs.md §2).

/// `NICE_0_LOAD` in unscaled units.
pub const NICE_0_LOAD: u64 = 1024;
/// `WEIGHT_IDLEPRIO`: SCHED_IDLE weight.
pub const WEIGHT_IDLEPRIO: u64 = 3;
const WMULT_IDLEPRIO: u32 = 1_431_655_765;
/// `MIN_SHARES`
pub const MIN_SHARES: u64 = 2;

/// `sched_prio_to_weight` (nice −20 … 19).
pub const PRIO_TO_WEIGHT: [u64; 40] = [
    88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916, 9548, 7620, 6100, 4904,
    3906, 3121, 2501, 1991, 1586, 1277, 1024, 820, 655, 526, 423, 335, 272, 215, 172, 137, 110, 87,
    70, 56, 45, 36, 29, 23, 18, 15,
];

/// `sched_prio_to_wmult` = 2^32 / weight.
pub const PRIO_TO_WMULT: [u32; 40] = [
    48388, 59856, 76040, 92818, 118348, 147320, 184698, 229616, 287308, 360437, 449829, 563644,
    704093, 875809, 1099582, 1376151, 1717300, 2157191, 2708050, 3363326, 4194304, 5237765,
    6557202, 8165337, 10153587, 12820798, 15790321, 19976592, 24970740, 31350126, 39045157,
    49367440, 61356676, 76695844, 95443717, 119304647, 148102320, 186737708, 238609294, 286331153,
];

/// Weight of a nice value.
pub fn nice_to_weight(nice: i32) -> u64 {
    PRIO_TO_WEIGHT[(nice.clamp(-20, 19) + 20) as usize]
}

/// `struct load_weight`: a weight and its 2^32 inverse.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoadWeight {
    /// Weight (unscaled, nice 0 = 1024).
    pub weight: u64,
    /// `inv_weight` = 2^32 / weight (from the tables where they apply).
    pub inv: u32,
}

impl LoadWeight {
    /// Weight with the kernel's inverse (`set_load_weight` for table
    /// weights, `__update_inv_weight` for the rest).
    pub fn new(weight: u64) -> Self {
        let inv = if weight == WEIGHT_IDLEPRIO {
            WMULT_IDLEPRIO
        } else if let Some(i) = PRIO_TO_WEIGHT.iter().position(|w| *w == weight) {
            PRIO_TO_WMULT[i]
        } else {
            (u32::MAX as u64)
                .checked_div(weight)
                .map_or(u32::MAX, |i| i as u32)
        };
        LoadWeight { weight, inv }
    }
}

fn fls64(x: u64) -> u32 {
    64 - x.leading_zeros()
}

/// `__calc_delta(delta, weight, lw)` = delta · weight / lw.weight, with the
/// kernel's 32-bit fixed-point inverse and shifts.
pub fn calc_delta(delta: u64, weight: u64, lw: LoadWeight) -> u64 {
    let mut fact = weight;
    let mut shift: u32 = 32;
    let hi = fact >> 32;
    if hi != 0 {
        let fs = fls64(hi);
        shift -= fs;
        fact >>= fs;
    }
    fact = (fact & 0xFFFF_FFFF) * lw.inv as u64;
    let hi = fact >> 32;
    if hi != 0 {
        let fs = fls64(hi);
        shift -= fs;
        fact >>= fs;
    }
    ((delta as u128 * fact as u128) >> shift) as u64
}

/// `calc_delta_fair`: wall-clock `delta` as virtual time of `lw`.
pub fn calc_delta_fair(delta: u64, lw: LoadWeight) -> u64 {
    if lw.weight == NICE_0_LOAD {
        delta
    } else {
        calc_delta(delta, NICE_0_LOAD, lw)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calc_delta_matches_exact_division() {
        for nice in -20..=19 {
            let lw = LoadWeight::new(nice_to_weight(nice));
            let d = 4_000_000u64;
            let exact = d as f64 * 1024.0 / lw.weight as f64;
            let got = calc_delta_fair(d, lw) as f64;
            assert!(
                (got - exact).abs() <= exact * 1e-6 + 1.0,
                "nice {nice}: {got} vs {exact}"
            );
        }
    }

    #[test]
    fn adjacent_nice_levels_differ_by_about_25_percent() {
        for n in -20..19 {
            let r = nice_to_weight(n) as f64 / nice_to_weight(n + 1) as f64;
            assert!((1.2..1.3).contains(&r), "{n}: {r}");
        }
    }
}
