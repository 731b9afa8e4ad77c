//! The store of a trace's records: each [`Record`] packed into 24 bytes.
//!
//! Why: a record as the enum lays it out is 56 bytes (task ids and CPUs
//! are `usize`, the idle task an `Option`), and a wakeup-heavy run records
//! millions of them (schbench-like 4×16 for 10 s: 8.1 M, 455 MB), so a
//! traced run's extra time was largely page faults and cache misses on
//! them. Packed, the same trace is 195 MB. Readers see plain [`Record`]s
//! by value ([`Records::iter`], [`Records::get`]).

use super::{PrevState, Record, TraceEvent};
use crate::clock::Ns;

/// The idle task in a packed task field.
const IDLE: u32 = u32::MAX;

/// One record, 24 bytes: the event's kind, its task/CPU fields in `a`,
/// `b`, `c` (see [`Packed::pack`]) and the CPU it fired on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Packed {
    ts: Ns,
    a: u32,
    b: u32,
    c: u32,
    cpu: u16,
    kind: u8,
    state: u8,
}

fn task_in(t: Option<usize>) -> u32 {
    // Task ids are bounded by max_threads, far below 2^32 - 1.
    t.map_or(IDLE, |t| u32::try_from(t).unwrap_or(IDLE - 1))
}

fn task_out(x: u32) -> Option<usize> {
    (x != IDLE).then_some(x as usize)
}

fn id_in(x: usize) -> u32 {
    u32::try_from(x).unwrap_or(u32::MAX)
}

impl Packed {
    fn pack(r: Record) -> Packed {
        let (kind, state, a, b, c) = match r.ev {
            TraceEvent::Switch {
                prev,
                prev_state,
                next,
            } => {
                let state = match prev_state {
                    PrevState::Runnable => 0,
                    PrevState::Sleeping => 1,
                    PrevState::Dead => 2,
                };
                (0, state, task_in(prev), task_in(next), 0)
            }
            TraceEvent::Waking { task, target_cpu } => (1, 0, id_in(task), id_in(target_cpu), 0),
            TraceEvent::Wakeup { task } => (2, 0, id_in(task), 0, 0),
            TraceEvent::WakeupNew { task } => (3, 0, id_in(task), 0, 0),
            TraceEvent::Migrate {
                task,
                orig_cpu,
                dest_cpu,
            } => (4, 0, id_in(task), id_in(orig_cpu), id_in(dest_cpu)),
            TraceEvent::Exit { task } => (5, 0, id_in(task), 0, 0),
            TraceEvent::CpuFrequency { khz } => (6, 0, 0, khz as u32, (khz >> 32) as u32),
        };
        Packed {
            ts: r.ts,
            a,
            b,
            c,
            // CPUs are bounded by cpuset::MAX_CPUS (and by the kernel's
            // NR_CPUS in imported traces), far below 2^16.
            cpu: u16::try_from(r.cpu).unwrap_or(u16::MAX),
            kind,
            state,
        }
    }

    fn unpack(self) -> Record {
        let (a, b, c) = (self.a as usize, self.b as usize, self.c as usize);
        let ev = match self.kind {
            0 => TraceEvent::Switch {
                prev: task_out(self.a),
                prev_state: match self.state {
                    0 => PrevState::Runnable,
                    1 => PrevState::Sleeping,
                    _ => PrevState::Dead,
                },
                next: task_out(self.b),
            },
            1 => TraceEvent::Waking {
                task: a,
                target_cpu: b,
            },
            2 => TraceEvent::Wakeup { task: a },
            3 => TraceEvent::WakeupNew { task: a },
            4 => TraceEvent::Migrate {
                task: a,
                orig_cpu: b,
                dest_cpu: c,
            },
            5 => TraceEvent::Exit { task: a },
            _ => TraceEvent::CpuFrequency {
                khz: u64::from(self.b) | (u64::from(self.c) << 32),
            },
        };
        Record {
            ts: self.ts,
            cpu: usize::from(self.cpu),
            ev,
        }
    }
}

/// Records in the order they happened, packed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Records {
    v: Vec<Packed>,
}

impl Records {
    /// Append `r`.
    #[inline]
    pub fn push(&mut self, r: Record) {
        self.v.push(Packed::pack(r));
    }

    /// Number of records.
    pub fn len(&self) -> usize {
        self.v.len()
    }

    /// No records.
    pub fn is_empty(&self) -> bool {
        self.v.is_empty()
    }

    /// Record `i`.
    #[inline]
    pub fn get(&self, i: usize) -> Record {
        self.v[i].unpack()
    }

    /// The last record.
    pub fn last(&self) -> Option<Record> {
        self.v.last().map(|p| p.unpack())
    }

    /// The records in order.
    pub fn iter(&self) -> Iter<'_> {
        Iter(self.v.iter())
    }

    /// Give back unused capacity.
    pub fn shrink_to_fit(&mut self) {
        self.v.shrink_to_fit();
    }
}

impl FromIterator<Record> for Records {
    fn from_iter<I: IntoIterator<Item = Record>>(it: I) -> Self {
        Records {
            v: it.into_iter().map(Packed::pack).collect(),
        }
    }
}

impl<'a> IntoIterator for &'a Records {
    type Item = Record;
    type IntoIter = Iter<'a>;
    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

/// The records of a [`Records`], unpacked, in order.
#[derive(Debug, Clone)]
pub struct Iter<'a>(std::slice::Iter<'a, Packed>);

impl Iterator for Iter<'_> {
    type Item = Record;
    #[inline]
    fn next(&mut self) -> Option<Record> {
        self.0.next().map(|p| p.unpack())
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

impl DoubleEndedIterator for Iter<'_> {
    fn next_back(&mut self) -> Option<Record> {
        self.0.next_back().map(|p| p.unpack())
    }
}

impl ExactSizeIterator for Iter<'_> {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_packed_record_is_24_bytes_and_unpacks_to_itself() {
        assert_eq!(std::mem::size_of::<Packed>(), 24);
        let evs = [
            TraceEvent::Switch {
                prev: None,
                prev_state: PrevState::Runnable,
                next: Some(7),
            },
            TraceEvent::Switch {
                prev: Some(0),
                prev_state: PrevState::Sleeping,
                next: None,
            },
            TraceEvent::Switch {
                prev: Some(3),
                prev_state: PrevState::Dead,
                next: Some(4),
            },
            TraceEvent::Waking {
                task: 9,
                target_cpu: 255,
            },
            TraceEvent::Wakeup { task: 1 },
            TraceEvent::WakeupNew { task: 2 },
            TraceEvent::Migrate {
                task: 5,
                orig_cpu: 1,
                dest_cpu: 200,
            },
            TraceEvent::Exit { task: 6 },
            TraceEvent::CpuFrequency { khz: 3_600_000 },
            TraceEvent::CpuFrequency { khz: u64::MAX - 1 },
        ];
        let recs: Vec<Record> = evs
            .iter()
            .enumerate()
            .map(|(i, &ev)| Record {
                ts: u64::MAX - i as u64,
                cpu: i * 25,
                ev,
            })
            .collect();
        let store: Records = recs.iter().copied().collect();
        assert_eq!(store.iter().collect::<Vec<_>>(), recs);
        assert_eq!((&store).into_iter().count(), recs.len());
        assert_eq!(store.get(3), recs[3]);
        assert_eq!(store.last(), recs.last().copied());
    }
}
