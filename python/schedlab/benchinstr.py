"""``python -m schedlab.bench --instructions [--base REV]``: instructions per event, the figure
that repeats.

Why: on a shared machine the suite's times move by 2x from one hour to the next for the same build
(issue 18: the hog line 1.85 against 3.46 M events/s for code 1 % apart in work), so a
speed step of a few percent cannot be seen in them. The number of instructions a run executes does
not depend on the hour: valgrind counts them (cachegrind without its cache simulation) for the
core's example binary (``crates/schedlab-core/examples/run.rs``: the simulation with no Python
around it), on the suite's workloads. Counts are those of this machine's build (compiler, target);
compare lines of one invocation, not figures from different machines.

``--base REV`` builds that revision's example binary too (a git worktree under
``target/bench-base/``, kept for the next call) and runs the same workloads on it in the same
invocation: each line prints the ratio and whether the two runs' metrics are byte-identical, which
is what a speed step that must change no output has to show.

The flat-cost runs (hogs at 100 and 10,000 tasks) run with cachegrind's cache simulation too (a
32 KiB L1 and a 512 KiB last level, 8-way, 64-byte lines, as one core of the 2-core machine kind),
and print the simulated misses per marginal event: instructions per event are within 1.15x of each
other at 10,000 and 100 tasks, but the time per event is not (issue 18's goal is in time), and the
difference is memory: each switch at 10,000 hogs on 8 CPUs finds its task's data out of cache. The
miss counts repeat where the times do not.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from .benchsuite import ROOT, gedf_tasks, gedf_wide, hogs, schbench_like, sleepers_mix

# (name, workload, scheduler, CPUs, engine settings as the example binary takes them).
EDF = {"SCHEDLAB_HZ": "1000", "SCHEDLAB_ZERO_COSTS": "1"}  # as the suite's anchor lines
WORKLOADS = [
    ("global EDF 4 CPUs/16 tasks/60 s (anchor)", lambda: gedf_tasks(60), "eevdf", 4, EDF),
    ("global EDF 64 CPUs/500 tasks/5 s", lambda: gedf_wide(500, 5), "eevdf", 64, EDF),
    ("hogs 1,000 tasks/8 CPUs/10 s", lambda: hogs(1000, 10), "eevdf", 8, {}),
    ("schbench-like 4x16/8 CPUs/1 s", lambda: schbench_like(4, 16, 1), "eevdf", 8, {}),
    # The suite's traced line: the run with its trace recorded, counters included, and written as
    # Perfetto (its output, compared with the base's: the file's bytes; see `count`).
    ("  same, traced and written as Perfetto", lambda: schbench_like(4, 16, 1), "eevdf", 8,
     {"SCHEDLAB_TRACE_ONLY": "1", "SCHEDLAB_PERFETTO": "{trace}"}),
    # The suite's big machine scaled to a quarter (its tasks per CPU, half of them sleepers: the
    # wakeup path at scale), which its 256-CPU line, in time only, cannot show by itself.
    ("sleepers mix 2,500 tasks/64 CPUs/1 s", lambda: sleepers_mix(2500, 1), "eevdf", 64, {}),
]
# Flat cost: instructions per event of 10 s more (11 s minus 1 s, so that set-up does not count).
FLAT = [(n, lambda n=n, s=s: hogs(n, s), s) for n in (100, 10_000) for s in (1, 11)]

REFS = re.compile(r"I\s+refs:\s+([\d,]+)")
D1_MISSES = re.compile(r"D1\s+misses:\s+([\d,]+)")
LL_MISSES = re.compile(r"LLd misses:\s+([\d,]+)")
# The simulated caches of the flat-cost runs: one core of the 2-core machine kind (lscpu: 32 KiB
# L1d and 512 KiB L2 a core; the 32 MiB L3 is shared and not simulated).
CACHES = ["--cache-sim=yes", "--D1=32768,8,64", "--LL=524288,8,64"]


class BenchError(Exception):
    """A tool or a build the count needs is missing or failed (one line, exit 2)."""


def instructions_of(valgrind_stderr: str) -> int:
    """The instruction count from valgrind's summary ("I   refs:      63,571,437")."""
    m = REFS.search(valgrind_stderr)
    if not m:
        raise BenchError("valgrind printed no instruction count: " + valgrind_stderr.strip()[-300:])
    return int(m.group(1).replace(",", ""))


def build(src: Path, target: Path, label: str) -> Path:
    """Build the example binary of the checkout at ``src`` into ``target``; its path."""
    print(f"building the example binary of {label} (cargo, release profile)...", file=sys.stderr)
    env = dict(os.environ, CARGO_TARGET_DIR=str(target))
    # Built as that tree's setup builds its native module: profile-guided where its
    # scripts/pgo_env.sh finds a profile for this rustc (trees before it: plain).
    cmd = ("if [ -f scripts/pgo_env.sh ]; then source scripts/pgo_env.sh; fi; "
           "exec cargo build --release --quiet --example run")
    p = subprocess.run(["bash", "-c", cmd], cwd=src, env=env, capture_output=True, text=True, check=False)
    if p.returncode != 0:
        raise BenchError(f"cargo build of {label} failed: {p.stderr.strip()[-600:]}")
    pgo = [ln for ln in p.stderr.splitlines() if ln.startswith("pgo: ")]
    print(f"  {label}: {pgo[-1][5:] if pgo else 'plain build (no scripts/pgo_env.sh)'}", file=sys.stderr)
    return target / "release" / "examples" / "run"


def base_commit(rev: str) -> str:
    """The commit ``rev`` names in this repository (checked before anything is built)."""
    if not rev or rev.startswith("-"):
        raise BenchError(f"--base {rev!r}: expected a git revision (a commit, branch or tag)")
    try:
        p = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"],
                           capture_output=True, text=True, check=False)
    except OSError as e:
        raise BenchError(f"--base {rev}: git did not run ({e})") from None
    if p.returncode != 0:
        raise BenchError(f"--base {rev}: not a commit of this repository ({ROOT}); expected a git "
                         "revision (a commit, branch or tag)")
    return p.stdout.strip()


def base_checkout(commit: str) -> Tuple[Path, str]:
    """A worktree of ``commit`` (:func:`base_commit`'s) under target/bench-base/ (made once, moved
    to ``commit`` after)."""
    rev = commit[:10]
    tree = ROOT / "target" / "bench-base" / "src"
    if (tree / ".git").exists():
        cmd = ["git", "-C", str(tree), "checkout", "--quiet", "--detach", commit]
    else:
        tree.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "-C", str(ROOT), "worktree", "prune"], check=False)
        cmd = ["git", "-C", str(ROOT), "worktree", "add", "--quiet", "--detach", str(tree), commit]
    p = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if p.returncode != 0:
        raise BenchError(f"git worktree for {rev}: {p.stderr.strip()[-300:]}")
    return tree, commit[:10]


# instructions, events (None: not printed), output digest, and with the cache simulation the
# simulated (L1 data, last-level data) misses
Count = Tuple[int, Optional[int], str, Optional[Tuple[int, int]]]


def misses_of(valgrind_stderr: str) -> Tuple[int, int]:
    """(D1 misses, LLd misses) from cachegrind's summary with its cache simulation on."""
    d1, ll = D1_MISSES.search(valgrind_stderr), LL_MISSES.search(valgrind_stderr)
    if not d1 or not ll:
        raise BenchError("valgrind printed no cache misses: " + valgrind_stderr.strip()[-300:])
    return int(d1.group(1).replace(",", "")), int(ll.group(1).replace(",", ""))


def count(binary: Path, wl_path: str, sched: str, cpus: int, env: Dict[str, str],
          caches: bool = False) -> Count:
    """(instructions, events, digest of the output, simulated misses) of one run of ``binary``
    under valgrind: the output is the metrics it prints, or where an ``env`` value holds
    ``{trace}`` (a file in a scratch directory: the Perfetto file of the traced line) that file's
    bytes, which a base binary older than its printing the metrics beside it writes too (events:
    None then). The misses only with ``caches`` (else None)."""
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "cg.out")
        trace = os.path.join(d, "trace.out")
        sim = CACHES if caches else ["--cache-sim=no"]
        cmd = ["valgrind", "--tool=cachegrind", *sim, f"--cachegrind-out-file={out}",
               str(binary), wl_path, sched, str(cpus)]
        p = subprocess.run(cmd, capture_output=True, text=True, check=False,
                           env={**os.environ, **{k: v.replace("{trace}", trace) for k, v in env.items()}})
        if os.path.exists(trace):
            with open(trace, "rb") as f:
                digest = hashlib.sha256(f.read()).hexdigest()
        else:
            digest = hashlib.sha256(p.stdout.encode()).hexdigest()
    if p.returncode != 0:
        raise BenchError(f"{binary} {wl_path}: exit {p.returncode}: {p.stderr.strip()[-400:]}")
    events = None
    if p.stdout.strip():
        metrics = json.loads(p.stdout)
        events = int(metrics["events"]) + int(metrics["context_switches"])
    return instructions_of(p.stderr), events, digest, misses_of(p.stderr) if caches else None


def _row(name: str, new: Count, base: Optional[Count]) -> None:
    ins, ev, digest = new[:3]
    ev = ev or 0
    text = f"{name:44} {ev:>10,} {ins / 1e6:>10.2f} M {ins / max(1, ev):>9.1f}"
    if base is not None:
        same = "same" if base[2] == digest else "DIFFERENT"
        text += f" {base[0] / 1e6:>10.2f} M {ins / base[0]:>7.4f}  {same}"
    print(text, flush=True)


def main(base_rev: Optional[str]) -> None:
    # The revision first: a wrong one must not wait for the working tree's build (minutes).
    base = base_commit(base_rev) if base_rev is not None else None
    if shutil.which("valgrind") is None:
        raise BenchError("valgrind not found on PATH: --instructions counts with valgrind's "
                         "cachegrind (e.g. apt install valgrind)")
    if shutil.which("cargo") is None:
        raise BenchError("cargo not found on PATH: --instructions builds the core's example binary")
    binary = build(ROOT, ROOT / "target", "the working tree")
    base_bin, label = None, ""
    if base is not None:
        tree, label = base_checkout(base)
        base_bin = build(tree, ROOT / "target" / "bench-base" / "target", f"{base_rev} ({label})")
    head = f"{'workload (eevdf)':44} {'events':>10} {'instructions':>12} {'per event':>9}"
    if base_bin:
        head += f" {'base ' + label:>12} {'ratio':>7}  output"
    print("instructions counted by valgrind (cachegrind, no cache simulation), example binary")
    print(head)
    with tempfile.TemporaryDirectory() as d:
        def run(tag: str, wl: dict, sched: str, cpus: int, env: Dict[str, str], caches=False):
            path = os.path.join(d, f"{tag}.json")
            with open(path, "w", encoding="utf-8") as f:
                json.dump(wl, f)
            new = count(binary, path, sched, cpus, env, caches)
            old = count(base_bin, path, sched, cpus, env, caches) if base_bin else None
            return new, old

        for i, (name, make, sched, cpus, env) in enumerate(WORKLOADS):
            _row(name, *run(f"w{i}", make(), sched, cpus, env))
        flat: Dict[Tuple[int, int], tuple] = {}
        for n, make, s in FLAT:
            flat[(n, s)] = run(f"flat{n}_{s}", make(), "eevdf", 8, {}, caches=True)
        marginal: List[Tuple[float, Optional[float]]] = []
        missed: List[str] = []
        for n in (100, 10_000):
            (n1, b1), (n11, b11) = flat[(n, 1)], flat[(n, 11)]
            diff = (n11[0] - n1[0], n11[1] - n1[1], n11[2] + n1[2])
            bdiff = (b11[0] - b1[0], b11[1] - b1[1], b11[2] + b1[2]) if b1 else None
            _row(f"hogs {n:,}/8 CPUs: 10 s marginal", diff, bdiff)
            marginal.append((diff[0] / max(1, diff[1]), bdiff[0] / max(1, bdiff[1]) if bdiff else None))
            missed.append(_misses(n, n1, n11, b1, b11))
    ratio = marginal[1][0] / marginal[0][0]
    text = f"{'  flat cost: 10,000 vs 100 hogs per event':44} {ratio:>34.2f}x"
    if marginal[1][1] is not None:
        text += f" (base {marginal[1][1] / marginal[0][1]:.2f}x)"
    print(text + "   goal <= 1.5x (issue 18, in time)")
    print("simulated misses per marginal event (L1d 32 KiB, last level 512 KiB; cachegrind):")
    for line in missed:
        print(line)


def _misses(n: int, short: Count, long: Count, bshort: Optional[Count], blong: Optional[Count]) -> str:
    """The flat-cost line of simulated misses per marginal event at ``n`` hogs (base beside)."""
    def per_event(a: Count, b: Count) -> Tuple[float, float]:
        events = max(1, (b[1] or 0) - (a[1] or 0))
        (d1a, lla), (d1b, llb) = a[3], b[3]
        return (d1b - d1a) / events, (llb - lla) / events
    d1, ll = per_event(short, long)
    text = f"{f'  hogs {n:,}/8 CPUs: L1d, last level':44} {d1:>10.2f} {ll:>12.2f}"
    if bshort is not None and blong is not None:
        bd1, bll = per_event(bshort, blong)
        text += f"   base {bd1:.2f}, {bll:.2f}"
    return text
