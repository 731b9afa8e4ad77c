"""``schedlab host run WORKLOAD``: the same rt-app workload on this machine's kernel (issue 5, first cut).

What it does, in order:

1. Refuses, before touching anything, what it cannot run faithfully yet: task groups (cgroups),
   SCHED_DEADLINE, custom slices (``dl-runtime`` on fair policies: needs sched_setattr), phases
   that change attributes, and events other than run / runtime / sleep / timer / yield.
2. Probes: root, tracefs (mounted if needed, and unmounted afterwards), the native worker built
   by scripts/setup.sh.
3. Calibrates the busy loop, starts a cleanup guard (``schedlab.hostguard``), creates a private
   tracefs instance (mono clock, no overwrite, 8 MB per CPU, sched_switch / waking / wakeup /
   wakeup_new / migrate_task / process_exit), and starts one worker process per workload process
   with a thread per task; each thread sets comm, affinity, policy and nice / RT priority before
   a common start time, and every thread stops at the end time.
4. Stops tracing, checks dropped events, and always: kills the workers, removes the instance,
   unmounts tracefs if it mounted it (also on Ctrl-C, on error, and through the guard if the
   runner itself is killed). It changes no scheduler knob.
5. Imports the trace (tolerant mode, repairs reported) and keeps the worker threads, named as the
   simulator names them, so ``schedlab compare`` can put the two side by side.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from typing import Any, Dict, List, Optional, Tuple

from .api import SimResult, check, import_trace

TRACEFS = "/sys/kernel/tracing"
EVENTS = ["sched_switch", "sched_waking", "sched_wakeup", "sched_wakeup_new", "sched_migrate_task",
          "sched_process_exit"]
WORKER = os.path.join(os.path.dirname(__file__), "..", "..", "target", "release", "schedlab-worker")


class HostError(Exception):
    """The host runner refuses or fails (one-line message)."""


def _events(task: Dict[str, Any], source: str) -> List[Tuple[str, int]]:
    out: List[Tuple[str, int]] = []
    base = task["attrs"]
    for ph in task["phases"]:
        changed = [k for k, v in ph["attrs"].items() if v is not None and v != base.get(k)]
        if changed:
            raise HostError(f"{source}: tasks.{task['name']}.phases.{ph['name']}: changing "
                            f"{', '.join(changed)} in a phase is not supported by the host runner yet")
        evs: List[Tuple[str, int]] = []
        for e in ph["events"]:
            if e == "Yield":
                evs.append(("yield", 0))
                continue
            (kind, v), = e.items()
            if kind in ("Run", "Runtime", "Sleep"):
                evs.append((kind.lower(), int(v)))
            elif kind == "Timer":
                evs.append(("timer", int(v["period"])))
            else:
                raise HostError(f"{source}: tasks.{task['name']}: event {kind.lower()} is not supported by the "
                                "host runner yet (run, runtime, sleep, timer, yield are)")
        out += evs * int(ph["loops"])
    return out


def plan(model: Dict[str, Any], duration_ns: int) -> Dict[str, List[Dict[str, Any]]]:
    """Threads per process, refusing what the runner cannot do."""
    src = model["source"]
    if model["taskgroups"]:
        raise HostError(f"{src}: global.taskgroups: cgroups are not supported by the host runner yet")
    procs: Dict[str, List[Dict[str, Any]]] = {}
    for t in model["tasks"]:
        a = t["attrs"]
        policy = a["policy"] or model["default_policy"]
        if policy == "Deadline":
            raise HostError(f"{src}: tasks.{t['name']}.policy: SCHED_DEADLINE is not supported by the host "
                            "runner yet")
        if a["dl_runtime"] is not None:
            raise HostError(f"{src}: tasks.{t['name']}.dl-runtime: custom slices (sched_setattr) are not "
                            "supported by the host runner yet")
        if a["memory_ppm"] is not None:
            raise HostError(f"{src}: tasks.{t['name']}.memory_intensity is a simulator model, not a host "
                            "setting")
        events = _events(t, src)
        kpol = {"Other": "SCHED_OTHER", "Batch": "SCHED_BATCH", "Idle": "SCHED_IDLE", "Fifo": "SCHED_FIFO",
                "Rr": "SCHED_RR"}[policy]
        rt = kpol in ("SCHED_FIFO", "SCHED_RR")
        prio = a["priority"]
        for k in range(t["instances"]):
            name = t["name"] if t["instances"] == 1 else f"{t['name']}-{k}"
            procs.setdefault(t["process"], []).append({
                "name": name, "policy": kpol, "nice": 0 if rt else int(prio or 0),
                "rt_priority": int(prio or 10) if rt else 0, "cpus": a["cpus"], "delay_ns": int(t["delay"]),
                "loops": t["loops"], "events": [[e, v] for e, v in events]})
    return procs


def _write(path: str, value: str) -> None:
    with open(path, "w") as f:
        f.write(value)


def facts() -> Dict[str, Any]:
    """What the machine is, for the report."""
    def read(p: str) -> Optional[str]:
        try:
            with open(p) as f:
                return f.read().strip()
        except OSError:
            return None
    return {"kernel": platform.release(), "cpus": os.cpu_count(),
            "autogroup": read("/proc/sys/kernel/sched_autogroup_enabled"),
            "rt_runtime_us": read("/proc/sys/kernel/sched_rt_runtime_us"),
            "loadavg": read("/proc/loadavg")}


Procs = Dict[str, List[Dict[str, Any]]]


def _probe(model: Dict[str, Any], duration_s: Optional[float]) -> Tuple[int, Procs, str]:
    dur = int((duration_s or (model["duration"] or 0) / 1e9) * 1e9)
    if dur <= 0:
        raise HostError(f"{model['source']}: global.duration: the host runner needs a duration (or --duration)")
    procs = plan(model, dur)
    if os.geteuid() != 0:
        raise HostError("the host runner needs root (tracefs and scheduling attributes)")
    worker = os.path.abspath(WORKER)
    if not os.access(worker, os.X_OK):
        raise HostError(f"{worker}: native worker missing; run scripts/setup.sh")
    return dur, procs, worker


def _mount() -> bool:
    """Mount tracefs if it is not; True if we did (and must unmount)."""
    if os.path.isdir(os.path.join(TRACEFS, "instances")):
        return False
    r = subprocess.run(["mount", "-t", "tracefs", "nodev", TRACEFS], capture_output=True, text=True)
    if r.returncode != 0:
        raise HostError(f"cannot mount tracefs at {TRACEFS}: {r.stderr.strip()}")
    return True


def _instance(inst: str) -> None:
    os.mkdir(inst)
    _write(os.path.join(inst, "trace_clock"), "mono")
    _write(os.path.join(inst, "buffer_size_kb"), "8192")
    _write(os.path.join(inst, "options", "overwrite"), "0")
    _write(os.path.join(inst, "options", "record-tgid"), "1")
    for e in EVENTS:
        _write(os.path.join(inst, "events", "sched", e, "enable"), "1")


def _dropped(inst: str) -> int:
    n = 0
    for c in sorted(os.listdir(os.path.join(inst, "per_cpu"))):
        with open(os.path.join(inst, "per_cpu", c, "stats")) as f:
            n += sum(int(line.split(":")[1]) for line in f if line.startswith("dropped events:"))
    return n


def _launch(worker: str, procs: Dict[str, List[Dict[str, Any]]], tmp: str, pidfile: str, start: int, end: int,
            npl: float) -> List[subprocess.Popen]:
    workers: List[subprocess.Popen] = []
    for name, threads in procs.items():
        p = os.path.join(tmp, f"{name}.json")
        with open(p, "w") as f:
            json.dump({"start_at_ns": start, "end_at_ns": end, "ns_per_loop": npl, "threads": threads}, f)
        workers.append(subprocess.Popen([worker, "run", p], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        text=True))
        with open(pidfile, "a") as f:
            f.write(f"{workers[-1].pid}\n")
    return workers


def _worker_threads(res: SimResult, outs: List[str], info: Dict[str, Any]) -> SimResult:
    """Keep the worker threads, named as in the workload."""
    tids: Dict[int, str] = {}
    threads: Dict[str, Dict[str, Any]] = {}
    for out in outs:
        for line in out.splitlines():
            d = json.loads(line)
            tids.setdefault(int(d["tid"]), d["thread"])
            if "finished_ns" in d:
                # Wall time of the thread's program, from the common start (ns).
                threads[d["thread"]] = {**d, "wall_ns": d["finished_ns"] - info["start_ns"]}
    info["threads"] = threads
    m = dict(res.metrics)
    # Workers run only between the common start and end times: shares are of that window, not of the
    # whole trace (which includes the setup before the start).
    dur_us = info["duration_ns"] / 1000
    m["tasks"] = [{**t, "name": tids[t["pid"]], "cpu_share": t["cpu_time_us"] / dur_us}
                  for t in m["tasks"] if t["pid"] in tids]
    m["fairness_tasks"] = [t["name"] for t in m["tasks"]]
    if info["dropped_events"]:
        m["warnings"] = list(m["warnings"]) + [f"{info['dropped_events']} trace events dropped"]
    m["scheduler"] = f"host {info['kernel']}"
    res._metrics = type(res.metrics)(m)
    return res


def run(workload: str, duration_s: Optional[float] = None) -> Tuple[SimResult, Dict[str, Any]]:
    """Run `workload` on this machine's kernel; returns the result and the machine facts."""
    dur, procs, worker = _probe(check(workload), duration_s)
    mounted = _mount()
    info = facts()
    tmp = tempfile.mkdtemp(prefix="schedlab-host-")
    inst = os.path.join(TRACEFS, "instances", f"schedlab-{os.getpid()}")
    pidfile = os.path.join(tmp, "pids")
    _write(pidfile, "")
    guard = subprocess.Popen([sys.executable, "-m", "schedlab.hostguard", inst, "1" if mounted else "0",
                              pidfile], stdin=subprocess.PIPE, start_new_session=True)
    workers: List[subprocess.Popen] = []

    def on_term(*_: object) -> None:
        raise KeyboardInterrupt()

    old_term = signal.signal(signal.SIGTERM, on_term)
    try:
        npl = json.loads(subprocess.run([worker, "calibrate"], capture_output=True, text=True,
                                        check=True).stdout)["ns_per_loop"]
        _instance(inst)
        start = time.clock_gettime_ns(time.CLOCK_MONOTONIC) + 300_000_000
        _write(os.path.join(inst, "tracing_on"), "1")
        workers = _launch(worker, procs, tmp, pidfile, start, start + dur, npl)
        outs = []
        for w in workers:
            out, err = w.communicate(timeout=dur / 1e9 + 30)
            if w.returncode != 0:
                raise HostError(f"worker failed: {err.strip()}")
            outs.append(out)
        _write(os.path.join(inst, "tracing_on"), "0")
        info.update({"ns_per_loop": npl, "dropped_events": _dropped(inst), "duration_ns": dur,
                     "start_ns": start})
        trace_path = os.path.join(tmp, "trace.txt")
        shutil.copyfile(os.path.join(inst, "trace"), trace_path)
        imp = import_trace(trace_path, tolerant=True)
    finally:
        for w in workers:
            if w.poll() is None:
                w.kill()
                w.wait()
        if guard.stdin:
            guard.stdin.close()
        guard.wait(timeout=10)
        if mounted and os.path.ismount(TRACEFS):
            subprocess.run(["umount", TRACEFS], check=False, capture_output=True)
        signal.signal(signal.SIGTERM, old_term)
        shutil.rmtree(tmp, ignore_errors=True)
    info["repairs"] = imp.repairs
    return _worker_threads(imp.result, outs, info), info


__all__ = ["HostError", "run", "plan", "facts"]
