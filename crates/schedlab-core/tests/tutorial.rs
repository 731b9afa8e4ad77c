//! The Rust policies of docs/policies.md's tutorial (examples/policies/*.rs)
//! compile against the ext API and do what the tutorial says.

mod common;
use common::task;
use schedlab_core::config::SimConfig;
use schedlab_core::engine::SimError;
use schedlab_core::metrics::RunResult;
use schedlab_core::plugin::BuildFn;
use schedlab_core::registry::sched_ext;

#[path = "../../../examples/policies/edf.rs"]
mod edf;
#[path = "../../../examples/policies/rr.rs"]
mod rr;

/// The stack builder of each test policy, by the name the tests use (runs
/// go through `Simulator::with_stack`; the registry holds only real
/// schedulers).
fn test_policy(name: &str) -> Option<BuildFn> {
    Some(match name {
        "tutorial_edf" => |c| sched_ext(c, edf::Edf),
        "tutorial_rr" => |c| sched_ext(c, rr::RoundRobin),
        _ => return None,
    })
}

/// Simulate `text` under `cfg`, with a test policy's stack if it names one.
fn simulate(text: &str, cfg: SimConfig) -> Result<RunResult, SimError> {
    common::simulate_with(text, cfg, test_policy)
}

fn run(text: &str, cfg: SimConfig) -> RunResult {
    simulate(text, cfg).expect("simulation runs")
}

fn cfg(sched: &str, cpus: usize) -> SimConfig {
    SimConfig {
        zero_costs: true,
        scheduler: sched.into(),
        cpus,
        ..SimConfig::default()
    }
}

/// Audio (1 ms every 5 ms, deadline 5 ms) and video (4 ms every 10 ms,
/// deadline 10 ms) beside two SCHED_EXT hogs on one CPU: EDF orders them by
/// deadline and the hogs (deadline 100 ms, postponed when they use a slice)
/// never delay a job past its deadline.
#[test]
fn edf_meets_the_deadlines_eevdf_misses() {
    let wl = r#"{"global": {"duration": 2}, "tasks": {
        "audio": {"policy": "SCHED_EXT", "run": 1000, "timer": {"ref": "unique", "period": 5000}},
        "video": {"policy": "SCHED_EXT", "run": 4000, "timer": {"ref": "unique", "period": 10000}},
        "hog": {"policy": "SCHED_EXT", "instance": 2, "run": 1000000}}}"#;
    let r = run(wl, cfg("tutorial_edf", 1));
    for name in ["audio", "video"] {
        let t = task(&r, name);
        assert_eq!(t.missed_activations, 0, "{name}: {t:?}");
        assert!(t.wakeup_latency_max_us < 5_000.0, "{name}: {t:?}");
    }
    let hogs = task(&r, "hog-0").cpu_share + task(&r, "hog-1").cpu_share;
    assert!((hogs - 0.4).abs() < 0.01, "{hogs}");
    // The same tasks as SCHED_OTHER under EEVDF: the hogs delay the jobs.
    let r = run(&wl.replace("SCHED_EXT", "SCHED_OTHER"), cfg("eevdf", 1));
    let missed = task(&r, "audio").missed_activations + task(&r, "video").missed_activations;
    assert!(missed > 0, "EEVDF was expected to miss some activations");
}

/// Round-robin: equal CPU shares whatever the nice. The slice is checked
/// at ticks (`task_tick_scx`; no HRTICK), so at HZ 250 a 5 ms quantum
/// ends at the second tick: 8 ms turns, 125 switches per second.
#[test]
fn round_robin_ignores_nice() {
    let wl = r#"{"global": {"duration": 3}, "tasks": {
        "a": {"policy": "SCHED_EXT", "priority": -10, "run": 1000000},
        "b": {"policy": "SCHED_EXT", "priority": 0, "run": 1000000},
        "c": {"policy": "SCHED_EXT", "priority": 10, "run": 1000000}}}"#;
    let r = run(wl, cfg("tutorial_rr", 1));
    for name in ["a", "b", "c"] {
        let s = task(&r, name).cpu_share;
        assert!((s - 1.0 / 3.0).abs() < 0.01, "{name}: {s}");
    }
    let cs = r.metrics.context_switches_per_sec;
    assert!((cs - 125.0).abs() < 2.0, "{cs}");
}
