//! ftrace text export: the format of tracefs `trace` (../shared/formats.md
//! §2.1), so existing tools (and `schedlab trace import`) read it.

use super::{PrevState, TraceData, TraceEvent};
use std::fmt::Write;

fn state_str(s: PrevState) -> &'static str {
    match s {
        PrevState::Runnable => "R+",
        PrevState::Sleeping => "S",
        PrevState::Dead => "X",
    }
}

/// Render the whole trace as tracefs `trace` text.
pub fn render(d: &TraceData) -> String {
    let mut s = String::with_capacity(d.records.len() * 120 + 1024);
    let n = d.records.len();
    let _ = write!(
        s,
        "# tracer: nop\n#\n# entries-in-buffer/entries-written: {n}/{n}   #P:{}\n#\n\
#                                _-----=> irqs-off/BH-disabled\n\
#                               / _----=> need-resched\n\
#                              | / _---=> hardirq/softirq\n\
#                              || / _--=> preempt-depth\n\
#                              ||| / _-=> migrate-disable\n\
#                              |||| /     delay\n\
#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION\n\
#              | |         |   |||||     |         |\n",
        d.nr_cpus
    );
    let mut curr: Vec<Option<usize>> = vec![None; d.nr_cpus];
    for r in &d.records {
        let (cc, cp, _) = d.ident(curr[r.cpu], r.cpu);
        let cc = if cp == 0 { "<idle>".to_string() } else { cc };
        let (sec, usec) = (r.ts / 1_000_000_000, (r.ts / 1_000) % 1_000_000);
        let _ = write!(
            s,
            "{cc:>16}-{cp:<7} [{:03}] d..2. {sec:>5}.{usec:06}: ",
            r.cpu
        );
        match r.ev {
            TraceEvent::Switch {
                prev,
                prev_state,
                next,
            } => {
                let (pc, pp, ppr) = d.ident(prev, r.cpu);
                let (nc, np, npr) = d.ident(next, r.cpu);
                // The idle task leaves the CPU from schedule_idle(), not by
                // preemption: the kernel prints its state as plain `R`
                // (__trace_sched_switch_state, 6.x), never `R+`.
                let state = if prev.is_none() && prev_state == PrevState::Runnable {
                    "R"
                } else {
                    state_str(prev_state)
                };
                let _ = writeln!(
                    s,
                    "sched_switch: prev_comm={pc} prev_pid={pp} prev_prio={ppr} prev_state={state} ==> next_comm={nc} next_pid={np} next_prio={npr}",
                );
                curr[r.cpu] = next;
            }
            TraceEvent::Waking { task, target_cpu } => {
                let (c, p, pr) = d.ident(Some(task), r.cpu);
                let _ = writeln!(
                    s,
                    "sched_waking: comm={c} pid={p} prio={pr} target_cpu={target_cpu:03}"
                );
            }
            TraceEvent::Wakeup { task } => {
                let (c, p, pr) = d.ident(Some(task), r.cpu);
                let _ = writeln!(
                    s,
                    "sched_wakeup: comm={c} pid={p} prio={pr} target_cpu={:03}",
                    r.cpu
                );
            }
            TraceEvent::CpuFrequency { khz } => {
                let _ = writeln!(s, "cpu_frequency: state={khz} cpu_id={}", r.cpu);
            }
            TraceEvent::WakeupNew { task } => {
                let (c, p, pr) = d.ident(Some(task), r.cpu);
                let _ = writeln!(
                    s,
                    "sched_wakeup_new: comm={c} pid={p} prio={pr} target_cpu={:03}",
                    r.cpu
                );
            }
            TraceEvent::Migrate {
                task,
                orig_cpu,
                dest_cpu,
            } => {
                let (c, p, pr) = d.ident(Some(task), r.cpu);
                let _ = writeln!(
                    s,
                    "sched_migrate_task: comm={c} pid={p} prio={pr} orig_cpu={orig_cpu} dest_cpu={dest_cpu}"
                );
            }
            TraceEvent::Exit { task } => {
                let (c, p, pr) = d.ident(Some(task), r.cpu);
                let _ = writeln!(s, "sched_process_exit: comm={c} pid={p} prio={pr}");
            }
        }
    }
    s
}
