//! The 6.12 fair server (`rq->fair_server`, linux-rt-dl.md §7): a deferred
//! DEADLINE server per CPU that guarantees fair tasks 50 ms in every
//! 1000 ms when RT work would otherwise starve them. Like the kernel's
//! `sched_dl_entity` with `dl_server` set, it belongs to the deadline class
//! (class/dl/mod.rs): when active it competes with SCHED_DEADLINE tasks by
//! its deadline (EDF; `pick_task_dl` → `dl_server_pick`), and counts in
//! the CPU's earliest deadline for push/pull (`cpudl`). The class it serves
//! and the classes it runs ahead of come from the stack (class/stack.rs,
//! `ServerSpec`); the engine reports what ran and how many served tasks are
//! runnable (the kernel's fair class calls `dl_server_update` /
//! `dl_server_start` itself, but here classes never call each other).
//!
//! State machine (deadline.c, "Document dl_server", "Less agressive
//! dl_server handling"):
//! * **Off** until a fair task is runnable; starting applies the CBS wakeup
//!   rule to the saved (deadline, runtime): a fresh period (deadline one
//!   period from now, runtime 50 ms) if the deadline passed or the remaining
//!   runtime would overflow the bandwidth, otherwise both are kept. The
//!   server is then **Deferred** with a timer at the zero-laxity instant
//!   deadline − runtime.
//! * **Deferred**: fair execution and idle time deplete the runtime
//!   (`dl_server_update`, `dl_server_update_idle_time`); when it runs out it
//!   is replenished for the next period, which moves the zero-laxity point
//!   forward. If fair tasks ran normally, the server never runs.
//! * The zero-laxity timer fires only if fair tasks got less than the
//!   runtime in the window: the server becomes **Active**, an ordinary
//!   DEADLINE entity, and runs fair tasks ahead of RT (also fair tasks that
//!   wake later in the period) until its runtime is spent, then
//!   **Throttled** until its deadline.
//! * At the deadline it is replenished; while RT work is still queued
//!   there it stays Active (no more deferral while starvation persists),
//!   otherwise it defers again.
//! * It stops (Off) only after a whole period without any fair task (the
//!   "less aggressive" rule of 6.17, backported to 6.12.y), so a periodic
//!   fair task keeps its server across sleeps. The host (Linux 6.18) gives
//!   a 1 ms / 10 ms fair task pinned beside a FIFO hog 212 ms of CPU in
//!   5 s, which this rule reproduces and stopping on every sleep does not.
//!
//! Simplifications (docs/model.md): accounting happens at switches and
//! ticks, so a server starts and throttles with tick granularity (as the
//! kernel's update_curr without HRTICK; overruns are carried into the next
//! period). Ties with a SCHED_DEADLINE task's deadline go to the task
//! [choice]. The server exists only when the run can have RT tasks:
//! without RT pressure it never activates (fair tasks deplete it first), so
//! skipping it changes nothing.

use crate::clock::{Ns, MSEC};
use crate::cpuset::CpuId;

/// Server state of one CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerState {
    /// No runnable fair task.
    Off,
    /// Armed at the zero-laxity instant; fair tasks run normally.
    Deferred,
    /// Running fair tasks ahead of RT.
    Active,
    /// Runtime spent; waits for its deadline.
    Throttled,
}

/// What a CPU ran since the last update.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ran {
    /// A fair task.
    Fair,
    /// A task of a higher class.
    Other,
    /// Nothing.
    Idle,
}

#[derive(Debug, Clone, Copy)]
struct Cpu {
    state: ServerState,
    runtime: i64,
    deadline: Ns,
    last: Ns,
    /// Time of the one timer outstanding for this CPU, if any.
    timer_at: Option<Ns>,
    /// Last time a fair task was runnable here.
    last_fair: Ns,
}

/// What the engine must do after an update.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Actions {
    /// Arm a server timer at this time.
    pub arm: Option<Ns>,
    /// Reschedule the CPU.
    pub resched: bool,
}

/// Deadline servers of all CPUs (`rq->fair_server`).
#[derive(Debug, Clone)]
pub struct DlServer {
    runtime: Ns,
    period: Ns,
    cpus: Vec<Cpu>,
}

impl DlServer {
    /// Servers with the 6.12 defaults: 50 ms every 1000 ms.
    pub fn new(nr_cpus: usize) -> Self {
        DlServer {
            runtime: 50 * MSEC,
            period: 1000 * MSEC,
            cpus: vec![
                Cpu {
                    state: ServerState::Off,
                    runtime: 0,
                    deadline: 0,
                    last: 0,
                    timer_at: None,
                    last_fair: 0,
                };
                nr_cpus
            ],
        }
    }

    /// State of `cpu`'s server.
    pub fn state(&self, cpu: CpuId) -> ServerState {
        self.cpus[cpu].state
    }

    /// (deadline, remaining runtime) of `cpu`'s server.
    pub fn entity(&self, cpu: CpuId) -> (Ns, i64) {
        (self.cpus[cpu].deadline, self.cpus[cpu].runtime)
    }

    /// Account what `cpu` ran since the last update, then start or stop the
    /// server for `nr_fair` runnable fair tasks.
    pub fn update(&mut self, cpu: CpuId, now: Ns, ran: Ran, nr_fair: u32) -> Actions {
        let (r, p) = (self.runtime as i64, self.period);
        let c = &mut self.cpus[cpu];
        let delta = now.saturating_sub(c.last) as i64;
        c.last = now;
        let mut act = Actions::default();
        match c.state {
            ServerState::Deferred if ran != Ran::Other => {
                c.runtime -= delta;
                while c.runtime <= 0 {
                    c.runtime += r;
                    c.deadline += p;
                }
            }
            ServerState::Active if ran == Ran::Fair => {
                c.runtime -= delta;
                if c.runtime <= 0 {
                    c.state = ServerState::Throttled;
                    act.resched = true;
                    act.arm = Self::want_timer(c, c.deadline);
                }
            }
            _ => {}
        }
        if nr_fair > 0 {
            c.last_fair = now;
            if c.state == ServerState::Off {
                // dl_server_start → enqueue_dl_entity(ENQUEUE_WAKEUP): the CBS
                // wakeup rule (update_dl_entity, dl_entity_overflow).
                let overflow = (c.runtime as i128) * (p as i128)
                    > (c.deadline as i128 - now as i128) * (r as i128);
                if c.deadline <= now || overflow {
                    c.deadline = now + p;
                    c.runtime = r;
                }
                c.state = ServerState::Deferred;
                let zero_lax = c.deadline.saturating_sub(c.runtime.max(0) as Ns).max(now);
                act.arm = Self::want_timer(c, zero_lax);
            }
        } else if c.state != ServerState::Off && now.saturating_sub(c.last_fair) >= p {
            // No fair task for a whole period: dl_server_stop.
            c.state = ServerState::Off;
        }
        act
    }

    /// The server timer of `cpu` fired at `now` (after `update`).
    /// `rt_queued`: RT tasks wait on this CPU (starvation persists).
    pub fn timer(&mut self, cpu: CpuId, now: Ns, rt_queued: bool) -> Actions {
        let (r, p) = (self.runtime as i64, self.period);
        let c = &mut self.cpus[cpu];
        if c.timer_at != Some(now) {
            return Actions::default();
        }
        c.timer_at = None;
        let mut act = Actions::default();
        match c.state {
            ServerState::Deferred => {
                let zero_lax = c.deadline.saturating_sub(c.runtime.max(0) as Ns);
                if now < zero_lax {
                    // Fair tasks ran meanwhile and moved the point: re-arm.
                    act.arm = Self::want_timer(c, zero_lax);
                } else {
                    c.state = ServerState::Active;
                    act.resched = true;
                    act.arm = Self::want_timer(c, c.deadline);
                }
            }
            ServerState::Active | ServerState::Throttled if now >= c.deadline => {
                // replenish_dl_entity: an overrun is carried into the new
                // period; an unused remainder is not.
                c.runtime = c.runtime.min(0);
                while c.runtime <= 0 {
                    c.runtime += r;
                    c.deadline += p;
                }
                if c.deadline <= now {
                    // "DL replenish lagged too much"
                    c.deadline = now + p;
                    c.runtime = r;
                }
                if rt_queued {
                    c.state = ServerState::Active;
                    act.resched = true;
                    act.arm = Self::want_timer(c, c.deadline);
                } else {
                    c.state = ServerState::Deferred;
                    act.arm = Self::want_timer(c, c.deadline - c.runtime as Ns);
                }
            }
            ServerState::Active | ServerState::Throttled => {
                act.arm = Self::want_timer(c, c.deadline)
            }
            ServerState::Off => {}
        }
        act
    }

    /// Keep one timer per CPU: a new one is needed only if none is pending
    /// or the pending one is later than `at`.
    fn want_timer(c: &mut Cpu, at: Ns) -> Option<Ns> {
        match c.timer_at {
            Some(t) if t <= at => None,
            _ => {
                c.timer_at = Some(at);
                Some(at)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn starved_fair_gets_50ms_late_in_the_window() {
        let mut s = DlServer::new(1);
        // A fair task appears at 0 while RT runs.
        let a = s.update(0, 0, Ran::Other, 1);
        assert_eq!(a.arm, Some(950 * MSEC));
        assert_eq!(s.update(0, 500 * MSEC, Ran::Other, 1), Actions::default());
        let a = s.timer(0, 950 * MSEC, true);
        assert!(a.resched);
        assert_eq!(s.state(0), ServerState::Active);
        assert_eq!(a.arm, Some(1000 * MSEC));
        // Fair runs 50 ms: throttled until the deadline at 1 s.
        let a = s.update(0, 1000 * MSEC, Ran::Fair, 1);
        assert_eq!(s.state(0), ServerState::Throttled);
        assert!(a.resched);
        let a = s.timer(0, 1000 * MSEC, true);
        assert!(a.resched);
        assert_eq!(s.state(0), ServerState::Active);
    }

    #[test]
    fn fair_running_normally_keeps_the_server_deferred() {
        let mut s = DlServer::new(1);
        s.update(0, 0, Ran::Fair, 1);
        for k in 1..=40 {
            s.update(0, k * 50 * MSEC, Ran::Fair, 1);
        }
        // The 950 ms timer finds the zero-laxity point moved and re-arms.
        let a = s.timer(0, 950 * MSEC, false);
        assert_eq!(s.state(0), ServerState::Deferred);
        assert!(a.arm.is_some_and(|t| t > 950 * MSEC));
    }
}
