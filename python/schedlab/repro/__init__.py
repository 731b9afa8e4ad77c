"""``schedlab repro NAME``: the seed experiments, as data (experiments/NAME.json) plus code.

Each experiment module has ``run(spec, out_dir, log) -> dict`` writing its report
(Markdown, JSON and figures) into ``out_dir`` and returning the JSON summary.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Callable, Dict

from . import cfslab, dwcfs, illf, shootout, tsf

EXPERIMENTS: Dict[str, Callable[..., dict]] = {
    "illf": illf.run,
    "tsf": tsf.run,
    "dwcfs": dwcfs.run,
    "cfs-lab": cfslab.run,
    "shootout": shootout.run,
}

ROOT = Path(__file__).resolve().parents[3]


def spec_path(name: str) -> Path:
    return ROOT / "experiments" / f"{name}.json"


def load_spec(name: str) -> dict:
    p = spec_path(name)
    if not p.is_file():
        raise FileNotFoundError(f"{p}: experiment data not found (run from a schedlab checkout)")
    with open(p, encoding="utf-8") as f:
        return json.load(f)


def repro(name: str, out_dir: str, log: Callable[[str], None] = lambda s: None, host: bool = False) -> dict:
    """Run experiment ``name`` and write its report to ``out_dir`` (replaced as a whole:
    the report is built in a temporary directory and moved into place when complete)."""
    if name not in EXPERIMENTS:
        raise KeyError(f"unknown experiment {name!r}; expected one of: {', '.join(sorted(EXPERIMENTS))}")
    spec = load_spec(name)
    if host:
        if "host" not in spec:
            raise KeyError(f"experiment {name!r} has no real-kernel half")
        spec = {**spec, "host": {**spec["host"], "enabled": True}}
    out = Path(out_dir)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        summary = EXPERIMENTS[name](spec, tmp, log)
        if out.exists():
            shutil.rmtree(out)
        os.replace(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return summary
