//! Con Kolivas's virtual-deadline core schedulers, the part BFS
//! (policy/bfs.rs) and MuQSS (policy/muqss.rs) share: one class that takes
//! every policy, the deadline formula and `prio_ratios`, time-slice
//! accounting, the run-queue keys and the class hooks. The two flavours
//! differ only in where a task is queued, how a CPU picks, how a waking
//! task is placed and how a slice expiry is noticed; those live in their
//! own files and are reached through [`Flavour`].
//!
//! Rules common to both (alt-schedulers.md §1, §2; read in BFS v0.440
//! `kernel/sched/bfs.c` and MuQSS v0.210 `ckolivas/linux:
//! kernel/sched/MuQSS.c`, functions named below):
//! * Levels (`normal_prio`): SCHED_FIFO/RR at their kernel prio 0..=99
//!   (99 − rt_priority), SCHED_OTHER/BATCH at NORMAL_PRIO (101),
//!   SCHED_IDLE as IDLEPRIO (102); an idle CPU counts as PRIO_LIMIT (103).
//!   SCHED_ISO does not exist in our workload format. SCHED_DEADLINE is
//!   squashed to SCHED_FIFO 99 (prio 0) as Project C's `dl_squash_attr`
//!   does (the brief's choice: BFS/MuQSS themselves refuse the policy); the
//!   stack turns off admission control and warns.
//! * Queue key: RT levels FIFO (key = level, insertion order), NORMAL and
//!   IDLEPRIO by virtual deadline within their level, FIFO among equal
//!   deadlines (BFS `earliest_deadline_task` keeps the first of equal
//!   deadlines in list order; MuQSS's skiplist puts equal keys in FIFO
//!   order). A `BTreeMap` keyed by (level, deadline, sequence) stands in
//!   for BFS's bitmap of lists and MuQSS's skiplists: same order.
//! * `time_slice_expired`: slice = rr_interval, deadline = now +
//!   `prio_ratios[nice+20]` · rr_interval · (2^20/128) ns
//!   (`prio_deadline_diff`), with `prio_ratios[0]` = 128 and each next
//!   entry ×11/10 in integers. It runs only at slice refill:
//!   `check_deadline` at every schedule of a task whose slice is below
//!   RESCHED_US (100 "µs" = 100 × 1024 ns) and, for SCHED_BATCH, at every
//!   schedule. A task that sleeps keeps its deadline and remaining slice.
//! * Slices: `timeslice()` = `MS_TO_US(rr_interval)` in the kernel's
//!   1024-ns "µs", i.e. rr_interval × 2^20 ns (6.29 ms at 6 "ms"); used
//!   time is subtracted at every tick and switch, except for SCHED_FIFO.
//!   We subtract exact ns where the kernel subtracts `ns >> 10` per update
//!   (it drops < 1024 ns per update; a departure of < 0.02 %).
//! * The running task is off the queue (`take_task`); at a schedule it is
//!   put back at the tail of its key (`return_task`) before the pick, so it
//!   loses ties, and a preempted SCHED_FIFO task goes behind its equals.
//! * `can_preempt`: a better level preempts; at the same level an earlier
//!   deadline does (RT tasks carry deadlines too and are compared the same
//!   way, as in the kernel); MuQSS adds "SCHED_BATCH never preempts at its
//!   level". SCHED_IDLE (IDLEPRIO) only takes idle CPUs.
//! * Fork (`wake_up_new_task`): the child inherits the parent's deadline
//!   and half its remaining slice; if the half is below RESCHED_US the
//!   parent is rescheduled and the child gets a fresh slice and deadline;
//!   with no idle CPU the parent is rescheduled so the child runs first.
//!   Threads the simulated launcher creates (no parent) get a fresh slice
//!   and deadline (we do not model rt-app's main thread).
//! * No cgroup weights, no load balancer: a CPU about to pick looks at
//!   every queue it may take from, and the engine moves the chosen task to
//!   it first (`balance`, then `pick_task`).
//!
//! Not modelled: ISO, `sched_yield` variants (yield = reschedule, the
//! running task requeued behind its equals: MuQSS `sched_yield_type` 1),
//! SMT nice, `idleprio_suitable` (IDLEPRIO tasks always run as IDLEPRIO),
//! priority inheritance, renice-triggered preemption.

use crate::class::stack::Stack;
use crate::class::{DequeueFlags, EnqueueFlags, SchedClass, WakeFlags, Waker};
use crate::clock::Ns;
use crate::cpuset::CpuId;
use crate::machine::{Machine, MigrationKind};
use crate::plugin::StackCtx;
use crate::task::TaskId;
use crate::workload::{Attrs, Policy};
use std::collections::BTreeMap;

/// `RESCHED_US` (100) in the kernel's 1024-ns microseconds.
pub const RESCHED_NS: i64 = 100 << 10;
/// Level of SCHED_OTHER/BATCH tasks (`NORMAL_PRIO`).
pub const LEVEL_NORMAL: u32 = 101;
/// Level of SCHED_IDLE tasks (`IDLE_PRIO`).
pub const LEVEL_IDLE: u32 = 102;
/// Level of an idle CPU (`PRIO_LIMIT`).
pub const LEVEL_IDLE_CPU: u32 = 103;

/// `prio_ratios[i]`, i = nice + 20: 128, then ×11/10 per step (integers).
pub const PRIO_RATIOS: [u64; 40] = prio_ratios();

const fn prio_ratios() -> [u64; 40] {
    let mut r = [0u64; 40];
    r[0] = 128;
    let mut i = 1;
    while i < 40 {
        r[i] = r[i - 1] * 11 / 10;
        i += 1;
    }
    r
}

/// `prio_deadline_diff`: the deadline offset of nice `nice`, ns.
pub fn deadline_diff(nice: i32, rr_ms: u64) -> Ns {
    let i = (nice + 20).clamp(0, 39) as usize;
    PRIO_RATIOS[i] * rr_ms * ((1 << 20) / 128)
}

/// `timeslice()`: rr_interval in the kernel's 2^20-ns milliseconds.
pub fn timeslice(rr_ms: u64) -> i64 {
    (rr_ms << 20) as i64
}

/// Level of a task (`normal_prio`, DEADLINE squashed to FIFO 99).
pub fn level(m: &Machine, t: TaskId) -> u32 {
    let task = &m.tasks[t];
    match task.policy {
        Policy::Fifo | Policy::Rr => 99 - task.rt_priority.min(99),
        Policy::Deadline => 0,
        Policy::Idle => LEVEL_IDLE,
        _ => LEVEL_NORMAL,
    }
}

/// Whether slices run out for a task (not SCHED_FIFO; squashed DEADLINE
/// tasks are FIFO).
pub fn has_slice(m: &Machine, t: TaskId) -> bool {
    !matches!(m.tasks[t].policy, Policy::Fifo | Policy::Deadline)
}

/// Queue order: level, deadline (0 for RT levels), insertion sequence.
pub type Key = (u32, Ns, u64);

/// Per-task state.
#[derive(Debug, Clone, Default)]
pub struct CkTask {
    /// Virtual deadline (absolute ns).
    pub deadline: Ns,
    /// Remaining time slice, ns (may go negative before it is noticed).
    pub slice: i64,
    /// Where it is queued: (queue, key).
    pub queued: Option<(usize, Key)>,
    /// Key kept across an engine move (dequeue MOVE, enqueue MIGRATED).
    pub moving: Option<Key>,
    /// BFS soft affinity: descheduled involuntarily from `m.tasks[t].cpu`.
    pub sticky: bool,
}

/// What differs between BFS and MuQSS.
#[derive(Debug, Clone)]
pub enum Flavour {
    /// One global queue (policy/bfs.rs).
    Bfs,
    /// Per-CPU or shared queues (policy/muqss.rs).
    Muqss(super::muqss::Muqss),
}

/// The class.
#[derive(Debug)]
pub struct Ck {
    /// Which scheduler.
    pub flavour: Flavour,
    /// `rr_interval`, in the kernel's 2^20-ns milliseconds.
    pub rr_ms: u64,
    /// Per task.
    pub tasks: Vec<CkTask>,
    /// The run queues (BFS: one; MuQSS: one per sharing leader CPU).
    pub queues: Vec<BTreeMap<Key, TaskId>>,
    /// Queue of each CPU.
    pub queue_of: Vec<usize>,
    /// Our task running on each CPU.
    pub running: Vec<Option<TaskId>>,
    /// When the running task's time was last accounted.
    pub exec_start: Vec<Ns>,
    /// The pick decided in `balance` for each CPU.
    pub choice: Vec<Option<TaskId>>,
    /// Tasks attributed to each CPU (queued or running), for `nr_runnable`.
    pub nr: Vec<u32>,
    /// BFS `rq->sticky_task`.
    pub sticky_task: Vec<Option<TaskId>>,
    /// BFS `rq->dither`, set at each schedule.
    pub dither: Vec<bool>,
    /// MuQSS hrexpiry generation per CPU (stale timers are ignored).
    pub hrexpiry: Vec<u64>,
    seq: u64,
}

impl Ck {
    /// The class for `m`'s CPUs.
    pub fn new(flavour: Flavour, rr_ms: u64, m: &Machine) -> Self {
        let n = m.nr_cpus();
        let queue_of = match &flavour {
            Flavour::Bfs => vec![0; n],
            Flavour::Muqss(q) => q.leader.clone(),
        };
        Ck {
            flavour,
            rr_ms,
            tasks: vec![],
            queues: vec![BTreeMap::new(); n],
            queue_of,
            running: vec![None; n],
            exec_start: vec![0; n],
            choice: vec![None; n],
            nr: vec![0; n],
            sticky_task: vec![None; n],
            dither: vec![false; n],
            hrexpiry: vec![0; n],
            seq: 0,
        }
    }

    fn next_seq(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    /// `time_slice_expired`.
    pub fn time_slice_expired(&mut self, m: &Machine, t: TaskId) {
        let diff = deadline_diff(m.tasks[t].nice, self.rr_ms);
        self.tasks[t].slice = timeslice(self.rr_ms);
        self.tasks[t].deadline = m.now.saturating_add(diff);
    }

    /// `check_deadline`: refill an (almost) used-up slice; SCHED_BATCH
    /// tasks at every schedule.
    pub fn check_deadline(&mut self, m: &Machine, t: TaskId) {
        if self.tasks[t].slice < RESCHED_NS || m.tasks[t].policy == Policy::Batch {
            self.time_slice_expired(m, t);
        }
    }

    /// Charge the running task of `cpu` for the time since the last update
    /// (`update_cpu_clock_tick` / `_switch`).
    pub fn account(&mut self, m: &Machine, cpu: CpuId) {
        let Some(t) = self.running[cpu] else {
            return;
        };
        let delta = m.now.saturating_sub(self.exec_start[cpu]);
        self.exec_start[cpu] = m.now;
        if has_slice(m, t) {
            let s = &mut self.tasks[t].slice;
            *s = s.saturating_sub(delta.min(i64::MAX as u64) as i64);
        }
    }

    /// The key of `t` queued now, at the tail of its equals.
    fn key(&mut self, m: &Machine, t: TaskId) -> Key {
        let lv = level(m, t);
        let dl = if lv < 100 { 0 } else { self.tasks[t].deadline };
        (lv, dl, self.next_seq())
    }

    /// Put `t` on queue `q` (with `key`, or at the tail of its equals).
    pub fn insert(&mut self, m: &Machine, q: usize, t: TaskId, key: Option<Key>) {
        let key = match key {
            Some(k) if k.0 == level(m, t) => k,
            _ => self.key(m, t),
        };
        self.queues[q].insert(key, t);
        self.tasks[t].queued = Some((q, key));
    }

    /// Take `t` off its queue; returns its key.
    pub fn remove(&mut self, t: TaskId) -> Option<Key> {
        let (q, key) = self.tasks[t].queued.take()?;
        self.queues[q].remove(&key);
        Some(key)
    }

    /// (level, deadline) of what runs on `cpu` (`rq_prio`, `rq_deadline`).
    pub fn rq_prio(&self, m: &Machine, cpu: CpuId) -> (u32, Ns) {
        match m.rqs[cpu].curr {
            Some(c) => (level(m, c), self.tasks.get(c).map_or(0, |x| x.deadline)),
            None => (LEVEL_IDLE_CPU, 0),
        }
    }

    /// `can_preempt`: whether `t` should take a CPU running (prio, dl).
    pub fn can_preempt(&self, m: &Machine, t: TaskId, (prio, dl): (u32, Ns)) -> bool {
        let p = level(m, t);
        if p != prio {
            return p < prio;
        }
        if matches!(self.flavour, Flavour::Muqss(_)) && m.tasks[t].policy == Policy::Batch {
            return false;
        }
        self.tasks[t].deadline < dl
    }

    /// Whether `cpu` is idle and may take work (`cpu_idle_map`).
    pub fn idle(m: &Machine, cpu: CpuId) -> bool {
        m.online.contains(cpu) && m.is_idle(cpu)
    }

    /// The task `cpu` should run next, among every task it may take (its
    /// current task included, as if requeued at the tail).
    fn decide(&mut self, m: &Machine, cpu: CpuId) -> Option<TaskId> {
        let curr = self.running[cpu].filter(|c| m.tasks[*c].is_queued());
        match &self.flavour {
            Flavour::Bfs => super::bfs::pick(self, m, cpu, curr),
            Flavour::Muqss(q) => q.pick(self, m, cpu, curr),
        }
    }

    /// The start of a schedule on `cpu`: account the running task and
    /// refill its slice if used up (`check_deadline` in `schedule`).
    fn prepare(&mut self, m: &Machine, cpu: CpuId) {
        self.account(m, cpu);
        if let Some(c) = self.running[cpu].filter(|c| m.tasks[*c].is_queued()) {
            self.check_deadline(m, c);
        }
        // BFS `rq->dither`: scheduled in the first half of a tick period.
        self.dither[cpu] = m.into_jiffy() <= m.tick_ns() / 2;
    }

    /// The best idle CPU for `t`, ranked by locality from `from`.
    pub fn best_idle(&self, m: &Machine, t: TaskId, from: CpuId) -> Option<CpuId> {
        let aff = m.tasks[t].affinity;
        let idle: Vec<CpuId> = aff.iter().filter(|c| Self::idle(m, *c)).collect();
        if idle.is_empty() {
            return None;
        }
        if idle.contains(&from) {
            return Some(from);
        }
        let rank = |c: CpuId| match &self.flavour {
            Flavour::Bfs => super::bfs::idle_rank(m, from, c),
            Flavour::Muqss(q) => q.idle_rank(m, from, c),
        };
        // Lowest ranking wins; the first (lowest-numbered) among equals.
        idle.into_iter().min_by_key(|c| (rank(*c), *c))
    }

    /// `resched_suitable_idle`: wake the best idle CPU for a task that
    /// was just descheduled while runnable.
    fn resched_suitable_idle(&self, m: &mut Machine, t: TaskId, from: CpuId) {
        if let Some(c) = self.best_idle(m, t, from) {
            m.resched(c);
        }
    }

    fn valid_choice(&self, m: &Machine, cpu: CpuId, t: TaskId) -> bool {
        let task = &m.tasks[t];
        task.is_queued()
            && task.cpu == cpu
            && (self.running[cpu] == Some(t) || self.tasks[t].queued.is_some())
    }
}

/// The class stack of BFS or MuQSS: this one class takes every policy
/// (FIFO, RR, OTHER, BATCH, IDLE, and DEADLINE squashed to FIFO 99).
pub fn build(ctx: &StackCtx, name: &str, flavour: Flavour, rr_ms: u64) -> Result<Stack, String> {
    let mut s = Stack::new();
    let class = Ck::new(flavour, rr_ms, ctx.m);
    let all = [
        Policy::Fifo,
        Policy::Rr,
        Policy::Deadline,
        Policy::Other,
        Policy::Batch,
        Policy::Idle,
    ];
    let idx = s.push(Box::new(class), &all);
    s.set_fallback(idx);
    // SCHED_DEADLINE becomes SCHED_FIFO 99: nothing to admit.
    s.dl_admission = false;
    s.warnings = ignored_features(ctx, name, true);
    Ok(s)
}

/// Warnings for workload features a fair-class replacement without group
/// scheduling ignores (and, with `squash`, SCHED_DEADLINE's squashing).
pub fn ignored_features(ctx: &StackCtx, name: &str, squash: bool) -> Vec<String> {
    let wl = ctx.wl;
    let attrs: Vec<&Attrs> = wl
        .tasks
        .iter()
        .flat_map(|t| std::iter::once(&t.attrs).chain(t.phases.iter().map(|p| &p.attrs)))
        .collect();
    let policy = |a: &Attrs| a.policy.unwrap_or(wl.default_policy);
    let mut w = vec![];
    if squash && attrs.iter().any(|a| policy(a) == Policy::Deadline) {
        w.push(format!(
            "{name} has no SCHED_DEADLINE: those tasks run as SCHED_FIFO priority 99 (Project C's dl_squash_attr), without CBS or admission control"
        ));
    }
    let groups = !wl.taskgroups.is_empty()
        || attrs
            .iter()
            .any(|a| a.taskgroup.as_deref().is_some_and(|g| g != "/"));
    if groups {
        w.push(format!(
            "{name} has no group scheduling: taskgroups and their cpu.shares are ignored"
        ));
    }
    if attrs
        .iter()
        .any(|a| a.dl_runtime.is_some() && policy(a) != Policy::Deadline)
    {
        w.push(format!(
            "dl-runtime on a normal policy requests a custom slice, which {name} ignores"
        ));
    }
    w
}

impl SchedClass for Ck {
    /// Modelled with one plain clock per CPU (`m.now`; docs/model.md,
    /// "Wakeup costs"): no skipped clock update after a wakeup.
    fn clock_update_skip(&self) -> bool {
        false
    }

    fn name(&self) -> &'static str {
        match self.flavour {
            Flavour::Bfs => "bfs",
            Flavour::Muqss(_) => "muqss",
        }
    }

    fn task_fork(&mut self, m: &mut Machine, t: TaskId, parent: Option<TaskId>) {
        if self.tasks.len() <= t {
            self.tasks.resize(t + 1, CkTask::default());
        }
        self.tasks[t] = CkTask::default();
        // wake_up_new_task: share the running parent's slice.
        let running_parent = parent.filter(|p| {
            let pc = m.tasks[*p].cpu;
            self.running[pc] == Some(*p)
        });
        let Some(p) = running_parent.filter(|p| has_slice(m, *p)) else {
            self.time_slice_expired(m, t);
            return;
        };
        let pc = m.tasks[p].cpu;
        self.account(m, pc);
        self.tasks[t].deadline = self.tasks[p].deadline;
        let half = self.tasks[p].slice / 2;
        if half < RESCHED_NS {
            // The parent ran out: it reschedules, the child starts afresh.
            self.tasks[p].slice = 0;
            m.resched(pc);
            self.time_slice_expired(m, t);
            return;
        }
        self.tasks[p].slice = half;
        self.tasks[t].slice = half;
        if self.best_idle(m, t, pc).is_none() {
            // Child runs first (it has the parent's deadline and is queued
            // ahead of the parent's requeue).
            m.resched(pc);
        }
    }

    fn enqueue_task(&mut self, m: &mut Machine, cpu: CpuId, t: TaskId, flags: EnqueueFlags) {
        self.nr[cpu] += 1;
        if m.rqs[cpu].curr == Some(t) {
            // RESTORE of the running task after an attribute change.
            self.running[cpu] = Some(t);
            self.exec_start[cpu] = m.now;
            return;
        }
        let key = if flags.has(EnqueueFlags::MIGRATED) {
            self.tasks[t].moving.take()
        } else {
            None
        };
        let q = self.queue_of[cpu];
        self.insert(m, q, t, key);
    }

    fn dequeue_task(
        &mut self,
        m: &mut Machine,
        cpu: CpuId,
        t: TaskId,
        flags: DequeueFlags,
    ) -> bool {
        self.nr[cpu] = self.nr[cpu].saturating_sub(1);
        if self.running[cpu] == Some(t) {
            self.account(m, cpu);
            if flags.has(DequeueFlags::SLEEP) {
                // schedule() runs check_deadline on prev before it leaves.
                self.check_deadline(m, t);
            }
            self.running[cpu] = None;
        }
        let key = self.remove(t);
        self.tasks[t].moving = key.filter(|_| flags.has(DequeueFlags::MOVE));
        if flags.has(DequeueFlags::SLEEP) || flags.has(DequeueFlags::SPECIAL) {
            self.tasks[t].sticky = false; // deactivate_task: clear_sticky
        }
        true
    }

    fn yield_task(&mut self, _m: &mut Machine, _cpu: CpuId) {}

    fn wakeup_preempt(&mut self, m: &mut Machine, cpu: CpuId, t: TaskId, flags: WakeFlags) {
        if !(flags.has(WakeFlags::TTWU) || flags.has(WakeFlags::FORK)) {
            return; // a pull for a pick: no try_preempt
        }
        match &self.flavour {
            Flavour::Bfs => super::bfs::try_preempt(self, m, cpu, t),
            Flavour::Muqss(q) => q.try_preempt(self, m, cpu, t),
        }
    }

    fn balance_every_pick(&self) -> bool {
        // The pick is decided here (the only class of its stack).
        true
    }

    fn balance(&mut self, m: &mut Machine, cpu: CpuId, _prev: Option<TaskId>) -> bool {
        self.prepare(m, cpu);
        let choice = self.decide(m, cpu);
        if let Some(t) = choice.filter(|t| m.tasks[*t].cpu != cpu) {
            m.request_migration(t, cpu, MigrationKind::Balance);
        }
        self.choice[cpu] = choice;
        choice.is_some()
    }

    fn pick_task(&mut self, m: &mut Machine, cpu: CpuId) -> Option<TaskId> {
        let next = match self.choice[cpu].take() {
            Some(t) if self.valid_choice(m, cpu, t) => Some(t),
            _ => {
                // No balance ran (offline CPU) or the move failed: choose
                // among what is already here.
                self.prepare(m, cpu);
                let curr = self.running[cpu].filter(|c| m.tasks[*c].is_queued());
                let mut best = curr;
                for (_, &t) in self.queues[self.queue_of[cpu]].iter() {
                    if m.tasks[t].cpu == cpu {
                        best = Some(t);
                        break;
                    }
                }
                match (curr, best) {
                    (Some(c), Some(b)) if b != c => {
                        let kb = self.tasks[b].queued.map(|x| x.1);
                        let lc = level(m, c);
                        let dc = if lc < 100 { 0 } else { self.tasks[c].deadline };
                        if kb.is_some_and(|k| (k.0, k.1) < (lc, dc)) {
                            Some(b)
                        } else {
                            Some(c)
                        }
                    }
                    _ => best,
                }
            }
        };
        if let (Flavour::Muqss(_), Some(n)) = (&self.flavour, next) {
            super::muqss::arm_hrexpiry(self, m, cpu, n);
        }
        next
    }

    fn put_prev_task(&mut self, m: &mut Machine, cpu: CpuId, prev: TaskId, next: Option<TaskId>) {
        self.account(m, cpu);
        // Only a task switched out while running goes back to a queue (an
        // attribute change dequeued it already and re-enqueues it itself).
        let was_running = self.running[cpu] == Some(prev);
        if was_running {
            self.running[cpu] = None;
        }
        if !was_running || !m.tasks[prev].is_queued() || self.tasks[prev].queued.is_some() {
            return;
        }
        // return_task: back to the tail of its key on this CPU's queue.
        if matches!(self.flavour, Flavour::Bfs) {
            super::bfs::swap_sticky(self, m, cpu, prev);
            if next.is_some_and(|n| level(m, n) < 100) {
                // unstick_task: never stick behind a real-time task.
                self.sticky_task[cpu] = None;
                self.tasks[prev].sticky = false;
            }
        }
        let q = self.queue_of[cpu];
        self.insert(m, q, prev, None);
        self.resched_suitable_idle(m, prev, cpu);
    }

    fn set_next_task(&mut self, m: &mut Machine, cpu: CpuId, next: TaskId) {
        // take_task
        self.remove(next);
        self.tasks[next].sticky = false;
        self.running[cpu] = Some(next);
        self.exec_start[cpu] = m.now;
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
        match &self.flavour {
            Flavour::Bfs => super::bfs::select_cpu(self, m, t, start),
            Flavour::Muqss(q) => q.select_best_cpu(self, m, t, start),
        }
    }

    fn migrate_task_rq(&mut self, _m: &mut Machine, _t: TaskId, _new_cpu: CpuId) {}

    fn task_tick(&mut self, m: &mut Machine, cpu: CpuId, curr: TaskId) {
        if self.running[cpu] != Some(curr) {
            return;
        }
        self.account(m, cpu);
        if !has_slice(m, curr) {
            return; // SCHED_FIFO tasks never run out of timeslice
        }
        let expired = match &self.flavour {
            Flavour::Bfs => super::bfs::tick_expired(self, m, cpu, curr),
            // MuQSS with hrexpiry: dither 0, so only RESCHED_US remains.
            Flavour::Muqss(_) => self.tasks[curr].slice < RESCHED_NS,
        };
        if expired {
            m.resched(cpu);
        }
    }

    fn reweight_task(&mut self, _m: &mut Machine, _t: TaskId) {}

    fn task_dead(&mut self, _m: &mut Machine, t: TaskId) {
        for s in self.sticky_task.iter_mut() {
            if *s == Some(t) {
                *s = None;
            }
        }
    }

    fn update_curr(&mut self, m: &mut Machine, cpu: CpuId) {
        self.account(m, cpu);
    }

    fn tick_balance(&mut self, _m: &mut Machine, _cpu: CpuId) {}

    fn nr_runnable(&self, cpu: CpuId) -> u32 {
        self.nr[cpu]
    }

    fn timer(&mut self, m: &mut Machine, cpu: CpuId, tag: u64) {
        // MuQSS hrexpiry: the slice of the task it was armed for is over.
        if tag != self.hrexpiry[cpu] {
            return;
        }
        if let Some(t) = self.running[cpu] {
            self.account(m, cpu);
            self.tasks[t].slice = 0;
            m.resched(cpu);
        }
    }

    fn task_debug(&self, t: TaskId) -> Vec<(&'static str, i64)> {
        let x = self.tasks.get(t).cloned().unwrap_or_default();
        vec![
            ("deadline", x.deadline.min(i64::MAX as u64) as i64),
            ("time_slice", x.slice),
        ]
    }

    fn check_invariants(&self, m: &Machine) -> Result<(), String> {
        for (q, queue) in self.queues.iter().enumerate() {
            for (k, &t) in queue {
                if self.tasks[t].queued != Some((q, *k)) {
                    return Err(format!("{}: task {t} misfiled in queue {q}", self.name()));
                }
                if !m.tasks[t].is_queued() || self.queue_of[m.tasks[t].cpu] != q {
                    return Err(format!(
                        "{}: task {t} queued but not runnable here",
                        self.name()
                    ));
                }
                if self.running.contains(&Some(t)) {
                    return Err(format!("{}: running task {t} is queued", self.name()));
                }
            }
        }
        for (cpu, r) in self.running.iter().enumerate() {
            if let Some(t) = r {
                if m.rqs[cpu].curr != Some(*t) {
                    return Err(format!(
                        "{}: task {t} running on {cpu} per class only",
                        self.name()
                    ));
                }
            }
        }
        Ok(())
    }
}
