"""``schedlab calibrate`` (issue 13): measure this machine's wakeup path on its live kernel and write
a machine profile (machine.py) the simulator can run with.

Each worker thread times how late it runs after each of its sleeps (``sleep_lateness_ns``), the
run's trace gives its waking-to-running latency (the simulator's ``wakeup_latency``, from
``sched_waking`` to the switch in), and ``schedlab-worker pingpong`` times a round trip between two
threads on one CPU.

* ``idle_rt``: a SCHED_FIFO sleeper alone on its CPU (no slack): IRQ, wakeup, idle exit, switch.
* ``busy_rt``: the same beside a hog on that CPU: IRQ, wakeup, preemption, switch.
* ``idle_other``: a SCHED_OTHER sleeper alone: ``idle_rt`` plus the timer slack.
* ``idle_short_rt``: ``idle_rt`` sleeping 1 ms instead of 5: a CPU idle that briefly exits sooner.
* ``pingpong``: two switches and two socket write/read pairs per round trip.
* ``wakeup``: a write on the first CPU waking a reader blocked on the measuring CPU, idle.
* ``noise``: a hog alone on the measuring CPU: how often other tasks interrupt it, and for how long.

Tunables: ``context_switch_ns`` = round trip / 2 (an upper bound: it includes the socket calls);
``idle_exit_ramp_ns`` from idle_short_rt's latency (``_idle_exit_ramp``);
``wakeup_ns`` = busy_rt's traced latency p50 and ``idle_exit_ns`` = idle_rt's minus busy_rt's, the
span the simulator puts between ``sched_waking`` and the switch (and, as the kernel's skipped clock
update does, charges to the wakee: docs/model.md, "Wakeup costs"). Where a trace was withheld as
unreliable, the lateness stands in (busy_rt p50 − context_switch_ns; idle_rt p50 − busy_rt p50),
as before 2026-11-26. The lateness beyond the traced latency (the timer interrupt's delivery, on a
VM much later to a halted vCPU, and the return to user space) is recorded, not modelled
(``*_late_beyond_latency_ns``); ``timer_slack_ns`` = idle_other p50 − idle_rt p50, the *effective*
slack (the setting, /proc/self/timerslack_ns, is recorded beside it: the timer fires earlier when
another timer on that
CPU expires inside the window, and on a VM a descheduled vCPU can stretch it past the setting);
``ipi_ns`` = remote wakeup p50 −
idle_rt p50 (an upper bound: it includes a write and a read); ``wakeup_spread_pct``: the value
with which the simulated busy_rt and idle_rt sleepers show the mean of their traced latency p90/p50
(``fit_spread``; the measured mean is kept as ``wakeup_spread_measured_pct``; the simulator draws
each delay with that p90 around its median) and ``wakeup_tail_pct`` = their mean p99/p90 (its tail);
``timer_jitter_ns`` = 2.5 × (idle_other p90 − p50), the width of a uniform delay with that spread;
``noise_interval_us`` and ``noise_runtime_us`` from a hog alone on the measuring CPU (``noise``):
its involuntary switches per second and the CPU time it lost per switch, as the simulator's per-CPU
noise thread; HZ from the kernel.

``smt_speed_pct`` (``smt_speed``): a hog's busy loop on one hardware thread of a core, with and
without a second hog on its sibling, in runs that alternate (``SMT_ROUNDS`` of each), with
``run`` work counted in calibrated loops (``--work loops``, rt-app's way: a fixed amount of work
whose duration follows the CPU's speed); each run's speed is the loops' nominal time over the
thread's CPU time by /proc, and the tunable is the median paired speed over the median alone.
On a machine without SMT siblings the same is measured on two separate cores as a control
(``smt_control_*``: near 100 unless something else is shared, e.g. vCPUs that share a physical
core) and the tunable is left at its default. Why through the runner rather than a tight loop of
its own: the figure is for the simulator's ``run`` work, which on the host is the worker's loop in
its threads (2026-11-27, this VM: a two-thread probe that busy-waited for its peer measured its
loop 2x slower paired where the runner's threads, and the same probe with a sleep instead,
measured no change; the runner's own figure is the one that applies).
"""

from __future__ import annotations

import datetime
import json
import os
import statistics
import subprocess
import tempfile
from typing import Any, Callable, Dict, List, Optional, Tuple

from .plan import HostError

# The sleepers' sleeps (us): the long one's idle CPU pays the whole idle exit (the simulator's
# default idle_exit_ramp_ns is this long), the short one's a share of it.
LONG_SLEEP_US, SHORT_SLEEP_US = 5000, 1000
# The FIFO sleepers' policy, on the host and in the simulator's fit of the spread (``fit_spread``).
FIFO = {"policy": "SCHED_FIFO", "priority": 50}


def _sleeper(policy: Dict[str, Any], cpu: int, seconds: int, hog: bool, sleep_us: int = LONG_SLEEP_US) -> dict:
    tasks: Dict[str, Any] = {"s": {"loop": -1, "cpus": [cpu], "run": 50, "sleep": sleep_us, **policy}}
    if hog:
        tasks["hog"] = {"cpus": [cpu], "run": 10_000_000}
    return {"global": {"duration": seconds}, "tasks": tasks}


def _run(workload: dict, tmp: str, name: str, work: str = "oncpu") -> Tuple[Any, Dict[str, Any]]:
    """`workload` run once on the host: (its results, the run's facts)."""
    from . import run

    path = os.path.join(tmp, f"{name}.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(workload, f)
    return run(path, work=work)


def _task(res: Any, name: str) -> Dict[str, Any]:
    """The metrics row of task `name` in a host run's results."""
    return next(t for t in res.metrics["tasks"] if t["name"] == name)


def _lateness(workload: dict, tmp: str, name: str) -> Dict[str, Any]:
    """The sleeper's lateness p50/p90 (its worker's clock) and its traced waking-to-running latency
    p50/p90/p99 (``latency_p50`` ...: None where the run withheld its trace as unreliable)."""
    res, info = _run(workload, tmp, name)
    late = info["threads"]["s"]["sleep_lateness_ns"]
    if not late["count"]:
        raise HostError(f"calibrate: {name}: the sleeper never slept")
    row = _task(res, "s")
    ns = {q: (None if row.get(f"wakeup_latency_{q}_us") is None
              else round(row[f"wakeup_latency_{q}_us"] * 1000)) for q in ("p50", "p90", "p99")}
    return {"p50": int(late["p50"]), "p90": int(late["p90"]),
            "latency_p50": ns["p50"], "latency_p90": ns["p90"], "latency_p99": ns["p99"]}


def _noise(cpu: int, seconds: int, tmp: str) -> Dict[str, float]:
    """A hog alone on `cpu` for `seconds`: how often other tasks (kernel threads, daemons) took the
    CPU from it and for how long, from its /proc counters (involuntary switches, CPU time)."""
    res, _ = _run({"global": {"duration": seconds}, "tasks": {"hog": {"cpus": [cpu], "run": 100_000_000}}},
                  tmp, "noise")
    hog = _task(res, "hog")
    return {"nivcsw": float(hog["nivcsw"]), "cpu_us": float(hog["cpu_time_us"])}


# Alone and paired runs of the SMT measurement, alternating.
SMT_ROUNDS = 3


def sibling_pair(cpus: List[int], prefer: int,
                 siblings: Callable[[int], Optional[str]]) -> Optional[Tuple[int, int]]:
    """Two hardware threads of one core among ``cpus`` (``prefer`` and its sibling where it has
    one), from each CPU's sysfs ``thread_siblings_list`` (``siblings(cpu)``: its text or None);
    None on a machine without SMT."""
    from .probe import cpu_list

    for cpu in [prefer] + [c for c in cpus if c != prefer]:
        text = siblings(cpu)
        others = [c for c in cpu_list(text) if c != cpu and c in cpus] if text else []
        if others:
            return cpu, others[0]
    return None


def smt_speed(cpu: int, other: int, seconds: int, tmp: str,
              log: Callable[[str], None]) -> Dict[str, Any]:
    """A hog on ``cpu`` alone and beside a hog on ``other``, ``SMT_ROUNDS`` runs of each,
    alternating: each run's speed of the first hog (its loops' nominal time, ``busy_cpu_ns``, over
    its CPU time by /proc) and ``pct``, the median paired speed over the median alone, in percent."""
    hog = {"run": 100_000_000}
    speeds: Dict[str, List[float]] = {"alone": [], "paired": []}
    for i in range(SMT_ROUNDS):
        for kind in ("alone", "paired"):
            tasks = {"a": {**hog, "cpus": [cpu]}}
            if kind == "paired":
                tasks["b"] = {**hog, "cpus": [other]}
            log(f"calibrate: smt {kind} {i + 1}/{SMT_ROUNDS} (CPU {cpu}"
                + (f" beside CPU {other})" if kind == "paired" else ")"))
            res, info = _run({"global": {"duration": seconds}, "tasks": tasks}, tmp, f"smt-{kind}", "loops")
            cpu_us = float(_task(res, "a")["cpu_time_us"])
            if cpu_us <= 0:
                raise HostError(f"calibrate: smt: the hog on CPU {cpu} never ran")
            speeds[kind].append(info["threads"]["a"]["busy_cpu_ns"] / (cpu_us * 1000))
    alone, paired = statistics.median(speeds["alone"]), statistics.median(speeds["paired"])
    return {"alone": [round(x, 4) for x in speeds["alone"]],
            "paired": [round(x, 4) for x in speeds["paired"]],
            "pct": round(100 * paired / alone)}


def _measure_smt(cpus: List[int], cpu: int, seconds: int, tmp: str, log: Callable[[str], None],
                 m: Dict[str, Any]) -> None:
    """``smt_speed`` on a sibling pair into ``m`` (``smt_*``), or, without SMT, on the measuring CPU
    and the first other one, separate cores (``smt_control_*``)."""
    from .probe import read

    if len(cpus) < 2:
        return
    pair = sibling_pair(cpus, cpu, lambda c: read(f"/sys/devices/system/cpu/cpu{c}/topology/"
                                                  "thread_siblings_list"))
    a, b = pair or (cpu, next(c for c in cpus if c != cpu))
    smt = smt_speed(a, b, seconds, tmp, log)
    key = "smt" if pair else "smt_control"
    m[f"{key}_cpus"] = [a, b]
    m[f"{key}_speed_alone"] = smt["alone"]
    m[f"{key}_speed_paired"] = smt["paired"]
    m[f"{key}_pct"] = smt["pct"]


def _smt_tunable(m: Dict[str, Any], tun: Dict[str, int], not_measured: Dict[str, str]) -> None:
    """``smt_speed_pct`` from a sibling pair's measurement, or why it is not measured."""
    if "smt_pct" in m:
        tun["smt_speed_pct"] = max(1, min(100, m["smt_pct"]))
        return
    why = "no SMT siblings on this machine (each CPU's thread_siblings_list is itself)"
    if "smt_control_pct" in m:
        why += f"; two separate cores beside each other ran at {m['smt_control_pct']} % of alone"
    not_measured["smt_speed_pct"] = why


SHAPES = (("wakeup_spread_pct", "p90", "p50", 1000), ("wakeup_tail_pct", "p99", "p90", 2000))


def latency_ratios(m: Dict[str, Any], hi: str, lo: str) -> List[float]:
    """Traced latency ``hi``/``lo`` of the FIFO sleepers, busy and idle, where both were measured."""
    return [m[f"{k}_latency_{hi}_ns"] / m[f"{k}_latency_{lo}_ns"] for k in ("busy_rt", "idle_rt")
            if m[f"{k}_latency_{lo}_ns"] and m[f"{k}_latency_{hi}_ns"] is not None]


def _delay_shape(m: Dict[str, Any], tun: Dict[str, int], not_measured: Dict[str, str]) -> None:
    """One shape for the wakeup path's delays (the simulator draws each around its median): the
    mean p90/p50 and p99/p90 of the two FIFO sleepers' traced latencies, in percent (the spread
    is then fitted through the simulator: ``fit_spread``)."""
    for key, hi, lo, top in SHAPES:
        rs = latency_ratios(m, hi, lo)
        if rs:
            tun[key] = min(top, round(100 * sum(rs) / len(rs)))
        else:
            not_measured[key] = "both sleepers' traces were withheld as unreliable"


def simulated_spread(tun: Dict[str, int], spread: int, hz: int, ncpus: int, cpu: int,
                     seconds: int) -> float:
    """The mean p90/p50 of the two FIFO sleepers' waking-to-running latency (beside a hog, alone)
    simulated with the tunables ``tun`` and ``wakeup_spread_pct`` = ``spread``."""
    from ..api import simulate

    ratios = []
    for hog in (True, False):
        r = simulate(_sleeper(FIFO, cpu, seconds, hog), "eevdf", ncpus, hz=hz,
                     set={**tun, "wakeup_spread_pct": spread})
        row = next(t for t in r.metrics["tasks"] if t["name"] == "s")
        ratios.append(row["wakeup_latency_p90_us"] / row["wakeup_latency_p50_us"])
    return sum(ratios) / len(ratios)


def fit_spread(tun: Dict[str, int], measured_pct: int, hz: int, ncpus: int, cpu: int,
               seconds: int) -> int:
    """The ``wakeup_spread_pct`` (100..``measured_pct``, steps of 5) whose simulated sleepers'
    mean p90/p50 (``simulated_spread``) is nearest the measured one. Why not the measured ratio
    itself: the simulated ratio exceeds the tunable, the rest of the path adding its own spread
    (2026-11-27: 1.96 onto an idle CPU and 2.2-2.4 beside hogs at 180), so a profile that took the
    measurement as the tunable over-spread every delay (docs/model.md, "Wakeup costs")."""
    target = measured_pct / 100
    best = (float("inf"), measured_pct)
    for spread in range(100, max(100, measured_pct) + 1, 5):
        err = abs(simulated_spread(tun, spread, hz, ncpus, cpu, seconds) - target)
        if err < best[0]:
            best = (err, spread)
    return best[1]


def _idle_exit_ramp(m: Dict[str, Any], wakeup: int, idle_exit: int) -> Optional[int]:
    """The simulator's ``idle_exit_ramp_ns`` from the idle sleepers: a CPU idle for d < ramp pays
    idle_exit * d / ramp, so the short sleeper's exit (its traced latency less ``wakeup``) gives
    ramp = idle_exit * short sleep / that exit, kept between the two sleeps (the long sleeper's
    exit is the whole one by definition; an exit no shorter than the whole one gives the short
    sleep, one of 0 or less the long sleep). None where the short sleeper's trace was withheld."""
    lat = m.get("idle_short_rt_latency_p50_ns")
    if lat is None:
        return None
    short, long = SHORT_SLEEP_US * 1000, LONG_SLEEP_US * 1000
    exit_short = lat - wakeup
    if exit_short <= 0:
        return long
    return max(short, min(long, round(idle_exit * short / exit_short)))


def calibrate(seconds: int = 3, log: Callable[[str], None] = lambda s: None) -> Dict[str, Any]:
    """Measure; returns the profile (not yet written)."""
    from . import facts, worker_path

    if os.geteuid() != 0:
        raise HostError("calibrate needs root (it runs workloads on the live kernel)")
    f = facts()
    cpus = sorted(int(c) for c in f["cpus"])
    cpu = cpus[-1]  # away from CPU 0's housekeeping
    m: Dict[str, Any] = {"cpu": cpu, "seconds_per_run": seconds}
    with tempfile.TemporaryDirectory(prefix="schedlab-calibrate-") as tmp:
        for name, pol, hog, sleep in (("idle_rt", FIFO, False, LONG_SLEEP_US),
                                      ("busy_rt", FIFO, True, LONG_SLEEP_US),
                                      ("idle_other", {}, False, LONG_SLEEP_US),
                                      ("idle_short_rt", FIFO, False, SHORT_SLEEP_US)):
            log(f"calibrate: {name} ({seconds:g} s on CPU {cpu})")
            late = _lateness(_sleeper(pol, cpu, seconds, hog, sleep), tmp, name)
            m[f"{name}_lateness_p50_ns"] = late["p50"]
            m[f"{name}_lateness_p90_ns"] = late["p90"]
            m[f"{name}_latency_p50_ns"] = late["latency_p50"]
            m[f"{name}_latency_p90_ns"] = late["latency_p90"]
            m[f"{name}_latency_p99_ns"] = late["latency_p99"]
            if late["latency_p50"] is not None:
                m[f"{name}_late_beyond_latency_ns"] = late["p50"] - late["latency_p50"]
        log(f"calibrate: noise ({seconds:g} s, a hog alone on CPU {cpu})")
        noise = _noise(cpu, seconds, tmp)
        m["noise_hog_nivcsw"] = int(noise["nivcsw"])
        m["noise_hog_cpu_us"] = round(noise["cpu_us"])
        _measure_smt(cpus, cpu, seconds, tmp, log, m)
    log("calibrate: pingpong")
    out = subprocess.run([worker_path(), "pingpong", str(cpu), "20000"], capture_output=True,
                         text=True, timeout=120)
    if out.returncode != 0:
        raise HostError(f"calibrate: pingpong: {out.stderr.strip()}")
    m["pingpong_round_trip_ns"] = round(json.loads(out.stdout)["round_trip_ns"])
    not_measured: Dict[str, str] = {}
    if len(cpus) >= 2:
        log("calibrate: remote wakeup")
        out = subprocess.run([worker_path(), "wakeup", str(cpus[0]), str(cpu), "1000"],
                             capture_output=True, text=True, timeout=120)
        if out.returncode != 0:
            raise HostError(f"calibrate: wakeup: {out.stderr.strip()}")
        m["remote_wake_p50_ns"] = int(json.loads(out.stdout)["remote_wake_p50_ns"])
    else:
        not_measured["ipi_ns"] = "one CPU: no remote wakeup to measure; the default stays"
    # The setting, beside the measured (effective) slack: a sleeper's timer fires at the end of its
    # slack window unless another timer on that CPU expires inside it.
    try:
        with open("/proc/self/timerslack_ns", encoding="utf-8") as fh:
            m["timer_slack_setting_ns"] = int(fh.read())
    except (OSError, ValueError):
        m["timer_slack_setting_ns"] = None
    cs = m["pingpong_round_trip_ns"] // 2
    busy_lat, idle_lat = m["busy_rt_latency_p50_ns"], m["idle_rt_latency_p50_ns"]
    if busy_lat is not None and idle_lat is not None:
        wakeup, idle_exit = busy_lat, max(0, idle_lat - busy_lat)
    else:
        wakeup = max(0, m["busy_rt_lateness_p50_ns"] - cs)
        idle_exit = max(0, m["idle_rt_lateness_p50_ns"] - m["busy_rt_lateness_p50_ns"])
        not_measured["traced_latency"] = ("a sleeper's trace was withheld as unreliable: wakeup_ns and "
                                          "idle_exit_ns come from its lateness")
    tun = {
        "context_switch_ns": cs,
        "wakeup_ns": wakeup,
        "idle_exit_ns": idle_exit,
        "timer_slack_ns": max(0, m["idle_other_lateness_p50_ns"] - m["idle_rt_lateness_p50_ns"]),
        # A uniform 0..J delay has p90 - p50 = 0.4 J: the spread of the sleeper's lateness, as the
        # width of the simulator's per-timer jitter (its run's spread from interrupts not included).
        "timer_jitter_ns": max(0, round(2.5 * (m["idle_other_lateness_p90_ns"]
                                               - m["idle_other_lateness_p50_ns"]))),
    }
    _delay_shape(m, tun, not_measured)
    ramp = _idle_exit_ramp(m, wakeup, idle_exit)
    if ramp is None:
        not_measured["idle_exit_ramp_ns"] = "the short idle sleeper's trace was withheld as unreliable"
    else:
        tun["idle_exit_ramp_ns"] = ramp
    _smt_tunable(m, tun, not_measured)
    if m["noise_hog_nivcsw"] > 0:
        # Each interruption: a noise thread's wakeup (the simulator's per-CPU daemon, engine/noise.rs)
        # taking what the hog lost, on average; its gap is the rest of the cycle.
        n, wall_us = m["noise_hog_nivcsw"], seconds * 1_000_000
        runtime = min(100_000, max(1, round((wall_us - m["noise_hog_cpu_us"]) / n)))
        tun["noise_runtime_us"] = runtime
        tun["noise_interval_us"] = min(10_000_000, max(1, round(wall_us / n) - runtime))
    else:
        not_measured["noise_interval_us"] = f"a hog alone on CPU {cpu} was never interrupted in {seconds} s"
    if "remote_wake_p50_ns" in m:
        # A remote wakeup onto an idle CPU against a local one (the idle FIFO sleeper): the
        # difference is the IPI, plus a write and a read (an upper bound).
        tun["ipi_ns"] = max(0, m["remote_wake_p50_ns"] - m["idle_rt_lateness_p50_ns"])
    if "wakeup_spread_pct" in tun:
        # The measured shape, kept; the tunable is what makes the simulated sleepers show it.
        m["wakeup_spread_measured_pct"] = tun["wakeup_spread_pct"]
        log("calibrate: fitting the delays' spread through the simulator")
        tun["wakeup_spread_pct"] = fit_spread(tun, tun["wakeup_spread_pct"], int(f.get("hz") or 250),
                                              max(cpus) + 1, cpu, seconds)
    return {
        "schedlab_machine_profile": 1,
        "measured_on": {"kernel": f.get("kernel"), "cpus": len(cpus), "hz": f.get("hz"),
                        "preempt": f.get("preempt"),
                        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")},
        "hz": int(f.get("hz") or 250),
        "tunables": tun,
        "measurements": m,
        "not_measured": not_measured,
    }
