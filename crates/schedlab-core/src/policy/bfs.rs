//! BFS, the Brain Fuck Scheduler (Con Kolivas), as specified in
//! ../shared/spec/alt-schedulers.md §1 and read in BFS v0.440
//! `kernel/sched/bfs.c` (a stored copy; functions named below). The
//! shoot-out spec (shootout.md) does not cover BFS. It replaces the whole
//! core scheduler: one class (policy/ck.rs, shared with MuQSS) takes every
//! policy; the deadline formula, levels, slices and fork rules are there.
//!
//! What is BFS's own:
//! * **One global run queue** (`grq`). Every CPU picks from it
//!   (`earliest_deadline_task`): the best level first; RT levels in FIFO
//!   order, NORMAL and IDLEPRIO by earliest virtual deadline among tasks
//!   allowed on the CPU. The engine attributes each queued task to a CPU
//!   (where it last ran or was woken to); a CPU that picks a task
//!   attributed elsewhere has the engine move it first.
//! * **Soft affinity ("sticky")**, modelled as in v0.440: a task
//!   descheduled while still runnable with other tasks waiting becomes the
//!   CPU's `sticky_task` (`swap_sticky`; RT tasks never stick, and the
//!   previous sticky task is unstuck and offered to an idle CPU). Another
//!   CPU compares a sticky task by `deadline << locality` (locality 1 SMT
//!   sibling, 2 same LLC, 3 other CPU; the kernel's niffies are large, so
//!   this is a strong bias), and skips it altogether while its own
//!   frequency is scaled down (`scaling_rq`: here, current frequency below
//!   maximum). A task loses stickiness when it is taken or sleeps.
//! * **Wakeup** (`try_preempt`): an allowed idle CPU if any, ranked by
//!   locality from the task's CPU (`resched_best_mask`: same CPU, then SMT
//!   sibling, other core sharing the cache, other CPU; busy caches and
//!   busy siblings rank worse); otherwise the CPU running the worst level,
//!   latest deadline among equals (lowest CPU number first), is preempted
//!   if the wakee is better (`can_preempt`). IDLEPRIO tasks only take idle
//!   CPUs. The task stays queued where it was attributed either way.
//! * **Slice expiry at the tick** (`task_running_tick`): a task that was
//!   scheduled in the first half of a tick period ("dither") is
//!   rescheduled at the first tick where at most half a jiffy of slice
//!   remains; otherwise when less than RESCHED_US remains. So at HZ=1000
//!   the 6.29 ms slice ends at the 6th tick (6 ms), at HZ=250 at the 2nd
//!   (8 ms). No hrtimer.
//!
//! Departures: no SCHED_ISO (not in our workload format); SCHED_DEADLINE
//! squashed to FIFO 99 (policy/ck.rs); niffies are the simulated clock
//! (starting at 0, so early in a run the sticky shift is a milder bias);
//! `sched_yield` is a plain reschedule; `resched_closest_idle` of an
//! unstuck task is the same ranking as a wakeup; no NUMA (no locality 4).

use super::ck::{self, Ck, Flavour, LEVEL_NORMAL, RESCHED_NS};
use crate::cpuset::CpuId;
use crate::machine::Machine;
use crate::plugin::SchedulerDef;
use crate::task::TaskId;
use crate::tunable::Tunable;
use crate::workload::Policy;

/// BFS's tunables.
pub const TUNABLES: &[Tunable] = &[Tunable {
    name: "rr_interval_ms",
    default: 6,
    min: 1,
    max: 1000,
    unit: "ms",
    doc: "rr_interval: the time slice of every task and the scale of the virtual-deadline offsets (kernel ms = 2^20 ns)",
}];

/// Registry declaration (registry.rs, `SCHEDULERS`).
pub const DEF: SchedulerDef = SchedulerDef {
    name: "bfs",
    description: "BFS: one global queue, earliest virtual deadline first (deadline = now + prio_ratio(nice) x rr_interval), 6 ms slices, sticky soft affinity",
    source: "alt-schedulers.md §1; BFS v0.440 kernel/sched/bfs.c",
    version: "0.440",
    classes: &["bfs"],
    tunables: TUNABLES,
    fair_policies: false,
    dl_orders: false,
    build: |ctx| {
        let rr = ctx.tunables.get("rr_interval_ms").unwrap_or(6).max(1) as u64;
        ck::build(ctx, "bfs", Flavour::Bfs, rr)
    },
};

/// `cpu_locality`: 0 same CPU, 1 SMT sibling, 2 shares the LLC, 3 other.
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

/// `resched_best_mask` ranking of idle CPU `c` for a task on `from`
/// (lower is better): DIFF_THREAD 1, DIFF_CORE 2, CACHE_BUSY 4,
/// DIFF_CPU 8, THREAD_BUSY 16.
pub fn idle_rank(m: &Machine, from: CpuId, c: CpuId) -> u32 {
    let loc = locality(m, from, c);
    let mut r = 0;
    if loc > 2 {
        r |= 8;
    }
    if loc == 2 {
        r |= 2;
    }
    if !all_idle(m, m.topo.llc(c)) {
        r |= 4;
    }
    if loc == 1 {
        r |= 1;
    }
    if !all_idle(m, m.topo.siblings(c)) {
        r |= 16;
    }
    r
}

/// `scaling_rq`: the CPU's governor has lowered its frequency.
fn scaling(m: &Machine, cpu: CpuId) -> bool {
    m.freq(cpu) < m.topo.cpu(cpu).max_freq_khz
}

/// `earliest_deadline_task` for `cpu` over the global queue, `curr` (the
/// CPU's runnable current task) counted as requeued at the tail.
///
/// The queue is ordered by (level, deadline, seq) and the sticky penalty
/// only ever raises a key, so the scan stops at the first entry whose own
/// key cannot beat the best effective key found (the kernel scans the
/// whole level; the result is the same, in O(entries ahead of the pick)).
pub fn pick(ck: &Ck, m: &Machine, cpu: CpuId, curr: Option<TaskId>) -> Option<TaskId> {
    let mut best: Option<((u32, u64, u64), TaskId)> = None;
    let consider = |best: &mut Option<((u32, u64, u64), TaskId)>, key: (u32, u64, u64), t| {
        if best.is_none_or(|(b, _)| key < b) {
            *best = Some((key, t));
        }
    };
    if let Some(c) = curr {
        // seq MAX: behind every queued task of equal level and deadline.
        let lv = ck::level(m, c);
        let dl = if lv < 100 { 0 } else { ck.tasks[c].deadline };
        consider(&mut best, (lv, dl, u64::MAX), c);
    }
    for (&(lv, dl, seq), &t) in ck.queues[0].iter() {
        if best.is_some_and(|(b, _)| (lv, dl, seq) >= b) {
            break;
        }
        if !m.tasks[t].affinity.contains(cpu) {
            continue;
        }
        let far = m.tasks[t].cpu;
        let eff = if lv >= LEVEL_NORMAL && ck.tasks[t].sticky && far != cpu {
            if scaling(m, cpu) {
                continue;
            }
            let shifted = (dl as u128) << locality(m, cpu, far);
            shifted.min(u64::MAX as u128) as u64
        } else {
            dl
        };
        consider(&mut best, (lv, eff, seq), t);
    }
    best.map(|(_, t)| t)
}

/// Wakeup placement (`try_preempt`'s choice of CPU): an idle CPU, else the
/// CPU the wakee can preempt, else `start`.
pub fn select_cpu(ck: &Ck, m: &Machine, t: TaskId, start: CpuId) -> CpuId {
    if let Some(c) = ck.best_idle(m, t, start) {
        return c;
    }
    if m.tasks[t].policy == Policy::Idle {
        return start;
    }
    let mut worst: Option<(CpuId, (u32, u64))> = None;
    for c in m.tasks[t].affinity.iter().filter(|c| m.online.contains(*c)) {
        let (p, dl) = ck.rq_prio(m, c);
        let (hp, ldl) = worst.map_or((0, 0), |(_, x)| x);
        if p < hp {
            continue;
        }
        if p > hp || dl > ldl {
            worst = Some((c, (p, dl)));
        }
    }
    match worst {
        Some((c, rq)) if ck.can_preempt(m, t, rq) => c,
        _ => start,
    }
}

/// `try_preempt` on the CPU the wakee was queued to.
pub fn try_preempt(ck: &Ck, m: &mut Machine, cpu: CpuId, t: TaskId) {
    if m.tasks[t].policy == Policy::Idle {
        return; // IDLEPRIO tasks never preempt anything but idle
    }
    if ck.can_preempt(m, t, ck.rq_prio(m, cpu)) {
        m.resched(cpu);
    }
}

/// `task_running_tick`: whether the running task's slice is over.
pub fn tick_expired(ck: &mut Ck, m: &Machine, cpu: CpuId, curr: TaskId) -> bool {
    let half_jiffy = (((1_000_000 / m.hz.max(1) as u64) / 2) << 10) as i64;
    let slice = &mut ck.tasks[curr].slice;
    if ck.dither[cpu] {
        if *slice > half_jiffy {
            return false;
        }
        *slice = 0;
        return true;
    }
    *slice < RESCHED_NS
}

/// `resched_closest_idle`: offer `t` to the best idle CPU other than `cpu`.
fn resched_closest_idle(m: &mut Machine, cpu: CpuId, t: TaskId) {
    let aff = m.tasks[t].affinity;
    let best = aff
        .iter()
        .filter(|c| *c != cpu && Ck::idle(m, *c))
        .min_by_key(|c| (idle_rank(m, cpu, *c), *c));
    if let Some(c) = best {
        m.resched(c);
    }
}

/// `swap_sticky`: `p`, descheduled involuntarily on `cpu`, becomes the
/// CPU's sticky task.
pub fn swap_sticky(ck: &mut Ck, m: &mut Machine, cpu: CpuId, p: TaskId) {
    if let Some(s) = ck.sticky_task[cpu] {
        if s == p {
            ck.tasks[p].sticky = true;
            return;
        }
        if ck.tasks[s].sticky {
            ck.tasks[s].sticky = false;
            if ck.tasks[s].queued.is_some() {
                resched_closest_idle(m, cpu, s);
            }
        }
    }
    if ck::level(m, p) >= 100 {
        ck.tasks[p].sticky = true;
        ck.sticky_task[cpu] = Some(p);
    } else {
        resched_closest_idle(m, cpu, p);
        ck.sticky_task[cpu] = None;
    }
}
