//! The sched_ext watchdog (kernel/sched/ext.c v6.12: `scx_watchdog_workfn`,
//! `check_rq_for_timeouts`): every `timeout / 2` it looks for a runnable
//! ext task that has waited longer than `timeout` (`p->scx.runnable_at`)
//! and aborts the policy with `SCX_EXIT_ERROR_STALL` ("failed to run for
//! N s"). It also catches the lost task early: a task in the policy's
//! custody when every CPU goes idle (not a kernel check; see mod.rs).

use super::state::{dsq_name, ExtState, Where};
use crate::clock::Ns;
use crate::machine::Machine;
use crate::task::TaskId;

/// The task that has waited longest beyond `st.timeout`, if any
/// (ties: lowest id), with how long it has waited.
pub fn stalled(st: &ExtState, m: &Machine) -> Option<(TaskId, Ns)> {
    let mut worst: Option<(TaskId, Ns)> = None;
    for (t, s) in st.tasks.iter().enumerate() {
        let Some(at) = s.runnable_at.filter(|_| s.queued) else {
            continue;
        };
        let waited = m.now.saturating_sub(at);
        if waited > st.timeout && worst.is_none_or(|(_, w)| waited > w) {
            worst = Some((t, waited));
        }
    }
    worst
}

/// The stall message for task `t` that waited `waited` ns.
pub fn stall_message(st: &ExtState, m: &Machine, t: TaskId, waited: Ns) -> String {
    let s = &st.tasks[t];
    let place = match s.at {
        Where::Custody => format!(
            "; it has been in the policy's custody since {:.6} s: ops.enqueue kept it without inserting it into a DSQ and ops.dispatch never inserted it (lost task)",
            s.custody_since as f64 / 1e9
        ),
        Where::Dsq(d, _) => format!(
            "; it waits in DSQ {} (does ops.dispatch move tasks from that DSQ?)",
            dsq_name(d)
        ),
        Where::InFlight(c) => format!("; it is on its way to CPU {c}"),
        Where::Running | Where::Nowhere => String::new(),
    };
    format!(
        "{} failed to run for {:.3} s (watchdog timeout {} ms){place}",
        ExtState::task_str(m, t),
        waited as f64 / 1e9,
        st.timeout / 1_000_000
    )
}

/// A task in the policy's custody (lowest id) while nothing can dispatch
/// it any more: used when every online CPU goes idle.
pub fn lost(st: &ExtState) -> Option<TaskId> {
    st.tasks
        .iter()
        .position(|s| s.queued && s.at == Where::Custody)
}

/// The lost-task message.
pub fn lost_message(st: &ExtState, m: &Machine, t: TaskId) -> String {
    format!(
        "{} was enqueued at {:.6} s and is in no DSQ while every CPU goes idle: ops.enqueue kept it without inserting it and ops.dispatch did not insert it (lost task; insert it with dsq_insert)",
        ExtState::task_str(m, t),
        st.tasks[t].custody_since as f64 / 1e9
    )
}
