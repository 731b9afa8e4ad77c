//! Where the engine knows which task it will touch next, it hints that
//! task's cache lines to the processor (crate::prefetch), so that their
//! misses overlap the work in between instead of stalling one after the
//! other: the next queued event's wakee, a batch of expired sleep timers,
//! the task whose segment ends next, the task a switch brings in.
//!
//! Only with [`crate::prefetch::MIN_TASKS`] tasks or more (below, their
//! structures stay in the cache and the hints would cost instructions for
//! nothing): each entry point here asks, so its callers need not.
//!
//! Measured on issue 18's big machine (256 CPUs, 10,000 tasks, half of
//! them sleepers; 2 simulated seconds): ten alternating pairs of runs,
//! median ratio 0.76 of user time (0.57–0.89); `perf` showed the misses
//! these hints start (a task's first line at a switch-in, its counters and
//! latency record, its class's entity, signals and wakee flips at a
//! wakeup) taking about a fifth of the run before. A hint reads nothing
//! the simulation depends on, so no output changes: the instruction
//! bench's workloads above the bound (1,000 and 10,000 hogs, the sleepers
//! mix) and the big machine report the same bytes with and without.

use super::Simulator;
use crate::event::{Event, EventKind};
use crate::prefetch::prefetch;
use crate::task::TaskId;

impl Simulator {
    /// Whether hints are worth their instructions: enough tasks that theirs
    /// are not all in the cache.
    #[inline]
    fn prefetching(&self) -> bool {
        self.m.tasks.len() >= crate::prefetch::MIN_TASKS
    }

    /// If the next queued event wakes a task, start loading what its
    /// wakeup reads while the event just taken is handled.
    #[inline]
    pub(super) fn prefetch_next_wakee(&self) {
        if !self.prefetching() {
            return;
        }
        if let Some(&Event {
            kind: EventKind::Wake { task, .. },
            ..
        }) = self.events.peek()
        {
            self.prefetch_wakeup(task);
        }
    }

    /// Start loading what the next segment end reads first, while the one
    /// just taken is handled: its task's busy work, program position and
    /// sleep generation, and the counters its work is added to.
    #[inline]
    pub(super) fn prefetch_next_segment_end(&self) {
        if !self.prefetching() {
            return;
        }
        let Some((_, cpu)) = self.seg_ends.earliest() else {
            return;
        };
        if let Some(t) = self.m.rqs[cpu].curr {
            prefetch(&self.m.tasks[t].busy);
            prefetch(&self.m.tasks[t].prog);
            // A sleep bumps the sleep generation (lifecycle.rs `block`).
            prefetch(&self.m.tasks[t].sleep_gen);
            prefetch(&self.m.stats.tasks[t]);
        }
    }

    /// [`Self::prefetch_wakeup`] for each of a batch of expired sleep
    /// timers (task, generation), before the first of them is woken.
    #[inline]
    pub(super) fn prefetch_wakeups(&self, due: &[(TaskId, u64)]) {
        if !self.prefetching() {
            return;
        }
        for &(task, _) in due {
            self.prefetch_wakeup(task);
        }
    }

    /// Start loading what waking `task` reads first: its task's state,
    /// sleep generation and affinity, its draw of the wakeup costs, and
    /// each class's part (`SchedClass::prefetch_wakeup`).
    fn prefetch_wakeup(&self, task: TaskId) {
        let Some(t) = self.m.tasks.get(task) else {
            return;
        };
        prefetch(&t.state);
        prefetch(&t.sleep_gen);
        prefetch(&t.affinity);
        self.spread_draws.prefetch(task);
        for k in 0..self.classes.len() {
            self.classes.get_ref(k).prefetch_wakeup(task);
        }
    }

    /// Start loading the first line of `n`'s task and what its switch-in
    /// reads of its counters, after the previous task is put back and
    /// switched out.
    #[inline]
    pub(super) fn prefetch_switch_in(&self, n: TaskId) {
        if !self.prefetching() {
            return;
        }
        prefetch(&self.m.tasks[n]);
        let stats = &self.m.stats.tasks[n];
        prefetch(stats);
        // Its wakeup latency, recorded at the switch-in (two lines).
        prefetch(&stats.wakeup_latency);
        prefetch(&stats.wakeup_latency.max);
    }
}
