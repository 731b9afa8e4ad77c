//! Project C's BMQ and PDS (policy/projc.rs, bmq.rs, pds.rs): every
//! expectation is derived from the rules of shootout.md §2 (v6.0-r0) and
//! alt-schedulers.md §3 (v6.12-r1), not from the simulator's output.

mod common;
use common::{cfg, run, task};
use schedlab_core::config::SimConfig;
use schedlab_core::engine::Simulator;
use schedlab_core::metrics::RunResult;
use schedlab_core::task::TaskId;
use schedlab_core::trace::TraceEvent;
use schedlab_core::workload::Workload;

/// 4 << 20 ns, the Project C slice.
const SLICE: u64 = 4 << 20;
/// RESCHED_NS.
const RESCHED: u64 = 100 << 10;

fn config(sched: &str, cpus: usize, hz: u32) -> SimConfig {
    SimConfig {
        hz,
        trace: true,
        ..cfg(sched, cpus)
    }
}

/// A per-task debug value of the Project C class.
fn debug(sim: &Simulator, t: TaskId, key: &str) -> i64 {
    sim.classes
        .get_ref(0)
        .task_debug(t)
        .into_iter()
        .find(|(k, _)| *k == key)
        .map(|(_, v)| v)
        .unwrap_or_else(|| panic!("no {key}"))
}

fn sim(text: &str, c: SimConfig) -> Simulator {
    Simulator::new(Workload::from_rtapp("test", text).expect("parses"), c).expect("builds")
}

/// Times (ns) at which `name` is switched in.
fn switch_ins(r: &RunResult, name: &str) -> Vec<u64> {
    let tr = r.trace.as_ref().expect("trace");
    let id = tr
        .tasks
        .iter()
        .position(|t| t.comm == name)
        .expect("task in trace");
    tr.records
        .iter()
        .filter_map(|rec| match rec.ev {
            TraceEvent::Switch { next: Some(n), .. } if n == id => Some(rec.ts),
            _ => None,
        })
        .collect()
}

fn cpu_ns(r: &RunResult, name: &str) -> i64 {
    (task(r, name).cpu_time_us * 1000.0).round() as i64
}

// --- BMQ boost and deboost ---------------------------------------------------

/// v6.0 boost on block: a task that blocks `r` ns after being switched in
/// is boosted while r < slice >> (8 − boost), i.e. r < 2^(14 + boost). From
/// the fork value +7 it therefore settles at the smallest b with
/// 2^(14 + b) <= r, minus one: r = 5 µs (2^12.3) → b = −2; r = 20 µs → 0.
/// Then, as a hog, each full slice deboosts by exactly one, up to +7.
#[test]
fn bmq_boost_threshold_then_deboost_per_slice() {
    for (run_us, settled) in [(5, -2i64), (20, 0)] {
        let wl = format!(
            r#"{{"global": {{"duration": 1}}, "tasks": {{"t": {{"loop": 1, "phases": {{
                "short": {{"loop": 20, "run": {run_us}, "sleep": 1000}},
                "hog": {{"loop": 1, "run": 500000}}}}}}}}}}"#
        );
        let mut s = sim(&wl, config("bmq", 1, 100));
        // 20 × (run + 1 ms sleep), the last sleep included.
        let t1 = 20 * (run_us * 1000 + 1_000_000);
        s.run_until(t1 - 1).expect("runs");
        assert_eq!(debug(&s, 0, "boost_prio"), settled, "run {run_us} µs");
        // The hog phase starts at t1 with the slice the short runs left.
        let left = SLICE - 20 * run_us * 1000;
        for k in 0..10u64 {
            s.run_until(t1 + left + k * SLICE + SLICE / 2)
                .expect("runs");
            let expect = (settled + k as i64 + 1).min(7);
            assert_eq!(debug(&s, 0, "boost_prio"), expect, "slice {k}");
        }
    }
}

/// v6.0: a wakeup after more than one slice (4.19 ms) asleep boosts once;
/// v6.12-r1 computes that boost as 0. Two tasks run 2.5 ms per activation
/// (more than the largest v6.0 block threshold, 2.1 ms, so blocking never
/// boosts in v6.0) and sleep 10 ms or 1 ms, each alone on its CPU. In
/// v6.0 the 1 ms sleeper stays at +7 while the 10 ms sleeper sinks to the
/// floor (−7, at most one deboost above it); in v6.12 both follow the same
/// rules (−1 per block, +1 per expiry) and end with equal boosts.
#[test]
fn bmq_wakeup_boost_in_6_0_only() {
    let wl = r#"{"global": {"duration": 2}, "tasks": {
        "long": {"cpus": [0], "run": 2500, "sleep": 10000},
        "short": {"cpus": [1], "run": 2500, "sleep": 1000}}}"#;
    let mut s = sim(wl, config("bmq", 2, 250));
    s.run_until(1_900_000_000).expect("runs");
    assert_eq!(debug(&s, 1, "boost_prio"), 7);
    assert!(
        debug(&s, 0, "boost_prio") <= -6,
        "{}",
        debug(&s, 0, "boost_prio")
    );
    let mut s = sim(wl, config("bmq-6.12", 2, 250));
    s.run_until(1_900_000_000).expect("runs");
    assert_eq!(debug(&s, 0, "boost_prio"), debug(&s, 1, "boost_prio"));
}

/// BMQ levels are strict priority. Hogs deboost to +ADJ and stay there, so
/// a hog's level depends on nice alone: v6.0 50 + (127 + n + 7) / 2 gives
/// nice −1 → 116, 0 → 117, +1 → 117; v6.12 32 + (32 + n + 12) / 2 gives
/// 53, 54, 54. So nice −1 starves nice +1 completely once both are at
/// +ADJ (from the start in v6.0, where forks start at +7; in v6.12 they
/// start at 0 and the levels cross while they deboost, so nice +1 gets
/// CPU only in that transient: as much in 2 s as in 1 s), while nice 0
/// and +1 share one level and alternate whole slices.
#[test]
fn bmq_nice_is_strict_priority_by_half_levels() {
    for sched in ["bmq", "bmq-6.12"] {
        let two = |a: i32, b: i32, secs: u32| {
            format!(
                r#"{{"global": {{"duration": {secs}}}, "tasks": {{
                "a": {{"priority": {a}, "run": 10000000}},
                "b": {{"priority": {b}, "run": 10000000}}}}}}"#
            )
        };
        let r = run(&two(-1, 1, 2), config(sched, 1, 250));
        let transient = cpu_ns(&run(&two(-1, 1, 1), config(sched, 1, 250)), "b");
        assert_eq!(cpu_ns(&r, "b"), transient, "{sched}: nice +1 starves");
        if sched == "bmq" {
            assert_eq!(transient, 0);
        }
        let r = run(&two(0, 1, 2), config(sched, 1, 250));
        let (a, b) = (cpu_ns(&r, "a"), cpu_ns(&r, "b"));
        assert!((a - b).abs() <= SLICE as i64, "{sched}: {a} vs {b}");
    }
}

// --- PDS deadlines -----------------------------------------------------------

/// PDS v6.0: deadline = edge + nice + 20 at fork and slice expiry, level
/// 128 + deadline − edge + 24. Beside a nice-0 hog (renewed to level 44
/// at every edge: its slices end exactly on edges, 4 << 20 = 1 << 22), a
/// fresh nice-19 task (deadline 39) first runs when its level reaches 44,
/// at edge 19, ahead of the hog that is requeued behind it: at exactly
/// 19 << 22 ns. Its deadline is kept across sleep, so after 20 ms asleep
/// it is far in the past and every wakeup preempts the hog at once.
#[test]
fn pds_deadline_kept_across_sleep_preempts_hog() {
    let wl = r#"{"global": {"duration": 1}, "tasks": {
        "hog": {"run": 10000000},
        "late": {"priority": 19, "run": 100, "sleep": 20000}}}"#;
    // 0.5 s: before its own slice expires (42 runs of 100 µs) and renews
    // its deadline.
    let c = SimConfig {
        duration: Some(500_000_000),
        ..config("pds", 1, 1)
    };
    let r = run(wl, c);
    let ins = switch_ins(&r, "late");
    assert_eq!(ins.first().copied(), Some(19 << 22));
    let late = task(&r, "late");
    assert!(late.wakeups > 10);
    // p90, not max: the start release waits for edge 19 (above).
    assert_eq!(late.wakeup_latency_p90_us, 0.0);
}

/// Two hogs on one CPU under PDS v6.0 with offsets o_a < o_b (nice + 20):
/// whoever runs a slice gets deadline (edge at its expiry) + o, and ties
/// go to the task queued first in the slot, so B runs one slice each time
/// A's deadline catches up with B's: A runs o_b − o_a slices per B slice.
/// nice 0 vs 2 → 2:1, 0 vs 5 → 5:1, and 0 vs 1 → 1:1.
#[test]
fn pds_nice_shares_from_deadline_offsets() {
    for (nice_b, ratio) in [(1i64, 1i64), (2, 2), (5, 5)] {
        let wl = format!(
            r#"{{"global": {{"duration": 10}}, "tasks": {{
            "a": {{"run": 100000000}},
            "b": {{"priority": {nice_b}, "run": 100000000}}}}}}"#
        );
        let r = run(&wl, config("pds", 1, 1));
        let (a, b) = (cpu_ns(&r, "a"), cpu_ns(&r, "b"));
        let total = a + b;
        let b_expect = total / (ratio + 1);
        assert!(
            (b - b_expect).abs() <= 2 * SLICE as i64,
            "nice 0 vs {nice_b}: a {a} b {b}, expected b {b_expect}"
        );
    }
}

// --- Framework ---------------------------------------------------------------

/// SCHED_RR round-robins at the Project C slice, 4 << 20 ns (mainline:
/// 100 ms), within RESCHED_NS when a tick ends a slice early.
#[test]
fn rr_round_robin_at_project_c_slice() {
    for sched in ["bmq", "pds", "bmq-6.12", "pds-6.12"] {
        let wl = r#"{"global": {"duration": 1}, "tasks": {
            "r1": {"policy": "SCHED_RR", "priority": 10, "run": 1000000},
            "r2": {"policy": "SCHED_RR", "priority": 10, "run": 1000000}}}"#;
        let r = run(wl, config(sched, 1, 250));
        let mut ins: Vec<u64> = switch_ins(&r, "r1");
        ins.extend(switch_ins(&r, "r2"));
        ins.sort_unstable();
        assert!(ins.len() > 40, "{sched}: {}", ins.len());
        for w in ins.windows(2) {
            let d = w[1] - w[0];
            assert!(
                (SLICE - RESCHED..=SLICE).contains(&d),
                "{sched}: turn of {d} ns"
            );
        }
    }
}

/// RT levels come before every normal level and there is no RT
/// throttling: a FIFO hog leaves nothing to a nice −20 task. SCHED_DEADLINE
/// is FIFO 99 (no CBS: a 1 ms / 10 ms budget does not stop it), with a
/// warning naming the squash. In v6.0 (one level per RT priority) it is
/// above a FIFO 98 hog; in v6.12 RT levels are prio >> 2, so FIFO 98
/// (prio 1) and 99 (prio 0) share level 0 and the FIFO 98 hog, queued
/// first and never requeued, keeps the CPU.
#[test]
fn fifo_and_squashed_deadline_above_everything() {
    for sched in ["bmq", "pds", "bmq-6.12", "pds-6.12"] {
        let wl = r#"{"global": {"duration": 2}, "tasks": {
            "fifo": {"policy": "SCHED_FIFO", "priority": 1, "run": 10000000},
            "normal": {"priority": -20, "run": 10000000}}}"#;
        let r = run(wl, config(sched, 1, 250));
        assert_eq!(cpu_ns(&r, "normal"), 0, "{sched}");
        let wl = r#"{"global": {"duration": 1}, "tasks": {
            "f98": {"policy": "SCHED_FIFO", "priority": 98, "run": 10000000},
            "dl": {"policy": "SCHED_DEADLINE", "dl-runtime": 1000, "dl-period": 10000, "run": 10000000}}}"#;
        let r = run(wl, config(sched, 1, 250));
        let starved = if sched.ends_with("6.12") { "dl" } else { "f98" };
        assert_eq!(cpu_ns(&r, starved), 0, "{sched}");
        assert!(
            r.metrics
                .warnings
                .iter()
                .any(|w| w.contains("SCHED_DEADLINE") && w.contains("SCHED_FIFO priority 99")),
            "{sched}: {:?}",
            r.metrics.warnings
        );
    }
}

/// Fork halves the parent's remaining slice and gives the half to the
/// child (same level, queued behind the parent): the parent, forking at
/// t = 0 with a full slice, runs 2^21 ns, the child 2^21 ns, then the
/// parent a refilled 2^22.
#[test]
fn fork_halves_the_slice() {
    for sched in ["bmq", "pds"] {
        let wl = r#"{"global": {"duration": 1}, "tasks": {
            "parent": {"fork": "child", "run": 1000000},
            "child": {"instance": 0, "run": 1000000}}}"#;
        let r = run(wl, config(sched, 1, 100));
        let p = switch_ins(&r, "parent");
        let c = switch_ins(&r, "child-0");
        assert_eq!(p.first().copied(), Some(0), "{sched}");
        assert_eq!(c.first().copied(), Some(SLICE / 2), "{sched}");
        assert_eq!(p.get(1).copied(), Some(SLICE), "{sched}");
    }
}

/// No periodic balancing: four hogs created at once on two CPUs go to the
/// idle CPUs first and then, with no CPU at a worse level, to the forking
/// CPU 0 (`best_mask_cpu(task_cpu)`): three share CPU 0, one owns CPU 1,
/// for the whole run, with no migration.
#[test]
fn busy_imbalance_persists() {
    for sched in ["bmq", "pds", "bmq-6.12", "pds-6.12"] {
        let r = run(&common::hogs(4, 3), config(sched, 2, 250));
        let shares: Vec<i64> = (0..4).map(|i| cpu_ns(&r, &format!("hog-{i}"))).collect();
        let third = 1_000_000_000i64;
        let expect = [third, 3 * third, third, third];
        for (s, e) in shares.iter().zip(expect) {
            assert!((s - e).abs() <= 2 * SLICE as i64, "{sched}: {shares:?}");
        }
        assert_eq!(r.metrics.balance_migrations, 0, "{sched}");
    }
}

/// Pull on idle: three hogs share CPU 0 while a task pinned to CPU 1 runs
/// 50 ms and exits; CPU 1, about to idle, pulls min(3 / 2, 32) = 1 task
/// (the one after CPU 0's current). Then 2 + 1 for the rest of the run:
/// the pulled hog gets 50/3 ms + (T − 50) ms, the others 50/3 + (T − 50)/2.
#[test]
fn idle_cpu_pulls_one_pending_task() {
    for sched in ["bmq", "pds", "bmq-6.12", "pds-6.12"] {
        let wl = r#"{"global": {"duration": 2}, "tasks": {
            "pinned": {"cpus": [1], "loop": 1, "run": 50000},
            "hog": {"instance": 3, "run": 100000000}}}"#;
        let r = run(wl, config(sched, 2, 250));
        assert_eq!(r.metrics.balance_migrations, 1, "{sched}");
        let mut shares: Vec<i64> = (0..3).map(|i| cpu_ns(&r, &format!("hog-{i}"))).collect();
        shares.sort_unstable();
        let first = 50_000_000 / 3;
        let rest = 1_950_000_000i64;
        let expect = [first + rest / 2, first + rest / 2, first + rest];
        for (s, e) in shares.iter().zip(expect) {
            assert!((s - e).abs() <= 2 * SLICE as i64, "{sched}: {shares:?}");
        }
    }
}

/// What Project C does not have is named: cgroup weights are ignored with
/// a warning, SCHED_EXT is refused (`__sched_setscheduler`: EINVAL), and
/// fair-class policies and DEADLINE orderings do not apply.
#[test]
fn unsupported_features_are_named() {
    let wl = r#"{"global": {"duration": 1, "taskgroups": {"/a": {"shares": 100}}},
        "tasks": {"t": {"taskgroup": "/a", "run": 1000}}}"#;
    let r = run(wl, config("pds", 1, 250));
    assert!(
        r.metrics.warnings.iter().any(|w| w.contains("cgroup")),
        "{:?}",
        r.metrics.warnings
    );
    let wl = r#"{"global": {"duration": 1}, "tasks": {"t": {"policy": "SCHED_EXT", "run": 1000}}}"#;
    let err = match schedlab_core::simulate("t", wl, config("bmq", 1, 250)) {
        Ok(_) => panic!("SCHED_EXT should be refused"),
        Err(e) => e.to_string(),
    };
    assert!(err.contains("SCHED_EXT") && err.contains("bmq"), "{err}");
    let mut c = config("bmq+tsf", 1, 250);
    assert!(schedlab_core::simulate("t", &common::hogs(1, 1), c.clone()).is_err());
    c.scheduler = "pds".into();
    c.dl_policy = "llf".into();
    assert!(schedlab_core::simulate("t", &common::hogs(1, 1), c).is_err());
}

/// Every example workload and fuzz seed either runs under each Project C
/// scheduler, with the class invariants holding every 10 ms, or is refused
/// with an error that names the problem.
#[test]
fn example_workloads_run_or_are_refused() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let mut files = vec![];
    for dir in ["examples", "examples/policies", "fuzz/seeds/workload"] {
        let Ok(rd) = std::fs::read_dir(format!("{root}/{dir}")) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            let name = p.file_name().map(|n| n.to_string_lossy().to_string());
            if p.extension().is_some_and(|x| x == "json")
                && !name.is_some_and(|n| n.starts_with("bad-"))
            {
                files.push(p);
            }
        }
    }
    files.sort();
    assert!(!files.is_empty());
    for f in files {
        let text = std::fs::read_to_string(&f).expect("readable");
        let Ok(wl) = Workload::from_rtapp("f", &text) else {
            continue;
        };
        for sched in ["bmq", "pds", "bmq-6.12", "pds-6.12"] {
            let c = SimConfig {
                duration: Some(300_000_000),
                ..cfg(sched, 2)
            };
            match Simulator::new(wl.clone(), c) {
                Ok(mut s) => {
                    let mut t = 0;
                    loop {
                        t += 10_000_000;
                        match s.run_until(t) {
                            Ok(done) => {
                                assert_eq!(s.check_invariants(), Ok(()), "{f:?} {sched}");
                                if done {
                                    break;
                                }
                            }
                            Err(e) => {
                                assert!(!e.to_string().is_empty());
                                break;
                            }
                        }
                    }
                }
                Err(e) => assert!(!e.to_string().is_empty(), "{f:?}"),
            }
        }
    }
}

/// Yield (`kernel.yield_type`). A task that runs 100 µs and yields, beside
/// a nice-0 hog on one CPU. BMQ type 1 only sets boost to +7 (already its
/// fork value) without requeueing, so the yielder keeps the CPU for whole
/// slices: half each. PDS v6.0 type 1 is `time_slice_expired`: a new
/// deadline (never earlier than the hog's) and the tail of the queue, so
/// the yielder runs 100 µs per hog slice: 100 / (4194.304 + 100) of the
/// CPU. Type 0 does nothing (half each); type 2 skips the yielder at the
/// next pick, which under BMQ also gives 100 µs per hog slice.
#[test]
fn yield_types() {
    let wl = r#"{"global": {"duration": 4}, "tasks": {
        "y": {"run": 100, "yield": ""},
        "hog": {"run": 100000000}}}"#;
    let per_slice = 100_000.0 / (SLICE as f64 + 100_000.0);
    for (sched, ty, share) in [
        ("bmq", 1, 0.5),
        ("bmq", 0, 0.5),
        ("bmq", 2, per_slice),
        ("pds", 1, per_slice),
        ("pds", 0, 0.5),
    ] {
        let mut c = config(sched, 1, 250);
        c.set = vec![("yield_type".into(), ty)];
        let r = run(wl, c);
        let got = task(&r, "y").cpu_share;
        let tol = if share < 0.1 { 0.003 } else { 0.01 };
        assert!(
            (got - share).abs() < tol,
            "{sched} yield_type {ty}: {got} vs {share}"
        );
    }
}

/// Wakeup placement with SMT (§2.6 rule 1): a fully idle core comes before
/// an idle sibling. On two 2-thread cores, the second hog created on CPU 0
/// goes to CPU 2 (core 1), not to CPU 0's idle sibling 1; the third, with
/// no idle core left, to the idle sibling 1, the fourth to 3.
#[test]
fn smt_prefers_fully_idle_cores() {
    let mut c = config("bmq", 4, 250);
    c.smt = 2;
    let r = run(&common::hogs(4, 1), c);
    let tr = r.trace.as_ref().expect("trace");
    let cpu_of = |name: &str| {
        let id = tr.tasks.iter().position(|t| t.comm == name).expect("task");
        tr.records
            .iter()
            .find_map(|rec| match rec.ev {
                TraceEvent::Switch { next: Some(n), .. } if n == id => Some(rec.cpu),
                _ => None,
            })
            .expect("runs")
    };
    let cpus: Vec<usize> = (0..4).map(|i| cpu_of(&format!("hog-{i}"))).collect();
    assert_eq!(cpus, vec![0, 2, 1, 3]);
}

/// `sg_balance` (§2.6 b): when core 1 goes idle while both threads of core
/// 0 run one task each, the lone task of CPU 0 (the first such CPU after
/// the idling one, wrapping) is pushed to the lowest idle CPU of core 1.
#[test]
fn sg_balance_spreads_a_full_core() {
    let wl = r#"{"global": {"duration": 1}, "tasks": {
        "a": {"run": 100000000},
        "s1": {"loop": 1, "run": 50000},
        "b": {"run": 100000000},
        "s2": {"loop": 1, "run": 50000}}}"#;
    let mut c = config("pds", 4, 250);
    c.smt = 2;
    // Full speed on busy cores (engine/smt.rs), so s1 and s2 end at 50 ms.
    c.set.push(("smt_speed_pct".into(), 100));
    let r = run(wl, c);
    assert_eq!(task(&r, "a").migrations, 1);
    assert_eq!(task(&r, "b").migrations, 0);
    let tr = r.trace.as_ref().expect("trace");
    let a = tr.tasks.iter().position(|t| t.comm == "a").expect("a");
    let last = tr
        .records
        .iter()
        .filter_map(|rec| match rec.ev {
            TraceEvent::Switch { next: Some(n), .. } if n == a => Some((rec.ts, rec.cpu)),
            _ => None,
        })
        .next_back()
        .expect("a runs");
    assert_eq!(last, (50_000_000, 2));
}
