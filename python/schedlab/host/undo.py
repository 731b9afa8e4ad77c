"""The runner's undo journal: every change the host runner makes to the machine is written here
*before* it is made, as one JSON line, and undone in reverse order by :func:`undo`.

Both the runner (at the end of every run, on success, error and Ctrl-C) and its cleanup guard
(``python -m schedlab.host.guard``, when the runner dies, even by SIGKILL) call :func:`undo`;
every step is idempotent, and the runner empties the journal once it has undone it, so the
guard then finds nothing to do.

Actions: ``kill`` a worker process, ``instance`` (turn off and remove a tracefs instance),
``rmdir`` a cgroup (retried while its last tasks exit), ``umount`` one of the run's private
mount points (``probe.Mounts``; detached lazily if busy), ``restore`` a file's previous content
(a knob). :func:`remove_tmp` then removes the run's temporary directory, but never while
anything is still mounted below it.
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import signal
import subprocess
import time
from typing import Any, Dict, List

_LIBC = ctypes.CDLL(None, use_errno=True)


class Journal:
    def __init__(self, path: str) -> None:
        self.path = path
        with open(path, "w", encoding="utf-8"):
            pass

    def add(self, **action: Any) -> None:
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(json.dumps(action) + "\n")
            f.flush()
            os.fsync(f.fileno())

    def undo(self) -> List[str]:
        """Undo everything, then empty the journal; returns what could not be undone."""
        problems = undo(self.path)
        with open(self.path, "w", encoding="utf-8"):
            pass
        return problems


def _read(path: str) -> List[Dict[str, Any]]:
    try:
        with open(path, encoding="utf-8") as f:
            return [json.loads(line) for line in f if line.strip()]
    except (OSError, ValueError):
        return []


def _release_rt(path: str) -> None:
    # A cgroup v1 group's RT runtime (RT_GROUP_SCHED) still counts against its parent for a while
    # after rmdir returns (the kernel drops the task group from its parent's list later), so a run
    # that starts right after could find the root's runtime taken (EINVAL): give it back first.
    rt = os.path.join(path, "cpu.rt_runtime_us")
    if os.path.exists(rt):
        try:
            write(rt, "0")
        except OSError:
            pass  # RT tasks still in it (EBUSY): they are being reaped; the next try releases it


def _rmdir(path: str) -> None:
    # Killed tasks leave their cgroup when they are reaped: wait up to 5 s.
    for _ in range(100):
        _release_rt(path)
        try:
            os.rmdir(path)
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.05)
    os.rmdir(path)


def die_with_parent() -> None:
    """``preexec_fn`` of every child of the runner: SIGKILL it when the runner dies, covering the
    moment between its start and its ``kill`` entry in the journal (the guard kills it too)."""
    ppid = os.getppid()
    _LIBC.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    if os.getppid() != ppid:  # the runner died before prctl
        os._exit(1)


def write(path: str, value: str) -> None:
    """Write `value` to a kernel file (tracefs, cgroupfs, procfs)."""
    with open(path, "w", encoding="utf-8") as f:
        f.write(value)


def _umount(where: str) -> None:
    if os.path.ismount(where):
        r = subprocess.run(["umount", where], capture_output=True, text=True)
        if r.returncode != 0:
            # Only this run uses the mount point: detaching it cannot hurt anyone.
            r = subprocess.run(["umount", "-l", where], capture_output=True, text=True)
        if r.returncode != 0:
            raise OSError(r.stderr.strip())


def undo(path: str) -> List[str]:
    problems = []
    for a in reversed(_read(path)):
        try:
            if "kill" in a:
                try:
                    os.kill(int(a["kill"]), signal.SIGKILL)
                except ProcessLookupError:
                    pass
                # Reap it if it is our child, so that its cgroup empties.
                try:
                    os.waitpid(int(a["kill"]), 0)
                except ChildProcessError:
                    pass
            elif "instance" in a:
                if os.path.isdir(a["instance"]):
                    write(os.path.join(a["instance"], "tracing_on"), "0")
                    os.rmdir(a["instance"])
            elif "rmdir" in a:
                _rmdir(a["rmdir"])
            elif "umount" in a:
                _umount(a["umount"])
            elif "restore" in a:
                write(a["restore"], a["value"])
        except OSError as e:
            problems.append(f"{json.dumps(a)}: {e}")
    return problems


def _mounts_below(path: str) -> List[str]:
    path = os.path.realpath(path)
    try:
        with open("/proc/self/mounts", encoding="utf-8") as f:
            points = [line.split()[1].replace("\\040", " ") for line in f if line.strip()]
    except OSError:
        return [path]  # cannot tell: assume the worst
    return [m for m in points if m == path or m.startswith(path + "/")]


def remove_tmp(tmp: str) -> List[str]:
    """Remove the run's temporary directory unless something is still mounted below it (removing
    files through a tracefs or debugfs mount would change the kernel)."""
    if not os.path.isdir(tmp):
        return []
    busy = _mounts_below(tmp)
    if busy:
        return [f"{tmp} kept: still mounted below it: {', '.join(busy)}"]
    shutil.rmtree(tmp, ignore_errors=True)
    return [f"{tmp}: could not be removed"] if os.path.exists(tmp) else []
