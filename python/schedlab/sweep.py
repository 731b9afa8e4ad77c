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

Each parameter value is checked in the workload (the other values as they are) before any run, so a
value the workload cannot take (``/global/duration`` of 0.5: rt-app wants whole seconds) is a bad spec
naming ``parameters.POINTER[i]``; a run that still fails stops the sweep with one error naming it.

A metric is a run-level field of the metrics (``schedlab metrics``: [run]) or
``tasks.FIELD.AGG`` with AGG one of min, max, mean, sum over the tasks (nulls skipped).

Results: ``OUT.parquet`` and ``OUT.csv``, one row per grid point (seeds folded): for each metric
its mean over the seeds, the half-width of its 95 % confidence interval (Student's t, n − 1
degrees of freedom; null with one seed, never 0) and n; ``OUT.runs.parquet`` / ``.csv`` hold every
run. Completed runs are journalled in ``OUT.journal.jsonl`` as they finish, so a sweep
interrupted (Ctrl-C, a crash) resumes where it stopped when started again with the same spec.
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


def _list(spec: dict, key: str, file: str, default: Optional[list], check: Callable[[Any], bool],
          what: str) -> list:
    v = spec.get(key, default)
    if not isinstance(v, list) or not v:
        raise _err(file, key, f"expected a non-empty list of {what}")
    for i, x in enumerate(v):
        if not check(x):
            raise _err(file, f"{key}[{i}]", f"expected {what}, found {json.dumps(x)}")
    return v


def _load_workload(spec: dict, path: str) -> Any:
    from . import rtapp_json

    wl = spec.get("workload")
    if isinstance(wl, dict):
        return wl
    if not isinstance(wl, str):
        raise _err(path, "workload", "expected a path (relative to the spec) or an rt-app object")
    wl_path = os.path.join(os.path.dirname(os.path.abspath(path)), wl)
    try:
        with open(wl_path, encoding="utf-8") as f:
            return rtapp_json.loads(f.read())
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
    return params


def _check_tunables(tunables: Any, scheds: List[str], registry: dict, path: str) -> dict:
    if not isinstance(tunables, dict):
        raise _err(path, "tunables", "expected an object of tunable -> list of values")
    names = {s["name"]: s for s in registry["schedulers"]}
    engine = {t["name"] for t in registry["engine_tunables"]}
    for name, vals in tunables.items():
        if not isinstance(vals, list) or not vals or not all(isinstance(v, int) for v in vals):
            raise _err(path, f"tunables.{name}", "expected a non-empty list of integers")
        for s in scheds:
            if name not in {t["name"] for t in names[s.split("+")[0]]["tunables"]} | engine:
                raise _err(path, f"tunables.{name}", f"not a tunable of {s} (see schedlab schedulers)")
    return tunables


def _check_metrics(spec: dict, path: str) -> list:
    from .api import metric_descriptions

    desc = metric_descriptions()
    metrics = _list(spec, "metrics", path, DEFAULT_METRICS, lambda x: isinstance(x, str), "a metric name")
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
    from .api import schedulers

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
    workload = _load_workload(spec, path)
    registry = schedulers()
    names = {s["name"] for s in registry["schedulers"]}
    scheds = _list(spec, "schedulers", path, None, lambda x: isinstance(x, str) and x.split("+")[0] in names,
                   f"a registered scheduler ({', '.join(sorted(names))})")
    count = lambda lo: lambda x: isinstance(x, int) and not isinstance(x, bool) and x >= lo  # noqa: E731
    cpus = _list(spec, "cpus", path, [1], count(1), "a CPU count >= 1")
    seeds = _list(spec, "seeds", path, [0], count(0), "a seed >= 0")
    duration = spec.get("duration")
    if duration is not None:
        from . import _native
        from .api import parse_duration

        try:
            if isinstance(duration, bool) or not isinstance(duration, (str, int, float)):
                raise _native.ConfigError(f"found {json.dumps(duration)}")
            parse_duration(duration)
        except _native.ConfigError as e:
            raise _err(path, "duration", f"expected seconds > 0 or a string like 2s, 500ms ({e})") from None
    return {"workload": workload, "schedulers": scheds, "cpus": cpus,
            "parameters": _check_parameters(spec.get("parameters", {}), workload, path),
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
        # The native exception classes do not pickle: a worker process hands back a SweepError.
        what = {k: point[k] for k in ("scheduler", "cpus", "parameters", "tunables", "seed")}
        raise SweepError(f"the run {json.dumps(what, sort_keys=True)} failed: {e}") from None
    return {name: _metric(r.metrics, name) for name in point["metrics"]}


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
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    done = _journal(journal_path)
    todo = [(k, p) for k, p in grid if k not in done]
    if limit is not None:
        todo = todo[:limit]
    bar = _Bar(len(grid), len(grid) - len([1 for k, _ in grid if k not in done]), progress)
    if todo:
        submit, wait_any, close, result = _executor(dask, jobs or os.cpu_count() or 1)
        aborted = True
        try:
            with open(journal_path, "a", encoding="utf-8") as jf:
                pending = {submit(run_point, p): k for k, p in todo}
                while pending:
                    for fut in wait_any(list(pending)):
                        k = pending.pop(fut)
                        try:
                            metrics = result(fut)
                        except SweepError as e:
                            raise SweepError(f"{spec_path}: {e}") from None
                        done[k] = metrics
                        jf.write(json.dumps({"key": k, "metrics": metrics}, sort_keys=True) + "\n")
                        jf.flush()
                        bar.step()
            aborted = False
        finally:
            close(aborted)
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
