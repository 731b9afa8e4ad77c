//! CacULE's Response Driven Balancer (`CACULE_RDB`): the candidate of
//! each CPU (`update_IS`) and the pulls and pushes of a pass (see the
//! header of policy/cacule.rs).

use super::CacUle;
use crate::cpuset::CpuId;
use crate::machine::{Machine, MigrationKind};
use crate::task::TaskId;

/// What the RDB sees of every CPU during one pass, updated as it moves
/// tasks (the kernel's moves take effect at once, under the rq locks).
pub(super) struct Snapshot {
    pub(super) nr: Vec<u32>,
    tasks: Vec<Vec<TaskId>>,
    /// Per CPU, its candidate once computed in this pass (nothing it
    /// depends on changes within a pass but the CPU's task list, which
    /// `CacUle::migrate` updates, forgetting the candidate).
    cand: Vec<Option<Option<(TaskId, u32)>>>,
}

impl Snapshot {
    pub(super) fn new(m: &Machine, tasks: &[Vec<TaskId>]) -> Self {
        Snapshot {
            nr: m.rqs.iter().map(|r| r.nr_running).collect(),
            tasks: CacUle::snapshot(tasks),
            cand: vec![None; tasks.len()],
        }
    }
}

impl CacUle {
    /// `update_IS`: the non-running task of `cpu` with the lowest IS
    /// (ties: the one queued or picked last), with its IS.
    fn candidate(&mut self, m: &Machine, snap: &mut Snapshot, cpu: CpuId) -> Option<(TaskId, u32)> {
        if let Some(c) = snap.cand[cpu] {
            return c;
        }
        let mut best: Option<(TaskId, u32, u64)> = None;
        for &t in &snap.tasks[cpu] {
            if m.rqs[cpu].curr == Some(t) {
                continue;
            }
            let is = self.fast_task_is(t, m.now);
            let listed = self.listed.get(t).copied().unwrap_or(0);
            let better = match best {
                None => true,
                Some((_, bi, bl)) => is < bi || (is == bi && listed > bl),
            };
            if better {
                best = Some((t, is, listed));
            }
        }
        let c = best.map(|(t, is, _)| (t, is));
        snap.cand[cpu] = Some(c);
        c
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
        snap.tasks[src].retain(|x| *x != t);
        snap.tasks[dst].push(t);
        snap.nr[src] = snap.nr[src].saturating_sub(1);
        snap.nr[dst] += 1;
        snap.cand[src] = None;
        snap.cand[dst] = None;
    }

    /// Online CPUs other than `cpu` in the RDB's scan order: those sharing
    /// `cpu`'s LLC, then all (`cores_round`).
    fn rounds(m: &Machine, cpu: CpuId) -> Vec<CpuId> {
        let others: Vec<CpuId> = m.online.iter().filter(|c| *c != cpu).collect();
        let llc = others.iter().filter(|c| m.topo.share_cache(**c, cpu));
        llc.chain(others.iter()).copied().collect()
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
        for src in Self::rounds(m, dst) {
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
        for dst in Self::rounds(m, src) {
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
        for src in Self::rounds(m, dst) {
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
