//! OS noise: per-CPU kernel threads as workload tasks.

use crate::clock::Ns;
use crate::config::TunableSet;
use crate::workload::{Attrs, Event, Phase, TaskDef, Workload};

/// OS noise (engine tunables `noise_interval_us`, `noise_runtime_us`): one
/// pinned SCHED_OTHER thread per CPU, like the per-CPU kernel threads
/// (kworker, ksoftirqd, rcu) of a real machine, that wakes after a seeded
/// random gap, runs briefly and sleeps again.
///
/// Why: without any disturbance the model is exactly periodic, and periodic
/// load balancing can phase-lock onto the same victim task for a whole run
/// (3 hogs on 2 CPUs: one task is always the one migrated). A real machine
/// is never that quiet: tracing 3 hogs on this project's 2-CPU host shows
/// rcu_preempt, kdamond and other threads waking every few hundred ms and
/// the migrated task changing irregularly (docs/model.md, "OS noise").
pub(crate) fn add_noise_threads(wl: &mut Workload, tunables: &TunableSet, cpus: usize) {
    let interval = tunables.get("noise_interval_us").unwrap_or(0).max(0) as Ns * 1_000;
    if interval == 0 {
        return;
    }
    let runtime = tunables.get("noise_runtime_us").unwrap_or(20).max(1) as Ns * 1_000;
    // One pinned thread per CPU, or one the scheduler places (a daemon that
    // wanders: on the 2-vCPU host the busiest background thread woke ~17
    // times a second on whichever CPU it last ran, docs/model.md "OS noise").
    let pinned = tunables.get("noise_per_cpu").unwrap_or(1) != 0;
    let threads: Vec<(String, Option<Vec<usize>>)> = if pinned {
        (0..cpus)
            .map(|cpu| (format!("noise/{cpu}"), Some(vec![cpu])))
            .collect()
    } else {
        vec![("noise".to_string(), None)]
    };
    for (name, cpus) in threads {
        wl.tasks.push(TaskDef {
            name: name.clone(),
            instances: 1,
            delay: 0,
            loops: None,
            process: "[noise]".into(),
            attrs: Attrs {
                cpus,
                ..Attrs::default()
            },
            phases: vec![Phase {
                name,
                loops: 1,
                attrs: Attrs::default(),
                events: vec![Event::SleepAbout(interval), Event::Runtime(runtime)],
            }],
            daemon: true,
        });
    }
}
