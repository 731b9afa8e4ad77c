//! The class's dispatch path (kernel/sched/ext.c v6.12): `do_enqueue_task`
//! (direct dispatch or `ops.enqueue`), `balance_one` (local DSQ, global
//! DSQ, `ops.dispatch` rounds, keeping `prev`), and the lost-task check
//! when every CPU goes idle.

use super::ops::*;
use super::state::{ExtState, Insert, Where};
use super::{watchdog, ExtClass, ExtOps, Hook};
use crate::cpuset::CpuId;
use crate::machine::Machine;
use crate::task::TaskId;

impl<P: ExtOps> ExtClass<P> {
    /// `do_enqueue_task`: direct dispatch, or `ops.enqueue`.
    pub(super) fn do_enqueue(&mut self, m: &mut Machine, cpu: CpuId, t: TaskId, enq: u64) {
        if !self.st.live() {
            return self.bypass_insert(t);
        }
        let ins = match self.st.tasks[t].ddsp.take() {
            Some(i) => Some(i),
            None => {
                self.st.ddsp_task = Some(t);
                self.call(m, Hook::Enqueue, cpu, |o, c| o.enqueue(c, t, enq));
                self.st.ddsp_task = None;
                if !self.st.live() {
                    self.st.tasks[t].ddsp = None;
                    return self.bypass_insert(t);
                }
                self.st.tasks[t].ddsp.take()
            }
        };
        match ins {
            // direct_dispatch
            Some(i) => {
                let i = Insert {
                    flags: i.flags | enq,
                    ..i
                };
                if let Err(e) = self.st.commit(m, t, i, cpu) {
                    self.task_error(m, Hook::Enqueue, cpu, t, &e);
                    self.bypass_insert(t);
                }
            }
            None => {
                self.st.tasks[t].at = Where::Custody;
                self.st.tasks[t].custody_since = m.now;
            }
        }
    }

    /// `balance_one`.
    pub(super) fn balance_one(&mut self, m: &mut Machine, cpu: CpuId) {
        let prev = self.st.cpus[cpu].curr;
        let prev_on_rq = prev.is_some_and(|p| self.st.tasks[p].queued);
        let slice_left = |st: &ExtState| prev.is_some_and(|p| st.tasks[p].slice > 0);
        if prev.is_some() {
            self.update_curr_scx(m, cpu);
            if prev_on_rq && slice_left(&self.st) && self.st.live() {
                self.st.cpus[cpu].keep = true;
                return;
            }
        }
        if self.st.local_nr(cpu) > 0 || self.st.consume(m, SCX_DSQ_GLOBAL, cpu) {
            return;
        }
        if self.st.live() {
            let mut loops = SCX_DSP_MAX_LOOPS;
            loop {
                self.st.dsp_nr = 0;
                self.call(m, Hook::Dispatch, cpu, |o, c| {
                    o.dispatch(c, cpu, prev);
                    c.flush_dispatch();
                });
                if !self.st.live() {
                    break;
                }
                if prev_on_rq && slice_left(&self.st) {
                    self.st.cpus[cpu].keep = true;
                    return;
                }
                if self.st.local_nr(cpu) > 0 || self.st.consume(m, SCX_DSQ_GLOBAL, cpu) {
                    return;
                }
                if self.st.dsp_nr == 0 {
                    break;
                }
                loops -= 1;
                if loops == 0 {
                    // scx_bpf_kick_cpu(cpu, 0): finish this pick, then retry.
                    m.resched(cpu);
                    break;
                }
            }
        }
        // no_tasks: keep running prev unless SCX_OPS_ENQ_LAST.
        if prev_on_rq && (self.st.flags & SCX_OPS_ENQ_LAST == 0 || !self.st.live()) {
            self.st.cpus[cpu].keep = true;
        }
    }

    /// Report a task the policy holds while every CPU goes idle.
    pub(super) fn check_lost(&mut self, m: &Machine, cpu: CpuId) {
        if !self.st.live() || !self.bal_ran[cpu] || !self.st.timers.is_empty() {
            return;
        }
        let all_idle = m
            .online
            .iter()
            .all(|c| c == cpu || (m.rqs[c].curr.is_none() && !m.rqs[c].need_resched));
        if !all_idle {
            return;
        }
        if let Some(t) = watchdog::lost(&self.st) {
            let msg = watchdog::lost_message(&self.st, m, t);
            self.st.error(m, Hook::Dispatch, cpu, msg);
        }
    }
}
