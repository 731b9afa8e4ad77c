"""Round-robin (docs/policies.md, "Tutorial: round-robin").

Every task gets the same quantum in turn, whatever its nice: one global FIFO
queue; a task that used its quantum goes to the tail, a task that was
preempted before using it goes back to the head with what it had left.
"""

from schedlab.ext import SCX_ENQ_HEAD, SCX_KICK_IDLE, Policy

QUANTUM_NS = 5_000_000
RR_DSQ = 0


class RoundRobin(Policy):
    name = "rr"

    def init(self, ctx):
        ctx.create_dsq(RR_DSQ)

    def select_cpu(self, ctx, p, prev_cpu, wake_flags):
        return prev_cpu  # no direct dispatch: every task goes through the queue

    def enqueue(self, ctx, p, enq_flags):
        left = ctx.task_slice(p)
        if 0 < left < QUANTUM_NS:  # preempted mid-quantum: keep its turn
            ctx.dsq_insert(p, RR_DSQ, left, enq_flags | SCX_ENQ_HEAD)
        else:
            ctx.dsq_insert(p, RR_DSQ, QUANTUM_NS, enq_flags)
        for cpu in ctx.task_cpumask(p):
            if ctx.cpu_is_idle(cpu):
                ctx.kick_cpu(cpu, SCX_KICK_IDLE)
                break

    def dispatch(self, ctx, cpu, prev):
        ctx.dsq_move_to_local(RR_DSQ)
