//! Scheduling domains and groups (linux-smp.md §1): built from the topology
//! (SMT → LLC → package, degenerate levels dropped), per CPU, with the state
//! periodic balancing keeps in them (`sd->last_balance`, `balance_interval`,
//! `nr_balance_failed`) and the per-CPU state around them (`next_balance`,
//! the SIS_UTIL scan depth). The balancing itself is in balance.rs.

use std::sync::Arc;

use crate::clock::{Ns, MSEC};
use crate::cpuset::{CpuId, CpuSet};
use crate::topology::Topology;

/// One scheduling-domain level as seen from one CPU.
#[derive(Debug, Clone)]
pub struct Domain {
    /// CPUs spanned (fixed: hotplug builds the domains again).
    pub span: CpuSet,
    /// CPUs spanned, counted once (`weight`: every balance pass reads it).
    span_weight: u64,
    /// The span is as large as its CPUs' LLC, online part: SIS_UTIL's
    /// scan depth is set from this domain's balance
    /// (`update_idle_cpu_scan`).
    pub spans_llc: bool,
    /// Child groups, shared by every CPU of the span (the kernel's CPUs of
    /// one domain share its `sched_group`s too; at 256 CPUs one copy per
    /// CPU was 2 MB).
    pub groups: Arc<[CpuSet]>,
    /// SMT level (SD_SHARE_CPUCAPACITY).
    pub smt: bool,
    /// Shares the LLC (SD_SHARE_LLC).
    pub llc: bool,
    /// Has a child domain with SD_PREFER_SIBLING.
    pub prefer_sibling: bool,
    /// imbalance_pct.
    pub pct: u64,
    /// cache_nice_tries.
    pub cache_nice_tries: u32,
    /// Current interval, ms.
    pub interval_ms: u64,
    /// Last balance.
    pub last_balance: Ns,
    /// How long before the run's start this domain last balanced, until it
    /// first balances in the run (`balance_stagger`; 0 after).
    pub start_phase: Ns,
    /// Consecutive failures.
    pub failed: u32,
    /// The proportional newly-idle balance's statistics (NI_RANDOM,
    /// balance.rs `newidle_balance`).
    pub newidle: NewidleStats,
    /// Dice thrown for this domain's newly-idle balances (the key of the
    /// next draw).
    pub newidle_draws: u64,
    /// [`Domain::interval_jiffies`] as last computed: (interval_ms, the
    /// cap, the tick; busy jiffies, idle jiffies).
    jiffies_memo: std::cell::Cell<((u64, u64, Ns), u64, u64)>,
}

/// `sd->newidle_call`, `newidle_success`, `newidle_ratio` (fair.c,
/// "sched/fair: Proportional newidle balance", 6.18.5+).
#[derive(Debug, Clone, Copy)]
pub struct NewidleStats {
    /// Newly-idle balance calls counted (run or skipped).
    pub call: u32,
    /// Their successes, each weighted by 1024 / (1 + ratio) at its call.
    pub success: u32,
    /// The success count at the last 1024th call: how often to run.
    pub ratio: u32,
}

impl NewidleStats {
    /// sd_init's values with `ratio` as the ratio (and half of it as the
    /// success count over 512 calls, the same rate).
    pub fn starting_at(ratio: u32) -> Self {
        NewidleStats {
            call: 512,
            success: ratio / 2,
            ratio,
        }
    }

    /// `update_newidle_stats`: one more call and its weighted success;
    /// every 1024 calls the ratio becomes the success count and both
    /// counts halve.
    pub fn update(&mut self, success: u32) {
        self.call += 1;
        self.success += success;
        if self.call >= 1024 {
            self.ratio = self.success.min(1024);
            self.call /= 2;
            self.success /= 2;
        }
    }
}

impl Domain {
    /// The balance interval in jiffies (`get_sd_balance_interval`:
    /// `interval_ms` × busy_factor 16 when busy, one jiffy less, clamped
    /// to 1..=`max` jiffies of `tick`). Kept for the interval last seen: it
    /// is asked at every tick of every CPU and changes only when a balance
    /// moves `interval_ms`, and each answer was a 64-bit division, slow
    /// in time beyond its one instruction (the global-EDF anchor: 0.4 %
    /// fewer instructions).
    pub(super) fn interval_jiffies(&self, busy: bool, tick: Ns, max: u64) -> u64 {
        let key = (self.interval_ms, max, tick);
        let (kept, busy_j, idle_j) = self.jiffies_memo.get();
        if kept == key {
            return if busy { busy_j } else { idle_j };
        }
        let jiffies = |ms: u64| (ms * MSEC).div_ceil(tick);
        let busy_j = jiffies(self.interval_ms * 16)
            .saturating_sub(1)
            .clamp(1, max);
        let idle_j = jiffies(self.interval_ms).clamp(1, max);
        self.jiffies_memo.set((key, busy_j, idle_j));
        if busy {
            busy_j
        } else {
            idle_j
        }
    }

    pub(super) fn weight(&self) -> u64 {
        self.span_weight
    }
}

/// Per-CPU domain hierarchies.
#[derive(Debug, Clone)]
pub struct Balancer {
    pub(super) doms: Vec<Vec<Domain>>,
    pub(super) max_interval_jiffies: u64,
    /// Per CPU: `rq->next_balance`, the earliest time any of its domains is
    /// due, and the busy state it was computed for (§4.1 trigger_load_balance
    /// only raises the softirq once it is reached). Recomputed when the busy
    /// state changes, so skipping is exact: no level can be due before it.
    pub(super) next_balance: Vec<(Ns, bool)>,
    /// Per LLC (by `topology` LLC id): `sd_llc_shared->nr_idle_scan`, the SIS_UTIL scan
    /// depth of select_idle_cpu. Refreshed only by periodic balancing of the
    /// LLC domain (`update_idle_cpu_scan`), so wakeups read a value up to one
    /// balance interval old, as in the kernel.
    pub(super) nr_idle_scan: Vec<u64>,
    /// `find_busiest_group`'s buffer of group statistics.
    pub(super) group_stats: Vec<GroupStats>,
}

impl Balancer {
    /// `SchedClass::balance_state_digest`: FNV-1a over every CPU's next
    /// balance and its domains' intervals, last balances, phases and
    /// failures, and the LLCs' scan depths.
    pub(super) fn state_digest(&self) -> u64 {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        let mut mix = |v: u64| {
            for b in v.to_le_bytes() {
                h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
            }
        };
        for (cpu, doms) in self.doms.iter().enumerate() {
            let (next, busy) = self.next_balance[cpu];
            mix(next);
            mix(u64::from(busy));
            for d in doms {
                mix(d.interval_ms);
                mix(d.last_balance);
                mix(d.start_phase);
                mix(u64::from(d.failed));
            }
        }
        for n in &self.nr_idle_scan {
            mix(*n);
        }
        h
    }
}

/// `enum group_type` as far as this model uses it, best first (periodic
/// balancing and the fork path, select.rs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum GroupType {
    HasSpare,
    FullyBusy,
    Overloaded,
}

/// Statistics of one sched group for a balance pass (`struct sg_lb_stats`).
#[derive(Debug, Clone)]
pub(super) struct GroupStats {
    pub(super) cpus: CpuSet,
    pub(super) nr: u64,
    pub(super) h_nr: u64,
    pub(super) load: u64,
    pub(super) util: u64,
    /// Sum of the CPUs' runnable averages (`group_runnable`).
    pub(super) runnable: u64,
    pub(super) cap: u64,
    pub(super) idle: u64,
    pub(super) weight: u64,
    pub(super) cores: u64,
    pub(super) avg_load: u64,
    pub(super) ty: GroupType,
}

impl Balancer {
    /// The domains of a machine that starts the run. `stagger` (the run's
    /// seed, with `balance_stagger`): each CPU's domains last balanced at a
    /// seeded random point of their busy interval before the start, as on a
    /// machine that has been up, rather than all at the start. Why: the
    /// kernel sets `sd->last_balance` when it builds the domains at boot,
    /// but a CPU that idles balances on its idle interval, and the nohz
    /// idle balancer balances idle CPUs one by one, so by the time a
    /// workload starts the CPUs' periodic balances are spread over the
    /// interval. Started together they stay together: with 20 hogs on 16
    /// CPUs every simulated CPU balanced at the same tick every 252 ms and
    /// the nice 5 hogs moved in bursts, where a host trace shows a pull
    /// every 20-120 ms by one CPU or another (docs/model.md, "SMP").
    pub fn new(topo: &Topology, hz: u32, stagger: Option<u64>) -> Self {
        let mut b = Self::for_online(topo, hz, topo.all());
        if let Some(seed) = stagger {
            for (cpu, levels) in b.doms.iter_mut().enumerate() {
                for (level, d) in levels.iter_mut().enumerate() {
                    // The busy interval: `interval_ms` (the span's weight) x
                    // busy_factor 16, as `due` computes it.
                    let busy = d.interval_ms * 16 * MSEC;
                    let key = (2 << 48) | ((level as u64) << 32) | cpu as u64;
                    d.start_phase = crate::rng::keyed(seed, key, 0) % busy.max(1);
                }
            }
        }
        b
    }

    /// Every domain's `newidle_ratio` (and its success count, half the
    /// ratio over sd_init's 512 calls) at the run's start.
    pub fn set_newidle_ratio(&mut self, ratio: u32) {
        for d in self.doms.iter_mut().flatten() {
            d.newidle = NewidleStats::starting_at(ratio);
        }
    }

    /// Build domains over the `online` CPUs only (`partition_sched_domains`
    /// after hotplug): spans and groups are restricted to online CPUs,
    /// levels that no longer add CPUs are dropped (degenerate domains) and
    /// offline CPUs get none.
    pub fn for_online(topo: &Topology, hz: u32, online: CpuSet) -> Self {
        let n = topo.nr_cpus();
        let mut doms = vec![];
        // Groups built once per span and level, in CPU order (no hashing).
        let (mut llc_groups, mut top_groups) = (vec![], vec![]);
        // The distinct `group_of(c)` of the CPUs `c` of `span`, in CPU order:
        // a domain's child groups.
        fn distinct(span: CpuSet, group_of: impl Fn(CpuId) -> CpuSet) -> Vec<CpuSet> {
            let mut groups: Vec<CpuSet> = vec![];
            for c in span.iter() {
                let g = group_of(c);
                if !groups.contains(&g) {
                    groups.push(g);
                }
            }
            groups
        }
        fn shared(
            cache: &mut Vec<(CpuSet, Arc<[CpuSet]>)>,
            span: CpuSet,
            build: impl FnOnce() -> Vec<CpuSet>,
        ) -> Arc<[CpuSet]> {
            if let Some((_, g)) = cache.iter().find(|(s, _)| *s == span) {
                return g.clone();
            }
            let g: Arc<[CpuSet]> = build().into();
            cache.push((span, g.clone()));
            g
        }
        for cpu in 0..n {
            let mut levels: Vec<Domain> = vec![];
            if !online.contains(cpu) {
                doms.push(levels);
                continue;
            }
            let singles = |s: CpuSet| {
                s.iter()
                    .map(|c| {
                        let mut x = CpuSet::empty();
                        x.insert(c);
                        x
                    })
                    .collect::<Vec<_>>()
            };
            let sib = topo.siblings(cpu).and(&online);
            if sib.count() > 1 {
                levels.push(Domain::new(sib, singles(sib).into(), true, true, false));
            }
            let llc = topo.llc(cpu).and(&online);
            if llc.count() > sib.count() {
                let groups = shared(&mut llc_groups, llc, || {
                    distinct(llc, |c| topo.siblings(c).and(&online))
                });
                let prefer = !levels.is_empty();
                levels.push(Domain::new(llc, groups, false, true, prefer));
            }
            let all = topo.all().and(&online);
            if topo.has_multiple_llcs() && all.count() > llc.count() {
                let groups = shared(&mut top_groups, all, || {
                    distinct(online, |c| topo.llc(c).and(&online))
                });
                levels.push(Domain::new(all, groups, false, false, true));
            }
            let llc_weight = llc.count() as u64;
            for d in &mut levels {
                d.spans_llc = d.span_weight == llc_weight;
            }
            doms.push(levels);
        }
        // Departure: the kernel's freshly built sd_llc_shared starts at 0 (no
        // idle scan until the first periodic balance of the LLC domain); the
        // workload starts on a machine that ran idle before it, whose
        // balancing left the idle-LLC value, the LLC's weight.
        let mut nr_idle_scan = vec![0; n];
        for c in 0..n {
            nr_idle_scan[topo.cpu(c).llc] = topo.llc(c).and(&online).count() as u64;
        }
        Balancer {
            doms,
            max_interval_jiffies: (hz as u64 * online.count() as u64 / 10).max(1),
            next_balance: vec![(0, false); n],
            nr_idle_scan,
            group_stats: vec![],
        }
    }

    /// The SIS_UTIL scan depth of LLC `llc` (`sd_share->nr_idle_scan`).
    pub fn nr_idle_scan(&self, llc: usize) -> u64 {
        self.nr_idle_scan[llc]
    }

    /// Domain levels of `cpu`, top-down (for fork placement).
    pub fn levels_top_down(&self, cpu: CpuId) -> Vec<usize> {
        (0..self.doms[cpu].len()).rev().collect()
    }

    /// `(span, groups, imbalance_pct)` of `cpu`'s domain at `level`; the
    /// groups in CPU order (walk them with [`local_first`]).
    pub fn domain_shape(&self, cpu: CpuId, level: usize) -> (CpuSet, &[CpuSet], u64) {
        let d = &self.doms[cpu][level];
        (d.span, &d.groups, d.pct)
    }

    /// The highest domain level of `cpu` spanning fewer than `weight` CPUs
    /// (the `for_each_domain` walk after a fork placement moved to `cpu`).
    pub fn highest_level_below(&self, cpu: CpuId, weight: usize) -> Option<usize> {
        self.doms[cpu]
            .iter()
            .rposition(|d| d.weight() < weight as u64)
    }

    /// imbalance_pct of the smallest domain of `this` that spans `prev`.
    pub fn affine_pct(&self, this: CpuId, prev: CpuId) -> u64 {
        self.doms[this]
            .iter()
            .find(|d| d.span.contains(prev))
            .map_or(117, |d| d.pct)
    }
}

impl Domain {
    fn new(
        span: CpuSet,
        groups: Arc<[CpuSet]>,
        smt: bool,
        llc: bool,
        prefer_sibling: bool,
    ) -> Self {
        let w = span.count() as u64;
        Domain {
            span,
            span_weight: w,
            spans_llc: false,
            groups,
            smt,
            llc,
            prefer_sibling,
            pct: if smt { 110 } else { 117 },
            cache_nice_tries: if smt { 0 } else { 1 },
            interval_ms: w,
            last_balance: 0,
            start_phase: 0,
            failed: 0,
            newidle: NewidleStats::starting_at(512),
            newidle_draws: 0,
            jiffies_memo: std::cell::Cell::new(((u64::MAX, 0, 0), 0, 0)),
        }
    }
}
