"""Trace formats (issue 17): trace-cmd report's default text, its binary trace.dat (through the
trace-cmd tool), perf script's default text, and one clear error naming the formats otherwise."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import schedlab

TRACES = Path(__file__).parent / "fixtures" / "traces"


def test_trace_cmd_report_default_format():
    # Recorded here with `trace-cmd extract` from a tracefs instance, then `trace-cmd report`:
    # sched_switch as `comm:pid [prio] S ==> comm:pid [prio]`, sched_wakeup as `comm:pid [prio] CPU:001`,
    # each line prefixed by the instance's name.
    imp = schedlab.import_trace(TRACES / "trace-cmd-report-default.txt", tolerant=True)
    m = imp.result.metrics
    assert m["context_switches"] == 29
    names = {t["name"] for t in m["tasks"]}
    assert {"bash", "dd", "rcu_preempt"} <= names
    dd = next(t for t in m["tasks"] if t["name"] == "dd")
    assert dd["cpu_time_us"] > 1000


def test_perf_script_default_format():
    imp = schedlab.import_trace(TRACES / "perf-script-default.txt", tolerant=True)
    assert imp.result.metrics["context_switches"] > 10


def test_perf_sched_record_with_ns_timestamps():
    # `perf sched record -- sh -c 'dd ...; sleep 0.01'` on this project's Linux 6.18 VM (perf 6.1), then
    # `perf script --ns`: nanosecond timestamps, and the sched_stat_runtime and sched_process_fork lines
    # that perf sched adds, which the import skips and counts.
    path = TRACES / "perf-sched-record-ns.txt"
    text = path.read_text()
    imp = schedlab.import_trace(path, tolerant=True)
    m = imp.result.metrics
    assert imp.skipped == text.count(" sched:sched_stat_runtime: ") + text.count(" sched:sched_process_fork: ")
    assert m["context_switches"] == text.count(" sched:sched_switch: ") == 32
    tasks = {t["name"]: t for t in m["tasks"]}
    # dd (pid 2931) left the CPU as D, D, then Z when it exited.
    assert (tasks["dd"]["nvcsw"], tasks["dd"]["nivcsw"]) == (2, 0)
    # migration/0 ran from .004659207 to .004689822: 30.615 us, kept to the nanosecond.
    assert tasks["migration/0"]["cpu_time_us"] == pytest.approx(30.615, abs=1e-9)


def test_unknown_format_names_the_understood_ones(tmp_path):
    f = tmp_path / "x.bin"
    f.write_bytes(b"PK\x03\x04\x00\x00binary")
    with pytest.raises(schedlab.TraceError, match="understood: tracefs `trace` text"):
        schedlab.import_trace(f)
    g = tmp_path / "x.txt"
    g.write_text("hello\n")
    with pytest.raises(schedlab.TraceError, match="trace-cmd trace.dat"):
        schedlab.import_trace(g)


TRACEFS = Path("/sys/kernel/tracing")


NO_TRACE_CMD = shutil.which("trace-cmd") is None or os.geteuid() != 0 or not (TRACEFS / "instances").is_dir()


@pytest.mark.skipif(NO_TRACE_CMD,
                    reason="needs root, tracefs and the trace-cmd tool (scripts/setup.sh installs it as root)")
def test_trace_dat_through_trace_cmd(tmp_path):
    # A private tracefs instance (the global buffer is left alone), extracted to trace.dat.
    inst = TRACEFS / "instances" / f"schedlab-test-{os.getpid()}"
    inst.mkdir()
    try:
        for ev in ("sched_switch", "sched_waking", "sched_wakeup"):
            (inst / "events" / "sched" / ev / "enable").write_text("1")
        (inst / "tracing_on").write_text("1")
        subprocess.run(["sh", "-c", "dd if=/dev/zero of=/dev/null bs=1M count=20 2>/dev/null; sleep 0.02"],
                       check=True)
        (inst / "tracing_on").write_text("0")
        dat = tmp_path / "trace.dat"
        subprocess.run(["trace-cmd", "extract", "-B", inst.name, "-o", str(dat)], check=True,
                       capture_output=True, timeout=60)
    finally:
        if inst.exists():
            inst.rmdir()
    imp = schedlab.import_trace(dat, tolerant=True)
    assert imp.result.metrics["context_switches"] > 0


@pytest.mark.skipif(shutil.which("trace-cmd") is None,
                    reason="needs the trace-cmd tool (Debian package trace-cmd; setup.sh installs it as root)")
def test_committed_trace_dat():
    # Recorded on this project's Linux 6.18 VM: a private tracefs instance (sched_switch, sched_waking,
    # sched_wakeup, sched_wakeup_new, sched_migrate_task, sched_process_exit) around three rounds of
    # `dd bs=1M count=5; sleep 0.005`, then `trace-cmd extract -B`, run under `unshare -m` with
    # /proc/kallsyms, printk_formats and saved_cmdlines bind-mounted over by /dev/null (130 KB, not 1.2 MB).
    dat = TRACES / "trace-cmd-extract.dat"
    imp = schedlab.import_trace(dat, tolerant=True)
    m = imp.result.metrics
    report = subprocess.run(["trace-cmd", "report", "-i", str(dat)], check=True, capture_output=True,
                            text=True, timeout=60).stdout
    assert m["context_switches"] == report.count(" sched_switch: ") == 46
    # sh (pid 2857) left the CPU 13 times: 6 D, 6 S, then X when it exited.
    sh = next(t for t in m["tasks"] if t["name"] == "sh")
    assert (sh["nvcsw"], sh["nivcsw"]) == (12, 0)
    # On CPU 1 the switches from the idle task are missing in these recordings (perf's as well):
    # tolerant mode assumes them and lists each repair.
    assert imp.repairs and all("cpu 1:" in r and "pid 0 was running there" in r for r in imp.repairs)
    with pytest.raises(schedlab.TraceError, match="pid 0 was running there"):
        schedlab.import_trace(dat)


def test_our_own_pftrace_reads_back(tmp_path):
    # schedlab's Perfetto export imported again: the same switches, task by task.
    wl = Path(__file__).resolve().parents[1] / "examples" / "mixed.json"
    r = schedlab.simulate(wl, cpus=2, duration=1, trace=True)
    path = tmp_path / "run.pftrace"
    r.write_perfetto(path)
    imp = schedlab.import_trace(path)
    a, b = r.metrics, imp.result.metrics
    assert a["context_switches"] == b["context_switches"]
    for x, y in zip(a["tasks"], b["tasks"]):
        assert (x["name"], x["nvcsw"], x["nivcsw"]) == (y["name"], y["nvcsw"], y["nivcsw"])
        assert abs(x["cpu_time_us"] - y["cpu_time_us"]) < 10_000  # the trace ends at its last event
