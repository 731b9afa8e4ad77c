//! The registry: every scheduler, fair-class policy and SCHED_DEADLINE
//! ordering the simulator knows, one line each (declarations in
//! plugin.rs). Adding a scheduler is one file plus one line here.
//!
//! Names are resolved here and nowhere else: the CLI, the Python API,
//! `schedlab schedulers` and the docs all list what these tables hold.

use crate::class::dl::{Dl, Edf};
use crate::class::ext::{ExtClass, ExtOps, ExtParams};
use crate::class::fair::hooks::{FairHooks, NoHooks};
use crate::class::fair::tunables::{FairParams, Version, CFS_TUNABLES, EEVDF_TUNABLES};
use crate::class::fair::Fair;
use crate::class::rt::{Rt, RtParams};
use crate::class::stack::{ServerSpec, Stack};
use crate::config::ENGINE_TUNABLES;
use crate::plugin::{DlOrderDef, FairPolicyDef, SchedulerDef, StackCtx};
use crate::policy;
use crate::tunable::{Tunable, TunableSet};
use crate::workload::Policy;

/// Every scheduler, default first.
pub static SCHEDULERS: &[SchedulerDef] = &[
    EEVDF,
    CFS,
    EEVDF_618,
    policy::scx_simple::DEF,
    policy::scx_bmq::DEF,
    policy::scx_pds::DEF,
    policy::bfs::DEF,
    policy::muqss::DEF,
    policy::baby::DEF,
    policy::bmq::DEF,
    policy::pds::DEF,
    policy::bmq::DEF_6_12,
    policy::pds::DEF_6_12,
    policy::cacule::DEF,
    policy::tt::DEF,
    policy::bore_eevdf::DEF,
    policy::bore_cfs::DEF,
];

/// Every fair-class policy (`+NAME`).
pub static FAIR_POLICIES: &[FairPolicyDef] =
    &[policy::pfs::DEF, policy::dwcfs::DEF, policy::tsf::DEF];

/// Every SCHED_DEADLINE ordering (`--dl-policy`), default first.
pub static DL_ORDERS: &[DlOrderDef] = &[EDF, policy::llf::DEF, policy::illf::DEF];

const EEVDF: SchedulerDef = SchedulerDef {
    name: "eevdf",
    description: "Linux 6.12 fair class: EEVDF with lag, eligibility, virtual deadlines, RUN_TO_PARITY and delayed dequeue (default)",
    source: "linux-eevdf.md, linux-smp.md, linux-rt-dl.md; kernel/sched/{fair,rt,deadline}.c",
    version: "6.12",
    classes: &["dl", "rt", "fair"],
    tunables: EEVDF_TUNABLES,
    fair_policies: true,
    dl_orders: true,
    build: |ctx| mainline(ctx, Version::Eevdf),
};

const CFS: SchedulerDef = SchedulerDef {
    name: "cfs",
    description: "Linux 6.1 fair class: CFS with sched_period/sched_slice, wakeup granularity, buddies and sleeper credit",
    source: "linux-cfs.md, linux-smp.md, linux-rt-dl.md; kernel/sched/{fair,rt,deadline}.c",
    version: "6.1",
    classes: &["dl", "rt", "fair"],
    tunables: CFS_TUNABLES,
    fair_policies: true,
    dl_orders: true,
    build: |ctx| mainline(ctx, Version::Cfs),
};

const EEVDF_618: SchedulerDef = SchedulerDef {
    name: "eevdf-6.18",
    description: "Linux 6.18 fair class: EEVDF with 6.17+ slice protection (vprot, min queued slice), resched once unprotected, PREEMPT_SHORT as a one-pick override, PICK_BUDDY in pick_eevdf, max-slice + tick lag clamp",
    source: "shootout.md §5.3, §5.5 (6.18.38 fair.c excerpts, LKML 6.17 series); linux-smp.md, linux-rt-dl.md",
    version: "6.18",
    classes: &["dl", "rt", "fair"],
    tunables: EEVDF_TUNABLES,
    fair_policies: true,
    dl_orders: true,
    build: |ctx| mainline_stack_rules(ctx, Version::Eevdf, fair_hooks(ctx), true),
};

const EDF: DlOrderDef = DlOrderDef {
    name: "edf",
    description: "earliest deadline first: the kernel's SCHED_DEADLINE, global by push/pull",
    source: "linux-rt-dl.md §6; kernel/sched/deadline.c",
    tunables: &[],
    order: |_| Box::new(Edf),
};

/// The fair-class hooks a run asked for with `+NAME` (the kernel's when none).
fn fair_hooks(ctx: &StackCtx) -> Box<dyn FairHooks> {
    match ctx.fair_policy {
        Some(p) => (p.hooks)(ctx.tunables),
        None => Box::new(NoHooks),
    }
}

/// Mainline Linux: dl, rt, fair (and idle: "no task"), with 6.12's fair
/// server on EEVDF and 6.1's RT throttling on CFS.
fn mainline(ctx: &StackCtx, version: Version) -> Result<Stack, String> {
    mainline_stack(ctx, version, fair_hooks(ctx))
}

/// Mainline's stack with the fair class patched by `hooks` (for hooks made
/// outside the registry: tests and bridges, through `Simulator::with_stack`).
pub fn mainline_stack(
    ctx: &StackCtx,
    version: Version,
    hooks: Box<dyn FairHooks>,
) -> Result<Stack, String> {
    mainline_stack_rules(ctx, version, hooks, false)
}

/// [`mainline_stack`], with the EEVDF rules of 6.17/6.18 when `rules_618`.
pub fn mainline_stack_rules(
    ctx: &StackCtx,
    version: Version,
    hooks: Box<dyn FairHooks>,
    rules_618: bool,
) -> Result<Stack, String> {
    let m = ctx.m;
    let mut s = Stack::new();
    // Without RT tasks the fair server never activates (fair tasks
    // deplete it first), so it is only instantiated when RT tasks can exist.
    let server = version == Version::Eevdf && ctx.wl.uses_rt();
    let dl = Dl::new(m, (ctx.dl_order.order)(ctx.tunables), server);
    let dl_idx = s.push(Box::new(dl), &[Policy::Deadline]);
    let rt = RtParams {
        // 6.1 throttles RT per CPU; 6.12 has the fair server instead.
        throttling: version == Version::Cfs,
        ..RtParams::default()
    };
    let rt_idx = s.push(Box::new(Rt::new(rt, m)), &[Policy::Fifo, Policy::Rr]);
    let mut params = FairParams::new(version, ctx.tunables, m.nr_cpus());
    params.rules_618 = rules_618 && version == Version::Eevdf;
    // With no sched_ext policy loaded, SCHED_EXT tasks run in the fair
    // class (6.12 `__setscheduler_class`); 6.1 has no SCHED_EXT.
    let fair_takes: &[Policy] = match version {
        Version::Eevdf => &[Policy::Other, Policy::Batch, Policy::Idle, Policy::Ext],
        Version::Cfs => &[Policy::Other, Policy::Batch, Policy::Idle],
    };
    let fair = s.push(Box::new(Fair::new(params, m, hooks)), fair_takes);
    s.set_fallback(fair);
    if version == Version::Eevdf {
        s.server_bandwidth = true;
        if server {
            s.server = Some(ServerSpec {
                host: dl_idx,
                served: fair,
                over: vec![rt_idx],
            });
        }
    }
    if version == Version::Cfs && uses_custom_slice(ctx) {
        s.warnings.push(
            "dl-runtime on a fair policy requests a custom slice, which Linux 6.1 (cfs) ignores"
                .into(),
        );
    }
    Ok(s)
}

/// Linux 6.12 with sched_ext policy `ops` loaded: dl, rt, fair (EEVDF,
/// with its fair server when RT tasks can exist), ext. The ext class takes
/// SCHED_EXT, and SCHED_OTHER/BATCH/IDLE too unless the policy sets
/// `SCX_OPS_SWITCH_PARTIAL` (`task_should_scx`); fair takes the rest and is
/// the fallback when the policy is disabled (`scx_disable_workfn`).
pub fn sched_ext<P: ExtOps + 'static>(ctx: &StackCtx, ops: P) -> Result<Stack, String> {
    let m = ctx.m;
    let mut s = Stack::new();
    let server = ctx.wl.uses_rt();
    let dl = Dl::new(m, (ctx.dl_order.order)(ctx.tunables), server);
    let dl_idx = s.push(Box::new(dl), &[Policy::Deadline]);
    let rt = RtParams {
        throttling: false,
        ..RtParams::default()
    };
    let rt_idx = s.push(Box::new(Rt::new(rt, m)), &[Policy::Fifo, Policy::Rr]);
    let params = FairParams::new(Version::Eevdf, ctx.tunables, m.nr_cpus());
    let hooks = fair_hooks(ctx);
    let ext = ExtClass::new(ops, ExtParams::from_tunables(ctx.tunables), m);
    let normal = [Policy::Other, Policy::Batch, Policy::Idle, Policy::Ext];
    let ext_takes: Vec<Policy> = normal.into_iter().filter(|p| ext.accepts(*p)).collect();
    let fair_takes: Vec<Policy> = normal.into_iter().filter(|p| !ext.accepts(*p)).collect();
    let fair = s.push(Box::new(Fair::new(params, m, hooks)), &fair_takes);
    s.push(Box::new(ext), &ext_takes);
    s.set_fallback(fair);
    s.server_bandwidth = true;
    if server {
        s.server = Some(ServerSpec {
            host: dl_idx,
            served: fair,
            over: vec![rt_idx],
        });
    }
    Ok(s)
}

fn uses_custom_slice(ctx: &StackCtx) -> bool {
    ctx.wl.tasks.iter().any(|t| {
        t.attrs.dl_runtime.is_some() || t.phases.iter().any(|p| p.attrs.dl_runtime.is_some())
    })
}

/// A run's scheduler, policies and tunables, resolved from names.
pub struct Resolved {
    /// The scheduler.
    pub scheduler: &'static SchedulerDef,
    /// The fair-class policy after `+`, if any.
    pub fair_policy: Option<&'static FairPolicyDef>,
    /// The SCHED_DEADLINE ordering.
    pub dl_order: &'static DlOrderDef,
    /// Defaults of every tunable that applies, with the overrides.
    pub tunables: TunableSet,
}

fn names<T>(xs: &[T], name: fn(&T) -> &'static str) -> String {
    xs.iter().map(name).collect::<Vec<_>>().join(", ")
}

/// The scheduler named `scheduler` (`base` or `base+policy`), the
/// SCHED_DEADLINE ordering named `dl_order`, and the tunables with the
/// `--set` overrides. Unknown names are errors listing the known ones.
pub fn resolve(
    scheduler: &str,
    dl_order: &str,
    overrides: &[(String, i64)],
) -> Result<Resolved, String> {
    let (base, plus) = match scheduler.split_once('+') {
        None => (scheduler, None),
        Some((b, p)) => (b, Some(p)),
    };
    let sched = SCHEDULERS.iter().find(|s| s.name == base).ok_or_else(|| {
        format!(
            "unknown scheduler \"{scheduler}\"; expected one of: {}, optionally with +{}",
            names(SCHEDULERS, |s| s.name),
            FAIR_POLICIES
                .iter()
                .map(|p| p.name)
                .collect::<Vec<_>>()
                .join(" or +")
        )
    })?;
    let fair = match plus {
        None => None,
        Some(p) => {
            let def = FAIR_POLICIES.iter().find(|d| d.name == p).ok_or_else(|| {
                format!(
                    "unknown fair-class policy \"+{p}\" in \"{scheduler}\"; expected one of: {}",
                    names(FAIR_POLICIES, |d| d.name)
                )
            })?;
            if !sched.fair_policies {
                return Err(format!(
                    "scheduler {base} has no fair class, so \"+{p}\" cannot patch it"
                ));
            }
            Some(def)
        }
    };
    resolve_with(sched, fair, base, scheduler, dl_order, overrides)
}

/// The rest of [`resolve`] once the scheduler (`base`, named `scheduler`
/// with its `+policy`) and its fair-class policy are known: the
/// SCHED_DEADLINE ordering and the tunables. Also for schedulers outside
/// the registry (engine/custom.rs).
pub fn resolve_with(
    sched: &'static SchedulerDef,
    fair: Option<&'static FairPolicyDef>,
    base: &str,
    scheduler: &str,
    dl_order: &str,
    overrides: &[(String, i64)],
) -> Result<Resolved, String> {
    let dl = DL_ORDERS
        .iter()
        .find(|d| d.name == dl_order)
        .ok_or_else(|| {
            format!(
                "unknown dl-policy \"{dl_order}\"; expected one of: {}",
                names(DL_ORDERS, |d| d.name)
            )
        })?;
    if !sched.dl_orders && dl.name != DL_ORDERS[0].name {
        return Err(format!(
            "scheduler {base} has no deadline class, so --dl-policy {} does not apply",
            dl.name
        ));
    }
    let specs: Vec<&Tunable> = sched
        .tunables
        .iter()
        .chain(fair.map_or(&[][..], |f| f.tunables))
        .chain(dl.tunables)
        .chain(ENGINE_TUNABLES)
        .collect();
    let tunables = TunableSet::resolve(&specs, overrides, &format!("scheduler {scheduler}"))?;
    Ok(Resolved {
        scheduler: sched,
        fair_policy: fair,
        dl_order: dl,
        tunables,
    })
}
