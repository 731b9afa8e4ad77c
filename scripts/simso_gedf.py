"""Global EDF in SimSo 0.8.5: the anchor of the speed benchmark (issue 18).

Runs inside a virtualenv that has SimSo (``bash scripts/simso_venv.sh`` makes
``.venv-simso``); ``python -m schedlab.bench --suite --simso`` calls it. The task set
is seed 001's case 2 with S0 = 230 ms (the ILLF experiment's SimSo cross-check,
experiments/illf.json "crosscheck"): 16 periodic tasks, WCET 5i ms,
D = T = 5i + 230 ms, on CPUS identical CPUs, for SECONDS. With ``--wide`` the
task set is issue 18's large one instead (``schedlab.benchsuite.gedf_wide``,
the same formula): TASKS tasks with T = 200 + i ms and
WCET = 20 + 2 (i mod 17) ms (D = T), about 44.8 CPUs of load at 500 tasks,
which the kernel's SCHED_DEADLINE admission control accepts on 64 CPUs (seed
001's set at 500 tasks would need hundreds). Prints one JSON line: jobs
released and completed, and the CPU seconds of the simulation alone
(building the model and running it; imports excluded).

Usage: python scripts/simso_gedf.py SECONDS [CPUS] [TASKS] [--wide]
"""

import contextlib
import io
import json
import sys
import time

from simso.configuration import Configuration
from simso.core import Model


def shape(i, wide):
    """(period, wcet) of task i, ms."""
    if wide:
        return 200 + i, 20 + 2 * (i % 17)
    return 5 * i + 230, 5 * i


def main():
    wide = "--wide" in sys.argv
    args = [a for a in sys.argv[1:] if a != "--wide"]
    seconds = float(args[0])
    cpus = int(args[1]) if len(args) > 1 else 4
    tasks = int(args[2]) if len(args) > 2 else 16
    t0 = time.process_time()
    cfg = Configuration()
    cfg.duration = int(seconds * 1000 * cfg.cycles_per_ms)
    for i in range(1, tasks + 1):
        period, wcet = shape(i, wide)
        cfg.add_task(name=f"t{i}", identifier=i, period=period, activation_date=0,
                     wcet=wcet, deadline=period, abort_on_miss=False)
    for c in range(cpus):
        cfg.add_processor(name=f"CPU {c}", identifier=c + 1)
    cfg.scheduler_info.clas = "simso.schedulers.EDF"
    cfg.check_all()
    model = Model(cfg)
    with contextlib.redirect_stdout(io.StringIO()):  # SimSo's EDF prints each decision
        model.run_model()
    released = sum(len(t.jobs) for t in model.results.tasks.values())
    completed = sum(1 for t in model.results.tasks.values() for j in t.jobs if j.end_date is not None)
    cpu_s = time.process_time() - t0
    print(json.dumps({"released": released, "completed": completed, "cpu_s": cpu_s}))


if __name__ == "__main__":
    main()
