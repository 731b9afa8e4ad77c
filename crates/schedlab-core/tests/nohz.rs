//! Tick modes (engine/nohz.rs): idle CPUs stop their tick under NO_HZ_IDLE
//! (counted in engine events, not timed), the NOHZ idle balancer still
//! spreads work onto CPUs whose tick is stopped, and NO_HZ_FULL stops the
//! tick of a CPU running one task.

mod common;
use common::*;
use schedlab_core::config::SimConfig;
use schedlab_core::trace::TraceEvent;

fn mode(kind: &str, cpus: usize, nohz: i64) -> SimConfig {
    let mut c = cfg(kind, cpus);
    c.set = vec![("nohz".into(), nohz)];
    c
}

/// One short task every 100 ms on a 64-CPU machine for 10 s.
const QUIET: &str = r#"{"global": {"duration": 10},
    "tasks": {"t": {"loop": -1, "run": 1000, "sleep": 100000}}}"#;

#[test]
fn idle_cpus_do_not_tick_under_nohz_idle() {
    let periodic = run(QUIET, mode("eevdf", 64, 0)).metrics.events;
    let idle = run(QUIET, mode("eevdf", 64, 1)).metrics.events;
    // Periodic: 64 CPUs × 250 Hz × 10 s = 160,000 ticks. NO_HZ_IDLE: only
    // the busy CPU ticks while the task runs (1 ms of every 101 ms: at most
    // one tick each time), plus the task's own events.
    assert!(periodic >= 160_000, "{periodic}");
    assert!(idle < 2_000, "{idle}");
}

/// Four hogs start pinned to CPU 0, then may run anywhere: only the idle
/// balancer can bring work to CPUs 1-3, whose ticks are stopped.
const PINNED_THEN_FREE: &str = r#"{"global": {"duration": 2},
    "tasks": {"hog": {"instance": 4, "phases": {
        "pinned": {"cpus": [0], "run": 10000},
        "free": {"cpus": [0, 1, 2, 3], "run": 10000000}}}}}"#;

#[test]
fn the_nohz_idle_balancer_spreads_work_to_tickless_cpus() {
    for kind in BOTH {
        for nohz in [0, 1, 2] {
            let r = run(PINNED_THEN_FREE, mode(kind, 4, nohz));
            let util: Vec<f64> = r.metrics.cpu.iter().map(|c| c.utilisation).collect();
            // 40 ms pinned on CPU 0, then a hog per CPU after a balance
            // interval or a few: every CPU busy for most of the 2 s.
            assert!(
                util.iter().all(|u| *u > 0.9),
                "{kind} nohz={nohz}: {util:?}"
            );
        }
    }
}

#[test]
fn nohz_full_stops_the_tick_of_a_cpu_with_one_task() {
    let hog = r#"{"global": {"duration": 1}, "tasks": {"hog": {"run": 10000000}}}"#;
    let idle = run(hog, mode("eevdf", 1, 1)).metrics.events;
    let full = run(hog, mode("eevdf", 1, 2)).metrics.events;
    // NO_HZ_IDLE: the busy CPU ticks 250 times; NO_HZ_FULL: not at all.
    assert!(idle >= 250, "{idle}");
    assert!(full < 10, "{full}");
}

/// Switch-in times of two hogs sharing one CPU with ticks every 4 ms and a
/// 1.4 ms slice: every switch after the first is a tick preemption.
fn tick_switch_times(phase: i64, seed: u64) -> Vec<u64> {
    let wl = r#"{"global": {"duration": 1}, "tasks": {"h": {"instance": 2, "run": 1000000}}}"#;
    let mut c = cfg("eevdf-6.18", 1);
    c.trace = true;
    c.seed = seed;
    c.set = vec![("tick_phase_ns".into(), phase)];
    let r = run(wl, c);
    let trace = r.trace.expect("trace");
    trace
        .records
        .iter()
        .filter(|rec| matches!(rec.ev, TraceEvent::Switch { next: Some(_), .. }))
        .map(|rec| rec.ts)
        .skip(1)
        .collect()
}

#[test]
fn the_tick_phase_moves_the_jiffy_grid() {
    for phase in [0i64, 1_000_000, 3_999_999, 4_000_001] {
        let times = tick_switch_times(phase, 0);
        assert!(times.len() >= 20, "{phase}: {times:?}");
        let want = phase as u64 % 4_000_000;
        for t in &times {
            assert_eq!(t % 4_000_000, want, "phase {phase}: switch at {t}");
        }
    }
    // -1: drawn from the seed, the same for the same seed, on the grid.
    let a = tick_switch_times(-1, 7);
    assert_eq!(a, tick_switch_times(-1, 7));
    let phases: std::collections::BTreeSet<u64> = (0..8)
        .map(|s| tick_switch_times(-1, s)[0] % 4_000_000)
        .collect();
    assert!(phases.len() > 4, "{phases:?}");
}

/// Under NO_HZ_IDLE a CPU that goes idle keeps its tick for one more jiffy
/// and stops it after that tick (`idle_tick_retain`, default 1): the
/// kernel's `tick_nohz_next_event` keeps the tick while RCU needs the CPU,
/// and host traces show exactly one tick in most idle periods (587 of 628
/// of 8 ms or more on a 16-vCPU VM). A task pinned to CPU 0 that runs 1 ms
/// every 20 ms leaves CPU 0 idle 50 times in 1 s: 50 more ticks than with
/// the tick stopped at idle entry, and one for CPU 1, idle from the start.
#[test]
fn an_idle_cpu_ticks_once_more_then_stops() {
    let wl = r#"{"global": {"duration": 1},
        "tasks": {"t": {"cpus": [0], "loop": -1, "run": 1000, "sleep": 19000}}}"#;
    let mut c = mode("eevdf", 2, 1);
    let retained = run(wl, c.clone()).metrics.events;
    c.set.push(("idle_tick_retain".into(), 0));
    let stopped = run(wl, c).metrics.events;
    let extra = retained - stopped;
    assert!(
        (49..=52).contains(&extra),
        "{retained} - {stopped} = {extra}"
    );
}
