"""rt-app's own examples (tests/fixtures/rtapp-examples, from rt-app 55cb0c0) are read with
rt-app's meaning: trailing commas, duplicate keys renamed as workgen does, a bare "suspend",
unknown global keys ignored (with a warning); what is not modelled is refused by name."""

import subprocess
import sys
from pathlib import Path

import pytest
import schedlab

EXAMPLES = Path(__file__).parent / "fixtures" / "rtapp-examples"
FILES = sorted(p.relative_to(EXAMPLES).as_posix() for p in EXAMPLES.rglob("*.json"))
REFUSED = {"tutorial/example6.json": 'event "mem" is not supported'}


def test_all_22_examples_are_here():
    assert len(FILES) == 22


@pytest.mark.parametrize("name", FILES)
def test_example_checks_and_runs_or_is_refused_by_name(name):
    path = EXAMPLES / name
    # --duration: some loop forever, as rt-app runs them until interrupted; `run` needs one too.
    p = subprocess.run([sys.executable, "-m", "schedlab", "check", str(path), "--duration", "200ms"],
                       capture_output=True, text=True)
    if name in REFUSED:
        assert p.returncode == 2 and REFUSED[name] in p.stderr, p.stderr
        return
    assert p.returncode == 0, p.stderr
    r = schedlab.simulate(str(path), "eevdf", 4, duration="200ms")
    assert r.metrics["tasks"], name
    assert r.metrics["context_switches"] > 0, name


def test_duplicate_runs_are_all_run():
    # mp3-short's decoder phase has several "run" keys: workgen renames them run, run1, ...;
    # each is a run event, so the phase holds them all.
    wl = '{"tasks": {"t": {"loop": 1, "run": 1000, "sleep": 1000, "run": 2000,}}}'
    # Zero costs: with them its two wakeups' paths (start release and sleep, 20 µs each onto
    # the idle CPU) would count in its CPU time too (docs/model.md, "Wakeup costs").
    r = schedlab.simulate(wl, "eevdf", 1, zero_costs=True)
    assert r.tasks.loc["t"].cpu_time_us == pytest.approx(3000, abs=1)


def test_check_refuses_a_workload_that_loops_forever_without_a_duration():
    ex4 = str(EXAMPLES / "tutorial" / "example4.json")
    p = subprocess.run([sys.executable, "-m", "schedlab", "check", ex4], capture_output=True, text=True)
    assert p.returncode == 2 and "loops forever" in p.stderr and "--duration" in p.stderr
    r = subprocess.run([sys.executable, "-m", "schedlab", "run", ex4, "--quiet"], capture_output=True,
                       text=True)
    assert r.returncode == 2 and r.stderr == p.stderr  # the same refusal, in the same words


def test_check_refuses_what_run_refuses_without_a_machine(tmp_path):
    f = tmp_path / "dl.json"
    f.write_text('{"tasks": {"d": {"policy": "SCHED_DEADLINE", "dl-runtime": 20000, '
                 '"dl-deadline": 10000, "dl-period": 100000, "run": 1000}}}')
    p = subprocess.run([sys.executable, "-m", "schedlab", "check", str(f)], capture_output=True, text=True)
    assert p.returncode == 2
    assert "dl-runtime <= dl-deadline <= dl-period" in p.stderr and "Traceback" not in p.stderr


def test_sync_is_a_signal_then_a_wait():
    # Two threads hand a token back and forth with sync (rt-app's sig_and_wait).
    wl = ('{"global": {"duration": 1}, "tasks": {'
          '"a": {"loop": -1, "lock": "m", "sync": {"ref": "c", "mutex": "m"}, "unlock": "m", "run": 100},'
          '"b": {"loop": -1, "lock": "m", "sync": {"ref": "c", "mutex": "m"}, "unlock": "m", "run": 100}}}')
    r = schedlab.simulate(wl, "eevdf", 2)
    assert r.tasks.loc["a"].nvcsw > 100 and r.tasks.loc["b"].nvcsw > 100
