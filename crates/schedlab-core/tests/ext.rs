//! The sched_ext class (class/ext) and scx_simple (policy/scx_simple.rs):
//! default hooks, scx_simple's weighted vtime and FIFO modes, partial
//! switching, and every kind of policy misbehaviour, each ending in a named
//! error and never a panic.

mod common;
use common::task;
use schedlab_core::class::ext::*;
use schedlab_core::config::SimConfig;
use schedlab_core::cpuset::CpuId;
use schedlab_core::engine::SimError;
use schedlab_core::metrics::RunResult;
use schedlab_core::plugin::BuildFn;
use schedlab_core::registry::sched_ext;
use schedlab_core::task::TaskId;

fn cfg(sched: &str, cpus: usize, set: &[(&str, i64)]) -> SimConfig {
    SimConfig {
        zero_costs: true,
        scheduler: sched.into(),
        cpus,
        set: set.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
        ..SimConfig::default()
    }
}

/// The stack builder of each test policy, by the name the tests use (runs
/// go through `Simulator::with_stack`; the registry holds only real
/// schedulers).
fn test_policy(name: &str) -> Option<BuildFn> {
    Some(match name {
        "ext_defaults" => |c| sched_ext(c, Nothing),
        "broken_missing" => |c| sched_ext(c, MissingDsq),
        "broken_vtime" => |c| sched_ext(c, VtimeGlobal),
        "broken_twice" => |c| sched_ext(c, TwiceDirect),
        "broken_dispatch" => |c| sched_ext(c, Custody::default()),
        "broken_stale" => |c| sched_ext(c, StaleDispatch::default()),
        "broken_local_on" => |c| sched_ext(c, LocalOnWrong),
        "broken_loser" => |c| sched_ext(c, Loser),
        "broken_cpu" => |c| sched_ext(c, BadCpu),
        "broken_stall" => |c| sched_ext(c, NeverDispatch),
        "preempt_on_wake" => |c| sched_ext(c, PreemptOnWake),
        "kick_on_wake" => |c| sched_ext(c, KickOnWake),
        "bitmap" => |c| sched_ext(c, Bitmap),
        _ => return None,
    })
}

/// Simulate `text` under `cfg`, with a test policy's stack if it names one.
fn simulate(text: &str, cfg: SimConfig) -> Result<RunResult, SimError> {
    common::simulate_with(text, cfg, test_policy)
}

fn run(text: &str, cfg: SimConfig) -> RunResult {
    simulate(text, cfg).expect("simulation runs")
}

fn sim_err(text: &str, c: SimConfig) -> String {
    match simulate(text, c) {
        Ok(_) => panic!("the run should fail"),
        Err(e) => e.to_string(),
    }
}

// --- a policy that implements nothing ----------------------------------------

#[derive(Default)]
struct Nothing;
impl ExtOps for Nothing {
    type Task = ();
    fn name(&self) -> &str {
        "ext_defaults"
    }
}

/// No enqueue: global DSQ, FIFO, 20 ms slices: three hogs on one CPU share
/// it equally, whatever their nice values (the default ignores weights).
#[test]
fn defaults_schedule_through_the_global_dsq() {
    let s = "ext_defaults";
    let r = run(
        &common::hogs_wl(6, &[("a", 0), ("b", 0), ("c", 10)]),
        cfg(s, 1, &[]),
    );
    for n in ["a", "b", "c"] {
        let sh = task(&r, n).cpu_share;
        assert!((sh - 1.0 / 3.0).abs() < 0.01, "{n}: {sh}");
        assert_eq!(task(&r, n).policy, "SCHED_OTHER");
    }
    // Each switch is a 20 ms slice end (SCX_SLICE_DFL), found at a tick.
    let nivcsw: u64 = ["a", "b", "c"].iter().map(|n| task(&r, n).nivcsw).sum();
    assert!((290..=310).contains(&nivcsw), "{nivcsw}");
}

/// No select_cpu: select_cpu_dfl finds an idle CPU and direct-dispatches
/// to it, so two hogs on two CPUs each own one.
#[test]
fn default_select_cpu_uses_idle_cpus() {
    let s = "ext_defaults";
    let r = run(&common::hogs_wl(2, &[("a", 0), ("b", 0)]), cfg(s, 2, &[]));
    assert!(task(&r, "a").cpu_share > 0.99);
    assert!(task(&r, "b").cpu_share > 0.99);
    assert_eq!(task(&r, "a").migrations + task(&r, "b").migrations, 0);
}

/// Sleepers and hogs mixed under the defaults: everybody progresses.
#[test]
fn defaults_handle_wakeups() {
    let s = "ext_defaults";
    let wl = r#"{"global": {"duration": 3}, "tasks": {
        "hog": {"instance": 3, "run": 1000000},
        "tick": {"run": 1000, "sleep": 9000}}}"#;
    let r = run(wl, cfg(s, 2, &[]));
    let t = task(&r, "tick");
    // 1 ms every ~10 ms plus queueing behind 20 ms slices: at least 100 runs.
    assert!(t.loops_done >= 100, "{}", t.loops_done);
    assert!(r.metrics.warnings.is_empty(), "{:?}", r.metrics.warnings);
}

// --- scx_simple ----------------------------------------------------------

/// Weighted vtime: two nice 0 and two nice 5 hogs on one CPU share it
/// 1024:1024:335:335 (p->scx.weight 100:100:33:33), within 2 %.
#[test]
fn scx_simple_vtime_shares_follow_weights() {
    let r = run(
        &common::hogs_wl(20, &[("a0", 0), ("b0", 0), ("a5", 5), ("b5", 5)]),
        cfg("scx_simple", 1, &[]),
    );
    let total = 2.0 * (1024.0 + 335.0);
    for (n, w) in [("a0", 1024.0), ("b0", 1024.0), ("a5", 335.0), ("b5", 335.0)] {
        let (got, want) = (task(&r, n).cpu_share, w / total);
        assert!((got - want).abs() < 0.02 * want, "{n}: {got} vs {want}");
    }
}

/// With only two hogs on one CPU, scx_simple alternates them whatever
/// their weights, as the kernel does: when the running task's slice ends,
/// balance_one calls ops.dispatch before the task is re-enqueued
/// (put_prev_task_scx comes after the pick), so the DSQ holds only the
/// other task. ops.dispatch's `prev` argument exists for policies that
/// want to compare; scx_simple ignores it.
#[test]
fn scx_simple_alternates_two_hogs_as_the_kernel_does() {
    let r = run(
        &common::hogs_wl(10, &[("n0", 0), ("n5", 5)]),
        cfg("scx_simple", 1, &[]),
    );
    let (a, b) = (task(&r, "n0").cpu_share, task(&r, "n5").cpu_share);
    assert!((a - 0.5).abs() < 0.01 && (b - 0.5).abs() < 0.01, "{a} {b}");
}

/// FIFO mode ignores weights: the same pair shares equally.
#[test]
fn scx_simple_fifo_ignores_weights() {
    let r = run(
        &common::hogs_wl(10, &[("n0", 0), ("n5", 5)]),
        cfg("scx_simple", 1, &[("fifo", 1)]),
    );
    let (a, b) = (task(&r, "n0").cpu_share, task(&r, "n5").cpu_share);
    assert!((a - 0.5).abs() < 0.01 && (b - 0.5).abs() < 0.01, "{a} {b}");
}

/// FIFO mode runs tasks in arrival order: three 30 ms jobs arriving 1 ms
/// apart on one CPU run a 0–20, b 20–40, c 40–60, a 60–70, b 70–80,
/// c 80–90 ms (20 ms slices, tail re-insertion).
#[test]
fn scx_simple_fifo_runs_in_arrival_order() {
    let wl = r#"{"global": {}, "tasks": {
        "a": {"loop": 1, "run": 30000},
        "b": {"loop": 1, "delay": 1000, "run": 30000},
        "c": {"loop": 1, "delay": 2000, "run": 30000}}}"#;
    let r = run(wl, cfg("scx_simple", 1, &[("fifo", 1)]));
    let end = |n: &str| {
        let t = task(&r, n);
        t.created_us + t.turnaround_us.expect("finished")
    };
    for (n, want) in [("a", 70_000.0), ("b", 80_000.0), ("c", 90_000.0)] {
        assert!((end(n) - want).abs() < 1.0, "{n} ended at {} us", end(n));
    }
}

/// Partial mode: the SCHED_OTHER hog stays in the fair class, above ext,
/// and starves the SCHED_EXT hog; switch-all puts both in scx_simple.
#[test]
fn partial_mode_leaves_sched_other_to_fair() {
    let wl = r#"{"global": {"duration": 5}, "tasks": {
        "other": {"run": 1000000},
        "ext": {"policy": "SCHED_EXT", "run": 1000000}}}"#;
    let r = run(wl, cfg("scx_simple", 1, &[("partial", 1)]));
    assert!(task(&r, "other").cpu_share > 0.99);
    assert!(task(&r, "ext").cpu_share < 0.01);
    let r = run(wl, cfg("scx_simple", 1, &[("partial", 0)]));
    assert!((task(&r, "other").cpu_share - 0.5).abs() < 0.01);
    assert!((task(&r, "ext").cpu_share - 0.5).abs() < 0.01);
    assert_eq!(task(&r, "ext").policy, "SCHED_EXT");
}

/// Without a sched_ext policy, SCHED_EXT tasks run in 6.12's fair class.
#[test]
fn sched_ext_tasks_run_in_fair_without_a_policy() {
    let wl = r#"{"global": {"duration": 2}, "tasks": {
        "e": {"policy": "SCHED_EXT", "priority": 5, "run": 1000000},
        "o": {"run": 1000000}}}"#;
    let r = run(wl, common::cfg("eevdf", 1));
    let want = 335.0 / 1359.0;
    assert!((task(&r, "e").cpu_share - want).abs() < 0.01);
    assert!(schedlab_core::simulate("t", wl, common::cfg("cfs", 1)).is_err());
}

// --- broken policies ---------------------------------------------------------

const ONE: &str = r#"{"global": {"duration": 1}, "tasks": {"t": {"cpus": [0], "run": 1000000}}}"#;

/// select_cpu that never inserts, so enqueue always runs.
fn keep_prev(_c: &mut Ctx<'_, ()>, _p: TaskId, prev: CpuId) -> CpuId {
    prev
}

#[derive(Default)]
struct MissingDsq;
impl ExtOps for MissingDsq {
    type Task = ();
    fn name(&self) -> &str {
        "broken_missing"
    }
    fn enqueue(&mut self, c: &mut Ctx<'_, ()>, p: TaskId, f: u64) {
        c.dsq_insert(p, 7, SCX_SLICE_DFL, f);
    }
}

#[test]
fn insert_into_missing_dsq_is_a_named_error() {
    let s = "broken_missing";
    let e = sim_err(ONE, cfg(s, 1, &[]));
    assert_eq!(
        e,
        "broken_missing: ops.enqueue on CPU 0 at 0.000000 s: task \"t\" (pid 1001) inserted into DSQ 7, which does not exist (create it in ops.init with create_dsq)"
    );
}

#[derive(Default)]
struct VtimeGlobal;
impl ExtOps for VtimeGlobal {
    type Task = ();
    fn name(&self) -> &str {
        "broken_vtime"
    }
    fn enqueue(&mut self, c: &mut Ctx<'_, ()>, p: TaskId, f: u64) {
        c.dsq_insert_vtime(p, SCX_DSQ_GLOBAL, SCX_SLICE_DFL, 5, f);
    }
}

#[test]
fn vtime_insert_into_builtin_dsq_is_an_error() {
    let s = "broken_vtime";
    let e = sim_err(ONE, cfg(s, 1, &[]));
    assert!(e.starts_with("broken_vtime: ops.enqueue on CPU 0 at 0.000000 s: task \"t\" (pid 1001) vtime insert into built-in DSQ SCX_DSQ_GLOBAL"), "{e}");
}

#[derive(Default)]
struct TwiceDirect;
impl ExtOps for TwiceDirect {
    type Task = ();
    fn name(&self) -> &str {
        "broken_twice"
    }
    fn select_cpu(&mut self, c: &mut Ctx<'_, ()>, p: TaskId, prev: CpuId, _w: u64) -> CpuId {
        keep_prev(c, p, prev)
    }
    fn enqueue(&mut self, c: &mut Ctx<'_, ()>, p: TaskId, f: u64) {
        c.dsq_insert(p, SCX_DSQ_GLOBAL, SCX_SLICE_DFL, f);
        c.dsq_insert(p, SCX_DSQ_GLOBAL, SCX_SLICE_DFL, f);
    }
}

#[test]
fn inserting_twice_in_enqueue_is_an_error() {
    let s = "broken_twice";
    let e = sim_err(ONE, cfg(s, 2, &[]));
    assert!(e.contains("ops.enqueue on CPU 0 at 0.000000 s: task \"t\" (pid 1001) was inserted twice in one ops.enqueue"), "{e}");
}

/// Keeps tasks in its own queue (custody) and dispatches them from
/// `dispatch`; with `twice` it dispatches each one twice.
#[derive(Default)]
struct Custody {
    q: Vec<TaskId>,
}
impl ExtOps for Custody {
    type Task = ();
    fn name(&self) -> &str {
        "broken_dispatch"
    }
    fn select_cpu(&mut self, c: &mut Ctx<'_, ()>, p: TaskId, prev: CpuId, _w: u64) -> CpuId {
        keep_prev(c, p, prev)
    }
    fn enqueue(&mut self, _c: &mut Ctx<'_, ()>, p: TaskId, _f: u64) {
        self.q.push(p);
    }
    fn dispatch(&mut self, c: &mut Ctx<'_, ()>, _cpu: CpuId, _prev: Option<TaskId>) {
        if let Some(p) = self.q.first().copied() {
            self.q.remove(0);
            c.dsq_insert(p, SCX_DSQ_LOCAL, SCX_SLICE_DFL, 0);
            c.dsq_insert(p, SCX_DSQ_LOCAL, SCX_SLICE_DFL, 0);
        }
    }
}

#[test]
fn dispatching_twice_is_an_error() {
    let s = "broken_dispatch";
    let e = sim_err(ONE, cfg(s, 1, &[]));
    assert!(e.contains("broken_dispatch: ops.dispatch on CPU 0 at 0.000000 s: task \"t\" (pid 1001) was inserted twice in one ops.dispatch"), "{e}");
}

/// Dispatches a task that is already in a DSQ (not in its custody).
#[derive(Default)]
struct StaleDispatch {
    seen: Vec<TaskId>,
}
impl ExtOps for StaleDispatch {
    type Task = ();
    fn name(&self) -> &str {
        "broken_stale"
    }
    fn enqueue(&mut self, c: &mut Ctx<'_, ()>, p: TaskId, f: u64) {
        self.seen.push(p);
        c.dsq_insert(p, SCX_DSQ_GLOBAL, SCX_SLICE_DFL, f);
    }
    fn dispatch(&mut self, c: &mut Ctx<'_, ()>, _cpu: CpuId, _prev: Option<TaskId>) {
        for p in self.seen.clone() {
            c.dsq_insert(p, SCX_DSQ_LOCAL, SCX_SLICE_DFL, 0);
        }
    }
}

#[test]
fn dispatching_a_task_not_in_custody_is_an_error() {
    let s = "broken_stale";
    // Two hogs on one CPU: the second one waits in the global DSQ when the
    // first one's slice ends... but the global DSQ is consumed before
    // dispatch, so make the hogs sleep briefly to empty it.
    let wl = r#"{"global": {"duration": 1}, "tasks": {
        "a": {"cpus": [0], "run": 30000, "sleep": 1000},
        "b": {"cpus": [1], "run": 30000, "sleep": 1000}}}"#;
    let e = sim_err(wl, cfg(s, 2, &[]));
    assert!(e.contains("is not in the policy's custody"), "{e}");
    assert!(e.starts_with("broken_stale: ops.dispatch on CPU "), "{e}");
}

#[derive(Default)]
struct LocalOnWrong;
impl ExtOps for LocalOnWrong {
    type Task = ();
    fn name(&self) -> &str {
        "broken_local_on"
    }
    fn select_cpu(&mut self, c: &mut Ctx<'_, ()>, p: TaskId, prev: CpuId, _w: u64) -> CpuId {
        keep_prev(c, p, prev)
    }
    fn enqueue(&mut self, c: &mut Ctx<'_, ()>, p: TaskId, f: u64) {
        c.dsq_insert(p, SCX_DSQ_LOCAL_ON | 1, SCX_SLICE_DFL, f);
    }
}

#[test]
fn local_on_outside_affinity_is_an_error() {
    let s = "broken_local_on";
    let e = sim_err(ONE, cfg(s, 2, &[]));
    assert_eq!(
        e,
        "broken_local_on: ops.enqueue on CPU 0 at 0.000000 s: task \"t\" (pid 1001) inserted into SCX_DSQ_LOCAL_ON|1 (CPU 1), which is outside its affinity [0]"
    );
}

#[derive(Default)]
struct Loser;
impl ExtOps for Loser {
    type Task = ();
    fn name(&self) -> &str {
        "broken_loser"
    }
    fn select_cpu(&mut self, c: &mut Ctx<'_, ()>, p: TaskId, prev: CpuId, _w: u64) -> CpuId {
        keep_prev(c, p, prev)
    }
    fn enqueue(&mut self, _c: &mut Ctx<'_, ()>, _p: TaskId, _f: u64) {}
}

#[test]
fn losing_a_task_is_an_error() {
    let s = "broken_loser";
    let e = sim_err(ONE, cfg(s, 2, &[]));
    assert!(e.starts_with("broken_loser: ops.dispatch on CPU 0 at 0.000000 s: task \"t\" (pid 1001) was enqueued at 0.000000 s and is in no DSQ while every CPU goes idle"), "{e}");
}

#[derive(Default)]
struct BadCpu;
impl ExtOps for BadCpu {
    type Task = ();
    fn name(&self) -> &str {
        "broken_cpu"
    }
    fn select_cpu(&mut self, _c: &mut Ctx<'_, ()>, _p: TaskId, _prev: CpuId, _w: u64) -> CpuId {
        99
    }
}

#[test]
fn select_cpu_returning_a_missing_cpu_is_an_error() {
    let s = "broken_cpu";
    let wl = r#"{"global": {"duration": 1}, "tasks": {"t": {"run": 1000000}}}"#;
    let e = sim_err(wl, cfg(s, 2, &[]));
    assert!(e.contains("ops.select_cpu on CPU 0 at 0.000000 s: task \"t\" (pid 1001) was placed on CPU 99, which does not exist"), "{e}");
}

/// Inserts into its own DSQ but never moves anything from it: a stall.
#[derive(Default)]
struct NeverDispatch;
impl ExtOps for NeverDispatch {
    type Task = ();
    fn name(&self) -> &str {
        "broken_stall"
    }
    fn select_cpu(&mut self, c: &mut Ctx<'_, ()>, p: TaskId, prev: CpuId, _w: u64) -> CpuId {
        keep_prev(c, p, prev)
    }
    fn init(&mut self, c: &mut Ctx<'_, ()>) -> Result<(), String> {
        c.create_dsq(5);
        Ok(())
    }
    fn enqueue(&mut self, c: &mut Ctx<'_, ()>, p: TaskId, f: u64) {
        c.dsq_insert(p, 5, SCX_SLICE_DFL, f);
    }
}

const JOB: &str = r#"{"global": {"duration": 60}, "tasks": {"job": {"loop": 1, "run": 100000}}}"#;

#[test]
fn watchdog_stops_the_run_on_a_stall() {
    let s = "broken_stall";
    let e = sim_err(JOB, cfg(s, 1, &[("ext_timeout_ms", 1000)]));
    // Checked every timeout/2: the first check past 1 s is at 1.5 s.
    assert_eq!(
        e,
        "broken_stall: sched_ext on CPU 0 at 1.500000 s: task \"job\" (pid 1001) failed to run for 1.500 s (watchdog timeout 1000 ms); it waits in DSQ 5 (does ops.dispatch move tasks from that DSQ?)"
    );
    // Default timeout: 30 s.
    let e = sim_err(JOB, cfg(s, 1, &[]));
    assert!(
        e.contains("at 45.000000 s") && e.contains("timeout 30000 ms"),
        "{e}"
    );
}

#[test]
fn watchdog_fallback_hands_tasks_to_fair() {
    let s = "broken_stall";
    let r = run(
        JOB,
        cfg(s, 1, &[("ext_timeout_ms", 1000), ("ext_on_error", 1)]),
    );
    let t = task(&r, "job");
    assert!((t.cpu_time_us - 100_000.0).abs() < 1.0, "{}", t.cpu_time_us);
    let end = t.created_us + t.turnaround_us.expect("finished under fair");
    assert!((end - 1_600_000.0).abs() < 10.0, "{end}");
    let w = r.metrics.warnings;
    assert!(
        w.iter()
            .any(|w| w.contains("class ext disabled at 1.500000 s")
                && w.contains("failed to run for 1.500 s")),
        "{w:?}"
    );
}

#[test]
fn policy_errors_fall_back_to_fair_when_asked() {
    let s = "broken_missing";
    let r = run(ONE, cfg(s, 1, &[("ext_on_error", 1)]));
    assert!(task(&r, "t").cpu_share > 0.99);
    assert!(r
        .metrics
        .warnings
        .iter()
        .any(|w| w.contains("which does not exist")));
}

// --- preemption, priority queues, hotplug, invariants ------------------------

/// Wakeups go to the head of the local DSQ with SCX_ENQ_PREEMPT.
#[derive(Default)]
struct PreemptOnWake;
impl ExtOps for PreemptOnWake {
    type Task = ();
    fn name(&self) -> &str {
        "preempt_on_wake"
    }
    fn enqueue(&mut self, c: &mut Ctx<'_, ()>, p: TaskId, f: u64) {
        if f & SCX_ENQ_WAKEUP != 0 {
            c.dsq_insert(p, SCX_DSQ_LOCAL, SCX_SLICE_DFL, f | SCX_ENQ_PREEMPT);
        } else {
            c.dsq_insert(p, SCX_DSQ_GLOBAL, SCX_SLICE_DFL, f);
        }
    }
}

/// Wakeups kick the task's CPU with SCX_KICK_PREEMPT after a head insert.
#[derive(Default)]
struct KickOnWake;
impl ExtOps for KickOnWake {
    type Task = ();
    fn name(&self) -> &str {
        "kick_on_wake"
    }
    fn enqueue(&mut self, c: &mut Ctx<'_, ()>, p: TaskId, f: u64) {
        if f & SCX_ENQ_WAKEUP != 0 {
            c.dsq_insert(p, SCX_DSQ_LOCAL, SCX_SLICE_DFL, f | SCX_ENQ_HEAD);
            let cpu = c.task_cpu(p);
            c.kick_cpu(cpu, SCX_KICK_PREEMPT);
        } else {
            c.dsq_insert(p, SCX_DSQ_GLOBAL, SCX_SLICE_DFL, f);
        }
    }
}

const TICKER: &str = r#"{"global": {"duration": 2}, "tasks": {
    "hog": {"run": 1000000},
    "tick": {"run": 1000, "sleep": 9000}}}"#;

/// Wakeup preemption only through ENQ_PREEMPT or kicks: without them a
/// waking task waits for the hog's 20 ms slice; with either it runs at once.
#[test]
fn wakeup_preemption_only_through_enq_preempt_and_kicks() {
    let r = run(TICKER, cfg("ext_defaults", 1, &[]));
    assert!(task(&r, "tick").wakeup_latency_max_us > 5_000.0);
    for s in ["preempt_on_wake", "kick_on_wake"] {
        let r = run(TICKER, cfg(s, 1, &[]));
        let t = task(&r, "tick");
        // p90, not max: the start release (both tasks start at once, a new
        // task has no ENQ_WAKEUP) waits for the hog in every policy.
        assert_eq!(t.wakeup_latency_p90_us, 0.0, "{s}");
        assert!(t.loops_done >= 190, "{s}: {}", t.loops_done);
    }
}

/// A BMQ-like policy on a priority-bitmap DSQ: level = nice + 20; the
/// running task keeps the CPU in ops.dispatch unless a better level waits.
#[derive(Default)]
struct Bitmap;
impl ExtOps for Bitmap {
    type Task = ();
    fn name(&self) -> &str {
        "bitmap"
    }
    fn init(&mut self, c: &mut Ctx<'_, ()>) -> Result<(), String> {
        c.create_prio_dsq(1, 40)
            .then_some(())
            .ok_or_else(|| "create_prio_dsq".to_string())
    }
    fn select_cpu(&mut self, c: &mut Ctx<'_, ()>, p: TaskId, prev: CpuId, _w: u64) -> CpuId {
        keep_prev(c, p, prev)
    }
    fn enqueue(&mut self, c: &mut Ctx<'_, ()>, p: TaskId, f: u64) {
        let level = c.task(p).map_or(20, |v| (v.nice + 20) as u32);
        c.dsq_insert_prio(p, 1, SCX_SLICE_DFL, level, f);
    }
    fn dispatch(&mut self, c: &mut Ctx<'_, ()>, _cpu: CpuId, prev: Option<TaskId>) {
        let level = |c: &Ctx<'_, ()>, t: TaskId| c.task(t).map_or(20, |v| v.nice + 20);
        if let Some(p) = prev.filter(|p| c.task(*p).is_some_and(|v| v.runnable)) {
            let better = c.dsq_peek(1).is_some_and(|h| level(c, h) < level(c, p));
            if !better {
                c.set_slice(p, SCX_SLICE_DFL);
                return;
            }
        }
        c.dsq_move_to_local(1);
    }
}

#[test]
fn priority_bitmap_dsq_runs_the_best_level() {
    let s = "bitmap";
    let r = run(
        &common::hogs_wl(2, &[("lo", 5), ("hi", -5), ("mid", 0)]),
        cfg(s, 1, &[]),
    );
    assert!(
        task(&r, "hi").cpu_share > 0.999,
        "{}",
        task(&r, "hi").cpu_share
    );
    assert_eq!(task(&r, "lo").cpu_time_us, 0.0);
}

/// Hotplug without ops.cpu_online/cpu_offline: the kernel exits the
/// policy ("cpu 1 going offline, exiting scheduler"); it is an exit, not an
/// error, so the tasks go back to the fair class even with ext_on_error 0.
#[test]
fn hotplug_without_cpu_ops_exits_the_policy() {
    let mut c = cfg("scx_simple", 2, &[]);
    c.hotplug = schedlab_core::engine::hotplug::parse("0.5=-1").expect("plan");
    let r = run(&common::hogs_wl(1, &[("a", 0), ("b", 0), ("c", 0)]), c);
    let w = &r.metrics.warnings;
    assert!(
        w.iter()
            .any(|w| w.contains("class ext disabled at 0.500000 s")
                && w.contains("cpu 1 going offline, exiting scheduler")),
        "{w:?}"
    );
    let total: f64 = ["a", "b", "c"].iter().map(|n| task(&r, n).cpu_share).sum();
    assert!((total - 1.5).abs() < 0.01, "{total}");
}

/// The class's and the engine's invariants hold at every 10 ms step of a
/// busy 4-CPU run with pinned tasks, sleepers and hogs.
#[test]
fn invariants_hold_under_scx_simple() {
    let wl = r#"{"global": {"duration": 3}, "tasks": {
        "hog": {"instance": 5, "run": 1000000},
        "pinned": {"cpus": [2], "run": 7000, "sleep": 3000},
        "ext": {"policy": "SCHED_EXT", "instance": 2, "run": 2000, "sleep": 5000, "priority": 3},
        "rt": {"policy": "SCHED_FIFO", "run": 1000, "sleep": 20000}}}"#;
    for set in [&[][..], &[("fifo", 1)][..], &[("partial", 1)][..]] {
        let w = schedlab_core::workload::Workload::from_rtapp("t", wl).expect("workload");
        let mut sim =
            schedlab_core::engine::Simulator::new(w, cfg("scx_simple", 4, set)).expect("sim");
        let mut t = 0;
        loop {
            t += 10_000_000;
            let done = sim.run_until(t).expect("runs");
            sim.check_invariants().expect("invariants");
            if done {
                break;
            }
        }
        let r = sim.finish();
        for n in ["pinned", "ext-0", "ext-1", "rt"] {
            let loops = task(&r, n).loops_done;
            if set == [("partial", 1)] && n.starts_with("ext") {
                // Five fair hogs fill the four CPUs above the ext class.
                assert_eq!(loops, 0, "{n}");
            } else {
                assert!(loops > 10, "{set:?} {n}: {loops}");
            }
        }
    }
}
