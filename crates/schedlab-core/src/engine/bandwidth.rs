//! SCHED_DEADLINE bandwidth: the root domain's admission control
//! (`__dl_overflow`, `sched_dl_overflow`; linux-rt-dl.md §6).

use super::Simulator;
use crate::task::TaskId;

/// SCHED_DEADLINE bandwidth available to tasks on `cpus` CPUs, in the
/// kernel's fixed point (`__dl_overflow`): 0.95 per CPU
/// (sched_rt_runtime_us / sched_rt_period_us), less the 6.12 fair servers'
/// 50/1000 per CPU, which count in `total_bw`.
pub(crate) fn dl_bw_limit(cpus: usize, fair_servers: bool) -> u64 {
    let per_cpu = ((950_000u64 << 20) / 1_000_000)
        - if fair_servers {
            (50_000u64 << 20) / 1_000_000
        } else {
            0
        };
    per_cpu * cpus as u64
}

impl Simulator {
    /// Admission control (`sched_dl_overflow`): task `t` changes its
    /// SCHED_DEADLINE bandwidth from `old` to `new`; over the limit the run
    /// fails as `sched_setattr` would with EBUSY. Returns whether admitted.
    pub(crate) fn admit_dl(&mut self, t: TaskId, old: u64, new: u64) -> bool {
        let (total, limit) = self.dl_bw;
        let after = total - old.min(total) + new;
        if after > limit {
            let cpus = |bw: u64| bw as f64 / (1u64 << 20) as f64;
            self.fail(super::SimError::Runtime(format!(
                "{}: admission control refuses SCHED_DEADLINE task {} (runtime/period {:.3}): the tasks would need {:.3} CPUs of bandwidth but {:.3} are available ({} CPUs x 0.95{}); the kernel's sched_setattr fails with EBUSY",
                self.wl.source,
                self.m.tasks[t].name,
                cpus(new),
                cpus(after),
                cpus(limit),
                self.m.nr_cpus(),
                if self.classes.server_bandwidth {
                    " less 0.05 per CPU for the 6.12 fair servers"
                } else {
                    ""
                }
            )));
            return false;
        }
        self.dl_bw.0 = after;
        true
    }
}
