//! Tests of the import's skipped-clock charging (../import.rs, `TickGrid`).
use super::*;

/// A sleeper (pid 2) woken on idle CPU 0 at 1.000010 with need-resched
/// set there, switched in 20 µs later, runs 50 µs; a hog (pid 3) on the
/// same CPU is preempted by a wakeup at 1.100000 switched 8 µs later.
fn trace(wakeup_flags: &str) -> String {
    let sw = |t: &str, a: u32, st: &str, b: u32| {
        format!("x-{a} [000] d..2. {t}: sched_switch: prev_comm=t{a} prev_pid={a} prev_prio=120 prev_state={st} ==> next_comm=t{b} next_pid={b} next_prio=120")
    };
    let wk = |t: &str, f: &str, p: u32| {
        format!("<idle>-0 [000] {f} {t}: sched_wakeup: comm=t{p} pid={p} prio=120 target_cpu=000")
    };
    [
        sw("1.000000", 0, "R", 3),
        sw("1.000005", 3, "S", 0),
        wk("1.000010", wakeup_flags, 2),
        sw("1.000030", 0, "R", 2),
        sw("1.000080", 2, "S", 0),
        wk("1.050000", "d..2.", 3),
        sw("1.050000", 0, "R", 3),
        wk("1.100000", wakeup_flags, 2),
        sw("1.100008", 3, "R+", 2),
        sw("1.100058", 2, "S", 3),
    ]
    .join("\n")
}

fn cpu_us(imp: &Imported, pid: u32) -> f64 {
    let m = imp.metrics();
    m.tasks
        .iter()
        .find(|t| t.pid == pid)
        .expect("task")
        .cpu_time_us
}

const GRID: TickGrid = TickGrid {
    period: 4_000_000,
    phase: 0,
};

#[test]
fn a_skipped_clock_update_charges_the_wakee() {
    let text = trace("dNh2.");
    let plain = import(&text, false).expect("imports");
    assert_eq!(cpu_us(&plain, 2), 100.0);
    let kernel = import_with(&text, false, None, Some(GRID)).expect("imports");
    // 20 µs of idle exit and 8 µs of the hog's preemption, moved.
    assert_eq!(cpu_us(&kernel, 2), 128.0);
    assert_eq!(cpu_us(&plain, 3) - cpu_us(&kernel, 3), 8.0);
    // No need-resched in the flags: no skip.
    let none = import_with(&trace("d.h2."), false, None, Some(GRID)).expect("imports");
    assert_eq!(cpu_us(&none, 2), 100.0);
    // A tick between the wakeup and the switch: the skip was spent.
    let grid = TickGrid {
        period: 4_000_000,
        phase: 1_000_020_000 % 4_000_000,
    };
    let ticked = import_with(&text, false, None, Some(grid)).expect("imports");
    assert_eq!(cpu_us(&ticked, 2), 108.0);
}

fn uncertainty_us(imp: &Imported, pid: u32) -> f64 {
    let t = imp.tasks.iter().find(|t| t.pid == pid).expect("task");
    t.clock_uncertainty as f64 / 1000.0
}

#[test]
fn a_skipped_clock_is_uncertain_back_to_the_waking() {
    // The same trace with each wakeup of the sleeper announced by its
    // sched_waking 3 and 10 µs before: the kernel read the clock in
    // between, so each skip-charged switch in may have been charged
    // that much more.
    let waking = |t: &str| {
        format!("<idle>-0 [000] d.h3. {t}: sched_waking: comm=t2 pid=2 prio=120 target_cpu=000")
    };
    let with_waking = |flags: &str| {
        let mut lines: Vec<String> = trace(flags).lines().map(String::from).collect();
        lines.insert(7, waking("1.099990"));
        lines.insert(2, waking("1.000007"));
        lines.join("\n")
    };
    let kernel = import_with(&with_waking("dNh2."), false, None, Some(GRID)).expect("imports");
    assert_eq!(cpu_us(&kernel, 2), 128.0);
    assert_eq!(uncertainty_us(&kernel, 2), 13.0);
    // Nothing charged from a wakeup, nothing uncertain: no skip, or no
    // grid (switch to switch), or a tick between that spent the skip.
    let none = import_with(&with_waking("d.h2."), false, None, Some(GRID)).expect("imports");
    assert_eq!(uncertainty_us(&none, 2), 0.0);
    let plain = import(&with_waking("dNh2."), false).expect("imports");
    assert_eq!(uncertainty_us(&plain, 2), 0.0);
    let grid = TickGrid {
        period: 4_000_000,
        phase: 1_000_020_000 % 4_000_000,
    };
    let ticked = import_with(&with_waking("dNh2."), false, None, Some(grid)).expect("imports");
    assert_eq!(uncertainty_us(&ticked, 2), 10.0);
    // Without a sched_waking record the wakeup is the earliest time.
    let bare = import_with(&trace("dNh2."), false, None, Some(GRID)).expect("imports");
    assert_eq!(uncertainty_us(&bare, 2), 0.0);
}
