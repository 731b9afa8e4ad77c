"""`schedlab host run` on the live kernel: refusals before touching the machine, real runs (root)
of every supported attribute, and cleanup after success and after the runner is SIGKILLed.

The real runs are not mocked: they start native workers, cgroups and a tracefs instance (or perf),
and skip, with the reason printed, only without root or where this kernel lacks a feature.
`schedlab fidelity` and `compare` without the host are in test_fidelity.py.

Every test holds the machine's host lock (host/lock.py) while it runs and lets its own runs share
it (SCHEDLAB_HOST_LOCK_FD), so two test sessions at once take turns instead of colliding; the
tests of the lock itself let go of it and take it back before checking the machine.
"""

import glob
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

import pytest
from schedlab.host import lock as hostlock

ROOT = os.geteuid() == 0
needs_root = pytest.mark.skipif(not ROOT, reason="the host runner needs root")
LOCK = {"fd": None}


def _lock():
    fd = hostlock.acquire()
    os.set_inheritable(fd, True)
    LOCK["fd"] = fd


def _unlock():
    if LOCK["fd"] is not None:
        os.close(LOCK["fd"])
        LOCK["fd"] = None


@pytest.fixture(autouse=True)
def host_lock():
    if ROOT:
        _lock()
    try:
        yield
    finally:
        _unlock()


def _popen(*args, share_lock=True, **kw):
    """`schedlab ARGS`, sharing this test's host lock unless `share_lock` is False."""
    env = dict(os.environ)
    env.pop(hostlock.ENV_FD, None)
    fds = ()
    if share_lock and LOCK["fd"] is not None:
        env[hostlock.ENV_FD] = str(LOCK["fd"])
        fds = (LOCK["fd"],)
    return subprocess.Popen([sys.executable, "-m", "schedlab", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, pass_fds=fds, **kw)


def run(*args, timeout=180, share_lock=True):
    p = _popen(*args, share_lock=share_lock)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        raise
    return subprocess.CompletedProcess(p.args, p.returncode, out, err)


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


def _instances():
    """tracefs instances, seen through a private mount of our own (the machine's mounts untouched)."""
    d = tempfile.mkdtemp(prefix="schedlab-test-tracefs-")
    try:
        if subprocess.run(["mount", "-t", "tracefs", "nodev", d], capture_output=True).returncode != 0:
            return []
        try:
            return sorted(x for x in os.listdir(os.path.join(d, "instances")) if x.startswith("schedlab"))
        finally:
            subprocess.run(["umount", d], capture_output=True)
    finally:
        os.rmdir(d)


def _procs(pattern):
    """Command lines (with pids) of the processes matching `pattern` (other tests' pgreps left out)."""
    out = subprocess.run(["pgrep", "-af", pattern], capture_output=True, text=True).stdout.splitlines()
    return [line for line in out if not line.split(" ", 2)[1:2] == ["pgrep"]]


def _state():
    """What a run could leave behind: tracefs instances, cgroups, mounts, worker processes (the
    calibration run included), guards, temporary directories."""
    # cgroup v1's cpu hierarchy, else the cgroup2 root (where the runner's groups sit there).
    cg = "/sys/fs/cgroup/cpu" if os.path.isdir("/sys/fs/cgroup/cpu") else "/sys/fs/cgroup"
    with open("/proc/mounts") as f:
        mounts = sorted(line.split()[1] for line in f)

    def mine(d):
        return sorted(x for x in os.listdir(d) if x.startswith("schedlab")) if os.path.isdir(d) else []

    return {"instances": _instances(), "cgroups": mine(cg), "mounts": mounts,
            "workers": _procs("schedlab-worker (run|calibrate)"), "guards": _procs("schedlab.host.guard"),
            "tmp": sorted(glob.glob(os.path.join(tempfile.gettempdir(), "schedlab-host-*")))}


def _machine():
    """_state() and the reserved DEADLINE bandwidth."""
    return {**_state(), "dl_bw": _dl_reserved()}


def _dl_reserved():
    return json.loads(run("host", "probe").stdout).get("dl_bw_reserved")


def _host_run(tmp_path, workload, *extra):
    wl = tmp_path / "w.json"
    wl.write_text(json.dumps(workload))
    out, facts = tmp_path / "m.json", tmp_path / "f.json"
    r = run("host", "run", str(wl), "--json", str(out), "--facts", str(facts), *extra)
    # The last: RT tasks in task groups, which cgroup2 cannot hold under RT_GROUP_SCHED.
    unavailable = ("tracefs", "worker missing", "neither cgroup v1", "on cgroup2 with RT group scheduling")
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
        assert c["agrees"] and tasks[name]["unreliable"] is None, (name, c)
        # /proc is the authority for CPU time and switches.
        assert tasks[name]["cpu_time_us"] == c["cpu_ms"][1] * 1000 or abs(
            tasks[name]["cpu_time_us"] - c["cpu_ms"][1] * 1000) < 1, (name, c)
    # Run-level counts cover the workload's threads only, as in the simulator: the pinned hogs
    # never migrate, so neither does the run, whatever else the machine ran.
    assert m["migrations"] == sum(t["migrations"] for t in tasks.values()) == 0
    # Every switch counted involves a hog: at most both hogs' switches in and out.
    assert m["context_switches"] <= 2 * sum(t["nvcsw"] + t["nivcsw"] + 1 for t in tasks.values())
    # The start release is a wakeup on both sides.
    assert all(t["wakeups"] >= 1 for t in tasks.values())
    # What a trace cannot tell is null, not 0.
    assert all(t["loops_done"] is None and t["deadline_misses"] is None for t in tasks.values())
    assert facts["hz"] and facts["kernel"] and "lockdown" in facts
    assert _state() == before


@needs_root
def test_a_sleeper_waking_on_an_idle_cpu_agrees_with_proc(tmp_path):
    # Each wakeup onto the idle CPU skips the next __schedule's clock update (core.c
    # wakeup_preempt): the kernel charges the idle-exit path (~20 µs on a VM) to the sleeper, and
    # the trace is counted the same way (trace/import.rs, import_with), so it is not withheld.
    tasks, facts, _ = _host_run(tmp_path, {"global": {"duration": 1},
                                           "tasks": {"io": {"loop": -1, "run": 50, "sleep": 5000}}})
    c = facts["crosscheck"]["io"]
    assert c["agrees"] and tasks["io"]["unreliable"] is None, c
    assert tasks["io"]["wakeup_latency_p50_us"] is not None


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
    p = _popen("host", "run", str(wl))
    deadline = time.time() + 30
    while time.time() < deadline and not _procs("schedlab-worker run"):
        if p.poll() is not None:
            pytest.fail(f"runner ended early: {p.stderr.read() if p.stderr else ''}")
        time.sleep(0.1)
    assert _procs("schedlab-worker run"), "workers never started"
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
        sim, hostv, _rel, _diff = row["cpu_share"]
        assert sim == pytest.approx(0.5, abs=0.01) and 0.35 < hostv < 0.6
    assert c["run"]["jain_fairness"][1] > 0.9


HOG = {"global": {"duration": 1}, "tasks": {"hog": {"instance": 2, "cpus": [0], "run": 100000}}}


def _wait_for(cond, what, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if cond():
            return
        time.sleep(0.02)
    pytest.fail(f"timed out waiting for {what}")


def _holder_pid():
    try:
        with open(hostlock.LOCK_PATH) as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


@needs_root
def test_two_runs_at_once_take_turns(tmp_path):
    """Two host runs started together: the second waits for the lock (saying who holds it), both
    succeed, their measured windows do not overlap, and the machine is as before."""
    before = _machine()
    wl = tmp_path / "w.json"
    wl.write_text(json.dumps(HOG))
    _unlock()
    ps = [_popen("host", "run", str(wl), "--facts", str(tmp_path / f"f{i}.json"), share_lock=False)
          for i in range(2)]
    res = [p.communicate(timeout=180) for p in ps]
    _lock()
    for p, (_, err) in zip(ps, res):
        assert p.returncode == 0, err
    waited = [err for _, err in res if "waiting for the host lock" in err]
    # One waits for the other (both, if another session's test held the lock when they started).
    assert waited and all("held by pid" in w for w in waited), [err for _, err in res]
    spans = sorted((f["start_ns"], f["start_ns"] + f["duration_ns"])
                   for f in (json.loads((tmp_path / f"f{i}.json").read_text()) for i in range(2)))
    assert spans[0][1] < spans[1][0], spans
    assert _machine() == before


@needs_root
def test_second_run_refuses_with_no_wait(tmp_path):
    """--no-wait (and --lock-timeout) refuse with one line naming the holder, exit 2, at once."""
    before = _machine()
    wl = tmp_path / "w.json"
    wl.write_text(json.dumps({**HOG, "global": {"duration": 3}}))
    _unlock()
    a = _popen("host", "run", str(wl), share_lock=False)
    _wait_for(lambda: _holder_pid() == a.pid, "the first run to take the lock")
    t0 = time.time()
    b = run("host", "run", str(wl), "--no-wait", share_lock=False, timeout=30)
    assert time.time() - t0 < 10
    assert b.returncode == 2, b.stderr
    lines = b.stderr.strip().splitlines()
    want = f"another host run holds {hostlock.LOCK_PATH} (pid {a.pid}, started"
    assert len(lines) == 1 and want in lines[0], b.stderr
    c = run("host", "run", str(wl), "--lock-timeout", "0.3", share_lock=False, timeout=30)
    assert c.returncode == 2 and "after waiting 0.3 s" in c.stderr, c.stderr
    _, err = a.communicate(timeout=120)
    assert a.returncode == 0, err
    _lock()
    assert _machine() == before


@needs_root
def test_killing_the_runner_during_calibration_leaves_nothing(tmp_path):
    """SIGKILL during calibration: the guard kills the calibration child, undoes everything, removes
    the temporary directory, and only then releases the lock; so once the lock can be taken again,
    no process, temporary directory, cgroup, tracefs instance or mount is left."""
    before = _machine()
    wl = tmp_path / "w.json"
    wl.write_text(json.dumps({"global": {"duration": 5, "taskgroups": {"/g": {"shares": 1024}}},
                              "tasks": {"hog": {"taskgroup": "/g", "cpus": [0], "run": 100000}}}))
    _unlock()
    p = _popen("host", "run", str(wl), share_lock=False)
    _wait_for(lambda: _procs("schedlab-worker calibrate") or p.poll() is not None, "the calibration run")
    assert p.poll() is None, p.stderr.read() if p.stderr else ""
    mid = _state()
    assert mid["cgroups"] and mid["instances"] and mid["guards"] and len(mid["tmp"]) == len(before["tmp"]) + 1
    p.send_signal(signal.SIGKILL)
    p.wait()
    t0 = time.time()
    _lock()  # released by the guard once it has cleaned up
    assert time.time() - t0 < 30
    assert _machine() == before


@needs_root
def test_other_deadline_tasks_are_not_a_leak(tmp_path):
    """A DEADLINE task of another process, started during a DEADLINE run and still running after it,
    changes total_bw but is not this run's leak: no report, no sched-domain rebuild."""
    if _dl_reserved() is None:
        pytest.skip("DL bandwidth unreadable here (no debugfs sched/debug)")
    before = _machine()
    wl = tmp_path / "w.json"
    wl.write_text(json.dumps({"global": {"duration": 2},
                              "tasks": {"dl": {"policy": "SCHED_DEADLINE", "dl-runtime": 1000,
                                               "dl-period": 10000, "run": 500, "sleep": 5000}}}))
    facts = tmp_path / "f.json"
    p = _popen("host", "run", str(wl), "--facts", str(facts))
    _wait_for(lambda: _procs("schedlab-worker run"), "the workers")
    time.sleep(0.5)
    other = subprocess.Popen(["chrt", "-d", "--sched-runtime", "2000000", "--sched-deadline", "20000000",
                              "--sched-period", "20000000", "0", "sleep", "60"])
    try:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        f = json.loads(facts.read_text())
        assert f["dl_bw_unexplained"] == 0, f
        assert "dl_bw_reserved_repaired" not in f
        assert not [n for n in f["notes"] if "DL bandwidth" in n], f["notes"]
        assert f["dl_bw_reserved_after"] == pytest.approx(before["dl_bw"] + 0.1, abs=1e-4)
    finally:
        other.kill()
        other.wait()
    assert _machine() == before


def test_task_group_paths_stay_inside_the_run(tmp_path):
    """`..`, `.`, empty components and trailing slashes are refused with the JSON path, before
    anything is touched (by the workload parser, and again by the host runner's own checks)."""
    from schedlab.host.cgroups import confined
    from schedlab.host.plan import HostError

    for g in ["/..", "/a/../..", "/.", "/a//b", "/a/"]:
        wl = tmp_path / "w.json"
        wl.write_text(json.dumps({"global": {"duration": 1}, "tasks": {"t": {"taskgroup": g, "run": 100}}}))
        r = run("host", "run", str(wl))
        assert r.returncode == 2 and "tasks.t.taskgroup" in r.stderr, (g, r.stderr)
        with pytest.raises(HostError):
            confined("/sys/fs/cgroup/cpu/schedlab-1", g)
    assert confined("/sys/fs/cgroup/cpu/schedlab-1", "/a/b") == "/sys/fs/cgroup/cpu/schedlab-1/a/b"


@needs_root
def test_calibrate_writes_a_profile_that_run_and_compare_use(tmp_path):
    # A guard still undoing an earlier test's killed run holds its cgroup's RT runtime (the tests
    # share one host lock, so the runs here do not wait for it); wait until it has finished.
    deadline = time.monotonic() + 30
    while (_state()["guards"] or _state()["cgroups"]) and time.monotonic() < deadline:
        time.sleep(0.2)
    before = _state()
    prof = tmp_path / "machine.json"
    r = run("calibrate", "--out", str(prof), "--seconds", "1")
    assert r.returncode == 0, r.stderr
    p = json.loads(prof.read_text())
    tun, meas = p["tunables"], p["measurements"]
    assert p["schedlab_machine_profile"] == 1 and p["hz"] == p["measured_on"]["hz"]
    # Each figure is measured, not defaulted: the sleepers woke late by something and a busy CPU's
    # wakeup costs at least a switch. The SCHED_OTHER sleeper's extra lateness (the effective timer
    # slack) is a difference of two medians of ~100 µs idle wakeups on this VM: 7.7 µs, 112 µs and
    # below zero (111 against 120 µs) were all measured here against a 50 µs setting, so it is
    # checked for range only (the tunable is clamped at 0) and the setting is recorded beside it.
    assert all(v >= 0 for v in tun.values()) and tun["context_switch_ns"] > 0
    assert 0 < meas["busy_rt_lateness_p50_ns"] < 5_000_000
    assert 0 < meas["idle_rt_lateness_p50_ns"] < 5_000_000
    assert 0 < meas["idle_other_lateness_p50_ns"] < 5_000_000
    assert meas["timer_slack_setting_ns"] == int(open("/proc/self/timerslack_ns").read())
    assert 0 <= tun["timer_slack_ns"] < 5_000_000
    assert "ipi_ns" in tun
    # SMT: this machine kind has no siblings, so the tunable is not measured, and two separate
    # cores are measured beside each other instead (the control), each run's speed positive.
    if "smt_pct" in meas:
        assert 1 <= tun["smt_speed_pct"] <= 100
    else:
        assert "smt_speed_pct" in p["not_measured"] and "smt_speed_pct" not in tun
        assert len(meas["smt_control_speed_paired"]) == len(meas["smt_control_speed_alone"]) == 3
        assert all(x > 0 for x in meas["smt_control_speed_paired"] + meas["smt_control_speed_alone"])
        assert f"{meas['smt_control_pct']} %" in p["not_measured"]["smt_speed_pct"]
    # The wakeup path's costs are the traced waking-to-running latencies (the simulator's metric,
    # and what it charges to the wakee), not the sleepers' lateness, which also holds the timer
    # interrupt's delivery (recorded apart).
    if meas["busy_rt_latency_p50_ns"] is not None and meas["idle_rt_latency_p50_ns"] is not None:
        assert tun["wakeup_ns"] == meas["busy_rt_latency_p50_ns"]
        assert tun["idle_exit_ns"] == max(0, meas["idle_rt_latency_p50_ns"] - meas["busy_rt_latency_p50_ns"])
        assert meas["idle_rt_late_beyond_latency_ns"] == (meas["idle_rt_lateness_p50_ns"]
                                                          - meas["idle_rt_latency_p50_ns"])
    else:
        assert "traced_latency" in p["not_measured"]
    # The delays' spread and tail are the FIFO sleepers' mean traced p90/p50 and p99/p90, in percent;
    # the spread's tunable is the one with which the simulated sleepers show the measured ratio
    # (fit_spread), at most the measurement itself.
    from schedlab.host.calibrate import SHAPES, latency_ratios

    for key, hi, lo, top in SHAPES:
        ratios = latency_ratios(meas, hi, lo)
        if ratios:
            measured = min(top, round(100 * sum(ratios) / len(ratios)))
            if key == "wakeup_spread_pct":
                assert meas["wakeup_spread_measured_pct"] == measured
                assert 100 <= tun[key] <= max(100, measured)
            else:
                assert tun[key] == measured >= 100
        else:
            assert key in p["not_measured"]
    # The idle exit's ramp: the short idle sleeper's exit as a share of the whole, kept between the
    # two sleeps (1 and 5 ms).
    from schedlab.host.calibrate import _idle_exit_ramp

    if meas["idle_short_rt_latency_p50_ns"] is not None:
        assert tun["idle_exit_ramp_ns"] == _idle_exit_ramp(meas, tun["wakeup_ns"], tun["idle_exit_ns"])
        assert 1_000_000 <= tun["idle_exit_ramp_ns"] <= 5_000_000
    else:
        assert "idle_exit_ramp_ns" in p["not_measured"]
    lat = {"idle_short_rt_latency_p50_ns": 11_000}
    assert _idle_exit_ramp(lat, 8_000, 12_000) == 4_000_000       # 3 of 12 us after 1 ms: a 4 ms ramp
    assert _idle_exit_ramp(lat, 12_000, 12_000) == 5_000_000      # no shorter exit measured
    assert _idle_exit_ramp(lat, 1_000, 5_000) == 1_000_000        # the whole exit already at 1 ms
    assert _idle_exit_ramp({"idle_short_rt_latency_p50_ns": None}, 1, 1) is None
    # The timer jitter is the width of a uniform delay with the sleeper's lateness spread; the OS
    # noise comes from a lone hog's interruptions (or is listed as not measured, none seen).
    assert tun["timer_jitter_ns"] == max(0, round(2.5 * (meas["idle_other_lateness_p90_ns"]
                                                        - meas["idle_other_lateness_p50_ns"])))
    if meas["noise_hog_nivcsw"]:
        n = meas["noise_hog_nivcsw"]
        assert tun["noise_runtime_us"] == min(100_000, max(1, round((1e6 - meas["noise_hog_cpu_us"]) / n)))
        assert tun["noise_interval_us"] >= 1
    else:
        assert "noise_interval_us" in p["not_measured"]
    wl = tmp_path / "w.json"
    wl.write_text(json.dumps({"global": {"duration": 1}, "tasks": {"hog": {"cpus": [0], "run": 100000}}}))
    out = tmp_path / "m.json"
    r = run("run", str(wl), "--machine", str(prof), "--json", str(out), "--quiet")
    assert r.returncode == 0, r.stderr
    assert json.loads(out.read_text())["tunables"]["timer_slack_ns"] == tun["timer_slack_ns"]
    r = run("compare", "--workload", str(wl), "--machine", str(prof))
    assert r.returncode == 0, r.stderr
    assert _state() == before


@needs_root
def test_fidelity_judges_the_suite_on_both_sides(tmp_path):
    before = _state()
    out = tmp_path / "f.json"
    r = run("fidelity", "--seconds", "1", "--only", "wake-busy,nice-hogs", "--json", str(out))
    assert r.returncode == 0, r.stderr
    f = json.loads(out.read_text())
    assert sorted(f["workloads"]) == ["nice-hogs", "wake-busy"]
    for w in f["workloads"].values():
        # The simulator ticks where the host run did (host.tick_phase; HZ >= 100).
        assert 0 <= w["tick_phase_ns"] < 10_000_000, w
        for row in w["tasks"]:
            j = row["cpu_time_us"]
            # Judged from the numbers shown: ok iff within 3 % of the host's /proc CPU time.
            if j["host"]:
                assert j["ok"] == (abs(j["sim"] - j["host"]) <= 0.03 * j["host"]), row
    assert "within tolerance" in r.stdout and "outside it" in r.stdout
    bad = run("fidelity", "--only", "nope")
    assert bad.returncode == 2 and "unknown workload 'nope'" in bad.stderr
    assert _state() == before


RT_ROOT = "/sys/fs/cgroup/cpu"


@needs_root
@pytest.mark.skipif(not os.path.exists(os.path.join(RT_ROOT, "cpu.rt_runtime_us")),
                    reason="needs cgroup v1 cpu with RT_GROUP_SCHED")
def test_a_removed_group_gives_its_rt_runtime_back_at_once(tmp_path):
    # A group's RT runtime still counts against the root for a while after rmdir returns, so the
    # next run's group was refused the root's runtime (EINVAL: 398 of 400 back-to-back tries on this
    # VM; calibrate's three runs in a row failed that way now and then). The undo journal's rmdir
    # gives the runtime back first, so a group made right after can take all of it, every time.
    from schedlab.host import undo

    total = open(os.path.join(RT_ROOT, "cpu.rt_runtime_us")).read().strip()
    for i in range(20):
        d = os.path.join(RT_ROOT, f"schedlab-test-rt-{os.getpid()}-{i % 2}")
        journal = tmp_path / f"j{i}.json"
        j = undo.Journal(str(journal))
        j.add(rmdir=d)
        try:
            os.mkdir(d)
            undo.write(os.path.join(d, "cpu.rt_runtime_us"), total)
        finally:
            assert undo.undo(str(journal)) == []
        assert not os.path.exists(d)


def test_the_smt_pair_is_two_threads_of_one_core_among_the_online_cpus():
    from schedlab.host.calibrate import sibling_pair

    # Four cores of two threads numbered as Linux does on x86 (cpu N and N+4 share a core).
    smt = {c: f"{c % 4},{c % 4 + 4}" for c in range(8)}
    assert sibling_pair(list(range(8)), 7, smt.get) == (7, 3)
    # A sibling offline (not among the CPUs) does not count; the next CPU's pair is taken.
    assert sibling_pair([0, 1, 2, 3, 5], 3, smt.get) == (1, 5)
    # Without SMT each CPU is its own list; unreadable sysfs counts as none.
    assert sibling_pair([0, 1], 1, {0: "0", 1: "1"}.get) is None
    assert sibling_pair([0, 1], 1, lambda c: None) is None
    assert sibling_pair([0, 1, 2, 3], 0, {c: "0-3" for c in range(4)}.get) == (0, 1)


def test_the_tick_phase_puts_the_simulated_ticks_on_the_hosts_jiffy_grid():
    from schedlab.host import proc_other_ms, sim_tunables, tick_phase

    # Ticks at multiples of 4 ms (HZ 250) of CLOCK_MONOTONIC: a run starting 1 ms past one
    # sees its first tick 3 ms in.
    assert tick_phase(10_001_000_000, 250) == 3_000_000
    assert tick_phase(12_000_000, 250) == 0
    assert tick_phase(1, 1000) == 999_999
    assert tick_phase(5, None) is None
    assert tick_phase(5, 250, "console=ttyS0 skew_tick=1 quiet") is None
    assert sim_tunables({"tick_phase_ns": 7}, {"wakeup_ns": 1}) == {"wakeup_ns": 1, "tick_phase_ns": 7}
    assert sim_tunables({"tick_phase_ns": 7}, {"tick_phase_ns": 2}) == {"tick_phase_ns": 2}
    assert sim_tunables({"tick_phase_ns": None}) == {}
    # Work counted as time on the CPU is the same at any speed, so a sibling's SMT slowdown
    # (measured with loops) does not apply to it; work counted in loops keeps the profile's.
    prof = {"smt_speed_pct": 60}
    assert sim_tunables({"tick_phase_ns": None, "work": "oncpu"}, prof) == {"smt_speed_pct": 100}
    assert sim_tunables({"tick_phase_ns": None, "work": "loops"}, prof) == prof
    # The run's other load becomes one unpinned noise thread of the same rate and CPU per run;
    # a profile's own noise wins.
    busy = {"tick_phase_ns": None, "duration_ns": 3_000_000_000, "other_load": {"runs": 60, "cpu_ms": 6.0}}
    assert sim_tunables(busy) == {"noise_interval_us": 49_900, "noise_runtime_us": 100, "noise_per_cpu": 0}
    assert sim_tunables(busy, {"noise_interval_us": 5}) == {"noise_interval_us": 5}
    assert sim_tunables({**busy, "other_load": {"runs": 0, "cpu_ms": 0.0}}) == {}
    # /proc/stat's figure caps the trace's (a switch-out the trace hid charges a thread for idle
    # time); a larger one leaves it.
    hidden = {**busy, "other_load": {"runs": 60, "cpu_ms": 1418.0, "cpu_ms_proc": 6.0}}
    assert sim_tunables(hidden) == sim_tunables(busy)
    larger = {**busy, "other_load": {"runs": 60, "cpu_ms": 6.0, "cpu_ms_proc": 60.0}}
    assert sim_tunables(larger) == sim_tunables(busy)
    # No one thread ran most of the times (kworkers on every CPU): a thread per CPU at its share of
    # the rate; one that did (a daemon) or no share recorded: one unpinned thread.
    many = {**busy, "cpus": [0, 1, 2, 3], "other_load": {"runs": 60, "cpu_ms": 6.0, "top_runs_share": 0.2}}
    assert sim_tunables(many) == {"noise_interval_us": 199_900, "noise_runtime_us": 100, "noise_per_cpu": 1}
    one = {**many, "other_load": {**many["other_load"], "top_runs_share": 0.7}}
    assert sim_tunables(one) == sim_tunables(busy)
    per_cpu = {"cpu_ms": {0: {"busy": 1000.0}, 1: {"busy": 30.0}}}
    assert proc_other_ms(per_cpu, [{"cpu_time_us": 1_020_000}]) == 10.0
    assert proc_other_ms(per_cpu, [{"cpu_time_us": 2_000_000}]) == 0.0
    assert proc_other_ms({}, []) is None


@needs_root
def test_the_host_ticks_on_the_jiffy_grid_the_simulator_is_given(tmp_path):
    """host.tick_phase assumes the kernel's ticks fall on multiples of TICK_NSEC of
    CLOCK_MONOTONIC (the trace clock): two hogs sharing a CPU are preempted at ticks only (their
    1.4 ms slices end between ticks), so every preemption must land just after a grid point."""
    trace = tmp_path / "t.txt"
    tasks, facts, m = _host_run(tmp_path, {"global": {"duration": 1},
                                           "tasks": {"hog": {"instance": 2, "cpus": [0], "run": 100000}}},
                                "--trace", str(trace))
    if facts.get("backend") != "tracefs":
        pytest.skip("the tick check reads tracefs text")
    hz, phase, start = facts["hz"], facts["tick_phase_ns"], facts["start_ns"]
    tick = (10**9 + hz // 2) // hz
    assert 0 <= phase < tick and (start + phase) % tick == 0
    offsets = []
    for line in trace.read_text().splitlines():
        if ": sched_switch:" in line and "prev_comm=hog-" in line and "prev_state=R" in line:
            ts_ns = round(float(line.split(": sched_switch:")[0].split()[-1]) * 1e6) * 1000
            offsets.append((ts_ns - start - phase) % tick)
    assert len(offsets) > 100, len(offsets)
    near = sum(o < 300_000 for o in offsets)
    assert near >= 0.9 * len(offsets), sorted(offsets)


@needs_root
def test_a_periodic_threads_timer_counts_from_its_release_as_in_the_simulator(tmp_path):
    """A `timer` counts its first period from the thread's release (the common start plus its
    delay), not from when the thread first got a CPU (engine/exec.rs `step`): beside two hogs
    on every CPU the periodic thread first runs up to a slice late, which put its wakeups
    0.3-0.4 ms after the simulator's on the 2-vCPU VM, enough to decide whether its 2 ms run
    crosses a tick after its slice is used up. Its timer wakeups must fall within timer slack
    and the wakeup path of the grid start + delay + k periods. (Absolute: a relative timer
    restarts its grid after an overrun, which one stall of the VM causes.)"""
    trace = tmp_path / "t.txt"
    ncpu = len(os.sched_getaffinity(0))
    tasks, facts, m = _host_run(tmp_path, {"global": {"duration": 1},
                                           "tasks": {"ctl": {"loop": -1, "run": 2000, "delay": 1000,
                                                             "timer": {"ref": "ctl", "period": 10000,
                                                                       "mode": "absolute"}},
                                                     "hog": {"instance": 2 * ncpu, "run": 10_000_000}}},
                                "--trace", str(trace))
    if facts.get("backend") != "tracefs":
        pytest.skip("the grid check reads tracefs text")
    grid0 = facts["start_ns"] + 1_000_000
    offsets = []
    for line in trace.read_text().splitlines():
        if ": sched_waking:" in line and "comm=ctl " in line:
            ts_ns = round(float(line.split(": sched_waking:")[0].split()[-1]) * 1e6) * 1000
            if ts_ns > grid0 + 5_000_000:  # the timer's wakeups, not the release
                offsets.append((ts_ns - grid0) % 10_000_000)
    assert len(offsets) > 50, len(offsets)
    offsets.sort()
    # Timer slack (50 us for SCHED_OTHER) and the hrtimer interrupt: the median well under
    # 200 us (56-58 us in three runs on the 2-vCPU VM; 290-370 us from the first run).
    assert offsets[len(offsets) // 2] < 200_000, offsets


def test_rt_tasks_stay_in_the_root_cgroup_on_cgroup2_with_rt_group_sched(tmp_path):
    """cgroup2 under RT_GROUP_SCHED (the 16-CPU machine of issue 13: sched_setattr(SCHED_FIFO)
    EPERM in the run's group): a process with an RT thread joins the root cgroup; a task group for
    a thread of such a process is one clear error; fair processes still join the run's group."""
    from schedlab.api import check
    from schedlab.host import cgroups
    from schedlab.host.plan import HostError, make
    from schedlab.host.probe import rt_group_sched_enabled
    from schedlab.host.undo import Journal

    cfg = {"CONFIG_RT_GROUP_SCHED": "y"}
    assert rt_group_sched_enabled(cfg, "quiet") is True
    assert rt_group_sched_enabled(cfg, "quiet rt_group_sched=0") is False
    assert rt_group_sched_enabled({**cfg, "CONFIG_RT_GROUP_SCHED_DEFAULT_DISABLED": "y"}, "") is False
    assert rt_group_sched_enabled({**cfg, "CONFIG_RT_GROUP_SCHED_DEFAULT_DISABLED": "y"}, "rt_group_sched=1")
    assert rt_group_sched_enabled({}, "rt_group_sched=1") is False

    root = tmp_path / "cg"
    root.mkdir()
    (root / "cgroup.subtree_control").write_text("cpu memory\n")
    cg = {"flavour": "v2", "root": str(root), "rt_group_sched": True}

    def setup(tasks):
        model = check({"global": {"duration": 1}, "tasks": tasks})
        plan = make(model, 2)
        lab = cgroups.setup(plan, cg, Journal(str(tmp_path / f"j{len(os.listdir(tmp_path))}")), True)
        return plan, lab

    plan, lab = setup({"rt": {"policy": "SCHED_FIFO", "run": 100}, "hog": {"run": 100}})
    files = {th["name"]: th["cgroup_files"] for ths in plan.procs.values() for th in ths}
    assert files["rt"] == [str(root / "cgroup.procs")]
    assert files["hog"] == [f"{lab}/cgroup.procs", f"{lab}/cgroup.threads"]
    assert any("'rt' runs in the root cgroup" in n for n in plan.notes)
    with pytest.raises(HostError, match="task 'b' is in task group '/g' and shares process 'p'"):
        setup({"a": {"policy": "SCHED_FIFO", "process": "p", "run": 100},
               "b": {"process": "p", "taskgroup": "/g", "run": 100}})



def test_calibrate_fits_the_spread_through_the_simulator():
    # The simulated sleepers' p90/p50 exceeds wakeup_spread_pct (the rest of the path adds its own
    # spread), so calibrate fits the tunable through the simulator rather than writing the measured
    # ratio: the chosen value is below the measurement and its simulated ratio is the nearest among
    # its neighbours. Tunables of a 2-vCPU calibration (2026-11-27); no host needed.
    from schedlab.host.calibrate import fit_spread, simulated_spread

    tun = {"context_switch_ns": 1913, "wakeup_ns": 5003, "idle_exit_ns": 12004, "timer_slack_ns": 52852,
           "wakeup_tail_pct": 423, "idle_exit_ramp_ns": 4001333}
    sp = fit_spread(tun, 160, 250, 2, 1, 2)
    assert 100 < sp < 160, sp

    def miss(s: int) -> float:
        return abs(simulated_spread(tun, s, 250, 2, 1, 2) - 1.6)

    assert miss(sp) <= min(miss(sp - 5), miss(sp + 5)) and miss(sp) < 0.1
    assert simulated_spread(tun, 160, 250, 2, 1, 2) > 1.7
    assert fit_spread(tun, 100, 250, 2, 1, 2) == 100  # no spread measured: none


@needs_root
def test_switches_tracefs_loses_are_recorded_by_bpf(tmp_path):
    # On this project's VMs tracefs keeps no record the idle task writes in its own context on
    # CPUs other than 0, its switches to woken or pulled tasks among them (docs/model.md, "Missing
    # records"): a hog pulled onto an idle CPU then ran unseen, and its trace disagreed with /proc
    # (2-vCPU VM, 2026-11-27: involuntary switches 859 by the trace against 412). The runner's BPF
    # program records every switch and the missing ones are added to the text: the trace agrees
    # with /proc again and the hog's migrations are measured. On a kernel that loses nothing the
    # same holds with nothing added.
    tasks, facts, _ = _host_run(tmp_path, {"global": {"duration": 1}, "tasks": {
        "dl1": {"policy": "SCHED_DEADLINE", "dl-runtime": 5500, "dl-period": 10000, "run": 5200,
                "timer": {"ref": "unique", "period": 10000}},
        "dl2": {"policy": "SCHED_DEADLINE", "dl-runtime": 6000, "dl-period": 11000, "run": 5700,
                "timer": {"ref": "unique2", "period": 11000}},
        "hog": {"run": 100000}}})
    b = facts["bpf_switches"]
    if "unavailable" in b:
        pytest.skip(f"no BPF here: {b['unavailable']}")
    assert b["switches"] > 500 and b["lost"] == 0, b
    for name, c in facts["crosscheck"].items():
        assert c["agrees"] and tasks[name]["unreliable"] is None, (name, c)
        assert abs(c["nivcsw"][0] - c["nivcsw"][1]) <= 3 and abs(c["nvcsw"][0] - c["nvcsw"][1]) <= 3, (name, c)
    assert tasks["hog"]["migrations"] is not None


def test_bpf_switches_join_the_text_where_the_cpus_records_say():
    # A switch only BPF saw goes between its CPU's records of the outgoing task's context (the
    # wakeup in idle's hard-IRQ) and the incoming one's (its sys_exit), at its BPF time less the
    # offset the matched switches show (4 µs here), kept inside its neighbours' times; switches
    # the text has are not added twice.
    from schedlab.host.bpf import Switch, merge

    head = "# tracer: nop\n"
    wake = ("          <idle>-0       (-------) [001] dNh2.   100.000010: sched_wakeup: comm=w pid=42 "
            "prio=120 target_cpu=001\n")
    ret = "               w-42      (     42) [001] .....   100.000020: sys_exit: NR 230 = 0\n"
    out = ("               w-42      (     42) [001] d..2.   100.000500: sched_switch: prev_comm=w prev_pid=42 "
           "prev_prio=120 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120\n")
    other = ("          <idle>-0       (-------) [000] d..2.   100.000600: sched_switch: prev_comm=swapper/0 "
             "prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=h next_pid=7 next_prio=120\n")
    text = head + wake + ret + out + other

    def sw(us, cpu, prev, nxt, state=0):
        comm = {0: "swapper", 7: "h", 42: "w"}
        return Switch(100_000_000_000 + us * 1000, cpu, prev, nxt, 120, 120, state, comm[prev], comm[nxt])

    seen = [sw(504, 1, 42, 0, 1), sw(604, 0, 0, 7)]
    merged, added = merge(text, [sw(22, 1, 0, 42)] + seen)
    assert added == 1
    lines = merged.splitlines()
    assert lines[1] == wake.rstrip("\n") and lines[3] == ret.rstrip("\n"), merged
    assert "100.000018: sched_switch: prev_comm=swapper prev_pid=0" in lines[2] and "next_pid=42" in lines[2]
    assert "(bpf----) [001]" in lines[2] and "prev_state=R " in lines[2]
    # Estimated after the task's own record: the context wins, the time is held to its neighbours'.
    merged, _ = merge(text, [sw(30, 1, 0, 42)] + seen)
    assert "100.000020: sched_switch" in merged.splitlines()[2]
    # Nothing missing: the text as it was.
    assert merge(text, seen) == (text, 0)
    assert "prev_state=S ==>" in sw(0, 1, 42, 0, 1).line(0)
    assert "prev_state=R+" in sw(0, 1, 42, 0, 0x100).line(0)
    # Two CPUs' switches that belong at one place keep the text in time order.
    other_cpu = Switch(100_000_000_000 + 23_000, 0, 0, 9, 120, 120, 0, "swapper", "x")
    merged, added = merge(text, [sw(22, 1, 0, 42), other_cpu] + seen)
    stamps = [ln.split(": ")[0].split()[-1] for ln in merged.splitlines()[1:]]
    assert added == 2 and stamps == sorted(stamps), merged
