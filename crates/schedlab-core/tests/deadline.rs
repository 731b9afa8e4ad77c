//! SCHED_DEADLINE (linux-rt-dl.md §6): CBS budget, admission control,
//! class precedence, global EDF across CPUs and the Dhall effect, and a
//! cross-check against an independent simulator (SimSo 0.8.5).

mod common;
use common::{cfg, run, task};
use schedlab_core::config::SchedulerKind;

const BOTH: [SchedulerKind; 2] = [SchedulerKind::Eevdf, SchedulerKind::Cfs];

/// A DEADLINE task (10 ms / 100 ms) that would run forever, beside a CPU
/// hog, receives exactly its budget each period: at HZ 1000 it is throttled
/// at 10 ms of every 100 ms period; at HZ 250 throttling is seen at the
/// next tick and the overrun is carried into the next period, so the
/// average is still exactly 10 %.
#[test]
fn dl_task_receives_exactly_its_budget() {
    let wl = r#"{"global": {"duration": 2}, "tasks": {
        "dl": {"policy": "SCHED_DEADLINE", "dl-runtime": 10000, "dl-period": 100000, "run": 1000000},
        "hog": {"run": 1000000}}}"#;
    for kind in BOTH {
        for hz in [1000, 250] {
            let mut c = cfg(kind, 1);
            c.hz = hz;
            c.trace = true;
            let r = run(wl, c);
            assert!(
                (task(&r, "dl").cpu_share - 0.1).abs() < 1e-9,
                "{kind:?} {hz}"
            );
            if hz == 1000 {
                // Every DL run is exactly 10 ms, starting at each period.
                let text = schedlab_core::trace::ftrace::render(r.trace.as_ref().expect("trace"));
                let starts: Vec<&str> = text
                    .lines()
                    .filter(|l| l.contains("next_comm=dl "))
                    .filter_map(|l| l.split_whitespace().nth(3))
                    .collect();
                assert_eq!(starts.len(), 20, "{starts:?}");
                for (k, s) in starts.iter().enumerate() {
                    assert_eq!(*s, format!("{}.{:03}000:", k / 10, (k % 10) * 100));
                }
            }
        }
    }
}

/// Admission control: Σ R/P must stay within 0.95 per CPU (6.1), less the
/// 6.12 fair servers' 0.05 per CPU. Three 0.61 tasks fit on two CPUs
/// under 6.1 (1.83 <= 1.9) but not under 6.12 (1.83 > 1.8): EBUSY.
#[test]
fn admission_control_rejects_oversubscription() {
    let wl = r#"{"global": {"duration": 1}, "tasks": {
        "d": {"instance": 3, "policy": "SCHED_DEADLINE", "dl-runtime": 61000, "dl-period": 100000,
              "run": 10000, "timer": {"ref": "unique", "period": 100000}}}}"#;
    assert!(schedlab_core::simulate("w.json", wl, cfg(SchedulerKind::Cfs, 2)).is_ok());
    let e = schedlab_core::simulate("w.json", wl, cfg(SchedulerKind::Eevdf, 2))
        .expect_err("rejected")
        .to_string();
    assert!(
        e.contains("admission control") && e.contains("EBUSY"),
        "{e}"
    );
    assert!(e.contains("w.json"), "{e}");
}

/// Invalid parameters are workload errors naming the JSON path.
#[test]
fn invalid_dl_parameters_are_rejected() {
    let cases = [
        (
            r#""dl-runtime": 1, "dl-period": 1000"#,
            "tasks.d.dl-runtime",
        ),
        (
            r#""dl-runtime": 20000, "dl-period": 10000"#,
            "tasks.d.dl-deadline",
        ),
        (r#""dl-runtime": 20, "dl-period": 50"#, "tasks.d.dl-period"),
        (
            r#""dl-runtime": 1000, "dl-period": 10000, "cpus": [0]"#,
            "tasks.d.cpus",
        ),
    ];
    for (params, path) in cases {
        let wl = format!(
            r#"{{"global": {{"duration": 1}}, "tasks": {{"d": {{"policy": "SCHED_DEADLINE", {params}, "run": 10}}}}}}"#
        );
        let e = schedlab_core::simulate("w.json", &wl, cfg(SchedulerKind::Eevdf, 2))
            .expect_err("rejected")
            .to_string();
        assert!(e.contains(path), "{params}: {e}");
    }
}

/// dl > rt > fair: a DEADLINE task preempts a FIFO 99 hog at once.
#[test]
fn deadline_beats_fifo() {
    let wl = r#"{"global": {"duration": 1}, "tasks": {
        "fifo": {"policy": "SCHED_FIFO", "priority": 99, "run": 1000000},
        "dl": {"policy": "SCHED_DEADLINE", "dl-runtime": 2000, "dl-period": 10000,
               "run": 1000, "timer": {"ref": "unique", "period": 10000}}}}"#;
    for kind in BOTH {
        let r = run(wl, cfg(kind, 1));
        let d = task(&r, "dl");
        assert_eq!(d.wakeup_latency_max_us, 0.0, "{kind:?}");
        assert_eq!(d.deadline_misses, 0);
        assert_eq!(d.jobs_completed, 100);
    }
}

/// Dhall's effect (seed-algorithms.md §2.3): 4 CPUs, a heavy task (100,
/// 100, 100 ms) and 4 light tasks (1, 99, 99 ms), all released at 0. Global
/// EDF runs the four light jobs first, so the heavy job finishes at 101 ms
/// and misses although the total utilisation is about 1.04 of 4.
#[test]
fn global_edf_shows_the_dhall_effect() {
    let wl = r#"{"global": {"duration": 1, "calibration": 100}, "tasks": {
        "heavy": {"policy": "SCHED_DEADLINE", "dl-runtime": 100000, "dl-period": 100000,
                  "run": 100000, "timer": {"ref": "unique", "period": 100000}},
        "light": {"instance": 4, "policy": "SCHED_DEADLINE", "dl-runtime": 1000, "dl-period": 99000,
                  "run": 1000, "timer": {"ref": "unique", "period": 99000}}}}"#;
    let r = run(wl, cfg(SchedulerKind::Cfs, 4));
    let h = task(&r, "heavy");
    assert!(h.deadline_misses >= 1, "{}", h.deadline_misses);
    assert_eq!(h.max_tardiness_us, 1000.0, "first job ends at 101 ms");
    for i in 0..4 {
        assert_eq!(task(&r, &format!("light-{i}")).deadline_misses, 0);
    }
}

/// Cross-check with SimSo 0.8.5: global EDF on 4 CPUs, 16 periodic tasks
/// with WCET 5i ms and D = T = 5i + 230 ms, all released at 0, no
/// overheads. SimSo counts 600 jobs released and 597 completed over 10 s,
/// 3,558 and 3,555 over 60 s, no deadline miss.
#[test]
fn global_edf_matches_simso() {
    let tasks: Vec<String> = (1..=16)
        .map(|i| {
            let (c, t) = (5 * i * 1000, (5 * i + 230) * 1000);
            format!(
                r#""t{i}": {{"policy": "SCHED_DEADLINE", "dl-runtime": {c}, "dl-period": {t},
                    "run": {c}, "timer": {{"ref": "unique", "period": {t}}}}}"#
            )
        })
        .collect();
    for (secs, released, completed) in [(10, 600, 597), (60, 3558, 3555)] {
        let wl = format!(
            r#"{{"global": {{"duration": {secs}, "calibration": 100}}, "tasks": {{{}}}}}"#,
            tasks.join(", ")
        );
        for kind in BOTH {
            let r = run(&wl, cfg(kind, 4));
            let sum = |f: fn(&schedlab_core::metrics::TaskMetrics) -> u64| -> u64 {
                r.metrics.tasks.iter().map(f).sum()
            };
            assert_eq!(sum(|t| t.jobs_released), released, "{kind:?} {secs} s");
            assert_eq!(sum(|t| t.jobs_completed), completed, "{kind:?} {secs} s");
            assert_eq!(sum(|t| t.deadline_misses), 0, "{kind:?} {secs} s");
        }
    }
}
