//! Fair-class hooks: the extension point for research policies that patch
//! the fair class rather than replace it (TSF, PFS, DW-CFS; BORE and
//! CacULE next). The fair class (CFS 6.1 or EEVDF 6.12) keeps every rule
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
    /// (wall time on the CPU, before weighting). Observational: a policy
    /// tracking bursts (BORE) keeps its own per-task state here. Default:
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
}

/// The kernel's fair class: no hook overridden.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoHooks;

impl FairHooks for NoHooks {
    fn name(&self) -> &'static str {
        ""
    }
}
