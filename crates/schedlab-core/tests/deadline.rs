//! SCHED_DEADLINE (linux-rt-dl.md §6): CBS budget, admission control,
//! class precedence, global EDF across CPUs and the Dhall effect, and a
//! cross-check against an independent simulator (SimSo 0.8.5).

mod common;
use common::{cfg, run, task};
use schedlab_core::trace::WakePath;

const BOTH: [&str; 2] = ["eevdf", "cfs"];

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
    assert!(schedlab_core::simulate("w.json", wl, cfg("cfs", 2)).is_ok());
    let e = schedlab_core::simulate("w.json", wl, cfg("eevdf", 2))
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
        let e = schedlab_core::simulate("w.json", &wl, cfg("eevdf", 2))
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
    let r = run(wl, cfg("cfs", 4));
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

/// Issue 18's large global-EDF set (python/schedlab/benchsuite.py
/// `gedf_wide`, scripts/simso_gedf.py `--wide`): 500 tasks on 64 CPUs, T = D
/// = 200 + i ms, WCET 20 + 2 (i mod 17) ms. SimSo 0.8.5 gives 6,510 jobs
/// released and 6,461 completed in 5 s. Before the push after a preemption
/// saw the preempted job as waiting (class/dl `push_dl_tasks`), a job that
/// an earlier deadline preempted waited until some CPU pulled it, and 6,459
/// completed.
#[test]
fn global_edf_matches_simso_on_64_cpus() {
    let tasks: Vec<String> = (1..=500u64)
        .map(|i| {
            let (c, t) = ((20 + 2 * (i % 17)) * 1000, (200 + i) * 1000);
            format!(
                r#""t{i}": {{"policy": "SCHED_DEADLINE", "dl-runtime": {c}, "dl-period": {t},
                    "run": {c}, "timer": {{"ref": "unique", "period": {t}}}}}"#
            )
        })
        .collect();
    let wl = format!(
        r#"{{"global": {{"duration": 5, "calibration": 100}}, "tasks": {{{}}}}}"#,
        tasks.join(", ")
    );
    let r = run(&wl, cfg("eevdf", 64));
    let sum = |f: fn(&schedlab_core::metrics::TaskMetrics) -> u64| -> u64 {
        r.metrics.tasks.iter().map(f).sum()
    };
    assert_eq!(sum(|t| t.jobs_released), 6510);
    assert_eq!(sum(|t| t.jobs_completed), 6461);
    assert_eq!(sum(|t| t.deadline_misses), 0);
}

fn dl_task(c: u64, d: u64, t: u64, instances: u32) -> String {
    format!(
        r#"{{"instance": {instances}, "policy": "SCHED_DEADLINE", "dl-runtime": {c}, "dl-period": {t},
            "dl-deadline": {d}, "run": {c}, "timer": {{"ref": "unique", "period": {t}}}}}"#
    )
}

fn run_policy(
    tasks: &str,
    cpus: usize,
    policy: &str,
    set: &[(&str, i64)],
) -> schedlab_core::metrics::RunResult {
    let wl =
        format!(r#"{{"global": {{"duration": 2, "calibration": 100}}, "tasks": {{{tasks}}}}}"#);
    let mut c = cfg("eevdf", cpus);
    c.hz = 1000;
    c.dl_policy = policy.into();
    c.set = set.iter().map(|(k, v)| (k.to_string(), *v)).collect();
    run(&wl, c)
}

fn misses(r: &schedlab_core::metrics::RunResult) -> u64 {
    r.metrics.tasks.iter().map(|t| t.deadline_misses).sum()
}

/// Seed 001 §2.3: on the Dhall task set LLF and ILLF run the zero-laxity
/// heavy job at once and meet every deadline; EDF misses.
#[test]
fn llf_and_illf_avoid_the_dhall_effect() {
    let tasks = format!(
        r#""heavy": {}, "light": {}"#,
        dl_task(100_000, 100_000, 100_000, 1),
        dl_task(1000, 99_000, 99_000, 4)
    );
    assert!(misses(&run_policy(&tasks, 4, "edf", &[])) >= 1);
    assert_eq!(misses(&run_policy(&tasks, 4, "llf", &[])), 0);
    assert_eq!(misses(&run_policy(&tasks, 4, "illf", &[])), 0);
}

/// Seed 001's E2 example on one CPU: T1 = T2 = (0.05P, 0.5P, 0.5P),
/// T3 = (0.6P, P, P), P = 100 ms. In laxity order T3 (laxity 0.4P) runs
/// first; T1 and T2 (0.45P) then reach zero laxity together while T3 runs,
/// and with switches restricted (rules 1-3 only) one of them misses. The
/// swap rule runs the small jobs first and every deadline is met, with
/// fewer switches than plain LLF.
#[test]
fn illf_swap_rule_meets_the_e2_example() {
    let tasks = format!(
        r#""small": {}, "big": {}"#,
        dl_task(5000, 50_000, 50_000, 2),
        dl_task(60_000, 100_000, 100_000, 1)
    );
    let illf = run_policy(&tasks, 1, "illf", &[]);
    assert_eq!(misses(&illf), 0);
    let no_swap = run_policy(&tasks, 1, "illf", &[("illf_swap_rule", 0)]);
    assert!(misses(&no_swap) >= 1, "{}", misses(&no_swap));
    let llf = run_policy(&tasks, 1, "llf", &[]);
    assert_eq!(misses(&llf), 0);
    assert!(
        illf.metrics.context_switches < llf.metrics.context_switches,
        "illf {} llf {}",
        illf.metrics.context_switches,
        llf.metrics.context_switches
    );
}

/// LLF switches far more often than EDF and ILLF when laxities are equal
/// (seed 001 case 2), since a running job's laxity stays while the waiting
/// ones' shrink.
#[test]
fn llf_thrashes_on_equal_laxity() {
    let tasks: Vec<String> = (1..=16)
        .map(|i| {
            format!(
                r#""t{i}": {}"#,
                dl_task(5000 * i, 5000 * i + 230_000, 5000 * i + 230_000, 1)
            )
        })
        .collect();
    let tasks = tasks.join(", ");
    let cs = |p| run_policy(&tasks, 4, p, &[]).metrics.context_switches;
    let (edf, llf, illf) = (cs("edf"), cs("llf"), cs("illf"));
    assert!(llf > 3 * edf, "edf {edf} llf {llf}");
    assert!(illf < llf / 3, "illf {illf} llf {llf}");
}

/// Pushed jobs spread over the CPUs without DEADLINE work
/// (`cpumask_any_and_distribute` in find_later_rq, deadline.c v6.18): 20
/// tasks of 65 % bandwidth on 16 CPUs keep every CPU about equally busy.
/// Taking the lowest free CPU, as before 2026-11-27, stacked them on the low
/// CPUs (busy 85 % on CPU 0 against 53 % on the least busy).
/// 20 DEADLINE tasks of 65 % bandwidth, periods 10..29 ms, each using 80 %
/// of its budget, for 2 s (`examples/fidelity/dl16.json` without its hogs).
fn dl_set_16() -> String {
    let tasks: Vec<String> = (0..20u64)
        .map(|i| {
            let period = (10 + i) * 1000;
            let runtime = period * 65 / 100;
            format!(
                r#""dl{i}": {{"policy": "SCHED_DEADLINE", "dl-runtime": {runtime}, "dl-period": {period},
                    "run": {}, "timer": {{"ref": "unique", "period": {period}}}}}"#,
                runtime * 8 / 10
            )
        })
        .collect();
    format!(
        r#"{{"global": {{"duration": 2}}, "tasks": {{{}}}}}"#,
        tasks.join(",")
    )
}

#[test]
fn pushed_deadline_jobs_spread_over_free_cpus() {
    let r = run(&dl_set_16(), cfg("eevdf", 16));
    let util: Vec<f64> = r.metrics.cpu.iter().map(|c| c.utilisation).collect();
    let (lo, hi) = util
        .iter()
        .fold((f64::MAX, 0f64), |(l, h), u| (l.min(*u), h.max(*u)));
    assert!(hi - lo < 0.15, "per-CPU busy {lo:.3}..{hi:.3}: {util:?}");
}

/// A periodic DEADLINE task wakes where it slept and is pushed from there
/// (select_task_rq_dl compares the old, passed deadline, so it stays;
/// task_woken_dl pushes: deadline.c v6.18). The live kernel moved none of
/// `dl32`'s tasks at their wakeup on 16 CPUs (5,009 pushes in 4 s); selecting
/// with the renewed deadline, as before 2026-11-27, moved 1,260 there.
#[test]
fn deadline_wakeups_stay_and_are_pushed() {
    use schedlab_core::trace::TraceEvent;
    let mut c = cfg("eevdf", 16);
    c.trace = true;
    let r = run(&dl_set_16(), c);
    let trace = r.trace.as_ref().expect("traced");
    let (mut waking, mut at_wakeup, mut moves) = (std::collections::BTreeSet::new(), 0, 0);
    for rec in trace.records.iter() {
        match rec.ev {
            TraceEvent::Waking { task, .. } => {
                waking.insert(task);
            }
            TraceEvent::Wakeup { task } | TraceEvent::WakeupNew { task } => {
                waking.remove(&task);
            }
            TraceEvent::Migrate { task, .. } => {
                moves += 1;
                if waking.contains(&task) {
                    at_wakeup += 1;
                }
            }
            _ => {}
        }
    }
    assert!(moves > 100, "{moves} migrations");
    assert_eq!(
        at_wakeup, 0,
        "{at_wakeup} of {moves} migrations at a wakeup"
    );
}

/// `examples/fidelity/dl2.json`: three periodic DEADLINE tasks (10, 15 and
/// 20 ms) beside two fair hogs, for 2 CPUs.
const DL2: &str = r#"{"global": {"duration": 3}, "tasks": {
    "dl1": {"policy": "SCHED_DEADLINE", "dl-runtime": 2000, "dl-period": 10000,
            "run": 1500, "timer": {"ref": "unique", "period": 10000}},
    "dl2": {"policy": "SCHED_DEADLINE", "dl-runtime": 3000, "dl-period": 15000,
            "run": 2500, "timer": {"ref": "unique", "period": 15000}},
    "dl3": {"policy": "SCHED_DEADLINE", "dl-runtime": 4000, "dl-period": 20000,
            "run": 3500, "timer": {"ref": "unique", "period": 20000}},
    "hog": {"instance": 2, "run": 3000000}}}"#;

/// `task_woken_dl` pushes a woken job at once only when the CPU runs a
/// DEADLINE task the job cannot preempt (deadline.c v6.18). Three periodic
/// DEADLINE tasks beside two fair hogs on 2 CPUs
/// (`examples/fidelity/dl2.json`): every 20 ms `dl3` and `dl1` wake
/// together on the CPU running a hog. The kernel lets `dl1` (earlier
/// deadline) run there and pushes `dl3` after that pick, so `dl3` is never
/// preempted (the 2-vCPU host: 0-1 involuntary switches in 3 s, p90 wakeup
/// latency 1.5 ms, `experiments/host-runs/2cpu-2026-11-27c/dl2`). Before
/// 2026-11-27 every activation pushed: `dl3` went to the other CPU ahead
/// of the wakeup path's costs and was preempted there 49 times.
#[test]
fn a_woken_job_is_pushed_at_once_only_from_a_cpu_running_a_deadline_task() {
    let text = DL2;
    let mut c = cfg("eevdf", 2);
    c.zero_costs = false;
    let r = run(text, c);
    let dl3 = task(&r, "dl3");
    assert!(dl3.nivcsw <= 2, "dl3 was preempted {} times", dl3.nivcsw);
    assert_eq!(dl3.deadline_misses, 0);
}

/// A push's reschedule of its target CPU is remote (`push_dl_task` ends in
/// `resched_curr(later_rq)`, an IPI from the pushing CPU): the pushed job
/// starts there only after the wakeup path's costs of a remote wakeup.
/// In `examples/fidelity/dl2.json`, `dl1` and `dl3` wake together every
/// 20 ms; when that is on the CPU running a hog, `dl1` runs there and `dl3`
/// is pushed to the other CPU, also running a hog. With the spread off,
/// each push's switch comes `wakeup_ns` + `ipi_ns` after it (10 µs, the
/// target busy: no idle exit); before 2026-11-27 it came at once, and
/// `dl3`'s p50 latency on the 2-vCPU host (`dl2`) was 22 µs against our 9.
#[test]
fn a_pushed_job_waits_for_the_resched_ipi() {
    let text = DL2;
    let mut c = cfg("eevdf", 2);
    c.zero_costs = false;
    c.trace = true;
    c.set.push(("wakeup_spread_pct".into(), 0));
    let r = run(text, c);
    let t = r.trace.as_ref().expect("trace");
    // Pushes from the first period on (at the start every CPU is idle),
    // read as `schedlab trace paths` reads them (trace/paths.rs).
    let pushes: Vec<(u64, u64)> = t
        .wakeup_paths(|i| t.tasks[i].comm == "dl3")
        .into_iter()
        .filter(|w| w.path == WakePath::Pushed)
        .filter_map(|w| w.moved.map(|moved| (moved, w.run)))
        .filter(|(moved, _)| *moved >= 10_000_000)
        .collect();
    for (moved, ran) in &pushes {
        assert_eq!(ran - moved, 10_000, "pushed at {moved} ns, ran at {ran} ns");
    }
    assert!(pushes.len() >= 10, "{} pushes of dl3", pushes.len());
}
