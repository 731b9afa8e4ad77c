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
//!
//! Each event is kept as an [`Op`]: the event with its names resolved once
//! (sync resources to their ids, timers to their numbers, fork targets to
//! their task objects), so a step copies a few words instead of cloning
//! the event (a reference count per name, an allocation per timer name)
//! and looking its names up again.

use super::sync::SyncState;
use crate::clock::Ns;
use crate::workload::{Event, TimerMode, Workload};

/// An event of a program with its names resolved (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    /// `Event::Run`.
    Run(Ns),
    /// `Event::Runtime`.
    Runtime(Ns),
    /// `Event::Sleep`.
    Sleep(Ns),
    /// `Event::SleepAbout`.
    SleepAbout(Ns),
    /// `Event::Timer`: `timer` numbers its name in [`Programs::timer_names`];
    /// `own` when the name gives one timer per thread (`unique*`).
    Timer {
        timer: u32,
        own: bool,
        period: Ns,
        mode: TimerMode,
    },
    /// `Event::Yield`.
    Yield,
    /// `Event::Lock`, by sync resource id.
    Lock(usize),
    /// `Event::Unlock`.
    Unlock(usize),
    /// `Event::Wait`.
    Wait { cond: usize, mutex: usize },
    /// `Event::Signal`.
    Signal(usize),
    /// `Event::Broad`.
    Broad(usize),
    /// `Event::Barrier`.
    Barrier(usize),
    /// `Event::Suspend`.
    Suspend(usize),
    /// `Event::Resume`.
    Resume(usize),
    /// `Event::Fork`: the task object named (None only for a name the
    /// parser would have refused: the fork does nothing).
    Fork(Option<usize>),
}

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
    pub events: Vec<Op>,
    /// Timer names by number (`Op::Timer`).
    pub timer_names: Vec<String>,
}

impl Programs {
    /// The flat copy of `wl`'s programs, their resource names numbered
    /// by `sync`.
    pub fn of(wl: &Workload, sync: &mut SyncState) -> Programs {
        // Sized once: grown by doubling they left up to half unused (issue
        // 18's bytes per task, with one program per task object).
        let phases = wl.tasks.iter().map(|d| d.phases.len()).sum();
        let events = wl
            .tasks
            .iter()
            .flat_map(|d| &d.phases)
            .map(|ph| ph.events.len())
            .sum();
        let mut p = Programs {
            defs: Vec::with_capacity(wl.tasks.len()),
            phases: Vec::with_capacity(phases),
            events: Vec::with_capacity(events),
            timer_names: vec![],
        };
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
                for e in &ph.events {
                    let op = p.op(wl, sync, e);
                    p.events.push(op);
                }
            }
        }
        p
    }

    fn op(&mut self, wl: &Workload, sync: &mut SyncState, e: &Event) -> Op {
        match e {
            Event::Run(ns) => Op::Run(*ns),
            Event::Runtime(ns) => Op::Runtime(*ns),
            Event::Sleep(ns) => Op::Sleep(*ns),
            Event::SleepAbout(ns) => Op::SleepAbout(*ns),
            Event::Timer { name, period, mode } => {
                let timer = match self.timer_names.iter().position(|n| n == name) {
                    Some(i) => i,
                    None => {
                        self.timer_names.push(name.clone());
                        self.timer_names.len() - 1
                    }
                };
                Op::Timer {
                    timer: timer as u32,
                    own: name.starts_with("unique"),
                    period: *period,
                    mode: *mode,
                }
            }
            Event::Yield => Op::Yield,
            Event::Lock(n) => Op::Lock(sync.id(n)),
            Event::Unlock(n) => Op::Unlock(sync.id(n)),
            Event::Wait { cond, mutex } => Op::Wait {
                cond: sync.id(cond),
                mutex: sync.id(mutex),
            },
            Event::Signal(n) => Op::Signal(sync.id(n)),
            Event::Broad(n) => Op::Broad(sync.id(n)),
            Event::Barrier(n) => Op::Barrier(sync.id(n)),
            Event::Suspend(n) => Op::Suspend(sync.id(n)),
            Event::Resume(n) => Op::Resume(sync.id(n)),
            Event::Fork(n) => Op::Fork(wl.tasks.iter().position(|d| *d.name == **n)),
        }
    }

    /// Phase `phase` of task object `def`.
    #[inline]
    pub fn phase(&self, def: usize, phase: usize) -> &PhaseProgram {
        &self.phases[self.defs[def].first_phase + phase]
    }

    /// Event `event` of `ph`.
    #[inline]
    pub fn event(&self, ph: &PhaseProgram, event: usize) -> Op {
        self.events[ph.first_event + event]
    }
}
