//! BORE 5.9.6 (Burst-Oriented Response Enhancer, Masahito Suzuki) on EEVDF
//! 6.12: registry name `bore`. Spec: /work/shared/spec/alt-schedulers.md
//! §4 (and shootout.md §1.6 for how it differs from 1.7.x); patch
//! `firelzrd/bore-scheduler: patches/stable/linux-6.12-bore/
//! 0001-linux6.12.y-bore5.9.6.patch` @ 4882573 (`kernel/sched/bore.c`,
//! the `fair.c` hunks).
//!
//! Each task accumulates `burst_time` in `update_curr`. Its current
//! penalty is `log2plus1(burst_time)` in 8.8 fixed point (bit length of the
//! ns value, 8 fraction bits after the leading 1) less
//! `burst_penalty_offset << 8`, times `burst_penalty_scale >> 16`, capped
//! at 156 (`calc_burst_penalty`); with the defaults 24 / 1280 it is 0
//! below 2^23 ns (8.4 ms) and grows by 5 per doubling (16.8 ms → 5,
//! 100 ms → 17, 1 s → 34, 10 s → 50). `burst_penalty = max(prev, curr)`,
//! `burst_score = burst_penalty >> 2` (0 for kernel threads), and the task's
//! weight is `sched_prio_to_weight[min(39, nice + 20 + score)]`: a penalty,
//! never a boost. The task is reweighted (EEVDF keeps V and rescales lag
//! and deadline) whenever that index changes, inside `update_curr` before
//! the delta is charged (the `requested_weight` hook).
//!
//! On sleep (`dequeue_task_fair` with DEQUEUE_SLEEP, after charging the
//! task) and on yield the burst restarts: `prev = binary_smooth(curr,
//! prev)`, halfway up (`burst_smoothness_long` = 1) or straight down
//! (`burst_smoothness_short` = 0), and the penalty falls to `prev`. A yield
//! that lowers the index (raises the weight) also re-expresses the
//! remaining request at the new weight (`restart_burst_rescale_deadline`).
//!
//! Fork (`sched_clone_bore`): a thread starts with the average penalty of
//! its thread group, a process with the average over the children of its
//! parent or, with `burst_fork_atavistic` > 0, of the nearest ancestor with
//! other children (descending single-child chains, `atavistic − 1` levels
//! of cached sub-averages, stopping past `burst_cache_stop_count` tasks);
//! each average is cached for `burst_cache_lifetime_ns` and is at least the
//! cache owner's own penalty. The child's penalty is the max of that and
//! its own smoothed copy of the parent's.
//!
//! EEVDF changes with `sched_bore` = 1: the lag clamp is halved; RUN_TO_PARITY
//! does not protect the current task when more than
//! `burst_parity_threshold` entities are queued; `place_entity` gives half
//! a request to every enqueue in `deadline_boost_mask` (INITIAL | WAKEUP)
//! instead of new tasks only. Always (compiled in): `tunable_scaling` NONE
//! and `base_slice = tick · max(1, ⌈min_base_slice_ns / tick⌉)` (2 ms →
//! 4 ms at HZ 250); `base_slice_ns` and `tunable_scaling` are not tunables
//! of this scheduler (the patch makes the first read-only and removes the
//! second). The patch's skip of lag placement when `vlag` = 0 changes
//! nothing (the placed lag is 0 then) and needs no hook.
//!
//! Departures (also in docs/model.md, "BORE"): SCHED_IDLE tasks keep their
//! weight 3 (the patch would give them a nice-level weight once their
//! score changes); the simulator's per-CPU noise threads (processes named
//! `[...]`) are the kernel threads of `burst_exclude_kthreads`; tasks the
//! workload starts (no parent) begin with penalty 0 (the launcher that
//! forks them does not run here); exited tasks leave their parent's
//! children at once (no zombies); CLONE_PARENT and the `switched_from_fair`
//! reset are not modelled; a cache never computed counts as expired (the
//! kernel's timestamp 0 is long past on a real machine).

use crate::class::fair::hooks::FairHooks;
use crate::class::fair::tunables::{Version, EEVDF_TUNABLES};
use crate::class::fair::weights::{LoadWeight, PRIO_TO_WEIGHT};
use crate::class::EnqueueFlags;
use crate::clock::Ns;
use crate::machine::Machine;
use crate::plugin::{SchedulerDef, StackCtx};
use crate::registry::mainline_stack;
use crate::task::TaskId;
use crate::tunable::{concat, without, Tunable, TunableSet};
use crate::workload::Policy;

/// `MAX_BURST_PENALTY` (39 << 2).
pub const MAX_BURST_PENALTY: u32 = 39 << 2;

/// EEVDF knobs BORE takes away (the base slice is derived, no scaling).
const REMOVED: [&str; 2] = ["base_slice_ns", "tunable_scaling"];

static EEVDF_KEPT: [Tunable; EEVDF_TUNABLES.len() - REMOVED.len()] =
    without(EEVDF_TUNABLES, &REMOVED);

const fn own(
    name: &'static str,
    default: i64,
    max: i64,
    unit: &'static str,
    doc: &'static str,
) -> Tunable {
    Tunable {
        name,
        default,
        min: 0,
        max,
        unit,
        doc,
    }
}

/// BORE 5.9.6's knobs (`kernel.sched_*` sysctls and debugfs
/// `min_base_slice_ns`), with the patch's defaults and ranges.
const OWN_TUNABLES: &[Tunable] = &[
    own("bore", 1, 1, "bool", "kernel.sched_bore: 1 burst penalties and BORE's EEVDF tweaks; 0 plain EEVDF (base slice still BORE's)"),
    own("burst_exclude_kthreads", 1, 1, "bool", "kernel threads (here: the noise threads) get no burst score"),
    own("burst_smoothness_long", 1, 1, "", "shift of a rising penalty at sleep: prev += (curr - prev) >> this"),
    own("burst_smoothness_short", 0, 1, "", "shift of a falling penalty at sleep: prev -= (prev - curr) >> this"),
    own("burst_fork_atavistic", 2, 3, "", "0: a forked process inherits its parent's children average; N > 0: the nearest ancestor with other children, N - 1 cached levels deep"),
    own("burst_parity_threshold", 2, 255, "", "RUN_TO_PARITY is ignored when a queue holds more entities than this (0: never ignored)"),
    own("burst_penalty_offset", 24, 64, "", "penalty = (log2plus1(burst ns) - offset) * scale >> 16, 8.8 fixed point"),
    own("burst_penalty_scale", 1280, 4095, "", "see burst_penalty_offset"),
    own("burst_cache_stop_count", 64, u32::MAX as i64, "", "the fork average stops adding cached sub-averages past this many tasks"),
    own("burst_cache_lifetime_ns", 75_000_000, u32::MAX as i64, "ns", "how long a fork average stays valid"),
    own("deadline_boost_mask", 0x81, u32::MAX as i64, "", "ENQUEUE_* flags whose enqueue places the deadline half a request away (0x80 INITIAL | 0x01 WAKEUP)"),
    own("min_base_slice_ns", 2_000_000, 1_000_000_000, "ns", "base slice = smallest multiple of the tick >= this (at least one tick)"),
];

static TUNABLES: [Tunable; EEVDF_KEPT.len() + OWN_TUNABLES.len()] =
    concat(&[&EEVDF_KEPT, OWN_TUNABLES]);

/// The registry entry.
pub const DEF: SchedulerDef = SchedulerDef {
    name: "bore",
    description: "BORE 5.9.6 on EEVDF (Linux 6.12): burst penalty lowers a task's weight, half-slice wakeup deadlines, halved lag clamp, parity threshold, tick-multiple base slice",
    source: "alt-schedulers.md §4; firelzrd/bore-scheduler patches/stable/linux-6.12-bore/0001-linux6.12.y-bore5.9.6.patch (bore.c, fair.c)",
    version: "5.9.6 (EEVDF 6.12)",
    classes: &["dl", "rt", "fair"],
    tunables: &TUNABLES,
    fair_policies: false,
    dl_orders: true,
    build,
};

fn build(ctx: &StackCtx) -> Result<crate::class::stack::Stack, String> {
    stack_with(ctx, |t| Box::new(BoreEevdf::new(t)))
}

/// BORE's stack with the fair-class hooks `hooks` makes from the run's
/// tunables (BORE's own, or a wrapper around them in tests): mainline 6.12
/// with the base slice derived from `min_base_slice_ns` and the tick.
pub fn stack_with(
    ctx: &StackCtx,
    hooks: impl FnOnce(&TunableSet) -> Box<dyn FairHooks>,
) -> Result<crate::class::stack::Stack, String> {
    let mut tunables = ctx.tunables.clone();
    let min = tunables
        .get("min_base_slice_ns")
        .unwrap_or(2_000_000)
        .max(0) as u64;
    tunables.0.insert(
        "base_slice_ns".into(),
        base_slice(ctx.m.tick_ns(), min) as i64,
    );
    let ctx = StackCtx {
        tunables: &tunables,
        ..*ctx
    };
    mainline_stack(&ctx, Version::Eevdf, hooks(&tunables))
}

/// BORE's `update_sysctl`: the smallest multiple of the tick that is at
/// least `min_base_slice` ns, and at least one tick.
pub fn base_slice(tick_ns: Ns, min_base_slice: Ns) -> Ns {
    tick_ns.saturating_mul(min_base_slice.div_ceil(tick_ns.max(1)).max(1))
}

/// `log2plus1_u64_u32f8`: bit length of `v` with the 8 bits after the
/// leading 1 as fraction (8.8 fixed point).
pub fn log2plus1_f8(v: u64) -> u32 {
    let integral = 64 - v.leading_zeros();
    let fractional = (v.checked_shl(64 - integral).unwrap_or(0) >> 55) as u8;
    integral << 8 | u32::from(fractional)
}

/// `calc_burst_penalty` for a burst of `burst_time` ns.
pub fn burst_penalty(burst_time: Ns, offset: u32, scale: u32) -> u8 {
    let greed = i64::from(log2plus1_f8(burst_time));
    let penalty = (greed - i64::from(offset << 8)).max(0) as u64;
    ((penalty * u64::from(scale)) >> 16).min(u64::from(MAX_BURST_PENALTY)) as u8
}

/// `binary_smooth(new, old)` with the two smoothness shifts.
pub fn binary_smooth(new: u8, old: u8, long: u32, short: u32) -> u8 {
    let (new, old) = (i32::from(new), i32::from(old));
    let v = if new >= old {
        old + ((new - old) >> long)
    } else {
        old - ((old - new) >> short)
    };
    v.clamp(0, 255) as u8
}

/// Per-task burst state (`struct sched_entity` fields of the patch).
#[derive(Debug, Clone, Copy, Default)]
struct Burst {
    burst_time: Ns,
    prev_penalty: u8,
    curr_penalty: u8,
    penalty: u8,
    score: u8,
}

/// A fork-average cache (`struct sched_burst_cache`); None: never computed.
#[derive(Debug, Clone, Copy)]
struct Cache {
    score: u8,
    count: u32,
    timestamp: Ns,
}

/// A node of the process tree: a task, or the launcher above the tasks
/// the workload starts (its own parent, like init).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Node {
    Launcher,
    Task(TaskId),
}

/// Tunable values the hooks read.
#[derive(Debug, Clone, Copy)]
struct Params {
    enabled: bool,
    exclude_kthreads: bool,
    smooth_long: u32,
    smooth_short: u32,
    atavistic: u32,
    parity_threshold: u32,
    offset: u32,
    scale: u32,
    stop_count: u64,
    lifetime: Ns,
    boost_mask: u32,
}

/// BORE 5.9.6 as fair-class hooks.
#[derive(Debug)]
pub struct BoreEevdf {
    p: Params,
    tasks: Vec<Burst>,
    /// Weight to apply at the next `requested_weight`.
    pending: Vec<Option<u64>>,
    /// `real_parent` (None: the launcher).
    parent: Vec<Option<TaskId>>,
    /// Children that lead their own process, in fork order.
    children: Vec<Vec<TaskId>>,
    launcher_children: Vec<TaskId>,
    child_cache: Vec<Option<Cache>>,
    launcher_cache: Option<Cache>,
    /// Thread-group caches, by process index.
    group_cache: Vec<Option<Cache>>,
}

impl BoreEevdf {
    /// BORE with the run's tunables.
    pub fn new(t: &TunableSet) -> Self {
        let get = |k: &str, d: i64| t.get(k).unwrap_or(d).max(0) as u64;
        BoreEevdf {
            p: Params {
                enabled: get("bore", 1) != 0,
                exclude_kthreads: get("burst_exclude_kthreads", 1) != 0,
                smooth_long: get("burst_smoothness_long", 1) as u32,
                smooth_short: get("burst_smoothness_short", 0) as u32,
                atavistic: get("burst_fork_atavistic", 2) as u32,
                parity_threshold: get("burst_parity_threshold", 2) as u32,
                offset: get("burst_penalty_offset", 24) as u32,
                scale: get("burst_penalty_scale", 1280) as u32,
                stop_count: get("burst_cache_stop_count", 64),
                lifetime: get("burst_cache_lifetime_ns", 75_000_000),
                boost_mask: get("deadline_boost_mask", 0x81) as u32,
            },
            tasks: vec![],
            pending: vec![],
            parent: vec![],
            children: vec![],
            launcher_children: vec![],
            child_cache: vec![],
            launcher_cache: None,
            group_cache: vec![],
        }
    }

    /// `burst_penalty` of `t` (0 for a task never seen).
    pub fn penalty(&self, t: TaskId) -> u8 {
        self.tasks.get(t).map_or(0, |b| b.penalty)
    }

    /// `burst_score` of `t`.
    pub fn score(&self, t: TaskId) -> u8 {
        self.tasks.get(t).map_or(0, |b| b.score)
    }

    fn grow(&mut self, t: TaskId) {
        if self.tasks.len() <= t {
            let n = t + 1;
            self.tasks.resize(n, Burst::default());
            self.pending.resize(n, None);
            self.parent.resize(n, None);
            self.children.resize(n, vec![]);
            self.child_cache.resize(n, None);
        }
    }

    /// `effective_prio`: the nice index the weight follows.
    fn effective_prio(&self, nice: i32, score: u8) -> usize {
        let mut prio = (nice.clamp(-20, 19) + 20) as usize;
        if self.p.enabled {
            prio += usize::from(score);
        }
        prio.min(39)
    }

    /// `update_burst_score`: recompute the score; a changed nice index
    /// asks for the weight of the new one.
    fn update_score(&mut self, m: &Machine, t: TaskId) {
        let task = &m.tasks[t];
        let kthread = self.p.exclude_kthreads && is_kthread(m, t);
        let old = self.tasks[t].score;
        let score = if kthread {
            0
        } else {
            self.tasks[t].penalty >> 2
        };
        self.tasks[t].score = score;
        let (before, after) = (
            self.effective_prio(task.nice, old),
            self.effective_prio(task.nice, score),
        );
        // SCHED_IDLE keeps weight 3 (departure, see the header).
        if before != after && task.policy != Policy::Idle {
            self.pending[t] = Some(PRIO_TO_WEIGHT[after]);
        }
    }

    /// `revolve_burst_penalty`.
    fn revolve(&mut self, t: TaskId) {
        let (long, short) = (self.p.smooth_long, self.p.smooth_short);
        let b = &mut self.tasks[t];
        b.prev_penalty = binary_smooth(b.curr_penalty, b.prev_penalty, long, short);
        b.burst_time = 0;
        b.curr_penalty = 0;
    }

    /// `restart_burst`.
    fn restart(&mut self, m: &Machine, t: TaskId) {
        self.grow(t);
        self.revolve(t);
        self.tasks[t].penalty = self.tasks[t].prev_penalty;
        self.update_score(m, t);
    }

    fn expired(&self, c: Option<Cache>, now: Ns) -> bool {
        c.is_none_or(|c| c.timestamp.saturating_add(self.p.lifetime) < now)
    }

    fn live_children(&self, m: &Machine, n: Node) -> Vec<TaskId> {
        let list = match n {
            Node::Launcher => &self.launcher_children,
            Node::Task(t) => &self.children[t],
        };
        list.iter()
            .copied()
            .filter(|c| m.tasks[*c].exited.is_none())
            .collect()
    }

    fn parent_node(&self, n: Node) -> Node {
        match n {
            Node::Launcher => Node::Launcher,
            Node::Task(t) => self.parent[t].map_or(Node::Launcher, Node::Task),
        }
    }

    fn node_penalty(&self, n: Node) -> u8 {
        match n {
            Node::Launcher => 0,
            Node::Task(t) => self.penalty(t),
        }
    }

    fn cache(&self, n: Node) -> Option<Cache> {
        match n {
            Node::Launcher => self.launcher_cache,
            Node::Task(t) => self.child_cache[t],
        }
    }

    /// `update_burst_cache`: store max(average, the owner's penalty).
    fn store_cache(&mut self, n: Node, cnt: u64, sum: u64, now: Ns) -> u8 {
        let avg = sum.checked_div(cnt).unwrap_or(0).min(255) as u8;
        let c = Cache {
            score: avg.max(self.node_penalty(n)),
            count: cnt.min(u64::from(u32::MAX)) as u32,
            timestamp: now,
        };
        match n {
            Node::Launcher => self.launcher_cache = Some(c),
            Node::Task(t) => self.child_cache[t] = Some(c),
        }
        c.score
    }

    /// `inherit_burst_direct`: the parent's children average.
    fn inherit_direct(&mut self, m: &Machine, parent: TaskId) -> u8 {
        let n = Node::Task(parent);
        if let Some(c) = self
            .cache(n)
            .filter(|_| !self.expired(self.cache(n), m.now))
        {
            return c.score;
        }
        let (mut cnt, mut sum) = (0u64, 0u64);
        for c in self.live_children(m, n) {
            if is_fair(m, c) {
                cnt += 1;
                sum += u64::from(self.penalty(c));
            }
        }
        self.store_cache(n, cnt, sum, m.now)
    }

    /// `update_child_burst_topological`.
    fn update_topological(&mut self, m: &Machine, n: Node, depth: u32, acc: &mut (u64, u64)) {
        let (mut cnt, mut sum) = (0u64, 0u64);
        for child in self.live_children(m, n) {
            let mut dec = child;
            let mut kids = self.live_children(m, Node::Task(dec));
            while kids.len() == 1 {
                dec = kids[0];
                kids = self.live_children(m, Node::Task(dec));
            }
            if kids.is_empty() || depth == 0 {
                if is_fair(m, dec) {
                    cnt += 1;
                    sum += u64::from(self.penalty(dec));
                }
                continue;
            }
            let cached = self.child_cache[dec];
            if let Some(c) = cached.filter(|_| !self.expired(cached, m.now)) {
                cnt += u64::from(c.count);
                sum += u64::from(c.score) * u64::from(c.count);
                if self.p.stop_count <= cnt {
                    break;
                }
                continue;
            }
            let mut sub = (cnt, sum);
            self.update_topological(m, Node::Task(dec), depth - 1, &mut sub);
            (cnt, sum) = sub;
        }
        self.store_cache(n, cnt, sum, m.now);
        acc.0 += cnt;
        acc.1 += sum;
    }

    /// `inherit_burst_topological`: climb past ancestors without other
    /// children, then that ancestor's (cached) children average.
    fn inherit_topological(&mut self, m: &Machine, parent: TaskId) -> u8 {
        let mut anc = Node::Task(parent);
        let mut base = 0;
        loop {
            let next = self.parent_node(anc);
            if next == anc || self.live_children(m, anc).len().min(2) > base {
                break;
            }
            anc = next;
            base = 1;
        }
        if self.expired(self.cache(anc), m.now) {
            let depth = self.p.atavistic.saturating_sub(1);
            self.update_topological(m, anc, depth, &mut (0, 0));
        }
        self.cache(anc).map_or(0, |c| c.score)
    }

    /// `inherit_burst_tg`: the thread group's average.
    fn inherit_tg(&mut self, m: &Machine, child: TaskId, process: usize) -> u8 {
        if self.group_cache.len() <= process {
            self.group_cache.resize(process + 1, None);
        }
        let threads = &m.processes[process].threads;
        let leader = threads.first().copied().unwrap_or(child);
        let cached = self.group_cache[process];
        if let Some(c) = cached.filter(|_| !self.expired(cached, m.now)) {
            return c.score;
        }
        let (mut cnt, mut sum) = (0u64, 0u64);
        for &th in threads.iter().filter(|th| **th != child) {
            if is_fair(m, th) && m.tasks[th].exited.is_none() {
                cnt += 1;
                sum += u64::from(self.penalty(th));
            }
        }
        let avg = sum.checked_div(cnt).unwrap_or(0).min(255) as u8;
        let score = avg.max(self.penalty(leader));
        self.group_cache[process] = Some(Cache {
            score,
            count: cnt.min(u64::from(u32::MAX)) as u32,
            timestamp: m.now,
        });
        score
    }
}

/// A task of the fair class (`task_is_bore_eligible`, less the exit check).
fn is_fair(m: &Machine, t: TaskId) -> bool {
    !m.tasks[t].policy.is_rt_or_dl()
}

/// A kernel thread: the engine's noise threads live in processes named
/// like `ps` shows kernel threads, `[...]`.
fn is_kthread(m: &Machine, t: TaskId) -> bool {
    let name = &m.processes[m.tasks[t].process].name;
    name.starts_with('[') && name.ends_with(']')
}

impl FairHooks for BoreEevdf {
    fn name(&self) -> &'static str {
        "bore"
    }

    /// `update_curr`: `burst_time += δ; update_burst_penalty`.
    fn update_curr(&mut self, m: &Machine, t: TaskId, delta_exec: Ns) {
        self.grow(t);
        let (offset, scale) = (self.p.offset, self.p.scale);
        let b = &mut self.tasks[t];
        b.burst_time = b.burst_time.saturating_add(delta_exec);
        b.curr_penalty = burst_penalty(b.burst_time, offset, scale);
        b.penalty = b.prev_penalty.max(b.curr_penalty);
        self.update_score(m, t);
    }

    fn requested_weight(&mut self, _m: &Machine, t: TaskId) -> Option<u64> {
        self.pending.get_mut(t).and_then(Option::take)
    }

    fn task_sleep(&mut self, m: &Machine, t: TaskId) {
        self.restart(m, t);
    }

    fn burst_yield(&mut self, m: &Machine, t: TaskId) {
        self.restart(m, t);
    }

    fn charge_before_restart(&self) -> bool {
        true
    }

    /// `restart_burst_rescale_deadline`: when the weight rose, the
    /// remaining request keeps its wall-clock length at the new weight
    /// (`__unscale_slice` at the old index, `__scale_slice` at the new).
    fn yield_request(
        &self,
        _t: TaskId,
        vremain: i64,
        old: LoadWeight,
        new: LoadWeight,
    ) -> Option<i64> {
        if new.weight <= old.weight {
            return None;
        }
        let wremain = (u128::from(vremain.unsigned_abs()) * u128::from(old.weight)) >> 10;
        let vscaled = ((wremain * u128::from(new.inv)) >> 22).min(i64::MAX as u128) as i64;
        Some(if vremain < 0 { -vscaled } else { vscaled })
    }

    fn lag_limit(&self, limit: i64) -> i64 {
        if self.p.enabled {
            limit >> 1
        } else {
            limit
        }
    }

    fn run_to_parity(&self, nr_running: u32) -> bool {
        let t = self.p.parity_threshold;
        !(self.p.enabled && t != 0 && t < nr_running)
    }

    fn deadline_vslice(&self, flags: EnqueueFlags, vslice: i64) -> Option<i64> {
        if !self.p.enabled {
            return None;
        }
        Some(if flags.0 & self.p.boost_mask != 0 {
            vslice >> 1
        } else {
            vslice
        })
    }

    /// `sched_clone_bore` then `task_fork_fair`'s `update_burst_score`: the
    /// child starts from a copy of its parent's state (`dup_task_struct`).
    fn task_fork(&mut self, m: &Machine, t: TaskId, parent: Option<TaskId>) {
        self.grow(t);
        let Some(p) = parent else {
            self.launcher_children.push(t);
            return;
        };
        self.grow(p);
        self.tasks[t] = self.tasks[p];
        let thread = m.tasks[t].process == m.tasks[p].process;
        // A thread's real_parent is its creator's; only a process's leader
        // joins a children list (copy_process).
        self.parent[t] = if thread { self.parent[p] } else { Some(p) };
        // The child joins its parent's children after the inheritance
        // (copy_process links it later than sched_clone_bore runs).
        let inherited = match (is_fair(m, t), thread) {
            (false, _) => None,
            (true, true) => Some(self.inherit_tg(m, t, m.tasks[t].process)),
            (true, false) if self.p.atavistic > 0 => Some(self.inherit_topological(m, p)),
            (true, false) => Some(self.inherit_direct(m, p)),
        };
        if !thread {
            self.children[p].push(t);
        }
        let Some(inherited) = inherited else { return };
        self.revolve(t);
        let b = &mut self.tasks[t];
        b.prev_penalty = b.prev_penalty.max(inherited);
        b.penalty = b.prev_penalty;
        self.update_score(m, t);
    }
}
