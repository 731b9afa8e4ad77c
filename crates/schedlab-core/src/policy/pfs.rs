//! PFS, process-fair scheduling: the baseline of seed 003
//! (../shared/seeds/003_966d5ac02bf4bec7.txt, seed-algorithms.md §3.5).
//!
//! Every thread of a process with N_t live threads gets w / N_t, so a
//! process's threads together weigh what one thread of nice w would:
//! fairness between processes regardless of thread count, without cgroups.

/// One-line description for listings.
pub const DESCRIPTION: &str =
    "process-fair weights: each of a process's N_t threads gets w/N_t (seed 003 baseline)";

/// w / N_t, rounded to the nearest integer weight.
pub fn weight(w: u64, threads: usize) -> u64 {
    let n = threads.max(1) as u64;
    (w + n / 2) / n
}

#[cfg(test)]
mod tests {
    #[test]
    fn splits_the_nice_weight() {
        assert_eq!(super::weight(1024, 1), 1024);
        assert_eq!(super::weight(1024, 4), 256);
        assert_eq!(super::weight(1024, 3), 341);
    }
}
