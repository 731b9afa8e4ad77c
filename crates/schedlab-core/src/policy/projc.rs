//! Project C (Alfred Chen): the framework BMQ and PDS share, `alt_core.c`
//! and `alt_sched.h`, as a whole-scheduler replacement. Follows
//! /work/shared/spec/shootout.md §2 (v6.0-r0, the version seed 002 ran:
//! `ALT_SCHED_VERSION "v6.0-r0"`, linux-tkg `0009-prjc_v6.0-r0.patch`) and
//! /work/shared/spec/alt-schedulers.md §3 (v6.12-r1). The policy rules live
//! in policy/bmq.rs and policy/pds.rs ([`ProjcRules`]), as Project C keeps
//! them in bmq.h and pds.h.
//!
//! One class takes every policy: SCHED_FIFO/RR at RT levels, SCHED_OTHER,
//! BATCH and IDLE at nice-based normal levels (§2.5: BATCH and IDLE are
//! ordinary tasks), SCHED_DEADLINE squashed to SCHED_FIFO priority 99
//! (`dl_squash_attr`: no CBS, no admission control). SCHED_EXT is refused
//! (`__sched_setscheduler` returns EINVAL for policies above SCHED_IDLE).
//! No RT throttling, no cgroup weights, no autogroup, no custom slices.
//!
//! Per CPU, a `sched_queue`: one FIFO list per level and the lowest
//! non-empty level first (§2.1). The running task stays queued; an empty
//! queue is the idle task. Any enqueue reschedules iff the first task is no
//! longer the current one (`check_preempt_curr`): only a strictly better
//! level preempts. PDS's normal levels are a ring indexed by an absolute
//! deadline "edge"; the lists that fall behind when the edge advances are
//! spliced, in order, in front of the new first normal list
//! (`update_rq_time_edge`, §2.4).
//!
//! Time slice (§2.2): 4 << 20 ns, charged by `update_curr` on the tick and at
//! every schedule (`check_curr`); below RESCHED_NS (100 << 10 ns) it expires:
//! refill, policy renewal, requeue at the tail of the (new) level unless
//! SCHED_FIFO. The tick reschedules when less than RESCHED_NS is left, and an
//! hrtick is armed at every pick for the remaining slice (at least 10 µs), so
//! slices end exactly. A fork halves the parent's slice (the value as of its
//! last update) and gives the half to the child; below RESCHED_NS the child
//! gets a full slice and the parent reschedules.
//!
//! SMP (§2.6; the code is in policy/projc/smp.rs): `select_task_rq` picks, among allowed online CPUs, the first
//! non-empty of (1) CPUs whose whole SMT core is idle (only with SMT),
//! (2) idle CPUs, (3) CPUs whose best queued level is strictly worse than
//! the task's, else all allowed CPUs, and returns the lowest-numbered CPU of
//! that set in the first non-empty topology level of the task's CPU:
//! itself, its SMT siblings, its LLC, every online CPU (the simulated machine
//! has one package, so "package" and "all online" coincide). A CPU about to
//! idle pulls (`take_other_rq_tasks`): it scans CPUs with at least two
//! queued tasks in the same topology order and, from the first that yields,
//! moves up to min(nr_running / 2, 32) tasks, walking that queue from the
//! task after its current one and taking every other task. With SMT, a CPU
//! whose core has gone idle pushes the lone running task of a fully busy
//! core to an idle core of the source's LLC (`sg_balance`). Nothing else
//! ever migrates a task: an imbalance among busy CPUs persists.
//!
//! Yield (`kernel.yield_type`, tunable `yield_type`): 0 does nothing but
//! reschedule, 1 applies the policy's rule to non-RT tasks, 2 makes the next
//! pick skip the caller if the CPU has another task (`rq->skip`).
//!
//! Departures (also in docs/model.md, "Project C"):
//! * Every CPU's clock is `m.now`; a CPU's PDS edge is brought up to date
//!   whenever a hook reads or changes its queue (the kernel updates it in
//!   `update_rq_clock`, so a remote queue can be read with a stale edge).
//! * `select_task_rq` computes idleness and best levels from the queues at
//!   the call instead of the lazily updated watermark masks.
//! * `sched_task_ttwu` uses `m.now` for the waker CPU's `clock_task`.
//! * Tasks the simulated launcher creates (no parent) get a full slice.
//! * The validity checks of SCHED_DEADLINE parameters stay (the engine's,
//!   before the stack exists), although Project C squashes them unchecked.

use crate::class::stack::Stack;
use crate::class::{DequeueFlags, EnqueueFlags, SchedClass, WakeFlags, Waker};
use crate::clock::Ns;
use crate::cpuset::{CpuId, CpuSet};
use crate::machine::Machine;
use crate::plugin::StackCtx;
use crate::task::{Task, TaskId};
use crate::tunable::{Tunable, TunableSet};
use crate::workload::Policy;
use std::collections::VecDeque;

mod smp;

/// `RESCHED_NS`: a slice with less left counts as expired.
pub const RESCHED_NS: i64 = 100 << 10;
/// `hrtick_start`: no hrtick shorter than this.
const HRTICK_MIN_NS: Ns = 10_000;
/// `SCHED_RQ_NR_MIGRATION`: most tasks one pull moves.
const MAX_PULL: u32 = 32;

/// Tunables every Project C scheduler has (alt_core.c).
pub const PROJC_TUNABLES: &[Tunable] = &[
    Tunable {
        name: "timeslice_ms",
        default: 4,
        min: 2,
        max: 4,
        unit: "ms",
        doc: "boot parameter sched_timeslice: 2 gives 2 << 20 ns slices (and PDS v6.0 edge shift 21); any other value gives 4 << 20 ns",
    },
    Tunable {
        name: "yield_type",
        default: 1,
        min: 0,
        max: 2,
        unit: "",
        doc: "kernel.yield_type: 0 sched_yield only reschedules, 1 policy rule (BMQ: boost to the worst; PDS: new deadline), 2 the next pick skips the caller",
    },
];

/// Scheduling state Project C keeps in `task_struct`.
#[derive(Debug, Clone, Copy, Default)]
pub struct TaskSched {
    /// `p->time_slice`, ns (may run below zero until charged and expired).
    pub time_slice: i64,
    /// `p->last_ran`: `clock_task` at the last switch-in or `update_curr`.
    pub last_ran: Ns,
    /// BMQ `p->boost_prio`.
    pub boost_prio: i32,
    /// PDS `p->deadline`, in edges.
    pub deadline: u64,
}

/// What `sched_yield` with yield type 1 does to a non-RT task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum YieldRule {
    /// The rule changed the task's state itself; it keeps its queue place.
    InPlace,
    /// `time_slice_expired`: refill, renew, requeue (PDS v6.0).
    Expire,
    /// Refill and renew without requeueing (PDS v6.12).
    Renew,
}

/// The policy-specific half of Project C (bmq.h / pds.h).
pub trait ProjcRules {
    /// Name of the class (and scheduler family), e.g. "bmq".
    fn class_name(&self) -> &'static str;
    /// Queue levels, the idle level excluded (`SCHED_QUEUE_BITS`).
    fn levels(&self) -> usize;
    /// PDS: (first normal level, ring slots, edge shift); None for BMQ.
    fn ring(&self) -> Option<(usize, usize, u32)> {
        None
    }
    /// Level of an RT task of kernel prio `prio` (99 − rt_priority).
    fn rt_level(&self, prio: usize) -> usize;
    /// Level of a normal task at edge `edge` (`task_sched_prio`).
    fn normal_level(&self, t: &Task, s: &TaskSched, edge: u64) -> usize;
    /// `sched_task_renew` / the policy part of `time_slice_expired`;
    /// `queued`: the task is on its run queue.
    fn renew(&self, t: &Task, s: &mut TaskSched, edge: u64, queued: bool);
    /// `sched_task_fork`.
    fn fork(&self, t: &Task, s: &mut TaskSched, parent: Option<&TaskSched>, edge: u64);
    /// `sched_task_ttwu`: `slept` = waker clock − `last_ran`.
    fn ttwu(&self, _t: &Task, _s: &mut TaskSched, _slept: Ns, _slice: Ns) {}
    /// `sched_task_deactivate`: the task blocks after running `ran` ns since
    /// its CPU last switched tasks.
    fn deactivate(&self, _t: &Task, _s: &mut TaskSched, _ran: Ns, _slice: Ns) {}
    /// `do_sched_yield_type_1` (non-RT tasks only).
    fn yield_type1(&self, t: &Task, s: &mut TaskSched, edge: u64) -> YieldRule;
    /// `sched_task_sanity_check` on a migrated task.
    fn sanity_check(&self, _s: &mut TaskSched, _edge: u64) {}
}

/// Kernel prio of an RT task (SCHED_DEADLINE squashed to FIFO 99), or
/// None for a normal one.
pub fn rt_prio(t: &Task) -> Option<usize> {
    match t.policy {
        Policy::Fifo | Policy::Rr => Some(99usize.saturating_sub(t.rt_priority as usize)),
        Policy::Deadline => Some(0),
        _ => None,
    }
}

/// `rt_task(p)` after the squash.
fn is_rt(t: &Task) -> bool {
    rt_prio(t).is_some()
}

/// SCHED_FIFO, squashed SCHED_DEADLINE included (never requeued on expiry).
fn is_fifo(t: &Task) -> bool {
    matches!(t.policy, Policy::Fifo | Policy::Deadline)
}

/// Most levels a policy may have (the bitmap's bits).
const MAX_LEVELS: usize = 256;

/// One CPU's `sched_queue` and the `rq` fields Project C adds.
#[derive(Debug, Clone)]
struct Queue {
    /// Lists by physical index (`heads`).
    heads: Vec<VecDeque<TaskId>>,
    /// The non-empty lists, a bit per physical index (`queue.bitmap`, which
    /// `sched_rq_first_task` searches with `find_first_bit`): the first
    /// queued level is found a word at a time, not by a pass over every
    /// level (PDS has 192; the pass was 14 % of a PDS jitter run).
    nonempty: [u64; MAX_LEVELS / 64],
    /// `rq->time_edge` (PDS).
    edge: u64,
    /// Tasks queued, the running one included.
    nr: u32,
    /// `rq->last_ts_switch`.
    last_ts_switch: Ns,
    /// Generation of the armed hrtick (stale timers are ignored).
    hrtick_gen: u64,
    /// `rq->skip` (yield type 2).
    skip: Option<TaskId>,
    /// The task this class has made current (`set_next_task`).
    curr: Option<TaskId>,
    /// The running task an attribute change re-enqueued: its coming
    /// `set_next_task` is no context switch.
    restoring: Option<TaskId>,
}

impl Queue {
    /// Record whether list `idx` is empty after a change to it.
    fn note(&mut self, idx: usize) {
        let (word, bit) = (idx / 64, 1u64 << (idx % 64));
        if self.heads[idx].is_empty() {
            self.nonempty[word] &= !bit;
        } else {
            self.nonempty[word] |= bit;
        }
    }

    /// The first non-empty list in physical indices `lo..hi`.
    fn first_in(&self, lo: usize, hi: usize) -> Option<usize> {
        if lo >= hi {
            return None;
        }
        for word in lo / 64..=(hi - 1) / 64 {
            let mut bits = self.nonempty[word];
            if word == lo / 64 {
                bits &= u64::MAX << (lo % 64);
            }
            if bits != 0 {
                let idx = word * 64 + bits.trailing_zeros() as usize;
                return (idx < hi).then_some(idx);
            }
        }
        None
    }
}

/// The Project C class with policy rules `R`.
pub struct Projc<R: ProjcRules> {
    rules: R,
    rq: Vec<Queue>,
    task: Vec<TaskSched>,
    /// Where a queued task is: (CPU, physical index).
    pos: Vec<Option<(CpuId, usize)>>,
    slice_ns: i64,
    yield_type: i64,
}

impl<R: ProjcRules> Projc<R> {
    /// A class for the CPUs of `m` with the run's tunables.
    pub fn new(rules: R, m: &Machine, tunables: &TunableSet) -> Self {
        assert!(
            rules.levels() <= MAX_LEVELS,
            "a Project C policy has at most {MAX_LEVELS} levels"
        );
        let ms = tunables.get("timeslice_ms").unwrap_or(4);
        let slice_ns = if ms == 2 { 2 << 20 } else { 4 << 20 };
        let queue = Queue {
            heads: vec![VecDeque::new(); rules.levels()],
            nonempty: [0; MAX_LEVELS / 64],
            edge: 0,
            nr: 0,
            last_ts_switch: 0,
            hrtick_gen: 0,
            skip: None,
            curr: None,
            restoring: None,
        };
        Projc {
            rq: vec![queue; m.nr_cpus()],
            task: vec![],
            pos: vec![],
            slice_ns,
            yield_type: tunables.get("yield_type").unwrap_or(1),
            rules,
        }
    }

    /// Slice length, ns.
    fn slice(&self) -> Ns {
        self.slice_ns as Ns
    }

    /// `sched_prio2idx`: physical list of level `prio` at `edge`.
    fn prio2idx(&self, prio: usize, edge: u64) -> usize {
        match self.rules.ring() {
            Some((base, slots, _)) if prio >= base => {
                base + ((prio - base) as u64).wrapping_add(edge) as usize % slots
            }
            _ => prio,
        }
    }

    /// Level of `t` on a queue at `edge` (`task_sched_prio`).
    fn level(&self, m: &Machine, t: TaskId, edge: u64) -> usize {
        let task = &m.tasks[t];
        let l = match rt_prio(task) {
            Some(p) => self.rules.rt_level(p),
            None => self.rules.normal_level(task, &self.task[t], edge),
        };
        l.min(self.rules.levels() - 1)
    }

    /// `update_rq_time_edge` (PDS): splice the lists that fell behind, in
    /// order, in front of the new first normal list.
    fn update_edge(&mut self, m: &Machine, cpu: CpuId) {
        let Some((base, slots, shift)) = self.rules.ring() else {
            return;
        };
        let now = m.now >> shift;
        let old = self.rq[cpu].edge;
        if now <= old {
            return;
        }
        let delta = (now - old).min(slots as u64);
        let mut behind: VecDeque<TaskId> = VecDeque::new();
        for i in 0..delta {
            let idx = base + (old.wrapping_add(i) % slots as u64) as usize;
            behind.append(&mut self.rq[cpu].heads[idx]);
            self.rq[cpu].note(idx);
        }
        self.rq[cpu].edge = now;
        if behind.is_empty() {
            return;
        }
        let first = base + (now % slots as u64) as usize;
        for &t in &behind {
            self.pos[t] = Some((cpu, first));
        }
        let q = &mut self.rq[cpu].heads[first];
        behind.append(q);
        *q = behind;
        self.rq[cpu].note(first);
    }

    /// Tasks queued on `cpu` in pick order (levels, then FIFO).
    fn in_order(&self, cpu: CpuId) -> Vec<TaskId> {
        let q = &self.rq[cpu];
        (0..self.rules.levels())
            .flat_map(|prio| q.heads[self.prio2idx(prio, q.edge)].iter().copied())
            .collect()
    }

    /// `sched_rq_first_task` (None: the idle task) and its level.
    fn first(&self, cpu: CpuId) -> Option<(usize, TaskId)> {
        let q = &self.rq[cpu];
        let first = self.first_level(q).and_then(|prio| {
            let t = q.heads[self.prio2idx(prio, q.edge)].front()?;
            Some((prio, *t))
        });
        debug_assert_eq!(
            first,
            self.first_by_pass(cpu),
            "{} cpu {cpu}",
            self.rules.class_name()
        );
        first
    }

    /// The first level whose list is non-empty, from the bitmap: below
    /// PDS's ring (and on BMQ) a level is its list; on the ring, level
    /// base + k is list base + (k + edge) mod slots ([`Self::prio2idx`]),
    /// so the levels in order are the ring's lists from edge mod slots on,
    /// then those before it.
    fn first_level(&self, q: &Queue) -> Option<usize> {
        let Some((base, slots, _)) = self.rules.ring() else {
            return q.first_in(0, self.rules.levels());
        };
        if let Some(idx) = q.first_in(0, base) {
            return Some(idx);
        }
        let s = (q.edge % slots as u64) as usize;
        if let Some(idx) = q.first_in(base + s, base + slots) {
            return Some(idx - s);
        }
        q.first_in(base, base + s).map(|idx| idx + slots - s)
    }

    /// [`Self::first`] by a pass over every level in order (debug builds
    /// check the bitmap's answer against it).
    fn first_by_pass(&self, cpu: CpuId) -> Option<(usize, TaskId)> {
        let q = &self.rq[cpu];
        (0..self.rules.levels()).find_map(|prio| {
            q.heads[self.prio2idx(prio, q.edge)]
                .front()
                .map(|t| (prio, *t))
        })
    }

    /// `rq->watermark`: best queued level, `levels()` when idle.
    fn watermark(&self, cpu: CpuId) -> usize {
        self.first(cpu).map_or(self.rules.levels(), |(l, _)| l)
    }

    fn insert(&mut self, m: &Machine, cpu: CpuId, t: TaskId) {
        let edge = self.rq[cpu].edge;
        let idx = self.prio2idx(self.level(m, t, edge), edge);
        self.rq[cpu].heads[idx].push_back(t);
        self.rq[cpu].note(idx);
        self.pos[t] = Some((cpu, idx));
    }

    fn remove(&mut self, t: TaskId) -> Option<CpuId> {
        let (cpu, idx) = self.pos[t].take()?;
        let list = &mut self.rq[cpu].heads[idx];
        if let Some(i) = list.iter().position(|x| *x == t) {
            list.remove(i);
        }
        self.rq[cpu].note(idx);
        Some(cpu)
    }

    /// `requeue_task`: to the tail of its (new) level.
    fn requeue(&mut self, m: &Machine, t: TaskId) {
        if let Some(cpu) = self.remove(t) {
            self.insert(m, cpu, t);
        }
    }

    /// `update_curr`: charge the current task's slice up to now.
    fn update_curr(&mut self, m: &Machine, cpu: CpuId) {
        let Some(t) = self.rq[cpu].curr else {
            return;
        };
        let s = &mut self.task[t];
        let ran = m.now.saturating_sub(s.last_ran);
        s.time_slice = s
            .time_slice
            .saturating_sub(i64::try_from(ran).unwrap_or(i64::MAX));
        s.last_ran = m.now;
    }

    /// `time_slice_expired`.
    fn time_slice_expired(&mut self, m: &Machine, t: TaskId) {
        let queued = self.pos[t].is_some();
        let edge = self.pos[t].map_or(self.rq[m.tasks[t].cpu].edge, |(c, _)| self.rq[c].edge);
        self.task[t].time_slice = self.slice_ns;
        self.rules
            .renew(&m.tasks[t], &mut self.task[t], edge, queued);
        if queued && !is_fifo(&m.tasks[t]) {
            self.requeue(m, t);
        }
    }

    /// Arm `cpu`'s hrtick for `left` ns (`hrtick_start`).
    fn hrtick_start(&mut self, m: &mut Machine, cpu: CpuId, left: i64) {
        let q = &mut self.rq[cpu];
        q.hrtick_gen += 1;
        let delay = u64::try_from(left).unwrap_or(0).max(HRTICK_MIN_NS);
        let name = self.rules.class_name();
        m.arm_timer(m.now.saturating_add(delay), name, cpu, q.hrtick_gen);
    }
}

impl<R: ProjcRules> SchedClass for Projc<R> {
    /// Modelled with one plain clock per CPU (`m.now`, the first departure
    /// above): no skipped clock update after a wakeup.
    fn clock_update_skip(&self) -> bool {
        false
    }

    fn name(&self) -> &'static str {
        self.rules.class_name()
    }

    fn task_fork(&mut self, m: &mut Machine, t: TaskId, parent: Option<TaskId>) {
        if self.task.len() <= t {
            self.task.resize(t + 1, TaskSched::default());
            self.pos.resize(t + 1, None);
        }
        let cpu = m.tasks[t].cpu;
        self.update_edge(m, cpu);
        let mut s = TaskSched {
            time_slice: self.slice_ns,
            last_ran: m.now,
            ..TaskSched::default()
        };
        // sched_cgroup_fork: the running parent shares its remaining slice.
        let running_parent = parent.filter(|p| {
            let pcpu = m.tasks[*p].cpu;
            m.rqs[pcpu].curr == Some(*p) && self.rq[pcpu].curr == Some(*p)
        });
        if let Some(p) = running_parent {
            let pcpu = m.tasks[p].cpu;
            self.task[p].time_slice /= 2;
            s.time_slice = self.task[p].time_slice;
            let left = self.task[p].time_slice;
            self.hrtick_start(m, pcpu, left);
            if s.time_slice < RESCHED_NS {
                s.time_slice = self.slice_ns;
                m.resched(pcpu);
            }
        }
        let parent_state = parent.map(|p| self.task[p]);
        let edge = self.rq[cpu].edge;
        self.rules
            .fork(&m.tasks[t], &mut s, parent_state.as_ref(), edge);
        self.task[t] = s;
    }

    fn enqueue_task(&mut self, m: &mut Machine, cpu: CpuId, t: TaskId, flags: EnqueueFlags) {
        self.update_edge(m, cpu);
        if flags.has(EnqueueFlags::MIGRATED) && !flags.has(EnqueueFlags::WAKEUP) {
            let edge = self.rq[cpu].edge;
            self.rules.sanity_check(&mut self.task[t], edge);
        }
        if flags.has(EnqueueFlags::RESTORE) {
            self.rq[cpu].restoring = Some(t);
        }
        self.insert(m, cpu, t);
        self.rq[cpu].nr += 1;
    }

    fn dequeue_task(
        &mut self,
        m: &mut Machine,
        cpu: CpuId,
        t: TaskId,
        flags: DequeueFlags,
    ) -> bool {
        self.update_edge(m, cpu);
        if flags.has(DequeueFlags::SLEEP) {
            // sched_task_deactivate, before deactivate_task in __schedule.
            let ran = m.now.saturating_sub(self.rq[cpu].last_ts_switch);
            let slice = self.slice();
            self.rules
                .deactivate(&m.tasks[t], &mut self.task[t], ran, slice);
        }
        if self.remove(t).is_some() {
            self.rq[cpu].nr -= 1;
        }
        if self.rq[cpu].skip == Some(t) {
            self.rq[cpu].skip = None;
        }
        true
    }

    fn yield_task(&mut self, m: &mut Machine, cpu: CpuId) {
        let Some(t) = self.rq[cpu].curr else {
            return;
        };
        self.update_edge(m, cpu);
        match self.yield_type {
            1 if !is_rt(&m.tasks[t]) => {
                let edge = self.rq[cpu].edge;
                match self.rules.yield_type1(&m.tasks[t], &mut self.task[t], edge) {
                    YieldRule::InPlace => {}
                    YieldRule::Expire => {
                        self.update_curr(m, cpu);
                        self.time_slice_expired(m, t);
                    }
                    YieldRule::Renew => {
                        self.task[t].time_slice = self.slice_ns;
                        let queued = self.pos[t].is_some();
                        self.rules
                            .renew(&m.tasks[t], &mut self.task[t], edge, queued);
                    }
                }
            }
            2 if self.rq[cpu].nr > 1 => self.rq[cpu].skip = Some(t),
            _ => {}
        }
    }

    fn wakeup_preempt(&mut self, m: &mut Machine, cpu: CpuId, _t: TaskId, _flags: WakeFlags) {
        // check_preempt_curr: resched iff the first task is not curr.
        self.update_edge(m, cpu);
        if self.first(cpu).map(|(_, t)| t) != m.rqs[cpu].curr {
            m.resched(cpu);
        }
    }

    fn balance(&mut self, m: &mut Machine, cpu: CpuId, _prev: Option<TaskId>) -> bool {
        // choose_next_task: only the idle task is left, so pull.
        if self.rq[cpu].nr == 0 {
            self.take_other_rq_tasks(m, cpu);
        }
        self.rq[cpu].nr > 0
    }

    fn pick_task(&mut self, m: &mut Machine, cpu: CpuId) -> Option<TaskId> {
        self.update_edge(m, cpu);
        // check_curr on prev, then hrtick_clear.
        if let Some(prev) = self.rq[cpu].curr {
            self.update_curr(m, cpu);
            if self.task[prev].time_slice < RESCHED_NS {
                self.time_slice_expired(m, prev);
            }
        }
        self.rq[cpu].hrtick_gen += 1;
        let first = self.first(cpu).map(|(_, t)| t);
        let next = match self.rq[cpu].skip.take() {
            // rq_runnable_task: the task after the skipped one.
            Some(s) if first == Some(s) => {
                let order = self.in_order(cpu);
                order.get(1).copied()
            }
            _ => first,
        };
        match next {
            Some(n) => {
                let left = self.task[n].time_slice;
                self.hrtick_start(m, cpu, left);
            }
            None => self.sg_balance(m, cpu),
        }
        next
    }

    fn put_prev_task(&mut self, m: &mut Machine, cpu: CpuId, _prev: TaskId, _next: Option<TaskId>) {
        self.update_curr(m, cpu);
        self.rq[cpu].curr = None;
    }

    fn set_next_task(&mut self, m: &mut Machine, cpu: CpuId, next: TaskId) {
        let q = &mut self.rq[cpu];
        q.curr = Some(next);
        if q.restoring.take() == Some(next) {
            // An attribute change, not a context switch.
            return;
        }
        q.last_ts_switch = m.now;
        self.task[next].last_ran = m.now;
    }

    fn select_task_rq(
        &mut self,
        m: &mut Machine,
        t: TaskId,
        prev_cpu: CpuId,
        flags: WakeFlags,
        _waker: Waker,
    ) -> CpuId {
        if flags.has(WakeFlags::TTWU) {
            let slept = m.now.saturating_sub(self.task[t].last_ran);
            let slice = self.slice();
            self.rules
                .ttwu(&m.tasks[t], &mut self.task[t], slept, slice);
        }
        let (fallback, _) = crate::class::select_start(m, t, prev_cpu, flags);
        let chk = m.tasks[t].affinity.and(&m.online);
        if chk.is_empty() {
            return fallback;
        }
        for c in chk.iter() {
            self.update_edge(m, c);
        }
        self.update_edge(m, prev_cpu);
        let level = self.level(m, t, self.rq[prev_cpu].edge);
        let idle_cores = if m.topo.has_smt() {
            self.sg_idle(m).and(&chk)
        } else {
            CpuSet::empty()
        };
        let mut idle = CpuSet::empty();
        let mut worse = CpuSet::empty();
        for c in chk.iter() {
            let wm = self.watermark(c);
            if wm >= self.rules.levels() {
                idle.insert(c);
            }
            if wm > level {
                worse.insert(c);
            }
        }
        let set = [idle_cores, idle, worse]
            .into_iter()
            .find(|s| !s.is_empty())
            .unwrap_or(chk);
        Self::best_mask_cpu(m, prev_cpu, &set).unwrap_or(fallback)
    }

    fn migrate_task_rq(&mut self, _m: &mut Machine, _t: TaskId, _new_cpu: CpuId) {}

    fn task_tick(&mut self, m: &mut Machine, cpu: CpuId, curr: TaskId) {
        // scheduler_task_tick.
        self.update_edge(m, cpu);
        if self.rq[cpu].curr != Some(curr) {
            return;
        }
        self.update_curr(m, cpu);
        if self.task[curr].time_slice < RESCHED_NS {
            m.resched(cpu);
        }
    }

    fn reweight_task(&mut self, _m: &mut Machine, _t: TaskId) {}

    fn task_dead(&mut self, _m: &mut Machine, t: TaskId) {
        self.remove(t);
    }

    fn update_curr(&mut self, m: &mut Machine, cpu: CpuId) {
        Projc::update_curr(self, m, cpu);
    }

    fn tick_balance(&mut self, _m: &mut Machine, _cpu: CpuId) {}

    fn nr_runnable(&self, cpu: CpuId) -> u32 {
        self.rq[cpu].nr
    }

    fn timer(&mut self, m: &mut Machine, cpu: CpuId, tag: u64) {
        // hrtick: resched_curr if this is the armed one.
        if self.rq.get(cpu).is_some_and(|q| q.hrtick_gen == tag) {
            m.resched(cpu);
        }
    }

    fn task_debug(&self, t: TaskId) -> Vec<(&'static str, i64)> {
        let Some(s) = self.task.get(t) else {
            return vec![];
        };
        let level = self.pos[t].map_or(-1, |(cpu, idx)| {
            let q = &self.rq[cpu];
            (0..self.rules.levels())
                .find(|p| self.prio2idx(*p, q.edge) == idx)
                .map_or(-1, |p| p as i64)
        });
        vec![
            ("time_slice", s.time_slice),
            ("boost_prio", i64::from(s.boost_prio)),
            ("deadline", i64::try_from(s.deadline).unwrap_or(i64::MAX)),
            ("level", level),
        ]
    }

    fn check_invariants(&self, m: &Machine) -> Result<(), String> {
        let name = self.rules.class_name();
        for (cpu, q) in self.rq.iter().enumerate() {
            let n: usize = q.heads.iter().map(|l| l.len()).sum();
            if n != q.nr as usize {
                return Err(format!("{name} cpu {cpu}: nr {} but {n} queued", q.nr));
            }
            for (idx, l) in q.heads.iter().enumerate() {
                for &t in l {
                    if self.pos[t] != Some((cpu, idx)) || m.tasks[t].cpu != cpu {
                        return Err(format!("{name} cpu {cpu}: task {t} misplaced"));
                    }
                    if !m.tasks[t].is_queued() {
                        return Err(format!(
                            "{name} cpu {cpu}: task {t} queued but not runnable"
                        ));
                    }
                }
            }
        }
        Ok(())
    }
}

/// The class stack of a Project C scheduler: one class for every policy
/// but SCHED_EXT, no deadline admission control, warnings for what the
/// workload asks and Project C ignores or changes.
pub fn build<R: ProjcRules + 'static>(ctx: &StackCtx, rules: R) -> Result<Stack, String> {
    let name = rules.class_name();
    let class = Projc::new(rules, ctx.m, ctx.tunables);
    let mut s = Stack::new();
    let idx = s.push(
        Box::new(class),
        &[
            Policy::Deadline,
            Policy::Fifo,
            Policy::Rr,
            Policy::Other,
            Policy::Batch,
            Policy::Idle,
        ],
    );
    s.set_fallback(idx);
    s.dl_admission = false;
    s.warnings = warnings(ctx.wl, name);
    Ok(s)
}

/// What a Project C scheduler changes or ignores in `wl`.
fn warnings(wl: &crate::workload::Workload, name: &str) -> Vec<String> {
    let mut out = vec![];
    let all_attrs = |t: &crate::workload::TaskDef| {
        std::iter::once(t.attrs.clone())
            .chain(t.phases.iter().map(|p| t.attrs.overlay(&p.attrs)))
            .collect::<Vec<_>>()
    };
    let mut dl_tasks = vec![];
    let mut slice_tasks = vec![];
    let mut grouped = !wl.taskgroups.is_empty();
    for t in &wl.tasks {
        for a in all_attrs(t) {
            let policy = a.policy.unwrap_or(wl.default_policy);
            if policy == Policy::Deadline && !dl_tasks.contains(&t.name) {
                dl_tasks.push(t.name.clone());
            }
            if policy != Policy::Deadline
                && a.dl_runtime.is_some_and(|r| r > 0)
                && !slice_tasks.contains(&t.name)
            {
                slice_tasks.push(t.name.clone());
            }
            grouped |= a.taskgroup.as_deref().is_some_and(|g| g != "/");
        }
    }
    if !dl_tasks.is_empty() {
        out.push(format!(
            "{name}: SCHED_DEADLINE tasks ({}) run as SCHED_FIFO priority 99 (Project C squashes SCHED_DEADLINE: no CBS, no admission control)",
            dl_tasks.join(", ")
        ));
    }
    if !slice_tasks.is_empty() {
        out.push(format!(
            "{name}: dl-runtime on a non-deadline policy ({}) requests a custom slice, which Project C ignores",
            slice_tasks.join(", ")
        ));
    }
    if grouped {
        out.push(format!(
            "{name}: cgroup CPU weights (taskgroups/taskgroup) are ignored: Project C has no CPU cgroup weights or autogroup"
        ));
    }
    out
}
