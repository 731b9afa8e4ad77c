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


def test_base_without_instructions_is_a_usage_error():
    import subprocess
    import sys

    p = subprocess.run([sys.executable, "-m", "schedlab.bench", "--base", "HEAD"],
                       capture_output=True, text=True, check=False)
    assert p.returncode == 2 and "--base goes with --instructions" in p.stderr


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
