//! The native worker on the live kernel: calibration, calibrated work,
//! periodic timers, and clear errors. Needs no privileges (SCHED_OTHER,
//! nice >= 0, affinity within the machine).

use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_schedlab-worker");

/// Run the worker with `args`.
fn worker(args: &[&str]) -> std::process::Output {
    Command::new(BIN).args(args).output().expect("worker runs")
}

fn calibrate() -> f64 {
    let out = worker(&["calibrate"]);
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
fn calibrates_on_the_cpu_asked() {
    assert!(worker(&["calibrate", "0"]).status.success());
    for (cpu, says) in [
        ("100000", "usage: schedlab-worker calibrate [CPU]"),
        ("1023", "calibrate on CPU 1023"),
    ] {
        let bad = worker(&["calibrate", cpu]);
        assert!(!bad.status.success());
        assert!(String::from_utf8_lossy(&bad.stderr).contains(says), "{cpu}");
    }
}

#[test]
fn bad_plans_fail_clearly() {
    let start = now_ns();
    let (ok, _, err) = run(serde_json::json!({
        "end_at_ns": start + 100_000_000u64, "ns_per_loop": 1.0,
        "threads": [{"name": "x", "events": [["frobnicate", 1]]}]}));
    assert!(
        !ok && err.contains("event frobnicate is not supported"),
        "{err}"
    );
    let (ok, _, err) = run(serde_json::json!({
        "end_at_ns": start + 100_000_000u64, "ns_per_loop": 1.0,
        "threads": [{"name": "x", "events": [["lock", 1]]}]}));
    assert!(
        !ok && err.contains("sync slot 1 beyond the plan's 0 sync_slots"),
        "{err}"
    );
    let (ok, _, err) =
        run(serde_json::json!({"end_at_ns": 1, "ns_per_loop": 1.0, "threads": [], "bogus": 1}));
    assert!(!ok && err.contains("unknown field"), "{err}");
}

fn temp(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!(
        "schedlab-worker-test-{}-{}-{name}",
        std::process::id(),
        now_ns()
    ))
}

/// Start one worker on `plan`; returns the child and its plan file.
fn spawn(plan: serde_json::Value) -> (std::process::Child, std::path::PathBuf) {
    let p = temp("plan");
    std::fs::write(&p, plan.to_string()).expect("plan written");
    let child = Command::new(BIN)
        .arg("run")
        .arg(&p)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("worker runs");
    (child, p)
}

/// The end report of each thread, by name.
fn finish(
    children: Vec<(std::process::Child, std::path::PathBuf)>,
) -> std::collections::BTreeMap<String, serde_json::Value> {
    let mut out = std::collections::BTreeMap::new();
    for (c, p) in children {
        let o = c.wait_with_output().expect("worker ends");
        let _ = std::fs::remove_file(p);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        for l in String::from_utf8_lossy(&o.stdout).lines() {
            let v: serde_json::Value = serde_json::from_str(l).expect("json line");
            if v.get("finished_ns").is_some() {
                out.insert(v["thread"].as_str().expect("name").to_string(), v);
            }
        }
    }
    out
}

/// Mutex, condition variable and barrier across two worker processes,
/// checked by lower bounds on when the waiting thread could go on (a
/// slower machine only makes them later).
#[test]
fn sync_objects_work_across_processes() {
    let npl = calibrate();
    let file = temp("sync");
    std::fs::write(&file, vec![0u8; 4 * 16]).expect("sync file");
    let (start, ms) = (now_ns() + 50_000_000, 1_000_000u64);
    let plan = |threads: serde_json::Value| {
        serde_json::json!({"start_at_ns": start, "end_at_ns": start + 3_000_000_000u64, "ns_per_loop": npl,
            "sync_file": file.to_str(), "sync_slots": 4, "threads": threads})
    };
    // Slots: 0 mutex, 1 condition, 2 barrier, 3 a barrier nobody else reaches.
    let a = spawn(plan(serde_json::json!([
        {"name": "holder", "loops": 1, "events": [["lock", 0], ["sleep", 200 * ms], ["unlock", 0],
            ["barrier", 2, 2]]},
        {"name": "waiter", "loops": 1, "events": [["lock", 0], ["wait", 1, 0], ["unlock", 0]]}
    ])));
    let b = spawn(plan(serde_json::json!([
        {"name": "taker", "loops": 1, "events": [["sleep", 50 * ms], ["lock", 0], ["unlock", 0]]},
        {"name": "signaller", "loops": 1, "events": [["sleep", 400 * ms], ["lock", 0], ["signal", 1],
            ["unlock", 0], ["sleep", 100 * ms], ["barrier", 2, 2]]},
        {"name": "alone", "loops": 1, "events": [["barrier", 3, 2]]}
    ])));
    let r = finish(vec![a, b]);
    let _ = std::fs::remove_file(&file);
    let at = |n: &str| r[n]["finished_ns"].as_u64().expect("time") - start;
    assert!(
        at("taker") >= 200 * ms,
        "taker got the mutex while it was held"
    );
    assert!(at("waiter") >= 400 * ms, "waiter woke before the signal");
    assert!(
        at("holder") >= 500 * ms,
        "holder passed the barrier before its partner"
    );
    // A barrier whose partner never comes waits until the end time, not forever.
    assert!(at("alone") >= 2_900 * ms && at("alone") < 10_000 * ms);
}

/// `oncpu` work counts time on the CPU, not time preempted: two threads
/// pinned to one CPU are each credited with about the CPU time the kernel
/// gave them (/proc/thread-self/schedstat).
#[test]
fn oncpu_work_excludes_preemption() {
    let npl = calibrate();
    let start = now_ns();
    let (ok, lines, err) = run(serde_json::json!({
        "start_at_ns": start + 50_000_000u64, "end_at_ns": start + 1_050_000_000u64, "ns_per_loop": npl,
        "work": "oncpu",
        "threads": [{"name": "a", "cpus": [0], "events": [["run", 10_000_000u64]]},
                    {"name": "b", "cpus": [0], "events": [["run", 10_000_000u64]]}]}));
    assert!(ok, "{err}");
    for l in lines.iter().filter(|l| l.get("busy_cpu_ns").is_some()) {
        let busy = l["busy_cpu_ns"].as_f64().expect("busy");
        let kernel = l["proc"]["run_ns"].as_f64().expect("run_ns");
        assert!(
            busy > 0.85 * kernel && busy < 1.1 * kernel,
            "{}: credited {busy} ns, kernel ran it {kernel} ns",
            l["thread"]
        );
    }
}
