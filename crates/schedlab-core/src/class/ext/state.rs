//! The ext class's state outside the policy: per-task `sched_ext_entity`,
//! per-CPU local DSQs, the global and user DSQs, built-in idle tracking
//! (kernel/sched/ext_idle.c) and the error/exit record. Shared by the class
//! (mod.rs) and the kfunc context (ctx.rs), which both drive the mechanics
//! below (`dispatch_enqueue`, `consume_dispatch_q`, ...).

use super::dsq::{Dsq, DsqError, DsqKey};
use super::ops::*;
use crate::clock::Ns;
use crate::cpuset::{CpuId, CpuSet};
use crate::machine::{Machine, MigrationKind};
use crate::task::TaskId;
use std::collections::BTreeMap;

/// What to do when the policy errors (ext tunable `ext_on_error`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OnError {
    /// 0: the whole run stops with the error (`Machine::fail`).
    #[default]
    Fail,
    /// 1: the kernel's behaviour: the policy is disabled, its tasks go
    /// back to the fair class and the run goes on (`Machine::abort_class`).
    Fallback,
}

/// Which op is running, for kfunc permissions and error messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hook {
    /// `ops.select_cpu`.
    SelectCpu,
    /// `ops.enqueue`.
    Enqueue,
    /// `ops.dequeue`.
    Dequeue,
    /// `ops.dispatch`.
    Dispatch,
    /// `ops.tick`.
    Tick,
    /// `ops.runnable`.
    Runnable,
    /// `ops.running`.
    Running,
    /// `ops.stopping`.
    Stopping,
    /// `ops.quiescent`.
    Quiescent,
    /// `ops.yield`.
    Yield,
    /// `ops.core_sched_before`.
    CoreSchedBefore,
    /// `ops.set_weight`.
    SetWeight,
    /// `ops.set_cpumask`.
    SetCpumask,
    /// `ops.update_idle`.
    UpdateIdle,
    /// `ops.init_task`.
    InitTask,
    /// `ops.exit_task`.
    ExitTask,
    /// `ops.enable`.
    Enable,
    /// `ops.disable`.
    Disable,
    /// `ops.cpu_online`.
    CpuOnline,
    /// `ops.cpu_offline`.
    CpuOffline,
    /// `ops.init`.
    Init,
    /// `ops.exit`.
    Exit,
    /// A policy timer callback.
    Timer,
    /// The class itself (no op running), e.g. the watchdog.
    Kernel,
}

impl Hook {
    /// Every policy callback, in `struct sched_ext_ops` order (then the
    /// policy timer); `Hook::Kernel` is not one.
    pub const OPS: [Hook; 23] = [
        Hook::SelectCpu,
        Hook::Enqueue,
        Hook::Dequeue,
        Hook::Dispatch,
        Hook::Tick,
        Hook::Runnable,
        Hook::Running,
        Hook::Stopping,
        Hook::Quiescent,
        Hook::Yield,
        Hook::CoreSchedBefore,
        Hook::SetWeight,
        Hook::SetCpumask,
        Hook::UpdateIdle,
        Hook::InitTask,
        Hook::ExitTask,
        Hook::Enable,
        Hook::Disable,
        Hook::CpuOnline,
        Hook::CpuOffline,
        Hook::Init,
        Hook::Exit,
        Hook::Timer,
    ];

    /// The `ExtOps` method (and Python method) implementing it:
    /// "select_cpu", ..., "yield_" (`yield` is a keyword in both); "" for
    /// `Hook::Kernel`.
    pub const fn method(self) -> &'static str {
        match self {
            Hook::SelectCpu => "select_cpu",
            Hook::Enqueue => "enqueue",
            Hook::Dequeue => "dequeue",
            Hook::Dispatch => "dispatch",
            Hook::Tick => "tick",
            Hook::Runnable => "runnable",
            Hook::Running => "running",
            Hook::Stopping => "stopping",
            Hook::Quiescent => "quiescent",
            Hook::Yield => "yield_",
            Hook::CoreSchedBefore => "core_sched_before",
            Hook::SetWeight => "set_weight",
            Hook::SetCpumask => "set_cpumask",
            Hook::UpdateIdle => "update_idle",
            Hook::InitTask => "init_task",
            Hook::ExitTask => "exit_task",
            Hook::Enable => "enable",
            Hook::Disable => "disable",
            Hook::CpuOnline => "cpu_online",
            Hook::CpuOffline => "cpu_offline",
            Hook::Init => "init",
            Hook::Exit => "exit",
            Hook::Timer => "timer",
            Hook::Kernel => "",
        }
    }

    /// "ops.dispatch", ...
    pub fn name(self) -> &'static str {
        match self {
            Hook::SelectCpu => "ops.select_cpu",
            Hook::Enqueue => "ops.enqueue",
            Hook::Dequeue => "ops.dequeue",
            Hook::Dispatch => "ops.dispatch",
            Hook::Tick => "ops.tick",
            Hook::Runnable => "ops.runnable",
            Hook::Running => "ops.running",
            Hook::Stopping => "ops.stopping",
            Hook::Quiescent => "ops.quiescent",
            Hook::Yield => "ops.yield",
            Hook::CoreSchedBefore => "ops.core_sched_before",
            Hook::SetWeight => "ops.set_weight",
            Hook::SetCpumask => "ops.set_cpumask",
            Hook::UpdateIdle => "ops.update_idle",
            Hook::InitTask => "ops.init_task",
            Hook::ExitTask => "ops.exit_task",
            Hook::Enable => "ops.enable",
            Hook::Disable => "ops.disable",
            Hook::CpuOnline => "ops.cpu_online",
            Hook::CpuOffline => "ops.cpu_offline",
            Hook::Init => "ops.init",
            Hook::Exit => "ops.exit",
            Hook::Timer => "policy timer",
            Hook::Kernel => "sched_ext",
        }
    }
}

/// Where a runnable ext task is (`p->scx.dsq` and `p->scx.ops_state`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Where {
    /// Not runnable in the class.
    Nowhere,
    /// Enqueued to the policy, which has not inserted it (`SCX_OPSS_QUEUED`).
    Custody,
    /// In DSQ `.0` at `.1`.
    Dsq(u64, DsqKey),
    /// Being moved by the engine to the local DSQ of this CPU.
    InFlight(CpuId),
    /// Current on its CPU.
    Running,
}

/// `struct sched_ext_entity`, the class's view of a task.
#[derive(Debug, Clone)]
pub struct Scx {
    /// `ops.init_task` ran.
    pub inited: bool,
    /// `ops.enable` ran (the task is scheduled by the policy).
    pub enabled: bool,
    /// `SCX_TASK_QUEUED`: runnable in the class.
    pub queued: bool,
    /// Where it is.
    pub at: Where,
    /// `p->scx.slice`, ns left.
    pub slice: u64,
    /// `p->scx.dsq_vtime`.
    pub dsq_vtime: u64,
    /// `p->scx.weight` (nice 0 = 100).
    pub weight: u32,
    /// `p->scx.runnable_at`: runnable and waiting since (watchdog).
    pub runnable_at: Option<Ns>,
    /// When it last entered the policy's custody.
    pub custody_since: Ns,
    /// Direct dispatch chosen in select_cpu/enqueue (`ddsp_dsq_id`,
    /// `ddsp_enq_flags`).
    pub ddsp: Option<Insert>,
    /// CPU whose local DSQ receives it when the engine's migration lands
    /// (`p->scx.sticky_cpu`).
    pub sticky: Option<CpuId>,
    /// Affinity the policy last saw (`ops.set_cpumask`).
    pub mask_seen: CpuSet,
}

impl Default for Scx {
    fn default() -> Self {
        Scx {
            inited: false,
            enabled: false,
            queued: false,
            at: Where::Nowhere,
            slice: SCX_SLICE_DFL,
            dsq_vtime: 0,
            weight: 100,
            runnable_at: None,
            custody_since: 0,
            ddsp: None,
            sticky: None,
            mask_seen: CpuSet::empty(),
        }
    }
}

/// A DSQ insert the policy asked for, applied later (direct dispatch at
/// enqueue time, dispatch-buffer entries after `ops.dispatch` returns).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Insert {
    /// Target DSQ id as the policy gave it.
    pub dsq: u64,
    /// `SCX_ENQ_*` flags.
    pub flags: u64,
    /// Vtime ordering (`dsq_insert_vtime`).
    pub vtime: Option<u64>,
    /// Priority level (`dsq_insert_prio`).
    pub level: Option<u32>,
}

/// Per-CPU state (`struct scx_rq`).
#[derive(Debug, Clone)]
pub struct CpuSt {
    /// `rq->scx.local_dsq`.
    pub local: Dsq,
    /// Tasks in flight to `local` (engine migration pending).
    pub inflight: u32,
    /// Ext tasks queued with `task_cpu == cpu` (`rq->scx.nr_running`).
    pub nr: u32,
    /// Ext task current here.
    pub curr: Option<TaskId>,
    /// `se.exec_start` of `curr`.
    pub exec_start: Ns,
    /// `SCX_RQ_BAL_KEEP`: balance decided to keep `curr`.
    pub keep: bool,
    /// The CPU ran the idle task when the class last looked.
    pub seen_idle: bool,
}

/// An exit in progress (`scx_exit_info` before `ops.exit`).
#[derive(Debug, Clone)]
pub struct PendingExit {
    /// The info handed to `ops.exit`.
    pub info: ExitInfo,
}

/// Everything of the class except the policy and its task storage.
#[derive(Debug)]
pub struct ExtState {
    /// Policy name (for messages).
    pub name: String,
    /// `ops.flags`.
    pub flags: u64,
    /// Watchdog timeout, ns.
    pub timeout: Ns,
    /// `ops.dispatch_max_batch`.
    pub max_batch: u32,
    /// Whether the built-in idle tracking is on (`scx_builtin_idle_enabled`).
    pub builtin_idle: bool,
    /// Whether the policy has `ops.update_idle`.
    pub has_update_idle: bool,
    /// Per task.
    pub tasks: Vec<Scx>,
    /// Per CPU.
    pub cpus: Vec<CpuSt>,
    /// `SCX_DSQ_GLOBAL`.
    pub global: Dsq,
    /// User DSQs by id (ordered map: deterministic).
    pub user: BTreeMap<u64, Dsq>,
    /// Insertion sequence for DSQ ordering.
    pub seq: u64,
    /// `idle_masks.cpu`.
    pub idle: CpuSet,
    /// `idle_masks.smt`: CPUs whose whole core is idle.
    pub idle_smt: CpuSet,
    /// `cpumask_any_and_distribute`'s rotating start.
    pub distribute_prev: CpuId,
    /// The dispatch buffer of the running `ops.dispatch`:
    /// (task, dsq, enq_flags).
    pub dsp_buf: Vec<(TaskId, Insert)>,
    /// Tasks the running `ops.dispatch` inserted in all (`dspc->nr_tasks`).
    pub dsp_nr: u32,
    /// The task `select_cpu`/`enqueue` is running for (`direct_dispatch_task`).
    pub ddsp_task: Option<TaskId>,
    /// The policy errored or asked to exit; handled after the hook.
    pub exit: Option<PendingExit>,
    /// The policy is out of service (bypass mode: global FIFO, no ops).
    pub disabled: bool,
    /// `ext_on_error`.
    pub on_error: OnError,
    /// Armed policy timers: engine tag → policy tag.
    pub timers: BTreeMap<u64, u64>,
    /// Next engine tag for a policy timer.
    pub next_timer: u64,
    /// The watchdog timer is armed.
    pub watchdog_armed: bool,
}

/// Engine timer tag of the watchdog.
pub const WATCHDOG_TAG: u64 = u64::MAX;

/// `sched_weight_to_cgroup`: a load weight (1024 = nice 0) to the cgroup
/// scale (100 = nice 0), rounded to nearest, clamped to 1..=10000
/// (kernel/sched/sched.h).
pub fn weight_to_cgroup(w: u64) -> u32 {
    ((w * 100 + 512) / 1024).clamp(1, 10_000) as u32
}

impl ExtState {
    /// Seconds with 6 decimals, as in the error messages.
    fn secs(ns: Ns) -> String {
        format!("{}.{:06}", ns / 1_000_000_000, (ns % 1_000_000_000) / 1000)
    }

    /// `"hog-1" (pid 1002)`.
    pub fn task_str(m: &Machine, t: TaskId) -> String {
        format!("task \"{}\" (pid {})", m.tasks[t].name, m.tasks[t].pid)
    }

    /// Record an error (`scx_ops_error`): `"<policy>: <hook> on CPU <cpu>
    /// at <t> s: <msg>"`. The first error wins; the class acts on it when
    /// the current hook returns.
    pub fn error(&mut self, m: &Machine, hook: Hook, cpu: CpuId, msg: String) {
        self.record_exit(ExitKind::Error, m, hook, cpu, msg);
    }

    /// Record an exit of `kind` (error, stall, or a requested exit).
    pub fn record_exit(
        &mut self,
        kind: ExitKind,
        m: &Machine,
        hook: Hook,
        cpu: CpuId,
        msg: String,
    ) {
        if self.exit.is_some() || self.disabled {
            return;
        }
        let full = format!(
            "{}: {} on CPU {} at {} s: {}",
            self.name,
            hook.name(),
            cpu,
            Self::secs(m.now),
            msg
        );
        let reason = match kind {
            ExitKind::Unreg => "scheduler unregistered",
            ExitKind::UnregBpf => "scheduler requested exit",
            ExitKind::ErrorBpf => "scx_bpf_error",
            ExitKind::Error => "runtime error",
            ExitKind::ErrorStall => "runnable task stall",
        };
        self.exit = Some(PendingExit {
            info: ExitInfo {
                kind,
                exit_code: 0,
                reason: reason.into(),
                msg: full,
            },
        });
    }

    /// Whether ops may be called (no exit pending, not disabled).
    pub fn live(&self) -> bool {
        !self.disabled && self.exit.is_none()
    }

    /// Grow the per-task table to hold `t`.
    pub fn ensure_task(&mut self, t: TaskId) {
        if self.tasks.len() <= t {
            self.tasks.resize_with(t + 1, Scx::default);
        }
    }

    /// Resolve a DSQ id for an insert by the op running on `cpu` for task
    /// `t` whose CPU is `tcpu`: `Ok(Some(c))` for a local DSQ of CPU `c`,
    /// `Ok(None)` for global/user. `SCX_DSQ_LOCAL` means the task's CPU
    /// from enqueue/select_cpu and the running CPU from dispatch
    /// (`find_dsq_for_dispatch`).
    pub fn resolve_local(
        &self,
        m: &Machine,
        dsq: u64,
        local_cpu: CpuId,
    ) -> Result<Option<CpuId>, String> {
        if dsq == SCX_DSQ_LOCAL {
            return Ok(Some(local_cpu));
        }
        if dsq & SCX_DSQ_LOCAL_ON == SCX_DSQ_LOCAL_ON {
            let c = (dsq & SCX_DSQ_LOCAL_CPU_MASK) as usize;
            if c >= m.nr_cpus() {
                return Err(format!(
                    "SCX_DSQ_LOCAL_ON | {c}: CPU {c} does not exist (the machine has {} CPUs)",
                    m.nr_cpus()
                ));
            }
            return Ok(Some(c));
        }
        Ok(None)
    }

    /// Put `t` into DSQ `dsq` (global or user; not local) with `enq_flags`,
    /// ordered by `vtime` or `level` if given (`dispatch_enqueue`). Errors
    /// come back as text for the caller to report.
    pub fn enqueue_shared(
        &mut self,
        t: TaskId,
        dsq: u64,
        enq_flags: u64,
        vtime: Option<u64>,
        level: Option<u32>,
    ) -> Result<(), String> {
        self.seq += 1;
        let seq = self.seq;
        let head = enq_flags & (SCX_ENQ_HEAD | SCX_ENQ_PREEMPT) != 0;
        let q = if dsq == SCX_DSQ_GLOBAL {
            &mut self.global
        } else if let Some(q) = self.user.get_mut(&dsq) {
            q
        } else {
            return Err(format!(
                "inserted into DSQ {}, which does not exist (create it in ops.init with create_dsq)",
                dsq_name(dsq)
            ));
        };
        let r = match (vtime, level) {
            (_, Some(l)) => q.insert_prio(t, l, head, seq),
            (Some(v), None) => {
                if dsq & SCX_DSQ_FLAG_BUILTIN != 0 {
                    return Err(format!(
                        "vtime insert into built-in DSQ {}: built-in DSQs are FIFO only (use a DSQ made with create_dsq)",
                        dsq_name(dsq)
                    ));
                }
                q.insert_vtime(t, v, seq)
            }
            (None, None) => q.insert_fifo(t, head, seq),
        };
        match r {
            Ok(k) => {
                self.tasks[t].at = Where::Dsq(dsq, k);
                Ok(())
            }
            Err(e) => Err(dsq_error(dsq, e)),
        }
    }

    /// Put `t`, whose CPU is `cpu`, at the tail (or head) of `cpu`'s local
    /// DSQ and poke the CPU (`dispatch_enqueue` + `local_dsq_post_enq`):
    /// `SCX_ENQ_PREEMPT` zeroes the slice of the CPU's current ext task and
    /// reschedules it; an idle CPU is rescheduled.
    pub fn enqueue_local(&mut self, m: &mut Machine, t: TaskId, cpu: CpuId, enq_flags: u64) {
        self.seq += 1;
        let head = enq_flags & (SCX_ENQ_HEAD | SCX_ENQ_PREEMPT) != 0;
        if let Ok(k) = self.cpus[cpu].local.insert_fifo(t, head, self.seq) {
            self.tasks[t].at = Where::Dsq(local_id(cpu), k);
        }
        let curr = m.rqs[cpu].curr;
        let mut preempt = false;
        if enq_flags & SCX_ENQ_PREEMPT != 0 {
            if let Some(c) = self.cpus[cpu].curr.filter(|c| *c != t && curr == Some(*c)) {
                self.tasks[c].slice = 0;
                preempt = true;
            }
        }
        if preempt || curr.is_none() {
            m.resched(cpu);
        }
    }

    /// Send `t` to `cpu`'s local DSQ, through an engine migration when it
    /// is queued on another CPU (`dispatch_to_local_dsq`,
    /// `move_remote_task_to_local_dsq`). The caller checked affinity.
    pub fn to_local(&mut self, m: &mut Machine, t: TaskId, cpu: CpuId, enq_flags: u64) {
        if m.tasks[t].cpu == cpu {
            self.enqueue_local(m, t, cpu, enq_flags);
        } else {
            self.tasks[t].at = Where::InFlight(cpu);
            self.tasks[t].sticky = Some(cpu);
            self.cpus[cpu].inflight += 1;
            m.request_migration(t, cpu, MigrationKind::Balance);
        }
    }

    /// Take `t` out of whatever DSQ holds it (`dispatch_dequeue`).
    pub fn dsq_remove(&mut self, t: TaskId) {
        match self.tasks[t].at {
            Where::Dsq(id, key) => {
                let q = if id == SCX_DSQ_GLOBAL {
                    Some(&mut self.global)
                } else if id & SCX_DSQ_LOCAL_ON == SCX_DSQ_LOCAL_ON {
                    self.cpus
                        .get_mut((id & SCX_DSQ_LOCAL_CPU_MASK) as usize)
                        .map(|c| &mut c.local)
                } else {
                    self.user.get_mut(&id)
                };
                if let Some(q) = q {
                    q.remove(key);
                }
            }
            Where::InFlight(c) => {
                self.cpus[c].inflight = self.cpus[c].inflight.saturating_sub(1);
            }
            _ => {}
        }
        self.tasks[t].at = Where::Nowhere;
    }

    /// The DSQ with id `dsq` (global, local-on, or user).
    pub fn dsq(&self, dsq: u64) -> Option<&Dsq> {
        if dsq == SCX_DSQ_GLOBAL {
            Some(&self.global)
        } else if dsq & SCX_DSQ_LOCAL_ON == SCX_DSQ_LOCAL_ON {
            self.cpus
                .get((dsq & SCX_DSQ_LOCAL_CPU_MASK) as usize)
                .map(|c| &c.local)
        } else {
            self.user.get(&dsq)
        }
    }

    /// `consume_dispatch_q`: move the first task of `dsq` that may run on
    /// `cpu` to `cpu`'s local DSQ. Returns whether one was found.
    pub fn consume(&mut self, m: &mut Machine, dsq: u64, cpu: CpuId) -> bool {
        let Some(q) = self.dsq(dsq) else {
            return false;
        };
        // task_can_run_on_remote_rq: affinity and an online CPU.
        let found = q.first_where(|t| m.tasks[t].affinity.contains(cpu) && m.online.contains(cpu));
        let Some((_, t)) = found else {
            return false;
        };
        self.dsq_remove(t);
        self.to_local(m, t, cpu, 0);
        true
    }

    /// Check an insert of `t` before accepting it (the checks of
    /// `scx_dsq_insert_commit`/`dispatch_enqueue` done at call time, so the
    /// error names the op that inserted): the DSQ exists, vtime is not used
    /// on a built-in DSQ, a local target is in the task's affinity
    /// (`task_can_run_on_remote_rq`). `local_cpu` is what SCX_DSQ_LOCAL
    /// means for this op.
    pub fn check_insert(
        &self,
        m: &Machine,
        t: TaskId,
        ins: &Insert,
        local_cpu: CpuId,
    ) -> Result<(), String> {
        if let Some(c) = self.resolve_local(m, ins.dsq, local_cpu)? {
            if ins.vtime.is_some() || ins.level.is_some() {
                return Err(format!(
                    "ordered insert into local DSQ {}: built-in DSQs are FIFO only (use a DSQ made with create_dsq)",
                    dsq_name(ins.dsq)
                ));
            }
            let aff = m.tasks[t].affinity;
            if !aff.contains(c) {
                return Err(format!(
                    "inserted into {} (CPU {c}), which is outside its affinity {aff:?}",
                    dsq_name(ins.dsq)
                ));
            }
            return Ok(());
        }
        let q = if ins.dsq == SCX_DSQ_GLOBAL {
            &self.global
        } else if let Some(q) = self.user.get(&ins.dsq) {
            q
        } else {
            return Err(format!(
                "inserted into DSQ {}, which does not exist (create it in ops.init with create_dsq)",
                dsq_name(ins.dsq)
            ));
        };
        if ins.vtime.is_some() && ins.dsq & SCX_DSQ_FLAG_BUILTIN != 0 {
            return Err(format!(
                "vtime insert into built-in DSQ {}: built-in DSQs are FIFO only (use a DSQ made with create_dsq)",
                dsq_name(ins.dsq)
            ));
        }
        match (q.levels(), ins.level) {
            (None, Some(_)) | (Some(_), None) => Err(dsq_error(ins.dsq, DsqError::WrongKind)),
            (Some(n), Some(l)) if l >= n => Err(dsq_error(ins.dsq, DsqError::Level { levels: n })),
            _ => Ok(()),
        }
    }

    /// Carry out a checked insert of `t` (`dispatch_to_local_dsq` or
    /// `dispatch_enqueue`); a local target on an offline CPU falls back to
    /// the global DSQ as in the kernel.
    pub fn commit(
        &mut self,
        m: &mut Machine,
        t: TaskId,
        ins: Insert,
        local_cpu: CpuId,
    ) -> Result<(), String> {
        match self.resolve_local(m, ins.dsq, local_cpu)? {
            Some(c) if m.online.contains(c) && m.tasks[t].affinity.contains(c) => {
                self.to_local(m, t, c, ins.flags);
                Ok(())
            }
            Some(_) => self.enqueue_shared(t, SCX_DSQ_GLOBAL, ins.flags, None, None),
            None => self.enqueue_shared(t, ins.dsq, ins.flags, ins.vtime, ins.level),
        }
    }

    /// Tasks ready in `cpu`'s local DSQ, in flight included.
    pub fn local_nr(&self, cpu: CpuId) -> u32 {
        self.cpus[cpu].local.len() + self.cpus[cpu].inflight
    }

    // --- built-in idle tracking (kernel/sched/ext_idle.c) ---------------

    /// `scx_idle_test_and_clear_cpu` (ext_idle.c, v6.15; `test_and_clear_cpu_idle`
    /// in ext.c v6.12): claim idle `cpu`; with SMT its core leaves the
    /// idle-core mask.
    pub fn test_and_clear_idle(&mut self, m: &Machine, cpu: CpuId) -> bool {
        if m.topo.has_smt() {
            let smt = m.topo.siblings(cpu);
            if smt.intersects(&self.idle_smt) {
                for s in smt.iter() {
                    self.idle_smt.remove(s);
                }
            }
        }
        let was = self.idle.contains(cpu);
        self.idle.remove(cpu);
        was
    }

    /// `update_builtin_idle`: `cpu` enters or leaves idle.
    pub fn set_idle(&mut self, m: &Machine, cpu: CpuId, idle: bool) {
        if idle {
            self.idle.insert(cpu);
            if m.topo.has_smt() && m.topo.siblings(cpu).iter().all(|s| self.idle.contains(s)) {
                for s in m.topo.siblings(cpu).iter() {
                    self.idle_smt.insert(s);
                }
            }
        } else {
            self.idle.remove(cpu);
            for s in m.topo.siblings(cpu).iter() {
                self.idle_smt.remove(s);
            }
        }
    }

    /// `cpumask_any_and_distribute(idle, allowed)` then claim it
    /// (`scx_pick_idle_cpu`, ext.c v6.12). `core`: whole idle cores only.
    pub fn pick_idle(&mut self, m: &Machine, allowed: &CpuSet, core: bool) -> Option<CpuId> {
        loop {
            let mask = if m.topo.has_smt() {
                let c = self.idle_smt.and(allowed);
                if c.is_empty() && core {
                    return None;
                }
                if c.is_empty() {
                    self.idle.and(allowed)
                } else {
                    c
                }
            } else {
                self.idle.and(allowed)
            };
            let cpu = mask.iter_wrap(self.distribute_prev).next()?;
            self.distribute_prev = cpu;
            if self.test_and_clear_idle(m, cpu) {
                return Some(cpu);
            }
        }
    }

    /// `scx_select_cpu_dfl` (ext.c v6.12): prev_cpu if idle (whole idle
    /// core first with SMT), else an idle CPU in prev_cpu's LLC, else any
    /// idle allowed CPU; WAKE_SYNC prefers the waker's CPU `this_cpu`.
    /// Returns (cpu, found idle).
    pub fn select_cpu_dfl(
        &mut self,
        m: &Machine,
        t: TaskId,
        prev_cpu: CpuId,
        wake_flags: u64,
        this_cpu: CpuId,
    ) -> (CpuId, bool) {
        let aff = m.tasks[t].affinity.and(&m.online);
        let full = aff.count() >= m.nr_cpus();
        let llc = full.then(|| m.topo.llc(prev_cpu));
        if wake_flags & SCX_WAKE_SYNC != 0 {
            if m.topo.share_cache(this_cpu, prev_cpu) && self.test_and_clear_idle(m, prev_cpu) {
                return (prev_cpu, true);
            }
            if !self.idle.is_empty()
                && self.cpus[this_cpu].local.is_empty()
                && aff.contains(this_cpu)
            {
                return (this_cpu, true);
            }
        }
        if m.topo.has_smt() {
            if self.idle_smt.contains(prev_cpu) && self.test_and_clear_idle(m, prev_cpu) {
                return (prev_cpu, true);
            }
            if let Some(l) = llc {
                if let Some(c) = self.pick_idle(m, &l.and(&aff), true) {
                    return (c, true);
                }
            }
            if let Some(c) = self.pick_idle(m, &aff, true) {
                return (c, true);
            }
        }
        if aff.contains(prev_cpu) && self.test_and_clear_idle(m, prev_cpu) {
            return (prev_cpu, true);
        }
        if let Some(l) = llc {
            if let Some(c) = self.pick_idle(m, &l.and(&aff), false) {
                return (c, true);
            }
        }
        if let Some(c) = self.pick_idle(m, &aff, false) {
            return (c, true);
        }
        (prev_cpu, false)
    }
}

/// `SCX_DSQ_LOCAL_ON | cpu`.
pub fn local_id(cpu: CpuId) -> u64 {
    SCX_DSQ_LOCAL_ON | cpu as u64
}

/// A DSQ id as people write it.
pub fn dsq_name(dsq: u64) -> String {
    match dsq {
        SCX_DSQ_GLOBAL => "SCX_DSQ_GLOBAL".into(),
        SCX_DSQ_LOCAL => "SCX_DSQ_LOCAL".into(),
        SCX_DSQ_INVALID => "SCX_DSQ_INVALID".into(),
        d if d & SCX_DSQ_LOCAL_ON == SCX_DSQ_LOCAL_ON => {
            format!("SCX_DSQ_LOCAL_ON|{}", d & SCX_DSQ_LOCAL_CPU_MASK)
        }
        d if d & SCX_DSQ_FLAG_BUILTIN != 0 => format!("{d:#x}"),
        d => d.to_string(),
    }
}

fn dsq_error(dsq: u64, e: DsqError) -> String {
    let n = dsq_name(dsq);
    match e {
        DsqError::Mixed { has_vtime: true } => format!(
            "FIFO insert into DSQ {n}, which holds vtime-ordered tasks (a DSQ is FIFO or vtime, not both)"
        ),
        DsqError::Mixed { has_vtime: false } => format!(
            "vtime insert into DSQ {n}, which holds FIFO tasks (a DSQ is FIFO or vtime, not both)"
        ),
        DsqError::WrongKind => format!(
            "insert into DSQ {n} of the wrong kind (priority-bitmap DSQs take dsq_insert_prio only, other DSQs never)"
        ),
        DsqError::Level { levels } => {
            format!("insert into priority level beyond the {levels} levels of DSQ {n}")
        }
    }
}
