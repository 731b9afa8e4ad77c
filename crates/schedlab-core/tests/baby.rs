//! Baby (dl flavour, policy/baby.rs): the rules of alt-schedulers.md §7 and
//! baby-dl-5.14.patch, checked against what those rules imply.

mod common;
use common::{run, task};
use schedlab_core::config::SimConfig;
use schedlab_core::engine::Simulator;
use schedlab_core::workload::Workload;

fn cfg(cpus: usize, set: &[(&str, i64)]) -> SimConfig {
    SimConfig {
        zero_costs: true,
        scheduler: "baby".into(),
        cpus,
        hz: 1000,
        set: set.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
        ..SimConfig::default()
    }
}

fn pair(secs: u64, a: i32, b: i32) -> String {
    format!(
        r#"{{"global": {{"duration": {secs}}}, "tasks": {{"a": {{"run": 100000000, "priority": {a}}}, "b": {{"run": 100000000, "priority": {b}}}}}}}"#
    )
}

/// Earliest deadline first: a task that sleeps keeps its (now past)
/// deadline, which is earlier than a running hog's (at most 1.18 ms
/// ahead), so it preempts at once; the hog ran ≥ 175 ms of every 200 ms
/// window, so its burst budget never protects it.
#[test]
fn earliest_deadline_wins_on_wakeup() {
    let wl = r#"{"global": {"duration": 2}, "tasks": {
        "hog": {"run": 100000000},
        "sleeper": {"loop": -1, "run": 300, "sleep": 5000}}}"#;
    for hrtick in [0, 1] {
        let r = run(wl, cfg(1, &[("hrtick", hrtick)]));
        let s = task(&r, "sleeper");
        assert!(s.wakeups > 300);
        assert_eq!(s.wakeup_latency_max_us, 0.0, "hrtick={hrtick}");
    }
    // A SCHED_BATCH wakee never wakeup-preempts; without the hrtick
    // (re-armed at every enqueue) it waits for the next tick.
    let batch = wl.replace(
        r#""sleep": 5000}"#,
        r#""sleep": 5000, "policy": "SCHED_BATCH"}"#,
    );
    let r = run(&batch, cfg(1, &[("hrtick", 0)]));
    assert!(task(&r, "sleeper").wakeup_latency_max_us > 0.0);
}

fn prio_after(wl: &str, until: u64) -> i64 {
    let w = Workload::from_rtapp("test", wl).expect("parses");
    let mut sim = Simulator::new(w, cfg(1, &[])).expect("builds");
    sim.run_until(until).expect("runs");
    let class = sim.classes.position("baby").expect("baby class");
    let debug = sim.classes.get_ref(class).task_debug(0);
    debug
        .iter()
        .find(|(k, _)| *k == "prio_nice")
        .expect("prio_nice")
        .1
}

/// Sleeping before the deadline lowers the dynamic prio by one. While the
/// nice is ≥ 0 the deadline is renewed at each pick, so every short run
/// ends before it; below 0 it is renewed only once reached, so a task
/// whose sleeps outlast its deadline offset stops at −1, while one that
/// sleeps shorter keeps going down. Nothing raises it again.
#[test]
fn sleeping_before_the_deadline_raises_priority() {
    let long = r#"{"global": {"duration": 1}, "tasks": {
        "s": {"loop": -1, "run": 100, "sleep": 10000, "priority": 5}}}"#;
    assert_eq!(prio_after(long, 55_000_000), 5 - 6); // six sleeps
    assert_eq!(prio_after(long, 900_000_000), -1);
    let short = long.replace(r#""sleep": 10000"#, r#""sleep": 300"#);
    let p = prio_after(&short, 900_000_000);
    assert!((-20..=-10).contains(&p), "{p}");
}

/// prio_factor only moves deadlines; with the hrtick the shares of two
/// hogs follow from the 0.59 ms minimum run. Nice 0 (a) against a
/// positive nice b with D_b = 1.18 ms + factor: b, picked at its
/// deadline Y, gets a new one at Y + D_b while a's is Y + 1.18 ms, more
/// than 0.59 ms earlier, so b runs 0.59 ms and a until Y + D_b: b's share
/// is 0.59/D_b (the burst budget, which lets a task finish the run time
/// of its previous 200 ms window, adds a little). A negative nice is not
/// renewed at the pick; the two alternate at the same 0.59 ms cut and
/// share equally.
#[test]
fn nice_shifts_shares_as_prio_factor_implies() {
    let share = |b: i32| task(&run(&pair(10, 0, b), cfg(1, &[])), "b").cpu_share;
    for b in [0, -10, -20] {
        let s = share(b);
        assert!((s - 0.5).abs() < 0.01, "nice {b}: {s}");
    }
    for (b, factor) in [(1, 1.08), (5, 1.12), (19, 1.26)] {
        let want = 0.59 / (1.18 + factor);
        let s = share(b);
        assert!(
            s > want - 0.005 && s < want + 0.015,
            "nice {b}: {s}, expected {want:.4}"
        );
    }
}

/// CPU0 moves one task per tick from the busiest to the least busy CPU
/// while their counts differ by ≥ 2; a difference of 1 is left alone.
#[test]
fn cpu0_balancing_evens_task_counts() {
    // Four hogs start pinned to CPU1, then may use both CPUs: CPU1 idles
    // never, CPU0 never schedules by itself; only CPU0's tick balance
    // brings two of them over.
    let wl = r#"{"global": {"duration": 4}, "tasks": {"h": {"instance": 4, "phases": {
        "pinned": {"cpus": [1], "run": 2000},
        "free": {"cpus": [0, 1], "run": 100000000}}}}}"#;
    let r = run(wl, cfg(2, &[]));
    for t in &r.metrics.tasks {
        assert!(
            (t.cpu_share - 0.5).abs() < 0.02,
            "{}: {}",
            t.name,
            t.cpu_share
        );
    }
    let moved: u64 = r.metrics.tasks.iter().map(|t| t.migrations).sum();
    assert_eq!(moved, 2, "two moves make 2/2; none after");
    // Three hogs on two CPUs: 2 and 1 differ by 1, so nobody moves and
    // one hog keeps a CPU to itself.
    let r = run(&common::hogs(3, 3), cfg(2, &[]));
    let mut shares: Vec<f64> = r.metrics.tasks.iter().map(|t| t.cpu_share).collect();
    shares.sort_by(f64::total_cmp);
    assert!((shares[0] - 0.5).abs() < 0.02 && (shares[1] - 0.5).abs() < 0.02);
    assert!(shares[2] > 0.99, "{shares:?}");
}

/// RT keeps mainline semantics above Baby's class; cgroups are ignored
/// with a warning.
#[test]
fn rt_above_baby_and_cgroups_ignored() {
    let wl = r#"{"global": {"duration": 1, "taskgroups": {"/g": {"shares": 8192}}}, "tasks": {
        "rt": {"loop": -1, "policy": "SCHED_FIFO", "priority": 10, "run": 3000, "sleep": 7000},
        "x": {"taskgroup": "/g", "run": 100000000}, "y": {"run": 100000000}}}"#;
    let r = run(wl, cfg(1, &[]));
    assert_eq!(task(&r, "rt").wakeup_latency_max_us, 0.0);
    assert!((task(&r, "x").cpu_share - task(&r, "y").cpu_share).abs() < 0.02);
    assert!(r
        .metrics
        .warnings
        .iter()
        .any(|w| w.contains("no group scheduling")));
}
