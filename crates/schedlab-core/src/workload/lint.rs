//! Warnings about a workload that parses but will misbehave: a mutex that
//! some task locks and no task ever unlocks (the first locker keeps it
//! forever and every other locker blocks for good), and a task that forks
//! itself without taking any time (a fork loop: the run stops at
//! `max_threads`).

use super::{Event, Workload};
use std::collections::BTreeSet;

/// Warnings for `wl` (added to `Workload::warnings` by the parser).
pub fn warnings(wl: &Workload) -> Vec<String> {
    let mut locked = BTreeSet::new();
    let mut unlocked = BTreeSet::new();
    for t in &wl.tasks {
        for e in t.phases.iter().flat_map(|p| p.events.iter()) {
            match e {
                Event::Lock(m) => {
                    locked.insert((m.clone(), t.name.clone()));
                }
                Event::Unlock(m) | Event::Wait { mutex: m, .. } => {
                    unlocked.insert(m.clone());
                }
                _ => {}
            }
        }
    }
    let mut out = vec![];
    for t in &wl.tasks {
        let events = || t.phases.iter().flat_map(|p| p.events.iter());
        let forks_itself = events().any(|e| *e == Event::Fork(t.name.as_str().into()));
        let takes_time = events().any(|e| {
            matches!(
                e,
                Event::Run(_)
                    | Event::Runtime(_)
                    | Event::Sleep(_)
                    | Event::SleepAbout(_)
                    | Event::Timer { .. }
            )
        });
        if forks_itself && !takes_time {
            out.push(format!(
                "tasks.{}: forks itself without a run, sleep or timer: a fork loop at time 0 (the run stops at the tunable max_threads)",
                t.name
            ));
        }
    }
    let mut seen = BTreeSet::new();
    for (m, task) in &locked {
        if !unlocked.contains(m) && seen.insert(m.clone()) {
            out.push(format!(
                "tasks.{task}: mutex \"{m}\" is locked but no task ever unlocks it: its first locker keeps it and every other locker blocks for good"
            ));
        }
    }
    out
}
