"""A run's per-task metrics as the experiments read them: rows, not a DataFrame.

Why: ``r.tasks`` builds a pandas DataFrame, and the first one imports pandas (about half a second
of CPU); ``schedlab repro all`` built 281 of them to read a few columns. Reading the rows instead
took its CPU beyond simulations and plotting from 2.0–2.4 s to 0.8–1.0 s (issue 18;
docs/performance.md, thirty-sixth session). The readers here give what the frame's did, byte for
byte in the reports:

* a missing value (``None`` in the rows, NaN in a frame) is skipped by sums and maxima, as pandas
  skips NaN, and the maximum of none is NaN;
* a float sum is numpy's (pairwise summation over the values in row order), which is what a frame
  column's ``sum()`` computes; Python's ``sum`` adds in another order and may differ in the last
  bit. Integer sums are exact either way.
"""

from __future__ import annotations

import math
from typing import Dict, Iterable, List, Optional

import numpy as np


def task_rows(r) -> List[dict]:
    """The run's per-task rows (``r.metrics["tasks"]``), in the frame's order."""
    return r.metrics["tasks"]


def by_name(r) -> Dict[str, dict]:
    """The rows by task name (the frame's index)."""
    return named(task_rows(r))


def named(rows: Iterable[dict]) -> Dict[str, dict]:
    """Metrics rows (a run's, or a host run's ``tasks``) by task name."""
    return {t["name"]: t for t in rows}


def present(values: Iterable[Optional[float]]) -> List[float]:
    """The values that were measured (not None)."""
    return [v for v in values if v is not None]


def fsum(values: Iterable[Optional[float]]) -> float:
    """A float column's ``sum()``: numpy's pairwise sum of the measured values (0.0 for none)."""
    return float(np.sum(np.asarray(present(values), dtype=np.float64)))


def isum(values: Iterable[Optional[int]]) -> int:
    """An integer column's ``sum()`` over the measured values."""
    return int(sum(present(values)))


def fmax(values: Iterable[Optional[float]]) -> float:
    """A column's ``max()`` over the measured values; NaN for none."""
    got = present(values)
    return float(max(got)) if got else math.nan
