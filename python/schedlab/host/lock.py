"""One host run at a time per machine: an ``flock`` on ``/run/schedlab-host.lock``.

* Held for the whole run, cleanup included. The cleanup guard (``guard.py``) inherits the same
  open file description, so when the runner is SIGKILLed the lock stays held until the guard has
  undone everything and exits: a lock is released only when *every* descriptor of it is closed.
  Nothing ever calls ``LOCK_UN`` (that would release it for all holders at once).
* The holder writes ``PID START_TIME COMMAND`` into the file; a run that finds the lock taken says
  who holds it, then waits (the default), waits at most ``timeout`` seconds, or refuses at once
  (``wait=False``: CLI ``--no-wait``).
* ``SCHEDLAB_HOST_LOCK_FD=N``: a parent that holds the lock (the test suite, around each test)
  lets its child runs use it: fd N, inherited, is the same open file description, so ``flock``
  on it succeeds at once. An fd that is not the lock file, or does not hold it, is ignored.
"""

from __future__ import annotations

import fcntl
import os
import sys
import time
from typing import Optional

from .plan import HostError

LOCK_PATH = "/run/schedlab-host.lock"
ENV_FD = "SCHEDLAB_HOST_LOCK_FD"


class HostBusy(HostError):
    """Another host run holds the lock (and we were told not to wait, or waited long enough)."""


def holder(path: str = LOCK_PATH) -> str:
    """Who holds (or last held) the lock, as written by that run: 'pid N, started T (COMMAND)'."""
    try:
        with open(path, encoding="utf-8") as f:
            pid, start, cmd = (f.read().strip().split(" ", 2) + ["", "", ""])[:3]
    except OSError:
        return "an unknown process"
    if not pid.isdigit():
        return "an unknown process"
    return f"pid {pid}, started {start}" + (f" ({cmd})" if cmd else "")


def _inherited(path: str) -> Optional[int]:
    v = os.environ.get(ENV_FD, "")
    if not v.isdigit():
        return None
    try:
        st, mine = os.fstat(int(v)), os.stat(path)
    except OSError:
        return None
    if (st.st_dev, st.st_ino) != (mine.st_dev, mine.st_ino):
        return None
    fd = os.dup(int(v))
    os.set_inheritable(fd, False)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return fd
    except OSError:
        os.close(fd)
        return None


def acquire(wait: bool = True, timeout: Optional[float] = None, path: str = LOCK_PATH,
            quiet: bool = False) -> int:
    """Take the host lock; returns its fd (close it to release). HostBusy when not waiting, or on timeout."""
    fd = _inherited(path)
    if fd is not None:
        return fd
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except OSError as e:
        raise HostError(f"cannot open the host lock {path}: {e.strerror}") from None
    t0 = time.monotonic()
    said = False
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            pass
        if not wait or (timeout is not None and time.monotonic() - t0 >= timeout):
            os.close(fd)
            waited = f" after waiting {timeout:g} s" if wait else ""
            raise HostBusy(f"another host run holds {path} ({holder(path)}){waited}; one host run at a "
                           "time per machine") from None
        if not said and not quiet:
            who = holder(path)
            # The holder writes its record just after taking the lock: give it a moment before
            # saying the holder is unknown.
            if who != "an unknown process" or time.monotonic() - t0 >= 1.0:
                print(f"schedlab: waiting for the host lock {path}, held by {who}", file=sys.stderr,
                      flush=True)
                said = True
        time.sleep(0.02 if not said else 0.1)
    start = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    cmd = " ".join(os.path.basename(a) if i == 0 else a for i, a in enumerate(sys.argv))[:200]
    # Write, then cut the old tail: the file never reads empty while we hold it.
    rec = f"{os.getpid()} {start} {cmd}\n".encode()
    os.pwrite(fd, rec, 0)
    os.ftruncate(fd, len(rec))
    return fd
