//! Fair-class hooks: the extension point for research policies that patch
//! the fair class rather than replace it (TSF, PFS, DW-CFS as `+NAME`
//! policies; CacULE and TT as whole registry entries built on them). The fair class (CFS 6.1 or EEVDF 6.12) keeps every rule
//! of its own and calls these hooks at the points where the out-of-tree
//! patches hook `kernel/sched/fair.c`.
//!
//! A policy is one file in `policy/` implementing [`FairHooks`] plus one
//! line in the registry (`crate::registry::FAIR_POLICIES`), selected with
//! a `+` suffix on a scheduler name (`eevdf+tsf`). Every hook has a
//! default that leaves the kernel's behaviour unchanged, so a policy
//! implements only what its patch changes.
//!
//! # Contract
//! Hooks run at `m.now`, take no simulated time, and change engine state
//! only through `Machine`'s methods. A hook never calls back into the fair
//! class; where a hook asks for a change (a new weight), the fair class
//! carries it out after the hook returns.

use super::entity::{ListEntry, RqId, SeId};
use super::weights::LoadWeight;
use crate::class::EnqueueFlags;
use crate::clock::Ns;
use crate::cpuset::CpuId;
use crate::machine::Machine;
use crate::task::TaskId;

/// Hooks into the fair class. Called only for tasks of the fair class.
pub trait FairHooks: std::fmt::Debug {
    /// Name after the `+` (e.g. `"tsf"`).
    fn name(&self) -> &'static str;

    /// Effective load weight of a thread whose nice weight is `w`, in a
    /// process with `threads` live threads on `cpus` online CPUs
    /// (`set_load_weight`, patched by thread-count-aware policies). Called
    /// when a thread is created or its attributes change, and for every
    /// live thread of a process when [`Self::thread_count_aware`] says so.
    /// SCHED_IDLE threads are never asked (their weight stays 3).
    /// Default: `w`.
    fn effective_weight(&self, w: u64, _threads: usize, _cpus: usize) -> u64 {
        w
    }

    /// Whether weights must be recomputed for every live thread of a
    /// process when it gains or loses a thread or CPUs go on or offline.
    /// Default: false (the recomputation is skipped entirely).
    fn thread_count_aware(&self) -> bool {
        false
    }

    /// `update_curr`: the current task `t` ran `delta_exec` more ns
    /// (wall time on the CPU, before weighting). Called before the delta
    /// is charged to `t`'s vruntime, so a policy tracking bursts (BORE)
    /// updates its state here and the charge already uses it
    /// ([`Self::vruntime_delta`], [`Self::requested_weight`]). Default:
    /// nothing.
    fn update_curr(&mut self, _m: &Machine, _t: TaskId, _delta_exec: Ns) {}

    /// The task `t` stops running on `cpu` after `ran` ns since it was
    /// switched in (`put_prev_task` at a context switch; not called for
    /// attribute changes of a running task). Returns the weight `t` should
    /// have from now on, or None to keep it; the fair class reweights the
    /// task if it differs. Default: None.
    fn stopping(&mut self, _m: &mut Machine, _cpu: CpuId, _t: TaskId, _ran: Ns) -> Option<u64> {
        None
    }

    /// EEVDF's `place_entity`: the lag `vlag` (already scaled for the
    /// queue's load) and the virtual slice `vslice` a task is about to be
    /// placed with (vruntime = V − vlag, deadline = vruntime + vslice).
    /// Returns the values to use. CFS's placement (sleeper credit) does
    /// not call it. Default: unchanged.
    fn place(&mut self, _m: &Machine, _t: TaskId, vlag: i64, vslice: i64) -> (i64, i64) {
        (vlag, vslice)
    }

    /// EEVDF's pick (`pick_eevdf`): among eligible tasks whose virtual
    /// deadlines are equal, the kernel runs the one queued first (rb-tree
    /// order). Return true to run `b` before `a` (`a` queued first).
    /// Called only when such a tie exists and [`Self::breaks_ties`] is
    /// true, and only for task entities (not group entities). Default:
    /// false (the kernel's order).
    fn pick_tie_break(&self, _m: &Machine, _a: TaskId, _b: TaskId) -> bool {
        false
    }

    /// Whether the policy overrides [`Self::pick_tie_break`] (the pick
    /// then scans ties; otherwise it never does). Default: false.
    fn breaks_ties(&self) -> bool {
        false
    }

    /// A new task `t` was forked by `parent` (`task_fork_fair`), before
    /// its first enqueue. Default: nothing.
    fn task_fork(&mut self, _m: &Machine, _t: TaskId, _parent: Option<TaskId>) {}

    /// `t` wakes up (`enqueue_task_fair` with ENQUEUE_WAKEUP), before it
    /// is placed. Default: nothing.
    fn task_wakeup(&mut self, _m: &Machine, _t: TaskId) {}

    /// `t` goes to sleep (`dequeue_task_fair` with DEQUEUE_SLEEP).
    /// Default: nothing.
    fn task_sleep(&mut self, _m: &Machine, _t: TaskId) {}

    // ---- Queue-ordering policies (CacULE, TT; class/fair/order.rs) ------
    //
    // Patches of CFS 6.1 that keep its accounting (vruntime, slices, PELT)
    // but choose among the queued entities by an order of their own: the
    // queue becomes a list scanned at every pick (new entries at the head).
    // Only read on CFS; EEVDF never asks. Every default keeps the kernel's
    // behaviour.

    /// How the policy changes CFS's pick and preemption rules, or None for
    /// CFS's own (vruntime order, buddies, slices). When Some, every pick
    /// scans the queue with [`Self::before`]. Default: None.
    fn queue_order(&self) -> Option<QueueOrder> {
        None
    }

    /// Whether `a` runs before `b` (strictly: a tie keeps `b`). Called only
    /// when [`Self::queue_order`] is Some, for two entities of one queue
    /// (tasks or groups; `is_curr` marks the queue's running entity).
    /// Default: false.
    fn before(&mut self, _m: &Machine, _a: EntityRef, _b: EntityRef) -> bool {
        false
    }

    /// A key ordering `e` among the entities of one queue at `m.now`, if
    /// the policy can give one: for any two entities with keys, `a` runs
    /// [`Self::before`] `b` iff key(a) < key(b). A pure speed-up of the
    /// pick's scan (one key per entity instead of two per comparison): the
    /// scan falls back to [`Self::before`] whenever a key is None, so the
    /// decisions are the same. Default: None.
    fn order_key(&mut self, _m: &Machine, _e: EntityRef) -> Option<u64> {
        None
    }

    /// The scan of [`Self::order_key`] over `list` from its back (the
    /// list's head) to its front, leaving out `except`: the first entry
    /// with the lowest key and that key, Some(None) for nothing scanned,
    /// or None if some entity has no key. Listed entities are queued,
    /// never their queue's curr. A policy overrides it only to scan
    /// faster (one call per list instead of one per entity); the default
    /// calls [`Self::order_key`] per entry.
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
            let e = EntityRef {
                se: x.se,
                task: x.task,
                is_curr: false,
            };
            let k = self.order_key(m, e)?;
            if best.is_none_or(|(bk, _)| k < bk) {
                best = Some((k, x.se));
            }
        }
        Some(best)
    }

    /// The list of queue `rq` (on `cpu`) gained (`joined`) or lost the
    /// entry `x`: every change of `CfsRq::list`, in the order it happens
    /// (an entity re-listed at its old place leaves and joins again). For
    /// a policy that keeps its own index of the lists to answer
    /// [`Self::order_first`]. Called only when [`Self::queue_order`] is
    /// Some. Default: nothing.
    fn list_changed(&mut self, _rq: RqId, _cpu: CpuId, _x: ListEntry, _joined: bool) {}

    /// [`Self::order_scan`] over `list`, the whole list of queue `rq`,
    /// leaving out `except`, answered from the policy's own index
    /// ([`Self::list_changed`]; `list` is there to build it from) rather
    /// than a scan: the same result (the lowest key; among equal keys the
    /// entry queued last, the highest `seq`), or None to let the fair
    /// class scan. Debug builds check every answer against the scan.
    /// Default: None.
    fn order_first(
        &mut self,
        _m: &Machine,
        _rq: RqId,
        _list: &std::collections::VecDeque<ListEntry>,
        _except: Option<SeId>,
    ) -> Option<Option<(u64, SeId)>> {
        None
    }

    /// A number that changes whenever anything [`Self::order_key`] reads
    /// changes, except the time (any change to the policy's per-entity
    /// state), or None if the policy does not track it. With it, a scan of
    /// a queue at the same time as the previous one, with nothing changed
    /// since but entries queued at the head, reuses that scan's result and
    /// computes keys only for the new entries (the tick's check and the
    /// pick that follows it). Default: None.
    fn order_generation(&self) -> Option<u64> {
        None
    }

    /// `update_curr` at every level of the hierarchy: the queue's running
    /// entity `e` ran `delta_exec` ns, `delta_fair` in virtual time
    /// (`calc_delta_fair`). Unlike [`Self::update_curr`] also called for
    /// group entities, and after the entity's vruntime was advanced.
    /// Default: nothing.
    fn entity_update_curr(
        &mut self,
        _m: &Machine,
        _e: EntityRef,
        _delta_exec: Ns,
        _delta_fair: u64,
    ) {
    }

    /// `set_next_entity`: `e` becomes its queue's running entity (at every
    /// level, top-down). Default: nothing.
    fn entity_set_next(&mut self, _m: &Machine, _e: EntityRef) {}

    /// `enqueue_task_fair`: `t` is about to be queued with `flags` (every
    /// enqueue: wakeup, first start, migration, attribute restore), after
    /// [`Self::task_wakeup`]. MIGRATED means the task changed CPU since it
    /// was last queued (`set_task_cpu` → `migrate_task_rq_fair`, which
    /// zeroes `se->exec_start`). Default: nothing.
    fn task_enqueue(&mut self, _m: &Machine, _t: TaskId, _flags: EnqueueFlags) {}

    /// `yield_task_fair`: the running task `t` yields with `nr_queued` fair
    /// tasks on its CPU (`h_nr_running`, itself included; only called when
    /// another task is runnable there). Default: nothing.
    fn task_yield(&mut self, _m: &Machine, _t: TaskId, _nr_queued: u32) {}

    /// `pick_next_task_fair` chose `next` on `cpu`; `prev` is the task that
    /// ran there until now (of any class; it may be `next`). Not called
    /// when the fair class has nothing to run. Default: nothing.
    fn picked(&mut self, _m: &Machine, _cpu: CpuId, _prev: Option<TaskId>, _next: TaskId) {}

    /// Whether wakeups may be placed on the waker's CPU (`want_affine` in
    /// `select_task_rq_fair`; false: `select_idle_sibling(p, prev, prev)`
    /// only, as when `wake_wide`/`record_wakee` are compiled out).
    /// Default: true.
    fn wake_affine(&self) -> bool {
        true
    }

    /// Whether the fair class ignores task groups (one flat queue per CPU:
    /// cgroups and autogroups compiled out). Default: false.
    fn flat_runqueue(&self) -> bool {
        false
    }

    /// Whether the policy replaces the fair class's load balancer: then
    /// [`Self::tick_balance`] and [`Self::newidle_balance`] run instead of
    /// `sched_balance_domains` and `sched_balance_newidle`. Default: false.
    fn replaces_balancer(&self) -> bool {
        false
    }

    /// The tick's balancing on `cpu` (`trigger_load_balance`), when
    /// [`Self::replaces_balancer`]. `tasks[c]`: the runnable fair tasks of
    /// CPU `c`, its current one included, in no particular order. Moves go
    /// through `m.request_migration`. Default: nothing.
    fn tick_balance(&mut self, _m: &mut Machine, _cpu: CpuId, _tasks: &[Vec<TaskId>]) {}

    /// Newly-idle balancing on `cpu` (its fair queue is empty), when
    /// [`Self::replaces_balancer`]; arguments as for
    /// [`Self::tick_balance`]. Default: nothing.
    fn newidle_balance(&mut self, _m: &mut Machine, _cpu: CpuId, _tasks: &[Vec<TaskId>]) {}

    /// Per-task values the policy keeps, appended to the fair class's
    /// `task_debug` (name → value). Default: none.
    fn task_debug(&self, _t: TaskId) -> Vec<(&'static str, i64)> {
        vec![]
    }

    // ---- Burst-scoring policies (BORE 1.7.3 on CFS, 5.9.6 on EEVDF) ----
    //
    // Where the BORE patches change fair.c beyond keeping per-task state:
    // a policy-chosen weight, CFS's vruntime rate and wakeup granularity,
    // yield, and three EEVDF rules (lag clamp, RUN_TO_PARITY, the virtual
    // deadline of a placed entity).

    /// The weight `t` should have from now on, or None to keep it. Asked
    /// after [`Self::update_curr`] (before the delta is charged: BORE
    /// 5.9.6 reweights inside `update_curr` and charges at the new
    /// weight), after [`Self::task_sleep`], [`Self::burst_yield`] and
    /// [`Self::task_fork`]. The fair class reweights `t` like
    /// `reweight_entity` when the value differs from its weight (EEVDF
    /// keeps V and rescales lag and deadline). Default: None.
    fn requested_weight(&mut self, _m: &Machine, _t: TaskId) -> Option<u64> {
        None
    }

    /// CFS `update_curr`: `t`'s vruntime is about to grow by `vdelta`
    /// (`calc_delta_fair` of the delta); returns the growth to apply
    /// (BORE 1.7.3 `calc_delta_fair_bscale`). Not called for group
    /// entities, nor by EEVDF. Default: `vdelta`.
    fn vruntime_delta(&self, _t: TaskId, vdelta: u64) -> u64 {
        vdelta
    }

    /// CFS `wakeup_preempt_entity` at a wakeup (`check_preempt_wakeup`)
    /// and in `pick_next_entity`'s next-buddy test: `gran` is the wakeup
    /// granularity in the virtual time of task `t` (the wakee, or the
    /// leftmost entity for the buddy test); returns the granularity to use
    /// (BORE 1.7.3 scales it by `t`'s burst factor). Not called for group
    /// entities nor for the skip and last buddy tests. Default: `gran`.
    fn wakeup_gran(&self, _t: TaskId, gran: u64) -> u64 {
        gran
    }

    /// The current task `t` calls `sched_yield` (`yield_task_fair`), at
    /// the top of it: before the kernel's "only task on the CPU" return
    /// and, unless [`Self::charge_before_restart`], before `update_curr`.
    /// Default: nothing.
    fn burst_yield(&mut self, _m: &Machine, _t: TaskId) {}

    /// Whether the running task is charged up to now (`update_curr`)
    /// before [`Self::task_sleep`] and [`Self::burst_yield`], as BORE 5.9.6
    /// does before restarting a burst (its `dequeue_task_fair` charges the
    /// root queue when the sleeper is its current entity, its
    /// `yield_task_fair` the task's queue). Default: false (the kernel's
    /// order: the charge comes later, in `dequeue_entity` or the yield).
    fn charge_before_restart(&self) -> bool {
        false
    }

    /// EEVDF yield after [`Self::burst_yield`] changed `t`'s weight from
    /// `old` to `new`: `vremain` is the remaining virtual request
    /// (deadline − vruntime) measured before the reweight. Returns the
    /// remaining request to set after it (deadline = vruntime + value), or
    /// None to keep `reweight_eevdf`'s rescaling (BORE 5.9.6
    /// `restart_burst_rescale_deadline`). Default: None.
    fn yield_request(
        &self,
        _t: TaskId,
        _vremain: i64,
        _old: LoadWeight,
        _new: LoadWeight,
    ) -> Option<i64> {
        None
    }

    /// EEVDF `entity_lag`: the clamp `limit` (virtual ns) of an entity's
    /// saved lag; returns the clamp to use (BORE 5.9.6 halves it). Called
    /// for task and group entities. Default: `limit`.
    fn lag_limit(&self, limit: i64) -> i64 {
        limit
    }

    /// EEVDF `pick_eevdf`: whether RUN_TO_PARITY may keep the protected
    /// current entity of a queue holding `nr_running` entities (BORE 5.9.6
    /// ignores it above `sched_burst_parity_threshold`). Default: true.
    fn run_to_parity(&self, _nr_running: u32) -> bool {
        true
    }

    /// EEVDF `place_entity`, for an entity enqueued with `flags` (task or
    /// group entity, not one whose relative deadline is restored): the
    /// virtual request `vslice` its deadline is placed at; returns the
    /// request to use instead of the kernel's PLACE_DEADLINE_INITIAL rule
    /// (half for new tasks), or None for the kernel's rule (BORE 5.9.6
    /// halves it for every enqueue in `sched_deadline_boost_mask`).
    /// Default: None.
    fn deadline_vslice(&self, _flags: EnqueueFlags, _vslice: i64) -> Option<i64> {
        None
    }
}

/// An entity as a queue-ordering policy sees it (class/fair/order.rs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EntityRef {
    /// The entity (stable for the run: an index into the fair class's arena).
    pub se: SeId,
    /// Its task; None for a task group's entity.
    pub task: Option<TaskId>,
    /// It is its queue's running entity (`se == cfs_rq->curr`).
    pub is_curr: bool,
}

/// How tick preemption works under a queue-ordering policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TickPreempt {
    /// CFS's `check_preempt_tick` (slice used up; past min_granularity,
    /// the vruntime lead over the first entity beyond the slice), with the
    /// policy's order choosing the first entity and "curr runs before it"
    /// ending the check (TT).
    Slice,
    /// Reschedule iff the pick (the running entity included) is not the
    /// running entity: no slice, no granularity (CacULE).
    PickDiffers,
}

/// The rules a queue-ordering policy changes ([`FairHooks::queue_order`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueOrder {
    /// Tick preemption.
    pub tick: TickPreempt,
    /// CFS's next/last/skip buddies are kept (TT) or compiled out (CacULE).
    pub buddies: bool,
    /// Wakeup preemption: after CFS's early exits, the wakee preempts iff
    /// it runs [`FairHooks::before`] the running entity (CacULE), instead
    /// of CFS's vruntime lead beyond wakeup_granularity (TT: false).
    pub wakeup_by_order: bool,
    /// CFS's timeline is kept: the vruntime tree, `min_vruntime` and the
    /// vruntime frames it implies (`place_entity`, the renormalisation at
    /// enqueue, dequeue, fork and migration) (TT). False (CacULE): the
    /// patch compiles all of them out, so `se.vruntime` only accumulates
    /// `calc_delta_fair` from 0, and the queue is only its list.
    pub timeline: bool,
}

/// The kernel's fair class: no hook overridden.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoHooks;

impl FairHooks for NoHooks {
    fn name(&self) -> &'static str {
        ""
    }
}
