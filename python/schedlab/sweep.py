"""``schedlab sweep SPEC``: a grid of simulations, summarised with means and confidence intervals.

The grid is schedulers × CPU counts × workload parameters × tunables × seeds. A spec (JSON)::

    {
      "workload": "mixed.json",                 # path, relative to the spec, or an rt-app object
      "schedulers": ["eevdf", "cfs"],
      "cpus": [2],                               # optional, default [1]
      "parameters": {"/tasks/hog/priority": [0, 5]},   # JSON pointers into the workload -> values
      "tunables": {"base_slice_ns": [700000, 3000000]}, # optional; every scheduler must know them
      "seeds": [0, 1, 2],                        # optional, default [0]
      "duration": "2s",                          # optional: overrides global.duration
      "metrics": ["context_switches_per_sec", "tasks.wakeup_latency_p99_us.max"]   # optional
    }

Every value is checked before any run starts or any file is written, and a bad one is one error
naming the spec file and its JSON path: schedulers (a ``+policy`` included), CPU counts (the engine's
range), each tunable value against its range for every scheduler of the sweep, seeds (integers in
0..=2**64-1, none given twice: identical deterministic runs would make a confidence interval of 0 that
measures nothing), the duration (the simulated clock's range), and no value given twice in any list
(it would fold copies of the same runs into one grid point). Each parameter value is checked in the
workload (the other values as they are), so a value the workload cannot take (``/global/duration``
of 0.5: rt-app wants whole seconds) names ``parameters.POINTER[i]``; then each combination of them,
which without ``duration`` must not loop forever. A run that still fails (a value only a run can
refuse, such as a task pinned to a CPU beyond a ``cpus`` value) stops the sweep with one error
naming it, and the sweep leaves nothing behind either way: no result file, no journal (one from an
earlier, interrupted start is put back as it was), no folder it made.

A metric is a run-level field of the metrics (``schedlab metrics``: [run]) or
``tasks.FIELD.AGG`` with AGG one of min, max, mean, sum over the tasks (nulls skipped).

Results: ``OUT.parquet`` and ``OUT.csv``, one row per grid point (seeds folded): for each metric
its mean over the seeds, the half-width of its 95 % confidence interval (Student's t, n − 1
degrees of freedom; null with one seed, never 0) and n; ``OUT.runs.parquet`` / ``.csv`` hold every
run. Completed runs are journalled in ``OUT.journal.jsonl`` as they finish, so a sweep
interrupted (Ctrl-C, a crash) resumes where it stopped when started again with the same spec (an
interruption keeps the journal; only a refused sweep removes what it wrote).
Runs go to a local process pool (``--jobs``), or to a Dask cluster (``--dask ADDRESS``, or
``--dask local`` for a LocalCluster of worker processes); the result files are the same bytes
whatever ran them, in grid order.
"""

from __future__ import annotations

import copy
import hashlib
import io
import itertools
import json
import math
import os
import statistics
import sys
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

DEFAULT_METRICS = ["context_switches_per_sec", "migrations", "jain_fairness",
                   "tasks.wakeup_latency_p99_us.max", "tasks.cpu_share.min"]
AGGREGATES = ("min", "max", "mean", "sum")

# Student's t quantile t(0.975, df) for df = 1..30; beyond, the normal 1.96 plus the first term
# of its expansion in 1/df (error below 0.002 at df > 30).
T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042]


class SweepError(ValueError):
    """A bad sweep spec: the message names the file, the JSON path and what was expected."""


def t975(df: int) -> float:
    return T975[df - 1] if df <= len(T975) else 1.960 + 2.4 / df


# ---------------------------------------------------------------------------------------------
# The spec


def _err(file: str, path: str, msg: str) -> SweepError:
    return SweepError(f"{file}: {path or '(top level)'}: {msg}")


def _pointer_get(doc: Any, pointer: str) -> Any:
    cur = doc
    for raw in pointer.split("/")[1:]:
        part = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(cur, dict) and part in cur:
            cur = cur[part]
        elif isinstance(cur, list) and part.isdigit() and int(part) < len(cur):
            cur = cur[int(part)]
        else:
            raise KeyError(pointer)
    return cur


def _pointer_set(doc: Any, pointer: str, value: Any) -> None:
    parts = [p.replace("~1", "/").replace("~0", "~") for p in pointer.split("/")[1:]]
    parent = _pointer_get(doc, "/" + "/".join(p.replace("~", "~0").replace("/", "~1") for p in parts[:-1])) \
        if len(parts) > 1 else doc
    last = parts[-1]
    if isinstance(parent, list):
        parent[int(last)] = value
    else:
        parent[last] = value


def _no_repeats(vals: list, file: str, where: str, what: str) -> None:
    """Refuse a value given twice (as JSON: 1 and 1.0, true and 1 are different values)."""
    first: Dict[str, int] = {}
    for i, x in enumerate(vals):
        j = first.setdefault(json.dumps(x, sort_keys=True), i)
        if j != i:
            raise _err(file, f"{where}[{i}]", f"{what} given twice ({json.dumps(x)}, also {where}[{j}]): "
                       "each value once, or the copies' identical runs fold into one grid point")


def _list(spec: dict, key: str, file: str, default: Optional[list], check: Callable[[Any], bool],
          what: str, noun: str) -> list:
    v = spec.get(key, default)
    if not isinstance(v, list) or not v:
        raise _err(file, key, f"expected a non-empty list of {what}")
    for i, x in enumerate(v):
        if not check(x):
            raise _err(file, f"{key}[{i}]", f"expected {what}, found {json.dumps(x)}")
    _no_repeats(v, file, key, noun)
    return v


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _load_workload(spec: dict, path: str) -> Tuple[Any, Optional[str]]:
    """The workload, and the path of its file (None for an object in the spec)."""
    from . import rtapp_json

    wl = spec.get("workload")
    if isinstance(wl, dict):
        return wl, None
    if not isinstance(wl, str):
        raise _err(path, "workload", "expected a path (relative to the spec) or an rt-app object")
    wl_path = os.path.join(os.path.dirname(os.path.abspath(path)), wl)
    try:
        with open(wl_path, encoding="utf-8") as f:
            return rtapp_json.loads(f.read()), wl_path
    except (OSError, json.JSONDecodeError) as e:
        raise _err(path, "workload", f"cannot read {wl_path} as rt-app JSON ({e})") from None


def _check_parameters(params: Any, workload: Any, path: str) -> dict:
    if not isinstance(params, dict):
        raise _err(path, "parameters", "expected an object of JSON pointer -> list of values")
    for ptr, vals in params.items():
        where = f"parameters.{ptr}"
        if not ptr.startswith("/"):
            raise _err(path, where, "expected a JSON pointer into the workload, like /tasks/t/run")
        try:
            _pointer_get(workload, ptr)
        except KeyError:
            raise _err(path, where, "no such value in the workload") from None
        if not isinstance(vals, list) or not vals:
            raise _err(path, where, "expected a non-empty list of values")
    # Each value checked in the workload now (the others left as they are), so that a value the
    # workload cannot take is a bad spec, not a failure hours into the sweep.
    from . import _native
    from .api import check

    for ptr, vals in params.items():
        for i, v in enumerate(vals):
            variant = copy.deepcopy(workload)
            _pointer_set(variant, ptr, v)
            try:
                check(variant)
            except _native.WorkloadError as e:
                raise _err(path, f"parameters.{ptr}[{i}]", f"{json.dumps(v)} makes the workload invalid: "
                           f"{str(e).removeprefix('<dict>: ')}") from None
        _no_repeats(vals, path, f"parameters.{ptr}", "a value")
    return params


def _check_workloads(workload: Any, wl_path: Optional[str], params: dict, duration: Any, path: str) -> None:
    """The workload of every combination of parameter values is valid (each value alone was checked),
    and, with no ``duration`` in the spec, ends or sets its own duration."""
    from . import _native
    from .api import check

    pnames = list(params)
    for combo in itertools.product(*(params[p] for p in pnames)):
        variant = copy.deepcopy(workload)
        for ptr, v in zip(pnames, combo):
            _pointer_set(variant, ptr, v)
        with_values = f" with the parameters {json.dumps(dict(zip(pnames, combo)))}" if pnames else ""
        try:
            model = check(variant)
        except _native.WorkloadError as e:
            msg = str(e).removeprefix("<dict>: ")
            if not pnames:
                if wl_path:  # the workload's own file and path
                    raise _err(path, "workload", f"{wl_path}: {msg}") from None
                inner = getattr(e, "path", "")
                raise _err(path, f"workload.{inner}" if inner else "workload",
                           getattr(e, "reason", "") or msg) from None
            raise _err(path, "parameters", f"the workload{with_values} is invalid: {msg}") from None
        if duration is None and model.get("runs_forever") and not model.get("duration"):
            raise _err(path, "duration", f"needed: the workload{with_values} has a task that loops forever "
                       "(\"loop\": -1 is rt-app's default) and sets no global.duration")


def _tunables_of(sched: str, registry: dict) -> Dict[str, dict]:
    """The tunables a run of ``sched`` (``base`` or ``base+policy``) accepts, by name, as the core
    resolves them (registry.rs): the scheduler's, its fair-class policy's, the SCHED_DEADLINE
    ordering's (the default one, edf: a sweep sets no other) and the engine's; the first wins."""
    base, _, plus = sched.partition("+")
    lists = [next(s for s in registry["schedulers"] if s["name"] == base)["tunables"]]
    lists += [p["tunables"] for p in registry["fair_policies"] if plus and p["name"] == plus]
    lists += [d["tunables"] for d in registry["dl_orders"] if d["name"] == "edf"]
    lists.append(registry["engine_tunables"])
    out: Dict[str, dict] = {}
    for ts in lists:
        for t in ts:
            out.setdefault(t["name"], t)
    return out


def _check_tunables(tunables: Any, scheds: List[str], registry: dict, path: str) -> dict:
    if not isinstance(tunables, dict):
        raise _err(path, "tunables", "expected an object of tunable -> list of values")
    known = {s: _tunables_of(s, registry) for s in scheds}
    for name, vals in tunables.items():
        where = f"tunables.{name}"
        if not isinstance(vals, list) or not vals:
            raise _err(path, where, "expected a non-empty list of integers")
        for s in scheds:
            if name not in known[s]:
                raise _err(path, where, f"not a tunable of {s} (see schedlab schedulers)")
        for i, v in enumerate(vals):
            if not _is_int(v):
                raise _err(path, f"{where}[{i}]", f"expected an integer, found {json.dumps(v)}")
            for s in scheds:
                t = known[s][name]
                if not t["min"] <= v <= t["max"]:
                    raise _err(path, f"{where}[{i}]", f"expected an integer in {t['min']}..={t['max']} "
                               f"(the range of {name} for {s}), found {v}")
        _no_repeats(vals, path, where, "a value")
    return tunables


def _check_schedulers(spec: dict, registry: dict, path: str) -> list:
    names = {s["name"]: s for s in registry["schedulers"]}
    policies = [p["name"] for p in registry["fair_policies"]]
    scheds = _list(spec, "schedulers", path, None, lambda x: isinstance(x, str),
                   f"a registered scheduler ({', '.join(names)}), optionally with "
                   f"+{' or +'.join(policies)}", "a scheduler")
    for i, s in enumerate(scheds):
        base, plus, policy = s.partition("+")
        if base not in names:
            raise _err(path, f"schedulers[{i}]", f"expected a registered scheduler ({', '.join(names)}), "
                       f"found {json.dumps(s)}")
        if plus and policy not in policies:
            raise _err(path, f"schedulers[{i}]", f"unknown fair-class policy \"+{policy}\" in {json.dumps(s)}; "
                       f"expected one of: {', '.join(policies)}")
        if plus and not names[base]["fair_policies"]:
            raise _err(path, f"schedulers[{i}]", f"scheduler {base} has no fair class, so \"+{policy}\" "
                       "cannot patch it")
    return scheds


def _check_cpus(spec: dict, scheduler: str, path: str) -> list:
    """CPU counts the engine accepts: its limit (topology.rs) is not in the registry, so a 1 ns run
    of a one-task workload asks it, once per value."""
    from . import _native
    from .api import simulate

    cpus = _list(spec, "cpus", path, [1], lambda x: _is_int(x) and x >= 1, "a CPU count >= 1", "a CPU count")
    for i, c in enumerate(cpus):
        try:
            simulate({"tasks": {"probe": {"run": 1, "loop": 1}}}, scheduler.partition("+")[0], c,
                     duration="1ns")
        except (_native.ConfigError, _native.WorkloadError, _native.SimulationError) as e:
            raise _err(path, f"cpus[{i}]", f"expected a CPU count the engine accepts ({e})") from None
    return cpus


def _check_duration(duration: Any, path: str) -> None:
    from . import _native
    from .api import parse_duration

    try:
        if isinstance(duration, bool) or not isinstance(duration, (str, int, float)) \
                or (isinstance(duration, float) and not math.isfinite(duration)):
            raise _native.ConfigError(f"found {json.dumps(duration)}")
        parse_duration(duration)
    except _native.ConfigError as e:
        raise _err(path, "duration", f"expected seconds > 0 or a string like 2s, 500ms ({e})") from None


def _check_metrics(spec: dict, path: str) -> list:
    from .api import metric_descriptions

    desc = metric_descriptions()
    metrics = _list(spec, "metrics", path, DEFAULT_METRICS, lambda x: isinstance(x, str), "a metric name",
                    "a metric")
    for i, m in enumerate(metrics):
        parts = m.split(".")
        ok = (len(parts) == 1 and m in desc["run"]) or (
            len(parts) == 3 and parts[0] == "tasks" and parts[1] in desc["task"] and parts[2] in AGGREGATES)
        if not ok:
            raise _err(path, f"metrics[{i}]", "expected a run-level metric or tasks.FIELD."
                       f"{'|'.join(AGGREGATES)}, found {json.dumps(m)}")
    return metrics


def load_spec(path: str) -> dict:
    """Read and check a sweep spec; every problem is one SweepError naming file and JSON path."""
    from .api import U64_MAX, schedulers

    try:
        with open(path, encoding="utf-8") as f:
            spec = json.load(f)
    except OSError as e:
        raise SweepError(f"{path}: cannot read the sweep spec ({e.strerror})") from None
    except json.JSONDecodeError as e:
        raise SweepError(f"{path}:{e.lineno}:{e.colno}: invalid JSON: {e.msg}") from None
    if not isinstance(spec, dict):
        raise _err(path, "", "expected an object")
    known = {"workload", "schedulers", "cpus", "parameters", "tunables", "seeds", "duration", "metrics"}
    for k in spec:
        if k not in known:
            raise _err(path, k, f"unknown key; expected one of {', '.join(sorted(known))}")
    workload, wl_path = _load_workload(spec, path)
    registry = schedulers()
    scheds = _check_schedulers(spec, registry, path)
    cpus = _check_cpus(spec, scheds[0], path)
    seeds = _list(spec, "seeds", path, [0], lambda x: _is_int(x) and 0 <= x <= U64_MAX,
                  f"a seed in 0..={U64_MAX}", "a seed")
    duration = spec.get("duration")
    if duration is not None:
        _check_duration(duration, path)
    params = _check_parameters(spec.get("parameters", {}), workload, path)
    _check_workloads(workload, wl_path, params, duration, path)
    return {"workload": workload, "schedulers": scheds, "cpus": cpus, "parameters": params,
            "tunables": _check_tunables(spec.get("tunables", {}), scheds, registry, path),
            "seeds": seeds, "duration": duration, "metrics": _check_metrics(spec, path)}


# ---------------------------------------------------------------------------------------------
# The grid


def points(spec: dict) -> Iterator[dict]:
    """Every run of the sweep, in grid order (schedulers, cpus, parameters, tunables, seeds)."""
    pnames, tnames = list(spec["parameters"]), list(spec["tunables"])
    for sched, cpus in itertools.product(spec["schedulers"], spec["cpus"]):
        for pvals in itertools.product(*(spec["parameters"][p] for p in pnames)):
            for tvals in itertools.product(*(spec["tunables"][t] for t in tnames)):
                for seed in spec["seeds"]:
                    wl = copy.deepcopy(spec["workload"])
                    for ptr, v in zip(pnames, pvals):
                        _pointer_set(wl, ptr, v)
                    yield {"scheduler": sched, "cpus": cpus, "parameters": dict(zip(pnames, pvals)),
                           "tunables": dict(zip(tnames, tvals)), "seed": seed, "duration": spec["duration"],
                           "metrics": spec["metrics"], "workload": wl}


def key(point: dict) -> str:
    """A stable name for a run: the hash of everything that determines its result."""
    return hashlib.sha256(json.dumps(point, sort_keys=True).encode()).hexdigest()[:20]


def _metric(m: dict, name: str) -> Optional[float]:
    parts = name.split(".")
    if len(parts) == 1:
        v = m.get(name)
        return None if v is None else float(v)
    vals = [float(t[parts[1]]) for t in m["tasks"] if t.get(parts[1]) is not None]
    if not vals:
        return None
    return {"min": min, "max": max, "sum": sum, "mean": statistics.fmean}[parts[2]](vals)


def run_point(point: dict) -> Dict[str, Optional[float]]:
    """One simulation (module level, so that process pools and Dask workers can import it)."""
    from . import _native
    from .api import simulate

    try:
        r = simulate(point["workload"], point["scheduler"], point["cpus"], seed=point["seed"],
                     set=point["tunables"] or None, duration=point["duration"])
    except (_native.WorkloadError, _native.ConfigError, _native.SimulationError) as e:
        failure = str(e).removeprefix("<dict>: ")
    else:
        return {name: _metric(r.metrics, name) for name in point["metrics"]}
    # The native exception classes do not pickle: a worker process hands back a SweepError, raised
    # outside the except clause so that it has no __context__ either (`from None` only hides it):
    # once `distributed` is imported, tblib's pickling of exceptions carries the context along.
    what = {k: point[k] for k in ("scheduler", "cpus", "parameters", "tunables", "seed")}
    raise SweepError(f"the run {json.dumps(what, sort_keys=True)} failed: {failure}")


# ---------------------------------------------------------------------------------------------
# Running


class _Bar:
    def __init__(self, total: int, done: int, enabled: bool):
        self.total, self.done, self.enabled = total, done, enabled
        self.show()

    def show(self) -> None:
        if self.enabled and self.total:
            frac = self.done / self.total
            sys.stderr.write(f"\rsweep: {self.done}/{self.total} runs [{'#' * int(frac * 30):<30}] {frac:6.1%}")
            sys.stderr.flush()

    def step(self) -> None:
        self.done += 1
        self.show()

    def close(self) -> None:
        if self.enabled:
            sys.stderr.write("\n")
            self.enabled = False  # once: a failed sweep's bar is closed before its error


def _journal(path: str) -> Dict[str, dict]:
    """The runs a journal holds. A last line cut by an interruption is ended with a newline, so the
    records appended after it stay whole; the cut run is simply run again."""
    done: Dict[str, dict] = {}
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for line in text.splitlines():
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(rec, dict) and isinstance(rec.get("key"), str) \
                    and isinstance(rec.get("metrics"), dict):
                done[rec["key"]] = rec["metrics"]
        if text and not text.endswith("\n"):
            with open(path, "a", encoding="utf-8") as f:
                f.write("\n")
    return done


def _take_back(journal_path: str, size: Optional[int], made: List[str]) -> None:
    """Undo a refused sweep's writes: the journal cut back to ``size`` (None: removed) and the
    folders in ``made`` (deepest first) removed if empty."""
    try:
        if size is None:
            os.remove(journal_path)
        else:
            os.truncate(journal_path, size)
    except FileNotFoundError:
        pass
    for d in made:
        try:
            os.rmdir(d)
        except OSError:
            break


def _executor(dask: Optional[str], jobs: int):
    """(submit, wait_any, close, result) for a local process pool or a Dask client. ``close(abort)``
    with abort true (an interruption, a failed run) stops the runs in flight instead of waiting."""
    if dask:
        from distributed import Client, LocalCluster

        cluster = LocalCluster(n_workers=max(1, jobs), threads_per_worker=1, processes=True,
                               dashboard_address=None) if dask == "local" else None
        client = Client(cluster if cluster else dask)

        def close(abort: bool) -> None:
            # Closing the client releases its futures: a remote cluster drops the runs it has not
            # finished; a LocalCluster's worker processes are stopped with it.
            client.close()
            if cluster:
                cluster.close()

        def wait_any(futs):
            from distributed import wait as dwait

            done, _ = dwait(futs, return_when="FIRST_COMPLETED")
            return done
        return client.submit, wait_any, close, lambda f: f.result()
    pool = ProcessPoolExecutor(max_workers=max(1, jobs))

    def wait_pool(futs):
        done, _ = wait(futs, return_when=FIRST_COMPLETED)
        return done

    def close_pool(abort: bool) -> None:
        if abort:
            # shutdown(cancel_futures=True) still waits for the runs in flight and for the ones
            # already handed to a worker's queue: after Ctrl-C that is up to two whole runs per
            # worker. Their results would not be journalled, so stop the workers now (the public
            # terminate_workers() is Python 3.14's; before it, the executor's own process table).
            terminate = getattr(pool, "terminate_workers", None)
            if terminate is not None:
                terminate()
                return
            for proc in list((getattr(pool, "_processes", None) or {}).values()):
                proc.terminate()
            pool.shutdown(wait=False, cancel_futures=True)
            return
        pool.shutdown(cancel_futures=True)
    return pool.submit, wait_pool, close_pool, lambda f: f.result()


def run_sweep(spec_path: str, out: str, jobs: int = 0, dask: Optional[str] = None, progress: bool = True,
              limit: Optional[int] = None) -> Tuple[str, str]:
    """Run (or resume) a sweep; returns the paths of the summary Parquet and CSV files.
    ``limit`` stops after that many new runs (for tests of resuming)."""
    spec = load_spec(spec_path)
    grid = [(key(p), p) for p in points(spec)]
    journal_path = f"{out}.journal.jsonl"
    # What a refused sweep takes back: the folders it makes, the journal as it was (or none).
    made: List[str] = []
    d = os.path.dirname(os.path.abspath(out))
    while not os.path.exists(d):
        made.append(d)
        d = os.path.dirname(d)
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    journal_size = os.path.getsize(journal_path) if os.path.exists(journal_path) else None
    done = _journal(journal_path)
    todo = [(k, p) for k, p in grid if k not in done]
    if limit is not None:
        todo = todo[:limit]
    bar = _Bar(len(grid), len(grid) - len([1 for k, _ in grid if k not in done]), progress)
    if todo:
        submit, wait_any, close, result = _executor(dask, jobs or os.cpu_count() or 1)
        aborted, refused = True, False
        try:
            with open(journal_path, "a", encoding="utf-8") as jf:
                pending = {submit(run_point, p): k for k, p in todo}
                while pending:
                    for fut in wait_any(list(pending)):
                        k = pending.pop(fut)
                        try:
                            metrics = result(fut)
                        except SweepError as e:
                            refused = True
                            raise SweepError(f"{spec_path}: {e}") from None
                        done[k] = metrics
                        jf.write(json.dumps({"key": k, "metrics": metrics}, sort_keys=True) + "\n")
                        jf.flush()
                        bar.step()
            aborted = False
        finally:
            close(aborted)
            if aborted:
                bar.close()  # the error or the interruption on a line of its own
            if refused:
                # A run refused its values: running again refuses them again, so the sweep leaves
                # nothing. An interruption (Ctrl-C, a crash) keeps the journal to resume from.
                _take_back(journal_path, journal_size, made)
    bar.close()
    if any(k not in done for k, _ in grid):
        missing = sum(1 for k, _ in grid if k not in done)
        raise SweepError(f"{spec_path}: {missing} of {len(grid)} runs still to do; run the sweep again "
                         "to resume")
    return _write(spec, grid, done, out)


def _write(spec: dict, grid: List[Tuple[str, dict]], done: Dict[str, dict], out: str) -> Tuple[str, str]:
    import pandas as pd

    from .output import write_output

    def ident(p: dict) -> dict:
        row = {"scheduler": p["scheduler"], "cpus": p["cpus"]}
        row.update({f"param {k}": json.dumps(v) for k, v in p["parameters"].items()})
        row.update({f"tunable {k}": v for k, v in p["tunables"].items()})
        return row

    # Metrics in the spec's order: a journalled run's are in sorted order, a fresh one's in the spec's.
    runs = [{**ident(p), "seed": p["seed"], **{m: done[k][m] for m in spec["metrics"]}} for k, p in grid]
    runs_df = pd.DataFrame(runs)
    groups: Dict[str, List[dict]] = {}
    order: List[str] = []
    for k, p in grid:
        g = json.dumps(ident(p))
        if g not in groups:
            groups[g] = []
            order.append(g)
        groups[g].append(done[k])
    rows = []
    for g in order:
        row = json.loads(g)
        for m in spec["metrics"]:
            vals = [r[m] for r in groups[g] if r[m] is not None]
            n = len(vals)
            mean = statistics.fmean(vals) if vals else None
            ci = t975(n - 1) * statistics.stdev(vals) / math.sqrt(n) if n >= 2 else None
            row.update({f"{m} mean": mean, f"{m} ci95": ci, f"{m} n": n})
        rows.append(row)
    summary = pd.DataFrame(rows)
    for df, stem in ((summary, out), (runs_df, f"{out}.runs")):
        buf = io.BytesIO()
        df.to_parquet(buf, index=False)
        write_output(f"{stem}.parquet", buf.getvalue())
        write_output(f"{stem}.csv", df.to_csv(index=False))
    return f"{out}.parquet", f"{out}.csv"
