# scx_simple in Python: the kernel's tools/sched_ext/scx_simple.bpf.c
# (torvalds/linux 25768de; scx_bpf_dsq_insert/scx_bpf_dsq_move_to_local,
# algorithm unchanged since v6.12), line for line the same algorithm as the
# Rust port crates/schedlab-core/src/policy/scx_simple.rs, so that both give
# byte-identical traces (tests/test_ext_policy.py).
"""scx_simple: one shared DSQ in weighted-vtime (default) or FIFO order.

* ``select_cpu``: ``select_cpu_dfl``; an idle CPU gets the task straight into
  its local DSQ with the default slice (20 ms), skipping ``enqueue``.
* ``enqueue``: FIFO: tail of DSQ 0. vtime: DSQ 0 ordered by ``dsq_vtime``,
  clamped to at least ``vtime_now - SCX_SLICE_DFL`` (a sleeper gains at most
  one slice of credit).
* ``dispatch``: move DSQ 0's first task to the CPU's local DSQ.
* ``running``: ``vtime_now`` advances to the starting task's vtime.
* ``stopping``: ``dsq_vtime += (SCX_SLICE_DFL - slice) * 100 / weight``.
* ``enable``: a new task starts at ``vtime_now``.

``ScxSimple(fifo=True)`` is ``scx_simple -f``; ``partial=True`` is ``-p``
(``SCX_OPS_SWITCH_PARTIAL``: only SCHED_EXT tasks).
"""

from __future__ import annotations

from typing import Optional

from ..ext import (
    SCX_DSQ_LOCAL,
    SCX_OPS_SWITCH_PARTIAL,
    SCX_SLICE_DFL,
    Ctx,
    Policy,
)

SHARED_DSQ = 0
U64 = (1 << 64) - 1


def vtime_before(a: int, b: int) -> bool:
    """``(s64)(a - b) < 0`` on u64 vtimes."""
    return (a - b) & U64 >= 1 << 63


class ScxSimple(Policy):
    """The policy (``simple_ops``)."""

    name = "scx_simple"

    def __init__(self, fifo: bool = False, partial: bool = False):
        self.fifo = fifo
        self.partial = partial
        self.flags = SCX_OPS_SWITCH_PARTIAL if partial else 0
        self.vtime_now = 0
        # Tasks inserted straight into a local DSQ / into the shared DSQ.
        self.stats = [0, 0]

    def select_cpu(self, ctx: Ctx, p: int, prev_cpu: int, wake_flags: int) -> int:
        cpu, is_idle = ctx.select_cpu_dfl(p, prev_cpu, wake_flags)
        if is_idle:
            self.stats[0] += 1
            ctx.dsq_insert(p, SCX_DSQ_LOCAL, SCX_SLICE_DFL, 0)
        return cpu

    def enqueue(self, ctx: Ctx, p: int, enq_flags: int) -> None:
        self.stats[1] += 1
        if self.fifo:
            ctx.dsq_insert(p, SHARED_DSQ, SCX_SLICE_DFL, enq_flags)
        else:
            vtime = ctx.task_vtime(p)
            # Limit the budget an idling task can accumulate to one slice.
            floor = (self.vtime_now - SCX_SLICE_DFL) & U64
            if vtime_before(vtime, floor):
                vtime = floor
            ctx.dsq_insert_vtime(p, SHARED_DSQ, SCX_SLICE_DFL, vtime, enq_flags)

    def dispatch(self, ctx: Ctx, cpu: int, prev: Optional[int]) -> None:
        ctx.dsq_move_to_local(SHARED_DSQ)

    def running(self, ctx: Ctx, p: int) -> None:
        if self.fifo:
            return
        v = ctx.task_vtime(p)
        if vtime_before(self.vtime_now, v):
            self.vtime_now = v

    def stopping(self, ctx: Ctx, p: int, runnable: bool) -> None:
        if self.fifo:
            return
        used = max(SCX_SLICE_DFL - ctx.task_slice(p), 0)
        w = max(ctx.task_weight(p), 1)
        ctx.set_dsq_vtime(p, (ctx.task_vtime(p) + used * 100 // w) & U64)

    def enable(self, ctx: Ctx, p: int) -> None:
        ctx.set_dsq_vtime(p, self.vtime_now)

    def init(self, ctx: Ctx) -> Optional[str]:
        if ctx.create_dsq(SHARED_DSQ):
            return None
        return f"create_dsq({SHARED_DSQ}) failed"
