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
from typing import List

from ._native import ConfigError
from .api import check, schedulers, simulate

# The plain run's defaults (the foundation issue's workload) and --suite's 256-CPU run's seconds.
PLAIN = {"tasks": 1000, "cpus": 8, "seconds": 60, "repeat": 10}
BIG_SECONDS = 10


def hogs(n: int, seconds: int) -> dict:
    return {
        "global": {"duration": seconds},
        "tasks": {f"hog{i}": {"priority": (i % 40) - 20, "run": 1_000_000} for i in range(n)},
    }


def _positive_int(v: str) -> int:
    """An argparse type: an integer >= 1."""
    try:
        n = int(v)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {v!r}")
    return n


def _seconds(v: str) -> int:
    """An argparse type: whole simulated seconds that a workload's ``global.duration`` takes
    (checked by the engine's own workload check, so its upper limit is the engine's)."""
    n = _positive_int(v)
    try:
        check({"global": {"duration": n}, "tasks": {"t": {"run": 1000}}})
    except Exception as e:  # the engine's WorkloadError (e.g. past its clock), said as it says it
        raise argparse.ArgumentTypeError(f"{v!r} is not a duration the simulator takes: "
                                         f"{str(e).split(': ', 1)[-1]}") from None
    return n


def _scheduler_list(v: str) -> List[str]:
    """An argparse type: comma-separated names of registered schedulers (each once)."""
    known = [s["name"] for s in schedulers()["schedulers"]]
    names = [x.strip() for x in v.split(",")]
    bad = [x for x in names if x not in known]
    if bad:
        raise argparse.ArgumentTypeError(f"unknown scheduler(s) {', '.join(repr(x) for x in bad)}; "
                                         f"expected comma-separated names from: {', '.join(known)}")
    return list(dict.fromkeys(names))


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m schedlab.bench", description=__doc__.splitlines()[0])
    # Defaults of None where an option belongs to one mode only, so that giving it in another
    # mode is refused rather than silently ignored; the plain run's defaults are in PLAIN.
    p.add_argument("--tasks", type=_positive_int, help=f"hog tasks (default {PLAIN['tasks']})")
    p.add_argument("--cpus", type=_positive_int, help=f"simulated CPUs (default {PLAIN['cpus']})")
    p.add_argument("--seconds", type=_seconds, help=f"simulated seconds (default {PLAIN['seconds']})")
    p.add_argument("--repeat", type=_positive_int,
                   help=f"report the best of N runs (default {PLAIN['repeat']}; at most 3 with --suite)")
    p.add_argument("--json", action="store_true")
    p.add_argument("--scheduler", type=_scheduler_list,
                   help="comma-separated schedulers (default: all registered)")
    p.add_argument("--suite", action="store_true",
                   help="print issue 18's speed goals as ratios measured now (schedlab/benchsuite.py)")
    p.add_argument("--simso", nargs="?", const="auto", metavar="PYTHON",
                   help="with --suite: the Python of a virtualenv with SimSo 0.8.5 "
                        "(default: .venv-simso, made by scripts/simso_venv.sh)")
    p.add_argument("--big-seconds", type=_seconds,
                   help=f"with --suite: simulated seconds of the 256-CPU run (default {BIG_SECONDS}; "
                        "the goal is for 600)")
    p.add_argument("--instructions", action="store_true",
                   help="count instructions per event with valgrind on the suite's workloads, the figure "
                        "that repeats from hour to hour (schedlab/benchinstr.py)")
    p.add_argument("--base", metavar="REV",
                   help="with --instructions: also count a git revision's build, in the same run, and "
                        "compare (ratio, identical output)")
    return p


def _check_modes(p: argparse.ArgumentParser, a: argparse.Namespace) -> None:
    """Refuse (exit 2) an option given in a mode that would ignore it."""
    if a.suite and a.instructions:
        p.error("--suite and --instructions are two different runs: give one of them")
    if a.base is not None and not a.instructions:
        p.error("--base goes with --instructions")
    for opt in ("simso", "big_seconds"):
        if getattr(a, opt) is not None and not a.suite:
            p.error(f"--{opt.replace('_', '-')} goes with --suite")
    if a.suite or a.instructions:
        mode = "--suite" if a.suite else "--instructions"
        given = [f"--{o}" for o in ("tasks", "cpus", "seconds", "scheduler", "json") if getattr(a, o)]
        if a.instructions and a.repeat is not None:
            given.append("--repeat")
        if given:
            p.error(f"{', '.join(given)}: not with {mode} (its workloads are fixed; see --help)")


def main() -> None:
    p = parser()
    a = p.parse_args()
    _check_modes(p, a)
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

        try:
            simso = benchsuite.simso_python(a.simso)
        except ValueError as e:
            p.error(f"--simso: {e}")
        benchsuite.main(simso, min(a.repeat or PLAIN["repeat"], 3),
                        BIG_SECONDS if a.big_seconds is None else a.big_seconds)
        return
    tasks, cpus, seconds, repeat = (PLAIN[k] if getattr(a, k) is None else getattr(a, k)
                                    for k in ("tasks", "cpus", "seconds", "repeat"))
    try:  # the machine, before any measured run (the engine's limit, e.g. 256 CPUs)
        simulate(hogs(1, 1), "eevdf", cpus)
    except ConfigError as e:
        p.error(f"argument --cpus: {e}")
    run(hogs(tasks, seconds), a.scheduler or [s["name"] for s in schedulers()["schedulers"]],
        cpus, seconds, repeat, a.json)


def run(wl: dict, names: List[str], cpus: int, seconds: int, repeat: int, as_json: bool) -> None:
    """Time each scheduler on ``wl`` (best of ``repeat``) and print a line each, or the JSON."""
    if "eevdf" not in names:
        names = ["eevdf", *names]  # the reference of the per-event ratio
    out = {}
    for sched in names:
        wall = float("inf")
        try:
            for _ in range(repeat):
                t0 = time.perf_counter()
                r = simulate(wl, sched, cpus)
                wall = min(wall, time.perf_counter() - t0)
                # (metrics are converted to Python objects lazily, after timing)
        except Exception as e:  # a scheduler that cannot run the workload: say why, go on
            out[sched] = {"error": str(e)}
            if not as_json:
                print(f"{sched:10} did not finish: {e}")
            continue
        m = r.metrics
        ev = m["events"] + m["context_switches"]
        ratio = (wall / ev) / (out["eevdf"]["wall_s"] / out["eevdf"]["events"]) if "eevdf" in out else 1.0
        out[sched] = {"wall_s": wall, "events": ev, "context_switches": m["context_switches"],
                      "events_per_s": ev / wall, "sim_speedup": seconds / wall,
                      "time_per_event_vs_eevdf": ratio}
        if not as_json:
            print(f"{sched:10} {ev:>10} events in {wall:6.2f} s wall: {ev / wall:>12,.0f} events/s, "
                  f"{m['context_switches']:>8} switches, {seconds / wall:7.1f}x real time, "
                  f"{ratio:4.2f}x eevdf's time per event")
    if as_json:
        print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
