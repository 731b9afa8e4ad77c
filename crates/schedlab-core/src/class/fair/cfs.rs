//! CFS as in Linux 6.1 (linux-cfs.md): the rules that differ from EEVDF.
//!
//! 1. Slices (§5): `sched_period` stretches past `sched_nr_latency` tasks;
//!    `sched_slice` = period × w/W per hierarchy level, ALT_PERIOD counting
//!    every fair task of the CPU, floored at min_granularity (BASE_SLICE).
//! 2. Placement (§6): wakeups get at most latency/2 of sleeper credit below
//!    `min_vruntime` (GENTLE_FAIR_SLEEPERS) and never move back; forks start
//!    one vslice late (START_DEBIT). vruntime is stored relative to
//!    `min_vruntime` while a task is off a queue other than by sleeping, and
//!    renormalised on the new queue (migration).
//! 3. Preemption (§7): at the tick when the slice is used up or the lead
//!    over the leftmost exceeds the slice; at wakeup when the wakee's
//!    vruntime is more than wakeup_granularity (in the wakee's virtual time)
//!    behind. SCHED_BATCH never wakeup-preempts; SCHED_IDLE always loses.
//! 4. Pick (§7): leftmost, unless the skip/next/last buddies are preferred
//!    within wakeup_granularity.

use super::entity::{RqId, SeId};
use super::weights::{calc_delta, calc_delta_fair, LoadWeight};
use super::Fair;
use crate::class::{DequeueFlags, EnqueueFlags, WakeFlags};
use crate::cpuset::CpuId;
use crate::machine::Machine;
use crate::task::TaskId;
use crate::workload::Policy;

impl Fair {
    /// `update_min_vruntime` (§3): monotonic max of min(curr, leftmost).
    pub(super) fn update_min_vruntime(&mut self, rq: RqId) {
        if !self.timeline {
            return;
        }
        let q = &self.cfs[rq];
        let curr = q.curr.filter(|c| self.se[*c].on_rq);
        let mut v = q.min_vruntime;
        if let Some(c) = curr {
            v = self.se[c].vruntime;
        }
        if let Some(l) = q.first() {
            let lv = self.se[l].vruntime;
            v = if curr.is_some() { v.min(lv) } else { lv };
        }
        if v > q.min_vruntime {
            self.cfs[rq].min_vruntime = v;
        }
    }

    /// `__sched_period` (§5).
    fn sched_period(&self, n: u64) -> u64 {
        if n > self.p.nr_latency {
            n * self.p.min_gran
        } else {
            self.p.latency
        }
    }

    /// `sched_slice` (§5): the wall-clock slice of `se` on `rq`.
    pub(super) fn sched_slice(&self, rq: RqId, se: SeId) -> u64 {
        let cpu = self.cfs[rq].cpu;
        let nr = self.root_rq(cpu).h_nr_running as u64;
        let mut slice = self.sched_period(nr + u64::from(!self.se[se].on_rq));
        for s in self.chain(se) {
            let q = &self.cfs[self.se[s].cfs_rq];
            let mut load = q.load;
            if !self.se[s].on_rq {
                load += self.se[s].w();
            }
            slice = calc_delta(slice, self.se[s].w(), LoadWeight::new(load.max(1)));
        }
        let all_idle = self.cfs[rq].h_nr_running > 0 && self.se[se].idle;
        let min_gran = if self.se[se].idle && !all_idle {
            self.p.idle_min_gran
        } else {
            self.p.min_gran
        };
        slice.max(min_gran)
    }

    /// `place_entity` (§6).
    fn cfs_place_entity(&mut self, rq: RqId, se: SeId, initial: bool) {
        if !self.timeline {
            return;
        }
        let mut v = self.cfs[rq].min_vruntime;
        if initial && self.p.start_debit {
            v += calc_delta_fair(self.sched_slice(rq, se), self.se[se].lw) as i64;
        }
        if !initial {
            let mut thresh = if self.se[se].idle {
                self.p.min_gran
            } else {
                self.p.latency
            };
            if self.p.gentle_fair_sleepers {
                thresh /= 2;
            }
            v -= thresh as i64;
        }
        // Never move a task backwards (the long-sleeper clause needs ~104
        // days of sleep and cannot trigger in a simulation).
        self.se[se].vruntime = self.se[se].vruntime.max(v);
    }

    /// `task_fork_fair` (§6): copy the parent's vruntime, START_DEBIT, store
    /// relative to the queue's `min_vruntime`.
    pub(super) fn cfs_task_fork(&mut self, m: &mut Machine, t: TaskId, parent: Option<TaskId>) {
        let se = self.task_se[t];
        let rq = self.se[se].cfs_rq;
        self.update_curr(m, rq);
        if !self.timeline {
            // CacULE's task_fork_fair: update_curr only; the child keeps
            // the 0 of __sched_fork.
            self.se[se].vruntime = 0;
            return;
        }
        if let Some(c) = self.cfs[rq].curr {
            self.se[se].vruntime = self.se[c].vruntime;
        } else if let Some(p) = parent {
            self.se[se].vruntime = self.se[self.task_se[p]].vruntime;
        }
        self.cfs_place_entity(rq, se, true);
        self.se[se].vruntime -= self.cfs[rq].min_vruntime;
    }

    /// `enqueue_entity` (§6).
    pub(super) fn cfs_enqueue_entity(
        &mut self,
        m: &mut Machine,
        rq: RqId,
        se: SeId,
        flags: EnqueueFlags,
    ) {
        let renorm = !flags.has(EnqueueFlags::WAKEUP) || flags.has(EnqueueFlags::MIGRATED);
        let curr = self.cfs[rq].curr == Some(se);
        if renorm && curr {
            self.se[se].vruntime += self.cfs[rq].min_vruntime;
        }
        self.update_curr(m, rq);
        if renorm && !curr {
            self.se[se].vruntime += self.cfs[rq].min_vruntime;
        }
        if self.se[se].my_q.is_some() {
            self.update_cfs_group(m, se);
        }
        self.account_enqueue(m, rq, se);
        if flags.has(EnqueueFlags::WAKEUP) {
            self.cfs_place_entity(rq, se, false);
        }
        if !curr {
            self.tree_insert(rq, se);
        }
    }

    /// `dequeue_entity` (§6).
    pub(super) fn cfs_dequeue_entity(
        &mut self,
        m: &mut Machine,
        rq: RqId,
        se: SeId,
        flags: DequeueFlags,
    ) {
        self.update_curr(m, rq);
        self.clear_buddies(rq, se);
        if self.in_tree(rq, se) {
            self.tree_remove(rq, se);
        }
        self.se[se].on_rq = false;
        self.account_dequeue(m, rq, se);
        if !flags.has(DequeueFlags::SLEEP) {
            self.se[se].vruntime -= self.cfs[rq].min_vruntime;
        }
        if self.se[se].my_q.is_some() {
            self.update_cfs_group(m, se);
        }
        let save_only = flags.has(DequeueFlags::SAVE) && !flags.has(DequeueFlags::MOVE);
        if !save_only {
            self.update_min_vruntime(rq);
        }
    }

    /// `check_preempt_tick` (§7).
    pub(super) fn cfs_check_preempt_tick(&mut self, m: &mut Machine, rq: RqId, curr: SeId) {
        let ideal = self.sched_slice(rq, curr);
        let e = &self.se[curr];
        let ran = e.sum_exec - e.prev_sum_exec;
        let cpu = self.cfs[rq].cpu;
        if ran > ideal {
            m.resched(cpu);
            self.clear_buddies(rq, curr);
            return;
        }
        if ran < self.p.min_gran {
            return;
        }
        debug_assert!(self.timeline, "CFS's tick test reads the timeline");
        let Some(left) = self.cfs[rq].first() else {
            return;
        };
        let d = self.se[curr].vruntime - self.se[left].vruntime;
        if d > 0 && d as u64 > ideal {
            m.resched(cpu);
        }
    }

    /// `wakeup_preempt_entity` (§7): 1 if `se` should preempt `curr`.
    /// With `policy_gran`, a task `se`'s granularity passes through
    /// `FairHooks::wakeup_gran` (BORE 1.7.3's `wakeup_preempt_entity_bscale`).
    pub(super) fn wakeup_preempt_entity(&self, curr: SeId, se: SeId, policy_gran: bool) -> i32 {
        let vdiff = self.se[curr].vruntime - self.se[se].vruntime;
        if vdiff <= 0 {
            return -1;
        }
        let mut gran = calc_delta_fair(self.p.wakeup_gran, self.se[se].lw);
        if let (true, Some(t)) = (policy_gran, self.se[se].task) {
            gran = self.hooks.wakeup_gran(t, gran);
        }
        i32::from(vdiff > gran as i64)
    }

    /// `pick_next_entity` (§7).
    pub(super) fn cfs_pick_next_entity(&self, rq: RqId) -> Option<SeId> {
        debug_assert!(self.timeline, "CFS's pick reads the timeline");
        let q = &self.cfs[rq];
        let curr = q.curr.filter(|c| self.se[*c].on_rq);
        let first = q.first();
        let left = match (first, curr) {
            (None, c) => c?,
            (Some(l), Some(c)) if self.se[c].vruntime < self.se[l].vruntime => c,
            (Some(l), _) => l,
        };
        let mut se = left;
        if q.skip == Some(se) {
            let second = if Some(se) == curr {
                first
            } else {
                let after = q.tree.after(self.se[se].key.0, self.se[se].key.1).next();
                match (after, curr) {
                    (None, c) => c,
                    (Some(a), Some(c)) if self.se[c].vruntime < self.se[a].vruntime => Some(c),
                    (a, _) => a,
                }
            };
            if let Some(s2) = second {
                if self.wakeup_preempt_entity(s2, left, false) < 1 {
                    se = s2;
                }
            }
        }
        if let Some(n) = q
            .next
            .filter(|n| self.wakeup_preempt_entity(*n, left, true) < 1)
        {
            se = n;
        } else if let Some(l) = q
            .last
            .filter(|l| self.wakeup_preempt_entity(*l, left, false) < 1)
        {
            se = l;
        }
        Some(se)
    }

    /// `check_preempt_wakeup` (§7).
    pub(super) fn cfs_check_preempt_wakeup(
        &mut self,
        m: &mut Machine,
        cpu: CpuId,
        curr: TaskId,
        p: TaskId,
        flags: WakeFlags,
    ) {
        let (se0, pse0) = (self.task_se[curr], self.task_se[p]);
        if se0 == pse0 {
            return;
        }
        let crq = self.se[se0].cfs_rq;
        let scale = self.cfs[crq].nr_running as u64 >= self.p.nr_latency;
        let mut next_marked = false;
        let order = self.queue_order();
        if self.p.next_buddy && scale && !flags.has(WakeFlags::FORK) && self.buddies_enabled() {
            self.set_next_buddy(pse0);
            next_marked = true;
        }
        if m.rqs[cpu].need_resched {
            return;
        }
        let (cpol, ppol) = (m.tasks[curr].policy, m.tasks[p].policy);
        let mut preempt = cpol == Policy::Idle && ppol != Policy::Idle;
        let mut matched = se0;
        if !preempt {
            if ppol != Policy::Other || !self.p.wakeup_preemption {
                return;
            }
            let (se, pse) = self.find_matching_se(se0, pse0);
            matched = se;
            let (ci, pi) = (self.se[se].idle, self.se[pse].idle);
            if ci && !pi {
                preempt = true;
            } else if ci != pi {
                return;
            } else {
                let rq = self.se[se].cfs_rq;
                self.update_curr(m, rq);
                let wins = match order {
                    // CacULE: the wakee preempts iff it runs first (order.rs).
                    Some(o) if o.wakeup_by_order => self.order_before(m, pse, se),
                    _ => self.wakeup_preempt_entity(se, pse, true) == 1,
                };
                if wins {
                    if !next_marked {
                        self.set_next_buddy(pse);
                    }
                    preempt = true;
                }
            }
        }
        if !preempt {
            return;
        }
        m.resched(cpu);
        // LAST_BUDDY applies only when the preempted entity is a task.
        let is_task = self.se[matched].task.is_some();
        if self.p.last_buddy && scale && is_task && self.se[matched].on_rq {
            self.set_buddy(matched, 1);
        }
    }
}
