//! Tunables: named integer parameters with a default, a unit, a range and
//! a doc string, declared by the engine, by each scheduler and by each
//! policy in the registry (registry.rs), set with `--set name=value`.

use serde::Serialize;
use std::collections::BTreeMap;

/// A settable parameter with its default and documentation.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Tunable {
    /// Name used with `--set name=value`.
    pub name: &'static str,
    /// Default.
    pub default: i64,
    /// Smallest accepted value.
    pub min: i64,
    /// Largest accepted value.
    pub max: i64,
    /// Unit of the value: "ns", "us", "ms", "%", "bool" (0/1), or "" for
    /// counts and enumerations.
    pub unit: &'static str,
    /// What it does.
    pub doc: &'static str,
}

const fn ends_with(s: &[u8], suffix: &[u8]) -> bool {
    if s.len() < suffix.len() {
        return false;
    }
    let off = s.len() - suffix.len();
    let mut i = 0;
    while i < suffix.len() {
        if s[off + i] != suffix[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// The unit a tunable's name implies: its `_ns` / `_us` / `_ms` / `_pct`
/// suffix, "bool" for 0/1 switches, "" otherwise.
pub const fn unit_of(name: &str, max: i64) -> &'static str {
    let b = name.as_bytes();
    if ends_with(b, b"_ns") {
        "ns"
    } else if ends_with(b, b"_us") {
        "us"
    } else if ends_with(b, b"_ms") {
        "ms"
    } else if ends_with(b, b"_pct") {
        "%"
    } else if max == 1 {
        "bool"
    } else {
        ""
    }
}

/// The tunables of `lists`, in order, as one array (`N` must be the sum
/// of their lengths; a mismatch fails at compile time). For schedulers
/// whose tunables are those of their classes plus their own:
/// `static T: [Tunable; A + B] = concat(&[LIST_A, LIST_B]);`.
pub const fn concat<const N: usize>(lists: &[&[Tunable]]) -> [Tunable; N] {
    const EMPTY: Tunable = Tunable {
        name: "",
        default: 0,
        min: 0,
        max: 0,
        unit: "",
        doc: "",
    };
    let mut out = [EMPTY; N];
    let (mut n, mut l) = (0, 0);
    while l < lists.len() {
        let mut i = 0;
        while i < lists[l].len() {
            out[n] = lists[l][i];
            n += 1;
            i += 1;
        }
        l += 1;
    }
    assert!(n == N, "tunable::concat: N is not the total length");
    out
}

/// Tunable values for one run, by name (ordered: output never depends on
/// hash order).
#[derive(Debug, Clone, Default, Serialize)]
pub struct TunableSet(pub BTreeMap<String, i64>);

impl TunableSet {
    /// Value of `name`.
    pub fn get(&self, name: &str) -> Option<i64> {
        self.0.get(name).copied()
    }

    /// The defaults of every tunable in `specs`, overridden by
    /// `overrides`; unknown names and out-of-range values are errors
    /// (`owner` names who declares the accepted ones, for the message).
    pub fn resolve(
        specs: &[&Tunable],
        overrides: &[(String, i64)],
        owner: &str,
    ) -> Result<TunableSet, String> {
        let mut set: BTreeMap<String, i64> = specs
            .iter()
            .map(|t| (t.name.to_string(), t.default))
            .collect();
        for (k, v) in overrides {
            let Some(spec) = specs.iter().find(|t| t.name == k) else {
                let names: Vec<&str> = specs.iter().map(|t| t.name).collect();
                return Err(format!(
                    "unknown tunable \"{k}\" for {owner}; expected one of: {}",
                    names.join(", ")
                ));
            };
            if *v < spec.min || *v > spec.max {
                return Err(format!(
                    "tunable {k}={v} out of range; expected {}..={}",
                    spec.min, spec.max
                ));
            }
            set.insert(k.clone(), *v);
        }
        Ok(TunableSet(set))
    }
}
