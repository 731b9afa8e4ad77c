"""Perfetto traces (``.pftrace``) read back as tracefs text, so ``schedlab trace import`` takes the
files ``schedlab run --trace X.pftrace`` writes (and other Perfetto traces with ftrace sched
events). Decoding needs the ``perfetto`` package's protobuf classes (the test extra)."""

from __future__ import annotations

from types import SimpleNamespace
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
    # Per CPU: (timestamp, order, kind, event); kind "full" is an FtraceEvent, "switch" and
    # "waking" come from a bundle's compact_sched columns (delta-encoded timestamps).
    per_cpu: Dict[int, List[Tuple[int, int, str, object]]] = {}
    for p in trace.packet:
        if p.HasField("process_tree"):
            for t in p.process_tree.threads:
                comm[t.tid] = t.name
        if not p.HasField("ftrace_events"):
            continue
        b = p.ftrace_events
        evs = per_cpu.setdefault(b.cpu, [])
        for e in b.event:
            evs.append((e.timestamp, len(evs), "full", e))
        if b.HasField("compact_sched"):
            evs.extend(_compact(b.compact_sched, len(evs)))
    lines: List[Tuple[int, int, int, str]] = []
    for cpu, evs in sorted(per_cpu.items()):
        evs.sort(key=lambda x: (x[0], x[1]))
        for ts, pid, text in _cpu_lines(cpu, evs):
            lines.append((ts, cpu, len(lines), f"{pid}\t{text}"))
    out = [f"# tracer: nop (read from a Perfetto trace)\n#P:{max((c for _, c, _, _ in lines), default=0) + 1}"]
    for ts, cpu, _, rest in sorted(lines):
        pid, text = rest.split("\t", 1)
        name = comm.get(int(pid), "<...>") if int(pid) else "<idle>"
        sec, ns = divmod(ts, 1_000_000_000)
        out.append(f"{name:>16}-{pid:<7} [{cpu:03}] d..2. {sec:>5}.{ns:09}: {text}")
    return "\n".join(out) + "\n"


def _cpu_lines(cpu: int, evs: List[Tuple[int, int, str, object]]) -> List[Tuple[int, int, str]]:
    """(timestamp, pid of the task on the CPU, event text) of one CPU's events in time order. The
    task on the CPU gives what compact events leave out: a switch's prev_* and a waking's waker.
    CPUs start idle. Compact events are worded by :func:`_event`, as full ones are."""
    out: List[Tuple[int, int, str]] = []
    cur = (f"swapper/{cpu}", 0, 120)
    for ts, _, kind, e in evs:
        if kind == "full":
            k = e.WhichOneof("event")
            text = _event(k, getattr(e, k)) if k else None
            pid = e.pid
            if k == "sched_switch":
                m = e.sched_switch
                cur = (m.next_comm, m.next_pid, m.next_prio)
        elif kind == "switch":
            state, npid, nprio, ncomm = e
            (pc, pp, ppr), pid = cur, cur[1]
            text = _event("sched_switch", SimpleNamespace(
                prev_comm=pc, prev_pid=pp, prev_prio=ppr, prev_state=state,
                next_comm=ncomm, next_pid=npid, next_prio=nprio))
            cur = (ncomm, npid, nprio)
        else:
            wpid, target, prio, wcomm = e
            pid = cur[1]
            text = _event("sched_waking", SimpleNamespace(comm=wcomm, pid=wpid, prio=prio, target_cpu=target))
        if text:
            out.append((ts, pid, text))
    return out


def _compact(c, order: int) -> List[Tuple[int, int, str, object]]:
    """The events of a CompactSched message (perfetto ftrace_event_bundle.proto)."""
    out: List[Tuple[int, int, str, object]] = []
    ts = 0
    for i, delta in enumerate(c.switch_timestamp):
        ts += delta
        out.append((ts, order + len(out), "switch", (c.switch_prev_state[i], c.switch_next_pid[i],
                                                     c.switch_next_prio[i],
                                                     c.intern_table[c.switch_next_comm_index[i]])))
    ts = 0
    for i, delta in enumerate(c.waking_timestamp):
        ts += delta
        out.append((ts, order + len(out), "waking", (c.waking_pid[i], c.waking_target_cpu[i], c.waking_prio[i],
                                                     c.intern_table[c.waking_comm_index[i]])))
    return out


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
