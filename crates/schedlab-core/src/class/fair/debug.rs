//! The fair class's per-task values for reports and trace counters
//! (`SchedClass::task_debug`).

use super::tunables::Version;
use super::{eevdf, Fair};
use crate::task::TaskId;

impl Fair {
    /// `SchedClass::task_debug` of the fair class: vruntime and run time;
    /// under EEVDF the deadline, slice and lag; the trace-only utilisation;
    /// then the policy's own values. Traces plot them as counters.
    pub(super) fn debug_values(&self, t: TaskId, v: &mut Vec<(&'static str, i64)>) {
        let Some(&se) = self.task_se.get(t) else {
            return;
        };
        let e = &self.se[se];
        v.push(("vruntime", e.vruntime));
        v.push(("sum_exec_runtime", e.sum_exec as i64));
        if self.p.version == Version::Eevdf {
            v.push(("deadline", e.deadline));
            v.push(("slice", e.slice as i64));
            // lag = V − v_i while queued (entity_lag, unclamped), the kept
            // vlag while asleep.
            let lag = if e.on_rq {
                let (sum, load) = self.avg_sums(e.cfs_rq);
                if load > 0 {
                    eevdf::floor_div(sum, load) as i64 - e.vruntime
                } else {
                    0
                }
            } else {
                e.vlag
            };
            v.push(("lag", lag));
        }
        if let Some(s) = self.signals.get(t) {
            v.push(("util", s.util.avg() as i64));
        }
        v.extend(self.hooks.task_debug(t));
    }
}
