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
//! EDF approximation") is followed: a waking task goes to a CPU without DL
//! work, else to the one whose earliest deadline is latest and later than
//! its own (`find_later_rq`); after each pick the earliest waiting task is
//! pushed to such a CPU; a CPU about to pick pulls the earliest waiting task
//! of another CPU if it beats everything queued here and would not preempt
//! its own CPU. Net effect: the M earliest deadlines run (global EDF), so the
//! Dhall effect shows.
//!
//! The ordering is pluggable ([`DlPolicy`], seed-algorithms.md §2), keeping
//! CBS, push/pull and admission: `edf` orders by absolute deadline (the
//! kernel); `llf` and `illf` by laxity S = d − t − R, with R the remaining
//! runtime of the job (its CBS budget). Since S = (d − R) − t for every job,
//! ordering by the key d − R ("latest start time") is ordering by laxity at
//! any instant; a waiting job's key is constant and a running job's grows,
//! which is exactly "a waiting job's laxity decreases, a running job's is
//! constant". `llf` re-keys the running job at every tick and switches as
//! soon as a waiting job has less laxity (plus at activations); `illf`
//! follows the seed's four rules: (1) the running job is re-keyed only when
//! a job is activated on its CPU or the current job finishes; (2) at a tick
//! only the least-laxity waiting job is checked; (3) switches happen only at
//! an activation, when a waiting job reaches zero laxity, or when the
//! current job finishes; (4) the swap rule at activation and at pick: with
//! K the job that would run and Q the one that wants to (the activated job,
//! or the second least laxity at pick), if K is big (R_K > S_K), Q is small
//! (R_Q ≤ S_Q), R_K > S_Q and R_Q ≤ S_K, Q runs. Where the seed is silent
//! (marked [choice] in the code): ties go to the earlier-queued job (rb-tree
//! insertion order); when rule 4 does not fire at an activation, the job of
//! least laxity of {K, Q} runs; migration is the kernel's push/pull with the
//! laxity key, as the seed keeps Linux 3.14's DL-class structure.
//!
//! Admission control (`sched_dl_overflow`) lives in the engine, which sees
//! every task. Simplifications (docs/model.md): no GRUB reclaiming
//! (SCHED_FLAG_RECLAIM), no inactive timer / 0-lag bookkeeping, no
//! DL-server entities in the tree (the 6.12 fair server is modelled in
//! engine/server.rs and ranks below DL tasks); throttling is detected at
//! `update_curr` points (ticks, switches), as without HRTICK_DL.

use super::{DequeueFlags, EnqueueFlags, SchedClass, WakeFlags, Waker};
use crate::clock::Ns;
pub use crate::config::DlPolicy;
use crate::cpuset::CpuId;
use crate::machine::{Machine, MigrationKind};
use crate::task::TaskId;
use std::collections::BTreeSet;

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
}

/// The deadline class.
#[derive(Debug)]
pub struct Dl {
    policy: DlPolicy,
    /// ILLF rule 4 on (tunable `illf_swap_rule`; off for ablation).
    swap_rule: bool,
    /// Per CPU: the task the next pick must return (ILLF rules 3b and 4).
    forced: Vec<Option<TaskId>>,
    ent: Vec<DlEnt>,
    /// Per CPU: (deadline, sequence, task) of queued, unthrottled tasks.
    tree: Vec<BTreeSet<(Ns, u64, TaskId)>>,
    /// Per CPU: the DL task running there.
    curr: Vec<Option<TaskId>>,
    exec_start: Vec<Ns>,
    seq: u64,
    /// Tasks in all trees (push/pull are skipped without any).
    total: usize,
}

impl Dl {
    /// A deadline class for the CPUs of `m`, ordering tasks by `policy`.
    pub fn new(m: &Machine, policy: DlPolicy, swap_rule: bool) -> Self {
        let n = m.nr_cpus();
        Dl {
            policy,
            swap_rule,
            forced: vec![None; n],
            ent: vec![],
            tree: vec![BTreeSet::new(); n],
            curr: vec![None; n],
            exec_start: vec![0; n],
            seq: 0,
            total: 0,
        }
    }

    /// Absolute deadline of `t` (for tests and reports).
    pub fn deadline(&self, t: TaskId) -> Ns {
        self.ent[t].deadline
    }

    /// Ordering key: the deadline (EDF) or the latest start time d − R
    /// (LLF, ILLF: laxity = key − now).
    fn key_of(&self, t: TaskId) -> Ns {
        let e = &self.ent[t];
        match self.policy {
            DlPolicy::Edf => e.deadline,
            DlPolicy::Llf | DlPolicy::Illf => e.deadline.saturating_sub(e.runtime.max(0) as Ns),
        }
    }

    /// Laxity S = key − now (negative: the job can no longer make it).
    fn laxity(&self, t: TaskId, now: Ns) -> i64 {
        self.key_of(t) as i64 - now as i64
    }

    /// Remaining runtime R.
    fn remaining(&self, t: TaskId) -> i64 {
        self.ent[t].runtime.max(0)
    }

    /// Re-insert `t` under its current key (laxity recomputation).
    fn rekey(&mut self, cpu: CpuId, t: TaskId) {
        if self.ent[t].in_tree && self.ent[t].key.0 != self.key_of(t) {
            self.remove(cpu, t);
            self.insert(cpu, t);
        }
    }

    /// ILLF rule 4: should `q` run instead of `k`?
    fn swap(&self, k: TaskId, q: TaskId, now: Ns) -> bool {
        if !self.swap_rule {
            return false;
        }
        let (rk, sk) = (self.remaining(k), self.laxity(k, now));
        let (rq, sq) = (self.remaining(q), self.laxity(q, now));
        rk > sk && rq <= sq && rk > sq && rq <= sk
    }

    fn insert(&mut self, cpu: CpuId, t: TaskId) {
        if self.ent[t].in_tree {
            return;
        }
        self.seq += 1;
        let key = (self.key_of(t), self.seq);
        self.ent[t].key = key;
        self.ent[t].in_tree = true;
        self.tree[cpu].insert((key.0, key.1, t));
        self.total += 1;
    }

    fn remove(&mut self, cpu: CpuId, t: TaskId) {
        if !self.ent[t].in_tree {
            return;
        }
        let key = self.ent[t].key;
        self.tree[cpu].remove(&(key.0, key.1, t));
        self.ent[t].in_tree = false;
        self.total -= 1;
    }

    /// Earliest deadline queued on `cpu` (running task included), if any.
    fn earliest(&self, cpu: CpuId) -> Option<Ns> {
        self.tree[cpu].first().map(|k| k.0)
    }

    /// The earliest waiting (queued, not running) task of `cpu` allowed on
    /// `dst` (None: any other CPU).
    fn pushable(&self, m: &Machine, cpu: CpuId, dst: Option<CpuId>) -> Option<TaskId> {
        self.tree[cpu].iter().map(|k| k.2).find(|&t| {
            let running = self.curr[cpu] == Some(t) || m.rqs[cpu].curr == Some(t);
            let aff = m.tasks[t].affinity;
            let ok = match dst {
                Some(d) => aff.contains(d),
                None => aff.count() > 1,
            };
            !running && ok
        })
    }

    /// Earliest deadline per CPU (None: no DL work), the `cpudl` heap.
    fn levels(&self) -> Vec<Option<Ns>> {
        (0..self.tree.len()).map(|c| self.earliest(c)).collect()
    }

    /// `find_later_rq`: a CPU without DL work (prefer `prefer`, then
    /// `waker`, then the lowest), else the one whose earliest deadline is
    /// latest and later than `deadline`.
    fn find_later_rq(
        levels: &[Option<Ns>],
        aff: crate::cpuset::CpuSet,
        deadline: Ns,
        prefer: CpuId,
        waker: Option<CpuId>,
    ) -> Option<CpuId> {
        let free = |c: CpuId| aff.contains(c) && levels[c].is_none();
        if free(prefer) {
            return Some(prefer);
        }
        if let Some(w) = waker.filter(|w| free(*w)) {
            return Some(w);
        }
        if let Some(c) = aff.iter().find(|c| free(*c)) {
            return Some(c);
        }
        aff.iter()
            .filter_map(|c| levels[c].map(|d| (d, c)))
            .filter(|(d, _)| *d > deadline)
            .max_by_key(|(d, c)| (*d, std::cmp::Reverse(*c)))
            .map(|(_, c)| c)
    }

    /// `push_dl_tasks`: waiting tasks of `cpu` that will not run here go to
    /// CPUs where they would run.
    fn push_dl_tasks(&mut self, m: &mut Machine, cpu: CpuId) {
        let running = |t: TaskId| self.curr[cpu] == Some(t) || m.rqs[cpu].curr == Some(t);
        let waiting: Vec<(Ns, TaskId)> = self.tree[cpu]
            .iter()
            .filter(|k| !running(k.2))
            .map(|k| (k.0, k.2))
            .collect();
        if waiting.is_empty() {
            return;
        }
        let mut levels = self.levels();
        // Key of the DL task that will run here.
        let mut here = self.curr[cpu].map(|c| self.ent[c].key.0);
        for (d, t) in waiting {
            if here.is_none_or(|h| d < h) {
                // It runs here (first) or preempts what runs here.
                here = Some(d);
                m.resched(cpu);
                continue;
            }
            let aff = m.tasks[t].affinity;
            levels[cpu] = here;
            match Self::find_later_rq(&levels, aff, d, cpu, None) {
                Some(dst) if dst != cpu => {
                    m.request_migration(t, dst, MigrationKind::Balance);
                    levels[dst] = Some(d);
                }
                _ => return,
            }
        }
    }

    /// `pull_dl_task`: take the earliest waiting task of another CPU that
    /// beats everything queued here and would not preempt its own CPU.
    fn pull_dl_task(&mut self, m: &mut Machine, cpu: CpuId) {
        if self.total == self.tree[cpu].len() {
            return;
        }
        let dmin = self.earliest(cpu).unwrap_or(Ns::MAX);
        let mut best: Option<(Ns, TaskId)> = None;
        for src in (0..m.nr_cpus()).filter(|s| *s != cpu) {
            let Some(t) = self.pushable(m, src, Some(cpu)) else {
                continue;
            };
            let d = self.ent[t].key.0;
            let src_curr = self.curr[src].map_or(Ns::MAX, |c| self.ent[c].key.0);
            if d < dmin && d >= src_curr && best.is_none_or(|(bd, _)| d < bd) {
                best = Some((d, t));
            }
        }
        if let Some((_, t)) = best {
            m.request_migration(t, cpu, MigrationKind::Balance);
        }
    }

    /// `update_curr_dl`: charge the running task's (scaled) time.
    fn account(&mut self, m: &mut Machine, cpu: CpuId) {
        let now = m.now;
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
        let scaled = (delta as u128 * num as u128 / den.max(1) as u128) as i64;
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
                // A job released by its replenishment is an activation.
                self.activate(m, cpu, t);
            }
        }
    }

    /// A job of `t` becomes ready on `cpu` (wakeup or replenishment).
    fn activate(&mut self, m: &mut Machine, cpu: CpuId, t: TaskId) {
        if self.policy != DlPolicy::Edf {
            // LLF, ILLF rule 1a: the running job's laxity is recomputed.
            if let Some(c) = self.curr[cpu] {
                self.account(m, cpu);
                self.rekey(cpu, c);
            }
        }
        self.insert(cpu, t);
        if self.policy == DlPolicy::Illf {
            // Rules 3a + 4 with K = the running job, Q = the activated one.
            if let Some(k) = self.curr[cpu].filter(|c| self.ent[*c].in_tree) {
                let k = self.forced[cpu]
                    .filter(|f| self.ent[*f].in_tree)
                    .unwrap_or(k);
                // [choice] without a swap, the least laxity of {K, Q} runs.
                if self.swap(k, t, m.now) || self.ent[t].key < self.ent[k].key {
                    self.forced[cpu] = Some(t);
                    m.resched(cpu);
                }
                if self.forced[cpu] == Some(t) {
                    return;
                }
            }
        }
        // task_woken_dl: a job that will not run here is pushed elsewhere.
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
            self.activate(m, cpu, t);
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
        // wakeup_preempt_dl: strictly earlier deadline (smaller key). ILLF
        // decided at enqueue.
        if self.policy == DlPolicy::Illf {
            return;
        }
        if let Some(c) = m.rqs[cpu].curr {
            if self.ent[t].in_tree && self.ent[t].key < self.ent[c].key {
                m.resched(cpu);
            }
        }
    }

    fn balance(&mut self, m: &mut Machine, cpu: CpuId) {
        self.pull_dl_task(m, cpu);
    }

    fn pick_task(&mut self, m: &mut Machine, cpu: CpuId) -> Option<TaskId> {
        if let Some(f) = self.forced[cpu] {
            if self.ent[f].in_tree && m.tasks[f].cpu == cpu {
                return Some(f);
            }
            self.forced[cpu] = None;
        }
        if self.policy == DlPolicy::Illf {
            // Rule 3: the running job keeps the CPU unless a switch point
            // (activation, zero laxity: `forced`) or its finish came.
            if let Some(c) = self.curr[cpu].filter(|c| self.ent[*c].in_tree) {
                return Some(c);
            }
            // Rule 4 at pick: K = least laxity, Q = second least.
            let mut it = self.tree[cpu].iter().map(|k| k.2);
            let k = it.next()?;
            return Some(match it.next() {
                Some(q) if self.swap(k, q, m.now) => q,
                _ => k,
            });
        }
        self.tree[cpu].first().map(|k| k.2)
    }

    fn put_prev_task(&mut self, m: &mut Machine, cpu: CpuId, prev: TaskId, _next: Option<TaskId>) {
        self.account(m, cpu);
        if self.policy == DlPolicy::Llf {
            // A preempted job waits with its current laxity.
            self.rekey(cpu, prev);
        }
        self.curr[cpu] = None;
    }

    fn set_next_task(&mut self, m: &mut Machine, cpu: CpuId, next: TaskId) {
        self.forced[cpu] = None;
        self.curr[cpu] = Some(next);
        self.exec_start[cpu] = m.now;
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
        // The deadline this wakeup will have: the CBS rule renews a passed
        // one (the kernel selects with the old value and corrects by push).
        let a = m.tasks[t].dl;
        let e = self.ent[t];
        let renew = flags.has(WakeFlags::FORK) || e.deadline <= m.now;
        let d = match (self.policy, renew) {
            (DlPolicy::Edf, true) => m.now + a.deadline,
            (DlPolicy::Edf, false) => e.deadline,
            (_, true) => (m.now + a.deadline).saturating_sub(a.runtime),
            (_, false) => self.key_of(t),
        };
        let busy = self.curr[fallback]
            .is_some_and(|c| m.tasks[c].affinity.count() == 1 || self.ent[c].key.0 <= d)
            || self.earliest(fallback).is_some_and(|x| x <= d);
        if !busy {
            return fallback;
        }
        match Self::find_later_rq(&self.levels(), aff, d, fallback, Some(waker.cpu)) {
            Some(c) => c,
            None => fallback,
        }
    }

    fn migrate_task_rq(&mut self, _m: &mut Machine, _t: TaskId, _new_cpu: CpuId) {}

    fn task_tick(&mut self, m: &mut Machine, cpu: CpuId, _curr: TaskId) {
        self.account(m, cpu);
        let Some(c) = self.curr[cpu].filter(|c| self.ent[*c].in_tree) else {
            return;
        };
        match self.policy {
            DlPolicy::Edf => {}
            DlPolicy::Llf => {
                // Laxity re-evaluated every tick: switch as soon as a waiting
                // job (here, or waiting elsewhere) has less laxity.
                self.rekey(cpu, c);
                let key = self.ent[c].key;
                let local = self.tree[cpu].first().is_some_and(|k| k.2 != c);
                let remote = (0..m.nr_cpus()).filter(|s| *s != cpu).any(|s| {
                    self.pushable(m, s, Some(cpu)).is_some_and(|t| {
                        self.ent[t].key < key && self.curr[s].is_some_and(|x| x != t)
                    })
                });
                if local || remote {
                    m.resched(cpu);
                }
            }
            DlPolicy::Illf => {
                // Rules 2 + 3b: only the least-laxity waiting job is looked at.
                let l = self.tree[cpu].iter().map(|k| k.2).find(|t| *t != c);
                if let Some(l) = l.filter(|l| self.laxity(*l, m.now) <= 0) {
                    self.forced[cpu] = Some(l);
                    m.resched(cpu);
                }
            }
        }
    }

    fn reweight_task(&mut self, _m: &mut Machine, _t: TaskId) {}

    fn task_dead(&mut self, _m: &mut Machine, t: TaskId) {
        self.ent[t].gen = self.ent[t].gen.wrapping_add(1);
        self.ent[t].throttled = false;
    }

    fn update_curr(&mut self, m: &mut Machine, cpu: CpuId) {
        self.account(m, cpu);
    }

    fn tick_balance(&mut self, _m: &mut Machine, _cpu: CpuId) {}

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
            for &(d, _, t) in tree {
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
                if self.policy == DlPolicy::Edf && e.deadline != d {
                    return Err(format!(
                        "dl cpu {cpu}: task {t} keyed {d}, deadline {}",
                        e.deadline
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
