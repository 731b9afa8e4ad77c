"""Run options and inputs at and past their limits: one error in words naming the option (or the
file and JSON path), exit code 2, no traceback and no output file; or, where the value is allowed,
a run that ends normally."""

import json
import subprocess
import sys

import pytest

WL = {"global": {"duration": 1}, "tasks": {"a": {"run": 1000}, "h": {"instance": 2, "run": 100_000}}}


def run(*args):
    return subprocess.run([sys.executable, "-m", "schedlab", *args], capture_output=True, text=True)


@pytest.fixture
def wl(tmp_path):
    p = tmp_path / "w.json"
    p.write_text(json.dumps(WL))
    return p


@pytest.mark.parametrize("args,expect", [
    (["--seed", str(2**64)], "seed must be an integer in 0..=18446744073709551615, got 18446744073709551616"),
    (["--duration", "18446744074"], "duration must be at most 18446744073.709551615 s"),
    (["--set", f"base_slice_ns={2**64 - 1}"],
     "tunable base_slice_ns needs an integer in -9223372036854775808..=9223372036854775807"),
    (["--cpus", str(10**20)], "run option cpus: expected an integer in 0..=18446744073709551615, found 1e+20"),
    (["--hz", str(10**20)], "run option hz: expected an integer in 0..=4294967295, found 1e+20"),
    (["--start-cpus", "a=-1"], "expected THREAD=CPU"),
    (["--fairness", "h,nope"], 'fairness_tasks: "nope" names no task of'),
    (["--scheduler", "eevdf,cfs,eevdf"], "--scheduler: eevdf is given twice"),
])
def test_out_of_range_options_are_one_error_in_words(wl, tmp_path, args, expect):
    out = tmp_path / "m.json"
    p = run("run", str(wl), "--json", str(out), *args)
    assert p.returncode == 2 and expect in p.stderr, p.stderr
    assert "Traceback" not in p.stderr and "expected u64" not in p.stderr and not out.exists()


def test_trace_and_json_cannot_share_standard_output(wl):
    p = run("run", str(wl), "--json", "-", "--trace", "-")
    assert p.returncode == 2 and "would both write to standard output" in p.stderr, p.stderr
    assert p.stdout == ""


def test_fairness_over_named_instances(wl, tmp_path):
    out = tmp_path / "m.json"
    p = run("run", str(wl), "--json", str(out), "--fairness", "h-1,a")
    assert p.returncode == 0, p.stderr
    assert json.loads(out.read_text())["fairness_tasks"] == ["a", "h-1"]


def test_a_timer_period_at_the_input_limit_runs(tmp_path):
    p = tmp_path / "p.json"
    p.write_text(json.dumps({"global": {"duration": 2}, "tasks": {"a": {
        "instance": 2, "timer": {"ref": "x", "period": 18446744073709551}, "run": 10}}}))
    r = run("run", str(p), "--json", str(tmp_path / "m.json"))
    assert r.returncode == 0, r.stderr
    assert [t["jobs_released"] for t in json.loads((tmp_path / "m.json").read_text())["tasks"]] == [1, 1]


@pytest.mark.parametrize("damage,expect", [
    ({"name": 5}, "$.tasks[0].name: expected a thread's name, got 5"),
    ({"first_cpu": 2**64}, "$.tasks[0].first_cpu: CPU 18446744073709551616 is not one of the run's 1"),
    ({"first_cpu": 7}, "$.tasks[0].first_cpu: CPU 7 is not one of the run's 1 (--cpus)"),
])
def test_start_from_names_the_file_and_path(wl, tmp_path, damage, expect):
    host = tmp_path / "host.json"
    host.write_text(json.dumps({"tasks": [{"name": "a", "first_cpu": 0, **damage}]}))
    p = run("run", str(wl), "--start-from", str(host))
    assert p.returncode == 2 and f"{host}: {expect}" in p.stderr, p.stderr
    assert "Traceback" not in p.stderr


def switch(t, a, pa, b, pb, prio_a=120, prio_b=120, state="R"):
    return (f"x-0 [000] d..2. {t}: sched_switch: prev_comm={a} prev_pid={pa} prev_prio={prio_a} "
            f"prev_state={state} ==> next_comm={b} next_pid={pb} next_prio={prio_b}")


def test_a_trace_of_one_instant_is_refused(tmp_path):
    t = tmp_path / "one.txt"
    t.write_text(switch("1.000000", "swapper", 0, "s", 2) + "\n")
    p = run("trace", "import", str(t))
    assert p.returncode == 2 and "the trace spans no time" in p.stderr, p.stderr
    assert p.stdout == ""


def test_an_imported_rt_task_shows_its_priority(tmp_path):
    """A trace gives the RT priority (prio 79 = 20) but not FIFO or RR: `RT 20`."""
    t = tmp_path / "rt.txt"
    t.write_text("\n".join([
        "x-0 [000] d..2. 1.000000: sched_waking: comm=rt pid=7 prio=79 target_cpu=000",
        switch("1.000010", "swapper", 0, "rt", 7, prio_b=79),
        switch("1.000100", "rt", 7, "swapper", 0, prio_a=79, state="S"),
    ]) + "\n")
    p = run("trace", "import", str(t))
    assert p.returncode == 0, p.stderr
    row = next(line for line in p.stdout.splitlines() if line.startswith("rt "))
    assert row.split()[1:3] == ["RT", "20"], row
    assert "RT: FIFO or RR" in p.stdout


def test_trace_import_checks_its_outputs_before_writing_any(tmp_path):
    t = tmp_path / "t.txt"
    t.write_text("\n".join([switch("1.000000", "swapper", 0, "a", 2),
                            switch("1.000500", "a", 2, "swapper", 0, state="S")]) + "\n")
    ok = tmp_path / "w.json"
    p = run("trace", "import", str(t), "--workload", str(ok), "--json", str(tmp_path / "no" / "m.json"))
    assert p.returncode == 2 and "directory" in p.stderr and "does not exist" in p.stderr, p.stderr
    assert p.stdout == "" and not ok.exists()
    p = run("trace", "import", str(t), "--json", "-", "--ftrace", "-")
    assert p.returncode == 2 and "only one output can go to standard output" in p.stderr
    p = run("trace", "import", str(t), "--json", "-")
    assert p.returncode == 0 and json.loads(p.stdout)["context_switches"] == 2, p.stdout


@pytest.mark.parametrize("args,expect", [
    (["host", "run", "{wl}", "--json", "{tmp}/no/m.json"], "{tmp}/no/m.json: directory {tmp}/no does not"),
    (["host", "run", "{wl}", "--facts", "{tmp}"], "{tmp}: is a directory"),
    (["host", "run", "{wl}", "--lock-timeout", "-3"], "--lock-timeout: expected seconds >= 0, got -3.0"),
    (["calibrate", "--out", "{tmp}/no/p.json", "--seconds", "1"], "{tmp}/no/p.json: directory {tmp}/no"),
])
def test_machine_commands_check_their_outputs_before_touching_the_machine(wl, tmp_path, args, expect):
    """Refused at once: before a host run or a calibration's minute of measuring."""
    fill = {"wl": str(wl), "tmp": str(tmp_path)}
    p = run(*(a.format(**fill) for a in args))
    assert p.returncode == 2 and expect.format(**fill) in p.stderr, p.stderr
    assert p.stdout == "" and "Traceback" not in p.stderr


def test_repro_checks_its_out_folder_before_simulating(tmp_path):
    f = tmp_path / "afile"
    f.write_text("")
    for out in (f, f / "sub"):
        p = run("repro", "illf", "--out", str(out))
        assert p.returncode == 2 and f"--out {out}: {f} is not a directory" in p.stderr, p.stderr
        assert "Traceback" not in p.stderr
