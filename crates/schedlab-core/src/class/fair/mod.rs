//! The fair class: CFS (Linux 6.1) and EEVDF (Linux 6.12, 6.18) behind one
//! `SchedClass` implementation (kernel/sched/fair.c).
//!
//! Shared by both versions (this file): the entity hierarchy for group
//! scheduling (linux-cfs.md §8), enqueue/dequeue walking it
//! (`enqueue_task_fair`, `dequeue_entities`), runtime accounting
//! (`update_curr`, §3), and the pick/put/set protocol
//! (`pick_task_fair`, `put_prev_task_fair`, `set_next_task_fair`) with the
//! common-ancestor optimisation of `pick_next_task_fair`.
//! Version-specific rules live in [`cfs`] and [`eevdf`]; SMP placement in
//! [`select`], load balancing in [`balance`], group shares in [`group`],
//! buddies in `buddies`, policy-ordered queues (CacULE, TT) in [`order`];
//! what a [`hooks::FairHooks`] policy asks of the class (a new weight, a
//! burst restart at sleep or yield: BORE) in `requests.rs`; the queue's
//! tree and list in `queue.rs`; load accounting and reweighting in
//! `load.rs`.

mod attach;
pub mod balance;
mod buddies;
pub mod cfs;
mod debug;
pub mod domains;
pub mod eevdf;
pub mod entity;
pub mod group;
pub mod hooks;
mod invariants;
mod load;
pub mod order;
mod queue;
mod requests;
pub mod select;
pub mod tunables;
pub mod weights;

use super::{DequeueFlags, EnqueueFlags, SchedClass, WakeFlags, Waker};
use crate::cpuset::{CpuId, CpuSet};
use crate::machine::Machine;
use crate::pelt::Pelt;
use crate::task::TaskId;
use crate::workload::Policy;
use entity::{CfsRq, Entity, RqId, SeId};
use hooks::{EntityRef, FairHooks};
use tunables::{FairParams, Version};
use weights::LoadWeight;

/// Longest entity chain: a task below the deepest task group the workload
/// parser accepts (`workload::MAX_GROUP_DEPTH`), so `chain` never truncates.
pub const MAX_DEPTH: usize = crate::workload::MAX_GROUP_DEPTH + 1;

/// An entity and its ancestors, bottom-up, without allocating.
#[derive(Debug, Clone, Copy)]
pub struct Chain {
    ids: [SeId; MAX_DEPTH],
    len: usize,
}

impl Chain {
    /// Entities bottom-up.
    pub fn as_slice(&self) -> &[SeId] {
        &self.ids[..self.len]
    }
}

impl IntoIterator for Chain {
    type Item = SeId;
    type IntoIter = std::iter::Take<std::array::IntoIter<SeId, MAX_DEPTH>>;
    fn into_iter(self) -> Self::IntoIter {
        self.ids.into_iter().take(self.len)
    }
}

/// Per task group: its queue and entity on every CPU.
#[derive(Debug, Clone)]
pub struct TgRqs {
    /// Group queue per CPU.
    pub rq: Vec<RqId>,
    /// Group entity per CPU (`None` for the root group).
    pub se: Vec<Option<SeId>>,
    /// `tg->load_avg`: Σ of the per-CPU queue contributions.
    pub load_avg: i64,
}

/// The fair scheduling class.
#[derive(Debug)]
pub struct Fair {
    /// Effective parameters.
    pub p: FairParams,
    /// Entity arena (tasks and groups).
    pub se: Vec<Entity>,
    /// Task id → entity.
    pub task_se: Vec<SeId>,
    /// Queue arena.
    pub cfs: Vec<CfsRq>,
    /// Task group queues/entities, by `Machine::groups` index.
    pub tg: Vec<TgRqs>,
    /// Runnable fair tasks per CPU, including current.
    pub cpu_tasks: Vec<Vec<TaskId>>,
    /// Per-CPU utilisation signal (running = 1024).
    pub util: Vec<Pelt>,
    /// Per-task utilisation and runnable signals, and the CPU holding them
    /// (attach.rs).
    signals: Vec<attach::TaskSignals>,
    /// Whether a fair task is current on the CPU (what `util` accumulates).
    util_busy: Vec<bool>,
    /// The CPUs whose root-queue load (`cfs.load`, its PELT) or
    /// utilisation (`util_busy`, `util`) may be non-zero: every change
    /// that can raise one adds the CPU, and `refresh_cpu_signals` takes it
    /// out once it finds all four zero. Why: the balancer of a machine
    /// without fair tasks (DEADLINE or RT only) visited every CPU of the
    /// domain twice per pass only to find nothing (issue 18).
    maybe_signals: CpuSet,
    /// Per-CPU runnable signal of the root queue (`cpu_runnable`).
    runnable: Vec<Pelt>,
    /// Load-balancing state.
    pub lb: balance::Balancer,
    /// Wakee-flip statistics per task (`wake_wide`).
    pub wakee: Vec<select::WakeeFlips>,
    seq: u64,
    /// A queue-ordering policy is in use: queues keep their list order
    /// (`CfsRq::list`, order.rs).
    ordered: bool,
    /// CFS's timeline is kept (`QueueOrder::timeline`; always without a
    /// queue-ordering policy): the vruntime tree and `min_vruntime`.
    timeline: bool,
    /// The research policy patching this class (hooks.rs); `NoHooks` for
    /// the kernel's.
    pub hooks: Box<dyn FairHooks>,
    /// Not `hooks.replaces_balancer()`, asked once: the quiet-tick
    /// horizon reads it for every ticking CPU after each state change
    /// (issue 18: a virtual call each time was 2 % of the 64-CPU
    /// global-EDF set).
    own_balancer: bool,
}

impl Fair {
    /// A fair class for `m`'s CPUs and task groups, patched by `hooks`.
    pub fn new(p: FairParams, m: &Machine, hooks: Box<dyn FairHooks>) -> Self {
        let n = m.nr_cpus();
        let stagger = p.balance_stagger.then_some(m.seed);
        let mut f = Fair {
            p,
            se: vec![],
            task_se: vec![],
            cfs: vec![],
            tg: vec![],
            cpu_tasks: vec![vec![]; n],
            util: vec![Pelt::default(); n],
            signals: vec![],
            util_busy: vec![false; n],
            maybe_signals: CpuSet::empty(),
            runnable: vec![Pelt::default(); n],
            lb: balance::Balancer::new(&m.topo, m.hz, stagger),
            wakee: vec![],
            seq: 0,
            ordered: hooks.queue_order().is_some(),
            timeline: hooks.queue_order().is_none_or(|o| o.timeline),
            own_balancer: !hooks.replaces_balancer(),
            hooks,
        };
        f.lb.set_newidle_ratio(f.p.newidle_ratio_init);
        for (g, grp) in m.groups.iter().enumerate() {
            let mut t = TgRqs {
                rq: vec![],
                se: vec![],
                load_avg: 0,
            };
            for cpu in 0..n {
                let rq = f.cfs.len();
                f.cfs.push(CfsRq::new(cpu, g));
                t.rq.push(rq);
                let se = grp.parent.map(|pg| {
                    let parent = f.tg[pg].se[cpu];
                    let mut e = Entity::new(LoadWeight::new(grp.shares), f.tg[pg].rq[cpu], m.now);
                    // A group entity starts with no load: nothing is
                    // attached to its group yet (init_entity_runnable_average
                    // sets load_avg for tasks only).
                    e.load = crate::pelt::Pelt::new(m.now, 0);
                    e.parent = parent;
                    e.my_q = Some(rq);
                    e.depth = parent.map_or(0, |p| f.se[p].depth + 1);
                    f.se.push(e);
                    f.se.len() - 1
                });
                t.se.push(se);
            }
            f.tg.push(t);
        }
        f
    }

    fn root(&self, cpu: CpuId) -> RqId {
        self.tg[0].rq[cpu]
    }

    /// Root queue of `cpu` (`rq->cfs`).
    pub fn root_rq(&self, cpu: CpuId) -> &CfsRq {
        &self.cfs[self.root(cpu)]
    }

    /// Entity chain from `se` up to the root level (`for_each_sched_entity`).
    pub fn chain(&self, se: SeId) -> Chain {
        let mut c = Chain {
            ids: [0; MAX_DEPTH],
            len: 0,
        };
        let mut s = Some(se);
        while let Some(x) = s {
            if c.len < MAX_DEPTH {
                c.ids[c.len] = x;
                c.len += 1;
            }
            s = self.se[x].parent;
        }
        c
    }

    fn cpu_of_rq(&self, rq: RqId) -> CpuId {
        self.cfs[rq].cpu
    }

    /// Point a task's entity at its group's queue on `cpu`.
    fn attach_task(&mut self, m: &Machine, t: TaskId, cpu: CpuId) {
        // A flat-queue policy (TT) puts every task in the root group.
        let g = if self.hooks.flat_runqueue() {
            0
        } else {
            m.tasks[t].group
        };
        let se = self.task_se[t];
        let parent = self.tg[g].se[cpu];
        self.se[se].cfs_rq = self.tg[g].rq[cpu];
        self.se[se].parent = parent;
        self.se[se].depth = parent.map_or(0, |p| self.se[p].depth + 1);
    }

    // ---- runtime accounting --------------------------------------------

    /// `update_curr`: charge the running entity of `rq` up to now.
    pub fn update_curr(&mut self, m: &mut Machine, rq: RqId) {
        let Some(c) = self.cfs[rq].curr else { return };
        let now = m.rq_clock(self.cfs[rq].cpu);
        let e = &mut self.se[c];
        if now <= e.exec_start {
            return;
        }
        let delta = now - e.exec_start;
        e.exec_start = now;
        e.sum_exec += delta;
        let task = e.task;
        if let Some(t) = task {
            self.hooks.update_curr(m, t, delta);
            self.apply_requested_weight(m, t);
        }
        // BORE reweights in update_curr before the charge (hooks above);
        // 1.7.3 scales the vruntime rate (`vruntime_delta`).
        let mut vdelta = weights::calc_delta_fair(delta, self.se[c].lw);
        if let (Some(t), Version::Cfs) = (task, self.p.version) {
            vdelta = self.hooks.vruntime_delta(t, vdelta);
        }
        self.se[c].vruntime += vdelta as i64;
        let curr = EntityRef {
            se: c,
            task,
            is_curr: true,
        };
        self.hooks.entity_update_curr(m, curr, delta, vdelta);
        match self.p.version {
            Version::Cfs => self.update_min_vruntime(rq),
            Version::Eevdf => self.eevdf_update_curr_tail(m, rq, c),
        }
    }

    fn update_curr_chain(&mut self, m: &mut Machine, t: TaskId) {
        let mut up = Some(self.task_se[t]);
        while let Some(s) = up {
            let rq = self.se[s].cfs_rq;
            self.update_curr(m, rq);
            up = self.se[s].parent;
        }
    }

    // ---- enqueue / dequeue ----------------------------------------------

    fn enqueue_entity(&mut self, m: &mut Machine, rq: RqId, se: SeId, flags: EnqueueFlags) {
        match self.p.version {
            Version::Cfs => self.cfs_enqueue_entity(m, rq, se, flags),
            Version::Eevdf => self.eevdf_enqueue_entity(m, rq, se, flags),
        }
        self.se[se].on_rq = true;
    }

    fn dequeue_entity(&mut self, m: &mut Machine, rq: RqId, se: SeId, flags: DequeueFlags) -> bool {
        match self.p.version {
            Version::Cfs => {
                self.cfs_dequeue_entity(m, rq, se, flags);
                true
            }
            Version::Eevdf => self.eevdf_dequeue_entity(m, rq, se, flags),
        }
    }

    /// Update the weights of the group entities above `se` (`update_cfs_group`).
    fn update_groups_above(&mut self, m: &mut Machine, se: SeId) {
        let mut s = self.se[se].parent;
        while let Some(x) = s {
            self.update_cfs_group(m, x);
            s = self.se[x].parent;
        }
    }

    fn h_nr_add(&mut self, m: &Machine, se: SeId, delta: i32) {
        let mut up = Some(se);
        while let Some(s) = up {
            let rq = self.se[s].cfs_rq;
            if self.se[s].parent.is_none() {
                // The root queue: close the runnable signal's interval at
                // the old count (`update_load_avg` before the change).
                let cpu = self.cfs[rq].cpu;
                self.cpu_runnable(m, cpu);
            }
            let h = &mut self.cfs[rq].h_nr_running;
            *h = (*h as i32 + delta) as u32;
            up = self.se[s].parent;
        }
    }

    /// A pick found delayed entity `se`: finish its dequeue (linux-eevdf.md
    /// §8, `pick_next_entity`); the caller picks again.
    fn reap_delayed(&mut self, m: &mut Machine, se: SeId) {
        self.dequeue_entities(m, se, DequeueFlags::SLEEP | DequeueFlags::DELAYED);
        if let Some(t) = self.se[se].task {
            m.note_delayed_dequeue_done(t);
        }
    }

    /// `dequeue_entities` from `se` upwards. Returns false if the first
    /// entity's dequeue was delayed.
    fn dequeue_entities(&mut self, m: &mut Machine, se: SeId, flags: DequeueFlags) -> bool {
        let task_sleep = flags.has(DequeueFlags::SLEEP);
        let mut fl = flags;
        let mut s = Some(se);
        let mut first = true;
        while let Some(x) = s {
            let rq = self.se[x].cfs_rq;
            if !self.dequeue_entity(m, rq, x, fl) {
                return !first;
            }
            first = false;
            if self.cfs[rq].load > 0 {
                let parent = self.se[x].parent;
                if let (true, Some(p)) = (task_sleep, parent) {
                    if self.se[p].on_rq && !self.se[p].idle {
                        self.set_next_buddy(p);
                    }
                }
                break;
            }
            fl = DequeueFlags(
                (fl.0 | DequeueFlags::SLEEP.0)
                    & !(DequeueFlags::DELAYED.0 | DequeueFlags::SPECIAL.0),
            );
            s = self.se[x].parent;
        }
        self.update_groups_above(m, se);
        true
    }

    fn remove_cpu_task(&mut self, cpu: CpuId, t: TaskId) {
        if let Some(i) = self.cpu_tasks[cpu].iter().position(|x| *x == t) {
            self.cpu_tasks[cpu].swap_remove(i);
        }
    }

    // ---- pick / put / set -------------------------------------------------

    fn put_prev_entity(&mut self, m: &mut Machine, rq: RqId, se: SeId) {
        if self.se[se].on_rq {
            self.update_curr(m, rq);
            self.cfs[rq].curr = None;
            self.tree_insert(rq, se);
        } else {
            self.cfs[rq].curr = None;
        }
    }

    fn set_next_entity(&mut self, m: &mut Machine, rq: RqId, se: SeId) {
        self.clear_buddies(rq, se);
        if self.se[se].on_rq {
            self.tree_remove(rq, se);
            if self.p.version == Version::Eevdf {
                self.set_protect_slice(rq, se);
            }
        }
        self.cfs[rq].curr = Some(se);
        let now = m.rq_clock(self.cfs[rq].cpu);
        let e = &mut self.se[se];
        e.exec_start = now;
        e.prev_sum_exec = e.sum_exec;
        let next = EntityRef {
            se,
            task: e.task,
            is_curr: true,
        };
        self.hooks.entity_set_next(m, next);
    }

    fn pick_next_entity(&mut self, m: &mut Machine, rq: RqId) -> Option<SeId> {
        match self.p.version {
            Version::Cfs => match self.queue_order() {
                Some(order) => self.ordered_pick(m, rq, order),
                None => self.cfs_pick_next_entity(rq),
            },
            Version::Eevdf => self.eevdf_pick_next_entity(m, rq),
        }
    }

    fn util_update(&mut self, m: &Machine, cpu: CpuId, busy_now: bool) {
        let v = if self.util_busy[cpu] { 1024 } else { 0 };
        self.util[cpu].update(m.now, v);
        if busy_now && !self.util_busy[cpu] {
            // (Busy already: added then, and not taken out since.)
            self.maybe_signals.insert(cpu);
        }
        self.util_busy[cpu] = busy_now;
    }

    /// `find_matching_se`: walk both entities up to siblings of one queue.
    fn find_matching_se(&self, mut se: SeId, mut pse: SeId) -> (SeId, SeId) {
        while self.se[se].depth > self.se[pse].depth {
            se = self.se[se].parent.unwrap_or(se);
        }
        while self.se[pse].depth > self.se[se].depth {
            pse = self.se[pse].parent.unwrap_or(pse);
        }
        while self.se[se].cfs_rq != self.se[pse].cfs_rq {
            match (self.se[se].parent, self.se[pse].parent) {
                (Some(a), Some(b)) => {
                    se = a;
                    pse = b;
                }
                _ => break,
            }
        }
        (se, pse)
    }
}

impl SchedClass for Fair {
    fn name(&self) -> &'static str {
        "fair"
    }

    fn reserve_tasks(&mut self, n: usize) {
        self.se.reserve_exact(n);
        self.task_se.reserve_exact(n);
        self.wakee.reserve_exact(n);
        self.signals.reserve_exact(n);
    }

    fn task_fork(&mut self, m: &mut Machine, t: TaskId, parent: Option<TaskId>) {
        let cpu = m.tasks[t].cpu;
        let mut e = Entity::new(LoadWeight::new(m.tasks[t].weight), 0, m.now);
        e.task = Some(t);
        e.slice = self.p.base_slice;
        self.se.push(e);
        if self.task_se.len() <= t {
            self.task_se.resize(t + 1, 0);
            self.wakee.resize(t + 1, select::WakeeFlips::default());
        }
        self.signals_fork(m, t);
        self.task_se[t] = self.se.len() - 1;
        self.refresh_task_params(m, t);
        self.attach_task(m, t, cpu);
        if self.p.version == Version::Cfs {
            self.cfs_task_fork(m, t, parent);
        }
        self.hooks.task_fork(m, t, parent);
        self.apply_requested_weight(m, t);
    }

    fn enqueue_task(&mut self, m: &mut Machine, cpu: CpuId, t: TaskId, flags: EnqueueFlags) {
        let se0 = self.task_se[t];
        if flags.has(EnqueueFlags::DELAYED) {
            self.requeue_delayed_entity(m, se0);
            self.signals_enqueue(m, t, cpu);
            self.h_nr_add(m, se0, 1);
            self.cpu_tasks[cpu].push(t);
            self.update_groups_above(m, se0);
            return;
        }
        self.attach_task(m, t, cpu);
        if flags.has(EnqueueFlags::WAKEUP) {
            self.hooks.task_wakeup(m, t);
        }
        self.hooks.task_enqueue(m, t, flags);
        let mut fl = flags;
        let mut s = Some(se0);
        while let Some(x) = s {
            if self.se[x].on_rq {
                if self.se[x].delayed {
                    self.requeue_delayed_entity(m, x);
                }
                break;
            }
            if self.p.version == Version::Eevdf {
                if let Some(q) = self.se[x].my_q {
                    // Group entities request their queue's smallest slice (6.12).
                    self.se[x].slice = self.cfs_rq_min_slice(q);
                    self.se[x].custom_slice = true;
                }
            }
            let rq = self.se[x].cfs_rq;
            self.enqueue_entity(m, rq, x, fl);
            fl = EnqueueFlags::WAKEUP;
            s = self.se[x].parent;
        }
        self.signals_enqueue(m, t, cpu);
        self.h_nr_add(m, se0, 1);
        self.update_groups_above(m, se0);
        self.cpu_tasks[cpu].push(t);
    }

    fn dequeue_task(
        &mut self,
        m: &mut Machine,
        cpu: CpuId,
        t: TaskId,
        flags: DequeueFlags,
    ) -> bool {
        let se0 = self.task_se[t];
        if flags.has(DequeueFlags::SLEEP) {
            self.task_sleep_hooks(m, cpu, t);
        }
        let was_delayed = self.se[se0].delayed;
        let done = self.dequeue_entities(m, se0, flags);
        if !was_delayed {
            self.signals_dequeue(m, t);
            self.h_nr_add(m, se0, -1);
            self.remove_cpu_task(cpu, t);
        }
        done
    }

    fn yield_task(&mut self, m: &mut Machine, cpu: CpuId) {
        let Some(t) = m.rqs[cpu].curr else { return };
        self.task_yield_hooks(m, t);
        if m.rqs[cpu].nr_running <= 1 {
            return;
        }
        let se = self.task_se[t];
        let rq = self.se[se].cfs_rq;
        self.clear_buddies(rq, se);
        let nr_queued = self.root_rq(cpu).h_nr_running;
        self.hooks.task_yield(m, t, nr_queued);
        match self.p.version {
            Version::Cfs => {
                if m.tasks[t].policy != Policy::Batch {
                    self.update_curr(m, rq);
                }
                self.set_buddy(se, 2);
            }
            Version::Eevdf => {
                self.update_curr(m, rq);
                self.eevdf_yield(rq, se);
            }
        }
    }

    fn wakeup_preempt(&mut self, m: &mut Machine, cpu: CpuId, t: TaskId, flags: WakeFlags) {
        let Some(curr) = m.rqs[cpu].curr else {
            m.resched(cpu);
            return;
        };
        match self.p.version {
            Version::Cfs => self.cfs_check_preempt_wakeup(m, cpu, curr, t, flags),
            Version::Eevdf => self.eevdf_check_preempt_wakeup(m, cpu, curr, t, flags),
        }
    }

    fn balance(&mut self, m: &mut Machine, cpu: CpuId, _prev: Option<TaskId>) -> bool {
        // balance_fair: with a task here, nothing to do; else the newly
        // idle balance (sched_balance_newidle).
        if self.root_rq(cpu).h_nr_running > 0 {
            return true;
        }
        if !self.own_balancer {
            self.hooks.newidle_balance(m, cpu, &self.cpu_tasks);
        } else {
            self.newidle_balance(m, cpu);
        }
        false
    }

    fn pick_task(&mut self, m: &mut Machine, cpu: CpuId) -> Option<TaskId> {
        'again: loop {
            let mut rq = self.root(cpu);
            if self.cfs[rq].nr_running == 0 {
                return None;
            }
            loop {
                if let Some(c) = self.cfs[rq].curr {
                    if self.se[c].on_rq {
                        self.update_curr(m, rq);
                    }
                }
                let se = self.pick_next_entity(m, rq)?;
                if self.se[se].delayed {
                    self.reap_delayed(m, se);
                    continue 'again;
                }
                match self.se[se].my_q {
                    Some(q) => rq = q,
                    None => {
                        let next = self.se[se].task?;
                        self.prefetch_set_next(next, se);
                        self.hooks.picked(m, cpu, m.rqs[cpu].curr, next);
                        return Some(next);
                    }
                }
            }
        }
    }

    fn put_prev_task(&mut self, m: &mut Machine, cpu: CpuId, prev: TaskId, next: Option<TaskId>) {
        // Queues on next's path: put_prev stops where the two paths meet
        // (pick_next_task_fair's common-ancestor walk). Only when next is a
        // queued fair task: every task has a fair entity (set up at fork),
        // and walking an RT or ext task's path would leave prev's group
        // entities current in their queues.
        let next_se = next
            .and_then(|n| self.task_se.get(n).copied())
            .filter(|s| self.se[*s].on_rq && self.cpu_of_rq(self.se[*s].cfs_rq) == cpu);
        // (Parents are read as the walks go, not copied into a `Chain`
        // first: put_prev runs at every switch; nothing here reparents.)
        let on_next_path = |me: &Self, rq: RqId| {
            let mut up = next_se;
            while let Some(s) = up {
                if me.se[s].cfs_rq == rq {
                    return true;
                }
                up = me.se[s].parent;
            }
            false
        };
        let mut up = Some(self.task_se[prev]);
        while let Some(s) = up {
            let rq = self.se[s].cfs_rq;
            self.put_prev_entity(m, rq, s);
            if on_next_path(self, rq) {
                break;
            }
            up = self.se[s].parent;
        }
        self.signals_put_prev(m, prev);
        // `util` is the fair tasks' (cpu_util_cfs): busy only if next is a
        // queued fair task of this CPU.
        self.util_update(m, cpu, next_se.is_some());
    }

    fn set_next_task(&mut self, m: &mut Machine, cpu: CpuId, next: TaskId) {
        let chain = self.chain(self.task_se[next]);
        for &s in chain.as_slice().iter().rev() {
            let rq = self.se[s].cfs_rq;
            if self.cfs[rq].curr != Some(s) {
                self.set_next_entity(m, rq, s);
            }
        }
        self.signals_set_next(m, next);
        self.util_update(m, cpu, true);
    }

    fn prefetch_wakeup(&self, t: TaskId) {
        self.prefetch_wakee(t);
    }

    fn select_task_rq(
        &mut self,
        m: &mut Machine,
        t: TaskId,
        prev_cpu: CpuId,
        flags: WakeFlags,
        waker: Waker,
    ) -> CpuId {
        self.select_task_rq_fair(m, t, prev_cpu, flags, waker)
    }

    fn migrate_task_rq(&mut self, m: &mut Machine, t: TaskId, _new_cpu: CpuId) {
        if self.p.version == Version::Cfs && !m.tasks[t].is_queued() {
            // migrate_task_rq_fair: a waking task leaves its old queue's frame.
            let se = self.task_se[t];
            let rq = self.se[se].cfs_rq;
            self.se[se].vruntime -= self.cfs[rq].min_vruntime;
        }
    }

    fn task_tick(&mut self, m: &mut Machine, _cpu: CpuId, curr: TaskId) {
        let mut up = Some(self.task_se[curr]);
        while let Some(s) = up {
            up = self.se[s].parent;
            let rq = self.se[s].cfs_rq;
            self.update_curr(m, rq);
            self.rq_pelt(m, rq);
            if self.se[s].my_q.is_some() {
                self.update_cfs_group(m, s);
            }
            if self.p.version == Version::Cfs && self.cfs[rq].nr_running > 1 {
                match self.queue_order() {
                    Some(order) => self.ordered_check_preempt_tick(m, rq, s, order),
                    None => self.cfs_check_preempt_tick(m, rq, s),
                }
            }
        }
    }

    fn reweight_task(&mut self, m: &mut Machine, t: TaskId) {
        self.refresh_task_params(m, t);
        let se = self.task_se[t];
        let w = m.tasks[t].weight;
        self.reweight_entity(m, se, w);
    }

    fn task_dead(&mut self, m: &mut Machine, t: TaskId) {
        let se = self.task_se[t];
        self.se[se].on_rq = false;
        self.signals_dead(m, t);
    }

    fn task_stopped(&mut self, m: &mut Machine, cpu: CpuId, t: TaskId, ran: crate::clock::Ns) {
        if let Some(w) = self.hooks.stopping(m, cpu, t, ran) {
            if w != m.tasks[t].weight {
                m.set_weight(t, w);
                self.reweight_task(m, t);
            }
        }
    }

    fn effective_weight(&self, m: &Machine, process: usize, policy: Policy, base: u64) -> u64 {
        if policy == Policy::Idle {
            return base;
        }
        self.hooks
            .effective_weight(base, m.processes[process].live, m.online.count())
    }

    fn weights_track_threads(&self) -> bool {
        self.hooks.thread_count_aware()
    }

    fn lazy_resched(&self) -> bool {
        true
    }

    fn update_curr(&mut self, m: &mut Machine, cpu: CpuId) {
        if let Some(t) = m.rqs[cpu].curr {
            self.update_curr_chain(m, t);
        }
    }

    fn tick_balance(&mut self, m: &mut Machine, cpu: CpuId) {
        if !self.own_balancer {
            self.hooks.tick_balance(m, cpu, &self.cpu_tasks);
        } else {
            self.periodic_balance(m, cpu);
        }
    }

    fn tick_balance_quiet_until(&self, m: &Machine, cpu: CpuId) -> crate::clock::Ns {
        if !self.own_balancer {
            return 0;
        }
        self.periodic_balance_quiet_until(m, cpu)
    }

    fn tick_balance_private(&self, _m: &Machine) -> bool {
        // No fair load or utilisation anywhere (a queued task has load): a
        // pass refreshes no signal and ends balanced (`nothing_to_pull`),
        // moving next balance and intervals, and the LLC's scan depth to
        // the one value a sum of zero gives.
        self.own_balancer && self.maybe_signals.is_empty()
    }

    fn tick_balance_may_be_private(&self) -> bool {
        self.own_balancer
    }

    fn balance_state_digest(&self) -> u64 {
        self.lb.state_digest()
    }

    fn nr_runnable(&self, cpu: CpuId) -> u32 {
        self.root_rq(cpu).h_nr_running
    }

    fn cpus_changed(&mut self, m: &mut Machine) {
        self.lb = balance::Balancer::for_online(&m.topo, m.hz, m.online);
    }

    fn check_invariants(&self, m: &Machine) -> Result<(), String> {
        self.invariants(m)
    }

    fn task_debug(&self, t: TaskId) -> Vec<(&'static str, i64)> {
        let mut v = Vec::new();
        self.debug_values(t, &mut v);
        v
    }

    fn task_debug_into(&self, t: TaskId, out: &mut Vec<(&'static str, i64)>) {
        self.debug_values(t, out);
    }
}
