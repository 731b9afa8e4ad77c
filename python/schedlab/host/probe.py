"""What the machine is and what it allows, found before the runner changes anything
(../shared/host.md §0, §2, §4): kernel, HZ, preemption model, lockdown, the scheduler's debugfs
values (base slice, feature mask, DL bandwidth), cgroup flavour, RT group runtime, autogroup.

Mounting is the only change the probe makes: securityfs (for the lockdown mode) and debugfs
(read-only ``sched/debug``) are mounted at *private* mount points in the run's own temporary
directory (:class:`Mounts`), journaled, and unmounted at the end; the machine's own mounts (e.g.
``/sys/kernel/debug``) are never mounted or unmounted, so no other user's mount can vanish.
"""

from __future__ import annotations

import ctypes
import gzip
import os
import platform
import re
import subprocess
from typing import Any, Dict, List, Optional, Tuple

from .plan import HostError
from .undo import Journal

TRACEFS = "/sys/kernel/tracing"
DEBUGFS = "/sys/kernel/debug"
SECURITYFS = "/sys/kernel/security"
BW_UNIT = 1 << 20  # BW_SHIFT fixed point of dl_bw (kernel/sched/sched.h)


def read(path: str) -> Optional[str]:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read().strip()
    except OSError:
        return None


class Mounts:
    """The run's own mounts of tracefs, debugfs and securityfs, at ``TMP/mnt-FSTYPE``.

    A pseudo filesystem mounted twice is the same filesystem (tracefs instances, debugfs files),
    so a private mount point sees what ``/sys/kernel/tracing`` would, while nobody else can use,
    unmount or be surprised by it; we unmount only these (journaled, also by the guard)."""

    def __init__(self, tmp: str, journal: Journal) -> None:
        self.tmp, self.journal = tmp, journal
        self.paths: Dict[str, str] = {}

    def get(self, fstype: str) -> str:
        if fstype not in self.paths:
            where = os.path.join(self.tmp, f"mnt-{fstype}")
            os.makedirs(where, exist_ok=True)
            self.journal.add(umount=where)
            r = subprocess.run(["mount", "-t", fstype, "nodev", where], capture_output=True, text=True)
            if r.returncode != 0:
                raise HostError(f"cannot mount {fstype} at {where}: {r.stderr.strip()}")
            self.paths[fstype] = where
        return self.paths[fstype]


def _config() -> Dict[str, str]:
    text = None
    try:
        with gzip.open("/proc/config.gz", "rt") as f:
            text = f.read()
    except OSError:
        text = read(f"/boot/config-{platform.release()}")
    out = {}
    for line in (text or "").splitlines():
        if line.startswith("CONFIG_") and "=" in line:
            k, v = line.split("=", 1)
            out[k] = v
    return out


def _sched_debug(text: str) -> Dict[str, Any]:
    """Values of /sys/kernel/debug/sched/debug the runner uses."""
    out: Dict[str, Any] = {"dl_bw": []}
    m = re.search(r"\.sysctl_sched_base_slice\s*:\s*([\d.]+)", text)
    if m:
        out["base_slice_ns"] = round(float(m.group(1)) * 1e6)
    m = re.search(r"\.sysctl_sched_features\s*:\s*(\d+)", text)
    if m:
        out["features_mask"] = hex(int(m.group(1)))
    for bw, total in re.findall(r"\.dl_bw->bw\s*:\s*(-?\d+)\s*\n\s*\.dl_bw->total_bw\s*:\s*(-?\d+)", text):
        out["dl_bw"].append((int(bw), int(total)))
    return out


def dl_total_raw(debugfs: str) -> Optional[int]:
    """Reserved DEADLINE bandwidth of the root domain in the kernel's units (2^20 = one CPU)."""
    d = _sched_debug(read(os.path.join(debugfs, "sched", "debug")) or "")
    return d["dl_bw"][0][1] if d["dl_bw"] else None


def dl_total_bw(debugfs: str) -> Optional[float]:
    """Reserved DEADLINE bandwidth of the root domain, in CPUs (fair servers included)."""
    raw = dl_total_raw(debugfs)
    return None if raw is None else raw / BW_UNIT


# sched_getattr(2) by architecture (asm-generic numbering for the others we know).
_SCHED_GETATTR = {"x86_64": 315, "aarch64": 275, "riscv64": 275, "ppc64le": 356, "s390x": 346}


class _SchedAttr(ctypes.Structure):
    _fields_ = [("size", ctypes.c_uint32), ("policy", ctypes.c_uint32), ("flags", ctypes.c_uint64),
                ("nice", ctypes.c_int32), ("priority", ctypes.c_uint32), ("runtime", ctypes.c_uint64),
                ("deadline", ctypes.c_uint64), ("period", ctypes.c_uint64), ("util_min", ctypes.c_uint32),
                ("util_max", ctypes.c_uint32)]


def dl_bw_units(runtime_ns: int, period_ns: int) -> int:
    """A DEADLINE task's bandwidth as the kernel accounts it (to_ratio(period, runtime))."""
    return (runtime_ns << 20) // period_ns if period_ns else 0


def dl_tasks() -> Optional[Dict[int, int]]:
    """Every SCHED_DEADLINE thread on the machine -> its bandwidth (kernel units); None if the
    attributes cannot be read (unknown architecture)."""
    nr = _SCHED_GETATTR.get(platform.machine())
    if nr is None:
        return None
    libc = ctypes.CDLL(None, use_errno=True)
    out: Dict[int, int] = {}
    for pid in (p for p in os.listdir("/proc") if p.isdigit()):
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            stat = read(f"/proc/{pid}/task/{tid}/stat") or ""
            fields = stat.rpartition(")")[2].split()
            if len(fields) < 39 or fields[38] != "6":  # policy (field 41) 6 = SCHED_DEADLINE
                continue
            attr = _SchedAttr()
            if libc.syscall(nr, int(tid), ctypes.byref(attr), ctypes.sizeof(attr), 0) == 0 and \
                    attr.policy == 6:
                out[int(tid)] = dl_bw_units(attr.runtime, attr.period or attr.deadline)
    return out


def rt_group_sched_enabled(cfg: Dict[str, str], cmdline: str) -> bool:
    """Whether RT group scheduling is on (kernel/sched/core.c, 6.18: the ``rt_group_sched`` static
    key, on unless CONFIG_RT_GROUP_SCHED_DEFAULT_DISABLED, set by the ``rt_group_sched=0|1`` boot
    parameter). cgroup v1 shows it as ``cpu.rt_runtime_us``; cgroup2 has no such file, yet
    ``__sched_setscheduler`` refuses (EPERM) an RT policy to a task in any non-root cpu group,
    whose RT runtime is 0 and cannot be set there."""
    if cfg.get("CONFIG_RT_GROUP_SCHED") != "y":
        return False
    m = re.search(r"(?:^|\s)rt_group_sched=(\d+)", cmdline)
    if m and m.group(1) in ("0", "1"):
        return m.group(1) == "1"
    return cfg.get("CONFIG_RT_GROUP_SCHED_DEFAULT_DISABLED") != "y"


def _cgroups(cfg: Dict[str, str]) -> Dict[str, Any]:
    v1 = v2 = None
    for line in (read("/proc/mounts") or "").splitlines():
        parts = line.split()
        if len(parts) < 4:
            continue
        if parts[2] == "cgroup" and "cpu" in parts[3].split(","):
            v1 = v1 or parts[1]
        elif parts[2] == "cgroup2":
            ctl = (read(os.path.join(parts[1], "cgroup.controllers")) or "").split()
            if "cpu" in ctl:
                v2 = v2 or parts[1]
    if v1:
        return {"flavour": "v1", "root": v1,
                "rt_group_sched": os.path.exists(os.path.join(v1, "cpu.rt_runtime_us"))}
    if v2:
        return {"flavour": "v2", "root": v2,
                "rt_group_sched": rt_group_sched_enabled(cfg, read("/proc/cmdline") or "")}
    return {"flavour": None, "root": None, "rt_group_sched": False}


def _locked(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as f:
            f.read(1)
        return "readable"
    except PermissionError:
        return "locked (EPERM)"
    except OSError as e:
        return f"absent ({e.strerror})"


def cpu_times(stat: Optional[str] = None) -> Dict[int, Dict[str, float]]:
    """Per-CPU busy, idle and steal time (ms) from /proc/stat (this machine's, or the text of
    another's, e.g. a guest's, with the same USER_HZ). Steal is time the hypervisor ran
    something else while this vCPU had work: with PARAVIRT_TIME_ACCOUNTING the scheduler leaves
    it out of a task's run time (/proc schedstat) but a trace's switch-to-switch span includes it."""
    tick_ms = 1000 / os.sysconf("SC_CLK_TCK")
    out = {}
    for line in ((read("/proc/stat") if stat is None else stat) or "").splitlines():
        f = line.split()
        if f and f[0].startswith("cpu") and f[0] != "cpu":
            v = [int(x) for x in f[1:9]]
            out[int(f[0][3:])] = {"busy": (v[0] + v[1] + v[2] + v[5] + v[6]) * tick_ms,
                                  "idle": (v[3] + v[4]) * tick_ms, "steal": v[7] * tick_ms}
    return out


def cpu_list(text: str) -> List[int]:
    """The CPUs of a sysfs CPU list ("0-3,8,10-11")."""
    cpus: List[int] = []
    for part in text.strip().split(","):
        a, _, b = part.partition("-")
        cpus += range(int(a), int(b or a) + 1)
    return cpus


def online_cpus() -> List[int]:
    return cpu_list(read("/sys/devices/system/cpu/online") or f"0-{(os.cpu_count() or 1) - 1}")


def _cpu_list_len(text: Optional[str]) -> Optional[int]:
    return len(cpu_list(text)) if text else None


def topology(cpu: int = 0) -> Dict[str, Optional[int]]:
    """CPU ``cpu``'s SMT width (hardware threads of its core) and the CPUs sharing its last-level
    cache, from sysfs (None where unreadable): the simulator's ``smt`` and ``cpus_per_llc``."""
    base = f"/sys/devices/system/cpu/cpu{cpu}"
    llc, level = None, -1
    cache = os.path.join(base, "cache")
    for idx in sorted(os.listdir(cache)) if os.path.isdir(cache) else []:
        lv = read(os.path.join(cache, idx, "level"))
        kind = read(os.path.join(cache, idx, "type"))
        if lv and lv.isdigit() and kind in ("Unified", "Data") and int(lv) > level:
            level, llc = int(lv), _cpu_list_len(read(os.path.join(cache, idx, "shared_cpu_list")))
    return {"smt": _cpu_list_len(read(os.path.join(base, "topology", "thread_siblings_list"))),
            "cpus_per_llc": llc}


def kernel_version() -> Tuple[int, int]:
    m = re.match(r"(\d+)\.(\d+)", platform.release())
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


# EEVDF replaced CFS in Linux 6.6 (custom slices came with it).
EEVDF_SINCE = (6, 6)


def matching_scheduler() -> str:
    """The simulator's fair class matching the running kernel: eevdf-6.18 from 6.17 (its slice
    protection rules), eevdf from 6.6, else cfs."""
    v = kernel_version()
    return "eevdf-6.18" if v >= (6, 17) else "eevdf" if v >= EEVDF_SINCE else "cfs"


def probe(mounts: Mounts) -> Dict[str, Any]:
    """The machine's facts; mounts securityfs / debugfs privately (journaled)."""
    cfg = _config()
    preempt = next((m for m in ("PREEMPT_RT", "PREEMPT", "PREEMPT_VOLUNTARY", "PREEMPT_NONE")
                    if cfg.get(f"CONFIG_{m}") == "y"), None)
    facts: Dict[str, Any] = {
        "kernel": platform.release(), "cpus": online_cpus(),
        "hz": int(cfg["CONFIG_HZ"]) if "CONFIG_HZ" in cfg else None,
        "preempt": preempt and preempt.lower().replace("_", "-") +
        (" (dynamic)" if cfg.get("CONFIG_PREEMPT_DYNAMIC") == "y" else ""),
        "autogroup": read("/proc/sys/kernel/sched_autogroup_enabled"),
        "rt_runtime_us": read("/proc/sys/kernel/sched_rt_runtime_us"),
        "rt_period_us": read("/proc/sys/kernel/sched_rt_period_us"),
        "rr_timeslice_ms": read("/proc/sys/kernel/sched_rr_timeslice_ms"),
        "cgroup": _cgroups(cfg), "loadavg": read("/proc/loadavg"), "topology": topology(),
    }
    if os.path.isdir(SECURITYFS):
        lock = read(os.path.join(mounts.get("securityfs"), "lockdown"))
        m = re.search(r"\[(\w+)\]", lock or "")
        facts["lockdown"] = m.group(1) if m else "unknown (no lockdown LSM)"
    if os.path.isdir(DEBUGFS):
        sched = os.path.join(mounts.get("debugfs"), "sched")
        facts.update(_sched_debug(read(os.path.join(sched, "debug")) or ""))
        facts["base_slice_knob"] = _locked(os.path.join(sched, "base_slice_ns"))
        facts["features_knob"] = _locked(os.path.join(sched, "features"))
        if facts["dl_bw"]:
            bw, total = facts["dl_bw"][0]
            facts["dl_bw_capacity"] = round(bw * len(facts["cpus"]) / BW_UNIT, 6)
            facts["dl_bw_reserved"] = round(total / BW_UNIT, 6)
        del facts["dl_bw"]
    return facts
