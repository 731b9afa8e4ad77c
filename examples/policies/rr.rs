//! Round-robin in Rust (docs/policies.md, "Tutorial: round-robin"); the
//! same algorithm as rr.py beside it.
//!
//! Every task gets the same quantum in turn, whatever its nice: one global
//! FIFO queue; a task that used its quantum goes to the tail, a task that
//! was preempted before using it goes back to the head with what it had left.

use schedlab_core::class::ext::*;
use schedlab_core::cpuset::CpuId;
use schedlab_core::task::TaskId;

const QUANTUM_NS: u64 = 5_000_000;
const RR_DSQ: u64 = 0;

#[derive(Default)]
pub struct RoundRobin;

impl ExtOps for RoundRobin {
    type Task = ();
    fn name(&self) -> &str {
        "rr"
    }
    fn init(&mut self, ctx: &mut Ctx<'_, ()>) -> Result<(), String> {
        ctx.create_dsq(RR_DSQ);
        Ok(())
    }
    fn select_cpu(&mut self, _ctx: &mut Ctx<'_, ()>, _p: TaskId, prev: CpuId, _wf: u64) -> CpuId {
        prev // no direct dispatch: every task goes through the queue
    }
    fn enqueue(&mut self, ctx: &mut Ctx<'_, ()>, p: TaskId, enq_flags: u64) {
        let left = ctx.task_slice(p);
        if left > 0 && left < QUANTUM_NS {
            ctx.dsq_insert(p, RR_DSQ, left, enq_flags | SCX_ENQ_HEAD); // keep its turn
        } else {
            ctx.dsq_insert(p, RR_DSQ, QUANTUM_NS, enq_flags);
        }
        if let Some(cpu) = ctx.task_cpumask(p).iter().find(|c| ctx.cpu_is_idle(*c)) {
            ctx.kick_cpu(cpu, SCX_KICK_IDLE);
        }
    }
    fn dispatch(&mut self, ctx: &mut Ctx<'_, ()>, _cpu: CpuId, _prev: Option<TaskId>) {
        ctx.dsq_move_to_local(RR_DSQ);
    }
}
