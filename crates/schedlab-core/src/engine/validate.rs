//! Checks of a workload against the machine and the scheduler before a
//! run starts: CPUs that exist, SCHED_DEADLINE parameters
//! (`__checkparam_dl`, linux-rt-dl.md §6) and a class for every policy.

use super::{SimError, Simulator};
use crate::task::DlAttr;
use crate::workload::{Attrs, Policy, Workload, WorkloadError};
use std::collections::BTreeMap;

/// `__checkparam_dl` and the root-domain affinity rule (linux-rt-dl.md §6).
fn check_dl(wl: &Workload, a: &Attrs, path: &str, cpus: Option<usize>) -> Result<(), SimError> {
    let base = path.strip_suffix(".policy").unwrap_or(path);
    let d = DlAttr::from_attrs(Policy::Deadline, a);
    let err = |key: &str, msg: String| -> Result<(), SimError> {
        Err(WorkloadError::at(&wl.source, &format!("{base}.{key}"), msg).into())
    };
    if d.runtime < 1024 {
        return err(
            "dl-runtime",
            format!(
                "SCHED_DEADLINE needs dl-runtime of at least 1024 ns, found {} ns",
                d.runtime
            ),
        );
    }
    if !(d.runtime <= d.deadline && d.deadline <= d.period) {
        return err(
            "dl-deadline",
            format!(
                "SCHED_DEADLINE needs dl-runtime <= dl-deadline <= dl-period, found {} / {} / {} us",
                d.runtime / 1000,
                d.deadline / 1000,
                d.period / 1000
            ),
        );
    }
    if !(100_000..=(1u64 << 22) * 1000).contains(&d.period) {
        return err(
            "dl-period",
            format!(
                "SCHED_DEADLINE period must be 100 us..4194304 us (sched_deadline_period_{{min,max}}_us), found {} us",
                d.period / 1000
            ),
        );
    }
    if let (Some(cpus), Some(v)) = (cpus, a.cpus.as_ref()) {
        let mut s: Vec<usize> = v.clone();
        s.sort_unstable();
        s.dedup();
        if s.len() >= cpus {
            return Ok(());
        }
        return err(
            "cpus",
            "a SCHED_DEADLINE task's affinity must span every CPU of its root domain (the kernel returns EPERM)".into(),
        );
    }
    Ok(())
}

pub(crate) fn policy_path(wl: &Workload, ti: usize, phase: Option<usize>) -> String {
    let t = &wl.tasks[ti];
    match phase {
        Some(p) if !(t.phases.len() == 1 && t.phases[0].name == t.name) => {
            format!("tasks.{}.phases.{}", t.name, t.phases[p].name)
        }
        _ => format!("tasks.{}", t.name),
    }
}

impl Simulator {
    /// Every policy the workload uses must have a class in the stack.
    pub(crate) fn check_policies(&self, scheduler: &str) -> Result<(), SimError> {
        let wl = &self.wl;
        for (ti, t) in wl.tasks.iter().enumerate() {
            let phases = std::iter::once((None, &t.attrs)).chain(
                t.phases
                    .iter()
                    .enumerate()
                    .map(|(i, p)| (Some(i), &p.attrs)),
            );
            for (pi, a) in phases {
                let p = a.policy.unwrap_or(wl.default_policy);
                if self.classes.class_for(p).is_none() {
                    return Err(WorkloadError::at(
                        &wl.source,
                        &format!("{}.policy", policy_path(wl, ti, pi)),
                        format!(
                            "scheduler {scheduler} has no class for {}; expected one of the policies its classes take",
                            p.name()
                        ),
                    )
                    .into());
                }
            }
        }
        Ok(())
    }

    pub(crate) fn validate(wl: &Workload, cpus: usize) -> Result<(), SimError> {
        Self::validate_on(wl, Some(cpus))
    }

    /// Everything `validate` checks that does not depend on the machine
    /// (`schedlab check`: SCHED_DEADLINE parameters; CPU numbers and the
    /// DEADLINE affinity rule need `--cpus`).
    pub fn validate_workload(wl: &Workload) -> Result<(), SimError> {
        Self::validate_on(wl, None)
    }

    fn validate_on(wl: &Workload, cpus: Option<usize>) -> Result<(), SimError> {
        let check = |a: &Attrs, path: String| -> Result<(), SimError> {
            let p = a.policy.unwrap_or(wl.default_policy);
            let missing = |c: &usize| cpus.is_some_and(|n| *c >= n);
            if let (Some(c), Some(cpus)) = (
                a.cpus.as_ref().and_then(|v| v.iter().find(|c| missing(c))),
                cpus,
            ) {
                return Err(WorkloadError::at(
                    &wl.source,
                    &format!("{path}.cpus"),
                    format!(
                        "CPU {c} does not exist on a {cpus}-CPU machine (expected 0..={})",
                        cpus - 1
                    ),
                )
                .into());
            }
            if p == Policy::Deadline {
                check_dl(wl, a, &path, cpus)?;
            }
            Ok(())
        };
        for (ti, t) in wl.tasks.iter().enumerate() {
            check(&t.attrs, policy_path(wl, ti, None))?;
            for (pi, ph) in t.phases.iter().enumerate() {
                check(&t.attrs.overlay(&ph.attrs), policy_path(wl, ti, Some(pi)))?;
            }
        }
        Ok(())
    }

    /// Every frequency the run takes (`freq_mhz`, `freq_levels_mhz`) at
    /// most [`crate::topology::MAX_FREQ_MHZ`] (why: there).
    pub(crate) fn check_frequencies(cfg: &crate::config::SimConfig) -> Result<(), SimError> {
        let mhz = cfg.freq_mhz.iter().flat_map(|&(c, m)| [c, m]);
        match mhz
            .chain(cfg.freq_levels_mhz.iter().copied())
            .find(|&f| f > crate::topology::MAX_FREQ_MHZ)
        {
            Some(f) => Err(SimError::Config(format!(
                "frequencies are at most {} MHz, got {f} MHz",
                crate::topology::MAX_FREQ_MHZ
            ))),
            None => Ok(()),
        }
    }

    /// `fairness_tasks` (config.rs): each name a task object or one of its
    /// threads, as the metrics match them: a thread the launcher makes, or
    /// one a `fork` may make (`TaskDef::thread_name`, as `fork_task` names
    /// them). A name that matches nothing would leave the index over fewer
    /// tasks than asked (over none it reads 1, "perfectly fair").
    pub(crate) fn check_fairness_tasks(wl: &Workload, names: &[String]) -> Result<(), SimError> {
        let known = |n: &str| {
            wl.tasks.iter().any(|t| {
                n == t.name
                    || n.strip_prefix(t.name.as_str())
                        .and_then(|k| k.strip_prefix('-'))
                        .and_then(|k| k.parse::<u32>().ok())
                        .is_some_and(|k| {
                            t.thread_name(k) == n && (k < t.instances || wl.is_forked(&t.name))
                        })
            })
        };
        match names.iter().find(|n| !known(n)) {
            Some(n) => Err(SimError::Config(format!(
                "fairness_tasks: {n:?} names no task of {} (expected a task name, or name-k for its k-th instance)",
                wl.source
            ))),
            None => Ok(()),
        }
    }

    /// `start_cpus` (config.rs): each name a thread the launcher creates,
    /// each CPU on the machine and in that thread's affinity.
    pub(crate) fn start_cpus_of(
        wl: &Workload,
        given: &[(String, usize)],
        cpus: usize,
    ) -> Result<BTreeMap<String, usize>, SimError> {
        let mut out = BTreeMap::new();
        if given.is_empty() {
            return Ok(out);
        }
        let mut threads: BTreeMap<String, &Attrs> = BTreeMap::new();
        for t in &wl.tasks {
            for k in 0..t.instances {
                threads.insert(t.thread_name(k), &t.attrs);
            }
        }
        for (name, cpu) in given {
            let Some(attrs) = threads.get(name) else {
                return Err(SimError::Config(format!(
                    "start_cpus: {name:?} is no thread the launcher of {} creates (expected a task name, or name-k for its k-th instance)",
                    wl.source
                )));
            };
            if *cpu >= cpus {
                return Err(SimError::Config(format!(
                    "start_cpus: {name}: CPU {cpu} does not exist on a {cpus}-CPU machine"
                )));
            }
            if attrs.cpus.as_ref().is_some_and(|v| !v.contains(cpu)) {
                return Err(SimError::Config(format!(
                    "start_cpus: {name}: CPU {cpu} is outside the thread's cpus"
                )));
            }
            out.insert(name.clone(), *cpu);
        }
        Ok(out)
    }
}
