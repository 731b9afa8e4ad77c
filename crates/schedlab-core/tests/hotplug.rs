//! CPU hotplug (engine/hotplug.rs).

mod common;
use common::{cfg, run};

use schedlab_core::engine::hotplug;

use schedlab_core::trace::TraceEvent;

/// 4 hogs on 4 CPUs; CPU 3 is offline from 1 s to 2 s of 3 s: nothing runs
/// there meanwhile, the others stay busy, and it is used again afterwards.
#[test]
fn an_offline_cpu_runs_nothing() {
    let wl = r#"{"global": {"duration": 3}, "tasks": {"h": {"instance": 4, "run": 1000000}}}"#;
    for kind in ["eevdf", "cfs"] {
        let mut c = cfg(kind, 4);
        c.hotplug = hotplug::parse("1=-3,2=+3").expect("plan");
        c.trace = true;
        let r = run(wl, c);
        let cpu3 = &r.metrics.cpu[3];
        // Back online, it idles until its next balance pulls a task (a few ticks).
        assert!(
            (cpu3.busy_us - 2_000_000.0).abs() < 25_000.0,
            "{kind:?} {}",
            cpu3.busy_us
        );
        let total: f64 = r.metrics.tasks.iter().map(|t| t.cpu_time_us).sum();
        assert!((total - 11_000_000.0).abs() < 25_000.0, "{kind:?} {total}");
        let trace = r.trace.expect("trace");
        for rec in &trace.records {
            if let TraceEvent::Switch { next: Some(_), .. } = rec.ev {
                let t = rec.ts;
                assert!(
                    !(rec.cpu == 3 && t > 1_000_000_000 && t < 2_000_000_000),
                    "{kind:?}: a task switched in on offline CPU 3 at {t}"
                );
            }
        }
    }
}

/// DW-CFS recomputes weights with the online CPU count: A against a
/// 4-thread B on 4 CPUs of which 2 go offline at once behaves like the
/// 2-CPU fluid ideal (A gets 0.419 CPUs, α(4, 2) = 0.943 instead of
/// α(4, 4) = 1.1).
#[test]
fn dwcfs_follows_the_online_cpu_count() {
    let wl = r#"{"global": {"duration": 60}, "tasks": {"A": {"run": 1000000},
        "B": {"instance": 4, "run": 1000000}}}"#;
    let mut c = cfg("cfs", 4);
    c.scheduler = common::with_policy(&c.scheduler, "dwcfs");
    c.hotplug = hotplug::parse("0.001=-2,0.001=-3").expect("plan");
    c.set = vec![("noise_interval_us".into(), 20_000)];
    let r = run(wl, c);
    let a = r
        .metrics
        .tasks
        .iter()
        .find(|t| t.task == "A")
        .map_or(0.0, |t| t.cpu_share);
    assert!((a / 0.419 - 1.0).abs() < 0.03, "A {a}");
}

#[test]
fn impossible_plans_are_config_errors() {
    let wl = r#"{"global": {"duration": 1}, "tasks": {"h": {"run": 1000}}}"#;
    let mut c = cfg("eevdf", 2);
    c.hotplug = hotplug::parse("0.5=-0,0.6=-1").expect("plan");
    let e = schedlab_core::simulate("w.json", wl, c)
        .expect_err("refused")
        .to_string();
    assert!(e.contains("no CPU would be online"), "{e}");
}
