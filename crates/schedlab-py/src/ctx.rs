//! The kfunc context a Python policy's hook receives (`schedlab.ext.Ctx`)
//! and the views it hands out (`TaskView`, `ExitInfo`): [`PyCtx`] wraps a
//! raw pointer to the hook's `Ctx`, which `PyPolicy::call` (policy.rs) sets
//! just before the call and clears when it returns, so a ctx kept by
//! Python raises an error instead of touching freed memory.

use crate::PolicyError;
use pyo3::prelude::*;
use schedlab_core::class::ext::{Ctx, ExitInfo, ExitKind, Hook, TaskView};
use schedlab_core::cpuset::{CpuSet, MAX_CPUS};
use std::cell::Cell;
use std::ptr;

/// Per-task storage: a Python object made on first use (`ctx.task_data`).
pub(crate) type Slot = Option<Py<PyAny>>;
pub(crate) type RawCtx = Ctx<'static, Slot>;

/// Python method names of the hooks, indexed like `Hook::OPS`.
pub(crate) const HOOKS: [&str; 23] = {
    let mut out = [""; 23];
    let mut i = 0;
    while i < 23 {
        out[i] = Hook::OPS[i].method();
        i += 1;
    }
    out
};

/// Seconds with microseconds, as the class's messages write times.
pub(crate) fn secs(ns: u64) -> String {
    format!("{}.{:06}", ns / 1_000_000_000, (ns % 1_000_000_000) / 1000)
}

/// Convert Python ints to a CPU mask.
fn cpuset(cpus: &[usize]) -> PyResult<CpuSet> {
    let mut s = CpuSet::empty();
    for &c in cpus {
        if c >= MAX_CPUS {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "CPU {c} is out of range (at most {MAX_CPUS} CPUs)"
            )));
        }
        s.insert(c);
    }
    Ok(s)
}

pub(crate) fn cpulist(s: &CpuSet) -> Vec<usize> {
    s.iter().collect()
}

/// What `ops.exit` is told (`struct scx_exit_info`).
#[pyclass(name = "ExitInfo", module = "schedlab.ext", frozen, get_all)]
pub struct PyExitInfo {
    /// "unreg", "unreg_bpf", "error_bpf", "error" or "error_stall".
    kind: &'static str,
    exit_code: i64,
    reason: String,
    msg: String,
}

impl From<&ExitInfo> for PyExitInfo {
    fn from(i: &ExitInfo) -> Self {
        PyExitInfo {
            kind: match i.kind {
                ExitKind::Unreg => "unreg",
                ExitKind::UnregBpf => "unreg_bpf",
                ExitKind::ErrorBpf => "error_bpf",
                ExitKind::Error => "error",
                ExitKind::ErrorStall => "error_stall",
            },
            exit_code: i.exit_code,
            reason: i.reason.clone(),
            msg: i.msg.clone(),
        }
    }
}

/// A read-only snapshot of a task (`ctx.task(p)`).
#[pyclass(name = "TaskView", module = "schedlab.ext", frozen, get_all)]
pub struct PyTaskView {
    id: usize,
    pid: u32,
    tgid: u32,
    name: String,
    nice: i32,
    weight: u32,
    cpumask: Vec<usize>,
    slice: u64,
    dsq_vtime: u64,
    /// "SCHED_OTHER", ..., "SCHED_EXT".
    policy: &'static str,
    cpu: usize,
    running: bool,
    runnable: bool,
}

#[pymethods]
impl PyTaskView {
    fn __repr__(&self) -> String {
        format!(
            "TaskView(id={}, pid={}, name={:?}, policy={}, nice={}, weight={}, cpu={})",
            self.id, self.pid, self.name, self.policy, self.nice, self.weight, self.cpu
        )
    }
}

impl From<TaskView> for PyTaskView {
    fn from(t: TaskView) -> Self {
        PyTaskView {
            id: t.id,
            pid: t.pid,
            tgid: t.tgid,
            cpumask: cpulist(&t.cpumask),
            name: t.name,
            nice: t.nice,
            weight: t.weight,
            slice: t.slice,
            dsq_vtime: t.dsq_vtime,
            policy: t.policy.name(),
            cpu: t.cpu,
            running: t.running,
            runnable: t.runnable,
        }
    }
}

/// The kfunc context of one hook call (`schedlab.ext.Ctx`): valid only
/// while that hook runs.
#[pyclass(name = "Ctx", module = "schedlab.ext", unsendable)]
pub struct PyCtx {
    ptr: Cell<*mut RawCtx>,
    /// The hook it was made for (index into HOOKS) and when it returned.
    hook: Cell<usize>,
    at: Cell<u64>,
}

impl Default for PyCtx {
    fn default() -> Self {
        PyCtx {
            ptr: Cell::new(ptr::null_mut()),
            hook: Cell::new(0),
            at: Cell::new(0),
        }
    }
}

impl PyCtx {
    /// Make this ctx stand for `ctx`, the `Ctx` of a call of hook `hook`
    /// (an index into [`HOOKS`]), until [`Self::detach`].
    pub(crate) fn attach(&self, ctx: *mut RawCtx, hook: usize) {
        self.ptr.set(ctx);
        self.hook.set(hook);
    }

    /// The hook returned at time `at`: the ctx is stale from now on.
    pub(crate) fn detach(&self, at: u64) {
        self.ptr.set(ptr::null_mut());
        self.at.set(at);
    }

    /// Run `f` on the live `Ctx`, or raise if the hook has returned.
    fn with<R>(&self, f: impl FnOnce(&mut RawCtx) -> R) -> PyResult<R> {
        let p = self.ptr.get();
        if p.is_null() {
            return Err(PolicyError::new_err(format!(
                "stale ctx: this ctx was passed to ops.{} and is valid only until that call returned (at {} s); use the ctx each hook receives, don't keep it",
                HOOKS[self.hook.get()],
                secs(self.at.get())
            )));
        }
        // SAFETY: `ptr` is set by `PyPolicy::call` to the hook's `Ctx`,
        // which outlives the Python call, and cleared before the hook
        // returns. The `Ctx` is not otherwise used during the call, and no
        // method below runs Python code while holding it, so this is the
        // only live reference.
        Ok(f(unsafe { &mut *p }))
    }
}

#[pymethods]
impl PyCtx {
    /// Whether the hook this ctx was passed to is still running.
    #[getter]
    fn valid(&self) -> bool {
        !self.ptr.get().is_null()
    }

    // --- time, CPUs -----------------------------------------------------

    /// Simulated time, ns.
    fn now(&self) -> PyResult<u64> {
        self.with(|c| c.now())
    }

    /// The CPU the hook runs on.
    fn this_cpu(&self) -> PyResult<usize> {
        self.with(|c| c.this_cpu())
    }

    fn nr_cpus(&self) -> PyResult<usize> {
        self.with(|c| c.nr_cpus())
    }

    fn cpu_online(&self, cpu: usize) -> PyResult<bool> {
        self.with(|c| c.cpu_online(cpu))
    }

    fn cpu_curr(&self, cpu: usize) -> PyResult<Option<usize>> {
        self.with(|c| c.cpu_curr(cpu))
    }

    fn cpu_is_idle(&self, cpu: usize) -> PyResult<bool> {
        self.with(|c| c.cpu_is_idle(cpu))
    }

    // --- tasks ------------------------------------------------------------

    fn task(&self, p: usize) -> PyResult<Option<PyTaskView>> {
        self.with(|c| c.task(p).map(PyTaskView::from))
    }

    /// The policy's storage of task `p`: a `types.SimpleNamespace` made on
    /// first use (the same object every time).
    fn task_data(&self, py: Python<'_>, p: usize) -> PyResult<Py<PyAny>> {
        if let Some(v) = self.with(|c| c.task_data(p).as_ref().map(|o| o.clone_ref(py)))? {
            return Ok(v);
        }
        // Made outside `with`: constructing it runs no policy code, but
        // keep Python out of the borrowed Ctx on principle.
        let ns = py
            .import("types")?
            .getattr("SimpleNamespace")?
            .call0()?
            .unbind();
        let out = ns.clone_ref(py);
        self.with(|c| *c.task_data(p) = Some(ns))?;
        Ok(out)
    }

    fn task_slice(&self, p: usize) -> PyResult<u64> {
        self.with(|c| c.task_slice(p))
    }

    fn set_slice(&self, p: usize, slice: u64) -> PyResult<()> {
        self.with(|c| c.set_slice(p, slice))
    }

    fn task_vtime(&self, p: usize) -> PyResult<u64> {
        self.with(|c| c.task_vtime(p))
    }

    fn set_dsq_vtime(&self, p: usize, vtime: u64) -> PyResult<()> {
        self.with(|c| c.set_dsq_vtime(p, vtime))
    }

    fn task_weight(&self, p: usize) -> PyResult<u32> {
        self.with(|c| c.task_weight(p))
    }

    fn task_cpu(&self, p: usize) -> PyResult<usize> {
        self.with(|c| c.task_cpu(p))
    }

    fn task_cpumask(&self, p: usize) -> PyResult<Vec<usize>> {
        self.with(|c| cpulist(&c.task_cpumask(p)))
    }

    fn task_running(&self, p: usize) -> PyResult<bool> {
        self.with(|c| c.task_running(p))
    }

    fn task_runnable_at(&self, p: usize) -> PyResult<u64> {
        self.with(|c| c.task_runnable_at(p))
    }

    // --- DSQs ---------------------------------------------------------------

    #[pyo3(signature = (p, dsq, slice, enq_flags=0))]
    fn dsq_insert(&self, p: usize, dsq: u64, slice: u64, enq_flags: u64) -> PyResult<()> {
        self.with(|c| c.dsq_insert(p, dsq, slice, enq_flags))
    }

    #[pyo3(signature = (p, dsq, slice, vtime, enq_flags=0))]
    fn dsq_insert_vtime(
        &self,
        p: usize,
        dsq: u64,
        slice: u64,
        vtime: u64,
        enq_flags: u64,
    ) -> PyResult<()> {
        self.with(|c| c.dsq_insert_vtime(p, dsq, slice, vtime, enq_flags))
    }

    #[pyo3(signature = (p, dsq, slice, level, enq_flags=0))]
    fn dsq_insert_prio(
        &self,
        p: usize,
        dsq: u64,
        slice: u64,
        level: u32,
        enq_flags: u64,
    ) -> PyResult<()> {
        self.with(|c| c.dsq_insert_prio(p, dsq, slice, level, enq_flags))
    }

    fn dsq_move_to_local(&self, dsq: u64) -> PyResult<bool> {
        self.with(|c| c.dsq_move_to_local(dsq))
    }

    fn dsq_nr_queued(&self, dsq: u64) -> PyResult<Option<u32>> {
        self.with(|c| c.dsq_nr_queued(dsq))
    }

    fn dsq_tasks(&self, dsq: u64) -> PyResult<Vec<usize>> {
        self.with(|c| c.dsq_tasks(dsq))
    }

    fn dsq_peek(&self, dsq: u64) -> PyResult<Option<usize>> {
        self.with(|c| c.dsq_peek(dsq))
    }

    fn create_dsq(&self, id: u64) -> PyResult<bool> {
        self.with(|c| c.create_dsq(id))
    }

    fn create_prio_dsq(&self, id: u64, levels: u32) -> PyResult<bool> {
        self.with(|c| c.create_prio_dsq(id, levels))
    }

    fn destroy_dsq(&self, id: u64) -> PyResult<bool> {
        self.with(|c| c.destroy_dsq(id))
    }

    // --- CPUs: kicks and idle tracking --------------------------------------

    #[pyo3(signature = (cpu, flags=0))]
    fn kick_cpu(&self, cpu: usize, flags: u64) -> PyResult<()> {
        self.with(|c| c.kick_cpu(cpu, flags))
    }

    fn select_cpu_dfl(
        &self,
        p: usize,
        prev_cpu: usize,
        wake_flags: u64,
    ) -> PyResult<(usize, bool)> {
        self.with(|c| c.select_cpu_dfl(p, prev_cpu, wake_flags))
    }

    #[pyo3(signature = (cpus, flags=0))]
    fn pick_idle_cpu(&self, cpus: Vec<usize>, flags: u64) -> PyResult<Option<usize>> {
        let mask = cpuset(&cpus)?;
        self.with(|c| c.pick_idle_cpu(mask, flags))
    }

    #[pyo3(signature = (cpus, flags=0))]
    fn pick_any_cpu(&self, cpus: Vec<usize>, flags: u64) -> PyResult<Option<usize>> {
        let mask = cpuset(&cpus)?;
        self.with(|c| c.pick_any_cpu(mask, flags))
    }

    fn test_and_clear_cpu_idle(&self, cpu: usize) -> PyResult<bool> {
        self.with(|c| c.test_and_clear_cpu_idle(cpu))
    }

    fn idle_cpumask(&self) -> PyResult<Vec<usize>> {
        self.with(|c| cpulist(&c.idle_cpumask()))
    }

    // --- timers, errors, exits ------------------------------------------------

    fn timer_start(&self, at: u64, tag: u64) -> PyResult<()> {
        self.with(|c| c.timer_start(at, tag))
    }

    fn error(&self, msg: &str) -> PyResult<()> {
        self.with(|c| c.error(msg))
    }

    #[pyo3(signature = (code=0, msg=""))]
    fn exit(&self, code: i64, msg: &str) -> PyResult<()> {
        self.with(|c| c.exit(code, msg))
    }

    fn __repr__(&self) -> String {
        if self.valid() {
            format!("<ctx of ops.{}>", HOOKS[self.hook.get()])
        } else {
            format!("<stale ctx of ops.{}>", HOOKS[self.hook.get()])
        }
    }
}
