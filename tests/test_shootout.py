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



def _rows(**iv):
    return {n: {"mean": m, "ci95": c} for n, (m, c) in iv.items()}


def test_ranks_follow_chains_of_overlaps():
    # QA's shape (fairness): cfs overlaps tt, tt overlaps eevdf, cfs misses eevdf. The greedy rule
    # (overlap with the head of the rank only) ranked cfs #3 below both; they are one group.
    rows = _rows(eevdf=(0.6513, 0.0074), tt=(0.6469, 0.0434), cfs=(0.6380, 0.0030), bmq=(0.45, 0.02))
    assert rank(rows, "higher") == {"eevdf": 1, "tt": 1, "cfs": 1, "bmq": 4}
    # A chain of narrow intervals, each overlapping only its neighbours: one rank for all.
    chain = _rows(a=(1.0, 0.6), b=(2.0, 0.6), c=(3.0, 0.6), d=(4.0, 0.6), e=(9.0, 0.1))
    assert rank(chain, "lower") == {"a": 1, "b": 1, "c": 1, "d": 1, "e": 5}
    assert rank(chain, "higher") == {"e": 1, "a": 2, "b": 2, "c": 2, "d": 2}


def test_interval_covering_a_better_rank_shares_it():
    # QA (misses, lower is better): bfs 3 ± 4.3 covers cfs's exact 0, yet the greedy rule ranked it
    # #3 with eevdf (1 ± 0, the head of rank 3); bfs's interval links them all: rank 1.
    rows = _rows(cfs=(0.0, 0.0), bmq=(0.0, 0.0), eevdf=(1.0, 0.0), bfs=(3.0, 4.3), tt=(12.0, 1.0))
    assert rank(rows, "lower") == {"cfs": 1, "bmq": 1, "eevdf": 1, "bfs": 1, "tt": 5}


def test_wide_interval_bridges_two_groups_whatever_its_mean():
    # a and b are separated; w's mean lies beyond both (sorted by mean it comes last, after a and b
    # would already be split), but its interval covers both: all three are one group.
    rows = _rows(a=(1.0, 0.1), b=(2.0, 0.1), w=(2.5, 1.6), z=(10.0, 0.5))
    assert rank(rows, "lower") == {"a": 1, "b": 1, "w": 1, "z": 4}
    assert rank(rows, "higher") == {"z": 1, "a": 2, "b": 2, "w": 2}
    # Without the bridge, a and b separate.
    del rows["w"]
    assert rank(rows, "lower") == {"a": 1, "b": 2, "z": 3}


def test_separated_intervals_none_means_and_direction():
    rows = _rows(a=(1.0, 0.2), b=(2.0, 0.2), c=(3.0, None), d=(None, None), e=(3.2, 0.2))
    # Touching counts as overlap (c's point 3.0 is e's lower bound); d has no mean: unranked.
    assert rank(rows, "lower") == {"a": 1, "b": 2, "c": 3, "e": 3}
    assert rank(rows, "higher") == {"c": 1, "e": 1, "b": 3, "a": 4}
    assert rank(_rows(d=(None, None)), "higher") == {}
    # One value each (no intervals): ranked by mean, equal means tie.
    assert rank(_rows(x=(5.0, None), y=(5.0, None), z=(4.0, None)), "higher") == {"x": 1, "y": 1, "z": 3}


def test_different_ranks_always_mean_separated_intervals():
    # The caption's claim, on random intervals: equal ranks iff connected by a chain of overlaps,
    # and a better rank's every interval lies wholly on the better side of a worse rank's.
    import random

    rnd = random.Random(7)
    for _ in range(300):
        rows = _rows(**{f"s{i}": (rnd.uniform(0, 10), rnd.choice([None, rnd.uniform(0, 2)]))
                        for i in range(rnd.randint(1, 8))})
        for better in ("higher", "lower"):
            r = rank(rows, better)
            b = {n: (v["mean"] - (v["ci95"] or 0), v["mean"] + (v["ci95"] or 0)) for n, v in rows.items()}
            # Connected components by brute force: everything reachable through pairwise overlaps.
            comp = {}
            for x in rows:
                seen, todo = {x}, [x]
                while todo:
                    u = todo.pop()
                    for y in rows:
                        if y not in seen and b[u][0] <= b[y][1] and b[y][0] <= b[u][1]:
                            seen.add(y)
                            todo.append(y)
                comp[x] = seen
            for x in rows:
                for y in rows:
                    assert (r[x] == r[y]) == (y in comp[x])
                    if r[x] < r[y]:
                        assert (b[x][0] > b[y][1]) if better == "higher" else (b[x][1] < b[y][0])
            # Competition ranking: a rank is 1 + the number of schedulers ranked better.
            assert all(r[x] == 1 + sum(r[y] < r[x] for y in rows) for x in rows)


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
