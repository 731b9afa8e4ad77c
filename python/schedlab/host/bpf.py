"""Every ``sched_switch``, recorded by a BPF program where tracefs and perf lose some.

Why: on the Firecracker guests this project runs on (Linux 6.18.44), tracefs and ``perf record``
keep no record written in the idle task's own context on CPUs other than 0 (its switches to
woken or pulled tasks among them), nor any of PID 1's threads (docs/model.md, "Missing records").
The tracepoint itself fires: a BPF program attached to ``sched:sched_switch`` sees every one of
those switches (measured on the 2-vCPU VM, 2026-11-27: 481 switches out of idle on CPU 1 in 3 s,
tracefs 0 in the same kind of run). So a small BPF program records every switch into a BPF ring
buffer (no perf output path involved), read once after the run; ``merge`` adds the switches the
text trace lacks, each at its place among the text records (the text prints microseconds).

No library is needed: the program is 43 instructions assembled here (the eBPF instruction set,
Documentation/bpf/standardization/instruction-set.rst), loaded with the ``bpf`` system call and
attached through ``perf_event_open`` on the tracepoint (how bcc and bpftrace attach tracepoint
programs). Its fields' offsets are read from the tracepoint's ``format`` file. Nothing outlives
the process: the program, maps and perf event are file descriptors, freed when they are closed,
also after a SIGKILL, so the host runner's journal has nothing to undo for them.
"""

from __future__ import annotations

import bisect
import ctypes
import fcntl
import mmap
import os
import platform
import re
import struct
from typing import Dict, List, NamedTuple, Optional, Tuple

# System call numbers: (bpf, perf_event_open).
SYSCALLS = {"x86_64": (321, 298), "aarch64": (280, 241)}
BPF_MAP_CREATE, BPF_MAP_LOOKUP_ELEM, BPF_PROG_LOAD = 0, 1, 5
COMMANDS = {BPF_MAP_CREATE: "map create", BPF_MAP_LOOKUP_ELEM: "map lookup", BPF_PROG_LOAD: "program load"}
BPF_MAP_TYPE_ARRAY, BPF_MAP_TYPE_RINGBUF = 2, 27
BPF_PROG_TYPE_TRACEPOINT = 5
PERF_TYPE_TRACEPOINT, PERF_SAMPLE_RAW, PERF_FLAG_FD_CLOEXEC = 2, 1 << 10, 1 << 3
PERF_EVENT_IOC_ENABLE, PERF_EVENT_IOC_SET_BPF = 0x2400, 0x40042408
HELPER_MAP_LOOKUP, HELPER_KTIME_GET_NS, HELPER_SMP_PROCESSOR_ID, HELPER_RINGBUF_OUTPUT = 1, 5, 8, 130
RING_HEADER, RING_BUSY, RING_DISCARD = 8, 1 << 31, 1 << 30
# One record: ts, cpu, prev_pid, next_pid, prev_prio, next_prio, pad, prev_state, two comms.
RECORD = struct.Struct("<QIIIiiIq16s16s")
# The fields the program reads, with the size it reads them at.
FIELDS = {"prev_pid": 4, "next_pid": 4, "prev_prio": 4, "next_prio": 4, "prev_state": 8,
          "prev_comm": 16, "next_comm": 16}
# prev_state as the tracepoint's print format shows it (include/trace/events/sched.h, v6.18):
# bits 0x01-0x80 are S D T t X Z P I (none: R), TASK_REPORT_MAX (0x100) adds "+" (preempted).
STATE_LETTERS = "SDTtXZPI"
STATE_PREEMPTED = 0x100


class Switch(NamedTuple):
    ts_ns: int
    cpu: int
    prev_pid: int
    next_pid: int
    prev_prio: int
    next_prio: int
    prev_state: int
    prev_comm: str
    next_comm: str

    def line(self, us: int) -> str:
        """The switch as tracefs prints it at `us` µs (context: the outgoing task, as the
        tracepoint runs)."""
        s = self.prev_state & 0xff
        state = "|".join(c for i, c in enumerate(STATE_LETTERS) if s & (1 << i)) or "R"
        if self.prev_state & STATE_PREEMPTED:
            state += "+"
        ctx = "<idle>" if self.prev_pid == 0 else self.prev_comm
        return (f"{ctx:>16}-{self.prev_pid:<7} (bpf----) [{self.cpu:03d}] d..2. {us // 1_000_000:5d}."
                f"{us % 1_000_000:06d}: sched_switch: prev_comm={self.prev_comm} prev_pid={self.prev_pid} "
                f"prev_prio={self.prev_prio} prev_state={state} ==> next_comm={self.next_comm} "
                f"next_pid={self.next_pid} next_prio={self.next_prio}")


def _ins(op: int, dst: int = 0, src: int = 0, off: int = 0, imm: int = 0) -> bytes:
    return struct.pack("<BBhi", op, (src << 4) | dst, off, imm)


def _ld_map_fd(dst: int, fd: int) -> bytes:
    # ld_imm64 with BPF_PSEUDO_MAP_FD (src 1): the verifier swaps the fd for the map.
    return _ins(0x18, dst, 1, 0, fd) + _ins(0)


def program(off: Dict[str, int], ring_fd: int, drops_fd: int) -> bytes:
    """The BPF program: copy the switch's fields into a record, output it to the ring; when the
    ring is full, count the loss in `drops` instead."""
    ldxw, ldxdw, stxw, stxdw, stw = 0x61, 0x79, 0x63, 0x7b, 0x62
    mov64_reg, mov64_imm, add64_imm, call, exit_ = 0xbf, 0xb7, 0x07, 0x85, 0x95
    rec = -RECORD.size  # the record on the stack: r10 - 72
    p = [
        _ins(mov64_reg, 6, 1),                                   # r6 = ctx
        _ins(ldxw, 7, 6, off["prev_pid"]),
        _ins(ldxw, 8, 6, off["next_pid"]),
        _ins(call, imm=HELPER_KTIME_GET_NS),                     # CLOCK_MONOTONIC = trace_clock mono
        _ins(stxdw, 10, 0, rec),
        _ins(call, imm=HELPER_SMP_PROCESSOR_ID),
        _ins(stxw, 10, 0, rec + 8),
        _ins(stxw, 10, 7, rec + 12),
        _ins(stxw, 10, 8, rec + 16),
        _ins(ldxw, 1, 6, off["prev_prio"]), _ins(stxw, 10, 1, rec + 20),
        _ins(ldxw, 1, 6, off["next_prio"]), _ins(stxw, 10, 1, rec + 24),
        _ins(stw, 10, 0, rec + 28, 0),
        _ins(ldxdw, 1, 6, off["prev_state"]), _ins(stxdw, 10, 1, rec + 32),
        _ins(ldxdw, 1, 6, off["prev_comm"]), _ins(stxdw, 10, 1, rec + 40),
        _ins(ldxdw, 1, 6, off["prev_comm"] + 8), _ins(stxdw, 10, 1, rec + 48),
        _ins(ldxdw, 1, 6, off["next_comm"]), _ins(stxdw, 10, 1, rec + 56),
        _ins(ldxdw, 1, 6, off["next_comm"] + 8), _ins(stxdw, 10, 1, rec + 64),
        _ld_map_fd(1, ring_fd),
        _ins(mov64_reg, 2, 10), _ins(add64_imm, 2, imm=rec),
        _ins(mov64_imm, 3, imm=RECORD.size),
        _ins(mov64_imm, 4, imm=0),
        _ins(call, imm=HELPER_RINGBUF_OUTPUT),
    ]
    lost = [
        _ins(stw, 10, 0, rec - 8, 0),                            # key 0 of `drops`
        _ld_map_fd(1, drops_fd),
        _ins(mov64_reg, 2, 10), _ins(add64_imm, 2, imm=rec - 8),
        _ins(call, imm=HELPER_MAP_LOOKUP),
        _ins(0x15, 0, 0, 2, 0),                                  # if r0 == 0: skip the add
        _ins(mov64_imm, 1, imm=1),
        _ins(0xdb, 0, 1, 0, 0),                                  # lock *(u64 *)(r0) += r1
    ]
    slots = sum(len(i) for i in lost) // 8
    return b"".join(p) + _ins(0x15, 0, 0, slots, 0) + b"".join(lost) + \
        _ins(mov64_imm, 0, imm=0) + _ins(exit_)


def format_offsets(fmt: str) -> Dict[str, int]:
    """The offsets of FIELDS in a tracepoint `format` file; ValueError if one is missing or of
    another size than the program reads."""
    got: Dict[str, Tuple[int, int]] = {}
    for m in re.finditer(r"field:[^;]*?(\w+)(?:\[\d+\])?;\s*offset:(\d+);\s*size:(\d+);", fmt):
        got[m.group(1)] = (int(m.group(2)), int(m.group(3)))
    out = {}
    for name, size in FIELDS.items():
        if name not in got or got[name][1] != size or got[name][0] % min(size, 8):
            raise ValueError(f"sched_switch format: field {name} missing or not {size} bytes, aligned")
        out[name] = got[name][0]
    return out


class SwitchRecorder:
    """Load the program and its maps; `start` attaches it, `stop` detaches and returns the
    switches and the number lost to a full ring. `reason` says why it could not be opened."""

    def __init__(self, tracefs: str, ring_bytes: int) -> None:
        self.fds: List[int] = []
        self.tp_fd = -1
        self.reason: Optional[str] = None
        try:
            self._open(tracefs, ring_bytes)
        except (OSError, ValueError) as e:
            self.close()
            self.reason = str(e)

    def _bpf(self, cmd: int, attr: bytes) -> int:
        buf = ctypes.create_string_buffer(attr, len(attr))
        fd = self.libc.syscall(ctypes.c_long(self.nr[0]), ctypes.c_int(cmd), buf, ctypes.c_uint(len(attr)))
        if fd < 0:
            e = ctypes.get_errno()
            raise OSError(e, f"bpf {COMMANDS.get(cmd, cmd)}: {os.strerror(e)}")
        return fd

    def _open(self, tracefs: str, ring_bytes: int) -> None:
        nr = SYSCALLS.get(platform.machine())
        if nr is None:
            raise ValueError(f"no bpf system call number known for {platform.machine()}")
        self.nr = nr
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.libc.syscall.restype = ctypes.c_long
        tp = os.path.join(tracefs, "events", "sched", "sched_switch")
        with open(os.path.join(tp, "format"), encoding="utf-8") as f:
            off = format_offsets(f.read())
        with open(os.path.join(tp, "id"), encoding="utf-8") as f:
            tp_id = int(f.read())
        page = mmap.PAGESIZE
        self.ring_bytes = ring_bytes
        self.ring = self._bpf(BPF_MAP_CREATE, struct.pack("<7I16s", BPF_MAP_TYPE_RINGBUF, 0, 0, ring_bytes,
                                                          0, 0, 0, b"schedlab_sw").ljust(72, b"\0"))
        self.fds.append(self.ring)
        self.drops = self._bpf(BPF_MAP_CREATE, struct.pack("<7I16s", BPF_MAP_TYPE_ARRAY, 4, 8, 1, 0, 0, 0,
                                                           b"schedlab_lost").ljust(72, b"\0"))
        self.fds.append(self.drops)
        insns = program(off, self.ring, self.drops)
        ibuf = ctypes.create_string_buffer(insns, len(insns))
        lic = ctypes.create_string_buffer(b"GPL")
        log = ctypes.create_string_buffer(65536)
        attr = struct.pack("<IIQQIIQII16s", BPF_PROG_TYPE_TRACEPOINT, len(insns) // 8, ctypes.addressof(ibuf),
                           ctypes.addressof(lic), 1, len(log), ctypes.addressof(log), 0, 0,
                           b"schedlab_sw").ljust(144, b"\0")
        try:
            self.prog = self._bpf(BPF_PROG_LOAD, attr)
        except OSError as e:
            verifier = log.value.decode(errors="replace")[-300:]
            raise OSError(e.errno, f"{e.strerror}; verifier: {verifier}") from None
        self.fds.append(self.prog)
        self.cons = mmap.mmap(self.ring, page, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE, offset=0)
        self.data = mmap.mmap(self.ring, page + 2 * ring_bytes, mmap.MAP_SHARED, mmap.PROT_READ,
                              offset=page)
        pattr = struct.pack("<IIQQQQQI", PERF_TYPE_TRACEPOINT, 128, tp_id, 1, PERF_SAMPLE_RAW, 0, 1,
                            1).ljust(128, b"\0")  # disabled until start()
        abuf = ctypes.create_string_buffer(pattr, len(pattr))
        fd = self.libc.syscall(ctypes.c_long(nr[1]), abuf, ctypes.c_int(-1), ctypes.c_int(0), ctypes.c_int(-1),
                               ctypes.c_ulong(PERF_FLAG_FD_CLOEXEC))
        if fd < 0:
            e = ctypes.get_errno()
            raise OSError(e, f"perf_event_open of sched:sched_switch: {os.strerror(e)}")
        self.tp_fd = fd
        fcntl.ioctl(fd, PERF_EVENT_IOC_SET_BPF, self.prog)

    def start(self) -> None:
        fcntl.ioctl(self.tp_fd, PERF_EVENT_IOC_ENABLE, 0)

    def stop(self) -> Tuple[List[Switch], int]:
        """Detach, read every record, free everything; (switches in time order, lost). A failed
        read gives none and says why in `reason` (the text trace is still good without them)."""
        try:
            return self._read()
        except OSError as e:
            self.reason = f"reading the BPF ring: {e}"
            return [], 0
        finally:
            self.close()

    def _read(self) -> Tuple[List[Switch], int]:
        os.close(self.tp_fd)  # detaches the program: nothing more is written
        self.tp_fd = -1
        key = ctypes.create_string_buffer(4)
        val = ctypes.create_string_buffer(8)
        self._bpf(BPF_MAP_LOOKUP_ELEM, struct.pack("<IIQQQ", self.drops, 0, ctypes.addressof(key),
                                                   ctypes.addressof(val), 0))
        lost = struct.unpack("<Q", val.raw)[0]
        page = mmap.PAGESIZE
        cons = struct.unpack_from("<Q", self.cons, 0)[0]
        prod = struct.unpack_from("<Q", self.data, 0)[0]
        mask = self.ring_bytes - 1
        out: List[Switch] = []
        while cons < prod:
            hdr = struct.unpack_from("<I", self.data, page + (cons & mask))[0]
            if hdr & RING_BUSY:
                break
            n = hdr & ~(RING_BUSY | RING_DISCARD)
            if not hdr & RING_DISCARD and n == RECORD.size:
                r = RECORD.unpack_from(self.data, page + ((cons + RING_HEADER) & mask))
                out.append(Switch(r[0], r[1], r[2], r[3], r[4], r[5], r[7],
                                  r[8].split(b"\0")[0].decode(errors="replace"),
                                  r[9].split(b"\0")[0].decode(errors="replace")))
            cons += (n + RING_HEADER + 7) & ~7
        out.sort(key=lambda s: s.ts_ns)
        return out, lost

    def close(self) -> None:
        for m in ("cons", "data"):
            if getattr(self, m, None) is not None:
                getattr(self, m).close()
                setattr(self, m, None)
        for fd in ([self.tp_fd] if self.tp_fd >= 0 else []) + self.fds:
            os.close(fd)
        self.tp_fd, self.fds = -1, []


LINE = re.compile(r"^\s*(?:.*?)-(\d+)\s+(?:\(\s*(?:\d+|-+)\)\s+)?\[(\d+)\]\s+\S+\s+(\d+)\.(\d{6}):\s+([\w:]+):")
SWITCH_PIDS = re.compile(r"prev_pid=(\d+) .*next_pid=(\d+)")
# A BPF switch matches a text switch on its CPU between the same tasks when it is this many µs
# after it (the BPF program runs after tracefs's probe: 3-5 µs later on the 2-vCPU VM, up to
# ~30 µs when an interrupt comes between) or a little before.
MATCH_US = (-5, 200)
SCAN_US = 1000  # how far (µs) around its estimated time a missing switch's context is looked for


def _us(ns: int) -> int:
    return (ns + 500) // 1000  # as tracefs rounds (trace_output.c, ns2usecs)


class _Text:
    """The text trace's records: per line (context pid, CPU, µs) or None; per CPU its lines."""

    def __init__(self, text: str) -> None:
        self.lines = text.splitlines(keepends=True)
        self.ctx: List[int] = []
        self.us: List[int] = []  # a line without a record carries the time before it
        self.by_cpu: Dict[int, List[int]] = {}
        self.switches: Dict[int, List[Tuple[int, int, int]]] = {}  # cpu -> (line, prev, next)
        last = 0
        for i, ln in enumerate(self.lines):
            m = LINE.match(ln)
            if not m:
                self.ctx.append(-1)
                self.us.append(last)
                continue
            ctx, cpu = int(m.group(1)), int(m.group(2))
            last = int(m.group(3)) * 1_000_000 + int(m.group(4))
            self.ctx.append(ctx)
            self.us.append(last)
            self.by_cpu.setdefault(cpu, []).append(i)
            if m.group(5) == "sched_switch":
                p = SWITCH_PIDS.search(ln, m.end())
                if p:
                    self.switches.setdefault(cpu, []).append((i, int(p.group(1)), int(p.group(2))))

    def first_ctx(self, cpu: int, pid: int, after: int, before: int, until_us: int) -> int:
        """The first line on `cpu` in (after, before) written in `pid`'s context, else `before`."""
        ls = self.by_cpu.get(cpu, [])
        for k in range(bisect.bisect_right(ls, after), len(ls)):
            i = ls[k]
            if i >= before or self.us[i] > until_us:
                break
            if self.ctx[i] == pid:
                return i
        return before

    def last_ctx(self, cpu: int, pid: int, after: int, before: int, from_us: int) -> int:
        """The last line on `cpu` in (after, before) written in `pid`'s context, else `after`."""
        ls = self.by_cpu.get(cpu, [])
        for k in range(bisect.bisect_left(ls, before) - 1, -1, -1):
            i = ls[k]
            if i <= after or self.us[i] < from_us:
                break
            if self.ctx[i] == pid:
                return i
        return after


def _align(text: _Text, switches: List[Switch]) -> Tuple[List[Tuple[int, int, Switch]], List[int]]:
    """Per CPU, the text's switches are a subsequence of BPF's: match them in order. Returns the
    unmatched BPF switches, each with the lines of the matched text switches around it, and the
    matched pairs' time offsets (BPF - text, µs)."""
    by_cpu: Dict[int, List[Switch]] = {}
    for s in switches:
        by_cpu.setdefault(s.cpu, []).append(s)
    missing: List[Tuple[int, int, Switch]] = []
    offsets: List[int] = []
    for cpu, bl in sorted(by_cpu.items()):
        j, lo = 0, -1
        for line, prev, nxt in text.switches.get(cpu, []):
            t = text.us[line]
            k = j
            while k < len(bl) and _us(bl[k].ts_ns) - t <= MATCH_US[1]:
                b = bl[k]
                if b.prev_pid == prev and b.next_pid == nxt and _us(b.ts_ns) - t >= MATCH_US[0]:
                    break
                k += 1
            else:
                continue  # a text switch BPF did not see (before it started or after it stopped)
            missing.extend((lo, line, b) for b in bl[j:k])
            offsets.append(_us(bl[k].ts_ns) - t)
            j, lo = k + 1, line
        missing.extend((lo, len(text.lines), b) for b in bl[j:])
    return missing, offsets


def merge(text: str, switches: List[Switch]) -> Tuple[str, int]:
    """The text trace with the switches it lacks added; (text, added).

    Each missing switch goes between the matched text switches around it on its CPU, after the
    records there written in the outgoing task's context and before those in the incoming one's
    (a CPU's records carry the pid of the task it runs), at its BPF time less the median offset
    of the matched pairs, kept within its neighbours' times so the text stays in time order."""
    tx = _Text(text)
    missing, offsets = _align(tx, switches)
    if not missing:
        return text, 0
    offset = sorted(offsets)[len(offsets) // 2] if offsets else 0
    n = len(tx.lines)
    at: Dict[int, List[Tuple[int, str]]] = {}
    floor: Dict[int, Tuple[int, int]] = {}  # cpu -> (line index, µs) the next one cannot precede
    for lo, hi, s in sorted(missing, key=lambda m: (m[2].cpu, m[2].ts_ns)):
        est = _us(s.ts_ns) - offset
        fl, fl_us = floor.get(s.cpu, (-1, 0))
        start = max(lo, fl)
        hi = tx.first_ctx(s.cpu, s.next_pid, start, hi, est + SCAN_US)
        lo = tx.last_ctx(s.cpu, s.prev_pid, start, hi, est - SCAN_US)
        p = min(max(bisect.bisect_right(tx.us, est), lo + 1), hi)
        before = max(tx.us[p - 1] if p > 0 else 0, fl_us if fl == p - 1 else 0)
        us = min(max(est, before), tx.us[p] if p < n else est)
        at.setdefault(p, []).append((us, s.line(us) + "\n"))
        floor[s.cpu] = (p - 1, us)
    out: List[str] = []
    for i in sorted(at):  # several CPUs' switches at one place: in time order (sort is stable)
        at[i].sort(key=lambda x: x[0])
    for i, ln in enumerate(tx.lines):
        out.extend(x[1] for x in at.get(i, ()))
        out.append(ln)
    out.extend(x[1] for x in at.get(n, ()))
    return "".join(out), len(missing)
