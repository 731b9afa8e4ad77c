//! What a scheduler or a policy declares about itself: name, source and
//! version, tunables, and how to build it. The registry (registry.rs)
//! lists one declaration per line; `schedlab schedulers [--json]`,
//! `--scheduler`, `--set` validation, the Python API and the docs all read
//! it. Three kinds:
//!
//! * [`SchedulerDef`]: a whole scheduler, i.e. a class stack (mainline's
//!   dl, rt, fair; Project C's one bmq or pds class; a sched_ext policy in
//!   an ext class).
//! * [`FairPolicyDef`]: fair-class hooks (class/fair/hooks.rs) layered on
//!   any scheduler with a fair class, named after a `+` (`eevdf+tsf`).
//! * [`DlOrderDef`]: an ordering of SCHED_DEADLINE tasks (`--dl-policy`).

use crate::class::dl::DlOrder;
use crate::class::fair::hooks::FairHooks;
use crate::class::stack::Stack;
use crate::machine::Machine;
use crate::tunable::{Tunable, TunableSet};
use crate::workload::Workload;
use serde::Serialize;

/// What a stack is built from.
pub struct StackCtx<'a> {
    /// The machine, with its CPUs and task groups (no task yet).
    pub m: &'a Machine,
    /// The workload about to run.
    pub wl: &'a Workload,
    /// Effective tunables of the run.
    pub tunables: &'a TunableSet,
    /// The fair-class policy chosen with `+NAME`, if any.
    pub fair_policy: Option<&'a FairPolicyDef>,
    /// The SCHED_DEADLINE ordering chosen with `--dl-policy`.
    pub dl_order: &'a DlOrderDef,
}

/// How a scheduler builds its class stack for a run.
pub type BuildFn = fn(&StackCtx) -> Result<Stack, String>;

/// A whole scheduler.
#[derive(Serialize)]
pub struct SchedulerDef {
    /// Name used with `--scheduler`.
    pub name: &'static str,
    /// One-line description.
    pub description: &'static str,
    /// What it follows: spec sections, kernel files or patches.
    pub source: &'static str,
    /// Kernel or patch version modelled.
    pub version: &'static str,
    /// Class stack, highest priority first (for listings; `build` makes it).
    pub classes: &'static [&'static str],
    /// Its tunables (engine tunables excluded).
    pub tunables: &'static [Tunable],
    /// Whether `+policy` fair hooks apply (the stack has a fair class).
    pub fair_policies: bool,
    /// Whether `--dl-policy` applies (the stack has a deadline class).
    pub dl_orders: bool,
    /// Build the class stack for a run.
    #[serde(skip)]
    pub build: BuildFn,
}

/// Fair-class hooks, selected with `+NAME`.
#[derive(Serialize)]
pub struct FairPolicyDef {
    /// Name after the `+`.
    pub name: &'static str,
    /// One-line description.
    pub description: &'static str,
    /// What it follows.
    pub source: &'static str,
    /// Its tunables.
    pub tunables: &'static [Tunable],
    /// Make the hooks for a run.
    #[serde(skip)]
    pub hooks: fn(&TunableSet) -> Box<dyn FairHooks>,
}

/// An ordering of SCHED_DEADLINE tasks, selected with `--dl-policy`.
#[derive(Serialize)]
pub struct DlOrderDef {
    /// Name used with `--dl-policy`.
    pub name: &'static str,
    /// One-line description.
    pub description: &'static str,
    /// What it follows.
    pub source: &'static str,
    /// Its tunables.
    pub tunables: &'static [Tunable],
    /// Make the ordering the deadline class applies, for a run's tunables.
    #[serde(skip)]
    pub order: fn(&TunableSet) -> Box<dyn DlOrder>,
}
