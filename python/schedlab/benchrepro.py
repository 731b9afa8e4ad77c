"""The speed suite's ``repro all`` line (issue 18: "``schedlab repro all`` ≤ 1 s of CPU beyond
plotting"): the CPU of one ``schedlab repro all``, split into plotting, the simulations and the
rest, measured in a child process (``python -m schedlab.benchrepro OUT_DIR``, which prints one
JSON object; benchsuite.py runs it and prints the lines).

* **simulations**: CPU inside ``schedlab._native.simulate``, timed exactly around each call.
* **plotting**: CPU while a frame of matplotlib, PIL or ``schedlab/repro/figures.py`` is on the
  Python stack, found by a CPU-time profiling timer (``ITIMER_PROF``, every millisecond of CPU):
  each time its handler runs, the CPU used since it last ran goes to what the stack shows then.
  Why that attributes long C calls (Agg's rendering, a simulation) to their caller: a signal's
  Python handler runs at the next bytecode boundary, which after a C call returns is in the
  frame that made the call, so the whole call is charged there.
* **beyond plotting**: everything else in the process, simulations included (the goal's figure).
* **children**: CPU of child processes (SimSo, which the ILLF experiment runs only where the
  optional ``.venv-simso`` exists, to regenerate its recorded job counts): not ours, shown apart.

Imports count: the child starts the clock before importing schedlab, so what the CLI imports
(numpy among them) is in the figure, as it is in a ``schedlab repro all`` from the shell.
"""

from __future__ import annotations

import time

_T0 = time.process_time()

import json  # noqa: E402
import resource  # noqa: E402
import signal  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402
from types import FrameType  # noqa: E402
from typing import Dict, Optional  # noqa: E402

PLOTTING_PATHS = ("/matplotlib/", "/PIL/", "/mpl_toolkits/", "schedlab/repro/figures.py")
SAMPLE_S = 0.001


class Split:
    """CPU seconds charged to plotting and to the rest by the profiling timer's handler."""

    def __init__(self) -> None:
        self.plotting = 0.0
        self.rest = 0.0
        self.samples = 0
        self.last = time.process_time()

    def charge(self, frame: Optional[FrameType]) -> None:
        now = time.process_time()
        dt, self.last = now - self.last, now
        self.samples += 1
        f = frame
        while f is not None:
            if any(p in f.f_code.co_filename for p in PLOTTING_PATHS):
                self.plotting += dt
                return
            f = f.f_back
        self.rest += dt

    def handler(self, signum: int, frame: Optional[FrameType]) -> None:
        self.charge(frame)


def measure(out_dir: str) -> Dict[str, float]:
    """Run ``repro all`` into ``out_dir`` in this process and return the CPU split."""
    from . import _native, cli

    sims = {"cpu": 0.0, "calls": 0}
    native_simulate = _native.simulate

    def timed_simulate(*args, **kwargs):
        t = time.process_time()
        try:
            return native_simulate(*args, **kwargs)
        finally:
            sims["cpu"] += time.process_time() - t
            sims["calls"] += 1

    _native.simulate = timed_simulate  # api.py calls it through the module
    split = Split()
    split.rest = split.last - _T0  # interpreter start to here: imports, not plotting
    signal.signal(signal.SIGPROF, split.handler)
    signal.setitimer(signal.ITIMER_PROF, SAMPLE_S, SAMPLE_S)
    try:
        code = cli.main(["repro", "all", "--out", out_dir, "--quiet"])
    except SystemExit as e:
        code = e.code
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0, 0)
        split.charge(sys._getframe())
    if code not in (0, None):
        raise SystemExit(f"schedlab repro all: exit {code}")
    total = time.process_time() - _T0
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {"total_s": total, "plotting_s": split.plotting, "beyond_plotting_s": split.rest,
            "simulations_s": sims["cpu"], "simulations": sims["calls"], "samples": split.samples,
            "children_s": kids.ru_utime + kids.ru_stime}


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: python -m schedlab.benchrepro OUT_DIR", file=sys.stderr)
        sys.exit(2)
    print(json.dumps(measure(str(Path(sys.argv[1])))))
