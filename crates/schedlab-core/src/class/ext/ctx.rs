//! The kfunc context handed to every [`super::ExtOps`] hook: the
//! simulator's `scx_bpf_*` helpers (kernel/sched/ext.c, ext_idle.c v6.12),
//! read-only task and CPU views, task storage, timers and exits.
//!
//! Misuse (inserting a task twice, into a missing DSQ, outside its
//! affinity, from an op that may not insert, ...) never panics: it records
//! the policy's error (`scx_ops_error`), which the class acts on when the
//! hook returns; helpers then return a neutral value.
//!
//! For a language bridge: `Ctx` borrows the class for the duration of one
//! hook call, so a bridge hands the other language a handle that is valid
//! only during that call.

use super::ops::*;
use super::state::{local_id, ExtState, Hook, Insert, Where};
use crate::clock::Ns;
use crate::cpuset::{CpuId, CpuSet};
use crate::machine::Machine;
use crate::task::{TaskId, TaskState};
use crate::workload::Policy;

/// A read-only snapshot of a task (the `task_struct` fields BPF reads).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskView {
    /// Task id (index in the simulator).
    pub id: TaskId,
    /// Thread id.
    pub pid: u32,
    /// Process id.
    pub tgid: u32,
    /// `comm`.
    pub name: String,
    /// Nice value.
    pub nice: i32,
    /// `p->scx.weight` (nice 0 = 100).
    pub weight: u32,
    /// Allowed CPUs (`p->cpus_ptr`).
    pub cpumask: CpuSet,
    /// `p->scx.slice`, ns.
    pub slice: u64,
    /// `p->scx.dsq_vtime`.
    pub dsq_vtime: u64,
    /// Scheduling policy.
    pub policy: Policy,
    /// `task_cpu(p)`.
    pub cpu: CpuId,
    /// Currently running on its CPU.
    pub running: bool,
    /// Runnable (queued in the class or running).
    pub runnable: bool,
}

/// The helpers a hook may call. `T` is the policy's per-task storage.
pub struct Ctx<'a, T> {
    pub(crate) m: &'a mut Machine,
    pub(crate) st: &'a mut ExtState,
    pub(crate) data: &'a mut Vec<T>,
    pub(crate) hook: Hook,
    pub(crate) cpu: CpuId,
}

impl<'a, T: Default> Ctx<'a, T> {
    /// A context for `hook` running on `cpu`.
    pub(crate) fn new(
        m: &'a mut Machine,
        st: &'a mut ExtState,
        data: &'a mut Vec<T>,
        hook: Hook,
        cpu: CpuId,
    ) -> Self {
        Ctx {
            m,
            st,
            data,
            hook,
            cpu,
        }
    }

    fn fail(&mut self, msg: String) {
        self.st.error(self.m, self.hook, self.cpu, msg);
    }

    fn fail_task(&mut self, p: TaskId, msg: &str) {
        let s = format!("{} {msg}", ExtState::task_str(self.m, p));
        self.fail(s);
    }

    /// Whether `p` names a task of the policy; reports an error if not.
    fn valid_task(&mut self, p: TaskId, kf: &str) -> bool {
        if p < self.m.tasks.len() && p < self.st.tasks.len() {
            return true;
        }
        self.fail(format!("{kf}: task id {p} does not exist"));
        false
    }

    fn valid_cpu(&mut self, cpu: CpuId, kf: &str) -> bool {
        if cpu < self.m.nr_cpus() {
            return true;
        }
        self.fail(format!(
            "{kf}: CPU {cpu} does not exist (the machine has {} CPUs)",
            self.m.nr_cpus()
        ));
        false
    }

    // --- time, CPUs ---------------------------------------------------

    /// Simulated time, ns (`bpf_ktime_get_ns`, `scx_bpf_now`).
    pub fn now(&self) -> u64 {
        self.m.now
    }

    /// The CPU this op runs on (`bpf_get_smp_processor_id`).
    pub fn this_cpu(&self) -> CpuId {
        self.cpu
    }

    /// Number of CPUs (`scx_bpf_nr_cpu_ids`).
    pub fn nr_cpus(&self) -> usize {
        self.m.nr_cpus()
    }

    /// Whether `cpu` is online.
    pub fn cpu_online(&self, cpu: CpuId) -> bool {
        self.m.online.contains(cpu)
    }

    /// The task current on `cpu` (`scx_bpf_cpu_rq(cpu)->curr`), any class;
    /// None when it runs the idle task.
    pub fn cpu_curr(&self, cpu: CpuId) -> Option<TaskId> {
        self.m.rqs.get(cpu).and_then(|r| r.curr)
    }

    /// Whether `cpu` runs the idle task now.
    pub fn cpu_is_idle(&self, cpu: CpuId) -> bool {
        self.m.rqs.get(cpu).is_some_and(|r| r.curr.is_none())
    }

    // --- tasks ----------------------------------------------------------

    /// A snapshot of task `p`.
    pub fn task(&self, p: TaskId) -> Option<TaskView> {
        let t = self.m.tasks.get(p)?;
        let s = self.st.tasks.get(p)?;
        Some(TaskView {
            id: p,
            pid: t.pid,
            tgid: t.tgid,
            name: t.name.clone(),
            nice: t.nice,
            weight: s.weight,
            cpumask: t.affinity,
            slice: s.slice,
            dsq_vtime: s.dsq_vtime,
            policy: t.policy,
            cpu: t.cpu,
            running: self.m.rqs[t.cpu].curr == Some(p),
            runnable: t.is_queued() && t.state != TaskState::Sleeping,
        })
    }

    /// The policy's storage of task `p` (BPF task-local storage).
    pub fn task_data(&mut self, p: TaskId) -> &mut T {
        if self.data.len() <= p {
            self.data.resize_with(p + 1, T::default);
        }
        &mut self.data[p]
    }

    /// `p->scx.slice`.
    pub fn task_slice(&self, p: TaskId) -> u64 {
        self.st.tasks.get(p).map_or(0, |s| s.slice)
    }

    /// Set `p->scx.slice` (BPF writes the field directly). 0 on a running
    /// task makes its CPU reschedule at the next tick.
    pub fn set_slice(&mut self, p: TaskId, slice: u64) {
        if let Some(s) = self.st.tasks.get_mut(p) {
            s.slice = slice;
        }
    }

    /// `p->scx.dsq_vtime`.
    pub fn task_vtime(&self, p: TaskId) -> u64 {
        self.st.tasks.get(p).map_or(0, |s| s.dsq_vtime)
    }

    /// Set `p->scx.dsq_vtime`.
    pub fn set_dsq_vtime(&mut self, p: TaskId, vtime: u64) {
        if let Some(s) = self.st.tasks.get_mut(p) {
            s.dsq_vtime = vtime;
        }
    }

    /// `p->scx.weight` (1..=10000, nice 0 = 100).
    pub fn task_weight(&self, p: TaskId) -> u32 {
        self.st.tasks.get(p).map_or(100, |s| s.weight)
    }

    /// Whether `p` is queued in the class (`p->scx.flags & SCX_TASK_QUEUED`):
    /// runnable, running included. In `ops.dispatch` this tells a `prev`
    /// that is still runnable (slice expired) from one going to sleep.
    pub fn task_queued(&self, p: TaskId) -> bool {
        self.st.tasks.get(p).is_some_and(|s| s.queued)
    }

    /// `PRIO_TO_NICE(p->static_prio)`: the nice value (BPF reads
    /// `p->static_prio - 120`).
    pub fn task_nice(&self, p: TaskId) -> i32 {
        self.m.tasks.get(p).map_or(0, |t| t.nice)
    }

    /// `p->policy`.
    pub fn task_policy(&self, p: TaskId) -> Policy {
        self.m.tasks.get(p).map_or(Policy::Other, |t| t.policy)
    }

    /// `task_cpu(p)`.
    pub fn task_cpu(&self, p: TaskId) -> CpuId {
        self.m.tasks.get(p).map_or(0, |t| t.cpu)
    }

    /// `p->cpus_ptr`.
    pub fn task_cpumask(&self, p: TaskId) -> CpuSet {
        self.m.tasks.get(p).map_or(CpuSet::empty(), |t| t.affinity)
    }

    /// Whether `p` runs now (`task_running`).
    pub fn task_running(&self, p: TaskId) -> bool {
        self.m
            .tasks
            .get(p)
            .is_some_and(|t| self.m.rqs[t.cpu].curr == Some(p))
    }

    /// When `p` last became runnable and waiting (`p->scx.runnable_at`);
    /// `u64::MAX` if it is not waiting.
    pub fn task_runnable_at(&self, p: TaskId) -> u64 {
        self.st
            .tasks
            .get(p)
            .and_then(|s| s.runnable_at)
            .unwrap_or(u64::MAX)
    }

    // --- DSQs -------------------------------------------------------------

    fn insert(&mut self, p: TaskId, ins: Insert, slice: u64, kf: &str) {
        if !self.st.live() || !self.valid_task(p, kf) {
            return;
        }
        match self.hook {
            Hook::SelectCpu | Hook::Enqueue => {
                // mark_direct_dispatch
                if self.st.tasks[p].ddsp.is_some() {
                    return self.fail_task(
                        p,
                        &format!(
                            "was inserted twice in one {} (already direct-dispatched)",
                            self.hook.name()
                        ),
                    );
                }
                if self.st.ddsp_task != Some(p) {
                    let cur = self
                        .st
                        .ddsp_task
                        .map_or_else(|| "no task".to_string(), |c| ExtState::task_str(self.m, c));
                    return self.fail_task(
                        p,
                        &format!(
                            "was inserted by {} running for {cur}: select_cpu and enqueue may only insert their own task",
                            self.hook.name()
                        ),
                    );
                }
                // SCX_DSQ_LOCAL here means the CPU the task is enqueued on,
                // which is in its affinity by construction; other targets
                // are checked now.
                let local = self.m.tasks[p].cpu;
                let check = if ins.dsq == SCX_DSQ_LOCAL {
                    if ins.vtime.is_some() || ins.level.is_some() {
                        Err("ordered insert into SCX_DSQ_LOCAL: built-in DSQs are FIFO only (use a DSQ made with create_dsq)".to_string())
                    } else {
                        Ok(())
                    }
                } else {
                    self.st.check_insert(self.m, p, &ins, local)
                };
                if let Err(e) = check {
                    return self.fail_task(p, &e);
                }
                self.st.tasks[p].ddsp = Some(ins);
            }
            Hook::Dispatch => {
                // scx_dsq_insert_commit + finish_dispatch's ops_state test:
                // only a task in the policy's custody can be dispatched.
                if self.st.dsp_buf.iter().any(|(t, _)| *t == p) {
                    return self.fail_task(p, "was inserted twice in one ops.dispatch");
                }
                if self.st.tasks[p].at != Where::Custody {
                    let why = match self.st.tasks[p].at {
                        Where::Dsq(d, _) => {
                            format!("it is already in DSQ {}", super::state::dsq_name(d))
                        }
                        Where::InFlight(c) => {
                            format!("it is already on its way to CPU {c}'s local DSQ")
                        }
                        Where::Running => "it is running".into(),
                        _ => "it is not runnable".into(),
                    };
                    return self.fail_task(
                        p,
                        &format!("was inserted but is not in the policy's custody ({why}): dispatched twice?"),
                    );
                }
                let max = self.st.max_batch as usize;
                if self.st.dsp_buf.len() >= max {
                    return self.fail_task(
                        p,
                        &format!("overflows the dispatch buffer (dispatch_max_batch {max})"),
                    );
                }
                if let Err(e) = self.st.check_insert(self.m, p, &ins, self.cpu) {
                    return self.fail_task(p, &e);
                }
                self.st.dsp_buf.push((p, ins));
                self.st.dsp_nr += 1;
            }
            _ => {
                return self.fail_task(
                    p,
                    &format!(
                        "was inserted with {kf} from {}, which may not insert (only ops.select_cpu, ops.enqueue and ops.dispatch)",
                        self.hook.name()
                    ),
                );
            }
        }
        // scx_dsq_insert_preamble: slice 0 keeps the current one (at least 1).
        let s = &mut self.st.tasks[p];
        s.slice = if slice != 0 { slice } else { s.slice.max(1) };
        if let Some(v) = ins.vtime {
            s.dsq_vtime = v;
        }
    }

    /// `scx_bpf_dsq_insert(p, dsq, slice, enq_flags)`: FIFO insert (tail,
    /// or head with `SCX_ENQ_HEAD`) into `dsq`: `SCX_DSQ_GLOBAL`,
    /// `SCX_DSQ_LOCAL`, `SCX_DSQ_LOCAL_ON | cpu`, or a DSQ made with
    /// [`Ctx::create_dsq`]; `slice` (ns, 0 = keep) becomes `p`'s slice.
    /// From `select_cpu`/`enqueue`: `p` must be the task of the call
    /// (direct dispatch). From `dispatch`: `p` must be in the policy's
    /// custody; inserts take effect when `dispatch` returns.
    pub fn dsq_insert(&mut self, p: TaskId, dsq: u64, slice: u64, enq_flags: u64) {
        let ins = Insert {
            dsq,
            flags: enq_flags,
            vtime: None,
            level: None,
        };
        self.insert(p, ins, slice, "dsq_insert");
    }

    /// `scx_bpf_dsq_insert_vtime(p, dsq, slice, vtime, enq_flags)`: insert
    /// ordered by `vtime` (ties: insertion order) into a user DSQ; an error
    /// on built-in DSQs, as in the kernel.
    pub fn dsq_insert_vtime(
        &mut self,
        p: TaskId,
        dsq: u64,
        slice: u64,
        vtime: u64,
        enq_flags: u64,
    ) {
        let ins = Insert {
            dsq,
            flags: enq_flags,
            vtime: Some(vtime),
            level: None,
        };
        self.insert(p, ins, slice, "dsq_insert_vtime");
    }

    /// Insert into priority `level` (0 = first picked) of a
    /// priority-bitmap DSQ made with [`Ctx::create_prio_dsq`]; FIFO within
    /// the level (`SCX_ENQ_HEAD` for the head). Not a kernel kfunc.
    pub fn dsq_insert_prio(&mut self, p: TaskId, dsq: u64, slice: u64, level: u32, enq_flags: u64) {
        let ins = Insert {
            dsq,
            flags: enq_flags,
            vtime: None,
            level: Some(level),
        };
        self.insert(p, ins, slice, "dsq_insert_prio");
    }

    /// `scx_bpf_dsq_move_to_local(dsq)` (`scx_bpf_consume` before 6.13):
    /// from `ops.dispatch` only: apply the inserts made so far, then move
    /// the first task of `dsq` that may run on this CPU to its local DSQ.
    /// Returns whether a task was moved.
    pub fn dsq_move_to_local(&mut self, dsq: u64) -> bool {
        if !self.st.live() {
            return false;
        }
        if self.hook != Hook::Dispatch {
            self.fail(format!(
                "dsq_move_to_local called from {}, which may not (only ops.dispatch)",
                self.hook.name()
            ));
            return false;
        }
        if dsq & SCX_DSQ_FLAG_BUILTIN != 0 && dsq != SCX_DSQ_GLOBAL {
            self.fail(format!(
                "dsq_move_to_local from {}: only SCX_DSQ_GLOBAL and user DSQs can be moved from",
                super::state::dsq_name(dsq)
            ));
            return false;
        }
        if self.st.dsq(dsq).is_none() {
            self.fail(format!(
                "dsq_move_to_local from DSQ {}, which does not exist (create it in ops.init with create_dsq)",
                super::state::dsq_name(dsq)
            ));
            return false;
        }
        self.flush_dispatch();
        let cpu = self.cpu;
        self.st.consume(self.m, dsq, cpu)
    }

    /// `flush_dispatch_buf`: carry out the buffered inserts of `ops.dispatch`.
    pub(crate) fn flush_dispatch(&mut self) {
        for (p, ins) in std::mem::take(&mut self.st.dsp_buf) {
            if self.st.tasks[p].at != Where::Custody {
                continue;
            }
            self.st.tasks[p].at = Where::Nowhere;
            let cpu = self.cpu;
            if let Err(e) = self.st.commit(self.m, p, ins, cpu) {
                self.fail_task(p, &e);
            }
        }
    }

    /// `scx_bpf_dsq_nr_queued(dsq)`: tasks in `dsq` (None if it does not
    /// exist; the kernel returns -ENOENT). `SCX_DSQ_LOCAL` is this CPU's.
    pub fn dsq_nr_queued(&self, dsq: u64) -> Option<u32> {
        let id = if dsq == SCX_DSQ_LOCAL {
            local_id(self.cpu)
        } else {
            dsq
        };
        self.st.dsq(id).map(|q| q.len())
    }

    /// The tasks of `dsq` in dispatch order (`bpf_for_each(scx_dsq, ...)`);
    /// empty if it does not exist.
    pub fn dsq_tasks(&self, dsq: u64) -> Vec<TaskId> {
        let id = if dsq == SCX_DSQ_LOCAL {
            local_id(self.cpu)
        } else {
            dsq
        };
        self.st
            .dsq(id)
            .map_or_else(Vec::new, |q| q.entries().into_iter().map(|e| e.1).collect())
    }

    /// The first task of `dsq` (`scx_bpf_dsq_peek`), without listing the
    /// rest (a peek per dispatch listed the whole queue: scx_pds ran at
    /// 7.3× eevdf's time per event on the 1,000-hog bench).
    pub fn dsq_peek(&self, dsq: u64) -> Option<TaskId> {
        let id = if dsq == SCX_DSQ_LOCAL {
            local_id(self.cpu)
        } else {
            dsq
        };
        self.st.dsq(id).and_then(|q| q.first())
    }

    /// `scx_bpf_create_dsq(id, node)`: a user DSQ (FIFO or vtime, decided
    /// by the inserts). False if `id` has bit 63 set or already exists.
    pub fn create_dsq(&mut self, id: u64) -> bool {
        if id & SCX_DSQ_FLAG_BUILTIN != 0 || self.st.user.contains_key(&id) {
            return false;
        }
        self.st.user.insert(id, super::dsq::Dsq::new(id));
        true
    }

    /// A user priority-bitmap DSQ with `levels` levels (1..=4096). Not a
    /// kernel kfunc (BMQ/PDS-like designs).
    pub fn create_prio_dsq(&mut self, id: u64, levels: u32) -> bool {
        if id & SCX_DSQ_FLAG_BUILTIN != 0
            || self.st.user.contains_key(&id)
            || !(1..=4096).contains(&levels)
        {
            return false;
        }
        self.st
            .user
            .insert(id, super::dsq::Dsq::new_prio(id, levels));
        true
    }

    /// `scx_bpf_destroy_dsq(id)`: remove an empty user DSQ; false if it
    /// does not exist or still holds tasks (the kernel refuses too).
    pub fn destroy_dsq(&mut self, id: u64) -> bool {
        match self.st.user.get(&id) {
            Some(q) if q.is_empty() => {
                self.st.user.remove(&id);
                true
            }
            _ => false,
        }
    }

    // --- CPUs: kicks and idle tracking -------------------------------------

    /// `scx_bpf_kick_cpu(cpu, flags)`: make `cpu` reschedule.
    /// `SCX_KICK_IDLE`: only if it is idle. `SCX_KICK_PREEMPT`: its current
    /// ext task's slice becomes 0, so it is switched out (`kick_one_cpu`).
    pub fn kick_cpu(&mut self, cpu: CpuId, flags: u64) {
        if !self.valid_cpu(cpu, "kick_cpu") || !self.m.online.contains(cpu) {
            return;
        }
        let idle = self.m.rqs[cpu].curr.is_none();
        if flags & SCX_KICK_IDLE != 0 {
            if idle {
                self.m.resched(cpu);
            }
            return;
        }
        if flags & SCX_KICK_PREEMPT != 0 {
            if let Some(c) = self.st.cpus[cpu]
                .curr
                .filter(|c| self.m.rqs[cpu].curr == Some(*c))
            {
                self.st.tasks[c].slice = 0;
            }
        }
        self.m.resched(cpu);
    }

    fn idle_enabled(&mut self, kf: &str) -> bool {
        if self.st.builtin_idle {
            return true;
        }
        self.fail(format!(
            "{kf}: built-in idle tracking is disabled (ops.update_idle is implemented without SCX_OPS_KEEP_BUILTIN_IDLE)"
        ));
        false
    }

    /// `scx_bpf_select_cpu_dfl(p, prev_cpu, wake_flags, &is_idle)`: the
    /// built-in placement (prev_cpu if idle, else an idle CPU near it);
    /// from `ops.select_cpu` only. Returns (cpu, whether it is idle and now
    /// claimed).
    pub fn select_cpu_dfl(&mut self, p: TaskId, prev_cpu: CpuId, wake_flags: u64) -> (CpuId, bool) {
        if !self.valid_task(p, "select_cpu_dfl") || !self.valid_cpu(prev_cpu, "select_cpu_dfl") {
            return (prev_cpu.min(self.m.nr_cpus() - 1), false);
        }
        if self.hook != Hook::SelectCpu {
            self.fail(format!(
                "select_cpu_dfl called from {}, which may not (only ops.select_cpu)",
                self.hook.name()
            ));
            return (prev_cpu, false);
        }
        if !self.idle_enabled("select_cpu_dfl") {
            return (prev_cpu, false);
        }
        let cpu = self.cpu;
        self.st.select_cpu_dfl(self.m, p, prev_cpu, wake_flags, cpu)
    }

    /// `scx_bpf_pick_idle_cpu(mask, flags)`: claim an idle CPU of `mask`
    /// (rotating start, whole idle cores first with SMT); None if none.
    pub fn pick_idle_cpu(&mut self, mask: CpuSet, _flags: u64) -> Option<CpuId> {
        if !self.idle_enabled("pick_idle_cpu") {
            return None;
        }
        let m = mask.and(&self.m.online);
        self.st.pick_idle(self.m, &m, false)
    }

    /// `scx_bpf_pick_any_cpu(mask, flags)`: an idle CPU of `mask` if any,
    /// else any online CPU of it.
    pub fn pick_any_cpu(&mut self, mask: CpuSet, flags: u64) -> Option<CpuId> {
        if let Some(c) = self.pick_idle_cpu(mask, flags) {
            return Some(c);
        }
        mask.and(&self.m.online).first()
    }

    /// `scx_bpf_test_and_clear_cpu_idle(cpu)`: whether `cpu` was idle in
    /// the built-in mask; it is claimed (cleared) either way.
    pub fn test_and_clear_cpu_idle(&mut self, cpu: CpuId) -> bool {
        if !self.valid_cpu(cpu, "test_and_clear_cpu_idle")
            || !self.idle_enabled("test_and_clear_cpu_idle")
        {
            return false;
        }
        self.st.test_and_clear_idle(self.m, cpu)
    }

    /// `scx_bpf_get_idle_cpumask()`: the built-in idle-CPU mask.
    pub fn idle_cpumask(&mut self) -> CpuSet {
        if !self.idle_enabled("idle_cpumask") {
            return CpuSet::empty();
        }
        self.st.idle
    }

    // --- timers, errors, exits --------------------------------------------

    /// Arm a policy timer (`bpf_timer_start`): the policy's `timer(tag)`
    /// hook runs at absolute time `at` (ns; not before now) on this CPU.
    /// Timers are not cancelled: ignore stale tags in the hook.
    pub fn timer_start(&mut self, at: Ns, tag: u64) {
        self.st.next_timer += 1;
        let id = self.st.next_timer;
        self.st.timers.insert(id, tag);
        self.m.arm_timer(at, "ext", self.cpu, id);
    }

    /// `scx_bpf_error(msg)`: the policy reports its own error; it is
    /// aborted when the hook returns.
    pub fn error(&mut self, msg: &str) {
        let s = format!("scx_bpf_error: {msg}");
        self.st
            .record_exit(ExitKind::ErrorBpf, self.m, self.hook, self.cpu, s);
    }

    /// `scx_bpf_exit(code, msg)`: the policy asks to be unloaded (not an
    /// error: its tasks go back to the fair class and the run goes on).
    pub fn exit(&mut self, code: i64, msg: &str) {
        self.st.record_exit(
            ExitKind::UnregBpf,
            self.m,
            self.hook,
            self.cpu,
            msg.to_string(),
        );
        if let Some(e) = self.st.exit.as_mut() {
            e.info.exit_code = code;
        }
    }
}
