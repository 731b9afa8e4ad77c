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

/// Filler for arrays built by the const functions below.
const EMPTY: Tunable = Tunable {
    name: "",
    default: 0,
    min: 0,
    max: 0,
    unit: "",
    doc: "",
};

/// The tunables of `lists`, in order, as one array (`N` must be the sum
/// of their lengths; a mismatch fails at compile time). For schedulers
/// whose tunables are those of their classes plus their own:
/// `static T: [Tunable; A + B] = concat(&[LIST_A, LIST_B]);`.
pub const fn concat<const N: usize>(lists: &[&[Tunable]]) -> [Tunable; N] {
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

const fn same_name(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// `list` with some defaults replaced: for a scheduler that patches a
/// class and changes the defaults of the class's knobs (BORE 1.7.3's
/// "sysctl tweak" sets CFS's latency to 12.8 ms), so that its listing,
/// `--set` validation and a run's tunables carry the patched defaults.
/// `N` must be `list.len()`; a name in `defaults` that `list` lacks fails
/// at compile time. `static T: [Tunable; CFS_TUNABLES.len()] =
/// with_defaults(CFS_TUNABLES, &[("latency_ns", 12_800_000)]);`.
pub const fn with_defaults<const N: usize>(
    list: &[Tunable],
    defaults: &[(&str, i64)],
) -> [Tunable; N] {
    let mut out = concat::<N>(&[list]);
    let mut d = 0;
    while d < defaults.len() {
        let mut i = 0;
        let mut found = false;
        while i < N {
            if same_name(out[i].name, defaults[d].0) {
                out[i].default = defaults[d].1;
                found = true;
            }
            i += 1;
        }
        assert!(found, "tunable::with_defaults: no tunable of that name");
        d += 1;
    }
    out
}

/// `list` without the tunables named in `removed`: for a scheduler that
/// patches a class and takes knobs away (BORE 5.9.6 derives the base
/// slice itself and has no `tunable_scaling`), so `--set` on them is an
/// error naming what the scheduler accepts instead of a silent no-op.
/// `N` must be `list.len() - removed.len()` and every removed name must
/// exist (both checked at compile time).
pub const fn without<const N: usize>(list: &[Tunable], removed: &[&str]) -> [Tunable; N] {
    let mut out = [EMPTY; N];
    let (mut n, mut i) = (0, 0);
    while i < list.len() {
        let mut keep = true;
        let mut r = 0;
        while r < removed.len() {
            if same_name(list[i].name, removed[r]) {
                keep = false;
            }
            r += 1;
        }
        if keep {
            assert!(
                n < N,
                "tunable::without: N is not list.len() - removed.len()"
            );
            out[n] = list[i];
            n += 1;
        }
        i += 1;
    }
    assert!(
        n == N,
        "tunable::without: N is not list.len() - removed.len()"
    );
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

#[cfg(test)]
mod tests {
    use super::*;

    const LIST: &[Tunable] = &[
        Tunable {
            name: "a",
            default: 1,
            min: 0,
            max: 9,
            unit: "",
            doc: "",
        },
        Tunable {
            name: "b",
            default: 2,
            min: 0,
            max: 9,
            unit: "",
            doc: "",
        },
    ];

    #[test]
    fn with_defaults_replaces_only_the_named_defaults() {
        let t: [Tunable; 2] = with_defaults(LIST, &[("b", 7)]);
        assert_eq!((t[0].name, t[0].default), ("a", 1));
        assert_eq!((t[1].name, t[1].default, t[1].max), ("b", 7, 9));
    }

    #[test]
    fn without_drops_the_named_tunables() {
        let t: [Tunable; 1] = without(LIST, &["a"]);
        assert_eq!(t[0].name, "b");
    }
}
