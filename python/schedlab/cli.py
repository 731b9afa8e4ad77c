"""The ``schedlab`` command."""

from __future__ import annotations

import os
import sys
import time

from . import _native
from .api import SimResult, check, parse_duration, schedulers, simulate
from .output import write_output
from .report import compare_table, registry_markdown, task_table
from .runargs import PERFETTO_EXT, parse_run

# Names for annotations only: importing typing costs `schedlab run` about 3 ms of start-up
# (issue 18), and every annotation here is a string (`from __future__ import annotations`).
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import Dict, List, Optional, Sequence, Tuple


class _Progress:
    """A progress bar on stderr, shown only for runs longer than ~1 s."""

    def __init__(self, label: str, enabled: bool):
        self.label = label
        self.enabled = enabled
        self.start = time.monotonic()
        self.shown = False

    def __call__(self, now_ns: int, end_ns: Optional[int]) -> None:
        if not self.enabled or time.monotonic() - self.start < 1.0:
            return
        self.shown = True
        if end_ns:
            frac = min(1.0, now_ns / end_ns)
            bar = "#" * int(frac * 30)
            msg = f"{self.label} [{bar:<30}] {frac * 100:5.1f}% {now_ns / 1e9:.2f}/{end_ns / 1e9:.2f} s"
        else:
            msg = f"{self.label} {now_ns / 1e9:.2f} s simulated"
        sys.stderr.write("\r" + msg)
        sys.stderr.flush()

    def done(self) -> None:
        if self.shown:
            sys.stderr.write("\n")


def _writable(path: str) -> None:
    """An output path whose directory exists and is writable, checked before a run starts
    (``-`` is stdout; a symlink is checked at its target)."""
    if path == "-":
        return
    if os.path.exists(path) and not os.path.isfile(path) and not os.path.isdir(path):
        if not os.access(path, os.W_OK):
            raise _native.ConfigError(f"{path}: not writable")
        return  # a device or FIFO
    path = os.path.realpath(path)
    d = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(d):
        raise _native.ConfigError(f"{path}: directory {d} does not exist")
    if not os.access(d, os.W_OK):
        raise _native.ConfigError(f"{path}: directory {d} is not writable")
    if os.path.isdir(path):
        raise _native.ConfigError(f"{path}: is a directory, expected a file name")


def _cmd_completion(a: argparse.Namespace) -> int:
    from .cliargs import parser as _parser
    from .completion import script

    print(script(_parser(), a.shell))
    return 0




def _is_perfetto(path: str, fmt: Optional[str]) -> bool:
    """Whether ``run --trace PATH`` writes Perfetto; else ftrace text, which has no counter tracks
    (so such a run does not sample them)."""
    return fmt == "perfetto" or (fmt is None and path.endswith(PERFETTO_EXT))


def _trace_path(result: SimResult, path: str, fmt: Optional[str], scheduler: str, multi: bool) -> str:
    if multi:
        root, ext = os.path.splitext(path)
        path = f"{root}.{scheduler.replace(':', '-')}{ext}"
    if _is_perfetto(path, fmt):
        result.write_perfetto(path)
    else:
        result.write_ftrace(path)
    return path


def _write_json(path: str, data: object) -> None:
    """JSON to a file, to stdout for ``-``, through symlinks (output.py)."""
    import json

    write_output(path, json.dumps(data, indent=2) + "\n")


def _check_run_args(a: argparse.Namespace, names: List[str]) -> None:
    """What can be checked before any run starts: a scheduler given, writable outputs."""
    if not names:
        raise _native.ConfigError("--scheduler is empty; expected a scheduler name (see 'schedlab schedulers')")
    twice = next((n for i, n in enumerate(names) if n in names[:i]), None)
    if twice:  # its runs would be the same bytes, and the JSON keeps one key per scheduler
        raise _native.ConfigError(f"--scheduler: {twice} is given twice")
    _check_outputs({"--trace": a.trace, "--json": a.json})


def _start_cpus_of(a: argparse.Namespace) -> Dict[str, int]:
    """--start-from's first CPUs, then --start-cpus' (which win); the simulator checks the names
    and CPUs (an unknown thread or a CPU off the machine is one ConfigError)."""
    starts: Dict[str, int] = {}
    if a.start_from:
        import json

        from .fidelity import host_start_cpus

        try:
            with open(a.start_from, encoding="utf-8") as f:
                doc = json.load(f)
        except OSError as e:
            raise _native.ConfigError(f"{a.start_from}: {e.strerror}") from None
        except ValueError as e:
            raise _native.ConfigError(f"{a.start_from}: not JSON: {e}") from None
        tasks = doc.get("tasks") if isinstance(doc, dict) else None
        if not isinstance(tasks, list) or not all(isinstance(t, dict) for t in tasks):
            raise _native.ConfigError(f"{a.start_from}: $.tasks: expected the list of task metrics of a "
                                      "host run ('schedlab host run --json')")
        for i, t in enumerate(tasks):
            name, cpu = t.get("name"), t.get("first_cpu")
            if not isinstance(name, str) or not name:
                raise _native.ConfigError(f"{a.start_from}: $.tasks[{i}].name: expected a thread's name, "
                                          f"got {name!r}")
            if cpu is not None and (isinstance(cpu, bool) or not isinstance(cpu, int) or cpu < 0):
                raise _native.ConfigError(f"{a.start_from}: $.tasks[{i}].first_cpu: expected a CPU number "
                                          f"or null, got {cpu!r}")
            if cpu is not None and cpu >= a.cpus:
                raise _native.ConfigError(f"{a.start_from}: $.tasks[{i}].first_cpu: CPU {cpu} is not one of "
                                          f"the run's {a.cpus} (--cpus)")
        starts.update(host_start_cpus({"tasks": tasks}))
    for group in a.start_cpus:
        starts.update(dict(group))
    return starts


def _write_run_outputs(a: argparse.Namespace, names: List[str], results: List[SimResult]) -> None:
    """Traces and the metrics JSON of a run; on an error nothing this run wrote is left."""
    written: List[str] = []
    try:
        for name, res in zip(names, results):
            if a.trace:
                out = _trace_path(res, a.trace, a.trace_format, name, len(names) > 1)
                written.append(out)
                if not a.quiet:
                    print(f"trace: {out}", file=sys.stderr)
        if a.json:
            data = results[0].metrics if len(results) == 1 else {n: r.metrics for n, r in zip(names, results)}
            _write_json(a.json, data)
    except OSError:
        for path in written:
            if os.path.exists(path):
                os.remove(path)
        raise


def _machine_args(a: argparse.Namespace) -> None:
    """Fold a --machine profile into a.hz and a.set (explicit --hz and --set win)."""
    tun, hz = {}, 250
    if a.machine:
        from . import machine

        tun, hz = machine.load(a.machine)
    a.hz = a.hz or hz
    a.set = [f"{k}={v}" for k, v in tun.items()] + list(a.set)


def _cmd_run(a: argparse.Namespace) -> int:
    names = [s.strip() for s in a.scheduler.split(",") if s.strip()]
    _check_run_args(a, names)
    _machine_args(a)
    # Policy files (FILE.py or FILE.py:Class) are loaded before any run starts.
    policies = {}
    if any(n.endswith(".py") or ".py:" in n for n in names):  # ext.is_policy_spec, without its imports
        from .ext import is_policy_spec, load_policy_class

        policies = {n: load_policy_class(n) for n in names if is_policy_spec(n)}
    if a.duration:
        parse_duration(a.duration)  # a bad value fails before any run starts
    fairness = [x for x in (a.fairness or "").split(",") if x]
    starts = _start_cpus_of(a)
    results: List[SimResult] = []
    show = not a.quiet and sys.stderr.isatty()
    for i, name in enumerate(names):
        sched = name
        if name in policies:
            from .ext import new_policy, policy_name

            sched = new_policy(policies[name], name)
            names[i] = policy_name(sched)
        bar = _Progress(names[i], show)
        try:
            res = simulate(a.workload, sched, a.cpus, smt=a.smt, cpus_per_llc=a.llc, hz=a.hz,
                           duration=a.duration, seed=a.seed, set=a.set,
                           trace=bool(a.trace), trace_counters=_is_perfetto(a.trace or "", a.trace_format),
                           fairness_tasks=fairness, progress=bar,
                           capacity=a.capacity, freq_mhz=a.freq, dl_policy=a.dl_policy,
                           governor=a.governor, freq_levels_mhz=a.freq_levels, hotplug=a.hotplug,
                           zero_costs=a.zero_costs, start_cpus=starts or None)
        finally:
            bar.done()
        results.append(res)
    _write_run_outputs(a, names, results)
    if not a.quiet:
        # With the JSON or a trace on stdout (`-`), the table goes to stderr.
        out = sys.stderr if "-" in (a.json, a.trace) else sys.stdout
        if len(results) == 1:
            print(task_table(results[0]), file=out)
        else:
            print(compare_table(names, results), file=out)
    return 0


def _tunable_lines(tunables, indent: int = 10) -> None:
    for t in tunables:
        unit = f" {t['unit']}" if t["unit"] and t["unit"] != "bool" else ""
        rng = "0/1" if t["unit"] == "bool" else f"{t['min']}..{t['max']}{unit}"
        print(f"{'':<{indent}}{t['name']:<26} default {str(t['default']) + unit:<14} [{rng}] {t['doc']}")


def _cmd_schedulers(a: argparse.Namespace) -> int:
    info = schedulers()
    if a.json:
        import json

        print(json.dumps(info, indent=2))
        return 0
    if a.markdown:
        sys.stdout.write(registry_markdown(info))
        return 0
    for s in info["schedulers"]:
        print(f"{s['name']:<8} {s['description']}")
        print(f"{'':<8} classes: {', '.join(s['classes'])}; version {s['version']}; source: {s['source']}")
        _tunable_lines(s["tunables"])
        print()
    print("fair-class policies (append to a scheduler with a fair class, e.g. eevdf+dwcfs):")
    for p in info["fair_policies"]:
        print(f"{'':<2}+{p['name']:<7} {p['description']}")
        print(f"{'':<10}source: {p['source']}")
        _tunable_lines(p["tunables"])
    print()
    print("SCHED_DEADLINE orderings (--dl-policy NAME):")
    for p in info["dl_orders"]:
        print(f"{'':<2}{p['name']:<8} {p['description']}")
        print(f"{'':<10}source: {p['source']}")
        _tunable_lines(p["tunables"])
    print()
    print("engine tunables (every scheduler):")
    _tunable_lines(info["engine_tunables"])
    return 0


def _cmd_check(a: argparse.Namespace) -> int:
    wl = check(a.workload)
    if wl.get("runs_forever") and not wl["duration"] and not a.duration:
        # What `run` refuses without --duration (engine/mod.rs), said the same way.
        raise _native.ConfigError(f"{wl['source']}: some task loops forever (\"loop\": -1 is rt-app's "
                                  "default); set global.duration or pass --duration")
    if a.duration:
        wl["duration"] = parse_duration(a.duration)
    threads = sum(t["instances"] for t in wl["tasks"])
    dur = wl["duration"]
    print(f"{wl['source']}: ok: {len(wl['tasks'])} task objects, {threads} threads, "
          f"duration {dur / 1e9 if dur else 'until all threads end'}"
          f"{' s' if dur else ''}")
    for w in wl["warnings"]:
        print(f"warning: {w}")
    return 0


def _cmd_metrics(a: argparse.Namespace) -> int:
    from .api import metric_descriptions

    if a.json:
        import json

        print(json.dumps(metric_descriptions(), indent=2))
        return 0
    for struct, fields in metric_descriptions().items():
        print(f"[{struct}]")
        for k, v in fields.items():
            print(f"  {k:<28} {v}")
    return 0


def _check_outputs(outs: Dict[str, Optional[str]]) -> None:
    """Before anything is written: each output (option -> path) writable, and at most one on
    standard output."""
    stdout = [o for o, path in outs.items() if path == "-"]
    if len(stdout) > 1:
        raise _native.ConfigError(f"{' and '.join(f'{o} -' for o in stdout)} would "
                                  f"{'both' if len(stdout) == 2 else 'all'} write to standard output: only one "
                                  f"output can go to standard output ('-'); give "
                                  f"{'one of them' if len(stdout) == 2 else 'all but one'} a file")
    for path in outs.values():
        if path:
            _writable(path)


def _cmd_trace(a: argparse.Namespace) -> int:
    from .api import import_trace, tick_nsec

    outs = {"--json": a.json}
    if a.trace_cmd != "paths":
        outs.update({"--perfetto": a.perfetto, "--ftrace": a.ftrace, "--workload": a.workload})
    _check_outputs(outs)
    if a.trace_cmd == "paths":
        from . import paths

        imp = import_trace(a.file, tolerant=a.tolerant)
        rows = paths.summary(imp.result.wakeup_paths(a.task))
        if a.json:
            _write_json(a.json, rows)
        if a.json != "-":
            print(paths.table(rows))
        return 0
    tick = None if a.hz is None else (tick_nsec(a.hz), 0)
    imp = import_trace(a.file, tolerant=a.tolerant, tick=tick)
    if "-" not in outs.values():  # the table, unless an output is standard output
        print(task_table(imp.result))
    if imp.repairs:
        print(f"{len(imp.repairs)} repair(s):", file=sys.stderr)
        for r in imp.repairs[:20]:
            print(f"  {r}", file=sys.stderr)
    if a.json:
        _write_json(a.json, imp.result.metrics)
    if a.perfetto:
        imp.result.write_perfetto(a.perfetto)
    if a.ftrace:
        imp.result.write_ftrace(a.ftrace)
    if a.workload:
        imp.write_workload(a.workload)
    return 0


def _cmd_host(a: argparse.Namespace) -> int:
    from . import host

    try:
        if a.host_cmd == "probe":
            import json

            print(json.dumps(host.facts(), indent=2))
            return 0
        _check_outputs({"--json": a.json, "--facts": a.facts, "--trace": a.trace})  # before the machine
        if a.lock_timeout is not None and not a.lock_timeout >= 0:
            raise _native.ConfigError(f"--lock-timeout: expected seconds >= 0, got {a.lock_timeout}")
        res, info = host.run(a.workload, parse_duration(a.duration) / 1e9 if a.duration else None,
                             backend=a.backend, isolate=not a.no_isolate, work=a.work,
                             keep_trace=a.trace, wait=not a.no_wait, lock_timeout=a.lock_timeout)
    except host.HostError as e:
        print(f"schedlab: error: {e}", file=sys.stderr)
        return 2
    print(task_table(res))
    g = info.get
    print(f"kernel {g('kernel')} (HZ {g('hz')}, {g('preempt')}, lockdown {g('lockdown')}, base slice "
          f"{g('base_slice_ns')} ns, knob {g('base_slice_knob')}); {g('backend')}: "
          f"{g('dropped_events')} dropped events, {info['repair_count']} trace repair(s); other load "
          f"{info['other_load']['cpu_ms']} ms CPU by the trace, "
          f"{info['other_load'].get('cpu_ms_proc')} ms by /proc/stat",
          file=sys.stderr)
    b = info.get("bpf_switches") or {}
    print(f"  BPF switches: {b['switches']} recorded, {b['added']} missing from the text trace and added, "
          f"{b['lost']} lost" if "switches" in b else f"  BPF switches: none ({b.get('unavailable')})",
          file=sys.stderr)
    for name, c in info["crosscheck"].items():
        print(f"  {name}: CPU ms trace/proc {c['cpu_ms'][0]}/{c['cpu_ms'][1]}, vcsw {c['nvcsw'][0]}/"
              f"{c['nvcsw'][1]}, ivcsw {c['nivcsw'][0]}/{c['nivcsw'][1]}, worker overhead "
              f"{c['worker_overhead_ms']} ms", file=sys.stderr)
    for n in info["notes"]:
        print(f"  note: {n}", file=sys.stderr)
    if a.json:
        _write_json(a.json, res.metrics)
    if a.facts:
        _write_json(a.facts, info)
    return 0


def _cmd_vm(a: argparse.Namespace) -> int:
    from . import vm
    from .host import HostError

    try:
        if a.vm_cmd == "build":
            kdir, sdir = vm.build(vm.log_stderr)
            print(f"kernel: {kdir}\nschedulers: {sdir}")
            return 0
        dur = parse_duration(a.duration) / 1e9 if a.duration else None
        res, info = vm.run(a.workload, a.scheduler or "", dur, cpus=a.cpus, binary=a.binary, keep=a.keep,
                           log=vm.log_stderr)
    except (vm.VmError, HostError) as e:
        print(f"schedlab: error: {e}", file=sys.stderr)
        return 2
    print(task_table(res))
    print(f"guest {info['kernel']} (HZ {info['hz']}, qemu TCG -icount {info['icount']}) under "
          f"{info['guest_scheduler']}: {info['dropped_events']} dropped events, {info['repair_count']} trace "
          f"repair(s); other load {info['other_load']['cpu_ms']} ms CPU", file=sys.stderr)
    if a.json:
        _write_json(a.json, res.metrics)
    return 0


def _sim_and_vm(a: argparse.Namespace) -> Tuple[dict, dict]:
    """Metrics of `a.workload` in the simulator and in the guest, same scheduler, CPUs and HZ."""
    from . import vm

    if not a.scheduler:
        raise ValueError(f"--vm needs --scheduler (one of {', '.join(vm.GUEST_SCHEDULERS)})")
    res, info = vm.run(a.workload, a.scheduler, cpus=a.cpus, log=vm.log_stderr)
    sim = simulate(a.workload, a.scheduler, a.cpus, hz=info["hz"],
                   set={"partial": 1} if info["partial"] else {})
    return dict(sim.metrics), dict(res.metrics)


def _sim_and_host(a: argparse.Namespace) -> Tuple[dict, dict]:
    """Metrics of `a.workload` in the simulator (the host's CPU count and HZ) and on the host."""
    from . import host, machine
    from .host.probe import matching_scheduler

    tun = machine.load(a.machine)[0] if a.machine else {}
    res, info = host.run(a.workload)
    sched = a.scheduler or matching_scheduler()
    hm = dict(res.metrics)
    # As `schedlab fidelity`: the threads start where the host's first ran (an input, like the tick
    # phase and the other load in sim_tunables), unless --fork-start.
    from .fidelity import host_start_cpus

    starts = {} if a.fork_start else host_start_cpus(hm)
    workload = a.workload
    if not a.flat_replay and info.get("isolated_in"):
        # As `schedlab fidelity`: the workload inside the group the host runner isolated it in.
        from . import rtapp_json
        from .fidelity import isolated_doc

        with open(a.workload, encoding="utf-8") as f:
            workload = isolated_doc(rtapp_json.loads(f.read()), info)
    sim = simulate(workload, sched, len(info["cpus"]), hz=info.get("hz") or 250,
                   set=host.sim_tunables(info, tun), start_cpus=starts)
    return dict(sim.metrics), hm


def _cmd_compare(a: argparse.Namespace) -> int:
    from . import compare as cmp
    from . import host, vm

    try:
        if a.vm and not a.workload:
            raise ValueError("--vm goes with --workload FILE")
        if a.workload:
            if a.a or a.b:
                raise ValueError("give either two metrics files or --workload, not both")
            ma, mb = _sim_and_vm(a) if a.vm else _sim_and_host(a)
            names = (f"simulator ({ma['scheduler']})", mb["scheduler"])
        else:
            if not a.a:
                raise ValueError("compare needs two metrics files (A B), one file of a two-scheduler "
                                 "run (schedlab run --scheduler a,b --json), or --workload FILE")
            if a.b:
                ma, mb = cmp.load(a.a), cmp.load(a.b)
                names = (f"{a.a} ({ma['scheduler']})", f"{a.b} ({mb['scheduler']})")
            else:
                both = cmp.runs(a.a)
                if len(both) != 2:
                    raise ValueError(f"{a.a}: holds {len(both)} run(s); compare one file needs exactly two "
                                     "(or give A and B, e.g. FILE:NAME)")
                (na, ma), (nb, mb) = both
                names = (f"{a.a}:{na}", f"{a.a}:{nb}")
    except (ValueError, host.HostError, vm.VmError) as e:  # json.JSONDecodeError is a ValueError
        print(f"schedlab: error: {e}", file=sys.stderr)
        return 2
    c = cmp.compare(ma, mb, a.match)
    print(cmp.table(c, *names))
    if a.vm:
        agree = vm.agreement(ma, mb)
        print()
        print(vm.agreement_table(agree))
        c = {**c, "agreement": agree}
    if a.json:
        _write_json(a.json, c)
    return 0


def _out_dir(path: str) -> None:
    """An output folder that is one, or can be made (its nearest existing ancestor a writable
    folder): checked before any simulation."""
    probe = os.path.abspath(path)
    while not os.path.exists(probe):
        probe = os.path.dirname(probe)
    if not os.path.isdir(probe):
        raise _native.ConfigError(f"--out {path}: {probe} is not a directory")
    if not os.access(probe, os.W_OK):
        raise _native.ConfigError(f"--out {path}: {probe} is not writable")


def _cmd_repro(a: argparse.Namespace) -> int:
    from .repro import EXPERIMENTS, repro

    names = sorted(EXPERIMENTS) if a.experiment == "all" else [a.experiment]
    if any(n not in EXPERIMENTS for n in names):
        print(f"schedlab: error: unknown experiment {a.experiment!r}; expected all or one of: "
              f"{', '.join(sorted(EXPERIMENTS))}", file=sys.stderr)
        return 2
    _out_dir(a.out or "reports")
    t0 = time.perf_counter()
    for name in names:
        out = a.out if a.out and len(names) == 1 else os.path.join(a.out or "reports", name)

        def log(msg: str, name: str = name) -> None:
            if not a.quiet:
                print(f"[{time.perf_counter() - t0:5.1f} s] {name}: {msg}", file=sys.stderr)

        try:
            repro(name, out, log, host=a.host)
        except KeyError as e:
            print(f"schedlab: error: {e.args[0]}", file=sys.stderr)
            return 2
        print(f"report: {os.path.join(out, 'report.md')} (also report.json and figures)")
    if a.experiment == "all" or not a.out:
        # The HTML site over every report under the root (reports/index.html).
        from pathlib import Path

        from .htmlreport import write_site

        index = write_site(Path(a.out or "reports"), sorted(EXPERIMENTS))
        print(f"html: {index}")
    return 0


def _cmd_sweep(a: argparse.Namespace) -> int:
    from .sweep import SweepError, run_sweep

    try:
        parquet, csv = run_sweep(a.spec, a.out, jobs=a.jobs, dask=a.dask, progress=not a.quiet)
    except SweepError as e:
        print(f"schedlab: error: {e}", file=sys.stderr)
        return 2
    print(f"sweep: {parquet} and {csv} (every run: {a.out}.runs.*)")
    return 0


def _cmd_calibrate(a: argparse.Namespace) -> int:
    from .host import HostError
    from .host.calibrate import calibrate

    if not 1 <= a.seconds <= 60:
        print("schedlab: error: --seconds: expected 1..60", file=sys.stderr)
        return 2
    _writable(a.out)  # before a minute of measuring
    try:
        prof = calibrate(a.seconds, log=lambda s: print(s, file=sys.stderr))
    except HostError as e:
        print(f"schedlab: error: {e}", file=sys.stderr)
        return 2
    _write_json(a.out, prof)
    for k, v in prof["tunables"].items():
        print(f"{k:<20} {v:>10} {k.rsplit('_', 1)[-1]}")  # the unit its name ends with (ns, us)
    for k, why in prof["not_measured"].items():
        print(f"{k:<20} not measured: {why}")
    print(f"profile: {a.out} (use with: schedlab run --machine {a.out} ...)")
    return 0


def _cmd_shootout(a: argparse.Namespace) -> int:
    from . import shootout as so
    from .api import _set_pairs

    metrics = [m for m in a.metric.split(",") if m]
    bad = [m for m in metrics if m not in so.METRICS]
    if bad or not metrics:
        raise _native.ConfigError(f"--metric: unknown {bad[0]!r}; expected some of: {', '.join(so.METRICS)}"
                                  if bad else "--metric: expected at least one metric")
    names = [s for s in (a.schedulers or "").split(",") if s] or None
    known = {s["name"] for s in schedulers()["schedulers"]}
    if names and any(n not in known for n in names):
        unknown = next(n for n in names if n not in known)
        raise _native.ConfigError(f"--schedulers: unknown scheduler {unknown!r}; see 'schedlab schedulers'")
    check(a.workload)  # a bad workload fails before any run
    if a.duration:
        parse_duration(a.duration)
    show = sys.stderr.isatty()

    def progress(msg: str) -> None:
        if show:
            sys.stderr.write("\r" + msg.ljust(60))
            sys.stderr.flush()

    res = so.shootout(a.workload, names, metrics, a.seeds, a.cpus, a.duration, a.smt, a.hz,
                      dict(_set_pairs(a.set)), progress)
    if show:
        sys.stderr.write("\n")
    print(so.text_table(res))
    if a.json:
        _write_json(a.json, res)
    if a.plot:
        so.plot(res, a.plot)
    return 0


def _cmd_fidelity(a: argparse.Namespace) -> int:
    from . import fidelity as fid
    from .host import HostError

    # A bad file is one clear error (main's) before any host run starts.
    suite = fid.workload_files(a.workload) if a.workload else None
    only = [x for x in (a.only or "").split(",") if x]
    unknown = [x for x in only if x not in (suite or fid.SUITE)]
    if a.host_from and (a.workload or a.save_host):
        print("schedlab: error: --host-from: judges saved runs; expected no --workload or --save-host with it",
              file=sys.stderr)
        return 2
    if a.host_from:
        unknown = []  # the saved runs' names, checked once they are read
    if unknown or not 1 <= a.seconds <= 60 or not 1 <= a.host_runs <= 9:
        what = (f"--only: unknown workload {unknown[0]!r}; expected some of: {', '.join(suite or fid.SUITE)}"
                if unknown else "--seconds: expected 1..60" if not 1 <= a.seconds <= 60
                else "--host-runs: expected 1..9")
        print(f"schedlab: error: {what}", file=sys.stderr)
        return 2
    try:
        f = fid.fidelity(a.seconds, a.machine, only, log=lambda s: print(s, file=sys.stderr),
                         host_runs=a.host_runs, suite=suite, save_host=a.save_host, host_from=a.host_from,
                         host_start=not a.fork_start, host_group=not a.flat_replay)
    except HostError as e:
        print(f"schedlab: error: {e}", file=sys.stderr)
        return 2
    print(fid.table(f))
    if a.json:
        _write_json(a.json, f)
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    handlers = {"run": _cmd_run, "check": _cmd_check, "schedulers": _cmd_schedulers,
                "metrics": _cmd_metrics, "repro": _cmd_repro, "trace": _cmd_trace,
                "compare": _cmd_compare, "host": _cmd_host, "calibrate": _cmd_calibrate,
                "fidelity": _cmd_fidelity, "shootout": _cmd_shootout, "vm": _cmd_vm,
                "completion": _cmd_completion,
                "sweep": _cmd_sweep}
    argv = list(sys.argv[1:] if argv is None else argv)
    # `run` in its plain spellings without argparse (runargs.py: a third of a short run's start-up).
    args = parse_run(argv)
    if args is None:
        from .cliargs import PartialParse
        from .cliargs import parser as _parser

        # The subcommand, if the first word names one: only its parser is built; any error is
        # reported by the whole parser, as it was before this shortcut.
        first = next((x for x in argv if not x.startswith("-")), None)
        try:
            args = _parser(first if first in handlers else None).parse_args(argv)
        except PartialParse:
            args = _parser().parse_args(argv)
    try:
        return handlers[args.cmd](args)
    except BrokenPipeError:
        return 0
    except (_native.WorkloadError, _native.ConfigError, _native.SimulationError, _native.TraceError,
            OSError) as e:
        # One line for every error a user can cause, a full disk included.
        print(f"schedlab: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("schedlab: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
