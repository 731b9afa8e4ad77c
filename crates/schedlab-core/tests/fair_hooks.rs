//! FairHooks called at the kernel's points: the pick tie-break (EEVDF's
//! equal virtual deadlines) and placement, through a hook made outside the
//! registry.

mod common;
use common::task;
use schedlab_core::class::fair::hooks::FairHooks;
use schedlab_core::class::fair::tunables::Version;
use schedlab_core::config::SimConfig;
use schedlab_core::engine::{CustomStack, Simulator};
use schedlab_core::machine::Machine;
use schedlab_core::metrics::RunResult;
use schedlab_core::registry::{mainline_stack, SCHEDULERS};
use schedlab_core::task::TaskId;
use schedlab_core::workload::Workload;

/// Among equal deadlines, the task created later runs first.
#[derive(Debug)]
struct LaterFirst;
impl FairHooks for LaterFirst {
    fn name(&self) -> &'static str {
        "later_first"
    }
    fn pick_tie_break(&self, _m: &Machine, a: TaskId, b: TaskId) -> bool {
        b > a
    }
    fn breaks_ties(&self) -> bool {
        true
    }
}

/// Places the task named "urgent" with a 1 ns virtual request: its
/// deadline is then the earliest whenever it wakes.
#[derive(Debug)]
struct UrgentFirst;
impl FairHooks for UrgentFirst {
    fn name(&self) -> &'static str {
        "urgent_first"
    }
    fn place(&mut self, m: &Machine, t: TaskId, vlag: i64, vslice: i64) -> (i64, i64) {
        if m.tasks[t].name == "urgent" {
            (vlag, 1)
        } else {
            (vlag, vslice)
        }
    }
}

fn run_with(text: &str, hooks: fn() -> Box<dyn FairHooks>) -> RunResult {
    let wl = Workload::from_rtapp("test", text).expect("workload");
    let cfg = SimConfig {
        zero_costs: true,
        trace: true,
        ..SimConfig::default()
    };
    let custom = CustomStack {
        def: &SCHEDULERS[0],
        build: Box::new(move |ctx| mainline_stack(ctx, Version::Eevdf, hooks())),
    };
    Simulator::with_stack(wl, cfg, custom)
        .expect("builds")
        .run()
        .expect("runs")
}

fn first_switch_after(r: &RunResult, from: &str) -> String {
    let text = schedlab_core::trace::ftrace::render(r.trace.as_ref().expect("trace"));
    let line = text
        .lines()
        .find(|l| l.contains(&format!("prev_comm={from} ")))
        .expect("a switch away");
    let next = line.split("next_comm=").nth(1).expect("next_comm");
    next.split_whitespace().next().unwrap_or("").to_string()
}

const THREE: &str = r#"{"global": {"duration": 1}, "tasks": {
    "a": {"run": 100000}, "b": {"run": 100000}, "c": {"run": 100000}}}"#;

/// b and c are placed at the same V with the same request: the kernel runs
/// b (queued first) when a's slice ends; the hook makes it c.
#[test]
fn pick_tie_break_decides_between_equal_deadlines() {
    let plain = run_with(THREE, || {
        Box::new(schedlab_core::class::fair::hooks::NoHooks)
    });
    assert_eq!(first_switch_after(&plain, "a"), "b");
    let hooked = run_with(THREE, || Box::new(LaterFirst));
    assert_eq!(first_switch_after(&hooked, "a"), "c");
}

/// A placement hook that shrinks one task's request makes EEVDF pick it
/// first and more often.
#[test]
fn place_hook_changes_the_virtual_deadline() {
    let wl = r#"{"global": {"duration": 1}, "tasks": {
        "hog": {"run": 1000000}, "urgent": {"run": 500, "sleep": 10000}}}"#;
    let plain = run_with(wl, || Box::new(schedlab_core::class::fair::hooks::NoHooks));
    let hooked = run_with(wl, || Box::new(UrgentFirst));
    let lat = |r: &RunResult| task(r, "urgent").wakeup_latency_max_us;
    assert!(
        lat(&hooked) <= lat(&plain),
        "{} > {}",
        lat(&hooked),
        lat(&plain)
    );
    assert!(lat(&hooked) < 1.0, "{}", lat(&hooked));
}
