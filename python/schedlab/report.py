"""Plain-text tables for the terminal."""

from __future__ import annotations

from .api import SimResult

# Names for annotations only: importing typing costs `schedlab run` about 3 ms of start-up
# (issue 18), and every annotation here is a string (`from __future__ import annotations`).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import List, Sequence


def _fmt(v: object, width: int) -> str:
    if v is None:  # not measured (a trace cannot tell), or withheld as unreliable
        s = "-"
    elif isinstance(v, float):
        s = f"{v:.1f}" if abs(v) >= 10 else f"{v:.3f}"
    else:
        s = str(v)
    return s.rjust(width)


def _prio(t: dict) -> str:
    """Policy and priority in ps/chrt style: nice for fair, FF/RR + RT prio (RT where a trace
    cannot tell FIFO from RR: ``SCHED_FIFO/RR``), DL."""
    pol = t["policy"]
    rt = {"SCHED_FIFO": "FF", "SCHED_RR": "RR", "SCHED_FIFO/RR": "RT"}.get(pol)
    if rt:
        return f"{rt} {t['rt_priority']}"
    if pol == "SCHED_DEADLINE":
        return "DL"
    return str(t["nice"]) if pol == "SCHED_OTHER" else f"{pol[6:9]} {t['nice']}"


def _cost_note(m: dict) -> str:
    """Where the simulator's latencies come from (issue 17: an RT task's 0 µs is not a bug)."""
    tun = m.get("tunables") or {}
    keys = ("wakeup_ns", "idle_exit_ns", "ipi_ns", "timer_slack_ns", "context_switch_ns")
    costs = {k: tun[k] for k in keys if k in tun}
    if costs and not any(costs.values()):
        return ("wakeup-path costs off (--zero-costs): a task woken onto an idle CPU, or preempting, "
                "runs at once, so its latency is 0 µs (docs/model.md, wakeup costs)")
    shown = ", ".join(f"{k} {v / 1000:g} µs" for k, v in costs.items())
    spread = tun.get("wakeup_spread_pct") or 0
    if spread > 100:
        shown += f"; each delay drawn around those medians with p90 {spread} % of them"
    return (f"latencies from the wakeup-path cost model ({shown}; docs/model.md, wakeup costs; "
            "--zero-costs for none)")


def task_table(r: SimResult) -> str:
    m = r.metrics
    recorded = m["scheduler"] == "trace" or m["scheduler"].startswith(("host", "vm "))
    label = "recorded trace" if m["scheduler"] == "trace" else m["scheduler"]
    where = (f"{label}, {m['cpus']} CPU(s)" if recorded
             else f"{m['scheduler']} on {m['cpus']} CPU(s), HZ={m['hz']}")
    head = (f"{where}, "
            f"{m['duration_us'] / 1e6:.3f} s {'recorded' if recorded else 'simulated'}, "
            f"{m['context_switches']} context switches "
            f"({m['context_switches_per_sec']:.0f}/s), {m['migrations']} migrations, "
            f"Jain {m['jain_fairness']:.4f}")
    cols = [("task", "name", 14), ("prio", "prio", 6), ("cpu ms", "cpu_time_us", 10),
            ("share", "cpu_share", 7), ("wait ms", "wait_time_us", 10),
            ("lat p50", "wakeup_latency_p50_us", 9), ("lat p99", "wakeup_latency_p99_us", 9),
            ("lat max", "wakeup_latency_max_us", 9), ("vcsw", "nvcsw", 7),
            ("ivcsw", "nivcsw", 7), ("migr", "migrations", 6), ("miss", "deadline_misses", 5)]
    lines = [head, " ".join(h.rjust(w) if i else h.ljust(w) for i, (h, _, w) in enumerate(cols))]
    for t in m["tasks"]:
        row = []
        for i, (_, k, w) in enumerate(cols):
            v = _prio(t) if k == "prio" else t[k]
            if k in ("cpu_time_us", "wait_time_us") and v is not None:
                v = v / 1000.0
            row.append(str(v)[:w].ljust(w) if i == 0 else _fmt(v, w))
        lines.append(" ".join(row))
    rt = "FF/RR (RT: FIFO or RR, which a trace cannot tell)" if any(
        t["policy"] == "SCHED_FIFO/RR" for t in m["tasks"]) else "FF/RR"
    lines.append(f"latencies in µs (waking to running); times in ms; prio: nice, {rt} + RT priority, DL; "
                 "miss: jobs past their deadline; -: not measured, or withheld as unreliable")
    if not recorded:
        lines.append(_cost_note(m))
    for w in m["warnings"]:
        lines.append(f"warning: {w}")
    return "\n".join(lines)


def compare_table(names: Sequence[str], results: List[SimResult]) -> str:
    lines = ["per-task CPU share and p99 wakeup latency (µs) by scheduler"]
    # Column widths follow the scheduler names, so long names never run together.
    w_share = [max(12, len(n) + 7) for n in names]
    w_p99 = [max(10, len(n) + 5) for n in names]
    head = "task".ljust(16) + "".join(
        f"{n + ' share':>{ws}}{n + ' p99':>{wp}}" for n, ws, wp in zip(names, w_share, w_p99))
    lines.append(head)
    tasks = [t["name"] for t in results[0].metrics["tasks"]]
    by = [{t["name"]: t for t in r.metrics["tasks"]} for r in results]
    for name in tasks:
        row = name[:15].ljust(16)
        for b, ws, wp in zip(by, w_share, w_p99):
            t = b.get(name)
            p99 = t and t["wakeup_latency_p99_us"]  # null: no wakeup measured
            row += (f"{t['cpu_share']:>{ws}.4f}" if t else f"{'-':>{ws}}") + (
                f"{p99:>{wp}.1f}" if p99 is not None else f"{'-':>{wp}}")
        lines.append(row)
    lines.append("")
    for n, r in zip(names, results):
        m = r.metrics
        lines.append(f"{n}: {m['context_switches_per_sec']:.0f} switches/s, "
                     f"{m['migrations']} migrations, Jain {m['jain_fairness']:.4f}")
    return "\n".join(lines)


def _tunable_rows(tunables) -> List[str]:
    if not tunables:
        return ["", "No tunables.", ""]
    rows = ["", "| tunable | default | range | unit | what it does |", "|---|---|---|---|---|"]
    for t in tunables:
        rng = "0/1" if t["unit"] == "bool" else f"{t['min']}..{t['max']}"
        doc = t["doc"].replace("|", "\\|")
        rows.append(f"| `{t['name']}` | {t['default']} | {rng} | {t['unit']} | {doc} |")
    rows.append("")
    return rows


def registry_markdown(info: dict) -> str:
    """The registry (``schedlab schedulers --json``) as the Markdown of docs/schedulers.md."""
    out = ["# Schedulers and policies", "",
           "Generated from the registry (crates/schedlab-core/src/registry.rs) by",
           "`schedlab schedulers --markdown`; a test keeps this file in step with it.", ""]
    out += ["## Schedulers (`--scheduler NAME`)", ""]
    for s in info["schedulers"]:
        out += [f"### {s['name']}", "", s["description"], "",
                f"* class stack: {', '.join(s['classes'])}",
                f"* version: {s['version']}", f"* source: {s['source']}",
                f"* fair-class policies apply: {'yes' if s['fair_policies'] else 'no'}; "
                f"`--dl-policy` applies: {'yes' if s['dl_orders'] else 'no'}"]
        out += _tunable_rows(s["tunables"])
    out += ["## Fair-class policies (`--scheduler BASE+NAME`)", ""]
    for p in info["fair_policies"]:
        out += [f"### +{p['name']}", "", p["description"], "", f"* source: {p['source']}"]
        out += _tunable_rows(p["tunables"])
    out += ["## SCHED_DEADLINE orderings (`--dl-policy NAME`)", ""]
    for p in info["dl_orders"]:
        out += [f"### {p['name']}", "", p["description"], "", f"* source: {p['source']}"]
        out += _tunable_rows(p["tunables"])
    out += ["## Engine tunables (every scheduler)"]
    out += _tunable_rows(info["engine_tunables"])
    return "\n".join(out).rstrip() + "\n"
