"""`schedlab host run` on the live kernel: refusals before touching the machine, real runs (root)
of every supported attribute, and cleanup after success and after the runner is SIGKILLed.

The real runs are not mocked: they start native workers, cgroups and a tracefs instance (or perf),
and skip, with the reason printed, only without root or where this kernel lacks a feature.
"""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

ROOT = os.geteuid() == 0
needs_root = pytest.mark.skipif(not ROOT, reason="the host runner needs root")


def run(*args, timeout=180):
    return subprocess.run([sys.executable, "-m", "schedlab", *args], capture_output=True, text=True,
                          timeout=timeout)


@pytest.mark.parametrize("tasks,expect", [
    ('{"t": {"policy": "SCHED_DEADLINE", "cpus": [0], "dl-runtime": 1000, "dl-period": 10000, '
     '"run": 100}}',
     "tasks.t.cpus: a SCHED_DEADLINE task cannot be pinned on the host"),
    ('{"t": {"run": 100, "fork": "u"}, "u": {"run": 100}}', "tasks.t: event fork is not supported"),
    ('{"t": {"run": 100, "dl-runtime": 50}}', "tasks.t.dl-runtime: a custom slice of 50 us is outside"),
    ('{"t": {"run": 100, "cpus": [4095]}}', "tasks.t.cpus: [4095] names CPUs this machine does not have"),
    ('{"t": {"phases": {"p1": {"run": 100}, "p2": {"priority": 5, "run": 100}}}}',
     "tasks.t.phases.p2: changing priority in a phase is not supported"),
])
def test_refusals_name_the_path(tmp_path, tasks, expect):
    wl = tmp_path / "w.json"
    wl.write_text(f'{{"global": {{"duration": 1}}, "tasks": {tasks}}}')
    r = run("host", "run", str(wl))
    assert r.returncode == 2 and expect in r.stderr, r.stderr


def _state():
    """What a run could leave behind: tracefs instances, cgroups, mounts, worker processes."""
    inst = "/sys/kernel/tracing/instances"
    cg = "/sys/fs/cgroup/cpu"
    with open("/proc/mounts") as f:
        mounts = sorted(line.split()[1] for line in f)
    workers = subprocess.run(["pgrep", "-f", "schedlab-worker run"], capture_output=True,
                             text=True).stdout.split()
    def mine(d):
        return sorted(x for x in os.listdir(d) if x.startswith("schedlab")) if os.path.isdir(d) else []

    return {"instances": mine(inst), "cgroups": mine(cg), "mounts": mounts, "workers": workers}


def _dl_reserved():
    return json.loads(run("host", "probe").stdout).get("dl_bw_reserved")


def _host_run(tmp_path, workload, *extra):
    wl = tmp_path / "w.json"
    wl.write_text(json.dumps(workload))
    out, facts = tmp_path / "m.json", tmp_path / "f.json"
    r = run("host", "run", str(wl), "--json", str(out), "--facts", str(facts), *extra)
    unavailable = ("tracefs", "worker missing", "neither cgroup v1")
    if r.returncode == 2 and any(u in r.stderr for u in unavailable):
        pytest.skip(r.stderr.strip())
    assert r.returncode == 0, r.stderr
    m = json.loads(out.read_text())
    return {t["name"]: t for t in m["tasks"]}, json.loads(facts.read_text()), m


@needs_root
def test_hogs_measured_and_cleaned_up(tmp_path):
    before = _state()
    tasks, facts, m = _host_run(tmp_path, {"global": {"duration": 1},
                                           "tasks": {"hog": {"instance": 2, "cpus": [0], "run": 100000}}})
    assert sorted(tasks) == ["hog-0", "hog-1"]
    # Two pinned hogs split one CPU: each near half (the VM's steal time and other load aside).
    for t in tasks.values():
        assert 0.35 < t["cpu_share"] < 0.6, t
    # The trace agrees with the kernel's own counters (schedstat), switch for switch.
    for name, c in facts["crosscheck"].items():
        assert abs(c["nivcsw"][0] - c["nivcsw"][1]) <= 2, (name, c)
    assert facts["hz"] and facts["kernel"] and "lockdown" in facts
    assert _state() == before


@needs_root
def test_every_attribute_on_the_kernel(tmp_path):
    """Task groups (cpu.shares), RT in a group (RT_GROUP_SCHED runtime), DEADLINE, a custom slice,
    a mutex shared by two processes and a barrier, in one run."""
    dl0 = _dl_reserved()
    if dl0 is None:
        pytest.skip("DL bandwidth unreadable here (no debugfs sched/debug)")
    before = _state()
    tasks, facts, m = _host_run(tmp_path, {
        "global": {"duration": 2, "taskgroups": {"/a": {"shares": 2048}, "/b": {"shares": 512}}},
        "tasks": {
            "ga": {"taskgroup": "/a", "cpus": [1], "run": 100000},
            "gb": {"taskgroup": "/b", "instance": 2, "cpus": [1], "run": 100000},
            "rt": {"policy": "SCHED_FIFO", "priority": 10, "taskgroup": "/a", "cpus": [0], "run": 500,
                   "sleep": 5000},
            "dl": {"policy": "SCHED_DEADLINE", "dl-runtime": 2000, "dl-period": 10000, "run": 1000,
                   "timer": {"ref": "unique", "period": 10000}},
            "sl": {"dl-runtime": 300, "cpus": [0], "run": 100000},
            "p1": {"process": "x", "cpus": [0], "lock": "m", "run": 200, "unlock": "m", "barrier": "b"},
            "p2": {"process": "y", "cpus": [0], "lock": "m", "run": 200, "unlock": "m", "barrier": "b"}}})
    assert set(tasks) == {"ga", "gb-0", "gb-1", "rt", "dl", "sl", "p1", "p2"}
    pol = {n: t["policy"] for n, t in tasks.items()}
    assert pol["rt"] == "SCHED_FIFO/RR" and pol["dl"] == "SCHED_DEADLINE"
    # cpu.shares 2048 : 512 on CPU 1 -> group /a gets about 4x group /b.
    ratio = tasks["ga"]["cpu_time_us"] / (tasks["gb-0"]["cpu_time_us"] + tasks["gb-1"]["cpu_time_us"])
    assert 2.5 < ratio < 6.5, ratio
    # DEADLINE: one 1 ms job per 10 ms period, each completed (a voluntary switch per job).
    assert 150 <= tasks["dl"]["nvcsw"] <= 210, tasks["dl"]
    # The barrier keeps the two lock users in step.
    assert abs(facts["threads"]["p1"]["loops"] - facts["threads"]["p2"]["loops"]) <= 1
    assert facts["threads"]["p1"]["loops"] > 10
    assert any("custom slices" in n for n in facts["notes"])
    assert facts["dl_bw_reserved_after"] == pytest.approx(dl0, abs=1e-4)
    assert _state() == before


@needs_root
def test_perf_backend(tmp_path):
    if not subprocess.run(["sh", "-c", "command -v perf"], capture_output=True).stdout:
        pytest.skip("perf is not installed")
    tasks, facts, _ = _host_run(tmp_path, {"global": {"duration": 1},
                                           "tasks": {"hog": {"cpus": [0], "run": 100000},
                                                     "io": {"cpus": [0], "run": 1000, "sleep": 5000}}},
                                "--backend", "perf")
    assert facts["backend"] == "perf"
    assert tasks["io"]["nvcsw"] > 50 and tasks["hog"]["cpu_share"] > 0.5


@needs_root
def test_killing_the_runner_leaves_nothing_behind(tmp_path):
    """SIGKILL the runner mid-run (DEADLINE worker included): the guard kills the workers while
    they are still DEADLINE, removes the instance and cgroups, undoes mounts; DL bandwidth returns."""
    dl0 = _dl_reserved()
    before = _state()
    wl = tmp_path / "w.json"
    wl.write_text(json.dumps({"global": {"duration": 60, "taskgroups": {"/g": {"shares": 1024}}},
                              "tasks": {"hog": {"taskgroup": "/g", "cpus": [0], "run": 100000},
                                        "dl": {"policy": "SCHED_DEADLINE", "dl-runtime": 1000,
                                               "dl-period": 10000, "run": 500, "sleep": 5000}}}))
    p = subprocess.Popen([sys.executable, "-m", "schedlab", "host", "run", str(wl)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 30
    while time.time() < deadline and not _state()["workers"]:
        if p.poll() is not None:
            pytest.fail(f"runner ended early: {p.stderr.read() if p.stderr else ''}")
        time.sleep(0.1)
    assert _state()["workers"], "workers never started"
    time.sleep(1.0)
    mid = _state()
    assert mid["cgroups"] and mid["instances"]
    p.send_signal(signal.SIGKILL)
    p.wait()
    deadline = time.time() + 15
    while time.time() < deadline and _state() != before:
        time.sleep(0.2)
    assert _state() == before
    if dl0 is not None:
        assert _dl_reserved() == pytest.approx(dl0, abs=1e-4)


@needs_root
def test_compare_runs_simulator_and_host(tmp_path):
    wl = tmp_path / "w.json"
    wl.write_text(json.dumps({"global": {"duration": 1},
                              "tasks": {"hog": {"instance": 2, "cpus": [0], "run": 100000}}}))
    out = tmp_path / "c.json"
    r = run("compare", "--workload", str(wl), "--json", str(out))
    assert r.returncode == 0, r.stderr
    c = json.loads(out.read_text())
    assert [row["task"] for row in c["tasks"]] == ["hog-0", "hog-1"]
    # Two pinned hogs: half a CPU each in both, so the relative differences stay small.
    for row in c["tasks"]:
        sim, hostv, _ = row["cpu_share"]
        assert sim == pytest.approx(0.5, abs=0.01) and 0.35 < hostv < 0.6
    assert c["run"]["jain_fairness"][1] > 0.9


def test_compare_needs_two_files_or_a_workload():
    r = run("compare")
    assert r.returncode == 2 and "two metrics files (A B) or --workload" in r.stderr
