//! Dispatch queues (`struct scx_dispatch_q`, kernel/sched/ext.c v6.12).
//!
//! A DSQ is a FIFO list or a vtime-ordered queue (the kernel's rbtree
//! `priq`), decided by how tasks are inserted; mixing both in one DSQ is a
//! policy error (`dispatch_enqueue`: "already had FIFO-enqueued tasks").
//! Built-in DSQs (global, per-CPU local) are FIFO only. A third kind, not in
//! the kernel, is the priority-bitmap queue for BMQ/PDS-like designs: N
//! levels, FIFO within a level, and a find-first-set pick over a bitmap of
//! non-empty levels (like kernel/sched/rt.c's `rt_prio_array`).
//!
//! Everything is ordered by an insertion sequence number, never by a hash:
//! FIFO order is insertion order (`SCX_ENQ_HEAD` inserts go before every
//! earlier insert, most recent first, like `list_add`), vtime ties are
//! broken by insertion order (like `rb_add` placing equal keys after
//! existing ones).

use crate::task::TaskId;
use std::collections::BTreeMap;

/// Where a task sits in a DSQ, for O(log n) removal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DsqKey {
    /// In the FIFO list under this sequence key (negative: head inserts).
    Fifo(i64),
    /// In the vtime queue under (vtime, sequence).
    Vtime(u64, u64),
    /// In priority level `.0` of a bitmap queue under sequence key `.1`.
    Prio(u32, i64),
}

/// Why an insert was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DsqError {
    /// FIFO insert into a DSQ holding vtime-ordered tasks, or the reverse.
    Mixed {
        /// True when the DSQ holds vtime-ordered tasks.
        has_vtime: bool,
    },
    /// Insert that does not fit the DSQ's kind (e.g. a level insert into a
    /// plain DSQ, a vtime insert into a bitmap queue).
    WrongKind,
    /// Level beyond the bitmap queue's number of levels.
    Level {
        /// Levels the queue has.
        levels: u32,
    },
}

/// A priority-bitmap queue: `levels` FIFO lists and a bitmap of the
/// non-empty ones; the pick is the first task of the lowest set level.
#[derive(Debug, Clone)]
struct PrioQueue {
    lists: Vec<BTreeMap<i64, TaskId>>,
    bitmap: Vec<u64>,
}

impl PrioQueue {
    fn new(levels: u32) -> Self {
        PrioQueue {
            lists: vec![BTreeMap::new(); levels as usize],
            bitmap: vec![0; (levels as usize).div_ceil(64)],
        }
    }

    /// Lowest non-empty level (find-first-set).
    fn first_level(&self) -> Option<usize> {
        self.bitmap
            .iter()
            .enumerate()
            .find(|(_, w)| **w != 0)
            .map(|(i, w)| i * 64 + w.trailing_zeros() as usize)
    }

    fn set(&mut self, level: usize, on: bool) {
        let (w, b) = (level / 64, 1u64 << (level % 64));
        if on {
            self.bitmap[w] |= b;
        } else {
            self.bitmap[w] &= !b;
        }
    }
}

/// One dispatch queue.
#[derive(Debug, Clone)]
pub struct Dsq {
    /// The DSQ id (`SCX_DSQ_GLOBAL`, a local id, or a user id < 2^63).
    pub id: u64,
    fifo: BTreeMap<i64, TaskId>,
    vtime: BTreeMap<(u64, u64), TaskId>,
    prio: Option<PrioQueue>,
    nr: u32,
}

impl Dsq {
    /// An empty FIFO/vtime DSQ.
    pub fn new(id: u64) -> Self {
        Dsq {
            id,
            fifo: BTreeMap::new(),
            vtime: BTreeMap::new(),
            prio: None,
            nr: 0,
        }
    }

    /// An empty priority-bitmap queue with `levels` levels (≥ 1).
    pub fn new_prio(id: u64, levels: u32) -> Self {
        Dsq {
            prio: Some(PrioQueue::new(levels.max(1))),
            ..Dsq::new(id)
        }
    }

    /// Number of levels of a priority-bitmap queue (None: a plain DSQ).
    pub fn levels(&self) -> Option<u32> {
        self.prio.as_ref().map(|p| p.lists.len() as u32)
    }

    /// Queued tasks (`dsq->nr`).
    pub fn len(&self) -> u32 {
        self.nr
    }

    /// Whether no task is queued.
    pub fn is_empty(&self) -> bool {
        self.nr == 0
    }

    /// FIFO insert at the tail, or at the head with `head`; `seq` is the
    /// class's insertion counter (strictly increasing).
    pub fn insert_fifo(&mut self, t: TaskId, head: bool, seq: u64) -> Result<DsqKey, DsqError> {
        if self.prio.is_some() {
            return Err(DsqError::WrongKind);
        }
        if !self.vtime.is_empty() {
            return Err(DsqError::Mixed { has_vtime: true });
        }
        let k = if head { -(seq as i64) } else { seq as i64 };
        self.fifo.insert(k, t);
        self.nr += 1;
        Ok(DsqKey::Fifo(k))
    }

    /// Insert ordered by `vtime` (ties: insertion order).
    pub fn insert_vtime(&mut self, t: TaskId, vtime: u64, seq: u64) -> Result<DsqKey, DsqError> {
        if self.prio.is_some() {
            return Err(DsqError::WrongKind);
        }
        if !self.fifo.is_empty() {
            return Err(DsqError::Mixed { has_vtime: false });
        }
        self.vtime.insert((vtime, seq), t);
        self.nr += 1;
        Ok(DsqKey::Vtime(vtime, seq))
    }

    /// Insert into `level` of a priority-bitmap queue (tail, or head).
    pub fn insert_prio(
        &mut self,
        t: TaskId,
        level: u32,
        head: bool,
        seq: u64,
    ) -> Result<DsqKey, DsqError> {
        let Some(q) = self.prio.as_mut() else {
            return Err(DsqError::WrongKind);
        };
        let levels = q.lists.len() as u32;
        if level >= levels {
            return Err(DsqError::Level { levels });
        }
        let k = if head { -(seq as i64) } else { seq as i64 };
        q.lists[level as usize].insert(k, t);
        q.set(level as usize, true);
        self.nr += 1;
        Ok(DsqKey::Prio(level, k))
    }

    /// Remove the task at `key`; returns it if it was there.
    pub fn remove(&mut self, key: DsqKey) -> Option<TaskId> {
        let t = match key {
            DsqKey::Fifo(k) => self.fifo.remove(&k),
            DsqKey::Vtime(v, s) => self.vtime.remove(&(v, s)),
            DsqKey::Prio(l, k) => {
                let q = self.prio.as_mut()?;
                let list = q.lists.get_mut(l as usize)?;
                let t = list.remove(&k);
                if list.is_empty() {
                    q.set(l as usize, false);
                }
                t
            }
        };
        if t.is_some() {
            self.nr -= 1;
        }
        t
    }

    /// Tasks in dispatch order, each with its key.
    pub fn entries(&self) -> Vec<(DsqKey, TaskId)> {
        if let Some(q) = &self.prio {
            let mut v = Vec::with_capacity(self.nr as usize);
            for (l, list) in q.lists.iter().enumerate() {
                v.extend(list.iter().map(|(k, t)| (DsqKey::Prio(l as u32, *k), *t)));
            }
            return v;
        }
        self.fifo
            .iter()
            .map(|(k, t)| (DsqKey::Fifo(*k), *t))
            .chain(
                self.vtime
                    .iter()
                    .map(|(k, t)| (DsqKey::Vtime(k.0, k.1), *t)),
            )
            .collect()
    }

    /// The first task that satisfies `ok`, in dispatch order, with its key
    /// (the pick of a consume that skips tasks unable to run on the CPU).
    pub fn first_where(&self, mut ok: impl FnMut(TaskId) -> bool) -> Option<(DsqKey, TaskId)> {
        if let Some(q) = &self.prio {
            // Find-first-set over the bitmap, then scan within the level.
            let mut bits = q.bitmap.clone();
            loop {
                let (w, word) = bits.iter().enumerate().find(|(_, w)| **w != 0)?;
                let l = w * 64 + word.trailing_zeros() as usize;
                bits[w] &= bits[w] - 1;
                if let Some((k, t)) = q.lists[l].iter().find(|(_, t)| ok(**t)) {
                    return Some((DsqKey::Prio(l as u32, *k), *t));
                }
            }
        }
        if let Some((k, t)) = self.fifo.iter().find(|(_, t)| ok(**t)) {
            return Some((DsqKey::Fifo(*k), *t));
        }
        self.vtime
            .iter()
            .find(|(_, t)| ok(**t))
            .map(|(k, t)| (DsqKey::Vtime(k.0, k.1), *t))
    }

    /// The first task in dispatch order.
    pub fn first(&self) -> Option<TaskId> {
        if let Some(q) = &self.prio {
            return q
                .first_level()
                .and_then(|l| q.lists[l].values().next().copied());
        }
        self.first_where(|_| true).map(|x| x.1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn order(d: &Dsq) -> Vec<TaskId> {
        d.entries().into_iter().map(|e| e.1).collect()
    }

    #[test]
    fn fifo_order_with_head_inserts() {
        let mut d = Dsq::new(0);
        let mut seq = 0;
        let mut ins = |d: &mut Dsq, t, head| {
            seq += 1;
            d.insert_fifo(t, head, seq).expect("fifo insert")
        };
        ins(&mut d, 1, false);
        ins(&mut d, 2, false);
        let k3 = ins(&mut d, 3, true);
        ins(&mut d, 4, true);
        ins(&mut d, 5, false);
        assert_eq!(order(&d), vec![4, 3, 1, 2, 5]);
        assert_eq!(d.first(), Some(4));
        assert_eq!(d.remove(k3), Some(3));
        assert_eq!(d.remove(k3), None);
        assert_eq!(order(&d), vec![4, 1, 2, 5]);
        assert_eq!(d.len(), 4);
    }

    #[test]
    fn vtime_order_ties_by_insertion() {
        let mut d = Dsq::new(7);
        d.insert_vtime(1, 50, 1).expect("insert");
        d.insert_vtime(2, 10, 2).expect("insert");
        d.insert_vtime(3, 50, 3).expect("insert");
        d.insert_vtime(4, 10, 4).expect("insert");
        assert_eq!(order(&d), vec![2, 4, 1, 3]);
        assert_eq!(
            d.insert_fifo(9, false, 5),
            Err(DsqError::Mixed { has_vtime: true })
        );
        let (k, t) = d.first_where(|t| t != 2).expect("some");
        assert_eq!(t, 4);
        d.remove(k);
        assert_eq!(order(&d), vec![2, 1, 3]);
    }

    #[test]
    fn fifo_then_vtime_is_refused_until_empty() {
        let mut d = Dsq::new(7);
        let k = d.insert_fifo(1, false, 1).expect("insert");
        assert_eq!(
            d.insert_vtime(2, 0, 2),
            Err(DsqError::Mixed { has_vtime: false })
        );
        d.remove(k);
        assert!(d.insert_vtime(2, 0, 3).is_ok());
    }

    #[test]
    fn prio_bitmap_picks_lowest_level_fifo_within() {
        let mut d = Dsq::new_prio(3, 100);
        d.insert_prio(1, 70, false, 1).expect("insert");
        d.insert_prio(2, 5, false, 2).expect("insert");
        d.insert_prio(3, 70, false, 3).expect("insert");
        let k4 = d.insert_prio(4, 5, false, 4).expect("insert");
        d.insert_prio(5, 70, true, 5).expect("insert");
        assert_eq!(order(&d), vec![2, 4, 5, 1, 3]);
        assert_eq!(d.first(), Some(2));
        assert_eq!(
            d.insert_prio(6, 100, false, 6),
            Err(DsqError::Level { levels: 100 })
        );
        assert_eq!(d.insert_fifo(6, false, 6), Err(DsqError::WrongKind));
        let (k2, _) = d.first_where(|_| true).expect("some");
        d.remove(k2);
        d.remove(k4);
        // Level 5 emptied: its bit is clear and level 70 is next.
        assert_eq!(d.first(), Some(5));
        assert_eq!(d.first_where(|t| t == 3).map(|x| x.1), Some(3));
        assert_eq!(d.len(), 3);
    }
}
