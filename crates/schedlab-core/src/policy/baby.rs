//! Baby scheduler, deadline flavour (Hamad Al Marri, Linux 5.14), as
//! specified in ../shared/spec/alt-schedulers.md §7 and read in
//! `hamadmarri/Baby-CPU-Scheduler: baby-dl-5.14.patch` at commit 8060e62
//! ("dl update", the repository's latest; `kernel/sched/bs.c`, functions
//! named below). The shoot-out spec (shootout.md) does not cover Baby.
//!
//! A fair-class replacement: the stack is mainline's deadline and RT
//! classes (5.14: no fair server, RT throttling as in 6.1) and this class,
//! which takes SCHED_OTHER, SCHED_BATCH and SCHED_IDLE.
//! * Per CPU, an unsorted list; new entries go to the head and the pick
//!   (`pick_next_entity`) scans from the head for the earliest absolute
//!   deadline (wrap-safe signed comparison), the first of equals winning.
//!   A switched-out running task is put back at the head first, so it
//!   wins ties; the tick keeps the running task only if it is strictly
//!   earlier than every queued one.
//! * `calc_deadline` = now + DEADLINE_NS (1.18 ms) + `prio_factor[nice]`,
//!   the table of the patch: 0 at nice 0, −1.08 ms … −0.071 ms for nice
//!   −20…−1 (steps of 0.1 ms to nice −11, then 1 µs), +1.08 … +1.26 ms for
//!   nice 1…19 (steps of 10 µs). The nice is the task's dynamic `prio`.
//!   The deadline is recomputed when reached (`update_curr`), at the pick
//!   of a task whose nice is ≥ 0 and whose deadline is reached
//!   (`set_next_entity`), and at every enqueue that is not a plain wakeup
//!   (fork, migration, attribute change). A woken task keeps its old,
//!   possibly past, deadline.
//! * Sleep-lowers-prio (`dequeue_entity`): a task that sleeps before its
//!   deadline has its `prio` lowered by one (towards nice −20); nothing
//!   raises it again until its nice or policy is set.
//! * Preemption: wakeup (`check_preempt_wakeup`) only by SCHED_OTHER
//!   wakees of no worse prio with an earlier deadline (any task preempts a
//!   SCHED_IDLE one); tick (`check_preempt_tick`) when a queued task is
//!   earlier, unless an hrtick is pending; and the hrtick
//!   (`hrtick_start_fair`, armed at each pick and at each enqueue/dequeue
//!   on the CPU): with cm = 0.59 ms (MIN_DEADLINE_NS) minus what the
//!   running task ran since it was picked and cd = its deadline − now, if
//!   the best queued task is earlier by more than 0.59 ms the timer is at
//!   cm (or the task is preempted at once once cm < 0), if earlier by less
//!   at cd, and otherwise at the queued task's deadline (at least 10 µs,
//!   `hrtick_start`). Every schedule cancels the pending hrtick.
//! * Burst budget (`calc_bursts`, `can_resched_curr`): each task counts
//!   its run time in 200 ms windows (TIME_PERIOD, restarted when a window
//!   is over); every preemption above is skipped unless the task ran
//!   nothing in the previous window, ran ≥ 175 ms of it (200 − 25), has
//!   already run as much in this window, or has more than 5 ms
//!   (TO_COMPLETE) of the previous window's amount left to run.
//! * Balancing: wakeup/fork placement on the CPU with the fewest runnable
//!   tasks (prev unless one has strictly fewer: `select_task_rq_fair`);
//!   a CPU about to idle pulls one task from the busiest CPU with ≥ 2
//!   (`newidle_balance`); and at every tick CPU0 alone moves one task from
//!   the busiest to the least busy CPU when their counts differ by ≥ 2
//!   (`trigger_load_balance`), walking the source list from its head.
//!   Counts are all runnable tasks of the CPU (`rq->nr_running`).
//!
//! Departures: the kernel's sched_feat(HRTICK) is off by default in 5.14,
//! so a stock build preempts only at ticks unless HRTICK is switched on in
//! debugfs; the spec calls Baby hrtick-driven, so tunable `hrtick`
//! defaults to 1 (0 = the stock feature setting). The patch defaults to
//! HZ=803 (pass `--hz 803`). Placement looks only at CPUs the task may
//! use (the patch scans every online CPU and lets the core fix affinity).
//! Yield marks the deadline with its top bit as the patch does, with the
//! patch's wrap-around comparison. No cgroups (the patch disables
//! CGROUP_SCHED and autogroup), no NUMA balancing.

use super::ck::ignored_features;
use crate::class::dl::Dl;
use crate::class::rt::{Rt, RtParams};
use crate::class::stack::Stack;
use crate::class::{DequeueFlags, EnqueueFlags, SchedClass, WakeFlags, Waker};
use crate::clock::Ns;
use crate::cpuset::CpuId;
use crate::machine::{Machine, MigrationKind};
use crate::plugin::{SchedulerDef, StackCtx};
use crate::task::TaskId;
use crate::tunable::Tunable;
use crate::workload::Policy;
use std::collections::VecDeque;

/// `DEADLINE_NS`.
pub const DEADLINE_NS: i64 = 1_180_000;
/// `MIN_DEADLINE_NS`.
pub const MIN_DEADLINE_NS: i64 = 590_000;
/// `TIME_PERIOD`: the burst window.
pub const TIME_PERIOD: i64 = 200_000_000;
/// `TO_COMPLETE`.
pub const TO_COMPLETE: i64 = 5_000_000;
/// The slack of `can_resched_curr` (its local `delta`).
const BURST_SLACK: i64 = 25_000_000;
/// `YIELD_MARK` bit.
const YIELD_BIT: u64 = 1 << 63;

/// `prio_factor[nice + 20]`, ns (baby-dl-5.14.patch, commit 8060e62).
pub const PRIO_FACTOR: [i64; 40] = [
    -1_080_000, -980_000, -880_000, -780_000, -680_000, //
    -580_000, -480_000, -380_000, -280_000, -180_000, //
    -80_000, -79_000, -78_000, -77_000, -76_000, //
    -75_000, -74_000, -73_000, -72_000, -71_000, //
    0, 1_080_000, 1_090_000, 1_100_000, 1_110_000, //
    1_120_000, 1_130_000, 1_140_000, 1_150_000, 1_160_000, //
    1_170_000, 1_180_000, 1_190_000, 1_200_000, 1_210_000, //
    1_220_000, 1_230_000, 1_240_000, 1_250_000, 1_260_000,
];

/// Baby's tunables.
pub const TUNABLES: &[Tunable] = &[Tunable {
    name: "hrtick",
    default: 1,
    min: 0,
    max: 1,
    unit: "bool",
    doc: "sched_feat(HRTICK): 1 = hrtick-driven preemption as the spec describes; 0 = the 5.14 default feature setting (tick only)",
}];

/// Registry declaration (registry.rs, `SCHEDULERS`).
pub const DEF: SchedulerDef = SchedulerDef {
    name: "baby",
    description: "Baby (dl) 5.14: fair class replaced by per-CPU lists, earliest deadline = now + 1.18 ms + prio_factor[nice], hrtick preemption, CPU0-only balancing",
    source: "alt-schedulers.md §7; hamadmarri/Baby-CPU-Scheduler baby-dl-5.14.patch (8060e62)",
    version: "5.14 (dl)",
    classes: &["dl", "rt", "baby"],
    tunables: TUNABLES,
    fair_policies: false,
    dl_orders: true,
    build,
};

fn build(ctx: &StackCtx) -> Result<Stack, String> {
    let m = ctx.m;
    let mut s = Stack::new();
    let dl = Dl::new(m, (ctx.dl_order.order)(ctx.tunables), false);
    s.push(Box::new(dl), &[Policy::Deadline]);
    // 5.14 throttles RT per CPU, like 6.1.
    let rt = RtParams {
        throttling: true,
        ..RtParams::default()
    };
    s.push(Box::new(Rt::new(rt, m)), &[Policy::Fifo, Policy::Rr]);
    let hrtick = ctx.tunables.get("hrtick").unwrap_or(1) != 0;
    let idx = s.push(
        Box::new(Baby::new(m, hrtick)),
        &[Policy::Other, Policy::Batch, Policy::Idle],
    );
    s.set_fallback(idx);
    s.warnings = ignored_features(ctx, "baby", false);
    Ok(s)
}

/// Wrap-safe "a before b" (`entity_before`).
fn before(a: u64, b: u64) -> bool {
    (a.wrapping_sub(b) as i64) < 0
}

/// Per-task state (`struct bs_node` and the entity's run times).
#[derive(Debug, Clone, Default)]
struct BabyTask {
    deadline: u64,
    /// Dynamic `prio` as a nice value.
    nice: i32,
    start_time: Ns,
    bursts: i64,
    prev_bursts: i64,
    sum_exec: Ns,
    prev_sum_exec: Ns,
    on_rq: bool,
}

/// The class.
#[derive(Debug)]
pub struct Baby {
    hrtick: bool,
    tasks: Vec<BabyTask>,
    /// Per CPU: queued tasks, head first (the running one is not in it).
    list: Vec<VecDeque<TaskId>>,
    /// Per CPU: our running task (`cfs_rq->curr`).
    curr: Vec<Option<TaskId>>,
    exec_start: Vec<Ns>,
    /// Per CPU: our runnable tasks, the running one included.
    nr: Vec<u32>,
    /// Per CPU: hrtick generation and expiry while armed.
    hrtick_gen: Vec<u64>,
    hrtick_at: Vec<Option<Ns>>,
}

impl Baby {
    /// The class for `m`'s CPUs.
    pub fn new(m: &Machine, hrtick: bool) -> Self {
        let n = m.nr_cpus();
        Baby {
            hrtick,
            tasks: vec![],
            list: vec![VecDeque::new(); n],
            curr: vec![None; n],
            exec_start: vec![0; n],
            nr: vec![0; n],
            hrtick_gen: vec![0; n],
            hrtick_at: vec![None; n],
        }
    }

    /// `calc_deadline`.
    fn calc_deadline(&self, now: Ns, t: TaskId) -> u64 {
        let nice = self.tasks[t].nice;
        let factor = if nice == 0 {
            0
        } else {
            PRIO_FACTOR[(nice + 20).clamp(0, 39) as usize]
        };
        now.saturating_add((DEADLINE_NS + factor) as u64)
    }

    /// `reached_deadline`.
    fn reached(&self, now: Ns, t: TaskId) -> bool {
        (self.tasks[t].deadline.wrapping_sub(now) as i64) <= 0
    }

    /// `calc_bursts`.
    fn calc_bursts(&mut self, t: TaskId, burst: Ns, now: Ns) {
        let b = &mut self.tasks[t];
        if now.wrapping_sub(b.start_time) as i64 >= TIME_PERIOD {
            b.start_time = now;
            b.prev_bursts = b.bursts;
            b.bursts = 0;
        }
        b.bursts = b.bursts.saturating_add(burst.min(i64::MAX as u64) as i64);
    }

    /// `update_curr`.
    fn update_curr(&mut self, m: &Machine, cpu: CpuId) {
        let Some(c) = self.curr[cpu] else {
            return;
        };
        let now = m.rq_clock(cpu);
        let delta = now.saturating_sub(self.exec_start[cpu]);
        if delta == 0 {
            return;
        }
        self.exec_start[cpu] = now;
        self.tasks[c].sum_exec += delta;
        self.calc_bursts(c, delta, m.now);
        if self.reached(m.now, c) {
            self.tasks[c].deadline = self.calc_deadline(m.now, c);
        }
    }

    /// `can_resched_curr`: the burst budget.
    fn can_resched(&self, t: TaskId) -> bool {
        let b = &self.tasks[t];
        let (prev, now_b) = (b.prev_bursts, b.bursts);
        prev == 0
            || TIME_PERIOD - (prev + BURST_SLACK) <= 0
            || now_b - prev >= 0
            || prev - (now_b + TO_COMPLETE) > 0
    }

    fn try_resched(&self, m: &mut Machine, cpu: CpuId, t: TaskId) {
        if self.can_resched(t) {
            m.resched(cpu);
        }
    }

    /// `pick_next_entity(cfs_rq, NULL)`: earliest in the list, head first.
    fn best_queued(&self, cpu: CpuId) -> Option<TaskId> {
        let mut best: Option<TaskId> = None;
        for &t in &self.list[cpu] {
            if best.is_none_or(|b| before(self.tasks[t].deadline, self.tasks[b].deadline)) {
                best = Some(t);
            }
        }
        best
    }

    fn hrtick_start(&mut self, m: &mut Machine, cpu: CpuId, delay: i64) {
        let at = m.now.saturating_add(delay.max(10_000) as u64);
        self.hrtick_gen[cpu] += 1;
        self.hrtick_at[cpu] = Some(at);
        m.arm_timer(at, "baby", cpu, self.hrtick_gen[cpu]);
    }

    fn hrtick_cancel(&mut self, cpu: CpuId) {
        self.hrtick_gen[cpu] += 1;
        self.hrtick_at[cpu] = None;
    }

    /// `hrtick_start_fair` for `c`, running on `cpu`.
    fn hrtick_start_fair(&mut self, m: &mut Machine, cpu: CpuId, c: TaskId) {
        if !self.hrtick || self.nr[cpu] < 2 || !self.can_resched(c) {
            return;
        }
        let Some(next) = self.best_queued(cpu) else {
            return;
        };
        let (cdl, ndl) = (self.tasks[c].deadline, self.tasks[next].deadline);
        let c_ran = self.tasks[c]
            .sum_exec
            .saturating_sub(self.tasks[c].prev_sum_exec) as i64;
        let cm = MIN_DEADLINE_NS - c_ran;
        let cd = cdl.wrapping_sub(m.now) as i64;
        let far_earlier = (cdl.wrapping_sub(ndl) as i64) - MIN_DEADLINE_NS > 0;
        if !before(ndl, cdl) {
            // n3: the queued task's deadline comes later.
            let delay = ndl.wrapping_sub(m.now) as i64;
            self.hrtick_start(m, cpu, delay);
        } else if cm >= 0 {
            let delay = if far_earlier { cm } else { cd };
            self.hrtick_start(m, cpu, delay);
        } else if far_earlier {
            self.try_resched(m, cpu, c);
        } else {
            self.hrtick_start(m, cpu, cd);
        }
    }

    /// `hrtick_update`: re-arm for the CPU's running task if it is ours.
    fn hrtick_update(&mut self, m: &mut Machine, cpu: CpuId) {
        if let Some(c) = self.curr[cpu] {
            if m.rqs[cpu].curr == Some(c) && self.tasks[c].on_rq {
                self.hrtick_start_fair(m, cpu, c);
            }
        }
    }

    /// What `set_next_entity` does besides taking the task off the list.
    fn start_running(&mut self, m: &mut Machine, cpu: CpuId, t: TaskId) {
        self.exec_start[cpu] = m.rq_clock(cpu);
        self.curr[cpu] = Some(t);
        self.tasks[t].prev_sum_exec = self.tasks[t].sum_exec;
        if self.tasks[t].nice >= 0 && self.reached(m.now, t) {
            self.tasks[t].deadline = self.calc_deadline(m.now, t);
        }
    }

    /// `move_task`: pull the first movable task of `src`'s list to `dst`.
    fn move_task(&self, m: &mut Machine, dst: CpuId, src: CpuId) {
        let found = self.list[src]
            .iter()
            .copied()
            .find(|t| m.tasks[*t].affinity.contains(dst) && m.rqs[src].curr != Some(*t));
        if let Some(t) = found {
            m.request_migration(t, dst, MigrationKind::Balance);
        }
    }

    /// `entity_tick`; `queued`: called by the hrtick.
    fn entity_tick(&mut self, m: &mut Machine, cpu: CpuId, c: TaskId, queued: bool) {
        self.update_curr(m, cpu);
        if queued {
            self.try_resched(m, cpu, c);
            return;
        }
        if self.hrtick_at[cpu].is_some_and(|at| at > m.now) {
            return; // the periodic tick leaves preemption to the hrtick
        }
        if self.nr[cpu] > 1 {
            // check_preempt_tick: curr stays only if strictly earliest.
            let keep = self
                .best_queued(cpu)
                .is_none_or(|b| before(self.tasks[c].deadline, self.tasks[b].deadline));
            if !keep {
                self.try_resched(m, cpu, c);
            }
        }
    }
}

impl SchedClass for Baby {
    fn name(&self) -> &'static str {
        "baby"
    }

    fn task_fork(&mut self, m: &mut Machine, t: TaskId, parent: Option<TaskId>) {
        if self.tasks.len() <= t {
            self.tasks.resize(t + 1, BabyTask::default());
        }
        // The child's bs_node is a copy of the parent's: bursts carry over.
        let bursts = parent
            .and_then(|p| self.tasks.get(p))
            .map_or(0, |p| p.bursts);
        self.tasks[t] = BabyTask {
            nice: m.tasks[t].nice,
            start_time: m.now,
            bursts,
            ..BabyTask::default()
        };
        self.tasks[t].deadline = self.calc_deadline(m.now, t);
    }

    fn enqueue_task(&mut self, m: &mut Machine, cpu: CpuId, t: TaskId, flags: EnqueueFlags) {
        let is_curr = self.curr[cpu] == Some(t);
        self.update_curr(m, cpu);
        let renorm = !flags.has(EnqueueFlags::WAKEUP) || flags.has(EnqueueFlags::MIGRATED);
        if renorm && !is_curr {
            self.tasks[t].deadline = self.calc_deadline(m.now, t);
        }
        self.tasks[t].on_rq = true;
        self.nr[cpu] += 1;
        if !is_curr {
            self.list[cpu].push_front(t);
        }
        self.hrtick_update(m, cpu);
    }

    fn dequeue_task(
        &mut self,
        m: &mut Machine,
        cpu: CpuId,
        t: TaskId,
        flags: DequeueFlags,
    ) -> bool {
        // Sleeping before the deadline raises the priority by one.
        if flags.has(DequeueFlags::SLEEP) && !self.reached(m.now, t) && self.tasks[t].nice > -20 {
            self.tasks[t].nice -= 1;
        }
        self.update_curr(m, cpu);
        if self.curr[cpu] != Some(t) {
            self.list[cpu].retain(|x| *x != t);
        }
        self.tasks[t].on_rq = false;
        self.nr[cpu] = self.nr[cpu].saturating_sub(1);
        self.hrtick_update(m, cpu);
        true
    }

    fn yield_task(&mut self, m: &mut Machine, cpu: CpuId) {
        let Some(c) = self.curr[cpu] else {
            return;
        };
        self.tasks[c].deadline |= YIELD_BIT;
        if m.rqs[cpu].nr_running == 1 {
            return;
        }
        if m.tasks[c].policy != Policy::Batch {
            self.update_curr(m, cpu);
        }
    }

    fn wakeup_preempt(&mut self, m: &mut Machine, cpu: CpuId, t: TaskId, _flags: WakeFlags) {
        let Some(c) = m.rqs[cpu]
            .curr
            .filter(|c| *c != t && self.curr[cpu] == Some(*c))
        else {
            return;
        };
        if m.rqs[cpu].need_resched {
            return;
        }
        let (cp, tp) = (m.tasks[c].policy, m.tasks[t].policy);
        if cp == Policy::Idle && tp != Policy::Idle {
            self.try_resched(m, cpu, c);
            return;
        }
        // Batch and idle wakees never preempt; nor a worse prio.
        if tp != Policy::Other || self.tasks[t].nice > self.tasks[c].nice {
            return;
        }
        self.update_curr(m, cpu);
        if before(self.tasks[t].deadline, self.tasks[c].deadline) {
            self.try_resched(m, cpu, c);
        }
    }

    fn balance_every_pick(&self) -> bool {
        // `hrtick_clear` is in `__schedule`, whatever class runs next.
        true
    }

    fn balance(&mut self, m: &mut Machine, cpu: CpuId, _prev: Option<TaskId>) -> bool {
        // __schedule: hrtick_clear.
        self.hrtick_cancel(cpu);
        // balance_fair (5.14): with any task here, nothing to do.
        if m.rqs[cpu].nr_running > 0 {
            return true;
        }
        // newidle_balance: the busiest CPU with at least two tasks.
        let mut src: Option<(u32, CpuId)> = None;
        for c in m.online.iter().filter(|c| *c != cpu) {
            let n = m.rqs[c].nr_running;
            if n >= 2 && src.is_none_or(|(max, _)| n > max) {
                src = Some((n, c));
            }
        }
        if let Some((_, s)) = src {
            self.move_task(m, cpu, s);
        }
        false
    }

    fn pick_task(&mut self, m: &mut Machine, cpu: CpuId) -> Option<TaskId> {
        let curr = self.curr[cpu].filter(|c| self.tasks[*c].on_rq);
        if curr.is_some() {
            self.update_curr(m, cpu);
        }
        // put_prev_entity puts the running task at the head, so it is met
        // first and wins ties.
        let mut best = curr;
        if let Some(q) = self.best_queued(cpu) {
            if best.is_none_or(|b| before(self.tasks[q].deadline, self.tasks[b].deadline)) {
                best = Some(q);
            }
        }
        if let (Some(c), Some(b)) = (curr, best) {
            if b == c {
                // Picked again: set_next_entity, YIELD_UNMARK, hrtick.
                self.start_running(m, cpu, c);
                self.tasks[c].deadline &= !YIELD_BIT;
                self.hrtick_start_fair(m, cpu, c);
            }
        }
        best
    }

    fn put_prev_task(&mut self, m: &mut Machine, cpu: CpuId, prev: TaskId, _next: Option<TaskId>) {
        if self.tasks[prev].on_rq && self.curr[cpu] == Some(prev) {
            self.update_curr(m, cpu);
            self.list[cpu].push_front(prev);
        }
        if self.curr[cpu] == Some(prev) {
            self.curr[cpu] = None;
        }
        self.tasks[prev].deadline &= !YIELD_BIT;
    }

    fn set_next_task(&mut self, m: &mut Machine, cpu: CpuId, next: TaskId) {
        self.list[cpu].retain(|x| *x != next);
        self.start_running(m, cpu, next);
        self.hrtick_start_fair(m, cpu, next);
    }

    fn select_task_rq(
        &mut self,
        m: &mut Machine,
        t: TaskId,
        prev_cpu: CpuId,
        flags: WakeFlags,
        _waker: Waker,
    ) -> CpuId {
        let (start, placement) = crate::class::select_start(m, t, prev_cpu, flags);
        if !placement {
            return start;
        }
        let min_this = m.rqs[start].nr_running;
        let mut best = (min_this, start);
        let aff = m.tasks[t].affinity;
        for c in m.online.iter().filter(|c| aff.contains(*c)) {
            if m.rqs[c].nr_running < best.0 {
                best = (m.rqs[c].nr_running, c);
            }
        }
        best.1
    }

    fn migrate_task_rq(&mut self, _m: &mut Machine, _t: TaskId, _new_cpu: CpuId) {}

    fn task_tick(&mut self, m: &mut Machine, cpu: CpuId, curr: TaskId) {
        if self.curr[cpu] == Some(curr) {
            self.entity_tick(m, cpu, curr, false);
        }
    }

    fn reweight_task(&mut self, m: &mut Machine, t: TaskId) {
        // set_user_nice / sched_setscheduler: prio = effective_prio.
        if let Some(x) = self.tasks.get_mut(t) {
            x.nice = m.tasks[t].nice;
        }
    }

    fn task_dead(&mut self, _m: &mut Machine, _t: TaskId) {}

    fn update_curr(&mut self, m: &mut Machine, cpu: CpuId) {
        self.update_curr(m, cpu);
    }

    fn tick_balance(&mut self, m: &mut Machine, cpu: CpuId) {
        // trigger_load_balance: CPU0 only, task counts only.
        if cpu != 0 || !m.online.contains(0) {
            return;
        }
        let n0 = m.rqs[0].nr_running;
        let (mut min, mut max) = ((n0, 0), (n0, 0));
        for c in m.online.iter() {
            let n = m.rqs[c].nr_running;
            if n < min.0 {
                min = (n, c);
            }
            if n > max.0 {
                max = (n, c);
            }
        }
        if min.1 == max.1 || max.0 - min.0 < 2 {
            return;
        }
        self.move_task(m, min.1, max.1);
    }

    fn nr_runnable(&self, cpu: CpuId) -> u32 {
        self.nr[cpu]
    }

    fn timer(&mut self, m: &mut Machine, cpu: CpuId, tag: u64) {
        if tag != self.hrtick_gen[cpu] {
            return;
        }
        self.hrtick_at[cpu] = None;
        if let Some(c) = self.curr[cpu].filter(|c| m.rqs[cpu].curr == Some(*c)) {
            self.entity_tick(m, cpu, c, true);
        }
    }

    fn task_debug(&self, t: TaskId) -> Vec<(&'static str, i64)> {
        let x = self.tasks.get(t).cloned().unwrap_or_default();
        vec![
            ("deadline", (x.deadline & !YIELD_BIT) as i64),
            ("prio_nice", x.nice as i64),
            ("bursts", x.bursts),
            ("prev_bursts", x.prev_bursts),
        ]
    }

    fn check_invariants(&self, m: &Machine) -> Result<(), String> {
        for (cpu, l) in self.list.iter().enumerate() {
            for &t in l {
                if m.tasks[t].cpu != cpu || !self.tasks[t].on_rq || self.curr[cpu] == Some(t) {
                    return Err(format!("baby cpu {cpu}: task {t} misplaced in the list"));
                }
            }
            let running = self.curr[cpu].is_some_and(|c| self.tasks[c].on_rq) as usize;
            if l.len() + running != self.nr[cpu] as usize {
                return Err(format!(
                    "baby cpu {cpu}: nr {} but {} listed + {running} running",
                    self.nr[cpu],
                    l.len()
                ));
            }
        }
        Ok(())
    }
}
