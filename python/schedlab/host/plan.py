"""From a checked workload to worker plans: one plan per workload process, one thread per task
instance, with the attributes the worker applies before work starts (attrs.rs in the worker).

Refused here, before anything on the machine is touched, with the JSON path: what the host
runner cannot reproduce faithfully (attribute changes inside phases, ``fork``, memory intensity,
pinned SCHED_DEADLINE tasks; see ``refusal`` messages).
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

# Kernel limits of a fair task's custom slice (sched_setattr's sched_runtime on SCHED_OTHER,
# clamped by the kernel to [0.1, 100] ms: host.md §2).
SLICE_MIN_NS, SLICE_MAX_NS = 100_000, 100_000_000

KERNEL_POLICY = {"Other": "SCHED_OTHER", "Batch": "SCHED_BATCH", "Idle": "SCHED_IDLE", "Fifo": "SCHED_FIFO",
                 "Rr": "SCHED_RR", "Deadline": "SCHED_DEADLINE",
                 "Ext": "SCHED_EXT"}

# Events the worker runs as the simulator does (sync objects live in shared memory: sync.rs).
SYNC_EVENTS = ("Lock", "Unlock", "Signal", "Broad", "Barrier", "Suspend", "Resume")


class HostError(Exception):
    """The host runner refuses or fails (one-line message)."""


class Plan:
    """Everything the runner needs: per-process thread plans, groups, sync objects."""

    def __init__(self) -> None:
        self.procs: Dict[str, List[Dict[str, Any]]] = {}
        # Task-group paths ("/a/b") with their shares, parents first.
        self.groups: List[Tuple[str, int]] = []
        # Task-group paths holding RT tasks (they need RT runtime under RT_GROUP_SCHED).
        self.rt_groups: set = set()
        self.rt = False
        # (task, runtime, period) of each SCHED_DEADLINE thread.
        self.dl: List[Tuple[str, int, int]] = []
        self.slices: List[Tuple[str, int]] = []
        # Sync object name -> number of threads that use it (barriers wait for all of them).
        self.sync: Dict[str, int] = {}
        self.notes: List[str] = []
        self.calibration_cpu = 0


# The kernel policies of the RT class (what RT group scheduling governs).
RT_POLICIES = ("SCHED_FIFO", "SCHED_RR")


def group_path_error(group: str) -> Optional[str]:
    """Why `group` is not a task-group path the host runner can confine to the run's own cgroup
    ("/a/b": absolute, no empty, "." or ".." component, no trailing "/"), or None."""
    if group in ("", "/"):
        return None
    parts = group.split("/")
    if parts[0] != "":
        return "a task-group path starts with \"/\""
    for p in parts[1:]:
        if p in ("", ".", ".."):
            what = "an empty component (\"//\" or a trailing \"/\")" if p == "" else f"a {p!r} component"
            return f"{what} is not allowed: paths stay inside the run's own cgroup"
        if not all(c.isascii() and (c.isalnum() or c in "_-.") for c in p):
            return f"component {p!r} has characters other than letters, digits, '_', '-', '.'"
    return None


def _events(task: Dict[str, Any], src: str, sync: Dict[str, int]) -> List[List[Any]]:
    out: List[List[Any]] = []
    base = task["attrs"]
    used: set = set()
    for ph in task["phases"]:
        changed = [k for k, v in ph["attrs"].items() if v is not None and v != base.get(k)]
        if changed:
            raise HostError(f"{src}: tasks.{task['name']}.phases.{ph['name']}: changing "
                            f"{', '.join(changed)} in a phase is not supported by the host runner "
                            "(switching a sleeping DEADLINE task back leaks its bandwidth: host.md §2)")
        evs: List[List[Any]] = []
        for e in ph["events"]:
            if e == "Yield":
                evs.append(["yield", 0])
                continue
            (kind, v), = e.items()
            if kind in ("Run", "Runtime", "Sleep"):
                evs.append([kind.lower(), int(v)])
            elif kind == "Timer":
                # Timers whose name starts with "unique" are the thread's own; others are shared
                # by every thread naming them (as in the simulator's engine/exec.rs).
                shared = None if v["name"].startswith("unique") else v["name"]
                if shared:
                    used.add(shared)
                evs.append(["timer", int(v["period"]), v["mode"].lower(), shared])
            elif kind == "Wait":
                used.update((v["cond"], v["mutex"]))
                evs.append(["wait", v["cond"], v["mutex"]])
            elif kind in SYNC_EVENTS:
                used.add(v)
                evs.append([kind.lower(), v])
            else:
                raise HostError(f"{src}: tasks.{task['name']}: event {kind.lower()} is not supported by the "
                                "host runner (run, runtime, sleep, timer, yield, lock, unlock, wait, signal, "
                                "broad, barrier, suspend, resume are)")
        out += evs * int(ph["loops"])
    for name in used:
        sync[name] = sync.get(name, 0) + int(task["instances"])
    return out


def _check_groups(model: Dict[str, Any]) -> None:
    """Task-group paths must stay inside the run's cgroup (cgroups.confined checks again)."""
    src = model["source"]
    named = [(f"global.taskgroups.{g['path']}", g["path"]) for g in model["taskgroups"]] + \
        [(f"tasks.{t['name']}.taskgroup", t["attrs"]["taskgroup"] or "/") for t in model["tasks"]]
    for where, g in named:
        bad = group_path_error(g)
        if bad:
            raise HostError(f"{src}: {where}: {bad}")


def make(model: Dict[str, Any], ncpus: int) -> Plan:
    """Worker plans for `model` on a machine with CPUs 0..ncpus-1, or HostError naming the path."""
    src = model["source"]
    plan = Plan()
    _check_groups(model)
    plan.groups = sorted(((g["path"], int(g["shares"])) for g in model["taskgroups"]),
                         key=lambda g: g[0].count("/"))
    cal = model["calibration"].get("Cpu", 0)
    if cal >= ncpus:
        raise HostError(f"{src}: global.calibration: CPU{cal} is not on this machine (it has {ncpus})")
    plan.calibration_cpu = cal
    for t in model["tasks"]:
        a = t["attrs"]
        path = f"{src}: tasks.{t['name']}"
        policy = a["policy"] or model["default_policy"]
        if a["memory_ppm"] is not None:
            raise HostError(f"{path}.memory_intensity is a simulator model, not a host setting")
        if a["cpus"] is not None and any(c >= ncpus for c in a["cpus"]):
            raise HostError(f"{path}.cpus: {a['cpus']} names CPUs this machine does not have (it has {ncpus})")
        kpol = KERNEL_POLICY[policy]
        events = _events(t, src, plan.sync)
        th: Dict[str, Any] = {"policy": kpol, "delay_ns": int(t["delay"]), "loops": t["loops"],
                              "events": events, "cpus": a["cpus"]}
        group = a["taskgroup"] or "/"
        if kpol in RT_POLICIES:
            th["rt_priority"] = int(a["priority"] or 10)
            plan.rt = True
            plan.rt_groups.add(group)
        elif kpol == "SCHED_DEADLINE":
            if a["cpus"] is not None and sorted(set(a["cpus"])) != list(range(ncpus)):
                raise HostError(f"{path}.cpus: a SCHED_DEADLINE task cannot be pinned on the host: its "
                                "affinity must span its root domain, and a one-CPU root domain needs an "
                                "exclusive cpuset partition (turning off load balancing machine-wide); "
                                "drop `cpus` or run it in the simulator")
            th["cpus"] = None
            th.update(dl_runtime_ns=int(a["dl_runtime"]), dl_period_ns=int(a["dl_period"]),
                      dl_deadline_ns=int(a["dl_deadline"] or a["dl_period"]))
        else:
            th["nice"] = int(a["priority"] or 0)
            if a["dl_runtime"] is not None:
                s = int(a["dl_runtime"])
                if not SLICE_MIN_NS <= s <= SLICE_MAX_NS:
                    raise HostError(f"{path}.dl-runtime: a custom slice of {s / 1000:g} us is outside the "
                                    "kernel's [100, 100000] us (it would be clamped silently)")
                th["slice_ns"] = s
        th["group"] = group
        for k in range(t["instances"]):
            name = t["name"] if t["instances"] == 1 else f"{t['name']}-{k}"
            plan.procs.setdefault(t["process"], []).append({"name": name, **th})
            if kpol == "SCHED_DEADLINE":
                plan.dl.append((name, th["dl_runtime_ns"], th["dl_period_ns"]))
            if "slice_ns" in th:
                plan.slices.append((name, th["slice_ns"]))
    return plan


def duration_ns(model: Dict[str, Any], override_s: Optional[float]) -> int:
    dur = int((override_s or (model["duration"] or 0) / 1e9) * 1e9)
    if dur <= 0:
        raise HostError(f"{model['source']}: global.duration: the host runner needs a duration (or --duration)")
    return dur
