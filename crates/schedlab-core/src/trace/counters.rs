//! Task counters of a trace: each task's class values (`SchedClass::task_debug`:
//! vruntime, deadline, slice, lag, util, ...) sampled at its switches, for
//! Perfetto's counter tracks.
//!
//! Why a store of its own rather than trace records: at a switch both
//! tasks give five to eight values, so counters outnumber the scheduler
//! events several times over; as records (64 bytes each) they made a
//! wakeup-heavy trace 1 GB and most of a traced run's time page faults.
//! Here a sample takes a few bytes (`PackedSamples`) and a value equal to
//! the one last recorded for the same task and name is not recorded again:
//! a counter track holds its value until the next sample, so the plotted
//! tracks are the same.

use super::put_varint;
use crate::clock::Ns;
use crate::task::TaskId;

/// One counter value: `task`'s `names[name]` was `value` at `ts`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CounterSample {
    /// Time.
    pub ts: Ns,
    /// The task.
    pub task: u32,
    /// Index into [`TaskCounters::names`].
    pub name: u16,
    /// The value.
    pub value: i64,
}

/// Counter samples in time order, values unchanged since a task's last
/// sample of the same name left out.
#[derive(Debug, Clone, Default)]
pub struct TaskCounters {
    /// Counter names, in order of first appearance.
    pub names: Vec<&'static str>,
    /// The samples, packed ([`PackedSamples`]).
    samples: PackedSamples,
    /// Per task, the last value recorded by name id (None: none yet).
    last: Vec<Vec<Option<i64>>>,
    /// The names of the last `sample` call and their ids: a class gives
    /// its values in the same order every time, so the ids are looked up
    /// again only when the list of names changes.
    layout: Vec<&'static str>,
    layout_ids: Vec<u16>,
    /// A buffer for the recorder to collect one task's values in.
    pub scratch: Vec<(&'static str, i64)>,
}

/// Samples as bytes, one group per `sample` call that recorded anything:
/// the time since the previous group, the task, the number of values, then
/// per value its name id and its difference from the task's previous value
/// of that name (zigzag), all as LEB128 varints. A wakeup-heavy trace has
/// about two counter samples per trace record; at 24 bytes each they were
/// two thirds of a traced run's memory and most of its page faults, and
/// here a sample takes 3 to 5 bytes. Read back in order only
/// ([`TaskCounters::samples`]).
#[derive(Debug, Clone, Default)]
struct PackedSamples {
    bytes: Vec<u8>,
    len: usize,
    last_ts: Ns,
}

fn get_varint(b: &[u8], at: &mut usize) -> u64 {
    let mut x = 0u64;
    let mut shift = 0;
    loop {
        let byte = b[*at];
        *at += 1;
        x |= u64::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            return x;
        }
        shift += 7;
    }
}

fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

fn unzigzag(u: u64) -> i64 {
    ((u >> 1) as i64) ^ -((u & 1) as i64)
}

impl TaskCounters {
    fn name_id(&mut self, name: &'static str) -> u16 {
        // Names are a class's literals: compare addresses first.
        let found = self.names.iter().position(|n| std::ptr::eq(*n, name));
        match found.or_else(|| self.names.iter().position(|n| *n == name)) {
            Some(i) => i as u16,
            None => {
                self.names.push(name);
                (self.names.len() - 1) as u16
            }
        }
    }

    /// Record `task`'s values at `ts` (not before the previous call's),
    /// leaving out those it had already.
    pub fn sample(&mut self, ts: Ns, task: TaskId, values: &[(&'static str, i64)]) {
        let same_layout = self.layout.len() == values.len()
            && self
                .layout
                .iter()
                .zip(values)
                .all(|(a, (b, _))| std::ptr::eq(*a, *b));
        if !same_layout {
            self.layout = values.iter().map(|(n, _)| *n).collect();
            self.layout_ids = values.iter().map(|(n, _)| self.name_id(n)).collect();
        }
        if self.last.len() <= task {
            self.last.resize(task + 1, Vec::new());
        }
        let last = &mut self.last[task];
        if last.len() < self.names.len() {
            last.resize(self.names.len(), None);
        }
        // One pass: the group's header is written first and taken back if
        // no value changed; the count (one byte below 128) is patched in.
        let p = &mut self.samples;
        let since = ts
            .checked_sub(p.last_ts)
            .expect("counter samples in time order");
        let start = p.bytes.len();
        put_varint(&mut p.bytes, since);
        put_varint(&mut p.bytes, task as u64);
        let count_at = p.bytes.len();
        p.bytes.push(0);
        let mut changed = 0usize;
        for (&(_, value), &id) in values.iter().zip(&self.layout_ids) {
            let slot = &mut last[usize::from(id)];
            if *slot == Some(value) {
                continue;
            }
            let prev = slot.unwrap_or(0);
            *slot = Some(value);
            put_varint(&mut p.bytes, u64::from(id));
            put_varint(&mut p.bytes, zigzag(value.wrapping_sub(prev)));
            changed += 1;
        }
        if changed == 0 {
            p.bytes.truncate(start);
            return;
        }
        if changed < 0x80 {
            p.bytes[count_at] = changed as u8;
        } else {
            let mut count = Vec::with_capacity(3);
            put_varint(&mut count, changed as u64);
            p.bytes.splice(count_at..count_at + 1, count);
        }
        p.last_ts = ts;
        p.len += changed;
    }

    /// Number of samples.
    pub fn len(&self) -> usize {
        self.samples.len
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.samples.len == 0
    }

    /// The samples in time order (those of one task at one time adjacent),
    /// one by one; read through [`Self::for_each_group`], the one decoder
    /// of the packed store.
    pub fn samples(&self) -> impl Iterator<Item = CounterSample> + '_ {
        let mut out = Vec::with_capacity(self.samples.len);
        self.for_each_group(|ts, task, values| {
            out.extend(values.iter().map(|&(name, value)| CounterSample {
                ts,
                task,
                name,
                value,
            }));
        });
        out.into_iter()
    }

    /// The samples by task and time, in time order: `f(ts, task, values)`
    /// with each value as (name id, value), once for each run of samples of
    /// one task at one time (the groups the store keeps joined, as a trace
    /// shows them). The Perfetto export reads every sample this way: a
    /// group decoded in one loop costs about half as much as a per-sample
    /// iterator and a look-ahead.
    pub fn for_each_group(&self, mut f: impl FnMut(Ns, u32, &[(u16, i64)])) {
        let b = &self.samples.bytes;
        let names = self.names.len();
        let mut prev: Vec<i64> = vec![];
        let mut values: Vec<(u16, i64)> = vec![];
        let (mut at, mut ts) = (0usize, 0u64);
        let mut current: Option<(Ns, u32)> = None;
        while at < b.len() {
            ts += get_varint(b, &mut at);
            let task = get_varint(b, &mut at) as u32;
            let n = get_varint(b, &mut at);
            if current != Some((ts, task)) {
                if let Some((t0, k0)) = current {
                    f(t0, k0, &values);
                }
                values.clear();
                current = Some((ts, task));
            }
            let base = task as usize * names;
            if prev.len() < base + names {
                prev.resize(base + names, 0);
            }
            for _ in 0..n {
                let name = get_varint(b, &mut at) as u16;
                let slot = &mut prev[base + usize::from(name)];
                *slot = slot.wrapping_add(unzigzag(get_varint(b, &mut at)));
                values.push((name, *slot));
            }
        }
        if let Some((t0, k0)) = current {
            f(t0, k0, &values);
        }
    }

    /// Drop the per-task memory of last values (a finished trace keeps
    /// only its samples).
    pub fn seal(&mut self) {
        self.last = Vec::new();
        self.layout = Vec::new();
        self.layout_ids = Vec::new();
        self.scratch = Vec::new();
        self.samples.bytes.shrink_to_fit();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` counter names `{prefix}0`, `{prefix}1`, ... (`'static`, as the
    /// classes' names are).
    fn leaked_names(prefix: &str, n: usize) -> Vec<&'static str> {
        (0..n)
            .map(|i| &*Box::leak(format!("{prefix}{i}").into_boxed_str()))
            .collect()
    }

    #[test]
    fn unchanged_values_are_left_out_per_task_and_name() {
        let mut c = TaskCounters::default();
        c.sample(1, 0, &[("vruntime", 5), ("slice", 3)]);
        c.sample(2, 1, &[("vruntime", 5)]);
        c.sample(3, 0, &[("vruntime", 6), ("slice", 3)]);
        c.sample(4, 0, &[("vruntime", 6), ("slice", 4)]);
        let got: Vec<(Ns, u32, &str, i64)> = c
            .samples()
            .map(|s| (s.ts, s.task, c.names[s.name as usize], s.value))
            .collect();
        assert_eq!(
            got,
            vec![
                (1, 0, "vruntime", 5),
                (1, 0, "slice", 3),
                (2, 1, "vruntime", 5),
                (3, 0, "vruntime", 6),
                (4, 0, "slice", 4),
            ]
        );
    }

    /// The packed store gives back every recorded value exactly: extreme
    /// values and differences, many tasks, several calls at one time.
    #[test]
    fn packed_samples_read_back_exactly() {
        let mut rng = crate::rng::Rng::new(3);
        let names: [&'static str; 4] = ["a", "b", "c", "d"];
        let extremes = [0, 1, -1, i64::MAX, i64::MIN, i64::MAX - 1, i64::MIN + 1];
        let mut c = TaskCounters::default();
        let mut want = vec![];
        let mut last: std::collections::BTreeMap<(usize, &str), i64> = Default::default();
        let mut ts = 0u64;
        for step in 0..5000u64 {
            ts += rng.next_u64() % 3 * (1 + (rng.next_u64() >> 20));
            let task = (rng.next_u64() % 300) as usize;
            let values: Vec<(&'static str, i64)> = names
                .iter()
                .map(|n| {
                    let r = rng.next_u64();
                    let v = match r % 4 {
                        0 => extremes[(r >> 8) as usize % extremes.len()],
                        1 => last.get(&(task, *n)).copied().unwrap_or(0),
                        _ => (r >> (r % 64)) as i64 - (step as i64),
                    };
                    (*n, v)
                })
                .collect();
            for &(n, v) in &values {
                if last.get(&(task, n)) != Some(&v) {
                    want.push((ts, task as u32, n, v));
                    last.insert((task, n), v);
                }
            }
            c.sample(ts, task, &values);
        }
        let got: Vec<(Ns, u32, &str, i64)> = c
            .samples()
            .map(|s| (s.ts, s.task, c.names[s.name as usize], s.value))
            .collect();
        assert_eq!(got.len(), c.len());
        assert_eq!(got, want);
    }

    /// A call with 128 or more changed values (a count that takes two
    /// varint bytes) reads back as well.
    #[test]
    fn many_values_in_one_call_read_back() {
        let names = leaked_names("v", 200);
        let mut c = TaskCounters::default();
        let first: Vec<(&'static str, i64)> = names.iter().map(|n| (*n, 7)).collect();
        let second: Vec<(&'static str, i64)> = names
            .iter()
            .enumerate()
            .map(|(i, n)| (*n, i as i64 - 100))
            .collect();
        c.sample(5, 2, &first);
        c.sample(9, 2, &second);
        c.sample(12, 1, &first[..3]);
        let got: Vec<(Ns, u32, i64)> = c.samples().map(|s| (s.ts, s.task, s.value)).collect();
        let mut want: Vec<(Ns, u32, i64)> = first.iter().map(|&(_, v)| (5, 2, v)).collect();
        // 107 - 100 is the 7 the task already had: left out.
        want.extend(
            second
                .iter()
                .filter(|&&(_, v)| v != 7)
                .map(|&(_, v)| (9, 2, v)),
        );
        want.extend([(12, 1, 7); 3]);
        assert_eq!(got, want);
    }

    /// Names that appear after samples were kept (a policy's values, say)
    /// keep the values each task had for the names it gave before.
    #[test]
    fn new_names_keep_the_last_values() {
        let names = leaked_names("n", 20);
        let mut c = TaskCounters::default();
        c.sample(1, 0, &[(names[0], 5)]);
        c.sample(1, 3, &[(names[0], 6)]);
        let all: Vec<(&'static str, i64)> = names.iter().map(|n| (*n, 5)).collect();
        c.sample(2, 0, &all);
        c.sample(3, 3, &all);
        let got: Vec<(Ns, u32, &str)> = c
            .samples()
            .map(|s| (s.ts, s.task, c.names[s.name as usize]))
            .collect();
        // Task 0 had n0 = 5 already: left out at 2; task 3 had 6: recorded.
        let mut want = vec![(1, 0, "n0"), (1, 3, "n0")];
        want.extend(names[1..].iter().map(|n| (2, 0, *n)));
        want.extend(names.iter().map(|n| (3, 3, *n)));
        assert_eq!(got, want);
    }

    /// `for_each_group` gives the samples, those of one task at one time
    /// together (`samples` is read through it; the randomized test above
    /// checks the values against a model of their own).
    #[test]
    fn groups_join_the_samples_of_one_task_at_one_time() {
        let mut c = TaskCounters::default();
        c.sample(1, 0, &[("a", 1), ("b", 2)]);
        c.sample(1, 0, &[("a", 3), ("b", 2)]);
        c.sample(1, 1, &[("a", 4)]);
        c.sample(2, 0, &[("a", 3), ("b", -9)]);
        c.sample(2, 1, &[("a", 4)]);
        let mut got = vec![];
        c.for_each_group(|ts, task, v| got.push((ts, task, v.to_vec())));
        assert_eq!(
            got,
            vec![
                (1, 0, vec![(0, 1), (1, 2), (0, 3)]),
                (1, 1, vec![(0, 4)]),
                (2, 0, vec![(1, -9)]),
            ]
        );
    }
}
