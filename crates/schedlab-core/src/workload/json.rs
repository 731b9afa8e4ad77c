//! An order-preserving JSON tree for rt-app files.
//!
//! rt-app runs events in file order and treats duplicate keys as invalid
//! (../shared/formats.md §1.1), so objects keep their key order and a
//! duplicate key is a syntax error with its line and column. `/* */` and
//! `//` comments are blanked out first, keeping every line and column.

use super::error::WorkloadError;
use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use std::fmt;

/// A JSON value whose objects keep key order.
#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    /// `null`
    Null,
    /// `true` / `false`
    Bool(bool),
    /// An integer literal.
    Int(i64),
    /// A number with a fraction or exponent.
    Float(f64),
    /// A string.
    Str(String),
    /// An array.
    Arr(Vec<Json>),
    /// An object, in file order.
    Obj(Vec<(String, Json)>),
}

impl Json {
    /// The JSON type name, for error messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Json::Null => "null",
            Json::Bool(_) => "a boolean",
            Json::Int(_) => "an integer",
            Json::Float(_) => "a number with a fraction",
            Json::Str(_) => "a string",
            Json::Arr(_) => "an array",
            Json::Obj(_) => "an object",
        }
    }

    /// Short rendering of the value for "found ..." messages.
    pub fn describe(&self) -> String {
        match self {
            Json::Str(s) => format!("the string \"{s}\""),
            Json::Int(i) => format!("{i}"),
            Json::Float(x) => format!("{x}"),
            Json::Bool(b) => format!("{b}"),
            other => other.kind().to_string(),
        }
    }
}

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(JsonVisitor)
    }
}

struct JsonVisitor;

impl<'de> Visitor<'de> for JsonVisitor {
    type Value = Json;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }
    fn visit_bool<E>(self, v: bool) -> Result<Json, E> {
        Ok(Json::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Json, E> {
        Ok(Json::Int(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Json, E> {
        i64::try_from(v)
            .map(Json::Int)
            .map_err(|_| E::custom(format!("integer {v} is too large")))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Json, E> {
        Ok(Json::Float(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Json, E> {
        Ok(Json::Str(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Json, E> {
        Ok(Json::Str(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
        let mut v = Vec::new();
        while let Some(x) = seq.next_element()? {
            v.push(x);
        }
        Ok(Json::Arr(v))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
        let mut v: Vec<(String, Json)> = Vec::new();
        let mut seen = std::collections::BTreeSet::new();
        while let Some(k) = map.next_key::<String>()? {
            if !seen.insert(k.clone()) {
                return Err(de::Error::custom(format!(
                    "duplicate key \"{k}\" (rt-app needs unique keys: use run0, run1, ...)"
                )));
            }
            let val = map.next_value()?;
            v.push((k, val));
        }
        Ok(Json::Obj(v))
    }
}

/// Replace `/* ... */` and `// ...` comments by spaces (newlines kept), so
/// positions reported by the JSON parser still match the file.
pub fn blank_comments(src: &str) -> Result<String, (usize, usize)> {
    let b = src.as_bytes();
    let mut out = b.to_vec();
    let (mut i, mut in_str) = (0, false);
    while i < b.len() {
        if in_str {
            match b[i] {
                b'\\' => i += 1,
                b'"' => in_str = false,
                _ => {}
            }
            i += 1;
            continue;
        }
        match (b[i], b.get(i + 1)) {
            (b'"', _) => {
                in_str = true;
                i += 1;
            }
            (b'/', Some(b'*')) => {
                let start = i;
                let end = src[i + 2..].find("*/").map(|p| i + 2 + p + 2);
                let Some(end) = end else {
                    return Err(position(src, start));
                };
                for o in out.iter_mut().take(end).skip(start) {
                    if *o != b'\n' {
                        *o = b' ';
                    }
                }
                i = end;
            }
            (b'/', Some(b'/')) => {
                while i < b.len() && b[i] != b'\n' {
                    out[i] = b' ';
                    i += 1;
                }
            }
            _ => i += 1,
        }
    }
    // Only ASCII bytes were replaced by ASCII spaces: still valid UTF-8.
    Ok(String::from_utf8(out).unwrap_or_default())
}

fn position(src: &str, byte: usize) -> (usize, usize) {
    let before = &src[..byte];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

/// Parse rt-app JSON text into an ordered tree.
pub fn parse(file: &str, src: &str) -> Result<Json, WorkloadError> {
    let syntax = |line, column, message: String| WorkloadError {
        file: file.to_string(),
        path: String::new(),
        line: Some(line),
        column: Some(column),
        message,
    };
    let clean = blank_comments(src)
        .map_err(|(l, c)| syntax(l, c, "unterminated /* comment".to_string()))?;
    serde_json::from_str::<Json>(&clean).map_err(|e| {
        let msg = e.to_string();
        let msg = msg.split(" at line ").next().unwrap_or(&msg).to_string();
        syntax(e.line(), e.column(), format!("invalid JSON: {msg}"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_order_and_strips_comments() {
        let j = parse("f", "{ /* c */ \"b\": 1, // x\n \"a\": \"/* no */\" }").expect("ok");
        let Json::Obj(kv) = j else { panic!("object") };
        assert_eq!(kv[0].0, "b");
        assert_eq!(kv[1], ("a".to_string(), Json::Str("/* no */".into())));
    }

    #[test]
    fn duplicate_key_has_position() {
        let e = parse("f.json", "{\n \"run\": 1,\n \"run\": 2 }").expect_err("dup");
        assert_eq!(e.line, Some(3));
        assert!(e.message.contains("duplicate key \"run\""), "{}", e.message);
    }

    #[test]
    fn syntax_error_has_line_and_column() {
        let e = parse("f.json", "{\n  \"a\": 1,\n  \"b\" 2\n}").expect_err("bad");
        assert_eq!((e.line, e.column), (Some(3), Some(7)));
        assert!(e.to_string().starts_with("f.json:3:7: invalid JSON"));
    }
}
