//! Helpers shared by the integration tests.
#![allow(dead_code)]

use schedlab_core::config::SimConfig;
use schedlab_core::engine::{CustomStack, SimError, Simulator};
use schedlab_core::metrics::{RunResult, TaskMetrics};
use schedlab_core::plugin::BuildFn;
use schedlab_core::workload::Workload;

pub const BOTH: [&str; 2] = ["eevdf", "cfs"];

/// A closed-form machine (no wakeup-path costs) with `cpus` CPUs.
pub fn cfg(kind: &str, cpus: usize) -> SimConfig {
    SimConfig {
        scheduler: kind.into(),
        cpus,
        zero_costs: true,
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

/// `kind+policy` (`kind` alone for the empty policy).
pub fn with_policy(kind: &str, policy: &str) -> String {
    if policy.is_empty() {
        kind.to_string()
    } else {
        format!("{kind}+{policy}")
    }
}

/// Simulate `text` under `cfg`; when `policies` knows `cfg.scheduler`, with
/// that test policy's class stack (`Simulator::with_stack`: test policies
/// are not in the registry).
pub fn simulate_with(
    text: &str,
    cfg: SimConfig,
    policies: fn(&str) -> Option<BuildFn>,
) -> Result<RunResult, SimError> {
    let wl = Workload::from_rtapp("test", text)?;
    match policies(&cfg.scheduler) {
        None => Simulator::new(wl, cfg)?.run(),
        Some(build) => {
            let custom = CustomStack {
                def: &schedlab_core::policy::scx_simple::DEF,
                build: Box::new(build),
            };
            Simulator::with_stack(wl, cfg, custom)?.run()
        }
    }
}

/// A workload of CPU hogs (`run` 1 s, looping) with the given nice values, for `secs` s.
pub fn hogs_wl(secs: u64, tasks: &[(&str, i32)]) -> String {
    let t: Vec<String> = tasks
        .iter()
        .map(|(n, nice)| format!(r#""{n}": {{"run": 1000000, "priority": {nice}}}"#))
        .collect();
    format!(
        r#"{{"global": {{"duration": {secs}}}, "tasks": {{{}}}}}"#,
        t.join(", ")
    )
}
