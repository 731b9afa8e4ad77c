//! Python values to JSON values (the options), and serialisable values to
//! Python objects (the metrics), for the run path.
//!
//! Why not JSON text: `schedlab run` used Python's `json` module only to
//! hand its options to the core (`json.dumps`) and to read the metrics back
//! (`json.loads`), and importing `json` was about 1.3 ms of a 32 ms process
//! (issue 18's whole-process goal). Converting here gives the same values:
//! `json.dumps` then `serde_json` parsing for the options (tuples become
//! arrays, integers beyond 64 bits floating point), and `json.loads` of
//! `serde_json` output for the metrics (integers as `int`, the rest as
//! `float`, objects in the order serde_json keeps them: by key).

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use pyo3::IntoPyObject;
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

/// Slots of [`PySer`]'s key cache (a power of two); a key whose slot
/// holds another is made afresh.
const KEY_SLOTS: usize = 256;

/// A serialisable value straight to Python objects: what
/// `json.loads(serde_json::to_string(value))` gives (integers as `int`,
/// floats as `float` and a float that is not finite as `None`, as
/// `serde_json::to_value` writes it; struct fields and map entries in key
/// order, as `serde_json::Map` keeps them), without `serde_json`'s value
/// tree: building it, converting it and dropping it cost 77 M
/// instructions a call of `RunResult.metrics()` for 1,000 tasks (issue
/// 18). What the metrics do not hold (tuples, enums, 128-bit integers,
/// bytes, `f32`, maps with keys other than strings) is refused as
/// [`SerError::Unsupported`].
pub(crate) fn serialize_py<'py, T: serde::Serialize + ?Sized>(
    py: Python<'py>,
    value: &T,
) -> Result<Bound<'py, PyAny>, SerError> {
    value.serialize(&mut PySer {
        py,
        keys: [const { None }; KEY_SLOTS],
        orders: Vec::new(),
    })
}

/// Why [`serialize_py`] gave no object.
#[derive(Debug)]
pub(crate) enum SerError {
    /// A Python error (out of memory, ...).
    Py(PyErr),
    /// A serde shape it does not take.
    Unsupported(String),
}

impl std::fmt::Display for SerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SerError::Py(e) => write!(f, "{e}"),
            SerError::Unsupported(what) => write!(f, "unsupported: {what}"),
        }
    }
}

impl std::error::Error for SerError {}

impl serde::ser::Error for SerError {
    fn custom<M: std::fmt::Display>(msg: M) -> Self {
        SerError::Unsupported(msg.to_string())
    }
}

impl From<PyErr> for SerError {
    fn from(e: PyErr) -> Self {
        SerError::Py(e)
    }
}

impl From<std::convert::Infallible> for SerError {
    fn from(e: std::convert::Infallible) -> Self {
        match e {}
    }
}

fn unsupported<T>(what: &str) -> Result<T, SerError> {
    Err(SerError::Unsupported(what.to_string()))
}

/// The serializer of [`serialize_py`]. Each struct field name is made a
/// Python string once per conversion, as `json.loads` shares keys (its
/// scanner's `memo`): the metrics repeat each task's forty-odd keys once
/// per task, and a new string for each, made and hashed, was about a
/// quarter of the conversion (1,000 hogs: 77 → 66 M instructions).
struct PySer<'py> {
    py: Python<'py>,
    /// Keys made so far, by their address ([`static_slot`]: an ordered
    /// map's string comparisons cost what the strings they spare did).
    keys: [Option<(&'static str, Bound<'py, PyString>)>; KEY_SLOTS],
    /// The key order of each struct met so far (sorting each task's
    /// fields anew was a third of the conversion).
    orders: Vec<StructOrder>,
}

/// A struct's field names as serialised, and their indices in key order.
struct StructOrder {
    names: Vec<&'static str>,
    perm: Vec<usize>,
}

/// The slot of a `'static` key in [`PySer`]'s cache, by its address.
fn static_slot(k: &'static str) -> usize {
    let p = k.as_ptr() as usize;
    ((p >> 3) ^ (p >> 11)) & (KEY_SLOTS - 1)
}

impl<'py> PySer<'py> {
    fn key(&mut self, k: &'static str) -> Bound<'py, PyString> {
        let slot = &mut self.keys[static_slot(k)];
        match slot {
            Some((have, obj)) if std::ptr::eq(*have, k) => obj.clone(),
            Some(_) => PyString::new(self.py, k),
            None => slot.insert((k, PyString::new(self.py, k))).1.clone(),
        }
    }

    /// The key order of a struct whose fields came as `fields` (field
    /// names are `'static`: the same struct gives the same pointers in the
    /// same order, so its order is found once).
    fn order_of(
        &mut self,
        fields: &[(&'static str, Bound<'py, PyString>, Bound<'py, PyAny>)],
    ) -> usize {
        let same = |o: &StructOrder| {
            o.names.len() == fields.len()
                && o.names
                    .iter()
                    .zip(fields)
                    .all(|(a, f)| std::ptr::eq(*a, f.0))
        };
        if let Some(i) = self.orders.iter().position(same) {
            return i;
        }
        let mut perm: Vec<usize> = (0..fields.len()).collect();
        perm.sort_by(|&a, &b| fields[a].0.cmp(fields[b].0));
        self.orders.push(StructOrder {
            names: fields.iter().map(|f| f.0).collect(),
            perm,
        });
        self.orders.len() - 1
    }

    /// A dict of a map's `entries` in key order (`serde_json::Map`'s): a
    /// key given twice keeps its last value, as there (the sort is stable,
    /// and the later `set_item` replaces the value).
    fn dict(
        &self,
        mut entries: Vec<(String, Bound<'py, PyAny>)>,
    ) -> Result<Bound<'py, PyAny>, SerError> {
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        let d = PyDict::new(self.py);
        for (k, v) in entries {
            d.set_item(k, v)?;
        }
        Ok(d.into_any())
    }
}

/// A struct's fields as they come (name, its Python string, value), then a
/// dict in key order.
struct PyStruct<'a, 'py> {
    ser: &'a mut PySer<'py>,
    fields: Vec<(&'static str, Bound<'py, PyString>, Bound<'py, PyAny>)>,
}

/// A sequence's items, then a list.
struct PySeq<'a, 'py> {
    ser: &'a mut PySer<'py>,
    items: Vec<Bound<'py, PyAny>>,
}

/// A map's entries (string keys only, as JSON's), then a dict in key order.
struct PyMap<'a, 'py> {
    ser: &'a mut PySer<'py>,
    entries: Vec<(String, Bound<'py, PyAny>)>,
    key: Option<String>,
}

/// Serializer methods of the narrow integers: the wide one's value.
macro_rules! widen {
    ($($f:ident($t:ty) => $to:ident($w:ty)),* $(,)?) => {
        $(fn $f(self, v: $t) -> Result<Self::Ok, SerError> {
            self.$to(<$w>::from(v))
        })*
    };
}

impl<'a, 'py> serde::Serializer for &'a mut PySer<'py> {
    type Ok = Bound<'py, PyAny>;
    type Error = SerError;
    type SerializeSeq = PySeq<'a, 'py>;
    type SerializeTuple = serde::ser::Impossible<Self::Ok, SerError>;
    type SerializeTupleStruct = serde::ser::Impossible<Self::Ok, SerError>;
    type SerializeTupleVariant = serde::ser::Impossible<Self::Ok, SerError>;
    type SerializeMap = PyMap<'a, 'py>;
    type SerializeStruct = PyStruct<'a, 'py>;
    type SerializeStructVariant = serde::ser::Impossible<Self::Ok, SerError>;

    fn serialize_bool(self, v: bool) -> Result<Self::Ok, SerError> {
        Ok(PyBool::new(self.py, v).to_owned().into_any())
    }
    widen! {
        serialize_i8(i8) => serialize_i64(i64),
        serialize_i16(i16) => serialize_i64(i64),
        serialize_i32(i32) => serialize_i64(i64),
        serialize_u8(u8) => serialize_u64(u64),
        serialize_u16(u16) => serialize_u64(u64),
        serialize_u32(u32) => serialize_u64(u64),
    }
    fn serialize_i64(self, v: i64) -> Result<Self::Ok, SerError> {
        Ok(v.into_pyobject(self.py)?.into_any())
    }
    fn serialize_u64(self, v: u64) -> Result<Self::Ok, SerError> {
        Ok(v.into_pyobject(self.py)?.into_any())
    }
    fn serialize_f32(self, _v: f32) -> Result<Self::Ok, SerError> {
        unsupported("f32")
    }
    fn serialize_f64(self, v: f64) -> Result<Self::Ok, SerError> {
        // serde_json's value: a float that is not finite is null.
        Ok(if v.is_finite() {
            v.into_pyobject(self.py)?.into_any()
        } else {
            self.py.None().into_bound(self.py)
        })
    }
    fn serialize_char(self, _v: char) -> Result<Self::Ok, SerError> {
        unsupported("char")
    }
    fn serialize_str(self, v: &str) -> Result<Self::Ok, SerError> {
        Ok(PyString::new(self.py, v).into_any())
    }
    fn serialize_bytes(self, _v: &[u8]) -> Result<Self::Ok, SerError> {
        unsupported("bytes")
    }
    fn serialize_none(self) -> Result<Self::Ok, SerError> {
        Ok(self.py.None().into_bound(self.py))
    }
    fn serialize_some<T: serde::Serialize + ?Sized>(self, value: &T) -> Result<Self::Ok, SerError> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<Self::Ok, SerError> {
        Ok(self.py.None().into_bound(self.py))
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<Self::Ok, SerError> {
        unsupported("unit struct")
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
    ) -> Result<Self::Ok, SerError> {
        unsupported("enum")
    }
    fn serialize_newtype_struct<T: serde::Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<Self::Ok, SerError> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: serde::Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _value: &T,
    ) -> Result<Self::Ok, SerError> {
        unsupported("enum")
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<Self::SerializeSeq, SerError> {
        Ok(PySeq {
            ser: self,
            items: Vec::with_capacity(len.unwrap_or(0)),
        })
    }
    fn serialize_tuple(self, _len: usize) -> Result<Self::SerializeTuple, SerError> {
        unsupported("tuple")
    }
    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleStruct, SerError> {
        unsupported("tuple struct")
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleVariant, SerError> {
        unsupported("enum")
    }
    fn serialize_map(self, len: Option<usize>) -> Result<Self::SerializeMap, SerError> {
        Ok(PyMap {
            ser: self,
            entries: Vec::with_capacity(len.unwrap_or(0)),
            key: None,
        })
    }
    fn serialize_struct(
        self,
        _name: &'static str,
        len: usize,
    ) -> Result<Self::SerializeStruct, SerError> {
        Ok(PyStruct {
            ser: self,
            fields: Vec::with_capacity(len),
        })
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStructVariant, SerError> {
        unsupported("enum")
    }
}

impl<'py> serde::ser::SerializeSeq for PySeq<'_, 'py> {
    type Ok = Bound<'py, PyAny>;
    type Error = SerError;
    fn serialize_element<T: serde::Serialize + ?Sized>(
        &mut self,
        value: &T,
    ) -> Result<(), SerError> {
        self.items.push(value.serialize(&mut *self.ser)?);
        Ok(())
    }
    fn end(self) -> Result<Self::Ok, SerError> {
        Ok(PyList::new(self.ser.py, self.items)?.into_any())
    }
}

impl<'py> serde::ser::SerializeStruct for PyStruct<'_, 'py> {
    type Ok = Bound<'py, PyAny>;
    type Error = SerError;
    fn serialize_field<T: serde::Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), SerError> {
        let v = value.serialize(&mut *self.ser)?;
        let k = self.ser.key(key);
        self.fields.push((key, k, v));
        Ok(())
    }
    fn end(self) -> Result<Self::Ok, SerError> {
        let order = self.ser.order_of(&self.fields);
        let d = PyDict::new(self.ser.py);
        for &i in &self.ser.orders[order].perm {
            let (_, k, v) = &self.fields[i];
            d.set_item(k, v)?;
        }
        Ok(d.into_any())
    }
}

impl<'py> serde::ser::SerializeMap for PyMap<'_, 'py> {
    type Ok = Bound<'py, PyAny>;
    type Error = SerError;
    fn serialize_key<T: serde::Serialize + ?Sized>(&mut self, key: &T) -> Result<(), SerError> {
        // JSON's keys are strings (serde_json's map turns numbers into
        // strings: not taken here).
        let k = key.serialize(&mut *self.ser)?;
        match k.cast::<PyString>() {
            Ok(s) => self.key = Some(s.extract::<String>()?),
            Err(_) => return unsupported("a map key that is not a string"),
        }
        Ok(())
    }
    fn serialize_value<T: serde::Serialize + ?Sized>(&mut self, value: &T) -> Result<(), SerError> {
        let Some(k) = self.key.take() else {
            return unsupported("a map value without its key");
        };
        let v = value.serialize(&mut *self.ser)?;
        self.entries.push((k, v));
        Ok(())
    }
    fn end(self) -> Result<Self::Ok, SerError> {
        self.ser.dict(self.entries)
    }
}
