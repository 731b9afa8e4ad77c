"""Cleanup guard of ``schedlab host run`` (``python -m schedlab.hostguard INSTANCE MOUNTED PIDFILE``).

Started by the runner in its own session with a pipe on stdin. When the pipe closes, because
the runner finished or because it was killed (even with SIGKILL), the guard kills any worker
listed in PIDFILE, turns tracing off, removes the tracefs instance and unmounts tracefs if the
runner had mounted it. Every step is idempotent, so a runner that cleaned up itself leaves the
guard nothing to do.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys

TRACEFS = "/sys/kernel/tracing"


def cleanup(instance: str, mounted: bool, pidfile: str) -> None:
    try:
        with open(pidfile, encoding="utf-8") as f:
            pids = [int(x) for x in f.read().split()]
    except (OSError, ValueError):
        pids = []
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    if os.path.isdir(instance):
        try:
            with open(os.path.join(instance, "tracing_on"), "w") as f:
                f.write("0")
        except OSError:
            pass
        try:
            os.rmdir(instance)
        except OSError:
            pass
    if mounted and os.path.ismount(TRACEFS):
        subprocess.run(["umount", TRACEFS], check=False, capture_output=True)


def main() -> None:
    instance, mounted, pidfile = sys.argv[1], sys.argv[2] == "1", sys.argv[3]
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        sys.stdin.buffer.read()
    finally:
        cleanup(instance, mounted, pidfile)


if __name__ == "__main__":
    main()
