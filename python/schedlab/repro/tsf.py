"""Seed 000: dynamic time-slice scaling (TSF) for fairness under DVFS
(../shared/seeds/000_2bfda8e48e1e19e7.txt, spec: seed-algorithms.md §1).

Three pairs of SPEC CPU2000-like task types, 8 tasks of each type per pair,
all CPUs at one frequency from 2.53 down to 0.93 GHz. For every task
CRSR_i(f) = progress at f / progress at 2.53 GHz (progress = full-speed work
done in the same time); Fair_Degree = population standard deviation of the
CRSR over the 16 tasks; with and without TSF (``cfs+tsf`` vs ``cfs``, the
seed's Linux being CFS; ``eevdf`` too). The TSF computation's cost is charged
as CPU time and reported as overhead and throughput loss.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Callable, Dict, List

from ..api import simulate
from .figures import pyplot, save

SCHEDULERS = ("cfs", "eevdf")


def _workload(spec: dict, pair: List[str]) -> dict:
    n = spec["tasks_per_benchmark"]
    tasks = {
        b: {"instance": n, "run": 1_000_000, "memory_intensity": spec["benchmarks"][b]["memory_intensity"]}
        for b in pair
    }
    return {"global": {"duration": spec["platform"]["duration_s"], "calibration": 100}, "tasks": tasks}


def _run(spec: dict, pair: List[str], sched: str, mhz: int) -> dict:
    plat, pmu = spec["platform"], spec["pmu"]
    tun = {
        "mem_latency_ns": pmu["mem_latency_ns"],
        "pmu_noise_pct": pmu["noise_pct"],
        "tsf_cost_ns": pmu["tsf_cost_ns"],
    }
    r = simulate(
        _workload(spec, pair),
        sched,
        plat["cpus"],
        hz=plat["hz"],
        freq_mhz=[(mhz, plat["f_max_mhz"])],
        set=tun if sched.endswith("+tsf") else None,
        seed=1,
    )
    t = r.tasks
    return {
        "work": dict(zip(t.name, t.work_done_us)),
        "throughput_us": r.metrics.work_done_us,
        "overhead_us": r.metrics.policy_overhead_us,
        "updates": r.metrics.policy_updates,
        "cpu_us": float(t.cpu_time_us.sum()),
    }


def _fair_degree(work: Dict[str, float], base: Dict[str, float]) -> float:
    return statistics.pstdev([work[k] / base[k] for k in base])


def run(spec: dict, out: Path, log: Callable[[str], None]) -> dict:
    fmax = spec["platform"]["f_max_mhz"]
    freqs = [f for f in spec["frequencies_mhz"] if f != fmax]
    res: dict = {
        "platform": spec["platform"],
        "benchmarks": spec["benchmarks"],
        "pmu": spec["pmu"],
        "pairs": [],
    }
    for pair in spec["pairs"]:
        name = "+".join(pair)
        entry: dict = {"pair": name, "points": []}
        base = {s: _run(spec, pair, s, fmax)["work"] for s in SCHEDULERS}
        for f in freqs:
            log(f"{name} at {f} MHz")
            pt: dict = {"mhz": f}
            for s in SCHEDULERS:
                plain = _run(spec, pair, s, f)
                tsf = _run(spec, pair, s + "+tsf", f)
                fd0, fd1 = _fair_degree(plain["work"], base[s]), _fair_degree(tsf["work"], base[s])
                pt[s] = {
                    "fair_degree": round(fd0, 4),
                    "fair_degree_tsf": round(fd1, 4),
                    "improvement_pct": round(100 * (fd0 - fd1) / fd0, 1) if fd0 > 0 else None,
                    "throughput_ratio_tsf": round(tsf["throughput_us"] / plain["throughput_us"], 4),
                    "tsf_overhead_pct": round(100 * tsf["overhead_us"] / tsf["cpu_us"], 3),
                    "tsf_updates_per_s": round(tsf["updates"] / spec["platform"]["duration_s"], 1),
                }
            entry["points"].append(pt)
        res["pairs"].append(entry)
    imps = [p["cfs"]["improvement_pct"] for e in res["pairs"] for p in e["points"]]
    res["summary"] = {
        "cfs_improvement_min_pct": min(imps),
        "cfs_improvement_max_pct": max(imps),
        "cfs_worse_points": sum(1 for i in imps if i < 0),
        "points": len(imps),
    }
    res["published"] = spec["published"]
    (out / "report.json").write_text(json.dumps(res, indent=2) + "\n", encoding="utf-8")
    _plot(res, out)
    (out / "report.md").write_text(_markdown(res, spec), encoding="utf-8")
    return res


def _plot(res: dict, out: Path) -> None:
    plt = pyplot()

    fig, axes = plt.subplots(1, len(res["pairs"]), figsize=(4 * len(res["pairs"]), 3.4), sharey=True)
    for ax, e in zip(axes, res["pairs"]):
        xs = [p["mhz"] / 1000 for p in e["points"]]
        ax.plot(xs, [p["cfs"]["fair_degree"] for p in e["points"]], marker="o", label="CFS")
        ax.plot(xs, [p["cfs"]["fair_degree_tsf"] for p in e["points"]], marker="s", label="CFS + TSF")
        ax.set_title(e["pair"])
        ax.set_xlabel("frequency (GHz)")
        ax.invert_xaxis()
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("Fair_Degree (std of CRSR)")
    axes[0].legend()
    fig.tight_layout()
    for ext in ("png", "svg"):
        save(fig, out / "fair_degree", (ext,))
    plt.close(fig)


def _markdown(res: dict, spec: dict) -> str:
    plat, pmu, pub, s = res["platform"], res["pmu"], res["published"], res["summary"]
    lines = [
        "# Seed 000: dynamic time-slice scaling (TSF) under DVFS reproduced",
        "",
        f"Simulator, {plat['cpus']} CPUs at one frequency (userspace governor), f_max {plat['f_max_mhz']} MHz, "
        f"{plat['duration_s']} s per point, 8 tasks of each type. {plat['note']} "
        "CRSR_i = full-speed work done at f / at f_max; Fair_Degree = population standard deviation of "
        "CRSR over the 16 tasks (the seed's Formula 10 does not say which). "
        f"TSF from a synthetic PMU: L_mem {pmu['mem_latency_ns']} ns, {pmu['note']}",
        "",
        "Task types (memory intensity = fraction of full-speed time stalled on memory):",
        "",
    ]
    for b, d in res["benchmarks"].items():
        lines.append(f"* `{b}` μ = {d['memory_intensity']}: {d['character']}")
    lines += [
        "",
        "## Fairness improvement, CFS vs CFS + TSF",
        "",
        f"Published: improvements {pub['improvement_min_pct']} %..{pub['improvement_max_pct']} %, "
        f"{pub['worse_points']} of {pub['points']} points slightly worse ({pub['worse_where']}).",
        "",
        f"Ours (CFS): {s['cfs_improvement_min_pct']} %..{s['cfs_improvement_max_pct']} %, "
        f"{s['cfs_worse_points']} of {s['points']} points worse.",
        "",
        "| pair | GHz | Fair_Degree CFS | + TSF | improvement | EEVDF | + TSF | improvement "
        "| throughput with TSF | TSF overhead | TSF updates/s |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for e in res["pairs"]:
        for p in e["points"]:
            c, v = p["cfs"], p["eevdf"]
            lines.append(
                f"| {e['pair']} | {p['mhz'] / 1000:.2f} | {c['fair_degree']} | {c['fair_degree_tsf']} | "
                f"{c['improvement_pct']} % | {v['fair_degree']} | {v['fair_degree_tsf']} | "
                f"{v['improvement_pct']} % | {c['throughput_ratio_tsf']} | {c['tsf_overhead_pct']} % | "
                f"{c['tsf_updates_per_s']} |"
            )
    worse = "never negative" if s["cfs_worse_points"] == 0 else f"negative at {s['cfs_worse_points']} points"
    ratios = [p["cfs"]["throughput_ratio_tsf"] for e in res["pairs"] for p in e["points"]]
    overhead = max(p["cfs"]["tsf_overhead_pct"] for e in res["pairs"] for p in e["points"])
    lines += [
        "",
        "![Fair_Degree](fair_degree.svg)",
        "",
        "## How close, and why not closer",
        "",
        "TSF's direction is reproduced: without it the core-bound tasks lose the full factor f/f_max while "
        "mcf-like tasks keep most of their progress, and TSF lowers Fair_Degree at every point. Our "
        f"improvements ({s['cfs_improvement_min_pct']} %..{s['cfs_improvement_max_pct']} %) sit higher than "
        f"the seed's ({pub['improvement_min_pct']} %..{pub['improvement_max_pct']} %) and are "
        f"{worse} "
        "because the simulated programs have a constant memory intensity: the TSF estimated from the last "
        "quantum is right for the next one up to the PMU noise. The seed's programs change phase (its own "
        "explanation of the two worse points: TSF from one period applied to the next depends on program "
        "locality), and its PMU events and L_mem only approximate the stall time. What remains of "
        "Fair_Degree with TSF here comes from per-CPU queues: with unequal weights the balancer cannot "
        f"split 16 tasks over 4 CPUs exactly. Throughput with TSF is {min(ratios):.3f}..{max(ratios):.3f} "
        "of CFS's: CPU time moves to core-bound tasks, whose progress per CPU second is lower at low "
        "frequency, so total full-speed work falls most for the mcf pairs at the lowest frequencies; the "
        f"TSF computation itself costs at most {overhead} % of CPU time at 1 µs per computation.",
        "",
    ]
    return "\n".join(lines)
