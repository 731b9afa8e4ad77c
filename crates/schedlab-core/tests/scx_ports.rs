//! The sched_ext ports of seed 002's schedulers (policy/scx_bmq.rs,
//! policy/scx_pds.rs): each check follows from the algorithm as the file
//! headers state it (BMQ's strict priority of levels `50 + (127 + nice +
//! boost) / 2`, PDS's deadlines `edge + nice + 20`), not from our output.

mod common;
use common::task;
use schedlab_core::config::SimConfig;
use schedlab_core::metrics::RunResult;

fn cfg(sched: &str, cpus: usize, hz: u32) -> SimConfig {
    SimConfig {
        zero_costs: true,
        scheduler: sched.into(),
        cpus,
        hz,
        ..SimConfig::default()
    }
}

fn run(text: &str, c: SimConfig) -> RunResult {
    common::simulate_with(text, c, |_| None).expect("simulation runs")
}

/// CPU seconds of task `n`.
fn secs(r: &RunResult, n: &str) -> f64 {
    task(r, n).cpu_time_us / 1e6
}

// --- scx_bmq -----------------------------------------------------------------

/// Hogs deboost to +7 within seven slices (they start there: fork sets
/// +7), so nice −5, 0 and 5 sit at levels 114, 117 and 119; with strict
/// priority on two CPUs the two upper levels own them and nice 5 starves.
#[test]
fn bmq_levels_are_strict_priority() {
    let r = run(
        &common::hogs_wl(10, &[("m5", -5), ("n0", 0), ("p5", 5)]),
        cfg("scx_bmq", 2, 1000),
    );
    assert!(secs(&r, "m5") > 9.9, "{}", secs(&r, "m5"));
    assert!(secs(&r, "n0") > 9.9, "{}", secs(&r, "n0"));
    assert!(secs(&r, "p5") < 0.05, "{}", secs(&r, "p5"));
}

/// nice 0 and nice 1 share a level ((127 + 7) / 2 = (128 + 7) / 2 = 67):
/// FIFO within it alternates them slice by slice on one CPU.
#[test]
fn bmq_same_level_alternates() {
    let r = run(
        &common::hogs_wl(10, &[("a", 0), ("b", 1)]),
        cfg("scx_bmq", 1, 1000),
    );
    let (a, b) = (secs(&r, "a"), secs(&r, "b"));
    assert!((a - b).abs() < 0.05, "{a} {b}");
}

/// A task that runs 100 µs and sleeps 10 ms blocks well under its boost
/// threshold and sleeps longer than a slice, so it climbs to boost −7
/// (level 110) above a nice 0 hog (117): each wakeup waits at most the
/// rest of the hog's slice (no wakeup preemption), never a whole second
/// slice, and the sleeper gets all the CPU it asks for.
#[test]
fn bmq_boosts_a_sleeper_above_a_hog() {
    let wl = r#"{"global": {"duration": 5}, "tasks": {
        "hog": {"run": 1000000},
        "sleeper": {"run": 100, "sleep": 10000}}}"#;
    let r = run(wl, cfg("scx_bmq", 1, 1000));
    let s = task(&r, "sleeper");
    // One tick past a slice: the hog's slice ends at the first tick at or
    // after 4 << 20 ns.
    assert!(
        s.wakeup_latency_max_us <= 5000.0,
        "{}",
        s.wakeup_latency_max_us
    );
    assert!(s.wakeups > 300, "{}", s.wakeups);
}

// --- scx_pds -----------------------------------------------------------------

/// Equal nice: equal deadline offsets, so two hogs on one CPU alternate.
#[test]
fn pds_equal_nice_alternates() {
    let r = run(
        &common::hogs_wl(10, &[("a", 0), ("b", 0)]),
        cfg("scx_pds", 1, 1000),
    );
    let (a, b) = (secs(&r, "a"), secs(&r, "b"));
    assert!((a - b).abs() < 0.05, "{a} {b}");
}

/// Deadline order: nice 0 (offset 20 edges) against nice 5 (25). After
/// nice 5 runs one slice its deadline is 25 edges on; nice 0, renewed to
/// 20 edges on at each of its expiries, keeps the CPU until its new
/// deadline reaches that, i.e. for 5 edges (5 × 2^22 ns). At HZ 1000 a
/// 4 << 20 ns slice ends at the 5 ms tick, so nice 5 gets one 5 ms slice
/// per 5 × 4.19 ms + 5 ms: a share of 5 / 25.97 = 19 %.
#[test]
fn pds_orders_by_deadline() {
    let r = run(
        &common::hogs_wl(20, &[("n0", 0), ("n5", 5)]),
        cfg("scx_pds", 1, 1000),
    );
    let share = secs(&r, "n5") / 20.0;
    assert!((share - 5.0 / 25.97).abs() < 0.02, "{share}");
}
