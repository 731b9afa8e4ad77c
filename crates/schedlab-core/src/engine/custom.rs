//! Runs whose class stack the caller builds instead of a registry entry:
//! a policy that cannot be a `fn` pointer in the registry because it holds
//! a value made at run time (a Python object hosted in the ext class by
//! crates/schedlab-py/src/policy.rs). Everything else about the run
//! (machine, workload, tunables, metrics) is as for a registered
//! scheduler; `SimConfig::scheduler` is only the name the metrics show.

use super::{SimError, Simulator};
use crate::class::stack::Stack;
use crate::config::{SimConfig, ENGINE_TUNABLES};
use crate::plugin::{SchedulerDef, StackCtx};
use crate::registry::{Resolved, DL_ORDERS};
use crate::tunable::{Tunable, TunableSet};
use crate::workload::Workload;

/// Builds a run's class stack from what the registry's builders get.
pub type BuildStack<'a> = Box<dyn FnOnce(&StackCtx) -> Result<Stack, String> + 'a>;

/// A class stack built by the caller.
pub struct CustomStack<'a> {
    /// Declares the run's tunables (with `--dl-policy` and the engine's)
    /// and whether `--dl-policy` applies; its `build` is not called.
    pub def: &'static SchedulerDef,
    /// Builds the stack (called once, like `SchedulerDef::build`).
    pub build: BuildStack<'a>,
}

impl Simulator {
    /// Like [`Simulator::new`], with the class stack from `custom`.
    pub fn with_stack(
        wl: Workload,
        cfg: SimConfig,
        custom: CustomStack<'_>,
    ) -> Result<Self, SimError> {
        Self::build(wl, cfg, Some(custom))
    }
}

/// The registry's `resolve` for a scheduler that is not in the registry
/// (no `+policy`: a custom stack names no fair-class hooks).
pub(super) fn resolve(
    def: &'static SchedulerDef,
    scheduler: &str,
    dl_order: &str,
    overrides: &[(String, i64)],
) -> Result<Resolved, String> {
    let dl = DL_ORDERS
        .iter()
        .find(|d| d.name == dl_order)
        .ok_or_else(|| {
            let known: Vec<&str> = DL_ORDERS.iter().map(|d| d.name).collect();
            format!(
                "unknown dl-policy \"{dl_order}\"; expected one of: {}",
                known.join(", ")
            )
        })?;
    if !def.dl_orders && dl.name != DL_ORDERS[0].name {
        return Err(format!(
            "scheduler {scheduler} has no deadline class, so --dl-policy {} does not apply",
            dl.name
        ));
    }
    let specs: Vec<&Tunable> = def
        .tunables
        .iter()
        .chain(dl.tunables)
        .chain(ENGINE_TUNABLES)
        .collect();
    let tunables = TunableSet::resolve(&specs, overrides, &format!("scheduler {scheduler}"))?;
    Ok(Resolved {
        scheduler: def,
        fair_policy: None,
        dl_order: dl,
        tunables,
    })
}
