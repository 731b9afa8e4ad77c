//! Thin PyO3 bindings for schedlab-core: a few functions and one newtype
//! (`RunResult`). All logic lives in the core crate or in Python.

use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use schedlab_core::config::SimConfig;
use schedlab_core::engine::{SimError, Simulator};
use schedlab_core::metrics::{self, RunResult};
use schedlab_core::registry;
use schedlab_core::trace::{ftrace, perfetto};
use schedlab_core::workload::{Workload, WorkloadError as CoreWorkloadError};
use std::io::Write;

mod convert;
mod ctx;
mod policy;

create_exception!(
    _native,
    WorkloadError,
    PyValueError,
    "A workload file is invalid (attributes: file, path, line, column, reason)."
);
create_exception!(
    _native,
    ConfigError,
    PyValueError,
    "A run configuration is invalid."
);
create_exception!(
    _native,
    SimulationError,
    PyRuntimeError,
    "A workload misbehaved while it ran."
);

create_exception!(
    _native,
    PolicyError,
    SimulationError,
    "A scheduling policy misbehaved (the message names the policy, the hook, the task and the time)."
);

create_exception!(
    _native,
    TraceError,
    PyValueError,
    "A trace cannot be imported (strict mode names the line)."
);

fn workload_err(py: Python<'_>, e: &CoreWorkloadError) -> PyErr {
    let err = WorkloadError::new_err(e.to_string());
    let v = err.value(py);
    let _ = v.setattr("file", &e.file);
    let _ = v.setattr("path", &e.path);
    let _ = v.setattr("line", e.line);
    let _ = v.setattr("column", e.column);
    let _ = v.setattr("reason", &e.message);
    err
}

fn sim_err(py: Python<'_>, e: SimError) -> PyErr {
    match e {
        SimError::Workload(w) => workload_err(py, &w),
        SimError::Config(s) => ConfigError::new_err(s),
        SimError::Runtime(s) => SimulationError::new_err(s),
        SimError::Policy(s) => PolicyError::new_err(s),
    }
}

/// Parse and validate a workload; returns a JSON summary.
#[pyfunction]
fn check_workload(py: Python<'_>, text: &str, source: &str) -> PyResult<String> {
    let wl = Workload::from_rtapp(source, text).map_err(|e| workload_err(py, &e))?;
    // What `run` would refuse without knowing the machine (DEADLINE parameters, ...).
    if let Err(e) = Simulator::validate_workload(&wl) {
        return Err(sim_err(py, e));
    }
    let mut v = serde_json::to_value(&wl).map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    if let Some(o) = v.as_object_mut() {
        // `run` refuses such a workload unless a duration is given.
        o.insert("runs_forever".into(), wl.runs_forever().into());
    }
    Ok(v.to_string())
}

/// The registry (schedulers, fair-class policies, SCHED_DEADLINE
/// orderings, each with source, version and tunables), as JSON.
#[pyfunction]
fn schedulers_json() -> String {
    serde_json::json!({
        "schedulers": registry::SCHEDULERS,
        "fair_policies": registry::FAIR_POLICIES,
        "dl_orders": registry::DL_ORDERS,
        "engine_tunables": schedlab_core::config::ENGINE_TUNABLES,
    })
    .to_string()
}

/// The names of the SCHED_DEADLINE orderings (`run --dl-policy`'s
/// choices), without the whole registry's JSON.
#[pyfunction]
fn dl_order_names() -> Vec<&'static str> {
    registry::DL_ORDERS.iter().map(|d| d.name).collect()
}

/// Metric descriptions, as JSON {struct: {field: description}}.
#[pyfunction]
fn metric_descriptions_json() -> String {
    let mut out = serde_json::Map::new();
    for (name, fields) in metrics::descriptions() {
        let m: serde_json::Map<String, serde_json::Value> = fields
            .iter()
            .map(|(k, v)| (k.to_string(), serde_json::Value::from(*v)))
            .collect();
        out.insert(name.to_string(), serde_json::Value::Object(m));
    }
    serde_json::Value::Object(out).to_string()
}

/// The result of a run (newtype over the core's `RunResult`).
#[pyclass(name = "RunResult", module = "schedlab._native", frozen)]
struct PyRunResult(RunResult);

fn write_atomic(path: &str, bytes: &[u8]) -> PyResult<()> {
    write_atomic_with(path, |f| f.write_all(bytes))
}

/// [`write_atomic`] with the contents written by `fill`.
fn write_atomic_with(
    path: &str,
    fill: impl FnOnce(&mut std::fs::File) -> std::io::Result<()>,
) -> PyResult<()> {
    let tmp = format!("{path}.partial-{}", std::process::id());
    let res = std::fs::File::create(&tmp)
        .and_then(|mut f| fill(&mut f).and_then(|_| f.sync_all()))
        .and_then(|_| std::fs::rename(&tmp, path));
    if let Err(e) = res {
        let _ = std::fs::remove_file(&tmp);
        return Err(pyo3::exceptions::PyOSError::new_err(format!("{path}: {e}")));
    }
    Ok(())
}

/// `std::io::Write` over a Python binary file object (a Python exception
/// raised by its `write` is kept and re-raised as it is).
struct PyFileSink<'a, 'py> {
    file: &'a Bound<'py, PyAny>,
    err: Option<PyErr>,
}

impl std::io::Write for PyFileSink<'_, '_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let bytes = pyo3::types::PyBytes::new(self.file.py(), buf);
        match self.file.call_method1("write", (bytes,)) {
            Ok(_) => Ok(buf.len()),
            Err(e) => {
                self.err = Some(e);
                Err(std::io::Error::other("write failed"))
            }
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl PyRunResult {
    /// The run's trace, or the error every trace method gives without one.
    fn trace(&self) -> PyResult<&schedlab_core::trace::TraceData> {
        self.0
            .trace
            .as_ref()
            .ok_or_else(|| ConfigError::new_err("the run recorded no trace"))
    }
}

#[pymethods]
impl PyRunResult {
    /// Metrics as a JSON string.
    fn metrics_json(&self) -> PyResult<String> {
        serde_json::to_string(&self.0.metrics.to_json())
            .map_err(|e| PyRuntimeError::new_err(e.to_string()))
    }

    /// The metrics as Python objects: what `json.loads(metrics_json())`
    /// gives, without the `json` module, serialised straight to Python
    /// objects with `RunMetrics::to_json`'s nulls (convert.rs).
    fn metrics<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let m = &self.0.metrics;
        let obj = match convert::serialize_py(py, m) {
            Ok(obj) => obj,
            Err(convert::SerError::Py(e)) => return Err(e),
            // A metrics field of a shape convert.rs does not take yet: every
            // run's metrics meet this, so the tests do at once.
            Err(e) => return Err(PyRuntimeError::new_err(format!("metrics to Python: {e}"))),
        };
        let null =
            |item: &Bound<'py, PyAny>, keys: &mut dyn Iterator<Item = &str>| -> PyResult<()> {
                let d = item.cast::<pyo3::types::PyDict>()?;
                for k in keys {
                    if d.contains(k)? {
                        d.set_item(k, py.None())?;
                    }
                }
                Ok(())
            };
        null(&obj, &mut m.unmeasured_run().iter().copied())?;
        let tasks = obj.get_item("tasks")?;
        for (t, item) in m.tasks.iter().zip(tasks.try_iter()?) {
            null(&item?, &mut m.unmeasured_task(t))?;
        }
        for item in obj.get_item("cpu")?.try_iter()? {
            null(&item?, &mut m.unmeasured_cpu().iter().copied())?;
        }
        Ok(obj)
    }

    /// Timer activations as (task index, time µs, slack µs).
    fn activations(&self) -> Vec<(usize, f64, f64)> {
        self.0.activations.clone()
    }

    /// Completed jobs as (task index, release, start, finish, deadline), µs.
    fn jobs(&self) -> Vec<(usize, f64, f64, f64, f64)> {
        self.0.jobs.clone()
    }

    /// Whether a trace was recorded.
    fn has_trace(&self) -> bool {
        self.0.trace.is_some()
    }

    /// Number of trace records.
    fn trace_len(&self) -> usize {
        self.0.trace.as_ref().map_or(0, |t| t.records.len())
    }

    /// Write the trace as Perfetto protobuf (atomically: no partial file),
    /// encoded straight into the file: a whole-file buffer (hundreds of MB
    /// for a long traced run) cost more in page faults and copies than the
    /// encoding itself.
    fn write_perfetto(&self, path: &str) -> PyResult<()> {
        let t = self.trace()?;
        write_atomic_with(path, |f| {
            let mut w = std::io::BufWriter::with_capacity(1 << 22, f);
            perfetto::write(t, &mut w)?;
            w.flush()
        })
    }

    /// The trace as Perfetto protobuf bytes (Python writes them: schedlab/output.py).
    fn perfetto_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyBytes>> {
        let t = self.trace()?;
        Ok(pyo3::types::PyBytes::new(py, &perfetto::encode(t)))
    }

    /// Write the trace as Perfetto protobuf to a binary file object, in
    /// pieces of a few MB through its `write` (no copy of the whole trace).
    fn write_perfetto_to(&self, file: &Bound<'_, PyAny>) -> PyResult<()> {
        let t = self.trace()?;
        let mut sink = PyFileSink { file, err: None };
        let res = perfetto::write(t, &mut sink);
        if let Some(e) = sink.err {
            return Err(e);
        }
        res.map_err(|e| pyo3::exceptions::PyOSError::new_err(e.to_string()))
    }

    /// Write the trace as ftrace text (atomically).
    fn write_ftrace(&self, path: &str) -> PyResult<()> {
        let t = self.trace()?;
        write_atomic(path, ftrace::render(t).as_bytes())
    }

    /// Wakeups of the tasks whose comm starts with `prefix`: (comm, waking
    /// ns, switch-in ns) in time order (`TraceData::waking_to_run`).
    fn waking_to_run(&self, prefix: &str) -> PyResult<Vec<(String, u64, u64)>> {
        let t = self.trace()?;
        let pairs = t.waking_to_run(|i| t.tasks[i].comm.starts_with(prefix));
        Ok(pairs
            .into_iter()
            .map(|(i, w, r)| (t.tasks[i].comm.clone(), w, r))
            .collect())
    }

    /// The same wakeups by comm, in order of each comm's first: (comm,
    /// waking ns, switch-in ns), the times as two lists in time order
    /// (threads that share a comm share an entry). As two lists of ints
    /// rather than a tuple each: a reader of thousands of wakeups per run
    /// (the shoot-out's probes) paid more for the tuples than the
    /// simulation took to trace them.
    #[allow(clippy::type_complexity)]
    fn waking_to_run_by_comm(&self, prefix: &str) -> PyResult<Vec<(String, Vec<u64>, Vec<u64>)>> {
        let t = self.trace()?;
        let mut slot: std::collections::BTreeMap<&str, usize> = Default::default();
        let mut out: Vec<(String, Vec<u64>, Vec<u64>)> = Vec::new();
        for (i, w, r) in t.waking_to_run(|i| t.tasks[i].comm.starts_with(prefix)) {
            let comm = t.tasks[i].comm.as_str();
            let k = *slot.entry(comm).or_insert_with(|| {
                out.push((comm.to_string(), Vec::new(), Vec::new()));
                out.len() - 1
            });
            out[k].1.push(w);
            out[k].2.push(r);
        }
        Ok(out)
    }

    /// Wakeups of the tasks whose comm starts with `prefix`, each with how
    /// it reached its CPU: (comm, path, waking ns, first move ns or None,
    /// switch-in ns), in switch-in order (`TraceData::wakeup_paths`).
    #[allow(clippy::type_complexity)]
    fn wakeup_paths(
        &self,
        prefix: &str,
    ) -> PyResult<Vec<(String, &'static str, u64, Option<u64>, u64)>> {
        let t = self.trace()?;
        let rows = t.wakeup_paths(|i| t.tasks[i].comm.starts_with(prefix));
        Ok(rows
            .into_iter()
            .map(|w| {
                let comm = t.tasks[w.task].comm.clone();
                (comm, w.path.name(), w.waking, w.moved, w.run)
            })
            .collect())
    }

    /// The trace as ftrace text.
    fn ftrace_text(&self) -> PyResult<String> {
        let t = self.trace()?;
        Ok(ftrace::render(t))
    }
}

/// The run options, with `SimConfig`'s field names (its one definition):
/// a dict (the API's, convert.rs), or the same as JSON text. Unknown keys
/// and wrong types are errors.
fn parse_config(cfg: &Bound<'_, PyAny>) -> PyResult<SimConfig> {
    let named = |e: serde_path_to_error::Error<serde_json::Error>| {
        // Name the option, not a position in the JSON the API wrote.
        let inner = e.inner().to_string();
        let msg = inner.split(" at line ").next().unwrap_or(&inner);
        let msg = integer_range_words(msg).unwrap_or_else(|| msg.to_string());
        ConfigError::new_err(format!("run option {}: {msg}", e.path()))
    };
    if let Ok(text) = cfg.extract::<String>() {
        let de = &mut serde_json::Deserializer::from_str(&text);
        return serde_path_to_error::deserialize(de).map_err(named);
    }
    serde_path_to_error::deserialize(convert::to_json(cfg)?).map_err(named)
}

/// serde's message for a number an integer option cannot hold (`invalid
/// value: integer `-1`, expected usize`, or for an integer beyond 64 bits,
/// which reaches serde as a float, `invalid type: floating point `1e+20`,
/// expected u64`) in words: the range expected and the value found.
fn integer_range_words(msg: &str) -> Option<String> {
    let (found, ty) = msg.split_once(", expected ")?;
    let range = match ty {
        "usize" | "u64" => "0..=18446744073709551615",
        "u32" => "0..=4294967295",
        "u16" => "0..=65535",
        "u8" => "0..=255",
        "i64" => "-9223372036854775808..=9223372036854775807",
        "i32" => "-2147483648..=2147483647",
        _ => return None,
    };
    let value = found
        .strip_prefix("invalid value: integer ")
        .or_else(|| found.strip_prefix("invalid type: floating point "))?
        .trim_matches('`');
    Some(format!("expected an integer in {range}, found {value}"))
}

/// Simulate rt-app JSON `text` (named `source` in errors) with the options
/// in `config` (`SimConfig`'s fields: a dict, or JSON text). `progress(now_ns, end_ns_or_None)` is called between
/// chunks of simulated time; Ctrl-C is honoured between chunks.
/// `policy`: a `schedlab.ext.Policy` instance to run in the ext class
/// (`config["scheduler"]` is then only the name the metrics show).
#[pyfunction]
#[pyo3(signature = (text, source, config, progress=None, policy=None))]
fn simulate(
    py: Python<'_>,
    text: &str,
    source: &str,
    config: &Bound<'_, PyAny>,
    progress: Option<Bound<'_, PyAny>>,
    policy: Option<Bound<'_, PyAny>>,
) -> PyResult<PyRunResult> {
    let cfg = parse_config(config)?;
    let wl = Workload::from_rtapp(source, text).map_err(|e| workload_err(py, &e))?;
    let sim = match policy {
        Some(p) => policy::simulator(wl, cfg, &p)?,
        None => Simulator::new(wl, cfg),
    };
    let mut sim = sim.map_err(|e| sim_err(py, e))?;
    let end = sim.end_time();
    let chunk = end.map_or(100_000_000, |e| (e / 200).max(1_000_000));
    let mut limit = 0u64;
    loop {
        limit = limit.saturating_add(chunk);
        // Bounded batches of events: Ctrl-C is seen within a fraction of a
        // second even while simulated time stands still.
        let done = loop {
            let done = sim
                .run_bounded(limit, 200_000)
                .map_err(|e| sim_err(py, e))?;
            py.check_signals()?;
            if done || sim.next_event_time().is_none_or(|t| t > limit) {
                break done;
            }
        };
        if let Some(cb) = &progress {
            cb.call1((sim.m.now, end))?;
        }
        if done {
            break;
        }
    }
    Ok(PyRunResult(sim.finish()))
}

/// What `import_trace` hands Python: the metrics and trace, the repairs,
/// the skipped lines, the replay workload, and per pid the clock
/// uncertainty of its CPU time in ns (`TaskTimeline::clock_uncertainty`).
type ImportedParts = (PyRunResult, Vec<String>, usize, String, Vec<(u32, u64)>);

/// Import a scheduler trace (`text`, named `source` in errors): returns
/// (result with metrics and trace, repairs, skipped lines, replay workload JSON,
/// clock uncertainty per pid);
/// `window` (trace ns) limits what the metrics measure; `workload_pids`
/// restricts the run-level counts to those threads (the host runner);
/// `tick` = (period, phase) in trace ns counts CPU time as the kernel
/// accounts it (`import_with`).
#[pyfunction]
#[pyo3(signature = (source, text, tolerant, window=None, workload_pids=None, tick=None))]
fn import_trace(
    source: &str,
    text: &str,
    tolerant: bool,
    window: Option<(u64, u64)>,
    workload_pids: Option<Vec<u32>>,
    tick: Option<(u64, u64)>,
) -> PyResult<ImportedParts> {
    use schedlab_core::trace::import::{import_with, TickGrid};
    let tick = match tick {
        Some((0, _)) => return Err(TraceError::new_err(format!("{source}: tick period 0"))),
        Some((period, phase)) => Some(TickGrid { period, phase }),
        None => None,
    };
    let imp = import_with(text, tolerant, window, tick)
        .map_err(|e| TraceError::new_err(format!("{source}: {e}")))?;
    if imp.span.0 == imp.span.1 {
        // Rates over no time would be invented numbers (a single switch
        // read as 10^9 switches a second).
        return Err(TraceError::new_err(match window {
            None => format!("{source}: the trace spans no time (its events are all at one instant): nothing to measure"),
            Some(_) => format!("{source}: the measuring window holds no time of the trace: nothing to measure"),
        }));
    }
    let result = RunResult {
        metrics: imp.metrics_for(workload_pids.as_deref()),
        activations: vec![],
        jobs: vec![],
        trace: Some(imp.data.clone()),
    };
    Ok((
        PyRunResult(result),
        imp.repairs.clone(),
        imp.skipped,
        imp.replay_workload(),
        // Per pid, how far the kernel's CPU time may exceed the import's
        // (TaskTimeline::clock_uncertainty), where it can.
        imp.tasks
            .iter()
            .filter(|t| t.clock_uncertainty > 0)
            .map(|t| (t.pid, t.clock_uncertainty))
            .collect(),
    ))
}

/// The native module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(check_workload, m)?)?;
    m.add_function(wrap_pyfunction!(schedulers_json, m)?)?;
    m.add_function(wrap_pyfunction!(dl_order_names, m)?)?;
    m.add_function(wrap_pyfunction!(metric_descriptions_json, m)?)?;
    m.add_function(wrap_pyfunction!(simulate, m)?)?;
    m.add_function(wrap_pyfunction!(import_trace, m)?)?;
    m.add_class::<PyRunResult>()?;
    policy::register(m)?;
    m.add("WorkloadError", m.py().get_type::<WorkloadError>())?;
    m.add("ConfigError", m.py().get_type::<ConfigError>())?;
    m.add("SimulationError", m.py().get_type::<SimulationError>())?;
    m.add("PolicyError", m.py().get_type::<PolicyError>())?;
    m.add("TraceError", m.py().get_type::<TraceError>())?;
    // The profile this module's code was laid out by (scripts/pgo_env.sh sets
    // SCHEDLAB_PGO for a profile-guided build), "" for a plain build: speed
    // reports name it, since the same source runs faster with it (README,
    // "Profile-guided build").
    m.add("PGO_PROFILE", option_env!("SCHEDLAB_PGO").unwrap_or(""))?;
    Ok(())
}
