"""Every example workload and every seed experiment's workloads run under every registered
scheduler, or are refused with one clear error (issue 14)."""

from pathlib import Path

import pytest
import schedlab
from schedlab.repro import illf, load_spec, tsf

ROOT = Path(__file__).resolve().parent.parent
SCHEDULERS = [s["name"] for s in schedlab.schedulers()["schedulers"]]


def _seed_workloads():
    """The shapes the seed experiments simulate (python/schedlab/repro), built with their own helpers
    where they have them."""
    out = {}
    spec = load_spec("illf")
    out["illf-dhall"] = illf._workload(illf.dhall_tasks(spec["dhall"]), 1)
    t1 = {f"t{i}": illf._dl(t["c_ms"], t["d_ms"], t["t_ms"], t["n"])
          for i, t in enumerate(spec["table1"]["tasks"])}
    out["illf-table1"] = illf._workload(t1, 1)
    spec = load_spec("tsf")
    out["tsf-pair"] = tsf._workload(spec, list(spec["benchmarks"])[:2])
    out["cfs-lab-nice"] = {"global": {"calibration": 100},
                           "tasks": {"A": {"loop": 1, "priority": 0, "run": 200000},
                                     "B": {"loop": 1, "priority": 5, "run": 200000}}}
    out["cfs-lab-io"] = {"global": {"calibration": 100},
                         "tasks": {"hog": {"loop": 1, "run": 300000},
                                   "io": {"loop": 20, "run": 100, "sleep": 5000}}}
    out["dwcfs-threads"] = {"global": {"calibration": 100},
                            "tasks": {"A": {"loop": 1, "run": 200000},
                                      "B": {"instance": 4, "loop": 1, "run": 50000}}}
    return out


WORKLOADS = {p.name: p for p in sorted((ROOT / "examples").rglob("*.json"))}
WORKLOADS.update({k: v for k, v in _seed_workloads().items()})


@pytest.mark.parametrize("sched", SCHEDULERS)
def test_every_workload_runs_or_is_refused_clearly(sched):
    for name, wl in WORKLOADS.items():
        try:
            # The fidelity references are sized for 16 CPUs (DEADLINE
            # admission refuses dl16/dl32 on 4, whatever the scheduler).
            cpus = 16 if isinstance(wl, Path) and wl.parent.name == "fidelity" else 4
            r = schedlab.simulate(wl, sched, cpus, duration="300ms")
        except (schedlab.ConfigError, schedlab.SimulationError, schedlab.WorkloadError) as e:
            # Refused: one message naming the scheduler and what it cannot run.
            msg = str(e)
            assert sched in msg and "\n" not in msg.strip(), (name, msg)
            continue
        cpu = sum(t["cpu_time_us"] for t in r.metrics["tasks"])
        assert cpu > 0, (name, sched)
        assert r.metrics["scheduler"] == sched


def test_side_by_side_table_over_all_schedulers(tmp_path):
    import subprocess
    import sys
    wl = ROOT / "examples" / "mixed.json"
    names = [s for s in SCHEDULERS if s != "scx_simple"]
    r = subprocess.run([sys.executable, "-m", "schedlab", "run", str(wl), "--cpus", "2", "--duration", "1",
                        "--scheduler", ",".join(names), "--quiet"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    r = subprocess.run([sys.executable, "-m", "schedlab", "run", str(wl), "--cpus", "2", "--duration", "1",
                        "--scheduler", ",".join(names)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    header = next(line for line in r.stdout.splitlines() if names[0] in line and names[-1] in line)
    assert all(n in header for n in names), header
