"""The run's cgroups (host.md §2, §4): one group for the whole run, ``schedlab-PID``, and the
workload's task groups below it, each created through the undo journal.

* cgroup v1 ``cpu`` (this machine): ``cpu.shares``; a thread joins by writing its tid to its
  group's ``tasks``. Under RT_GROUP_SCHED a group's RT tasks need ``cpu.rt_runtime_us`` > 0
  (EPERM otherwise): the run group gets what the root has left, and groups holding RT tasks
  share their parent's equally.
* cgroup2 with the ``cpu`` controller: ``cpu.weight`` = shares × 100 / 1024 (the kernel's own
  mapping, clamped to [1, 10000]); task groups are *threaded* so that threads of one process can
  sit in different groups; a thread joins the run group's ``cgroup.procs`` then its group's
  ``cgroup.threads``.

Isolation: with ``cpu.shares`` 262144 (``cpu.weight`` 10000) the run group outweighs any other
session's autogroup on a shared machine, where root-level tasks would otherwise take about half
of a CPU (host.md §4).
"""

from __future__ import annotations

import errno
import os
import time
from typing import Any, Dict, List, Optional

from .plan import RT_POLICIES, HostError, Plan, group_path_error
from .probe import read
from .undo import Journal, write

ISOLATE_SHARES, ISOLATE_WEIGHT = 262144, 10000


def _write(path: str, value: str) -> None:
    try:
        write(path, value)
    except OSError as e:
        raise HostError(f"cgroup: writing {value!r} to {path}: {e.strerror}") from e


def _mkdir(path: str, journal: Journal) -> None:
    journal.add(rmdir=path)
    try:
        os.mkdir(path)
    except OSError as e:
        raise HostError(f"cgroup: mkdir {path}: {e.strerror}") from e


def confined(lab: str, group: str) -> str:
    """The cgroup directory of task group `group` ("/a/b") inside the run's group `lab`; HostError
    for a path that is not plain components below it ("..", ".", empty, a trailing "/", control
    file names would all escape or alias; the workload parser refuses them too)."""
    if group in ("", "/"):
        return lab
    bad = group_path_error(group)
    if bad:
        raise HostError(f"cgroup: task group {group!r}: {bad}")
    d = os.path.normpath(os.path.join(lab, *group.split("/")[1:]))
    if not d.startswith(lab + os.sep):
        raise HostError(f"cgroup: task group {group!r} would leave the run's group {lab}")
    return d


def _ancestors(group: str) -> List[str]:
    """'/a/b' -> ['/', '/a', '/a/b']."""
    parts = [p for p in group.split("/") if p]
    return ["/"] + ["/" + "/".join(parts[: i + 1]) for i in range(len(parts))]


def _rt_runtime(plan: Plan, root: str, lab_name: str) -> Dict[str, int]:
    """RT runtime (µs per period) of each run group that holds RT tasks, or has such children."""
    need = {a for g in plan.rt_groups for a in _ancestors(g)}
    if not need:
        return {}
    total = int(read(os.path.join(root, "cpu.rt_runtime_us")) or 0)
    taken = sum(int(read(os.path.join(root, d, "cpu.rt_runtime_us")) or 0) for d in os.listdir(root)
                if d != lab_name and os.path.isdir(os.path.join(root, d)))
    left = total - taken
    if left < 1000:
        raise HostError(f"cgroup: RT tasks need RT runtime in their group (RT_GROUP_SCHED), but the root "
                        f"group has {max(left, 0)} us of {total} us per period left")
    out = {"/": left}
    for g in sorted(need, key=lambda x: x.count("/") if x != "/" else 0):
        if g == "/":
            continue
        parent = g.rsplit("/", 1)[0] or "/"
        siblings = [s for s in need if s != "/" and (s.rsplit("/", 1)[0] or "/") == parent]
        out[g] = out[parent] // len(siblings)
    return out


def _claim_rt_runtime(plan: Plan, root: str, name: str, lab: str) -> Dict[str, int]:
    """:func:`_rt_runtime`, written to the run group. The kernel refuses (EINVAL) a runtime that,
    with its siblings', exceeds the root's; a group another run removed a moment ago can still count
    there, and another run can claim runtime between our read and our write: read again and retry
    for up to 2 s before giving up."""
    deadline = time.monotonic() + 2.0
    while True:
        rt = _rt_runtime(plan, root, name)
        if "/" not in rt:
            return rt
        try:
            write(os.path.join(lab, "cpu.rt_runtime_us"), str(rt["/"]))
            return rt
        except OSError as e:
            if e.errno != errno.EINVAL or time.monotonic() > deadline:
                raise HostError(f"cgroup: writing {rt['/']!r} to {lab}/cpu.rt_runtime_us: {e.strerror} "
                                "(the root group's RT runtime is held by other groups)") from e
        time.sleep(0.02)


def _rt_processes_in_root(plan: Plan) -> List[str]:
    """cgroup2 under RT group scheduling: a task group's RT runtime is 0 and cgroup2 has no file
    to change it, so the kernel refuses an RT policy to any thread outside the root cgroup
    (probe.rt_group_sched_enabled). Writing a tid to cgroup.procs moves its whole process, so each
    process holding an RT thread stays in the root cgroup with all its threads; a task group
    asked for one of them cannot be honoured: HostError naming it."""
    out = []
    for proc, threads in plan.procs.items():
        if not any(th["policy"] in RT_POLICIES for th in threads):
            continue
        grouped = next((th for th in threads if th["group"] != "/"), None)
        if grouped is not None:
            raise HostError(f"cgroup: task {grouped['name']!r} is in task group {grouped['group']!r} and "
                            f"shares process {proc!r} with an RT task; on cgroup2 with RT group scheduling "
                            "an RT task can run only in the root cgroup, and its process's threads move with "
                            "it (cgroup v1, or rt_group_sched=0 on the kernel command line, allows this)")
        out.append(proc)
    return out


def setup(plan: Plan, cg: Dict[str, Any], journal: Journal, isolate: bool) -> Optional[str]:
    """Create the run's groups; fills each thread's ``cgroup_files``; returns the run group path."""
    if not isolate and not plan.groups:
        return None
    if cg["flavour"] is None:
        raise HostError("cgroup: neither cgroup v1 `cpu` nor cgroup2 with the cpu controller is available "
                        "(needed for task groups and for isolating the run; --no-isolate runs without)")
    root, v1 = cg["root"], cg["flavour"] == "v1"
    rooted = [] if v1 or not cg["rt_group_sched"] else _rt_processes_in_root(plan)
    name = f"schedlab-{os.getpid()}"
    lab = os.path.join(root, name)
    if not v1 and "cpu" not in (read(os.path.join(root, "cgroup.subtree_control")) or "").split():
        raise HostError(f"cgroup: {root}/cgroup.subtree_control does not enable cpu; the runner does not "
                        "change the root's controllers")
    _mkdir(lab, journal)
    shares = dict(plan.groups)
    if v1:
        _write(os.path.join(lab, "cpu.shares"), str(ISOLATE_SHARES if isolate else 1024))
        rt = _claim_rt_runtime(plan, root, name, lab) if cg["rt_group_sched"] else {}
    else:
        rt = {}
        _write(os.path.join(lab, "cpu.weight"), str(ISOLATE_WEIGHT if isolate else 100))
    for g, _ in plan.groups:  # parents come first (the workload parser orders them)
        d = confined(lab, g)
        _mkdir(d, journal)
        if v1:
            _write(os.path.join(d, "cpu.shares"), str(shares[g]))
            if g in rt:
                _write(os.path.join(d, "cpu.rt_runtime_us"), str(rt[g]))
        else:
            _write(os.path.join(d, "cgroup.type"), "threaded")
            _write(os.path.join(os.path.dirname(d), "cgroup.subtree_control"), "+cpu")
            _write(os.path.join(d, "cpu.weight"), str(min(10000, max(1, round(shares[g] * 100 / 1024)))))
    for proc, threads in plan.procs.items():
        for th in threads:
            d = confined(lab, th["group"])
            th["cgroup_files"] = ([os.path.join(d, "tasks")] if v1 else
                                  [os.path.join(root, "cgroup.procs")] if proc in rooted else
                                  [os.path.join(lab, "cgroup.procs"), os.path.join(d, "cgroup.threads")])
    plan.notes.extend(
        [f"rt: process {p!r} runs in the root cgroup, not isolated: on cgroup2 with RT_GROUP_SCHED no other "
         "group can hold RT tasks" for p in rooted])
    plan.notes.extend(
        [f"rt: group {g} has cpu.rt_runtime_us {v} (RT_GROUP_SCHED; the simulator throttles RT per CPU)"
         for g, v in sorted(rt.items())])
    return lab
