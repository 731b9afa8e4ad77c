"""`schedlab fidelity` and `schedlab compare` judged without the live kernel: the pairing of
instances across the simulator and the host, the tables, the replays of saved host runs
(experiments/host-runs/) and the errors before any host run. The tests that run the host are in
test_host.py.
"""

import json
import subprocess
import sys


def run(*args, timeout=180):
    """`schedlab ARGS` (none of these touch the host, so no host lock is held)."""
    return subprocess.run([sys.executable, "-m", "schedlab", *args], capture_output=True, text=True,
                          timeout=timeout)


def test_fidelity_pairs_interchangeable_instances_by_fit():
    """Instances of one task object are paired across the two sides by the best fit (the
    sleeper beside hog-1 in the simulator and beside hog-0 on the host), other tasks by name;
    judgements follow the pairing."""
    from schedlab.fidelity import compare_run, pair_instances

    def task(name, cpu, ivcsw):
        return {"name": name, "cpu_time_us": cpu, "nivcsw": ivcsw, "wakeups": 0,
                "wakeup_latency_p50_us": None, "wakeup_latency_p90_us": None,
                "wakeup_latency_p99_us": None}

    sim = {"tasks": [task("io", 29_000, 0), task("hog-0", 3_000_000, 0), task("hog-1", 2_971_000, 582)],
           "migrations": 0, "cpus": 2}
    host = {"tasks": [task("io", 35_000, 0), task("hog-0", 2_963_000, 616), task("hog-1", 2_981_000, 33)],
            "migrations": 1, "cpus": 2}
    pairs = [(s["name"], h["name"]) for s, h in pair_instances(sim["tasks"], host["tasks"])]
    assert pairs == [("io", "io"), ("hog-0", "hog-1"), ("hog-1", "hog-0")]
    rows = {r["task"]: r for r in compare_run(sim, host)["tasks"]}
    assert set(rows) == {"io", "hog-0/hog-1", "hog-1/hog-0"}
    assert rows["hog-1/hog-0"]["nivcsw"]["ok"] is True      # 582 against 616: within 10 %
    assert rows["hog-0/hog-1"]["nivcsw"]["ok"] is False     # 0 against 33
    # Equal fits keep the names; a group missing an instance on one side is paired by name.
    same = [task("a-0", 100, 10), task("a-1", 100, 10)]
    assert [(s["name"], h["name"]) for s, h in pair_instances(same, same)] == [("a-0", "a-0"), ("a-1", "a-1")]
    lone = [task("b-0", 100, 10), task("b-1", 50, 5)]
    assert [(s["name"], h["name"]) for s, h in pair_instances(lone, lone[:1])] == [("b-0", "b-0")]


def test_fidelity_pairs_many_instances_by_rank_and_takes_the_host_topology(tmp_path):
    """Beyond MATCH_MAX instances (too many permutations) the instances pair by rank of CPU time;
    the simulator gets the host's SMT width and LLC size where its uniform topology can hold them;
    a bad --workload file is one error before any host run."""
    from schedlab.fidelity import MATCH_MAX, pair_instances, sim_topology

    n = MATCH_MAX + 2
    sim = [{"name": f"s-{i}", "cpu_time_us": 100 + i, "nivcsw": 0} for i in range(n)]
    host = [{"name": f"s-{i}", "cpu_time_us": 200 - i, "nivcsw": 0} for i in range(n)]
    pairs = [(s["name"], h["name"]) for s, h in pair_instances(sim, host)]
    assert pairs == [(f"s-{i}", f"s-{n - 1 - i}") for i in range(n)]
    assert sim_topology({"smt": 2, "cpus_per_llc": 8}, 16) == {"smt": 2, "cpus_per_llc": 8}
    assert sim_topology({"smt": 2, "cpus_per_llc": 16}, 16) == {"smt": 2, "cpus_per_llc": 0}
    assert sim_topology({"smt": 3, "cpus_per_llc": 6}, 16) == {"smt": 1, "cpus_per_llc": 0}
    assert sim_topology({"smt": None, "cpus_per_llc": None}, 2) == {"smt": 1, "cpus_per_llc": 0}
    bad = tmp_path / "bad.json"
    bad.write_text('{"tasks": {"x": {"run": "abc"}}}')
    r = run("fidelity", "--workload", str(bad))
    assert r.returncode == 2 and "tasks.x.run" in r.stderr and "fidelity:" not in r.stderr
    r = run("fidelity", "--workload", str(bad) + ".nope")
    assert r.returncode == 2 and "no such workload file" in r.stderr
    endless = tmp_path / "endless.json"
    endless.write_text('{"tasks": {"x": {"run": 100}}}')
    r = run("fidelity", "--workload", str(endless))
    assert r.returncode == 2 and "global.duration: expected a duration" in r.stderr


def test_fidelity_judges_saved_host_runs_without_the_host(root, tmp_path):
    """`fidelity --host-from` judges the host runs `--save-host` kept (here the 16-CPU VM's of
    2026-11-26, experiments/host-runs/) with no root and no such machine: each workload as it ran
    there, on its 16 CPUs, each run at its tick phase. Issue 13's 16-CPU goals that this model meets
    on them are held: migrations within a factor of 2 for `hogs-nice20`, the sleepers' CPU time
    within 3 % for nearly all 32 (docs/model.md, "Wakeup costs": the idle exit by idle length).
    `sleepers32`'s migrations swing from set to set on both sides (the six saved 16-CPU sets, with
    the proportional newly-idle balance: simulated 775-1,524 against the hosts' 1,358-2,618; 5 of
    6 within a factor of 2, as without it): held here within a factor of 3."""
    refs = root / "experiments/host-runs/16cpu-2026-11-26/refs"
    out = tmp_path / "f.json"
    r = run("fidelity", "--host-from", str(refs), "--json", str(out))
    assert r.returncode == 0, r.stderr
    assert "simulator/host on 16 CPUs" in r.stdout and "host runs saved in" in r.stdout
    f = json.loads(out.read_text())
    assert f["cpus"] == 16 and f["host_runs"] == 3 and list(f["workloads"]) == ["hogs-nice20", "sleepers32"]
    for w in f["workloads"].values():
        assert len(w["tick_phases_ns"]) == 3
    assert f["workloads"]["hogs-nice20"]["run"]["migrations"]["ok"] is True
    m = f["workloads"]["sleepers32"]["run"]["migrations"]
    assert m["host"] / 3 <= m["sim"] <= 3 * m["host"], m
    sleepers = [t for t in f["workloads"]["sleepers32"]["tasks"] if t["task"].startswith("sl-")]
    assert sum(t["cpu_time_us"]["ok"] for t in sleepers) >= 28
    # The replay is the same judgement twice, and a directory without saved runs is one clear error.
    again = tmp_path / "g.json"
    assert run("fidelity", "--host-from", str(refs), "--json", str(again)).returncode == 0
    assert json.loads(again.read_text()) == f
    bad = run("fidelity", "--host-from", str(tmp_path))
    assert bad.returncode == 2 and "facts.json" in bad.stderr and "Traceback" not in bad.stderr
    both = run("fidelity", "--host-from", str(refs), "--save-host", str(tmp_path / "x"))
    assert both.returncode == 2 and "--host-from" in both.stderr
    only = run("fidelity", "--host-from", str(refs), "--only", "nope")
    assert only.returncode == 2 and "hogs-nice20, sleepers32" in only.stderr
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "facts.json").write_text((refs / "facts.json").read_text())
    rec = json.loads((refs / "sleepers32-1.json").read_text())
    del rec["metrics"]
    (broken / "sleepers32-1.json").write_text(json.dumps(rec))
    r = run("fidelity", "--host-from", str(broken))
    assert r.returncode == 2 and "sleepers32-1.json: metrics: expected an object" in r.stderr
    assert "Traceback" not in r.stderr


def test_fidelity_replays_the_host_start(root, tmp_path):
    """The host's start is not modelled (docs/model.md, "Known gaps"): on 16 CPUs with a hog on every
    CPU its threads start unevenly and the balancer moves them for the whole run, while the fork path
    spreads them so evenly that nothing moves. A replay starts each thread where the host run's first
    ran and then judges what the scheduler does: in the sixth call's suite the migrations of
    `nice-hogs` are within a factor of 2 that way and far outside with --fork-start, and `sleepers`
    moves over 5 times as often as with --fork-start (both with the workload at the root). Until the
    eighteenth session's RT/DEADLINE-pressure change to the balancer's group classification (runnable
    average, fair-only utilisation; docs/model.md "SMP") the replayed `sleepers` was within 2x too
    (about 80 against 153.5); now 39: a measured regression of that workload, in docs/model.md."""
    suite = root / "experiments/host-runs/16cpu-2026-11-26e/suite"
    judged = {}
    for flags in (["--flat-replay"], ["--flat-replay", "--fork-start"]):
        out = tmp_path / f"f{len(flags)}.json"
        r = run("fidelity", "--host-from", str(suite), "--only", "sleepers,nice-hogs", "--json", str(out),
                *flags)
        assert r.returncode == 0, r.stderr
        flags = flags[1:]
        assert ("where the fork path puts them" in r.stdout) == bool(flags)
        f = json.loads(out.read_text())
        assert f["host_start"] is not bool(flags)
        judged[bool(flags)] = {n: w["run"]["migrations"] for n, w in f["workloads"].items()}
    for name in ("sleepers", "nice-hogs"):
        replayed, forked = judged[False][name], judged[True][name]
        assert forked["ok"] is False, (name, replayed, forked)
        assert forked["sim"] < replayed["sim"] / 5, (name, replayed, forked)
    assert judged[False]["nice-hogs"]["ok"] is True, judged


def test_fidelity_replays_a_legacy_workers_timer_grid(root, tmp_path):
    """Host runs saved before 2026-11-27 counted a timer from the thread's first run (no
    ``timer_base_ns`` in the worker's report): the replay starts such a periodic thread that much
    later, so its 2 ms runs cross the ticks where the host's did. In the 2-vCPU suite of the
    fifteenth session, tick-wait's ctl then waits for ticks as the host's did (p90 2655 against
    2673 us; 14 us with the simulator's own grid), and a report of the current worker is left
    alone."""
    from schedlab import fidelity as fid

    suite = root / "experiments/host-runs/2cpu-2026-11-26b/suite"
    out = tmp_path / "f.json"
    r = run("fidelity", "--host-from", str(suite), "--only", "tick-wait", "--json", str(out))
    assert r.returncode == 0, r.stderr
    w = json.loads(out.read_text())["workloads"]["tick-wait"]
    assert [set(s) for s in w["timer_shifts_us"]] == [{"ctl"}] * 3
    ctl = next(t for t in w["tasks"] if t["task"] == "ctl")
    assert ctl["wakeup_latency_p90_us"]["ok"] is True, ctl
    assert "replayed as delays: ctl " in r.stdout
    doc = {"tasks": {"ctl": {"run": 2000, "timer": {"ref": "c", "period": 10000}},
                     "hog": {"instance": 2, "run": 100, "timer": {"ref": "h", "period": 10000}}}}
    legacy = {"start_ns": 1_000_000, "threads": {"ctl": {"started_ns": 1_300_400},
                                                 "hog-0": {"started_ns": 1_500_000}}}
    shifted, shifts = fid.legacy_timer_delays(doc, legacy)
    assert shifts == {"ctl": 300} and shifted["tasks"]["ctl"]["delay"] == 300
    assert "delay" not in doc["tasks"]["ctl"] and "delay" not in shifted["tasks"]["hog"]
    current = {"start_ns": 1_000_000, "threads": {"ctl": {"started_ns": 1_300_400, "timer_base_ns": 1_000_000}}}
    assert fid.legacy_timer_delays(doc, current) == (doc, {})


def test_fidelity_replays_the_workload_in_the_hosts_run_group(root, tmp_path):
    """The host runner isolates the workload in one high-weight group (cpu.shares 262144 on cgroup
    v1, cpu.weight 10000 on v2); its other load stays outside. Replayed the same way, the noise
    threads no longer preempt the workload's threads as equals at their wakeups: in the third
    call's 16-CPU suite the sleepers then migrate 127 times to the host's 155.5 (within 2x), 77
    times at the root (outside). The document: groups nest below the run group, phases too; a run
    that was not isolated is left alone."""
    from schedlab import fidelity as fid

    suite = root / "experiments/host-runs/16cpu-2026-11-26c/suite"
    judged = {}
    for flags in ([], ["--flat-replay"]):
        out = tmp_path / f"g{len(flags)}.json"
        r = run("fidelity", "--host-from", str(suite), "--only", "sleepers", "--json", str(out), *flags)
        assert r.returncode == 0, r.stderr
        assert ("high-weight group" in r.stdout) != bool(flags)
        judged[bool(flags)] = json.loads(out.read_text())["workloads"]["sleepers"]["run"]["migrations"]
    assert judged[False]["ok"] is True and judged[True]["ok"] is False, judged
    doc = {"global": {"taskgroups": {"/a": {"shares": 512}}},
           "tasks": {"x": {"run": 1, "taskgroup": "/a"}, "y": {"run": 1},
                     "z": {"phases": {"p": {"run": 1, "taskgroup": "/a/"}, "q": {"run": 1}}}}}
    v2 = fid.isolated_doc(doc, {"isolated_in": "/sys/fs/cgroup/schedlab-1", "cgroup": {"flavour": "v2"}})
    assert v2["global"]["taskgroups"] == {"/schedlab-run": {"shares": 102400},
                                          "/schedlab-run/a": {"shares": 512}}
    assert [v2["tasks"][t]["taskgroup"] for t in "xyz"] == ["/schedlab-run/a", "/schedlab-run",
                                                          "/schedlab-run"]
    assert v2["tasks"]["z"]["phases"]["p"]["taskgroup"] == "/schedlab-run/a"
    assert "taskgroup" not in v2["tasks"]["z"]["phases"]["q"]
    v1 = fid.isolated_doc(doc, {"isolated_in": "/sys/fs/cgroup/cpu/schedlab-1", "cgroup": {"flavour": "v1"}})
    assert v1["global"]["taskgroups"]["/schedlab-run"] == {"shares": 262144}
    assert fid.isolated_doc(doc, {"isolated_in": None}) is doc and "taskgroup" not in doc["tasks"]["y"]


def test_fidelity_judges_medians_of_several_host_runs():
    """With several host runs each figure is the median of the simulated values against the median
    of the host's, judged with the same tolerance, the host's range kept beside it."""
    from schedlab.fidelity import _spread_wider, compare_run, merge_runs

    def task(name, cpu, ivcsw):
        return {"name": name, "cpu_time_us": cpu, "nivcsw": ivcsw, "wakeups": 0,
                "wakeup_latency_p50_us": None, "wakeup_latency_p90_us": None,
                "wakeup_latency_p99_us": None}

    sim = {"tasks": [task("a", 1000, 100)], "migrations": 0, "cpus": 2}
    runs = [compare_run(sim, {"tasks": [task("a", h, i)], "migrations": m, "cpus": 2})
            for h, i, m in ((1010, 80, 0), (1200, 101, 3), (990, 130, 1))]
    assert [r["tasks"][0]["nivcsw"]["ok"] for r in runs] == [False, True, False]
    row = merge_runs(runs)["tasks"][0]
    assert row["cpu_time_us"]["host"] == 1010 and row["cpu_time_us"]["ok"] is True
    assert row["nivcsw"]["host"] == 101 and row["nivcsw"]["ok"] is True       # 100 against 101
    assert (row["nivcsw"]["host_min"], row["nivcsw"]["host_max"]) == (80, 130)
    assert _spread_wider(row["nivcsw"], 0.10) and not _spread_wider(row["cpu_time_us"], 0.2)
    assert merge_runs(runs)["run"]["migrations"]["host"] == 1
    # A latency figure no run judged (a task waking rarely) stays unjudged, even where a run's host
    # figure was withheld.
    few = [dict(r, tasks=[dict(r["tasks"][0])]) for r in runs]
    few[0]["tasks"][0]["wakeup_latency_p50_us"] = {"sim": 20.0, "host": None, "diff": None, "ok": None}
    few[1]["tasks"][0]["wakeup_latency_p50_us"] = {"sim": 20.0, "host": 9000.0, "diff": None, "ok": None}
    assert merge_runs(few)["tasks"][0]["wakeup_latency_p50_us"]["ok"] is None
    assert merge_runs(runs[:1]) == runs[0]
    bad = run("fidelity", "--host-runs", "0")
    assert bad.returncode == 2 and "--host-runs: expected 1..9" in bad.stderr


def test_fidelity_shows_where_the_start_placed_each_object():
    """The first CPUs of a task object's instances, simulator against host, run by run."""
    from schedlab.fidelity import compare_run, cpu_ranges, merge_runs, table

    def task(name, first):
        return {"name": name, "cpu_time_us": 1000, "nivcsw": 10, "wakeups": 0, "first_cpu": first,
                "wakeup_latency_p50_us": None, "wakeup_latency_p90_us": None,
                "wakeup_latency_p99_us": None}

    sim = {"tasks": [task("hog-0", 0), task("hog-1", 1), task("hog-2", 2), task("one", 0)],
           "migrations": 0, "cpus": 2}
    host = [{"tasks": [task("hog-0", 7), task("hog-1", 5), task("hog-2", None), task("one", 3)],
             "migrations": 0, "cpus": 2} for _ in range(2)]
    host[1]["tasks"][2] = task("hog-2", 6)
    one = compare_run(sim, host[0])
    assert one["layout"] == {"sim": [{"hog": [0, 1, 2]}], "host": [{"hog": [5, 7, None]}]}
    merged = merge_runs([compare_run(sim, h) for h in host])
    lines = table({"cpus": 8, "seconds": 1, "machine": None, "workloads": {
        "w": {"about": "three hogs", "scheduler": "eevdf", **merged}}}).splitlines()
    assert "  first CPUs hog: sim 0-2 | host 5,7,? / 5-7" in lines
    assert cpu_ranges([0, 0, 0, 1, 1, None]) == "0x3,1x2,?"


def test_compare_needs_two_files_or_a_workload():
    r = run("compare")
    assert r.returncode == 2 and "two metrics files (A B)" in r.stderr and "--workload FILE" in r.stderr

def test_fidelity_table_folds_many_instances_into_one_row():
    """A task object of more than MATCH_MAX instances is one table row of medians and
    within-counts (the JSON keeps every instance); the totals still count each instance; Jain's
    index shows three decimals (its tolerance is 1 %)."""
    from schedlab.fidelity import MATCH_MAX, compare_run, table

    def task(name, cpu):
        return {"name": name, "cpu_time_us": cpu, "nivcsw": 10, "wakeups": 0,
                "wakeup_latency_p50_us": None, "wakeup_latency_p90_us": None,
                "wakeup_latency_p99_us": None}

    n = MATCH_MAX + 2
    sim = {"tasks": [task("a", 1000)] + [task(f"s-{i}", 1000) for i in range(n)], "migrations": 0,
           "cpus": 16, "jain_fairness": 0.9181}
    host = {"tasks": [task("a", 1000)] + [task(f"s-{i}", 1000 if i % 2 else 2000) for i in range(n)],
            "migrations": 0, "cpus": 16, "jain_fairness": 0.9262}
    w = {"about": "x", "scheduler": "eevdf", "tick_phase_ns": 0, **compare_run(sim, host)}
    t = table({"cpus": 16, "seconds": 1, "machine": None, "host_runs": 1, "workloads": {"w": w}})
    rows = [line for line in t.splitlines() if line.startswith(("a ", "s-"))]
    assert len(rows) == 2 and rows[1].startswith(f"s-* ({n})"), t
    assert f" {n // 2}/{n}" in rows[1] and f" {n}/{n}" in rows[1]   # CPU time half within; ivcsw all
    assert "jain_fairness: 0.918/0.926 ok" in t
    # a: 2 judged figures within; s-*: n/2 + n within, n/2 outside; migrations within, Jain within.
    assert t.splitlines()[-1] == f"{2 + n // 2 + n + 2} within tolerance, {n // 2} outside it"
