"""The `schedlab` command line's arguments (cli.py runs the commands): one function per
subcommand, so that a command builds only its own parser (:func:`parser`)."""

from __future__ import annotations

import argparse
import os
import sys

# The converters live beside `run`'s argument table (runargs.py, which imports no argparse).
from .runargs import RUN_ARGUMENTS, nonneg, positive

# Names for annotations only: importing typing costs `schedlab run` about 3 ms of start-up
# (issue 18), and every annotation here is a string (`from __future__ import annotations`).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

def _version() -> str:
    """The installed package's version (pyproject.toml), else the source tree's."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("schedlab")
    except PackageNotFoundError:
        return "0.1.0 (source tree)"


class _VersionAction(argparse.Action):
    """--version, looked up only when asked for (importlib.metadata costs ~18 ms of start-up)."""

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"schedlab {_version()}")
        parser.exit()


def _add_run(sub) -> None:
    """`schedlab run`: its arguments are runargs.RUN_ARGUMENTS, which runargs.parse_run also reads."""
    r = sub.add_parser("run", help="simulate an rt-app workload")
    for names, kw in RUN_ARGUMENTS:
        r.add_argument(*names, **kw)


def _add_check(sub) -> None:
    """`schedlab check`."""
    c = sub.add_parser("check", help="validate a workload without running it")
    c.add_argument("workload", help="rt-app JSON file: everything `run` would refuse is reported")
    c.add_argument("--duration",
                   help="the duration `run` will be given (a workload that loops forever needs one)")


def _add_schedulers(sub) -> None:
    """`schedlab schedulers`."""
    s = sub.add_parser("schedulers", help="list schedulers and their tunables")
    s.add_argument("--json", action="store_true", help="the registry as JSON")
    s.add_argument("--markdown", action="store_true", help="the registry as Markdown (docs/schedulers.md)")


def _add_metrics(sub) -> None:
    """`schedlab metrics`."""
    me = sub.add_parser("metrics", help="describe every metric field")
    me.add_argument("--json", action="store_true", help="the descriptions as JSON")


def _add_completion(sub) -> None:
    """`schedlab completion`."""
    co = sub.add_parser("completion", help="print a shell completion script (bash or zsh)")
    co.add_argument("shell", choices=["bash", "zsh"],
                    help="e.g. `schedlab completion bash > /etc/bash_completion.d/schedlab`")


def _add_tolerant(p) -> None:
    """The trace readers' ``--tolerant`` (one wording for `trace import` and `trace paths`)."""
    p.add_argument("--tolerant", action="store_true",
                   help="repair missing transitions (and report them) instead of refusing the trace")


def _add_trace(sub) -> None:
    """`schedlab trace`."""
    tr = sub.add_parser("trace", help="work with recorded traces")
    trs = tr.add_subparsers(dest="trace_cmd", required=True)
    ti = trs.add_parser("import", help="read tracefs / trace-cmd / perf script text: metrics, exports, replay")
    ti.add_argument("file", help="trace text")
    _add_tolerant(ti)
    ti.add_argument("--json", metavar="FILE", help="write the metrics as JSON")
    ti.add_argument("--perfetto", metavar="FILE", help="write a Perfetto .pftrace")
    ti.add_argument("--ftrace", metavar="FILE", help="write normalised ftrace text")
    ti.add_argument("--workload", metavar="FILE", help="write an rt-app workload replaying the tasks")
    ti.add_argument("--hz", type=positive,
                    help="the recording kernel's HZ, for a tracefs trace on the mono clock (schedlab host "
                         "run's, or trace_clock=mono) with its flags column: CPU time is then counted as the "
                         "kernel accounts it, a wakeup's path charged to the wakee (docs/model.md, \"Trace "
                         "import\"); without it, switch to switch")
    tp = trs.add_parser("paths", help="wakeup latency by the path each wakeup took to its CPU (stayed, "
                                      "placed, pushed, pulled), for a host trace or a simulated one")
    tp.add_argument("file", help="trace text: tracefs / trace-cmd / perf script, or schedlab run --trace's "
                                 "ftrace text")
    tp.add_argument("--task", metavar="PREFIX", default="",
                    help="only the threads whose name starts with PREFIX")
    _add_tolerant(tp)
    tp.add_argument("--json", metavar="FILE", help="write the table as JSON")


def _add_host(sub) -> None:
    """`schedlab host`."""
    hp = sub.add_parser("host", help="run a workload on this machine's kernel")
    hps = hp.add_subparsers(dest="host_cmd", required=True)
    hr = hps.add_parser("run", help="run WORKLOAD on the live kernel (root), traced and measured")
    hr.add_argument("workload", help="rt-app JSON file")
    hr.add_argument("--duration", help="override global.duration (seconds or 500ms, 2s, ...)")
    hr.add_argument("--json", metavar="FILE", help="write the metrics as JSON")
    hr.add_argument("--facts", metavar="FILE",
                    help="write the machine's facts, the /proc cross-check and the workers' reports as JSON")
    hr.add_argument("--backend", choices=["tracefs", "perf"], default="tracefs",
                    help="how to record the scheduler (default: a private tracefs instance)")
    hr.add_argument("--no-isolate", action="store_true",
                    help="do not put the run in its own high-weight cgroup (other sessions then compete)")
    hr.add_argument("--work", choices=["oncpu", "loops"], default="oncpu",
                    help="unit of `run` work: time on CPU (default) or calibrated loops as rt-app")
    hr.add_argument("--trace", metavar="FILE", help="keep the raw recorded trace text (tracefs or perf script)")
    hw = hr.add_mutually_exclusive_group()
    hw.add_argument("--no-wait", action="store_true",
                    help="refuse (exit 2) instead of waiting when another host run holds the machine's lock "
                    "(/run/schedlab-host.lock)")
    hw.add_argument("--lock-timeout", type=float, metavar="SECONDS",
                    help="wait at most this long for another host run to finish (default: wait)")
    hps.add_parser("probe", help="print what this machine allows (lockdown, cgroups, DL bandwidth, ...)")


def _add_vm(sub) -> None:
    """`schedlab vm`."""
    vm = sub.add_parser("vm", help="run a workload in a Linux 6.12 guest under qemu with a sched_ext "
                                   "scheduler (docs/sched_ext.md)")
    vms = vm.add_subparsers(dest="vm_cmd", required=True)
    vms.add_parser("build", help="build (once) and cache the guest kernel and the BPF schedulers "
                                 "(about 10 minutes on 2 cores; installs clang-19, qemu, ... with apt)")
    vr = vms.add_parser("run", help="run WORKLOAD in the guest under --scheduler, traced and measured")
    vr.add_argument("workload", help="rt-app JSON file")
    vs = vr.add_mutually_exclusive_group(required=True)
    vs.add_argument("--scheduler", help="scx_simple, scx_bmq or scx_pds")
    vs.add_argument("--binary", metavar="PATH", help="any sched_ext scheduler binary built for Linux 6.12 "
                    "(e.g. scx_rlfifo from the scx project); its shared libraries are copied in")
    vr.add_argument("--cpus", type=int, default=2, help="guest CPUs (default 2)")
    vr.add_argument("--duration", help="override global.duration (seconds or 500ms, 2s, ...)")
    vr.add_argument("--json", metavar="FILE", help="write the metrics as JSON")
    vr.add_argument("--keep", metavar="DIR", help="keep the guest's output (trace, dmesg, loader log) in DIR")


def _add_compare(sub) -> None:
    """`schedlab compare`."""
    cp = sub.add_parser("compare", help="two runs' metrics side by side (simulator and/or trace)")
    cp.add_argument("a", nargs="?", help="metrics JSON A (schedlab run --json or trace import --json); "
                    "a two-scheduler run's file alone compares its two runs; FILE:NAME picks one run")
    cp.add_argument("b", nargs="?", help="metrics JSON B (also FILE:NAME)")
    cp.add_argument("--workload", metavar="FILE",
                    help="instead of A and B: run FILE in the simulator (A) and on this machine's kernel "
                    "(B, root)")
    cp.add_argument("--scheduler", help="simulator for --workload (default: the one matching the running "
                    "kernel: eevdf-6.18 from 6.17, eevdf from 6.6, else cfs)")
    cp.add_argument("--vm", action="store_true",
                    help="with --workload: run B in the sched_ext guest (schedlab vm) under --scheduler "
                    "instead of on this kernel, and judge the CPU-time shares")
    cp.add_argument("--cpus", type=int, default=2, help="with --vm: guest and simulated CPUs (default 2)")
    cp.add_argument("--match", choices=["name", "pid"], default="name",
                    help="match tasks by name, or by recorded pid (a trace against its replay)")
    cp.add_argument("--json", metavar="FILE", help="write the comparison as JSON")
    cp.add_argument("--machine", metavar="PROFILE",
                    help="with --workload: simulate with this machine profile's wakeup-path tunables")
    _add_replay_flags(cp, "with --workload: ")


def _add_replay_flags(p, scope: str) -> None:
    """How a host run is replayed in the simulator (`compare --workload`, `fidelity`)."""
    p.add_argument("--fork-start", action="store_true",
                   help=f"{scope}start the simulated threads where the fork path puts them, not where the "
                        "host's threads first ran (the start is not modelled: docs/model.md, Known gaps)")
    p.add_argument("--flat-replay", action="store_true",
                   help=f"{scope}simulate the workload at the root beside the host's other load, not inside "
                        "the high-weight group the host runner isolated it in")


def _add_calibrate(sub) -> None:
    """`schedlab calibrate`."""
    cal = sub.add_parser("calibrate", help="measure this machine's wakeup path (and its SMT factor where it "
                                           "has SMT siblings) and write a machine profile (root)")
    cal.add_argument("--out", metavar="PROFILE", required=True, help="where to write the profile (JSON)")
    cal.add_argument("--seconds", type=int, default=3, help="length of each measuring run, s (default 3)")


def _add_shootout(sub) -> None:
    """`schedlab shootout`."""
    so = sub.add_parser("shootout", help="rank every scheduler on a workload over several seeds")
    so.add_argument("workload", help="rt-app JSON file")
    so.add_argument("--schedulers", help="comma-separated (default: every registered scheduler)")
    so.add_argument("--metric", default="throughput,latency_p99",
                    help="comma-separated: throughput, latency_p50, latency_p99, misses, fairness")
    so.add_argument("--seeds", type=positive, default=5, help="repeats per scheduler (default 5)")
    so.add_argument("--cpus", type=positive, default=1, help="simulated CPUs (default 1)")
    so.add_argument("--smt", type=positive, default=1, help="hardware threads per core (default 1)")
    so.add_argument("--hz", type=positive, default=250, help="tick frequency (default 250)")
    so.add_argument("--duration", help="override global.duration: seconds or 500ms, 2s, ...")
    so.add_argument("--set", action="append", default=[], metavar="K=V", help="set a tunable")
    so.add_argument("--json", metavar="FILE", help="write the table as JSON")
    so.add_argument("--plot", metavar="FILE.png", help="draw the means with their intervals")


def _add_fidelity(sub) -> None:
    """`schedlab fidelity`."""
    fi = sub.add_parser("fidelity", help="a fixed suite in the simulator and on this kernel, judged against "
                                         "tolerances (root)")
    fi.add_argument("--seconds", type=int, default=5, help="length of each workload, s (default 5)")
    fi.add_argument("--machine", metavar="PROFILE", help="simulate with this machine profile")
    fi.add_argument("--only", metavar="NAME[,NAME]", help="run only these workloads of the suite")
    fi.add_argument("--workload", metavar="FILE", action="append",
                    help="judge this workload file (each for its own duration) instead of the fixed suite; "
                         "repeatable")
    fi.add_argument("--host-runs", type=int, default=1, metavar="K",
                    help="run each workload K times on the host (each with a simulation at that run's tick "
                         "phase) and judge the medians, showing the host's range (1..9, default 1)")
    fi.add_argument("--json", metavar="FILE", help="write every judgement as JSON")
    fi.add_argument("--save-host", metavar="DIR",
                    help="also write each host run (workload, metrics, facts) into DIR as a reference that "
                         "--host-from can judge again later")
    fi.add_argument("--host-from", metavar="DIR",
                    help="judge against the host runs saved in DIR by --save-host instead of running the "
                         "host (no root needed; each workload as it ran there, on that machine's CPUs)")
    _add_replay_flags(fi, "")


def _add_sweep(sub) -> None:
    """`schedlab sweep`."""
    sw = sub.add_parser("sweep", help="run a grid of simulations (schedulers x parameters x tunables x seeds)")
    sw.add_argument("spec", help="sweep spec (JSON; see python/schedlab/sweep.py and sweeps/mixed.json)")
    sw.add_argument("--out", required=True, metavar="PATH",
                    help="results: PATH.parquet and PATH.csv (means, 95 %% CIs), PATH.runs.*, "
                    "PATH.journal.jsonl")
    sw.add_argument("--jobs", type=nonneg, default=0, help="worker processes (default: one per CPU)")
    sw.add_argument("--dask", metavar="ADDRESS", help="run on a Dask cluster at ADDRESS, or 'local' for a "
                    "LocalCluster of --jobs worker processes")
    sw.add_argument("--quiet", action="store_true", help="no progress bar")


def _add_repro(sub) -> None:
    """`schedlab repro`."""
    rp = sub.add_parser("repro", help="reproduce a seed experiment and write its report")
    rp.add_argument("experiment", help="experiment name (experiments/NAME.json), e.g. illf, or all")
    rp.add_argument("--out", metavar="DIR",
                    help="report directory (default reports/NAME; with all: DIR/NAME)")
    rp.add_argument("--quiet", action="store_true", help="no progress on stderr")
    rp.add_argument("--host", action="store_true",
                    help="also run the real-kernel half on this machine (root; cfs-lab)")


# Each subcommand's arguments, in the order `schedlab --help` lists them.
_SUBCOMMANDS = (
    ("run", _add_run),
    ("check", _add_check),
    ("schedulers", _add_schedulers),
    ("metrics", _add_metrics),
    ("completion", _add_completion),
    ("trace", _add_trace),
    ("host", _add_host),
    ("vm", _add_vm),
    ("compare", _add_compare),
    ("calibrate", _add_calibrate),
    ("shootout", _add_shootout),
    ("fidelity", _add_fidelity),
    ("sweep", _add_sweep),
    ("repro", _add_repro),
)


class PartialParse(Exception):
    """A parse error under a parser built for one subcommand (see :func:`parser`)."""


def _help_width() -> int:
    """`shutil.get_terminal_size().columns - 2`, argparse's help width, without importing shutil
    (argparse imports it for every formatter, which `add_argument` builds: 2-3 ms of every
    command's start-up): COLUMNS if set and positive, else the terminal of stdout unless it
    reports 0 columns, else 80."""
    try:
        cols = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        cols = 0
    if cols <= 0:
        try:
            cols = os.get_terminal_size(sys.__stdout__.fileno()).columns or 80
        except (AttributeError, ValueError, OSError):
            cols = 80
    return cols - 2


class _Parser(argparse.ArgumentParser):
    def _get_formatter(self) -> argparse.HelpFormatter:
        return self.formatter_class(prog=self.prog, width=_help_width())


class _PartialParser(_Parser):
    def error(self, message: str):  # type: ignore[override]
        raise PartialParse(message)


def parser(only: Optional[str] = None) -> argparse.ArgumentParser:
    """The command line; with `only`, just that subcommand (start-up time: building every
    subcommand's arguments took about 8 ms of each command), whose parsers then raise
    :class:`PartialParse` on an error so that cli.py's `main` lets the whole parser report it."""
    cls = _Parser if only is None else _PartialParser
    p = cls(prog="schedlab", description="A laboratory for Linux CPU schedulers.")
    p.add_argument("--version", action=_VersionAction, nargs=0, help="print the version and exit")
    sub = p.add_subparsers(dest="cmd", required=True)
    for name, add in _SUBCOMMANDS:
        if only in (None, name):
            add(sub)
    return p
