//! SMT throughput (engine/smt.rs, shootout.md §6.3): two threads of one
//! core each run at smt_speed_pct while both are busy, at full speed
//! alone; placement prefers idle cores, so two hogs on two cores never
//! share one.

mod common;
use common::*;
use schedlab_core::config::SimConfig;

fn smt(cpus: usize, pct: i64) -> SimConfig {
    let mut c = cfg("eevdf", cpus);
    c.smt = 2;
    c.set = vec![("smt_speed_pct".into(), pct)];
    c
}

fn work_s(r: &schedlab_core::metrics::RunResult) -> f64 {
    r.metrics.tasks.iter().map(|t| t.work_done_us).sum::<f64>() / 1e6
}

#[test]
fn siblings_share_the_core() {
    // One core, two hogs for 1 s: 2 × 0.6 s of work at 60 %.
    let r = run(&hogs(2, 1), smt(2, 60));
    assert!((work_s(&r) - 1.2).abs() < 0.01, "{}", work_s(&r));
    let r = run(&hogs(2, 1), smt(2, 100));
    assert!((work_s(&r) - 2.0).abs() < 0.01, "{}", work_s(&r));
    // Without SMT the factor does nothing.
    let mut c = cfg("eevdf", 2);
    c.set = vec![("smt_speed_pct".into(), 60)];
    assert!((work_s(&run(&hogs(2, 1), c)) - 2.0).abs() < 0.01);
}

#[test]
fn a_thread_alone_runs_at_full_speed_and_speed_changes_with_the_sibling() {
    // A hog beside a sibling busy 50 % of the time (1 ms of 2 ms): the hog
    // does 0.5 s at full speed and 0.5 s at 60 %: 0.8 s; the half-busy one
    // 0.5 s of CPU at 60 %: 0.3 s.
    let text = r#"{"global": {"duration": 1}, "tasks": {
        "hog": {"cpus": [0], "run": 10000000},
        "half": {"cpus": [1], "loop": -1, "run": 600, "sleep": 1000}}}"#;
    let r = run(text, smt(2, 60));
    let hog = task(&r, "hog").work_done_us / 1e6;
    let half = task(&r, "half");
    let busy = half.cpu_time_us / 1e6;
    // The sibling's busy time slows the hog for exactly that long.
    let expect = (1.0 - busy) + busy * 0.6;
    assert!(
        (hog - expect).abs() < 0.005,
        "hog {hog} expected {expect} (sibling busy {busy})"
    );
    assert!(
        (half.work_done_us / 1e6 - busy * 0.6).abs() < 0.005,
        "{half:?}"
    );
}

#[test]
fn two_hogs_on_two_cores_do_not_share_one() {
    // 4 CPUs = 2 cores × 2 threads: fork placement and idle selection
    // prefer an idle core, so each hog has a core to itself.
    let r = run(&hogs(2, 1), smt(4, 60));
    assert!((work_s(&r) - 2.0).abs() < 0.01, "{}", work_s(&r));
}
