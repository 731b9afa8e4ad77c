//! The class stack as data: the classes of a scheduler in priority order
//! (the kernel's linker-section order, `for_each_class`), which class
//! takes each `SCHED_*` policy, which class takes over when a class is
//! disabled, and whether a deadline server serves a class (6.12's
//! `fair_server`). Built by the scheduler's entry in the registry
//! (registry.rs); the engine only walks it.

use super::SchedClass;
use crate::workload::Policy;

/// Policies are indexed by their position in the `Policy` enum; the kernel
/// numbers them 0..=7, so 8 slots hold every policy there can be.
const POLICY_SLOTS: usize = 8;

/// A deadline server (`sched_dl_entity` with `dl_server` set), an entity
/// of the class `host`, that guarantees the class `served` a bandwidth
/// share against the classes `over` (6.12: the fair server, an entity of
/// the deadline class, against RT; class/dl/server.rs).
#[derive(Debug, Clone)]
pub struct ServerSpec {
    /// Position of the class holding the server entities (dl).
    pub host: usize,
    /// Position of the served class in the stack.
    pub served: usize,
    /// Positions of the classes whose queued work keeps the server active
    /// after a replenishment (RT in mainline).
    pub over: Vec<usize>,
}

/// The classes of one run, highest priority first.
pub struct Stack {
    classes: Vec<Box<dyn SchedClass>>,
    class_for: [Option<usize>; POLICY_SLOTS],
    fallback: Option<usize>,
    /// The deadline server, if the scheduler has one and the run needs it.
    pub server: Option<ServerSpec>,
    /// Whether the deadline servers' bandwidth (50/1000 per CPU) counts
    /// against SCHED_DEADLINE admission (`dl_b->total_bw`, 6.12), whether
    /// or not the servers are instantiated for this run.
    pub server_bandwidth: bool,
    /// Whether SCHED_DEADLINE tasks pass the root domain's admission
    /// control (`sched_dl_overflow`, engine/bandwidth.rs). A scheduler
    /// whose class takes SCHED_DEADLINE without bandwidth reservation
    /// (Project C, BFS and MuQSS squash it to SCHED_FIFO 99) turns it off.
    pub dl_admission: bool,
    /// Notes for the run's warnings (e.g. a workload key the scheduler
    /// ignores).
    pub warnings: Vec<String>,
}

impl std::fmt::Debug for Stack {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.classes.iter().map(|c| c.name()).collect();
        f.debug_struct("Stack")
            .field("classes", &names)
            .field("class_for", &self.class_for)
            .field("fallback", &self.fallback)
            .field("server", &self.server)
            .finish()
    }
}

fn slot(p: Policy) -> usize {
    p as usize
}

impl Stack {
    /// An empty stack.
    pub fn new() -> Self {
        Stack {
            classes: vec![],
            class_for: [None; POLICY_SLOTS],
            fallback: None,
            server: None,
            server_bandwidth: false,
            dl_admission: true,
            warnings: vec![],
        }
    }

    /// Append `class` below the classes already pushed, taking `policies`
    /// (a policy already taken by a higher class stays there). Returns its
    /// position.
    pub fn push(&mut self, class: Box<dyn SchedClass>, policies: &[Policy]) -> usize {
        let idx = self.classes.len();
        self.classes.push(class);
        for p in policies {
            self.class_for[slot(*p)].get_or_insert(idx);
        }
        idx
    }

    /// Make the class at `idx` the one that takes over the tasks of a
    /// disabled class (the fair class, as when sched_ext is disabled).
    pub fn set_fallback(&mut self, idx: usize) {
        self.fallback = Some(idx);
    }

    /// Position of the class named `name`.
    pub fn position(&self, name: &str) -> Option<usize> {
        self.classes.iter().position(|c| c.name() == name)
    }

    /// Position of the class that runs tasks of `policy`, if any.
    #[inline]
    pub fn class_for(&self, policy: Policy) -> Option<usize> {
        self.class_for[slot(policy)]
    }

    /// Whether the class at `idx` takes some policy (a class every policy
    /// of which went elsewhere, like fair under a switch-all sched_ext
    /// policy, is inactive: `next_active_class`).
    #[inline]
    pub fn is_active(&self, idx: usize) -> bool {
        self.class_for.contains(&Some(idx))
    }

    /// The class at `idx`.
    #[inline]
    pub fn get(&mut self, idx: usize) -> &mut dyn SchedClass {
        self.classes[idx].as_mut()
    }

    /// The class at `idx`, read-only.
    #[inline]
    pub fn get_ref(&self, idx: usize) -> &dyn SchedClass {
        self.classes[idx].as_ref()
    }

    /// Number of classes.
    pub fn len(&self) -> usize {
        self.classes.len()
    }

    /// Whether the stack has no class.
    pub fn is_empty(&self) -> bool {
        self.classes.is_empty()
    }

    /// Every class, highest priority first.
    pub fn iter(&self) -> impl Iterator<Item = &dyn SchedClass> {
        self.classes.iter().map(|c| c.as_ref())
    }

    /// Disable the class at `idx`: every policy it took goes to the
    /// fallback class. Returns the fallback's position, or None if the
    /// stack has none (or the class is the fallback itself).
    pub fn disable(&mut self, idx: usize) -> Option<usize> {
        let fb = self.fallback.filter(|f| *f != idx)?;
        for c in self.class_for.iter_mut() {
            if *c == Some(idx) {
                *c = Some(fb);
            }
        }
        Some(fb)
    }
}

impl Default for Stack {
    fn default() -> Self {
        Self::new()
    }
}
