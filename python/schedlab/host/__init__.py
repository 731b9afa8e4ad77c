"""``schedlab host run WORKLOAD``: the same rt-app workload on this machine's kernel (issue 5).

In order (every change to the machine goes through the undo journal first, ``undo.py``):

1. ``plan.py`` turns the workload into worker plans and refuses, before touching anything, what
   cannot be reproduced faithfully (with the JSON path).
2. A cleanup guard starts (``guard.py``); ``probe.py`` records the machine's facts (kernel, HZ,
   preemption, lockdown, base slice and whether its knob is writable, feature mask, DL bandwidth,
   cgroup flavour, RT group runtime, autogroup) and the run is refused if DEADLINE admission
   would fail.
3. ``cgroups.py`` makes the run's group (isolation) and the workload's task groups.
4. The busy loop is calibrated, the capture starts (``capture.py``: tracefs instance or perf),
   and one native worker process per workload process starts its threads, which set themselves
   up (cgroup, affinity, sched_setattr; the kernel's timer slack, as under rt-app) and begin
   together at a common start time.
5. After the end time: the capture stops (dropped events counted), DEADLINE bandwidth is
   re-read (a leak is repaired and reported), and the trace is imported over [start, end]; each
   worker thread's own /proc counters are set beside the trace's numbers.
6. Always, also on error, Ctrl-C and SIGTERM: the journal is undone (workers killed, instance
   removed, cgroups removed, mounts undone); the guard does the same if the runner is killed.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from typing import Any, Dict, List, Optional, Set, Tuple

from ..api import SimResult, check, import_trace, tick_nsec
from . import capture, cgroups
from .lock import HostBusy, acquire
from .plan import HostError, Plan, duration_ns, make
from .probe import (
    BW_UNIT,
    EEVDF_SINCE,
    Mounts,
    cpu_times,
    dl_bw_units,
    dl_tasks,
    dl_total_bw,
    dl_total_raw,
    kernel_version,
    online_cpus,
    probe,
    read,
)
from .reconcile import reconcile
from .undo import Journal, die_with_parent, remove_tmp, write


def worker_path() -> str:
    """The native worker (crates/schedlab-worker): ``$SCHEDLAB_WORKER`` if set, else the copy
    installed with the package (``schedlab/bin/``, put there by scripts/build_wheel.sh), else the
    source tree's ``target/release`` build (scripts/setup.sh)."""
    here = os.path.dirname(os.path.abspath(__file__))
    candidates = [os.environ.get("SCHEDLAB_WORKER", ""),
                  os.path.join(here, "..", "bin", "schedlab-worker"),
                  os.path.join(here, "..", "..", "..", "target", "release", "schedlab-worker")]
    for c in candidates:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return os.path.abspath(c)
    raise HostError("the native worker schedlab-worker is not installed: build it with "
                    "`cargo build --release -p schedlab-worker` (scripts/setup.sh does), install a wheel "
                    "built by scripts/build_wheel.sh, or set SCHEDLAB_WORKER to its path")
# Time between launching the workers and their common start: they set themselves up meanwhile.
SETUP_NS = 300_000_000
# Trace repairs kept in a run's facts (a 16-CPU run can need ~59,000; the metrics' warnings
# summarize them by kind, the count is kept beside).
REPAIRS_KEPT = 100


def _sync_slots(plan: Plan, tmp: str) -> Optional[Tuple[str, int]]:
    """Give every sync object and shared timer a slot of the shared file; rewrite events to use it."""
    if not plan.sync:
        return None
    slot = {name: i for i, name in enumerate(sorted(plan.sync))}
    for threads in plan.procs.values():
        for th in threads:
            out = []
            for e in th["events"]:
                k = e[0]
                if k == "timer":
                    out.append(["timer", e[1], e[2], None if e[3] is None else slot[e[3]]])
                elif k == "wait":
                    out.append(["wait", slot[e[1]], slot[e[2]]])
                elif k == "barrier":
                    out.append(["barrier", slot[e[1]], plan.sync[e[1]]])
                elif k in ("lock", "unlock", "signal", "broad", "suspend", "resume"):
                    out.append([k, slot[e[1]]])
                else:
                    out.append(e)
            th["events"] = out
    path = os.path.join(tmp, "sync")
    with open(path, "wb") as f:
        f.write(bytes(16 * len(slot)))
    return path, len(slot)


def _check_dl(plan: Plan, facts: Dict[str, Any]) -> None:
    if not plan.dl:
        return
    need = sum(r / p for _, r, p in plan.dl)
    cap, used = facts.get("dl_bw_capacity"), facts.get("dl_bw_reserved")
    if cap is None:
        raise HostError("SCHED_DEADLINE: cannot read the root domain's DL bandwidth from "
                        "/sys/kernel/debug/sched/debug (debugfs), so neither admission nor a bandwidth "
                        "leak could be checked")
    if used + need > cap + 1e-9:
        raise HostError(f"SCHED_DEADLINE: the workload needs {need:.3f} CPUs of DL bandwidth but the root "
                        f"domain has {cap - used:.3f} of {cap:.3f} left (admission would fail with EBUSY)")


def _dl_snapshot(debugfs: str, ours: Set[int]) -> Optional[Tuple[int, int]]:
    """(root domain total_bw, bandwidth of every DEADLINE thread that is not ours), kernel units,
    read consistently (total_bw re-read until it did not change during the scan)."""
    for _ in range(5):
        t0 = dl_total_raw(debugfs)
        tasks = dl_tasks()
        if t0 is None or tasks is None:
            return None
        if dl_total_raw(debugfs) == t0:
            return t0, sum(bw for tid, bw in tasks.items() if tid not in ours)
    return None


def _subset_sum(xs: List[int], target: int) -> bool:
    sums = {0}
    for x in xs:
        sums |= {s + x for s in sums if s + x <= target}
    return target in sums


def _dl_leak(plan: Plan, before: Optional[Tuple[int, int]], debugfs: str, journal: Journal,
             facts: Dict[str, Any]) -> Optional[str]:
    """DL bandwidth our workers left reserved (host.md §2), repaired by a sched-domain rebuild.

    Only a leak that is provably ours is repaired: the change of total_bw over the run, less the
    change in other processes' DEADLINE threads, must be exactly the bandwidth of some of our
    workers (kernel units). Anything else (other DL users starting, ending, leaking) is reported,
    not repaired: a rebuild touches the whole machine."""
    after = _dl_snapshot(debugfs, set())
    if after is not None:
        facts["dl_bw_reserved_after"] = round(after[0] / BW_UNIT, 6)
    if before is None or after is None:
        return "DEADLINE bandwidth could not be read consistently before and after the run: leak not checked"
    ours = [dl_bw_units(r, p) for _, r, p in plan.dl]
    unexplained = (after[0] - before[0]) - (after[1] - before[1])
    facts["dl_bw_unexplained"] = round(unexplained / BW_UNIT, 6)
    if unexplained == 0:
        return None
    if others := after[1] - before[1]:
        note = f" (other processes' DEADLINE threads changed it by {others / BW_UNIT:+.6f})"
    else:
        note = ""
    if unexplained < 0 or not _subset_sum(ours, unexplained):
        return (f"DL bandwidth changed by {unexplained / BW_UNIT:+.6f} during the run beyond what other "
                f"DEADLINE threads explain{note}, and it does not match this run's workers: not repaired")
    msg = (f"DL bandwidth {unexplained / BW_UNIT:.6f} of this run's workers stayed reserved after they "
           f"exited (kernel leak, host.md §2){note}")
    cpuset = "/sys/fs/cgroup/cpuset"
    if os.path.isdir(cpuset):
        d = os.path.join(cpuset, f"schedlab-rebuild-{os.getpid()}")
        # Journaled like every other cgroup, in case the runner dies between mkdir and rmdir.
        journal.add(rmdir=d)
        try:
            os.mkdir(d)
            write(os.path.join(d, "cpuset.cpus"), read(os.path.join(cpuset, "cpuset.cpus")) or "")
        finally:
            os.rmdir(d)
        fixed = dl_total_bw(debugfs)
        facts["dl_bw_reserved_repaired"] = fixed
        facts["dl_bw_reserved_after"] = fixed
        msg += f"; repaired by a sched-domain rebuild: now {fixed:.6f}"
    return msg


def _launch(worker: str, plan: Plan, tmp: str, journal: Journal,
            common: Dict[str, Any]) -> List[subprocess.Popen]:
    workers = []
    for name, threads in plan.procs.items():
        p = os.path.join(tmp, f"{name}.json")
        with open(p, "w", encoding="utf-8") as f:
            plans = [{k: v for k, v in th.items() if k != "group"} for th in threads]
            json.dump({**common, "threads": plans}, f)
        w = subprocess.Popen([worker, "run", p], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             preexec_fn=die_with_parent)
        journal.add(kill=w.pid)
        workers.append(w)
    return workers


def _worker_lines(outs: List[str]) -> List[Dict[str, Any]]:
    return [json.loads(line) for out in outs for line in out.splitlines()]


def _worker_tids(outs: List[str]) -> List[int]:
    """The workload threads' tids, from the workers' outputs."""
    return sorted({int(d["tid"]) for d in _worker_lines(outs)})


def _results(res: SimResult, outs: List[str], info: Dict[str, Any],
             clock: Optional[Dict[int, int]] = None) -> SimResult:
    """Keep the worker threads, named as in the workload, with their /proc counters as the
    authority (reconcile.py); ``clock``: the import's clock uncertainty per pid."""
    clock = clock or {}
    tids: Dict[int, str] = {}
    threads: Dict[str, Dict[str, Any]] = {}
    for d in _worker_lines(outs):
        tids.setdefault(int(d["tid"]), d["thread"])
        if "finished_ns" in d:
            threads[d["thread"]] = {**d, "wall_ns": d["finished_ns"] - info["start_ns"]}
    info["threads"] = threads
    m = dict(res.metrics)
    mine = [t for t in m["tasks"] if t["pid"] in tids]
    others = sorted((t for t in m["tasks"] if t["pid"] not in tids), key=lambda t: -t["cpu_time_us"])
    # Times each other task left a CPU (each ran once before): how often the run was interrupted.
    runs = [t["nvcsw"] + t["nivcsw"] for t in others]
    info["other_load"] = {
        "cpu_ms": round(sum(t["cpu_time_us"] for t in others) / 1000, 3),
        "runs": sum(runs),
        "top": [(t["name"], round(t["cpu_time_us"] / 1000, 3)) for t in others[:5]],
        # One daemon or many threads: the share of those runs by the thread that ran most often.
        "top_runs_share": round(max(runs) / sum(runs), 3) if sum(runs) else None}
    rows, cross, disagree = reconcile([{**t, "name": tids[t["pid"]]} for t in mine], threads,
                                      m["duration_us"], info["cpu_ms"],
                                      {tids[p]: ns for p, ns in clock.items() if p in tids})
    info["other_load"]["cpu_ms_proc"] = proc_other_ms(info, rows)
    m["tasks"] = rows
    m["fairness_tasks"] = [t["name"] for t in m["tasks"]]
    xs = [t["cpu_time_us"] for t in m["tasks"]]
    # Jain's index over the workload's threads only (the trace's other tasks left out).
    m["jain_fairness"] = sum(xs) ** 2 / (len(xs) * sum(x * x for x in xs)) if any(xs) else 1.0
    warnings = list(m["warnings"])
    if info["dropped_events"]:
        warnings.append(f"{info['dropped_events']} trace events dropped")
    warnings += disagree
    info["crosscheck"] = cross
    m["warnings"] = warnings
    m["scheduler"] = f"host {info['kernel']}"
    m["hz"] = info.get("hz") or 0
    res._metrics = type(res.metrics)(m)
    return res


def tick_phase(start_ns: int, hz: Optional[int], cmdline: str = "") -> Optional[int]:
    """Where the kernel's jiffy grid sits after the run's start (CLOCK_MONOTONIC ns): the
    simulator's ``tick_phase_ns`` that puts its ticks where this run's were.

    The periodic tick fires at multiples of TICK_NSEC of CLOCK_MONOTONIC on every CPU
    (kernel/time/tick-sched.c ``tick_init_jiffy_update`` aligns ``tick_next_period`` to
    TICK_NSEC) unless ``skew_tick=1`` offsets each CPU's. Checked on the 2-vCPU 6.18 VM:
    tick-bound switch-ins in a host trace land 13-33 us after multiples of 4 ms. None when the
    grid is not one (skewed ticks) or HZ is unknown."""
    if not hz or "skew_tick=1" in cmdline.split():
        return None
    return (-start_ns) % tick_nsec(hz)


def tick_grid(info: Dict[str, Any]) -> Optional[Tuple[int, int]]:
    """The run's jiffy grid in trace time, (TICK_NSEC, 0), for counting the trace's CPU time as the
    kernel accounts it (api.import_trace ``tick``); None where ``tick_phase`` found no grid."""
    hz = info.get("hz")
    if not hz or info.get("tick_phase_ns") is None:
        return None
    return (tick_nsec(hz), 0)


def proc_other_ms(info: Dict[str, Any], tasks: List[Dict[str, Any]]) -> Optional[float]:
    """CPU time (ms) the machine spent on anything but the workload, by /proc/stat: every CPU's busy
    time over the run's window less the workload threads' (``tasks``, /proc-reconciled). Sampled at
    ticks (10 ms per CPU per reading at USER_HZ 100) and it includes interrupts, but unlike the trace it
    cannot charge a thread for time its unrecorded switch-out hid: on the 16-CPU VM the trace gave the
    VM's agent (``tokio-rt-worker``) 1,418 ms of a 3 s run in which all 16 CPUs were busy 30 ms.
    None where the run recorded no per-CPU times."""
    per_cpu = info.get("cpu_ms")
    if not isinstance(per_cpu, dict) or not per_cpu:
        return None
    busy = sum(float(c.get("busy") or 0) for c in per_cpu.values())
    return round(max(0.0, busy - sum(float(t.get("cpu_time_us") or 0) for t in tasks) / 1000), 3)


# Below this share of the other load's runs by its most frequent thread, that load is replayed
# as noise on every CPU (background_noise).
SPREAD_BACKGROUND = 0.5


def background_noise(info: Dict[str, Any]) -> Dict[str, int]:
    """The run's other load (every thread outside the workload that ran during the run: the VM's
    agent, kworkers, the runner itself) as the simulator's OS noise: one unpinned thread
    (``noise_per_cpu`` 0) that wakes as often as those threads ran and takes as much CPU each
    time, on average, or, where no one thread ran most of those times, one per CPU at that rate
    shared out; {} where none ran. On the 2-vCPU host they preempted a lone hog 70-80 times
    in 3 s, which the simulator, quiet by default, could not show (docs/model.md, "OS noise").
    Their CPU time is the trace's, capped by /proc/stat's (``cpu_ms_proc``, proc_other_ms)."""
    other, dur = info.get("other_load") or {}, info.get("duration_ns")
    runs = int(other.get("runs") or 0)
    if runs <= 0 or not dur:
        return {}
    # Each source overstates in its own way (the trace: hidden switch-outs; /proc/stat: interrupts,
    # tick sampling): the smaller bounds the truth.
    cpu_ms = float(other.get("cpu_ms") or 0)
    if other.get("cpu_ms_proc") is not None:
        cpu_ms = min(cpu_ms, float(other["cpu_ms_proc"]))
    runtime_us = min(100_000, max(1, round(cpu_ms * 1000 / runs)))
    # Many threads, none running most of the time (kworkers, rcu, daemons on every CPU, as on the
    # 16-vCPU VM): a pinned noise thread per CPU, each at its share of the rate. One thread that ran
    # most of the times (the 2-vCPU VM's daemon): one unpinned thread. Runs saved before the share
    # was recorded get the latter.
    ncpu = len(info.get("cpus") or []) or 1
    share = other.get("top_runs_share")
    per_cpu = ncpu > 1 and share is not None and share < SPREAD_BACKGROUND
    every = dur * (ncpu if per_cpu else 1) / 1000 / runs
    return {"noise_interval_us": min(10_000_000, max(1, round(every) - runtime_us)),
            "noise_runtime_us": runtime_us, "noise_per_cpu": int(per_cpu)}


def sim_tunables(info: Dict[str, Any], tunables: Optional[Dict[str, int]] = None) -> Dict[str, int]:
    """Tunables for simulating what a host run measured: `tunables` (a machine profile's, say)
    with the run's tick phase and its other load (``background_noise``) unless they set them.
    A run whose ``run`` work was time on the CPU (``--work oncpu``, the default) did the same
    work at any speed, so an SMT sibling's slowdown (``smt_speed_pct``, which slows the
    simulator's ``run``) does not apply to it, whatever the profile measured with loops."""
    out = dict(tunables or {})
    if info.get("work") == "oncpu":
        out["smt_speed_pct"] = 100
    if info.get("tick_phase_ns") is not None:
        out.setdefault("tick_phase_ns", info["tick_phase_ns"])
    if "noise_interval_us" not in out:
        out.update(background_noise(info))
    return out


def _prepare(workload: str, duration_s: Optional[float], work: str) -> Tuple[int, Plan, str]:
    """Everything that can be refused before the machine is touched."""
    model = check(workload)
    dur = duration_ns(model, duration_s)
    plan = make(model, max(online_cpus()) + 1)
    if os.geteuid() != 0:
        raise HostError("the host runner needs root (tracing, cgroups and scheduling attributes)")
    if plan.slices and kernel_version() < EEVDF_SINCE:
        raise HostError(f"{model['source']}: tasks.{plan.slices[0][0]}.dl-runtime: custom fair slices "
                        "need EEVDF (Linux 6.6+)")
    ext = [th["name"] for ths in plan.procs.values() for th in ths if th["policy"] == "SCHED_EXT"]
    if ext and not os.path.isdir("/sys/kernel/sched_ext"):
        raise HostError(f"{model['source']}: tasks.{ext[0]}.policy: SCHED_EXT needs a kernel with sched_ext "
                        "(this one has none); run it in the guest: schedlab vm run")
    if work not in ("oncpu", "loops"):
        raise HostError(f"unknown work unit {work!r}; expected oncpu or loops")
    worker = worker_path()
    if not os.access(worker, os.X_OK):
        raise HostError(f"{worker}: native worker missing; run scripts/setup.sh")
    return dur, plan, worker


def _measure(plan: Plan, worker: str, dur: int, work: str, cap: Any, tmp: str, journal: Journal,
             info: Dict[str, Any], debugfs: Optional[str]) -> Tuple[str, List[str], Optional[Tuple[int, int]]]:
    """Start the capture and the workers, wait for the end; returns the trace file and worker outputs."""
    sync = _sync_slots(plan, tmp)
    # rt-app calibrates on its calibration CPU ("CPUn"); a fixed ns-per-loop in the workload is for
    # rt-app's own loop, not ours, so ours is measured on CPU 0 then.
    cal = plan.calibration_cpu
    c = subprocess.Popen([worker, "calibrate", str(cal)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, preexec_fn=die_with_parent)
    journal.add(kill=c.pid)
    out, err = c.communicate()
    if c.returncode != 0:
        raise HostError(f"calibration on CPU {cal}: {err.strip()}")
    npl = json.loads(out)["ns_per_loop"]
    info["calibration_cpu"] = cal
    cap.start()
    dl0 = _dl_snapshot(debugfs, set()) if plan.dl and debugfs else None
    times0 = cpu_times()
    start = time.clock_gettime_ns(time.CLOCK_MONOTONIC) + SETUP_NS
    common = {"start_at_ns": start, "end_at_ns": start + dur, "ns_per_loop": npl, "work": work}
    if sync:
        common.update(sync_file=sync[0], sync_slots=sync[1])
    outs = []
    for w in _launch(worker, plan, tmp, journal, common):
        out, err = w.communicate(timeout=(SETUP_NS + dur) / 1e9 + 30)
        if w.returncode != 0:
            raise HostError(f"worker failed: {err.strip()}")
        outs.append(out)
    times1 = cpu_times()
    info["cpu_ms"] = {c: {k: round(times1[c][k] - times0[c][k], 1) for k in times1[c]}
                      for c in times1 if c in times0}
    trace_path = os.path.join(tmp, "trace.txt")
    info.update({"backend": cap.name, "syscall_exits": cap.syscall_exits, "work": work, "ns_per_loop": npl,
                 "duration_ns": dur,
                 "start_ns": start, "dropped_events": cap.stop(trace_path), "notes": plan.notes,
                 "tick_phase_ns": tick_phase(start, info.get("hz"), read("/proc/cmdline") or "")})
    info["bpf_switches"] = cap.bpf_info
    return trace_path, outs, dl0


def run(workload: str, duration_s: Optional[float] = None, backend: str = "tracefs", isolate: bool = True,
        work: str = "oncpu", keep_trace: Optional[str] = None, wait: bool = True,
        lock_timeout: Optional[float] = None) -> Tuple[SimResult, Dict[str, Any]]:
    """Run `workload` on this machine's kernel; returns the result and the machine facts.

    ``keep_trace``: also copy the raw recorded trace text there. One host run at a time per
    machine (``lock.py``): ``wait=False`` refuses at once (HostBusy) when another run holds the
    lock, ``lock_timeout`` waits at most that many seconds; the default waits, saying on stderr
    who holds it."""
    dur, plan, worker = _prepare(workload, duration_s, work)
    lock_fd = acquire(wait=wait, timeout=lock_timeout)
    try:
        tmp = tempfile.mkdtemp(prefix="schedlab-host-")
        journal = Journal(os.path.join(tmp, "journal"))
        # The guard shares the lock: if we are killed, it is released when the guard has cleaned up.
        guard = subprocess.Popen([sys.executable, "-m", "schedlab.host.guard", journal.path, tmp],
                                 stdin=subprocess.PIPE, start_new_session=True, pass_fds=(lock_fd,))
    except BaseException:
        os.close(lock_fd)
        raise
    try:
        return _run_locked(plan, dur, worker, backend, isolate, work, keep_trace, tmp, journal, guard)
    finally:
        os.close(lock_fd)


def _run_locked(plan: Plan, dur: int, worker: str, backend: str, isolate: bool, work: str,
                keep_trace: Optional[str], tmp: str, journal: Journal,
                guard: subprocess.Popen) -> Tuple[SimResult, Dict[str, Any]]:
    mounts = Mounts(tmp, journal)

    def on_term(*_: object) -> None:
        raise KeyboardInterrupt()

    old_term = signal.signal(signal.SIGTERM, on_term)
    info: Dict[str, Any] = {}
    try:
        info.update(probe(mounts))
        _check_dl(plan, info)
        info["isolated_in"] = cgroups.setup(plan, info["cgroup"], journal, isolate)
        cap = capture.backend(backend, journal, tmp, mounts, seconds=dur / 1e9)
        debugfs = mounts.paths.get("debugfs")
        trace_path, outs, dl0 = _measure(plan, worker, dur, work, cap, tmp, journal, info, debugfs)
        if plan.slices:
            info["notes"].append("custom slices set per task with sched_setattr (sched_runtime of SCHED_OTHER)")
        leak = _dl_leak(plan, dl0, debugfs, journal, info) if plan.dl and debugfs else None
        if leak:
            info["notes"].append(leak)
        imp = import_trace(trace_path, tolerant=True, window=(info["start_ns"], info["start_ns"] + dur),
                           workload_pids=_worker_tids(outs), tick=tick_grid(info))
        if keep_trace:
            shutil.copyfile(trace_path, keep_trace)
    finally:
        problems = journal.undo()
        if guard.stdin:
            guard.stdin.close()
        guard.wait(timeout=30)
        signal.signal(signal.SIGTERM, old_term)
        if not problems:
            problems = remove_tmp(tmp)
        for p in problems:
            print(f"schedlab: cleanup: could not undo {p}", file=sys.stderr)
    if problems:
        raise HostError("cleanup incomplete: " + "; ".join(problems))
    # All of them can be tens of thousands (docs/model.md, "Missing records").
    info["repair_count"] = len(imp.repairs)
    info["repairs"] = imp.repairs[:REPAIRS_KEPT]
    return _results(imp.result, outs, info, imp.clock_uncertainty), info


def facts() -> Dict[str, Any]:
    """The machine's facts (mounts needed to read them are undone before returning)."""
    tmp = tempfile.mkdtemp(prefix="schedlab-probe-")
    journal = Journal(os.path.join(tmp, "journal"))
    try:
        return probe(Mounts(tmp, journal))
    finally:
        problems = journal.undo() or remove_tmp(tmp)
        for p in problems:
            print(f"schedlab: cleanup: could not undo {p}", file=sys.stderr)


__all__ = ["REPAIRS_KEPT", "HostError", "HostBusy", "run", "make", "facts", "tick_phase", "tick_grid",
           "background_noise", "sim_tunables"]
