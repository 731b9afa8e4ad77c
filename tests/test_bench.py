"""The speed suite's workloads do what the benchmark says they do (no timing here)."""

import pytest
import schedlab
from schedlab import benchsuite


def test_gedf_anchor_matches_simso_job_counts_at_10_s():
    # SimSo 0.8.5's counts for the same task set (experiments/illf.json "crosscheck").
    r = schedlab.simulate(benchsuite.gedf_tasks(10), "eevdf", 4, hz=1000, zero_costs=True)
    assert (int(r.tasks.jobs_released.sum()), int(r.tasks.jobs_completed.sum())) == (600, 597)


def test_wide_gedf_set_matches_simso_job_counts_at_5_s():
    # SimSo 0.8.5 on the same set (scripts/simso_gedf.py 5 64 500 --wide): 6510 released, 6461 done.
    r = schedlab.simulate(benchsuite.gedf_wide(500, 5), "eevdf", 64, hz=1000, zero_costs=True)
    assert (int(r.tasks.jobs_released.sum()), int(r.tasks.jobs_completed.sum())) == (6510, 6461)


def test_schbench_like_workers_wake_and_run_briefly():
    r = schedlab.simulate(benchsuite.schbench_like(1, 4, 1), "eevdf", 2)
    workers = [t for t in r.metrics["tasks"] if t["name"].startswith("w")]
    assert len(workers) == 4
    for t in workers:
        assert t["wakeups"] > 1000  # one per 200 µs broadcast, give or take
        assert t["cpu_share"] < 0.5


def test_sleepers_mix_is_half_hogs():
    wl = benchsuite.sleepers_mix(10, 1)
    assert sum("sleep" in t for t in wl["tasks"].values()) == 5


def test_flat_cost_is_the_median_of_rounds_that_each_time_both_sizes(monkeypatch, capsys):
    # A stand-in for the simulator and the clock: 1 ns an event at 100 hogs and 1.2 ns at 10,000,
    # except that the second round's 10,000-hog runs meet a machine three times slower.
    class Run:
        def __init__(self, wl):
            self.n = len(wl["tasks"])
            self.metrics = {"events": 1000 * wl["global"]["duration"], "context_switches": 0}

    sizes = []

    def cpu_time(fn, repeat):
        r = fn()
        sizes.append(r.n)
        slow = 3.0 if (len(sizes) - 1) // 4 == 1 and r.n == 10_000 else 1.0
        return {100: 1.0, 10_000: 1.2}[r.n] * slow * 1e-9 * r.metrics["events"], r

    monkeypatch.setattr(benchsuite, "simulate", lambda wl, *a, **k: Run(wl))
    monkeypatch.setattr(benchsuite, "cpu_time", cpu_time)
    benchsuite.flat_cost(1)
    out = capsys.readouterr().out
    # Each round times both sizes back to back, the order alternating; the slow round is its
    # own ratio, which the median leaves out, and the range shows.
    assert sizes == [100, 100, 10_000, 10_000, 10_000, 10_000, 100, 100, 100, 100, 10_000, 10_000]
    assert "1.20x (1.20-3.60, 3 rounds)" in out


def test_stale_bytecode_is_found_and_recompiled(tmp_path):
    # The whole-process line compiles stale modules first: a module edited after its bytecode was
    # written is stale until compiled again, and compiling makes it fresh.
    import os
    import py_compile

    mod = tmp_path / "m.py"
    mod.write_text("x = 1\n")
    py_compile.compile(str(mod), doraise=True)
    assert benchsuite.stale_bytecode(tmp_path) == []
    mod.write_text("x = 22\n")
    os.utime(mod, (1_700_000_000, 1_700_000_000))
    assert benchsuite.stale_bytecode(tmp_path) == [mod]
    py_compile.compile(str(mod), doraise=True)
    assert benchsuite.stale_bytecode(tmp_path) == []


def test_instruction_count_is_read_from_valgrinds_summary():
    from schedlab import benchinstr

    err = "==1== Command: run w.json eevdf 4\n==1==\n==1== I   refs:      63,571,437\n"
    assert benchinstr.instructions_of(err) == 63_571_437
    with pytest.raises(benchinstr.BenchError, match="no instruction count"):
        benchinstr.instructions_of("==1== error: no such file\n")


def test_simulated_misses_are_read_from_valgrinds_summary():
    from schedlab import benchinstr

    err = ("==7== I   refs:      1,501,607,237\n"
           "==7== D1  misses:       12,593,892  ( 10,790,279 rd   +   1,803,613 wr)\n"
           "==7== LLd misses:        5,440,147  (  4,015,160 rd   +   1,424,987 wr)\n"
           "==7== LL misses:         5,483,451  (  4,058,464 rd   +   1,424,987 wr)\n")
    assert benchinstr.misses_of(err) == (12_593_892, 5_440_147)
    with pytest.raises(benchinstr.BenchError, match="no cache misses"):
        benchinstr.misses_of("==7== I   refs:      1,501,607,237\n")


def bench(*args: str):
    """``python -m schedlab.bench ARGS``; each refusal below comes before any run or build, so a
    refusal that regressed into work fails on the timeout rather than running for minutes."""
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "schedlab.bench", *args], capture_output=True, text=True,
                          check=False, timeout=30)


def assert_refused(p, *words: str) -> None:
    """Exit 2, one error naming the option (and what was expected), no traceback, no output."""
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    assert "Traceback" not in p.stderr and p.stdout == "", (p.stdout, p.stderr)
    errors = [ln for ln in p.stderr.splitlines() if "error:" in ln]
    assert len(errors) == 1, p.stderr
    for w in words:
        assert w in errors[0], (w, p.stderr)


def test_base_without_instructions_is_a_usage_error():
    p = bench("--base", "HEAD")
    assert_refused(p, "--base goes with --instructions")


def test_a_base_that_is_no_revision_is_refused_before_the_build():
    # benchinstr builds the working tree with cargo (minutes) only after --base names a commit.
    for rev in ("not-a-rev", ""):
        assert_refused(bench("--instructions", "--base", rev), "--base", "expected a git revision")


@pytest.mark.parametrize("args, expected", [
    (["--seconds", "0"], "positive integer"), (["--seconds", "-1"], "positive integer"),
    (["--seconds", "99999999999"], "18446744073"),
    (["--tasks", "0"], "positive integer"), (["--tasks", "-5"], "positive integer"),
    (["--cpus", "0"], "positive integer"), (["--cpus", "-1"], "positive integer"),
    (["--cpus", "300"], "between 1 and 256"),
    (["--repeat", "0"], "positive integer"), (["--repeat", "-2"], "positive integer"),
    (["--scheduler", "nope"], "expected comma-separated names from: "),
    (["--scheduler", "eevdf,"], "unknown scheduler(s) ''"),
])
def test_bad_values_of_the_plain_run_are_refused_up_front(args, expected):
    assert_refused(bench(*args), f"argument {args[0]}", expected)


@pytest.mark.parametrize("args, option, mode", [
    (["--simso", "/usr/bin/python3"], "--simso", "--suite"), (["--simso"], "--simso", "--suite"),
    (["--big-seconds", "5"], "--big-seconds", "--suite"),
    (["--suite", "--tasks", "5"], "--tasks", "--suite"), (["--suite", "--json"], "--json", "--suite"),
    (["--instructions", "--repeat", "2"], "--repeat", "--instructions"),
    (["--instructions", "--scheduler", "cfs"], "--scheduler", "--instructions"),
    (["--suite", "--instructions"], "--suite", "--instructions"),
])
def test_an_option_the_mode_would_ignore_is_refused(args, option, mode):
    assert_refused(bench(*args), option, mode)


def test_bad_suite_options_are_refused_before_the_suite_runs(tmp_path):
    # The suite prints its first lines within seconds and runs for minutes: each of these is
    # refused before it starts (no output), never with a traceback part-way through.
    plain = tmp_path / "plain"
    plain.write_text("not a program\n")
    ok_no_python = tmp_path / "ok"  # runs and exits 0, as /bin/true, but is no Python
    ok_no_python.write_text("#!/bin/sh\nexit 0\n")
    fails = tmp_path / "fails"  # a "Python" that cannot import SimSo
    fails.write_text("#!/bin/sh\necho 'ModuleNotFoundError: No module named simso' >&2\nexit 1\n")
    for f in (ok_no_python, fails):
        f.chmod(0o755)
    for path, expected in [("/nonexistent/python", "no such file"), (str(plain), "not executable"),
                           (str(tmp_path), "a directory"), (str(ok_no_python), "did not run Python code"),
                           (str(fails), "cannot import SimSo")]:
        assert_refused(bench("--suite", "--simso", path), "--simso", expected)
    for value in ("0", "-3", "1.5"):
        assert_refused(bench("--suite", "--big-seconds", value), "argument --big-seconds",
                       "expected a positive integer")


def test_simso_alone_without_a_simso_python_is_refused(monkeypatch, tmp_path):
    # `--simso` alone means .venv-simso's Python, else simso-python on PATH; neither: refused.
    monkeypatch.setattr(benchsuite, "ROOT", tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ValueError, match="no .*venv-simso.* and no simso-python on PATH"):
        benchsuite.simso_python("auto")
    assert benchsuite.simso_python(None) is None


def test_the_plain_run_takes_small_valid_values():
    p = bench("--tasks", "4", "--cpus", "2", "--seconds", "1", "--repeat", "1", "--scheduler", "cfs,cfs")
    assert p.returncode == 0, p.stderr
    assert [ln.split()[0] for ln in p.stdout.splitlines()] == ["eevdf", "cfs"]
    assert "did not finish" not in p.stdout


def test_repro_split_charges_cpu_to_plotting_by_the_stack_it_ends_on():
    # benchrepro's split: an interval ending while a matplotlib frame is on the stack (here one
    # level down, as after a C call returns into matplotlib's code) is plotting, else the rest.
    import sys

    from schedlab import benchrepro

    split = benchrepro.Split()
    ns: dict = {}
    code = "import sys\ndef draw(split, charge):\n    split.last -= 0.5\n    charge(split)\n"
    exec(compile(code, "/site-packages/matplotlib/figure.py", "exec"), ns)
    ns["draw"](split, lambda s: s.charge(sys._getframe()))
    assert split.plotting >= 0.5 and split.rest < 0.5
    rest_before = split.rest
    split.last -= 0.25
    split.charge(sys._getframe())
    assert split.rest - rest_before >= 0.25 and split.plotting < 0.75
