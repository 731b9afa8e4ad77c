//! Project C's CPU selection and balancing (alt_core.c, shootout.md §2.6):
//! topology order (`sched_cpu_topo_masks`, `best_mask_cpu`), the pull of
//! an idling CPU (`take_other_rq_tasks`, `migrate_pending_tasks`) and the
//! SMT sibling-group balance (`sg_balance`). Part of the framework in
//! policy/projc.rs, whose header describes the rules and departures.

use super::{Projc, ProjcRules, MAX_PULL};
use crate::cpuset::{CpuId, CpuSet};
use crate::machine::{Machine, MigrationKind};
use crate::task::TaskId;

impl<R: ProjcRules> Projc<R> {
    /// `sched_cpu_topo_masks` of `cpu`: itself, SMT siblings, LLC, all
    /// online CPUs (one package), each level without the previous ones.
    fn topo_levels(m: &Machine, cpu: CpuId) -> [CpuSet; 4] {
        let mut me = CpuSet::empty();
        me.insert(cpu);
        let online = m.online;
        [me, m.topo.siblings(cpu), m.topo.llc(cpu), online]
    }

    /// `best_mask_cpu`: lowest CPU of `mask` in the first topology level of
    /// `cpu` that has one.
    pub(super) fn best_mask_cpu(m: &Machine, cpu: CpuId, mask: &CpuSet) -> Option<CpuId> {
        Self::topo_levels(m, cpu)
            .iter()
            .find_map(|level| level.and(mask).first())
            .or_else(|| mask.first())
    }

    /// CPUs whose whole SMT core is idle (`sched_sg_idle_mask`).
    pub(super) fn sg_idle(&self, m: &Machine) -> CpuSet {
        let mut s = CpuSet::empty();
        for c in m.online.iter() {
            if m.topo.siblings(c).iter().all(|x| self.rq[x].nr == 0) {
                s.insert(c);
            }
        }
        s
    }

    /// `migrate_pending_tasks`: from the task after `src`'s current one,
    /// take every other task allowed on `dst`, at most min(nr/2, 32) tries.
    fn migrate_pending(&self, m: &mut Machine, src: CpuId, dst: CpuId) -> u32 {
        let Some(curr) = m.rqs[src].curr.filter(|c| self.pos[*c].is_some()) else {
            return 0;
        };
        let order = self.in_order(src);
        let Some(mut i) = order.iter().position(|t| *t == curr) else {
            return 0;
        };
        let mut tries = (self.rq[src].nr / 2).min(MAX_PULL);
        let mut moved = 0;
        while tries > 0 {
            let Some(&p) = order.get(i + 1) else {
                break;
            };
            i += 2;
            if m.tasks[p].affinity.contains(dst) {
                m.request_migration(p, dst, MigrationKind::Balance);
                moved += 1;
            }
            tries -= 1;
            if i >= order.len() {
                break;
            }
        }
        moved
    }

    /// `take_other_rq_tasks`: an idling `cpu` pulls from the first CPU, in
    /// topology order, with pending tasks that yields some.
    pub(super) fn take_other_rq_tasks(&mut self, m: &mut Machine, cpu: CpuId) {
        let pending: Vec<CpuId> = m
            .online
            .iter()
            .filter(|c| *c != cpu && self.rq[*c].nr >= 2)
            .collect();
        if pending.is_empty() {
            return;
        }
        let levels = Self::topo_levels(m, cpu);
        let mut seen = CpuSet::empty();
        seen.insert(cpu);
        for level in &levels[1..] {
            for src in level.iter().filter(|c| !seen.contains(*c)) {
                if !pending.contains(&src) {
                    continue;
                }
                self.update_edge(m, src);
                if self.migrate_pending(m, src, cpu) > 0 {
                    return;
                }
            }
            for c in level.iter() {
                seen.insert(c);
            }
        }
    }

    /// `sg_balance` (SMT only): `cpu`'s core is idle; push the lone running
    /// task of a core whose every sibling runs exactly one task.
    pub(super) fn sg_balance(&self, m: &mut Machine, cpu: CpuId) {
        if !m.topo.has_smt() || !m.online.contains(cpu) {
            return;
        }
        let idle_cores = self.sg_idle(m);
        if !idle_cores.contains(cpu) {
            return;
        }
        let mut chk = CpuSet::empty();
        for c in m.online.iter().filter(|c| self.rq[*c].nr == 1) {
            chk.insert(c);
        }
        for i in chk.iter_wrap(cpu) {
            if !m.topo.siblings(i).iter().all(|s| chk.contains(s)) {
                continue;
            }
            let queued_here = |c: &TaskId| self.pos[*c].is_some_and(|(q, _)| q == i);
            let Some(curr) = m.rqs[i].curr.filter(queued_here) else {
                continue;
            };
            let allowed = m.tasks[curr].affinity.and(&idle_cores);
            if allowed.is_empty() || m.rqs[i].active_balance_to.is_some() {
                continue;
            }
            let llc_and_beyond = [m.topo.llc(i), m.online];
            let dst = llc_and_beyond.iter().find_map(|l| l.and(&allowed).first());
            if let Some(dst) = dst {
                if m.request_active_balance(i, dst) {
                    m.resched(i);
                    return;
                }
            }
        }
    }
}
