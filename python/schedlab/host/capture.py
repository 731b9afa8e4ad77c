"""Recording the scheduler while the workers run (host.md §1.5).

Both mount tracefs at the run's own private mount point (``probe.Mounts``): the machine's
``/sys/kernel/tracing`` is never mounted or unmounted, so nobody else's tracing can lose its
mount when a run ends (perf finds a tracefs mounted anywhere in /proc/mounts and uses ours
instead of mounting its own).

* ``tracefs`` (default): a private instance, ``mono`` clock (= CLOCK_MONOTONIC, the workers'
  clock), non-overwrite (a full buffer drops new events and counts them instead of silently
  overwriting old ones), 16 MB per CPU, ``record-tgid``; read as text after the run, so no reader
  perturbs the measurement. Dropped events are summed from ``per_cpu/*/stats``. Beside it, a BPF
  program records every ``sched_switch`` (``bpf.py``): the switches tracefs loses on some VMs are
  added to the text where they belong; where BPF is not available the text is used as it is.
* ``perf``: ``perf record -a -k mono`` of the same tracepoints, then ``perf script --ns``; for
  machines where tracefs cannot be mounted or written. Lost events from ``perf report --stats``.
"""

from __future__ import annotations

import os
import platform
import re
import shutil
import signal
import subprocess
import time
from typing import Dict, List, Optional

from . import bpf
from .plan import HostError
from .probe import Mounts
from .undo import Journal, die_with_parent, write

EVENTS = ["sched_switch", "sched_waking", "sched_wakeup", "sched_wakeup_new", "sched_migrate_task",
          "sched_process_exit"]
BUFFER_KB = 16384

# The workers' blocking calls (clock_nanosleep, nanosleep, futex) by machine: their
# raw_syscalls:sys_exit records, written in the returning thread's own context, prove that a woken
# worker runs. Linux 6.18 on Firecracker loses every record the idle task of CPUs other than 0
# writes in task context, its switches to woken tasks among them (docs/model.md, "Missing records");
# the importer switches a task in at such a record (trace/import.rs recover_switch_in).
WAKE_SYSCALLS = {"x86_64": (230, 35, 202), "aarch64": (115, 101, 98)}


def wake_filter() -> Optional[str]:
    """The sys_exit filter for this machine's blocking calls; None where their numbers are unknown."""
    ids = WAKE_SYSCALLS.get(platform.machine())
    return " || ".join(f"id == {i}" for i in ids) if ids else None


def ring_bytes(seconds: float) -> int:
    """The BPF ring for a run this long: room for 4,000 switches per CPU-second (the busiest
    saved runs have about 1,700), a power of two between 1 and 256 MiB."""
    need = int((os.cpu_count() or 1) * max(seconds, 1.0) * 4000 * (bpf.RECORD.size + bpf.RING_HEADER))
    size = 1 << 20
    while size < need and size < 1 << 28:
        size <<= 1
    return size


class Tracefs:
    name = "tracefs"

    def __init__(self, journal: Journal, mounts: Mounts, seconds: float = 10.0) -> None:
        try:
            tracefs = mounts.get("tracefs")
        except HostError as e:
            raise HostError(f"{e} (try --backend perf)") from None
        self.inst = os.path.join(tracefs, "instances", f"schedlab-{os.getpid()}")
        journal.add(instance=self.inst)
        try:
            os.mkdir(self.inst)
            write(os.path.join(self.inst, "trace_clock"), "mono")
            write(os.path.join(self.inst, "buffer_size_kb"), str(BUFFER_KB))
            write(os.path.join(self.inst, "options", "overwrite"), "0")
            write(os.path.join(self.inst, "options", "record-tgid"), "1")
            for e in EVENTS:
                write(os.path.join(self.inst, "events", "sched", e, "enable"), "1")
        except OSError as e:
            raise HostError(f"tracefs instance {self.inst}: {e} (try --backend perf)") from None
        self.syscall_exits = False
        sys_exit = os.path.join(self.inst, "events", "raw_syscalls", "sys_exit")
        flt = wake_filter()
        if flt and os.path.isdir(sys_exit):
            try:
                write(os.path.join(sys_exit, "filter"), flt)
                write(os.path.join(sys_exit, "enable"), "1")
                self.syscall_exits = True
            except OSError:
                pass  # recorded without them: the importer then repairs less (and says so)
        # Every switch from BPF too, for the ones tracefs loses (bpf.py); without it (no bpf system
        # call, not permitted) the importer repairs what it can, as before.
        self.switches = bpf.SwitchRecorder(tracefs, ring_bytes(seconds))
        self.bpf_stats: Dict[str, int] = {}

    @property
    def bpf_info(self) -> Dict[str, object]:
        """What BPF recorded (after `stop`), or why it could not."""
        return {"unavailable": self.switches.reason} if self.switches.reason else dict(self.bpf_stats)

    def start(self) -> None:
        write(os.path.join(self.inst, "tracing_on"), "1")
        if not self.switches.reason:
            self.switches.start()

    def marker(self, text: str) -> None:
        write(os.path.join(self.inst, "trace_marker"), text)

    def stop(self, out: str) -> int:
        """Stop, write the trace text to `out` (with the switches only BPF saw); returns the number of
        dropped events."""
        switches, lost = self.switches.stop() if not self.switches.reason else ([], 0)
        write(os.path.join(self.inst, "tracing_on"), "0")
        dropped = 0
        for c in sorted(os.listdir(os.path.join(self.inst, "per_cpu"))):
            with open(os.path.join(self.inst, "per_cpu", c, "stats"), encoding="utf-8") as f:
                for line in f:
                    if line.startswith(("dropped events:", "overrun:")):
                        dropped += int(line.split(":")[1])
        if self.switches.reason:
            shutil.copyfile(os.path.join(self.inst, "trace"), out)
            return dropped
        with open(os.path.join(self.inst, "trace"), encoding="utf-8", errors="replace") as f:
            text, added = bpf.merge(f.read(), switches)
        with open(out, "w", encoding="utf-8") as f:
            f.write(text)
        self.bpf_stats = {"switches": len(switches), "added": added, "lost": lost}
        return dropped + lost


class Perf:
    name = "perf"
    bpf_info = {"unavailable": "not with the perf backend"}

    def __init__(self, journal: Journal, tmp: str, mounts: Mounts) -> None:
        self.perf = shutil.which("perf")
        if not self.perf:
            raise HostError("the perf backend needs `perf` on PATH")
        self.journal, self.data = journal, os.path.join(tmp, "perf.data")
        self.proc: Optional[subprocess.Popen] = None
        # perf resolves tracepoints through a tracefs mount: without one it would mount
        # /sys/kernel/tracing itself and leave it mounted.
        try:
            mounts.get("tracefs")
        except HostError:
            pass

    def start(self) -> None:
        cmd = [self.perf, "record", "-q", "-a", "-k", "mono", "-m", "4M", "-o", self.data] + \
            sum((["-e", f"sched:{e}"] for e in EVENTS), [])
        flt = wake_filter()
        self.syscall_exits = flt is not None
        if flt:
            cmd += ["-e", "raw_syscalls:sys_exit", "--filter", flt]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                     preexec_fn=die_with_parent)
        self.journal.add(kill=self.proc.pid)
        # perf writes its header once the events are open; give it until then.
        for _ in range(100):
            if self.proc.poll() is not None:
                err = self.proc.stderr.read().strip() if self.proc.stderr else ""
                raise HostError(f"perf record failed: {err}")
            if os.path.exists(self.data) and os.path.getsize(self.data) > 0:
                break
            time.sleep(0.02)
        time.sleep(0.1)

    def marker(self, text: str) -> None:
        pass

    def stop(self, out: str) -> int:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGINT)
        _, err = self.proc.communicate(timeout=60)
        if self.proc.returncode not in (0, -signal.SIGINT, 130):
            raise HostError(f"perf record failed: {err.strip()}")
        with open(out, "w", encoding="utf-8") as f:
            r = subprocess.run([self.perf, "script", "--ns", "-F", "comm,pid,tid,cpu,time,event,trace",
                                "-i", self.data], stdout=f, stderr=subprocess.PIPE, text=True)
        if r.returncode != 0:
            raise HostError(f"perf script failed: {r.stderr.strip()}")
        stats = subprocess.run([self.perf, "report", "--stats", "-i", self.data], capture_output=True,
                               text=True)
        lost: List[int] = [int(x) for x in re.findall(r"LOST(?:_SAMPLES)? events:\s*(\d+)", stats.stdout)]
        return sum(lost)


def backend(name: str, journal: Journal, tmp: str, mounts: Mounts,
            seconds: float = 10.0):  # -> Tracefs | Perf
    if name == "tracefs":
        return Tracefs(journal, mounts, seconds)
    if name == "perf":
        return Perf(journal, tmp, mounts)
    raise HostError(f"unknown capture backend {name!r}; expected tracefs or perf")
