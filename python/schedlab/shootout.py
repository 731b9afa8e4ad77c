"""``schedlab shootout WORKLOAD``: which scheduler is best for *this* workload (issue 15, part 2).

Every registered scheduler (or the ones named) runs the workload over several seeds; each chosen
metric is reported as the mean with a 95 % confidence interval (Student's t over the seeds), and
schedulers are ranked by it only where the intervals separate: schedulers whose intervals overlap,
directly or through a chain of overlapping intervals, share a rank; two ranks differ only across a
gap that no interval covers (a rank is a claim the spread supports). See ``rank``.

Repeats differ by their seed, which drives the simulator's only randomness: OS noise (per-CPU
kernel threads, ``noise_interval_us``), switched on here (4 ms mean gap, 20 µs each) unless the
caller sets it, so that repeats are not identical copies. A scheduler that cannot run the workload
is listed with its one-line reason.

Metrics (all from the simulator's metrics, docs/model.md "Metrics"):
  throughput   full-speed work done per second of simulated time (higher is better)
  latency_p50  the median over tasks of each task's p50 wakeup latency, µs (lower is better)
  latency_p99  the worst task's p99 wakeup latency, µs (lower is better)
  misses       deadline misses of all tasks (lower is better)
  fairness     Jain's index of CPU time (higher is better)
"""

from __future__ import annotations

import math
import statistics
from typing import Any, Callable, Dict, List, Optional, Sequence

from .api import schedulers, simulate

METRICS: Dict[str, Dict[str, Any]] = {
    "throughput": {"better": "higher", "unit": "work µs/s"},
    "latency_p50": {"better": "lower", "unit": "µs"},
    "latency_p99": {"better": "lower", "unit": "µs"},
    "misses": {"better": "lower", "unit": "jobs"},
    "fairness": {"better": "higher", "unit": "Jain"},
}
NOISE = {"noise_interval_us": 4000, "noise_runtime_us": 20}
# Two-sided 95 % Student t quantiles by degrees of freedom (1..30; beyond: 1.96).
_T95 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042]


def metric_value(m: Dict[str, Any], name: str) -> Optional[float]:
    """One run's value of `name`; None when the run measured nothing for it."""
    tasks = m["tasks"]
    if name == "throughput":
        return m["work_done_us"] / (m["duration_us"] / 1e6) if m["duration_us"] else None
    if name == "latency_p50":
        xs = [t["wakeup_latency_p50_us"] for t in tasks if t["wakeup_latency_p50_us"] is not None]
        return statistics.median(xs) if xs else None
    if name == "latency_p99":
        xs = [t["wakeup_latency_p99_us"] for t in tasks if t["wakeup_latency_p99_us"] is not None]
        return max(xs) if xs else None
    if name == "misses":
        return float(sum(t["deadline_misses"] or 0 for t in tasks))
    if name == "fairness":
        return m["jain_fairness"]
    raise KeyError(name)


def interval(xs: Sequence[float]) -> Dict[str, Optional[float]]:
    """Mean and 95 % confidence half-width over repeats (None with fewer than two)."""
    mean = statistics.fmean(xs)
    if len(xs) < 2:
        return {"mean": mean, "ci95": None, "n": len(xs)}
    t = _T95[len(xs) - 2] if len(xs) - 1 <= len(_T95) else 1.96
    return {"mean": mean, "ci95": t * statistics.stdev(xs) / math.sqrt(len(xs)), "n": len(xs)}


def rank(rows: Dict[str, Dict[str, Optional[float]]], better: str) -> Dict[str, int]:
    """Ranks that only the intervals' separation supports.

    Each scheduler's interval is mean ± ci95 (its mean alone when ci95 is None: one repeat).
    Schedulers share a rank when their intervals are connected by overlaps (touching counts), i.e.
    the connected components of the interval-overlap graph: sorted by lower bound, a scheduler joins
    the current group when its lower bound is at most the running maximum of the group's upper
    bounds. (Sorting by mean would be wrong: a wide interval seen late can bridge two groups already
    closed.) Groups are disjoint spans, so ordering them by their best mean orders them outright;
    a group's rank is 1 + the number of schedulers in better groups (competition ranking: 1, 1, 3).
    A scheduler whose mean is None is left out (unranked)."""
    if better not in ("higher", "lower"):
        raise ValueError(f"better: expected 'higher' or 'lower', got {better!r}")
    names = sorted((n for n, r in rows.items() if r["mean"] is not None), key=lambda n: _bounds(rows[n]))
    groups: List[List[str]] = []
    reach = -math.inf
    for n in names:
        lo, hi = _bounds(rows[n])
        if groups and lo <= reach:
            groups[-1].append(n)
            reach = max(reach, hi)
        else:
            groups.append([n])
            reach = hi
    sign = -1.0 if better == "higher" else 1.0
    groups.sort(key=lambda g: min(sign * rows[n]["mean"] for n in g))
    out: Dict[str, int] = {}
    done = 0
    for g in groups:
        for n in g:
            out[n] = done + 1
        done += len(g)
    return out


def _bounds(r: Dict[str, Optional[float]]) -> tuple:
    ci = r["ci95"] or 0.0
    return (r["mean"] - ci, r["mean"] + ci)


def shootout(workload: Any, names: Optional[List[str]] = None, metrics: Sequence[str] = ("throughput",),
             seeds: int = 5, cpus: int = 1, duration: Any = None, smt: int = 1, hz: int = 250,
             set: Optional[Dict[str, int]] = None,  # noqa: A002
             progress: Callable[[str], None] = lambda s: None) -> Dict[str, Any]:
    """Run every scheduler over `seeds` seeds; per metric: mean, CI and rank of each scheduler."""
    names = names or [s["name"] for s in schedulers()["schedulers"]]
    tun = {**NOISE, **(set or {})}
    runs: Dict[str, List[Dict[str, Any]]] = {}
    refused: Dict[str, str] = {}
    for i, name in enumerate(names):
        for seed in range(seeds):
            progress(f"[{i + 1}/{len(names)}] {name}, seed {seed + 1}/{seeds}")
            try:
                r = simulate(workload, name, cpus, smt=smt, hz=hz, duration=duration, seed=seed, set=tun)
            except Exception as e:  # noqa: BLE001 (one line per refusal, the run goes on)
                refused[name] = str(e).splitlines()[0]
                break
            runs.setdefault(name, []).append(dict(r.metrics))
    table: Dict[str, Any] = {}
    for metric in metrics:
        rows = {}
        for name, ms in runs.items():
            xs = [v for v in (metric_value(m, metric) for m in ms) if v is not None]
            rows[name] = interval(xs) if xs else {"mean": None, "ci95": None, "n": 0}
        ranks = rank(rows, METRICS[metric]["better"])
        for name in rows:
            rows[name]["rank"] = ranks.get(name)
        table[metric] = rows
    return {"schedulers": names, "seeds": seeds, "cpus": cpus, "tunables": tun, "metrics": table,
            "refused": refused}


def text_table(res: Dict[str, Any]) -> str:
    lines = [f"{res['seeds']} seeds per scheduler on {res['cpus']} CPU(s); mean ± 95 % CI; equal ranks: "
             "intervals linked by overlaps, directly or in a chain (not told apart); ranks differ only "
             "across a gap no interval covers"]
    if any(r["mean"] is not None and r["ci95"] is None for rows in res["metrics"].values()
           for r in rows.values()):
        lines.append("no interval where a scheduler has a single value (one seed): its mean alone stands "
                     "for it, so those ranks follow the means, not the spread")
    metrics = list(res["metrics"])
    lines.append("scheduler".ljust(14) + "".join(
        f"{m} ({METRICS[m]['better']} better)".rjust(34) for m in metrics))
    first = res["metrics"][metrics[0]]
    order = sorted(first, key=lambda n: (first[n]["rank"] or 10**6, n))
    for name in order:
        cells = []
        for m in metrics:
            r = res["metrics"][m][name]
            if r["mean"] is None:
                cells.append("-".rjust(34))
                continue
            ci = "" if r["ci95"] is None else f" ± {r['ci95']:.3g}"
            cells.append(f"#{r['rank']} {r['mean']:.4g}{ci}".rjust(34))
        lines.append(name[:13].ljust(14) + "".join(cells))
    for name, why in res["refused"].items():
        lines.append(f"{name}: not run: {why}")
    return "\n".join(lines)


def plot(res: Dict[str, Any], path: str) -> None:
    """One bar chart per metric: mean with its 95 % interval, in rank order."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    metrics = list(res["metrics"])
    fig, axes = plt.subplots(len(metrics), 1, figsize=(9, 3.2 * len(metrics)), squeeze=False)
    for ax, m in zip(axes[:, 0], metrics):
        rows = {n: r for n, r in res["metrics"][m].items() if r["mean"] is not None}
        names = sorted(rows, key=lambda n: (rows[n]["rank"], n))
        ax.bar(names, [rows[n]["mean"] for n in names], yerr=[rows[n]["ci95"] or 0 for n in names], capsize=3)
        ax.set_ylabel(f"{m} ({METRICS[m]['unit']})")
        ax.set_title(f"{m}: {METRICS[m]['better']} is better; error bars: 95 % CI over {res['seeds']} seeds")
        ax.tick_params(axis="x", rotation=45)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
