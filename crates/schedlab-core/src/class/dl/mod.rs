//! The deadline class: SCHED_DEADLINE (kernel/sched/deadline.c), from
//! ../shared/spec/linux-rt-dl.md §6.
//!
//! Each task is a constant-bandwidth server (CBS) with runtime R, relative
//! deadline D and period P:
//! * running consumes `runtime`, scaled by the CPU's capacity and frequency
//!   (`dl_scaled_delta_exec`); at ≤ 0 the task is throttled until its next
//!   period `deadline − D + P` (`dl_next_period`), where it is replenished:
//!   `deadline += P, runtime += R` until positive (overruns carry), or a
//!   fresh `now + D` if that is still in the past;
//! * at wakeup the CBS rule (`update_dl_entity`) starts a new period if the
//!   deadline passed or the remaining runtime would overflow the reserved
//!   bandwidth; a constrained task (D < P) whose deadline is still ahead
//!   gets the revised rule (runtime = density × time left), and one waking
//!   between its deadline and its next period is throttled until then
//!   (`dl_check_constrained_dl`);
//! * `sched_yield` gives up the rest of the period.
//!
//! Per CPU the earliest deadline runs; a wakeup preempts only with a
//! strictly earlier deadline. Across CPUs the kernel's push/pull (§6, "Global
//! EDF approximation"; push.rs) is followed: a waking task goes to a CPU without DL
//! work, else to the one whose earliest deadline is latest and later than
//! its own (`find_later_rq`); after each pick the earliest waiting task is
//! pushed to such a CPU; a CPU about to pick pulls the earliest waiting task
//! of another CPU if it beats everything queued here and would not preempt
//! its own CPU. Net effect: the M earliest deadlines run (global EDF), so the
//! Dhall effect shows.
//!
//! The ordering is a hook, [`DlOrder`] (order.rs): the tree key of a job
//! and the decisions at activation, wakeup preemption, pick, put_prev and
//! the tick. Every hook defaults to the kernel's EDF behaviour above, so
//! EDF is [`Edf`], an order overriding nothing; CBS, push/pull and
//! admission stay here for every order. Research orders are in
//! `crate::policy` (llf.rs and illf.rs: least laxity first and the seed's
//! improved LLF, keyed by the latest start time d − R). Push/pull compare
//! tree keys, so with another order migration is the kernel's push/pull
//! with that order's key. Where the sources are silent the class decides
//! ([choice]): ties go to the earlier-queued job (rb-tree insertion
//! order), and a job released by its CBS replenishment while it waits is
//! an activation. An order may force the next pick of a CPU (`forced`,
//! cleared when a job is set to run).
//!
//! The 6.12 fair server is a deadline entity of this class (server.rs):
//! when active with fair tasks to run, its deadline competes with the
//! tasks' keys at the pick (`server_runs_first`) and in the CPU's earliest
//! deadline for push/pull; it is kept beside the task trees rather than in
//! them because it runs tasks of another class (the engine picks those).
//!
//! Admission control (`sched_dl_overflow`) lives in the engine, which sees
//! every task. Simplifications (docs/model.md): no GRUB reclaiming
//! (SCHED_FLAG_RECLAIM), no inactive timer / 0-lag bookkeeping; throttling
//! is detected at `update_curr` points (ticks, switches), as without
//! HRTICK_DL.

mod order;
mod push;
mod queue;
pub mod server;

pub use order::{DlCtx, DlOrder, Edf};

use super::{DequeueFlags, EnqueueFlags, SchedClass, WakeFlags, Waker};
use crate::clock::Ns;
use crate::cpuset::{CpuId, CpuSet};
use crate::machine::Machine;
use crate::task::TaskId;
use std::rc::Rc;

/// Per-task CBS state (`struct sched_dl_entity`).
#[derive(Debug, Clone, Copy, Default)]
struct DlEnt {
    /// Remaining runtime in this period, ns (may go negative: overrun).
    runtime: i64,
    /// Absolute deadline.
    deadline: Ns,
    /// Waiting for the replenishment timer.
    throttled: bool,
    /// Generation of the replenishment timer (stale timers are ignored).
    gen: u32,
    /// In the per-CPU tree (queued and not throttled).
    in_tree: bool,
    /// Tree key while in the tree.
    key: (Ns, u64),
    /// When the job was last switched in or out (`DlOrder::lru_ties`).
    last_sched: Ns,
}

/// The deadline class.
#[derive(Debug)]
pub struct Dl {
    /// The ordering (shared so that a hook can be called while the class
    /// lends itself to the hook's [`DlCtx`]).
    order: Rc<dyn DlOrder>,
    /// The ordering's `task_tick` does nothing (asked once: it is fixed).
    order_tick_noop: bool,
    /// Per CPU: the task the next pick must return (set by the order).
    forced: Vec<Option<TaskId>>,
    ent: Vec<DlEnt>,
    /// Per CPU: (key, sequence, task) of queued, unthrottled tasks (EDF:
    /// the key is the deadline).
    tree: Vec<queue::Queue>,
    /// Per CPU: the first entry of `tree` (None: empty), kept beside it.
    /// Why: push and pull read every CPU's earliest key (`find_later_rq`'s
    /// levels, `pull_dl_task`'s scan: the kernel keeps the `cpudl` heap and
    /// the overload mask for the same reads); kept here, those reads touch
    /// one array, not each CPU's queue (when the queues were B-trees, whose
    /// first entry is a walk down the left edge: a tenth of a 64-CPU
    /// global-EDF run).
    leftmost: Vec<Option<(Ns, u64, TaskId)>>,
    /// The CPUs whose tree is not empty (`leftmost` is Some): a CPU
    /// outside it has DL work only through its server (`find_later_rq`).
    queued: CpuSet,
    /// The levels a push changed (`push_dl_tasks`), kept to be reused.
    moved_levels: Vec<(CpuId, Option<Ns>)>,
    /// Per CPU: the DL task running there.
    curr: Vec<Option<TaskId>>,
    exec_start: Vec<Ns>,
    seq: u64,
    /// Tasks in all trees (push/pull are skipped without any).
    total: usize,
    /// 6.12's per-CPU fair servers (server.rs), if the stack has them.
    server: Option<server::DlServer>,
    /// Per CPU: the served class had runnable tasks at the last
    /// `server_update` (an active server's entity is then queued).
    server_demand: Vec<bool>,
}

impl Dl {
    /// A deadline class for the CPUs of `m`, ordering tasks by `order`
    /// ([`Edf`] for the kernel's), with a deferred server entity per CPU
    /// (6.12's fair server) if `server`.
    pub fn new(m: &Machine, order: Box<dyn DlOrder>, server: bool) -> Self {
        let n = m.nr_cpus();
        Dl {
            order_tick_noop: order.task_tick_is_noop(),
            order: Rc::from(order),
            forced: vec![None; n],
            ent: vec![],
            tree: vec![queue::Queue::default(); n],
            leftmost: vec![None; n],
            queued: CpuSet::empty(),
            moved_levels: vec![],
            curr: vec![None; n],
            exec_start: vec![0; n],
            seq: 0,
            total: 0,
            server: server.then(|| server::DlServer::new(n)),
            server_demand: vec![false; n],
        }
    }

    /// Ordering key of `cpu`'s server entity, if it is queued: active and
    /// with runnable tasks to serve.
    fn server_key(&self, cpu: CpuId) -> Option<Ns> {
        let s = self.server.as_ref()?;
        if s.state(cpu) != server::ServerState::Active || !self.server_demand[cpu] {
            return None;
        }
        let (deadline, runtime) = s.entity(cpu);
        Some(self.order.key(deadline, runtime))
    }

    /// Absolute deadline of `t` (for tests and reports).
    pub fn deadline(&self, t: TaskId) -> Ns {
        self.ent[t].deadline
    }

    /// Ordering key of `t` now ([`DlOrder::key`]).
    fn key_of(&self, t: TaskId) -> Ns {
        let e = &self.ent[t];
        self.order.key(e.deadline, e.runtime)
    }

    /// Second component of `t`'s tree key, which breaks ties of the first:
    /// the insertion sequence (earlier queued first), or, for orders with
    /// `lru_ties`, when the job was last switched in or out (least recently
    /// scheduled first).
    fn tie_of(&self, t: TaskId) -> u64 {
        if self.order.lru_ties() {
            self.ent[t].last_sched
        } else {
            self.seq
        }
    }

    /// Re-insert `t` under its current key (a re-key by the order).
    fn rekey(&mut self, cpu: CpuId, t: TaskId) {
        if self.ent[t].in_tree && self.ent[t].key.0 != self.key_of(t) {
            self.remove(cpu, t);
            self.insert(cpu, t);
        }
    }

    /// `t` was just switched in or out: for `lru_ties` orders its tie-break
    /// moves to now, its ordering key staying what the order last set (ILLF
    /// re-keys only at its own points).
    fn touch(&mut self, m: &Machine, cpu: CpuId, t: TaskId) {
        self.ent[t].last_sched = m.now;
        if !self.order.lru_ties() || !self.ent[t].in_tree || self.ent[t].key.1 == m.now {
            return;
        }
        let (key, old) = self.ent[t].key;
        self.tree[cpu].remove(&(key, old, t));
        self.ent[t].key = (key, m.now);
        self.tree[cpu].insert((key, m.now, t));
        self.leftmost[cpu] = self.tree[cpu].first().copied();
    }

    fn insert(&mut self, cpu: CpuId, t: TaskId) {
        if self.ent[t].in_tree {
            return;
        }
        self.seq += 1;
        let key = (self.key_of(t), self.tie_of(t));
        self.ent[t].key = key;
        self.ent[t].in_tree = true;
        let entry = (key.0, key.1, t);
        self.tree[cpu].insert(entry);
        if self.leftmost[cpu].is_none_or(|l| entry < l) {
            self.leftmost[cpu] = Some(entry);
            self.queued.insert(cpu);
        }
        self.total += 1;
    }

    fn remove(&mut self, cpu: CpuId, t: TaskId) {
        if !self.ent[t].in_tree {
            return;
        }
        let key = self.ent[t].key;
        let entry = (key.0, key.1, t);
        self.tree[cpu].remove(&entry);
        if self.leftmost[cpu] == Some(entry) {
            self.leftmost[cpu] = self.tree[cpu].first().copied();
            if self.leftmost[cpu].is_none() {
                self.queued.remove(cpu);
            }
        }
        self.ent[t].in_tree = false;
        self.total -= 1;
    }

    /// Smallest key (EDF: earliest deadline) queued on `cpu`, running task
    /// included, if any.
    #[inline]
    fn earliest(&self, cpu: CpuId) -> Option<Ns> {
        let task = self.leftmost[cpu].map(|k| k.0);
        if self.server.is_none() {
            return task;
        }
        match (task, self.server_key(cpu)) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// `update_curr_dl`: charge the running task's (scaled) time.
    fn account(&mut self, m: &mut Machine, cpu: CpuId) {
        let now = m.rq_clock(cpu);
        let Some(t) = self.curr[cpu] else {
            self.exec_start[cpu] = now;
            return;
        };
        let delta = now.saturating_sub(self.exec_start[cpu]);
        self.exec_start[cpu] = now;
        if delta == 0 {
            return;
        }
        let (num, den) = m.rate(cpu);
        // delta · num / den; at full speed (num = den, the usual case) that
        // is delta, and a product within 64 bits needs no 128-bit division.
        let scaled = match delta.checked_mul(num) {
            _ if num == den && den != 0 => delta as i64,
            Some(p) => (p / den.max(1)) as i64,
            None => (delta as u128 * num as u128 / den.max(1) as u128) as i64,
        };
        self.ent[t].runtime -= scaled;
        if self.ent[t].runtime <= 0 && !self.ent[t].throttled {
            self.throttle(m, cpu, t);
        }
    }

    /// Throttle `t` until its next period (or replenish at once if that has
    /// already begun).
    fn throttle(&mut self, m: &mut Machine, cpu: CpuId, t: TaskId) {
        let a = m.tasks[t].dl;
        let next_period = (self.ent[t].deadline + a.period).saturating_sub(a.deadline);
        self.remove(cpu, t);
        self.ent[t].throttled = true;
        self.ent[t].gen = self.ent[t].gen.wrapping_add(1);
        m.resched(cpu);
        if next_period > m.now {
            let tag = ((self.ent[t].gen as u64) << 32) | t as u64;
            m.arm_timer(next_period, self.name(), cpu, tag);
        } else {
            self.replenish(m, t);
        }
    }

    /// `replenish_dl_entity` and re-queue.
    fn replenish(&mut self, m: &mut Machine, t: TaskId) {
        let a = m.tasks[t].dl;
        let e = &mut self.ent[t];
        while e.runtime <= 0 {
            e.deadline += a.period;
            e.runtime += a.runtime as i64;
        }
        if e.deadline < m.now {
            // "DL replenish lagged too much"
            e.deadline = m.now + a.deadline;
            e.runtime = a.runtime as i64;
        }
        e.throttled = false;
        let cpu = m.tasks[t].cpu;
        if m.tasks[t].is_queued() {
            if m.rqs[cpu].curr == Some(t) {
                self.insert(cpu, t);
            } else {
                // A job released by its replenishment is an activation
                // (dl_task_timer pushes whenever pushable jobs wait).
                self.activate(m, cpu, t, false);
            }
        }
    }

    /// A job of `t` becomes ready on `cpu` (`woken`: a wakeup or a new
    /// task; else a replenishment).
    fn activate(&mut self, m: &mut Machine, cpu: CpuId, t: TaskId, woken: bool) {
        let order = Rc::clone(&self.order);
        order.before_activate(&mut DlCtx::new(self, m, cpu));
        self.insert(cpu, t);
        if order.activate(&mut DlCtx::new(self, m, cpu), t) {
            return;
        }
        if woken && !self.task_woken_pushes(m, cpu, t) {
            return;
        }
        // A job that will not run here is pushed elsewhere.
        self.push_dl_tasks(m, cpu);
    }

    /// The CBS wakeup rule (`update_dl_entity`) at `now`.
    fn wakeup_rule(&mut self, m: &mut Machine, cpu: CpuId, t: TaskId) {
        let a = m.tasks[t].dl;
        let now = m.now;
        let e = &mut self.ent[t];
        if e.throttled {
            return;
        }
        let constrained = a.deadline < a.period;
        if constrained && now >= e.deadline {
            // dl_check_constrained_dl: between deadline and next period.
            let next_period = e.deadline + a.period - a.deadline;
            if now < next_period {
                e.runtime = 0;
                self.throttle(m, cpu, t);
                return;
            }
        }
        let left = e.deadline.saturating_sub(now);
        // dl_entity_overflow, in the kernel's >>10 arithmetic.
        let overflow = (a.deadline >> 10) as u128 * ((e.runtime.max(0) as u64) >> 10) as u128
            > (left >> 10) as u128 * (a.runtime >> 10) as u128;
        if e.deadline <= now || overflow {
            if constrained && e.deadline > now {
                // update_dl_revised_wakeup: runtime = density × time left.
                e.runtime = ((a.runtime as u128 * left as u128) / a.deadline.max(1) as u128) as i64;
            } else {
                e.deadline = now + a.deadline;
                e.runtime = a.runtime as i64;
            }
        }
    }
}

impl SchedClass for Dl {
    fn name(&self) -> &'static str {
        "dl"
    }

    fn reserve_tasks(&mut self, n: usize) {
        self.ent.reserve_exact(n);
    }

    fn task_fork(&mut self, _m: &mut Machine, t: TaskId, _parent: Option<TaskId>) {
        if self.ent.len() <= t {
            self.ent.resize(t + 1, DlEnt::default());
        }
    }

    fn enqueue_task(&mut self, m: &mut Machine, cpu: CpuId, t: TaskId, flags: EnqueueFlags) {
        if flags.has(EnqueueFlags::INITIAL)
            || flags.has(EnqueueFlags::RESTORE) && self.ent[t].deadline == 0
        {
            // setup_new_dl_entity
            let a = m.tasks[t].dl;
            self.ent[t].deadline = m.now + a.deadline;
            self.ent[t].runtime = a.runtime as i64;
        } else if flags.has(EnqueueFlags::WAKEUP) {
            self.wakeup_rule(m, cpu, t);
        }
        if self.ent[t].throttled {
            // A throttled task waits for its timer (enqueue_dl_entity).
            return;
        }
        let activation = flags.has(EnqueueFlags::WAKEUP) || flags.has(EnqueueFlags::INITIAL);
        if activation {
            self.activate(m, cpu, t, true);
        } else {
            self.insert(cpu, t);
        }
    }

    fn dequeue_task(
        &mut self,
        m: &mut Machine,
        cpu: CpuId,
        t: TaskId,
        _flags: DequeueFlags,
    ) -> bool {
        if self.curr[cpu] == Some(t) {
            self.account(m, cpu);
        }
        self.remove(cpu, t);
        true
    }

    fn yield_task(&mut self, m: &mut Machine, cpu: CpuId) {
        // yield_task_dl: give up the rest of this period.
        if let Some(t) = self.curr[cpu] {
            self.account(m, cpu);
            if !self.ent[t].throttled {
                self.ent[t].runtime = 0;
                self.throttle(m, cpu, t);
            }
        }
    }

    fn wakeup_preempt(&mut self, m: &mut Machine, cpu: CpuId, t: TaskId, _flags: WakeFlags) {
        // wakeup_preempt_dl (EDF: strictly earlier deadline).
        let order = Rc::clone(&self.order);
        let preempt = order.wakeup_preempt(&DlCtx::new(self, m, cpu), t);
        if preempt {
            m.resched(cpu);
        }
    }

    fn balance(&mut self, m: &mut Machine, cpu: CpuId, _prev: Option<TaskId>) -> bool {
        // balance_dl: pull when this CPU's DEADLINE task left its queue
        // (`!on_dl_rq(&prev->dl) && dl_task(prev)`): it blocked, was
        // throttled or exited. Before `put_prev_task`, this class's current
        // task is `prev` if `prev` is a DEADLINE task.
        if self.curr[cpu].is_some_and(|p| !self.ent[p].in_tree) {
            self.pull_dl_task(m, cpu);
        }
        // sched_dl_runnable: `dl_nr_running`, which counts the fair
        // server's entity while it is on the queue (running fair tasks
        // ahead of RT; a deferred or throttled server is not queued).
        !self.tree[cpu].is_empty() || self.server_active(cpu)
    }

    fn server_update(
        &mut self,
        m: &mut Machine,
        cpu: CpuId,
        ran: super::ServerRan,
        nr_served: u32,
    ) -> super::ServerActions {
        self.server_demand[cpu] = nr_served > 0;
        let now = m.now;
        match self.server.as_mut() {
            Some(s) => s.update(cpu, now, ran, nr_served),
            None => super::ServerActions::default(),
        }
    }

    fn server_timer(
        &mut self,
        m: &mut Machine,
        cpu: CpuId,
        over_queued: bool,
    ) -> super::ServerActions {
        match self.server.as_mut() {
            Some(s) => s.timer(cpu, m.now, over_queued),
            None => super::ServerActions::default(),
        }
    }

    fn server_active(&self, cpu: CpuId) -> bool {
        self.server
            .as_ref()
            .is_some_and(|s| s.state(cpu) == server::ServerState::Active)
    }

    fn server_runs_first(&self, cpu: CpuId, served_runnable: bool) -> bool {
        if !served_runnable || !self.server_active(cpu) {
            return false;
        }
        let (deadline, runtime) = self.server.as_ref().map_or((0, 0), |s| s.entity(cpu));
        let key = self.order.key(deadline, runtime);
        // pick_task_dl: the leftmost entity; ties go to the task [choice].
        let first_task = match self.forced[cpu] {
            Some(f) if self.ent[f].in_tree => Some(self.ent[f].key.0),
            _ => self.leftmost[cpu].map(|k| k.0),
        };
        first_task.is_none_or(|k| key < k)
    }

    fn pick_task(&mut self, m: &mut Machine, cpu: CpuId) -> Option<TaskId> {
        if let Some(f) = self.forced[cpu] {
            if self.ent[f].in_tree && m.tasks[f].cpu == cpu {
                return Some(f);
            }
            self.forced[cpu] = None;
        }
        let order = Rc::clone(&self.order);
        order.pick_task(&DlCtx::new(self, m, cpu))
    }

    fn put_prev_task(&mut self, m: &mut Machine, cpu: CpuId, prev: TaskId, _next: Option<TaskId>) {
        self.account(m, cpu);
        let order = Rc::clone(&self.order);
        order.put_prev_task(&mut DlCtx::new(self, m, cpu), prev);
        self.touch(m, cpu, prev);
        self.curr[cpu] = None;
    }

    fn set_next_task(&mut self, m: &mut Machine, cpu: CpuId, next: TaskId) {
        self.forced[cpu] = None;
        self.touch(m, cpu, next);
        self.curr[cpu] = Some(next);
        self.exec_start[cpu] = m.rq_clock(cpu);
        self.push_dl_tasks(m, cpu);
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
        let d = if self.order.select_with_renewed_key() {
            // The key this wakeup will have: the CBS rule renews a passed
            // deadline with a full budget.
            let a = m.tasks[t].dl;
            let renew = flags.has(WakeFlags::FORK) || self.ent[t].deadline <= m.now;
            if renew {
                self.order.key(m.now + a.deadline, a.runtime as i64)
            } else {
                self.key_of(t)
            }
        } else {
            // select_task_rq_dl (deadline.c v6.18): a new task stays
            // (`!(flags & WF_TTWU)`), and a waking one is compared by the key
            // it has now; after its deadline passed that old key beats what
            // runs there, so it stays, the CBS rule renews it at the enqueue
            // and task_woken_dl pushes the job if it will not run
            // (`activate`). Host trace (16 CPUs, `dl32`): no DEADLINE task
            // moved at its wakeup, 5,009 pushed; selecting with the renewed
            // key, as before 2026-11-27, moved 1,260 at the wakeup.
            if flags.has(WakeFlags::FORK) {
                return fallback;
            }
            self.key_of(t)
        };
        let busy = self.curr[fallback]
            .is_some_and(|c| m.tasks[c].affinity.count() == 1 || self.ent[c].key.0 <= d)
            || self.earliest(fallback).is_some_and(|x| x <= d);
        if !busy {
            return fallback;
        }
        let maybe_free = self.queued.complement();
        let level = |c| self.earliest(c);
        Self::find_later_rq(m, level, aff, maybe_free, d, fallback, Some(waker.cpu))
            .unwrap_or(fallback)
    }

    fn migrate_task_rq(&mut self, _m: &mut Machine, _t: TaskId, _new_cpu: CpuId) {}

    fn task_tick(&mut self, m: &mut Machine, cpu: CpuId, _curr: TaskId) {
        self.account(m, cpu);
        let Some(c) = self.curr[cpu].filter(|c| self.ent[*c].in_tree) else {
            return;
        };
        let order = Rc::clone(&self.order);
        order.task_tick(&mut DlCtx::new(self, m, cpu), c);
    }

    fn reweight_task(&mut self, _m: &mut Machine, _t: TaskId) {}

    fn task_dead(&mut self, _m: &mut Machine, t: TaskId) {
        self.ent[t].gen = self.ent[t].gen.wrapping_add(1);
        self.ent[t].throttled = false;
    }

    fn update_curr(&mut self, m: &mut Machine, cpu: CpuId) {
        self.account(m, cpu);
    }

    /// Quiet while the job keeps runtime past the tick at full speed
    /// (until `exec_start + runtime`): `account` then only subtracts, and
    /// at num = den the one subtraction of the longer interval at the next
    /// event is the sum of the ticks' (at other rates each tick's division
    /// would round on its own); and while the ordering's `task_tick` does
    /// nothing (EDF).
    fn task_tick_quiet_until(&self, m: &Machine, cpu: CpuId, curr: TaskId) -> Ns {
        if self.curr[cpu] != Some(curr) || self.ent[curr].throttled {
            return 0;
        }
        if self.ent[curr].in_tree && !self.order_tick_noop {
            return 0;
        }
        let (num, den) = m.rate(cpu);
        if num != den || den == 0 {
            return 0;
        }
        match u64::try_from(self.ent[curr].runtime) {
            Ok(left) if left > 0 => self.exec_start[cpu].saturating_add(left),
            _ => 0,
        }
    }

    fn tick_balance(&mut self, _m: &mut Machine, _cpu: CpuId) {}

    fn tick_balance_quiet_until(&self, _m: &Machine, _cpu: CpuId) -> Ns {
        Ns::MAX
    }

    fn nr_runnable(&self, cpu: CpuId) -> u32 {
        self.tree[cpu].len() as u32
    }

    fn timer(&mut self, m: &mut Machine, _cpu: CpuId, tag: u64) {
        // dl_task_timer: replenish a throttled task.
        let t = (tag & 0xffff_ffff) as TaskId;
        let gen = (tag >> 32) as u32;
        if t >= self.ent.len() || self.ent[t].gen != gen || !self.ent[t].throttled {
            return;
        }
        if m.tasks[t].policy != crate::workload::Policy::Deadline {
            self.ent[t].throttled = false;
            return;
        }
        self.replenish(m, t);
    }

    fn task_debug(&self, t: TaskId) -> Vec<(&'static str, i64)> {
        let e = self.ent.get(t).copied().unwrap_or_default();
        vec![
            ("dl_deadline", e.deadline as i64),
            ("dl_runtime", e.runtime),
        ]
    }

    fn check_invariants(&self, m: &Machine) -> Result<(), String> {
        let mut n = 0;
        for (cpu, tree) in self.tree.iter().enumerate() {
            if self.leftmost[cpu] != tree.first().copied()
                || self.queued.contains(cpu) != tree.first().is_some()
            {
                return Err(format!(
                    "dl cpu {cpu}: kept leftmost {:?}, tree's first {:?}",
                    self.leftmost[cpu],
                    tree.first()
                ));
            }
            for &(d, _, t) in tree.iter() {
                n += 1;
                let e = &self.ent[t];
                if m.tasks[t].cpu != cpu || !m.tasks[t].is_queued() || e.throttled || e.key.0 != d {
                    return Err(format!(
                        "dl cpu {cpu}: task {t} misplaced (on cpu {}, queued {}, throttled {}, key {} vs {d})",
                        m.tasks[t].cpu,
                        m.tasks[t].is_queued(),
                        e.throttled,
                        e.key.0
                    ));
                }
                if self.order.exact_keys() && self.key_of(t) != d {
                    return Err(format!(
                        "dl cpu {cpu}: task {t} keyed {d}, deadline {} gives {}",
                        e.deadline,
                        self.key_of(t)
                    ));
                }
            }
        }
        if n != self.total {
            return Err(format!("dl: total {} but {n} in trees", self.total));
        }
        Ok(())
    }
}
