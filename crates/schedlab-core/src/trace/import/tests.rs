//! Tests of the trace import (../import.rs): parsing, windows, first CPUs.
use super::*;

/// A sched_switch line on CPU 0 at `t` from task `a` (in state `st`) to `b`.
fn sw(t: &str, a: u32, st: &str, b: u32) -> String {
    format!("x-{a} [000] d..2. {t}: sched_switch: prev_comm=t{a} prev_pid={a} prev_prio=120 prev_state={st} ==> next_comm=t{b} next_pid={b} next_prio=120")
}

#[test]
fn parses_tracefs_and_perf_lines() {
    let l = "            bash-31664   (  31664) [000] d..2.  5973.893994: sched_switch: prev_comm=bash prev_pid=31664 prev_prio=120 prev_state=S ==> next_comm=my task next_pid=31708 next_prio=120";
    let r = parse_line(l, 1).expect("ok").expect("event");
    assert_eq!(r.cpu, 0);
    assert_eq!(r.ts, 5_973_893_994_000);
    assert_eq!(r.tgid, Some((31664, 31664)));
    match r.ev {
        RawEv::Switch {
            next, prev_state, ..
        } => {
            assert_eq!(next, (31708, "my task".to_string(), 120));
            assert_eq!(prev_state, "S");
        }
        _ => panic!("switch expected"),
    }
    let p = "     hog  1234 [001]  1234.567890123: sched:sched_waking: comm=hog pid=1234 prio=120 target_cpu=001";
    let r = parse_line(p, 2).expect("ok").expect("event");
    assert_eq!((r.cpu, r.ts), (1, 1_234_567_890_123));
    // perf script -F comm,pid,tid,...: `COMM PID/TID`.
    let p = "  worker  700/702 [000]  10.000000500: sched:sched_waking: comm=x pid=9 prio=120 target_cpu=000";
    let r = parse_line(p, 2).expect("ok").expect("event");
    assert_eq!(r.tgid, Some((702, 700)));
    assert!(parse_line("# tracer: nop", 3).expect("ok").is_none());
    assert!(parse_line("  x-1 [000] 1.0: sched_switch: garbage", 4).is_err());
}

/// A window measures only its stretch: CPU time clipped, switches and
/// latencies counted only inside it.
#[test]
fn window_clips_times_and_counts() {
    let text = [
        sw("1.000000", 0, "R", 1),
        sw("2.000000", 1, "R", 2),
        sw("3.000000", 2, "R", 1),
        sw("4.000000", 1, "S", 0),
    ]
    .join("\n");
    let whole = import(&text, false).expect("imports");
    let part = import_window(&text, false, Some((1_500_000_000, 3_500_000_000))).expect("imports");
    let t1 = |i: &Imported| i.tasks.iter().find(|t| t.pid == 1).cloned().expect("t1");
    assert_eq!(t1(&whole).cpu_time, 2_000_000_000);
    assert_eq!(t1(&part).cpu_time, 1_000_000_000);
    assert_eq!((t1(&whole).nivcsw, t1(&whole).nvcsw), (1, 1));
    assert_eq!((t1(&part).nivcsw, t1(&part).nvcsw), (1, 0));
    assert_eq!(part.span, (1_500_000_000, 3_500_000_000));
    assert_eq!(part.metrics().duration_us, 2_000_000.0);
}

/// A task's first CPU is that of its first switch-in inside the window.
#[test]
fn first_cpu_is_where_the_task_first_ran_in_the_window() {
    let sw = |cpu: u32, t: &str, a: u32, st: &str, b: u32| {
        format!("x-{a} [{cpu:03}] d..2. {t}: sched_switch: prev_comm=t{a} prev_pid={a} prev_prio=120 prev_state={st} ==> next_comm=t{b} next_pid={b} next_prio=120")
    };
    let text = [
        sw(1, "1.000000", 0, "R", 1),
        sw(1, "2.000000", 1, "S", 0),
        "x-0 [002] d..2. 2.500000: sched_waking: comm=t1 pid=1 prio=120 target_cpu=002".into(),
        "x-0 [002] d..2. 2.500001: sched_wakeup: comm=t1 pid=1 prio=120 target_cpu=002".into(),
        sw(2, "3.000000", 0, "R", 1),
        sw(2, "4.000000", 1, "S", 0),
    ]
    .join("\n");
    let whole = import(&text, false).expect("imports");
    let part = import_window(&text, false, Some((1_500_000_000, 4_500_000_000))).expect("imports");
    let t1 = |i: &Imported| i.tasks.iter().find(|t| t.pid == 1).cloned().expect("t1");
    assert_eq!(t1(&whole).first_cpu, Some(1));
    assert_eq!(t1(&part).first_cpu, Some(2));
    let later = import_window(&text, false, Some((4_500_000_000, 5_000_000_000))).expect("imports");
    assert_eq!(t1(&later).first_cpu, None, "never ran in the window");
    assert_eq!(
        part.metrics()
            .tasks
            .iter()
            .find(|t| t.pid == 1)
            .and_then(|t| t.first_cpu),
        Some(2)
    );
}

/// A task still waiting to run when the trace ends has waited until the
/// end (the simulator counts it so), not until its last switch out.
#[test]
fn a_task_waiting_at_the_end_waits_until_the_end() {
    let text = [
        sw("1.000000", 0, "R", 1),
        sw("2.000000", 1, "R", 2),
        sw("4.000000", 2, "R", 3),
    ]
    .join("\n");
    let imp = import(&text, false).expect("imports");
    let task = |pid: u32| imp.tasks.iter().find(|t| t.pid == pid).expect("task");
    assert_eq!(
        task(1).wait_time,
        2_000_000_000,
        "t1: from 2 s to the end at 4 s"
    );
    assert_eq!(task(2).wait_time, 0);
    let part = import_window(&text, false, Some((1_000_000_000, 3_000_000_000))).expect("imports");
    let t1 = part.tasks.iter().find(|t| t.pid == 1).expect("t1");
    assert_eq!(t1.wait_time, 1_000_000_000, "clipped to the window");
}

/// A thread made before the measuring window (the host runner's set-up)
/// is created at the window's start, and its turnaround counts from there:
/// never longer than the window it ran in.
#[test]
fn turnaround_counts_from_the_creation_the_window_shows() {
    let text = [
        sw("1.000000", 0, "R", 1),
        sw("1.500000", 1, "S", 0),
        "x-0 [000] d..2. 2.000000: sched_wakeup: comm=t1 pid=1 prio=120 target_cpu=000".into(),
        sw("2.000010", 0, "R", 1),
        sw("2.500000", 1, "X", 0),
        "t1-1 [000] d..2. 2.500000: sched_process_exit: comm=t1 pid=1 prio=120".into(),
        sw("3.000000", 0, "R", 2),
    ]
    .join("\n");
    let part = import_window(&text, false, Some((1_800_000_000, 3_000_000_000))).expect("imports");
    let m = part.metrics();
    let t1 = m.tasks.iter().find(|t| t.pid == 1).expect("t1");
    assert_eq!(t1.created_us, 0.0);
    assert_eq!(t1.turnaround_us, Some(700_000.0), "2.5 s - 1.8 s");
    let whole = import(&text, false).expect("imports").metrics();
    let t1 = whole.tasks.iter().find(|t| t.pid == 1).expect("t1");
    assert_eq!(t1.turnaround_us, Some(1_500_000.0));
}
