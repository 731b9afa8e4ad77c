"""``python -m schedlab.bench``: simulator throughput in events per second.

The workload is the one of the foundation issue: 1,000 CPU-bound tasks with
nice -20..19 on 8 CPUs for 60 simulated seconds, ticks, load balancing and
metrics on. "Scheduling events" = engine events (ticks, ends of work
segments, timer wakeups) + context switches. The wall time covers the
whole ``simulate()`` call (JSON encoding, parsing, setup, the run and the
metrics struct built in Rust), best of ``--repeat`` runs; converting the
metrics to Python objects happens lazily, after the clock stops. Wall
time is measured here, in the benchmark, never in tests.

``--scheduler`` takes a comma-separated list (default: every registered
scheduler); each line also gives its wall time per event relative to
eevdf's in the same invocation (issue 14 asks for no scheduler slower than
3x eevdf per event).
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from .api import schedulers, simulate


def hogs(n: int, seconds: int) -> dict:
    return {
        "global": {"duration": seconds},
        "tasks": {f"hog{i}": {"priority": (i % 40) - 20, "run": 1_000_000} for i in range(n)},
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tasks", type=int, default=1000)
    p.add_argument("--cpus", type=int, default=8)
    p.add_argument("--seconds", type=int, default=60)
    p.add_argument("--repeat", type=int, default=10, help="report the best of N runs")
    p.add_argument("--json", action="store_true")
    p.add_argument("--scheduler", help="comma-separated schedulers (default: all registered)")
    p.add_argument("--suite", action="store_true",
                   help="print issue 18's speed goals as ratios measured now (schedlab/benchsuite.py)")
    p.add_argument("--simso", nargs="?", const="auto", metavar="PYTHON",
                   help="with --suite: the Python of a virtualenv with SimSo 0.8.5 "
                        "(default: .venv-simso, made by scripts/simso_venv.sh)")
    p.add_argument("--big-seconds", type=float, default=10.0,
                   help="with --suite: simulated seconds of the 256-CPU run (the goal is for 600)")
    p.add_argument("--instructions", action="store_true",
                   help="count instructions per event with valgrind on the suite's workloads, the figure "
                        "that repeats from hour to hour (schedlab/benchinstr.py)")
    p.add_argument("--base", metavar="REV",
                   help="with --instructions: also count a git revision's build, in the same run, and "
                        "compare (ratio, identical output)")
    a = p.parse_args()
    if a.base and not a.instructions:
        p.error("--base goes with --instructions")
    if a.instructions:
        from . import benchinstr

        try:
            benchinstr.main(a.base)
        except benchinstr.BenchError as e:
            print(f"schedlab.bench: error: {e}", file=sys.stderr)
            sys.exit(2)
        return
    if a.suite:
        from . import benchsuite

        benchsuite.main(a.simso, min(a.repeat, 3), a.big_seconds)
        return
    wl = hogs(a.tasks, a.seconds)
    names = a.scheduler.split(",") if a.scheduler else [s["name"] for s in schedulers()["schedulers"]]
    if "eevdf" not in names:
        names.insert(0, "eevdf")  # the reference of the per-event ratio
    out = {}
    for sched in names:
        wall = float("inf")
        try:
            for _ in range(max(1, a.repeat)):
                t0 = time.perf_counter()
                r = simulate(wl, sched, a.cpus)
                wall = min(wall, time.perf_counter() - t0)
                # (metrics are converted to Python objects lazily, after timing)
        except Exception as e:  # a scheduler that cannot run the workload: say why, go on
            out[sched] = {"error": str(e)}
            if not a.json:
                print(f"{sched:10} did not finish: {e}")
            continue
        m = r.metrics
        ev = m["events"] + m["context_switches"]
        ratio = (wall / ev) / (out["eevdf"]["wall_s"] / out["eevdf"]["events"]) if "eevdf" in out else 1.0
        out[sched] = {"wall_s": wall, "events": ev, "context_switches": m["context_switches"],
                      "events_per_s": ev / wall, "sim_speedup": a.seconds / wall,
                      "time_per_event_vs_eevdf": ratio}
        if not a.json:
            print(f"{sched:10} {ev:>10} events in {wall:6.2f} s wall: {ev / wall:>12,.0f} events/s, "
                  f"{m['context_switches']:>8} switches, {a.seconds / wall:7.1f}x real time, "
                  f"{ratio:4.2f}x eevdf's time per event")
    if a.json:
        print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
