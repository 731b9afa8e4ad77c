"""Seed 004: experiments on CFS (../shared/seeds/004_08ef216f0630b6b8.txt) in the simulator,
one CPU, autogroup off, under ``cfs`` (6.1) and ``eevdf`` (6.12):

(a) two CPU hogs with equal work at nice 0/0, 0/19, 0/-20: CPU time and wall time of each;
(b) four hogs for 10 s: context switches at the default slice and at 5x and 1/5 of it
    (``cfs``: sched_latency_ns and sched_min_granularity_ns; ``eevdf``: base_slice_ns);
(c) a hog beside an I/O-like task (a short spin then a 5 ms sleep, 5,000 times): the hog's
    context switches and the I/O task's CPU and wall time against its 25 s of sleeping.

With ``--host`` (root) the same three run on this machine's kernel through ``schedlab host run``,
pinned to one CPU, each beside the simulator on the identical workload under the scheduler matching
the running kernel (slice factors as per-task slices on both sides: base_slice_ns is read-only
under lockdown).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable, Dict, List, Tuple

from ..api import schedulers, simulate
from .rows import by_name, isum, named, task_rows


def _defaults() -> Dict[str, Dict[str, int]]:
    return {s["name"]: {t["name"]: t["default"] for t in s["tunables"]} for s in schedulers()["schedulers"]}


def cfs_slice_ns(latency_ns: int, min_gran_ns: int, n: int) -> int:
    """CFS 5.15 `sched_slice` of one of n equal-weight tasks: the period is the latency while n
    is at most sched_nr_latency = ⌈latency / min_granularity⌉, else n × min_granularity
    (`__sched_period`; linux-cfs.md)."""
    nr_latency = -(-latency_ns // min_gran_ns)
    period = latency_ns if n <= nr_latency else n * min_gran_ns
    return period // n


def expected_switches(step: dict, n: int, hz: int, seconds: int) -> dict:
    """The tick floor: `check_preempt_tick` runs only at ticks (no HRTICK) and preempts once the
    running time exceeds the slice, so each task runs ⌊slice / tick⌋ + 1 ticks. ``switches`` is
    the unrounded quotient seconds / run (a float: 416.67, not 416)."""
    tick = 1_000_000_000 // hz
    slice_ns = cfs_slice_ns(step["latency_ns"], step["min_granularity_ns"], n)
    run_ns = (slice_ns // tick + 1) * tick
    return {"slice_ms": slice_ns / 1e6, "runs_ms": run_ns / 1e6, "switches": seconds * 1_000_000_000 / run_ns}


def _pct(got: float, want: float) -> str:
    """The difference of ``got`` from ``want``, as printed in the report."""
    return f"{100 * (got - want) / want:+.1f} %"


def shown_expectation(want: float, got: float) -> str:
    """``want`` rounded (never truncated) to the fewest decimals, one at least unless it is a whole
    number, from which a reader recomputes the same percentage (``_pct``) as the unrounded value gives."""
    pct = _pct(got, want)
    for d in range(0 if want == int(want) else 1, 7):
        if _pct(got, round(want, d)) == pct:
            return f"{want:.{d}f}"
    return repr(want)


def run(spec: dict, out: Path, log: Callable[[str], None]) -> dict:
    cpus, scheds = spec["cpus"], spec["schedulers"]
    res: dict = {"nice": [], "slices": [], "io": []}
    w = spec["nice"]["work_s"] * 1_000_000
    for a, b in spec["nice"]["pairs"]:
        for s in scheds:
            log(f"nice {a}/{b} under {s}")
            wl = {
                "global": {"calibration": 100},
                "tasks": {"A": {"loop": 1, "priority": a, "run": w}, "B": {"loop": 1, "priority": b, "run": w}},
            }
            t = by_name(simulate(wl, s, cpus))
            res["nice"].append(
                {
                    "nice": [a, b],
                    "scheduler": s,
                    "cpu_s": [round(t[k]["cpu_time_us"] / 1e6, 3) for k in "AB"],
                    "wall_s": [round(t[k]["turnaround_us"] / 1e6, 3) for k in "AB"],
                }
            )
    defaults = _defaults()
    sl = spec["slices"]
    hogs_wl = {"global": {"duration": sl["seconds"]},
               "tasks": {"h": {"instance": sl["hogs"], "run": 1_000_000}}}
    for hz in sl["hz"]:
        for st in sl["seed_steps"]:
            knobs = {"latency_ns": st["latency_ns"], "min_granularity_ns": st["min_granularity_ns"]}
            log(f"{sl['hogs']} hogs under cfs, {st['step']}, HZ {hz}")
            r = simulate(hogs_wl, "cfs", cpus, hz=hz, set=knobs)
            res["slices"].append({"scheduler": "cfs", "step": st["step"], "hz": hz, "set": knobs,
                                  "context_switches": int(r.metrics.context_switches),
                                  "expected": expected_switches(st, sl["hogs"], hz, sl["seconds"])})
    for f in sl["eevdf_factors"]:
        knobs = {"base_slice_ns": int(defaults["eevdf"]["base_slice_ns"] * f)}
        log(f"{sl['hogs']} hogs under eevdf, base slice x{f}")
        r = simulate(hogs_wl, "eevdf", cpus, hz=sl["hz"][0], set=knobs)
        res["slices"].append({"scheduler": "eevdf", "step": f"base slice x{f}", "hz": sl["hz"][0], "set": knobs,
                              "context_switches": int(r.metrics.context_switches), "expected": None})
    io = spec["io"]
    for s in scheds:
        log(f"hog + I/O task under {s}")
        wl = {
            "global": {"calibration": 100},
            "tasks": {
                "hog": {"loop": 1, "run": io["hog_work_s"] * 1_000_000},
                "io": {"loop": io["loops"], "run": io["spin_us"], "sleep": io["sleep_us"]},
            },
        }
        t = by_name(simulate(wl, s, cpus))
        alone_wl = {"global": {"calibration": 100}, "tasks": {"hog": wl["tasks"]["hog"]}}
        alone = by_name(simulate(alone_wl, s, cpus))
        ideal = io["loops"] * (io["sleep_us"] + io["spin_us"]) / 1e6
        res["io"].append(
            {
                "scheduler": s,
                "hog_switches": int(t["hog"]["nvcsw"] + t["hog"]["nivcsw"]),
                "hog_switches_alone": int(alone["hog"]["nvcsw"] + alone["hog"]["nivcsw"]),
                "io_cpu_ms": round(t["io"]["cpu_time_us"] / 1000, 3),
                "io_wall_s": round(t["io"]["turnaround_us"] / 1e6, 3),
                "io_ideal_s": ideal,
                "io_latency_p99_us": round(t["io"]["wakeup_latency_p99_us"], 1),
            }
        )
    if spec.get("host", {}).get("enabled"):
        res["host"] = _host_half(spec, log)
    res["published"] = {k: spec[k]["published"] for k in ("nice", "slices", "io")}
    (out / "report.json").write_text(json.dumps(res, indent=2) + "\n", encoding="utf-8")
    (out / "report.md").write_text(_markdown(res, spec), encoding="utf-8")
    return res


def _host_run(wl: dict, tmp: Path, name: str) -> Tuple[dict, dict]:
    from ..host import run as host_run

    p = tmp / f"{name}.json"
    p.write_text(json.dumps(wl), encoding="utf-8")
    res, info = host_run(str(p))
    return dict(res.metrics), info


def _host_half(spec: dict, log: Callable[[str], None]) -> dict:
    """The same three experiments on this machine's kernel, pinned to one CPU; each paired with the
    simulator on the same (scaled) workload under the scheduler matching the running kernel."""
    import platform
    import tempfile

    from ..host.probe import matching_scheduler

    h = spec["host"]
    cpu = [h["cpu"]]
    kernel = platform.release()
    sim_sched = matching_scheduler()
    out: dict = {
        "kernel": kernel,
        "simulator": sim_sched,
        "seconds_slices": h["seconds_slices"],
        "note": h["note"],
        "nice": [],
        "slices": {},
        "io": {},
    }
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        w = h["nice_work_s"] * 1_000_000
        for a, b in spec["nice"]["pairs"]:
            log(f"host: nice {a}/{b}")
            wl = {
                "global": {"duration": 4 * h["nice_work_s"], "calibration": 100},
                "tasks": {
                    "A": {"loop": 1, "priority": a, "cpus": cpu, "run": w},
                    "B": {"loop": 1, "priority": b, "cpus": cpu, "run": w},
                },
            }
            m, info = _host_run(wl, tmp, f"nice{a}{b}")
            out.setdefault("steal_ms", []).append(sum(c["steal"] for c in info["cpu_ms"].values()))
            cpu_s = {t["name"]: round(t["cpu_time_us"] / 1e6, 3) for t in m["tasks"]}
            wall = {k: round(v["wall_ns"] / 1e9, 3) for k, v in info["threads"].items()}
            sim = by_name(simulate(
                {**wl, "tasks": {k: {**v, "cpus": [0]} for k, v in wl["tasks"].items()}}, sim_sched, 1
            ))
            out["nice"].append(
                {
                    "nice": [a, b],
                    "host_cpu_s": [cpu_s.get("A"), cpu_s.get("B")],
                    "host_wall_s": [wall.get("A"), wall.get("B")],
                    "sim_wall_s": [round(float(sim[k]["turnaround_us"]) / 1e6, 3) for k in "AB"],
                }
            )
        # (b) The kernel's base_slice_ns is read-only under lockdown (host.md §0), so every factor,
        # the default included, is a per-task slice (sched_setattr) on both sides: the same workload.
        base_ns = info.get("base_slice_ns") or 1_400_000
        out["slices"] = {"base_slice_ns": base_ns, "rows": []}
        for factor in spec["slices"]["eevdf_factors"]:
            log(f"host: 4 hogs, slice x{factor}")
            slice_us = max(100, round(base_ns * factor / 1000))
            wl = {
                "global": {"duration": h["seconds_slices"]},
                "tasks": {"h": {"instance": spec["slices"]["hogs"], "cpus": cpu, "run": 1_000_000,
                                "dl-runtime": slice_us}},
            }
            m, hinfo = _host_run(wl, tmp, "slices")
            sim_wl = {**wl, "tasks": {"h": {**wl["tasks"]["h"], "cpus": [0]}}}
            runs_per_s = hinfo["other_load"]["runs"] / h["seconds_slices"]

            def switches(r) -> int:
                return isum(t["nvcsw"] + t["nivcsw"] for t in task_rows(r) if t["name"].startswith("h"))

            out["slices"]["rows"].append({
                "factor": factor, "slice_us": slice_us,
                "host_switches": sum(t["nvcsw"] + t["nivcsw"] for t in m["tasks"]),
                "sim_switches": switches(simulate(sim_wl, sim_sched, 1)),
                "other_runs_per_s": round(runs_per_s, 1),
            })
        io = spec["io"]
        log("host: hog + I/O task")
        loops = h["io_loops"]
        wl = {
            "global": {"duration": int(loops * io["sleep_us"] / 1e6 * 2) + 2, "calibration": 100},
            "tasks": {
                "hog": {"cpus": cpu, "run": 100_000},
                "io": {"loop": loops, "cpus": cpu, "run": io["spin_us"], "sleep": io["sleep_us"]},
            },
        }
        m, info = _host_run(wl, tmp, "io")
        t = named(m["tasks"])
        sim_wl = {"global": wl["global"], "tasks": {k: {**v, "cpus": [0]} for k, v in wl["tasks"].items()}}
        st = by_name(simulate(sim_wl, sim_sched, 1))
        out["io"] = {
            "loops": loops,
            "ideal_s": loops * (io["sleep_us"] + io["spin_us"]) / 1e6,
            "host_io_wall_s": round(info["threads"]["io"]["wall_ns"] / 1e9, 3),
            "sim_io_wall_s": round(float(st["io"]["turnaround_us"]) / 1e6, 3),
            "host_io_cpu_ms": round(t["io"]["cpu_time_us"] / 1000, 3),
            "sim_io_cpu_ms": round(float(st["io"]["cpu_time_us"]) / 1000, 3),
            "host_io_latency_p50_us": t["io"]["wakeup_latency_p50_us"],
            "sim_io_latency_p50_us": float(st["io"]["wakeup_latency_p50_us"]),
        }
    return out


def _markdown(res: dict, spec: dict) -> str:
    lines: List[str] = [
        "# Seed 004: experiments on CFS, simulator half",
        "",
        "One CPU, autogroup off. `schedlab repro cfs-lab --host` adds the same workloads on this machine's "
        "kernel (root). The seed gives its kernel's scheduler settings and its steps as numbers, its "
        "measurements as screenshots, except the I/O task's ~27 s.",
        "",
        "## (a) nice: two hogs with equal work",
        "",
        f"Published: {res['published']['nice']}.",
        "",
        "| nice A/B | scheduler | CPU s A | CPU s B | wall s A | wall s B |",
        "|---|---|---|---|---|---|",
    ]
    for r in res["nice"]:
        lines.append(
            f"| {r['nice'][0]}/{r['nice'][1]} | {r['scheduler']} | {r['cpu_s'][0]} | {r['cpu_s'][1]} | "
            f"{r['wall_s'][0]} | {r['wall_s'][1]} |"
        )
    lines += ["", f"## (b) slice knobs: {spec['slices']['hogs']} hogs, context switches in "
              f"{spec['slices']['seconds']} s", "",
              f"Published: {res['published']['slices']}.", "", _slices_lines(res, spec), ""]
    lines += [
        "## (c) a hog beside an I/O-like task",
        "",
        f"Published: {res['published']['io']}.",
        "",
        "| scheduler | hog switches | hog switches alone | I/O CPU ms | I/O wall s | ideal s "
        "| I/O wakeup p99 µs |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in res["io"]:
        lines.append(
            f"| {r['scheduler']} | {r['hog_switches']} | {r['hog_switches_alone']} | {r['io_cpu_ms']} | "
            f"{r['io_wall_s']} | {r['io_ideal_s']} | {r['io_latency_p99_us']} |"
        )
    lines += ["", *_io_lines(res, spec), ""]
    if "host" in res:
        lines += _host_markdown(res["host"])
    return "\n".join(lines)


def _io_lines(res: dict, spec: dict) -> List[str]:
    """The I/O task's turnaround: the seed's ~27 s, ours, and the host's, as excess per loop."""
    io = spec["io"]
    loops, pub = io["loops"], io.get("published_wall_s")
    ideal = res["io"][0]["io_ideal_s"]
    per = {r["scheduler"]: (r["io_wall_s"] - ideal) / loops * 1e6 for r in res["io"]}
    out = [f"Turnaround beyond the {ideal:g} s of sleeping and spinning, per loop: "
           + ", ".join(f"simulated {s} {v:.1f} µs" for s, v in per.items())]
    if pub:
        seed = (pub - ideal) / loops * 1e6
        pct = 100 * (pub - ideal) / ideal
        out[0] += f"; the seed's ~{pub} s is about {seed:.0f} µs per loop ({pct:+.0f} %)"
    h = res.get("host", {}).get("io")
    if h:
        hp = (h["host_io_wall_s"] - h["ideal_s"]) / h["loops"] * 1e6
        pct = 100 * (h["host_io_wall_s"] - h["ideal_s"]) / h["ideal_s"]
        out[0] += f"; this machine's kernel {hp:.1f} µs per loop ({pct:+.1f} %)"
    out[0] += "."
    out.append("")
    out.append("The simulated excess is the model's wakeup path (timer slack 50 µs, wakeup and idle-exit "
               "costs; docs/model.md, wakeup costs). The seed's excess stays unexplained: usleep's timer "
               "slack, a wakeup onto a CPU running the hog, and the process start measured by `perf stat` "
               "each account for tens of microseconds per loop at most, not hundreds; the seed gives no "
               "breakdown, and its I/O task's spin loop (1,000 iterations at -O0) could take longer on its "
               "machine than our 2 µs estimate.")
    return out


def _slices_lines(res: dict, spec: dict) -> str:
    sl = spec["slices"]
    rows = ["The seed's steps on the CFS model (Linux 6.1, close to its 5.15), one CPU; "
            f"{sl['hz_note']}. Expected = {sl['seconds']} s / (⌊slice / tick⌋ + 1 ticks), unrounded: "
            "preemption happens only at a tick, so a slice shorter than a tick lasts a whole tick (the tick "
            "floor).", "",
            "| step | HZ | latency / min_granularity | slice | runs per turn | expected switches "
            "| simulated | difference |", "|---|---|---|---|---|---|---|---|"]
    worst = 0.0
    for r in res["slices"]:
        e = r["expected"]
        if e is None:
            continue
        # From the unrounded expectation; the printed one recomputes to the same percentage.
        diff = (r["context_switches"] - e["switches"]) / e["switches"]
        worst = max(worst, abs(diff))
        rows.append(f"| {r['step']} | {r['hz']} | {r['set']['latency_ns'] / 1e6:g} / "
                    f"{r['set']['min_granularity_ns'] / 1e6:g} ms | {e['slice_ms']:g} ms | {e['runs_ms']:g} ms "
                    f"| {shown_expectation(e['switches'], r['context_switches'])} | {r['context_switches']} "
                    f"| {_pct(r['context_switches'], e['switches'])} |")
    base = {r["hz"]: r["context_switches"] for r in res["slices"] if r["step"].startswith("(2)")}
    verdicts = []
    for r in res["slices"]:
        if r["expected"] is None or r["step"].startswith("(2)"):
            continue
        want = "fewer" if r["step"].startswith(("(3)", "(5)")) else "more"
        got = r["context_switches"]
        b = base[r["hz"]]
        ok = got < b if want == "fewer" else got > b
        verdicts.append(f"{r['step']} at HZ {r['hz']}: {got} against {b} ({want} expected: "
                        f"{'agrees' if ok else 'differs'})")
    rows += ["", f"Simulated against the tick-floor closed form: within {100 * worst:.1f} % everywhere. "
             "The seed's expectations against the defaults (2): " + "; ".join(verdicts) + ".", ""]
    floor = [r for r in res["slices"] if r["expected"] and r["expected"]["slice_ms"] * 1e6 < 1e9 / r["hz"]]
    if floor:
        where = ", ".join(f"{r['step']} at HZ {r['hz']}" for r in floor)
        rows.append(f"Where the slice is below a tick ({where}) the knob's effect is cut at the tick: "
                    "shrinking it further changes nothing.")
    rows += ["", f"{sl['eevdf_note']}:", "", "| base slice | context switches |", "|---|---|"]
    rows += [f"| {r['set']['base_slice_ns'] / 1e6:g} ms | {r['context_switches']} |"
             for r in res["slices"] if r["scheduler"] == "eevdf"]
    return "\n".join(rows)


def _us(v: object) -> str:
    """A latency, or why there is none (null: not measured, or withheld as unreliable)."""
    return "not measured (or withheld as unreliable)" if v is None else f"{v} µs"


def _rel(a: float, b: float) -> str:
    return "n/a" if not a else f"{100 * (b - a) / a:+.1f} %"


def _host_slice_verdicts(s: dict, seconds: int = 10) -> List[str]:
    """Computed from this run's rows: which slices sit below the tick, and how far host and
    simulator are apart above it."""
    tick_us = 4000
    per_tick = seconds * 1_000_000 // tick_us
    below = [r for r in s["rows"] if r["slice_us"] < tick_us]
    above = [r for r in s["rows"] if r["slice_us"] >= tick_us]
    out = []
    if below:
        out.append(f"Below the {tick_us / 1000:g} ms tick (slices "
                   + ", ".join(f"{r['slice_us']} µs" for r in below)
                   + ") the switch counts are " + ", ".join(f"host {r['host_switches']} / simulated "
                                                           f"{r['sim_switches']}" for r in below)
                   + f" (one per tick would be {per_tick:,} in {seconds} s).")
    if above:
        pairs = [f"{r['slice_us']} µs: host {r['host_switches']}, simulated {r['sim_switches']} "
                 f"({_rel(r['sim_switches'], r['host_switches'])})" for r in above]
        out.append("Above it: " + ", ".join(pairs)
                   + "; a slice lasting several ticks can be ended early by another task waking on the CPU, "
                   "which the simulator's `noise_interval_us` models only on average.")
    out.append("The host kernel is EEVDF: these are per-task slices (sched_setattr), not the seed's "
               "sched_latency_ns / sched_min_granularity_ns, which EEVDF kernels no longer have.")
    return out


def _host_markdown(h: dict) -> List[str]:
    lines = [
        "## Real kernel beside the simulator",
        "",
        f"Linux {h['kernel']} against the simulator's `{h['simulator']}`; {h['note']}.",
        "",
        "| nice A/B | host CPU s | host wall s | simulated wall s | difference (wall) |",
        "|---|---|---|---|---|",
    ]
    for r in h["nice"]:
        diffs = ", ".join(_rel(s, x) for s, x in zip(r["sim_wall_s"], r["host_wall_s"]) if s and x)
        lines.append(
            f"| {r['nice'][0]}/{r['nice'][1]} | {r['host_cpu_s']} | {r['host_wall_s']} | {r['sim_wall_s']} "
            f"| {diffs} |"
        )
    s = h["slices"]
    lines += [
        "",
        f"Four hogs for {h.get('seconds_slices', 10)} s, each with a per-task slice (sched_setattr) of the "
        f"kernel's base slice ({s['base_slice_ns'] / 1e6:g} ms) times the factor; the simulator runs the same "
        "workload (custom slices):",
        "",
        "| factor | slice µs | host switches | simulated | difference | other tasks' runs /s (all CPUs) |",
        "|---|---|---|---|---|---|",
    ]
    for r in s["rows"]:
        lines.append(f"| x{r['factor']} | {r['slice_us']} | {r['host_switches']} | {r['sim_switches']} | "
                     f"{_rel(r['sim_switches'], r['host_switches'])} | {r['other_runs_per_s']} |")
    lines += ["", *_host_slice_verdicts(s, h.get("seconds_slices", 10)), ""]
    io = h["io"]
    lines += [
        f"Hog + I/O task ({io['loops']} loops): I/O wall {io['host_io_wall_s']} s on the host, "
        f"{io['sim_io_wall_s']} s simulated (ideal {io['ideal_s']} s); I/O CPU {io['host_io_cpu_ms']} ms vs "
        f"{io['sim_io_cpu_ms']} ms; I/O wakeup latency p50 {_us(io['host_io_latency_p50_us'])} vs "
        f"{_us(io['sim_io_latency_p50_us'])} (the simulator's wakeup-path cost model, docs/model.md).",
        "",
    ]
    return lines
