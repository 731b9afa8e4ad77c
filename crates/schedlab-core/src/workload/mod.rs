//! The workload model: what the tasks do, independent of any scheduler.
//!
//! The native file format is rt-app JSON (../shared/formats.md §1), parsed by
//! [`rtapp`]. All durations are stored in nanoseconds.
//!
//! # Extensions to rt-app
//! * task key `process` (string): tasks naming the same process are threads
//!   of one process (one tgid). **Default**: the task's own name, so the
//!   instances of one task object are the threads of one process and
//!   different task objects are different processes.
//! * global key `taskgroups`: `{"/path": {"shares": N}}` gives a task group
//!   (cgroup v1 `cpu.shares`, default 1024) its weight. Groups named by a
//!   task's `taskgroup` but not listed here get 1024.

pub mod error;
pub mod json;
pub mod lint;
pub mod rtapp;

pub use error::WorkloadError;

use crate::clock::Ns;
use serde::Serialize;

/// Deepest cgroup nesting a workload may use (`/a/b/...`, components).
pub const MAX_GROUP_DEPTH: usize = 15;

/// Scheduling policy of a task (`sched_setattr` policy).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Policy {
    /// `SCHED_OTHER` / `SCHED_NORMAL`
    Other,
    /// `SCHED_BATCH`: fair class, never wakeup-preempts.
    Batch,
    /// `SCHED_IDLE`: fair class, weight 3.
    Idle,
    /// `SCHED_FIFO`
    Fifo,
    /// `SCHED_RR`
    Rr,
    /// `SCHED_DEADLINE`
    Deadline,
    /// `SCHED_EXT` (kernel value 7): scheduled by the loaded sched_ext
    /// policy (class/ext), or by the fair class when none is loaded; takes
    /// a nice value like SCHED_OTHER.
    Ext,
}

impl Policy {
    /// Parse an rt-app policy name.
    pub fn from_name(s: &str) -> Option<Policy> {
        Some(match s {
            "SCHED_OTHER" | "SCHED_NORMAL" => Policy::Other,
            "SCHED_BATCH" => Policy::Batch,
            "SCHED_IDLE" => Policy::Idle,
            "SCHED_FIFO" => Policy::Fifo,
            "SCHED_RR" => Policy::Rr,
            "SCHED_DEADLINE" => Policy::Deadline,
            "SCHED_EXT" => Policy::Ext,
            _ => return None,
        })
    }

    /// The kernel name.
    pub fn name(self) -> &'static str {
        match self {
            Policy::Other => "SCHED_OTHER",
            Policy::Batch => "SCHED_BATCH",
            Policy::Idle => "SCHED_IDLE",
            Policy::Fifo => "SCHED_FIFO",
            Policy::Rr => "SCHED_RR",
            Policy::Deadline => "SCHED_DEADLINE",
            Policy::Ext => "SCHED_EXT",
        }
    }

    /// The kernel's policy number (`SCHED_NORMAL` 0 ... `SCHED_EXT` 7).
    pub fn number(self) -> u32 {
        match self {
            Policy::Other => 0,
            Policy::Fifo => 1,
            Policy::Rr => 2,
            Policy::Batch => 3,
            Policy::Idle => 5,
            Policy::Deadline => 6,
            Policy::Ext => 7,
        }
    }

    /// Whether the priority is a nice value (SCHED_OTHER, SCHED_BATCH,
    /// SCHED_IDLE and SCHED_EXT).
    pub fn takes_nice(self) -> bool {
        self.is_fair() || self == Policy::Ext
    }

    /// Whether the fair class schedules this policy.
    pub fn is_fair(self) -> bool {
        matches!(self, Policy::Other | Policy::Batch | Policy::Idle)
    }

    /// SCHED_FIFO or SCHED_RR.
    pub fn is_rt(self) -> bool {
        matches!(self, Policy::Fifo | Policy::Rr)
    }

    /// SCHED_FIFO, SCHED_RR or SCHED_DEADLINE (the kernel's
    /// `rt_or_dl_task`): the policies whose kernel
    /// priority ([`crate::task::Task::prio`]) is below `MAX_RT_PRIO` (an RT
    /// priority gives 99 − rt_priority ≤ 99, DEADLINE −1; every other policy
    /// 120 + nice ≥ 100, nice being −20..19).
    pub fn is_rt_or_dl(self) -> bool {
        matches!(self, Policy::Fifo | Policy::Rr | Policy::Deadline)
    }

    /// (nice, rt_priority) from rt-app's `priority`: nice for fair policies
    /// (default 0), RT priority for FIFO/RR (default 10, formats.md §1).
    pub fn split_priority(self, priority: Option<i32>) -> (i32, u32) {
        if self.is_rt() {
            (0, priority.unwrap_or(10).clamp(1, 99) as u32)
        } else if self.takes_nice() {
            (priority.unwrap_or(0), 0)
        } else {
            (0, 0)
        }
    }
}

/// Scheduling attributes settable on a task and overridable per phase.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Attrs {
    /// `policy`
    pub policy: Option<Policy>,
    /// `priority`: nice for fair policies, RT priority otherwise.
    pub priority: Option<i32>,
    /// `cpus`: affinity.
    pub cpus: Option<Vec<usize>>,
    /// `taskgroup`: cgroup path.
    pub taskgroup: Option<String>,
    /// `dl-runtime` (ns): DEADLINE runtime, or the custom slice on fair policies.
    pub dl_runtime: Option<Ns>,
    /// `dl-period` (ns).
    pub dl_period: Option<Ns>,
    /// `dl-deadline` (ns).
    pub dl_deadline: Option<Ns>,
    /// Extension `memory_intensity` ∈ [0, 1], in parts per million: the
    /// fraction of the task's full-speed time stalled on memory
    /// (exectime.rs).
    pub memory_ppm: Option<u32>,
}

impl Attrs {
    /// `self` overridden by the fields `over` sets.
    pub fn overlay(&self, over: &Attrs) -> Attrs {
        Attrs {
            policy: over.policy.or(self.policy),
            priority: over.priority.or(self.priority),
            cpus: over.cpus.clone().or_else(|| self.cpus.clone()),
            taskgroup: over.taskgroup.clone().or_else(|| self.taskgroup.clone()),
            dl_runtime: over.dl_runtime.or(self.dl_runtime),
            dl_period: over.dl_period.or(self.dl_period),
            dl_deadline: over.dl_deadline.or(self.dl_deadline),
            memory_ppm: over.memory_ppm.or(self.memory_ppm),
        }
    }
}

/// Timer mode (rt-app `timer.mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum TimerMode {
    /// After an overrun, the next period starts from now.
    Relative,
    /// The original grid is kept: missed periods cascade.
    Absolute,
}

/// A sync resource's or task's name in an event: shared, so that copying a
/// workload or an event copies no strings.
pub type Name = std::rc::Rc<str>;

/// One rt-app event.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum Event {
    /// Busy work worth this many ns on the calibration CPU (scales with capacity).
    Run(Ns),
    /// Busy for this much wall time.
    Runtime(Ns),
    /// Sleep this long.
    Sleep(Ns),
    /// Sleep a seeded-random time, uniform in [mean/2, 3·mean/2) (internal:
    /// the OS-noise threads; not an rt-app key).
    SleepAbout(Ns),
    /// Wait for the next activation of a periodic timer.
    Timer {
        /// Timer name; names starting with `unique` give one timer per thread.
        name: String,
        /// Period (ns).
        period: Ns,
        /// Overrun behaviour.
        mode: TimerMode,
    },
    /// `sched_yield()`.
    Yield,
    /// Take a mutex.
    Lock(Name),
    /// Release a mutex.
    Unlock(Name),
    /// `pthread_cond_wait(cond, mutex)`.
    Wait {
        /// Condition variable.
        cond: Name,
        /// Mutex released while waiting.
        mutex: Name,
    },
    /// Wake one waiter of a condition.
    Signal(Name),
    /// Wake all waiters of a condition.
    Broad(Name),
    /// Wait until every thread referencing this barrier has arrived.
    Barrier(Name),
    /// Block until resumed.
    Suspend(Name),
    /// Wake the threads suspended on a name.
    Resume(Name),
    /// Start a new thread of the named task.
    Fork(Name),
}

/// One phase: attributes applied at its start, then its events `loops` times.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Phase {
    /// Phase name (key in `phases`, or the task name for phase-less tasks).
    pub name: String,
    /// Repetitions (>= 1).
    pub loops: u64,
    /// Overrides applied when the phase starts.
    pub attrs: Attrs,
    /// Events in file order.
    pub events: Vec<Event>,
}

/// One task object of the file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskDef {
    /// Key in `tasks`.
    pub name: String,
    /// Threads created at start (`instance`; 0 = only a `fork` template).
    pub instances: u32,
    /// Start delay.
    pub delay: Ns,
    /// Repetitions of the phase list; `None` = forever (`loop: -1`).
    pub loops: Option<u64>,
    /// Process the threads belong to (extension; default: the task name).
    pub process: String,
    /// Task-level attributes.
    pub attrs: Attrs,
    /// Phases in order.
    pub phases: Vec<Phase>,
    /// A machine daemon added by the engine (OS noise), not a workload task:
    /// it does not keep the run alive and is left out of default fairness.
    pub daemon: bool,
}

impl TaskDef {
    /// The name of this object's `k`-th thread (comm): the object's own
    /// name when it has one instance, else `name-k` (rt-app's naming, and
    /// the host runner's, host/plan.py).
    pub fn thread_name(&self, k: u32) -> String {
        if self.instances == 1 && k == 0 {
            self.name.clone()
        } else {
            format!("{}-{k}", self.name)
        }
    }
}

/// A task group (cgroup) and its weight.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskGroupDef {
    /// Path such as `/a/b`.
    pub path: String,
    /// cgroup v1 `cpu.shares`.
    pub shares: u64,
}

/// A whole workload file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Workload {
    /// Where it came from, for messages.
    pub source: String,
    /// `global.duration`; `None` = until every thread ends.
    pub duration: Option<Ns>,
    /// `global.default_policy`.
    pub default_policy: Policy,
    /// ns per rt-app loop unit if `calibration` is an integer; the CPU
    /// index if it names a CPU.
    pub calibration: Calibration,
    /// Declared task groups.
    pub taskgroups: Vec<TaskGroupDef>,
    /// Task objects in file order.
    pub tasks: Vec<TaskDef>,
    /// Keys that were accepted but have no effect in the simulator.
    pub warnings: Vec<String>,
}

/// rt-app `global.calibration`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Calibration {
    /// `"CPUn"`: `run` durations are measured on CPU n.
    Cpu(usize),
    /// An integer: ns per loop unit on a 1024-capacity CPU at full speed.
    NsPerLoop(u64),
}

impl Workload {
    /// Parse rt-app JSON text; `source` names it in errors.
    pub fn from_rtapp(source: &str, text: &str) -> Result<Workload, WorkloadError> {
        let mut wl = rtapp::parse(source, text)?;
        let mut lints = lint::warnings(&wl);
        wl.warnings.append(&mut lints);
        Ok(wl)
    }

    /// Find a task object by name.
    pub fn task(&self, name: &str) -> Option<&TaskDef> {
        self.tasks.iter().find(|t| t.name == name)
    }

    /// Whether some thread loops forever.
    pub fn uses_rt(&self) -> bool {
        let rt = |a: &Attrs| a.policy.unwrap_or(self.default_policy).is_rt();
        self.tasks.iter().any(|t| {
            rt(&t.attrs)
                || t.phases
                    .iter()
                    .any(|p| p.attrs.policy.is_some_and(|x| x.is_rt()))
        })
    }

    /// Some task loops forever.
    pub fn runs_forever(&self) -> bool {
        self.tasks
            .iter()
            .any(|t| t.loops.is_none() && (t.instances > 0 || self.is_forked(&t.name)))
    }

    /// Whether some task forks task object `name`.
    pub(crate) fn is_forked(&self, name: &str) -> bool {
        self.tasks.iter().any(|t| {
            t.phases
                .iter()
                .any(|p| p.events.iter().any(|e| *e == Event::Fork(name.into())))
        })
    }
}
