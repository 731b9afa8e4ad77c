//! MuQSS, the Multiple Queue Skiplist Scheduler (Con Kolivas), as
//! specified in ../shared/spec/alt-schedulers.md §2 and read in MuQSS
//! v0.210 `ckolivas/linux: kernel/sched/MuQSS.c` (functions named below).
//! The shoot-out spec (shootout.md) does not cover MuQSS. It is BFS's
//! deadline policy (policy/ck.rs, shared with BFS) over several queues.
//!
//! What is MuQSS's own:
//! * **Queues per CPU or shared** (`rqshare`, `select_leaders`,
//!   `share_rqs`): none (one per CPU), smt (per core), mc (default: per
//!   multicore package), llc (per LLC), smp/all (one). Our machines have
//!   LLC groups but no separate packages, so mc and llc both mean "one
//!   queue per LLC group"; on the default machine (one LLC) the default mc
//!   therefore gives ONE queue for all CPUs, as on a one-package PC. Each
//!   queue is ordered by (level, deadline) with FIFO among equal keys: a
//!   `BTreeMap` keyed by (key, sequence) in place of the skiplist, same
//!   order (O(log n) both).
//! * **Pick** (`earliest_deadline_task`): scan the queues in cache
//!   locality order from the CPU's own (`rq_order`); in each, the first
//!   entry allowed on this CPU; a later queue must offer a strictly
//!   earlier key. With `interactive` = 0 a queue is only looked at if it
//!   holds more entries than the best so far, and a remote queue's first
//!   unsuitable entry ends its scan. The chosen task is taken from its
//!   queue (the engine moves it here first). This is the only balancing.
//! * **Wakeup** (`select_best_cpu`, `try_preempt`): an allowed idle CPU,
//!   ranked by locality from the task's CPU (`best_mask_cpu`: same CPU,
//!   SMT sibling, other core sharing the LLC, other core; busy caches and
//!   busy siblings rank worse); else the least-loaded CPU (`rq_load` =
//!   runnable count) scanning in locality order from the task's CPU. The
//!   task is queued there; then the first CPU in locality order from that
//!   CPU whose current task the wakee beats (`can_preempt`, SCHED_BATCH
//!   never preempts its level) is rescheduled; with `interactive` = 0 only
//!   the target or busier CPUs are considered.
//! * **hrexpiry**: a high-resolution timer ends every slice exactly (armed
//!   at each pick with the remaining slice, at least 10 µs; none for
//!   SCHED_FIFO); the tick only catches slices below RESCHED_US (dither 0
//!   with high-resolution timers). So equal hogs switch every
//!   rr_interval × 2^20 ns (6.29 ms).
//!
//! Departures: `cpu_order` sorts CPUs by locality, then by the kernel's
//! rotation (`cpu + i` below half the CPUs, `cpu − i` above) without its
//! second, inter-CPU sort inside a locality level; no SMT nice; no ISO;
//! SCHED_DEADLINE squashed to FIFO 99; niffies are the simulated clock; no
//! NUMA; queue sharing is fixed at the start (hotplug does not re-lead).

use super::ck::{self, Ck, Flavour};
use crate::cpuset::CpuId;
use crate::machine::Machine;
use crate::plugin::SchedulerDef;
use crate::task::TaskId;
use crate::tunable::Tunable;
use crate::workload::Policy;

/// MuQSS's tunables.
pub const TUNABLES: &[Tunable] = &[
    Tunable {
        name: "rr_interval_ms",
        default: 6,
        min: 1,
        max: 1000,
        unit: "ms",
        doc: "rr_interval: the time slice of every task and the scale of the virtual-deadline offsets (kernel ms = 2^20 ns)",
    },
    Tunable {
        name: "interactive",
        default: 1,
        min: 0,
        max: 1,
        unit: "bool",
        doc: "sched_interactive: 1 = every CPU takes the globally earliest deadline; 0 = only from busier queues, and wakeups preempt only busier CPUs",
    },
    Tunable {
        name: "rqshare",
        default: 2,
        min: 0,
        max: 5,
        unit: "",
        doc: "run-queue sharing: 0 none, 1 smt, 2 mc (default), 3 llc, 4 smp, 5 all; mc and llc both share one queue per LLC group here",
    },
];

/// Registry declaration (registry.rs, `SCHEDULERS`).
pub const DEF: SchedulerDef = SchedulerDef {
    name: "muqss",
    description: "MuQSS: BFS's virtual deadlines over per-CPU or shared queues, pick = earliest key scanning queues in locality order, hrtimer slice expiry",
    source: "alt-schedulers.md §2; MuQSS v0.210 ckolivas/linux kernel/sched/MuQSS.c",
    version: "0.210",
    classes: &["muqss"],
    tunables: TUNABLES,
    fair_policies: false,
    dl_orders: false,
    build: |ctx| {
        let t = ctx.tunables;
        let rr = t.get("rr_interval_ms").unwrap_or(6).max(1) as u64;
        let q = Muqss::new(
            ctx.m,
            t.get("rqshare").unwrap_or(2),
            t.get("interactive").unwrap_or(1) != 0,
        );
        ck::build(ctx, "muqss", Flavour::Muqss(q), rr)
    },
};

/// MuQSS's topology: queue sharing and locality orders.
#[derive(Debug, Clone)]
pub struct Muqss {
    /// The queue (leader CPU) of each CPU.
    pub leader: Vec<usize>,
    /// CPUs in locality order from each CPU (`cpu_order`), itself first.
    pub cpu_order: Vec<Vec<CpuId>>,
    /// Queues in locality order from each CPU (`rq_order`), its own first.
    pub rq_order: Vec<Vec<usize>>,
    /// `sched_interactive`.
    pub interactive: bool,
}

/// `cpu_locality`: 0 same, 1 SMT sibling, 2 same LLC (LOCALITY_MC_LLC),
/// 3 other core of the package (LOCALITY_MC; one package here).
pub fn locality(m: &Machine, a: CpuId, b: CpuId) -> u32 {
    if a == b {
        0
    } else if m.topo.siblings(a).contains(b) {
        1
    } else if m.topo.share_cache(a, b) {
        2
    } else {
        3
    }
}

fn all_idle(m: &Machine, cpus: crate::cpuset::CpuSet) -> bool {
    cpus.iter().all(|c| Ck::idle(m, c))
}

impl Muqss {
    /// Queues and orders for `m` with sharing level `rqshare`.
    pub fn new(m: &Machine, rqshare: i64, interactive: bool) -> Self {
        let n = m.nr_cpus();
        let first = |s: crate::cpuset::CpuSet, c: CpuId| s.first().unwrap_or(c);
        let leader: Vec<usize> = (0..n)
            .map(|c| match rqshare {
                0 => c,
                1 => first(m.topo.siblings(c), c),
                2 | 3 => first(m.topo.llc(c), c),
                _ => 0,
            })
            .collect();
        let cpu_order: Vec<Vec<CpuId>> = (0..n)
            .map(|c| {
                let mut o: Vec<CpuId> = (0..n).collect();
                let rot = |x: CpuId| {
                    if c < n / 2 {
                        (x + n - c) % n
                    } else {
                        (c + n - x) % n
                    }
                };
                o.sort_by_key(|x| (locality(m, c, *x), rot(*x)));
                o
            })
            .collect();
        let rq_order = cpu_order
            .iter()
            .map(|o| {
                let mut qs: Vec<usize> = vec![];
                for c in o {
                    if !qs.contains(&leader[*c]) {
                        qs.push(leader[*c]);
                    }
                }
                qs
            })
            .collect();
        Muqss {
            leader,
            cpu_order,
            rq_order,
            interactive,
        }
    }

    /// `best_mask_cpu` ranking of idle CPU `c` for a task on `from`:
    /// DIFF_THREAD 1, DIFF_CORE_LLC 2, DIFF_CORE 4, CACHE_BUSY 8,
    /// THREAD_BUSY 32 (DIFF_CPU 16 and DIFF_NODE 64 need NUMA).
    pub fn idle_rank(&self, m: &Machine, from: CpuId, c: CpuId) -> u32 {
        let loc = locality(m, from, c);
        let mut r = 0;
        match loc {
            1 => r |= 1,
            2 => r |= 2,
            3 => r |= 4,
            _ => {}
        }
        if !all_idle(m, m.topo.llc(c)) {
            r |= 8;
        }
        if !all_idle(m, m.topo.siblings(c)) {
            r |= 32;
        }
        r
    }

    /// `earliest_deadline_task` for `cpu`; `curr` (its runnable current
    /// task) counts as queued at the tail of its key on the CPU's queue.
    pub fn pick(&self, ck: &Ck, m: &Machine, cpu: CpuId, curr: Option<TaskId>) -> Option<TaskId> {
        let mut best: Option<((u32, u64), TaskId)> = None;
        let mut best_entries = 0;
        for (i, &q) in self.rq_order[cpu].iter().enumerate() {
            let local = i == 0;
            let entries = ck.queues[q].len() + usize::from(local && curr.is_some());
            if !self.interactive {
                if entries <= best_entries {
                    continue;
                }
            } else if entries == 0 {
                continue;
            }
            let mut found: Option<((u32, u64), TaskId)> = None;
            for (&(lv, dl, _), &t) in ck.queues[q].iter() {
                if best.is_some_and(|(b, _)| (lv, dl) >= b) {
                    break;
                }
                if !m.tasks[t].affinity.contains(cpu) || !m.online.contains(cpu) {
                    if self.interactive || local {
                        continue;
                    }
                    break;
                }
                found = Some(((lv, dl), t));
                break;
            }
            if let Some(c) = curr.filter(|_| local) {
                let lv = ck::level(m, c);
                let key = (lv, if lv < 100 { 0 } else { ck.tasks[c].deadline });
                if found.is_none_or(|(k, _)| key < k) {
                    found = Some((key, c));
                }
            }
            if let Some(f) = found {
                best = Some(f);
                best_entries = entries;
            }
        }
        best.map(|(_, t)| t)
    }

    /// `select_best_cpu`: an idle CPU, else the least-loaded one.
    pub fn select_best_cpu(&self, ck: &Ck, m: &Machine, t: TaskId, start: CpuId) -> CpuId {
        if let Some(c) = ck.best_idle(m, t, start) {
            return c;
        }
        let aff = m.tasks[t].affinity;
        let mut best: Option<(u32, CpuId)> = None;
        for &c in &self.cpu_order[start] {
            if !m.online.contains(c) || !aff.contains(c) {
                continue;
            }
            let load = m.rqs[c].nr_running;
            if best.is_none_or(|(l, _)| load < l) {
                best = Some((load, c));
            }
        }
        best.map_or(start, |(_, c)| c)
    }

    /// `try_preempt` after `t` was queued on `cpu`.
    pub fn try_preempt(&self, ck: &Ck, m: &mut Machine, cpu: CpuId, t: TaskId) {
        if m.tasks[t].policy == Policy::Idle {
            return; // IDLEPRIO tasks never preempt anything but idle
        }
        let this_entries = m.rqs[cpu].nr_running;
        let aff = m.tasks[t].affinity;
        for &c in &self.cpu_order[cpu] {
            if !m.online.contains(c) || !aff.contains(c) {
                continue;
            }
            if !self.interactive && c != cpu && m.rqs[c].nr_running <= this_entries {
                continue;
            }
            if ck.can_preempt(m, t, ck.rq_prio(m, c)) {
                m.resched(c);
                return;
            }
        }
    }
}

/// `set_rq_task` → `hrexpiry_start`: the slice of `t`, about to run on
/// `cpu`, ends exactly (none for SCHED_FIFO; stale timers are ignored).
pub fn arm_hrexpiry(ck: &mut Ck, m: &mut Machine, cpu: CpuId, t: TaskId) {
    ck.hrexpiry[cpu] += 1;
    if !ck::has_slice(m, t) {
        return;
    }
    let delay = ck.tasks[t].slice.max(10_000) as u64;
    m.arm_timer(m.now.saturating_add(delay), "muqss", cpu, ck.hrexpiry[cpu]);
}
