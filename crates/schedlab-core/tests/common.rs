//! Helpers shared by the integration tests.
#![allow(dead_code)]

use schedlab_core::config::{SchedulerKind, SimConfig};
use schedlab_core::metrics::{RunResult, TaskMetrics};

pub const BOTH: [SchedulerKind; 2] = [SchedulerKind::Eevdf, SchedulerKind::Cfs];

pub fn cfg(kind: SchedulerKind, cpus: usize) -> SimConfig {
    SimConfig {
        scheduler: kind,
        cpus,
        ..SimConfig::default()
    }
}

pub fn run(text: &str, cfg: SimConfig) -> RunResult {
    schedlab_core::simulate("test", text, cfg).expect("simulation runs")
}

pub fn task<'a>(r: &'a RunResult, name: &str) -> &'a TaskMetrics {
    r.metrics
        .tasks
        .iter()
        .find(|t| t.name == name)
        .unwrap_or_else(|| panic!("no task {name}"))
}

/// `n` CPU hogs named prefix-i (one task object with `instance: n`).
pub fn hogs(n: usize, secs: u64) -> String {
    format!(
        r#"{{"global": {{"duration": {secs}}}, "tasks": {{"hog": {{"instance": {n}, "run": 100000}}}}}}"#
    )
}
