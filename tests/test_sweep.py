"""schedlab sweep (issue 17): a grid summarised with means and 95 % CIs, the same files from a
process pool and from a local Dask cluster, resumable, and one clear error for a bad spec."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from schedlab import sweep

ROOT = Path(__file__).resolve().parents[1]


def spec(tmp_path, **over):
    s = {"workload": str(ROOT / "examples" / "mixed.json"), "schedulers": ["eevdf", "cfs"], "cpus": [2],
         "parameters": {"/tasks/niced_hog/priority": [5, 15]}, "tunables": {"noise_interval_us": [20000]},
         "seeds": [0, 1, 2], "duration": "300ms",
         # Not in sorted order: the journal stores metrics sorted, the files keep the spec's order.
         "metrics": ["jain_fairness", "context_switches_per_sec", "tasks.wakeup_latency_p99_us.max"]}
    s.update(over)
    p = tmp_path / "spec.json"
    p.write_text(json.dumps(s))
    return str(p)


def test_summary_means_and_confidence_intervals(tmp_path):
    pq, csv = sweep.run_sweep(spec(tmp_path), str(tmp_path / "out" / "res"), jobs=2, progress=False)
    summary, runs = pd.read_parquet(pq), pd.read_parquet(tmp_path / "out" / "res.runs.parquet")
    assert len(summary) == 4 and len(runs) == 12
    assert list(summary.columns[:4]) == ["scheduler", "cpus", "param /tasks/niced_hog/priority",
                                         "tunable noise_interval_us"]
    row = summary.iloc[0]
    vals = runs[(runs.scheduler == "eevdf") & (runs["param /tasks/niced_hog/priority"] == "5")]
    sw = vals["context_switches_per_sec"]
    assert row["context_switches_per_sec mean"] == pytest.approx(sw.mean())
    # Student's t with 2 degrees of freedom: 4.303 s / sqrt(3).
    assert row["context_switches_per_sec ci95"] == pytest.approx(4.303 * sw.std(ddof=1) / 3 ** 0.5)
    assert row["context_switches_per_sec n"] == 3
    assert pd.read_csv(csv).shape == summary.shape


def test_one_seed_has_no_interval(tmp_path):
    pq, _ = sweep.run_sweep(spec(tmp_path, seeds=[0], schedulers=["eevdf"]), str(tmp_path / "r"), jobs=1,
                            progress=False)
    s = pd.read_parquet(pq)
    assert s["jain_fairness ci95"].isna().all() and (s["jain_fairness n"] == 1).all()


def test_dask_local_cluster_gives_the_same_files_and_resume_finishes(tmp_path):
    sp = spec(tmp_path)
    pool = str(tmp_path / "pool")
    sweep.run_sweep(sp, pool, jobs=2, progress=False)
    # Interrupted after 5 runs (the journal keeps them), then resumed on a local Dask cluster.
    dask = str(tmp_path / "dask")
    with pytest.raises(sweep.SweepError, match="7 of 12 runs still to do"):
        sweep.run_sweep(sp, dask, jobs=2, progress=False, limit=5)
    assert len(Path(f"{dask}.journal.jsonl").read_text().splitlines()) == 5
    sweep.run_sweep(sp, dask, jobs=2, dask="local", progress=False)
    assert len(Path(f"{dask}.journal.jsonl").read_text().splitlines()) == 12
    for suffix in (".csv", ".runs.csv", ".parquet", ".runs.parquet"):
        assert Path(pool + suffix).read_bytes() == Path(dask + suffix).read_bytes(), suffix


def test_a_cut_journal_line_is_run_again(tmp_path):
    sp = spec(tmp_path, schedulers=["eevdf"], seeds=[0])
    out = str(tmp_path / "r")
    with pytest.raises(sweep.SweepError, match="1 of 2 runs still to do"):
        sweep.run_sweep(sp, out, jobs=1, progress=False, limit=1)
    journal = Path(f"{out}.journal.jsonl")
    whole = journal.read_text()
    journal.write_text(whole + whole[:25])  # a second record cut short by a crash
    sweep.run_sweep(sp, out, jobs=1, progress=False)
    lines = journal.read_text().splitlines()
    assert len(lines) == 3 and lines[1] == whole[:25]
    assert json.loads(lines[2])["key"] != json.loads(lines[0])["key"]
    assert len(pd.read_csv(f"{out}.runs.csv")) == 2


def test_ctrl_c_stops_the_runs_in_flight_and_keeps_the_journal(tmp_path):
    # The first runs last 1 s (simulated), the next ones 20000 s (about 5 s each here):
    # Ctrl-C (SIGINT to the process group, as a terminal sends it) while the long ones run must
    # end the sweep at once, exit 130, and leave the short runs in the journal for a resume.
    sp = spec(tmp_path, schedulers=["eevdf"], parameters={"/global/duration": [1, 20000]}, seeds=[0, 1, 2, 3],
              duration=None)
    out = tmp_path / "r"
    # The sweep gets SIGINT's default disposition, as a command started from a terminal has: a
    # test run started as a background job of a non-interactive shell (CI scripts, `cmd &`)
    # inherits SIGINT ignored, Python then keeps ignoring it, and the sweep would run to its end
    # (exit 0): the cause of this test's failures in two fresh-clone CI runs of 2026-11-27.
    p = subprocess.Popen([sys.executable, "-m", "schedlab", "sweep", sp, "--out", str(out), "--jobs", "2",
                          "--quiet"], stderr=subprocess.PIPE, text=True, start_new_session=True,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    journal = Path(f"{out}.journal.jsonl")
    deadline = time.monotonic() + 60
    while not (journal.exists() and len(journal.read_text().splitlines()) >= 4) and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.3)  # the long runs are in flight
    os.killpg(p.pid, signal.SIGINT)
    t0 = time.monotonic()
    _, err = p.communicate(timeout=60)
    # What a failure needs to be traced: how many runs were journalled, and when the interrupt came.
    lines = journal.read_text().splitlines()
    assert p.returncode == 130 and "interrupted" in err, (
        err, f"{len(lines)} journal lines, SIGINT {t0 - (deadline - 60):.1f} s after the start, "
             f"exit {time.monotonic() - t0:.1f} s after it", lines[-1][:200] if lines else None)
    assert time.monotonic() - t0 < 2.5
    keys = [json.loads(line)["key"] for line in journal.read_text().splitlines()]
    grid = [(sweep.key(pt), pt) for pt in sweep.points(sweep.load_spec(sp))]
    assert keys and set(keys) <= {k for k, pt in grid if pt["parameters"]["/global/duration"] == 1}


@pytest.mark.parametrize("over,words", [
    ({"schedulers": ["nope"]}, "schedulers[0]: expected a registered scheduler"),
    ({"parameters": {"/tasks/ghost/run": [1]}}, "parameters./tasks/ghost/run: no such value"),
    ({"tunables": {"base_slice_ns": [1]}, "schedulers": ["cfs"]},
     "tunables.base_slice_ns: not a tunable of cfs"),
    ({"metrics": ["tasks.cpu_share.median"]}, "metrics[0]: expected a run-level metric"),
    ({"seeds": [-1]}, "seeds[0]: expected a seed >= 0"),
    ({"parameters": {"/global/duration": [1, 0.5]}},
     "parameters./global/duration[1]: 0.5 makes the workload invalid: global.duration: expected an integer"),
    ({"duration": "soon"}, "duration: expected seconds > 0 or a string like 2s"),
    ({"colour": 1}, "colour: unknown key"),
])
def test_bad_spec_is_one_clear_error(tmp_path, over, words):
    p = subprocess.run([sys.executable, "-m", "schedlab", "sweep", spec(tmp_path, **over), "--out",
                        str(tmp_path / "x")], capture_output=True, text=True)
    assert p.returncode == 2, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "spec.json: " in lines[0] and words in lines[0], p.stderr
    assert not list(tmp_path.glob("x*"))
