"""`schedlab host run`: refusals before touching the machine, and (as root with tracefs) a real run
that leaves no tracefs instance and no worker behind."""

import json
import os
import subprocess
import sys

import pytest


def run(*args, timeout=120):
    return subprocess.run([sys.executable, "-m", "schedlab", *args], capture_output=True, text=True,
                          timeout=timeout)


@pytest.mark.parametrize("tasks,expect", [
    ('{"t": {"policy": "SCHED_DEADLINE", "dl-runtime": 1000, "dl-period": 10000, "run": 100}}',
     "tasks.t.policy: SCHED_DEADLINE is not supported by the host runner yet"),
    ('{"t": {"lock": "m", "run": 100, "unlock": "m"}}', "event lock is not supported by the host runner yet"),
    ('{"t": {"run": 100, "dl-runtime": 3000}}', "custom slices"),
])
def test_refusals_name_the_path(tmp_path, tasks, expect):
    wl = tmp_path / "w.json"
    wl.write_text(f'{{"global": {{"duration": 1}}, "tasks": {tasks}}}')
    r = run("host", "run", str(wl))
    assert r.returncode == 2 and expect in r.stderr, r.stderr


def test_taskgroups_refused(tmp_path):
    wl = tmp_path / "w.json"
    wl.write_text('{"global": {"duration": 1, "taskgroups": {"/a": {"shares": 2048}}}, '
                  '"tasks": {"t": {"taskgroup": "/a", "run": 100}}}')
    r = run("host", "run", str(wl))
    assert r.returncode == 2 and "cgroups are not supported" in r.stderr, r.stderr


def _instances():
    d = "/sys/kernel/tracing/instances"
    return sorted(x for x in os.listdir(d) if x.startswith("schedlab-")) if os.path.isdir(d) else []


@pytest.mark.skipif(os.geteuid() != 0, reason="the host runner needs root")
def test_real_run_measures_and_cleans_up(tmp_path):
    wl = tmp_path / "w.json"
    wl.write_text('{"global": {"duration": 1}, "tasks": {"hog": {"instance": 2, "cpus": [0], "run": 100000}}}')
    out = tmp_path / "m.json"
    before = _instances()
    r = run("host", "run", str(wl), "--json", str(out))
    if r.returncode == 2 and ("tracefs" in r.stderr or "worker missing" in r.stderr):
        pytest.skip(r.stderr.strip())
    assert r.returncode == 0, r.stderr
    m = json.loads(out.read_text())
    names = sorted(t["name"] for t in m["tasks"])
    assert names == ["hog-0", "hog-1"]
    assert all(t["cpu_time_us"] > 100_000 for t in m["tasks"])
    assert _instances() == before
    left = subprocess.run(["pgrep", "-f", "schedlab-worker run"], capture_output=True, text=True).stdout
    assert left.strip() == ""
