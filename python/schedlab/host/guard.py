"""Cleanup guard of ``schedlab host run`` (``python -m schedlab.host.guard JOURNAL TMPDIR``).

Started by the runner in its own session (so Ctrl-C in the terminal does not reach it) with a
pipe on stdin and the host lock's descriptor (``lock.py``). When the pipe closes, because the
runner finished or because it was killed (even with SIGKILL), the guard undoes whatever the
runner's journal still lists (``undo.py``): child processes killed (workers, the calibration
run, perf), tracefs instance removed, cgroups removed, private mounts undone, knobs restored;
then it removes the run's temporary directory and exits, which releases the host lock if the
runner is gone: the next run cannot start before the machine is clean.
"""

from __future__ import annotations

import signal
import sys

from .undo import remove_tmp, undo


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        sys.stdin.buffer.read()
    finally:
        problems = undo(sys.argv[1])
        if len(sys.argv) > 2 and not problems:
            problems = remove_tmp(sys.argv[2])
        for p in problems:
            print(f"schedlab host guard: could not undo {p}", file=sys.stderr)


if __name__ == "__main__":
    main()
