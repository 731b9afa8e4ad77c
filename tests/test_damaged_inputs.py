"""Damaged inputs of `schedlab compare` (metrics JSON) and `schedlab fidelity --host-from` (saved
host runs): each is one clear error naming the file, the JSON path and what was expected, exit
code 2, no traceback and no output (compare.METRICS, fidelity.HOST_RUN, compare.check_json)."""

import json
import pathlib
import shutil
import subprocess
import sys

import pytest


def run(*args, timeout=180):
    """`schedlab ARGS` (none of these touch the host)."""
    return subprocess.run([sys.executable, "-m", "schedlab", *args], capture_output=True, text=True,
                          timeout=timeout)


def one_error(r, *parts):
    """Exit code 2, one `schedlab: error:` line holding every part, nothing on stdout."""
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert "Traceback" not in r.stderr and r.stdout == "", r.stderr
    lines = [x for x in r.stderr.splitlines() if x.startswith("schedlab: error:")]
    assert len(lines) == 1, r.stderr
    for p in parts:
        assert p in lines[0], (p, lines[0])


@pytest.fixture(scope="module")
def metrics(tmp_path_factory):
    """e1.json: `schedlab run examples/mixed.json --cpus 2 --json e1.json`."""
    ex = pathlib.Path(__file__).resolve().parent.parent / "examples" / "mixed.json"
    e1 = tmp_path_factory.mktemp("metrics") / "e1.json"
    r = run("run", str(ex), "--cpus", "2", "--json", str(e1), "--quiet")
    assert r.returncode == 0, r.stderr
    return e1


def damaged(e1, tmp_path, damage):
    m = json.loads(e1.read_text())
    damage(m)
    out = tmp_path / "mX.json"
    out.write_text(json.dumps(m))
    return out


@pytest.mark.parametrize("damage, path, expected", [
    (lambda m: m["tasks"][0].__setitem__("cpu_share", "abc"), "tasks[0].cpu_share",
     'expected a number or null, got "abc"'),
    (lambda m: m.pop("context_switches_per_sec_per_cpu"), "context_switches_per_sec_per_cpu",
     "expected a number or null, but it is missing"),
    (lambda m: m["tasks"][1].__setitem__("name", None), "tasks[1].name", "expected a string, got null"),
    (lambda m: m.__setitem__("tasks", {}), "tasks", "expected a list, got an object"),
])
def test_compare_names_the_damaged_field(metrics, tmp_path, damage, path, expected):
    bad = damaged(metrics, tmp_path, damage)
    one_error(run("compare", str(bad), str(metrics)), f"{bad}: {path}: {expected}")
    one_error(run("compare", str(metrics), str(bad)), f"{bad}: {path}: {expected}")


def test_compare_keeps_null_where_not_measured(metrics, tmp_path):
    """null is "not measured" (a task that never woke, what a trace cannot tell): still compared."""
    def unmeasured(m):
        m["tasks"][0]["wakeup_latency_p50_us"] = None
        m["jain_fairness"] = None

    r = run("compare", str(damaged(metrics, tmp_path, unmeasured)), str(metrics))
    assert r.returncode == 0, r.stderr


def test_compare_json_syntax_error_names_the_file(metrics, tmp_path):
    bad = tmp_path / "mX.json"
    bad.write_text("{")
    one_error(run("compare", str(bad), str(metrics)), f"{bad}: not JSON: ", "line 1 column 2")


def test_compare_two_scheduler_file_names_the_run(root, tmp_path):
    two = tmp_path / "two.json"
    r = run("run", str(root / "examples" / "mixed.json"), "--cpus", "2", "--scheduler", "eevdf,cfs",
            "--quiet", "--json", str(two))
    assert r.returncode == 0, r.stderr
    m = json.loads(two.read_text())
    m["cfs"]["tasks"][2]["nvcsw"] = "7"
    two.write_text(json.dumps(m))
    one_error(run("compare", str(two)), f"{two}: cfs.tasks[2].nvcsw: expected a number or null, got \"7\"")


@pytest.fixture
def refs(root, tmp_path):
    """A copy of the 16-CPU VM's saved rt16 runs (experiments/host-runs/)."""
    d = tmp_path / "refs"
    shutil.copytree(root / "experiments/host-runs/16cpu-2026-11-27g/refs", d)
    return d


def damage_run(refs, damage, name="rt16-1.json"):
    rec = json.loads((refs / name).read_text())
    damage(rec)
    (refs / name).write_text(json.dumps(rec))
    return refs / name


@pytest.mark.parametrize("damage, path, expected", [
    (lambda r: r["metrics"]["tasks"][0].__setitem__("cpu_time_us", "x"), "metrics.tasks[0].cpu_time_us",
     'expected a number or null, got "x"'),
    (lambda r: r["metrics"].pop("tasks"), "metrics.tasks", "expected a list, but it is missing"),
    (lambda r: r.__setitem__("scheduler", "nope"), "scheduler",
     "expected a scheduler name (see 'schedlab schedulers'), got \"nope\""),
    (lambda r: r["metrics"].__setitem__("migrations", None), "metrics.migrations",
     "expected a number, got null"),
    (lambda r: r["info"].__setitem__("tick_phase_ns", "0"), "info.tick_phase_ns",
     'expected an integer or null, got "0"'),
])
def test_fidelity_host_from_names_the_damaged_field(refs, damage, path, expected):
    bad = damage_run(refs, damage)
    one_error(run("fidelity", "--host-from", str(refs)), f"{bad}: {path}: {expected}")


def test_fidelity_host_from_keeps_null_where_not_measured(refs):
    """A latency the host withheld or never measured is null: judged as not measured."""
    def withheld(r):
        r["metrics"]["tasks"][0]["wakeup_latency_p50_us"] = None
        r["metrics"]["tasks"][0]["wakeups"] = None

    damage_run(refs, withheld)
    r = run("fidelity", "--host-from", str(refs), "--only", "rt16")
    assert r.returncode == 0, r.stderr


def test_fidelity_host_from_damaged_facts_and_syntax(refs):
    facts = json.loads((refs / "facts.json").read_text())
    facts["cpus"] = 16
    (refs / "facts.json").write_text(json.dumps(facts))
    one_error(run("fidelity", "--host-from", str(refs)),
              f"{refs / 'facts.json'}: cpus: expected a list, got 16")
    (refs / "rt16-2.json").write_text("{")
    one_error(run("fidelity", "--host-from", str(refs)), f"{refs / 'rt16-2.json'}: ", "line 1 column 2")
