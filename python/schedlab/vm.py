"""``schedlab vm``: run a workload in a Linux 6.12 guest with sched_ext, under one of our
schedulers loaded as a BPF program, and measure it with the host runner's metric definitions.

This machine's kernel has no SCHED_CLASS_EXT, so the guest is a kernel we build
(scripts/vm/build-kernel.sh: Debian's linux-source-6.12 with sched_ext, BTF and 9p, cached) and
boot under qemu (TCG: this machine's /dev/kvm cannot run stock guests) with a busybox initramfs
holding the native worker, the scheduler's binary (scripts/vm/build-scx.sh builds scx/scx_*/ and
the kernel's scx_simple against that tree) and the worker plans (host/plan.py, the same refusals as
the host runner). The guest script:

1. mounts the host's output folder (9p over virtio) and tracefs;
2. starts the scheduler's loader and waits for "schedlab-scx: attached" and for
   /sys/kernel/sched_ext/state to read ``enabled`` (a verifier rejection ends the loader first);
3. records sched_switch/waking/wakeup/migrate with the ``mono`` clock, as the host's tracefs
   backend does, runs the workers from a common start, saves the trace, /proc/stat before and
   after, the scheduler state after the run, the loader's exit record and dmesg;
4. unloads the scheduler and powers off.

The guest runs with ``-icount shift=1,sleep=off``: its clock advances with the instructions it
executes (2 ns each), not with the host's wall clock, so ticks, slices and the workload's run
times keep their proportions however slowly qemu emulates (with plain TCG the guest's ticks came
late and PDS's shares moved by a third; see docs/sched_ext.md). Absolute latencies are still those
of an emulated machine: compare shares, ordering and switches per unit of work, not microseconds.

A scheduler the verifier rejects, or that the kernel ejects during the run (its watchdog finding a
runnable task stalled, an ``scx_bpf_error``), is one :class:`VmError` with the kernel's message;
the guest is powered off or killed, and the temporary folder removed, in every case.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from typing import Any, Callable, Dict, List, Optional, Tuple

from .api import SimResult, check, import_trace
from .host import REPAIRS_KEPT, _results, worker_path
from .host.capture import BUFFER_KB, EVENTS
from .host.plan import HostError, duration_ns, make
from .host.probe import cpu_times

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
SCRIPTS = os.path.join(ROOT, "scripts", "vm")

# Simulator scheduler -> the guest binary that runs the same algorithm (scx/<name>/; scx_simple is
# the kernel's own tools/sched_ext example, which policy/scx_simple.rs ports).
GUEST_SCHEDULERS = {"scx_simple": "scx_simple", "scx_bmq": "scx_bmq", "scx_pds": "scx_pds"}
# Deliberately broken schedulers the tests load (scx/fixtures/).
FIXTURES = ("scx_broken_verifier", "scx_stall")

# Guest clock: 2 ns per emulated instruction, idle time skipped (qemu -icount).
ICOUNT = "shift=1,sleep=off"
GUEST_MEM_MB = 512
# Unit of `run` work in the guest: calibrated busy loops (the guest calibrates them). The host's
# default, thread CPU time ("oncpu"), reads CLOCK_THREAD_CPUTIME_ID every 20 us, a system call that
# takes the run queue's lock: under -icount qemu runs the vCPUs in turn, so a vCPU that spins on a
# lock held by the other waits out whole turns, and slices ended 1-5 ms late (docs/sched_ext.md).
WORK = "loops"
# Common start of the workers, seconds after the guest script reads the clock.
START_LEAD_S = 2


class VmError(Exception):
    """The guest could not run the workload, or the kernel refused or ejected the scheduler."""


def _quiet(_: str) -> None:
    pass


def _script(name: str, log: Callable[[str], None], check_only: bool = False) -> str:
    """Run scripts/vm/NAME (building or finding its cache), relaying its progress; its last stdout
    line is the cache folder. ``check_only``: find the cache only (the script exits 3 without it)."""
    path = os.path.join(SCRIPTS, name)
    if not os.path.isfile(path):
        raise VmError(f"{path} is missing: `schedlab vm` needs the source tree (scripts/vm, scx/)")
    env = {**os.environ, "SCHEDLAB_VM_CHECK_ONLY": "1"} if check_only else None
    p = subprocess.Popen(["bash", path], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    assert p.stderr is not None and p.stdout is not None
    tail: List[str] = []
    for line in p.stderr:
        line = line.rstrip()
        if line.startswith(("build-kernel:", "build-scx:")):
            log(line)
        tail = (tail + [line])[-15:]
    out = p.stdout.read().strip().splitlines()
    if p.wait() == 3 and check_only:
        why = tail[-1].removeprefix("not built: ") if tail else name
        raise VmError(f"the guest is not built ({why}): run `schedlab vm build` "
                      "first (10-15 minutes on 2 cores; as root it installs the Debian packages it needs)")
    if p.returncode != 0 or not out:
        raise VmError(f"scripts/vm/{name} failed:\n  " + "\n  ".join(tail))
    return out[-1]


def build(log: Callable[[str], None] = _quiet, check_only: bool = False) -> Tuple[str, str]:
    """The guest kernel's folder (with bzImage and .config) and the schedulers' folder, built on
    first use (about 10 minutes on 2 cores; apt installs what is missing) and cached. With
    ``check_only`` (`vm run`, `compare --vm`) nothing is installed or built: a missing build is a
    VmError that says to run `schedlab vm build`."""
    return _script("build-kernel.sh", log, check_only), _script("build-scx.sh", log, check_only)


def guest_hz(kdir: str) -> int:
    """CONFIG_HZ of the guest kernel."""
    with open(os.path.join(kdir, ".config"), encoding="utf-8") as f:
        m = re.search(r"^CONFIG_HZ=(\d+)$", f.read(), re.M)
    return int(m.group(1)) if m else 250


GUEST_SCRIPT = r"""
O=/out
mount -t 9p -o trans=virtio,version=9p2000.L lab $O || { echo "vm: no 9p output folder"; exit 3; }
T=/sys/kernel/tracing
cat /proc/stat > $O/stat0
SCHED=$(cat /lab/sched)
/bin/$SCHED > $O/scx.out 2> $O/scx.err &
SPID=$!
i=0
while [ $i -lt 600 ]; do
  grep -q "schedlab-scx: attached" $O/scx.out 2>/dev/null && break
  [ "$(cat /sys/kernel/sched_ext/state)" = enabled ] && sleep 0.5 && break
  kill -0 $SPID 2>/dev/null || break
  sleep 0.1; i=$((i+1))
done
echo "$(cat /sys/kernel/sched_ext/state) $(cat /sys/kernel/sched_ext/root/ops 2>/dev/null)" > $O/state.before
if [ "$(cat /sys/kernel/sched_ext/state)" != enabled ]; then
  wait $SPID; echo $? > $O/scx.rc; dmesg > $O/dmesg.txt; exit 0
fi
echo mono > $T/trace_clock; echo @BUFFER_KB@ > $T/buffer_size_kb; echo 0 > $T/options/overwrite
echo 1 > $T/options/record-tgid
for e in @EVENTS@; do echo 1 > $T/events/sched/$e/enable; done
echo 1 > $T/tracing_on
NPL=$(schedlab-worker calibrate | sed 's/[^0-9.]//g')
echo $NPL > $O/ns_per_loop
START=$(awk '{printf "%.0f", ($1 + @LEAD@) * 1e9}' /proc/uptime)
echo $START > $O/start_ns
W=""
for p in /lab/plans/*.json; do
  n=$(basename $p .json)
  sed -e "s/\"start_at_ns\": 0/\"start_at_ns\": $START/" -e "s/\"ns_per_loop\": 1.0/\"ns_per_loop\": $NPL/" \
    $p > /tmp/$n.json
  schedlab-worker run /tmp/$n.json > $O/w-$n.out 2> $O/w-$n.err &
  W="$W $!"
done
rc=0
for w in $W; do wait $w || rc=1; done
echo $rc > $O/workers.rc
echo 0 > $T/tracing_on
cat /proc/stat > $O/stat1
cat $T/trace > $O/trace.txt
cat $T/per_cpu/cpu*/stats > $O/trace.stats
echo "$(cat /sys/kernel/sched_ext/state) $(cat /sys/kernel/sched_ext/root/ops 2>/dev/null)" > $O/state.after
kill -INT $SPID; wait $SPID; echo $? > $O/scx.rc
dmesg > $O/dmesg.txt
"""

INIT = """#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc none /proc; mount -t sysfs none /sys; mount -t devtmpfs none /dev 2>/dev/null
mount -t tracefs none /sys/kernel/tracing 2>/dev/null
echo "=== vm: $(uname -r), $(nproc) cpus, sched_ext $(cat /sys/kernel/sched_ext/state 2>/dev/null)"
sh /lab/script.sh; echo "=== vm: exit $?"
echo o > /proc/sysrq-trigger; sleep 5
"""


def _copy_with_libs(binary: str, root: str) -> None:
    shutil.copy(binary, os.path.join(root, "bin"))
    ldd = subprocess.run(["ldd", binary], capture_output=True, text=True).stdout
    for lib in re.findall(r"(/\S+)", ldd):
        dest = root + lib
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        if not os.path.exists(dest):
            shutil.copy(os.path.realpath(lib), dest)


def _initramfs(tmp: str, sched_bin: str, plans: Dict[str, dict], partial: bool) -> str:
    root = os.path.join(tmp, "root")
    for d in ("bin", "proc", "sys", "dev", "tmp", "out", "lab/plans"):
        os.makedirs(os.path.join(root, d), exist_ok=True)
    busybox = shutil.which("busybox") or "/bin/busybox"
    shutil.copy(busybox, os.path.join(root, "bin", "busybox"))
    _copy_with_libs(worker_path(), root)
    _copy_with_libs(sched_bin, root)
    script = (GUEST_SCRIPT.replace("@BUFFER_KB@", str(BUFFER_KB)).replace("@EVENTS@", " ".join(EVENTS))
              .replace("@LEAD@", str(START_LEAD_S)))
    with open(os.path.join(root, "lab", "script.sh"), "w", encoding="utf-8") as f:
        f.write(script)
    with open(os.path.join(root, "lab", "sched"), "w", encoding="utf-8") as f:
        f.write(os.path.basename(sched_bin) + (" -p" if partial else "") + "\n")
    for name, plan in plans.items():
        with open(os.path.join(root, "lab", "plans", f"{name}.json"), "w", encoding="utf-8") as f:
            json.dump(plan, f)
    with open(os.path.join(root, "init"), "w", encoding="utf-8") as f:
        f.write(INIT)
    os.chmod(os.path.join(root, "init"), 0o755)
    image = os.path.join(tmp, "initramfs.cpio.gz")
    files = subprocess.run(["find", "."], cwd=root, capture_output=True, text=True, check=True).stdout
    cpio = subprocess.run(["cpio", "-o", "-H", "newc"], cwd=root, input=files.encode(),
                          capture_output=True, check=True).stdout
    with gzip.open(image, "wb", compresslevel=1) as g:
        g.write(cpio)
    return image


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def verifier_message(err: str) -> Optional[str]:
    """The verifier's reason and the source line it points at, from libbpf's load log."""
    m = re.search(r"-- BEGIN PROG LOAD LOG --\n(.*?)-- END PROG LOAD LOG --", err, re.S)
    if not m:
        return None
    lines = [x for x in m.group(1).splitlines() if x.strip()]
    reason = next((x for x in reversed(lines) if not x.startswith(("processed ", "verification time"))), "")
    src = next((x[1:].strip() for x in reversed(lines) if x.startswith(";")), "")
    prog = re.search(r"prog '([^']+)': BPF program load failed", err)
    where = f" (at {src.split(' @ ')[1]}: {src.split(' @ ')[0]})" if " @ " in src else ""
    what = f"prog {prog.group(1)!r}" if prog else "a program"
    return f"the BPF verifier rejected {what}: {reason}{where}"


def _guest_error(out: str, name: str) -> Optional[str]:
    """Why the scheduler did not stay loaded for the whole run, or None."""
    before = _read(os.path.join(out, "state.before")).split()
    after = _read(os.path.join(out, "state.after")).split()
    err = _read(os.path.join(out, "scx.err"))
    dmesg = [x.strip() for x in _read(os.path.join(out, "dmesg.txt")).splitlines() if "sched_ext" in x]
    if not before or before[0] != "enabled":
        why = verifier_message(err)
        if why is None:
            tail = [x for x in err.splitlines() if x.strip()][-6:]
            why = "its loader failed: " + (" | ".join(tail) if tail else "no message")
        return f"{name}: not loaded in the guest kernel: {why}"
    if not after or after[0] != "enabled":
        # "EXIT: reason (message)" (UEI_REPORT; the scx Rust schedulers print "Error: EXIT: ...").
        exit_line = next((x.split("EXIT: ", 1)[1] for x in err.splitlines() if "EXIT: " in x), None)
        kernel = "; ".join(x.split("] ", 1)[-1] for x in dmesg if "disabled" in x or "failed to run" in x)
        return (f"{name}: the kernel ejected the scheduler during the run: {exit_line or 'no exit record'}"
                f"{f' (dmesg: {kernel})' if kernel else ''}")
    return None


def _cpu_ms(text0: str, text1: str) -> Dict[int, Dict[str, float]]:
    """Per-CPU busy/idle/steal ms between two guest /proc/stat texts (host/probe.cpu_times)."""
    a, b = cpu_times(text0), cpu_times(text1)
    return {c: {k: b[c][k] - a[c][k] for k in b[c]} for c in b if c in a}


def run(workload: str, scheduler: str, duration_s: Optional[float] = None, cpus: int = 2,
        binary: Optional[str] = None, keep: Optional[str] = None, timeout_s: Optional[float] = None,
        log: Callable[[str], None] = _quiet) -> Tuple[SimResult, Dict[str, Any]]:
    """Run `workload` in the guest under `scheduler` (a key of GUEST_SCHEDULERS; ``binary``: a
    fixture of FIXTURES, or the path of any sched_ext scheduler binary, instead); returns the
    metrics (host runner definitions, /proc the authority) and the run's facts. ``keep``: copy
    the guest's output folder (trace, dmesg, loader and worker output) there."""
    external = binary is not None and os.sep in binary
    if binary is not None and external and not (os.path.isfile(binary) and os.access(binary, os.X_OK)):
        raise VmError(f"{binary}: not an executable file (a sched_ext scheduler built for the guest's 6.12)")
    name = (os.path.basename(binary) if binary is not None and external
            else binary or GUEST_SCHEDULERS.get(scheduler))
    if name is None or (binary is not None and not external and binary not in FIXTURES):
        raise VmError(f"no guest build of scheduler {scheduler!r}: the guest runs "
                      f"{', '.join(GUEST_SCHEDULERS)}, or any sched_ext binary given by path (--binary)")
    if not 1 <= cpus <= 16:
        raise VmError(f"--cpus: expected 1..16 guest CPUs, got {cpus}")
    model = check(workload)
    dur = duration_ns(model, duration_s)
    plan = make(model, cpus)
    src = model["source"]
    if len(plan.groups) > 0 or any(th["group"] != "/" for ths in plan.procs.values() for th in ths):
        raise HostError(f"{src}: task groups: the guest has no cgroup hierarchy (run it with "
                        "`schedlab host run`)")
    if plan.sync:
        raise HostError(f"{src}: sync objects ({', '.join(sorted(plan.sync))}) are not set up in the guest")
    if plan.slices:
        raise HostError(f"{src}: tasks.{plan.slices[0][0]}.dl-runtime: custom fair slices do not apply "
                        "under sched_ext")
    kdir, sdir = build(log, check_only=True)
    sched_bin = binary if binary is not None and external else os.path.join(sdir, name)
    if not os.path.isfile(sched_bin):
        raise VmError(f"{sched_bin}: missing from the scheduler build (scripts/vm/build-scx.sh)")
    hz = guest_hz(kdir)
    # SCHED_EXT tasks in the workload: load the scheduler with SCX_OPS_SWITCH_PARTIAL (-p), so
    # that the other tasks, and the guest's own, stay in the fair class (simulate with partial=1).
    partial = any(th["policy"] == "SCHED_EXT" for ths in plan.procs.values() for th in ths)
    plans = {p: {"start_at_ns": 0, "duration_ns": dur, "ns_per_loop": 1.0, "work": WORK,
                 "threads": [{k: v for k, v in th.items() if k != "group"} for th in threads]}
             for p, threads in plan.procs.items()}
    tmp = tempfile.mkdtemp(prefix="schedlab-vm-")
    try:
        out = os.path.join(tmp, "out")
        os.makedirs(out)
        image = _initramfs(tmp, sched_bin, plans, partial)
        # Boot, load and run take about 3x the workload's guest time with 2 busy vCPUs.
        limit = timeout_s or 90 + 6 * cpus * dur / 1e9
        cmd = ["qemu-system-x86_64", "-accel", "tcg", "-icount", ICOUNT, "-cpu", "max", "-smp", str(cpus),
               "-m", str(GUEST_MEM_MB), "-kernel", os.path.join(kdir, "bzImage"), "-initrd", image,
               "-append", "console=ttyS0 quiet panic=-1", "-nographic", "-no-reboot",
               "-virtfs", f"local,path={out},mount_tag=lab,security_model=none"]
        log(f"vm: booting Linux {_read(os.path.join(kdir, 'KERNELVERSION')).strip()} ({cpus} CPUs, HZ {hz}) "
            f"with {name}, {dur / 1e9:g} s of workload")
        console = _boot(cmd, limit)
        with open(os.path.join(out, "console.txt"), "w", encoding="utf-8") as f:
            f.write(console)
        if keep:
            shutil.copytree(out, keep, dirs_exist_ok=True)
        if "=== vm: exit" not in console:
            tail = "\n  ".join(console.strip().splitlines()[-8:])
            raise VmError(f"the guest stopped before its script ended:\n  {tail}")
        bad = _guest_error(out, name)
        if bad:
            raise VmError(bad)
        if _read(os.path.join(out, "workers.rc")).strip() != "0":
            texts = [_read(os.path.join(out, f)).strip() for f in sorted(os.listdir(out))
                     if f.startswith("w-") and f.endswith(".err")]
            errs = " | ".join(t for t in texts if t)
            raise VmError(f"a worker failed in the guest: {errs or 'no message'}")
        return _measure(out, plans, dur, hz, kdir, name, cpus, partial)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _boot(cmd: List[str], limit: float) -> str:
    """Run qemu to power-off; kill it (and so the guest) on timeout or interrupt."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                         start_new_session=True)
    try:
        raw, _ = p.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        raw, _ = p.communicate()
        text = raw.decode(errors="replace").replace("\r", "")
        tail = "\n  ".join(text.strip().splitlines()[-8:])
        raise VmError(f"the guest did not finish within {limit:.0f} s and was killed; console "
                      f"tail:\n  {tail}") from None
    except BaseException:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
        raise
    text = raw.decode(errors="replace").replace("\r", "")
    return text[text.find("=== vm:"):] if "=== vm:" in text else text


def _measure(out: str, plans: Dict[str, dict], dur: int, hz: int, kdir: str, name: str,
             cpus: int, partial: bool) -> Tuple[SimResult, Dict[str, Any]]:
    outs = [_read(os.path.join(out, f"w-{p}.out")) for p in plans]
    start = int(_read(os.path.join(out, "start_ns")).strip())
    tids = sorted({int(json.loads(x)["tid"]) for o in outs for x in o.splitlines() if x.strip()})
    imp = import_trace(os.path.join(out, "trace.txt"), tolerant=True, window=(start, start + dur),
                       workload_pids=tids)
    dropped = sum(int(x.split(":")[1]) for x in _read(os.path.join(out, "trace.stats")).splitlines()
                  if x.startswith(("dropped events:", "overrun:")))
    kver = _read(os.path.join(kdir, "KERNELVERSION")).strip()
    info: Dict[str, Any] = {"kernel": f"{kver} guest", "hz": hz, "start_ns": start, "dropped_events": dropped,
                            "cpu_ms": _cpu_ms(_read(os.path.join(out, "stat0")),
                                              _read(os.path.join(out, "stat1"))),
                            "cpus": list(range(cpus)), "guest_scheduler": name, "icount": ICOUNT,
                            "repair_count": len(imp.repairs), "repairs": imp.repairs[:REPAIRS_KEPT],
                            "notes": [],
                            "partial": partial}
    res = _results(imp.result, outs, info, imp.clock_uncertainty)
    m = dict(res.metrics)
    m["scheduler"] = f"vm {kver} {name}"
    res._metrics = type(res.metrics)(m)
    return res, info


# --- agreement --------------------------------------------------------------------------------

SHARE_REL_TOL = 0.10
# A task the simulator starves (share under STARVED) is judged on absolute share instead.
STARVED, STARVED_ABS_TOL = 0.05, 0.01


def agreement(sim: dict, guest: dict, rel_tol: float = SHARE_REL_TOL) -> Dict[str, Any]:
    """Speed-independent agreement of two runs of one workload: each task's share of the
    workload's CPU time (within SHARE_REL_TOL relative, or STARVED_ABS_TOL absolute where the
    simulator's share is under STARVED) and its involuntary switches per CPU-second (shown, not
    judged: the guest has other tasks that interrupt the workload)."""
    gt = {t["name"]: t for t in guest["tasks"]}
    common = [t for t in sim["tasks"] if t["name"] in gt]
    tot_s = sum(t["cpu_time_us"] for t in common) or 1.0
    tot_g = sum(gt[t["name"]]["cpu_time_us"] for t in common) or 1.0
    rows = []
    for t in common:
        g = gt[t["name"]]
        a, b = t["cpu_time_us"] / tot_s, g["cpu_time_us"] / tot_g
        ok = abs(b - a) <= (STARVED_ABS_TOL if a < STARVED else rel_tol * a)

        def per_cpu_s(x: dict) -> Optional[float]:
            if x["nivcsw"] is None or not x["cpu_time_us"]:
                return None
            return x["nivcsw"] / (x["cpu_time_us"] / 1e6)
        rows.append({"task": t["name"], "share_sim": a, "share_vm": b,
                     "rel": (b - a) / a if a else None, "ok": ok,
                     "ivcsw_per_cpu_s_sim": per_cpu_s(t), "ivcsw_per_cpu_s_vm": per_cpu_s(g)})
    return {"tasks": rows, "agree": bool(rows) and all(r["ok"] for r in rows),
            "rule": f"share of the workload's CPU time within {rel_tol:.0%} (relative), or within "
                    f"{STARVED_ABS_TOL:.0%} of the total where the simulator's share is under {STARVED:.0%}"}


def agreement_table(a: Dict[str, Any]) -> str:
    def f(x: Optional[float], fmt: str) -> str:
        return "-" if x is None else format(x, fmt)
    lines = ["CPU-time shares (speed-independent; " + a["rule"] + ")",
             f"{'task':<16} {'sim':>8} {'vm':>8} {'(vm-sim)/sim':>13} {'ok':>4} {'ivcsw/cpu-s sim':>16} "
             f"{'vm':>8}"]
    for r in a["tasks"]:
        rel = "n/a" if r["rel"] is None else f"{100 * r['rel']:+.1f}%"
        lines.append(f"{r['task'][:16]:<16} {r['share_sim']:>8.4f} {r['share_vm']:>8.4f} {rel:>13} "
                     f"{'yes' if r['ok'] else 'NO':>4} {f(r['ivcsw_per_cpu_s_sim'], '.2f'):>16} "
                     f"{f(r['ivcsw_per_cpu_s_vm'], '.2f'):>8}")
    lines.append(f"agreement: {'yes' if a['agree'] else 'NO'} ({sum(r['ok'] for r in a['tasks'])} of "
                 f"{len(a['tasks'])} tasks within tolerance)")
    lines.append("meaningful under TCG: shares, ordering, switches per CPU-second; not meaningful: "
                 "wakeup latencies and other absolute times (an emulated CPU)")
    return "\n".join(lines)


def log_stderr(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)
