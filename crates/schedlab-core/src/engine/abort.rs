//! Disabling a class at run time: the kernel's `scx_disable_workfn` moves
//! every task of a failed sched_ext scheduler back to the fair class
//! (`__setscheduler_class` → `switching_to`/`switched_to`) and the system
//! goes on. Here any class may ask for it (`Machine::abort_class`); its
//! policies go to the stack's fallback class and the reason is recorded
//! in the run's warnings.

use super::{SimError, Simulator};
use crate::class::{DequeueFlags, EnqueueFlags};
use crate::task::OnRq;

impl Simulator {
    /// Carry out the classes' requests to be disabled.
    pub(crate) fn apply_aborts(&mut self) {
        for (name, reason) in std::mem::take(&mut self.m.aborts) {
            let Some(idx) = self.classes.position(name) else {
                continue;
            };
            let moving: Vec<usize> = (0..self.m.tasks.len())
                .filter(|t| self.m.tasks[*t].exited.is_none() && self.class_of(*t) == idx)
                .collect();
            let Some(fb) = self.classes.disable(idx) else {
                self.fail(SimError::Policy(format!(
                    "{reason} (class {name} has no fallback class to hand its tasks to)"
                )));
                return;
            };
            let at = self.m.now as f64 / 1e9;
            self.wl.warnings.push(format!(
                "class {name} disabled at {at:.6} s: {reason}; its {} tasks moved to class {}",
                moving.len(),
                self.classes.get_ref(fb).name()
            ));
            for t in moving {
                self.move_to_class(t, idx, fb);
            }
        }
    }

    /// Move task `t` from class `from` to class `to` (both set up for it
    /// at fork), keeping it queued, running or asleep as it was.
    fn move_to_class(&mut self, t: usize, from: usize, to: usize) {
        let cpu = self.m.tasks[t].cpu;
        let running = self.m.rqs[cpu].curr == Some(t);
        if self.m.tasks[t].on_rq != OnRq::Queued {
            return;
        }
        let save = DequeueFlags::SAVE | DequeueFlags::MOVE;
        self.quiet_touch(cpu);
        self.classes
            .get(from)
            .dequeue_task(&mut self.m, cpu, t, save);
        if running {
            self.classes
                .get(from)
                .put_prev_task(&mut self.m, cpu, t, None);
        }
        self.classes.get(to).reweight_task(&mut self.m, t);
        self.classes
            .get(to)
            .enqueue_task(&mut self.m, cpu, t, EnqueueFlags::RESTORE);
        if running {
            self.classes.get(to).set_next_task(&mut self.m, cpu, t);
        }
        // The new class decides at the next pick whether it keeps the CPU.
        self.m.resched(cpu);
    }
}
