"""Cleanup guard of ``schedlab host run`` (``python -m schedlab.host.guard JOURNAL``).

Started by the runner in its own session (so Ctrl-C in the terminal does not reach it) with a
pipe on stdin. When the pipe closes, because the runner finished or because it was killed (even
with SIGKILL), the guard undoes whatever the runner's journal still lists (``undo.py``): workers
killed, tracefs instance removed, cgroups removed, mounts undone, knobs restored.
"""

from __future__ import annotations

import signal
import sys

from .undo import undo


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        sys.stdin.buffer.read()
    finally:
        for p in undo(sys.argv[1]):
            print(f"schedlab host guard: could not undo {p}", file=sys.stderr)


if __name__ == "__main__":
    main()
