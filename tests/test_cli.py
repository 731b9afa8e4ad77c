"""The schedlab command."""

import json
import subprocess
import sys

import pytest


def run(*args):
    return subprocess.run([sys.executable, "-m", "schedlab", *args], capture_output=True, text=True)


def test_run_table_json_and_trace(root, tmp_path):
    js, tr = tmp_path / "m.json", tmp_path / "t.pftrace"
    p = run("run", str(root / "examples" / "mixed.json"), "--cpus", "2", "--duration", "1s",
            "--json", str(js), "--trace", str(tr))
    assert p.returncode == 0, p.stderr
    assert "eevdf on 2 CPU(s)" in p.stdout and "periodic" in p.stdout
    m = json.loads(js.read_text())
    assert m["duration_us"] == 1_000_000
    assert tr.stat().st_size > 1000


def test_compare_schedulers(root):
    p = run("run", str(root / "examples" / "mixed.json"), "--cpus", "2", "--duration", "1",
            "--scheduler", "eevdf,cfs")
    assert p.returncode == 0, p.stderr
    assert "eevdf share" in p.stdout and "cfs share" in p.stdout


def test_check_and_schedulers(root):
    p = run("check", str(root / "examples" / "mixed.json"))
    assert p.returncode == 0 and "ok: 4 task objects, 5 threads" in p.stdout
    p = run("schedulers")
    assert p.returncode == 0 and "base_slice_ns" in p.stdout and "latency_ns" in p.stdout
    p = run("metrics")
    assert p.returncode == 0 and "wakeup_latency_p99_9_us" in p.stdout


@pytest.mark.parametrize("args", [["--cpus", "0"], ["--set", "nope=1"], ["--duration", "soon"],
                                  ["--scheduler", "nosuch"]])
def test_bad_options_exit_2(root, args):
    p = run("run", str(root / "examples" / "mixed.json"), *args)
    assert p.returncode == 2
    assert "Traceback" not in p.stderr


def test_no_partial_json_on_error(root, tmp_path):
    js = tmp_path / "m.json"
    p = run("run", str(root / "tests" / "fixtures" / "bad" / "wrong_type.json"), "--json", str(js))
    assert p.returncode == 2 and not js.exists()
    assert list(tmp_path.iterdir()) == []


def test_capacity_and_frequency_options(tmp_path):
    wl = tmp_path / "w.json"
    wl.write_text('{"global": {"calibration": 100}, "tasks": {"w": {"loop": 1, "run": 10000}}}')
    out = tmp_path / "o.json"
    r = run("run", str(wl), "--capacity", "512", "--freq", "1000/2000", "--json", str(out), "--zero-costs")
    assert r.returncode == 0, r.stderr
    assert json.loads(out.read_text())["tasks"][0]["turnaround_us"] == 40000.0
    bad = run("run", str(wl), "--cpus", "2", "--capacity", "512,512,512")
    assert bad.returncode == 2 and "capacity list has 3 entries for 2 CPUs" in bad.stderr
    bad = run("run", str(wl), "--freq", "3000/2000")
    assert bad.returncode == 2 and "must be 1..=max" in bad.stderr


def test_compare_two_runs_and_a_trace_with_its_replay(root, tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    ex = str(root / "examples" / "mixed.json")
    assert run("run", ex, "--cpus", "2", "--json", str(a), "--quiet").returncode == 0
    assert run("run", ex, "--cpus", "2", "--scheduler", "cfs", "--json", str(b), "--quiet").returncode == 0
    out = tmp_path / "c.json"
    r = run("compare", str(a), str(b), "--json", str(out))
    assert r.returncode == 0, r.stderr
    assert "(eevdf)" in r.stdout and "(cfs)" in r.stdout
    c = json.loads(out.read_text())
    assert {t["task"] for t in c["tasks"]} == {"hog-0", "hog-1", "niced_hog", "periodic", "interactive"}
    share = {t["task"]: t["cpu_share"] for t in c["tasks"]}
    assert abs(share["periodic"][0] - share["periodic"][1]) < 0.01
    # A recorded trace against its replay, tasks matched by pid.
    trace = root / "tests" / "fixtures" / "traces" / "host-6.18-two-hogs.txt"
    t, w, rj = tmp_path / "t.json", tmp_path / "w.json", tmp_path / "r.json"
    r = run("trace", "import", str(trace), "--tolerant", "--json", str(t), "--workload", str(w))
    assert r.returncode == 0, r.stderr
    assert run("run", str(w), "--cpus", "2", "--json", str(rj), "--quiet").returncode == 0
    r = run("compare", str(t), str(rj), "--match", "pid")
    assert r.returncode == 0 and "unmatched" not in r.stdout, r.stdout
    assert run("compare", str(t), str(w)).returncode == 2


def test_registry_docs_are_generated_from_the_registry(root):
    """docs/schedulers.md is `schedlab schedulers --markdown`, and every registered name is in it."""
    p = run("schedulers", "--markdown")
    assert p.returncode == 0, p.stderr
    assert (root / "docs" / "schedulers.md").read_text(encoding="utf-8") == p.stdout, \
        "docs/schedulers.md is stale: regenerate it with `schedlab schedulers --markdown`"
    info = json.loads(run("schedulers", "--json").stdout)
    for s in info["schedulers"]:
        assert f"### {s['name']}\n" in p.stdout
        assert s["classes"] and s["source"] and s["version"]
        for t in s["tunables"]:
            assert t["min"] <= t["default"] <= t["max"], t
    for p_ in info["fair_policies"]:
        assert f"### +{p_['name']}\n" in p.stdout


def test_set_is_validated_against_the_registry(root):
    wl = str(root / "examples" / "mixed.json")
    p = run("run", wl, "--duration", "0.1", "--set", "illf_swap_rule=0")
    assert p.returncode == 2 and "unknown tunable \"illf_swap_rule\"" in p.stderr
    p = run("run", wl, "--duration", "0.1", "--dl-policy", "illf", "--set", "illf_swap_rule=0", "--quiet")
    assert p.returncode == 0, p.stderr
    p = run("run", wl, "--duration", "0.1", "--scheduler", "eevdf+tsf", "--set", "tsf_cost_ns=-1")
    assert p.returncode == 2 and "out of range" in p.stderr
    p = run("run", wl, "--duration", "0.1", "--scheduler", "eevdf+bogus")
    assert p.returncode == 2 and "unknown fair-class policy" in p.stderr


@pytest.mark.parametrize("args, words", [
    (["--seed", "-1"], "non-negative integer"),
    (["--llc", "-1"], "non-negative integer"),
    (["--freq", "-5"], "expected MHz"),
    (["--scheduler", ""], "--scheduler is empty"),
    (["--scheduler", ",,"], "--scheduler is empty"),
    (["--trace", "/nonexistent/dir/t.txt"], "does not exist"),
])
def test_bad_cli_arguments_fail_before_running(root, args, words):
    p = run("run", str(root / "examples" / "mixed.json"), "--duration", "0.1", "--quiet", *args)
    assert p.returncode == 2, p.stderr
    assert words in p.stderr and "Traceback" not in p.stderr


def test_json_to_a_directory_is_refused_before_running(root, tmp_path):
    p = run("run", str(root / "examples" / "mixed.json"), "--duration", "0.1", "--json", str(tmp_path))
    assert p.returncode == 2 and "is a directory" in p.stderr


def test_api_names_the_bad_run_option():
    import schedlab
    wl = {"global": {"duration": 1}, "tasks": {"a": {"run": 1000}}}
    with pytest.raises(schedlab.ConfigError,
                       match="run option hz: expected an integer in 0..=4294967295, found -1"):
        schedlab.simulate(wl, "eevdf", 1, hz=-1)
    with pytest.raises(schedlab.ConfigError,
                       match="seed must be an integer in 0..=18446744073709551615, got -1"):
        schedlab.simulate(wl, "eevdf", 1, seed=-1)


def test_full_disk_is_one_line_and_leaves_nothing(root, tmp_path):
    """Metrics that do not fit: exit 2, one line, and the trace written before them is gone too."""
    import os
    tiny = tmp_path / "tiny"
    tiny.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4k", "tmpfs", str(tiny)],
                                           capture_output=True).returncode != 0:
        pytest.skip("needs root to mount a tiny tmpfs")
    try:
        p = run("run", str(root / "examples" / "mixed.json"), "--cpus", "2", "--quiet",
                "--trace", str(tmp_path / "t.txt"), "--json", str(tiny / "m.json"))
        assert p.returncode == 2
        assert "No space left on device" in p.stderr and "Traceback" not in p.stderr
        assert os.listdir(tiny) == [] and not (tmp_path / "t.txt").exists()
    finally:
        subprocess.run(["umount", str(tiny)], capture_output=True)


def test_machine_profile_applies_and_bad_profiles_are_one_clear_error(tmp_path):
    wl = tmp_path / "w.json"
    wl.write_text('{"global": {"duration": 1}, "tasks": {"s": {"loop": -1, "run": 100, "sleep": 5000}}}')
    prof = tmp_path / "p.json"
    prof.write_text(json.dumps({"schedlab_machine_profile": 1, "hz": 100,
                                "tunables": {"wakeup_ns": 30000, "idle_exit_ns": 0, "timer_slack_ns": 0,
                                             "wakeup_spread_pct": 0}}))
    out = tmp_path / "o.json"
    r = run("run", str(wl), "--machine", str(prof), "--json", str(out), "--quiet")
    assert r.returncode == 0, r.stderr
    m = json.loads(out.read_text())
    assert m["hz"] == 100 and m["tunables"]["wakeup_ns"] == 30000
    # Every wakeup lands on an idle CPU with no idle-exit cost and no spread: exactly the
    # profile's 30 µs.
    assert m["tasks"][0]["wakeup_latency_p50_us"] == pytest.approx(30.0, rel=0.002)
    # --hz and --set win over the profile.
    r = run("run", str(wl), "--machine", str(prof), "--hz", "250", "--set", "wakeup_ns=1000",
            "--json", str(out), "--quiet")
    m = json.loads(out.read_text())
    assert r.returncode == 0 and m["hz"] == 250 and m["tunables"]["wakeup_ns"] == 1000
    for body, where in [("{", "line 1"), ('{"schedlab_machine_profile": 2}', "schedlab_machine_profile"),
                        ('{"schedlab_machine_profile": 1, "hz": 0, "tunables": {}}', "hz"),
                        ('{"schedlab_machine_profile": 1, "hz": 250, "tunables": {"nope": 1}}',
                         "tunables.nope")]:
        prof.write_text(body)
        r = run("run", str(wl), "--machine", str(prof))
        assert r.returncode == 2 and f"{prof}: {where}" in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_outputs_to_stdout_through_symlinks_and_devices(root, tmp_path):
    wl = str(root / "examples" / "mixed.json")
    p = run("run", wl, "--json", "-")
    assert p.returncode == 0
    assert len(json.loads(p.stdout)["tasks"]) == 5  # the table went to stderr
    assert "Jain" in p.stderr
    target = tmp_path / "real.json"
    link = tmp_path / "link.json"
    link.symlink_to(target)
    assert run("run", wl, "--quiet", "--json", str(link)).returncode == 0
    assert link.is_symlink() and json.loads(target.read_text())["tasks"]
    p = run("run", wl, "--quiet", "--json", "/dev/stdout")
    assert p.returncode == 0 and json.loads(p.stdout)["tasks"]
    assert not list(tmp_path.glob("*partial*"))


def test_every_option_and_subcommand_has_help():
    import argparse

    from schedlab.cliargs import parser

    missing = []

    def walk(p, path):
        for a in p._actions:
            if isinstance(a, argparse._SubParsersAction):
                helps = {c.dest: c.help for c in a._choices_actions}
                for name, sub in a.choices.items():
                    if not helps.get(name):
                        missing.append(" ".join(path + [name]))
                    walk(sub, path + [name])
            elif not a.help and not isinstance(a, argparse._HelpAction):
                missing.append(" ".join(path + [a.option_strings[0] if a.option_strings else a.dest]))

    walk(parser(), [])
    assert missing == []


def test_version_metrics_json_and_completion(root):
    assert run("--version").stdout.startswith("schedlab ")
    assert "cpu_time_us" in json.loads(run("metrics", "--json").stdout)["task"]
    script = run("completion", "bash").stdout
    probe = subprocess.run(
        ["bash", "-c", script + '\nCOMP_WORDS=(schedlab run --dl-policy ""); COMP_CWORD=3; _schedlab; '
         'echo "${COMPREPLY[*]}"; COMP_WORDS=(schedlab ru); COMP_CWORD=1; _schedlab; echo "${COMPREPLY[*]}"'],
        capture_output=True, text=True, check=True).stdout.splitlines()
    assert probe == ["edf llf illf", "run"]


def test_compare_reads_a_two_scheduler_file_and_fits_80_columns(root, tmp_path):
    out = tmp_path / "two.json"
    assert run("run", str(root / "examples" / "mixed.json"), "--cpus", "2", "--scheduler", "eevdf,cfs",
               "--quiet", "--json", str(out)).returncode == 0
    p = run("compare", str(out))
    assert p.returncode == 0, p.stderr
    assert "A = " in p.stdout and ":eevdf" in p.stdout and ":cfs" in p.stdout
    # (the A = / B = lines name the files, as long as their paths)
    assert max(len(x) for x in p.stdout.splitlines() if not x.startswith(("A = ", "B = "))) <= 80
    assert run("compare", f"{out}:cfs", f"{out}:eevdf").returncode == 0
    bad = run("compare", f"{out}:nope", f"{out}:cfs")
    assert bad.returncode == 2 and "no run named 'nope'" in bad.stderr


def test_relative_difference_hidden_below_the_floor():
    from schedlab import compare as cmp

    assert cmp.rel(0.001, 0.0842, cmp.FLOORS["cpu_share"]) is None
    assert cmp.rel(0.5, 0.55, cmp.FLOORS["cpu_share"]) == pytest.approx(0.1)
    assert cmp.rel(None, 3.0) is None


def test_table_says_where_latencies_come_from(root):
    wl = str(root / "examples" / "mixed.json")
    assert "wakeup-path cost model (wakeup_ns 8 µs" in run("run", wl).stdout
    assert "costs off (--zero-costs)" in run("run", wl, "--zero-costs").stdout


def test_trace_import_with_hz_counts_cpu_time_as_the_kernel(tmp_path):
    # A sleeper woken on its idle CPU with need-resched set (`N`), switched in 20 µs later, runs
    # 50 µs: with the tick grid the 20 µs are its CPU time, as the kernel's skipped clock update
    # charges them (/proc); without, switch to switch. A bad --hz is one clear error.
    lines = [
        "x-0 [000] d..2. 1.000000: sched_switch: prev_comm=swapper prev_pid=0 prev_prio=120 prev_state=R"
        " ==> next_comm=s next_pid=2 next_prio=120",
        "s-2 [000] d..2. 1.000050: sched_switch: prev_comm=s prev_pid=2 prev_prio=120 prev_state=S"
        " ==> next_comm=swapper next_pid=0 next_prio=120",
        "<idle>-0 [000] dNh2. 1.005000: sched_wakeup: comm=s pid=2 prio=120 target_cpu=000",
        "x-0 [000] d..2. 1.005020: sched_switch: prev_comm=swapper prev_pid=0 prev_prio=120 prev_state=R"
        " ==> next_comm=s next_pid=2 next_prio=120",
        "s-2 [000] d..2. 1.005070: sched_switch: prev_comm=s prev_pid=2 prev_prio=120 prev_state=S"
        " ==> next_comm=swapper next_pid=0 next_prio=120",
    ]
    trace = tmp_path / "t.txt"
    trace.write_text("\n".join(lines) + "\n")
    cpu = {}
    for hz in (None, 250):
        out = tmp_path / f"m{hz}.json"
        r = run("trace", "import", str(trace), "--json", str(out), *(["--hz", str(hz)] if hz else []))
        assert r.returncode == 0, r.stderr
        cpu[hz] = next(t for t in json.loads(out.read_text())["tasks"] if t["pid"] == 2)["cpu_time_us"]
    assert cpu == {None: 100.0, 250: 120.0}
    r = run("trace", "import", str(trace), "--hz", "0")
    assert r.returncode == 2 and "--hz" in r.stderr and "Traceback" not in r.stderr


def test_run_starts_threads_where_asked(tmp_path):
    """--start-cpus puts named threads on CPUs instead of the fork path's choice; --start-from takes
    them from a host run's metrics (first_cpu), and --start-cpus wins over it; a bad entry, an
    unknown thread or a malformed host file is one clear error, exit 2."""
    wl = tmp_path / "w.json"
    wl.write_text(json.dumps({"global": {"duration": 1}, "tasks": {"hog": {"instance": 3, "run": 1000000}}}))
    out = tmp_path / "m.json"

    def firsts(*extra):
        r = run("run", str(wl), "--cpus", "2", "--json", str(out), "--quiet", *extra)
        assert r.returncode == 0, r.stderr
        return {t["name"]: t["first_cpu"] for t in json.loads(out.read_text())["tasks"]}

    assert firsts() == {"hog-0": 0, "hog-1": 1, "hog-2": 0}
    assert firsts("--start-cpus", "hog-0=1,hog-1=1") == {"hog-0": 1, "hog-1": 1, "hog-2": 0}
    host = tmp_path / "host.json"
    host.write_text(json.dumps({"tasks": [{"name": f"hog-{i}", "first_cpu": 0} for i in range(3)]}))
    assert firsts("--start-from", str(host), "--start-cpus", "hog-2=1") == {"hog-0": 0, "hog-1": 0, "hog-2": 1}
    for extra, says in ((["--start-cpus", "hog-0"], "expected THREAD=CPU"),
                        (["--start-cpus", "hog-9=1"], '"hog-9" is no thread'),
                        (["--start-cpus", "hog-0=7"], "hog-0"),
                        (["--start-from", str(wl)], "$.tasks")):
        r = run("run", str(wl), "--cpus", "2", "--quiet", *extra)
        assert r.returncode == 2 and says in r.stderr and "Traceback" not in r.stderr, (extra, r.stderr)
