//! Fair-class tunables and scheduler features, with their kernel defaults
//! (linux-cfs.md §4 and "Defaults"; linux-eevdf.md §3 and "Defaults").
//!
//! Values are *normalized* (as written to debugfs on a 1-CPU machine); the
//! effective latency, granularities and base slice are multiplied by the
//! CPU-count factor of `get_update_sysctl_factor` (linux-cfs.md §4).

use crate::tunable::{Tunable, TunableSet};

/// Which fair class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    /// CFS as in Linux 6.1 (linux-cfs.md).
    Cfs,
    /// EEVDF as in Linux 6.12 (Debian 6.12.117, linux-eevdf.md).
    Eevdf,
}

const fn t(name: &'static str, default: i64, min: i64, max: i64, doc: &'static str) -> Tunable {
    Tunable {
        name,
        default,
        min,
        max,
        unit: crate::tunable::unit_of(name, max),
        doc,
    }
}

/// Tunables of `cfs` (6.1).
pub const CFS_TUNABLES: &[Tunable] = &[
    t("latency_ns", 6_000_000, 100_000, 1_000_000_000, "sysctl_sched_latency, normalized (x CPU factor)"),
    t("min_granularity_ns", 750_000, 100_000, 1_000_000_000, "sysctl_sched_min_granularity, normalized"),
    t("wakeup_granularity_ns", 1_000_000, 0, 1_000_000_000, "sysctl_sched_wakeup_granularity, normalized"),
    t("idle_min_granularity_ns", 750_000, 100_000, 1_000_000_000, "min slice of SCHED_IDLE entities (not scaled)"),
    t("tunable_scaling", 1, 0, 2, "0 none, 1 log (1+ilog2(min(cpus,8))), 2 linear"),
    t("migration_cost_ns", 500_000, 0, 1_000_000_000, "cache-hot window for load balancing"),
    t("nr_migrate", 32, 1, 1024, "max tasks examined per balance pass"),
    t("gentle_fair_sleepers", 1, 0, 1, "feature: sleeper credit is latency/2"),
    t("start_debit", 1, 0, 1, "feature: new tasks start one vslice late"),
    t("next_buddy", 0, 0, 1, "feature NEXT_BUDDY"),
    t("last_buddy", 1, 0, 1, "feature LAST_BUDDY"),
    t("wakeup_preemption", 1, 0, 1, "feature WAKEUP_PREEMPTION"),
    t("cache_hot_buddy", 1, 0, 1, "feature CACHE_HOT_BUDDY"),
    t("autogroup", 0, 0, 1, "1: every process in its own autogroup, as if started with setsid (kernel default 0 in Debian 6.1; 0 here matches one shared session)"),
    t("balance_stagger", 1, 0, 1, "1: each CPU's periodic load balance starts at a seeded random point of its busy interval, as on a machine that has been up (its CPUs' sd->last_balance drifted apart through idle periods); 0: every CPU's at the run's start, as just after boot, so that all balance at the same tick"),
];

/// Tunables of `eevdf` (6.12).
pub const EEVDF_TUNABLES: &[Tunable] = &[
    t("base_slice_ns", 700_000, 100_000, 1_000_000_000, "sysctl_sched_base_slice, normalized (0.70 ms in 6.12.117, 0.75 ms in 6.12.0)"),
    t("tunable_scaling", 1, 0, 2, "0 none, 1 log (1+ilog2(min(cpus,8))), 2 linear"),
    t("migration_cost_ns", 500_000, 0, 1_000_000_000, "cache-hot window for load balancing"),
    t("nr_migrate", 32, 1, 1024, "max tasks examined per balance pass"),
    t("run_to_parity", 1, 0, 1, "feature RUN_TO_PARITY"),
    t("place_lag", 1, 0, 1, "feature PLACE_LAG"),
    t("place_deadline_initial", 1, 0, 1, "feature PLACE_DEADLINE_INITIAL"),
    t("place_rel_deadline", 1, 0, 1, "feature PLACE_REL_DEADLINE"),
    t("preempt_short", 1, 0, 1, "feature PREEMPT_SHORT"),
    t("delay_dequeue", 1, 0, 1, "feature DELAY_DEQUEUE"),
    t("delay_zero", 1, 0, 1, "feature DELAY_ZERO"),
    t("pick_buddy", 1, 0, 1, "feature PICK_BUDDY"),
    t("next_buddy", 0, 0, 1, "feature NEXT_BUDDY"),
    t("wakeup_preemption", 1, 0, 1, "feature WAKEUP_PREEMPTION"),
    t("cache_hot_buddy", 1, 0, 1, "feature CACHE_HOT_BUDDY"),
    t("yield_forfeit", 1, 0, 1, "yield forfeits the rest of the request (6.12.y backport; 0 = 6.12.0 deadline push)"),
    t("ni_random", 1, 0, 1, "feature NI_RANDOM (proportional newidle balance, 6.18.5+ and 6.12.65+ backports): each domain's newly-idle balance runs with probability (1 + newidle_ratio) / 1024, newidle_ratio its weighted success count over the last 1024 calls; 0 = always run it (6.12.0 to 6.18.4)"),
    t("newidle_ratio_init", 512, 0, 1024, "each domain's newidle_ratio at the run's start (sd_init: 512; a machine whose recent newly-idle balances found nothing holds less): the history the kernel carries into a workload"),
    t("balance_stagger", 1, 0, 1, "1: each CPU's periodic load balance starts at a seeded random point of its busy interval, as on a machine that has been up (its CPUs' sd->last_balance drifted apart through idle periods); 0: every CPU's at the run's start, as just after boot, so that all balance at the same tick"),
    t("autogroup", 0, 0, 1, "1: every process in its own autogroup, as if started with setsid (0 matches all workload processes in one session, as the host runner starts them)"),
];

/// Effective fair-class parameters for one run.
#[derive(Debug, Clone)]
pub struct FairParams {
    /// Version.
    pub version: Version,
    /// CPU-count factor.
    pub factor: u64,
    /// Effective sysctl_sched_latency.
    pub latency: u64,
    /// Effective min granularity.
    pub min_gran: u64,
    /// Effective wakeup granularity.
    pub wakeup_gran: u64,
    /// idle_min_granularity (not scaled).
    pub idle_min_gran: u64,
    /// sched_nr_latency.
    pub nr_latency: u64,
    /// Effective base slice (EEVDF).
    pub base_slice: u64,
    /// migration_cost_ns.
    pub migration_cost: u64,
    /// nr_migrate.
    pub nr_migrate: usize,
    /// NI_RANDOM (proportional newidle balance).
    pub ni_random: bool,
    /// Each domain's `newidle_ratio` at the start (0..=1024).
    pub newidle_ratio_init: u32,
    /// Boolean features by tunable name.
    pub gentle_fair_sleepers: bool,
    /// START_DEBIT
    pub start_debit: bool,
    /// NEXT_BUDDY
    pub next_buddy: bool,
    /// LAST_BUDDY
    pub last_buddy: bool,
    /// WAKEUP_PREEMPTION
    pub wakeup_preemption: bool,
    /// CACHE_HOT_BUDDY
    pub cache_hot_buddy: bool,
    /// RUN_TO_PARITY
    pub run_to_parity: bool,
    /// PLACE_LAG
    pub place_lag: bool,
    /// PLACE_DEADLINE_INITIAL
    pub place_deadline_initial: bool,
    /// PLACE_REL_DEADLINE
    pub place_rel_deadline: bool,
    /// PREEMPT_SHORT
    pub preempt_short: bool,
    /// DELAY_DEQUEUE
    pub delay_dequeue: bool,
    /// DELAY_ZERO
    pub delay_zero: bool,
    /// PICK_BUDDY
    pub pick_buddy: bool,
    /// Forfeit-vruntime yield.
    pub yield_forfeit: bool,
    /// Periodic balancing starts at a random phase per CPU and domain.
    pub balance_stagger: bool,
    /// The EEVDF rules of Linux 6.17/6.18 (shootout.md §5.3, §5.5) instead
    /// of 6.12's: `vprot` slice protection bounded by the queue's minimum
    /// slice, `resched || !protect_slice` at update_curr, PREEMPT_SHORT
    /// as a one-pick override, PICK_BUDDY inside pick_eevdf, the
    /// max-slice + TICK lag clamp. Set by the `eevdf-6.18` registry entry.
    pub rules_618: bool,
}

/// `get_update_sysctl_factor` (linux-cfs.md §4).
pub fn sysctl_factor(scaling: i64, nr_cpus: usize) -> u64 {
    let cpus = nr_cpus.min(8) as u64;
    match scaling {
        0 => 1,
        2 => cpus,
        _ => 1 + cpus.ilog2() as u64,
    }
}

impl FairParams {
    /// Effective parameters from tunable values and the CPU count.
    pub fn new(version: Version, tun: &TunableSet, nr_cpus: usize) -> Self {
        let g = |n: &str| tun.get(n).unwrap_or(0);
        let b = |n: &str| tun.get(n).unwrap_or(0) != 0;
        let factor = sysctl_factor(g("tunable_scaling"), nr_cpus);
        let (latency, min_gran) = match version {
            Version::Cfs => (g("latency_ns") as u64, g("min_granularity_ns") as u64),
            Version::Eevdf => (0, 0),
        };
        FairParams {
            version,
            factor,
            latency: latency * factor,
            min_gran: min_gran * factor,
            wakeup_gran: g("wakeup_granularity_ns") as u64 * factor,
            idle_min_gran: g("idle_min_granularity_ns") as u64,
            nr_latency: if min_gran > 0 {
                latency.div_ceil(min_gran)
            } else {
                8
            },
            base_slice: g("base_slice_ns") as u64 * factor,
            migration_cost: g("migration_cost_ns") as u64,
            nr_migrate: g("nr_migrate").max(1) as usize,
            gentle_fair_sleepers: b("gentle_fair_sleepers"),
            start_debit: b("start_debit"),
            next_buddy: b("next_buddy"),
            last_buddy: b("last_buddy"),
            wakeup_preemption: b("wakeup_preemption"),
            cache_hot_buddy: b("cache_hot_buddy"),
            run_to_parity: b("run_to_parity"),
            place_lag: b("place_lag"),
            place_deadline_initial: b("place_deadline_initial"),
            place_rel_deadline: b("place_rel_deadline"),
            preempt_short: b("preempt_short"),
            delay_dequeue: b("delay_dequeue"),
            delay_zero: b("delay_zero"),
            pick_buddy: b("pick_buddy"),
            yield_forfeit: b("yield_forfeit"),
            balance_stagger: b("balance_stagger"),
            ni_random: b("ni_random"),
            newidle_ratio_init: g("newidle_ratio_init").clamp(0, 1024) as u32,
            rules_618: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_factor_table() {
        let f: Vec<u64> = [1, 2, 3, 4, 7, 8, 64]
            .iter()
            .map(|n| sysctl_factor(1, *n))
            .collect();
        assert_eq!(f, vec![1, 2, 2, 3, 3, 4, 4]);
    }
}
