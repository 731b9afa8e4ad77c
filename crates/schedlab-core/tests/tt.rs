//! TT v6.0 (policy/tt.rs, shootout.md §3.2, alt-schedulers.md §6): task
//! types from the detection rules, the per-update vruntime offsets, and
//! the HRRN pick. The detected type is read from the fair class's
//! `task_debug` ("tt_type", the kernel's TT_* number).

mod common;
use common::task;
use schedlab_core::config::SimConfig;
use schedlab_core::engine::Simulator;
use schedlab_core::policy::tt::{convert_to_vruntime, factor, TaskType};
use schedlab_core::workload::Workload;

const MS: u64 = 1_000_000;

fn cfg(scheduler: &str, cpus: usize) -> SimConfig {
    SimConfig {
        zero_costs: true,
        scheduler: scheduler.into(),
        cpus,
        ..SimConfig::default()
    }
}

fn debug_value(sim: &Simulator, name: &str, key: &str) -> i64 {
    let fair = sim.classes.position("fair").expect("fair class");
    let t = sim
        .m
        .tasks
        .iter()
        .position(|t| t.name == name)
        .expect("task");
    let dbg = sim.classes.get_ref(fair).task_debug(t);
    dbg.iter().find(|(k, _)| *k == key).expect("key").1
}

/// The types of `names` at each time of `at` (ns), one run of `text`.
fn types_at(text: &str, c: SimConfig, names: &[&str], at: &[u64]) -> Vec<Vec<TaskType>> {
    let wl = Workload::from_rtapp("t", text).expect("workload");
    let mut sim = Simulator::new(wl, c).expect("builds");
    at.iter()
        .map(|t| {
            sim.run_until(*t).expect("runs");
            names
                .iter()
                .map(|n| TaskType::from_number(debug_value(&sim, n, "tt_type")).expect("a type"))
                .collect()
        })
        .collect()
}

/// FACTOR = 40 ms / (10^9/HZ): 12 at HZ 300 (offsets ±83 333 ns per prio
/// step: REALTIME −1 666 660 ns per update), 10 at 250, 40 at 1000. The
/// sum is floored at 1 ns.
#[test]
fn vruntime_offsets_follow_factor() {
    assert_eq!(factor(300), 12);
    assert_eq!(factor(250), 10);
    assert_eq!(factor(1000), 40);
    assert_eq!(
        convert_to_vruntime(3_333_333, -20, 300),
        3_333_333 - 1_666_666
    );
    assert_eq!(convert_to_vruntime(4 * MS, 19, 250), 4 * MS + 1_900_000);
    assert_eq!(convert_to_vruntime(100_000, -15, 250), 1);
    assert_eq!(convert_to_vruntime(4 * MS, 0, 250), 4 * MS);
}

/// A task running 1 ms then sleeping 9 ms, alone: every wait is 9 ms (equal
/// within 0.8 ms), bursts are ≈ 1 ms (equal within 2 ms, ≤ 4 ms). It is
/// REALTIME once it has lived 0.5 s, not before (rule 1's lifetime).
#[test]
fn a_steady_periodic_task_becomes_realtime_after_half_a_second() {
    let wl = r#"{"global": {"duration": 2}, "tasks": {"periodic": {"run": 1000, "sleep": 9000}}}"#;
    let types = types_at(
        wl,
        cfg("tt", 1),
        &["periodic"],
        &[400 * MS, 1_000 * MS, 1_900 * MS],
    );
    assert_ne!(types[0][0], TaskType::Realtime);
    assert_eq!(types[1][0], TaskType::Realtime);
    assert_eq!(types[2][0], TaskType::Realtime);
}

/// Bursts of 10 and 20 ms (never ≤ 4 ms: not REALTIME) with sleeps of 40
/// and 80 ms in turn (the wait never matches the previous one): hrrn =
/// (wait + vruntime)/vruntime ≥ 2, so INTERACTIVE (rule 2).
#[test]
fn an_irregular_sleeper_is_interactive() {
    let wl = r#"{"global": {"duration": 3}, "tasks": {"sleepy": {
        "run0": 10000, "sleep0": 40000, "run1": 20000, "sleep1": 80000}}}"#;
    let types = types_at(wl, cfg("tt", 1), &["sleepy"], &[1_000 * MS, 2_500 * MS]);
    assert_eq!(types[0][0], TaskType::Interactive);
    assert_eq!(types[1][0], TaskType::Interactive);
}

/// A task that never sleeps has wait_time 0: hrrn = 1, vruntime·100/vruntime
/// = 100 ≥ 90, so CPU_BOUND (rule 3), alone or sharing a CPU.
#[test]
fn a_hog_is_cpu_bound() {
    let wl = r#"{"global": {"duration": 2}, "tasks": {"hog": {"instance": 2, "run": 100000}}}"#;
    let types = types_at(
        wl,
        cfg("tt", 1),
        &["hog-0", "hog-1"],
        &[500 * MS, 1_500 * MS],
    );
    for row in types {
        assert_eq!(row, vec![TaskType::CpuBound; 2]);
    }
}

/// Runs 100 ms, sleeps 25 ms: the waits repeat (not INTERACTIVE), bursts
/// exceed 4 ms (not REALTIME), hrrn = 1 < 2, and the CPU share of its
/// TT vruntime stays below 90 % (with BATCH's +1.9 ms per 4 ms tick:
/// 147.5/(147.5 + 25) ≈ 86 %; with CPU_BOUND's −1.5 ms: 62.5/87.5 ≈ 71 %),
/// so BATCH (rule 4), which a sleeping CPU_BOUND task also becomes.
#[test]
fn a_mostly_running_task_that_sleeps_is_batch() {
    let wl = r#"{"global": {"duration": 3}, "tasks": {"worker": {"run": 100000, "sleep": 25000}}}"#;
    let types = types_at(wl, cfg("tt", 1), &["worker"], &[1_010 * MS, 2_510 * MS]);
    assert_eq!(types[0][0], TaskType::Batch);
    assert_eq!(types[1][0], TaskType::Batch);
}

/// One CPU. `hog` runs from 0 (CPU_BOUND: its TT vruntime grows at
/// (4 − 1.5)/4 = 0.625 of its life, HRRN ≈ 625‰); `late` sleeps 1 s, then
/// runs (INTERACTIVE: hrrn ≥ 2, vruntime at 0.75 of its running time x).
/// Its HRRN 750·x/(1 + x) stays below the hog's 625/(1 + x) while
/// x < 0.83 s: every pick and tick after its slice prefers it, so the hog
/// gets nothing in [1.05 s, 1.5 s]. Under CFS they share.
#[test]
fn hrrn_prefers_the_task_that_ran_least_of_its_life() {
    let wl = r#"{"global": {"duration": 2}, "tasks": {
        "hog": {"run": 100000},
        "late": {"phases": {"nap": {"loop": 1, "sleep": 1000000},
                            "work": {"loop": 100, "run": 100000}}}}}"#;
    let exec = |scheduler: &str| {
        let wl = Workload::from_rtapp("t", wl).expect("workload");
        let mut sim = Simulator::new(wl, cfg(scheduler, 1)).expect("builds");
        sim.run_until(1_050 * MS).expect("runs");
        let a = debug_value(&sim, "hog", "sum_exec_runtime");
        sim.run_until(1_500 * MS).expect("runs");
        (debug_value(&sim, "hog", "sum_exec_runtime") - a) as u64
    };
    let tt = exec("tt");
    assert!(tt < MS, "tt: hog ran {tt} ns");
    let cfs = exec("cfs");
    assert!(cfs > 150 * MS, "cfs: hog ran {cfs} ns");
}

/// TT has no group scheduling: task groups are ignored (with a warning),
/// so shares 1024 vs 8192 give the two hogs equal time.
#[test]
fn task_groups_are_flattened_with_a_warning() {
    let wl = r#"{"global": {"duration": 2, "taskgroups": {"/a": {"shares": 1024}, "/b": {"shares": 8192}}},
        "tasks": {"a": {"taskgroup": "/a", "run": 100000}, "b": {"taskgroup": "/b", "run": 100000}}}"#;
    let r = common::run(wl, cfg("tt", 1));
    assert!(
        r.metrics.warnings.iter().any(|w| w.contains("flat")),
        "{:?}",
        r.metrics.warnings
    );
    let (a, b) = (task(&r, "a").cpu_time_us, task(&r, "b").cpu_time_us);
    assert!((a - b).abs() < 0.05 * (a + b), "{a} vs {b}");
}
