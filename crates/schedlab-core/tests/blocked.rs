//! Runs that end with tasks blocked say so: deadlocks, lost wakeups and a
//! mutex nobody unlocks are warnings in the metrics, never a silent exit.

mod common;
use common::{cfg, run};

fn warnings(text: &str) -> Vec<String> {
    run(text, cfg("eevdf", 2)).metrics.warnings
}

#[test]
fn two_lock_deadlock_is_named() {
    let wl = r#"{"global": {"duration": 1}, "tasks": {
        "a": {"loop": 1, "lock": "m1", "run": 1000, "lock2": "m2", "unlock2": "m2", "unlock": "m1"},
        "b": {"loop": 1, "lock": "m2", "run": 1000, "lock2": "m1", "unlock2": "m1", "unlock": "m2"}}}"#;
    let w = warnings(wl);
    assert!(
        w.iter()
            .any(|x| x.starts_with("deadlock (run end, 1.000000 s): a -> b -> a")),
        "{w:?}"
    );
}

#[test]
fn suspend_without_resume_is_a_lost_wakeup() {
    // Without a duration the run ends when nothing can happen any more.
    let wl = r#"{"tasks": {"s": {"loop": 1, "run": 500, "suspend": "never"}}}"#;
    let w = warnings(wl);
    assert!(
        w.iter()
            .any(|x| x.contains("every task is blocked at 0.000500 s")
                && x.contains("s waits for a resume of \"never\"")),
        "{w:?}"
    );
}

#[test]
fn blocked_at_the_end_of_a_timed_run() {
    let wl = r#"{"global": {"duration": 1}, "tasks": {
        "s": {"loop": 1, "run": 500, "suspend": "never"}}}"#;
    let w = warnings(wl);
    assert_eq!(
        w,
        vec!["blocked at the end (1.000000 s): s waits for a resume of \"never\"".to_string()]
    );
}

#[test]
fn a_mutex_never_unlocked_is_flagged_before_and_after_the_run() {
    let wl = r#"{"global": {"duration": 1}, "tasks": {
        "keeper": {"loop": 1, "lock": "m", "run": 1000},
        "other": {"loop": 1, "run": 100, "lock": "m", "run2": 100}}}"#;
    let parsed = schedlab_core::workload::Workload::from_rtapp("w.json", wl).expect("parses");
    assert!(
        parsed
            .warnings
            .iter()
            .any(|x| x.contains("mutex \"m\" is locked but no task ever unlocks it")),
        "{:?}",
        parsed.warnings
    );
    let w = warnings(wl);
    assert!(
        w.iter()
            .any(|x| x.contains("other waits for mutex \"m\" (held by task keeper)")),
        "{w:?}"
    );
}

#[test]
fn a_clean_run_has_no_blocked_warning() {
    let wl = r#"{"global": {"duration": 1}, "tasks": {
        "a": {"lock": "m", "run": 100, "unlock": "m", "sleep": 100},
        "b": {"lock": "m", "run": 100, "unlock": "m", "sleep": 100}}}"#;
    let w = warnings(wl);
    assert!(
        w.iter()
            .all(|x| !x.contains("blocked") && !x.contains("deadlock")),
        "{w:?}"
    );
}
