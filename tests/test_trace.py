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
    assert cpus == {0, 1}
    assert counts["sched_wakeup_new"] == 4
    assert counts["sched_waking"] > 100
    text = r.ftrace_text()
    assert counts["sched_switch"] == len(re.findall(r"sched_switch:", text))
    assert counts["sched_switch"] == r.metrics.context_switches


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
    snaps = [p.clock_snapshot for p in trace.packet if p.HasField("clock_snapshot")]
    assert len(snaps) == 1 and {c.clock_id for c in snaps[0].clocks} == {3, 6}
    states = {}
    for p in trace.packet:
        if p.HasField("ftrace_events"):
            for e in p.ftrace_events.event:
                if e.WhichOneof("event") == "sched_switch":
                    s = e.sched_switch
                    states.setdefault(s.prev_pid == 0, set()).add(s.prev_state)
    assert states[True] == {0}
    assert 0x100 in states[False] and 0 not in states[False]
    text = r.ftrace_text()
    assert "prev_comm=swapper" in text
    assert not re.search(r"prev_comm=swapper\S* prev_pid=0 prev_prio=\d+ prev_state=R\+", text)
    assert re.search(r"prev_comm=hog-\d prev_pid=\d+ prev_prio=\d+ prev_state=R\+", text)


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
    values = {}
    for p in trace.packet:
        if p.HasField("track_event"):
            te = p.track_event
            assert te.type == pb.TrackEvent.TYPE_COUNTER and te.track_uuid in counters
            values.setdefault(counters[te.track_uuid], []).append((p.timestamp, te.counter_value))
    hog = next(t.thread.tid for t in tracks.values()
               if t.HasField("thread") and t.thread.thread_name == "hog-0")
    vr = dict(values[(hog, "vruntime")])
    dl = dict(values[(hog, "deadline")])
    assert len(set(vr.values())) > 10
    # EEVDF: the virtual deadline is the vruntime plus the slice's virtual time.
    assert all(dl[ts] > vr[ts] for ts in vr if ts in dl)
    # Three hogs share two CPUs: each one's utilisation climbs towards 2/3 of 1024 (sampled at switches).
    util = [v for _, v in values[(hog, "util")]]
    assert 0 <= min(util) and 500 < max(util) <= 1024
    freq = [e.cpu_frequency for p in trace.packet if p.HasField("ftrace_events") for e in p.ftrace_events.event
            if e.WhichOneof("event") == "cpu_frequency"]
    assert {f.cpu_id for f in freq} == {0, 1} and {f.state for f in freq} <= {1_000_000, 2_000_000}
    assert "cpu_frequency: state=" in r.ftrace_text()
