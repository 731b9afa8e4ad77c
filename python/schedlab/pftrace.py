"""Perfetto traces (``.pftrace``) read back as tracefs text, so ``schedlab trace import`` takes the
files ``schedlab run --trace X.pftrace`` writes (and other Perfetto traces with ftrace sched
events). Decoding needs the ``perfetto`` package's protobuf classes (the test extra)."""

from __future__ import annotations

from typing import Dict, List, Tuple

# prev_state bits (include/trace/events/sched.h, kernels >= 4.14): TASK_REPORT_MAX marks preemption.
_STATES = [(0x1, "S"), (0x2, "D"), (0x4, "T"), (0x8, "t"), (0x10, "X"), (0x20, "Z"), (0x40, "P"), (0x80, "I")]


def state_text(raw: int) -> str:
    """The ftrace text of a raw prev_state."""
    letters = "|".join(c for bit, c in _STATES if raw & bit)
    return (letters or "R") + ("+" if raw & 0x100 else "")


def looks_like(head: bytes) -> bool:
    """A Trace message starts with field 1 (packet), length-delimited: 0x0a."""
    return head[:1] == b"\x0a"


def to_ftrace_text(data: bytes) -> str:
    try:
        from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb
    except ImportError as e:  # an optional dependency
        raise RuntimeError("reading a Perfetto trace needs the perfetto package (pip install perfetto)") from e
    trace = pb.Trace.FromString(data)
    comm: Dict[int, str] = {0: "<idle>"}
    lines: List[Tuple[int, int, int, str]] = []
    for p in trace.packet:
        if p.HasField("process_tree"):
            for t in p.process_tree.threads:
                comm[t.tid] = t.name
        if not p.HasField("ftrace_events"):
            continue
        cpu = p.ftrace_events.cpu
        for e in p.ftrace_events.event:
            kind = e.WhichOneof("event")
            text = _event(kind, getattr(e, kind)) if kind else None
            if text:
                lines.append((e.timestamp, cpu, len(lines), f"{e.pid}\t{text}"))
    out = [f"# tracer: nop (read from a Perfetto trace)\n#P:{max((c for _, c, _, _ in lines), default=0) + 1}"]
    for ts, cpu, _, rest in sorted(lines):
        pid, text = rest.split("\t", 1)
        name = comm.get(int(pid), "<...>") if int(pid) else "<idle>"
        sec, ns = divmod(ts, 1_000_000_000)
        out.append(f"{name:>16}-{pid:<7} [{cpu:03}] d..2. {sec:>5}.{ns:09}: {text}")
    return "\n".join(out) + "\n"


def _event(kind: str, m) -> str:
    if kind == "sched_switch":
        return (f"sched_switch: prev_comm={m.prev_comm} prev_pid={m.prev_pid} prev_prio={m.prev_prio} "
                f"prev_state={state_text(m.prev_state)} ==> next_comm={m.next_comm} next_pid={m.next_pid} "
                f"next_prio={m.next_prio}")
    if kind in ("sched_waking", "sched_wakeup", "sched_wakeup_new"):
        return f"{kind}: comm={m.comm} pid={m.pid} prio={m.prio} target_cpu={m.target_cpu:03}"
    if kind == "sched_migrate_task":
        return (f"sched_migrate_task: comm={m.comm} pid={m.pid} prio={m.prio} orig_cpu={m.orig_cpu} "
                f"dest_cpu={m.dest_cpu}")
    if kind == "sched_process_exit":
        return f"sched_process_exit: comm={m.comm} pid={m.pid} prio={m.prio}"
    return ""
