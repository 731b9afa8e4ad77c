"""Global EDF for SCHED_EXT tasks (docs/policies.md, "Tutorial: global EDF").

Deadline source: a relative deadline per task name (DEADLINES_MS, the part of
the name before any "-N" instance suffix); the kernel zeroes sched_attr's
deadline for every policy but SCHED_DEADLINE, so an ext policy keeps its own.
A job starts when the task becomes runnable: absolute deadline = now + rel;
a task that uses a whole slice without sleeping (a CPU hog) is given the next
deadline, rel later (as SCHED_DEADLINE's CBS postpones an overrunning task).
"""

from schedlab.ext import SCX_KICK_IDLE, SCX_KICK_PREEMPT, SCX_OPS_SWITCH_PARTIAL, SCX_SLICE_DFL, Policy

EDF_DSQ = 0
DEADLINES_MS = {"audio": 5, "video": 10}
DEFAULT_MS = 100


class Edf(Policy):
    name = "edf"
    flags = SCX_OPS_SWITCH_PARTIAL  # SCHED_OTHER stays with EEVDF

    def init(self, ctx):
        ctx.create_dsq(EDF_DSQ)

    def runnable(self, ctx, p, enq_flags):
        d = ctx.task_data(p)
        d.rel = DEADLINES_MS.get(ctx.task(p).name.split("-")[0], DEFAULT_MS) * 1_000_000
        d.deadline = ctx.now() + d.rel

    def stopping(self, ctx, p, runnable):
        if runnable and ctx.task_slice(p) == 0:
            ctx.task_data(p).deadline += ctx.task_data(p).rel

    def enqueue(self, ctx, p, enq_flags):
        deadline = ctx.task_data(p).deadline
        ctx.dsq_insert_vtime(p, EDF_DSQ, SCX_SLICE_DFL, deadline, enq_flags)
        victim, latest = None, deadline  # the CPU running the latest deadline
        for cpu in ctx.task_cpumask(p):
            cur = ctx.cpu_curr(cpu)
            if cur is None:
                return ctx.kick_cpu(cpu, SCX_KICK_IDLE)
            d = getattr(ctx.task_data(cur), "deadline", None)
            if d is not None and ctx.task_running(cur) and d > latest:
                victim, latest = cpu, d
        if victim is not None:
            ctx.kick_cpu(victim, SCX_KICK_PREEMPT)

    def dispatch(self, ctx, cpu, prev):
        ctx.dsq_move_to_local(EDF_DSQ)
