//! Runs whose class stack the caller builds instead of a registry entry:
//! a policy that cannot be a `fn` pointer in the registry because it holds
//! a value made at run time (a Python object hosted in the ext class by
//! crates/schedlab-py/src/policy.rs). Everything else about the run
//! (machine, workload, tunables, metrics) is as for a registered
//! scheduler; `SimConfig::scheduler` is only the name the metrics show.

use super::{SimError, Simulator};
use crate::class::stack::Stack;
use crate::config::SimConfig;
use crate::plugin::{SchedulerDef, StackCtx};
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
