"""``schedlab compare A B``: two runs side by side (simulator or recorded trace, as metrics
JSON from ``schedlab run --json`` / ``schedlab trace import --json``).

Tasks are matched by name (``--match pid`` matches by pid, e.g. a trace against the replay of
itself uses names ``comm_pid``). For each task: CPU share, voluntary and involuntary switches,
wakeup latency p50/p99/max and deadline misses of A and B with the relative difference
(B − A) / A; then the run-level switch rates.
"""

from __future__ import annotations

import json
import re
from typing import Dict, List, Optional, Tuple

FIELDS: List[Tuple[str, str]] = [
    ("cpu_share", "share"),
    ("nvcsw", "vcsw"),
    ("nivcsw", "ivcsw"),
    ("wakeup_latency_p50_us", "lat p50"),
    ("wakeup_latency_p99_us", "lat p99"),
    ("wakeup_latency_max_us", "lat max"),
    ("deadline_misses", "misses"),
]


def load(path: str) -> dict:
    with open(path, encoding="utf-8") as f:
        m = json.load(f)
    if not isinstance(m, dict) or not isinstance(m.get("tasks"), list) or "scheduler" not in m:
        raise ValueError(f"{path}: expected a metrics JSON (schedlab run --json / trace import --json)")
    return m


def _key(t: dict, match: str) -> str:
    if match == "pid":
        # comm_pid names of a replay carry the recorded pid.
        m = re.search(r"_(\d+)$", t["name"])
        return m.group(1) if m and t["name"][: m.start()] else str(t["pid"])
    return t["name"]


def rel(a: Optional[float], b: Optional[float]) -> Optional[float]:
    """(b − a) / a; None where either was not measured (null) or a is 0."""
    return None if a is None or b is None or a == 0 else (b - a) / a


def compare(a: dict, b: dict, match: str = "name") -> Dict[str, object]:
    """Per-task and run-level pairs (A, B, relative difference)."""
    bt = {_key(t, match): t for t in b["tasks"]}
    rows = []
    for t in a["tasks"]:
        u = bt.get(_key(t, match))
        if u is None:
            continue
        rows.append({"task": t["name"], **{f: (t[f], u[f], rel(t[f], u[f])) for f, _ in FIELDS}})
    run = {k: (a[k], b[k], rel(a[k], b[k])) for k in
           ("context_switches_per_sec_per_cpu", "task_switches_per_sec_per_cpu", "migrations", "jain_fairness")}
    unmatched = [t["name"] for t in a["tasks"] if _key(t, match) not in bt]
    return {"tasks": rows, "run": run, "unmatched": unmatched}


def table(c: Dict[str, object], name_a: str, name_b: str) -> str:
    def cell(v: Tuple[Optional[float], Optional[float], Optional[float]]) -> str:
        a, b, r = v
        pct = "  n/a" if r is None else f"{100 * r:+5.0f}%"
        small = isinstance(a, float) and abs(a) < 10

        def fmt(x: Optional[float]) -> str:  # null: not measured on that side
            return "-" if x is None else f"{x:.3f}" if small else f"{x:.0f}"
        return f"{fmt(a):>8} {fmt(b):>8} {pct}"

    lines = [f"A = {name_a}, B = {name_b}; each cell: A, B, (B-A)/A",
             "task".ljust(16) + "".join(f"{h:>24}" for _, h in FIELDS)]
    for r in c["tasks"]:  # type: ignore[union-attr]
        lines.append(str(r["task"])[:15].ljust(16) + "".join(f"{cell(r[f]):>24}" for f, _ in FIELDS))
    lines.append("")
    for k, v in c["run"].items():  # type: ignore[union-attr]
        lines.append(f"{k:<36}{cell(v)}")
    if c["unmatched"]:
        lines.append(f"unmatched tasks of A: {', '.join(c['unmatched'])}")  # type: ignore[arg-type]
    return "\n".join(lines)
