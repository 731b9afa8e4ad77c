"""Every malformed workload produces its specific error: file, JSON path (or
line:column) and what was expected; the CLI exits 2 with one line."""

import pathlib
import subprocess
import sys

import pytest
import schedlab

BAD = pathlib.Path(__file__).parent / "fixtures" / "bad"

# fixture -> (path or line:col, words the message must contain)
EXPECTED = {
    # (trailing commas and duplicate keys are accepted, as rt-app and workgen accept them:
    # tests/test_rtapp_examples.py)
    "missing_colon.json": ("1:24", "invalid JSON"),
    "bare_key.json": ("1:", "invalid JSON"),
    "wrong_type.json": ("tasks.t.sleep", 'expected an integer number of microseconds, found the string "5ms"'),
    "unknown_key.json": ("tasks.t.prio", "unknown key"),
    "nice_out_of_range.json": ("tasks.t.priority", "expected a nice value in -20..=19"),
    "dl_bad_params.json": ("tasks.t.dl-deadline", "dl-runtime <= dl-deadline <= dl-period"),
    "negative_run.json": ("tasks.t.run", "expected a duration >= 0 us, found -5"),
    "zero_duration.json": ("global.duration", "expected -1 or seconds in 1..=18446744073"),
    "timer_no_period.json": ("tasks.t.timer", 'missing "period"'),
    "fork_unknown.json": ("tasks.t", 'fork of unknown task "ghost"'),
    "missing_tasks.json": ("task", "unknown top-level key"),
    "runs_forever.json": ("", "loops forever"),
    "cpu_out_of_range.json": ("tasks.t.cpus", "CPU 7 does not exist on a 2-CPU machine"),
    "bad_name.json": ("tasks.bad name", "must match"),
    "unterminated_comment.json": ("1:30", "unterminated /* comment"),
    "unsupported_event.json": ("tasks.t.mem", 'event "mem" is not supported'),
    "phase_loop_zero.json": ("tasks.t.phases.p.loop", "expected a phase loop count >= 1"),
}


def test_every_fixture_has_an_expectation():
    assert sorted(p.name for p in BAD.glob("*.json")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_api_error(name):
    where, words = EXPECTED[name]
    path = BAD / name
    with pytest.raises((schedlab.WorkloadError, schedlab.ConfigError)) as ei:
        schedlab.simulate(path, cpus=2)
    msg = str(ei.value)
    assert msg.startswith(str(path)), msg
    assert where in msg and words in msg, msg


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_cli_exit_2_one_line(name):
    p = subprocess.run(
        [sys.executable, "-m", "schedlab", "run", str(BAD / name), "--cpus", "2"],
        capture_output=True, text=True,
    )
    assert p.returncode == 2, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("schedlab: error: "), p.stderr
    assert "Traceback" not in p.stderr and p.stdout == ""


def test_workload_error_attributes():
    with pytest.raises(schedlab.WorkloadError) as ei:
        schedlab.simulate(BAD / "wrong_type.json")
    e = ei.value
    assert (e.path, e.line) == ("tasks.t.sleep", None)
    assert e.file.endswith("wrong_type.json")
    with pytest.raises(schedlab.WorkloadError) as ei:
        schedlab.check(BAD / "missing_colon.json")
    assert (ei.value.line, ei.value.column) == (1, 24)


def test_missing_file_and_bad_config(tmp_path):
    with pytest.raises(FileNotFoundError):
        schedlab.simulate(tmp_path / "nope.json")
    ok = {"global": {"duration": 1}, "tasks": {"t": {"run": 1000}}}
    with pytest.raises(schedlab.ConfigError, match="unknown scheduler"):
        schedlab.simulate(ok, "nosuch")
    with pytest.raises(schedlab.ConfigError, match='unknown tunable "base_slice_ns" for scheduler cfs'):
        schedlab.simulate(ok, "cfs", set={"base_slice_ns": 1})
    with pytest.raises(schedlab.ConfigError, match="out of range"):
        schedlab.simulate(ok, "eevdf", set=["base_slice_ns=1"])
    with pytest.raises(schedlab.ConfigError, match="invalid duration"):
        schedlab.simulate(ok, duration="fast")
