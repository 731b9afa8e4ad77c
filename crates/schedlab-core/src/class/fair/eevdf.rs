//! EEVDF as in Linux 6.12 (Debian 6.12.117; linux-eevdf.md).
//!
//! 1. Virtual time V is the weighted mean vruntime of the queue (§2); an
//!    entity is *eligible* when its lag w·(V − v) ≥ 0.
//! 2. Each entity requests `slice` of CPU; its virtual deadline is
//!    v + slice·1024/w (§2, §4). The pick is the eligible entity with the
//!    earliest deadline (§5); the tree is ordered by deadline.
//! 3. A running task is rescheduled when it has consumed its request
//!    (vruntime ≥ deadline), checked at ticks and other `update_curr` calls
//!    (§4); RUN_TO_PARITY protects it against wakeups until then (§6).
//! 4. Lag is saved at dequeue (clamped), restored and inflated at enqueue
//!    (PLACE_LAG, §7); new tasks get half a slice to their first deadline.
//! 5. A task that blocks while ineligible stays queued until it becomes
//!    eligible and is picked (DELAY_DEQUEUE, §8); DELAY_ZERO drops positive
//!    lag when it leaves.
//!
//! The reference point v0 of the kernel's `avg_vruntime` sums is 0 here and
//! the sums are i128 (no overflow possible); §1 notes v0 does not change V.

use super::entity::{RqId, SeId};
use super::tunables::Version;
use super::weights::calc_delta_fair;
use super::Fair;
use crate::class::{DequeueFlags, EnqueueFlags, WakeFlags};
use crate::clock::{MSEC, USEC};
use crate::cpuset::CpuId;
use crate::machine::Machine;
use crate::task::TaskId;
use crate::workload::Policy;

/// Division rounding toward −∞ (`avg_vruntime`'s "left bias").
pub(super) fn floor_div(a: i128, b: i128) -> i128 {
    // Both fit in 64 bits in practice (keys are relative to the queue's
    // zero point): one machine division instead of two 128-bit library calls
    // (avg_vruntime is on the wakeup and pick paths). i64::MIN / -1 is the
    // one quotient that does not fit, so it takes the slow path.
    if let (Ok(a64), Ok(b64)) = (i64::try_from(a), i64::try_from(b)) {
        if b64 > 0 {
            return i128::from(a64.div_euclid(b64));
        }
    }
    let q = a / b;
    if (a % b != 0) && ((a < 0) != (b < 0)) {
        q - 1
    } else {
        q
    }
}

impl Fair {
    fn curr_on_rq(&self, rq: RqId) -> Option<SeId> {
        self.cfs[rq].curr.filter(|c| self.se[*c].on_rq)
    }

    /// Σ(v·w) and Σw over the queue including current.
    pub(super) fn avg_sums(&self, rq: RqId) -> (i128, i128) {
        let q = &self.cfs[rq];
        let (mut sum, mut load) = (q.avg_vsum, q.avg_load as i128);
        if let Some(c) = self.curr_on_rq(rq) {
            let e = &self.se[c];
            sum += e.vruntime as i128 * e.w() as i128;
            load += e.w() as i128;
        }
        (sum, load)
    }

    /// `avg_vruntime` (§2): V, rounded toward −∞.
    pub(super) fn avg_vruntime(&mut self, rq: RqId) -> i64 {
        let (sum, load) = self.avg_sums(rq);
        if load == 0 {
            return self.cfs[rq].last_v;
        }
        let v = floor_div(sum, load) as i64;
        self.cfs[rq].last_v = v;
        v
    }

    /// `entity_eligible` (§2): Σ(v_j)w_j ≥ v_i·Σw_j.
    pub(super) fn entity_eligible(&self, rq: RqId, se: SeId) -> bool {
        let (sum, load) = self.avg_sums(rq);
        sum >= self.se[se].vruntime as i128 * load
    }

    fn protect_slice(&self, se: SeId) -> bool {
        let e = &self.se[se];
        if self.p.rules_618 {
            e.vruntime < e.vprot
        } else {
            e.vlag == e.deadline
        }
    }

    fn cancel_protect_slice(&mut self, se: SeId) {
        if self.protect_slice(se) {
            let e = &mut self.se[se];
            if self.p.rules_618 {
                e.vprot = e.vruntime;
            } else {
                e.vlag = e.deadline + 1;
            }
        }
    }

    /// `set_protect_slice` when `se` becomes current. 6.12: the marker
    /// vlag = deadline (protected until the request is used up). 6.17+
    /// (§5.3): protected up to vprot = deadline, or v + s/w with s the
    /// smallest slice queued (RUN_TO_PARITY; else the base slice) when
    /// that is shorter than its own.
    pub(super) fn set_protect_slice(&mut self, rq: RqId, se: SeId) {
        if !self.p.rules_618 {
            self.se[se].vlag = self.se[se].deadline;
            return;
        }
        let s = if self.p.run_to_parity {
            self.cfs_rq_min_slice(rq)
        } else {
            self.p.base_slice
        };
        let e = &self.se[se];
        let s = s.min(e.slice);
        let vprot = if s == e.slice {
            e.deadline
        } else {
            e.deadline.min(e.vruntime + calc_delta_fair(s, e.lw) as i64)
        };
        self.se[se].vprot = vprot;
    }

    /// Largest requested slice on a queue (6.17 lag clamp).
    fn cfs_rq_max_slice(&self, rq: RqId) -> u64 {
        let tree = self.cfs[rq].tree.slice_range().map(|r| r.1);
        let curr = self.curr_on_rq(rq).map(|c| self.se[c].slice);
        tree.into_iter()
            .chain(curr)
            .max()
            .unwrap_or(self.p.base_slice)
    }

    /// `update_deadline` (§4): true once the request is used up.
    fn update_deadline(&mut self, se: SeId) -> bool {
        let e = &mut self.se[se];
        if e.vruntime < e.deadline {
            return false;
        }
        if !e.custom_slice {
            e.slice = self.p.base_slice;
        }
        e.deadline = e.vruntime + calc_delta_fair(e.slice, e.lw) as i64;
        true
    }

    /// The tail of `update_curr` for EEVDF (§4): resched when the request
    /// is used up or, with PREEMPT_SHORT, when curr became ineligible.
    pub(super) fn eevdf_update_curr_tail(&mut self, m: &mut Machine, rq: RqId, curr: SeId) {
        let resched = self.update_deadline(curr);
        if self.cfs[rq].nr_running <= 1 {
            return;
        }
        // 6.17+: resched whenever the protection is over; 6.12: only when
        // a short-slice preemption left curr unprotected and ineligible.
        let short = if self.p.rules_618 {
            !self.protect_slice(curr)
        } else {
            self.p.preempt_short && !self.protect_slice(curr) && !self.entity_eligible(rq, curr)
        };
        if resched || short {
            m.resched(self.cfs[rq].cpu);
            self.clear_buddies(rq, curr);
        }
    }

    /// `update_entity_lag` (§2): vlag = clamp(V − v, ±calc_delta_fair(max(2·slice, TICK))).
    fn update_entity_lag(&mut self, m: &Machine, rq: RqId, se: SeId) {
        let v = self.avg_vruntime(rq);
        let e = &self.se[se];
        let span = if self.p.rules_618 {
            // 6.17 "increase max lag clamping": max queued slice + TICK.
            self.cfs_rq_max_slice(rq).max(e.slice) + m.tick_ns()
        } else {
            (2 * e.slice).max(m.tick_ns())
        };
        let limit = calc_delta_fair(span, e.lw) as i64;
        let limit = self.hooks.lag_limit(limit);
        self.se[se].vlag = (v - e.vruntime).clamp(-limit, limit);
    }

    /// `place_entity` (§7).
    fn eevdf_place_entity(&mut self, m: &Machine, rq: RqId, se: SeId, flags: EnqueueFlags) {
        let v = self.avg_vruntime(rq);
        if !self.se[se].custom_slice {
            self.se[se].slice = self.p.base_slice;
        }
        let mut vslice = calc_delta_fair(self.se[se].slice, self.se[se].lw) as i64;
        let mut lag: i64 = 0;
        if self.p.place_lag && self.cfs[rq].nr_running > 0 && self.se[se].vlag != 0 {
            let mut load = self.cfs[rq].avg_load as i128;
            if let Some(c) = self.curr_on_rq(rq) {
                load += self.se[c].w() as i128;
            }
            let l = self.se[se].vlag as i128 * (load + self.se[se].w() as i128);
            lag = (l / load.max(1)) as i64;
        }
        if let Some(t) = self.se[se].task {
            (lag, vslice) = self.hooks.place(m, t, lag, vslice);
        }
        self.se[se].vruntime = v - lag;
        if self.p.place_rel_deadline && self.se[se].rel_deadline {
            self.se[se].deadline += self.se[se].vruntime;
            self.se[se].rel_deadline = false;
            return;
        }
        if let Some(v) = self.hooks.deadline_vslice(flags, vslice) {
            vslice = v;
        } else if self.p.place_deadline_initial && flags.has(EnqueueFlags::INITIAL) {
            vslice /= 2;
        }
        self.se[se].deadline = self.se[se].vruntime + vslice;
    }

    /// `enqueue_entity` (6.12).
    pub(super) fn eevdf_enqueue_entity(
        &mut self,
        m: &mut Machine,
        rq: RqId,
        se: SeId,
        flags: EnqueueFlags,
    ) {
        let curr = self.cfs[rq].curr == Some(se);
        if curr {
            self.eevdf_place_entity(m, rq, se, flags);
        }
        self.update_curr(m, rq);
        if self.se[se].my_q.is_some() {
            self.update_cfs_group(m, se);
        }
        if !curr {
            self.eevdf_place_entity(m, rq, se, flags);
        }
        self.account_enqueue(m, rq, se);
        if !curr {
            self.tree_insert(rq, se);
        }
    }

    /// `dequeue_entity` (6.12, §8): false if the dequeue is delayed.
    pub(super) fn eevdf_dequeue_entity(
        &mut self,
        m: &mut Machine,
        rq: RqId,
        se: SeId,
        flags: DequeueFlags,
    ) -> bool {
        self.update_curr(m, rq);
        let completing = flags.has(DequeueFlags::DELAYED);
        if !completing {
            let sleep = flags.has(DequeueFlags::SLEEP) && !flags.has(DequeueFlags::SPECIAL);
            if self.p.delay_dequeue && sleep && !self.entity_eligible(rq, se) {
                if self.cfs[rq].next == Some(se) {
                    self.clear_buddies(rq, se);
                }
                self.se[se].delayed = true;
                return false;
            }
        }
        self.clear_buddies(rq, se);
        self.update_entity_lag(m, rq, se);
        if self.p.place_rel_deadline && !flags.has(DequeueFlags::SLEEP) {
            self.se[se].deadline -= self.se[se].vruntime;
            self.se[se].rel_deadline = true;
        }
        if self.in_tree(rq, se) {
            self.tree_remove(rq, se);
        }
        self.se[se].on_rq = false;
        self.account_dequeue(m, rq, se);
        if self.se[se].my_q.is_some() {
            self.update_cfs_group(m, se);
        }
        if completing || self.se[se].delayed {
            self.se[se].delayed = false;
            if self.p.delay_zero && self.se[se].vlag > 0 {
                self.se[se].vlag = 0;
            }
        }
        true
    }

    /// `requeue_delayed_entity` (§8): an early wakeup keeps the entity in
    /// place; with DELAY_ZERO positive lag is dropped and it is re-placed at V.
    pub(super) fn requeue_delayed_entity(&mut self, m: &mut Machine, se: SeId) {
        let rq = self.se[se].cfs_rq;
        self.update_curr(m, rq);
        if self.p.delay_zero {
            self.update_entity_lag(m, rq, se);
            if self.se[se].vlag > 0 {
                self.cfs[rq].nr_running -= 1;
                if self.in_tree(rq, se) {
                    self.tree_remove(rq, se);
                }
                self.se[se].vlag = 0;
                self.eevdf_place_entity(m, rq, se, EnqueueFlags::default());
                if self.cfs[rq].curr != Some(se) {
                    self.tree_insert(rq, se);
                }
                self.cfs[rq].nr_running += 1;
            }
        }
        self.se[se].delayed = false;
    }

    /// Smallest requested slice on a queue (`cfs_rq_min_slice`).
    pub(super) fn cfs_rq_min_slice(&self, rq: RqId) -> u64 {
        // The queued entities' smallest slice is kept per timeline chunk
        // (the kernel's se->min_slice augmentation, 6.12).
        let tree = self.cfs[rq].tree.slice_range().map(|r| r.0);
        let curr = self.curr_on_rq(rq).map(|c| self.se[c].slice);
        tree.into_iter()
            .chain(curr)
            .min()
            .unwrap_or(self.p.base_slice)
    }

    /// `pick_eevdf` (§5).
    pub(super) fn pick_eevdf(&mut self, m: &Machine, rq: RqId) -> Option<SeId> {
        self.pick_eevdf_protect(m, rq, true)
    }

    /// `pick_eevdf(cfs_rq, protect)`: 6.17+ takes whether curr's slice
    /// protection counts and checks the next buddy itself (§5.3).
    fn pick_eevdf_protect(&mut self, m: &Machine, rq: RqId, protect: bool) -> Option<SeId> {
        let first = self.cfs[rq].first();
        if self.cfs[rq].nr_running == 1 {
            return self.curr_on_rq(rq).or(first);
        }
        if self.p.rules_618 && self.p.pick_buddy {
            if let Some(n) = self.cfs[rq].next.filter(|n| self.entity_eligible(rq, *n)) {
                return Some(n);
            }
        }
        let mut curr = self.curr_on_rq(rq);
        if let Some(c) = curr {
            if !self.entity_eligible(rq, c) {
                curr = None;
            }
        }
        if let Some(c) = curr {
            let guarded = if self.p.rules_618 {
                protect
            } else {
                self.p.run_to_parity
            };
            if guarded && self.protect_slice(c) && self.hooks.run_to_parity(self.cfs[rq].nr_running)
            {
                return Some(c);
            }
        }
        // V's sums do not change during the scan: compute them once.
        let (sum, load) = self.avg_sums(rq);
        let eligible = |f: &Self, s: SeId| sum >= f.se[s].vruntime as i128 * load;
        // `entity_eligible` on the vruntime each timeline entry keeps (the
        // same value: invariants.rs); load ≥ 0, so eligibility falls as
        // vruntime grows and a chunk whose smallest is not eligible is
        // skipped, as the kernel's min_vruntime augmentation allows.
        let mut best = self.cfs[rq].tree.find_first_v(|v| sum >= v as i128 * load);
        if let Some(b) = best.filter(|_| self.hooks.breaks_ties()) {
            best = Some(self.break_tie(m, rq, b, &eligible));
        }
        let best = match (best, curr) {
            (None, c) => c,
            (Some(b), Some(c)) if self.se[c].deadline < self.se[b].deadline => Some(c),
            (b, _) => b,
        };
        // Rounding can leave nobody eligible: fall back to the earliest deadline.
        best.or(first)
    }

    /// `pick_next_entity` (6.12): the next buddy if eligible (PICK_BUDDY),
    /// else `pick_eevdf`. A delayed result is reaped by the caller.
    pub(super) fn eevdf_pick_next_entity(&mut self, m: &mut Machine, rq: RqId) -> Option<SeId> {
        if self.p.pick_buddy {
            if let Some(n) = self.cfs[rq].next {
                if self.entity_eligible(rq, n) {
                    return Some(n);
                }
            }
        }
        self.pick_eevdf(m, rq)
    }

    /// Among the eligible entities queued after `first` with its deadline,
    /// the one `FairHooks::pick_tie_break` prefers (task entities only).
    fn break_tie(
        &self,
        m: &Machine,
        rq: RqId,
        first: SeId,
        eligible: &dyn Fn(&Self, SeId) -> bool,
    ) -> SeId {
        let (d, mut best) = (self.se[first].deadline, first);
        for s in self.cfs[rq].tree.iter().skip_while(|s| *s != first).skip(1) {
            if self.se[s].deadline != d {
                break;
            }
            let (Some(a), Some(b)) = (self.se[best].task, self.se[s].task) else {
                continue;
            };
            if eligible(self, s) && self.hooks.pick_tie_break(m, a, b) {
                best = s;
            }
        }
        best
    }

    /// `yield_task_fair` tail (§9).
    pub(super) fn eevdf_yield(&mut self, rq: RqId, se: SeId) {
        let vslice = calc_delta_fair(self.se[se].slice, self.se[se].lw) as i64;
        if self.p.yield_forfeit {
            if self.entity_eligible(rq, se) {
                self.se[se].vruntime = self.se[se].deadline;
                self.se[se].deadline += vslice;
            }
        } else {
            self.se[se].deadline += vslice;
        }
    }

    /// `reweight_eevdf` (§9): keep V, rescale lag and remaining request.
    pub(super) fn reweight_eevdf(&mut self, rq: RqId, se: SeId, w_new: u64) {
        let w_old = self.se[se].w() as i128;
        let w_new_i = w_new as i128;
        if self.se[se].on_rq {
            // `se` is out of the sums here (removed by the caller or curr).
            let in_sums = self.cfs[rq].curr != Some(se);
            let v = if in_sums {
                // Temporarily re-add to compute V over the full queue.
                let e = &self.se[se];
                let (s, l) = self.avg_sums(rq);
                floor_div(s + e.vruntime as i128 * w_old, (l + w_old).max(1)) as i64
            } else {
                self.avg_vruntime(rq)
            };
            let e = &mut self.se[se];
            e.vruntime = v - ((v - e.vruntime) as i128 * w_old / w_new_i) as i64;
            e.deadline = v + ((e.deadline - v) as i128 * w_old / w_new_i) as i64;
        } else {
            let e = &mut self.se[se];
            e.vlag = (e.vlag as i128 * w_old / w_new_i) as i64;
            if e.rel_deadline {
                e.deadline = (e.deadline as i128 * w_old / w_new_i) as i64;
            }
        }
    }

    /// `check_preempt_wakeup_fair` (6.12.117 order, §6).
    pub(super) fn eevdf_check_preempt_wakeup(
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
        if self.p.next_buddy && !flags.has(WakeFlags::FORK) && !self.se[pse0].delayed {
            self.set_next_buddy(pse0);
        }
        if m.rqs[cpu].need_resched || !self.p.wakeup_preemption {
            return;
        }
        let (se, pse) = self.find_matching_se(se0, pse0);
        let (ci, pi) = (self.se[se].idle, self.se[pse].idle);
        if ci && !pi {
            self.cancel_protect_slice(se);
            m.resched(cpu);
            return;
        }
        if ci != pi || m.tasks[p].policy != Policy::Other {
            return;
        }
        let rq = self.se[se].cfs_rq;
        self.update_curr(m, rq);
        if self.p.rules_618 {
            // 6.17+ (§5.3): a shorter-slice wakee ignores curr's protection
            // for this one pick. 6.18-stable (the context of its review
            // patch 788/957, May 2026): a wakee that is not picked shortens
            // curr's protection to v + the smallest queued slice
            // (`update_protect_slice`), short or not; and the pick is
            // `pick_next_entity`, which reaps a delayed entity it finds and
            // picks again (ac8e69e69363 "Fix wakeup_preempt_fair() vs
            // delayed dequeue", in that series): a delayed entity is past
            // its 0-lag point and must not decide the preemption.
            let short = self.p.preempt_short && self.se[pse].slice < self.se[se].slice;
            loop {
                match self.pick_eevdf_protect(m, rq, !short) {
                    Some(n) if n == pse => {
                        if short {
                            self.cancel_protect_slice(se);
                        }
                        m.resched(cpu);
                        return;
                    }
                    Some(n) if self.se[n].delayed => self.reap_delayed(m, n),
                    _ => break,
                }
            }
            if self.p.run_to_parity {
                let min = self.cfs_rq_min_slice(rq);
                let e = &mut self.se[se];
                e.vprot = e.vprot.min(e.vruntime + calc_delta_fair(min, e.lw) as i64);
            }
            return;
        }
        if self.p.preempt_short && self.do_preempt_short(rq, pse, se) {
            self.cancel_protect_slice(se);
        }
        if self.pick_eevdf(m, rq) == Some(pse) {
            m.resched(cpu);
        }
    }

    /// `do_preempt_short` (§6).
    fn do_preempt_short(&self, rq: RqId, pse: SeId, se: SeId) -> bool {
        let (p, s) = (&self.se[pse], &self.se[se]);
        if p.slice >= s.slice || !self.entity_eligible(rq, pse) {
            return false;
        }
        p.deadline < s.deadline || !self.entity_eligible(rq, se)
    }
}

impl Fair {
    /// `__setscheduler_params` for a fair task: the SCHED_IDLE flag, and
    /// under EEVDF its requested slice (`sched_attr.sched_runtime`,
    /// clamped to 100 µs ..= 100 ms) or the base slice.
    pub(super) fn refresh_task_params(&mut self, m: &Machine, t: TaskId) {
        let task = &m.tasks[t];
        let se = self.task_se[t];
        self.se[se].idle = task.policy == Policy::Idle;
        if self.p.version == Version::Eevdf {
            match task.custom_slice {
                Some(s) => {
                    self.se[se].slice = s.clamp(100 * USEC, 100 * MSEC);
                    self.se[se].custom_slice = true;
                }
                None => {
                    self.se[se].slice = self.p.base_slice;
                    self.se[se].custom_slice = false;
                }
            }
        }
    }
}
