//! The workload's programs laid out flat for the event loop: every task
//! object's loop count and phases, every phase's loop count and events, in
//! three dense arrays built once per run.
//!
//! Why: each step of a task reads its current event. Through the parsed
//! workload that is three allocations apart (the task object, its phase
//! list, the phase's event list), which at 10,000 task objects are cold in
//! the cache at every step (the top of the 256-CPU profile). The flat
//! tables hold the same values; `Simulator::current_event` reads them
//! instead. Phase attributes, applied only on a phase change, are still
//! read from the workload.

use crate::workload::{Event, Workload};

/// One task object's program.
#[derive(Debug, Clone, Copy)]
pub(crate) struct DefProgram {
    /// `loops` of the task object (None: forever).
    pub loops: Option<u64>,
    /// Its first phase in [`Programs::phases`].
    pub first_phase: usize,
    /// Number of phases (at least 1).
    pub phases: usize,
}

/// One phase.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PhaseProgram {
    /// Repetitions (>= 1).
    pub loops: u64,
    /// Its first event in [`Programs::events`].
    pub first_event: usize,
    /// Number of events.
    pub events: usize,
}

/// Every program of a run.
#[derive(Debug, Clone, Default)]
pub(crate) struct Programs {
    pub defs: Vec<DefProgram>,
    pub phases: Vec<PhaseProgram>,
    pub events: Vec<Event>,
}

impl Programs {
    /// The flat copy of `wl`'s programs.
    pub fn of(wl: &Workload) -> Programs {
        let mut p = Programs::default();
        for d in &wl.tasks {
            p.defs.push(DefProgram {
                loops: d.loops,
                first_phase: p.phases.len(),
                phases: d.phases.len(),
            });
            for ph in &d.phases {
                p.phases.push(PhaseProgram {
                    loops: ph.loops,
                    first_event: p.events.len(),
                    events: ph.events.len(),
                });
                p.events.extend(ph.events.iter().cloned());
            }
        }
        p
    }

    /// Phase `phase` of task object `def`.
    #[inline]
    pub fn phase(&self, def: usize, phase: usize) -> &PhaseProgram {
        &self.phases[self.defs[def].first_phase + phase]
    }

    /// Event `event` of `ph`.
    #[inline]
    pub fn event(&self, ph: &PhaseProgram, event: usize) -> &Event {
        &self.events[ph.first_event + event]
    }
}
