//! Runaway workloads end with a clear error, and running in bounded
//! batches of events (how the Python binding serves Ctrl-C) changes nothing.

mod common;
use common::{cfg, run};
use schedlab_core::engine::Simulator;
use schedlab_core::workload::Workload;

const FORK_LOOP: &str = r#"{"global": {"duration": 1}, "tasks": {"x": {"fork": "x"}}}"#;

#[test]
fn a_fork_loop_stops_at_max_threads() {
    let e = schedlab_core::simulate("w.json", FORK_LOOP, cfg("eevdf", 1))
        .expect_err("a fork loop must fail");
    let msg = e.to_string();
    assert!(
        msg.contains("already has 100000 threads (tunable max_threads)"),
        "{msg}"
    );
    let mut c = cfg("eevdf", 1);
    c.set = vec![("max_threads".into(), 50)];
    let msg = schedlab_core::simulate("w.json", FORK_LOOP, c)
        .expect_err("fails")
        .to_string();
    assert!(msg.contains("already has 50 threads"), "{msg}");
}

#[test]
fn a_zero_time_loop_stops_at_max_events_per_instant() {
    let wl = r#"{"global": {"duration": 1}, "tasks": {"x": {"lock": "m", "unlock": "m"}}}"#;
    let mut c = cfg("eevdf", 1);
    c.set = vec![("max_events_per_instant".into(), 5000)];
    let msg = schedlab_core::simulate("w.json", wl, c)
        .expect_err("fails")
        .to_string();
    assert!(msg.contains("more than 5000 at one instant"), "{msg}");
}

#[test]
fn bounded_batches_give_the_same_run() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/mixed.json"
    ))
    .expect("example");
    let mut c = cfg("eevdf", 2);
    c.trace = true;
    let whole = run(&text, c.clone());
    let wl = Workload::from_rtapp("test", &text).expect("parses");
    let mut sim = Simulator::new(wl, c).expect("builds");
    let mut batches = 0;
    while !sim.run_bounded(u64::MAX, 100).expect("runs") {
        batches += 1;
    }
    assert!(batches > 10, "{batches}");
    let split = sim.finish();
    assert_eq!(
        serde_json::to_string(&whole.metrics).expect("json"),
        serde_json::to_string(&split.metrics).expect("json")
    );
}

/// Batches that end inside a jiffy whose quiet ticks are delivered
/// together (engine/nohz.rs `deliver_quiet_ticks`): 16 CPUs of deadline
/// jobs, 3 events a batch.
#[test]
fn bounded_batches_split_a_jiffy_of_quiet_ticks_the_same() {
    let tasks: Vec<String> = (1..=24)
        .map(|i| {
            let period = 1000 * (i + 40);
            format!(
                r#""d{i}": {{"policy": "SCHED_DEADLINE", "dl-runtime": {r}, "dl-deadline": {period},
                    "dl-period": {period}, "run": {r}, "timer": {{"ref": "u{i}", "period": {period}}}}}"#,
                r = 400 * i
            )
        })
        .collect();
    let text = format!(
        r#"{{"global": {{"duration": 1}}, "tasks": {{{}}}}}"#,
        tasks.join(",")
    );
    let mut c = cfg("eevdf", 16);
    c.hz = 1000;
    let whole = run(&text, c.clone());
    let wl = Workload::from_rtapp("test", &text).expect("parses");
    let mut sim = Simulator::new(wl, c).expect("builds");
    let mut batches = 0;
    while !sim.run_bounded(u64::MAX, 3).expect("runs") {
        batches += 1;
    }
    assert!(sim.quiet_skipped() > 1000, "{}", sim.quiet_skipped());
    assert!(batches > 1000, "{batches}");
    let split = sim.finish();
    assert_eq!(
        serde_json::to_string(&whole.metrics).expect("json"),
        serde_json::to_string(&split.metrics).expect("json")
    );
}

#[test]
fn check_warns_about_a_fork_loop() {
    let wl = schedlab_core::workload::Workload::from_rtapp("w.json", FORK_LOOP).expect("parses");
    assert!(
        wl.warnings
            .iter()
            .any(|w| w.starts_with("tasks.x: forks itself without a run, sleep or timer")),
        "{:?}",
        wl.warnings
    );
    let ok = r#"{"global": {"duration": 1}, "tasks": {"x": {"run": 100, "fork": "x"}}}"#;
    let wl = schedlab_core::workload::Workload::from_rtapp("w.json", ok).expect("parses");
    assert!(
        wl.warnings.iter().all(|w| !w.contains("forks itself")),
        "{:?}",
        wl.warnings
    );
}

/// A timer period near the input limit (18,446,744,073,709,551 µs, the
/// largest that fits in u64 ns): the second release saturates at the last
/// representable time, which no run reaches. Shared by two tasks, the
/// timer advances twice and a job's deadline is that far too: the run
/// ends normally, each task with the one job it released at the start.
#[test]
fn a_timer_period_at_the_input_limit_runs() {
    for (period, shared) in [
        ("10000000000000000", true),
        ("18446744073709551", true),
        ("18446744073709551", false),
    ] {
        let timer = if shared { "x" } else { "unique" };
        let wl = format!(
            r#"{{"global": {{"duration": 2}}, "tasks": {{"a": {{"instance": 2,
                "timer": {{"ref": "{timer}", "period": {period}}}, "run": 10}}}}}}"#
        );
        for sched in ["eevdf", "cfs"] {
            let r = run(&wl, cfg(sched, 1));
            for t in &r.metrics.tasks {
                assert_eq!(t.jobs_released, 1, "{period} {timer} {sched}: {}", t.name);
                assert_eq!(t.deadline_misses, 0, "{period} {timer} {sched}: {}", t.name);
            }
        }
    }
}

/// A thread a `fork` may make is a name the index can take, at any
/// instance number (the run decides how many are made).
#[test]
fn fairness_tasks_may_name_forked_threads() {
    let wl = r#"{"global": {"duration": 1}, "tasks": {"p": {"loop": 3, "fork": "w", "run": 100},
                 "w": {"instance": 0, "run": 1000}}}"#;
    let mut c = cfg("eevdf", 1);
    c.fairness_tasks = vec!["w-2".into(), "w".into()];
    let r = schedlab_core::simulate("w.json", wl, c).expect("a forked thread's name");
    assert!(
        r.metrics.fairness_tasks.contains(&"w-2".to_string()),
        "{:?}",
        r.metrics.fairness_tasks
    );
}

/// Jain's index is over the tasks named: a name that matches no task
/// object or thread is refused before the run (it left the index over
/// fewer tasks, and over none it read 1, "perfectly fair").
#[test]
fn fairness_tasks_must_name_tasks() {
    let wl = r#"{"global": {"duration": 1}, "tasks": {"h": {"instance": 2, "run": 1000},
                 "io": {"run": 100}}}"#;
    for good in [vec!["h"], vec!["h-1", "io"], vec!["io"]] {
        let mut c = cfg("eevdf", 1);
        c.fairness_tasks = good.iter().map(|s| s.to_string()).collect();
        schedlab_core::simulate("w.json", wl, c).expect("known names");
    }
    for bad in ["nope", "h-", "h-x", "io2", "-1", "h-2", "h-01", "io-0"] {
        let mut c = cfg("eevdf", 1);
        c.fairness_tasks = vec!["h".into(), bad.into()];
        let msg = schedlab_core::simulate("w.json", wl, c)
            .expect_err("an unknown name")
            .to_string();
        assert!(
            msg.contains(&format!("fairness_tasks: {bad:?} names no task of w.json")),
            "{msg}"
        );
    }
}

/// Frequencies past 100 GHz are refused in every place a run takes one:
/// past about 2.25 × 10^9 MHz the progress rate left u64 and the run did
/// no work without a word.
#[test]
fn frequencies_past_the_bound_are_refused() {
    let wl = r#"{"global": {"duration": 1}, "tasks": {"h": {"run": 1000}}}"#;
    let mut c = cfg("eevdf", 1);
    c.freq_mhz = vec![(100_000, 100_000)];
    schedlab_core::simulate("w.json", wl, c).expect("100 GHz runs");
    let mut c = cfg("eevdf", 1);
    c.freq_mhz = vec![(2000, 2_251_799_814)];
    let msg = schedlab_core::simulate("w.json", wl, c)
        .expect_err("refused")
        .to_string();
    assert!(
        msg.contains("frequencies are at most 100000 MHz, got 2251799814 MHz"),
        "{msg}"
    );
    let mut c = cfg("eevdf", 1);
    c.freq_levels_mhz = vec![1000, 200_000];
    let msg = schedlab_core::simulate("w.json", wl, c)
        .expect_err("refused")
        .to_string();
    assert!(msg.contains("at most 100000 MHz, got 200000 MHz"), "{msg}");
    let msg = schedlab_core::engine::governor::Governor::parse("schedule:0.1=100001")
        .expect_err("refused");
    assert!(
        msg.contains("\"0.1=100001\": frequencies are at most 100000 MHz"),
        "{msg}"
    );
}
