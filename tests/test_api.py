"""The Python API: inputs, result object, DataFrames, descriptions."""

import json

import pandas as pd
import pytest
import schedlab

WL = {
    "global": {"duration": 2},
    "tasks": {
        "a": {"run": 100000},
        "b": {"priority": 5, "run": 100000},
        "p": {"run": 1000, "timer": {"ref": "unique", "period": 10000}},
    },
}


@pytest.mark.parametrize("form", ["dict", "string", "path"])
def test_inputs_are_equivalent(form, tmp_path):
    if form == "dict":
        wl = WL
    elif form == "string":
        wl = json.dumps(WL)
    else:
        wl = tmp_path / "w.json"
        wl.write_text(json.dumps(WL))
    r = schedlab.simulate(wl, "cfs", cpus=1, seed=3)
    assert r.metrics.scheduler == "cfs" and r.metrics.cpus == 1
    assert set(r.tasks.index) == {"a", "b", "p"}


def test_dataframes_and_metrics():
    r = schedlab.simulate(WL, cpus=2)
    assert isinstance(r.tasks, pd.DataFrame) and isinstance(r.cpus, pd.DataFrame)
    assert len(r.cpus) == 2
    assert abs(r.cpus.busy_us.sum() - r.tasks.cpu_time_us.sum()) < 1.0
    acts = r.activations
    assert list(acts.columns) == ["task", "time_us", "slack_us"]
    assert (acts.task == "p").all() and len(acts) >= 190
    assert 0 < r.metrics.jain_fairness <= 1


def test_every_metric_is_described():
    d = schedlab.metric_descriptions()
    r = schedlab.simulate(WL)
    assert set(r.metrics) == set(d["run"])
    assert set(r.metrics.tasks[0]) == set(d["task"])
    assert set(r.metrics.cpu[0]) == set(d["cpu"])
    assert "percentile" in schedlab.Metrics.describe("wakeup_latency_p99_us")


def test_schedulers_listing():
    s = schedlab.schedulers()
    names = [x["name"] for x in s["schedulers"]]
    # Default first; every scheduler of seed 002 is registered (issue 14).
    assert names[:2] == ["eevdf", "cfs"] and len(set(names)) == len(names)
    seed002 = {"bfs", "muqss", "baby", "bmq", "pds", "bore", "bore-1.7", "cacule", "tt"}
    assert seed002 | {"scx_simple", "eevdf-6.18"} <= set(names)
    eevdf = s["schedulers"][0]
    assert any(t["name"] == "base_slice_ns" and t["default"] == 700000 for t in eevdf["tunables"])


def test_tunable_changes_behaviour():
    hogs = {"global": {"duration": 2}, "tasks": {"h": {"instance": 2, "run": 100000}}}
    short = schedlab.simulate(hogs, hz=1000)
    long = schedlab.simulate(hogs, hz=1000, set={"base_slice_ns": 10_000_000})
    assert short.metrics.context_switches > 5 * long.metrics.context_switches


def test_duration_override_and_parse():
    assert schedlab.parse_duration("250ms") == 250_000_000
    assert schedlab.parse_duration(1.5) == 1_500_000_000
    r = schedlab.simulate(WL, duration="500ms")
    assert r.metrics.duration_us == 500_000


def test_fairness_subset():
    r = schedlab.simulate(WL, fairness_tasks=["a", "b"])
    assert r.metrics.fairness_tasks == ["a", "b"]


def test_determinism_and_seed_independence():
    a = schedlab.simulate(WL, cpus=2, trace=True, seed=1).ftrace_text()
    b = schedlab.simulate(WL, cpus=2, trace=True, seed=1).ftrace_text()
    assert a == b


def test_os_noise_is_seeded_and_kept_out_of_fairness():
    hogs = {"global": {"duration": 2}, "tasks": {"h": {"instance": 3, "run": 100000}}}
    noisy = {"noise_interval_us": 5000}
    a = schedlab.simulate(hogs, cpus=2, set=noisy, seed=1, trace=True)
    b = schedlab.simulate(hogs, cpus=2, set=noisy, seed=1, trace=True)
    c = schedlab.simulate(hogs, cpus=2, set=noisy, seed=2, trace=True)
    assert a.ftrace_text() == b.ftrace_text() != c.ftrace_text()
    assert list(a.tasks.name) == ["h-0", "h-1", "h-2", "noise/0", "noise/1"]
    assert set(a.tasks.process[3:]) == {"[noise]"}
    assert a.metrics.fairness_tasks == ["h-0", "h-1", "h-2"]


def test_jobs_dataframe_for_deadline_tasks():
    wl = {"global": {"duration": 1, "calibration": 100}, "tasks": {
        "d": {"policy": "SCHED_DEADLINE", "dl-runtime": 2000, "dl-period": 10000,
              "run": 2000, "timer": {"ref": "unique", "period": 10000}}}}
    r = schedlab.simulate(wl, zero_costs=True)  # a closed form: no wakeup costs
    j = r.jobs
    assert len(j) == 100 and (j.response_us == 2000).all() and (j.lateness_us == -8000).all()
    t = r.tasks.loc["d"]
    # The job released at exactly 1 s counts as released (as SimSo counts).
    assert (t.jobs_released, t.jobs_completed, t.deadline_misses) == (101, 100, 0)
    assert t.policy == "SCHED_DEADLINE"


def test_crsr_and_fair_degree_on_the_tsf_worked_example():
    wl = {"global": {"duration": 10, "calibration": 100}, "tasks": {
        "X": {"run": 1000000, "memory_intensity": 0}, "Y": {"run": 1000000, "memory_intensity": 8 / 9}}}
    base = schedlab.simulate(wl, "cfs", freq_mhz=[(2000, 2000)])
    plain = schedlab.simulate(wl, "cfs", freq_mhz=[(1000, 2000)])
    tsf = schedlab.simulate(wl, "cfs+tsf", freq_mhz=[(1000, 2000)])
    assert list(schedlab.crsr(plain, base).round(3)) == [0.5, 0.9]
    assert abs(schedlab.fair_degree(plain, base) - 0.2) < 1e-3
    assert schedlab.fair_degree(tsf, base) < 0.002
    assert tsf.metrics.scheduler == "cfs+tsf"


def test_task_frame_follows_pandas_habits():
    # An unnamed index (reset_index and groupby by a column work) and numeric dtypes with NaN
    # for what was not measured (neither task has timer jobs: no turnaround, no response time).
    r = schedlab.simulate({"global": {"duration": 1}, "tasks": {
        "hog": {"run": 1000000}, "io": {"loop": -1, "run": 100, "sleep": 900}}})
    t = r.tasks
    assert t.index.name is None and list(t.index) == ["hog", "io"]
    assert list(t.reset_index()["index"]) == ["hog", "io"]
    assert t.groupby("name").cpu_time_us.sum().loc["io"] > 0
    for col in ("wakeup_latency_p99_us", "turnaround_us", "response_avg_us", "slack_min_us"):
        assert t[col].dtype == "float64", col
    assert t.turnaround_us.isna().all() and t.response_avg_us.isna().all()
    assert t.loc["io"].wakeup_latency_p99_us >= 0
    assert r.cpus.index.name is None


def _imported_by_cli(argv, modules):
    """Run `schedlab ARGV` in a fresh interpreter (its output swallowed): which of `modules` it
    imported, and its exit code, as one line."""
    import subprocess
    import sys

    code = ("import sys, io; from schedlab import cli; "
            f"sys.argv = ['schedlab', *{list(argv)!r}]; "
            "out, sys.stdout = sys.stdout, io.StringIO()\n"
            "try:\n    rc = cli.main()\nexcept SystemExit as e:\n    rc = e.code or 0\n"
            "sys.stdout = out\n"
            f"print(sorted(m for m in {tuple(modules)!r} if m in sys.modules), rc)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=str(__import__("pathlib").Path(__file__).resolve().parents[1])).stdout
    return out.strip().splitlines()[-1]


def test_cli_check_does_not_import_pandas_or_matplotlib():
    # Start-up of `schedlab check` (issue 17): the heavy libraries load only where used.
    assert _imported_by_cli(["check", "examples/mixed.json"], ("pandas", "matplotlib", "numpy")) == "[] 0"


def _same_json(a, b):
    """Equal values of equal types (an int is not a float here, as json.loads tells them apart)."""
    if isinstance(a, dict):
        return isinstance(b, dict) and list(a) == list(b) and all(_same_json(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(_same_json(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and (a == b or (a != a and b != b))


def test_metrics_cross_as_objects_exactly_as_through_json():
    # The run path hands options and metrics to and from the core as Python objects (no `json`
    # import, issue 18); they are what the JSON text gives, key order and int/float included.
    wl = {"global": {"duration": 1},
          "tasks": {"hog": {"instance": 3, "run": 100000, "priority": -5},
                    "io": {"sleep": 5000, "run": 500},
                    "dl": {"policy": "SCHED_DEADLINE", "dl-runtime": 1000, "dl-deadline": 10000,
                           "dl-period": 10000, "run": 900, "timer": {"ref": "t", "period": 10000}}}}
    runs = [schedlab.simulate(wl, "eevdf", 2, set={"base_slice_ns": 2_000_000}, fairness_tasks=["hog"]),
            schedlab.simulate("examples/mixed.json", "cfs", 4, freq_mhz=[(1000, 2000)]),
            schedlab.simulate(wl, "eevdf", 2, trace=True),
            schedlab.simulate({"global": {"duration": 1}, "tasks": {"hog": {"instance": 300, "run": 10**6}}},
                              "bmq", 8),
            # An imported trace: the unmeasured run, task and CPU fields are null.
            schedlab.import_trace("tests/fixtures/traces/trace-cmd-report-default.txt", tolerant=True).result]
    for r in runs:
        assert _same_json(r._native.metrics(), json.loads(r._native.metrics_json()))
    assert runs[-1].metrics["hz"] is None and runs[-1].metrics["cpu"][0]["avg_freq_mhz"] is None
    # The options: the same run from a dict and from the JSON text of that dict.
    text = json.dumps(wl)
    config = {"scheduler": "eevdf", "cpus": 2, "hz": 1000, "set": [["base_slice_ns", 2_000_000]],
              "freq_mhz": [(1500, 2000)], "duration": None}
    a = schedlab._native.simulate(text, "<t>", config)
    b = schedlab._native.simulate(text, "<t>", json.dumps(config))
    assert a.metrics_json() == b.metrics_json()
    for bad in ({"cpus": "two"}, {"cpus": 2**70}, {"hz": -1}):
        msgs = []
        for form in (bad, json.dumps(bad)):
            with pytest.raises(schedlab.ConfigError) as e:
                schedlab._native.simulate(text, "<t>", form)
            msgs.append(str(e.value))
        assert msgs[0] == msgs[1] and msgs[0].startswith("run option ")
    with pytest.raises(TypeError):
        schedlab._native.simulate(text, "<t>", {"cpus": object()})


def test_cli_run_imports_no_json_module():
    # Start-up of `schedlab run` (issue 18): `json` (about 1.3 ms) is imported only where used.
    assert _imported_by_cli(["run", "examples/mixed.json", "--cpus", "2"], ("json",)) == "[] 0"


def test_load_balance_pulls_below_an_overloaded_group_under_the_domain_average(root):
    """calculate_imbalance's unsigned arithmetic (fair.c 6.18): 20 hogs nice -5/0/0/5 on 16 CPUs
    leave the CPUs holding two tasks (overloaded) below the domain average, which the lone nice -5
    hogs raise; the kernel still pulls load to a CPU below the average (the first term wraps). The
    16-CPU host: ~100 migrations in 8 s, Jain 0.936. With saturating arithmetic the simulator moved
    nothing (Jain 0.890)."""
    m = schedlab.simulate(str(root / "examples/fidelity/hogs-nice20.json"), "eevdf-6.18", 16).metrics
    assert m["migrations"] >= 20 and m["jain_fairness"] > 0.91, (m["migrations"], m["jain_fairness"])


def test_sleep_timers_on_one_cpu_expire_together_within_the_slack():
    """hrtimer slack coalescing (engine/hrtimer.rs; hrtimer.c __hrtimer_run_queues): b's timer
    (soft expiry 20 us after a's) lies inside a's 50 us slack window on the same CPU, so it
    expires with a's instead of at its own hard expiry; c's (60 us after a's) keeps its own."""
    wl = {"global": {"duration": 1},
          "tasks": {n: {"cpus": [0], "sleep": s, "run": 10} for n, s in
                    (("a", 5000), ("b", 5020), ("c", 5060))}}
    # The start's wakeup costs at their medians (no spread): the times below are closed forms.
    text = schedlab.simulate(wl, "eevdf", 1, trace=True,
                             set={"timer_slack_ns": 50_000, "wakeup_spread_pct": 0}).ftrace_text()
    waking = {}
    for line in text.splitlines():
        if "sched_waking:" in line:
            comm = line.split("comm=")[1].split()[0]
            if float(line.split(": sched_waking")[0].split()[-1]) > 0:
                waking.setdefault(comm, float(line.split(": sched_waking")[0].split()[-1]))
    # The three go to sleep at 20 us (their start's wakeup costs), so a's window is 5020..5070.
    got = {k: round(v * 1e6) for k, v in waking.items()}
    assert got == {"a": 5070, "b": 5070, "c": 5130}, got


def test_timer_jitter_spreads_sleep_cycles_reproducibly():
    """timer_jitter_ns (engine/latency.rs): each sleep timer fires a seeded uniform 0..J late, so
    a sleeper's cycles spread over [c, c + J] instead of all lasting c; same seed, same cycles;
    the default 0 keeps every cycle alike."""
    wl = {"global": {"duration": 1}, "tasks": {"s": {"loop": -1, "run": 100, "sleep": 2000}}}

    def cycles(**kw):
        text = schedlab.simulate(wl, "eevdf", 1, trace=True, **kw).ftrace_text()
        ts = [float(x.split(": sched_waking")[0].split()[-1]) for x in text.splitlines()
              if "sched_waking: comm=s " in x]
        return [round((b - a) * 1e9) for a, b in zip(ts[1:], ts[2:])]

    # Whole microseconds (no 3.8 µs switch cost, the wakeup path at its median every time, the
    # whole idle exit rather than a share of it by the idle's length), as the ftrace text prints them;
    # the idle CPU's tick stopped at idle entry (the retained tick, falling in the slack window at
    # some cycles, would expire the timer early there: engine/nohz.rs, hrtimer.rs).
    flat = {"context_switch_ns": 0, "wakeup_spread_pct": 0, "idle_exit_ramp_ns": 0, "idle_tick_retain": 0}
    base = cycles(set=flat)
    assert len(set(base)) == 1
    jit = cycles(set={"timer_jitter_ns": 20_000, **flat}, seed=3)
    assert jit == cycles(set={"timer_jitter_ns": 20_000, **flat}, seed=3)
    # Consecutive timers each add 0..J: a cycle is c + (j_next - j_prev), within c ± J.
    # (The ftrace text has microseconds: up to 41 distinct cycle lengths.)
    assert all(abs(c - base[0]) <= 20_000 for c in jit) and len(set(jit)) > 15


def test_first_cpu_is_where_the_start_placed_each_task():
    """Four hogs on four idle CPUs start one per CPU; pinned tasks start on their CPU."""
    wl = {"global": {"duration": 1},
          "tasks": {"hog": {"instance": 4, "run": 1000000}}}
    r = schedlab.simulate(wl, "eevdf", cpus=4)
    assert sorted(t["first_cpu"] for t in r.metrics.tasks) == [0, 1, 2, 3]
    pinned = {"global": {"duration": 1},
              "tasks": {"a": {"run": 1000, "cpus": [2]}, "b": {"run": 1000, "cpus": [3]}}}
    r = schedlab.simulate(pinned, "eevdf", cpus=4)
    assert {t["name"]: t["first_cpu"] for t in r.metrics.tasks} == {"a": 2, "b": 3}
    assert "start placed it" in r.metrics.describe("first_cpu")
