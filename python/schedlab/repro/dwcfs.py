"""Seed 003: DW-CFS, dynamic weights for multi-threaded processes, and the PFS
baseline (../shared/seeds/003_966d5ac02bf4bec7.txt, spec: seed-algorithms.md §3).

Process A (one thread) and process B (m threads sharing B's work equally) start
together, each with the same total work; we report when each finishes under
CFS, EEVDF, PFS and DW-CFS on 4 CPUs (the seed's 2-core, 4-thread i5-520M) and
on 2, beside the fluid ideal computed from the spec's weights (each thread at
most one CPU, weighted sharing, the survivor alone afterwards).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable, Dict, List, Tuple

from ..api import simulate
from .figures import pyplot, save
from .rows import fmax, fsum, task_rows


def alpha(nt: int, no: int) -> float:
    """α(N_t, N_o) of seed-algorithms.md §3.1 with the N_o = 1 guard (independent of the Rust code)."""
    if no <= 1 or nt <= 1:
        return 1.0
    c = 11 * no - 12
    return -abs(1.2 * (1 + c) / (nt + c) - 1.1) + 1.1


def _weights(policy: str, m: int, cpus: int) -> Tuple[float, float]:
    """Per-thread weights of A and B."""
    if policy.endswith("+pfs"):
        return 1024.0, 1024.0 / m
    if policy.endswith("+dwcfs"):
        return 1024.0 * alpha(1, cpus), 1024.0 * alpha(m, cpus)
    return 1024.0, 1024.0


def _fluid_shares(wa: float, wb: float, m: int, cpus: int) -> Tuple[float, float]:
    """Water-filling: CPUs shared in proportion to weight, at most 1 CPU per thread."""
    threads = [wa] + [wb] * m
    share = [0.0] * len(threads)
    free, active = float(cpus), list(range(len(threads)))
    while active:
        tot = sum(threads[i] for i in active)
        capped = [i for i in active if free * threads[i] / tot >= 1.0]
        if not capped:
            for i in active:
                share[i] = free * threads[i] / tot
            break
        for i in capped:
            share[i] = 1.0
        free -= len(capped)
        active = [i for i in active if i not in capped]
    return share[0], sum(share[1:])


def fluid_finish(policy: str, m: int, cpus: int, work: float) -> Tuple[float, float]:
    a, b = _fluid_shares(*_weights(policy, m, cpus), m, cpus)
    ta, tb = work / a, work / b
    if ta <= tb:  # B continues alone on min(m, cpus) CPUs
        return ta, ta + (work - b * ta) / min(m, cpus)
    return tb + (work - a * tb) / 1.0, tb


def _simulate(policy: str, m: int, cpus: int, spec: dict) -> Tuple[float, float]:
    w = spec["work_s"] * 1_000_000
    tasks = {"A": {"loop": 1, "run": w}, "B": {"instance": m, "loop": 1, "run": w // m}}
    wl = {"global": {"calibration": 100}, "tasks": tasks}
    r = simulate(
        wl,
        policy,
        cpus,
        hz=spec["platform"]["hz"],
        set={"noise_interval_us": spec["platform"]["noise_interval_us"]},
    )
    # The latest turnaround of each group's threads (NaN while none finished), from the rows.
    def latest(task: str) -> float:
        return fmax(t["turnaround_us"] for t in task_rows(r) if t["task"] == task) / 1e6

    return latest("A"), latest("B")


def run(spec: dict, out: Path, log: Callable[[str], None]) -> dict:
    res: Dict[str, dict] = {"platform": spec["platform"], "work_s": spec["work_s"], "runs": {}}
    for cpus in spec["cpus"]:
        rows: List[dict] = []
        for m in spec["threads"]:
            log(f"{cpus} CPUs, m = {m}")
            row: dict = {"m": m}
            for p in spec["schedulers"]:
                a, b = _simulate(p, m, cpus, spec)
                fa, fb = fluid_finish(p, m, cpus, spec["work_s"])
                row[p] = {
                    "A_s": round(a, 3),
                    "B_s": round(b, 3),
                    "fluid_A_s": round(fa, 3),
                    "fluid_B_s": round(fb, 3),
                }
            rows.append(row)
        res["runs"][str(cpus)] = rows
    res["examples"] = _examples(spec, log)
    res["published"] = spec["published"]
    (out / "report.json").write_text(json.dumps(res, indent=2) + "\n", encoding="utf-8")
    _plot(res, spec, out)
    (out / "report.md").write_text(_markdown(res, spec), encoding="utf-8")
    return res


def _examples(spec: dict, log: Callable[[str], None]) -> List[dict]:
    """The seed's Examples 1 and 2 (§2): processes of 1, 2, 2 and 1, 1, 8 threads on one CPU;
    each process's CPU share under CFS, PFS and DW-CFS beside the weights' ideal share."""
    ex = spec["examples"]
    out = []
    for case in ex["cases"]:
        row: dict = {"name": case["name"], "threads": case["threads"], "shares": {}, "ideal": {}}
        tasks = {p: {"instance": n, "run": 1_000_000} for p, n in case["threads"].items()}
        for sched in spec["schedulers"]:
            log(f"{case['name']} under {sched}")
            t = task_rows(simulate({"global": {"duration": ex["seconds"]}, "tasks": tasks}, sched, ex["cpus"],
                              hz=spec["platform"]["hz"]))
            row["shares"][sched] = {p: round(fsum(x["cpu_share"] for x in t if x["task"] == p), 4)
                                    for p in case["threads"]}
            weights = {p: n * _weights(sched, n, ex["cpus"])[1] for p, n in case["threads"].items()}
            total = sum(weights.values())
            row["ideal"][sched] = {p: round(w / total, 4) for p, w in weights.items()}
        out.append(row)
    return out


def _plot_examples(res: dict, spec: dict, out: Path, plt) -> None:
    """Figures 1-3 (each process's share) and Figure 4 (α for N_o = 4)."""
    fig, axes = plt.subplots(1, len(res["examples"]), figsize=(9, 3.2), sharey=True)
    for ax, row in zip(axes, res["examples"]):
        procs = list(row["threads"])
        scheds = spec["schedulers"]
        width = 0.8 / len(scheds)
        for i, sched in enumerate(scheds):
            xs = [j + i * width for j in range(len(procs))]
            ax.bar(xs, [row["shares"][sched][p] for p in procs], width, label=sched)
            ax.scatter(xs, [row["ideal"][sched][p] for p in procs], marker="_", color="k", s=60)
        ax.set_xticks([j + 0.4 - width / 2 for j in range(len(procs))],
                      [f"{p} ({row['threads'][p]} thr.)" for p in procs])
        ax.set_title(f"{row['name']}: CPU share per process")
        ax.grid(alpha=0.3, axis="y")
    axes[0].set_ylabel("share of the CPU (bars: simulated, -: ideal)")
    axes[-1].legend(fontsize=7)
    fig.tight_layout()
    save(fig, out / "examples")
    plt.close(fig)
    fig, ax = plt.subplots(figsize=(5, 3.2))
    nts = list(range(1, 33))
    ax.plot(nts, [alpha(n, 4) for n in nts], marker=".")
    ax.axvline(4, color="grey", ls=":")
    ax.set_xlabel("threads of the process (N_t)")
    ax.set_ylabel("weight factor α")
    ax.set_title("α(N_t), N_o = 4, β = 1.1 (seed Figure 4)")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    save(fig, out / "alpha")
    plt.close(fig)


def _examples_lines(res: dict, spec: dict) -> List[str]:
    ex = spec["examples"]
    head = " | ".join(f"{s} share (ideal)" for s in spec["schedulers"])
    lines = ["## Examples 1 and 2 (seed §2.2, §3.1), one CPU", "", f"Published: {ex['published']}.", "",
             f"| example | process | threads | {head} |",
             "|---|---|---|" + "---|" * len(spec["schedulers"])]
    worst = 0.0
    for row in res["examples"]:
        for p, n in row["threads"].items():
            cells = []
            for sched in spec["schedulers"]:
                sim, ideal = row["shares"][sched][p], row["ideal"][sched][p]
                worst = max(worst, abs(sim - ideal))
                cells.append(f"{sim:.3f} ({ideal:.3f})")
            lines.append(f"| {row['name']} | {p} | {n} | " + " | ".join(cells) + " |")
    ex2 = next((r for r in res["examples"] if r["name"] == "Example 2"), None)
    lines += ["", f"Every simulated share is within {worst:.3f} of its ideal (the weights' proportion)."]
    if ex2 and "cfs" in ex2["shares"] and "cfs+pfs" in ex2["shares"]:
        c, pfs = ex2["shares"]["cfs"], ex2["shares"]["cfs+pfs"]
        squeezed = c["C"] > c["A"] + c["B"]
        even = max(pfs.values()) - min(pfs.values())
        lines.append(f"Example 2 under CFS: C takes {c['C']:.0%}, A and B {c['A']:.0%} and {c['B']:.0%} "
                     f"({'agrees' if squeezed else 'differs'}: the seed's Figure 2 shows C taking most); under "
                     f"PFS the three shares differ by at most {even:.3f} "
                     f"({'agrees' if even <= 0.02 else 'differs'} with Figure 3's equal thirds, within 0.02).")
    lines += ["On one CPU N_o = 1, and DW-CFS's α is 1 (the spec's N_o = 1 guard): it behaves as CFS here.",
              "", "![Examples 1 and 2 (seed Figures 1-3)](examples.svg)", "",
              f"{ex['figure4']}:", "", "![α (seed Figure 4)](alpha.svg)", ""]
    return lines


def _plot(res: dict, spec: dict, out: Path) -> None:
    plt = pyplot()
    _plot_examples(res, spec, out, plt)

    for cpus, rows in res["runs"].items():
        fig, axes = plt.subplots(1, 2, figsize=(9, 3.4), sharey=True)
        xs = [str(r["m"]) for r in rows]
        for ax, who in zip(axes, ("A", "B")):
            for p in spec["schedulers"]:
                ax.plot(xs, [r[p][f"{who}_s"] for r in rows], marker="o", label=p)
            ax.plot(xs, [r["cfs+dwcfs"][f"fluid_{who}_s"] for r in rows], "k--", label="fluid DW-CFS")
            ax.set_title(f"process {who} ({'1 thread' if who == 'A' else 'm threads'}), {cpus} CPUs")
            ax.set_xlabel("threads of B (m)")
            ax.grid(alpha=0.3)
        axes[0].set_ylabel("finish time (s)")
        axes[1].legend(fontsize=8)
        fig.tight_layout()
        for ext in ("png", "svg"):
            save(fig, out / f"finish_{cpus}cpu", (ext,))
        plt.close(fig)


# Two finish times closer than this (relative) count as equal in the verdicts below: the
# simulated runs vary by about that much with the OS-noise seed.
TOLERANCE = 0.01


def _ms(values: List[int]) -> str:
    return ", ".join(str(v) for v in values) if values else "none"


def _deviations(res: dict, spec: dict) -> Tuple[List[Tuple[float, str]], int, int]:
    """Every |simulated - fluid| / fluid, largest first, with where; and how many cells are
    within TOLERANCE."""
    devs, near, cells = [], 0, 0
    for cpus, rows in res["runs"].items():
        for r in rows:
            for p in spec["schedulers"]:
                for who in ("A", "B"):
                    sim, ideal = r[p][f"{who}_s"], r[p][f"fluid_{who}_s"]
                    dev = abs(sim - ideal) / ideal
                    cells += 1
                    near += dev <= TOLERANCE
                    devs.append((dev, f"{p}, process {who}, m = {r['m']} on {cpus} CPUs"))
    devs.sort(key=lambda d: -d[0])
    return devs, near, cells


def _sign(x: float, y: float) -> int:
    """-1, 0 or +1: x below, equal to (within TOLERANCE) or above y."""
    return 0 if abs(x - y) <= TOLERANCE * y else (1 if x > y else -1)


def _compare(rows: List[dict], a: str, b: str, who: str, sign: int, key: str = "") -> List[int]:
    """The m where scheduler a's finish time of `who` is lower (sign -1) or higher (+1) than
    scheduler b's by more than TOLERANCE (`key` "fluid_" compares the fluid ideal's)."""
    return [r["m"] for r in rows if _sign(r[a][f"{key}{who}_s"], r[b][f"{key}{who}_s"]) == sign]


def _verdict(ok: bool) -> str:
    return "agrees" if ok else "differs"


def _claims(rows: List[dict]) -> List[str]:
    """The seed's conclusions (§4.3) that the 4-CPU runs can test, each judged from the numbers
    (steps within TOLERANCE count as flat)."""
    if not rows:
        return []
    by_m = {r["m"]: r for r in rows}
    ms = [r["m"] for r in rows]
    b = [by_m[m]["cfs"]["B_s"] for m in ms]
    b_falls = all(_sign(y, x) <= 0 for x, y in zip(b, b[1:]))
    a4 = [by_m[m]["cfs"]["A_s"] for m in ms if m >= 4]
    a_rises = all(_sign(y, x) >= 0 for x, y in zip(a4, a4[1:])) and _sign(a4[-1], a4[0]) > 0
    mid = [m for m in ms if 4 <= m <= 7]
    b_mid = [m for m in mid if _sign(by_m[m]["cfs+dwcfs"]["B_s"], by_m[m]["cfs"]["B_s"]) < 0]
    high = [m for m in ms if m >= 8]
    b_high = [m for m in high if _sign(by_m[m]["cfs+dwcfs"]["B_s"], by_m[m]["cfs"]["B_s"]) > 0]
    a_high = [m for m in high if _sign(by_m[m]["cfs+dwcfs"]["A_s"], by_m[m]["cfs"]["A_s"]) < 0]
    return ["The seed's conclusions against the 4-CPU runs (equal within 1 %):", "",
            f"* (1) under CFS B's finish never rises with m: {_verdict(b_falls)} "
            f"({' → '.join(f'{x:g}' for x in b)} s).",
            f"* (2) under CFS A's finish rises with m from m = 4: {_verdict(a_rises)} "
            f"({' → '.join(f'{x:g}' for x in a4)} s); the fall below m = 4 (Turbo Boost) is not modelled.",
            f"* (4) m in 4..7, B sooner under DW-CFS than CFS: at m = {_ms(b_mid)} of {_ms(mid)}, "
            f"{_verdict(b_mid == mid)}.",
            f"* (5) m in 8..32, B later under DW-CFS than CFS: at m = {_ms(b_high)} of {_ms(high)}, "
            f"{_verdict(b_high == high)}; A sooner: at m = {_ms(a_high)} of {_ms(high)}, "
            f"{_verdict(a_high == high)}.", ""]


def _discussion(res: dict, spec: dict) -> List[str]:
    """Every comparing sentence computed from the numbers above (TOLERANCE: equal within 1 %)."""
    devs, near, cells = _deviations(res, spec)
    top = "; ".join(f"{d:.1%} ({w})" for d, w in devs[:3])
    lines = [f"Simulated against the fluid ideal: {near} of {cells} finish times are within "
             f"{TOLERANCE:.0%}; the largest deviations are {top}. The ideal lets every thread run "
             "in proportion to its weight at every instant; per-CPU queues and periodic balancing "
             "cannot split threads that do not divide evenly over the CPUs (the spec's own caveat).", ""]
    for cpus, rows in res["runs"].items():
        n = int(cpus)
        alphas = ", ".join(f"α({r['m']}) = {alpha(r['m'], n):.3f}" for r in rows if r["m"] > 1)
        lines += [f"On {cpus} CPUs, DW-CFS against CFS (differences over {TOLERANCE:.0%}):", ""]
        for who in ("A", "B"):
            sooner = _compare(rows, "cfs+dwcfs", "cfs", who, -1)
            later = _compare(rows, "cfs+dwcfs", "cfs", who, +1)
            agree = sum(_sign(r["cfs+dwcfs"][f"{who}_s"], r["cfs"][f"{who}_s"])
                        == _sign(r["cfs+dwcfs"][f"fluid_{who}_s"], r["cfs"][f"fluid_{who}_s"]) for r in rows)
            lines.append(f"* {who} finishes sooner at m = {_ms(sooner)}; later at m = {_ms(later)}; "
                         f"the fluid ideal's comparison has the same outcome at {agree} of {len(rows)} m.")
        lines += [f"* B's threads get weight α(m, N_o = {n})·1024: {alphas}. Where α < 1, DW-CFS slows B "
                  "by design (more threads than CPUs); where α > 1 it favours B."]
        r4 = next((r for r in rows if r["m"] == 4), None)
        if r4:
            word = {-1: "sooner than", 0: "as soon as (within 1 %)", 1: "later than"}
            sim = _sign(r4["cfs+dwcfs"]["B_s"], r4["cfs"]["B_s"])
            ideal = _sign(r4["cfs+dwcfs"]["fluid_B_s"], r4["cfs"]["fluid_B_s"])
            lines.append(f"* m = 4: B finishes {word[sim]} under CFS ({r4['cfs+dwcfs']['B_s']} against "
                         f"{r4['cfs']['B_s']} s); with α(4, {n}) = {alpha(4, n):.3f}, in the fluid ideal it "
                         f"finishes {word[ideal]} under CFS ({r4['cfs+dwcfs']['fluid_B_s']} against "
                         f"{r4['cfs']['fluid_B_s']} s): "
                         + ("the algorithm's effect, not the simulator's." if sim == ideal else
                            "the simulator differs from the ideal here (per-CPU queues: 5 threads on "
                            f"{n} CPUs cannot be split evenly)."))
        lines.append("")
    rows4 = res["runs"].get("4", [])
    lines += _claims(rows4)
    small = [r["m"] for r in rows4 if r["m"] + 1 <= 4]
    lines += [f"The seed's m <= 3 effects (both processes sooner under DW-CFS, §4.3 (2) and (3)) are not "
              f"reproduced: on 4 CPUs with m = {_ms(small)} every thread has a CPU of its own, so weights "
              "cannot change finish times in this model. The seed credits Turbo Boost on its i5-520M "
              "(2 cores, 4 threads, 2.40 GHz, §4.1 Table 1); it gives no turbo steps or their rules, so "
              "this experiment does not model them (the simulator has frequency levels and SMT "
              "throughput, docs/model.md).", ""]
    return lines


def _markdown(res: dict, spec: dict) -> str:
    lines = [
        "# Seed 003: DW-CFS and PFS against CFS reproduced",
        "",
        f"Process A (1 thread) against process B (m threads), {spec['work_s']} s of work each "
        "(B's split equally), started together; finish times in seconds, simulated and fluid ideal "
        f"(in brackets). {spec['platform']['note']}",
        "",
        f"Published ({spec.get('published_source', 'seed Figure 6')}):",
        "",
    ]
    lines += [f"* {p}" for p in spec["published"]]
    for cpus, rows in res["runs"].items():
        lines += [
            "",
            f"## {cpus} CPUs",
            "",
            "| m | " + " | ".join(f"{p} A | {p} B" for p in spec["schedulers"]) + " |",
            "|---|" + "---|---|" * len(spec["schedulers"]),
        ]
        for r in rows:
            cells = [
                f"{r[p]['A_s']} ({r[p]['fluid_A_s']}) | {r[p]['B_s']} ({r[p]['fluid_B_s']})"
                for p in spec["schedulers"]
            ]
            lines.append(f"| {r['m']} | " + " | ".join(cells) + " |")
        lines += ["", f"![finish times, {cpus} CPUs](finish_{cpus}cpu.svg)"]
    lines += [""] + _examples_lines(res, spec)
    lines += ["", "## How close, and why not closer", ""] + _discussion(res, spec)
    return "\n".join(lines)
