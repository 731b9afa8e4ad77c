//! The event queue: a binary heap ordered by (time, sequence).
//!
//! Events at equal times pop in insertion order, so a run never depends on
//! heap internals (style.md, anchor 4: NeXosim's epoch tie-break).

use crate::clock::Ns;
use crate::cpuset::CpuId;
use crate::task::TaskId;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// What happens when an event fires.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum EventKind {
    /// The periodic scheduler tick of a CPU (`sched_tick`).
    Tick(CpuId),
    /// The running segment of work on `cpu` ends. Delivered from the
    /// per-CPU slot `Rq::seg_end`, never queued; the slot is cleared when
    /// the task is switched out, so a delivered end is never stale.
    SegmentEnd {
        /// CPU whose current task finishes its work item.
        cpu: CpuId,
    },
    /// A sleeping task's timer expires (sleep, timer event, start delay).
    Wake {
        /// Task to wake.
        task: TaskId,
        /// Sleep generation at scheduling time (stale if different).
        gen: u64,
    },
    /// A timer a class armed with `Machine::arm_timer`.
    ClassTimer {
        /// Class index in the stack.
        class: usize,
        /// CPU the timer belongs to.
        cpu: CpuId,
        /// Class-defined tag.
        tag: u64,
    },
    /// The deadline server timer of a CPU (class/dl/server.rs).
    ServerTimer {
        /// CPU.
        cpu: CpuId,
    },
    /// The frequency governor's sampling period or next scheduled step.
    GovernorTick,
    /// Step `idx` of the CPU hotplug plan.
    Hotplug {
        /// Index into `SimConfig::hotplug`.
        idx: usize,
    },
    /// A wakeup's deferred resched of a CPU (engine/latency.rs).
    Resched {
        /// CPU to reschedule.
        cpu: CpuId,
    },
    /// The configured duration is over.
    End,
}

/// An event with its firing time and insertion sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Event {
    /// Firing time.
    pub time: Ns,
    /// Insertion sequence: the tie-break for equal times.
    pub seq: u64,
    /// Payload.
    pub kind: EventKind,
}

/// Min-heap of events by (time, seq).
#[derive(Debug, Default)]
pub struct EventQueue {
    heap: BinaryHeap<Reverse<Event>>,
    seq: u64,
}

impl EventQueue {
    /// Schedule `kind` at `time`.
    pub fn push(&mut self, time: Ns, kind: EventKind) {
        self.seq += 1;
        self.heap.push(Reverse(Event {
            time,
            seq: self.seq,
            kind,
        }));
    }

    /// Remove and return the earliest event.
    pub fn pop(&mut self) -> Option<Event> {
        self.heap.pop().map(|Reverse(e)| e)
    }

    /// The earliest event.
    pub fn peek(&self) -> Option<&Event> {
        self.heap.peek().map(|Reverse(e)| e)
    }

    /// Time of the earliest event.
    pub fn peek_time(&self) -> Option<Ns> {
        self.heap.peek().map(|Reverse(e)| e.time)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_times_pop_in_insertion_order() {
        let mut q = EventQueue::default();
        q.push(10, EventKind::Tick(1));
        q.push(5, EventKind::Tick(2));
        q.push(10, EventKind::Tick(0));
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).map(|e| e.kind).collect();
        assert_eq!(
            order,
            vec![EventKind::Tick(2), EventKind::Tick(1), EventKind::Tick(0)]
        );
    }
}
