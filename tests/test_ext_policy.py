"""Policies written in Python (schedlab.ext.Policy) in the ext class."""

from __future__ import annotations

import hashlib
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import schedlab
from schedlab.ext import (
    SCX_DSQ_GLOBAL,
    SCX_OPS_SWITCH_PARTIAL,
    SCX_SLICE_DFL,
    Policy,
    PolicyError,
)
from schedlab.policies import ScxSimple

ROOT = Path(__file__).resolve().parent.parent

HOGS = {  # nice levels on 2 CPUs: more tasks than CPUs, so the vtime order matters
    "global": {"duration": 2},
    "tasks": {
        "hog0": {"priority": 0, "run": 1_000_000},
        "hog5": {"priority": 5, "run": 1_000_000},
        "hogm5": {"priority": -5, "run": 1_000_000},
        "hog10": {"instance": 2, "priority": 10, "run": 1_000_000},
    },
}

MIXED = {  # sleepers and hogs: wakeups, idle CPUs, direct dispatch, the vtime clamp
    "global": {"duration": 2},
    "tasks": {
        "hog": {"run": 1_000_000},
        "io": {"instance": 3, "run": 1500, "sleep": 4000},
        "burst": {"run": 30_000, "sleep": 50_000},
        "batch": {"policy": "SCHED_BATCH", "priority": 3, "run": 7000, "sleep": 3000},
    },
}

PARTIAL = {
    "global": {"duration": 1},
    "tasks": {
        "ext": {"instance": 2, "policy": "SCHED_EXT", "run": 1_000_000},
        "other": {"instance": 2, "run": 1_000_000},
    },
}


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


class Recorder(Policy):
    """Every hook a global FIFO needs, recording its calls."""

    name = "recorder"

    def __init__(self):
        self.calls = []

    def enqueue(self, ctx, p, enq_flags):
        self.calls.append(("enqueue", p))
        ctx.dsq_insert(p, SCX_DSQ_GLOBAL, SCX_SLICE_DFL, enq_flags)

    def running(self, ctx, p):
        self.calls.append(("running", p))
        ctx.task_data(p).runs = getattr(ctx.task_data(p), "runs", 0) + 1

    def stopping(self, ctx, p, runnable):
        self.calls.append(("stopping", p, runnable))

    def init_task(self, ctx, p, fork):
        self.calls.append(("init_task", p, fork))
        ctx.task_data(p).name = ctx.task(p).name

    def enable(self, ctx, p):
        self.calls.append(("enable", p))

    def init(self, ctx):
        self.calls.append(("init",))

    def exit(self, ctx, info):
        self.calls.append(("exit", info.kind))


def test_hooks_are_called_and_overrides_detected():
    assert Recorder._overrides == ("enqueue", "running", "stopping", "init_task", "enable", "init", "exit")
    pol = Recorder()
    res = schedlab.simulate(MIXED, pol, cpus=2, duration="200ms")
    kinds = [c[0] for c in pol.calls]
    assert kinds[0] == "init"
    assert {"enqueue", "running", "stopping", "init_task", "enable"} <= set(kinds)
    # one init_task and one enable per task, init_task first
    inits = [c[1] for c in pol.calls if c[0] == "init_task"]
    assert sorted(inits) == list(range(len(res.metrics["tasks"])))
    assert all(c[2] for c in pol.calls if c[0] == "init_task")  # at fork
    assert res.metrics["scheduler"] == "py:recorder"
    # every task ran, and ran under the policy (running counted per task)
    assert all(t["cpu_time_us"] > 0 for t in res.metrics["tasks"])


def test_task_data_is_per_task_and_persistent():
    seen = {}

    class Data(Policy):
        def running(self, ctx, p):
            d = ctx.task_data(p)
            d.n = getattr(d, "n", 0) + 1
            assert ctx.task_data(p) is d
            seen[ctx.task(p).name] = d.n

    schedlab.simulate(MIXED, Data(), cpus=2, duration="100ms")
    assert seen["hog"] >= 1 and seen["io-0"] > 5


def test_default_policy_is_global_fifo():
    """No hook overridden: the kernel's defaults (Rust) run, Python is never called."""

    class Nothing(Policy):
        pass

    assert Nothing._overrides == ()
    res = schedlab.simulate(HOGS, Nothing(), cpus=2, duration="500ms")
    assert res.metrics["scheduler"] == "py:Nothing"
    assert sum(t["cpu_time_us"] for t in res.metrics["tasks"]) == pytest.approx(1e6, rel=1e-3)


def test_python_exception_is_policy_error_with_traceback():
    class Broken(Policy):
        name = "my_edf"

        def enqueue(self, ctx, p, enq_flags):
            if ctx.now() >= 12_000_000 and ctx.task(p).name == "hog0":
                {}["deadline"]  # noqa: B018 - the bug under test
            ctx.dsq_insert(p, SCX_DSQ_GLOBAL, SCX_SLICE_DFL, enq_flags)

    with pytest.raises(PolicyError) as ei:
        schedlab.simulate(HOGS, Broken(), cpus=2)
    msg = str(ei.value)
    first = msg.splitlines()[0]
    assert first.startswith('ops.enqueue of policy "my_edf" for task "hog0" (pid ')
    assert first.endswith(" s raised:")
    assert "Traceback (most recent call last):" in msg
    assert 'in enqueue\n    {}["deadline"]' in msg
    assert msg.rstrip().endswith("KeyError: 'deadline'")
    assert isinstance(ei.value, schedlab.SimulationError)
    assert type(ei.value).__module__ == "schedlab.ext"


def test_a_timer_rearmed_for_now_ends_the_run_with_an_error():
    """A policy whose timer re-arms itself at the current time never lets simulated time pass: the
    run stops at max_events_per_instant with one error, instead of hanging."""
    class Spin(Policy):
        def init(self, ctx):
            ctx.timer_start(1000, 1)

        def timer(self, ctx, tag):
            ctx.timer_start(ctx.now(), tag)

    with pytest.raises(schedlab.SimulationError,
                       match=r"the ext class's timers keep firing without time passing at t=1000 ns: "
                             r"more than 1000 events"):
        schedlab.simulate(MIXED, Spin(), cpus=2, duration="100ms", set={"max_events_per_instant": 1000})


def test_select_cpu_returning_a_bool_is_policy_error():
    class Yes(Policy):
        def select_cpu(self, ctx, p, prev_cpu, wake_flags):
            return True  # would read as CPU 1

    with pytest.raises(PolicyError, match=r"(?s)ops\.select_cpu of policy \"Yes\".*select_cpu returned True; "
                                          r"expected a CPU number"):
        schedlab.simulate(MIXED, Yes(), cpus=2, duration="100ms")


@pytest.mark.parametrize("attrs,words", [
    ({"name": 5}, "policy attribute name = 5: expected a string"),
    ({"timeout_ms": -1}, "policy attribute timeout_ms = -1: expected 0..=4294967295 ms"),
])
def test_bad_policy_attributes_are_named_as_written(attrs, words):
    bad = type("Bad", (Policy,), attrs)
    with pytest.raises(PolicyError, match=words):
        schedlab.simulate(MIXED, bad(), cpus=2, duration="100ms")


def test_an_exit_that_raises_keeps_the_error_it_was_called_for():
    class ErrThenBadExit(Policy):
        def enqueue(self, ctx, p, enq_flags):
            if ctx.now() >= 10_000_000:
                ctx.error("queue corrupted")
            ctx.dsq_insert(p, SCX_DSQ_GLOBAL, SCX_SLICE_DFL, enq_flags)

        def exit(self, ctx, info):
            raise RuntimeError("cleanup failed")

    with pytest.raises(PolicyError) as ei:
        schedlab.simulate(MIXED, ErrThenBadExit(), cpus=2, duration="100ms")
    first = str(ei.value).splitlines()[0]
    assert first.startswith("ops.exit of policy") and "scx_bpf_error: queue corrupted" in first, first
    assert str(ei.value).rstrip().endswith("RuntimeError: cleanup failed")


def test_bad_return_value_is_policy_error():
    class BadCpu(Policy):
        def select_cpu(self, ctx, p, prev_cpu, wake_flags):
            return "cpu0"

    with pytest.raises(PolicyError, match=r"(?s)ops\.select_cpu of policy \"BadCpu\" for task .*TypeError"):
        schedlab.simulate(MIXED, BadCpu(), cpus=2, duration="100ms")


def test_class_detected_errors_reach_python_as_policy_error():
    class Lost(Policy):
        name = "lost"

        def enqueue(self, ctx, p, enq_flags):
            pass  # keeps every task and never dispatches it: the watchdog fires

        timeout_ms = 100

    with pytest.raises(PolicyError, match=r"^lost: .*failed to run .*\(watchdog timeout 100 ms\).*lost task"):
        schedlab.simulate(HOGS, Lost(), cpus=2, duration="1s")

    class Twice(Policy):
        name = "twice"

        def enqueue(self, ctx, p, enq_flags):
            ctx.dsq_insert(p, SCX_DSQ_GLOBAL, SCX_SLICE_DFL, enq_flags)
            ctx.dsq_insert(p, SCX_DSQ_GLOBAL, SCX_SLICE_DFL, enq_flags)

    with pytest.raises(PolicyError, match=r"^twice: ops\.enqueue .*inserted twice"):
        schedlab.simulate(HOGS, Twice(), cpus=2, duration="100ms")

    class NoDsq(Policy):
        name = "nodsq"

        def enqueue(self, ctx, p, enq_flags):
            ctx.dsq_insert(p, 42, SCX_SLICE_DFL, enq_flags)

    with pytest.raises(PolicyError, match=r"^nodsq: .*DSQ 42.*does not exist"):
        schedlab.simulate(HOGS, NoDsq(), cpus=2, duration="100ms")


def test_scx_bpf_error_from_python():
    class Gives(Policy):
        name = "gives_up"

        def running(self, ctx, p):
            ctx.error(f"no more for {ctx.task(p).name}")

    with pytest.raises(PolicyError, match=r"gives_up: ops\.running .*scx_bpf_error: no more for"):
        schedlab.simulate(HOGS, Gives(), cpus=2, duration="100ms")


def test_stale_ctx_raises():
    kept = []

    class Keeper(Policy):
        def running(self, ctx, p):
            assert ctx.valid
            if not kept:
                kept.append(ctx)

    schedlab.simulate(MIXED, Keeper(), cpus=2, duration="50ms")
    (ctx,) = kept
    assert not ctx.valid
    with pytest.raises(PolicyError, match=r"stale ctx: this ctx was passed to ops\.running"):
        ctx.now()
    with pytest.raises(PolicyError, match="stale ctx"):
        ctx.dsq_insert(0, SCX_DSQ_GLOBAL, SCX_SLICE_DFL)


def test_stale_ctx_used_in_a_later_hook_raises():
    class Later(Policy):
        name = "later"

        def __init__(self):
            self.old = None

        def running(self, ctx, p):
            if self.old is not None:
                self.old.kick_cpu(0)
            self.old = ctx

    with pytest.raises(PolicyError) as ei:
        schedlab.simulate(MIXED, Later(), cpus=2, duration="50ms")
    assert str(ei.value).startswith('ops.running of policy "later" for task ')
    assert "PolicyError: stale ctx: this ctx was passed to ops.running" in str(ei.value)


def test_partial_mode_leaves_sched_other_to_fair():
    ext_tasks = set()

    class Partial(Policy):
        flags = SCX_OPS_SWITCH_PARTIAL

        def enable(self, ctx, p):
            ext_tasks.add(ctx.task(p).name)

    res = schedlab.simulate(PARTIAL, Partial(), cpus=2)
    assert ext_tasks == {"ext-0", "ext-1"}
    # fair is above ext: the SCHED_OTHER hogs own both CPUs once the load
    # balancer has spread them (both start on CPU 0; an ext task runs on
    # CPU 1 until then, as under the Rust scx_simple -p)
    cpu = {t["name"]: t["cpu_time_us"] for t in res.metrics["tasks"]}
    assert cpu["other-0"] + cpu["other-1"] >= 1.8e6
    assert cpu["ext-0"] + cpu["ext-1"] <= 0.2e6

    everything = set()

    class Full(Policy):
        def enable(self, ctx, p):
            everything.add(ctx.task(p).name)

    schedlab.simulate(PARTIAL, Full(), cpus=2)
    assert everything == {"ext-0", "ext-1", "other-0", "other-1"}


def test_deterministic_bytes(tmp_path):
    out = []
    for i in range(2):
        r = schedlab.simulate(MIXED, ScxSimple(), cpus=2, trace=True, seed=7)
        p = tmp_path / f"t{i}.pftrace"
        r.write_perfetto(p)
        out.append((_sha(p), r.to_json()))
    assert out[0] == out[1]


def test_policy_instance_runs_once():
    pol = ScxSimple()
    schedlab.simulate(MIXED, pol, cpus=2, duration="10ms")
    with pytest.raises(schedlab.ConfigError, match="already ran"):
        schedlab.simulate(MIXED, pol, cpus=2, duration="10ms")
    with pytest.raises(schedlab.ConfigError, match="schedlab.ext.Policy instance"):
        schedlab.simulate(MIXED, object(), cpus=2)


def _compare(tmp_path, wl, cpus, fifo, seed=0):
    rust = schedlab.simulate(wl, "scx_simple", cpus, trace=True, seed=seed, set={"fifo": int(fifo)})
    pol = ScxSimple(fifo=fifo)
    py = schedlab.simulate(wl, pol, cpus, trace=True, seed=seed)
    a, b = tmp_path / "rust.pftrace", tmp_path / "py.pftrace"
    rust.write_perfetto(a)
    py.write_perfetto(b)
    assert _sha(a) == _sha(b)
    assert rust.ftrace_text() == py.ftrace_text()
    mr, mp = dict(rust.metrics), dict(py.metrics)
    assert (mr.pop("scheduler"), mp.pop("scheduler")) == ("scx_simple", "py:scx_simple")
    # The Rust scheduler also lists its own tunables (fifo, partial); the
    # Python policy takes them as constructor arguments.
    own = {k: mr["tunables"].pop(k) for k in ("fifo", "partial")}
    assert own == {"fifo": int(fifo), "partial": 0}
    assert mr == mp
    return pol


def test_python_scx_simple_matches_rust_vtime_hogs(tmp_path):
    pol = _compare(tmp_path, HOGS, 2, fifo=False)
    assert pol.stats[1] > 0 and pol.vtime_now > 0


def test_python_scx_simple_matches_rust_vtime_mixed(tmp_path):
    pol = _compare(tmp_path, MIXED, 2, fifo=False, seed=3)
    assert pol.stats[0] > 0 and pol.stats[1] > 0  # direct dispatches and shared-DSQ inserts


def test_python_scx_simple_matches_rust_fifo(tmp_path):
    _compare(tmp_path, HOGS, 2, fifo=True)
    _compare(tmp_path, MIXED, 3, fifo=True)


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "schedlab", *args], capture_output=True, text=True, cwd=ROOT)


def test_cli_policy_file(tmp_path):
    wl = tmp_path / "wl.json"
    wl.write_text('{"global": {"duration": 1}, '
                  '"tasks": {"a": {"run": 1000000}, "b": {"run": 5000, "sleep": 5000}}}')
    pol = tmp_path / "mine.py"
    pol.write_text(textwrap.dedent("""
        from schedlab.ext import Policy, SCX_DSQ_GLOBAL

        class Mine(Policy):
            name = "mine"
            def enqueue(self, ctx, p, enq_flags):
                ctx.dsq_insert(p, SCX_DSQ_GLOBAL, 5_000_000, enq_flags)

        class Other(Policy):
            pass
    """))
    out = tmp_path / "m.json"
    r = _cli("run", str(wl), "--scheduler", f"{pol}:Mine", "--cpus", "2", "--json", str(out), "--quiet")
    assert r.returncode == 0, r.stderr
    assert '"scheduler": "py:mine"' in out.read_text()
    # two Policy subclasses: the class must be named
    r = _cli("run", str(wl), "--scheduler", str(pol), "--quiet")
    assert r.returncode == 2
    assert "defines 2 Policy subclasses (Mine, Other)" in r.stderr
    # one subclass: the file alone is enough; compared with a registered scheduler
    one = tmp_path / "one.py"
    one.write_text("from schedlab.policies.scx_simple import ScxSimple as _S\n\nclass Simple(_S):\n    pass\n")
    r = _cli("run", str(wl), "--scheduler", f"eevdf,{one}", "--cpus", "2")
    assert r.returncode == 0, r.stderr
    assert "py:scx_simple" in r.stdout


def test_cli_broken_policy_exit_2(tmp_path):
    wl = tmp_path / "wl.json"
    wl.write_text('{"global": {"duration": 1}, "tasks": {"hog1": {"run": 1000000}}}')
    pol = tmp_path / "broken.py"
    pol.write_text(textwrap.dedent("""
        from schedlab.ext import Policy

        class Broken(Policy):
            name = "broken"
            def enqueue(self, ctx, p, enq_flags):
                return 1 / 0
    """))
    out = tmp_path / "m.json"
    trace = tmp_path / "t.pftrace"
    r = _cli("run", str(wl), "--scheduler", f"{pol}:Broken", "--json", str(out), "--trace", str(trace))
    assert r.returncode == 2
    assert r.stderr.startswith('schedlab: error: ops.enqueue of policy "broken" for task "hog1" (pid ')
    assert "Traceback (most recent call last):" in r.stderr
    assert f'File "{pol}", line 7, in enqueue' in r.stderr
    assert r.stderr.rstrip().endswith("ZeroDivisionError: division by zero")
    assert r.stderr.count("schedlab: error:") == 1
    assert not out.exists() and not trace.exists()
    assert list(tmp_path.iterdir()) == [wl, pol] or sorted(tmp_path.iterdir()) == sorted([wl, pol])

    syntax = tmp_path / "syntax.py"
    syntax.write_text("class X(:\n")
    r = _cli("run", str(wl), "--scheduler", f"{syntax}:X")
    assert r.returncode == 2
    assert r.stderr.strip() == f"schedlab: error: policy file {syntax}: line 1: SyntaxError: invalid syntax"

    r = _cli("run", str(wl), "--scheduler", f"{pol}:Nope")
    assert r.returncode == 2 and r.stderr.strip() == f"schedlab: error: policy file {pol} has no Nope"

    r = _cli("run", str(wl), "--scheduler", str(tmp_path / "missing.py"))
    assert r.returncode == 2 and "no such policy file" in r.stderr


@pytest.mark.parametrize("name", ["edf", "rr"])
def test_example_policies_run(name):
    from schedlab.ext import load_policy

    wl = ROOT / "examples" / "policies" / f"{name}.json"
    pol = load_policy(str(ROOT / "examples" / "policies" / f"{name}.py"))
    # Zero costs: the deadline checks below are closed forms (EDF meets
    # every deadline at U <= 1 on a machine without wakeup delays).
    res = schedlab.simulate(wl, pol, cpus=2, zero_costs=True)
    tasks = {t["name"]: t for t in res.metrics["tasks"]}
    assert all(t["cpu_time_us"] > 0 for t in tasks.values())
    if name == "rr":
        # equal shares for the equal hogs, whatever their nice
        shares = [t["cpu_time_us"] for n, t in tasks.items() if n.startswith("hog")]
        assert max(shares) - min(shares) <= 0.02 * max(shares)
    else:
        assert res.metrics["scheduler"] == "py:edf"
        # no periodic job misses its deadline under EDF; under EEVDF some do
        periodic = ("audio", "video-0", "video-1")
        assert all(tasks[n]["deadline_misses"] == 0 for n in periodic)
        eevdf = {t["name"]: t for t in schedlab.simulate(wl, "eevdf", 2).metrics["tasks"]}
        assert sum(eevdf[n]["deadline_misses"] for n in periodic) > 0
