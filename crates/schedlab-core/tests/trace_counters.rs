//! `SimConfig::trace_counters`: a trace without the task counters holds the
//! same scheduler events, and the run the same metrics, as one with them.

mod common;

use common::run;
use schedlab_core::config::SimConfig;
use schedlab_core::trace::{ftrace, perfetto};

/// Every class at once on 2 CPUs: DEADLINE, FIFO/RR and fair tasks, with
/// OS noise (scripts/golden.py's EVERY_CLASS).
const EVERY_CLASS: &str = r#"{"global": {"duration": 1}, "tasks": {
    "dl": {"policy": "SCHED_DEADLINE", "dl-runtime": 3000, "dl-period": 10000, "dl-deadline": 8000,
           "instance": 2, "run": 2500, "timer": {"ref": "unique", "period": 10000}},
    "fifo": {"policy": "SCHED_FIFO", "priority": 10, "run": 150000},
    "rr": {"policy": "SCHED_RR", "priority": 5, "instance": 2, "run": 30000, "sleep": 5000},
    "hog": {"instance": 2, "run": 100000},
    "io": {"priority": -5, "sleep": 3000, "run": 200}}}"#;

#[test]
fn a_trace_without_counters_has_the_same_events_and_metrics() {
    for scheduler in ["eevdf", "cfs", "bmq", "cacule"] {
        let cfg = |counters: bool| SimConfig {
            scheduler: scheduler.into(),
            cpus: 2,
            seed: 3,
            trace: true,
            trace_counters: counters,
            set: vec![("noise_interval_us".into(), 20_000)],
            ..SimConfig::default()
        };
        let with = run(EVERY_CLASS, cfg(true));
        let without = run(EVERY_CLASS, cfg(false));
        let (tw, to) = (
            with.trace.as_ref().expect("present"),
            without.trace.as_ref().expect("present"),
        );
        assert!(
            !tw.counters.is_empty(),
            "{scheduler}: counters sampled by default"
        );
        assert!(to.counters.is_empty(), "{scheduler}: no counters when off");
        assert!(
            tw.records.len() > 500,
            "{scheduler}: a busy trace ({})",
            tw.records.len()
        );
        assert!(
            tw.records.iter().eq(to.records.iter()),
            "{scheduler}: the same records"
        );
        assert_eq!(ftrace::render(tw), ftrace::render(to), "{scheduler}");
        assert_eq!(
            serde_json::to_string(&with.metrics).expect("json"),
            serde_json::to_string(&without.metrics).expect("json"),
            "{scheduler}: the same metrics"
        );
        // The Perfetto file differs only by the counter tracks: it is smaller.
        assert!(perfetto::encode(to).len() < perfetto::encode(tw).len());
    }
}
