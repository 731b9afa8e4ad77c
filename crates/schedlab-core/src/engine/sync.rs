//! rt-app synchronisation resources: mutexes, condition variables,
//! barriers, suspend queues and shared timers. All maps are ordered so
//! iteration never depends on hashing.

use crate::clock::Ns;
use crate::task::TaskId;
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

/// All resources of a run.
#[derive(Debug, Clone, Default)]
pub struct SyncState {
    /// Mutexes by name.
    pub mutexes: BTreeMap<String, Mutex>,
    /// Condition variable waiters by name.
    pub conds: BTreeMap<String, VecDeque<TaskId>>,
    /// Barriers by name.
    pub barriers: BTreeMap<String, Barrier>,
    /// Suspended threads by name.
    pub suspended: BTreeMap<String, Vec<TaskId>>,
    /// Shared timers: next activation.
    pub timers: BTreeMap<String, Ns>,
}

impl SyncState {
    /// The mutex `name`, created unlocked on first use. The name is copied
    /// only then: a lock or unlock is a lookup, not an allocation.
    pub fn mutex(&mut self, name: &str) -> &mut Mutex {
        if !self.mutexes.contains_key(name) {
            self.mutexes.insert(name.to_string(), Mutex::default());
        }
        self.mutexes
            .get_mut(name)
            .unwrap_or_else(|| unreachable!("just inserted"))
    }
}
