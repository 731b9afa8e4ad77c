//! Wakeup latency by path: how each wakeup reached the CPU it ran on, read
//! from `sched_migrate_task`'s position and the CPU that recorded it, as
//! the kernel's `set_task_cpu` emits it on the CPU making the move. The
//! same reading serves a host trace and a simulated one (the simulator
//! records moves on the same CPUs: engine/core.rs `set_task_cpu`), so the
//! two can be compared path by path (`schedlab trace paths`).
//!
//! * `stayed`: no move between `sched_waking` and the switch-in.
//! * `placed`: moved before `sched_wakeup`, by the wakeup itself
//!   (`select_task_rq`, on the waker's CPU).
//! * `pushed`: moved after `sched_wakeup`, recorded on a CPU other than the
//!   destination (`push_rt_task`, `push_dl_task`, the stopper, on the
//!   source CPU).
//! * `pulled`: moved after `sched_wakeup`, recorded on the destination (a
//!   balancer or `pull_rt_task` / `pull_dl_task` pulling the waiting task).
//!
//! A task moved twice in one wakeup counts by its first move.

use super::{TraceData, TraceEvent};
use crate::clock::Ns;
use crate::task::TaskId;

/// How a wakeup reached its CPU (module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum WakePath {
    /// No move.
    Stayed,
    /// Moved by the wakeup's placement.
    Placed,
    /// Pushed by the CPU it waited on.
    Pushed,
    /// Pulled by the CPU it ran on.
    Pulled,
}

impl WakePath {
    /// The path's name in reports.
    pub fn name(self) -> &'static str {
        match self {
            WakePath::Stayed => "stayed",
            WakePath::Placed => "placed",
            WakePath::Pushed => "pushed",
            WakePath::Pulled => "pulled",
        }
    }
}

/// One wakeup: its task, path, `sched_waking` time, first move's time (if
/// any) and switch-in time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PathWakeup {
    /// Task.
    pub task: TaskId,
    /// How it reached its CPU.
    pub path: WakePath,
    /// `sched_waking`.
    pub waking: Ns,
    /// The first `sched_migrate_task` of this wakeup.
    pub moved: Option<Ns>,
    /// The switch-in.
    pub run: Ns,
}

#[derive(Clone, Copy)]
struct Pending {
    waking: Ns,
    woken: bool,
    moved: Option<(Ns, WakePath)>,
}

impl TraceData {
    /// The wakeups of the tasks `pick` selects, each with its path, in
    /// switch-in order: a waking replaces an earlier one not yet followed
    /// by a switch-in, and a switch-in with no waking pending is no wakeup
    /// (the task was preempted, not woken). [`TraceData::waking_to_run`]
    /// is these pairs without the paths.
    pub fn wakeup_paths(&self, pick: impl Fn(TaskId) -> bool) -> Vec<PathWakeup> {
        let mut pending: Vec<Option<Pending>> = vec![None; self.tasks.len()];
        let mut out = Vec::new();
        for r in &self.records {
            match r.ev {
                TraceEvent::Waking { task, .. } if pick(task) => {
                    pending[task] = Some(Pending {
                        waking: r.ts,
                        woken: false,
                        moved: None,
                    });
                }
                TraceEvent::Wakeup { task } | TraceEvent::WakeupNew { task } => {
                    if let Some(p) = pending.get_mut(task).and_then(|p| p.as_mut()) {
                        p.woken = true;
                    }
                }
                TraceEvent::Migrate { task, dest_cpu, .. } => {
                    if let Some(p) = pending.get_mut(task).and_then(|p| p.as_mut()) {
                        if p.moved.is_none() {
                            let path = if !p.woken {
                                WakePath::Placed
                            } else if r.cpu == dest_cpu {
                                WakePath::Pulled
                            } else {
                                WakePath::Pushed
                            };
                            p.moved = Some((r.ts, path));
                        }
                    }
                }
                TraceEvent::Switch { next: Some(t), .. } if pick(t) => {
                    if let Some(p) = pending[t].take() {
                        out.push(PathWakeup {
                            task: t,
                            path: p.moved.map_or(WakePath::Stayed, |m| m.1),
                            waking: p.waking,
                            moved: p.moved.map(|m| m.0),
                            run: r.ts,
                        });
                    }
                }
                _ => {}
            }
        }
        out
    }
}
