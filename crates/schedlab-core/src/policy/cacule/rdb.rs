//! CacULE's Response Driven Balancer (`CACULE_RDB`): the candidate of
//! each CPU (`update_IS`) and the pulls and pushes of a pass (see the
//! header of policy/cacule.rs).

use super::CacUle;
use crate::cpuset::CpuId;
use crate::machine::{Machine, MigrationKind};
use crate::task::TaskId;
use std::rc::Rc;

/// What the RDB sees of every CPU during one pass, updated as it moves
/// tasks (the kernel's moves take effect at once, under the rq locks).
pub(super) struct Snapshot<'a> {
    pub(super) nr: Vec<u32>,
    /// Per CPU, its runnable fair tasks at the start of the pass.
    base: &'a [Vec<TaskId>],
    /// Per CPU whose list a move of this pass changed, the list now.
    moved: Vec<Option<Vec<TaskId>>>,
    /// Per CPU, its candidate once computed in this pass (nothing it
    /// depends on changes within a pass but the CPU's task list, which
    /// `CacUle::migrate` updates, forgetting the candidate).
    cand: Vec<Option<Option<(TaskId, u32)>>>,
}

/// The buffers of a [`Snapshot`], kept between passes (a pass runs at
/// every RDB interval of every CPU).
#[derive(Debug, Default)]
pub(super) struct SnapBufs {
    nr: Vec<u32>,
    moved: Vec<Option<Vec<TaskId>>>,
    cand: Vec<Option<Option<(TaskId, u32)>>>,
}

impl<'a> Snapshot<'a> {
    pub(super) fn new(m: &Machine, tasks: &'a [Vec<TaskId>], mut bufs: SnapBufs) -> Self {
        bufs.nr.clear();
        bufs.nr.extend(m.rqs.iter().map(|r| r.nr_running));
        bufs.moved.clear();
        bufs.moved.resize(tasks.len(), None);
        bufs.cand.clear();
        bufs.cand.resize(tasks.len(), None);
        Snapshot {
            nr: bufs.nr,
            base: tasks,
            moved: bufs.moved,
            cand: bufs.cand,
        }
    }

    /// The buffers, for the next pass.
    pub(super) fn into_bufs(self) -> SnapBufs {
        SnapBufs {
            nr: self.nr,
            moved: self.moved,
            cand: self.cand,
        }
    }

    fn tasks(&self, cpu: CpuId) -> &[TaskId] {
        self.moved[cpu].as_deref().unwrap_or(&self.base[cpu])
    }

    fn tasks_mut(&mut self, cpu: CpuId) -> &mut Vec<TaskId> {
        let base = self.base;
        self.moved[cpu].get_or_insert_with(|| base[cpu].clone())
    }
}

/// Whether a task with IS `is`, queued or picked at stamp `listed`, is a
/// better RDB candidate than `best` (task, IS, stamp): the lower IS; among
/// equal ones the task queued or picked last (`update_IS`).
pub(super) fn candidate_beats(is: u32, listed: u64, best: Option<(TaskId, u32, u64)>) -> bool {
    best.is_none_or(|(_, bi, bl)| is < bi || (is == bi && listed > bl))
}

/// Per CPU, the IS of each of its tasks as the last candidate search
/// found it, by position in the CPU's task list (`CacUle::candidate`).
#[derive(Debug, Clone, Default)]
pub(super) struct CandMemo {
    ents: Vec<CandEnt>,
}

/// A task's IS and tie-break stamp, which hold while its node and stamp
/// stay unchanged (`CacUle::ver`) until `until` (the end of its IS memo's
/// range of lives).
#[derive(Debug, Clone, Copy)]
struct CandEnt {
    task: TaskId,
    ver: u64,
    until: u64,
    listed: u64,
    is: u32,
}

impl CandEnt {
    /// Matches no task.
    const STALE: CandEnt = CandEnt {
        task: TaskId::MAX,
        ver: 0,
        until: 0,
        listed: 0,
        is: 0,
    };
}

impl CacUle {
    /// `update_IS`: the non-running task of `cpu` with the lowest IS
    /// (ties: the one queued or picked last), with its IS.
    ///
    /// From the CPU's index (cacule/cand.rs) unless this pass moved tasks
    /// to or from the CPU; then from the pass's task list, each task's IS
    /// taken from the CPU's `CandMemo` where the entry at its position is
    /// its own, its node and stamp have not changed since (`ver`) and its
    /// IS memo still covers its life (`until`): the same values the scan
    /// would compute, read from one contiguous list.
    fn candidate(&mut self, m: &Machine, snap: &mut Snapshot, cpu: CpuId) -> Option<(TaskId, u32)> {
        if let Some(c) = snap.cand[cpu] {
            return c;
        }
        let indexed = match snap.moved[cpu].is_none() && self.f.interactivity < 1 << 31 {
            true => self.indexed_candidate(m.now, cpu, &snap.base[cpu], m.rqs[cpu].curr),
            false => None,
        };
        if let Some(c) = indexed {
            #[cfg(debug_assertions)]
            assert_eq!(
                c,
                self.candidate_scan(m, snap, cpu),
                "RDB candidate of CPU {cpu} at {}",
                m.now
            );
            snap.cand[cpu] = Some(c);
            return c;
        }
        let c = self.candidate_scan(m, snap, cpu);
        snap.cand[cpu] = Some(c);
        c
    }

    /// [`Self::candidate`] by reading every task's IS.
    fn candidate_scan(
        &mut self,
        m: &Machine,
        snap: &Snapshot,
        cpu: CpuId,
    ) -> Option<(TaskId, u32)> {
        if self.cands.len() <= cpu {
            self.cands.resize(cpu + 1, CandMemo::default());
        }
        let mut memo = std::mem::take(&mut self.cands[cpu]);
        let tasks = snap.tasks(cpu);
        memo.ents.resize(tasks.len(), CandEnt::STALE);
        let (now, curr) = (m.now, m.rqs[cpu].curr);
        let mut best: Option<(TaskId, u32, u64)> = None;
        for (&t, e) in tasks.iter().zip(memo.ents.iter_mut()) {
            if curr == Some(t) {
                continue;
            }
            if e.task != t || now > e.until || self.ver.get(t) != Some(&e.ver) {
                *e = self.cand_entry(t, now);
            }
            let (is, listed) = (e.is, e.listed);
            if candidate_beats(is, listed, best) {
                best = Some((t, is, listed));
            }
        }
        self.cands[cpu] = memo;
        best.map(|(t, is, _)| (t, is))
    }

    /// Task `t`'s IS at `now` with what it holds for.
    fn cand_entry(&mut self, t: TaskId, now: u64) -> CandEnt {
        let is = self.fast_task_is(t, now);
        let n = &self.tasks[t];
        let until = match n.start_time <= now {
            true => n.start_time.saturating_add(n.is_memo.last_life()),
            false => now,
        };
        CandEnt {
            task: t,
            ver: self.ver[t],
            until,
            listed: self.listed[t],
            is,
        }
    }

    /// `can_migrate_task` (RDB): not running, allowed there, has run since
    /// its fork or last migration.
    fn can_migrate(&self, m: &Machine, t: TaskId, dst: CpuId, src: CpuId) -> bool {
        m.rqs[src].curr != Some(t)
            && m.tasks[t].affinity.contains(dst)
            && self.tasks.get(t).is_some_and(|n| n.exec_start != 0)
    }

    /// `pull_from_unlock` / `push_to_unlock`: move `t` from `src` to `dst`.
    fn migrate(&mut self, m: &mut Machine, snap: &mut Snapshot, t: TaskId, src: CpuId, dst: CpuId) {
        m.request_migration(t, dst, MigrationKind::Balance);
        self.task_node(t).exec_start = 0;
        self.retouch_task(t);
        snap.tasks_mut(src).retain(|x| *x != t);
        snap.tasks_mut(dst).push(t);
        snap.nr[src] = snap.nr[src].saturating_sub(1);
        snap.nr[dst] += 1;
        snap.cand[src] = None;
        snap.cand[dst] = None;
    }

    /// Online CPUs other than `cpu` in the RDB's scan order: those sharing
    /// `cpu`'s LLC, then all (`cores_round`). Computed once per set of
    /// online CPUs.
    fn rounds(&mut self, m: &Machine, cpu: CpuId) -> Rc<[CpuId]> {
        if self.rounds.0 != m.online || self.rounds.1.len() <= cpu {
            let all = (0..m.nr_cpus().max(cpu + 1)).map(|cpu| {
                let others: Vec<CpuId> = m.online.iter().filter(|c| *c != cpu).collect();
                let llc = others.iter().filter(|c| m.topo.share_cache(**c, cpu));
                llc.chain(others.iter()).copied().collect()
            });
            self.rounds = (m.online, all.collect());
        }
        self.rounds.1[cpu].clone()
    }

    /// `idle_try_pull_any` (tick) and `newidle_balance` (`newidle`: stop
    /// once something else became runnable here).
    pub(super) fn pull_any(
        &mut self,
        m: &mut Machine,
        snap: &mut Snapshot,
        dst: CpuId,
        newidle: bool,
    ) {
        for &src in self.rounds(m, dst).iter() {
            if snap.nr[src] < 2 {
                continue;
            }
            let Some((p, _)) = self.candidate(m, snap, src) else {
                continue;
            };
            if self.can_migrate(m, p, dst, src) {
                self.migrate(m, snap, p, src, dst);
                return;
            }
            if newidle && snap.nr[dst] > 0 {
                return;
            }
        }
    }

    /// `try_pull_higher_IS`: pull the candidate whose IS is the lowest of
    /// all CPUs with ≥ 2 tasks, if lower than this CPU's own candidate's.
    pub(super) fn pull_higher_is(&mut self, m: &mut Machine, snap: &mut Snapshot, dst: CpuId) {
        let mut max_is = self.candidate(m, snap, dst).map_or(u32::MAX, |c| c.1);
        let mut from = None;
        for src in m.online.iter().filter(|c| *c != dst) {
            if snap.nr[src] < 2 {
                continue;
            }
            if let Some((_, is)) = self.candidate(m, snap, src) {
                if is < max_is {
                    max_is = is;
                    from = Some(src);
                }
            }
        }
        let Some(src) = from else { return };
        if let Some((p, _)) = self.candidate(m, snap, src) {
            if snap.nr[src] > 1 && self.can_migrate(m, p, dst, src) {
                self.migrate(m, snap, p, src, dst);
            }
        }
    }

    /// `try_push_any`: push this CPU's candidate to a CPU running fewer
    /// than this CPU's count − 1 tasks.
    pub(super) fn push_any(&mut self, m: &mut Machine, snap: &mut Snapshot, src: CpuId) {
        for &dst in self.rounds(m, src).iter() {
            if snap.nr[dst] >= snap.nr[src].saturating_sub(1) {
                continue;
            }
            let Some((p, _)) = self.candidate(m, snap, src) else {
                return;
            };
            if self.can_migrate(m, p, dst, src) {
                self.migrate(m, snap, p, src, dst);
                return;
            }
        }
    }

    /// `try_pull_any`: pull from the first CPU (LLC first) with ≥ 2 tasks
    /// whose candidate's IS is lower than this CPU's own candidate's.
    pub(super) fn pull_lower_is(&mut self, m: &mut Machine, snap: &mut Snapshot, dst: CpuId) {
        let this_is = self.candidate(m, snap, dst).map_or(u32::MAX, |c| c.1);
        for &src in self.rounds(m, dst).iter() {
            if snap.nr[src] < 2 {
                continue;
            }
            let Some((p, is)) = self.candidate(m, snap, src) else {
                continue;
            };
            if is >= this_is {
                continue;
            }
            if self.can_migrate(m, p, dst, src) {
                self.migrate(m, snap, p, src, dst);
                return;
            }
        }
    }
}
