//! TT, the Task Type scheduler v6.0 (Hamad Al Marri): shootout.md §3.2
//! and alt-schedulers.md §6 (the 6.1 description; 6.0 differs only in
//! renames and one `resched_curr`); source `hamadmarri/TT-CPU-Scheduler
//! patches/6.0/tt-6.0.patch` (kernel/sched/fair.c: `detect_type`,
//! `is_realtime`, `is_interactive`, `is_cpu_bound`, `is_batch`,
//! `convert_to_vruntime`, `normalize_lifetime`, `__pick_first_entity`,
//! `check_preempt_tick`, `enqueue_entity`, `dequeue_entity`). Modelled on
//! the simulator's CFS (Linux 6.1 ≈ 6.0) with the default CFS balancer
//! (`sched_tt_balancer_opt` = 2, the seed's "TT--CFS").
//!
//! Each task keeps a `tt_node`: its own `vruntime` (starts at 1),
//! `start_time`, total `wait_time` (time asleep, added at each wakeup as
//! now − `exec_start`) and the last wait, the bursts (`curr_burst` grows at
//! every `update_curr`; at sleep `prev_burst` ← `burst` ← `curr_burst` ←
//! 0, before that `update_curr`), and a type, detected at every
//! `update_curr` and enqueue with hrrn = (wait_time + vruntime)/vruntime,
//! first rule that holds:
//!
//! 1. REALTIME: has slept; lived ≥ 0.5 s; unless migrated, the current
//!    wait (now − `exec_start`, 0 inside `update_curr`, where the test is
//!    skipped) within ±0.8 ms of the previous one; `burst` within ±2 ms of
//!    `prev_burst`; `burst` and `curr_burst` ≤ 4 ms. Sticky: up to 4 later
//!    non-REALTIME detections are ignored.
//! 2. INTERACTIVE: hrrn ≥ 2 and the current wait (if non-zero) not within
//!    ±0.8 ms of the previous one.
//! 3. CPU_BOUND: vruntime·100/(wait_time + vruntime) ≥ 90.
//! 4. BATCH: hrrn < 2.
//! 5. otherwise NO_TYPE (also while vruntime = 1, i.e. before it first ran).
//!
//! A CPU_BOUND task becomes BATCH when it sleeps. Each `update_curr` adds
//! delta + prio·10^6/FACTOR to the TT vruntime (floored at 1), FACTOR =
//! 40 ms/(10^9/HZ) with the run's HZ (12 at HZ 300, 10 at 250), prio =
//! −20 REALTIME, −10 INTERACTIVE, −15 CPU_BOUND, +19 BATCH, nice for
//! NO_TYPE (sysctls `sched_tt_*_prio`). The pick is CFS's with the
//! leftmost entity replaced by the lowest HRRN_PERCENT = vruntime·1000 /
//! (now − start_time) found by a list scan (ties: the most recently
//! queued), "curr before leftmost" by that order, and CFS's buddies still
//! judged on CFS vruntime; the tick keeps `check_preempt_tick` on that
//! order (class/fair/order.rs); wakeup preemption and placement are
//! CFS's. Past `sched_tt_max_lifetime` (22 000 ms ×2^20 ns) the node is
//! renormalised to half that life keeping its ratio. `sched_yield` marks
//! bit 63 of the TT vruntime while another task is queued, until the next
//! pick: HRRN_PERCENT's u64 product drops the bit, so the mark only shows
//! in `detect_type` (hrrn becomes 1). CGROUP_SCHED and SCHED_AUTOGROUP
//! depend on !TT_SCHED: one flat queue per CPU.
//!
//! The kernel's u64 arithmetic is kept (wrapping, s64 comparisons of
//! differences); clock = simulated time for `sched_clock()`.
//!
//! Not modelled (docs/model.md, "TT"): the `rb-tree` the patch still keys
//! by HRRN at insertion, which `update_min_vruntime` reads (here the CFS
//! leftmost, so min_vruntime follows the smallest vruntime); the
//! latency-sensitive idle polling (`nr_lat_sensitive`: the simulator has
//! no idle-state exit latency); the "dedicated CPU-bound" task the CFS
//! balancer may not move; the other balancer options (candidate, power).

use crate::class::fair::hooks::{EntityRef, FairHooks, QueueOrder, TickPreempt};
use crate::class::fair::tunables::CFS_TUNABLES;
use crate::class::EnqueueFlags;
use crate::clock::Ns;
use crate::cpuset::CpuId;
use crate::machine::Machine;
use crate::plugin::SchedulerDef;
use crate::task::TaskId;
use crate::tunable::{Tunable, TunableSet};

/// Registry declaration (registry.rs, `SCHEDULERS`).
pub const DEF: SchedulerDef = SchedulerDef {
    name: "tt",
    description: "TT (Task Type) v6.0 on CFS 6.1: type detection, HRRN pick, per-type vruntime offsets, CFS balancer, flat run queue",
    source: "shootout.md §3.2, alt-schedulers.md §6; hamadmarri/TT-CPU-Scheduler patches/6.0/tt-6.0.patch",
    version: "6.0 on 6.1",
    classes: &["dl", "rt", "fair"],
    tunables: TUNABLES,
    fair_policies: false,
    dl_orders: true,
    build: |ctx| {
        let hooks = Box::new(Tt::new(ctx.tunables));
        let mut s = crate::registry::mainline_stack(
            ctx,
            crate::class::fair::tunables::Version::Cfs,
            hooks,
        )?;
        if ctx.m.groups.len() > 1 {
            s.warnings.push(
                "tt has no group scheduling (CGROUP_SCHED depends on !TT_SCHED): the workload's task groups and their shares are ignored, every task is in one flat queue per CPU"
                    .into(),
            );
        }
        Ok(s)
    },
};

const fn prio(name: &'static str, default: i64, doc: &'static str) -> Tunable {
    Tunable {
        name,
        default,
        min: -20,
        max: 19,
        unit: "",
        doc,
    }
}

/// CFS 6.1's tunables (autogroup excluded: TT compiles it out), then TT's.
pub const TUNABLES: &[Tunable] = &[
    CFS_TUNABLES[0],
    CFS_TUNABLES[1],
    CFS_TUNABLES[2],
    CFS_TUNABLES[3],
    CFS_TUNABLES[4],
    CFS_TUNABLES[5],
    CFS_TUNABLES[6],
    CFS_TUNABLES[7],
    CFS_TUNABLES[8],
    CFS_TUNABLES[9],
    CFS_TUNABLES[10],
    CFS_TUNABLES[11],
    CFS_TUNABLES[12],
    CFS_TUNABLES[14],
    Tunable {
        name: "tt_max_lifetime_ms",
        default: 22_000,
        min: 1,
        max: 1_000_000,
        unit: "ms",
        doc: "sched_tt_max_lifetime: life renormalised past this ×2^20 ns",
    },
    prio(
        "tt_rt_prio",
        -20,
        "sched_tt_rt_prio: vruntime offset of REALTIME tasks",
    ),
    prio(
        "tt_interactive_prio",
        -10,
        "sched_tt_interactive_prio: offset of INTERACTIVE tasks",
    ),
    prio(
        "tt_cpu_bound_prio",
        -15,
        "sched_tt_cpu_bound_prio: offset of CPU_BOUND tasks",
    ),
    prio(
        "tt_batch_prio",
        19,
        "sched_tt_batch_prio: offset of BATCH tasks",
    ),
];

/// A task's detected type (`TT_*`, in the kernel's numbering).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TaskType {
    /// `TT_REALTIME` (0).
    Realtime = 0,
    /// `TT_INTERACTIVE` (1).
    Interactive = 1,
    /// `TT_NO_TYPE` (2).
    #[default]
    NoType = 2,
    /// `TT_CPU_BOUND` (3).
    CpuBound = 3,
    /// `TT_BATCH` (4).
    Batch = 4,
}

impl TaskType {
    /// The type with kernel number `n` (as `task_debug` reports it).
    pub fn from_number(n: i64) -> Option<TaskType> {
        [
            TaskType::Realtime,
            TaskType::Interactive,
            TaskType::NoType,
            TaskType::CpuBound,
            TaskType::Batch,
        ]
        .into_iter()
        .find(|t| *t as i64 == n)
    }
}

const INTERACTIVE_HRRN: u64 = 2;
const RT_WAIT_DELTA: u64 = 800_000;
const RT_BURST_DELTA: u64 = 2_000_000;
const RT_BURST_MAX: u64 = 4_000_000;
const RACE_TIME: u64 = 40_000_000;
const YIELD_MARK: u64 = 1 << 63;
const REALTIME_MIN_LIFE: u64 = 500_000_000;

/// `(s64)(a - b) <= 0` and friends.
fn leq(a: u64, b: u64) -> bool {
    (a.wrapping_sub(b) as i64) <= 0
}
fn geq(a: u64, b: u64) -> bool {
    (a.wrapping_sub(b) as i64) >= 0
}
fn les(a: u64, b: u64) -> bool {
    (a.wrapping_sub(b) as i64) < 0
}
/// `EQ_D(a, b, d)`: a within ±d of b.
fn eq_d(a: u64, b: u64, d: u64) -> bool {
    leq(a, b.wrapping_add(d)) && geq(a, b.wrapping_sub(d))
}

/// `FACTOR = RACE_TIME / HZ_PERIOD` (integer divisions).
pub fn factor(hz: u32) -> i64 {
    let period = 1_000_000_000 / u64::from(hz.max(1));
    (RACE_TIME / period.max(1)).max(1) as i64
}

/// `convert_to_vruntime`: what `delta` ns of running add to the TT
/// vruntime of a task with priority offset `prio`.
pub fn convert_to_vruntime(delta: u64, prio: i64, hz: u32) -> u64 {
    if prio == 0 {
        return delta;
    }
    let prio_diff = prio * 1_000_000 / factor(hz);
    let sum = delta.wrapping_add(prio_diff as u64);
    if (sum as i64) < 0 {
        1
    } else {
        sum
    }
}

/// A task's `tt_node`, with the entity's `exec_start` and the task's
/// fork time (`task_struct.start_time`) the rules read.
#[derive(Debug, Clone, Copy, Default)]
pub struct Node {
    /// Detected type.
    pub task_type: TaskType,
    /// TT vruntime (bit 63: yield mark).
    pub vruntime: u64,
    /// `start_time` (renormalised with the lifetime).
    pub start_time: u64,
    /// The wait before the last wakeup.
    pub prev_wait_time: u64,
    /// Total time asleep.
    pub wait_time: u64,
    /// Burst before the previous sleep.
    pub prev_burst: u64,
    /// Running time since the last sleep.
    pub curr_burst: u64,
    /// Burst before the last sleep.
    pub burst: u64,
    /// REALTIME stickiness left.
    pub rt_sticky: u32,
    /// The entity's `exec_start` (0 after fork and after a migration).
    pub exec_start: u64,
    /// Fork time (`task_struct.start_time`, never renormalised).
    pub forked: u64,
}

impl Node {
    /// `HRRN_PERCENT`: TT vruntime per mille of life (u64 product).
    pub fn hrrn_percent(&self, now: u64) -> u64 {
        self.vruntime.wrapping_mul(1000) / (now.wrapping_sub(self.start_time) | 1)
    }

    fn is_realtime(&self, now: u64, migrated: bool) -> bool {
        if self.wait_time == 0 || les(now.wrapping_sub(self.forked), REALTIME_MIN_LIFE) {
            return false;
        }
        if !migrated {
            let wait = now.wrapping_sub(self.exec_start);
            if wait != 0 && !eq_d(wait, self.prev_wait_time, RT_WAIT_DELTA) {
                return false;
            }
        }
        eq_d(self.burst, self.prev_burst, RT_BURST_DELTA)
            && leq(self.burst, RT_BURST_MAX)
            && leq(self.curr_burst, RT_BURST_MAX)
    }

    fn is_interactive(&self, now: u64, hrrn: u64) -> bool {
        if les(hrrn, INTERACTIVE_HRRN) {
            return false;
        }
        let wait = now.wrapping_sub(self.exec_start);
        !(wait != 0 && eq_d(wait, self.prev_wait_time, RT_WAIT_DELTA))
    }

    fn is_cpu_bound(&self) -> bool {
        let total = self.wait_time.wrapping_add(self.vruntime);
        let pct = self
            .vruntime
            .wrapping_mul(100)
            .checked_div(total)
            .unwrap_or(0);
        geq(pct, 90)
    }

    /// `detect_type` at `now` (`migrated`: enqueue with ENQUEUE_MIGRATED).
    pub fn detect_type(&mut self, now: u64, migrated: bool) {
        if self.vruntime == 1 {
            self.task_type = TaskType::NoType;
            return;
        }
        let hrrn = self
            .wait_time
            .wrapping_add(self.vruntime)
            .checked_div(self.vruntime)
            .unwrap_or(0);
        let new = if self.is_realtime(now, migrated) {
            TaskType::Realtime
        } else if self.is_interactive(now, hrrn) {
            TaskType::Interactive
        } else if self.is_cpu_bound() {
            TaskType::CpuBound
        } else if les(hrrn, INTERACTIVE_HRRN) {
            TaskType::Batch
        } else {
            TaskType::NoType
        };
        if new == TaskType::Realtime {
            self.rt_sticky = 4;
        } else if self.task_type == TaskType::Realtime && self.rt_sticky > 0 {
            self.rt_sticky -= 1;
            return;
        }
        self.task_type = new;
    }

    /// `normalize_lifetime` with `max_life` = max lifetime ms << 20.
    fn normalize(&mut self, now: u64, max_life: u64) {
        let life = now.wrapping_sub(self.start_time);
        if (life.wrapping_sub(max_life) as i64) < 0 {
            return;
        }
        self.vruntime &= !YIELD_MARK;
        let old_hrrn_x = (life.wrapping_shl(7) / ((self.vruntime >> 3) | 1)).max(1);
        self.start_time = now.wrapping_sub(max_life >> 1);
        self.vruntime = (max_life.wrapping_shl(9) / old_hrrn_x) | 1;
    }
}

/// TT as fair-class hooks.
#[derive(Debug)]
pub struct Tt {
    max_lifetime_ms: u64,
    prios: [i64; 4],
    nodes: Vec<Node>,
    /// Moves on at every change to a node (`FairHooks::order_generation`).
    gen: u64,
}

impl Tt {
    /// TT with a run's tunables.
    pub fn new(t: &TunableSet) -> Self {
        let get = |k: &str, d: i64| t.get(k).unwrap_or(d);
        Tt {
            max_lifetime_ms: get("tt_max_lifetime_ms", 22_000).max(1) as u64,
            prios: [
                get("tt_rt_prio", -20),
                get("tt_interactive_prio", -10),
                get("tt_cpu_bound_prio", -15),
                get("tt_batch_prio", 19),
            ],
            nodes: vec![],
            gen: 0,
        }
    }

    /// Task `t`'s node, to change it (the order's generation moves on).
    fn node(&mut self, t: TaskId) -> &mut Node {
        self.gen += 1;
        if self.nodes.len() <= t {
            self.nodes.resize(t + 1, Node::default());
        }
        &mut self.nodes[t]
    }

    /// `HRRN_PERCENT` of task `t` (a task without a node has vruntime 0).
    fn hrrn_percent(&self, t: TaskId, now: u64) -> u64 {
        self.nodes.get(t).map_or(0, |n| n.hrrn_percent(now))
    }

    /// The offset `convert_to_vruntime` applies to a task of type `ty`.
    fn prio_of(&self, ty: TaskType, nice: i32) -> i64 {
        match ty {
            TaskType::Realtime => self.prios[0],
            TaskType::Interactive => self.prios[1],
            TaskType::CpuBound => self.prios[2],
            TaskType::Batch => self.prios[3],
            TaskType::NoType => i64::from(nice),
        }
    }
}

impl FairHooks for Tt {
    fn name(&self) -> &'static str {
        "tt"
    }

    /// `task_fork_fair` resets the node (vruntime 1, NO_TYPE);
    /// `wake_up_new_task` sets start_time; `__sched_fork` zeroes exec_start.
    fn task_fork(&mut self, m: &Machine, t: TaskId, _parent: Option<TaskId>) {
        *self.node(t) = Node {
            vruntime: 1,
            start_time: m.now,
            forked: m.now,
            ..Node::default()
        };
    }

    /// `enqueue_entity`: a wakeup adds the time asleep to `wait_time`, then
    /// the type is detected (every enqueue).
    fn task_enqueue(&mut self, m: &Machine, t: TaskId, flags: EnqueueFlags) {
        let now = m.now;
        let n = self.node(t);
        let migrated = flags.has(EnqueueFlags::MIGRATED);
        if migrated {
            // migrate_task_rq_fair: exec_start = 0, YIELD_UNMARK.
            n.exec_start = 0;
            n.vruntime &= !YIELD_MARK;
        }
        if flags.has(EnqueueFlags::WAKEUP) {
            let wait = now.wrapping_sub(n.exec_start);
            n.wait_time = n.wait_time.wrapping_add(wait);
            n.detect_type(now, migrated);
            n.prev_wait_time = wait;
        } else {
            n.detect_type(now, migrated);
        }
    }

    /// `dequeue_entity` with DEQUEUE_SLEEP, before its `update_curr`.
    fn task_sleep(&mut self, _m: &Machine, t: TaskId) {
        let n = self.node(t);
        n.prev_burst = n.burst;
        n.burst = n.curr_burst;
        n.curr_burst = 0;
        if n.task_type == TaskType::CpuBound {
            n.task_type = TaskType::Batch;
        }
    }

    fn task_yield(&mut self, _m: &Machine, t: TaskId, nr_queued: u32) {
        if nr_queued > 1 {
            self.node(t).vruntime |= YIELD_MARK;
        }
    }

    fn picked(&mut self, _m: &Machine, _cpu: CpuId, prev: Option<TaskId>, _next: TaskId) {
        if let Some(p) = prev {
            self.node(p).vruntime &= !YIELD_MARK;
        }
    }

    fn queue_order(&self) -> Option<QueueOrder> {
        Some(QueueOrder {
            timeline: true,
            tick: TickPreempt::Slice,
            buddies: true,
            wakeup_by_order: false,
        })
    }

    fn order_generation(&self) -> Option<u64> {
        Some(self.gen)
    }

    /// `entity_before`: lower HRRN_PERCENT first.
    fn before(&mut self, m: &Machine, a: EntityRef, b: EntityRef) -> bool {
        let (Some(ta), Some(tb)) = (a.task, b.task) else {
            return false;
        };
        let ha = self.hrrn_percent(ta, m.now);
        let hb = self.hrrn_percent(tb, m.now);
        les(ha, hb)
    }

    /// HRRN_PERCENT, `before`'s order for task entities while below 2^63
    /// (the `s64` difference cannot wrap); groups and larger values have
    /// no key.
    fn order_key(&mut self, m: &Machine, e: EntityRef) -> Option<u64> {
        let h = self.hrrn_percent(e.task?, m.now);
        (h < 1 << 63).then_some(h)
    }

    /// `update_curr`: burst, vruntime with the type's offset, type,
    /// lifetime (task entities only: the queue is flat).
    fn entity_update_curr(&mut self, m: &Machine, e: EntityRef, delta_exec: Ns, _delta_fair: u64) {
        let Some(t) = e.task else { return };
        let (now, hz, nice) = (m.now, m.hz, m.tasks[t].nice);
        let max_life = self.max_lifetime_ms << 20;
        let ty = self.node(t).task_type;
        let prio = self.prio_of(ty, nice);
        let n = self.node(t);
        n.exec_start = now;
        n.curr_burst = n.curr_burst.wrapping_add(delta_exec);
        n.vruntime = n
            .vruntime
            .wrapping_add(convert_to_vruntime(delta_exec, prio, hz));
        n.detect_type(now, false);
        n.normalize(now, max_life);
    }

    fn entity_set_next(&mut self, m: &Machine, e: EntityRef) {
        if let Some(t) = e.task {
            self.node(t).exec_start = m.now;
        }
    }

    fn flat_runqueue(&self) -> bool {
        true
    }

    /// `tt_type` is the kernel's `TT_*` number ([`TaskType::from_number`]).
    fn task_debug(&self, t: TaskId) -> Vec<(&'static str, i64)> {
        let n = self.nodes.get(t).copied().unwrap_or_default();
        vec![
            ("tt_type", n.task_type as i64),
            ("tt_vruntime", n.vruntime as i64),
            ("tt_wait_time", n.wait_time as i64),
        ]
    }
}
