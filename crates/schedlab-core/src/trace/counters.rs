//! Task counters of a trace: each task's class values (`SchedClass::task_debug`:
//! vruntime, deadline, slice, lag, util, ...) sampled at its switches, for
//! Perfetto's counter tracks.
//!
//! Why a store of its own rather than trace records: at a switch both
//! tasks give five to eight values, so counters outnumber the scheduler
//! events several times over; as records (64 bytes each) they made a
//! wakeup-heavy trace 1 GB and most of a traced run's time page faults.
//! Here a sample is 24 bytes and a value equal to the one last recorded
//! for the same task and name is not recorded again: a counter track holds
//! its value until the next sample, so the plotted tracks are the same.

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
    /// Samples in time order; those of one task at one time are adjacent.
    pub samples: Vec<CounterSample>,
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

    /// Record `task`'s values at `ts`, leaving out those it had already.
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
        for (&(_, value), &id) in values.iter().zip(&self.layout_ids) {
            let slot = &mut last[usize::from(id)];
            if *slot == Some(value) {
                continue;
            }
            *slot = Some(value);
            self.samples.push(CounterSample {
                ts,
                task: task as u32,
                name: id,
                value,
            });
        }
    }

    /// Drop the per-task memory of last values (a finished trace keeps
    /// only its samples).
    pub fn seal(&mut self) {
        self.last = Vec::new();
        self.layout = Vec::new();
        self.layout_ids = Vec::new();
        self.scratch = Vec::new();
        self.samples.shrink_to_fit();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unchanged_values_are_left_out_per_task_and_name() {
        let mut c = TaskCounters::default();
        c.sample(1, 0, &[("vruntime", 5), ("slice", 3)]);
        c.sample(2, 1, &[("vruntime", 5)]);
        c.sample(3, 0, &[("vruntime", 6), ("slice", 3)]);
        c.sample(4, 0, &[("vruntime", 6), ("slice", 4)]);
        let got: Vec<(Ns, u32, &str, i64)> = c
            .samples
            .iter()
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
}
