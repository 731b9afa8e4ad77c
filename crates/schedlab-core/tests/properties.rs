//! Property tests over random workloads: engine and class invariants hold
//! at every step, the trace never shows a task on two CPUs, affinity is
//! respected, busy + idle = elapsed, and runs are deterministic.

mod common;
use common::*;
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use schedlab_core::config::SimConfig;
use schedlab_core::engine::governor::Governor;
use schedlab_core::engine::hotplug;
use schedlab_core::engine::Simulator;

use schedlab_core::trace::{ftrace, perfetto, TraceData, TraceEvent};
use schedlab_core::workload::Workload;

fn task_json(i: usize, nice: i32, run: u64, sleep: u64, cpus: &[usize], mode: u8) -> String {
    let aff = if cpus.is_empty() {
        String::new()
    } else {
        format!(", \"cpus\": {cpus:?}")
    };
    let body = match mode {
        0 => format!("\"run\": {run}, \"sleep\": {sleep}"),
        1 => format!(
            "\"run\": {run}, \"timer\": {{\"ref\": \"unique\", \"period\": {}}}",
            run + sleep + 1
        ),
        2 => format!("\"lock\": \"m\", \"run\": {run}, \"unlock\": \"m\", \"sleep\": {sleep}"),
        _ => format!("\"run\": {run}, \"yield\": \"\", \"sleep0\": {sleep}"),
    };
    // Some tasks are SCHED_FIFO / SCHED_RR / SCHED_DEADLINE (nice -20..-16
    // stand for them); DEADLINE tasks need full affinity and small budgets.
    if nice == -16 {
        return format!(
            "\"t{i}\": {{\"policy\": \"SCHED_DEADLINE\", \"dl-runtime\": 1000, \"dl-period\": 50000, {body}}}"
        );
    }
    let policy = match nice {
        -20 | -18 => format!(
            "\"policy\": \"SCHED_FIFO\", \"priority\": {}",
            1 + i * 7 % 99
        ),
        -19 | -17 => "\"policy\": \"SCHED_RR\", \"priority\": 5".to_string(),
        _ => format!("\"priority\": {nice}"),
    };
    format!("\"t{i}\": {{{policy}{aff}, {body}}}")
}

fn workload() -> impl Strategy<Value = (String, usize, &'static str)> {
    let task = (
        -20i32..20,
        1u64..20_000,
        0u64..20_000,
        proptest::collection::vec(0usize..4, 0..3),
        0u8..4,
    );
    (
        proptest::collection::vec(task, 1..8),
        1usize..5,
        any::<bool>(),
    )
        .prop_map(|(ts, cpus, cfs)| {
            let tasks: Vec<String> = ts
                .iter()
                .enumerate()
                .map(|(i, (n, r, s, aff, mode))| {
                    let aff: Vec<usize> = aff.iter().map(|c| c % cpus).collect();
                    task_json(i, *n, *r, *s, &aff, *mode)
                })
                .collect();
            let text = format!(
                "{{\"global\": {{\"duration\": 1}}, \"tasks\": {{{}}}}}",
                tasks.join(", ")
            );
            (text, cpus, if cfs { "cfs" } else { "eevdf" })
        })
}

fn config(kind: &str, cpus: usize) -> SimConfig {
    SimConfig {
        trace: true,
        ..cfg(kind, cpus)
    }
}

/// Run `wl` under `c`, checking the engine's and classes' invariants every
/// 10 ms, busy + idle = elapsed per CPU, and that the trace's switches
/// chain per CPU with no task on two CPUs at once. Returns the trace.
fn run_checked(wl: &Workload, c: SimConfig, cpus: usize) -> Result<TraceData, TestCaseError> {
    let mut sim = Simulator::new(wl.clone(), c).expect("builds");
    let mut t = 0;
    loop {
        t += 10_000_000;
        let done = sim.run_until(t).expect("runs");
        prop_assert_eq!(sim.check_invariants(), Ok(()));
        if done {
            break;
        }
    }
    let r = sim.finish();
    let dur = r.metrics.duration_us;
    for cm in &r.metrics.cpu {
        prop_assert!((cm.busy_us + cm.idle_us - dur).abs() < 1e-6);
    }
    let trace = r.trace.expect("trace recorded");
    let mut on: Vec<Option<usize>> = vec![None; trace.tasks.len()];
    let mut curr: Vec<Option<usize>> = vec![None; cpus];
    for rec in &trace.records {
        if let TraceEvent::Switch { prev, next, .. } = rec.ev {
            prop_assert_eq!(prev, curr[rec.cpu]);
            if let Some(p) = prev {
                on[p] = None;
            }
            if let Some(n) = next {
                prop_assert_eq!(on[n], None, "task {} on two CPUs", n);
                on[n] = Some(rec.cpu);
            }
            curr[rec.cpu] = next;
        }
    }
    Ok(trace)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn invariants_hold((text, cpus, kind) in workload()) {
        let wl = Workload::from_rtapp("prop", &text).expect("generated workload parses");
        let trace = run_checked(&wl, config(kind, cpus), cpus)?;
        // Affinity holds.
        for rec in &trace.records {
            if let TraceEvent::Switch { next: Some(n), .. } = rec.ev {
                if let Some(aff) = &wl.tasks[n].attrs.cpus {
                    prop_assert!(aff.contains(&rec.cpu));
                }
            }
        }
    }

    /// The same invariants under the whole-scheduler replacements (BFS,
    /// MuQSS with shared and per-CPU queues, Baby), with the ondemand
    /// governor (BFS's sticky bias reads it) and CPU hotplug; runs are
    /// deterministic.
    #[test]
    fn invariants_hold_for_alt_schedulers((text, cpus, _kind) in workload(), opt in 0usize..16) {
        let wl = Workload::from_rtapp("prop", &text).expect("generated workload parses");
        let (sched, set): (&str, &[(&str, i64)]) =
            [("bfs", &[][..]), ("muqss", &[][..]), ("muqss", &[("rqshare", 0), ("interactive", 0)][..]), ("baby", &[][..])][opt % 4];
        let mut c = config(sched, cpus);
        c.set = set.iter().map(|(k, v)| (k.to_string(), *v)).collect();
        if opt / 4 % 2 == 1 {
            c.governor = Governor::Ondemand;
            c.freq_mhz = vec![(1000, 2000)];
        }
        if cpus >= 2 && opt / 8 == 1 {
            c.hotplug = hotplug::parse("0.3=-1,0.6=+1").expect("plan");
        }
        let trace = run_checked(&wl, c.clone(), cpus)?;
        let again = schedlab_core::simulate("prop", &text, c).expect("runs");
        prop_assert_eq!(ftrace::render(&trace), ftrace::render(&again.trace.expect("trace")));
    }

    /// The same invariants with the optional machinery switched on: LLF /
    /// ILLF orderings, weight policies, the ondemand governor, OS noise and
    /// CPU hotplug (a CPU offline from 0.3 s to 0.6 s).
    #[test]
    fn invariants_hold_with_options((text, cpus, kind) in workload(), opt in 0usize..64) {
        let wl = Workload::from_rtapp("prop", &text).expect("generated workload parses");
        let mut c = config(kind, cpus);
        c.dl_policy = ["edf", "llf", "illf"][opt % 3].into();
        c.scheduler = common::with_policy(&c.scheduler, ["", "pfs", "dwcfs", "tsf"][(opt / 3) % 4]);
        if opt / 12 % 2 == 1 {
            c.governor = Governor::Ondemand;
            c.freq_mhz = vec![(1000, 2000)];
        }
        if opt / 24 % 2 == 1 {
            c.set = vec![("noise_interval_us".into(), 7_000)];
        }
        let hot = cpus >= 2 && opt % 5 == 0;
        if hot {
            c.hotplug = hotplug::parse("0.3=-1,0.6=+1").expect("plan");
        }
        let trace = run_checked(&wl, c.clone(), cpus)?;
        if hot {
            for rec in &trace.records {
                if let TraceEvent::Switch { next: Some(_), .. } = rec.ev {
                    let offline = rec.ts > 300_000_000 && rec.ts < 600_000_000;
                    prop_assert!(!(offline && rec.cpu == 1), "ran on offline CPU 1");
                }
            }
        }
        // Determinism with everything on.
        let again = schedlab_core::simulate("prop", &text, c).expect("runs");
        prop_assert_eq!(ftrace::render(&trace), ftrace::render(&again.trace.expect("trace")));
    }

    /// Every scheduler in the registry (issue 14), on a machine with the
    /// wakeup path's costs or without, in every tick mode: the invariants
    /// hold, affinity is respected and the run is deterministic; a
    /// workload a scheduler cannot run is refused with a message, never a
    /// panic.
    #[test]
    fn invariants_hold_for_every_registered_scheduler(
        (text, cpus, _kind) in workload(),
        pick in 0usize..1024,
    ) {
        let scheds = schedlab_core::registry::SCHEDULERS;
        let sched = scheds[pick % scheds.len()].name;
        let wl = Workload::from_rtapp("prop", &text).expect("generated workload parses");
        let mut c = config(sched, cpus);
        c.zero_costs = pick / scheds.len() % 2 == 0;
        c.set = vec![("nohz".into(), (pick / scheds.len() / 2 % 3) as i64)];
        if let Err(e) = Simulator::new(wl.clone(), c.clone()) {
            prop_assert!(!e.to_string().is_empty());
            return Ok(());
        }
        let trace = run_checked(&wl, c.clone(), cpus)?;
        for rec in &trace.records {
            if let TraceEvent::Switch { next: Some(n), .. } = rec.ev {
                if let Some(aff) = &wl.tasks[n].attrs.cpus {
                    prop_assert!(aff.contains(&rec.cpu), "{}: affinity", sched);
                }
            }
        }
        let again = schedlab_core::simulate("prop", &text, c).expect("runs");
        prop_assert_eq!(ftrace::render(&trace), ftrace::render(&again.trace.expect("trace")));
    }

    /// The same invariants under Project C's BMQ and PDS (policy/projc.rs),
    /// with SMT siblings, every yield type and CPU hotplug in turn, and
    /// the same trace twice.
    #[test]
    fn projc_invariants_hold((text, cpus, _) in workload(), opt in 0usize..24) {
        let wl = Workload::from_rtapp("prop", &text).expect("generated workload parses");
        let mut c = config(["bmq", "pds", "bmq-6.12", "pds-6.12"][opt % 4], cpus);
        if cpus % 2 == 0 && opt / 4 % 2 == 1 {
            c.smt = 2;
        }
        c.set = vec![("yield_type".into(), (opt / 8 % 3) as i64)];
        let hot = cpus >= 2 && opt % 3 == 0;
        if hot {
            c.hotplug = hotplug::parse("0.3=-1,0.6=+1").expect("plan");
        }
        let trace = run_checked(&wl, c.clone(), cpus)?;
        for rec in &trace.records {
            if let TraceEvent::Switch { next: Some(n), .. } = rec.ev {
                if let Some(aff) = &wl.tasks[n].attrs.cpus {
                    if !hot {
                        prop_assert!(aff.contains(&rec.cpu));
                    }
                }
                let offline = hot && rec.ts > 300_000_000 && rec.ts < 600_000_000;
                prop_assert!(!(offline && rec.cpu == 1), "ran on offline CPU 1");
            }
        }
        let again = schedlab_core::simulate("prop", &text, c).expect("runs");
        prop_assert_eq!(ftrace::render(&trace), ftrace::render(&again.trace.expect("trace")));
    }

    /// CacULE and TT (fair-class queue-ordering hooks, their own pick,
    /// tick and balancer) under the same checks, sometimes with OS noise
    /// and CPU hotplug; deterministic.
    #[test]
    fn invariants_hold_cacule_tt((text, cpus, _kind) in workload(), opt in 0usize..8) {
        let wl = Workload::from_rtapp("prop", &text).expect("generated workload parses");
        let mut c = config(["cacule", "tt"][opt % 2], cpus);
        if opt / 2 % 2 == 1 {
            c.set = vec![("noise_interval_us".into(), 7_000)];
        }
        let hot = cpus >= 2 && opt / 4 % 2 == 1;
        if hot {
            c.hotplug = hotplug::parse("0.3=-1,0.6=+1").expect("plan");
        }
        let trace = run_checked(&wl, c.clone(), cpus)?;
        // Affinity holds (hotplug may break it: a task whose CPUs are all
        // offline runs elsewhere).
        for rec in trace.records.iter().filter(|_| !hot) {
            if let TraceEvent::Switch { next: Some(n), .. } = rec.ev {
                // Noise threads come after the workload's tasks.
                if let Some(aff) = wl.tasks.get(n).and_then(|t| t.attrs.cpus.as_ref()) {
                    prop_assert!(aff.contains(&rec.cpu));
                }
            }
        }
        let again = schedlab_core::simulate("prop", &text, c).expect("runs");
        prop_assert_eq!(ftrace::render(&trace), ftrace::render(&again.trace.expect("trace")));
    }


    /// BORE in both generations (`bore` on EEVDF, `bore-1.7` on CFS, picked
    /// by the workload's CFS flag), with noise threads (its kernel threads)
    /// and hotplug: every invariant holds and runs are deterministic.
    #[test]
    fn invariants_hold_under_bore((text, cpus, kind) in workload(), opt in 0usize..4) {
        let wl = Workload::from_rtapp("prop", &text).expect("generated workload parses");
        let mut c = config(if kind == "cfs" { "bore-1.7" } else { "bore" }, cpus);
        if opt % 2 == 1 {
            c.set = vec![("noise_interval_us".into(), 7_000)];
        }
        if cpus >= 2 && opt >= 2 {
            c.hotplug = hotplug::parse("0.3=-1,0.6=+1").expect("plan");
        }
        let trace = run_checked(&wl, c.clone(), cpus)?;
        let again = schedlab_core::simulate("prop", &text, c).expect("runs");
        prop_assert_eq!(ftrace::render(&trace), ftrace::render(&again.trace.expect("trace")));
    }


    #[test]
    fn same_seed_same_trace((text, cpus, kind) in workload()) {
        let a = schedlab_core::simulate("p", &text, config(kind, cpus)).expect("runs");
        let b = schedlab_core::simulate("p", &text, config(kind, cpus)).expect("runs");
        let (ta, tb) = (a.trace.expect("trace"), b.trace.expect("trace"));
        prop_assert_eq!(ftrace::render(&ta), ftrace::render(&tb));
        prop_assert_eq!(perfetto::encode(&ta), perfetto::encode(&tb));
        // With OS noise the seeded RNG is drawn from: still one seed, one trace.
        let noisy = || SimConfig {
            set: vec![("noise_interval_us".into(), 3_000)],
            seed: 7,
            ..config(kind, cpus)
        };
        let a = schedlab_core::simulate("p", &text, noisy()).expect("runs");
        let b = schedlab_core::simulate("p", &text, noisy()).expect("runs");
        let (ta, tb) = (a.trace.expect("trace"), b.trace.expect("trace"));
        prop_assert_eq!(ftrace::render(&ta), ftrace::render(&tb));
    }
}
