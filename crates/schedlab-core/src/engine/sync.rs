//! rt-app synchronisation resources: mutexes, condition variables,
//! barriers, suspend queues and shared timers.
//!
//! Resources are numbered once, at setup ([`SyncState::intern`]): every
//! name an event of the workload gives is replaced by one shared `Rc<str>`
//! per distinct name, and a step finds its resource by that pointer in a
//! small sorted table, then indexes plain vectors. Why: wakeup-heavy
//! workloads (a message thread signalling its workers) took a mutex, a
//! condition and an unlock per wakeup, each a string-keyed map lookup
//! (and the wait a string copy), about a tenth of a run. Reports walk the
//! resources in name order ([`SyncState::by_name`]), as the string-keyed
//! maps did, so nothing that reaches output depends on addresses.

use crate::clock::Ns;
use crate::task::TaskId;
use crate::workload::{Event, Name, Workload};
use std::collections::{BTreeMap, VecDeque};
use std::rc::Rc;

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
    /// Names by id.
    names: Vec<Name>,
    /// Id by name.
    ids: BTreeMap<Name, usize>,
    /// (address of the shared name, id), sorted by address.
    by_ptr: Vec<(usize, usize)>,
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

fn addr(name: &Name) -> usize {
    Rc::as_ptr(name) as *const u8 as usize
}

impl SyncState {
    /// Number the resources `wl`'s events name, replacing each name by the
    /// one shared `Rc` of its text.
    pub fn intern(&mut self, wl: &mut Workload) {
        for t in &mut wl.tasks {
            for ph in &mut t.phases {
                for e in &mut ph.events {
                    match e {
                        Event::Lock(n)
                        | Event::Unlock(n)
                        | Event::Signal(n)
                        | Event::Broad(n)
                        | Event::Barrier(n)
                        | Event::Suspend(n)
                        | Event::Resume(n) => *n = self.canonical(n),
                        Event::Wait { cond, mutex } => {
                            *cond = self.canonical(cond);
                            *mutex = self.canonical(mutex);
                        }
                        _ => {}
                    }
                }
            }
        }
    }

    /// The shared `Rc` of `n`'s text, numbering it if new.
    fn canonical(&mut self, n: &Name) -> Name {
        let id = self.id(n);
        self.names[id].clone()
    }

    /// The id of resource `n` (a name from the workload: found by address;
    /// any other: by text, numbered if new).
    #[inline]
    pub fn id(&mut self, n: &Name) -> usize {
        let a = addr(n);
        // A workload names a handful of resources: a plain scan beats a
        // binary search's unpredictable branches there.
        let found = if self.by_ptr.len() <= 16 {
            self.by_ptr.iter().find(|e| e.0 == a).map(|e| e.1)
        } else {
            self.by_ptr
                .binary_search_by_key(&a, |e| e.0)
                .ok()
                .map(|i| self.by_ptr[i].1)
        };
        match found {
            Some(id) => id,
            None => self.number(n),
        }
    }

    /// Resource `n` found by its text, numbered if new.
    #[cold]
    fn number(&mut self, n: &Name) -> usize {
        let id = match self.ids.get(n) {
            Some(id) => *id,
            None => {
                let id = self.names.len();
                self.names.push(n.clone());
                self.ids.insert(n.clone(), id);
                self.mutexes.push(Mutex::default());
                self.conds.push(VecDeque::new());
                self.barriers.push(Barrier::default());
                self.suspended.push(Vec::new());
                let canon = addr(&self.names[id]);
                let at = self.by_ptr.partition_point(|e| e.0 < canon);
                self.by_ptr.insert(at, (canon, id));
                id
            }
        };
        id
    }

    /// (name, id) of every resource, in name order (reports).
    pub fn by_name(&self) -> impl Iterator<Item = (&str, usize)> + '_ {
        self.ids.iter().map(|(n, id)| (&**n, *id))
    }
}
