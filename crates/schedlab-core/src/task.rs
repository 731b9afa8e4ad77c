//! Tasks (threads) as the engine sees them: identity, scheduling attributes,
//! state, and where they are in their rt-app program.

use crate::clock::Ns;
use crate::cpuset::{CpuId, CpuSet};
use crate::workload::Policy;

/// Index of a task in `Machine::tasks` (creation order).
pub type TaskId = usize;

/// SCHED_DEADLINE parameters of a task (`sched_attr`), ns; all 0 for
/// other policies.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DlAttr {
    /// `sched_runtime`.
    pub runtime: Ns,
    /// `sched_deadline` (relative).
    pub deadline: Ns,
    /// `sched_period`.
    pub period: Ns,
}

impl DlAttr {
    /// From rt-app's dl-runtime / dl-period / dl-deadline (period defaults
    /// to the runtime, deadline to the period; formats.md §1).
    pub fn from_attrs(policy: Policy, a: &crate::workload::Attrs) -> Self {
        if policy != Policy::Deadline {
            return DlAttr::default();
        }
        let runtime = a.dl_runtime.unwrap_or(0);
        let period = a.dl_period.unwrap_or(runtime);
        let deadline = a.dl_deadline.unwrap_or(period);
        DlAttr {
            runtime,
            deadline,
            period,
        }
    }

    /// Bandwidth R/P in the kernel's fixed point (`to_ratio`, BW_SHIFT 20).
    pub fn bw(&self) -> u64 {
        if self.period == 0 {
            return 0;
        }
        (((self.runtime as u128) << 20) / self.period as u128) as u64
    }
}

/// Life cycle state (`p->__state` plus on-CPU status).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskState {
    /// On a run queue, waiting for a CPU.
    Runnable,
    /// Current on its CPU.
    Running,
    /// Blocked (sleep, timer, lock, condition, barrier, suspend).
    Sleeping,
    /// Exited.
    Dead,
}

/// Whether the task is queued in its class (`p->on_rq`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnRq {
    /// Not queued.
    No,
    /// Queued and runnable.
    Queued,
    /// Sleeping but kept queued by EEVDF's delayed dequeue.
    Delayed,
}

/// Where a task is in its rt-app program, beyond the busy event in
/// progress ([`Task::busy`], in the task's first cache line): `repr(C)`,
/// what each step reads first; it follows the hot line of [`Task`].
#[derive(Debug, Clone, Default)]
#[repr(C)]
pub struct Prog {
    /// Next event in the current phase.
    pub event: usize,
    /// Current phase.
    pub phase: usize,
    /// Work of the current `run` not yet handed to `busy`: a `run` too
    /// long to time in one segment without passing the end of simulated
    /// time is done in chunks (engine/exec.rs).
    pub work_pending: u64,
    /// Completed iterations of the whole phase list.
    pub loops_done: u64,
    /// Completed iterations of the current phase.
    pub phase_loops_done: u64,
    /// Mutex to re-take after a condition wait.
    pub relock: Option<usize>,
    /// The phase's attributes were applied (done once per phase entry).
    pub phase_applied: bool,
    /// The start delay was already served.
    pub delay_done: bool,
    /// Its program: an index in the engine's shared programs
    /// (engine/program.rs), kept here because a step reads the task first.
    pub program: u32,
}

/// A busy event in progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Busy {
    /// `run`: reference-ns of work left.
    Work(u64),
    /// `runtime`: busy until this wall time.
    Until(Ns),
}

/// A time or none in one word (`Ns::MAX` stands for none; no simulated
/// time comes near it). `Option<Ns>` takes two words, and the first cache
/// line of [`Task`] holds every field a switch reads only with its two
/// stamps at one word each: a switch at 10,000 hogs on 8 CPUs found the
/// task's second line cold for the busy event alone (issue 18).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp(Ns);

impl Stamp {
    /// No time.
    pub const NONE: Stamp = Stamp(Ns::MAX);

    /// The time `t`.
    pub fn at(t: Ns) -> Self {
        debug_assert!(t != Ns::MAX, "a stamp's time is below Ns::MAX");
        Stamp(t)
    }

    /// The time, if any.
    pub fn get(self) -> Option<Ns> {
        (self.0 != Ns::MAX).then_some(self.0)
    }

    /// The time, if any, leaving none (`Option::take`).
    pub fn take(&mut self) -> Option<Ns> {
        std::mem::replace(self, Stamp::NONE).get()
    }
}

impl Default for Stamp {
    fn default() -> Self {
        Stamp::NONE
    }
}

/// One simulated thread.
///
/// `repr(C)`, cache-line aligned, with the fields every switch, tick and wakeup touches first
/// (one cache line: policy to `busy`, then the program position):
/// with thousands of tasks per CPU each switch finds its task cold in the
/// cache, and Rust's own field order spread those fields over four lines.
#[derive(Debug, Clone)]
#[repr(C, align(64))]
pub struct Task {
    /// Scheduling policy.
    pub policy: Policy,
    /// State.
    pub state: TaskState,
    /// Queued in its class?
    pub on_rq: OnRq,
    /// Memory intensity, parts per million (exectime.rs).
    pub mem_ppm: u32,
    /// CPU it is queued on or last ran on (`task_cpu`).
    pub cpu: CpuId,
    /// Last time it started running on a CPU (for cache hotness).
    pub last_run_start: Ns,
    /// Last time it stopped running.
    pub last_run_end: Ns,
    /// Time it last became runnable-but-not-running.
    pub runnable_since: Stamp,
    /// Time of the last `sched_waking`, until the task runs.
    pub waking_since: Stamp,
    /// Remaining work of the current `run` (reference ns) or, for `runtime`,
    /// the wall-clock end time; `None` when no busy event is in progress.
    /// Part of the program position, kept here: every switch reads it.
    pub busy: Option<Busy>,
    /// The rt-app program position.
    pub prog: Prog,
    /// Load weight from the nice table (3 for SCHED_IDLE).
    pub weight: u64,
    /// Task group index (`Machine::groups`), 0 = root.
    pub group: usize,
    /// Generation of the pending sleep timer (stale wakeups are ignored).
    pub sleep_gen: u64,
    /// Custom slice requested via `sched_attr.sched_runtime` (rt-app `dl-runtime` on fair policies).
    pub custom_slice: Option<Ns>,
    /// Index in `Machine::tasks`.
    pub id: TaskId,
    /// Thread name (`comm`, at most 15 characters in traces).
    pub name: String,
    /// Thread id.
    pub pid: u32,
    /// Process id (thread-group id).
    pub tgid: u32,
    /// Index of the task object in the workload.
    pub def: usize,
    /// Process index (`Machine::processes`).
    pub process: usize,
    /// Nice value (fair policies).
    pub nice: i32,
    /// RT priority 1..=99 for SCHED_FIFO/RR (0 otherwise).
    pub rt_priority: u32,
    /// SCHED_DEADLINE parameters (runtime, deadline, period), ns.
    pub dl: DlAttr,
    /// Allowed CPUs.
    pub affinity: CpuSet,
    /// Affinity as requested by the workload; `affinity` is it restricted to
    /// online CPUs (all online CPUs if none of them is online, as
    /// `select_fallback_rq` does).
    pub affinity_req: CpuSet,
    /// Per-thread timers (`unique*` refs): (timer number, next activation).
    pub own_timers: Vec<(u32, Ns)>,
    /// Creation time.
    pub created: Ns,
    /// Exit time.
    pub exited: Option<Ns>,
}

impl Task {
    /// Kernel prio as shown in traces: 120 + nice for fair tasks.
    /// Kernel `prio`: 99 − rt_priority for SCHED_FIFO/RR, −1 for
    /// SCHED_DEADLINE, 120 + nice otherwise (linux-rt-dl.md §1).
    pub fn prio(&self) -> i32 {
        match self.policy {
            Policy::Fifo | Policy::Rr => 99 - self.rt_priority as i32,
            Policy::Deadline => -1,
            _ => 120 + self.nice,
        }
    }

    /// Whether it is queued and runnable (not delayed).
    pub fn is_queued(&self) -> bool {
        self.on_rq == OnRq::Queued
    }

    /// The comm as the kernel stores it (15 characters).
    pub fn comm(&self) -> &str {
        let end = self
            .name
            .char_indices()
            .nth(15)
            .map_or(self.name.len(), |(i, _)| i);
        &self.name[..end]
    }
}

#[cfg(test)]
mod tests {
    use super::{Busy, Stamp, Task};
    use std::mem::{offset_of, size_of};

    /// What a switch reads of its task, policy to the busy event, fits the
    /// first cache line (issue 18: a second line is a second miss at every
    /// switch with thousands of tasks per CPU).
    #[test]
    fn a_switch_reads_one_line_of_its_task() {
        assert_eq!(offset_of!(Task, policy), 0);
        assert!(offset_of!(Task, busy) + size_of::<Option<Busy>>() <= 64);
        assert_eq!(size_of::<Stamp>(), 8);
    }

    #[test]
    fn a_stamp_is_an_option_of_a_time() {
        let mut s = Stamp::default();
        assert_eq!((s.get(), s.take()), (None, None));
        s = Stamp::at(7);
        assert_eq!(s.get(), Some(7));
        assert_eq!(s.take(), Some(7));
        assert_eq!(s, Stamp::NONE);
        assert_eq!(Stamp::at(0).get(), Some(0));
    }
}
