//! Policies written in Python (`schedlab.ext.Policy` subclasses) hosted in
//! the ext class: [`PyPolicy`] implements `ExtOps` by calling the Python
//! object's hooks with the GIL held, and [`PyCtx`] (ctx.rs) hands the hook
//! the kfunc context.
//!
//! * Only hooks the subclass overrides are called (the Python side lists
//!   them once per class in `_overrides`); the others run the Rust
//!   defaults, i.e. the kernel's behaviour for a missing op.
//! * `PyCtx` wraps a raw pointer to the hook's `Ctx`, set just before the
//!   call and cleared when it returns, so a ctx kept by Python raises an
//!   error instead of touching freed memory. Arguments are converted by
//!   PyO3 before a method body dereferences the pointer, and no method
//!   body runs Python code while it holds the `Ctx`, so Python can never
//!   re-enter it.
//! * A Python exception in a hook ends the run (`Ctx::fail_run`) with a
//!   message naming the hook, the policy, the task or CPU and the
//!   simulated time, followed by the policy's traceback; after that no
//!   Python hook is called again.

use crate::ctx::{cpulist, secs, PyCtx, PyExitInfo, PyTaskView, RawCtx, Slot, HOOKS};
use crate::PolicyError;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString};
use schedlab_core::class::ext::{Ctx, ExitInfo, ExtOps, Hook, EXT_TUNABLES};
use schedlab_core::class::fair::tunables::EEVDF_TUNABLES;
use schedlab_core::config::SimConfig;
use schedlab_core::cpuset::{CpuId, CpuSet};
use schedlab_core::engine::{CustomStack, SimError, Simulator};
use schedlab_core::plugin::SchedulerDef;
use schedlab_core::registry;
use schedlab_core::task::TaskId;
use schedlab_core::tunable::Tunable;
use schedlab_core::workload::Workload;
use std::ptr;

/// The hooks, in `struct sched_ext_ops` order: the core's `Hook`, whose
/// `method()` is the Python method name (`yield_`: `yield` is a keyword).
type H = Hook;

/// The kernel's name of a hook, as in the class's messages.
fn op_name(h: H) -> String {
    h.name().to_string()
}

/// Zero-sized policy with every hook at its default: what a hook the
/// Python class does not override runs.
struct Defaults;

impl ExtOps for Defaults {
    type Task = Slot;
    fn name(&self) -> &str {
        ""
    }
}

/// A Python policy object as an `ExtOps` policy.
pub struct PyPolicy {
    name: String,
    flags: u64,
    timeout_ms: u32,
    dispatch_max_batch: u32,
    /// Bound methods of the overridden hooks.
    hooks: Vec<Option<Py<PyAny>>>,
    /// A `PyCtx` no longer referenced by Python, reused for the next call.
    spare: Option<Py<PyCtx>>,
    /// A hook raised: the run is over, Python is not called again.
    failed: bool,
    /// While `exit` runs: why the policy is exiting, so that an exception
    /// in `exit` does not hide the error that made it exit.
    exiting: Option<String>,
}

/// Policy attribute `name` converted with `conv`, errors naming it as the
/// policy's author wrote it (`name`, which `_policy_name` reads) and what
/// it must be (`expected`).
fn attr<'py, T>(
    obj: &Bound<'py, PyAny>,
    name: &str,
    expected: &str,
    conv: impl FnOnce(&Bound<'py, PyAny>) -> PyResult<T>,
) -> PyResult<T> {
    let v = obj.getattr(name)?;
    conv(&v).map_err(|e| {
        PolicyError::new_err(format!(
            "policy attribute {} = {}: expected {expected} ({})",
            name.strip_prefix("_policy_").unwrap_or(name),
            v.repr().map_or_else(|_| "?".into(), |r| r.to_string()),
            e.value(obj.py())
        ))
    })
}

impl PyPolicy {
    /// Read the policy's attributes and overridden hooks (once).
    pub fn new(obj: &Bound<'_, PyAny>) -> PyResult<Self> {
        let name: String = attr(obj, "_policy_name", "a string", |v| v.extract())?;
        let overrides: Vec<String> = attr(obj, "_overrides", "hook names", |v| v.extract())?;
        let mut hooks: Vec<Option<Py<PyAny>>> = HOOKS.iter().map(|_| None).collect();
        for o in &overrides {
            let i = HOOKS
                .iter()
                .position(|h| h == o)
                .ok_or_else(|| PolicyError::new_err(format!("policy {name}: unknown hook {o}")))?;
            hooks[i] = Some(obj.getattr(o.as_str())?.unbind());
        }
        Ok(PyPolicy {
            flags: attr(obj, "flags", "SCX_OPS_* bits (0..=2^64-1)", |v| {
                v.extract::<u64>()
            })?,
            timeout_ms: attr(obj, "timeout_ms", "0..=4294967295 ms", |v| {
                v.extract::<u32>()
            })?,
            dispatch_max_batch: attr(obj, "dispatch_max_batch", "0..=4294967295", |v| {
                v.extract::<u32>()
            })?,
            name,
            hooks,
            spare: None,
            failed: false,
            exiting: None,
        })
    }

    fn has(&self, h: H) -> bool {
        !self.failed && self.hooks[h as usize].is_some()
    }

    /// Call hook `h` (overridden, not failed) with the ctx made from `ctx`;
    /// `f` gets the bound method and the ctx object, calls it and converts
    /// the result. `task`/`cpu` name what the hook runs for in an error.
    fn call<R>(
        &mut self,
        ctx: &mut Ctx<'_, Slot>,
        h: H,
        task: Option<TaskId>,
        f: impl for<'py> FnOnce(&Bound<'py, PyAny>, Bound<'py, PyAny>) -> PyResult<R>,
    ) -> Option<R> {
        Python::attach(|py| {
            let method = self.hooks[h as usize].as_ref()?.clone_ref(py);
            let pctx = match self.spare.take() {
                Some(c) => c,
                None => match Py::new(py, PyCtx::default()) {
                    Ok(c) => c,
                    Err(e) => {
                        self.fail(py, ctx, h, task, e);
                        return None;
                    }
                },
            };
            pctx.borrow(py)
                .attach(ptr::from_mut(ctx).cast::<RawCtx>(), h as usize);
            let r = f(method.bind(py), pctx.bind(py).clone().into_any());
            pctx.borrow(py).detach(ctx.now());
            // Reuse the object only if Python kept no reference to it.
            // SAFETY: reading the reference count of a live object.
            if unsafe { pyo3::ffi::Py_REFCNT(pctx.as_ptr()) } == 1 {
                self.spare = Some(pctx);
            }
            match r {
                Ok(v) => Some(v),
                Err(e) => {
                    self.fail(py, ctx, h, task, e);
                    None
                }
            }
        })
    }

    /// End the run with the hook's exception and traceback.
    fn fail(
        &mut self,
        py: Python<'_>,
        ctx: &mut Ctx<'_, Slot>,
        h: H,
        task: Option<TaskId>,
        e: PyErr,
    ) {
        self.failed = true;
        let what = match task.and_then(|t| ctx.task(t)) {
            Some(t) => format!("for task \"{}\" (pid {})", t.name, t.pid),
            None => format!("on CPU {}", ctx.this_cpu()),
        };
        let tb = format_exception(py, &e);
        let why = match self.exiting.take() {
            Some(why) => format!(" (it was called for: {why})"),
            None => String::new(),
        };
        ctx.fail_run(format!(
            "{} of policy \"{}\" {what} at {} s{why} raised:\n{}",
            op_name(h),
            self.name,
            secs(ctx.now()),
            tb.trim_end()
        ));
    }
}

/// `traceback.format_exception(e)` joined, or the exception's text.
fn format_exception(py: Python<'_>, e: &PyErr) -> String {
    let r = (|| -> PyResult<String> {
        let tb = py.import("traceback")?;
        let lines = tb.call_method1(
            "format_exception",
            (e.get_type(py), e.value(py), e.traceback(py)),
        )?;
        let parts: Vec<String> = lines.extract()?;
        Ok(parts.concat())
    })();
    r.unwrap_or_else(|_| e.to_string())
}

/// `init`/`init_task` results: None (ok) or a str (the error).
fn init_result(r: Option<Option<String>>) -> Result<(), String> {
    match r {
        Some(Some(e)) => Err(e),
        _ => Ok(()),
    }
}

impl ExtOps for PyPolicy {
    type Task = Slot;

    fn name(&self) -> &str {
        &self.name
    }

    fn flags(&self) -> u64 {
        self.flags
    }

    fn timeout_ms(&self) -> u32 {
        self.timeout_ms
    }

    fn dispatch_max_batch(&self) -> u32 {
        self.dispatch_max_batch
    }

    fn select_cpu(
        &mut self,
        ctx: &mut Ctx<'_, Slot>,
        p: TaskId,
        prev_cpu: CpuId,
        wake_flags: u64,
    ) -> CpuId {
        if !self.has(H::SelectCpu) {
            return Defaults.select_cpu(ctx, p, prev_cpu, wake_flags);
        }
        self.call(ctx, H::SelectCpu, Some(p), |m, c| {
            let cpu = m.call1((c, p, prev_cpu, wake_flags))?;
            // A bool is an int to Python, and True would read as CPU 1.
            if cpu.is_instance_of::<pyo3::types::PyBool>() {
                return Err(pyo3::exceptions::PyTypeError::new_err(format!(
                    "select_cpu returned {cpu}; expected a CPU number"
                )));
            }
            cpu.extract::<usize>()
        })
        .unwrap_or(prev_cpu)
    }

    fn enqueue(&mut self, ctx: &mut Ctx<'_, Slot>, p: TaskId, enq_flags: u64) {
        if !self.has(H::Enqueue) {
            return Defaults.enqueue(ctx, p, enq_flags);
        }
        self.call(ctx, H::Enqueue, Some(p), |m, c| {
            m.call1((c, p, enq_flags)).map(drop)
        });
    }

    fn dequeue(&mut self, ctx: &mut Ctx<'_, Slot>, p: TaskId, deq_flags: u64) {
        if self.has(H::Dequeue) {
            self.call(ctx, H::Dequeue, Some(p), |m, c| {
                m.call1((c, p, deq_flags)).map(drop)
            });
        }
    }

    fn dispatch(&mut self, ctx: &mut Ctx<'_, Slot>, cpu: CpuId, prev: Option<TaskId>) {
        if self.has(H::Dispatch) {
            self.call(ctx, H::Dispatch, None, |m, c| {
                m.call1((c, cpu, prev)).map(drop)
            });
        }
    }

    fn tick(&mut self, ctx: &mut Ctx<'_, Slot>, p: TaskId) {
        if self.has(H::Tick) {
            self.call(ctx, H::Tick, Some(p), |m, c| m.call1((c, p)).map(drop));
        }
    }

    fn runnable(&mut self, ctx: &mut Ctx<'_, Slot>, p: TaskId, enq_flags: u64) {
        if self.has(H::Runnable) {
            self.call(ctx, H::Runnable, Some(p), |m, c| {
                m.call1((c, p, enq_flags)).map(drop)
            });
        }
    }

    fn running(&mut self, ctx: &mut Ctx<'_, Slot>, p: TaskId) {
        if self.has(H::Running) {
            self.call(ctx, H::Running, Some(p), |m, c| m.call1((c, p)).map(drop));
        }
    }

    fn stopping(&mut self, ctx: &mut Ctx<'_, Slot>, p: TaskId, runnable: bool) {
        if self.has(H::Stopping) {
            self.call(ctx, H::Stopping, Some(p), |m, c| {
                m.call1((c, p, runnable)).map(drop)
            });
        }
    }

    fn quiescent(&mut self, ctx: &mut Ctx<'_, Slot>, p: TaskId, deq_flags: u64) {
        if self.has(H::Quiescent) {
            self.call(ctx, H::Quiescent, Some(p), |m, c| {
                m.call1((c, p, deq_flags)).map(drop)
            });
        }
    }

    fn yield_(&mut self, ctx: &mut Ctx<'_, Slot>, from: TaskId, to: Option<TaskId>) -> bool {
        if !self.has(H::Yield) {
            return Defaults.yield_(ctx, from, to);
        }
        self.call(ctx, H::Yield, Some(from), |m, c| {
            m.call1((c, from, to))?.is_truthy()
        })
        .unwrap_or(false)
    }

    fn core_sched_before(&mut self, ctx: &mut Ctx<'_, Slot>, a: TaskId, b: TaskId) -> bool {
        if !self.has(H::CoreSchedBefore) {
            return Defaults.core_sched_before(ctx, a, b);
        }
        self.call(ctx, H::CoreSchedBefore, Some(a), |m, c| {
            m.call1((c, a, b))?.is_truthy()
        })
        .unwrap_or(false)
    }

    fn set_weight(&mut self, ctx: &mut Ctx<'_, Slot>, p: TaskId, weight: u32) {
        if self.has(H::SetWeight) {
            self.call(ctx, H::SetWeight, Some(p), |m, c| {
                m.call1((c, p, weight)).map(drop)
            });
        }
    }

    fn set_cpumask(&mut self, ctx: &mut Ctx<'_, Slot>, p: TaskId, cpumask: CpuSet) {
        if self.has(H::SetCpumask) {
            let cpus = cpulist(&cpumask);
            self.call(ctx, H::SetCpumask, Some(p), |m, c| {
                m.call1((c, p, cpus)).map(drop)
            });
        }
    }

    fn update_idle(&mut self, ctx: &mut Ctx<'_, Slot>, cpu: CpuId, idle: bool) {
        if self.has(H::UpdateIdle) {
            self.call(ctx, H::UpdateIdle, None, |m, c| {
                m.call1((c, cpu, idle)).map(drop)
            });
        }
    }

    fn has_update_idle(&self) -> bool {
        self.hooks[H::UpdateIdle as usize].is_some()
    }

    fn init_task(&mut self, ctx: &mut Ctx<'_, Slot>, p: TaskId, fork: bool) -> Result<(), String> {
        if !self.has(H::InitTask) {
            return Ok(());
        }
        init_result(self.call(ctx, H::InitTask, Some(p), |m, c| {
            m.call1((c, p, fork))?.extract::<Option<String>>()
        }))
    }

    fn exit_task(&mut self, ctx: &mut Ctx<'_, Slot>, p: TaskId, cancelled: bool) {
        if self.has(H::ExitTask) {
            self.call(ctx, H::ExitTask, Some(p), |m, c| {
                m.call1((c, p, cancelled)).map(drop)
            });
        }
    }

    fn enable(&mut self, ctx: &mut Ctx<'_, Slot>, p: TaskId) {
        if self.has(H::Enable) {
            self.call(ctx, H::Enable, Some(p), |m, c| m.call1((c, p)).map(drop));
        }
    }

    fn disable(&mut self, ctx: &mut Ctx<'_, Slot>, p: TaskId) {
        if self.has(H::Disable) {
            self.call(ctx, H::Disable, Some(p), |m, c| m.call1((c, p)).map(drop));
        }
    }

    fn cpu_online(&mut self, ctx: &mut Ctx<'_, Slot>, cpu: CpuId) {
        if !self.has(H::CpuOnline) {
            return Defaults.cpu_online(ctx, cpu);
        }
        self.call(ctx, H::CpuOnline, None, |m, c| m.call1((c, cpu)).map(drop));
    }

    fn cpu_offline(&mut self, ctx: &mut Ctx<'_, Slot>, cpu: CpuId) {
        if !self.has(H::CpuOffline) {
            return Defaults.cpu_offline(ctx, cpu);
        }
        self.call(ctx, H::CpuOffline, None, |m, c| m.call1((c, cpu)).map(drop));
    }

    fn init(&mut self, ctx: &mut Ctx<'_, Slot>) -> Result<(), String> {
        if !self.has(H::Init) {
            return Ok(());
        }
        init_result(self.call(ctx, H::Init, None, |m, c| {
            m.call1((c,))?.extract::<Option<String>>()
        }))
    }

    fn exit(&mut self, ctx: &mut Ctx<'_, Slot>, info: &ExitInfo) {
        if self.has(H::Exit) {
            self.exiting = Some(if info.msg.is_empty() {
                info.reason.clone()
            } else {
                format!("{}: {}", info.reason, info.msg)
            });
            let py_info = PyExitInfo::from(info);
            self.call(ctx, H::Exit, None, |m, c| m.call1((c, py_info)).map(drop));
            self.exiting = None;
        }
    }

    fn timer(&mut self, ctx: &mut Ctx<'_, Slot>, tag: u64) {
        if self.has(H::Timer) {
            self.call(ctx, H::Timer, None, |m, c| m.call1((c, tag)).map(drop));
        }
    }
}

const N: usize = EEVDF_TUNABLES.len() + EXT_TUNABLES.len();

/// The tunables of a run with a Python policy: the 6.12 fair class's and
/// the ext class's (as scx_simple's, without its own fifo/partial).
static TUNABLES: [Tunable; N] = schedlab_core::tunable::concat(&[EEVDF_TUNABLES, EXT_TUNABLES]);

/// What a run with a Python policy declares (tunables, `--dl-policy`);
/// the stack is `registry::sched_ext` with the policy object.
static PY_DEF: SchedulerDef = SchedulerDef {
    name: "python policy",
    description: "a schedlab.ext.Policy subclass in the ext class, below EEVDF",
    source: "kernel/sched/ext.c v6.12; python/schedlab/ext.py",
    version: "6.12",
    classes: &["dl", "rt", "fair", "ext"],
    tunables: &TUNABLES,
    fair_policies: false,
    dl_orders: true,
    build: |_| Err("a Python policy is built from its object (Simulator::with_stack)".into()),
};

/// A simulator of `wl` with Python policy object `obj` in the ext class.
pub fn simulator(
    wl: Workload,
    cfg: SimConfig,
    obj: &Bound<'_, PyAny>,
) -> PyResult<Result<Simulator, SimError>> {
    let ops = PyPolicy::new(obj)?;
    Ok(Simulator::with_stack(
        wl,
        cfg,
        CustomStack {
            def: &PY_DEF,
            build: Box::new(move |ctx| registry::sched_ext(ctx, ops)),
        },
    ))
}

/// Register the classes.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyCtx>()?;
    m.add_class::<PyTaskView>()?;
    m.add_class::<PyExitInfo>()?;
    let hooks = PyList::new(m.py(), HOOKS.iter().map(|h| PyString::new(m.py(), h)))?;
    m.add("EXT_HOOKS", hooks)?;
    Ok(())
}
