//! A task's own PELT utilisation and runnable signals, and their moves with
//! the task between CPUs (kernel/sched/fair.c v6.18: `attach_entity_load_avg`,
//! `detach_entity_load_avg`, `remove_entity_load_avg`,
//! `post_init_entity_util_avg`).
//!
//! The kernel keeps `util_avg` and `runnable_avg` per entity, and a
//! cfs_rq's are the sums of its attached entities' (a sleeping task stays
//! attached, decaying, until it wakes elsewhere). Here each CPU keeps one
//! signal of each (`Fair::util`: a fair task is current; `Fair::runnable`:
//! 1024 per counted runnable fair task), which is the same sum as long as
//! no task leaves: PELT is linear. What the per-CPU histories alone miss
//! is the move: a task that migrates takes its signals with it, so a hog
//! arriving on a CPU makes that CPU look busy at once, which decides
//! whether the balancer sees it as overloaded (`group_is_overloaded`:
//! capacity × imbalance_pct against util or runnable × 100) and pulls
//! from it. So each task keeps its own two signals (updated at its
//! transitions, cheap), and when it is enqueued on a CPU other than the
//! one its signals are attached to, their averages leave the old CPU's
//! sums and join the new one's, each scaled by the receiving signal's
//! divider (`util_sum = util_avg × divider`, as `attach_entity_load_avg`
//! does; the kernel's wakeup migration subtracts at the old queue's next
//! update, `cfs_rq->removed`, which is the same value one update later).
//!
//! Departures: the load signal does not move (the root queue's load stays
//! the CPU's history; tried and not kept, docs/model.md "SMP"); util_est
//! is not modelled; a task that changes class keeps its signals where
//! they are (no `switched_from_fair` detach).

use super::entity::SeId;
use super::Fair;
use crate::cpuset::CpuId;
use crate::machine::Machine;
use crate::pelt::Pelt;
use crate::task::TaskId;

/// A task's own signals and the CPU holding them in its sums: one cache
/// line (64 bytes, aligned), which every switch of the task touches.
#[derive(Debug, Clone, Copy, Default)]
#[repr(align(64))]
pub struct TaskSignals {
    /// `se->avg.util_avg`'s signal: 1024 while the task is current.
    pub util: Pelt,
    /// `se->avg.runnable_avg`'s: 1024 while it is counted runnable
    /// (queued or current, not delay-dequeued).
    pub runnable: Pelt,
    /// The CPU whose `util` and `runnable` hold this task's (None: a new
    /// task, not yet attached anywhere).
    pub on: Option<CpuId>,
}

impl TaskSignals {
    /// Bring both signals up to `now` for a task that was neither current
    /// nor counted runnable since their last update (it slept, or it is
    /// being enqueued or has exited).
    fn rest_until(&mut self, now: crate::clock::Ns) {
        self.util.update(now, 0);
        self.runnable.update(now, 0);
    }
}

impl Fair {
    /// Start loading what `set_next_task` reads of `next` once the engine
    /// has put the previous task back (crate::prefetch): its signals and
    /// the two lines of its entity `se` the pick did not read (the pick
    /// read the first: its flags and queue), its key and times, and its
    /// PELT signal.
    pub(super) fn prefetch_set_next(&self, next: TaskId, se: SeId) {
        if self.signals.len() < crate::prefetch::MIN_TASKS {
            return;
        }
        if let Some(s) = self.signals.get(next) {
            crate::prefetch::prefetch(s);
        }
        if let Some(e) = self.se.get(se) {
            crate::prefetch::prefetch(&e.key);
            crate::prefetch::prefetch(&e.load);
        }
    }

    /// Start loading what waking `t` reads first (crate::prefetch): its
    /// wakee flips (select.rs), its signals and its entity's flags and
    /// times, which may lie on two lines.
    pub(super) fn prefetch_wakee(&self, t: TaskId) {
        if let (Some(w), Some(s)) = (self.wakee.get(t), self.signals.get(t)) {
            crate::prefetch::prefetch(w);
            crate::prefetch::prefetch(s);
        }
        if let Some(e) = self.task_se.get(t).and_then(|&se| self.se.get(se)) {
            crate::prefetch::prefetch(&e.on_rq);
            crate::prefetch::prefetch(&e.vruntime);
        }
    }

    /// A new task's signals, zero and unattached (its first enqueue
    /// attaches them: [`Self::signals_enqueue`]).
    pub(super) fn signals_fork(&mut self, m: &Machine, t: TaskId) {
        if self.signals.len() <= t {
            self.signals.resize_with(t + 1, TaskSignals::default);
        }
        self.signals[t] = TaskSignals {
            util: Pelt::new(m.now, 0),
            runnable: Pelt::new(m.now, 0),
            on: None,
        };
    }

    /// `t` is enqueued on `cpu` (not counted runnable until now): attach
    /// its signals there, moving them from where they were.
    pub(super) fn signals_enqueue(&mut self, m: &Machine, t: TaskId, cpu: CpuId) {
        let s = &mut self.signals[t];
        s.rest_until(m.now);
        match s.on {
            Some(c) if c == cpu => return,
            Some(old) => self.move_signals(m, t, old, -1),
            None => self.post_init_util(m, t, cpu),
        }
        self.move_signals(m, t, cpu, 1);
        self.signals[t].on = Some(cpu);
    }

    /// `t` stops being counted runnable (dequeued, or delay-dequeued).
    pub(super) fn signals_dequeue(&mut self, m: &Machine, t: TaskId) {
        self.signals[t].runnable.update(m.now, 1024);
    }

    /// `t` stops being current (it ran since it was set next).
    pub(super) fn signals_put_prev(&mut self, m: &Machine, t: TaskId) {
        self.signals[t].util.update(m.now, 1024);
    }

    /// `t` becomes current (it did not run since it was put back).
    pub(super) fn signals_set_next(&mut self, m: &Machine, t: TaskId) {
        self.signals[t].util.update(m.now, 0);
    }

    /// `t` exited: its signals leave its CPU (`task_dead_fair`,
    /// `remove_entity_load_avg`).
    pub(super) fn signals_dead(&mut self, m: &Machine, t: TaskId) {
        let Some(s) = self.signals.get_mut(t) else {
            return;
        };
        s.rest_until(m.now);
        if let Some(old) = s.on.take() {
            self.move_signals(m, t, old, -1);
        }
    }

    /// Add (`sign` 1) or take away (−1) `t`'s averages to or from `cpu`'s
    /// signals, each brought up to now first.
    fn move_signals(&mut self, m: &Machine, t: TaskId, cpu: CpuId, sign: i128) {
        self.cpu_util(m, cpu);
        self.cpu_runnable(m, cpu);
        let s = self.signals[t];
        if sign > 0 {
            self.maybe_signals.insert(cpu);
        }
        let u = &mut self.util[cpu];
        u.add_sum(sign * i128::from(s.util.avg()) * i128::from(u.divider()));
        let r = &mut self.runnable[cpu];
        r.add_sum(sign * i128::from(s.runnable.avg()) * i128::from(r.divider()));
    }

    /// `post_init_entity_util_avg`: a new task's utilisation starts at its
    /// weight's share of `cpu`'s utilisation, at most half the CPU's spare
    /// capacity (all of that half on a CPU with none), and its runnable
    /// average at the same value.
    fn post_init_util(&mut self, m: &Machine, t: TaskId, cpu: CpuId) {
        let util = self.cpu_util(m, cpu);
        let cap = m.topo.cpu(cpu).capacity.saturating_sub(util) / 2;
        let start = match (cap, util) {
            (0, _) => 0,
            (_, 0) => cap,
            _ => {
                let load = self.cpu_load(m, cpu);
                let w = m.tasks[t].weight;
                (u128::from(util) * u128::from(w) / (u128::from(load) + 1)).min(u128::from(cap))
                    as u64
            }
        };
        let s = &mut self.signals[t];
        s.util = Pelt::new(m.now, start);
        s.runnable = Pelt::new(m.now, start);
    }
}

#[cfg(test)]
mod tests {
    use super::TaskSignals;

    #[test]
    fn a_tasks_signals_fill_one_cache_line() {
        // Every switch updates them (pelt.rs: the average is not kept);
        // at 80 bytes `util` straddled two lines for one task in four.
        assert_eq!(std::mem::size_of::<TaskSignals>(), 64);
        assert_eq!(std::mem::align_of::<TaskSignals>(), 64);
    }
}
