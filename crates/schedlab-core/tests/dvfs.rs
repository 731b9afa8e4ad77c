//! Frequency and memory-stall model (exectime.rs) and TSF (policy/tsf.rs),
//! seed-algorithms.md §1.

mod common;
use common::{cfg, run};

use schedlab_core::metrics::RunResult;

const BOTH: [&str; 2] = ["eevdf", "cfs"];

/// The spec's worked example (§1.3): X core-bound, Y with P = 0.9 at half
/// frequency (μ = 8/9), two nice-0 hogs on one CPU.
const XY: &str = r#"{"global": {"duration": 20, "calibration": 100}, "tasks": {
    "X": {"run": 1000000, "memory_intensity": 0},
    "Y": {"run": 1000000, "memory_intensity": 0.888888889}}}"#;

fn xy(kind: &str, wp: &str, mhz: u64) -> RunResult {
    let mut c = cfg(kind, 1);
    c.scheduler = common::with_policy(&c.scheduler, wp);
    c.freq_mhz = vec![(mhz, 2000)];
    run(XY, c)
}

fn work(r: &RunResult) -> Vec<f64> {
    r.metrics.tasks.iter().map(|t| t.work_done_us).collect()
}

/// Population standard deviation (the Fair_Degree convention used).
fn pstdev(xs: &[f64]) -> f64 {
    let m = xs.iter().sum::<f64>() / xs.len() as f64;
    (xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / xs.len() as f64).sqrt()
}

fn crsr(kind: &str, wp: &str) -> Vec<f64> {
    let base = work(&xy(kind, "", 2000));
    let at = work(&xy(kind, wp, 1000));
    at.iter().zip(&base).map(|(a, b)| a / b).collect()
}

#[test]
fn memory_bound_work_loses_less_at_low_frequency() {
    let r = xy("eevdf", "", 1000);
    let w = work(&r);
    // Half the CPU each for 20 s: X progresses at 0.5, Y at 0.9.
    assert!((w[0] - 5_000_000.0).abs() < 1.0, "{}", w[0]);
    assert!((w[1] - 9_000_000.0).abs() < 20.0, "{}", w[1]);
}

/// Without TSF the example has Fair_Degree 0.2; with TSF it is about 0:
/// shares 0.643 / 0.357 and both CRSR = k = 0.643.
#[test]
fn tsf_makes_the_worked_example_fair() {
    for kind in BOTH {
        let plain = crsr(kind, "");
        assert!((pstdev(&plain) - 0.2).abs() < 1e-3, "{kind:?} {plain:?}");
        let tsf = crsr(kind, "tsf");
        assert!(pstdev(&tsf) < 0.002, "{kind:?} {tsf:?}");
        for c in &tsf {
            assert!((c - 0.643).abs() < 0.002, "{kind:?} {tsf:?}");
        }
        let r = xy(kind, "tsf", 1000);
        let x = r.metrics.tasks[0].cpu_share;
        assert!((x - 0.643).abs() < 0.002, "{kind:?} X share {x}");
    }
}

/// TSF = 1 at f_max: the run is the plain one, switch for switch.
#[test]
fn tsf_is_neutral_at_fmax() {
    for kind in BOTH {
        let a = xy(kind, "", 2000);
        let b = xy(kind, "tsf", 2000);
        assert_eq!(work(&a), work(&b));
        assert_eq!(a.metrics.context_switches, b.metrics.context_switches);
        assert!(b.metrics.policy_updates > 0);
    }
}

/// The TSF computation's cost is charged as CPU time: 10 µs per switch
/// costs the measured fraction of throughput.
#[test]
fn tsf_cost_is_charged() {
    let mut c = cfg("eevdf", 1);
    c.scheduler = common::with_policy(&c.scheduler, "tsf");
    c.freq_mhz = vec![(1000, 2000)];
    c.set = vec![("tsf_cost_ns".into(), 10_000)];
    let r = run(XY, c);
    let m = &r.metrics;
    assert!((m.policy_overhead_us - m.policy_updates as f64 * 10.0).abs() < 1e-6);
    let free = xy("eevdf", "tsf", 1000);
    assert!(m.work_done_us < free.metrics.work_done_us);
}

fn gov_run(wl: &str, mhz: u64, gov: &str) -> RunResult {
    let mut c = cfg("eevdf", 1);
    c.freq_mhz = vec![(mhz, 2000)];
    c.governor = schedlab_core::engine::governor::Governor::parse(gov).expect("governor");
    run(wl, c)
}

/// Governors: performance and powersave pin the top and bottom levels; a
/// schedule changes the rate at its step (work done in 1 s at 2 GHz plus
/// 1 s at 1 GHz); ondemand runs a hog at f_max and lowers the frequency
/// for a 30 % load without missing its activations.
#[test]
fn governors_set_the_frequency() {
    let hog =
        r#"{"global": {"duration": 2, "calibration": 100}, "tasks": {"h": {"run": 1000000}}}"#;
    let f = |r: &RunResult| r.metrics.cpu[0].avg_freq_mhz;
    assert_eq!(f(&gov_run(hog, 1000, "performance")), 2000.0);
    assert_eq!(f(&gov_run(hog, 2000, "powersave")), 800.0);
    assert_eq!(f(&gov_run(hog, 1000, "ondemand")), 2000.0);
    let r = gov_run(hog, 2000, "schedule:0=2000,1=1000");
    assert_eq!(r.metrics.tasks[0].work_done_us, 1_500_000.0);
    assert_eq!(f(&r), 1500.0);
    let periodic = r#"{"global": {"duration": 2, "calibration": 100}, "tasks": {
        "p": {"run": 3000, "timer": {"ref": "t", "period": 10000}}}}"#;
    let r = gov_run(periodic, 2000, "ondemand");
    assert!(f(&r) < 1600.0 && f(&r) > 1000.0, "{}", f(&r));
    assert_eq!(r.metrics.tasks[0].missed_activations, 0);
}
