//! BORE in both generations: 1.7.3 on CFS (`bore-1.7`, shootout.md §1) and
//! 5.9.6 on EEVDF (`bore`, alt-schedulers.md §4). The spec's closed forms
//! (burst score, penalty, smoothing, base slice), the weight of a hog
//! drifting down, fork inheritance, and the behaviour BORE exists for: a
//! bursty interactive task beside CPU hogs waits less to run than under the
//! plain fair class.

mod common;
use common::*;
use schedlab_core::class::fair::hooks::FairHooks;
use schedlab_core::class::fair::weights::{LoadWeight, PRIO_TO_WEIGHT};
use schedlab_core::class::EnqueueFlags;
use schedlab_core::clock::Ns;
use schedlab_core::config::SimConfig;
use schedlab_core::engine::{CustomStack, Simulator};
use schedlab_core::machine::Machine;
use schedlab_core::policy::bore_cfs::{burst_scale, burst_score};
use schedlab_core::policy::bore_eevdf::{
    self, base_slice, binary_smooth, burst_penalty, log2plus1_f8, BoreEevdf,
};
use schedlab_core::task::TaskId;
use schedlab_core::tunable::TunableSet;
use schedlab_core::workload::Workload;
use std::cell::RefCell;
use std::rc::Rc;

const US: u64 = 1_000;
const MS: u64 = 1_000_000;
const SEC: u64 = 1_000_000_000;

/// shootout.md §1.2's table (values from the exact formula, granularity
/// 5, scale 1256).
#[test]
fn burst_score_matches_the_spec_table() {
    let table = [
        (0, 0),
        (US, 7),
        (10 * US, 11),
        (100 * US, 15),
        (500 * US, 18),
        (MS, 19),
        (2 * MS, 20),
        (4 * MS, 21),
        (8 * MS, 23),
        (16 * MS, 24),
        (100 * MS, 27),
        (SEC, 31),
        (10 * SEC, 35),
    ];
    for (burst, score) in table {
        assert_eq!(burst_score(burst, 0, 5, 1256), score, "burst {burst} ns");
        // The score follows the larger of the current and previous burst.
        assert_eq!(burst_score(0, burst, 5, 1256), score, "prev {burst} ns");
    }
    assert_eq!(burst_score(u64::MAX, 0, 5, 1256), 39, "capped at 39");
    assert_eq!(
        burst_score(SEC, 0, 64, 1256),
        0,
        "a 64-bit shift counts nothing"
    );
}

/// §1.2's vruntime multipliers: wmult[score] / 2^22 = 1024 / weight.
#[test]
fn vruntime_multiplier_matches_the_spec_table() {
    for (score, factor) in [
        (0u8, 0.012),
        (7, 0.055),
        (15, 0.328),
        (20, 1.0),
        (24, 2.421),
        (31, 11.77),
        (35, 28.44),
    ] {
        let got = burst_scale(1_000_000_000, score) as f64 / 1e9;
        assert!(
            (got / factor - 1.0).abs() < 0.04,
            "score {score}: {got} vs {factor}"
        );
    }
    assert_eq!(burst_scale(123_456, 20), 123_456, "score 20 is neutral");
}

/// alt-schedulers.md §4: penalty = (log2plus1(ns) − 24·256)·1280 >> 16,
/// capped at 156. The spec's prose puts the zero point at "~16.8 ms"; the
/// formula it gives is 0 only below 2^23 ns (8.4 ms) and 5 at 16.8 ms
/// (log2plus1 = 25.0 there), so the test follows the formula.
#[test]
fn burst_penalty_matches_the_formula() {
    assert_eq!(log2plus1_f8(0), 0);
    assert_eq!(log2plus1_f8(1), 1 << 8);
    assert_eq!(log2plus1_f8(3), 2 << 8 | 128, "1.5 · 2^1: fraction 0.5");
    assert_eq!(burst_penalty((1 << 23) - 1, 24, 1280), 0);
    assert_eq!(burst_penalty(16_800_000, 24, 1280), 5);
    assert_eq!(burst_penalty(100 * MS, 24, 1280), 17);
    assert_eq!(burst_penalty(SEC, 24, 1280), 34);
    assert_eq!(burst_penalty(10 * SEC, 24, 1280), 50);
    assert_eq!(burst_penalty(u64::MAX, 24, 1280), 156, "MAX_BURST_PENALTY");
    // Each doubling adds 256 · 1280 >> 16 = 5.
    assert_eq!(
        burst_penalty(2 * SEC, 24, 1280) - burst_penalty(SEC, 24, 1280),
        5
    );
}

/// Smoothing at sleep: halfway up (shift 1), straight down (shift 0).
#[test]
fn smoothing_goes_up_halfway_and_down_at_once() {
    assert_eq!(binary_smooth(20, 10, 1, 0), 15);
    assert_eq!(binary_smooth(17, 0, 1, 0), 8);
    assert_eq!(binary_smooth(4, 30, 1, 0), 4);
    assert_eq!(
        binary_smooth(4, 30, 1, 1),
        17,
        "short smoothness 1 halves the drop"
    );
}

/// `base_slice = tick · max(1, ⌈min_base_slice / tick⌉)`.
#[test]
fn base_slice_is_a_multiple_of_the_tick() {
    assert_eq!(base_slice(4 * MS, 2 * MS), 4 * MS, "HZ 250");
    assert_eq!(base_slice(MS, 2 * MS), 2 * MS, "HZ 1000");
    assert_eq!(base_slice(3_333_333, 2 * MS), 3_333_333, "HZ 300");
    assert_eq!(base_slice(MS, 2_500_000), 3 * MS);
    assert_eq!(base_slice(MS, 0), MS, "at least one tick");
}

// ---- 5.9.6 behaviour, observed through a recording wrapper --------------

/// What the wrapper saw: weights asked for (time, task, weight) and
/// penalties after each sleep and fork (time, task, penalty).
#[derive(Debug, Default)]
struct Log {
    weights: Vec<(Ns, TaskId, u64)>,
    sleeps: Vec<(Ns, TaskId, u8)>,
    forks: Vec<(TaskId, u8)>,
}

/// BORE 5.9.6's hooks, unchanged, with a log.
#[derive(Debug)]
struct Recording {
    inner: BoreEevdf,
    log: Rc<RefCell<Log>>,
}

impl FairHooks for Recording {
    fn name(&self) -> &'static str {
        "bore-recording"
    }
    fn update_curr(&mut self, m: &Machine, t: TaskId, d: Ns) {
        self.inner.update_curr(m, t, d)
    }
    fn requested_weight(&mut self, m: &Machine, t: TaskId) -> Option<u64> {
        let w = self.inner.requested_weight(m, t);
        if let Some(w) = w {
            self.log.borrow_mut().weights.push((m.now, t, w));
        }
        w
    }
    fn task_sleep(&mut self, m: &Machine, t: TaskId) {
        self.inner.task_sleep(m, t);
        let p = self.inner.penalty(t);
        self.log.borrow_mut().sleeps.push((m.now, t, p));
    }
    fn burst_yield(&mut self, m: &Machine, t: TaskId) {
        self.inner.burst_yield(m, t)
    }
    fn charge_before_restart(&self) -> bool {
        self.inner.charge_before_restart()
    }
    fn yield_request(&self, t: TaskId, v: i64, o: LoadWeight, n: LoadWeight) -> Option<i64> {
        self.inner.yield_request(t, v, o, n)
    }
    fn lag_limit(&self, l: i64) -> i64 {
        self.inner.lag_limit(l)
    }
    fn run_to_parity(&self, n: u32) -> bool {
        self.inner.run_to_parity(n)
    }
    fn deadline_vslice(&self, f: EnqueueFlags, v: i64) -> Option<i64> {
        self.inner.deadline_vslice(f, v)
    }
    fn task_fork(&mut self, m: &Machine, t: TaskId, p: Option<TaskId>) {
        self.inner.task_fork(m, t, p);
        let pen = self.inner.penalty(t);
        self.log.borrow_mut().forks.push((t, pen));
    }
}

fn run_recorded(text: &str, cpus: usize) -> (Log, Simulator) {
    let wl = Workload::from_rtapp("bore", text).expect("workload");
    let log = Rc::new(RefCell::new(Log::default()));
    let l2 = log.clone();
    let custom = CustomStack {
        def: &bore_eevdf::DEF,
        build: Box::new(move |ctx| {
            bore_eevdf::stack_with(ctx, |t: &TunableSet| {
                Box::new(Recording {
                    inner: BoreEevdf::new(t),
                    log: l2,
                })
            })
        }),
    };
    let cfg = SimConfig {
        cpus,
        ..SimConfig::default()
    };
    let mut sim = Simulator::with_stack(wl, cfg, custom).expect("builds");
    sim.run_until(u64::MAX).expect("runs");
    assert_eq!(sim.check_invariants(), Ok(()));
    let log = std::mem::take(&mut *log.borrow_mut());
    (log, sim)
}

/// A hog alone on a CPU never sleeps: its burst is its age, and its weight
/// steps down to sched_prio_to_weight[20 + penalty(age) >> 2] each time
/// the index changes. The first step comes at the first charge (a tick, 4
/// ms at HZ 250) after the burst reaches score 1: penalty 4 needs
/// log2plus1 ≥ 24 + 205/256, i.e. 2^23 + 205·2^15 ns.
#[test]
fn a_hogs_weight_drifts_down() {
    let (log, _) = run_recorded(
        r#"{"global": {"duration": 2}, "tasks": {"hog": {"run": 10000000}}}"#,
        1,
    );
    let w = &log.weights;
    assert!(w.len() >= 6, "{w:?}");
    let first_score_1 = (1u64 << 23) + 205 * (1 << 15);
    assert!(
        w[0].0 >= first_score_1 && w[0].0 < first_score_1 + 4 * MS,
        "{w:?}"
    );
    for pair in w.windows(2) {
        assert!(pair[1].2 < pair[0].2, "weights fall: {w:?}");
    }
    for &(at, _, weight) in w {
        let score = burst_penalty(at, 24, 1280) >> 2;
        assert_eq!(weight, PRIO_TO_WEIGHT[20 + score as usize], "at {at}");
    }
    // After 2 s: penalty 39, score 9, nice 0 + 9.
    assert_eq!(w.last().map(|x| x.2), Some(PRIO_TO_WEIGHT[29]));
}

/// At each sleep the penalty moves halfway up toward the burst's
/// (100 ms: 17 → 8, 12, 14, 15, 16, 16) and drops at once to a short
/// burst's (1 ms: 0).
#[test]
fn smoothing_on_sleep_up_halfway_down_at_once() {
    let (log, _) = run_recorded(
        r#"{"global": {"duration": 1}, "tasks": {"long": {"run": 100000, "sleep": 10000}}}"#,
        1,
    );
    let got: Vec<u8> = log.sleeps.iter().take(6).map(|s| s.2).collect();
    assert_eq!(got, vec![8, 12, 14, 15, 16, 16]);
    let (log, _) = run_recorded(
        r#"{"global": {"duration": 1}, "tasks": {"mixed": {"run": 100000, "sleep": 10000, "run1": 1000, "sleep1": 10000}}}"#,
        1,
    );
    let got: Vec<u8> = log.sleeps.iter().take(4).map(|s| s.2).collect();
    assert_eq!(got, vec![8, 0, 8, 0]);
}

/// A forked process inherits the average penalty of its ancestor's
/// children: the parent (a sleeper, penalty 0) has no other child, so the
/// walk climbs to the launcher, whose children are the parent and two hogs
/// that have run ~200 ms (penalty 22 for bursts of 188.3–214.9 ms): (0 + 22 +
/// 22) / 3 = 14. The parent itself has 0, so a copy of the parent would
/// give 0.
#[test]
fn a_forked_process_inherits_the_ancestors_children_average() {
    let (log, _) = run_recorded(
        r#"{"global": {"duration": 1}, "tasks": {
            "hog": {"instance": 2, "cpus": [1, 2], "run": 10000000},
            "parent": {"cpus": [0], "sleep": 200000, "run": 100, "fork": "kid", "sleep1": 10000000},
            "kid": {"instance": 0, "cpus": [0], "run": 100, "sleep": 1000000}}}"#,
        3,
    );
    assert_eq!(burst_penalty(189 * MS, 24, 1280), 22);
    assert_eq!(burst_penalty(214 * MS, 24, 1280), 22);
    let forked: Vec<u8> = log.forks.iter().map(|f| f.1).collect();
    // Three tasks the workload starts (penalty 0), then the kid.
    assert_eq!(forked.len(), 4, "{forked:?}");
    assert_eq!(&forked[..3], &[0, 0, 0]);
    assert_eq!(forked[3], (22 + 22) / 3);
}

// ---- both generations: wakeup latency of a bursty task beside hogs ------

fn latency(sched: &str, text: &str, cpus: usize, set: &[(&str, i64)]) -> (f64, f64) {
    let mut c = cfg(sched, cpus);
    c.set = set.iter().map(|(k, v)| (k.to_string(), *v)).collect();
    let r = run(text, c);
    let t = task(&r, "interactive");
    assert!(t.wakeups > 100, "{sched}: {} wakeups", t.wakeups);
    (t.wakeup_latency_avg_us, t.wakeup_latency_p99_us)
}

/// EEVDF: the hogs' weights sink toward nice +9…+12 while the interactive
/// task (0.5 ms bursts) keeps nice 0 and wakes with half a request, so it
/// is picked sooner: lower mean and p99 wakeup latency than plain EEVDF.
#[test]
fn bore_lowers_interactive_wakeup_latency_on_eevdf() {
    let wl = r#"{"global": {"duration": 10}, "tasks": {
        "hog": {"instance": 4, "run": 100000},
        "interactive": {"run": 500, "sleep": 10000}}}"#;
    let (base_avg, base_p99) = latency("eevdf", wl, 2, &[]);
    let (bore_avg, bore_p99) = latency("bore", wl, 2, &[]);
    assert!(bore_avg < base_avg / 2.0, "mean {bore_avg} vs {base_avg}");
    assert!(bore_p99 < base_p99, "p99 {bore_p99} vs {base_p99}");
    // Without the burst penalty (sched_bore 0) the advantage is gone.
    let (off_avg, _) = latency("bore", wl, 2, &[("bore", 0)]);
    assert!(off_avg > 2.0 * bore_avg, "bore=0: {off_avg} vs {bore_avg}");
}

/// CFS: a task that runs 1 ms and sleeps 1 ms gains little sleeper credit,
/// so under CFS it waits behind hogs whose vruntime is level with its own;
/// under BORE 1.7.3 the hogs' vruntime runs ≥ 11× faster (score ≥ 31 after
/// 1 s) while its own runs at ×0.8 (score 19), so it wins every wakeup.
#[test]
fn bore_lowers_interactive_wakeup_latency_on_cfs() {
    let wl = r#"{"global": {"duration": 10}, "tasks": {
        "hog": {"instance": 2, "run": 100000},
        "interactive": {"run": 1000, "sleep": 1000}}}"#;
    let (base_avg, base_p99) = latency("cfs", wl, 1, &[]);
    let (bore_avg, bore_p99) = latency("bore-1.7", wl, 1, &[]);
    assert!(bore_avg < base_avg / 10.0, "mean {bore_avg} vs {base_avg}");
    assert!(bore_p99 < base_p99, "p99 {bore_p99} vs {base_p99}");
    // The scaling, not the latency preset, is what helps.
    let (off_avg, _) = latency("bore-1.7", wl, 1, &[("bore", 0)]);
    assert!(off_avg > 10.0 * bore_avg, "bore=0: {off_avg} vs {bore_avg}");
}

/// Both generations run every example workload, or refuse it with an
/// error naming what they lack (SCHED_EXT on the CFS generation).
#[test]
fn bore_runs_the_examples() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/");
    for file in ["mixed.json", "policies/edf.json", "policies/rr.json"] {
        let text = std::fs::read_to_string(format!("{root}{file}")).expect("example");
        for s in ["bore", "bore-1.7"] {
            match schedlab_core::simulate(file, &text, cfg(s, 2)) {
                Ok(_) => {}
                // CFS 6.1 has no SCHED_EXT; the refusal names it (as for `cfs`).
                Err(e) => assert!(
                    s == "bore-1.7" && e.to_string().contains("has no class for SCHED_EXT"),
                    "{s} {file}: {e}"
                ),
            }
        }
    }
}

/// The CFS generation says when task groups make it depart from the patch
/// (group entities are not burst-scored).
#[test]
fn bore_1_7_warns_about_task_groups() {
    let wl = r#"{"global": {"duration": 1, "taskgroups": {"/a": {"shares": 2048}}}, "tasks": {
        "x": {"taskgroup": "/a", "run": 3000, "sleep": 1000}, "y": {"run": 100000}}}"#;
    let warned = |s: &str| {
        run(wl, cfg(s, 1))
            .metrics
            .warnings
            .iter()
            .any(|w| w.contains("task-group entities"))
    };
    assert!(warned("bore-1.7"));
    assert!(!warned("bore"));
    assert!(!run(&hogs(2, 1), cfg("bore-1.7", 1))
        .metrics
        .warnings
        .iter()
        .any(|w| w.contains("task-group")));
}
