"""Trace export: our .pftrace decodes with the perfetto package's protobuf
classes and agrees with the ftrace text export."""

import re

import schedlab
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

WL = {
    "global": {"duration": 1},
    "tasks": {
        "hog": {"instance": 3, "run": 100000},
        "sleepy": {"sleep": 5000, "run": 500},
    },
}


def test_perfetto_roundtrip(tmp_path):
    r = schedlab.simulate(WL, cpus=2, trace=True)
    path = tmp_path / "t.pftrace"
    r.write_perfetto(path)
    trace = pb.Trace.FromString(path.read_bytes())
    tree = [p.process_tree for p in trace.packet if p.HasField("process_tree")]
    assert len(tree) == 1
    threads = {t.tid: t for t in tree[0].threads}
    assert {t.name for t in threads.values()} == {"hog-0", "hog-1", "hog-2", "sleepy"}
    hog_tgids = {t.tgid for t in threads.values() if t.name.startswith("hog")}
    assert len(hog_tgids) == 1  # instances of one task object are threads of one process
    counts = {"sched_switch": 0, "sched_waking": 0, "sched_wakeup_new": 0, "sched_migrate_task": 0}
    compact = 0
    cpus = set()
    for p in trace.packet:
        if not p.HasField("ftrace_events"):
            continue
        b = p.ftrace_events
        cpus.add(b.cpu)
        ts = [e.timestamp for e in b.event]
        assert ts == sorted(ts)
        for e in b.event:
            kind = e.WhichOneof("event")
            if kind in counts:
                counts[kind] += 1
            if kind == "sched_switch":
                s = e.sched_switch
                assert s.prev_pid == 0 or s.prev_pid in threads
                assert s.next_pid == 0 or s.next_pid in threads
        # Switches and wakings alone at their time on their CPU are in the compact columns:
        # delta-encoded timestamps, pids and comms (interned per bundle).
        c = b.compact_sched
        n = len(c.switch_timestamp)
        assert n == len(c.switch_prev_state) == len(c.switch_next_pid) == len(c.switch_next_comm_index)
        assert all(d > 0 for d in list(c.switch_timestamp)[1:])
        for pid, ix in zip(c.switch_next_pid, c.switch_next_comm_index):
            name = c.intern_table[ix]
            assert (pid == 0 and name.startswith("swapper/")) or threads[pid].name == name
        assert len(c.waking_timestamp) == len(c.waking_pid) == len(c.waking_target_cpu)
        assert all(pid in threads for pid in c.waking_pid)
        counts["sched_switch"] += n
        counts["sched_waking"] += len(c.waking_timestamp)
        compact += n + len(c.waking_timestamp)
    assert cpus == {0, 1}
    assert counts["sched_wakeup_new"] == 4
    assert counts["sched_waking"] > 100
    assert compact > counts["sched_switch"] // 2
    text = r.ftrace_text()
    assert counts["sched_switch"] == len(re.findall(r"sched_switch:", text))
    assert counts["sched_switch"] == r.metrics.context_switches
    # Read back (schedlab/pftrace.py rebuilds what the compact columns leave out: a switch's prev_*
    # from the CPU's previous switch, a waking's waker from the CPU's current task), every switch and
    # waking says what the ftrace text export says, in the same order on each CPU.
    from schedlab.pftrace import to_ftrace_text

    def events(txt):
        out = {}
        for line in txt.splitlines():
            m = re.match(r"^\s*(\S+)-(\d+)\s+\[(\d{3})\] \S{5}\s+\d+\.\d+: "
                         r"((sched_switch|sched_waking): .*)$", line)
            if m:
                out.setdefault(int(m.group(3)), []).append((m.group(2), m.group(4)))
        return out

    assert events(to_ftrace_text(path.read_bytes())) == events(text)


def test_ftrace_text_shape(tmp_path):
    r = schedlab.simulate(WL, cpus=2, trace=True)
    path = tmp_path / "t.txt"
    r.write_ftrace(path)
    lines = [x for x in path.read_text().splitlines() if not x.startswith("#")]
    pat = re.compile(r"^\s*\S+-\d+\s+\[\d{3}\] \S{5}\s+\d+\.\d{6}: (sched_\w+|cpu_frequency): ")
    assert all(pat.match(x) for x in lines), lines[:3]
    assert any("prev_state=S ==> " in x for x in lines)


def test_no_trace_no_file(tmp_path):
    r = schedlab.simulate(WL)
    path = tmp_path / "x.pftrace"
    try:
        r.write_perfetto(path)
    except schedlab.ConfigError:
        pass
    assert not path.exists()


def test_perfetto_states_system_info_and_clock_snapshot(tmp_path):
    # Preempted tasks are TASK_REPORT_MAX (0x100: "Runnable (Preempted)" in Perfetto, kernels >= 4.14,
    # the release the SystemInfo packet names); the idle task leaves as plain running (0), and the
    # ftrace text prints it as the kernel does: R, not R+.
    r = schedlab.simulate(WL, cpus=2, trace=True)
    path = tmp_path / "t.pftrace"
    r.write_perfetto(path)
    trace = pb.Trace.FromString(path.read_bytes())
    info = [p.system_info for p in trace.packet if p.HasField("system_info")]
    assert len(info) == 1 and info[0].utsname.sysname == "Linux" and info[0].num_cpus == 2
    major, minor = (int(x) for x in info[0].utsname.release.split(".")[:2])
    assert (major, minor) >= (4, 14)
    # The trace's clocks (sequence 1); the counter sequence adds its own incremental clock 64
    # (test_perfetto_counter_tracks).
    snaps = [p.clock_snapshot for p in trace.packet if p.HasField("clock_snapshot")
             and p.trusted_packet_sequence_id == 1]
    assert len(snaps) == 1 and {c.clock_id for c in snaps[0].clocks} == {3, 6}
    # prev_state by whether prev is the idle task; in the compact columns prev is the CPU's
    # previous next_pid (each CPU starts idle).
    states = {}
    prev_of = {}
    for p in trace.packet:
        if p.HasField("ftrace_events"):
            b = p.ftrace_events
            evs = [(e.timestamp, 0, e.sched_switch.prev_pid, e.sched_switch.prev_state, e.sched_switch.next_pid)
                   for e in b.event if e.WhichOneof("event") == "sched_switch"]
            ts = 0
            c = b.compact_sched
            for delta, state, nxt in zip(c.switch_timestamp, c.switch_prev_state, c.switch_next_pid):
                ts += delta
                evs.append((ts, 1, None, state, nxt))
            for _, _, prev, state, nxt in sorted(evs):
                prev = prev_of.get(b.cpu, 0) if prev is None else prev
                states.setdefault(prev == 0, set()).add(state)
                prev_of[b.cpu] = nxt
    assert states[True] == {0}
    assert 0x100 in states[False] and 0 not in states[False]
    text = r.ftrace_text()
    assert "prev_comm=swapper" in text
    assert not re.search(r"prev_comm=swapper\S* prev_pid=0 prev_prio=\d+ prev_state=R\+", text)
    assert re.search(r"prev_comm=hog-\d prev_pid=\d+ prev_prio=\d+ prev_state=R\+", text)


def packet_times(trace):
    """Each packet's time in ns (None for a clock snapshot), as the trace processor reads it: a
    sequence whose default clock (TracePacketDefaults) is incremental in its ClockSnapshot carries
    in each packet the time since the sequence's previous packet on that clock."""
    defaults, incremental, out = {}, {}, []
    for p in trace.packet:
        seq = p.trusted_packet_sequence_id
        if p.HasField("trace_packet_defaults"):
            defaults[seq] = p.trace_packet_defaults.timestamp_clock_id
        if p.HasField("clock_snapshot"):
            for c in p.clock_snapshot.clocks:
                if c.is_incremental:
                    assert 64 <= c.clock_id <= 127  # sequence-scoped clocks only
                    incremental[(seq, c.clock_id)] = c.timestamp
            out.append(None)
            continue
        key = (seq, p.timestamp_clock_id or defaults.get(seq, 0))
        if key in incremental:
            incremental[key] += p.timestamp
            out.append(incremental[key])
        else:
            out.append(p.timestamp)
    return out


def switch_times(trace):
    """The times of every sched_switch, full events and compact columns alike."""
    times = set()
    for p in trace.packet:
        if p.HasField("ftrace_events"):
            b = p.ftrace_events
            times |= {e.timestamp for e in b.event if e.WhichOneof("event") == "sched_switch"}
            ts = 0
            for delta in b.compact_sched.switch_timestamp:
                ts += delta
                times.add(ts)
    return times


def test_perfetto_counter_tracks(tmp_path):
    # Per-task class values (vruntime, deadline, lag, slice) as counter tracks under each thread's
    # track, sampled at its switches; the CPU frequency as power:cpu_frequency events.
    r = schedlab.simulate(WL, cpus=2, trace=True, governor="ondemand", freq_levels_mhz=[1000, 2000])
    path = tmp_path / "t.pftrace"
    r.write_perfetto(path)
    trace = pb.Trace.FromString(path.read_bytes())
    tracks = {p.track_descriptor.uuid: p.track_descriptor for p in trace.packet
              if p.HasField("track_descriptor")}
    threads = {u: t.thread.tid for u, t in tracks.items() if t.HasField("thread")}
    counters = {u: (threads[t.parent_uuid], t.name) for u, t in tracks.items() if t.HasField("counter")}
    names = {n for _, n in counters.values()}
    assert {"vruntime", "deadline", "lag", "slice", "util"} <= names
    # The counters have a sequence of their own with delta timestamps: its first packet clears the
    # incremental state, makes clock 64 its default and states that clock (incremental) at BOOTTIME 0.
    seqs = {p.trusted_packet_sequence_id for p in trace.packet if p.HasField("track_event")}
    assert len(seqs) == 1
    first = next(p for p in trace.packet if p.trusted_packet_sequence_id in seqs)
    assert first.sequence_flags & 1 and first.trace_packet_defaults.timestamp_clock_id == 64
    assert {(c.clock_id, c.timestamp, c.is_incremental) for c in first.clock_snapshot.clocks} \
        == {(6, 0, False), (64, 0, True)}
    times = packet_times(trace)
    switches = switch_times(trace)
    values = {}
    for p, at in zip(trace.packet, times):
        if p.HasField("track_event"):
            # Sampled at a switch: decoded as deltas, every sample falls on a switch's time.
            assert at in switches
            te = p.track_event
            assert te.type == pb.TrackEvent.TYPE_COUNTER and te.track_uuid in counters
            # One event per task and switch: the first value on its track, the others as extra
            # counter values, each on a counter track of the same thread.
            assert len(te.extra_counter_track_uuids) == len(te.extra_counter_values)
            extra = zip(te.extra_counter_track_uuids, te.extra_counter_values)
            pairs = [(te.track_uuid, te.counter_value), *extra]
            assert len({counters[u][0] for u, _ in pairs}) == 1
            for u, v in pairs:
                values.setdefault(counters[u], []).append((at, v))
    # A value equal to the task's last one for that name is not sampled again (the track holds it).
    for samples in values.values():
        assert all(a[1] != b[1] for a, b in zip(samples, samples[1:]))
    hog = next(t.thread.tid for t in tracks.values()
               if t.HasField("thread") and t.thread.thread_name == "hog-0")
    vr = dict(values[(hog, "vruntime")])
    dl = dict(values[(hog, "deadline")])
    assert len(set(vr.values())) > 10
    # EEVDF: the virtual deadline is the vruntime plus the slice's virtual time (each track holds
    # its last value).
    held = {}
    for ts in sorted(set(vr) | set(dl)):
        held.update({k: src[ts] for k, src in (("vr", vr), ("dl", dl)) if ts in src})
        if len(held) == 2:
            assert held["dl"] > held["vr"]
    # Three hogs share two CPUs: each one's utilisation climbs towards 2/3 of 1024 (sampled at switches).
    util = [v for _, v in values[(hog, "util")]]
    assert 0 <= min(util) and 500 < max(util) <= 1024
    freq = [e.cpu_frequency for p in trace.packet if p.HasField("ftrace_events") for e in p.ftrace_events.event
            if e.WhichOneof("event") == "cpu_frequency"]
    assert {f.cpu_id for f in freq} == {0, 1} and {f.state for f in freq} <= {1_000_000, 2_000_000}
    assert "cpu_frequency: state=" in r.ftrace_text()


def test_wakeup_paths_read_alike_from_a_run_and_from_its_exported_trace(root, tmp_path):
    """``wakeup_paths`` classifies each wakeup by where its move was recorded (docs/model.md,
    "Traces"): in examples/fidelity/dl2.json, dl3 stays at some wakeups, is pushed by the CPU it
    waited on at others (after dl1's pick there), and pulled when it waited for a CPU; pushes run
    wakeup_ns + ipi_ns after the move with the spread off. ``schedlab trace paths`` reads the
    exported ftrace text the same way (the import keeps the recording CPU of each move)."""
    import subprocess
    import sys

    from schedlab import paths

    r = schedlab.simulate(str(root / "examples/fidelity/dl2.json"), cpus=2, trace=True,
                          set={"wakeup_spread_pct": 0})
    rows = r.wakeup_paths("dl3")
    kinds = {k: [x for x in rows if x[1] == k] for k in paths.PATHS}
    assert len(kinds["stayed"]) > 10 and len(kinds["pushed"]) > 10 and len(kinds["pulled"]) > 10, \
        {k: len(v) for k, v in kinds.items()}
    assert not kinds["placed"]  # select_task_rq_dl leaves a waking job where it is
    assert all(x[3] is None for x in kinds["stayed"])
    after_push = {x[4] - x[3] for x in kinds["pushed"] if x[2] >= 10_000_000}
    assert after_push == {10_000}, after_push
    assert all(x[3] <= x[4] for x in kinds["pulled"])
    text = tmp_path / "dl2.txt"
    r.write_ftrace(text)
    out = tmp_path / "paths.json"
    p = subprocess.run([sys.executable, "-m", "schedlab", "trace", "paths", str(text), "--task", "dl",
                        "--json", str(out)], capture_output=True, text=True, check=False)
    assert p.returncode == 0, p.stderr
    assert "dl3              pushed" in p.stdout
    import json

    got = {(x["task"], x["path"]): x["wakeups"] for x in json.loads(out.read_text())}
    want = {}
    for name, path, *_ in r.wakeup_paths("dl"):
        want[(name, path)] = want.get((name, path), 0) + 1
    assert got == want


def test_a_trace_without_counters_has_the_events_and_no_counter_tracks(tmp_path):
    # trace_counters=False: the same scheduler events (ftrace text, wakeups), no counter tracks.
    full = schedlab.simulate(WL, cpus=2, trace=True)
    bare = schedlab.simulate(WL, cpus=2, trace=True, trace_counters=False)
    assert bare.ftrace_text() == full.ftrace_text() and bare.metrics == full.metrics
    path = tmp_path / "t.pftrace"
    bare.write_perfetto(path)
    trace = pb.Trace.FromString(path.read_bytes())
    assert not any(p.HasField("track_event") for p in trace.packet)
    assert any(p.HasField("ftrace_events") for p in trace.packet)
    # The wakeups grouped by thread name are the per-wakeup tuples, in the same order.
    by_name = bare.waking_to_run_by_name("")
    flat = bare.waking_to_run("")
    assert {n: list(zip(*v)) for n, v in by_name.items()} == \
        {n: [(w, r) for m, w, r in flat if m == n] for n in {m for m, _, _ in flat}}
    assert sum(len(v[0]) for v in by_name.values()) == len(flat) > 100
    assert set(bare.waking_to_run_by_name("sleepy")) == {"sleepy"}


def test_run_writes_ftrace_text_without_sampling_counters(tmp_path, monkeypatch):
    # `schedlab run --trace x.txt`: ftrace text has no counter tracks, so its run samples none.
    from schedlab import cli

    seen = []
    real = cli.simulate

    def spy(*a, **k):
        seen.append(k.get("trace_counters"))
        return real(*a, **k)

    monkeypatch.setattr(cli, "simulate", spy)
    wl = tmp_path / "w.json"
    wl.write_text(__import__("json").dumps(WL))
    for name, counters in (("t.txt", False), ("t.pftrace", True)):
        assert cli.main(["run", str(wl), "--cpus", "2", "--trace", str(tmp_path / name), "--quiet"]) == 0
        assert seen.pop() is counters
    assert "sched_switch" in (tmp_path / "t.txt").read_text()
