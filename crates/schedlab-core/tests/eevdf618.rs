//! EEVDF as in Linux 6.18 (`eevdf-6.18`, shootout.md §5.3/§5.5) against
//! 6.12 (`eevdf`): where the rules differ, the runs differ as the rules
//! say; where they agree (slices below the tick), the runs agree.

mod common;
use common::*;

/// Two hogs on one CPU with custom slices 10 ms and 2 ms (HZ 250: ticks
/// every 4 ms). 6.12 protects the current task until its own request is
/// used up (vlag == deadline), so each runs to the first tick past 10 ms /
/// its deadline: about 12 ms per turn. 6.17+ bounds the protection by the
/// smallest queued slice (2 ms) and reschedules at every update_curr once
/// unprotected: each turn ends at the first tick, 4 ms.
const SLICES: &str = r#"{"global": {"duration": 2}, "tasks": {
    "long": {"dl-runtime": 10000, "run": 10000000},
    "short": {"dl-runtime": 2000, "run": 10000000}}}"#;

fn ms_per_turn(kind: &str, name: &str) -> f64 {
    let r = run(SLICES, cfg(kind, 1));
    let t = task(&r, name);
    t.cpu_time_us / 1000.0 / t.nivcsw.max(1) as f64
}

#[test]
fn protection_is_bounded_by_the_smallest_queued_slice_in_6_18() {
    let (old, new) = (
        ms_per_turn("eevdf", "long"),
        ms_per_turn("eevdf-6.18", "long"),
    );
    assert!((11.5..=12.5).contains(&old), "6.12: {old} ms per turn");
    assert!((3.9..=4.1).contains(&new), "6.18: {new} ms per turn");
}

#[test]
fn with_slices_below_the_tick_both_versions_agree() {
    // Base slices (0.7 ms) are below the 4 ms tick: a hog runs one tick
    // per turn under either rule (§5.5).
    let a = run(&hogs(2, 2), cfg("eevdf", 1));
    let b = run(&hogs(2, 2), cfg("eevdf-6.18", 1));
    for (x, y) in a.metrics.tasks.iter().zip(&b.metrics.tasks) {
        assert_eq!(x.nivcsw, y.nivcsw, "{}", x.name);
        assert_eq!(x.cpu_time_us, y.cpu_time_us, "{}", x.name);
    }
}
