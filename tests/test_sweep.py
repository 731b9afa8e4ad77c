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
    ({"seeds": [-1]}, "seeds[0]: expected a seed in 0..=18446744073709551615, found -1"),
    ({"parameters": {"/global/duration": [1, 0.5]}},
     "parameters./global/duration[1]: 0.5 makes the workload invalid: global.duration: expected an integer"),
    ({"duration": "soon"}, "duration: expected seconds > 0 or a string like 2s"),
    ({"colour": 1}, "colour: unknown key"),
    # Values only a run used to refuse, late and in serde's words, leaving a journal behind (QA).
    ({"tunables": {"base_slice_ns": [1]}, "schedulers": ["eevdf"]},
     "tunables.base_slice_ns[0]: expected an integer in 100000..=1000000000 (the range of base_slice_ns "
     "for eevdf), found 1"),
    ({"tunables": {"noise_interval_us": [20000, True]}}, "tunables.noise_interval_us[1]: expected an integer"),
    ({"seeds": [2**64]}, "seeds[0]: expected a seed in 0..=18446744073709551615, found 18446744073709551616"),
    ({"duration": 1e30}, "duration: expected seconds > 0 or a string like 2s, 500ms (duration must be at "
                         "most 18446744073.709551615 s"),
    ({"duration": float("nan")}, "duration: expected seconds > 0 or a string like 2s, 500ms (found NaN)"),
    ({"cpus": [2, 300]}, "cpus[1]: expected a CPU count the engine accepts (cpus must be between 1 and 256"),
    ({"schedulers": ["eevdf", "bfs+pfs"]}, "schedulers[1]: scheduler bfs has no fair class"),
    ({"workload": {"tasks": {"a": {"run": 1000}}}, "parameters": {}, "duration": None},
     "duration: needed: the workload has a task that loops forever"),
    ({"workload": {"tasks": {"a": {"run": -1}}}, "parameters": {}},
     "workload.tasks.a.run: expected a duration"),
    # A value given twice: identical deterministic runs folded into one grid point, whose
    # confidence interval of 0 would measure nothing (QA: seeds [0, 0] gave ci95 0.0, n 2).
    ({"seeds": [0, 0]}, "seeds[1]: a seed given twice"),
    ({"cpus": [2, 2]}, "cpus[1]: a CPU count given twice"),
    ({"schedulers": ["eevdf", "cfs", "eevdf"]}, "schedulers[2]: a scheduler given twice"),
    ({"tunables": {"noise_interval_us": [20000, 20000]}}, "tunables.noise_interval_us[1]: a value given twice"),
    ({"parameters": {"/tasks/niced_hog/priority": [5, 5]}}, "parameters./tasks/niced_hog/priority[1]: a value "
                                                            "given twice"),
])
def test_bad_spec_is_one_clear_error(tmp_path, over, words):
    # Refused before any run: nothing written, not even the output's folder.
    p = subprocess.run([sys.executable, "-m", "schedlab", "sweep", spec(tmp_path, **over), "--out",
                        str(tmp_path / "res" / "x")], capture_output=True, text=True)
    assert p.returncode == 2, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "spec.json: " in lines[0] and words in lines[0], p.stderr
    assert "Traceback" not in p.stderr
    assert not (tmp_path / "res").exists()


def test_a_fair_policys_tunables_are_known_and_ranged(tmp_path):
    s = sweep.load_spec(spec(tmp_path, schedulers=["eevdf+tsf"], tunables={"mem_latency_ns": [5, 10000]}))
    assert s["tunables"] == {"mem_latency_ns": [5, 10000]}
    with pytest.raises(sweep.SweepError, match=r"mem_latency_ns\[0\]: expected an integer in 1\.\.=10000"):
        sweep.load_spec(spec(tmp_path, schedulers=["eevdf+tsf"], tunables={"mem_latency_ns": [0]}))


def pinned(tmp_path, cpus):
    """A spec whose runs on fewer than 4 CPUs fail: its task is pinned to CPU 3, which only a run
    (knowing the machine) refuses."""
    return spec(tmp_path, workload={"global": {"duration": 1}, "tasks": {"a": {"run": 1000, "cpus": [3]}}},
                schedulers=["eevdf"], cpus=cpus, parameters={}, tunables={}, seeds=[0, 1], duration=None)


def test_a_run_that_fails_leaves_nothing(tmp_path):
    out = tmp_path / "res" / "r"
    for quiet in (["--quiet"], []):
        p = subprocess.run([sys.executable, "-m", "schedlab", "sweep", pinned(tmp_path, [4, 2]), "--out",
                            str(out), "--jobs", "1", *quiet], capture_output=True, text=True)
        assert p.returncode == 2, p.stderr
        errors = [line for line in p.stderr.splitlines() if "error" in line]
        assert len(errors) == 1 and errors[0].startswith("schedlab: error: "), p.stderr
        assert "spec.json: the run " in errors[0]
        assert '"cpus": 2' in errors[0] and "tasks.a.cpus: CPU 3 does not exist on a 2-CPU machine" in errors[0]
        assert "Traceback" not in p.stderr
        if quiet:
            assert len(p.stderr.strip().splitlines()) == 1, p.stderr
        # The runs on 4 CPUs had finished and been journalled: the journal goes, with its folder.
        assert not (tmp_path / "res").exists()


def test_a_failed_resume_puts_the_journal_back(tmp_path):
    # Also with `distributed` imported, as the Dask test leaves this process: its tblib pickling of
    # exceptions carried the native WorkloadError (no pickle) along as the SweepError's context,
    # and the pool broke (BrokenProcessPool) instead of reporting the run.
    pytest.importorskip("distributed")
    sp, out = pinned(tmp_path, [4, 2]), str(tmp_path / "r")
    with pytest.raises(sweep.SweepError, match="3 of 4 runs still to do"):
        sweep.run_sweep(sp, out, jobs=1, progress=False, limit=1)
    journal = Path(f"{out}.journal.jsonl")
    before = journal.read_bytes()
    with pytest.raises(sweep.SweepError, match="CPU 3 does not exist"):
        sweep.run_sweep(sp, out, jobs=1, progress=False)
    assert journal.read_bytes() == before
    assert sorted(q.name for q in tmp_path.iterdir()) == ["r.journal.jsonl", "spec.json"]
