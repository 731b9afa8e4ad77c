"""Host metrics reconciled against /proc (python/schedlab/host/reconcile.py): synthetic threads
whose traces agree or disagree with their counters, so the rules are checked on any machine."""

from schedlab.host.reconcile import TRACE_ONLY, reconcile


def _task(name, cpu_ms, nvcsw=100, nivcsw=10):
    return {"name": name, "cpu_time_us": cpu_ms * 1000, "cpu_share": 0.0, "wait_time_us": 5000.0,
            "nvcsw": nvcsw, "nivcsw": nivcsw, "wakeups": 100, "migrations": 7,
            **{k: 12.0 for k in TRACE_ONLY if k.startswith("wakeup_latency")}}


def _thread(run_ms, nvcsw=100, nivcsw=10, delay_ms=4.0):
    return {"proc": {"run_ns": int(run_ms * 1e6), "run_delay_ns": int(delay_ms * 1e6), "nvcsw": nvcsw,
                     "nivcsw": nivcsw}, "overhead_cpu_ns": 0}


def test_agreeing_trace_keeps_its_latencies_and_proc_is_the_authority():
    rows, cross, warnings = reconcile([_task("a", 752.0)], {"a": _thread(754.0)}, 1e6,
                                      {"cpu0": {"busy": 800.0, "steal": 0.0}})
    (r,) = rows
    assert r["unreliable"] is None and not warnings and cross["a"]["agrees"]
    assert r["cpu_time_us"] == 754000.0 and r["wait_time_us"] == 4000.0 and r["cpu_share"] == 0.754
    assert r["wakeup_latency_p99_us"] == 12.0 and r["migrations"] == 7


def test_a_trace_that_lost_records_is_withheld_with_the_size_of_the_disagreement():
    # The 16-CPU case of issue 13: the trace saw 107 ms of a sleeper's 754 ms.
    rows, _, warnings = reconcile([_task("s", 107.0)], {"s": _thread(754.0)}, 1e6,
                                  {"cpu0": {"busy": 800.0, "steal": 0.0}})
    (r,) = rows
    assert r["unreliable"] and "trace 107.0 ms vs /proc 754.0 ms (-86%)" in r["unreliable"][0]
    assert all(r[k] is None for k in TRACE_ONLY)
    assert r["cpu_time_us"] == 754000.0  # the authority is still reported
    assert warnings and "withheld" in warnings[0]


def test_steal_widens_the_cpu_time_tolerance_and_switches_are_checked():
    # 30 ms over /proc: beyond 5 % of 300 ms (15 ms) but within it plus the thread's share of steal.
    ok, _, _ = reconcile([_task("a", 330.0)], {"a": _thread(300.0)}, 1e6,
                         {"cpu0": {"busy": 300.0, "steal": 20.0}})
    assert ok[0]["unreliable"] is None
    bad, _, _ = reconcile([_task("a", 330.0)], {"a": _thread(300.0)}, 1e6,
                          {"cpu0": {"busy": 300.0, "steal": 0.0}})
    assert bad[0]["unreliable"]
    sw, _, _ = reconcile([_task("a", 300.0, nvcsw=50)], {"a": _thread(300.0, nvcsw=100)}, 1e6, {})
    assert sw[0]["unreliable"] == ["voluntary switches: trace 50 vs /proc 100 (-50%)"]


def test_latencies_measured_for_too_few_wakeups_are_withheld():
    # Linux 6.18 on a Firecracker VM: switches out of idle go unrecorded, so a sleeper woken on an
    # idle CPU has no switch-in; only 128 of its 970 wakeups have a latency.
    t = {**_task("io", 70.0, nvcsw=970, nivcsw=0), "wakeups": 128}
    rows, _, _ = reconcile([t], {"io": _thread(70.0, nvcsw=970, nivcsw=0)}, 1e6, {})
    assert rows[0]["unreliable"] == ["wakeups: latency measured for 128 of about 970 (the trace lacks "
                                     "the switch-ins of the others)"]
    assert rows[0]["wakeup_latency_p50_us"] is None


def test_the_clock_uncertainty_widens_the_tolerance_only_where_proc_is_larger():
    def _io(cpu_ms):
        return {**_task("io", cpu_ms, nvcsw=190, nivcsw=0), "wakeups": 190}

    # A sleeper on an idle CPU: the kernel started charging each activation somewhere between the
    # wakeup's sched_waking and sched_wakeup; the import counts from the latter, so /proc may be
    # larger by up to the sum of those spans (here 1.5 ms), never smaller for that reason.
    under = reconcile([_io(20.0)], {"io": _thread(22.2, nvcsw=190, nivcsw=0)}, 1e6, {})
    assert under[0][0]["unreliable"] == ["CPU time: trace 20.0 ms vs /proc 22.2 ms (-10%)"]
    ok, cross, _ = reconcile([_io(20.0)], {"io": _thread(22.2, nvcsw=190, nivcsw=0)}, 1e6, {},
                             {"io": 1_500_000})
    assert ok[0]["unreliable"] is None and cross["io"]["clock_uncertainty_ms"] == 1.5
    # Beyond it, still withheld, the allowance named.
    bad, _, _ = reconcile([_io(20.0)], {"io": _thread(23.0, nvcsw=190, nivcsw=0)}, 1e6, {},
                          {"io": 1_500_000})
    assert bad[0]["unreliable"] == ["CPU time: trace 20.0 ms vs /proc 23.0 ms (-13%, 1.5 ms of clock "
                                    "uncertainty allowed)"]
    # A trace above /proc gets nothing from it.
    over, _, _ = reconcile([_io(24.4)], {"io": _thread(22.2, nvcsw=190, nivcsw=0)}, 1e6, {},
                           {"io": 1_500_000})
    assert over[0]["unreliable"] == ["CPU time: trace 24.4 ms vs /proc 22.2 ms (+10%)"]
