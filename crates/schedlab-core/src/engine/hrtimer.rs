//! Timer slack coalescing (kernel/time/hrtimer.c, 6.18: `hrtimer_nanosleep`
//! arms the sleeper's hrtimer with a soft expiry at the requested time and a
//! hard expiry `timer_slack_ns` later; `__hrtimer_run_queues` runs whenever
//! the CPU's hrtimer interrupt fires and expires, in expiry order, every
//! queued timer whose *soft* expiry has passed).
//!
//! So a sleeping task wakes at the end of its slack window only if nothing
//! else fires on its timer's CPU inside the window; when the tick (itself an
//! hrtimer, `tick_sched_timer`) or another task's timer fires there first,
//! it wakes then: sleepers sharing a CPU are pulled towards waking
//! together. Modelled because the kernel does it; the measured effect is
//! small (docs/model.md, "Wakeup costs"): on the 16-CPU host 32 sleepers
//! (200 µs run, 2 ms sleep) beside 8 hogs were preempted ~100 times and
//! migrated ~40 times each in 5 s, and with coalescing alone the simulated
//! ones still stayed phase-locked apart (37 migrations in all, 0
//! preemptions); the machine's own spread (`timer_jitter_ns`) is what
//! breaks that.
//!
//! The timer stays on the CPU the task slept on: `hrtimer_start` runs on
//! that CPU while the task is still current, and `get_nohz_timer_target`
//! keeps a CPU that is not idle. Only sleeps with slack are queued here
//! (RT and DEADLINE tasks have none; their timers still fire, and expire
//! others, at their hard expiry through the engine's `Wake` event).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::clock::Ns;
use crate::cpuset::CpuId;
use crate::task::TaskId;

/// A queued sleep timer: (soft expiry, arming order, task, the task's sleep
/// generation); ordered by soft expiry, ties by arming order.
type Queued = (Ns, u64, TaskId, u64);

/// Per CPU, the sleep timers with slack still queued, earliest soft expiry
/// first.
pub(crate) struct SlackTimers {
    per_cpu: Vec<BinaryHeap<Reverse<Queued>>>,
    armed: u64,
    /// The buffer [`Self::due`] fills, lent to the caller and given back
    /// ([`Self::give_back`]). Why: a fresh vector for every expiry was an
    /// allocation and a free at most sleeper wakeups (256 CPUs × 10,000
    /// tasks, half of them sleepers: 62 M instructions of the 4,094 M of
    /// its first simulated second, set-up included).
    spare: Vec<(TaskId, u64)>,
}

impl SlackTimers {
    pub fn new(nr_cpus: usize) -> Self {
        SlackTimers {
            per_cpu: (0..nr_cpus).map(|_| BinaryHeap::new()).collect(),
            armed: 0,
            spare: Vec::new(),
        }
    }

    /// Queue the sleep timer of `task` (sleep generation `gen`) on `cpu`
    /// with soft expiry `soft`.
    pub fn arm(&mut self, cpu: CpuId, soft: Ns, task: TaskId, gen: u64) {
        self.armed += 1;
        self.per_cpu[cpu].push(Reverse((soft, self.armed, task, gen)));
    }

    /// The earliest soft expiry of a timer queued on `cpu` (live or
    /// stale; `Ns::MAX` if none): from then on [`Self::due`] returns or
    /// drops something.
    pub fn next_soft(&self, cpu: CpuId) -> Ns {
        self.per_cpu[cpu]
            .peek()
            .map_or(Ns::MAX, |&Reverse((soft, ..))| soft)
    }

    /// Take the timers of `cpu` whose soft expiry is at or before `now`, in
    /// expiry order, as (task, gen); entries of tasks that woke otherwise
    /// or slept again are the caller's to skip. The vector is this
    /// queue's buffer: hand it back with [`Self::give_back`] when done.
    pub fn due(&mut self, cpu: CpuId, now: Ns) -> Vec<(TaskId, u64)> {
        let q = &mut self.per_cpu[cpu];
        let mut out = std::mem::take(&mut self.spare);
        out.clear();
        while let Some(&Reverse((soft, _, task, gen))) = q.peek() {
            if soft > now {
                break;
            }
            q.pop();
            out.push((task, gen));
        }
        out
    }

    /// Return the buffer [`Self::due`] lent, to be filled again.
    pub fn give_back(&mut self, buffer: Vec<(TaskId, u64)>) {
        self.spare = buffer;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn due_timers_come_in_expiry_order_in_the_lent_buffer() {
        let mut t = SlackTimers::new(2);
        t.arm(0, 30, 7, 1);
        t.arm(0, 10, 8, 1);
        t.arm(0, 30, 9, 4); // same soft expiry as task 7: armed later, after it
        t.arm(1, 5, 10, 1); // another CPU's
        for task in 20..30 {
            t.arm(0, 35, task, 1);
        }
        let due = t.due(0, 30);
        assert_eq!(due, vec![(8, 1), (7, 1), (9, 4)]);
        t.give_back(due);
        // Ten at once: a buffer larger than a fresh vector of one gets.
        let due = t.due(0, 35);
        assert_eq!(due.len(), 10);
        let (ptr, cap) = (due.as_ptr(), due.capacity());
        t.give_back(due);
        assert_eq!(t.next_soft(0), Ns::MAX);
        assert_eq!(t.next_soft(1), 5);
        // The next expiry fills the same buffer, emptied first: no new
        // allocation while it fits.
        t.arm(0, 40, 11, 2);
        let due = t.due(0, 50);
        assert_eq!(due, vec![(11, 2)]);
        assert_eq!((due.as_ptr(), due.capacity()), (ptr, cap));
        t.give_back(due);
        assert!(t.due(0, 60).is_empty());
    }
}
