"""Golden hashes: the sha256 of the metrics JSON and of the Perfetto trace of every
simulator run behind the seed experiments and of the example workloads under every
scheduler, so that refactors of the engine can prove they changed nothing.

    .venv/bin/python scripts/golden.py            # compare with tests/golden/hashes.json
    .venv/bin/python scripts/golden.py --record   # rewrite it (say why in the commit)

Every call the experiments make to the native simulator is captured (with tracing
forced on, which records events without changing the run) and keyed by the
experiment, the call's position and a digest of its workload and configuration, so
a changed input shows as a missing key rather than as a false mismatch.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Dict, List

ROOT = Path(__file__).resolve().parents[1]
HASHES = ROOT / "tests" / "golden" / "hashes.json"

# Schedulers whose behaviour must survive refactors unchanged (names as they were
# when the hashes were first recorded).
SCHEDULERS = ["eevdf", "cfs", "eevdf+pfs", "eevdf+dwcfs", "eevdf+tsf", "cfs+pfs", "cfs+dwcfs", "cfs+tsf",
              "scx_simple"]

# A workload with every class at once: DEADLINE, FIFO/RR and fair tasks on 2 CPUs
# (the 6.12 fair server, RT throttling in 6.1, DL push/pull).
EVERY_CLASS = {
    "global": {"duration": 2},
    "tasks": {
        "dl": {"policy": "SCHED_DEADLINE", "dl-runtime": 3000, "dl-period": 10000, "dl-deadline": 8000,
               "instance": 2, "run": 2500, "timer": {"ref": "unique", "period": 10000}},
        "fifo": {"policy": "SCHED_FIFO", "priority": 10, "run": 150000},
        "rr": {"policy": "SCHED_RR", "priority": 5, "instance": 2, "run": 30000, "sleep": 5000},
        "hog": {"instance": 2, "run": 100000},
        "io": {"priority": -5, "sleep": 3000, "run": 200},
    },
}


def _digest(obj) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()[:12]


def _hash_run(res, tmp: str) -> Dict[str, str]:
    path = os.path.join(tmp, "t.pftrace")
    res.write_perfetto(path)
    with open(path, "rb") as f:
        trace = hashlib.sha256(f.read()).hexdigest()
    text = res.metrics_json()
    metrics = hashlib.sha256(text.encode()).hexdigest()
    # The model's output without the listing of effective tunables: a change that only
    # moves a tunable between the engine and a policy keeps this hash and the trace's.
    model = json.loads(text)
    model.pop("tunables", None)
    model = hashlib.sha256(json.dumps(model, sort_keys=True).encode()).hexdigest()
    return {"metrics": metrics, "model": model, "trace": trace}


def collect() -> Dict[str, Dict[str, str]]:
    sys.path.insert(0, str(ROOT / "python"))
    from schedlab import _native, api
    from schedlab.repro import repro

    out: Dict[str, Dict[str, str]] = {}
    real = _native.simulate
    tmp = tempfile.mkdtemp(prefix="schedlab-golden.")
    state = {"label": "", "n": 0}

    def capture(text, source, config, progress=None):
        config = dict(config if isinstance(config, dict) else json.loads(config), trace=True)
        config.pop("trace_counters", None)  # the whole trace, counters too, whatever the caller asked
        res = real(text, source, config, progress)
        key = f"{state['label']}#{state['n']:03d}:{_digest([text, config])}"
        state["n"] += 1
        out[key] = _hash_run(res, tmp)
        return res

    _native.simulate = capture
    try:
        for name in ["illf", "tsf", "dwcfs", "cfs-lab"]:
            state.update(label=f"repro/{name}", n=0)
            repro(name, os.path.join(tmp, name))
        workloads = {"examples/mixed.json": str(ROOT / "examples" / "mixed.json"), "every-class": EVERY_CLASS}
        for wname, wl in workloads.items():
            for sched in SCHEDULERS:
                for dl in ["edf", "llf", "illf"]:
                    if dl != "edf" and wname != "every-class":
                        continue
                    state.update(label=f"{wname}/{sched}/{dl}", n=0)
                    api.simulate(wl, sched, 2, dl_policy=dl)
                    state.update(label=f"{wname}/{sched}/{dl}/noise", n=0)
                    api.simulate(wl, sched, 2, dl_policy=dl, seed=7,
                                 set={"noise_interval_us": 20000, "context_switch_ns": 2000})
    finally:
        _native.simulate = real
        shutil.rmtree(tmp, ignore_errors=True)  # the reports and traces it wrote to hash them
    return out


def compare(now: Dict[str, Dict[str, str]], then: Dict[str, Dict[str, str]]) -> List[str]:
    problems = []
    for k in sorted(set(now) | set(then)):
        if k not in then:
            problems.append(f"{k}: new run (not in the recorded hashes)")
        elif k not in now:
            problems.append(f"{k}: recorded run no longer made")
        elif now[k] != then[k]:
            what = [f for f in ("metrics", "model", "trace") if now[k][f] != then[k][f]]
            problems.append(f"{k}: {' and '.join(what)} changed")
    return problems


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--record", action="store_true", help="rewrite tests/golden/hashes.json")
    args = ap.parse_args(argv)
    now = collect()
    if args.record:
        HASHES.parent.mkdir(parents=True, exist_ok=True)
        HASHES.write_text(json.dumps(now, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        print(f"recorded {len(now)} runs in {HASHES.relative_to(ROOT)}")
        return 0
    then = json.loads(HASHES.read_text(encoding="utf-8"))
    problems = compare(now, then)
    for p in problems:
        print(p)
    print(f"{len(now)} runs, {len(problems)} differ from {HASHES.relative_to(ROOT)}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
