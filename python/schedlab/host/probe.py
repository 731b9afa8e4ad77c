"""What the machine is and what it allows, found before the runner changes anything
(../shared/host.md §0, §2, §4): kernel, HZ, preemption model, lockdown, the scheduler's debugfs
values (base slice, feature mask, DL bandwidth), cgroup flavour, RT group runtime, autogroup.

Mounting is the only change the probe makes: securityfs (for the lockdown mode) and debugfs
(read-only ``sched/debug``) are mounted when they are not, journaled, and unmounted at the end.
"""

from __future__ import annotations

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


def mount(fstype: str, where: str, journal: Journal) -> bool:
    """Mount `fstype` at `where` unless it is; True if we did (journaled for unmounting)."""
    if os.path.ismount(where):
        return False
    journal.add(umount=where)
    r = subprocess.run(["mount", "-t", fstype, "nodev", where], capture_output=True, text=True)
    if r.returncode != 0:
        raise HostError(f"cannot mount {fstype} at {where}: {r.stderr.strip()}")
    return True


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


def dl_total_bw() -> Optional[float]:
    """Reserved DEADLINE bandwidth of the root domain, in CPUs (fair servers included)."""
    d = _sched_debug(read(os.path.join(DEBUGFS, "sched", "debug")) or "")
    return d["dl_bw"][0][1] / BW_UNIT if d["dl_bw"] else None


def _cgroups() -> Dict[str, Any]:
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
        return {"flavour": "v2", "root": v2, "rt_group_sched": False}
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


def cpu_times() -> Dict[int, Dict[str, float]]:
    """Per-CPU busy, idle and steal time (ms) from /proc/stat. Steal is time the hypervisor ran
    something else while this vCPU had work: with PARAVIRT_TIME_ACCOUNTING the scheduler leaves
    it out of a task's run time (/proc schedstat) but a trace's switch-to-switch span includes it."""
    tick_ms = 1000 / os.sysconf("SC_CLK_TCK")
    out = {}
    for line in (read("/proc/stat") or "").splitlines():
        f = line.split()
        if f and f[0].startswith("cpu") and f[0] != "cpu":
            v = [int(x) for x in f[1:9]]
            out[int(f[0][3:])] = {"busy": (v[0] + v[1] + v[2] + v[5] + v[6]) * tick_ms,
                                  "idle": (v[3] + v[4]) * tick_ms, "steal": v[7] * tick_ms}
    return out


def online_cpus() -> List[int]:
    text = read("/sys/devices/system/cpu/online") or f"0-{(os.cpu_count() or 1) - 1}"
    cpus: List[int] = []
    for part in text.split(","):
        a, _, b = part.partition("-")
        cpus += range(int(a), int(b or a) + 1)
    return cpus


def kernel_version() -> Tuple[int, int]:
    m = re.match(r"(\d+)\.(\d+)", platform.release())
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


# EEVDF replaced CFS in Linux 6.6 (custom slices came with it).
EEVDF_SINCE = (6, 6)


def matching_scheduler() -> str:
    """The simulator's fair class matching the running kernel: eevdf from 6.6, else cfs."""
    return "eevdf" if kernel_version() >= EEVDF_SINCE else "cfs"


def probe(journal: Journal) -> Dict[str, Any]:
    """The machine's facts; mounts securityfs / debugfs if needed (journaled)."""
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
        "cgroup": _cgroups(), "loadavg": read("/proc/loadavg"),
    }
    if os.path.isdir(SECURITYFS):
        mine = mount("securityfs", SECURITYFS, journal)
        lock = read(os.path.join(SECURITYFS, "lockdown"))
        m = re.search(r"\[(\w+)\]", lock or "")
        facts["lockdown"] = m.group(1) if m else "unknown (no lockdown LSM)"
        if mine:
            subprocess.run(["umount", SECURITYFS], capture_output=True)
    if os.path.isdir(DEBUGFS):
        mount("debugfs", DEBUGFS, journal)
        sched = os.path.join(DEBUGFS, "sched")
        facts.update(_sched_debug(read(os.path.join(sched, "debug")) or ""))
        facts["base_slice_knob"] = _locked(os.path.join(sched, "base_slice_ns"))
        facts["features_knob"] = _locked(os.path.join(sched, "features"))
        if facts["dl_bw"]:
            bw, total = facts["dl_bw"][0]
            facts["dl_bw_capacity"] = round(bw * len(facts["cpus"]) / BW_UNIT, 6)
            facts["dl_bw_reserved"] = round(total / BW_UNIT, 6)
        del facts["dl_bw"]
    return facts
