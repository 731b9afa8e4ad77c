//! Quiet ticks (engine/nohz.rs `quiet_until`): a tick that would change
//! nothing is counted and skipped. The shortcut must be exact: every
//! workload here runs with it and with every tick in full, and the metrics
//! and the trace (with the classes' values at every switch) must be the
//! same to the byte. The workloads lean on what a
//! quiet tick must not skip: deadline jobs that overrun their runtime
//! (throttling at a tick), a slowed CPU (accounting that rounds per tick),
//! LLF's and ILLF's per-tick re-keying, the idle balancer of stopped CPUs,
//! sleep timers with slack (expired by the tick's hrtimer interrupt), RT
//! with the fair server, the three tick modes, and the fair class's
//! balancing that the engine runs at quiet ticks while no CPU holds fair
//! load (engine/private_balance.rs).

mod common;
use common::*;
use schedlab_core::config::SimConfig;
use schedlab_core::engine::Simulator;
use schedlab_core::trace::perfetto;
use schedlab_core::workload::Workload;

fn both_ways(name: &str, text: &str, cfg: SimConfig) {
    let once = |quiet: bool| {
        let wl = Workload::from_rtapp(name, text).expect("workload parses");
        let mut sim = Simulator::new(wl, cfg.clone()).expect("simulator builds");
        sim.set_quiet_ticks(quiet);
        let r = sim.run().expect("simulation runs");
        let metrics = serde_json::to_string(&r.metrics.to_json()).expect("metrics serialize");
        // The Perfetto bytes carry each class's values at every switch
        // (a deadline job's runtime to the nanosecond among them).
        (metrics, r.trace.as_ref().map(perfetto::encode))
    };
    let (full, quiet) = (once(false), once(true));
    assert!(
        full.0 == quiet.0,
        "{name} ({} on {} CPUs): metrics differ with quiet ticks",
        cfg.scheduler,
        cfg.cpus
    );
    assert!(full.1 == quiet.1, "{name}: traces differ with quiet ticks");
}

/// As [`both_ways`], and the classes' balancing bookkeeping the same at
/// every 10 ms of the run (state the metrics show only when it decides a
/// later balance).
fn both_ways_balance_state(name: &str, text: &str, cfg: SimConfig) {
    let once = |quiet: bool| {
        let wl = Workload::from_rtapp(name, text).expect("workload parses");
        let mut sim = Simulator::new(wl, cfg.clone()).expect("simulator builds");
        sim.set_quiet_ticks(quiet);
        let mut digests = vec![];
        let mut until = 0;
        while !sim.is_done() {
            until += 10_000_000;
            sim.run_until(until).expect("simulation runs");
            digests.push(sim.balance_state_digest());
        }
        let r = sim.finish();
        let metrics = serde_json::to_string(&r.metrics.to_json()).expect("metrics serialize");
        (metrics, digests)
    };
    let (full, quiet) = (once(false), once(true));
    let first_differing = full.1.iter().zip(&quiet.1).position(|(a, b)| a != b);
    assert_eq!(
        first_differing, None,
        "{name} ({} on {} CPUs): balancing state differs with quiet ticks at 10 ms step",
        cfg.scheduler, cfg.cpus
    );
    assert_eq!(full.1.len(), quiet.1.len());
    assert!(full.0 == quiet.0, "{name}: metrics differ with quiet ticks");
}

fn with(kind: &str, cpus: usize, f: impl FnOnce(&mut SimConfig)) -> SimConfig {
    let mut c = cfg(kind, cpus);
    c.trace = true;
    f(&mut c);
    c
}

/// Global EDF, issue 18's anchor shape: jobs that end within their runtime.
fn gedf(n: u64, overrun: u64) -> String {
    let tasks: Vec<String> = (1..=n)
        .map(|i| {
            let period = (5 * i + 230) * 1000;
            format!(
                r#""t{i}": {{"policy": "SCHED_DEADLINE", "dl-runtime": {}, "dl-deadline": {period},
                    "dl-period": {period}, "run": {}, "timer": {{"ref": "u{i}", "period": {period}}}}}"#,
                5 * i * 1000,
                5 * i * 1000 + overrun
            )
        })
        .collect();
    format!(
        r#"{{"global": {{"duration": 3}}, "tasks": {{{}}}}}"#,
        tasks.join(",")
    )
}

const MIXED: &str = r#"{"global": {"duration": 2},
    "tasks": {
        "dl": {"policy": "SCHED_DEADLINE", "dl-runtime": 3000, "dl-deadline": 10000,
               "dl-period": 10000, "run": 2500, "timer": {"ref": "d", "period": 10000}},
        "fifo": {"policy": "SCHED_FIFO", "priority": 10, "run": 500, "sleep": 7000},
        "io": {"instance": 3, "run": 300, "sleep": 4000},
        "hog": {"instance": 2, "run": 100000, "priority": 5}}}"#;

const SLACK_UNDER_DL: &str = r#"{"global": {"duration": 2},
    "tasks": {
        "dl": {"policy": "SCHED_DEADLINE", "dl-runtime": 8500, "dl-deadline": 10270,
               "dl-period": 10270, "run": 8000, "timer": {"ref": "d", "period": 10270}},
        "io": {"instance": 2, "run": 100, "sleep": 2900}}}"#;

#[test]
fn deadline_runs_are_the_same_with_quiet_ticks() {
    for hz in [100, 250, 1000] {
        for nohz in [0, 1, 2] {
            let c = with("eevdf", 4, |c| {
                c.hz = hz;
                c.set = vec![("nohz".into(), nohz)];
            });
            both_ways("gedf", &gedf(16, 0), c.clone());
            // Jobs that run past their runtime: throttled at the tick.
            both_ways("gedf-overrun", &gedf(12, 700), c);
        }
    }
    for order in ["llf", "illf"] {
        let c = with("eevdf", 4, |c| c.dl_policy = order.into());
        both_ways(order, &gedf(16, 0), c);
    }
    // A slowed CPU whose rate divides no tick evenly: each tick's
    // accounting rounds on its own.
    let c = with("eevdf", 4, |c| c.freq_mhz = vec![(1300, 1999)]);
    both_ways("gedf-slow", &gedf(12, 0), c.clone());
    both_ways("gedf-slow-overrun", &gedf(12, 300), c);
}

/// The shortcut takes effect where it should: in the global-EDF anchor
/// (issue 18) most ticks are quiet; with fair tasks only, none are.
#[test]
fn most_deadline_ticks_are_quiet_and_no_fair_tick_is() {
    let ticks_and_skipped = |text: &str, c: SimConfig| {
        let wl = Workload::from_rtapp("t", text).expect("workload parses");
        let mut sim = Simulator::new(wl, c).expect("simulator builds");
        sim.run_until(u64::MAX).expect("simulation runs");
        let skipped = sim.quiet_skipped();
        let r = sim.finish();
        (r.metrics.events, skipped)
    };
    let c = with("eevdf", 4, |c| c.hz = 1000);
    let (events, skipped) = ticks_and_skipped(&gedf(16, 0), c.clone());
    assert!(
        skipped * 10 > events * 8,
        "{skipped} of {events} events skipped"
    );
    let (_, skipped) = ticks_and_skipped(&hogs(12, 2), c);
    assert_eq!(skipped, 0);
}

/// Issue 18's wide global-EDF shape scaled down (`n` DEADLINE tasks of
/// distinct periods, 16 + i ms, and runtimes, 3 + i mod 5 ms: most CPUs of
/// a wide machine busy at each jiffy, idle ones keeping a retained tick)
/// beside [`fair_bursts`]' fair tasks: a jiffy's quiet ticks go all at
/// once (nohz.rs `quiet_rest_of_jiffy`), with private passes and
/// idle-balance kicks among them.
fn wide_gedf_beside_fair_bursts(n: u64, secs: u64) -> String {
    let mut tasks: Vec<String> = (1..=n)
        .map(|i| {
            let (period, wcet) = ((16 + i) * 1000, (3 + i % 5) * 1000);
            format!(
                r#""t{i}": {{"policy": "SCHED_DEADLINE", "dl-runtime": {wcet}, "dl-deadline": {period},
                    "dl-period": {period}, "run": {wcet}, "timer": {{"ref": "u{i}", "period": {period}}}}}"#
            )
        })
        .collect();
    tasks.push(
        r#""burst": {"instance": 5, "run": 60000, "sleep": 1300000},
        "chatty": {"instance": 10, "phases": {
            "busy": {"loop": 40, "run": 900, "timer": {"ref": "sync", "period": 1500}},
            "away": {"sleep": 1700000}}}"#
            .into(),
    );
    format!(
        r#"{{"global": {{"duration": {secs}}}, "tasks": {{{}}}}}"#,
        tasks.join(",")
    )
}

/// DEADLINE jobs beside fair tasks that run in bursts and sleep long
/// enough for every fair signal to decay to zero: between bursts the fair
/// class's periodic passes are private and run at quiet ticks (busy CPUs'
/// own, stopped CPUs' through the idle balancer), and the next burst's
/// placement and balancing start from the state they left.
fn fair_bursts(burst_us: u64, sleep_us: u64) -> String {
    format!(
        r#"{{"global": {{"duration": 8}},
    "tasks": {{
        "dl": {{"instance": 2, "policy": "SCHED_DEADLINE", "dl-runtime": 3000,
               "dl-deadline": 7000, "dl-period": 7000, "run": 2800,
               "timer": {{"ref": "d", "period": 7000}}}},
        "dl2": {{"policy": "SCHED_DEADLINE", "dl-runtime": 9000, "dl-deadline": 20000,
               "dl-period": 20000, "run": 8500, "timer": {{"ref": "e", "period": 20000}}}},
        "burst": {{"instance": 5, "run": {burst_us}, "sleep": {sleep_us}}},
        "late": {{"delay": 2500000, "instance": 3, "run": 40000, "sleep": 1900000}},
        "chatty": {{"instance": 10, "phases": {{
            "busy": {{"loop": 40, "run": 900, "timer": {{"ref": "sync", "period": 1500}}}},
            "away": {{"sleep": 1700000}}}}}}}}}}"#
    )
}

#[test]
fn fair_bursts_between_deadline_jobs_are_the_same_with_quiet_ticks() {
    for (cpus, hz, nohz) in [
        (4, 1000, 1),
        (4, 250, 1),
        (8, 250, 1),
        (16, 250, 1),
        (4, 1000, 0),
        (3, 100, 2),
    ] {
        let c = with("eevdf", cpus, |c| {
            c.hz = hz;
            c.set = vec![("nohz".into(), nohz)];
        });
        both_ways("fair-bursts", &fair_bursts(60_000, 1_300_000), c.clone());
        both_ways_balance_state("fair-bursts", &fair_bursts(60_000, 1_300_000), c.clone());
        both_ways_balance_state("fair-bursts-short", &fair_bursts(3_000, 900_000), c);
    }
    // Wide machines whose jiffies have many ticking CPUs (a jiffy's quiet
    // ticks all at once), with idle CPUs' retained ticks among them.
    for (cpus, n, hz) in [(16, 40, 1000), (16, 60, 1000), (32, 80, 250)] {
        let c = with("eevdf", cpus, |c| c.hz = hz);
        let text = wide_gedf_beside_fair_bursts(n, 3);
        both_ways("wide-gedf-fair-bursts", &text, c.clone());
        both_ways_balance_state("wide-gedf-fair-bursts", &text, c);
    }
    // A fair policy with its own balancing hooks (never private) and the
    // kernel 6.18 fair class.
    for kind in ["cacule", "eevdf-6.18", "cfs"] {
        both_ways(
            "fair-bursts",
            &fair_bursts(60_000, 1_300_000),
            with(kind, 4, |_| {}),
        );
    }
}

#[test]
fn mixed_classes_are_the_same_with_quiet_ticks() {
    for kind in ["eevdf", "cfs", "eevdf-6.18", "bmq", "cacule"] {
        for cpus in [1, 2, 3, 8] {
            both_ways("mixed", MIXED, with(kind, cpus, |_| {}));
        }
    }
    // With the wakeup path's costs and timer slack.
    let c = with("eevdf", 4, |c| c.zero_costs = false);
    both_ways("mixed-costs", MIXED, c);
    // A sleeper's slack timer on a CPU a deadline job keeps busy: the
    // tick's hrtimer interrupt expires it early when it falls inside the
    // slack window.
    for cpus in [1, 2] {
        for hz in [250, 1000] {
            let c = with("eevdf", cpus, |c| {
                c.zero_costs = false;
                c.hz = hz;
            });
            both_ways("slack-under-dl", SLACK_UNDER_DL, c);
        }
    }
}

#[test]
fn example_workloads_are_the_same_with_quiet_ticks() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let mut files = vec![];
    for dir in [
        "examples",
        "examples/fidelity",
        "tests/fixtures/rtapp-examples",
    ] {
        let Ok(entries) = std::fs::read_dir(format!("{root}/{dir}")) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.extension().is_some_and(|x| x == "json") {
                files.push(p);
            }
        }
    }
    files.sort();
    assert!(files.len() >= 8, "found {} workload files", files.len());
    for p in files {
        let text = std::fs::read_to_string(&p).expect("readable");
        let name = p.display().to_string();
        if Workload::from_rtapp(&name, &text).is_err() {
            continue;
        }
        // On 4 CPUs, or on 16 for a workload sized for them (the 16-CPU
        // fidelity references: DEADLINE admission refuses them on 4).
        let fits = |cpus: usize| {
            let wl = Workload::from_rtapp(&name, &text).expect("workload parses");
            Simulator::new(wl, with("eevdf", cpus, |_| {})).is_ok()
        };
        let cpus = if fits(4) { 4 } else { 16 };
        let c = with("eevdf", cpus, |c| c.duration = Some(2_000_000_000));
        both_ways(&name, &text, c);
    }
}
