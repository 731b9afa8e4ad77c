//! The real-time class: SCHED_FIFO and SCHED_RR (kernel/sched/rt.c),
//! from ../shared/spec/linux-rt-dl.md §2–§5.
//!
//! Per CPU, 100 FIFO lists, one per kernel prio 0..=99 (prio = 99 −
//! rt_priority), and a bitmap of non-empty lists; pick is the head of the
//! first non-empty list (§2). The running task *stays in its list*, so a
//! preempted task resumes first. SCHED_RR tasks have a 100 ms slice counted
//! in ticks (§3); at its end the task goes to the tail if it is not alone.
//!
//! SMP (§5) follows the kernel's push/pull structure, which approximates
//! global fixed-priority scheduling: a waking task that cannot preempt its
//! CPU's RT task goes to the CPU running the lowest-priority work
//! (`select_task_rq_rt`/`find_lowest_rq`, preferring the previous CPU);
//! after every pick, queued tasks that would preempt elsewhere are pushed
//! (`push_rt_tasks`); a CPU about to pick pulls a better queued task from
//! another CPU unless that task would preempt its own CPU (`pull_rt_task`).
//! The cpupri levels are computed on demand from the run queues.
//!
//! RT bandwidth (§4) depends on the kernel version:
//! * 6.1 (`cfs`): per-CPU throttling. Every `update_curr` adds to `rt_time`;
//!   beyond `sched_rt_runtime_us` (950 ms) the CPU's RT tasks are hidden
//!   until the global period timer (every `sched_rt_period_us`, 1 s, from
//!   the first RT enqueue) subtracts a runtime's worth. The CPU idles if
//!   nothing else is runnable.
//! * 6.12 (`eevdf`): no RT throttling; the deferred fair server guarantees
//!   fair tasks their share instead (class/dl/server.rs).
//!
//! Simplifications (docs/model.md): no RT group scheduling
//! (CONFIG_RT_GROUP_SCHED is off in distro kernels), no priority
//! inheritance, no ENQUEUE_HEAD on priority lowering, no
//! `check_preempt_equal_prio`; a throttled CPU is neither a push target
//! nor a pull source.

use super::{DequeueFlags, EnqueueFlags, SchedClass, WakeFlags, Waker};
use crate::clock::{Ns, MSEC};
use crate::cpuset::CpuId;
use crate::machine::{Machine, MigrationKind};
use crate::task::TaskId;
use crate::workload::Policy;
use std::collections::VecDeque;

/// Number of RT priority lists (kernel prio 0..=99).
const NR_PRIO: usize = 100;
/// cpupri level of a CPU with no RT task, idle or running fair work
/// (`CPUPRI_NORMAL`). Idle CPUs have no level of their own: cpupri.h v6.18
/// (as since v5.11, "sched/cpupri: Remove pri_to_cpu[CPUPRI_IDLE]") has
/// CPUPRI_NORMAL 0 as its lowest level and `convert_prio` maps a runqueue
/// without RT tasks (highest_prio.curr = MAX_RT_PRIO - 1) to it, so
/// `find_lowest_rq` may place a woken or pushed RT task on a CPU running a
/// fair task while another CPU idles.
const LEVEL_NORMAL: i32 = 120;
/// The priority of what an idle CPU runs, for preemption tests (MAX_PRIO).
const IDLE_PRIO: i32 = 140;

/// Tunables of the RT class.
#[derive(Debug, Clone, Copy)]
pub struct RtParams {
    /// SCHED_RR slice, ns (`sched_rr_timeslice_ms`).
    pub rr_timeslice: Ns,
    /// `sched_rt_period_us`, ns.
    pub rt_period: Ns,
    /// `sched_rt_runtime_us`, ns; `None` = unlimited (−1).
    pub rt_runtime: Option<Ns>,
    /// 6.1-style per-CPU throttling (false: 6.12, the fair server instead).
    pub throttling: bool,
}

impl Default for RtParams {
    fn default() -> Self {
        RtParams {
            rr_timeslice: 100 * MSEC,
            rt_period: 1000 * MSEC,
            rt_runtime: Some(950 * MSEC),
            throttling: true,
        }
    }
}

/// One CPU's `struct rt_rq`.
#[derive(Debug, Clone)]
struct RtRq {
    queue: Vec<VecDeque<TaskId>>,
    /// Bit p set iff `queue[p]` is non-empty.
    bitmap: u128,
    nr: u32,
    /// RT task current on this CPU.
    curr: Option<TaskId>,
    exec_start: Ns,
    /// Runtime used in the current period (6.1 throttling).
    rt_time: Ns,
    throttled: bool,
}

impl RtRq {
    fn new() -> Self {
        RtRq {
            queue: vec![VecDeque::new(); NR_PRIO],
            bitmap: 0,
            nr: 0,
            curr: None,
            exec_start: 0,
            rt_time: 0,
            throttled: false,
        }
    }

    /// `rt_rq->highest_prio.curr`: best prio queued here (running included).
    fn highest(&self) -> Option<usize> {
        (self.bitmap != 0).then(|| self.bitmap.trailing_zeros() as usize)
    }

    /// Whether no queued task here can be pushed or pulled away: none is
    /// queued, or the only one is the running task (which `pushable`
    /// skips). The kernel's `has_pushable_tasks` is false then, so it
    /// queues no push and its pull skips the CPU (not in `rto_mask`).
    fn nothing_pushable(&self) -> bool {
        match self.highest() {
            None => true,
            Some(p) => {
                self.nr == 1 && self.curr.is_some() && self.queue[p].front() == self.curr.as_ref()
            }
        }
    }
}

/// The RT class.
#[derive(Debug)]
pub struct Rt {
    p: RtParams,
    rq: Vec<RtRq>,
    /// SCHED_RR ticks left, per task.
    slice: Vec<u64>,
    rr_ticks: u64,
    /// The period timer is armed (6.1 throttling).
    period_timer: bool,
    /// RT tasks queued on all CPUs (the pull is skipped when there are
    /// none, like the kernel's `rto_count` check).
    total: u32,
}

fn prio(m: &Machine, t: TaskId) -> usize {
    m.tasks[t].prio().clamp(0, NR_PRIO as i32 - 1) as usize
}

impl Rt {
    /// An RT class for the CPUs of `m`.
    pub fn new(p: RtParams, m: &Machine) -> Self {
        Rt {
            rr_ticks: (p.rr_timeslice / m.tick_ns()).max(1),
            p,
            rq: vec![RtRq::new(); m.nr_cpus()],
            slice: vec![],
            period_timer: false,
            total: 0,
        }
    }

    /// cpupri level of `cpu` (lower = more important work there).
    fn level(&self, cpu: CpuId) -> i32 {
        let q = &self.rq[cpu];
        match q.highest() {
            Some(p) if !q.throttled => p as i32,
            _ => LEVEL_NORMAL,
        }
    }

    /// `find_lowest_rq`: an allowed CPU at the lowest level below `p`'s
    /// prio, preferring `prefer` (the task's CPU), then `waker`, then one
    /// spread by `any_and_distribute` from the executing CPU (the waker's,
    /// else `prefer`: a push runs on the task's CPU).
    fn find_lowest_rq(
        &self,
        m: &mut Machine,
        t: TaskId,
        levels: &[i32],
        prefer: CpuId,
        waker: Option<CpuId>,
    ) -> Option<CpuId> {
        let tp = prio(m, t) as i32;
        let aff = m.tasks[t].affinity;
        let lowest = aff
            .iter()
            .filter(|c| levels[*c] > tp && !self.rq[*c].throttled)
            .map(|c| levels[c])
            .max()?;
        let ok = |c: CpuId| aff.contains(c) && levels[c] == lowest && !self.rq[c].throttled;
        if ok(prefer) {
            return Some(prefer);
        }
        if let Some(w) = waker.filter(|w| ok(*w)) {
            return Some(w);
        }
        super::any_and_distribute(m, waker.unwrap_or(prefer), prefer, aff, ok)
    }

    /// Highest-prio queued task on `cpu` that is not running there and may
    /// run on `dst` (`pick_highest_pushable_task`; `dst` None: anywhere
    /// else, i.e. not pinned).
    fn pushable(
        &self,
        m: &Machine,
        cpu: CpuId,
        dst: Option<CpuId>,
        skip: &[TaskId],
    ) -> Option<TaskId> {
        let q = &self.rq[cpu];
        let mut bits = q.bitmap;
        while bits != 0 {
            let p = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            for &t in &q.queue[p] {
                // Running is what this class last set next (`curr`), not
                // the CPU's current task: from set_next_task, inside
                // `__schedule`, the CPU still shows the task just put back,
                // which put_prev_task_rt made pushable (the kernel's push
                // runs as a balance callback after the switch). Asked
                // first: most queues hold their running task alone.
                if q.curr == Some(t) {
                    continue;
                }
                let aff = &m.tasks[t].affinity;
                let movable = match dst {
                    Some(d) => aff.contains(d),
                    None => aff.count() > 1,
                };
                if movable && !skip.contains(&t) {
                    return Some(t);
                }
            }
        }
        None
    }

    /// `push_rt_tasks`: move queued tasks of `cpu` that cannot run here but
    /// would preempt elsewhere.
    fn push_rt_tasks(&mut self, m: &mut Machine, cpu: CpuId) {
        if self.rq[cpu].throttled {
            return;
        }
        // Nothing queued but the running task (the kernel queues no push
        // then: `has_pushable_tasks`): most calls from set_next_task.
        if self.rq[cpu].nothing_pushable() {
            return;
        }
        // The CPUs' levels (cpupri) are read once a task is to be pushed:
        // most of the remaining calls find nothing pushable either.
        let mut levels: Vec<i32> = Vec::new();
        let mut pushed: Vec<TaskId> = vec![];
        // What runs (or is about to run, from set_next_task) on this CPU.
        let curr_prio = self.rq[cpu]
            .curr
            .or(m.rqs[cpu].curr)
            .map_or(IDLE_PRIO, |c| m.tasks[c].prio());
        while let Some(t) = self.pushable(m, cpu, None, &pushed) {
            let tp = prio(m, t) as i32;
            if tp < curr_prio {
                // It outranks what runs here: this CPU will pick it.
                m.resched(cpu);
                return;
            }
            if levels.is_empty() {
                levels = (0..m.nr_cpus()).map(|c| self.level(c)).collect();
            }
            let Some(dst) = self.find_lowest_rq(m, t, &levels, cpu, None) else {
                return;
            };
            if dst == cpu {
                return;
            }
            m.request_migration(t, dst, MigrationKind::Push);
            levels[dst] = tp;
            pushed.push(t);
        }
    }

    /// `pull_rt_task`: take the best queued task of another CPU that beats
    /// everything queued here and would not run on its own CPU anyway.
    fn pull_rt_task(&mut self, m: &mut Machine, cpu: CpuId) {
        if self.total == self.rq[cpu].nr || self.rq[cpu].throttled {
            return;
        }
        let mine = self.rq[cpu].highest().map_or(i32::MAX, |p| p as i32);
        let mut best: Option<(i32, TaskId)> = None;
        // A CPU with no queued RT task, or with its running one alone,
        // has nothing to pull (`pushable` would find none: it skips the
        // running task): asked here, before the call, as the kernel's pull
        // walks only the overloaded CPUs (`rto_mask`: pushable tasks
        // queued). Most of a pull's cost when the other CPUs' RT tasks
        // sleep or run alone (the shoot-out's pinned FIFO probes: 3 % of
        // a jitter run).
        let has_rt = |s: CpuId| !self.rq[s].throttled && !self.rq[s].nothing_pushable();
        for src in (0..m.nr_cpus()).filter(|&s| s != cpu && has_rt(s)) {
            let Some(t) = self.pushable(m, src, Some(cpu), &[]) else {
                continue;
            };
            let tp = prio(m, t) as i32;
            let src_curr = m.rqs[src].curr.map_or(IDLE_PRIO, |c| m.tasks[c].prio());
            if tp < mine && tp >= src_curr && best.is_none_or(|(bp, _)| tp < bp) {
                best = Some((tp, t));
            }
        }
        if let Some((_, t)) = best {
            m.request_migration(t, cpu, MigrationKind::Balance);
        }
    }

    /// `update_curr_rt`: charge the running RT task's time to the CPU's
    /// RT bandwidth (6.1 throttling).
    fn account(&mut self, m: &mut Machine, cpu: CpuId) {
        let now = m.rq_clock(cpu);
        let q = &mut self.rq[cpu];
        if q.curr.is_none() || now <= q.exec_start {
            q.exec_start = now;
            return;
        }
        let delta = now - q.exec_start;
        q.exec_start = now;
        let Some(runtime) = self.p.rt_runtime.filter(|_| self.p.throttling) else {
            return;
        };
        q.rt_time += delta;
        if q.rt_time > runtime && !q.throttled {
            // sched_rt_runtime_exceeded
            q.throttled = true;
            m.resched(cpu);
        }
        self.start_rt_bandwidth(m);
    }

    /// `start_rt_bandwidth`: the global period timer runs while there is RT
    /// activity (6.1 throttling only).
    fn start_rt_bandwidth(&mut self, m: &mut Machine) {
        if self.p.throttling && self.p.rt_runtime.is_some() && !self.period_timer {
            self.period_timer = true;
            m.arm_timer(m.now + self.p.rt_period, self.name(), 0, 0);
        }
    }

    fn remove(&mut self, m: &Machine, cpu: CpuId, t: TaskId) {
        let p = prio(m, t);
        let q = &mut self.rq[cpu];
        if let Some(i) = q.queue[p].iter().position(|x| *x == t) {
            q.queue[p].remove(i);
            q.nr -= 1;
            self.total -= 1;
            if q.queue[p].is_empty() {
                q.bitmap &= !(1u128 << p);
            }
        }
    }
}

impl SchedClass for Rt {
    fn name(&self) -> &'static str {
        "rt"
    }

    fn reserve_tasks(&mut self, n: usize) {
        self.slice.reserve_exact(n);
    }

    fn task_fork(&mut self, _m: &mut Machine, t: TaskId, _parent: Option<TaskId>) {
        if self.slice.len() <= t {
            self.slice.resize(t + 1, 0);
        }
        self.slice[t] = self.rr_ticks;
    }

    fn enqueue_task(&mut self, m: &mut Machine, cpu: CpuId, t: TaskId, flags: EnqueueFlags) {
        let p = prio(m, t);
        let q = &mut self.rq[cpu];
        q.queue[p].push_back(t);
        q.bitmap |= 1u128 << p;
        q.nr += 1;
        self.total += 1;
        if m.tasks[t].policy == Policy::Rr && self.slice[t] == 0 {
            self.slice[t] = self.rr_ticks;
        }
        self.start_rt_bandwidth(m);
        // task_woken_rt (rt.c v6.18): a wakeup that cannot preempt the RT
        // or DEADLINE task running here is pushed elsewhere, unless a
        // reschedule is already pending here (`test_tsk_need_resched`:
        // the push then follows the CPU's pick, `set_next_task_rt`).
        let curr_prio = m.rqs[cpu].curr.map_or(IDLE_PRIO, |c| m.tasks[c].prio());
        if flags.has(EnqueueFlags::WAKEUP) && p as i32 >= curr_prio && !m.resched_pending(cpu) {
            self.push_rt_tasks(m, cpu);
        }
    }

    fn dequeue_task(
        &mut self,
        m: &mut Machine,
        cpu: CpuId,
        t: TaskId,
        _flags: DequeueFlags,
    ) -> bool {
        if self.rq[cpu].curr == Some(t) {
            self.account(m, cpu);
        }
        self.remove(m, cpu, t);
        true
    }

    fn yield_task(&mut self, m: &mut Machine, cpu: CpuId) {
        // yield_task_rt: requeue at the tail of its list.
        if let Some(t) = self.rq[cpu].curr {
            let p = prio(m, t);
            let q = &mut self.rq[cpu].queue[p];
            if let Some(i) = q.iter().position(|x| *x == t) {
                q.remove(i);
                q.push_back(t);
            }
        }
    }

    fn wakeup_preempt(&mut self, m: &mut Machine, cpu: CpuId, t: TaskId, _flags: WakeFlags) {
        // wakeup_preempt_rt: strictly higher priority only.
        if let Some(c) = m.rqs[cpu].curr {
            if m.tasks[t].prio() < m.tasks[c].prio() {
                m.resched(cpu);
            }
        }
    }

    fn balance(&mut self, m: &mut Machine, cpu: CpuId, prev: Option<TaskId>) -> bool {
        // balance_rt: pull when `prev` is not queued here as an RT task and
        // this CPU's best queued RT priority is now lower than prev's
        // (`need_pull_rt_task`: `rq->rt.highest_prio.curr > prev->prio`;
        // an empty queue counts as MAX_RT_PRIO): an RT task that blocked,
        // or a DEADLINE task that left when no DEADLINE task is runnable.
        if let Some(p) = prev {
            let highest = self.rq[cpu].highest().map_or(NR_PRIO as i32, |h| h as i32);
            let on_rt_rq = self.rq[cpu].curr == Some(p) && m.tasks[p].is_queued();
            if !on_rt_rq && highest > m.tasks[p].prio() {
                self.pull_rt_task(m, cpu);
            }
        }
        // sched_rt_runnable: `rt_queued`, which a throttled queue is not.
        !self.rq[cpu].throttled && self.rq[cpu].nr > 0
    }

    fn pick_task(&mut self, _m: &mut Machine, cpu: CpuId) -> Option<TaskId> {
        let q = &self.rq[cpu];
        if q.throttled {
            return None;
        }
        q.highest().and_then(|p| q.queue[p].front().copied())
    }

    fn put_prev_task(&mut self, m: &mut Machine, cpu: CpuId, _prev: TaskId, _next: Option<TaskId>) {
        self.account(m, cpu);
        self.rq[cpu].curr = None;
    }

    fn set_next_task(&mut self, m: &mut Machine, cpu: CpuId, next: TaskId) {
        self.rq[cpu].curr = Some(next);
        self.rq[cpu].exec_start = m.rq_clock(cpu);
        self.push_rt_tasks(m, cpu);
    }

    fn select_task_rq(
        &mut self,
        m: &mut Machine,
        t: TaskId,
        prev_cpu: CpuId,
        flags: WakeFlags,
        waker: Waker,
    ) -> CpuId {
        let aff = m.tasks[t].affinity;
        let (fallback, placement) = super::select_start(m, t, prev_cpu, flags);
        if !placement {
            return fallback;
        }
        // select_task_rq_rt: move only if the target runs an RT task that
        // is pinned or not lower than us.
        let tp = m.tasks[t].prio();
        let busy_rt = m.rqs[fallback].curr.filter(|c| m.tasks[*c].policy.is_rt());
        let must_look = busy_rt
            .is_some_and(|c| m.tasks[c].affinity.count() == 1 || m.tasks[c].prio() <= tp)
            || !aff.contains(prev_cpu);
        if !must_look {
            return fallback;
        }
        let levels: Vec<i32> = (0..m.nr_cpus()).map(|c| self.level(c)).collect();
        match self.find_lowest_rq(m, t, &levels, fallback, Some(waker.cpu)) {
            Some(c) if tp < levels[c] => c,
            _ => fallback,
        }
    }

    fn migrate_task_rq(&mut self, _m: &mut Machine, _t: TaskId, _new_cpu: CpuId) {}

    fn task_tick(&mut self, m: &mut Machine, cpu: CpuId, curr: TaskId) {
        self.account(m, cpu);
        if m.tasks[curr].policy != Policy::Rr {
            return;
        }
        // task_tick_rt: RR slice in ticks; requeue at the tail if not alone.
        self.slice[curr] = self.slice[curr].saturating_sub(1);
        if self.slice[curr] > 0 {
            return;
        }
        self.slice[curr] = self.rr_ticks;
        let p = prio(m, curr);
        let q = &mut self.rq[cpu].queue[p];
        if q.len() > 1 {
            if let Some(i) = q.iter().position(|x| *x == curr) {
                q.remove(i);
                q.push_back(curr);
            }
            m.resched(cpu);
        }
    }

    fn reweight_task(&mut self, _m: &mut Machine, _t: TaskId) {}

    fn task_dead(&mut self, _m: &mut Machine, _t: TaskId) {}

    fn update_curr(&mut self, m: &mut Machine, cpu: CpuId) {
        self.account(m, cpu);
    }

    fn tick_balance(&mut self, _m: &mut Machine, _cpu: CpuId) {}

    fn tick_balance_quiet_until(&self, _m: &Machine, _cpu: CpuId) -> Ns {
        Ns::MAX
    }

    fn nr_runnable(&self, cpu: CpuId) -> u32 {
        self.rq[cpu].nr
    }

    fn timer(&mut self, m: &mut Machine, _cpu: CpuId, _tag: u64) {
        // do_sched_rt_period_timer: one period's runtime is returned to
        // every CPU; throttled CPUs with rt_time back under the limit resume.
        let Some(runtime) = self.p.rt_runtime else {
            return;
        };
        let mut active = false;
        for cpu in 0..self.rq.len() {
            self.account(m, cpu);
            let q = &mut self.rq[cpu];
            q.rt_time -= q.rt_time.min(runtime);
            if q.throttled && q.rt_time < runtime {
                q.throttled = false;
                m.resched(cpu);
            }
            active |= q.rt_time > 0 || q.nr > 0;
        }
        self.period_timer = active;
        if active {
            m.arm_timer(m.now + self.p.rt_period, self.name(), 0, 0);
        }
    }

    fn task_debug(&self, t: TaskId) -> Vec<(&'static str, i64)> {
        vec![(
            "rr_slice_ticks",
            self.slice.get(t).copied().unwrap_or(0) as i64,
        )]
    }

    fn check_invariants(&self, m: &Machine) -> Result<(), String> {
        for (cpu, q) in self.rq.iter().enumerate() {
            let n: usize = q.queue.iter().map(|l| l.len()).sum();
            if q.nr > self.total {
                return Err(format!(
                    "rt cpu {cpu}: nr {} above total {}",
                    q.nr, self.total
                ));
            }
            if n != q.nr as usize {
                return Err(format!("rt cpu {cpu}: nr {} but {n} queued", q.nr));
            }
            for (p, l) in q.queue.iter().enumerate() {
                if l.is_empty() == (q.bitmap & (1u128 << p) != 0) {
                    return Err(format!("rt cpu {cpu}: bitmap wrong at prio {p}"));
                }
                for &t in l {
                    if m.tasks[t].cpu != cpu || !m.tasks[t].is_queued() || prio(m, t) != p {
                        return Err(format!("rt cpu {cpu}: task {t} misplaced"));
                    }
                }
            }
        }
        Ok(())
    }
}
