//! Wakeup and fork placement: `select_task_rq_fair` (linux-smp.md §2).
//!
//! Wakeups: `wake_wide` decides whether to consider the waker's CPU;
//! `wake_affine` (idle test, then weighted load with WA_BIAS) chooses
//! between the waker's CPU and the previous one; `select_idle_sibling`
//! looks for an idle CPU in that CPU's LLC (target, prev, recent_used_cpu,
//! an idle SMT sibling, then a SIS_UTIL-limited scan). Forks take the slow
//! path: the group with the most idle CPUs (local on ties), then its idlest
//! CPU. Simplifications (docs/model.md): no EAS, no asymmetric capacity
//! search, WF_SYNC is never set (rt-app wakeups are not sync).

use super::domains::GroupType;
use super::Fair;
use crate::class::{WakeFlags, Waker};
use crate::clock::{Ns, SEC};
use crate::cpuset::{CpuId, CpuSet};
use crate::machine::Machine;
use crate::task::TaskId;
use crate::workload::Policy;

/// `struct sg_lb_stats` for the fork path.
#[derive(Debug, Clone, Copy)]
struct ForkGroupStats {
    kind: GroupType,
    avg_load: u64,
    util: u64,
    idle: u64,
}

/// `p->wakee_flips` bookkeeping.
#[derive(Debug, Clone, Copy, Default)]
pub struct WakeeFlips {
    /// Decayed count of wakee changes.
    pub flips: u32,
    /// Last task this one woke.
    pub last_wakee: Option<TaskId>,
    /// Last halving.
    pub decay_ts: Ns,
    /// `recent_used_cpu`.
    pub recent_used_cpu: Option<CpuId>,
}

impl Fair {
    /// `cpu_load`: PELT load of the CPU's root queue.
    pub fn cpu_load(&mut self, m: &Machine, cpu: CpuId) -> u64 {
        let rq = self.tg[0].rq[cpu];
        self.rq_pelt(m, rq);
        self.cfs[rq].pelt.avg()
    }

    /// `cpu_util_cfs`: PELT utilisation of a CPU by fair tasks (running a
    /// fair task = 1024; 0..=1024). Time the CPU runs RT or DEADLINE tasks
    /// counts in their signal instead (`Machine::rt_dl_util`).
    pub fn cpu_util(&mut self, m: &Machine, cpu: CpuId) -> u64 {
        let v = if self.util_busy[cpu] { 1024 } else { 0 };
        self.util[cpu].update(m.now, v);
        self.util[cpu].avg().min(1024)
    }

    /// Bring `cpu`'s load and utilisation up to now, as `cpu_load` and
    /// `cpu_util` do, and return the utilisation; a signal that is zero
    /// with zero input is left where it is. Exact: zero decays to zero
    /// and nothing is added, so such an update only moves the signal's
    /// position in its 1024 µs period, and the next update (every reader
    /// of these two signals updates first: `rq_pelt`, `cpu_util`) moves it
    /// the same way over the longer interval. Why: the balancer of a
    /// machine without fair tasks brought every CPU's zero signals up to
    /// now at each pass (issue 18: 64 CPUs of DEADLINE tasks).
    pub fn refresh_cpu_signals(&mut self, m: &Machine, cpu: CpuId) -> u64 {
        let rq = self.tg[0].rq[cpu];
        if self.cfs[rq].load != 0 || self.cfs[rq].pelt.sum() != 0 {
            self.rq_pelt(m, rq);
        }
        let util = if self.util_busy[cpu] || self.util[cpu].sum() != 0 {
            self.cpu_util(m, cpu)
        } else {
            0
        };
        if self.signals_zero(cpu) {
            self.maybe_signals.remove(cpu);
        }
        util
    }

    /// Whether `cpu`'s root-queue load and its utilisation are zero with
    /// zero input (nothing queued, no fair task current): what a CPU
    /// outside `maybe_signals` must show.
    pub(super) fn signals_zero(&self, cpu: CpuId) -> bool {
        let q = &self.cfs[self.tg[0].rq[cpu]];
        q.load == 0 && q.pelt.sum() == 0 && !self.util_busy[cpu] && self.util[cpu].sum() == 0
    }

    /// `cpu_runnable`: the root queue's PELT runnable average (1024 per
    /// runnable fair task, `cfs_rq->avg.runnable_avg`); may exceed 1024.
    pub fn cpu_runnable(&mut self, m: &Machine, cpu: CpuId) -> u64 {
        let nr = self.root_rq(cpu).h_nr_running as u64;
        self.runnable[cpu].update(m.now, 1024 * nr);
        self.runnable[cpu].avg()
    }

    /// `capacity_of` (`rq->cpu_capacity`, `scale_rt_capacity`, fair.c
    /// v6.18): the CPU's capacity less what RT and DEADLINE tasks used
    /// (their PELT utilisation), at least 1. Departure: the kernel
    /// refreshes it at balance intervals (`update_group_capacity`); this
    /// reads the signal as of now.
    pub fn capacity_of(m: &Machine, cpu: CpuId) -> u64 {
        let max = m.topo.cpu(cpu).capacity;
        let used = m.rt_dl_util(cpu);
        if used >= max {
            1
        } else {
            max - used
        }
    }

    /// `check_cpu_capacity`: RT/DEADLINE pressure has taken more than
    /// imbalance_pct's share of `cpu`'s capacity.
    pub fn reduced_capacity(m: &Machine, cpu: CpuId, pct: u64) -> bool {
        Self::capacity_of(m, cpu) * pct < m.topo.cpu(cpu).capacity * 100
    }

    /// `task_h_load`: the task's PELT load as seen at the root queue.
    pub fn task_h_load(&mut self, m: &Machine, t: TaskId) -> u64 {
        let se = self.task_se[t];
        let mut load = self.se_load_avg(m, se) as u128;
        let mut s = self.se[se].parent;
        while let Some(g) = s {
            let q = self.se[g].my_q.map_or(1, |q| self.cfs[q].load.max(1));
            load = load * self.se[g].w() as u128 / q as u128;
            s = self.se[g].parent;
        }
        load as u64
    }

    /// `sched_idle_cpu`: everything runnable there is SCHED_IDLE.
    fn sched_idle_cpu(&self, m: &Machine, cpu: CpuId) -> bool {
        if !m.any_sched_idle() {
            return false;
        }
        let n = m.rqs[cpu].nr_running as usize;
        n > 0
            && self.cpu_tasks[cpu].len() == n
            && self.cpu_tasks[cpu]
                .iter()
                .all(|t| m.tasks[*t].policy == Policy::Idle)
    }

    fn idle_or_sched_idle(&self, m: &Machine, cpu: CpuId) -> bool {
        m.is_idle(cpu) || self.sched_idle_cpu(m, cpu)
    }

    fn record_wakee(&mut self, m: &Machine, waker: TaskId, wakee: TaskId) {
        let w = &mut self.wakee[waker];
        if m.now > w.decay_ts + SEC {
            w.flips >>= 1;
            w.decay_ts = m.now;
        }
        if w.last_wakee != Some(wakee) {
            w.last_wakee = Some(wakee);
            w.flips += 1;
        }
    }

    fn wake_wide(&self, m: &Machine, p: TaskId, waker: Option<TaskId>) -> bool {
        let Some(w) = waker else { return false };
        let (mut master, mut slave) = (self.wakee[w].flips, self.wakee[p].flips);
        let factor = m.topo.llc(m.tasks[p].cpu).count() as u32;
        if master < slave {
            std::mem::swap(&mut master, &mut slave);
        }
        !(slave < factor || master < slave * factor)
    }

    fn wake_affine(&mut self, m: &Machine, p: TaskId, this: CpuId, prev: CpuId) -> CpuId {
        // wake_affine_idle
        if m.is_idle(this) && m.topo.share_cache(this, prev) {
            return if m.is_idle(prev) { prev } else { this };
        }
        if m.is_idle(prev) {
            return prev;
        }
        // wake_affine_weight with WA_BIAS
        let pct = self.lb.affine_pct(this, prev);
        let task_load = self.task_h_load(m, p);
        let this_eff =
            (self.cpu_load(m, this) + task_load) as u128 * 100 * Self::capacity_of(m, prev) as u128;
        let prev_eff = self.cpu_load(m, prev).saturating_sub(task_load) as u128
            * (100 + (pct - 100) / 2) as u128
            * Self::capacity_of(m, this) as u128;
        if this_eff < prev_eff {
            this
        } else {
            prev
        }
    }

    fn idle_core(&self, m: &Machine, cpu: CpuId) -> bool {
        m.topo.siblings(cpu).iter().all(|s| m.is_idle(s))
    }

    fn select_idle_sibling(&mut self, m: &Machine, p: TaskId, prev: CpuId, target: CpuId) -> CpuId {
        let allowed = m.tasks[p].affinity;
        if allowed.contains(target) && self.idle_or_sched_idle(m, target) {
            return target;
        }
        if prev != target
            && allowed.contains(prev)
            && m.topo.share_cache(prev, target)
            && self.idle_or_sched_idle(m, prev)
        {
            return prev;
        }
        let recent = self.wakee[p].recent_used_cpu.replace(prev);
        if let Some(r) = recent {
            if r != prev
                && r != target
                && m.topo.share_cache(r, target)
                && allowed.contains(r)
                && self.idle_or_sched_idle(m, r)
            {
                return r;
            }
        }
        let llc = m.topo.llc(target).and(&allowed);
        // Whether any probe below can succeed: with no idle CPU in the LLC
        // and no task ever SCHED_IDLE, every one fails, and the probes have
        // no side effects, so the scans are skipped (a speed-up only: on a
        // busy 256-CPU LLC the SIS_UTIL scan walked all 256 CPUs at each
        // wakeup until the first LLC balance lowered its depth).
        let may_find = m.any_sched_idle() || m.idle_cpus().intersects(&llc);
        let smt = m.topo.has_smt();
        let has_idle_core = smt && may_find && llc.iter().any(|c| self.idle_core(m, c));
        if smt && !has_idle_core {
            if let Some(c) = m
                .topo
                .siblings(prev)
                .and(&allowed)
                .iter()
                .find(|c| m.is_idle(*c))
            {
                if m.topo.share_cache(c, target) {
                    return c;
                }
            }
        }
        // SIS_UTIL: the depth the last periodic LLC balance left (balance.rs
        // update_idle_cpu_scan), not one computed now.
        let nr = self.lb.nr_idle_scan(m.topo.cpu(target).llc);
        if nr > 0 && may_find {
            let mut budget = nr + 1;
            for c in llc.iter_wrap(target) {
                if has_idle_core {
                    if self.idle_core(m, c) {
                        return c;
                    }
                } else {
                    budget -= 1;
                    if budget == 0 {
                        break;
                    }
                    if self.idle_or_sched_idle(m, c) {
                        return c;
                    }
                }
            }
        }
        target
    }

    /// A CPU's load as the fork path sees it (`cpu_load`): a new task's
    /// load counts at its full weight from the start
    /// (`init_entity_runnable_average`), which the queue's PELT signal here
    /// does not model, so the queued weight is a floor under the PELT load.
    fn fork_load(&mut self, m: &Machine, cpu: CpuId) -> u64 {
        let queued = self.cfs[self.tg[0].rq[cpu]].load;
        self.cpu_load(m, cpu).max(queued)
    }

    /// `update_sg_wakeup_stats` + `group_classify` for the fork path.
    /// Departure (docs/model.md): the group type comes from run-queue
    /// counts (spare: fewer tasks than CPUs; fully busy: as many;
    /// overloaded: more), not from PELT util/runnable against
    /// imbalance_pct.
    fn fork_group_stats(&mut self, m: &Machine, group: &CpuSet) -> ForkGroupStats {
        let mut load = 0u64;
        let mut util = 0u64;
        let mut nr = 0u64;
        let mut idle = 0u64;
        let mut capacity = 0u64;
        // The group's weight counted here, not with `CpuSet::count`: the
        // build targets baseline x86-64, whose popcount is a dozen
        // instructions a word, and a fork runs this for every group of
        // every domain (issue 18: 256 CPUs, 10,000 forks).
        let mut weight = 0u64;
        for c in group.iter() {
            load += self.fork_load(m, c);
            util += self.cpu_util(m, c);
            nr += m.rqs[c].nr_running as u64;
            idle += m.is_idle(c) as u64;
            capacity += Self::capacity_of(m, c);
            weight += 1;
        }
        let kind = match nr.cmp(&weight) {
            std::cmp::Ordering::Less => GroupType::HasSpare,
            std::cmp::Ordering::Equal => GroupType::FullyBusy,
            std::cmp::Ordering::Greater => GroupType::Overloaded,
        };
        ForkGroupStats {
            kind,
            avg_load: load * 1024 / capacity.max(1),
            util,
            idle,
        }
    }

    /// `sched_balance_find_dst_group` (6.12 fair.c): the idlest remote
    /// group of `cpu`'s domain at `level`, or None to stay in the local
    /// group.
    fn find_dst_group(
        &mut self,
        m: &Machine,
        p: TaskId,
        cpu: CpuId,
        level: usize,
    ) -> Option<CpuSet> {
        let allowed = m.tasks[p].affinity;
        let (_, groups, pct) = self.lb.domain_shape(cpu, level);
        // The groups in `local_first` order, read by index rather than
        // copied out (the stats below borrow `self` mutably): a copy was
        // an allocation and 32 bytes a group at every fork.
        let (nr_groups, first) = (groups.len(), super::balance::local_index(groups, cpu));
        let mut local: Option<ForkGroupStats> = None;
        let mut idlest: Option<(CpuSet, ForkGroupStats)> = None;
        for j in 0..nr_groups {
            let at = if first + j < nr_groups {
                first + j
            } else {
                first + j - nr_groups
            }; // (not `%`: a division a group)
            let g = self.lb.domain_shape(cpu, level).1[at];
            if g.and(&allowed).is_empty() {
                continue;
            }
            let st = self.fork_group_stats(m, &g);
            if g.contains(cpu) {
                local = Some(st);
                continue;
            }
            // update_pick_idlest
            let better = match &idlest {
                None => true,
                Some((_, b)) => match st.kind.cmp(&b.kind) {
                    std::cmp::Ordering::Less => true,
                    std::cmp::Ordering::Greater => false,
                    std::cmp::Ordering::Equal => match st.kind {
                        GroupType::HasSpare => {
                            st.idle > b.idle || (st.idle == b.idle && st.util < b.util)
                        }
                        _ => st.avg_load < b.avg_load,
                    },
                },
            };
            if better {
                idlest = Some((g, st));
            }
        }
        let (group, idlest) = idlest?;
        let Some(local) = local else {
            return Some(group);
        };
        if local.kind != idlest.kind {
            return (local.kind > idlest.kind).then_some(group);
        }
        match local.kind {
            GroupType::HasSpare => (local.idle < idlest.idle).then_some(group),
            _ => {
                let imbalance = 1024 * (pct - 100) / 100;
                let stay = idlest.avg_load >= local.avg_load + imbalance
                    || 100 * local.avg_load <= pct * idlest.avg_load;
                (!stay).then_some(group)
            }
        }
    }

    /// `sched_balance_find_dst_cpu`: in `group`, an idle CPU (the most
    /// recently idled; all idle states have the same exit latency here),
    /// else the least loaded allowed CPU.
    fn find_dst_cpu(&mut self, m: &Machine, p: TaskId, group: &CpuSet, this: CpuId) -> CpuId {
        let allowed = m.tasks[p].affinity;
        // One CPU (`cpumask_weight == 1`), asked without counting (see
        // `fork_group_stats`); an empty group, never given, would return
        // `this` either way.
        if !group.has_two() {
            return group.first().unwrap_or(this);
        }
        let mut idlest: Option<(CpuId, Ns)> = None;
        let mut least: Option<(CpuId, u64)> = None;
        for c in group.and(&allowed).iter() {
            if self.sched_idle_cpu(m, c) {
                return c;
            }
            if m.is_idle(c) {
                let stamp = m.rqs[c].idle_stamp.unwrap_or(0);
                if idlest.is_none_or(|(_, s)| stamp > s) {
                    idlest = Some((c, stamp));
                }
            } else if idlest.is_none() {
                let load = self.fork_load(m, c);
                if least.is_none_or(|(_, l)| load < l) {
                    least = Some((c, load));
                }
            }
        }
        idlest
            .map(|(c, _)| c)
            .or(least.map(|(c, _)| c))
            .unwrap_or(this)
    }

    /// Fork placement, the slow path of `select_task_rq_fair`
    /// (`sched_balance_find_dst_group`/`_cpu`, linux-smp.md §2): from the
    /// highest domain of `cpu` down, move to the idlest group's idlest CPU,
    /// then continue in that CPU's domains below the span just searched.
    fn find_idlest_cpu(&mut self, m: &Machine, p: TaskId, cpu: CpuId) -> CpuId {
        let mut cpu = cpu;
        let Some(mut level) = self.lb.levels_top_down(cpu).first().copied() else {
            return cpu;
        };
        loop {
            let next = match self.find_dst_group(m, p, cpu, level) {
                None => None,
                Some(group) => {
                    let new_cpu = self.find_dst_cpu(m, p, &group, cpu);
                    (new_cpu != cpu).then_some(new_cpu)
                }
            };
            match next {
                None => match level.checked_sub(1) {
                    Some(l) => level = l,
                    None => return cpu,
                },
                Some(new_cpu) => {
                    let weight = self.lb.domain_shape(cpu, level).0.count();
                    cpu = new_cpu;
                    match self.lb.highest_level_below(cpu, weight) {
                        Some(l) => level = l,
                        None => return cpu,
                    }
                }
            }
        }
    }

    /// `select_task_rq_fair`.
    pub(super) fn select_task_rq_fair(
        &mut self,
        m: &mut Machine,
        p: TaskId,
        prev: CpuId,
        flags: WakeFlags,
        waker: Waker,
    ) -> CpuId {
        let allowed = m.tasks[p].affinity;
        let chosen = if flags.has(WakeFlags::FORK) {
            self.find_idlest_cpu(m, p, waker.cpu)
        } else {
            let this = waker.cpu;
            if let Some(w) = waker.task {
                self.record_wakee(m, w, p);
            }
            let want_affine = self.hooks.wake_affine()
                && !self.wake_wide(m, p, waker.task)
                && allowed.contains(this);
            let target = if want_affine && this != prev {
                self.wake_affine(m, p, this, prev)
            } else {
                prev
            };
            self.select_idle_sibling(m, p, prev, target)
        };
        if allowed.contains(chosen) {
            return chosen;
        }
        // select_fallback_rq: an allowed idle CPU, else the first allowed one.
        allowed
            .iter()
            .find(|c| c < &m.nr_cpus() && m.is_idle(*c))
            .or_else(|| allowed.iter().find(|c| *c < m.nr_cpus()))
            .unwrap_or(0)
    }
}
