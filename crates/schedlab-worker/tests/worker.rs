//! The native worker on the live kernel: calibration, calibrated work,
//! periodic timers, and clear errors. Needs no privileges (SCHED_OTHER,
//! nice >= 0, affinity within the machine).

use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_schedlab-worker");

fn calibrate() -> f64 {
    let out = Command::new(BIN)
        .arg("calibrate")
        .output()
        .expect("worker runs");
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    v["ns_per_loop"].as_f64().expect("number")
}

fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the valid timespec we pass.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn run(plan: serde_json::Value) -> (bool, Vec<serde_json::Value>, String) {
    let dir = std::env::temp_dir().join(format!(
        "schedlab-worker-test-{}-{}",
        std::process::id(),
        now_ns()
    ));
    std::fs::write(&dir, plan.to_string()).expect("plan written");
    let out = Command::new(BIN)
        .arg("run")
        .arg(&dir)
        .output()
        .expect("worker runs");
    let _ = std::fs::remove_file(&dir);
    let lines = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    (
        out.status.success(),
        lines,
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

#[test]
fn calibrated_work_and_timers() {
    let npl = calibrate();
    assert!(npl > 0.0 && npl < 100.0, "{npl} ns per loop");
    let start = now_ns();
    let plan = serde_json::json!({
        "end_at_ns": start + 2_000_000_000u64,
        "ns_per_loop": npl,
        "threads": [
            {"name": "work", "loops": 1, "nice": 5, "cpus": [0], "events": [["run", 100_000_000u64]]},
            {"name": "tick", "loops": 20, "events": [["run", 1_000_000u64], ["timer", 10_000_000u64]]}
        ]
    });
    let (ok, lines, err) = run(plan);
    assert!(ok, "{err}");
    let end = |n: &str| {
        lines
            .iter()
            .find(|l| l["thread"] == n && l.get("cpu_ns").is_some())
            .cloned()
            .expect("end line")
    };
    // Loop counts, not times: the machine's speed is not what is tested
    // (DEVELOPERS.md: performance is measured with benchmarks).
    let work = end("work");
    assert_eq!(work["loops"], 1);
    assert!(work["cpu_ns"].as_u64().is_some_and(|c| c > 0));
    let tick = end("tick");
    assert_eq!(tick["loops"], 20);
    assert!(lines
        .iter()
        .any(|l| l["thread"] == "work" && l["tid"].as_i64().is_some_and(|t| t > 0)));
}

/// Threads without a loop count stop at the plan's end time by themselves.
#[test]
fn threads_stop_at_the_end_time() {
    let npl = calibrate();
    let start = now_ns();
    let (ok, lines, err) = run(serde_json::json!({
        "end_at_ns": start + 300_000_000u64, "ns_per_loop": npl,
        "threads": [{"name": "forever", "events": [["run", 1_000_000u64], ["sleep", 1_000_000u64]]}]}));
    assert!(ok, "{err}");
    assert!(
        now_ns() < start + 5_000_000_000,
        "the worker outlived its end time"
    );
    assert!(lines
        .iter()
        .any(|l| l["thread"] == "forever" && l["loops"].as_u64().is_some_and(|n| n > 0)));
}

#[test]
fn bad_plans_fail_clearly() {
    let start = now_ns();
    let (ok, _, err) = run(serde_json::json!({
        "end_at_ns": start + 100_000_000u64, "ns_per_loop": 1.0,
        "threads": [{"name": "x", "events": [["lock", 1]]}]}));
    assert!(!ok && err.contains("event lock is not supported"), "{err}");
    let (ok, _, err) =
        run(serde_json::json!({"end_at_ns": 1, "ns_per_loop": 1.0, "threads": [], "bogus": 1}));
    assert!(!ok && err.contains("unknown field"), "{err}");
}
