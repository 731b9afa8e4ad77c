//! The RDB's candidate of a CPU (`update_IS`: its non-running fair task
//! with the lowest IS, ties to the task queued or picked last) without
//! reading every task's IS, with the scan's result (debug builds check
//! every answer against `CacUle::candidate_scan`).
//!
//! The tasks a CPU could give up are its listed task entities (runnable
//! and not running: the fair class's lists, `FairHooks::list_changed`).
//! A listed task's node does not change while it waits (every change
//! re-indexes it: `CacUle::retouch`) and its IS only falls as its life
//! grows, so its IS at the CPU's `horizon` bounds its IS from below until
//! then. Each CPU keeps its listed tasks sorted by that bound (recomputed
//! for all of them when the horizon passes), those that joined since in a
//! short unsorted list (bounded as they join); a search reads IS in bound
//! order and stops at the first task whose bound exceeds the lowest IS
//! found (it can neither be lower nor tie), then reads the joined tasks
//! whose bound does not exceed it. A leaving task's entry stays behind,
//! skipped, until the next re-keying or compaction drops it.

use super::pick::{crowded, sort_and_merge, COMPACT_SLACK, RESCAN_SLACK};
use super::rdb::candidate_beats;
use super::{interactivity_score, CacUle, Node};
use crate::clock::{Ns, MSEC};
use crate::cpuset::CpuId;
use crate::task::TaskId;

/// How far ahead a CPU's bounds hold.
const HORIZON: Ns = 256 * MSEC;

/// Below this many tasks on a CPU its search reads them all (cheaper than
/// keeping the index in step with every wakeup and switch).
const MIN_INDEXED: usize = 16;

/// A listed task with its bound (8 bytes).
#[derive(Debug, Clone, Copy)]
struct CandEnt {
    bound: u32,
    task: u32,
}

impl CandEnt {
    fn task(&self) -> TaskId {
        self.task as TaskId
    }
}

/// One CPU's listed tasks: `ents` sorted by (bound, task) at the last
/// re-keying, `joined` since then in no order. Leaving costs nothing: an
/// entry whose task is no longer indexed here with that bound
/// (`CacUle::cand_at`) is skipped, and dropped at the next re-keying or
/// compaction. A CPU switches between its listed tasks about three times between two
/// searches of it (bench workload), each switch a leave and a join, so
/// the searches sort what the switches only append.
#[derive(Debug, Clone, Default)]
pub(super) struct CandIndex {
    ents: Vec<CandEnt>,
    joined: Vec<CandEnt>,
    /// Entries of `ents` and `joined` that are current (the others are
    /// left behind by leaves): when they are outnumbered ([`crowded`]), a
    /// join compacts and a search re-keys.
    live: usize,
    horizon: u64,
    sorted: bool,
    /// Indexed at all: from a search that finds at least `MIN_INDEXED`
    /// tasks on the CPU until one finds fewer.
    active: bool,
    /// The last answer and its time, kept until the CPU's list or one of
    /// its listed tasks changes (the RDB passes of all CPUs, which each
    /// read every CPU's candidate, mostly come at the same tick).
    answer: Option<(u64, Option<(TaskId, u32)>)>,
}

/// IS at `when` of a task whose node is `n` (its memo if that covers the
/// life, else the formula).
fn node_is_at(n: &Node, when: u64, mi: u32) -> u32 {
    let life = when.wrapping_sub(n.start_time);
    n.is_memo
        .peek(life, n.vruntime)
        .unwrap_or_else(|| interactivity_score(life, n.vruntime, mi))
}

/// Whether `y` is the current entry of its task on `cpu`.
fn is_current(cand_at: &[Option<(CpuId, u32)>], cpu: CpuId, y: &CandEnt) -> bool {
    cand_at[y.task()] == Some((cpu, y.bound))
}

/// Drops `q`'s (the index of `cpu`) entries that are not current, and all
/// but the first of a task's (a task that left and came back with the
/// same bound has two that look current), hands each kept entry to `kept`
/// (a compaction keeps its bound, a re-keying bounds it anew in the same
/// pass), then points every kept task's `cand_at` at its entry's bound.
fn retain_current(
    cand_at: &mut [Option<(CpuId, u32)>],
    cpu: CpuId,
    q: &mut CandIndex,
    mut kept: impl FnMut(&mut CandEnt),
) {
    for part in [&mut q.ents, &mut q.joined] {
        part.retain_mut(|y| {
            if !is_current(cand_at, cpu, y) {
                return false;
            }
            // Seen: a second entry of the task no longer looks current.
            cand_at[y.task()] = None;
            kept(y);
            true
        });
    }
    for y in q.ents.iter().chain(&q.joined) {
        cand_at[y.task()] = Some((cpu, y.bound));
    }
    q.live = q.ents.len() + q.joined.len();
}

/// What a search of one CPU's index reads and writes besides the index:
/// the task nodes (their IS memos), the stamps, and where each task is
/// indexed (borrowed apart from the indexes, so that a search works on
/// its CPU's index in place).
struct CandView<'a> {
    tasks: &'a mut [Node],
    listed: &'a [u64],
    cand_at: &'a mut [Option<(CpuId, u32)>],
    mi: u32,
}

impl CandView<'_> {
    /// IS of task `t` at `when`, filling its node's memo
    /// (`CacUle::fast_task_is`).
    fn fast_is(&mut self, t: TaskId, when: u64) -> u32 {
        match self.tasks.get_mut(t) {
            Some(n) => n
                .is_memo
                .get(when.wrapping_sub(n.start_time), n.vruntime, self.mi),
            None => node_is_at(&Node::default(), when, self.mi),
        }
    }

    /// Re-key `q` (the index of `cpu`) for a horizon from `now`: its
    /// current entries, each once, bounded at the new horizon and sorted.
    fn rekey(&mut self, cpu: CpuId, q: &mut CandIndex, now: u64) {
        q.horizon = now.saturating_add(HORIZON);
        let (horizon, tasks, mi) = (q.horizon, &*self.tasks, self.mi);
        // Compaction and the new bounds in one pass.
        retain_current(self.cand_at, cpu, q, |y| {
            let n = tasks.get(y.task()).copied().unwrap_or_default();
            y.bound = node_is_at(&n, horizon, mi);
        });
        let (mut ents, mut joined) = (std::mem::take(&mut q.ents), std::mem::take(&mut q.joined));
        sort_and_merge(&mut ents, &mut joined, |y| (y.bound, y.task));
        q.ents = ents;
        q.joined = joined;
        q.sorted = true;
    }

    /// The candidate of `cpu` from its index `q`, re-keyed first if its
    /// horizon passed or dead entries crowd it.
    fn search(&mut self, cpu: CpuId, q: &mut CandIndex, now: u64) -> Option<(TaskId, u32)> {
        let entries = q.ents.len() + q.joined.len();
        if !q.sorted || now > q.horizon || crowded(entries, q.live, RESCAN_SLACK) {
            self.rekey(cpu, q, now);
        }
        // (task, IS, listed stamp) of the best so far: the sorted entries
        // up to the first bound above the best IS, then the joined ones
        // whose bound does not exceed it.
        let mut best: Option<(TaskId, u32, u64)> = None;
        let mut consider = |y: &CandEnt, best: &mut Option<(TaskId, u32, u64)>| {
            if best.is_some_and(|(_, bi, _)| y.bound > bi) || !is_current(self.cand_at, cpu, y) {
                return;
            }
            let is = self.fast_is(y.task(), now);
            // (A task without a node yet would have stamp 0, as
            // `CacUle::task_slot` would make it.)
            let listed = self.listed.get(y.task()).copied().unwrap_or(0);
            if candidate_beats(is, listed, *best) {
                *best = Some((y.task(), is, listed));
            }
        };
        for y in &q.ents {
            if best.is_some_and(|(_, bi, _)| y.bound > bi) {
                break;
            }
            consider(y, &mut best);
        }
        for y in &q.joined {
            consider(y, &mut best);
        }
        best.map(|(t, is, _)| (t, is))
    }
}

impl CacUle {
    /// IS of task `t` at `when` (its node as it is).
    fn task_is_at(&self, t: TaskId, when: u64) -> u32 {
        let n = self.tasks.get(t).copied().unwrap_or_default();
        node_is_at(&n, when, self.f.interactivity)
    }

    /// Task `t` was listed on `cpu`.
    pub(super) fn cand_join(&mut self, cpu: CpuId, t: TaskId) {
        if self.cand_index.get(cpu).is_none_or(|q| !q.active) {
            return;
        }
        if self.cand_at.len() <= t {
            self.cand_at.resize(t + 1, None);
        }
        let q = &self.cand_index[cpu];
        let bound = match q.sorted {
            true => self.task_is_at(t, q.horizon),
            false => 0,
        };
        let q = &mut self.cand_index[cpu];
        q.answer = None;
        q.live += 1;
        q.joined.push(CandEnt {
            bound,
            task: u32::try_from(t).expect("task ids fit 32 bits"),
        });
        self.cand_at[t] = Some((cpu, bound));
        let entries = |q: &CandIndex| q.ents.len() + q.joined.len();
        let q = &self.cand_index[cpu];
        if crowded(entries(q), q.live, COMPACT_SLACK) {
            // Joins and leaves without a search in between.
            retain_current(&mut self.cand_at, cpu, &mut self.cand_index[cpu], |_| {});
        }
        let q = &self.cand_index[cpu];
        debug_assert!(!crowded(entries(q), q.live, COMPACT_SLACK));
    }

    /// Task `t` is no longer listed.
    pub(super) fn cand_leave(&mut self, t: TaskId) {
        let Some(Some((cpu, _))) = self.cand_at.get_mut(t).map(|c| c.take()) else {
            return;
        };
        let q = &mut self.cand_index[cpu];
        q.answer = None;
        q.live -= 1;
    }

    /// Task `t`'s tie-break stamp changed: forget its CPU's answer.
    pub(super) fn cand_restamp(&mut self, t: TaskId) {
        if let Some(Some((cpu, _))) = self.cand_at.get(t).copied() {
            self.cand_index[cpu].answer = None;
        }
    }

    /// Task `t`'s node changed: bound it again if it is listed.
    pub(super) fn cand_retouch(&mut self, t: TaskId) {
        if let Some(Some((cpu, _))) = self.cand_at.get(t).copied() {
            self.cand_leave(t);
            self.cand_join(cpu, t);
        }
    }

    /// `update_IS` of `cpu` from its index: the candidate and its IS; or
    /// None (search the list) while the CPU holds fewer than
    /// `MIN_INDEXED` tasks. `tasks`: its runnable fair tasks, `curr` its
    /// running task (the index is built from them when it starts).
    pub(super) fn indexed_candidate(
        &mut self,
        now: u64,
        cpu: CpuId,
        tasks: &[TaskId],
        curr: Option<TaskId>,
    ) -> Option<Option<(TaskId, u32)>> {
        if self.cand_index.len() <= cpu {
            self.cand_index.resize(cpu + 1, CandIndex::default());
        }
        if tasks.len() < MIN_INDEXED {
            if self.cand_index[cpu].active {
                let q = std::mem::take(&mut self.cand_index[cpu]);
                for y in q.ents.iter().chain(&q.joined) {
                    if self.cand_at[y.task()].is_some_and(|(c, _)| c == cpu) {
                        self.cand_at[y.task()] = None;
                    }
                }
            }
            return None;
        }
        if !self.cand_index[cpu].active {
            self.cand_index[cpu].active = true;
            for &t in tasks.iter().filter(|t| Some(**t) != curr) {
                self.cand_join(cpu, t);
            }
        }
        if let Some((when, c)) = self.cand_index[cpu].answer {
            if when == now {
                return Some(c);
            }
        }
        let CacUle {
            cand_index,
            tasks,
            listed,
            cand_at,
            f,
            ..
        } = self;
        let q = &mut cand_index[cpu];
        let mut view = CandView {
            tasks,
            listed,
            cand_at,
            mi: f.interactivity,
        };
        let c = view.search(cpu, q, now);
        q.answer = Some((now, c));
        Some(c)
    }
}
