//! Global EDF across CPUs: the deadline class's push and pull
//! (kernel/sched/deadline.c v6.18 `find_later_rq`, `push_dl_task`,
//! `pull_dl_task`, `task_woken_dl`; linux-rt-dl.md §6, "Global EDF
//! approximation"). After a pick, the earliest waiting job that will not
//! run here goes to a CPU without DEADLINE work, else to the one whose
//! earliest deadline is latest and later than its own; a CPU whose
//! DEADLINE task left pulls the earliest waiting job of another CPU that
//! beats everything queued here; a woken job is pushed at once only from a
//! CPU running a DEADLINE task it does not preempt. Push and pull compare
//! tree keys, so under another order ([`super::DlOrder`]) they move jobs
//! by that order's key.

use super::{Dl, DlCtx};
use crate::clock::Ns;
use crate::cpuset::{CpuId, CpuSet};
use crate::machine::{Machine, MigrationKind};
use crate::task::TaskId;
use std::rc::Rc;

impl Dl {
    /// Whether `t` runs on `cpu`, seen from another CPU (a pull): the
    /// class's task or the CPU's (the push from `cpu`'s own
    /// set_next_task reads `curr` alone: `push_dl_tasks`).
    fn runs_on(&self, m: &Machine, cpu: CpuId, t: TaskId) -> bool {
        self.curr[cpu] == Some(t) || m.rqs[cpu].curr == Some(t)
    }

    /// The earliest waiting (queued, not running) task of `cpu` allowed on
    /// `dst` (None: any other CPU).
    pub(super) fn pushable(&self, m: &Machine, cpu: CpuId, dst: Option<CpuId>) -> Option<TaskId> {
        self.tree[cpu].iter().map(|k| k.2).find(|&t| {
            let running = self.runs_on(m, cpu, t);
            let aff = m.tasks[t].affinity;
            let ok = match dst {
                Some(d) => aff.contains(d),
                None => aff.count() > 1,
            };
            !running && ok
        })
    }

    /// `find_later_rq`: a CPU without DL work (prefer `prefer`, then
    /// `waker`, then one spread by `any_and_distribute` from the executing
    /// CPU: the waker's, else `prefer`, where a push runs), else the one
    /// whose earliest deadline is latest and later than `deadline`.
    /// `level(c)` is CPU c's smallest key, read as needed; `maybe_free`
    /// holds every CPU whose level is None (and may hold others): the
    /// spreading search walks only those, as the kernel's `free_cpus` mask
    /// of the `cpudl` (64 CPUs with none free: three walks of all of them
    /// per push, issue 18).
    pub(super) fn find_later_rq(
        m: &mut Machine,
        level: impl Fn(CpuId) -> Option<Ns>,
        aff: CpuSet,
        maybe_free: CpuSet,
        deadline: Ns,
        prefer: CpuId,
        waker: Option<CpuId>,
    ) -> Option<CpuId> {
        let free = |c: CpuId| aff.contains(c) && level(c).is_none();
        if free(prefer) {
            return Some(prefer);
        }
        if let Some(w) = waker.filter(|w| free(*w)) {
            return Some(w);
        }
        let this_cpu = waker.unwrap_or(prefer);
        // Only CPUs that `free` can accept: the same walk order, the same
        // answer, and none when there is none (which changes nothing).
        let candidates = aff.and(&maybe_free);
        if !candidates.is_empty() {
            let found = crate::class::any_and_distribute(m, this_cpu, prefer, candidates, free);
            if let Some(c) = found {
                return Some(c);
            }
        }
        aff.iter()
            .filter_map(|c| level(c).map(|d| (d, c)))
            .filter(|(d, _)| *d > deadline)
            .max_by_key(|(d, c)| (*d, std::cmp::Reverse(*c)))
            .map(|(_, c)| c)
    }

    /// `push_dl_tasks`: waiting tasks of `cpu` that will not run here go to
    /// CPUs where they would run.
    pub(super) fn push_dl_tasks(&mut self, m: &mut Machine, cpu: CpuId) {
        // Running is what this class last set next (`curr`), not the CPU's
        // current task: from set_next_task, inside `__schedule`, the CPU
        // still shows the task just put back, and that task is pushable,
        // as in the kernel, whose push runs as a balance callback after the
        // switch (put_prev_task_dl enqueued it in the pushable tree). Read
        // from the CPU, a preempted job waited until some CPU pulled it.
        let running = |t: TaskId| self.curr[cpu] == Some(t);
        // Key of the DL entity that will run here (a task or the server).
        let mut here = self.curr[cpu].map(|c| self.ent[c].key.0);
        if let Some(sk) = self.server_key(cpu) {
            here = Some(here.map_or(sk, |h| h.min(sk)));
        }
        // The waiting tasks in key order, read in place (nothing here
        // changes the tree). A CPU's level is its own smallest key
        // (`cpudl`) unless this push changed it (this CPU's, each
        // destination's: `moved`, latest last), read as needed; `moved` is
        // a kept buffer, taken out of `self` while the tree is borrowed and
        // given back below.
        let mut moved = std::mem::take(&mut self.moved_levels);
        moved.clear();
        let mut maybe_free = self.queued.complement();
        for &(d, _, t) in self.tree[cpu].iter().filter(|k| !running(k.2)) {
            if here.is_none_or(|h| d < h) {
                // It runs here (first) or preempts what runs here.
                here = Some(d);
                m.resched(cpu);
                continue;
            }
            let aff = m.tasks[t].affinity;
            moved.push((cpu, here));
            if here.is_none() {
                maybe_free.insert(cpu);
            }
            let level = |c: CpuId| match moved.iter().rev().find(|x| x.0 == c) {
                Some(x) => x.1,
                None => self.earliest(c),
            };
            match Self::find_later_rq(m, level, aff, maybe_free, d, cpu, None) {
                Some(dst) if dst != cpu => {
                    m.request_migration(t, dst, MigrationKind::Push);
                    moved.push((dst, Some(d)));
                }
                _ => break,
            }
        }
        self.moved_levels = moved;
    }

    /// `pull_dl_task`: take the earliest waiting task of another CPU that
    /// beats everything queued here and would not preempt its own CPU.
    pub(super) fn pull_dl_task(&mut self, m: &mut Machine, cpu: CpuId) {
        if self.total == self.tree[cpu].len() {
            return;
        }
        let dmin = self.earliest(cpu).unwrap_or(Ns::MAX);
        let mut best: Option<(Ns, TaskId)> = None;
        for src in (0..m.nr_cpus()).filter(|s| *s != cpu) {
            // Whatever `pushable` finds there has at least the key of the
            // tree's first entry: where that cannot beat `dmin` and the
            // best so far, the source is passed without walking its tree
            // (the same choice; 64 CPUs: most of the pull's time).
            let Some((first, _, head)) = self.leftmost[src] else {
                continue;
            };
            if first >= dmin || best.is_some_and(|(bd, _)| first >= bd) {
                continue;
            }
            // One queued DL task that is running there: nothing to pull
            // (`dl_nr_running <= 1`).
            if self.tree[src].len() == 1 && self.runs_on(m, src, head) {
                continue;
            }
            let Some(t) = self.pushable(m, src, Some(cpu)) else {
                continue;
            };
            let d = self.ent[t].key.0;
            let src_curr = self.curr[src].map_or(Ns::MAX, |c| self.ent[c].key.0);
            if d < dmin && d >= src_curr && best.is_none_or(|(bd, _)| d < bd) {
                best = Some((d, t));
            }
        }
        if let Some((_, t)) = best {
            m.request_migration(t, cpu, MigrationKind::Balance);
        }
    }

    /// `task_woken_dl` (deadline.c v6.18): a woken job is pushed at once
    /// only when the CPU runs a DEADLINE task that it does not preempt (or
    /// one pinned there), no reschedule is pending there, and the job may
    /// run elsewhere. Otherwise it waits for the push after the CPU's next
    /// pick (`set_next_task_dl`), if it does not run there. Before
    /// 2026-11-27 every activation pushed: two jobs waking together on a
    /// CPU running a fair task sent the later one to another CPU at once,
    /// ahead of the wakeup path's costs (2-vCPU `dl2`: 49 involuntary
    /// switches of `dl3` against the host's 1).
    pub(super) fn task_woken_pushes(&mut self, m: &mut Machine, cpu: CpuId, t: TaskId) -> bool {
        let Some(c) = self.curr[cpu].filter(|c| m.rqs[cpu].curr == Some(*c)) else {
            return false; // dl_task(rq->curr)
        };
        if m.resched_pending(cpu) || m.tasks[t].affinity.and(&m.online).count() < 2 {
            return false;
        }
        let curr_pinned = m.tasks[c].affinity.and(&m.online).count() < 2;
        let order = Rc::clone(&self.order);
        curr_pinned || !order.wakeup_preempt(&DlCtx::new(self, m, cpu), t)
    }
}
