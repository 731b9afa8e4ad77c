//! What blocked tasks wait on when a run ends: deadlocks (a cycle of tasks
//! each waiting for a mutex the next one holds), lost wakeups (a task
//! waiting on a condition, barrier or suspend queue that nothing will
//! signal) and runs that end early because every task is blocked. Reported
//! as warnings in the output and in the metrics, never silently.

use super::Simulator;
use crate::task::{TaskId, TaskState};
use std::collections::BTreeMap;

impl Simulator {
    /// Warnings about tasks still blocked on synchronisation objects at the
    /// end of the run. `idle_end`: the run ended because no event was left
    /// (not at its duration and not because every thread exited).
    pub(crate) fn blocked_warnings(&self, idle_end: bool) -> Vec<String> {
        let name = |t: TaskId| self.m.tasks[t].name.as_str();
        let mut waits: BTreeMap<TaskId, String> = BTreeMap::new();
        let mut holder: BTreeMap<TaskId, TaskId> = BTreeMap::new();
        let sync = &self.sync;
        for (m, id) in sync.by_name() {
            let mx = &sync.mutexes[id];
            for w in &mx.waiters {
                let by = mx.owner.map_or("nobody".to_string(), |o| {
                    holder.insert(*w, o);
                    format!("task {}", name(o))
                });
                waits.insert(*w, format!("mutex \"{m}\" (held by {by})"));
            }
        }
        for (c, id) in sync.by_name() {
            for w in &sync.conds[id] {
                waits.insert(*w, format!("a signal on condition \"{c}\""));
            }
        }
        for (b, id) in sync.by_name() {
            let bar = &sync.barriers[id];
            for w in &bar.waiting {
                waits.insert(
                    *w,
                    format!(
                        "barrier \"{b}\" ({} of {} arrived)",
                        bar.waiting.len(),
                        bar.parties
                    ),
                );
            }
        }
        for (s, id) in sync.by_name() {
            for w in &sync.suspended[id] {
                waits.insert(*w, format!("a resume of \"{s}\""));
            }
        }
        waits.retain(|t, _| {
            let task = &self.m.tasks[*t];
            task.exited.is_none() && task.state == TaskState::Sleeping
        });
        if waits.is_empty() {
            return vec![];
        }
        let at = self.m.now as f64 / 1e9;
        let mut out = vec![];
        // Cycles in the wait-for graph of mutexes: a deadlock.
        let mut in_cycle: Vec<TaskId> = vec![];
        for &start in holder.keys() {
            let mut path = vec![start];
            let mut cur = start;
            while let Some(&next) = holder.get(&cur) {
                if next == start {
                    if path.iter().min() == Some(&start) {
                        let names: Vec<&str> = path.iter().map(|t| name(*t)).collect();
                        out.push(format!(
                            "deadlock (run end, {at:.6} s): {} -> {} (each waits for a mutex the next holds)",
                            names.join(" -> "),
                            name(start)
                        ));
                    }
                    in_cycle.extend(path.iter().copied());
                    break;
                }
                if path.contains(&next) || path.len() > holder.len() {
                    break;
                }
                path.push(next);
                cur = next;
            }
        }
        let listed: Vec<String> = waits
            .iter()
            .filter(|(t, _)| !in_cycle.contains(t))
            .map(|(t, w)| format!("{} waits for {w}", name(*t)))
            .collect();
        if !listed.is_empty() {
            out.push(if idle_end {
                format!(
                    "every task is blocked at {at:.6} s, so the run ended there: {}",
                    listed.join("; ")
                )
            } else {
                format!("blocked at the end ({at:.6} s): {}", listed.join("; "))
            });
        } else if idle_end && out.is_empty() {
            out.push(format!(
                "every task is blocked at {at:.6} s, so the run ended there"
            ));
        }
        out
    }
}
