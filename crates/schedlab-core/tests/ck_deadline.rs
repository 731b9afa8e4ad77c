//! BFS and MuQSS (policy/bfs.rs, policy/muqss.rs, policy/ck.rs): the
//! virtual-deadline rules of alt-schedulers.md §1–§2, checked against
//! closed forms derived here from the spec, never against recorded output.

mod common;
use common::{run, task};
use schedlab_core::config::SimConfig;

fn cfg(sched: &str, cpus: usize, hz: u32, set: &[(&str, i64)]) -> SimConfig {
    SimConfig {
        zero_costs: true,
        scheduler: sched.into(),
        cpus,
        hz,
        set: set.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
        ..SimConfig::default()
    }
}

fn hogs(secs: u64, nices: &[(&str, i32)]) -> String {
    let t: Vec<String> = nices
        .iter()
        .map(|(n, nice)| format!(r#""{n}": {{"run": 100000000, "priority": {nice}}}"#))
        .collect();
    format!(
        r#"{{"global": {{"duration": {secs}}}, "tasks": {{{}}}}}"#,
        t.join(", ")
    )
}

/// `prio_ratios` as the spec states it: 128 at nice −20, ×11/10 per
/// level in integers.
fn ratio(nice: i32) -> u64 {
    let mut r = 128u64;
    for _ in -20..nice {
        r = r * 11 / 10;
    }
    r
}

/// Deadline offset, ns: ratio · rr_interval · 2^20/128 (rr = 6).
fn offset(nice: i32) -> u64 {
    ratio(nice) * 6 * (1 << 20) / 128
}

/// Length of one slice in simulated time. MuQSS: the hrtimer ends it at
/// exactly 6 · 2^20 ns. BFS: the first tick at which at most half a jiffy
/// (in 1024-ns units) is left, for a task scheduled on a tick.
fn slice_ns(sched: &str, hz: u64) -> u64 {
    let full = 6u64 << 20;
    if sched == "muqss" {
        return full;
    }
    let tick = 1_000_000_000 / hz;
    let half = ((1_000_000 / hz) / 2) << 10;
    // The first multiple of the tick leaving at most half a jiffy.
    full.saturating_sub(half).div_ceil(tick) * tick
}

/// Two hogs on one CPU, nice `lo` < `hi`: each time the later-deadline
/// task has run its slice, its new deadline is Δ = offset(hi) − offset(lo)
/// past the other's next one, so the other runs ⌈Δ/S⌉ slices of length S
/// before it gets one again (each refill sets now + offset, and a slice is
/// taken only while its deadline is strictly earlier). Share of the
/// niced task: 1/(⌈Δ/S⌉ + 1).
fn expected_low_share(sched: &str, hz: u64, lo: i32, hi: i32) -> f64 {
    let delta = offset(hi) - offset(lo);
    let k = delta.div_ceil(slice_ns(sched, hz));
    1.0 / (k as f64 + 1.0)
}

#[test]
fn deadline_offsets_follow_the_spec_table() {
    // alt-schedulers.md §1: nice 0 → 836 (≈41.1 ms), nice 19 → 5089.
    assert_eq!(ratio(0), 836);
    assert_eq!(ratio(19), 5089);
    assert_eq!(offset(-20), 6_291_456);
}

#[test]
fn nice_shares_follow_the_deadline_offsets() {
    for sched in ["bfs", "muqss"] {
        for (lo, hi) in [(0, 19), (0, 5), (-5, 0)] {
            let r = run(&hogs(30, &[("a", lo), ("b", hi)]), cfg(sched, 1, 1000, &[]));
            let want = expected_low_share(sched, 1000, lo, hi);
            let got = task(&r, "b").cpu_share;
            assert!(
                (got - want).abs() < 0.004,
                "{sched} nice {lo} vs {hi}: niced task got {got:.4}, expected {want:.4}"
            );
        }
    }
    // The flavours differ where ⌈Δ/S⌉ does: nice 0 vs 5 is 5 BFS slices
    // of 6 ms but 4 MuQSS slices of 6.29 ms.
    assert!(expected_low_share("bfs", 1000, 0, 5) < expected_low_share("muqss", 1000, 0, 5));
    // The spec's rule of thumb (share ≈ square of the offset ratio) is
    // close for nice 19: 1/36 vs (836/5089)^2 ≈ 0.027.
    let square = (ratio(0) as f64 / ratio(19) as f64).powi(2);
    assert!((expected_low_share("bfs", 1000, 0, 19) - square).abs() < 0.002);
}

#[test]
fn equal_nice_hogs_round_robin_with_rr_interval_slices() {
    for (sched, hz) in [("bfs", 1000), ("bfs", 250), ("muqss", 1000), ("muqss", 250)] {
        let secs = 2;
        let r = run(&hogs(secs, &[("a", 0), ("b", 0)]), cfg(sched, 1, hz, &[]));
        let s = slice_ns(sched, hz as u64);
        let switches = task(&r, "a").nivcsw + task(&r, "b").nivcsw;
        let want = secs * 1_000_000_000 / s;
        assert!(
            switches.abs_diff(want) <= 1,
            "{sched} HZ={hz}: {switches} switches, slices of {s} ns give {want}"
        );
        assert!((task(&r, "a").cpu_share - 0.5).abs() < 0.01);
    }
    // rr_interval is tunable: 12 ms slices halve the switches (MuQSS).
    let r = run(
        &hogs(2, &[("a", 0), ("b", 0)]),
        cfg("muqss", 1, 1000, &[("rr_interval_ms", 12)]),
    );
    let switches = task(&r, "a").nivcsw + task(&r, "b").nivcsw;
    assert!(
        switches.abs_diff(2_000_000_000 / (12 << 20)) <= 1,
        "{switches}"
    );
}

/// A task that sleeps keeps the deadline of its last refill; the hog's
/// is renewed to now + 41 ms every slice (6 ms of its run time, less than
/// the 9 ms the sleeper sleeps), so at each wakeup the sleeper's deadline
/// is the earlier one and it preempts the hog at once. It waits only when
/// its own slice runs out mid-run: its new deadline is then later than
/// the hog's until the hog's next refill (at most one hog slice).
#[test]
fn sleeper_keeps_its_early_deadline_and_preempts_on_wakeup() {
    let wl = r#"{"global": {"duration": 3}, "tasks": {
        "hog": {"run": 100000000},
        "sleeper": {"loop": -1, "run": 1000, "sleep": 9000}}}"#;
    // A nice 19 sleeper's refill deadline is now + 250 ms, Δ = 209 ms
    // past the hog's: after each of its refills it waits until the hog's
    // deadline has caught up, some 35 hog slices instead of one.
    let wl19 = wl.replace(r#""sleep": 9000}"#, r#""sleep": 9000, "priority": 19}"#);
    for sched in ["bfs", "muqss"] {
        let r = run(wl, cfg(sched, 1, 1000, &[]));
        let s = task(&r, "sleeper");
        assert!(s.wakeups > 250, "{sched}: {}", s.wakeups);
        // p99, not max: the start release (both start at once) may wait a slice.
        assert_eq!(s.wakeup_latency_p99_us, 0.0, "{sched}: waited for the hog");
        // 1 ms per 9 ms sleep plus at most one 6 ms wait per 6 runs.
        assert!(
            (0.09..=0.1).contains(&s.cpu_share),
            "{sched}: {}",
            s.cpu_share
        );
        let r19 = run(&wl19, cfg(sched, 1, 1000, &[]));
        let s19 = task(&r19, "sleeper");
        assert!(
            s19.wait_time_us > 10.0 * s.wait_time_us,
            "{sched}: nice 19 waited {} us, nice 0 {} us",
            s19.wait_time_us,
            s.wait_time_us
        );
    }
}

#[test]
fn fifo_beats_normal_and_deadline_is_squashed_to_fifo_99() {
    let wl = r#"{"global": {"duration": 2}, "tasks": {
        "hog": {"run": 100000000, "priority": -20},
        "rt": {"loop": -1, "policy": "SCHED_FIFO", "priority": 10, "run": 5000, "sleep": 15000}}}"#;
    for sched in ["bfs", "muqss"] {
        let r = run(wl, cfg(sched, 1, 1000, &[]));
        let rt = task(&r, "rt");
        assert_eq!(rt.wakeup_latency_max_us, 0.0, "{sched}");
        assert!(
            (rt.cpu_share - 0.25).abs() < 0.01,
            "{sched}: {}",
            rt.cpu_share
        );
    }
    // Two SCHED_DEADLINE tasks needing 1.8 CPUs: mainline refuses them;
    // squashed to FIFO 99 they run, ahead of a FIFO 50 task, with a warning.
    let dl = r#"{"global": {"duration": 1}, "tasks": {
        "d": {"instance": 2, "loop": -1, "policy": "SCHED_DEADLINE", "dl-runtime": 9000, "dl-period": 10000, "run": 3000, "sleep": 7000},
        "f": {"policy": "SCHED_FIFO", "priority": 50, "run": 100000000}}}"#;
    assert!(schedlab_core::simulate("test", dl, cfg("eevdf", 1, 1000, &[])).is_err());
    for sched in ["bfs", "muqss"] {
        let r = run(dl, cfg(sched, 1, 1000, &[]));
        assert!(r
            .metrics
            .warnings
            .iter()
            .any(|w| w.contains("SCHED_FIFO priority 99")));
        let d = task(&r, "d-0").cpu_share + task(&r, "d-1").cpu_share;
        assert!((d - 0.6).abs() < 0.02, "{sched}: {d}");
    }
}

/// MuQSS with per-CPU queues (rqshare none): a task woken while its CPU is
/// busy goes to the idle CPU (`select_best_cpu`), at once.
#[test]
fn muqss_wakes_a_task_on_an_idle_cpu() {
    let wl = r#"{"global": {"duration": 2}, "tasks": {
        "hog": {"cpus": [0], "run": 100000000},
        "w": {"phases": {
            "start": {"cpus": [0], "run": 1000},
            "free": {"cpus": [0, 1], "loop": 1000, "sleep": 4000, "run": 1000}}}}}"#;
    for share in [0, 2] {
        let r = run(wl, cfg("muqss", 2, 1000, &[("rqshare", share)]));
        let w = task(&r, "w");
        assert!(w.migrations >= 1, "rqshare={share}");
        // p99, not max: the start release waits for the hog's slice on CPU 0.
        assert_eq!(w.wakeup_latency_p99_us, 0.0, "rqshare={share}");
        assert!(task(&r, "hog").cpu_share > 0.99, "rqshare={share}");
    }
}

/// MuQSS's pick takes the globally earliest key across queues
/// (interactive = 1), so with per-CPU queues three hogs on two CPUs share
/// equally; BFS's sticky bias keeps two of them on one CPU, but its
/// global queue lets every one progress.
#[test]
fn n_plus_one_hogs_all_progress() {
    // Start times 1 ms apart, so no two slices end at the same instant
    // (MuQSS's own queue wins ties, which would pin one hog per CPU).
    let staggered = |n: usize| {
        let t: Vec<String> = (0..n)
            .map(|i| format!(r#""h{i}": {{"delay": {}, "run": 100000000}}"#, i * 1000))
            .collect();
        format!(
            r#"{{"global": {{"duration": 4}}, "tasks": {{{}}}}}"#,
            t.join(", ")
        )
    };
    for cpus in [2usize, 4] {
        let r = run(&staggered(cpus + 1), cfg("bfs", cpus, 1000, &[]));
        let shares: Vec<f64> = r.metrics.tasks.iter().map(|t| t.cpu_share).collect();
        assert!(
            shares.iter().all(|s| *s > 0.4),
            "bfs {cpus} CPUs: {shares:?}"
        );
        assert!((shares.iter().sum::<f64>() - cpus as f64).abs() < 0.01);
    }
    let r = run(&staggered(3), cfg("muqss", 2, 1000, &[("rqshare", 0)]));
    for t in &r.metrics.tasks {
        assert!(
            (t.cpu_share - 2.0 / 3.0).abs() < 0.02,
            "{}: {}",
            t.name,
            t.cpu_share
        );
    }
}

#[test]
fn idleprio_runs_only_when_nothing_else_can() {
    let wl = r#"{"global": {"duration": 2}, "tasks": {
        "idle": {"policy": "SCHED_IDLE", "run": 100000000},
        "busy": {"loop": -1, "run": 8000, "sleep": 2000}}}"#;
    for sched in ["bfs", "muqss"] {
        let r = run(wl, cfg(sched, 1, 1000, &[]));
        assert_eq!(task(&r, "busy").wakeup_latency_max_us, 0.0, "{sched}");
        assert!((task(&r, "busy").cpu_share - 0.8).abs() < 0.01, "{sched}");
        assert!(task(&r, "idle").cpu_share > 0.19, "{sched}");
    }
}

#[test]
fn cgroup_weights_are_ignored_with_a_warning() {
    let wl = r#"{"global": {"duration": 1, "taskgroups": {"/a": {"shares": 4096}}},
        "tasks": {"x": {"taskgroup": "/a", "run": 100000000}, "y": {"run": 100000000}}}"#;
    for sched in ["bfs", "muqss"] {
        let r = run(wl, cfg(sched, 1, 1000, &[]));
        assert!(r
            .metrics
            .warnings
            .iter()
            .any(|w| w.contains("no group scheduling")));
        assert!((task(&r, "x").cpu_share - 0.5).abs() < 0.01, "{sched}");
    }
}
