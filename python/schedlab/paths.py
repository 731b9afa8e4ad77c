"""``schedlab trace paths``: wakeup latency by the path each wakeup took to its CPU (stayed, placed
by the wakeup, pushed by the CPU it waited on, pulled by the CPU it ran on), read the same way from a
host trace and from a simulated one (``SimResult.wakeup_paths``; docs/model.md, "Traces"), so that
a difference in a task's latency can be traced to the path where it arises."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Tuple

PATHS = ("stayed", "placed", "pushed", "pulled")


def _rank(xs: List[int], pct: int) -> int:
    """Nearest-rank percentile of sorted ``xs``: the smallest value with at least ``pct`` % of them at
    or below it (integer arithmetic: ceil(pct·n/100), no float rounding)."""
    return xs[max(0, -(-pct * len(xs) // 100) - 1)]


def summary(rows: List[Tuple[str, str, int, Optional[int], int]]) -> List[Dict[str, Any]]:
    """Per task and path: wakeups, their share of the task's, and waking-to-run and move-to-run
    latency (µs, nearest-rank p10/p50/p90), tasks in name order, paths in ``PATHS`` order."""
    by: Dict[Tuple[str, str], List[Tuple[int, Optional[int]]]] = {}
    totals: Dict[str, int] = {}
    for name, path, waking, moved, run in rows:
        by.setdefault((name, path), []).append((run - waking, None if moved is None else run - moved))
        totals[name] = totals.get(name, 0) + 1
    out = []
    for name in sorted(totals):
        for path in PATHS:
            got = by.get((name, path))
            if not got:
                continue
            lat = sorted(w for w, _ in got)
            mv = sorted(m for _, m in got if m is not None)
            row: Dict[str, Any] = {"task": name, "path": path, "wakeups": len(got),
                                   "share": len(got) / totals[name]}
            for q in (10, 50, 90):
                row[f"latency_p{q}_us"] = _rank(lat, q) / 1000
                row[f"after_move_p{q}_us"] = _rank(mv, q) / 1000 if mv else None
            out.append(row)
    return out


def table(summary_rows: List[Dict[str, Any]]) -> str:
    """The summary as text."""
    head = (f"{'task':<16} {'path':<7} {'wakeups':>7} {'share':>6}   {'waking->run us p10/p50/p90':>28}"
            f"   {'move->run us p50/p90':>21}")
    lines = [head]
    for r in summary_rows:
        lat = "/".join(f"{r[f'latency_p{q}_us']:.1f}" for q in (10, 50, 90))
        mv = ("/".join(f"{r[f'after_move_p{q}_us']:.1f}" for q in (50, 90))
              if r["after_move_p50_us"] is not None else "-")
        lines.append(f"{r['task']:<16} {r['path']:<7} {r['wakeups']:>7} {r['share'] * 100:>5.1f}%   "
                     f"{lat:>28}   {mv:>21}")
    return "\n".join(lines)
