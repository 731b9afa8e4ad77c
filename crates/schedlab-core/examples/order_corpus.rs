//! `cargo run --release --example order_corpus -- DIR`: run a fixed corpus
//! of CacULE and TT configurations and write each run's metrics JSON and
//! ftrace text to DIR (`NAME.json`, `NAME.trace`). Comparing two such
//! directories byte for byte (`diff -r`, `sha256sum`) checks that a change
//! to the queue-ordering policies (class/fair/order.rs, policy/cacule.rs,
//! policy/tt.rs) leaves every simulated decision unchanged: build it at
//! the commit before the change and after, run both into two directories
//! and `diff -r` them (25 runs: CacULE and TT on 1–8 CPUs, SMT 2, mixed.json,
//! sleepers, yields, SCHED_IDLE/BATCH, cgroups and autogroup, the CFS
//! balancer, other factors and lifetimes; about 0.4 s in release).
use schedlab_core::config::SimConfig;

const MIXED: &str = include_str!("../../../examples/mixed.json");

/// Hogs with nice -20..19 (cyclic), as python/schedlab/bench.py.
fn hogs(n: usize, seconds: u64) -> String {
    let tasks: Vec<String> = (0..n)
        .map(|i| {
            format!(
                r#""hog{i}": {{"priority": {}, "run": 1000000}}"#,
                (i % 40) as i64 - 20
            )
        })
        .collect();
    format!(
        r#"{{"global": {{"duration": {seconds}}}, "tasks": {{{}}}}}"#,
        tasks.join(", ")
    )
}

/// Sleepers of several periods, hogs, a yielder, a SCHED_IDLE and a
/// SCHED_BATCH task, in two cgroups.
const SLEEPERS: &str = r#"{"global": {"duration": 3}, "tasks": {
    "hog": {"instance": 3, "taskgroup": "/a", "run": 100000},
    "nhog": {"instance": 2, "priority": 7, "taskgroup": "/b", "run": 50000},
    "s1": {"instance": 3, "run": 1000, "sleep": 9000},
    "s2": {"instance": 2, "taskgroup": "/b", "run": 300, "sleep": 2000},
    "s3": {"priority": -5, "run": 4000, "sleep": 30000},
    "periodic": {"run": 2000, "timer": {"ref": "unique", "period": 10000}},
    "yielder": {"sleep": 20000, "run": 1000, "yield": ""},
    "idle": {"policy": "SCHED_IDLE", "run": 100000},
    "batch": {"policy": "SCHED_BATCH", "run": 20000, "sleep": 5000}}}"#;

/// Long-lived tasks crossing the lifetime renormalisation thresholds.
const LONG: &str = r#"{"global": {"duration": 30}, "tasks": {
    "hog": {"instance": 3, "run": 100000},
    "s": {"instance": 3, "run": 2000, "sleep": 8000},
    "rt_like": {"run": 1000, "timer": {"ref": "t", "period": 16000}}}}"#;

fn main() {
    let dir = std::env::args().nth(1).unwrap_or_else(|| {
        eprintln!("usage: order_corpus DIR");
        std::process::exit(2)
    });
    std::fs::create_dir_all(&dir).expect("output directory");
    let hogs200 = hogs(200, 2);
    let hogs40 = hogs(40, 3);
    type Run<'a> = (&'a str, &'a str, usize, usize, Vec<(&'a str, i64)>);
    let mut runs: Vec<(String, &str, Run)> = vec![];
    for sched in ["cacule", "tt"] {
        let mut add = |name: &str, wl: &'static str, r: Run<'static>| {
            runs.push((format!("{sched}-{name}"), wl, r));
        };
        add("mixed1", MIXED, (sched, "", 1, 1, vec![]));
        add("mixed2", MIXED, (sched, "", 2, 1, vec![]));
        add("sleepers1", SLEEPERS, (sched, "", 1, 1, vec![]));
        add("sleepers2", SLEEPERS, (sched, "", 2, 1, vec![]));
        add("sleepers4", SLEEPERS, (sched, "", 4, 1, vec![]));
        add("sleepers4smt", SLEEPERS, (sched, "", 4, 2, vec![]));
        add("long2", LONG, (sched, "", 2, 1, vec![]));
    }
    let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
    let (h200, h40) = (leak(hogs200), leak(hogs40));
    let extra: Vec<(&str, &'static str, Run)> = vec![
        ("cacule-hogs200x8", h200, ("cacule", "", 8, 1, vec![])),
        ("tt-hogs200x8", h200, ("tt", "", 8, 1, vec![])),
        ("cacule-hogs40x4", h40, ("cacule", "", 4, 1, vec![])),
        ("tt-hogs40x4", h40, ("tt", "", 4, 1, vec![])),
        (
            "cacule-hogs40x4-cfslb",
            h40,
            ("cacule", "", 4, 1, vec![("cacule_rdb", 0)]),
        ),
        (
            "cacule-sleepers4-cfslb",
            SLEEPERS,
            (
                "cacule",
                "",
                4,
                1,
                vec![("cacule_rdb", 0), ("autogroup", 0)],
            ),
        ),
        (
            "cacule-sleepers2-noag-noyield",
            SLEEPERS,
            (
                "cacule",
                "",
                2,
                1,
                vec![("autogroup", 0), ("cacule_yield", 0)],
            ),
        ),
        (
            "cacule-sleepers8smt-factors",
            SLEEPERS,
            (
                "cacule",
                "",
                8,
                2,
                vec![
                    ("cacule_cache_factor", 0),
                    ("cacule_starve_divisor_ns", 1_500_000),
                    ("cacule_max_lifetime_ms", 500),
                ],
            ),
        ),
        (
            "cacule-long2-shortlife",
            LONG,
            (
                "cacule",
                "",
                2,
                1,
                vec![
                    ("cacule_max_lifetime_ms", 2000),
                    ("cacule_starve_factor", 0),
                ],
            ),
        ),
        (
            "tt-long2-shortlife",
            LONG,
            ("tt", "", 2, 1, vec![("tt_max_lifetime_ms", 3000)]),
        ),
        (
            "tt-sleepers8smt-prios",
            SLEEPERS,
            (
                "tt",
                "",
                8,
                2,
                vec![("tt_batch_prio", 0), ("tt_cpu_bound_prio", 5)],
            ),
        ),
    ];
    for (n, wl, r) in extra {
        runs.push((n.to_string(), wl, r));
    }
    for (name, wl, (sched, _, cpus, smt, set)) in runs {
        let cfg = SimConfig {
            scheduler: sched.into(),
            cpus,
            smt,
            trace: true,
            set: set.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
            ..SimConfig::default()
        };
        let r = schedlab_core::simulate(&name, wl, cfg).unwrap_or_else(|e| panic!("{name}: {e}"));
        let trace = r.trace.as_ref().map(schedlab_core::trace::ftrace::render);
        let json = serde_json::to_string_pretty(&r.metrics).expect("metrics JSON");
        std::fs::write(format!("{dir}/{name}.json"), json).expect("write");
        std::fs::write(format!("{dir}/{name}.trace"), trace.unwrap_or_default()).expect("write");
        println!("{name}: {} events", r.metrics.events);
    }
}
