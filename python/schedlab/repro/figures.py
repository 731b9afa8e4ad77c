"""Figures that are the same bytes on every run (issue 16): the SVG id salt fixed, no date and
no software version in the files' metadata, so a rerun of an experiment leaves its figures
unchanged unless its numbers changed."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable


def pyplot() -> Any:
    """matplotlib.pyplot on the Agg backend, with the deterministic settings."""
    import matplotlib

    matplotlib.use("Agg")
    matplotlib.rcParams["svg.hashsalt"] = "schedlab"  # ids of clip paths etc.: else random per run
    import matplotlib.pyplot as plt

    return plt


def save(fig: Any, base: Path, formats: Iterable[str] = ("svg", "png")) -> None:
    """Write ``fig`` as BASE.svg / BASE.png without a date or software stamp."""
    for ext in formats:
        meta = {"Date": None, "Creator": None} if ext == "svg" else {"Software": None}
        fig.savefig(Path(f"{base}.{ext}"), metadata=meta)
