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

use super::Fair;
use crate::class::{WakeFlags, Waker};
use crate::clock::{Ns, SEC};
use crate::cpuset::{CpuId, CpuSet};
use crate::machine::Machine;
use crate::task::TaskId;
use crate::workload::Policy;

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

    /// PELT utilisation of a CPU (0..=1024).
    pub fn cpu_util(&mut self, m: &Machine, cpu: CpuId) -> u64 {
        let busy = m.rqs[cpu].curr.is_some();
        self.util[cpu].update(m.now, if busy { 1024 } else { 0 });
        self.util[cpu].avg().min(1024)
    }

    /// `task_h_load`: the task's PELT load as seen at the root queue.
    pub fn task_h_load(&mut self, m: &Machine, t: TaskId) -> u64 {
        let se = self.task_se[t];
        let w = if self.se[se].on_rq {
            self.se[se].w()
        } else {
            0
        };
        self.se[se].load.update(m.now, w);
        let mut load = self.se[se].load.avg() as u128;
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
            (self.cpu_load(m, this) + task_load) as u128 * 100 * m.topo.cpu(prev).capacity as u128;
        let prev_eff = self.cpu_load(m, prev).saturating_sub(task_load) as u128
            * (100 + (pct - 100) / 2) as u128
            * m.topo.cpu(this).capacity as u128;
        if this_eff < prev_eff {
            this
        } else {
            prev
        }
    }

    /// `nr_idle_scan` from SIS_UTIL (linux-smp.md §2).
    fn nr_idle_scan(&mut self, m: &Machine, llc: CpuSet) -> u64 {
        let w = llc.count() as u128;
        let sum: u128 = llc.iter().map(|c| self.cpu_util(m, c) as u128).sum();
        let x = sum / w;
        let pct = 117u128;
        let tmp = (x * x * pct * pct / (10000 * 1024)).min(1024);
        ((1024 - tmp) * w / 1024) as u64
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
        let smt = m.topo.has_smt();
        let has_idle_core = smt && llc.iter().any(|c| self.idle_core(m, c));
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
        let nr = self.nr_idle_scan(m, m.topo.llc(target));
        if nr > 0 {
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

    /// Fork placement (`sched_balance_find_dst_group`/`_cpu`, simplified):
    /// descend the domains of `cpu` choosing the group with the most idle
    /// allowed CPUs (the local group on ties, then lower load), then the
    /// most recently idled CPU, else the least loaded one.
    fn find_idlest_cpu(&mut self, m: &Machine, p: TaskId, cpu: CpuId) -> CpuId {
        let allowed = m.tasks[p].affinity;
        let mut span = m.topo.all().and(&allowed);
        for level in self.lb.levels_top_down(cpu) {
            let groups = self.lb.groups_of(cpu, level);
            let mut best: Option<(usize, u64, CpuSet)> = None;
            for g in groups {
                let g = g.and(&span);
                if g.is_empty() {
                    continue;
                }
                let idle = g.iter().filter(|c| m.is_idle(*c)).count();
                let load: u64 = g
                    .iter()
                    .map(|c| self.cpu_load(m, c) + 1024 * m.rqs[c].nr_running as u64)
                    .sum();
                let local = g.contains(cpu);
                let better = match &best {
                    None => true,
                    Some((bi, bl, bg)) => {
                        idle > *bi
                            || (idle == *bi
                                && (load < *bl && !bg.contains(cpu) || local && load <= *bl))
                    }
                };
                if better {
                    best = Some((idle, load, g));
                }
            }
            if let Some((_, _, g)) = best {
                span = g;
            }
        }
        let idle = span
            .iter()
            .filter(|c| m.is_idle(*c))
            .max_by_key(|c| (m.rqs[*c].idle_stamp, std::cmp::Reverse(*c)));
        if let Some(c) = idle {
            return c;
        }
        span.iter()
            .min_by_key(|c| (m.rqs[*c].nr_running, self.cpu_load(m, *c), *c))
            .unwrap_or(cpu)
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
        let fallback = allowed
            .iter()
            .find(|c| c < &m.nr_cpus() && m.is_idle(*c))
            .or_else(|| allowed.iter().find(|c| *c < m.nr_cpus()))
            .unwrap_or(0);
        fallback
    }
}
