"""The runs a profile-guided build of the native module is trained on (scripts/pgo.sh).

Profile-guided optimisation lays out and inlines the simulator's code by how often each
branch ran here, and LLVM optimises a function that never ran here for size, as cold
code. So the training covers every registered scheduler, every deadline order and fair
policy, a policy written in Python, tracing (ftrace text and Perfetto) and trace import,
the seed experiments (`schedlab repro all`) and the speed suite's workloads
(schedlab/benchsuite.py), weighted roughly as they are used: the experiments and the
suite most, every other scheduler on a short mixed run.

The profile changes how fast the code runs, never what it computes (Rust has no
fast-math: every optimisation LLVM makes keeps each operation's result), so nothing
here can change an output; tests and golden runs check that for every build.

The core's example binary (crates/schedlab-core/examples/run.rs), which
`python -m schedlab.bench --instructions` counts, links its own copy of the core, whose
symbols differ from the module's (another crate hash), so the module's profile does not
apply to it: `--example BIN` trains it on every scheduler's mixed run and on the
workloads that bench counts (so its counts show the profile's effect on the same code
paths; the module's training has them too, shorter).

Usage (scripts/pgo.sh runs it with an instrumented native module, then an instrumented
example binary):
    python scripts/pgo_train.py OUT_DIR
    python scripts/pgo_train.py --example BIN OUT_DIR
"""
import json
import os
import subprocess
import sys
from pathlib import Path

from schedlab import api, benchinstr, cli
from schedlab.benchsuite import gedf_tasks, gedf_wide, hogs, schbench_like, sleepers_mix
from schedlab.policies import ScxSimple


def mixed(seconds: int) -> dict:
    """Hogs at several nice levels, periodic sleepers, an RT probe, a deadline task and
    message threads waking workers: each scheduler class's wake, tick, preempt and
    balance paths in one run."""
    tasks = {f"hog{i}": {"priority": (7 * i) % 40 - 20, "run": 1_000_000} for i in range(12)}
    for i in range(12):
        tasks[f"sleeper{i}"] = {"loop": -1, "run": 200 + 50 * i, "sleep": 1_000 + 300 * i}
    tasks["probe"] = {"loop": -1, "run": 20, "policy": "SCHED_FIFO", "priority": 50,
                      "timer": {"ref": "unique", "period": 1_000}}
    tasks["dl"] = {"loop": -1, "policy": "SCHED_DEADLINE", "dl-runtime": 2_000, "dl-deadline": 10_000,
                   "dl-period": 10_000, "run": 1_500, "timer": {"ref": "unique", "period": 10_000}}
    tasks.update(schbench_like(1, 6, seconds)["tasks"])
    return {"global": {"duration": seconds}, "tasks": tasks}


def run(*args, **kwargs) -> dict:
    """One simulation and its metrics (their conversion is part of every run's cost)."""
    return api.simulate(*args, **kwargs).metrics


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    names = api.schedulers()
    # Every scheduler, plain and on SMT pairs with OS noise and the lazy preemption model.
    for sched in (s["name"] for s in names["schedulers"]):
        run(mixed(2), sched, 8)
        run(mixed(1), sched, 8, smt=2, seed=1,
            set={"noise_interval_us": 4000, "preempt_model": 3, "tick_phase_ns": -1})
    for policy in names["fair_policies"]:
        run(mixed(1), f"cfs+{policy['name']}", 4)
        run(mixed(1), f"eevdf+{policy['name']}", 4)
    for order in names["dl_orders"]:
        run(gedf_tasks(10), "eevdf", 4, hz=1000, zero_costs=True, dl_policy=order["name"])
    # The speed suite's workloads (shorter).
    run(gedf_tasks(60), "eevdf", 4, hz=1000, zero_costs=True)
    run(gedf_wide(500, 5), "eevdf", 64, hz=1000, zero_costs=True)
    for n in (100, 1000, 10_000):
        run(hogs(n, 10), "eevdf", 8)
    run(schbench_like(4, 16, 2), "eevdf", 8)
    traced = api.simulate(schbench_like(4, 16, 1), "eevdf", 8, trace=True)
    traced.write_perfetto(str(out / "trace.pftrace"))
    # A trace read back (schedlab trace import) and its replay workload run.
    traced.write_ftrace(str(out / "trace.txt"))
    imported = api.import_trace(out / "trace.txt")
    assert imported.result.metrics["context_switches"] > 0
    run(imported.workload, "eevdf", 8)
    api.check(mixed(1))
    # A policy written in Python (the ext class's hooks called through the bindings).
    run(mixed(1), ScxSimple(), 8)
    run(sleepers_mix(10_000, 1), "eevdf", 256)
    # The seed experiments, as the README's main command runs them.
    sys.argv = ["schedlab", "repro", "all", "--out", str(out / "reports")]
    try:
        cli.main()
    except SystemExit as e:
        if e.code not in (0, None):
            raise


def example(binary: str, out: Path) -> None:
    """The example binary's training: each scheduler's mixed run, the instruction bench's
    workloads (schedlab/benchinstr.py) and the deadline orders."""
    out.mkdir(parents=True, exist_ok=True)

    def native(tag: str, wl: dict, sched: str, cpus: int, env: dict) -> None:
        path = out / f"{tag}.json"
        path.write_text(json.dumps(wl), encoding="utf-8")
        env = {k: v.replace("{trace}", str(out / "trace.out")) for k, v in env.items()}
        subprocess.run([binary, str(path), sched, str(cpus)], env={**os.environ, **env},
                       stdout=subprocess.DEVNULL, check=True)

    names = api.schedulers()
    for sched in (s["name"] for s in names["schedulers"]):
        native("mixed", mixed(2), sched, 8, {})
    for order in (o["name"] for o in names["dl_orders"]):
        native("gedf", gedf_tasks(10), "eevdf", 4, {**benchinstr.EDF, "SCHEDLAB_DL_POLICY": order})
    for i, (_, make, sched, cpus, env) in enumerate(benchinstr.WORKLOADS):
        native(f"w{i}", make(), sched, cpus, env)
    for n, make, s in benchinstr.FLAT:
        native(f"flat{n}_{s}", make(), "eevdf", 8, {})


if __name__ == "__main__":
    args = sys.argv[1:]
    if args[:1] == ["--example"] and len(args) == 3:
        example(args[1], Path(args[2]))
    elif len(args) == 1:
        main(Path(args[0]))
    else:
        sys.exit("usage: pgo_train.py [--example BIN] OUT_DIR")
