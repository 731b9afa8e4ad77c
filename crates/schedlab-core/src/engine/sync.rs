//! rt-app synchronisation resources: mutexes, condition variables,
//! barriers, suspend queues and shared timers.
//!
//! Resources are numbered once, at setup: the flat programs
//! (engine/program.rs) hold each event's resource id, so a step indexes
//! plain vectors. Why: wakeup-heavy workloads (a message thread
//! signalling its workers) took a mutex, a condition and an unlock per
//! wakeup, each a string-keyed map lookup (and the wait a string copy),
//! about a tenth of a run. Reports walk the resources in name order
//! ([`SyncState::by_name`]), so ids never reach output.

use crate::clock::Ns;
use crate::task::TaskId;
use crate::workload::Name;
use std::collections::{BTreeMap, VecDeque};

/// A futex-style mutex: unlock wakes one waiter, which retries the lock
/// when it runs (no hand-off, as with glibc's default mutex).
#[derive(Debug, Clone, Default)]
pub struct Mutex {
    /// Holder.
    pub owner: Option<TaskId>,
    /// Blocked lockers, FIFO.
    pub waiters: VecDeque<TaskId>,
}

/// A barrier of `parties` threads.
#[derive(Debug, Clone, Default)]
pub struct Barrier {
    /// Threads that must arrive.
    pub parties: usize,
    /// Threads waiting.
    pub waiting: Vec<TaskId>,
}

/// All resources of a run, by resource id (one id per distinct name; a
/// mutex and a condition of the same name share it, in separate tables).
#[derive(Debug, Clone, Default)]
pub struct SyncState {
    /// Id by name.
    ids: BTreeMap<Name, usize>,
    /// Mutexes by id.
    pub mutexes: Vec<Mutex>,
    /// Condition variable waiters by id.
    pub conds: Vec<VecDeque<TaskId>>,
    /// Barriers by id.
    pub barriers: Vec<Barrier>,
    /// Suspended threads by id.
    pub suspended: Vec<Vec<TaskId>>,
    /// Shared timers' next activation, by timer number
    /// (`Programs::timer_names`); per-thread timers are the task's.
    pub timers: Vec<Option<Ns>>,
}

impl SyncState {
    /// The id of resource `n`, numbering it if new (at setup: a step uses
    /// the id its program holds).
    pub fn id(&mut self, n: &Name) -> usize {
        if let Some(id) = self.ids.get(n) {
            return *id;
        }
        let id = self.ids.len();
        self.ids.insert(n.clone(), id);
        self.mutexes.push(Mutex::default());
        self.conds.push(VecDeque::new());
        self.barriers.push(Barrier::default());
        self.suspended.push(Vec::new());
        id
    }

    /// (name, id) of every resource, in name order (reports).
    pub fn by_name(&self) -> impl Iterator<Item = (&str, usize)> + '_ {
        self.ids.iter().map(|(n, id)| (&**n, *id))
    }
}
