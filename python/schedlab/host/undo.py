"""The runner's undo journal: every change the host runner makes to the machine is written here
*before* it is made, as one JSON line, and undone in reverse order by :func:`undo`.

Both the runner (at the end of every run, on success, error and Ctrl-C) and its cleanup guard
(``python -m schedlab.host.guard``, when the runner dies, even by SIGKILL) call :func:`undo`;
every step is idempotent, and the runner empties the journal once it has undone it, so the
guard then finds nothing to do.

Actions: ``kill`` a worker process, ``instance`` (turn off and remove a tracefs instance),
``rmdir`` a cgroup (retried while its last tasks exit), ``umount`` a filesystem the runner
mounted, ``restore`` a file's previous content (a knob).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from typing import Any, Dict, List


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


def _rmdir(path: str) -> None:
    # Killed tasks leave their cgroup when they are reaped: wait up to 5 s.
    for _ in range(100):
        try:
            os.rmdir(path)
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.05)
    os.rmdir(path)


def write(path: str, value: str) -> None:
    """Write `value` to a kernel file (tracefs, cgroupfs, procfs)."""
    with open(path, "w", encoding="utf-8") as f:
        f.write(value)


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
                if os.path.ismount(a["umount"]):
                    r = subprocess.run(["umount", a["umount"]], capture_output=True, text=True)
                    if r.returncode != 0:
                        raise OSError(r.stderr.strip())
            elif "restore" in a:
                write(a["restore"], a["value"])
        except OSError as e:
            problems.append(f"{json.dumps(a)}: {e}")
    return problems
