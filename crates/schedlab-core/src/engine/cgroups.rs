//! Task groups: the workload's cgroups (with their ancestors and
//! `cpu.shares`) and autogroups (kernel/sched/autogroup.c), built before
//! the first task starts.

use super::Simulator;
use crate::machine::TaskGroup;
use crate::workload::Attrs;

impl Simulator {
    /// Task groups: declared cgroups (with their ancestors), then one
    /// autogroup per process when autogroup is on.
    pub(crate) fn build_groups(&mut self) {
        let mut paths: Vec<String> = self.wl.taskgroups.iter().map(|g| g.path.clone()).collect();
        for t in &self.wl.tasks {
            for a in std::iter::once(&t.attrs).chain(t.phases.iter().map(|p| &p.attrs)) {
                if let Some(g) = &a.taskgroup {
                    if g != "/" && !paths.contains(g) {
                        paths.push(g.clone());
                    }
                }
            }
        }
        for p in paths {
            self.group_id(&p);
        }
    }

    /// One autogroup per process (`autogroup.c`): as if every process had
    /// been started in its own session with `setsid()`.
    pub(crate) fn build_autogroups(&mut self) {
        for t in &self.wl.tasks {
            if self.autogroups.contains_key(&t.process) {
                continue;
            }
            self.m.groups.push(TaskGroup {
                path: format!("/autogroup-{}", self.autogroups.len() + 1),
                parent: Some(0),
                shares: 1024,
            });
            self.autogroups
                .insert(t.process.clone(), self.m.groups.len() - 1);
        }
    }

    /// Group of a task object's thread in a phase: its cgroup, else its
    /// process's autogroup, else the root (autogroup.c: only tasks of the
    /// root cgroup use their autogroup).
    pub(crate) fn group_of(&self, def: usize, a: &Attrs) -> usize {
        match a.taskgroup.as_deref() {
            Some(g) if g != "/" => self.m.groups.iter().position(|x| x.path == g).unwrap_or(0),
            _ => {
                let proc_name = &self.wl.tasks[def].process;
                self.autogroups.get(proc_name).copied().unwrap_or(0)
            }
        }
    }

    /// Index of the group at `path`, creating it and its ancestors.
    fn group_id(&mut self, path: &str) -> usize {
        if path == "/" || path.is_empty() {
            return 0;
        }
        if let Some(i) = self.m.groups.iter().position(|g| g.path == path) {
            return i;
        }
        let parent_path = match path.rfind('/') {
            Some(0) | None => "/".to_string(),
            Some(i) => path[..i].to_string(),
        };
        let parent = self.group_id(&parent_path);
        let shares = self
            .wl
            .taskgroups
            .iter()
            .find(|g| g.path == path)
            .map_or(1024, |g| g.shares);
        self.m.groups.push(TaskGroup {
            path: path.to_string(),
            parent: Some(parent),
            shares,
        });
        self.m.groups.len() - 1
    }
}
