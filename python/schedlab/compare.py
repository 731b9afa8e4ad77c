"""``schedlab compare A B``: two runs side by side (simulator or recorded trace, as metrics
JSON from ``schedlab run --json`` / ``schedlab trace import --json``).

Tasks are matched by name (``--match pid`` matches by pid, e.g. a trace against the replay of
itself uses names ``comm_pid``). For each task: CPU share, voluntary and involuntary switches,
wakeup latency p50/p99/max and deadline misses of A and B with the difference B − A and the
relative difference (B − A) / A; then the run-level switch rates. The relative difference is
left out (``n/a``) where A is below the metric's floor (``FLOORS``: a share under 1 %, fewer
than 10 switches, a latency under 1 µs, no miss), so a near-zero baseline never reads as
+8,319 %. The table is one line per task and metric, so it fits 80 columns.

A file written by ``schedlab run --scheduler a,b --json`` holds one metrics object per
scheduler: ``compare FILE`` compares its two runs, ``FILE:NAME`` picks the run of NAME.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any, Callable, Dict, List, Optional, Tuple, Type, Union

FIELDS: List[Tuple[str, str]] = [
    ("cpu_share", "share"),
    ("nvcsw", "vcsw"),
    ("nivcsw", "ivcsw"),
    ("wakeup_latency_p50_us", "lat p50"),
    ("wakeup_latency_p99_us", "lat p99"),
    ("wakeup_latency_max_us", "lat max"),
    ("deadline_misses", "misses"),
]


# Below these values of A the relative difference is not shown (near-zero baselines).
FLOORS: Dict[str, float] = {
    "cpu_share": 0.01, "nvcsw": 10, "nivcsw": 10, "wakeup_latency_p50_us": 1.0,
    "wakeup_latency_p99_us": 1.0, "wakeup_latency_max_us": 1.0, "deadline_misses": 1,
    "context_switches_per_sec_per_cpu": 1.0, "task_switches_per_sec_per_cpu": 1.0, "migrations": 10,
    "jain_fairness": 0.01,
}


RUN_FIELDS = ("context_switches_per_sec_per_cpu", "task_switches_per_sec_per_cpu", "migrations",
              "jain_fairness")


class OrNull:
    """A ``check_json`` spec: null, or what ``spec`` says."""

    def __init__(self, spec: Spec) -> None:
        self.spec = spec


# A spec for check_json: a kind (KINDS), a kind of its own as (what, test), {key: spec} (an object
# holding these keys; "key?": it may be absent, "*": every key), [spec] (a list of such items) or
# OrNull(spec).
Spec = Union[str, Tuple[str, Callable[[Any], bool]], Dict[str, Any], List[Any], OrNull]


def _number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _integer(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


KINDS: Dict[str, Callable[[Any], bool]] = {
    "a number": _number,
    "a number or null": lambda x: x is None or _number(x),
    "an integer": _integer,
    "an integer or null": lambda x: x is None or _integer(x),
    "a string": lambda x: isinstance(x, str),
    "an object": lambda x: isinstance(x, dict),
    "a list": lambda x: isinstance(x, list),
    "a list of strings or null": lambda x: x is None or isinstance(x, list) and all(
        isinstance(s, str) for s in x),
}


def _what(spec: Spec) -> str:
    if isinstance(spec, OrNull):
        return f"{_what(spec.spec)} or null"
    if isinstance(spec, str):
        return spec
    return spec[0] if isinstance(spec, tuple) else "an object" if isinstance(spec, dict) else "a list"


def _test(spec: Spec) -> Callable[[Any], bool]:
    if isinstance(spec, tuple):
        return spec[1]
    return KINDS[spec if isinstance(spec, str) else _what(spec)]


def _shown(x: Any) -> str:
    if isinstance(x, (dict, list)):
        return "an object" if isinstance(x, dict) else "a list"
    s = json.dumps(x)
    return s if len(s) <= 40 else s[:37] + "..."


def check_json(x: Any, spec: Spec, file: str, path: str = "", error: Type[Exception] = ValueError) -> None:
    """That ``x`` (read from ``file``, at JSON path ``path``) is what ``spec`` says, else one
    ``error``: ``FILE: PATH: expected WHAT, got VALUE``."""
    if isinstance(spec, OrNull):
        if x is not None:
            check_json(x, spec.spec, file, path, error)
        return
    if not _test(spec)(x):
        raise error(f"{file}: {path + ': ' if path else ''}expected {_what(spec)}, got {_shown(x)}")
    if isinstance(spec, list):
        for i, item in enumerate(x):
            check_json(item, spec[0], file, f"{path}[{i}]", error)
    elif isinstance(spec, dict):
        for key, sub in spec.items():
            for k in list(x) if key == "*" else [key.rstrip("?")]:
                at = f"{path}.{k}" if path else k
                if k in x:
                    check_json(x[k], sub, file, at, error)
                elif not key.endswith("?"):
                    raise error(f"{file}: {at}: expected {_what(sub)}, but it is missing")


# What compare reads from a metrics file (null: not measured, as for a task that never woke or
# what a trace cannot tell), checked as it is loaded.
METRICS: Dict[str, Any] = {
    "scheduler": "a string",
    "tasks": [{"name": "a string", "pid": "an integer", **{f: "a number or null" for f, _ in FIELDS}}],
    **{k: "a number or null" for k in RUN_FIELDS},
}


def runs(path: str) -> List[Tuple[str, dict]]:
    """The runs in a metrics JSON file: one, or one per scheduler of a multi-scheduler run
    (``schedlab run --scheduler a,b --json``). ``FILE:NAME`` keeps the run named NAME. A file
    that is not such JSON is one ValueError naming it (and the JSON path)."""
    name = None
    if not os.path.exists(path) and ":" in path:
        path, name = path.rsplit(":", 1)
    with open(path, encoding="utf-8") as f:
        try:
            m = json.load(f)
        except ValueError as e:  # a JSON syntax error, or bytes that are not UTF-8
            raise ValueError(f"{path}: not JSON: {e}") from None
    if isinstance(m, dict) and ("tasks" in m or "scheduler" in m):
        check_json(m, METRICS, path)
        found = [(m["scheduler"], m)]
    elif isinstance(m, dict) and m and all(isinstance(v, dict) for v in m.values()):
        for n, r in m.items():  # one run per scheduler, each at its name
            check_json(r, METRICS, path, n)
        found = list(m.items())
    else:
        raise ValueError(f"{path}: expected a metrics JSON (schedlab run --json / trace import --json)")
    if name is not None:
        found = [(n, r) for n, r in found if n == name]
        if not found:
            raise ValueError(f"{path}: no run named {name!r}; it holds {', '.join(n for n, _ in runs(path))}")
    return found


def load(path: str) -> dict:
    """One run's metrics (a file with several runs needs ``FILE:NAME``)."""
    found = runs(path)
    if len(found) != 1:
        raise ValueError(f"{path}: holds {len(found)} runs ({', '.join(n for n, _ in found)}); "
                         f"pick one as {path}:NAME")
    return found[0][1]


def _key(t: dict, match: str) -> str:
    if match == "pid":
        # comm_pid names of a replay carry the recorded pid.
        m = re.search(r"_(\d+)$", t["name"])
        return m.group(1) if m and t["name"][: m.start()] else str(t["pid"])
    return t["name"]


def rel(a: Optional[float], b: Optional[float], floor: float = 0.0) -> Optional[float]:
    """(b − a) / a; None where either was not measured (null) or |a| is 0 or below ``floor``."""
    if a is None or b is None or a == 0 or abs(a) < floor:
        return None
    return (b - a) / a


def _pair(field: str, a: Optional[float], b: Optional[float]) -> Tuple[Optional[float], ...]:
    diff = None if a is None or b is None else b - a
    return (a, b, rel(a, b, FLOORS.get(field, 0.0)), diff)


def compare(a: dict, b: dict, match: str = "name") -> Dict[str, object]:
    """Per-task and run-level pairs (A, B, relative difference)."""
    bt = {_key(t, match): t for t in b["tasks"]}
    rows = []
    for t in a["tasks"]:
        u = bt.get(_key(t, match))
        if u is None:
            continue
        rows.append({"task": t["name"], **{f: _pair(f, t[f], u[f]) for f, _ in FIELDS}})
    run = {k: _pair(k, a[k], b[k]) for k in RUN_FIELDS}
    unmatched = [t["name"] for t in a["tasks"] if _key(t, match) not in bt]
    return {"tasks": rows, "run": run, "unmatched": unmatched}


def _num(x: Optional[float]) -> str:
    if x is None:  # null: not measured on that side
        return "-"
    if isinstance(x, int) or float(x).is_integer() and abs(x) >= 100:
        return f"{x:,.0f}"
    return f"{x:.4g}" if abs(x) < 1000 else f"{x:,.0f}"


def table(c: Dict[str, object], name_a: str, name_b: str) -> str:
    """One line per task and metric: A, B, B − A and (B − A) / A (n/a below the floor)."""
    def line(task: str, label: str, v: Tuple[Optional[float], ...]) -> str:
        a, b, r, d = v
        # Ratios past 10x read better as a factor than as thousands of percent.
        pct = "n/a" if r is None else f"x{r + 1:.0f}" if r >= 10 else f"{100 * r:+.0f}%"
        return f"{task[:16]:<16} {label:<14} {_num(a):>11} {_num(b):>11} {_num(d):>11} {pct:>8}"

    lines = [f"A = {name_a}", f"B = {name_b}",
             f"{'task':<16} {'metric':<14} {'A':>11} {'B':>11} {'B-A':>11} {'(B-A)/A':>8}"]
    for r in c["tasks"]:  # type: ignore[union-attr]
        for i, (f, label) in enumerate(FIELDS):
            lines.append(line(str(r["task"]) if i == 0 else "", label, r[f]))
    lines.append("")
    short = {"context_switches_per_sec_per_cpu": "switches/s/cpu", "task_switches_per_sec_per_cpu":
             "task sw/s/cpu", "migrations": "migrations", "jain_fairness": "Jain index"}
    for k, v in c["run"].items():  # type: ignore[union-attr]
        lines.append(line("(run)", short.get(k, k), v))
    lines.append("n/a: A not measured, or below the metric's floor (compare.py FLOORS)")
    if c["unmatched"]:
        lines.append(f"unmatched tasks of A: {', '.join(c['unmatched'])}")  # type: ignore[arg-type]
    return "\n".join(lines)
