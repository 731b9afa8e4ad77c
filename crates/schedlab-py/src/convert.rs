//! Python values to and from JSON values, for the run path.
//!
//! Why not JSON text: `schedlab run` used Python's `json` module only to
//! hand its options to the core (`json.dumps`) and to read the metrics back
//! (`json.loads`), and importing `json` was about 1.3 ms of a 32 ms process
//! (issue 18's whole-process goal). Converting here gives the same values:
//! `json.dumps` then `serde_json` parsing for the options (tuples become
//! arrays, integers beyond 64 bits floating point), and `json.loads` of
//! `serde_json` output for the metrics (integers as `int`, the rest as
//! `float`, objects in the order serde_json keeps them).

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::{Map, Number, Value};

/// `obj` as a JSON value, as `json.dumps` would write it and serde_json read
/// it back. A float that is not finite, which `json.dumps` writes as a
/// bare `NaN` / `Infinity` that no JSON reader takes, is refused.
pub(crate) fn to_json(obj: &Bound<'_, PyAny>) -> PyResult<Value> {
    if obj.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if obj.is_instance_of::<PyInt>() {
        if let Ok(i) = obj.extract::<i64>() {
            return Ok(Value::from(i));
        }
        if let Ok(u) = obj.extract::<u64>() {
            return Ok(Value::from(u));
        }
        // Beyond 64 bits serde_json reads a JSON integer as a float.
        return float(obj.extract::<f64>()?);
    }
    if obj.is_instance_of::<PyFloat>() {
        return float(obj.extract::<f64>()?);
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Value::String(s.extract::<String>()?));
    }
    if let Ok(d) = obj.cast::<PyDict>() {
        let mut m = Map::new();
        for (k, v) in d.iter() {
            let key = match k.cast::<PyString>() {
                Ok(s) => s.extract::<String>()?,
                Err(_) => return Err(PyTypeError::new_err(format!("keys must be str, not {k:?}"))),
            };
            m.insert(key, to_json(&v)?);
        }
        return Ok(Value::Object(m));
    }
    if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        let items: PyResult<Vec<Value>> = obj.try_iter()?.map(|x| to_json(&x?)).collect();
        return Ok(Value::Array(items?));
    }
    Err(PyTypeError::new_err(format!(
        "object of type {} is not JSON serializable",
        obj.get_type().name()?
    )))
}

fn float(x: f64) -> PyResult<Value> {
    Number::from_f64(x)
        .map(Value::Number)
        .ok_or_else(|| PyTypeError::new_err(format!("{x} is not a JSON number")))
}

/// `v` as Python objects, as `json.loads` of its text would give them.
pub(crate) fn to_py<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    ToPy {
        py,
        keys: [const { None }; KEY_SLOTS],
    }
    .value(v)
}

/// One conversion: its objects' keys made once each (nearly), as `json.loads`
/// shares them (its scanner's `memo`). Why: the metrics of a run repeat
/// each task's forty-odd keys once per task, and making and hashing a new
/// string for every one was about a quarter of `RunResult.metrics()`
/// (issue 18, 1,000 hogs: 77 → 66 M instructions a call; the rest is
/// `RunMetrics::to_json`'s value tree, built and dropped, and the dicts).
struct ToPy<'a, 'py> {
    py: Python<'py>,
    /// Keys made so far, by a cheap hash of their bytes (a few dozen
    /// distinct keys: an ordered map's string comparisons cost what the
    /// strings they spare did).
    keys: [Option<(&'a str, Bound<'py, PyString>)>; KEY_SLOTS],
}

/// Slots of [`ToPy::keys`] (a power of two); a key whose slot holds another
/// is made afresh, as before.
const KEY_SLOTS: usize = 256;

/// FNV-1a of `k`'s bytes, folded to a slot of [`ToPy::keys`].
fn key_slot(k: &str) -> usize {
    let mut h: u32 = 0x811c_9dc5;
    for b in k.bytes() {
        h = (h ^ u32::from(b)).wrapping_mul(0x0100_0193);
    }
    (h ^ (h >> 16)) as usize & (KEY_SLOTS - 1)
}

impl<'a, 'py> ToPy<'a, 'py> {
    fn key(&mut self, k: &'a str) -> Bound<'py, PyString> {
        let slot = &mut self.keys[key_slot(k)];
        match slot {
            Some((have, obj)) if *have == k => obj.clone(),
            Some(_) => PyString::new(self.py, k),
            None => slot.insert((k, PyString::new(self.py, k))).1.clone(),
        }
    }

    fn value(&mut self, v: &'a Value) -> PyResult<Bound<'py, PyAny>> {
        let py = self.py;
        Ok(match v {
            Value::Null => py.None().into_bound(py),
            Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
            Value::Number(n) => {
                if let Some(i) = n.as_i64() {
                    i.into_pyobject(py)?.into_any()
                } else if let Some(u) = n.as_u64() {
                    u.into_pyobject(py)?.into_any()
                } else {
                    n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any()
                }
            }
            Value::String(s) => PyString::new(py, s).into_any(),
            Value::Array(a) => {
                let items: PyResult<Vec<Bound<'py, PyAny>>> =
                    a.iter().map(|x| self.value(x)).collect();
                PyList::new(py, items?)?.into_any()
            }
            Value::Object(m) => {
                let d = PyDict::new(py);
                for (k, x) in m {
                    let key = self.key(k);
                    d.set_item(key, self.value(x)?)?;
                }
                d.into_any()
            }
        })
    }
}
