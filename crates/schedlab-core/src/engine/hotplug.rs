//! CPU hotplug: CPUs going offline and coming back during a run
//! (`--hotplug T=-CPU,T=+CPU`). Models what the scheduler sees of
//! `sched_cpu_deactivate` / `sched_cpu_activate`, not the hotplug state
//! machine:
//!
//! * going down: the CPU leaves the online mask; every task's effective
//!   affinity is its requested one restricted to online CPUs (all online
//!   CPUs if that is empty, as `select_fallback_rq` does); queued tasks are
//!   migrated to the least loaded allowed online CPU and the running one is
//!   pushed there (as the stopper does); the CPU then idles, takes no ticks
//!   and does no balancing; wakeups never pick it;
//! * coming up: the mask and affinities are restored; the idle CPU pulls
//!   work through ordinary load balancing;
//! * either way the fair class rebuilds its scheduling domains over the
//!   online CPUs (`partition_sched_domains`);
//! * either way, weight policies that depend on the number of online CPUs
//!   (DW-CFS) recompute every thread's weight.
//!
//! Not modelled: per-CPU kthreads being parked, the hotplug latency, RT/DL
//! bandwidth re-accounting per root domain (admission uses all CPUs).

use super::Simulator;
use crate::clock::{Ns, SEC};
use crate::cpuset::CpuId;
use crate::machine::MigrationKind;
use crate::task::{OnRq, TaskId};

/// One step: at `at`, CPU `cpu` goes online (`true`) or offline.
pub type HotplugStep = (Ns, CpuId, bool);

/// Parse `T=-CPU,T=+CPU,...` (T in seconds, non-decreasing).
pub fn parse(s: &str) -> Result<Vec<HotplugStep>, String> {
    let mut steps = vec![];
    for item in s.split(',').filter(|x| !x.trim().is_empty()) {
        let bad = || format!("hotplug: expected SECONDS=-CPU or SECONDS=+CPU, found \"{item}\"");
        let (t, c) = item.split_once('=').ok_or_else(bad)?;
        let t: f64 = t.trim().parse().map_err(|_| bad())?;
        let c = c.trim();
        let (up, num) = match c.as_bytes().first() {
            Some(b'+') => (true, &c[1..]),
            Some(b'-') => (false, &c[1..]),
            _ => return Err(bad()),
        };
        let cpu: CpuId = num.parse().map_err(|_| bad())?;
        if !(t >= 0.0 && t.is_finite()) {
            return Err(bad());
        }
        let at = (t * SEC as f64).round() as Ns;
        if steps.last().is_some_and(|(p, _, _)| *p > at) {
            return Err(format!("hotplug: times must not decrease (\"{item}\")"));
        }
        steps.push((at, cpu, up));
    }
    Ok(steps)
}

/// Check a plan against a machine of `cpus` CPUs: CPUs exist and one stays online.
pub fn validate(steps: &[HotplugStep], cpus: usize) -> Result<(), String> {
    let mut online = vec![true; cpus];
    for &(at, cpu, up) in steps {
        if cpu >= cpus {
            return Err(format!(
                "hotplug: CPU {cpu} does not exist on a {cpus}-CPU machine"
            ));
        }
        online[cpu] = up;
        if !online.iter().any(|o| *o) {
            return Err(format!(
                "hotplug: at {:.3} s no CPU would be online",
                at as f64 / SEC as f64
            ));
        }
    }
    Ok(())
}

impl Simulator {
    /// Carry out hotplug step `idx` of the configuration.
    pub(crate) fn hotplug(&mut self, idx: usize) {
        let Some(&(_, cpu, up)) = self.cfg.hotplug.get(idx) else {
            return;
        };
        if up == self.m.online.contains(cpu) {
            return;
        }
        if up {
            self.m.online.insert(cpu);
        } else {
            self.m.online.remove(cpu);
        }
        for t in 0..self.m.tasks.len() {
            let a = self.m.effective_affinity(self.m.tasks[t].affinity_req);
            self.m.tasks[t].affinity = a;
        }
        self.quiet_touch_all();
        for c in 0..self.classes.len() {
            self.classes.get(c).cpus_changed(&mut self.m);
        }
        self.enforce_affinity();
        if !up {
            self.m.resched(cpu);
        }
        for p in 0..self.m.processes.len() {
            self.reweight_process(p, None);
        }
    }

    /// Move every runnable task that sits on a CPU outside its (new)
    /// effective affinity: queued ones migrate, running ones are pushed by
    /// the stopper. Covers the CPU going down and tasks whose pinning comes
    /// back when it returns.
    fn enforce_affinity(&mut self) {
        for t in 0..self.m.tasks.len() {
            let task = &self.m.tasks[t];
            let cpu = task.cpu;
            if task.on_rq != OnRq::Queued || task.affinity.contains(cpu) {
                continue;
            }
            let dst = self.fallback_cpu(t);
            if self.m.rqs[cpu].curr == Some(t) {
                self.m.rqs[cpu].active_balance_to = Some(dst);
                self.m.resched(cpu);
            } else {
                self.m.request_migration(t, dst, MigrationKind::Balance);
            }
        }
    }

    /// The least loaded online CPU `t` may run on (lowest index on ties).
    pub(crate) fn fallback_cpu(&self, t: TaskId) -> CpuId {
        let a = self.m.tasks[t].affinity;
        a.iter()
            .filter(|c| self.m.online.contains(*c))
            .min_by_key(|c| (self.m.rqs[*c].nr_running, *c))
            .or_else(|| self.m.online.first())
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_validate() {
        let s = parse("1=-3, 2.5=+3").expect("parses");
        assert_eq!(s, vec![(SEC, 3, false), (2_500_000_000, 3, true)]);
        assert!(validate(&s, 4).is_ok());
        assert!(validate(&s, 2).is_err());
        assert!(validate(&parse("1=-0,2=-1").expect("parses"), 2).is_err());
        assert!(parse("1=3").is_err());
        assert!(parse("2=-1,1=+1").is_err());
    }
}
