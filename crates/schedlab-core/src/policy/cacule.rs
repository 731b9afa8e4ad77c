//! CacULE v6.0 (Hamad Al Marri; CachyOS port for Linux 6.0 by Peter Jung,
//! 2022-08-20): shootout.md §3.1, which supersedes the 5.14 description of
//! alt-schedulers.md §5; source `CachyOS/kernel-patches
//! 6.0/sched/0001-cacULE.patch` (four patches; the fourth is CacULE
//! itself: `calc_interactivity`, `calc_cache_score`, `calc_starve_score`,
//! `entity_before`, `pick_next_entity`, `check_preempt_tick`,
//! `normalize_lifetime`, `update_IS` and the RDB functions of
//! kernel/sched/fair.c). Modelled on the simulator's CFS (Linux 6.1 ≈ 6.0).
//!
//! Every entity (task or group) carries a `cacule_node`: `start_time`
//! (fork, `wake_up_new_task`; 0 for group entities, which are zeroed at
//! allocation), its own `vruntime` (+= `calc_delta_fair(delta)` at every
//! `update_curr`) and `last_run` (now, at `update_curr` and switch-in).
//! Its score, lower = runs first, sums three integer terms:
//!
//!   IS      l = now − start_time, v = vruntime|1, s = (l > v) ? (l − v)|1 : 1
//!           s ≥ v ? m_I/(s/v) : 2·m_I − m_I/(v/s)          (sleepy → 0, busy → 2·m_I)
//!   cache   0 for the running entity; p = (now − exec_start)|1, c = 1 ms
//!           p ≤ c ? m_C/(c/p) : 2·m_C − m_C/(p/c)          (just ran → 0, cold → 2·m_C)
//!   starve  2·m_S for the running entity; t = (now − last_run)|1, d = 3 ms
//!           t ≤ d ? 2·m_S − m_S/(d/t) : m_S/(t/d)          (waited long → 0)
//!
//! with m_I = 65536, m_C = 13107, m_S = 19660 (sysctls). A SCHED_IDLE task
//! always loses against a non-idle one (`entity_before`). The fair queue is
//! a list, new entries at the head; the pick scans it, taking the next
//! entry only if it scores strictly lower (ties: the most recently queued),
//! and keeps the running entity only if it scores strictly lower than that
//! (class/fair/order.rs). The tick reschedules iff the pick is not the
//! running entity (no slice, no granularity); a wakeup preempts, after
//! CFS's early exits (SCHED_BATCH/IDLE wakees never do), iff the wakee
//! scores lower than the running entity. No buddies, no `place_entity`, no
//! `min_vruntime` and no rb-tree (`QueueOrder::timeline` false: the fair
//! class keeps only the list, and CFS's `se.vruntime` only accumulates
//! `calc_delta_fair` from 0, as in the patch, where nothing reads it).
//! Past `cacule_max_lifetime` (11 000 ms, ×2^20 ns ≈ 11.5 s) of life the
//! node is renormalised to half that life with the same run/life ratio.
//! `sched_yield` sets bit 63 of the node's vruntime (IS = 2·m_I) until the
//! end of the next pick on that CPU (`pick_next_task_fair` clears it for
//! `prev`). Wakeups never go to the waker's CPU (`want_affine` = 0:
//! `wake_wide`/`record_wakee` compiled out); `migration_cost` is 200 µs;
//! autogroup is off by default here although the patch's Kconfig turns
//! SCHED_AUTOGROUP on: the seed's stock Arch config had it on for CFS too
//! (shootout.md §4.1, §7), and the knob does not say whether the kernel has
//! autogroups but whether every workload process sits in its own session
//! (`autogroup=1`, as if started with `setsid`); the seed's benchmarks and
//! the host runner start theirs from one session, one shared autogroup,
//! which `autogroup=0` reproduces, as it does for CFS and EEVDF. The scores
//! work on group entities too, so cgroups and autogroups keep the patch's
//! per-level behaviour.
//!
//! The Response Driven Balancer (RDB, Kconfig `CACULE_RDB` default y,
//! `RDB_INTERVAL` 19 ms) replaces CFS's load balancer. Each CPU's candidate
//! is its non-running fair task with the lowest IS (`update_IS`). At a
//! tick once `next_balance` has passed: an idle CPU pulls the candidate of
//! the first CPU with ≥ 2 tasks (same LLC first, then all:
//! `idle_try_pull_any`); a busy CPU with < 2 tasks pulls the candidate
//! with the globally lowest IS if lower than its own (`try_pull_higher_IS`);
//! a busy CPU with ≥ 2 tasks pushes its candidate to a CPU running fewer
//! than its own count − 1 (LLC first; `try_push_any`), then pulls from any
//! CPU whose candidate's IS is below its own (`try_pull_any`); a busy CPU
//! then waits `msecs_to_jiffies(19)` ticks. A CPU going idle pulls like an
//! idle tick (`newidle_balance`). A candidate moves only if not running,
//! allowed on the destination and `exec_start` ≠ 0 (never ran since fork
//! or last migration); the destination's `check_preempt_curr` follows.
//!
//! Speed (no change to any value; debug builds check every indexed answer
//! against the plain scan): a queue of at least 12 entities is answered
//! from an index (cacule/pick.rs) that keeps its entities ordered by a
//! lower bound of their score valid until a horizon 48 ms ahead (the
//! lowest 32 sorted, the rest sorted only if a scan reaches them; IS at
//! the horizon + the least cache + starvation term over the waits up to
//! it; the second term's table is cacule/ftable.rs), so a pick scores the
//! few entities whose bound does not exceed the best score found, from
//! the queue's own copy of their nodes' fields (a slab of one cache line
//! per entity); the tick's answer is kept for the pick that follows at
//! the same time. Smaller queues are scanned with `order_key`
//! (class/fair/order.rs). Each node memoises its IS with the range of
//! lives over which it holds (`IsMemo`); the cache and starvation terms
//! divide by the run's fixed divisors with an exact multiply-shift
//! (`DivBy`) and take m/q from a table for small q (`FactorDiv`), all in
//! cacule/fast.rs. The RDB's candidate of a CPU with at least 16 tasks
//! comes from a per-CPU index of its waiting tasks sorted by their IS at a
//! horizon 256 ms ahead (cacule/cand.rs), read until the bound exceeds
//! the lowest IS found; during a pass that moved tasks to or from a CPU, that CPU's
//! candidate is searched in the pass's task list (`CandMemo`, cacule/rdb.rs).
//! Both indexes follow the fair class's lists (`FairHooks::list_changed`)
//! and re-index an entity whenever its node changes while it waits. Both
//! append a joining entity to a short unsorted list and forget a leaving
//! one (its entry is skipped, then dropped when the index is re-keyed at
//! its next horizon, which sorts the joined entries in, or compacted once
//! dead entries crowd it): a switch, one leave and one join, shifts no
//! sorted entries.
//!
//! Departures (also docs/model.md, "CacULE"):
//! * RDB candidates are computed when a balancer pass reads them, not published
//!   at each CPU's last enqueue/dequeue/pick/tick (up to a tick staler in
//!   the kernel); ties between candidates go to the task queued or picked
//!   last (the head of `rq->cfs_tasks`).
//! * Idle CPUs run the RDB from their tick, as the engine's idle CPUs run
//!   the CFS balancer (the patch compiles out the NOHZ idle-balance kick).
//! * The 6.0 port's reverts (SIS_UTIL → SIS_PROP idle scan; PELT decay of
//!   blocked tasks at wakeup migration) and HZ_2000 are not modelled: the
//!   idle-CPU scan is the simulator's SIS_UTIL one.
//! * Clock: `sched_clock()` is the simulated time (no clock skew).

use crate::class::fair::entity::{ListEntry, SeId};
use crate::class::fair::hooks::{EntityRef, FairHooks, QueueOrder, TickPreempt};
use crate::class::fair::tunables::CFS_TUNABLES;
use crate::class::EnqueueFlags;
use crate::clock::{Ns, MSEC};
use crate::cpuset::CpuId;
use crate::machine::Machine;
use crate::plugin::SchedulerDef;
use crate::task::TaskId;
use crate::tunable::{Tunable, TunableSet};
use crate::workload::Policy;
use std::collections::VecDeque;

/// Registry declaration (registry.rs, `SCHEDULERS`).
pub const DEF: SchedulerDef = SchedulerDef {
    name: "cacule",
    description: "CacULE v6.0 on CFS 6.1: interactivity + cache + starvation scores, O(n) list pick, Response Driven Balancer",
    source: "shootout.md §3.1, alt-schedulers.md §5; CachyOS/kernel-patches 6.0/sched/0001-cacULE.patch",
    version: "6.0 port on 6.1",
    classes: &["dl", "rt", "fair"],
    tunables: TUNABLES,
    fair_policies: false,
    dl_orders: true,
    build: |ctx| {
        let hooks = Box::new(CacUle::new(ctx.tunables, ctx.m.nr_cpus()));
        crate::registry::mainline_stack(ctx, crate::class::fair::tunables::Version::Cfs, hooks)
    },
};

const fn with_default(t: Tunable, default: i64, doc: &'static str) -> Tunable {
    Tunable { default, doc, ..t }
}

const fn knob(name: &'static str, default: i64, min: i64, max: i64, doc: &'static str) -> Tunable {
    Tunable {
        name,
        default,
        min,
        max,
        unit: crate::tunable::unit_of(name, max),
        doc,
    }
}

const FACTOR_MAX: i64 = i32::MAX as i64;

/// CFS 6.1's tunables with CacULE's defaults, then CacULE's own sysctls.
pub const TUNABLES: &[Tunable] = &[
    CFS_TUNABLES[0],
    CFS_TUNABLES[1],
    CFS_TUNABLES[2],
    CFS_TUNABLES[3],
    CFS_TUNABLES[4],
    with_default(
        CFS_TUNABLES[5],
        200_000,
        "cache-hot window for the CFS balancer (200 µs under CacULE; unused while cacule_rdb = 1)",
    ),
    CFS_TUNABLES[6],
    CFS_TUNABLES[7],
    CFS_TUNABLES[8],
    CFS_TUNABLES[9],
    CFS_TUNABLES[10],
    CFS_TUNABLES[11],
    CFS_TUNABLES[12],
    CFS_TUNABLES[13],
    CFS_TUNABLES[14],
    knob(
        "cacule_interactivity_factor",
        65_536,
        0,
        FACTOR_MAX,
        "sched_interactivity_factor m_I: IS in (0, 2·m_I)",
    ),
    knob(
        "cacule_max_lifetime_ms",
        11_000,
        1,
        1_000_000,
        "sched_max_lifetime_ms: life renormalised past this ×2^20 ns",
    ),
    knob(
        "cacule_cache_factor",
        13_107,
        0,
        FACTOR_MAX,
        "sched_cache_factor m_C (0: no cache term)",
    ),
    knob(
        "cacule_cache_divisor_ns",
        1_000_000,
        1,
        1_000_000_000,
        "sched_cache_divisor: cache term's time scale",
    ),
    knob(
        "cacule_starve_factor",
        19_660,
        0,
        FACTOR_MAX,
        "sched_starve_factor m_S (0: no starvation term)",
    ),
    knob(
        "cacule_starve_divisor_ns",
        3_000_000,
        1,
        1_000_000_000,
        "sched_starve_divisor: starvation term's time scale",
    ),
    knob(
        "cacule_yield",
        1,
        0,
        1,
        "sched_cacule_yield: sched_yield marks the task as maximally busy for the next pick",
    ),
    knob(
        "cacule_rdb",
        1,
        0,
        1,
        "Kconfig CACULE_RDB: 1 Response Driven Balancer, 0 CFS's load balancer",
    ),
    knob(
        "cacule_rdb_interval_ms",
        19,
        1,
        1_000,
        "Kconfig RDB_INTERVAL: a busy CPU's wait between RDB passes",
    ),
];

/// Bit 63 of a node's vruntime: the task yielded (`YIELD_MARK`).
pub const YIELD_MARK: u64 = 1 << 63;

/// Score parameters (the sysctls).
#[derive(Debug, Clone, Copy)]
pub struct Factors {
    /// m_I, `interactivity_factor`.
    pub interactivity: u32,
    /// m_C, `cache_factor` (0: no cache term).
    pub cache: u32,
    /// `cache_divisor`, ns.
    pub cache_divisor: u64,
    /// m_S, `starve_factor` (0: no starvation term).
    pub starve: u32,
    /// `starve_divisor`, ns.
    pub starve_divisor: u64,
}

impl Default for Factors {
    fn default() -> Self {
        Factors {
            interactivity: 65_536,
            cache: 13_107,
            cache_divisor: MSEC,
            starve: 19_660,
            starve_divisor: 3 * MSEC,
        }
    }
}

/// Whether `task` (None: a group entity) is SCHED_IDLE; while no task has
/// been, no task struct is read (the pick reads a few entities per tick).
fn is_sched_idle(m: &Machine, task: Option<TaskId>) -> bool {
    m.any_sched_idle() && task.is_some_and(|t| m.tasks[t].policy == Policy::Idle)
}

/// `calc_interactivity`: IS of a node that has lived `life` ns and run
/// `vruntime` virtual ns (the kernel's u64 arithmetic, result truncated to
/// `unsigned int`).
pub fn interactivity_score(life: u64, vruntime: u64, m: u32) -> u32 {
    let v = vruntime | 1;
    let m = u64::from(m);
    let s = if life > v { (life - v) | 1 } else { 1 };
    let score = if s >= v {
        m / (s / v)
    } else {
        (m << 1) - m / (v / s)
    };
    score as u32
}

/// `calc_cache_score` of a queued entity whose `exec_start` is
/// `since_exec_start` ns ago (the running entity scores 0).
pub fn cache_score(since_exec_start: u64, m: u32, divisor: u64) -> u32 {
    if m == 0 {
        return 0;
    }
    let m = u64::from(m);
    let p = since_exec_start | 1;
    let score = if divisor >= p {
        m / (divisor / p)
    } else {
        (m << 1) - m / (p / divisor)
    };
    score as u32
}

/// `calc_starve_score` of a queued entity that last ran
/// `since_last_run` ns ago (the running entity scores 2·m_S).
pub fn starve_score(since_last_run: u64, m: u32, divisor: u64) -> u32 {
    if m == 0 {
        return 0;
    }
    let m = u64::from(m);
    let t = since_last_run | 1;
    let score = if divisor >= t {
        (m << 1) - m / (divisor / t)
    } else {
        m / (t / divisor)
    };
    score as u32
}

/// A `cacule_node` with the CFS entity fields the scores read (one cache
/// line: the pick reads one node per queued entity).
#[derive(Debug, Clone, Copy, Default)]
#[repr(align(64))]
pub struct Node {
    /// `cacule_start_time`.
    pub start_time: u64,
    /// The node's own vruntime (bit 63: yield mark).
    pub vruntime: u64,
    /// `last_run`.
    pub last_run: u64,
    /// The entity's `exec_start` (0 after fork and after a migration).
    pub exec_start: u64,
    /// The last IS computed (a cache, not part of the node's state).
    is_memo: IsMemo,
}

mod cand;
mod fast;
mod ftable;
mod pick;
mod rdb;

use cand::CandIndex;
use fast::{FastTerms, IsMemo};
use ftable::FTable;
use pick::RqIndex;
use rdb::{CandMemo, SnapBufs, Snapshot};

/// CacULE as fair-class hooks.
#[derive(Debug)]
pub struct CacUle {
    f: Factors,
    fast: FastTerms,
    max_lifetime_ms: u64,
    yield_mark: bool,
    rdb: bool,
    rdb_interval_ms: u64,
    /// Task nodes, by task id.
    tasks: Vec<Node>,
    /// Group-entity nodes, by entity id (zeroed like `kzalloc`).
    groups: Vec<Node>,
    /// Per task: when it was last queued or picked (head of `cfs_tasks`).
    listed: Vec<u64>,
    stamp: u64,
    /// Per task: moves on at every change to its node or stamp.
    ver: Vec<u64>,
    /// Per CPU: its tasks' IS as its last RDB candidate search found it.
    cands: Vec<CandMemo>,
    /// Moves on at every change to a node (`FairHooks::order_generation`).
    gen: u64,
    /// Per CPU: `rq->next_balance` of the RDB.
    next_balance: Vec<Ns>,
    /// The pick's bound on cache + starve (cacule/pick.rs); None when the
    /// factors allow scores of 2^31 or more (the pick then scans).
    ftable: Option<FTable>,
    /// Per fair queue: its listed entities by a lower bound of their score
    /// (cacule/pick.rs).
    index: Vec<RqIndex>,
    /// Per entity: the queue whose index holds it and its entry's slot.
    listed_at: Vec<Option<(usize, u32)>>,
    /// Per task: its entity (once listed).
    task_se: Vec<SeId>,
    /// The RDB's buffers and CPU orders (cacule/rdb.rs).
    snap_bufs: SnapBufs,
    rounds: (crate::cpuset::CpuSet, Vec<std::rc::Rc<[CpuId]>>),
    /// Per CPU: its listed tasks by IS bound (cacule/cand.rs).
    cand_index: Vec<CandIndex>,
    /// Per task: the CPU it is listed on and its bound there.
    cand_at: Vec<Option<(CpuId, u32)>>,
}

impl CacUle {
    /// CacULE with a run's tunables on `cpus` CPUs.
    pub fn new(t: &TunableSet, cpus: usize) -> Self {
        let get = |k: &str, d: i64| t.get(k).unwrap_or(d).max(0) as u64;
        let d = Factors::default();
        let f = Factors {
            interactivity: get("cacule_interactivity_factor", 65_536) as u32,
            cache: get("cacule_cache_factor", 13_107) as u32,
            cache_divisor: get("cacule_cache_divisor_ns", d.cache_divisor as i64).max(1),
            starve: get("cacule_starve_factor", 19_660) as u32,
            starve_divisor: get("cacule_starve_divisor_ns", d.starve_divisor as i64).max(1),
        };
        let fast = FastTerms::new(&f);
        let max_score = 2 * (u64::from(f.interactivity) + u64::from(f.cache) + u64::from(f.starve));
        let ftable = (max_score < 1 << 31)
            .then(|| FTable::new(|t| u64::from(fast.cache(t)), |t| u64::from(fast.starve(t))));
        CacUle {
            fast,
            ftable,
            index: vec![],
            listed_at: vec![],
            task_se: vec![],
            snap_bufs: SnapBufs::default(),
            rounds: Default::default(),
            cand_index: vec![],
            cand_at: vec![],
            f,
            max_lifetime_ms: get("cacule_max_lifetime_ms", 11_000),
            yield_mark: get("cacule_yield", 1) != 0,
            rdb: get("cacule_rdb", 1) != 0,
            rdb_interval_ms: get("cacule_rdb_interval_ms", 19),
            tasks: vec![],
            groups: vec![],
            listed: vec![],
            stamp: 0,
            ver: vec![],
            cands: vec![],
            gen: 0,
            next_balance: vec![0; cpus],
        }
    }

    /// Task `t`'s node, to change it (the order's generation moves on).
    /// This and the two accessors below are always inlined: a call per
    /// hook (several per event) cost more than their bodies.
    #[inline(always)]
    fn task_node(&mut self, t: TaskId) -> &mut Node {
        self.gen += 1;
        self.task_slot(t);
        self.ver[t] += 1;
        &mut self.tasks[t]
    }

    /// Entity `e`'s node, to change it (the order's generation moves on).
    #[inline(always)]
    fn node_mut(&mut self, e: EntityRef) -> &mut Node {
        match e.task {
            Some(t) => self.task_node(t),
            None => {
                self.gen += 1;
                self.slot(e)
            }
        }
    }

    /// Task `t`'s node, to read it (or fill its IS memo).
    #[inline(always)]
    fn task_slot(&mut self, t: TaskId) -> &mut Node {
        if self.tasks.len() <= t {
            self.tasks.resize(t + 1, Node::default());
            self.listed.resize(t + 1, 0);
            self.ver.resize(t + 1, 0);
        }
        &mut self.tasks[t]
    }

    /// Entity `e`'s node, to read it (or fill its IS memo).
    #[inline]
    fn slot(&mut self, e: EntityRef) -> &mut Node {
        match e.task {
            Some(t) => self.task_slot(t),
            None => {
                if self.groups.len() <= e.se {
                    self.groups.resize(e.se + 1, Node::default());
                }
                &mut self.groups[e.se]
            }
        }
    }

    fn node(&self, e: EntityRef) -> Node {
        let n = match e.task {
            Some(t) => self.tasks.get(t),
            None => self.groups.get(e.se),
        };
        n.copied().unwrap_or_default()
    }

    /// The IS of task `t` at `now`.
    pub fn task_is(&self, t: TaskId, now: u64) -> u32 {
        let n = self.tasks.get(t).copied().unwrap_or_default();
        interactivity_score(
            now.wrapping_sub(n.start_time),
            n.vruntime,
            self.f.interactivity,
        )
    }

    /// Score of `e` at `now`: IS + cache + starve (each `unsigned int`).
    pub fn score(&self, e: EntityRef, now: u64) -> u32 {
        let n = self.node(e);
        let is = interactivity_score(
            now.wrapping_sub(n.start_time),
            n.vruntime,
            self.f.interactivity,
        );
        let (cache, starve) = if e.is_curr {
            (0, self.f.starve.wrapping_mul(2))
        } else {
            (
                cache_score(
                    now.wrapping_sub(n.exec_start),
                    self.f.cache,
                    self.f.cache_divisor,
                ),
                starve_score(
                    now.wrapping_sub(n.last_run),
                    self.f.starve,
                    self.f.starve_divisor,
                ),
            )
        };
        is.wrapping_add(cache).wrapping_add(starve)
    }

    /// [`Self::score`], computed faster: IS memoised per node, the other
    /// terms with the run's divisions precomputed (same value).
    #[inline]
    fn fast_score(&mut self, e: EntityRef, now: u64) -> u32 {
        let (mi, starve_curr) = (self.f.interactivity, self.f.starve.wrapping_mul(2));
        let n = self.slot(e);
        let is = n
            .is_memo
            .get(now.wrapping_sub(n.start_time), n.vruntime, mi);
        if e.is_curr {
            return is.wrapping_add(starve_curr);
        }
        let (since_exec, since_run) =
            (now.wrapping_sub(n.exec_start), now.wrapping_sub(n.last_run));
        let cache = self.fast.cache(since_exec);
        let starve = self.fast.starve(since_run);
        is.wrapping_add(cache).wrapping_add(starve)
    }

    /// [`Self::task_is`] from the node's memo.
    fn fast_task_is(&mut self, t: TaskId, now: u64) -> u32 {
        let mi = self.f.interactivity;
        let n = self.task_slot(t);
        n.is_memo
            .get(now.wrapping_sub(n.start_time), n.vruntime, mi)
    }

    /// `normalize_lifetime`.
    fn normalize(&mut self, e: EntityRef, now: u64) {
        let max_life = self.max_lifetime_ms << 20;
        let life = now.wrapping_sub(self.slot(e).start_time);
        if (life.wrapping_sub(max_life) as i64) <= 0 {
            return;
        }
        let n = self.node_mut(e);
        n.vruntime &= !YIELD_MARK;
        let old_hrrn_x = (life.wrapping_shl(7) / ((n.vruntime >> 3) | 1)).max(1);
        n.start_time = now.wrapping_sub(max_life >> 1);
        n.vruntime = max_life.wrapping_shl(9) / old_hrrn_x;
        self.retouch_entity(e);
    }
}

impl FairHooks for CacUle {
    fn name(&self) -> &'static str {
        "cacule"
    }

    /// `wake_up_new_task`: start_time = now; `__sched_fork` zeroes vruntime
    /// and exec_start; `last_run` is copied with the parent's task_struct.
    fn task_fork(&mut self, m: &Machine, t: TaskId, parent: Option<TaskId>) {
        let last_run = parent.map_or(m.now, |p| self.task_node(p).last_run);
        *self.task_node(t) = Node {
            start_time: m.now,
            vruntime: 0,
            last_run,
            exec_start: 0,
            ..Node::default()
        };
        self.retouch_task(t);
    }

    fn task_enqueue(&mut self, _m: &Machine, t: TaskId, flags: EnqueueFlags) {
        let node = self.task_node(t);
        if flags.has(EnqueueFlags::MIGRATED) {
            // migrate_task_rq_fair: "no longer consider this task hot".
            node.exec_start = 0;
        }
        self.retouch_task(t);
        self.stamp += 1;
        self.listed[t] = self.stamp;
        self.cand_restamp(t);
    }

    fn task_yield(&mut self, _m: &Machine, t: TaskId, _nr_queued: u32) {
        if self.yield_mark {
            self.task_node(t).vruntime |= YIELD_MARK;
            self.retouch_task(t);
        }
    }

    fn picked(&mut self, _m: &Machine, _cpu: CpuId, prev: Option<TaskId>, next: TaskId) {
        if let Some(p) = prev {
            // Read first: a write moves the caches' versions on.
            if self.task_slot(p).vruntime & YIELD_MARK != 0 {
                self.task_node(p).vruntime &= !YIELD_MARK;
                self.retouch_task(p);
            }
        }
        self.stamp += 1;
        self.task_node(next);
        self.listed[next] = self.stamp;
        self.cand_restamp(next);
    }

    fn queue_order(&self) -> Option<QueueOrder> {
        Some(QueueOrder {
            tick: TickPreempt::PickDiffers,
            buddies: false,
            wakeup_by_order: true,
            // cacule-5.14.patch: `#if !defined(CONFIG_CACULE_SCHED)` around
            // the rb-tree, update_min_vruntime, place_entity and every
            // `± min_vruntime` (enqueue/dequeue_entity, task_fork_fair,
            // migrate_task_rq_fair, detach/attach_task_cfs_rq).
            timeline: false,
        })
    }

    fn order_generation(&self) -> Option<u64> {
        Some(self.gen)
    }

    fn list_changed(&mut self, rq: usize, cpu: CpuId, x: ListEntry, joined: bool) {
        match joined {
            true => self.index_join(rq, x),
            false => self.index_leave(x.se),
        }
        if let Some(t) = x.task {
            match joined {
                true => self.cand_join(cpu, t),
                false => self.cand_leave(t),
            }
        }
    }

    /// The scan's answer from the queue's index (cacule/pick.rs).
    fn order_first(
        &mut self,
        m: &Machine,
        rq: usize,
        list: &VecDeque<ListEntry>,
        except: Option<SeId>,
    ) -> Option<Option<(u64, SeId)>> {
        self.bounded_first(m, rq, list, except)
    }

    /// `entity_before(now, curr = b, se = a) == 1`.
    fn before(&mut self, m: &Machine, a: EntityRef, b: EntityRef) -> bool {
        let idle = |e: EntityRef| is_sched_idle(m, e.task);
        match (idle(a), idle(b)) {
            (true, false) => return false,
            (false, true) => return true,
            _ => {}
        }
        let diff = self
            .fast_score(a, m.now)
            .wrapping_sub(self.fast_score(b, m.now)) as i32;
        diff < 0
    }

    /// (idle, score): `before`'s order while scores stay below 2^31 (their
    /// `s32` difference cannot wrap); above that, no key.
    fn order_key(&mut self, m: &Machine, e: EntityRef) -> Option<u64> {
        let idle = is_sched_idle(m, e.task);
        let score = self.fast_score(e, m.now);
        (score < 1 << 31).then_some((u64::from(idle) << 32) | u64::from(score))
    }

    /// [`Self::order_key`]'s scan in one loop.
    fn order_scan(
        &mut self,
        m: &Machine,
        list: &[ListEntry],
        except: Option<SeId>,
    ) -> Option<Option<(u64, SeId)>> {
        let mut best: Option<(u64, SeId)> = None;
        for x in list.iter().rev() {
            if Some(x.se) == except {
                continue;
            }
            let idle = is_sched_idle(m, x.task);
            let e = EntityRef {
                se: x.se,
                task: x.task,
                is_curr: false,
            };
            let score = self.fast_score(e, m.now);
            if score >= 1 << 31 {
                return None;
            }
            let k = (u64::from(idle) << 32) | u64::from(score);
            if best.is_none_or(|(bk, _)| k < bk) {
                best = Some((k, x.se));
            }
        }
        Some(best)
    }

    fn entity_update_curr(&mut self, m: &Machine, e: EntityRef, _delta_exec: Ns, delta_fair: u64) {
        let n = self.node_mut(e);
        n.last_run = m.now;
        n.exec_start = m.now;
        n.vruntime = n.vruntime.wrapping_add(delta_fair);
        self.retouch_entity(e);
        self.normalize(e, m.now);
    }

    fn entity_set_next(&mut self, m: &Machine, e: EntityRef) {
        let n = self.node_mut(e);
        n.exec_start = m.now;
        n.last_run = m.now;
        self.retouch_entity(e);
    }

    fn wake_affine(&self) -> bool {
        false
    }

    fn replaces_balancer(&self) -> bool {
        self.rdb
    }

    /// `trigger_load_balance` with CACULE_RDB and RDB_INTERVAL.
    fn tick_balance(&mut self, m: &mut Machine, cpu: CpuId, tasks: &[Vec<TaskId>]) {
        if m.now < self.next_balance[cpu] {
            return;
        }
        let mut snap = Snapshot::new(m, tasks, std::mem::take(&mut self.snap_bufs));
        if m.is_idle(cpu) {
            self.pull_any(m, &mut snap, cpu, false);
        } else {
            if snap.nr[cpu] < 2 {
                self.pull_higher_is(m, &mut snap, cpu);
            } else {
                self.push_any(m, &mut snap, cpu);
                self.pull_lower_is(m, &mut snap, cpu);
            }
            let jiffies = (self.rdb_interval_ms * u64::from(m.hz))
                .div_ceil(1000)
                .max(1);
            self.next_balance[cpu] = m.now.saturating_add(jiffies * m.tick_ns());
        }
        self.snap_bufs = snap.into_bufs();
    }

    /// `newidle_balance` with CACULE_RDB.
    fn newidle_balance(&mut self, m: &mut Machine, cpu: CpuId, tasks: &[Vec<TaskId>]) {
        if !m.online.contains(cpu) {
            return;
        }
        let mut snap = Snapshot::new(m, tasks, std::mem::take(&mut self.snap_bufs));
        self.pull_any(m, &mut snap, cpu, true);
        self.snap_bufs = snap.into_bufs();
    }

    fn task_debug(&self, t: TaskId) -> Vec<(&'static str, i64)> {
        let n = self.tasks.get(t).copied().unwrap_or_default();
        vec![
            ("cacule_vruntime", n.vruntime as i64),
            ("cacule_start_time", n.start_time as i64),
        ]
    }
}
