//! An order-preserving JSON tree for rt-app files, accepting what rt-app
//! and its `doc/workgen` accept (rt-app 55cb0c0):
//!
//! * `/* */` and `//` comments (json-c takes them): blanked out, keeping
//!   every line and column;
//! * trailing commas before `}` or `]` (json-c's default, non-strict
//!   tokener): blanked out;
//! * a bare `"suspend"` member without a value (the old workgen filled in
//!   the thread's name; rt-app now ignores the value): read as
//!   `"suspend": ""` (the columns after it on that line move by 4);
//! * duplicate keys, such as several `"run"` in one phase: renamed as
//!   workgen's `check_unikid_json` does before rt-app parses the file, the
//!   second `run` becoming `run1`, the next `run2`, and so on (one counter
//!   per object, starting at 1). rt-app matches events by prefix, so the
//!   renamed keys keep their meaning (formats.md §1.1).
//!
//! Objects keep their key order: rt-app runs events in file order.

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
        i64::try_from(v).map(Json::Int).map_err(|_| {
            E::custom(format!(
                "integer {v} is too large; workload integers are at most {}",
                i64::MAX
            ))
        })
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
        // The keys so far (those of `v`), as a set once the object is
        // large; a small object is searched in place (a set per object and
        // a copy of every key cost more than the rest of the parse; issue 18).
        let mut seen: Option<std::collections::BTreeSet<String>> = None;
        let has =
            |v: &[(String, Json)], seen: &Option<std::collections::BTreeSet<String>>, k: &str| {
                match seen {
                    Some(s) => s.contains(k),
                    None => v.iter().any(|(x, _)| x == k),
                }
            };
        // workgen's check_unikid_json: one counter per object, from 1.
        let mut curid: u64 = 1;
        while let Some(mut k) = map.next_key::<String>()? {
            if has(&v, &seen, &k) {
                let mut renamed = format!("{k}{curid}");
                while has(&v, &seen, &renamed) {
                    curid += 1;
                    renamed = format!("{k}{curid}");
                }
                k = renamed;
            }
            match seen.as_mut() {
                Some(s) => {
                    s.insert(k.clone());
                }
                None if v.len() >= SMALL_OBJECT => {
                    let mut s: std::collections::BTreeSet<String> =
                        v.iter().map(|(x, _)| x.clone()).collect();
                    s.insert(k.clone());
                    seen = Some(s);
                }
                None => {}
            }
            let val = map.next_value()?;
            v.push((k, val));
        }
        Ok(Json::Obj(v))
    }
}

/// Objects with more keys than this keep a set of them for the duplicate
/// check (`visit_map`); smaller ones are scanned.
const SMALL_OBJECT: usize = 16;

/// What json-c and workgen accept beyond strict JSON (see the module
/// comment), rewritten into strict JSON: trailing commas blanked, a bare
/// `"suspend..."` member given the value `""`. Comments must already be
/// blanked.
fn lenient(src: &str) -> String {
    #[derive(PartialEq)]
    enum Frame {
        Obj { expect_key: bool },
        Arr,
    }
    let b = src.as_bytes();
    let mut out: Vec<u8> = Vec::with_capacity(b.len() + 16);
    let mut stack: Vec<Frame> = vec![];
    let next_non_ws = |from: usize| {
        b[from..]
            .iter()
            .position(|c| !c.is_ascii_whitespace())
            .map(|p| from + p)
    };
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' => {
                let start = i;
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                i = (i + 1).min(b.len());
                out.extend_from_slice(&b[start..i]);
                if let Some(Frame::Obj { expect_key }) = stack.last_mut() {
                    if *expect_key {
                        *expect_key = false;
                        // Bytes, not str: an unterminated string may end inside a character.
                        let key = b.get(start + 1..).unwrap_or_default();
                        let bare = next_non_ws(i).is_none_or(|j| b[j] == b',' || b[j] == b'}');
                        if bare && key.starts_with(b"suspend") {
                            out.extend_from_slice(b":\"\"");
                        }
                    }
                }
                continue;
            }
            b'{' => stack.push(Frame::Obj { expect_key: true }),
            b'[' => stack.push(Frame::Arr),
            b'}' | b']' => {
                stack.pop();
            }
            b',' => {
                if next_non_ws(i + 1).is_some_and(|j| b[j] == b'}' || b[j] == b']') {
                    out.push(b' '); // a trailing comma
                    i += 1;
                    continue;
                }
                if let Some(Frame::Obj { expect_key }) = stack.last_mut() {
                    *expect_key = true;
                }
            }
            _ => {}
        }
        out.push(b[i]);
        i += 1;
    }
    // Only ASCII bytes were inserted or replaced: still valid UTF-8.
    String::from_utf8(out).unwrap_or_default()
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
    let clean = lenient(&clean);
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

    fn keys(j: &Json) -> Vec<String> {
        let Json::Obj(kv) = j else { panic!("object") };
        kv.iter().map(|(k, _)| k.clone()).collect()
    }

    #[test]
    fn duplicate_keys_are_renamed_as_workgen_does() {
        let j = parse(
            "f.json",
            "{\"run\": 1, \"sleep\": 2, \"run\": 3, \"run\": 4, \"sleep\": 5}",
        )
        .expect("renamed");
        assert_eq!(keys(&j), ["run", "sleep", "run1", "run2", "sleep2"]);
        // The same renaming past `SMALL_OBJECT` keys (a set, not a scan),
        // with a renamed key that collides with a later duplicate's name.
        let mut text: Vec<String> = (0..20).map(|i| format!("\"k{i}\": {i}")).collect();
        text.extend(["\"run\": 1", "\"run\": 2", "\"run1\": 3", "\"run\": 4"].map(String::from));
        let j = parse("f.json", &format!("{{{}}}", text.join(", "))).expect("renamed");
        let k = keys(&j);
        assert_eq!(k[20..], ["run", "run1", "run11", "run2"]);
    }

    #[test]
    fn trailing_commas_and_a_bare_suspend_are_accepted() {
        let j = parse(
            "f.json",
            "{\"a\": [1, 2,], \"t\": {\"loop\": -1,\n \"suspend\",\n \"run\": 5,},}",
        )
        .expect("lenient");
        let Json::Obj(kv) = &j else { panic!("object") };
        assert_eq!(kv[0].1, Json::Arr(vec![Json::Int(1), Json::Int(2)]));
        assert_eq!(keys(&kv[1].1), ["loop", "suspend", "run"]);
        // A comma inside a string is left alone.
        let j = parse("f.json", "{\"s\": \",}\"}").expect("string");
        assert_eq!(j, Json::Obj(vec![("s".into(), Json::Str(",}".into()))]));
        // Any other bare key stays an error.
        assert!(parse("f.json", "{\"run\", \"x\": 1}").is_err());
    }

    #[test]
    fn syntax_error_has_line_and_column() {
        let e = parse("f.json", "{\n  \"a\": 1,\n  \"b\" 2\n}").expect_err("bad");
        assert_eq!((e.line, e.column), (Some(3), Some(7)));
        assert!(e.to_string().starts_with("f.json:3:7: invalid JSON"));
    }
}
