"""The Python API: ``simulate()`` and its result object."""

from __future__ import annotations

import math
import operator
import os
from collections.abc import Iterable, Mapping

from . import _native

# `json` is imported where it is used: `schedlab run` needs none of it (the options and the metrics
# cross to and from the core as Python objects), and its import is about 1.3 ms of start-up.
# Names for annotations only (every annotation is a string here: `from __future__ import
# annotations`): importing typing costs `schedlab run` about 3 ms of start-up (issue 18), and
# pandas is imported where a DataFrame is made (`schedlab check` never needs it).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Optional, Tuple, Union

    import pandas as pd

    from .ext import Policy

    WorkloadLike = Union[str, "os.PathLike[str]", Mapping[str, Any]]

_UNITS = {"ns": 1, "us": 1_000, "ms": 1_000_000, "s": 1_000_000_000}


def _frame(rows: List[Dict[str, Any]], index: str) -> pd.DataFrame:
    """A DataFrame of metric rows: columns of numbers with some nulls (not measured) become
    float columns with NaN rather than ``object`` (also when nothing was measured at all, for
    the columns whose name carries a unit); the index repeats column ``index``, unnamed."""
    import pandas as pd

    # Columns built here, each once (building the frame from the rows and converting its
    # columns afterwards was most of `schedlab repro all`'s time outside plotting and simulating).
    names: Dict[str, None] = {}
    for r in rows:
        names.update(dict.fromkeys(r))
    columns: Dict[str, Any] = {}
    for col in names:
        # A row without the key is NaN, as pandas makes it from the rows.
        values = [r[col] if col in r else math.nan for r in rows]
        present = [v for v in values if v is not None]
        if len(present) < len(values):
            numeric = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present)
            if numeric and (present or col.endswith(("_us", "_ns", "_ms", "_s", "_pct", "_share"))):
                values = [math.nan if v is None else float(v) for v in values]
        columns[col] = values
    df = pd.DataFrame(columns, index=pd.RangeIndex(len(rows)))
    if index in df.columns:
        df.index = pd.Index(df[index].tolist())
    return df


def parse_duration(value: Union[str, float, int]) -> int:
    """Duration in ns from seconds (number) or a string like ``10s``, ``250ms``."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise _native.ConfigError(f"duration: expected seconds (a number) or a string like '500ms', "
                                  f"got {value!r}")
    if isinstance(value, str):
        import re  # here: `re` (with `enum`) costs every command's start-up ~5 ms (issue 18)

        m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*(ns|us|ms|s)?\s*", value)
        if not m:
            raise _native.ConfigError(
                f"invalid duration {value!r}; expected seconds or a number with ns/us/ms/s"
            )
        if float(m.group(1)) == 0:
            raise _native.ConfigError(f"duration must be > 0, got {value!r}")
        ns = float(m.group(1)) * _UNITS[m.group(2) or "s"]
    elif value != value:  # NaN
        raise _native.ConfigError(f"duration must be a number of seconds > 0, got {value!r}")
    elif value <= 0:
        raise _native.ConfigError(f"duration must be > 0, got {value}")
    else:
        try:
            ns = value * 1e9
        except OverflowError:  # an int past a float's range
            ns = math.inf
    if ns == math.inf:
        ns = 2.0**64  # refused by _duration_ns as past the simulated clock
    if round(ns) == 0:
        raise _native.ConfigError(f"duration: {value!r} is 0 ns once rounded to whole ns; the smallest "
                                  "is 1 ns")
    return _duration_ns(int(round(ns)), value)


def _duration_ns(ns: int, value: Union[str, float, int]) -> int:
    """``ns``, checked against the simulated clock's range (u64 nanoseconds)."""
    if ns > 2**64 - 1:
        raise _native.ConfigError(f"duration must be at most 18446744073.709551615 s (simulated time is "
                                  f"u64 ns), got {value!r}")
    return ns


def tick_nsec(hz: int) -> int:
    """The kernel's TICK_NSEC at ``hz`` (include/vdso/jiffies.h: (NSEC_PER_SEC + HZ/2) / HZ): the
    period of the jiffy grid a trace's ``import_trace(tick=)`` names."""
    return (1_000_000_000 + hz // 2) // hz


def _load(workload: WorkloadLike) -> Tuple[str, str]:
    """(text, source name) of a path, a JSON string or a dict."""
    if isinstance(workload, Mapping):
        import json

        return json.dumps(workload), "<dict>"
    if isinstance(workload, str) and workload.lstrip().startswith("{"):
        return workload, "<string>"
    # os.fspath rather than pathlib: importing pathlib costs every command ~4 ms of start-up.
    try:
        path = os.fsdecode(workload)
    except TypeError:
        raise _native.ConfigError(f"workload: expected a path, JSON text or a dict, got {workload!r}") from None
    try:
        with open(path, encoding="utf-8") as f:
            return f.read(), path
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: no such workload file") from None
    except UnicodeDecodeError as e:
        raise _native.WorkloadError(f"{path}: not UTF-8 text ({e.reason})") from None


def check(workload: WorkloadLike) -> Dict[str, Any]:
    """Validate a workload without running it; returns the parsed model."""
    import json

    text, source = _load(workload)
    return json.loads(_native.check_workload(text, source))


def schedulers() -> Dict[str, Any]:
    """Schedulers with descriptions and tunables."""
    import json

    return json.loads(_native.schedulers_json())


def metric_descriptions() -> Dict[str, Dict[str, str]]:
    """Every metric field with its description, by structure (run, task, cpu)."""
    import json

    return json.loads(_native.metric_descriptions_json())


class Metrics(dict):
    """The run's metrics (a dict with attribute access); see :meth:`describe`."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    @staticmethod
    def describe(field: Optional[str] = None) -> Union[str, Dict[str, Dict[str, str]]]:
        """Description of one field (searched in run, task, cpu), or all of them."""
        d = metric_descriptions()
        if field is None:
            return d
        for fields in d.values():
            if field in fields:
                return fields[field]
        raise KeyError(field)


class SimResult:
    """The result of :func:`simulate`."""

    def __init__(self, native: _native.RunResult):
        self._native = native
        self._metrics: Optional[Metrics] = None

    @property
    def metrics(self) -> Metrics:
        """The run's metrics (converted from the native result on first use)."""
        if self._metrics is None:
            self._metrics = Metrics(self._native.metrics())
        return self._metrics

    @property
    def tasks(self) -> pd.DataFrame:
        """One row per task (thread), indexed by its name (the index itself is unnamed, so
        ``reset_index()`` and ``groupby("name")`` work); a metric that was not measured is NaN."""
        return _frame(self.metrics["tasks"], index="name")

    @property
    def cpus(self) -> pd.DataFrame:
        """One row per CPU, indexed by CPU number (unnamed index, as for :attr:`tasks`)."""
        return _frame(self.metrics["cpu"], index="cpu")

    @property
    def activations(self) -> pd.DataFrame:
        """Every rt-app timer activation: task, time and slack (µs, negative = missed)."""
        names = [t["name"] for t in self.metrics["tasks"]]
        rows = [(names[i], at, slack) for i, at, slack in self._native.activations()]
        import pandas as pd

        return pd.DataFrame(rows, columns=["task", "time_us", "slack_us"])

    @property
    def jobs(self) -> pd.DataFrame:
        """Every completed job (work between timer activations): release, start, finish and
        deadline (µs), response time and lateness (finish − deadline; positive = missed)."""
        names = [t["name"] for t in self.metrics["tasks"]]
        rows = [(names[i], rel, st, fin, dl, fin - rel, fin - dl)
                for i, rel, st, fin, dl in self._native.jobs()]
        import pandas as pd

        return pd.DataFrame(rows, columns=["task", "release_us", "start_us", "finish_us", "deadline_us",
                                           "response_us", "lateness_us"])

    @property
    def has_trace(self) -> bool:
        return self._native.has_trace()

    def write_perfetto(self, path: Union[str, os.PathLike[str]]) -> None:
        """Write the trace as a Perfetto ``.pftrace`` (needs ``trace=True``); ``-`` is stdout,
        a symlink writes its target, no partial file is left (schedlab/output.py)."""
        if not self._native.has_trace():
            raise _native.ConfigError("the run recorded no trace")
        _write(path, self._native.write_perfetto_to)

    def write_ftrace(self, path: Union[str, os.PathLike[str]]) -> None:
        """Write the trace as ftrace text (needs ``trace=True``); as :meth:`write_perfetto`."""
        _write(path, self._native.ftrace_text())

    def ftrace_text(self) -> str:
        """The trace as ftrace text."""
        return self._native.ftrace_text()

    def waking_to_run(self, prefix: str = "") -> List[Tuple[str, int, int]]:
        """From the trace (needs ``trace=True``): for the threads whose name starts with
        ``prefix``, each wakeup as (name, sched_waking ns, sched_switch-in ns), in time order. A
        waking replaces an earlier one not yet followed by a switch-in; a switch-in with no waking
        pending (a preempted thread running again) is no wakeup."""
        return self._native.waking_to_run(prefix)

    def waking_to_run_by_name(self, prefix: str = "") -> Dict[str, Tuple[List[int], List[int]]]:
        """:meth:`waking_to_run` grouped by thread name: name → (sched_waking ns, switch-in ns),
        two lists in time order (threads that share a name share an entry). Cheaper than a tuple
        per wakeup when a run has thousands."""
        return {name: (woke, ran) for name, woke, ran in self._native.waking_to_run_by_comm(prefix)}

    def wakeup_paths(self, prefix: str = "") -> List[Tuple[str, str, int, Optional[int], int]]:
        """From the trace: each wakeup of the threads whose name starts with ``prefix`` as (name,
        path, sched_waking ns, first sched_migrate_task ns or None, switch-in ns), the path being
        how it reached its CPU: ``stayed``, ``placed`` (moved by the wakeup), ``pushed`` (by the CPU
        it waited on) or ``pulled`` (by the CPU it ran on), read from where each move was recorded
        (docs/model.md, "Traces"). Host traces (:func:`import_trace`) and simulated ones alike."""
        return self._native.wakeup_paths(prefix)

    def to_json(self, indent: Optional[int] = 2) -> str:
        import json

        return json.dumps(self.metrics, indent=indent)

    def __repr__(self) -> str:
        m = self.metrics
        return (
            f"<SimResult {m['scheduler']} cpus={m['cpus']} tasks={len(m['tasks'])} "
            f"duration={m['duration_us'] / 1e6:.3f}s switches={m['context_switches']}>"
        )


def _set_pairs(set_: Union[None, Mapping[str, int], Iterable[str]]) -> List[Tuple[str, int]]:
    if set_ is None:
        return []
    if isinstance(set_, Mapping):
        items = list(set_.items())
    elif isinstance(set_, (str, bytes)) or not isinstance(set_, Iterable):
        raise _native.ConfigError(f"set: expected a dict of tunable values or a list of 'NAME=VALUE', "
                                  f"got {set_!r}")
    else:
        items = []
        for kv in set_:
            if not isinstance(kv, str) or "=" not in kv:
                raise _native.ConfigError(f"--set expects NAME=VALUE, got {kv!r}")
            k, v = kv.split("=", 1)
            items.append((k.strip(), v.strip()))
    out = []
    for k, v in items:
        try:
            out.append((str(k), int(str(v).replace("_", ""))))
        except ValueError:
            raise _native.ConfigError(f"tunable {k} needs an integer, got {v!r}") from None
        if not I64_MIN <= out[-1][1] <= I64_MAX:  # each tunable's own range is the core's to check
            raise _native.ConfigError(f"tunable {k} needs an integer in {I64_MIN}..={I64_MAX}, got {v}")
    return out


I64_MIN, I64_MAX, U64_MAX = -(2**63), 2**63 - 1, 2**64 - 1


def _check_run_numbers(seed: int, start_cpus: Optional[Mapping[str, int]]) -> None:
    """The run options whose values only the 64-bit core could refuse, refused here in words."""
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= U64_MAX:
        raise _native.ConfigError(f"seed must be an integer in 0..={U64_MAX}, got {seed!r}")
    if start_cpus is not None and not isinstance(start_cpus, Mapping):
        raise _native.ConfigError(f"start_cpus: expected a dict of thread name to CPU, got {start_cpus!r}")
    for name, cpu in (start_cpus or {}).items():
        if not isinstance(name, str):
            raise _native.ConfigError(f"start_cpus: thread names are strings, got {name!r}")
        if isinstance(cpu, bool) or not isinstance(cpu, int) or cpu < 0:
            raise _native.ConfigError(f"start_cpus: {name}: expected a CPU number (0 or more), got {cpu!r}")


def _int(x: Any) -> Optional[int]:
    """``x`` as an int if it is an integer (numpy's too) and no bool; else None."""
    try:
        return None if isinstance(x, bool) else operator.index(x)
    except TypeError:
        return None


def _freq(f: Any) -> Optional[Tuple[int, int]]:
    """A ``freq_mhz`` entry as (current, max): an integer is both; else a pair of integers."""
    if (n := _int(f)) is not None:
        return (n, n)
    try:
        pair = () if isinstance(f, (str, bytes)) or len(f) != 2 else tuple(_int(x) for x in f)
    except TypeError:
        pair = ()
    return pair if len(pair) == 2 and None not in pair else None


# The list options: what each entry becomes (None: refused) and what the list must be (for the error;
# the ranges are the core's to check).
_LISTS = {
    "capacity": (_int, "a list of integers 1..=1024 (one for all CPUs or one per CPU)"),
    "freq_mhz": (_freq, "a list of MHz, each an integer or a (current, max) pair of integers"),
    "freq_levels_mhz": (_int, "a list of integers (MHz)"),
    "fairness_tasks": (lambda x: x if isinstance(x, str) else None, "a list of task names"),
}


def _list(name: str, value: Any) -> List[Any]:
    """The entries of list option ``name``; a string, a mapping or a non-iterable is refused, never
    split into characters or keys."""
    entry, expected = _LISTS[name]
    if value is None:
        return []
    items = None if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable) else list(value)
    out = None if items is None else [entry(x) for x in items]
    if out is None or None in out:
        raise _native.ConfigError(f"{name}: expected {expected}, got {value if items is None else items!r}")
    return out


def simulate(
    workload: WorkloadLike,
    scheduler: Union[str, Policy] = "eevdf",
    cpus: int = 1,
    *,
    smt: int = 1,
    cpus_per_llc: int = 0,
    hz: int = 250,
    duration: Union[None, str, float] = None,
    seed: int = 0,
    set: Union[None, Mapping[str, int], Iterable[str]] = None,  # noqa: A002
    trace: bool = False,
    trace_counters: bool = True,
    fairness_tasks: Optional[List[str]] = None,
    progress: Optional[Callable[[int, Optional[int]], None]] = None,
    capacity: Optional[Iterable[int]] = None,
    freq_mhz: Optional[Iterable[Union[int, Tuple[int, int]]]] = None,
    dl_policy: str = "edf",
    governor: str = "userspace",
    freq_levels_mhz: Optional[Iterable[int]] = None,
    hotplug: Optional[str] = None,
    zero_costs: bool = False,
    start_cpus: Optional[Mapping[str, int]] = None,
) -> SimResult:
    """Simulate an rt-app workload (a path, a JSON string or a dict).

    ``scheduler`` is a registered scheduler's name (:func:`schedulers`) or an
    instance of a :class:`schedlab.ext.Policy` subclass, run in the ext class
    below EEVDF (metrics name it ``py:NAME``; one instance per run).

    ``duration`` overrides the workload's ``global.duration`` (seconds or a
    string like ``"500ms"``); ``set`` overrides tunables (see
    :func:`schedulers`); ``trace=True`` records scheduler events for
    :meth:`SimResult.write_perfetto`, and with them each task's class values (vruntime, deadline,
    lag, ...) at its switches as Perfetto counter tracks unless ``trace_counters=False``: those
    samples are most of what tracing costs, and the ftrace text, :meth:`SimResult.waking_to_run`
    and :meth:`SimResult.wakeup_paths` do not read them. ``capacity`` gives each CPU's original
    capacity (1..1024) and ``freq_mhz`` its (current, maximum) frequency or
    just a frequency (current = maximum); one entry applies to every CPU.
    rt-app ``run`` work progresses at capacity/1024 × current/maximum.
    ``dl_policy`` orders SCHED_DEADLINE tasks: ``edf`` (the kernel's),
    ``llf`` or ``illf`` (seed 001). ``governor`` is ``userspace`` (the fixed ``freq_mhz``),
    ``performance``, ``powersave``, ``ondemand`` or ``schedule:T=MHZ,...``; ``freq_levels_mhz``
    lists the available frequencies. ``hotplug`` is a plan ``"T=-CPU,T=+CPU"`` (seconds).
    ``zero_costs=True`` models a machine whose wakeup path costs nothing (no timer slack, wakeup,
    idle-exit or IPI latency; docs/model.md "Wakeup costs"), for closed forms and for reproducing
    simulators that model no overheads; ``set`` still overrides single costs.
    ``start_cpus`` maps thread names (``name``, or ``name-k`` for an instance) to the CPU each
    starts on instead of where the fork path would put it (replaying a host run's start).
    """
    # The Python-side options, checked before anything runs (or a policy instance counts as used).
    _check_run_numbers(seed, start_cpus)
    lists = {name: _list(name, value) for name, value in (
        ("capacity", capacity), ("freq_mhz", freq_mhz), ("freq_levels_mhz", freq_levels_mhz),
        ("fairness_tasks", fairness_tasks))}
    for name, flag in (("trace_counters", trace_counters), ("zero_costs", zero_costs)):
        if not isinstance(flag, bool):
            raise _native.ConfigError(f"{name}: expected True or False, got {flag!r}")
    if progress is not None and not callable(progress):
        raise _native.ConfigError(f"progress: expected a function of (now_ns, end_ns) or None, "
                                  f"got {progress!r}")
    duration_ns = None if duration is None else parse_duration(duration)
    set_pairs = _set_pairs(set)
    policy = None
    if not isinstance(scheduler, str):
        from .ext import Policy, policy_name

        if not isinstance(scheduler, Policy):
            raise _native.ConfigError(
                f"scheduler must be a name or a schedlab.ext.Policy instance, got {scheduler!r}")
        if getattr(scheduler, "_schedlab_ran", False):
            raise _native.ConfigError(
                f"{scheduler!r} already ran: a policy instance holds one run's state, make a new one")
        policy, scheduler = scheduler, policy_name(scheduler)
        policy._schedlab_ran = True
    text, source = _load(workload)
    config = {
        "scheduler": scheduler,
        "cpus": cpus,
        "smt": smt,
        "cpus_per_llc": cpus_per_llc,
        "capacity": lists["capacity"],
        "freq_mhz": lists["freq_mhz"],
        "hz": hz,
        "duration": duration_ns,
        "seed": seed,
        "set": set_pairs,
        "trace": trace,
        "fairness_tasks": lists["fairness_tasks"],
        "dl_policy": dl_policy,
        "governor": governor,
        "freq_levels_mhz": lists["freq_levels_mhz"],
        "hotplug": hotplug,
        "zero_costs": zero_costs,
    }
    if trace and not trace_counters:  # only when off: the configuration digests stay as they were
        config["trace_counters"] = False
    if start_cpus:  # only when given: the configuration digests of earlier runs stay as they were
        config["start_cpus"] = [(str(k), int(v)) for k, v in sorted(start_cpus.items())]
    # The keys are the fields of the core's SimConfig, the one definition of each option.
    args = (text, source, config, progress)
    if policy is None:  # (scripts/golden.py wraps the 4-argument call)
        return SimResult(_native.simulate(*args))
    return SimResult(_native.simulate(*args, policy=policy))


def crsr(at_f: SimResult, at_fmax: SimResult) -> pd.Series:
    """Compute-resource share ratio per task (seed-algorithms.md §1.2): the full-speed work a task
    did in the run at frequency f divided by what it did in the same run at f_max."""
    a = at_f.tasks.work_done_us
    b = at_fmax.tasks.work_done_us
    return (a / b).rename("crsr")


def fair_degree(at_f: SimResult, at_fmax: SimResult) -> float:
    """Fair_Degree: the population standard deviation of the CRSR over all tasks (0 = every task
    lost the same fraction of its compute resource)."""
    return float(crsr(at_f, at_fmax).std(ddof=0))


class ImportedTrace:
    """A recorded trace read by :func:`import_trace`."""

    def __init__(self, result: SimResult, repairs: List[str], skipped: int, workload: str,
                 clock_uncertainty: Optional[Dict[int, int]] = None):
        self.result = result
        self.repairs = repairs
        self.skipped = skipped
        self.workload = workload
        # Per pid, ns: how much more CPU time the kernel may have charged than the import counts
        # (each switch-in charged from a skipped clock update: the kernel read that clock between
        # the wakeup's sched_waking and sched_wakeup, the import counts from the latter).
        self.clock_uncertainty = dict(clock_uncertainty or {})

    def write_workload(self, path: Union[str, os.PathLike[str]]) -> None:
        """Write the replay workload (rt-app JSON) atomically."""
        _write(path, self.workload)


def _write(path: Union[str, os.PathLike[str]], data: Any) -> None:
    """output.write_output, imported when something is written (not at every start-up)."""
    from .output import write_output

    write_output(path, data)


TRACE_FORMATS = ("tracefs `trace` text, `trace-cmd report` text (its default or raw -R form), trace-cmd's "
                 "binary trace.dat (read through the trace-cmd tool), `perf script` text (its default "
                 "form, from perf record -e 'sched:*'), and Perfetto traces with ftrace sched events "
                 "(.pftrace, as schedlab writes them)")
PERFETTO_SUFFIXES = (".pftrace", ".perfetto-trace", ".pb")


def _trace_text(p: str) -> str:
    """The text of a trace file: trace.dat is turned into text by `trace-cmd report`; other binary
    files are refused naming the formats that are understood."""
    with open(p, "rb") as f:
        head = f.read(16)
    if head.startswith(b"\x17\x08Dtracing"):
        import shutil
        import subprocess

        tool = shutil.which("trace-cmd")
        if tool is None:
            raise _native.TraceError(f"{p}: a trace-cmd trace.dat; reading it needs the trace-cmd tool "
                                     "(Debian package trace-cmd), or give `trace-cmd report` text")
        out = subprocess.run([tool, "report", "-i", p], capture_output=True, text=True, errors="replace")
        if out.returncode != 0:
            raise _native.TraceError(f"{p}: trace-cmd report failed: {out.stderr.strip()[-300:]}")
        return out.stdout
    from . import pftrace

    if p.endswith(PERFETTO_SUFFIXES) or (pftrace.looks_like(head) and b"\x00" in head):
        with open(p, "rb") as f:
            data = f.read()
        try:
            return pftrace.to_ftrace_text(data)
        except RuntimeError as e:
            raise _native.TraceError(f"{p}: {e}") from None
        except Exception as e:  # a protobuf decode error: not a Perfetto trace after all
            raise _native.TraceError(f"{p}: not a readable Perfetto trace ({e}); understood: "
                                     f"{TRACE_FORMATS}") from None
    if b"\x00" in head:
        raise _native.TraceError(f"{p}: a binary file of a format not understood; understood: {TRACE_FORMATS}")
    with open(p, encoding="utf-8", errors="replace") as f:
        return f.read()


def import_trace(path: Union[str, os.PathLike[str]], tolerant: bool = False,
                 window: Optional[Tuple[int, int]] = None,
                 workload_pids: Optional[Iterable[int]] = None,
                 tick: Optional[Tuple[int, int]] = None) -> ImportedTrace:
    """Read a scheduler trace: tracefs ``trace`` text, ``trace-cmd report`` text (default or raw),
    trace-cmd's binary trace.dat (through the ``trace-cmd`` tool) or ``perf script`` text.

    Strict mode raises :class:`TraceError` naming the first line whose transitions do not chain;
    tolerant mode repairs them and lists the repairs. The result carries the simulator's metrics
    (fields a trace cannot show stay empty), the trace for Perfetto/ftrace export, and a workload
    that replays each task's CPU bursts and sleeps. ``window`` = (start, end) in the trace's own
    ns (tracefs ``mono`` clock: CLOCK_MONOTONIC) measures only that stretch: times are clipped to
    it and switches, latencies and migrations counted only inside it. ``workload_pids`` restricts
    the run-level counts (switches, migrations, wakeups) to those threads, as in the simulator,
    whose runs hold only the workload's threads. Metrics a trace cannot tell are null.
    ``tick`` = (period, phase) in the trace's ns, the kernel's jiffy grid, counts CPU time as the
    kernel accounts it (``sum_exec_runtime``, what /proc reports): the span from a wakeup that set
    need-resched on its CPU to the switch that follows is the switched-in task's (docs/model.md,
    "Trace import"); without it CPU time is switch to switch.
    """
    p = os.fspath(path)
    text = _trace_text(p)
    pids = None if workload_pids is None else [int(x) for x in workload_pids]
    native, repairs, skipped, workload, unc = _native.import_trace(p, text, tolerant, window, pids, tick)
    return ImportedTrace(SimResult(native), list(repairs), skipped, workload, dict(unc))
