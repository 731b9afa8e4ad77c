"""``schedlab shootout`` (issue 15, part 2): intervals, ranks only beyond the spread, the CLI."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from schedlab.shootout import interval, rank

ROOT = Path(__file__).resolve().parent.parent


def test_interval_is_students_t():
    r = interval([1.0, 2.0, 3.0])
    # mean 2, sd 1, t(2 df) = 4.303: half-width 4.303 / sqrt(3).
    assert r["mean"] == 2.0 and r["ci95"] == pytest.approx(4.303 / 3 ** 0.5)
    assert interval([5.0])["ci95"] is None


def test_ranks_only_where_intervals_separate():
    rows = {"a": {"mean": 10.0, "ci95": 1.0}, "b": {"mean": 9.5, "ci95": 1.0},
            "c": {"mean": 5.0, "ci95": 0.5}, "d": {"mean": None, "ci95": None}}
    assert rank(rows, "higher") == {"a": 1, "b": 1, "c": 3}
    assert rank(rows, "lower") == {"c": 1, "b": 2, "a": 2}


def test_cli_ranks_every_scheduler_with_intervals(tmp_path):
    out, png = tmp_path / "s.json", tmp_path / "s.png"
    r = subprocess.run([sys.executable, "-m", "schedlab", "shootout", str(ROOT / "examples" / "mixed.json"),
                        "--cpus", "2", "--duration", "1", "--seeds", "3",
                        "--schedulers", "eevdf,cfs,bmq,pds,bfs", "--metric", "latency_p99,fairness",
                        "--json", str(out), "--plot", str(png)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    res = json.loads(out.read_text())
    for m in ("latency_p99", "fairness"):
        rows = res["metrics"][m]
        assert sorted(rows) == ["bfs", "bmq", "cfs", "eevdf", "pds"]
        # Seeds change the OS noise, so repeats differ and intervals exist.
        assert all(v["n"] == 3 and v["ci95"] is not None and v["rank"] >= 1 for v in rows.values())
    assert png.stat().st_size > 1000 and "95 % CI" in r.stdout
    bad = subprocess.run([sys.executable, "-m", "schedlab", "shootout", str(ROOT / "examples" / "mixed.json"),
                          "--metric", "speed"], capture_output=True, text=True)
    assert bad.returncode == 2 and "unknown 'speed'" in bad.stderr and "Traceback" not in bad.stderr
