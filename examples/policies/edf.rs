//! Global EDF for SCHED_EXT tasks in Rust (docs/policies.md, "Tutorial:
//! global EDF"); the same algorithm as edf.py beside it.
//!
//! Deadline source: a relative deadline per task name (the part before any
//! "-N" instance suffix); the kernel zeroes sched_attr's deadline for every
//! policy but SCHED_DEADLINE, so an ext policy keeps its own. A job starts
//! when the task becomes runnable: absolute deadline = now + rel; a task
//! that used a whole slice without sleeping (a hog) gets the next deadline,
//! rel later (as SCHED_DEADLINE's CBS postpones an overrunning task).

use schedlab_core::class::ext::*;
use schedlab_core::cpuset::CpuId;
use schedlab_core::task::TaskId;

const EDF_DSQ: u64 = 0;

fn relative_deadline_ns(name: &str) -> u64 {
    let ms = match name.split('-').next() {
        Some("audio") => 5,
        Some("video") => 10,
        _ => 100,
    };
    ms * 1_000_000
}

#[derive(Default)]
pub struct Job {
    rel: u64,
    deadline: u64,
}

#[derive(Default)]
pub struct Edf;

impl ExtOps for Edf {
    type Task = Job;
    fn name(&self) -> &str {
        "edf"
    }
    fn flags(&self) -> u64 {
        SCX_OPS_SWITCH_PARTIAL // SCHED_OTHER stays with EEVDF
    }
    fn init(&mut self, ctx: &mut Ctx<'_, Job>) -> Result<(), String> {
        ctx.create_dsq(EDF_DSQ);
        Ok(())
    }
    fn runnable(&mut self, ctx: &mut Ctx<'_, Job>, p: TaskId, _enq_flags: u64) {
        let rel = relative_deadline_ns(&ctx.task(p).map(|v| v.name).unwrap_or_default());
        let now = ctx.now();
        *ctx.task_data(p) = Job {
            rel,
            deadline: now + rel,
        };
    }
    fn stopping(&mut self, ctx: &mut Ctx<'_, Job>, p: TaskId, runnable: bool) {
        if runnable && ctx.task_slice(p) == 0 {
            let job = ctx.task_data(p);
            job.deadline += job.rel;
        }
    }
    fn enqueue(&mut self, ctx: &mut Ctx<'_, Job>, p: TaskId, enq_flags: u64) {
        let deadline = ctx.task_data(p).deadline;
        ctx.dsq_insert_vtime(p, EDF_DSQ, SCX_SLICE_DFL, deadline, enq_flags);
        let (mut victim, mut latest): (Option<CpuId>, u64) = (None, deadline);
        for cpu in ctx.task_cpumask(p).iter() {
            let Some(cur) = ctx.cpu_curr(cpu) else {
                return ctx.kick_cpu(cpu, SCX_KICK_IDLE);
            };
            let d = ctx.task_data(cur).deadline;
            if d != 0 && ctx.task_running(cur) && d > latest {
                (victim, latest) = (Some(cpu), d);
            }
        }
        if let Some(cpu) = victim {
            ctx.kick_cpu(cpu, SCX_KICK_PREEMPT);
        }
    }
    fn dispatch(&mut self, ctx: &mut Ctx<'_, Job>, _cpu: CpuId, _prev: Option<TaskId>) {
        ctx.dsq_move_to_local(EDF_DSQ);
    }
}
