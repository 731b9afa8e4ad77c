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
            let items: PyResult<Vec<Bound<'py, PyAny>>> = a.iter().map(|x| to_py(py, x)).collect();
            PyList::new(py, items?)?.into_any()
        }
        Value::Object(m) => {
            let d = PyDict::new(py);
            for (k, x) in m {
                d.set_item(k, to_py(py, x)?)?;
            }
            d.into_any()
        }
    })
}
