//! The sched_ext class (kernel/sched/ext.c, ext_idle.c; Linux v6.12 unless a
//! comment says otherwise): hosts a policy written against [`ExtOps`], the
//! simulator's `struct sched_ext_ops`, below the fair class in the stack.
//!
//! # Mechanics (what the kernel does, and so does this class)
//! * A CPU runs tasks from its local DSQ only. When it needs work
//!   (`balance_one`): keep the previous ext task if it is still runnable and
//!   has slice left; else take the local DSQ's first task; else move the
//!   first eligible task of the global DSQ; else call `ops.dispatch(cpu,
//!   prev)` and look again, up to `SCX_DSP_MAX_LOOPS` rounds while it
//!   dispatches; if still nothing and `prev` is runnable, keep `prev` with
//!   its slice refilled (unless `SCX_OPS_ENQ_LAST`).
//! * `enqueue_task_scx`/`do_enqueue_task`: `ops.runnable` (not for
//!   migrations), then the direct dispatch chosen in `ops.select_cpu`, or
//!   `ops.enqueue`; a task `ops.enqueue` does not insert stays in the
//!   policy's custody until `ops.dispatch` inserts it.
//! * Slices: `update_curr_scx` charges run time against `p->scx.slice`;
//!   `task_tick_scx` calls `ops.tick` and reschedules at 0. A task switched
//!   out with slice left (a higher class preempted it) goes back to the head
//!   of its local DSQ; one with none goes through `ops.enqueue`.
//! * Wakeup preemption happens only through kicks (`SCX_KICK_PREEMPT`) and
//!   `SCX_ENQ_PREEMPT`; `wakeup_preempt_scx` is empty. Inserting into an
//!   idle CPU's local DSQ reschedules it (`local_dsq_post_enq`).
//! * Moving a task to another CPU's local DSQ (consume from a shared DSQ,
//!   `SCX_DSQ_LOCAL_ON`) is an engine migration; the task lands in the
//!   target's local DSQ through `sticky_cpu`, without ops calls.
//! * Built-in idle tracking (ext_idle.c): CPUs enter the idle mask when they
//!   go idle and leave it when they pick a task or are claimed by
//!   `test_and_clear_cpu_idle`; `ops.update_idle` turns it off unless
//!   `SCX_OPS_KEEP_BUILTIN_IDLE`.
//! * Errors (`scx_ops_error`) and stalls (watchdog.rs) disable the policy:
//!   `ops.disable`/`ops.exit_task` for its tasks, then `ops.exit`; the class
//!   then runs in bypass mode (global FIFO, no ops) until the engine has
//!   moved its tasks away. `ext_on_error` chooses between stopping the run
//!   (`Machine::fail`, default) and the kernel's fallback to the fair class
//!   (`Machine::abort_class`). A policy's own exit (`scx_bpf_exit`, or a
//!   hotplug without `cpu_online`/`cpu_offline`) always falls back.
//!
//! # Departures from the kernel
//! * `balance_scx` runs from the engine's `balance` hook before every pick
//!   (`balance_every_pick`), also below a class that has runnable tasks,
//!   where the kernel's `prev_balance` stops; the class skips it when
//!   another class has runnable tasks on the CPU, so only the case of
//!   6.12's missed balance (fair saying yes with only SCX tasks queued,
//!   which 6.13 works around in `pick_task_scx`) differs.
//! * Inserts from `ops.dispatch` of a task not in the policy's custody are
//!   errors; the kernel ignores them silently because, with concurrent
//!   CPUs, they may be races. A sequential simulation has no races, so they
//!   are policy bugs.
//! * DSQ existence, vtime-on-built-in and affinity are checked when the
//!   policy inserts (so the message names that op), not at commit.
//! * A task left in the policy's custody while every CPU goes idle (and no
//!   policy timer is pending) is reported at once as lost; the kernel only
//!   notices at the watchdog.
//! * `ops.update_idle(cpu, false)` for a CPU that leaves idle for a task of
//!   a higher class is called at the class's next hook, not at once.
//! * Not modelled: `cpu_acquire`/`cpu_release`, cgroup ops, `dump*`, core
//!   scheduling (`core_sched_before` is never called), `SCX_KICK_WAIT`
//!   waiting, NUMA in `select_cpu_dfl`, `yield_to`, `ENQ_EXITING`.
//! * Tasks get `ops.init_task(fork = true)` when created (the policy is
//!   loaded before the workload starts) and `ops.enable` when they first
//!   enter the class; a task whose policy changes away from the class stays
//!   enabled until it exits.

pub mod bridge;
pub mod ctx;
mod dispatch;
pub mod dsq;
pub mod ops;
pub mod params;
pub mod state;
pub mod watchdog;

pub use ctx::{Ctx, TaskView};
pub use ops::*;
pub use params::{switch_flags, ExtParams, EXT_TUNABLES, PARTIAL_TUNABLE};
pub use state::{Hook, OnError};

use super::{DequeueFlags, EnqueueFlags, SchedClass, WakeFlags, Waker};
use crate::class::fair::weights::{nice_to_weight, WEIGHT_IDLEPRIO};
use crate::cpuset::{CpuId, CpuSet};
use crate::machine::Machine;
use crate::task::TaskId;
use crate::workload::Policy;
use state::{weight_to_cgroup, CpuSt, ExtState, Where, WATCHDOG_TAG};

/// The ext class hosting policy `P`.
pub struct ExtClass<P: ExtOps> {
    ops: P,
    st: ExtState,
    data: Vec<P::Task>,
    loaded: bool,
    /// `balance` ran the dispatch path for this CPU in the current pick.
    bal_ran: Vec<bool>,
    online_seen: CpuSet,
    exit_info: Option<ExitInfo>,
}

impl<P: ExtOps> ExtClass<P> {
    /// An ext class running `ops` on the CPUs of `m`.
    pub fn new(ops: P, params: ExtParams, m: &Machine) -> Self {
        let flags = ops.flags();
        let ms = params
            .timeout_ms
            .unwrap_or_else(|| match ops.timeout_ms() {
                0 => SCX_WATCHDOG_MAX_TIMEOUT_MS,
                t => t.min(SCX_WATCHDOG_MAX_TIMEOUT_MS),
            })
            .max(1);
        let has_update_idle = ops.has_update_idle();
        let st = ExtState {
            name: ops.name().to_string(),
            flags,
            timeout: ms as u64 * 1_000_000,
            max_batch: match ops.dispatch_max_batch() {
                0 => SCX_DSP_DFL_MAX_BATCH,
                n => n,
            },
            builtin_idle: !has_update_idle || flags & SCX_OPS_KEEP_BUILTIN_IDLE != 0,
            has_update_idle,
            tasks: vec![],
            cpus: (0..m.nr_cpus())
                .map(|c| CpuSt {
                    local: dsq::Dsq::new(state::local_id(c)),
                    inflight: 0,
                    nr: 0,
                    curr: None,
                    exec_start: 0,
                    keep: false,
                    seen_idle: true,
                })
                .collect(),
            global: dsq::Dsq::new(SCX_DSQ_GLOBAL),
            user: Default::default(),
            seq: 0,
            idle: CpuSet::empty(),
            idle_smt: CpuSet::empty(),
            distribute_prev: m.nr_cpus().saturating_sub(1),
            dsp_buf: vec![],
            dsp_nr: 0,
            ddsp_task: None,
            exit: None,
            disabled: false,
            on_error: params.on_error,
            timers: Default::default(),
            next_timer: 0,
            watchdog_armed: false,
        };
        let mut c = ExtClass {
            ops,
            st,
            data: vec![],
            loaded: false,
            bal_ran: vec![false; m.nr_cpus()],
            online_seen: m.online,
            exit_info: None,
        };
        for cpu in m.online.iter() {
            c.st.set_idle(m, cpu, true);
        }
        c
    }

    /// Whether tasks of `policy` belong to this class:
    /// `SCX_OPS_SWITCH_PARTIAL` takes SCHED_EXT only, otherwise every fair
    /// policy too (`task_should_scx`).
    pub fn accepts(&self, policy: Policy) -> bool {
        policy == Policy::Ext || (!self.partial() && policy.is_fair())
    }

    /// Whether the policy asked for partial switching.
    pub fn partial(&self) -> bool {
        self.st.flags & SCX_OPS_SWITCH_PARTIAL != 0
    }

    /// The policy.
    pub fn ops(&self) -> &P {
        &self.ops
    }

    /// Whether the policy was disabled (error or exit).
    pub fn is_disabled(&self) -> bool {
        self.st.disabled
    }

    /// How the policy ended, if it did.
    pub fn exit_info(&self) -> Option<&ExitInfo> {
        self.exit_info.as_ref()
    }

    /// `p->scx.slice`, `p->scx.dsq_vtime`, `p->scx.weight` of `t`.
    pub fn task_scx(&self, t: TaskId) -> Option<(u64, u64, u32)> {
        self.st
            .tasks
            .get(t)
            .map(|s| (s.slice, s.dsq_vtime, s.weight))
    }

    fn call<R>(
        &mut self,
        m: &mut Machine,
        hook: Hook,
        cpu: CpuId,
        f: impl FnOnce(&mut P, &mut Ctx<'_, P::Task>) -> R,
    ) -> R {
        let mut ctx = Ctx::new(m, &mut self.st, &mut self.data, hook, cpu);
        f(&mut self.ops, &mut ctx)
    }

    fn task_error(&mut self, m: &Machine, hook: Hook, cpu: CpuId, t: TaskId, msg: &str) {
        let s = format!("{} {msg}", ExtState::task_str(m, t));
        self.st.error(m, hook, cpu, s);
    }

    /// `scx_ops_enable` → `ops.init()`, on the first hook.
    fn load(&mut self, m: &mut Machine) {
        if self.loaded {
            return;
        }
        self.loaded = true;
        if let Err(e) = self.call(m, Hook::Init, 0, |o, c| o.init(c)) {
            self.st
                .error(m, Hook::Init, 0, format!("ops.init failed: {e}"));
        }
    }

    /// After every class hook: act on a pending error or exit
    /// (`scx_ops_disable_workfn`), and keep the watchdog armed while ext
    /// tasks are runnable.
    fn after(&mut self, m: &mut Machine) {
        if let Some(pe) = self.st.exit.take() {
            self.st.disabled = true;
            let info = pe.info;
            for t in 0..self.st.tasks.len() {
                if self.st.tasks[t].enabled {
                    let cpu = m.tasks[t].cpu;
                    self.call(m, Hook::Disable, cpu, |o, c| o.disable(c, t));
                    self.call(m, Hook::ExitTask, cpu, |o, c| o.exit_task(c, t, false));
                    self.st.tasks[t].enabled = false;
                }
            }
            self.call(m, Hook::Exit, 0, |o, c| o.exit(c, &info));
            if info.kind.is_error() && self.st.on_error == OnError::Fail {
                m.fail(info.msg.clone());
            } else {
                m.abort_class("ext", info.msg.clone());
            }
            self.exit_info = Some(info);
            // Bypass: every task the policy held goes to the global DSQ.
            self.st.dsp_buf.clear();
            self.st.ddsp_task = None;
            for t in 0..self.st.tasks.len() {
                self.st.tasks[t].ddsp = None;
                if self.st.tasks[t].queued && self.st.tasks[t].at == Where::Custody {
                    self.st.tasks[t].at = Where::Nowhere;
                    self.bypass_insert(t);
                }
            }
            let online = m.online;
            for cpu in online.iter() {
                m.resched(cpu);
            }
        }
        if !self.st.disabled && !self.st.watchdog_armed && self.st.cpus.iter().any(|c| c.nr > 0) {
            self.st.watchdog_armed = true;
            let at = m.now + self.st.timeout / 2;
            m.arm_timer(at, "ext", 0, WATCHDOG_TAG);
        }
    }

    /// Bypass mode's enqueue (`scx_rq_bypassing` → global DSQ).
    fn bypass_insert(&mut self, t: TaskId) {
        self.st.tasks[t].slice = SCX_SLICE_DFL;
        let _ = self.st.enqueue_shared(t, SCX_DSQ_GLOBAL, 0, None, None);
    }

    /// `scx_ops_init_task` + `scx_ops_enable_task`: `t` joins the policy.
    fn ensure_enabled(&mut self, m: &mut Machine, t: TaskId) {
        self.st.ensure_task(t);
        if self.st.tasks[t].enabled || !self.st.live() {
            return;
        }
        let cpu = m.tasks[t].cpu;
        if !self.st.tasks[t].inited {
            self.st.tasks[t].inited = true;
            if let Err(e) = self.call(m, Hook::InitTask, cpu, |o, c| o.init_task(c, t, true)) {
                self.task_error(
                    m,
                    Hook::InitTask,
                    cpu,
                    t,
                    &format!("could not be initialised: {e}"),
                );
                return;
            }
        }
        self.st.tasks[t].enabled = true;
        self.st.tasks[t].weight = Self::weight_of(m, t);
        self.call(m, Hook::Enable, cpu, |o, c| o.enable(c, t));
        let w = self.st.tasks[t].weight;
        self.call(m, Hook::SetWeight, cpu, |o, c| o.set_weight(c, t, w));
        self.sync_cpumask(m, t);
    }

    /// `ops.set_cpumask` when `t`'s affinity differs from what the policy saw.
    fn sync_cpumask(&mut self, m: &mut Machine, t: TaskId) {
        let aff = m.tasks[t].affinity;
        if self.st.tasks[t].mask_seen != aff && self.st.live() {
            self.st.tasks[t].mask_seen = aff;
            let cpu = m.tasks[t].cpu;
            self.call(m, Hook::SetCpumask, cpu, |o, c| o.set_cpumask(c, t, aff));
        }
    }

    /// `p->scx.weight`: `sched_prio_to_weight[nice]` (WEIGHT_IDLEPRIO for
    /// SCHED_IDLE) on the cgroup scale (`__scx_enable_task`).
    fn weight_of(m: &Machine, t: TaskId) -> u32 {
        let task = &m.tasks[t];
        let w = if task.policy == Policy::Idle {
            WEIGHT_IDLEPRIO
        } else {
            nice_to_weight(task.nice)
        };
        weight_to_cgroup(w)
    }

    /// `update_curr_scx`: charge the current ext task's run time to its slice.
    fn update_curr_scx(&mut self, m: &Machine, cpu: CpuId) {
        let c = &mut self.st.cpus[cpu];
        let Some(t) = c.curr else {
            return;
        };
        let now = m.rq_clock(cpu);
        let delta = now.saturating_sub(c.exec_start);
        c.exec_start = now;
        let s = &mut self.st.tasks[t];
        if s.slice != SCX_SLICE_INF {
            s.slice -= s.slice.min(delta);
        }
    }

    /// `__scx_update_idle` (ext_idle.c v6.15): `ops.update_idle` on real
    /// transitions; the built-in mask also on idle-to-idle passes.
    fn update_idle(&mut self, m: &mut Machine, cpu: CpuId, idle: bool) {
        let transition = self.st.cpus[cpu].seen_idle != idle;
        self.st.cpus[cpu].seen_idle = idle;
        if transition && self.st.has_update_idle && self.st.live() {
            self.call(m, Hook::UpdateIdle, cpu, |o, c| o.update_idle(c, cpu, idle));
        }
        if self.st.builtin_idle && (transition || idle) && (!idle || m.online.contains(cpu)) {
            self.st.set_idle(m, cpu, idle);
        }
    }

    /// CPUs that left idle for another class's task since the class last
    /// looked.
    fn sync_idle(&mut self, m: &mut Machine) {
        for cpu in 0..m.nr_cpus() {
            if self.st.cpus[cpu].seen_idle && m.rqs[cpu].curr.is_some() {
                self.update_idle(m, cpu, false);
            }
        }
    }

    /// `balance_scx`.
    fn balance_scx(&mut self, m: &mut Machine, cpu: CpuId) {
        self.load(m);
        self.sync_idle(m);
        self.st.cpus[cpu].keep = false;
        self.bal_ran[cpu] = false;
        let others = m.rqs[cpu].nr_running.saturating_sub(self.st.cpus[cpu].nr);
        if others > 0 || !m.online.contains(cpu) {
            return self.after(m);
        }
        self.bal_ran[cpu] = true;
        self.balance_one(m, cpu);
        self.after(m);
        if self.st.disabled && !self.st.cpus[cpu].keep && self.st.local_nr(cpu) == 0 {
            // Bypass after an error in this balance: global FIFO.
            self.st.consume(m, SCX_DSQ_GLOBAL, cpu);
        }
    }
}

impl<P: ExtOps> SchedClass for ExtClass<P> {
    fn name(&self) -> &'static str {
        "ext"
    }

    fn task_fork(&mut self, m: &mut Machine, t: TaskId, _parent: Option<TaskId>) {
        self.load(m);
        self.st.ensure_task(t);
        if self.st.live() && !self.st.tasks[t].inited {
            // scx_fork → scx_ops_init_task(fork = true), for every task.
            self.st.tasks[t].inited = true;
            let cpu = m.tasks[t].cpu;
            if let Err(e) = self.call(m, Hook::InitTask, cpu, |o, c| o.init_task(c, t, true)) {
                self.task_error(
                    m,
                    Hook::InitTask,
                    cpu,
                    t,
                    &format!("could not be initialised: {e}"),
                );
            }
        }
        self.after(m);
    }

    fn enqueue_task(&mut self, m: &mut Machine, cpu: CpuId, t: TaskId, flags: EnqueueFlags) {
        // enqueue_task_scx
        self.load(m);
        self.st.ensure_task(t);
        if self.st.tasks[t].queued {
            return;
        }
        self.st.tasks[t].queued = true;
        self.st.tasks[t].runnable_at = Some(m.now);
        self.st.cpus[cpu].nr += 1;
        if let Some(c) = self.st.tasks[t].sticky.take() {
            if c == cpu {
                // A move this class asked for (sticky_cpu): local, no ops.
                // (dequeue_task already took it off the in-flight count.)
                self.st.tasks[t].at = Where::Nowhere;
                self.st.enqueue_local(m, t, cpu, 0);
                return self.after(m);
            }
        }
        self.st.dsq_remove(t);
        if !self.st.live() {
            self.bypass_insert(t);
            return self.after(m);
        }
        self.ensure_enabled(m, t);
        self.sync_cpumask(m, t);
        let migrating = flags.has(EnqueueFlags::MIGRATED)
            && flags.0
                & (EnqueueFlags::WAKEUP.0 | EnqueueFlags::INITIAL.0 | EnqueueFlags::RESTORE.0)
                == 0;
        let enq = flags.0 as u64;
        if !migrating && self.st.live() {
            self.call(m, Hook::Runnable, cpu, |o, c| o.runnable(c, t, enq));
        }
        self.do_enqueue(m, cpu, t, enq);
        self.after(m);
    }

    fn dequeue_task(
        &mut self,
        m: &mut Machine,
        cpu: CpuId,
        t: TaskId,
        flags: DequeueFlags,
    ) -> bool {
        // dequeue_task_scx
        self.load(m);
        if !self.st.tasks.get(t).is_some_and(|s| s.queued) {
            return true;
        }
        let migrating = flags.has(DequeueFlags::MOVE) && !flags.has(DequeueFlags::SAVE);
        let deq = flags.0 as u64 & SCX_DEQ_SLEEP;
        if self.st.tasks[t].at == Where::Custody && self.st.live() {
            // ops_dequeue
            self.call(m, Hook::Dequeue, cpu, |o, c| o.dequeue(c, t, deq));
        }
        if self.st.cpus[cpu].curr == Some(t) {
            self.update_curr_scx(m, cpu);
            if self.st.live() {
                self.call(m, Hook::Stopping, cpu, |o, c| o.stopping(c, t, false));
            }
        }
        if !migrating && self.st.live() {
            self.call(m, Hook::Quiescent, cpu, |o, c| o.quiescent(c, t, deq));
        }
        let s = &mut self.st.tasks[t];
        s.queued = false;
        s.runnable_at = None;
        self.st.cpus[cpu].nr = self.st.cpus[cpu].nr.saturating_sub(1);
        if self.st.tasks[t].at != Where::Running {
            self.st.dsq_remove(t);
        }
        self.after(m);
        true
    }

    fn yield_task(&mut self, m: &mut Machine, cpu: CpuId) {
        // yield_task_scx
        self.load(m);
        if let Some(t) = self.st.cpus[cpu].curr {
            if self.st.live() {
                self.call(m, Hook::Yield, cpu, |o, c| o.yield_(c, t, None));
            } else {
                self.st.tasks[t].slice = 0;
            }
        }
        self.after(m);
    }

    fn wakeup_preempt(&mut self, _m: &mut Machine, _cpu: CpuId, _t: TaskId, _flags: WakeFlags) {
        // wakeup_preempt_scx is empty: preemption only through kicks.
    }

    fn balance_every_pick(&self) -> bool {
        // SCX requires a balance() call before every pick_task()
        // (prev_balance, core.c 6.12): the dispatch happens there.
        true
    }

    fn balance(&mut self, m: &mut Machine, cpu: CpuId, _prev: Option<TaskId>) -> bool {
        self.balance_scx(m, cpu);
        self.st.local_nr(cpu) > 0
    }

    fn pick_task(&mut self, m: &mut Machine, cpu: CpuId) -> Option<TaskId> {
        // pick_task_scx
        self.load(m);
        let prev = self.st.cpus[cpu].curr.filter(|p| self.st.tasks[*p].queued);
        let keep = if self.bal_ran[cpu] {
            self.st.cpus[cpu].keep
        } else {
            prev.is_some_and(|p| self.st.tasks[p].slice > 0)
        };
        self.st.cpus[cpu].keep = false;
        let next = match prev.filter(|_| keep) {
            Some(p) => Some(p),
            None => self.st.cpus[cpu].local.first(),
        };
        if let Some(n) = next {
            if self.st.tasks[n].slice == 0 {
                self.st.tasks[n].slice = SCX_SLICE_DFL;
            }
            return Some(n);
        }
        // The CPU goes idle (ext is the lowest class).
        self.update_idle(m, cpu, true);
        self.check_lost(m, cpu);
        self.bal_ran[cpu] = false;
        self.after(m);
        None
    }

    fn put_prev_task(&mut self, m: &mut Machine, cpu: CpuId, prev: TaskId, next: Option<TaskId>) {
        // put_prev_task_scx
        self.load(m);
        self.update_curr_scx(m, cpu);
        self.st.cpus[cpu].curr = None;
        self.st.ensure_task(prev);
        self.st.tasks[prev].at = Where::Nowhere;
        if self.st.tasks[prev].queued {
            if self.st.live() {
                self.call(m, Hook::Stopping, cpu, |o, c| o.stopping(c, prev, true));
            }
            self.st.tasks[prev].runnable_at = Some(m.now);
            if !self.st.live() {
                self.bypass_insert(prev);
            } else if self.st.tasks[prev].slice > 0 {
                // Preempted by a higher class: back to the head of local.
                self.st.enqueue_local(m, prev, cpu, SCX_ENQ_HEAD);
            } else {
                let last = if next.is_none() && self.st.flags & SCX_OPS_ENQ_LAST != 0 {
                    SCX_ENQ_LAST
                } else {
                    0
                };
                self.do_enqueue(m, cpu, prev, last);
            }
        }
        self.after(m);
    }

    fn set_next_task(&mut self, m: &mut Machine, cpu: CpuId, next: TaskId) {
        // set_next_task_scx
        self.load(m);
        self.st.ensure_task(next);
        if self.st.tasks[next].at == Where::Custody && self.st.live() {
            self.call(m, Hook::Dequeue, cpu, |o, c| {
                o.dequeue(c, next, SCX_DEQ_CORE_SCHED_EXEC)
            });
        }
        self.st.dsq_remove(next);
        self.st.tasks[next].at = Where::Running;
        self.st.tasks[next].runnable_at = None;
        if self.st.tasks[next].slice == 0 {
            self.st.tasks[next].slice = SCX_SLICE_DFL;
        }
        self.st.cpus[cpu].curr = Some(next);
        self.st.cpus[cpu].exec_start = m.rq_clock(cpu);
        if self.st.tasks[next].queued && self.st.live() {
            self.call(m, Hook::Running, cpu, |o, c| o.running(c, next));
        }
        if self.st.cpus[cpu].seen_idle {
            self.update_idle(m, cpu, false);
        }
        self.after(m);
    }

    fn select_task_rq(
        &mut self,
        m: &mut Machine,
        t: TaskId,
        prev_cpu: CpuId,
        flags: WakeFlags,
        waker: Waker,
    ) -> CpuId {
        // select_task_rq_scx
        self.load(m);
        self.sync_idle(m);
        self.st.ensure_task(t);
        let (fallback, placement) = super::select_start(m, t, prev_cpu, flags);
        if !placement || !self.st.live() || m.tasks[t].affinity.and(&m.online).count() <= 1 {
            return fallback;
        }
        self.ensure_enabled(m, t);
        self.sync_cpumask(m, t);
        if !self.st.live() {
            self.after(m);
            return fallback;
        }
        let wf = flags.0 as u64;
        self.st.ddsp_task = Some(t);
        let cpu = self.call(m, Hook::SelectCpu, waker.cpu, |o, c| {
            o.select_cpu(c, t, prev_cpu, wf)
        });
        self.st.ddsp_task = None;
        let ret = if !self.st.live() {
            self.st.tasks[t].ddsp = None;
            fallback
        } else if cpu >= m.nr_cpus() {
            // ops_cpu_valid
            self.task_error(
                m,
                Hook::SelectCpu,
                waker.cpu,
                t,
                &format!(
                    "was placed on CPU {cpu}, which does not exist (the machine has {} CPUs)",
                    m.nr_cpus()
                ),
            );
            self.st.tasks[t].ddsp = None;
            fallback
        } else if !m.tasks[t].affinity.contains(cpu) || !m.online.contains(cpu) {
            // select_task_rq → select_fallback_rq.
            fallback
        } else {
            cpu
        };
        self.after(m);
        ret
    }

    fn migrate_task_rq(&mut self, _m: &mut Machine, _t: TaskId, _new_cpu: CpuId) {}

    fn task_tick(&mut self, m: &mut Machine, cpu: CpuId, curr: TaskId) {
        // task_tick_scx
        self.load(m);
        self.update_curr_scx(m, cpu);
        if self.st.cpus[cpu].curr == Some(curr) {
            if self.st.live() {
                self.call(m, Hook::Tick, cpu, |o, c| o.tick(c, curr));
            }
            if self.st.tasks[curr].slice == 0 {
                m.resched(cpu);
            }
        }
        self.after(m);
    }

    fn reweight_task(&mut self, m: &mut Machine, t: TaskId) {
        // reweight_task_scx
        self.load(m);
        self.st.ensure_task(t);
        if self.st.tasks[t].enabled && self.st.live() {
            let w = Self::weight_of(m, t);
            if w != self.st.tasks[t].weight {
                self.st.tasks[t].weight = w;
                let cpu = m.tasks[t].cpu;
                self.call(m, Hook::SetWeight, cpu, |o, c| o.set_weight(c, t, w));
            }
        }
        self.after(m);
    }

    fn task_dead(&mut self, m: &mut Machine, t: TaskId) {
        // sched_ext_free → scx_ops_exit_task
        self.load(m);
        if self.st.tasks.get(t).is_some_and(|s| s.enabled) && self.st.live() {
            let cpu = m.tasks[t].cpu;
            self.call(m, Hook::Disable, cpu, |o, c| o.disable(c, t));
            self.call(m, Hook::ExitTask, cpu, |o, c| o.exit_task(c, t, false));
            self.st.tasks[t].enabled = false;
        }
        self.after(m);
    }

    fn update_curr(&mut self, m: &mut Machine, cpu: CpuId) {
        self.update_curr_scx(m, cpu);
    }

    fn tick_balance(&mut self, _m: &mut Machine, _cpu: CpuId) {}

    fn tick_balance_quiet_until(&self, _m: &Machine, _cpu: CpuId) -> crate::clock::Ns {
        crate::clock::Ns::MAX
    }

    fn nr_runnable(&self, cpu: CpuId) -> u32 {
        self.st.cpus.get(cpu).map_or(0, |c| c.nr)
    }

    fn cpus_changed(&mut self, m: &mut Machine) {
        // handle_hotplug
        self.load(m);
        for cpu in 0..m.nr_cpus() {
            let (was, is) = (self.online_seen.contains(cpu), m.online.contains(cpu));
            if was == is {
                continue;
            }
            if is {
                if m.rqs[cpu].curr.is_none() {
                    self.st.set_idle(m, cpu, true);
                }
                if self.st.live() {
                    self.call(m, Hook::CpuOnline, cpu, |o, c| o.cpu_online(c, cpu));
                }
            } else {
                self.st.set_idle(m, cpu, false);
                if self.st.live() {
                    self.call(m, Hook::CpuOffline, cpu, |o, c| o.cpu_offline(c, cpu));
                }
            }
        }
        self.online_seen = m.online;
        self.after(m);
    }

    fn timer(&mut self, m: &mut Machine, cpu: CpuId, tag: u64) {
        self.load(m);
        if tag == WATCHDOG_TAG {
            self.st.watchdog_armed = false;
            if self.st.live() {
                if let Some((t, waited)) = watchdog::stalled(&self.st, m) {
                    let msg = watchdog::stall_message(&self.st, m, t, waited);
                    let tc = m.tasks[t].cpu;
                    self.st
                        .record_exit(ExitKind::ErrorStall, m, Hook::Kernel, tc, msg);
                }
            }
        } else if let Some(ptag) = self.st.timers.remove(&tag) {
            if self.st.live() {
                self.call(m, Hook::Timer, cpu, |o, c| o.timer(c, ptag));
            }
        }
        self.after(m);
    }

    fn task_debug(&self, t: TaskId) -> Vec<(&'static str, i64)> {
        match self.st.tasks.get(t) {
            Some(s) => vec![
                ("scx_slice", s.slice.min(i64::MAX as u64) as i64),
                ("scx_dsq_vtime", s.dsq_vtime as i64),
                ("scx_weight", s.weight as i64),
            ],
            None => vec![],
        }
    }

    fn check_invariants(&self, m: &Machine) -> Result<(), String> {
        let mut nr = vec![0u32; self.st.cpus.len()];
        for (t, s) in self.st.tasks.iter().enumerate() {
            if !s.queued {
                continue;
            }
            let cpu = m.tasks[t].cpu;
            nr[cpu] += 1;
            match s.at {
                Where::Nowhere => return Err(format!("ext: queued task {t} is nowhere")),
                Where::Running if m.rqs[cpu].curr != Some(t) => {
                    return Err(format!("ext: task {t} marked running but not current"))
                }
                Where::Dsq(d, _) => {
                    let ok = self
                        .st
                        .dsq(d)
                        .is_some_and(|q| q.entries().iter().any(|e| e.1 == t));
                    if !ok {
                        return Err(format!("ext: task {t} not found in its DSQ {d:#x}"));
                    }
                }
                _ => {}
            }
        }
        for (cpu, c) in self.st.cpus.iter().enumerate() {
            if c.nr != nr[cpu] {
                return Err(format!("ext cpu {cpu}: nr {} but {} queued", c.nr, nr[cpu]));
            }
        }
        Ok(())
    }
}
