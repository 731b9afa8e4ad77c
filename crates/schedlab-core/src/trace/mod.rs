//! Scheduler event recording and export (Perfetto protobuf, ftrace text).
//!
//! The recorded vocabulary is the kernel's tracepoints: `sched_switch`,
//! `sched_waking`, `sched_wakeup`, `sched_wakeup_new`, `sched_migrate_task`,
//! `sched_process_exit`.

pub mod counters;
pub mod ftrace;
pub mod import;
pub mod measure;
mod parse;
mod paths;
pub mod perfetto;
pub mod records;

use crate::clock::Ns;
use crate::cpuset::CpuId;
use crate::task::TaskId;
pub use counters::{CounterSample, TaskCounters};
pub use paths::{PathWakeup, WakePath};
pub use records::Records;

/// Append `x` as an LEB128 varint (protobuf's encoding; also the packed
/// counter samples').
#[inline]
pub(crate) fn put_varint(b: &mut Vec<u8>, mut x: u64) {
    while x >= 0x80 {
        b.push(x as u8 | 0x80);
        x >>= 7;
    }
    b.push(x as u8);
}

/// `prev_state` of a switched-out task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrevState {
    /// Preempted while runnable (`R` / `R+`).
    Runnable,
    /// Blocked (`S`).
    Sleeping,
    /// Exited (`X`).
    Dead,
}

/// One recorded tracepoint hit. `None` tasks are the idle task (pid 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TraceEvent {
    /// `sched_switch`.
    Switch {
        /// Outgoing task.
        prev: Option<TaskId>,
        /// Its state.
        prev_state: PrevState,
        /// Incoming task.
        next: Option<TaskId>,
    },
    /// `sched_waking` (recorded on the waker's CPU).
    Waking {
        /// Wakee.
        task: TaskId,
        /// CPU chosen.
        target_cpu: CpuId,
    },
    /// `sched_wakeup` (on the target CPU).
    Wakeup {
        /// Wakee.
        task: TaskId,
    },
    /// `sched_wakeup_new`.
    WakeupNew {
        /// New task.
        task: TaskId,
    },
    /// `sched_migrate_task`.
    Migrate {
        /// Moving task.
        task: TaskId,
        /// Source.
        orig_cpu: CpuId,
        /// Destination.
        dest_cpu: CpuId,
    },
    /// `sched_process_exit`.
    Exit {
        /// Exiting task.
        task: TaskId,
    },
    /// `power:cpu_frequency`: the CPU's frequency changed (kHz). Task
    /// counters (vruntime, lag, ...) are kept apart ([`TaskCounters`]).
    CpuFrequency {
        /// New frequency, kHz.
        khz: u64,
    },
}

/// A recorded event with its time and CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record {
    /// Time.
    pub ts: Ns,
    /// CPU the tracepoint fired on.
    pub cpu: CpuId,
    /// Event.
    pub ev: TraceEvent,
}

/// In-memory recorder (the tracefs ring buffer, without overwrite). Its
/// `Default` samples the task counters, as `SimConfig::trace_counters`
/// does by default.
#[derive(Debug, Clone)]
pub struct Trace {
    /// Records in the order they happened (non-decreasing time).
    pub records: Records,
    /// Task counters, sampled at switches.
    pub counters: TaskCounters,
    /// Whether the counters are sampled (`SimConfig::trace_counters`).
    pub sample_counters: bool,
}

impl Default for Trace {
    fn default() -> Self {
        Trace::new(true)
    }
}

impl Trace {
    /// An empty trace; `sample_counters`: whether task counters are kept.
    pub fn new(sample_counters: bool) -> Trace {
        Trace {
            records: Records::default(),
            counters: TaskCounters::default(),
            sample_counters,
        }
    }

    /// Append a record.
    pub fn push(&mut self, ts: Ns, cpu: CpuId, ev: TraceEvent) {
        self.records.push(Record { ts, cpu, ev });
    }
}

/// What exporters need to know about a task.
#[derive(Debug, Clone)]
pub struct TaskInfo {
    /// comm (≤ 15 chars).
    pub comm: String,
    /// Thread id.
    pub pid: u32,
    /// Process id.
    pub tgid: u32,
    /// Kernel prio (120 + nice).
    pub prio: i32,
}

/// A finished trace plus the task table, ready for export.
#[derive(Debug, Clone)]
pub struct TraceData {
    /// Events.
    pub records: Records,
    /// Task counters (none in imported traces).
    pub counters: TaskCounters,
    /// Tasks by id.
    pub tasks: Vec<TaskInfo>,
    /// Processes: (tgid, name).
    pub processes: Vec<(u32, String)>,
    /// Number of CPUs.
    pub nr_cpus: usize,
}

impl TraceData {
    /// For each task `pick` selects, its `sched_waking` → `sched_switch`-in
    /// pairs in time order, as (task, waking time, switch-in time): a
    /// waking replaces an earlier one not yet followed by a switch-in, and
    /// a switch-in with no waking pending is no pair (the task was
    /// preempted, not woken): [`TraceData::wakeup_paths`] without the
    /// paths. The repro's probe lateness reads these rather
    /// than the whole trace rendered as text.
    pub fn waking_to_run(&self, pick: impl Fn(TaskId) -> bool) -> Vec<(TaskId, Ns, Ns)> {
        self.wakeup_paths(pick)
            .into_iter()
            .map(|w| (w.task, w.waking, w.run))
            .collect()
    }

    /// (comm, pid, prio) of a task or of the idle task on `cpu`.
    pub fn ident(&self, t: Option<TaskId>, cpu: CpuId) -> (String, u32, i32) {
        match t {
            Some(t) => {
                let i = &self.tasks[t];
                (i.comm.clone(), i.pid, i.prio)
            }
            None => (format!("swapper/{cpu}"), 0, 120),
        }
    }
}
