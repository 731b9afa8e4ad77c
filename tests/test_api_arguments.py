"""simulate()'s arguments from Python: a wrong type or value is one ConfigError naming the option and
what was expected (no raw TypeError/ValueError/OverflowError, no value silently changed), and the
valid forms still run."""

import re

import pytest
import schedlab

WL = {"global": {"duration": 1}, "tasks": {"hog": {"run": 1000}}}
SHORT = "1ms"  # every run here is short: the CI machine has two cores


@pytest.mark.parametrize("kwargs,expect", [
    # Not iterable, or a string (never split into characters).
    (dict(capacity=5), r"capacity: expected a list of integers 1..=1024 \(one for all CPUs or one per CPU\), "
                       "got 5"),
    (dict(capacity="1024"), "capacity: expected a list of integers 1..=1024 .*, got '1024'"),
    (dict(capacity={0: 512}), "capacity: expected a list of integers"),
    (dict(freq_mhz=2000), r"freq_mhz: expected a list of MHz, each an integer or a \(current, max\) pair of "
                          r"integers, got 2000"),
    (dict(freq_mhz=["2000"]), r"freq_mhz: expected a list of MHz.*, got \['2000'\]"),
    (dict(freq_levels_mhz="2000"), r"freq_levels_mhz: expected a list of integers \(MHz\), got '2000'"),
    (dict(fairness_tasks="hog"), "fairness_tasks: expected a list of task names, got 'hog'"),
    (dict(fairness_tasks=[5]), r"fairness_tasks: expected a list of task names, got \[5\]"),
    # Entries that are no integers, or no (current, max) pair.
    (dict(capacity=[512.7]), r"capacity: expected a list of integers 1..=1024 .*, got \[512.7\]"),
    (dict(capacity=[512.0]), r"capacity: .*, got \[512.0\]"),
    (dict(capacity=[True]), r"capacity: .*, got \[True\]"),
    (dict(freq_mhz=[2000.5]), r"freq_mhz: .*, got \[2000.5\]"),
    (dict(freq_mhz=[(1, 2, 3)]), r"freq_mhz: .*, got \[\(1, 2, 3\)\]"),
    (dict(freq_mhz=[(1000,)]), r"freq_mhz: .*, got \[\(1000,\)\]"),
    (dict(freq_mhz=[(1000, 2000.0)]), r"freq_mhz: .*, got \[\(1000, 2000.0\)\]"),
    (dict(freq_mhz=[True]), r"freq_mhz: .*, got \[True\]"),
    (dict(freq_levels_mhz=[1000, None]), r"freq_levels_mhz: .*, got \[1000, None\]"),
    # Durations.
    (dict(duration=float("nan")), "duration must be a number of seconds > 0, got nan"),
    (dict(duration=float("inf")), "duration must be at most 18446744073.709551615 s .*, got inf"),
    (dict(duration=10**400), "duration must be at most 18446744073.709551615 s"),
    (dict(duration="1" * 400), "duration must be at most 18446744073.709551615 s"),
    (dict(duration=[1]), r"duration: expected seconds \(a number\) or a string like '500ms', got \[1\]"),
    (dict(duration=True), "duration: expected seconds .*, got True"),
    (dict(duration=1e-12), "duration: 1e-12 is 0 ns once rounded to whole ns; the smallest is 1 ns"),
    (dict(duration="0.1ns"), "duration: '0.1ns' is 0 ns once rounded to whole ns; the smallest is 1 ns"),
    (dict(duration=0), "duration must be > 0, got 0"),
    (dict(duration="0ms"), "duration must be > 0, got '0ms'"),
    (dict(duration="fast"), "invalid duration 'fast'"),
    # Other options.
    (dict(progress=5), r"progress: expected a function of \(now_ns, end_ns\) or None, got 5"),
    (dict(zero_costs="no"), "zero_costs: expected True or False, got 'no'"),
    (dict(trace=True, trace_counters="no"), "trace_counters: expected True or False, got 'no'"),
    (dict(set="base_slice_ns=1"), "set: expected a dict of tunable values or a list of 'NAME=VALUE', "
                                  "got 'base_slice_ns=1'"),
    (dict(set=5), "set: expected a dict of tunable values"),
    (dict(set=[5]), "--set expects NAME=VALUE, got 5"),
    (dict(start_cpus=[("hog", 0)]), "start_cpus: expected a dict of thread name to CPU"),
])
def test_a_bad_argument_is_one_config_error(kwargs, expect):
    kwargs = {"duration": SHORT, **kwargs}
    with pytest.raises(schedlab.ConfigError, match=expect):
        schedlab.simulate(WL, "eevdf", 2, **kwargs)


@pytest.mark.parametrize("workload", [None, 5, 1.5, ["a"]])
def test_a_workload_of_a_wrong_type_is_one_config_error(workload):
    expect = f"workload: expected a path, JSON text or a dict, got {re.escape(repr(workload))}"
    with pytest.raises(schedlab.ConfigError, match=expect):
        schedlab.check(workload)
    with pytest.raises(schedlab.ConfigError, match=expect):
        schedlab.simulate(workload, duration=SHORT)


def test_a_bad_argument_leaves_a_policy_instance_unused():
    from schedlab.ext import Policy

    class Fifo(Policy):
        name = "argfifo"

    p = Fifo()
    with pytest.raises(schedlab.ConfigError, match="capacity"):
        schedlab.simulate(WL, p, duration=SHORT, capacity="1024")
    assert schedlab.simulate(WL, p, duration=SHORT).metrics["scheduler"] == "py:argfifo"


@pytest.mark.parametrize("kwargs", [
    dict(capacity=[512]),
    dict(capacity=(512, 1024)),
    dict(freq_mhz=[2000]),
    dict(freq_mhz=[(1000, 2000)]),
    dict(freq_mhz=[[1000, 2000], 1500]),
    dict(freq_mhz=((f, 2000) for f in (1000, 2000))),
    dict(freq_levels_mhz=[1000, 2000], governor="powersave"),
    dict(fairness_tasks=["hog"]),
    dict(set={"base_slice_ns": 3_000_000}),
    dict(set=["base_slice_ns=3_000_000"]),
    dict(zero_costs=True),
    dict(progress=lambda now, end: None),
])
def test_valid_forms_still_run(kwargs):
    m = schedlab.simulate(WL, "eevdf", 2, duration=SHORT, **kwargs).metrics
    assert m["duration_us"] == 1000


@pytest.mark.parametrize("duration,us", [("500us", 500), (0.002, 2000), (" 1 ms", 1000), (1e-9, 0.001)])
def test_valid_durations(duration, us):
    assert schedlab.simulate(WL, duration=duration).metrics["duration_us"] == us


def test_an_integer_entry_is_its_own_current_and_max():
    a = schedlab.simulate(WL, "eevdf", 2, duration=SHORT, freq_mhz=[1000, (1000, 2000)]).metrics
    b = schedlab.simulate(WL, "eevdf", 2, duration=SHORT, freq_mhz=[(1000, 1000), (1000, 2000)]).metrics
    assert a == b


def test_a_write_error_names_the_path_asked_for(tmp_path):
    r = schedlab.simulate(WL, duration=SHORT, trace=True)
    target = "/nonexistent/dir/x.pftrace"
    for write in (r.write_perfetto, r.write_ftrace):
        with pytest.raises(FileNotFoundError) as e:
            write(target)
        assert e.value.filename == target and "partial" not in str(e.value), str(e.value)
    with pytest.raises(IsADirectoryError, match=re.escape(f"{tmp_path}: is a directory")):
        r.write_perfetto(tmp_path)
    r.write_perfetto(tmp_path / "t.pftrace")  # and a good path is written, with nothing left beside it
    assert [p.name for p in tmp_path.iterdir()] == ["t.pftrace"]
