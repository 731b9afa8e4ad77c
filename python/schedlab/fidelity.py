"""``schedlab fidelity`` (issue 13): a fixed suite of workloads run in the simulator and on this
machine's kernel, with the agreement of each metric judged against the project's tolerances.

Per task: CPU time within 3 %, involuntary switches within 10 %, wakeup latency p50 within 50 % and
p90/p99 within 25 % (latencies judged only for tasks that wake often, 100 times or more); per run:
migrations within a factor of 2 and, with 8 or more CPUs, Jain's index within 1 %. A host figure
withheld as unreliable (host/reconcile.py) or not measured is reported as such and not judged.
The simulator's jiffy grid is put where the host run's was (``tick_phase_ns``, host.tick_phase):
which wakeups wait for a tick depends on it. The host run's other load (threads outside the
workload, from its trace) is replayed as one unpinned noise thread of the same rate and CPU time
(host.sim_tunables): the host's background preempts its hogs, and a quiet simulator cannot.

Instances of one task object (``instance: n``, named ``name-0`` ... ``name-(n-1)``) are the same
task; which of them lands beside which other task is decided by fork order and timing, differently
on the two sides (in ``wake-busy`` the sleeper sits beside ``hog-0`` in one host run and ``hog-1`` in
the next). Each simulated instance is therefore judged against the host instance of the pairing
that fits best over CPU time and involuntary switches (the least sum of ``|log(sim/host)|``, every
pairing tried up to 8 instances); a row whose partner has another name shows both names.

The host side of one workload moves between runs by more than several tolerances (docs/model.md,
fidelity section). ``--host-runs K`` runs each workload K times on the host, each with a simulation at
that run's tick phase, and judges the median of the simulated figures against the median of the
host's; the host's range is kept beside each figure (``host_min``, ``host_max``), and the table
counts the figures whose host range alone is wider than their tolerance.

The host runner isolates the workload in one high-weight group (host/cgroups.py); the replay nests
it (and its own task groups) in such a group too, with the replayed other load outside at the root,
as on the host (``isolated_doc``; ``--flat-replay``: the workload at the root beside it).

``--save-host DIR`` also keeps every host run (the workload document as it ran, the matching
simulator model, the run's metrics and facts) and the machine's facts in DIR; ``--host-from DIR``
judges such saved runs again, on any machine and without root, each simulated as it ran there (its
CPUs, HZ, tick phase, other load): references from a machine at hand once (experiments/host-runs/).

Each simulated thread starts on the CPU where its host run's thread first ran (``first_cpu``;
``--fork-start``: where the fork path puts it). The host's start is not modelled (docs/model.md,
"Known gaps": threads that slept until a common start, spread by the timers' wakeups and earlier by
their setup), and it decides much of what follows: on 16 CPUs with a hog on every CPU, a start as
even as the fork path's leaves the balancer nothing to move. So, as with the tick phase and the
other load, the host's start is an input of the replay and the table judges what follows it.

``--workload FILE`` (repeatable) judges the user's own workload files the same way, each for its
own ``global.duration``, instead of the fixed suite; the simulator gets the host's SMT width and LLC
size where its uniform topology can hold them (``sim_topology``). In the table a task object of more
than MATCH_MAX instances is one row of medians with how many instances are within tolerance.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import re
import tempfile
from typing import Any, Callable, Dict, List, Optional, Set, Tuple

from .api import simulate
from .compare import OrNull, check_json

# name -> (what it probes, workload builder(seconds, cpus))
SUITE: Dict[str, Tuple[str, Callable[[int, int], dict]]] = {
    "wake-idle": ("a sleeper waking on an idle CPU: idle exit and timer slack",
                  lambda s, n: {"global": {"duration": s},
                                "tasks": {"io": {"loop": -1, "run": 50, "sleep": 5000}}}),
    "wake-busy": ("a sleeper preempting hogs: the wakeup path and EEVDF's placement",
                  lambda s, n: {"global": {"duration": s},
                                "tasks": {"io": {"loop": -1, "run": 50, "sleep": 5000},
                                          "hog": {"instance": n, "run": 10_000_000}}}),
    "tick-wait": ("a 10 ms periodic task beside SCHED_BATCH hogs: wakeups that wait for the tick",
                  lambda s, n: {"global": {"duration": s},
                                "tasks": {"ctl": {"loop": -1, "run": 2000,
                                                  "timer": {"ref": "ctl", "period": 10000}},
                                          "batch": {"instance": n, "policy": "SCHED_BATCH",
                                                    "run": 10_000_000}}}),
    "nice-hogs": ("hogs with nice -5/0/5 on all CPUs: start-up placement and weights",
                  lambda s, n: {"global": {"duration": s},
                                "tasks": {"a": {"instance": n, "priority": -5, "run": 10_000_000},
                                          "b": {"instance": n, "priority": 0, "run": 10_000_000},
                                          "c": {"instance": max(1, n // 2), "priority": 5,
                                                "run": 10_000_000}}}),
    "sleepers": ("short sleepers beside hogs: wakeup placement and migrations",
                 lambda s, n: {"global": {"duration": s},
                               "tasks": {"hog": {"instance": n, "run": 10_000_000},
                                         "sl": {"instance": 4 * n, "loop": -1, "run": 200, "sleep": 2000}}}),
}

TOL = {"cpu_time_us": 0.03, "nivcsw": 0.10, "wakeup_latency_p50_us": 0.50,
       "wakeup_latency_p90_us": 0.25, "wakeup_latency_p99_us": 0.25}
WAKEUP_HEAVY = 100


def _judge(sim: Optional[float], host: Optional[float], tol: float) -> Dict[str, Any]:
    if host is None or sim is None:
        return {"sim": sim, "host": host, "diff": None, "ok": None}
    if host == 0:
        return {"sim": sim, "host": host, "diff": None, "ok": sim == 0}
    d = (sim - host) / host
    return {"sim": sim, "host": host, "diff": d, "ok": abs(d) <= tol}


_INSTANCE = re.compile(r"^(.*)-(\d+)$")
MATCH_MAX = 8


def _object(name: str) -> Optional[str]:
    """The task object of instance ``name`` (``hog`` of ``hog-3``), or None for a name that is
    not ``OBJ-N``."""
    m = _INSTANCE.match(name)
    return m.group(1) if m else None


def _judge_migrations(ms: float, mh: float) -> Dict[str, Any]:
    """Migrations agree within a factor of 2 (within 2 of each other when either side has none)."""
    ok = (max(ms, mh) <= 2 * min(ms, mh)) if min(ms, mh) > 0 else abs(ms - mh) <= 2
    return {"sim": ms, "host": mh, "diff": None, "ok": ok}


def _misfit(s: dict, h: dict) -> float:
    """How far a simulated task is from a host task: |log| ratios of CPU time and ivcsw."""
    cost = 0.0
    for k in ("cpu_time_us", "nivcsw"):
        a, b = s.get(k), h.get(k)
        if a is not None and b is not None:
            cost += abs(math.log((a + 1.0) / (b + 1.0)))
    return cost


def pair_instances(sim_tasks: List[dict], host_tasks: List[dict]) -> List[Tuple[dict, dict]]:
    """(simulated, host) task pairs: by name, except that the instances of one task object
    (both sides holding exactly ``obj-0`` ... ``obj-(n-1)``, n >= 2) are paired by the permutation
    with the least total misfit (ties: the first in order, which keeps names). Beyond MATCH_MAX
    instances (n! pairings) they are paired by rank of CPU time, then ivcsw: the least total misfit
    for CPU time alone (on a line, sorted order is the optimal matching), not always for both."""
    ht = {t["name"]: t for t in host_tasks}
    groups: Dict[str, List[dict]] = {}
    for t in sim_tasks:
        obj = _object(t["name"])
        if obj is not None:
            groups.setdefault(obj, []).append(t)
    partner: Dict[str, dict] = {}
    for obj, members in groups.items():
        names = {t["name"] for t in members}
        want = {f"{obj}-{i}" for i in range(len(members))}
        if len(members) < 2 or names != want or not want <= set(ht):
            continue
        members = sorted(members, key=lambda t: int(_INSTANCE.match(t["name"]).group(2)))
        hosts = [ht[f"{obj}-{i}"] for i in range(len(members))]
        if len(members) > MATCH_MAX:
            def rank(t: dict) -> Tuple[float, float]:
                return (t.get("cpu_time_us") or 0.0, t.get("nivcsw") or 0.0)
            for s, h in zip(sorted(members, key=rank), sorted(hosts, key=rank)):
                partner[s["name"]] = h
            continue
        # Integer costs (nano-units): identical instances tie exactly, so the first permutation in
        # order wins on every machine (a float sum's last bit depends on the order of its terms,
        # and math.log's on the C library: a replay elsewhere paired tied instances differently).
        cost = [[round(_misfit(s, h) * 1e9) for h in hosts] for s in members]
        best = min(itertools.permutations(range(len(members))),
                   key=lambda p: sum(cost[i][j] for i, j in enumerate(p)))
        for i, j in enumerate(best):
            partner[members[i]["name"]] = hosts[j]
    pairs = []
    for t in sim_tasks:
        h = partner.get(t["name"]) or ht.get(t["name"])
        if h is not None:
            pairs.append((t, h))
    return pairs


def compare_run(sim: dict, host: dict) -> Dict[str, Any]:
    """Per-task and run-level judgements of one workload."""
    rows = []
    for t, h in pair_instances(sim["tasks"], host["tasks"]):
        label = t["name"] if h["name"] == t["name"] else f"{t['name']}/{h['name']}"
        row: Dict[str, Any] = {"task": label, "host_task": h["name"], "unreliable": h.get("unreliable")}
        for k, tol in TOL.items():
            if k.startswith("wakeup_latency") and (h.get("wakeups") or 0) < WAKEUP_HEAVY:
                row[k] = {"sim": t[k], "host": h.get(k), "diff": None, "ok": None}
            else:
                row[k] = _judge(t[k], h.get(k), tol)
        rows.append(row)
    run = {"migrations": _judge_migrations(sim["migrations"], host["migrations"])}
    if sim["cpus"] >= 8:
        run["jain_fairness"] = _judge(sim["jain_fairness"], host["jain_fairness"], 0.01)
    # One layout per run, so that merged runs keep the same shape.
    lay = {"sim": [layout(sim["tasks"])], "host": [layout(host["tasks"])]}
    return {"tasks": rows, "run": run, "layout": lay}


def layout(tasks: List[dict]) -> Dict[str, List[Optional[int]]]:
    """Per task object of more than one instance: the CPUs its instances first ran on, sorted
    (None, last: never ran or withheld). Where the start put them, which later placement follows
    (shown beside the judged figures, not judged)."""
    by: Dict[str, List[Optional[int]]] = {}
    for t in tasks:
        obj = _object(t["name"])
        by.setdefault(t["name"] if obj is None else obj, []).append(t.get("first_cpu"))
    return {k: sorted(v, key=lambda c: (c is None, c or 0)) for k, v in by.items() if len(v) > 1}


def cpu_ranges(cpus: List[Optional[int]]) -> str:
    """``[0, 1, 2, 5, None]`` as ``0-2,5,?``; where some CPU holds several, counts instead:
    ``[0, 0, 0, 1, 1]`` as ``0x3,1x2``."""
    known = sorted(c for c in cpus if c is not None)
    unknown = ["?"] * (len(cpus) - len(known))
    if len(set(known)) < len(known):
        return ",".join([f"{c}x{known.count(c)}" for c in sorted(set(known))] + unknown)
    runs: List[List[int]] = []
    for c in known:
        if runs and c == runs[-1][1] + 1:
            runs[-1][1] = c
        else:
            runs.append([c, c])
    return ",".join([str(a) if a == b else f"{a}-{b}" for a, b in runs] + unknown)


def _median(xs: List[Optional[float]]) -> Optional[float]:
    v = sorted(x for x in xs if x is not None)
    if not v:
        return None
    mid = len(v) // 2
    return v[mid] if len(v) % 2 else (v[mid - 1] + v[mid]) / 2


def _spread_wider(j: Dict[str, Any], tol: float) -> bool:
    """Whether the host's own range of a figure is wider than its tolerance around the median."""
    lo, hi, mid = j.get("host_min"), j.get("host_max"), j.get("host")
    return None not in (lo, hi, mid) and mid > 0 and (hi - lo) > 2 * tol * mid


def merge_runs(runs: List[Dict[str, Any]]) -> Dict[str, Any]:
    """One judgement from several (simulation, host run) comparisons of a workload: per simulated
    task (by its own name) and figure, the median simulated value against the median host value,
    judged with the same tolerance; a latency figure stays unjudged unless some run judged it."""
    if len(runs) == 1:
        return runs[0]
    rows: Dict[str, List[Dict[str, Any]]] = {}
    for r in runs:
        for row in r["tasks"]:
            rows.setdefault(row["task"].split("/")[0], []).append(row)
    out_rows = []
    for name, rs in rows.items():
        row: Dict[str, Any] = {"task": name, "host_task": [r["host_task"] for r in rs],
                               "unreliable": next((r["unreliable"] for r in rs if r["unreliable"]), None)}
        for k, tol in TOL.items():
            sims = [r[k]["sim"] for r in rs]
            hosts = [r[k]["host"] for r in rs]
            if k.startswith("wakeup") and all(r[k]["ok"] is None for r in rs):
                j = {"sim": _median(sims), "host": _median(hosts), "diff": None, "ok": None}
            else:
                j = _judge(_median(sims), _median(hosts), tol)
            known = [h for h in hosts if h is not None]
            j["host_min"], j["host_max"] = (min(known), max(known)) if known else (None, None)
            row[k] = j
        out_rows.append(row)
    run = {"migrations": _judge_migrations(_median([r["run"]["migrations"]["sim"] for r in runs]) or 0,
                                           _median([r["run"]["migrations"]["host"] for r in runs]) or 0)}
    if all("jain_fairness" in r["run"] for r in runs):
        run["jain_fairness"] = _judge(_median([r["run"]["jain_fairness"]["sim"] for r in runs]),
                                      _median([r["run"]["jain_fairness"]["host"] for r in runs]), 0.01)
    # Layouts are shown run by run (the simulator's differs only with the tick phase).
    lay = {side: [x for r in runs for x in r["layout"][side]] for side in ("sim", "host")}
    return {"tasks": out_rows, "run": run, "layout": lay}


def sim_topology(topo: Dict[str, Optional[int]], ncpu: int) -> Dict[str, int]:
    """The simulator's ``smt`` and ``cpus_per_llc`` for the host's sysfs topology (host.probe
    .topology): each kept where the simulator's uniform topology can hold it (it divides the CPU
    count, the LLC a whole number of cores), else the default (1; 0 = one LLC for all CPUs)."""
    smt = topo.get("smt") or 1
    if ncpu % smt:
        smt = 1
    llc = topo.get("cpus_per_llc") or 0
    if not 0 < llc < ncpu or ncpu % llc or llc % smt:
        llc = 0
    return {"smt": smt, "cpus_per_llc": llc}


def workload_files(paths: List[str]) -> Dict[str, Tuple[str, Callable[[int, int], dict]]]:
    """A suite of the user's workload files, each checked now (so a bad one fails before any host
    run), named by its file name without ``.json`` (a repeated name gets ``-2``, ``-3``...) and run
    for its own duration."""
    from . import _native
    from .api import check

    suite: Dict[str, Tuple[str, Callable[[int, int], dict]]] = {}
    for path in paths:
        if not check(path).get("duration"):
            raise _native.ConfigError(f"{path}: global.duration: expected a duration (the host run and "
                                      "the simulation both run for it)")
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        base = re.sub(r"\.json$", "", os.path.basename(path)) or "workload"
        name, k = base, 1
        while name in suite:
            k += 1
            name = f"{base}-{k}"
        suite[name] = (f"the workload file {path}", lambda s, n, doc=doc: doc)
    return suite


HOST_RUN_SCHEMA = "schedlab-host-run/1"


def _save_host_run(save_dir: str, name: str, seq: int, about: str, k: int, doc: dict, sched: str,
                   metrics: dict, info: dict) -> None:
    """One host run as a replayable reference: the workload as it ran, the simulator model that
    matches its kernel, its metrics and its facts (tick phase, other load...)."""
    with open(os.path.join(save_dir, f"{name}-{k + 1}.json"), "w", encoding="utf-8") as f:
        json.dump({"schema": HOST_RUN_SCHEMA, "workload": name, "seq": seq, "about": about, "doc": doc,
                   "scheduler": sched,
                   "metrics": metrics, "info": info}, f, indent=1)
        f.write("\n")


def _known_scheduler(name: Any) -> bool:
    from .api import schedulers

    reg = schedulers()
    base, plus, fair = (name.partition("+") if isinstance(name, str) else (None, "", None))
    ok = {s["name"]: s.get("fair_policies") for s in reg["schedulers"]}
    return base in ok and (not plus or bool(ok[base]) and fair in {p["name"] for p in reg["fair_policies"]})


_NUM = "a number or null"  # null: not measured (a task that never woke, a trace withheld)
# What fidelity --host-from reads from a saved host run (compare_run, host.sim_tunables...) and
# from the machine's facts.json, checked as they are loaded (compare.check_json).
HOST_RUN: Dict[str, Any] = {
    "schema": (repr(HOST_RUN_SCHEMA), lambda x: x == HOST_RUN_SCHEMA),
    "workload": "a string",
    "seq?": "an integer",
    "about?": "a string",
    "doc": "an object",
    "scheduler": ("a scheduler name (see 'schedlab schedulers')", _known_scheduler),
    "metrics": {
        "tasks": [{"name": "a string", "unreliable": "a list of strings or null", "wakeups": _NUM,
                   "first_cpu": "an integer or null", **{k: _NUM for k in TOL}}],
        "migrations": "a number",
        "jain_fairness": _NUM,
    },
    "info": {
        "hz?": "an integer or null", "tick_phase_ns?": "an integer or null",
        "start_ns?": "an integer or null", "duration_ns?": _NUM, "cpus?": OrNull("a list"),
        "cgroup?": OrNull("an object"), "cpu_ms?": OrNull({"*": {"busy?": _NUM}}),
        "threads?": OrNull({"*": {"started_ns?": "an integer or null"}}),
        "other_load?": OrNull({k + "?": _NUM for k in ("runs", "cpu_ms", "cpu_ms_proc", "top_runs_share")}),
    },
}
FACTS: Dict[str, Any] = {
    "cpus": "a list",
    "topology?": OrNull({"smt?": "an integer or null", "cpus_per_llc?": "an integer or null"}),
}


def saved_host_runs(host_from: str) -> Tuple[Dict[str, Any], Dict[str, List[dict]]]:
    """The machine facts and the host runs (per workload, in run order) that ``--save-host`` wrote
    into ``host_from``; a missing, foreign or damaged file is one ConfigError naming it and the
    JSON path (HOST_RUN, FACTS)."""
    from . import _native

    def load(path: str) -> Any:
        try:
            with open(path, encoding="utf-8") as f:
                return json.load(f)
        except (OSError, ValueError) as e:
            raise _native.ConfigError(f"{path}: expected a file written by 'schedlab fidelity --save-host' "
                                      f"({e})") from None

    facts_path = os.path.join(host_from, "facts.json")
    facts = load(facts_path)
    runs: Dict[str, List[Tuple[int, dict]]] = {}
    for fn in sorted(os.listdir(host_from)):
        m = re.fullmatch(r"(.+)-(\d+)\.json", fn)
        if not m:
            continue
        rec = load(os.path.join(host_from, fn))
        check_json(rec, HOST_RUN, os.path.join(host_from, fn), error=_native.ConfigError)
        other = rec.get("info", {}).get("other_load")
        if isinstance(other, dict) and "cpu_ms_proc" not in other:  # saved before it was recorded
            from .host import proc_other_ms
            other["cpu_ms_proc"] = proc_other_ms(rec["info"], rec["metrics"].get("tasks") or [])
        runs.setdefault(rec["workload"], []).append((int(m.group(2)), rec))
    if not runs or not isinstance(facts, dict) or "cpus" not in facts:
        raise _native.ConfigError(f"{host_from}: expected facts.json and NAME-K.json host runs written by "
                                  "'schedlab fidelity --save-host'")
    check_json(facts, FACTS, facts_path, error=_native.ConfigError)
    # In the order the suite ran them (``seq``), each workload's runs in run order.
    order = sorted(runs, key=lambda name: (runs[name][0][1].get("seq", 0), name))
    return facts, {name: [r for _, r in sorted(runs[name], key=lambda x: x[0])] for name in order}


def fidelity(seconds: int = 3, machine: Optional[str] = None, only: Optional[List[str]] = None,
             log: Callable[[str], None] = lambda s: None, host_runs: int = 1,
             suite: Optional[Dict[str, Tuple[str, Callable[[int, int], dict]]]] = None,
             save_host: Optional[str] = None, host_from: Optional[str] = None,
             host_start: bool = True, host_group: bool = True) -> Dict[str, Any]:
    """Run the suite (the fixed SUITE, or ``suite``: workload_files, whose own durations hold and
    ``seconds`` is None) on the host (root) and in the simulator (``host_runs`` times each, judged
    by medians); the judgements per workload. ``save_host``: also write each host run (and the
    machine's facts) there; ``host_from``: judge against the runs saved so, with no host run (any
    machine, no root), each workload simulated as its saved document on the saved machine."""
    from . import host
    from .host.probe import matching_scheduler
    from .machine import load

    tun = load(machine)[0] if machine else {}
    saved: Dict[str, List[dict]] = {}
    if host_from:
        facts, saved = saved_host_runs(host_from)
    else:
        facts = host.facts()
    if save_host:
        os.makedirs(save_host, exist_ok=True)
        with open(os.path.join(save_host, "facts.json"), "w", encoding="utf-8") as f:
            json.dump(facts, f, indent=1)
            f.write("\n")
    ncpu = len(facts["cpus"])
    topo = sim_topology(facts.get("topology") or {}, ncpu)
    out: Dict[str, Any] = {"cpus": ncpu, "seconds": None if suite or host_from else seconds,
                           "machine": machine, "host_runs": host_runs, "topology": topo, "workloads": {},
                           "kernel": facts.get("kernel"), "host_from": host_from, "host_start": host_start,
                           "host_group": host_group}
    names = list(saved) if host_from else list(suite or SUITE)
    unknown = [x for x in only or [] if x not in names]
    if unknown:
        from . import _native

        raise _native.ConfigError(f"--only: unknown workload {unknown[0]!r}; expected some of: "
                                  f"{', '.join(names)}")
    with tempfile.TemporaryDirectory(prefix="schedlab-fidelity-") as tmp:
        for seq, name in enumerate(names):
            if only and name not in only:
                continue
            about = saved[name][0].get("about", name) if host_from else (suite or SUITE)[name][0]
            per_run, phases, background, timer_shifts = [], [], [], []
            n = len(saved[name]) if host_from else host_runs
            for k in range(n):
                rec = saved[name][k] if host_from else None
                doc = rec["doc"] if rec else (suite or SUITE)[name][1](seconds, ncpu)
                path = os.path.join(tmp, f"{name}.json")
                with open(path, "w", encoding="utf-8") as f:
                    json.dump(doc, f)
                tag = f" ({k + 1}/{n})" if n > 1 else ""
                if rec:
                    metrics, info, sched = rec["metrics"], rec["info"], rec["scheduler"]
                else:
                    log(f"fidelity: {name} on the host{tag}")
                    res, info = host.run(path)
                    metrics, sched = dict(res.metrics), matching_scheduler()
                    if save_host:
                        _save_host_run(save_host, name, seq, about, k, doc, sched, metrics, info)
                log(f"fidelity: {name} in the simulator ({sched}){tag}")
                sim, shifts = _replay(path, doc, info, sched, ncpu, topo, host.sim_tunables(info, tun),
                                      host_start_cpus(metrics) if host_start else {}, host_group)
                timer_shifts.append(shifts)
                per_run.append(compare_run(dict(sim.metrics), metrics))
                phases.append(info.get("tick_phase_ns"))
                # What sim_tunables replayed (a profile's own noise wins over it).
                background.append({} if "noise_interval_us" in tun else host.background_noise(info))
            if not per_run:
                continue
            w = {"about": about, "scheduler": sched, "tick_phase_ns": phases[0], **merge_runs(per_run),
                 "background": background}
            if any(timer_shifts):
                w["timer_shifts_us"] = timer_shifts
            if len(per_run) > 1:
                w["tick_phases_ns"] = phases
                w["per_run"] = per_run
            out["workloads"][name] = w
        if host_from:
            out["host_runs"] = max((len(rs) for rs in saved.values()), default=0)
    return out


def _replay(path: str, doc: dict, info: Dict[str, Any], sched: str, ncpu: int, topo: Dict[str, int],
            tunables: Dict[str, int], starts: Dict[str, int], host_group: bool = True
            ) -> Tuple[Any, Dict[str, int]]:
    """One host run simulated as it ran (``path`` holds ``doc``; rewritten when a legacy worker's
    timers need delays or the run's group is replayed): the result and those delays."""
    sim_doc, shifts = legacy_timer_delays(doc, info)
    if host_group:
        sim_doc = isolated_doc(sim_doc, info)
    if sim_doc is not doc:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(sim_doc, f)
    return simulate(path, sched, ncpu, hz=info.get("hz") or 250, **topo, set=tunables,
                    start_cpus=starts), shifts


RUN_GROUP = "/schedlab-run"


def isolated_doc(doc: dict, info: Dict[str, Any]) -> dict:
    """The workload inside one high-weight task group where the host run isolated it so
    (``isolated_in``; host/cgroups.py: cpu.shares 262144 on cgroup v1, cpu.weight 10000 = 102400
    shares on v2): its own groups nest below it, and the replayed other load (host.sim_tunables'
    noise threads) stays at the root, as the host's other threads did. Why: at the root beside the
    workload, a noise thread waking competes with the workload's threads as an equal and preempts
    them at once where the host's other threads, facing the run group's weight, ran only when the
    group's entity turned ineligible. ``doc`` itself for a run that was not isolated."""
    if not info.get("isolated_in"):
        return doc
    from .host.cgroups import ISOLATE_SHARES, ISOLATE_WEIGHT

    def under_run(g: Optional[str]) -> str:
        inner = (g or "").strip("/")
        return RUN_GROUP + ("/" + inner if inner else "")

    v1 = (info.get("cgroup") or {}).get("flavour") == "v1"
    out = json.loads(json.dumps(doc))
    glob = out.setdefault("global", {})
    # cgroup2's weight as the kernel turns it into shares (weight · 1024 / 100).
    groups = {RUN_GROUP: {"shares": ISOLATE_SHARES if v1 else ISOLATE_WEIGHT * 1024 // 100}}
    groups.update({under_run(g): v for g, v in (glob.get("taskgroups") or {}).items()})
    glob["taskgroups"] = groups
    for obj in (out.get("tasks") or {}).values():
        if not isinstance(obj, dict):
            continue
        obj["taskgroup"] = under_run(obj.get("taskgroup"))
        for ph in (obj.get("phases") or {}).values():
            if isinstance(ph, dict) and "taskgroup" in ph:
                ph["taskgroup"] = under_run(ph["taskgroup"])
    return out


def legacy_timer_delays(doc: dict, info: Dict[str, Any]) -> Tuple[dict, Dict[str, int]]:
    """A saved host run whose worker counted a thread's timers from the thread's first run (reports
    without ``timer_base_ns``, before 2026-11-27) rather than from its release, the simulator's
    rule (docs/model.md, "Timer reference"): the workload with each such periodic thread's
    ``delay`` set to when it first ran (``started_ns`` after the run's start, in us), so that the
    simulated thread starts and keeps its grid where the host's did, and {thread: delay}. Only a
    task object of one instance can carry its thread's own delay; others are left as they are.
    Runs from the current worker give the workload back unchanged and {}."""
    threads, start = info.get("threads") or {}, info.get("start_ns")
    tasks = doc.get("tasks") if isinstance(doc.get("tasks"), dict) else {}
    shifts: Dict[str, int] = {}
    for name, obj in tasks.items():
        t = threads.get(name)
        if (not isinstance(t, dict) or "timer_base_ns" in t or t.get("started_ns") is None
                or start is None or int(obj.get("instance", 1)) != 1 or '"timer"' not in json.dumps(obj)):
            continue
        late_us = round((int(t["started_ns"]) - int(start)) / 1000)
        if late_us > int(obj.get("delay", 0)):
            shifts[name] = late_us
    if not shifts:
        return doc, {}
    out = json.loads(json.dumps(doc))
    for name, us in shifts.items():
        out["tasks"][name]["delay"] = us
    return out, shifts


def host_start_cpus(metrics: dict) -> Dict[str, int]:
    """Where each of the host run's threads first ran (``first_cpu``; threads without one are left
    to the fork path): the simulated run starts them there."""
    return {t["name"]: int(t["first_cpu"]) for t in metrics.get("tasks") or []
            if t.get("first_cpu") is not None and t.get("name")}


GROUPED = "; the workload in the host run's high-weight group, its other load outside"
FLAT = "; the workload at the root beside its other load (--flat-replay)"


def table(f: Dict[str, Any]) -> str:
    def cell(j: Dict[str, Any], num: Callable[[Optional[float]], str] = _num) -> str:
        if j["host"] is None:
            return f"{num(j['sim'])}/-".rjust(16) + " n/a "
        mark = {True: " ok  ", False: " MISS", None: " n/a "}[j["ok"]]
        return f"{num(j['sim'])}/{num(j['host'])}".rjust(16) + mark

    def group_cell(js: List[Dict[str, Any]]) -> str:
        """Medians of a task object's instances and how many of the judged are within."""
        judged = [j for j in js if j["ok"] is not None]
        sim, host = _median([j["sim"] for j in js]), _median([j["host"] for j in js])
        mark = f" {sum(j['ok'] for j in judged)}/{len(judged)}".ljust(5) if judged else " n/a "
        return f"{_num(sim)}/{_num(host)}".rjust(16) + mark

    per = f"{f['seconds']} s per workload" if f["seconds"] else "each workload for its own duration"
    topo = f.get("topology") or {}
    shape = (f" ({topo['smt']} threads per core)" if topo.get("smt", 1) > 1 else "") + (
        f" ({topo['cpus_per_llc']} CPUs per LLC)" if topo.get("cpus_per_llc") else "")
    lines = [f"simulator/host on {f['cpus']} CPUs{shape}, {per}"
             + (f", machine profile {f['machine']}" if f["machine"] else "")
             + (f", host runs saved in {f['host_from']} ({f.get('kernel')})" if f.get("host_from") else "")
             + ("; threads start where each host run's first ran" if f.get("host_start", True)
                else "; threads start where the fork path puts them (--fork-start)")
             + (GROUPED if f.get("host_group", True) else FLAT)
             + "; tolerances: CPU time 3 %, ivcsw 10 %, latency p50 50 %, p90/p99 25 % (tasks waking "
             f">= {WAKEUP_HEAVY} times), migrations 2x, Jain 1 % (8+ CPUs)"]
    heads = ["cpu ms", "ivcsw", "lat p50", "lat p90", "lat p99"]
    ok = miss = unsteady = 0
    for name, w in f["workloads"].items():
        wide = 0
        phase = w.get("tick_phase_ns")
        where = f", ticks {phase / 1e6:g} ms after the start as on the host" if phase is not None else ""
        if "tick_phases_ns" in w:
            where = f", {len(w['tick_phases_ns'])} host runs, medians judged, ticks as in each run"
        lines += ["", f"{name}: {w['about']} ({w['scheduler']}{where})",
                  "task".ljust(12) + "".join(h.rjust(21) for h in heads)]
        for label, rows in _row_groups(w["tasks"]):
            cells = []
            for k in TOL:
                scale = 1000 if k == "cpu_time_us" else 1
                js = [dict(r[k], sim=_div(r[k]["sim"], scale), host=_div(r[k]["host"], scale)) for r in rows]
                for j, r in zip(js, rows):
                    ok += j["ok"] is True
                    miss += j["ok"] is False
                    wide += j["ok"] is not None and _spread_wider(r[k], TOL[k])
                cells.append(cell(js[0]) if len(js) == 1 else group_cell(js))
            held = [r for r in rows if r["unreliable"]]
            withheld = ("" if not held else f"  (host trace withheld: {'; '.join(held[0]['unreliable'])})"
                        if len(rows) == 1 else f"  (host trace withheld for {len(held)} of {len(rows)})")
            lines.append(label[:13].ljust(14) + "".join(cells)[2:] + withheld)
        for k, j in w["run"].items():
            # Jain's index is judged within 1 %: three decimals, not _num's one.
            num = (lambda x: "-" if x is None else f"{x:.3f}") if k == "jain_fairness" else _num
            lines.append(f"  {k}: {cell(j, num).strip()}")
            ok += j["ok"] is True
            miss += j["ok"] is False
        lines += _layout_lines(w.get("layout") or {})
        bg = w.get("background") or []
        if any(bg):
            # * marks the runs replayed on every CPU where the runs differ in this.
            where = ("one unpinned thread" if not any(b.get("noise_per_cpu") for b in bg)
                     else "a thread per CPU" if all(b.get("noise_per_cpu") for b in bg if b)
                     else "one unpinned thread, * one per CPU")
            runs = " / ".join(f"every {b['noise_interval_us'] / 1000:g} ms for {b['noise_runtime_us']} us"
                              + ("*" if b.get("noise_per_cpu") and "*" in where else "")
                              if b else "none" for b in bg)
            lines.append(f"  simulated with the host's other load as OS noise ({where}): {runs}")
        shifts = w.get("timer_shifts_us") or []
        if any(shifts):
            runs = " / ".join(", ".join(f"{n} {us} us" for n, us in sh.items()) or "none" for sh in shifts)
            lines.append("  timers counted from each thread's first run on the host (a worker before "
                         f"2026-11-27), replayed as delays: {runs}")
        if "tick_phases_ns" in w:
            lines.append(f"  judged figures whose host range alone is wider than their tolerance: {wide}")
            unsteady += wide
    lines += ["", f"{ok} within tolerance, {miss} outside it"
              + (f" ({unsteady} judged figures vary more than their tolerance between host runs)"
                 if f.get("host_runs", 1) > 1 else "")]
    return "\n".join(lines)


def _layout_lines(lay: Dict[str, Any]) -> List[str]:
    """``first CPUs hog: sim 0-7 | host 5-7,9-12,15`` per task object (several runs: ``/``)."""
    sims, hosts = lay.get("sim"), lay.get("host")
    if not sims:
        return []
    out = []
    for obj in sims[0]:
        sim = " / ".join(dict.fromkeys(cpu_ranges(s.get(obj, [])) for s in sims))
        host = " / ".join(cpu_ranges(h.get(obj, [])) for h in hosts)
        out.append(f"  first CPUs {obj}: sim {sim} | host {host}")
    return out


def _div(x: Optional[float], by: int) -> Optional[float]:
    return x / by if x is not None else None


def _row_groups(rows: List[Dict[str, Any]]) -> List[Tuple[str, List[Dict[str, Any]]]]:
    """The table's rows: one per task, except that a task object of more than MATCH_MAX instances
    (the 64 sleepers of a 16-CPU run) is one row, ``obj-* (n)``, of medians and within-counts; the
    JSON keeps every instance."""
    objs: Dict[str, List[Dict[str, Any]]] = {}
    for r in rows:
        obj = _object(r["task"].split("/")[0])
        if obj is not None:
            objs.setdefault(obj, []).append(r)
    big = {o for o, rs in objs.items() if len(rs) > MATCH_MAX}
    out: List[Tuple[str, List[Dict[str, Any]]]] = []
    shown: Set[str] = set()
    for r in rows:
        obj = _object(r["task"].split("/")[0])
        if obj in big:
            if obj not in shown:
                shown.add(obj)
                out.append((f"{obj}-* ({len(objs[obj])})", objs[obj]))
        else:
            out.append((r["task"], [r]))
    return out


def _num(x: Optional[float]) -> str:
    if x is None:
        return "-"
    return f"{x:.0f}" if abs(x) >= 100 else f"{x:.1f}"
