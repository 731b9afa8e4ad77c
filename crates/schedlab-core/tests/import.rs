//! `trace import` (trace/import.rs): round trip through our own ftrace
//! text, strict and tolerant handling of broken traces, a real tracefs
//! capture, and replay in the simulator.

mod common;
use common::{cfg, run};

use schedlab_core::trace::{ftrace, import};

const WL: &str = r#"{"tasks": {
    "hog": {"instance": 2, "loop": 1, "run": 300000},
    "io": {"loop": 50, "run": 1000, "sleep": 5000},
    "rt": {"loop": 20, "policy": "SCHED_FIFO", "priority": 10, "run": 500, "sleep": 9000}}}"#;

fn sim_text(kind: &str, cpus: usize) -> (schedlab_core::metrics::RunResult, String) {
    let mut c = cfg(kind, cpus);
    c.trace = true;
    let r = run(WL, c);
    let text = ftrace::render(r.trace.as_ref().expect("trace"));
    (r, text)
}

/// Importing the simulator's own ftrace text gives back its metrics.
#[test]
fn round_trip_reproduces_the_metrics() {
    for (kind, cpus) in [("eevdf", 1), ("cfs", 2)] {
        let (r, text) = sim_text(kind, cpus);
        let imp = import::import(&text, false).expect("strict import");
        assert!(imp.repairs.is_empty());
        let m = imp.metrics();
        for t in &r.metrics.tasks {
            let i = m
                .tasks
                .iter()
                .find(|x| x.pid == t.pid)
                .expect("task imported");
            assert!(
                (i.cpu_time_us - t.cpu_time_us).abs() < 1.0,
                "{kind:?} {}: {} vs {}",
                t.name,
                i.cpu_time_us,
                t.cpu_time_us
            );
            assert_eq!(
                (i.nvcsw, i.nivcsw, i.migrations),
                (t.nvcsw, t.nivcsw, t.migrations),
                "{kind:?} {}",
                t.name
            );
            assert!(
                (i.wakeup_latency_max_us - t.wakeup_latency_max_us).abs() < 1.0,
                "{kind:?} {}: {} vs {} ({} vs {} wakeups)",
                t.name,
                i.wakeup_latency_max_us,
                t.wakeup_latency_max_us,
                i.wakeups,
                t.wakeups
            );
        }
        assert_eq!(m.context_switches, r.metrics.context_switches);
    }
}

/// A missing switch is an error in strict mode, naming the line, and a
/// reported repair in tolerant mode.
#[test]
fn broken_traces_strict_and_tolerant() {
    let (_, text) = sim_text("eevdf", 1);
    let lines: Vec<&str> = text.lines().collect();
    let k = lines
        .iter()
        .position(|l| l.contains("sched_switch") && !l.contains("prev_pid=0 "))
        .expect("a switch");
    let k2 = k
        + 1
        + lines[k + 1..]
            .iter()
            .position(|l| l.contains("sched_switch"))
            .expect("another");
    let broken: String = lines
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != k)
        .map(|(_, l)| format!("{l}\n"))
        .collect();
    let e = import::import(&broken, false).expect_err("strict refuses");
    assert_eq!(e.line, k2, "{e}");
    assert!(e.reason.contains("was running there"), "{e}");
    let imp = import::import(&broken, true).expect("tolerant repairs");
    assert!(!imp.repairs.is_empty());
    // Garbage is no trace at all.
    assert!(import::import("hello\nworld\n", true).is_err());
}

/// A real capture (Linux 6.18 tracefs instance, record-tgid, two busy
/// loops and sleeps on 2 CPUs, 0 dropped events). It lacks one switch on
/// CPU 0 (tokio-rt-worker back to sh between 5973.901487 and .908092):
/// strict mode names line 41, tolerant mode repairs it; the replay runs.
#[test]
fn real_tracefs_capture_imports_and_replays() {
    let text = include_str!("../../../tests/fixtures/traces/host-6.18-two-hogs.txt");
    let e = import::import(text, false).expect_err("the gap is found");
    assert_eq!(e.line, 41, "{e}");
    let imp = import::import(text, true).expect("tolerant import of a real trace");
    assert!(
        imp.repairs.iter().any(|r| r.starts_with("line 41:")),
        "{:?}",
        imp.repairs
    );
    let m = imp.metrics();
    assert_eq!(m.cpus, 2);
    let hogs: Vec<_> = m
        .tasks
        .iter()
        .filter(|t| t.cpu_time_us > 300_000.0)
        .collect();
    assert!(
        hogs.len() >= 2,
        "two busy loops: {:?}",
        m.tasks
            .iter()
            .map(|t| (&t.name, t.cpu_time_us))
            .collect::<Vec<_>>()
    );
    assert!(m.tasks.iter().all(|t| t.tgid != 0));
    let wl = imp.replay_workload();
    let r = schedlab_core::simulate("replay.json", &wl, cfg("eevdf", 2)).expect("replay runs");
    let busy: f64 = r.metrics.tasks.iter().map(|t| t.cpu_time_us).sum();
    let traced: f64 = m.tasks.iter().map(|t| t.cpu_time_us).sum();
    assert!(
        (busy / traced - 1.0).abs() < 0.05,
        "replayed {busy} vs traced {traced}"
    );
}

mod mangled {
    use proptest::prelude::*;
    use schedlab_core::trace::import;

    const REAL: &str = include_str!("../../../tests/fixtures/traces/host-6.18-two-hogs.txt");

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Dropped, repeated, swapped and truncated lines never crash the
        /// importer: strict mode answers Ok or a line error, tolerant mode
        /// repairs or says there is nothing to import.
        #[test]
        fn mangled_traces_never_panic(ops in proptest::collection::vec((0u8..4, 0usize..400, 0usize..120), 0..12)) {
            let mut lines: Vec<String> = REAL.lines().map(String::from).collect();
            for (op, i, cut) in ops {
                if lines.is_empty() { break; }
                let i = i % lines.len();
                match op {
                    0 => { lines.remove(i); }
                    1 => { let l = lines[i].clone(); lines.insert(i, l); }
                    2 => { let j = (i + 1) % lines.len(); lines.swap(i, j); }
                    _ => {
                        let l = &lines[i];
                        let mut c = cut.min(l.len());
                        while !l.is_char_boundary(c) { c -= 1; }
                        lines[i] = l[..c].to_string();
                    }
                }
            }
            let text = lines.join("\n");
            let _ = import::import(&text, false);
            if let Ok(imp) = import::import(&text, true) {
                let m = imp.metrics();
                for t in &m.tasks {
                    prop_assert!(t.cpu_time_us >= 0.0 && t.cpu_share <= 1.0 + 1e-9, "{} {}", t.name, t.cpu_share);
                }
                let _ = imp.replay_workload();
            }
        }
    }
}

/// Linux 6.18 on a Firecracker VM drops switches out of idle: a task woken
/// on an idle CPU runs without a recorded switch-in. A record in its
/// context (its COMM-PID column) proves it runs: tolerant import switches
/// it in there and charges it from then on, instead of to idle.
#[test]
fn a_missing_switch_in_is_recovered_from_the_record_context() {
    let text = "\
     w-100   (  100) [001] d..2.   1.000000: sched_switch: prev_comm=w prev_pid=100 prev_prio=120 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120
    <idle>-0 (-------) [001] d.h3.   1.005000: sched_waking: comm=w pid=100 prio=120 target_cpu=001
    <idle>-0 (-------) [001] dNh4.   1.005002: sched_wakeup: comm=w pid=100 prio=120 target_cpu=001
     w-100   (  100) [001] d..4.   1.005010: sched_waking: comm=k pid=200 prio=120 target_cpu=000
     w-100   (  100) [001] d..2.   1.006010: sched_switch: prev_comm=w prev_pid=100 prev_prio=120 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120
";
    assert!(
        import::import(text, false).is_err(),
        "strict import refuses"
    );
    let imp = import::import(text, true).expect("tolerant import");
    assert!(
        imp.repairs[0].contains("pid 100 runs here (record context)"),
        "{:?}",
        imp.repairs
    );
    let w = imp
        .metrics()
        .tasks
        .into_iter()
        .find(|t| t.pid == 100)
        .expect("w");
    // Switched in at the record at 1.005010, out at 1.006010: 1000 µs, and
    // a latency of at most 10 µs (the waking at 1.005000 to that record).
    assert!((w.cpu_time_us - 1000.0).abs() < 1.0, "{w:?}");
    assert_eq!(w.wakeups, 1);
    assert!(w.wakeup_latency_max_us <= 10.1, "{w:?}");
}

/// The host runner records the returns of the workers' blocking calls
/// (raw_syscalls:sys_exit, in tracefs and perf script text): on kernels that
/// lose the idle task's switch to a woken task, the woken task's own
/// sys_exit proves it runs, and the switch-in is recovered there. Repairs
/// beyond the first few become one warning per kind, with counts.
#[test]
fn a_syscall_return_recovers_the_switch_in_and_repairs_are_summarized() {
    let mut text = String::new();
    let mut t = 1_000_000u64; // µs
    for _ in 0..8 {
        let s = |us: u64| format!("{}.{:06}", us / 1_000_000, us % 1_000_000);
        text += &format!("     w-100   (  100) [001] d..2.   {}: sched_switch: prev_comm=w prev_pid=100 prev_prio=120 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120\n", s(t));
        text += &format!("    <idle>-0 (-------) [001] d.h3.   {}: sched_waking: comm=w pid=100 prio=120 target_cpu=001\n", s(t + 2000));
        text += &format!("    <idle>-0 (-------) [001] dNh4.   {}: sched_wakeup: comm=w pid=100 prio=120 target_cpu=001\n", s(t + 2001));
        text += &format!(
            "     w-100   (  100) [001] .....   {}: sys_exit: NR 230 = 0\n",
            s(t + 2004)
        );
        t += 2200;
    }
    text += &format!(
        "     w-100   (  100) [001] d..2.   1.{:06}: sched_switch: prev_comm=w prev_pid=100 prev_prio=120 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120\n",
        t - 1_000_000
    );
    let imp = import::import(&text, true).expect("tolerant import");
    assert_eq!(imp.repairs.len(), 8, "{:?}", imp.repairs);
    let m = imp.metrics();
    let w = m.tasks.iter().find(|t| t.pid == 100).expect("w");
    // Each run from its sys_exit (waking + 4 µs) to the next switch-out.
    assert!((w.cpu_time_us - 8.0 * 196.0).abs() < 1.0, "{w:?}");
    assert_eq!(w.wakeups, 8);
    assert!((w.wakeup_latency_max_us - 4.0).abs() < 0.01, "{w:?}");
    assert_eq!(m.warnings.len(), 5 + 2, "{:?}", m.warnings);
    assert_eq!(m.warnings[5], "... and 3 more trace repairs, by kind:");
    assert_eq!(
        m.warnings[6],
        "3 x line N: cpu N: pid N runs here (record context) but its switch-in from pid N is missing; switched in at this record"
    );
    // perf script's form of the same record.
    let perf = text.replace(" sys_exit: ", " raw_syscalls:sys_exit: ");
    assert_eq!(
        import::import(&perf, true)
            .expect("perf form")
            .repairs
            .len(),
        8
    );
}
