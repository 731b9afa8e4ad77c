"""schedlab: a laboratory for Linux CPU schedulers.

The simulator core is Rust (``schedlab._native``); this package adds the
Python API (:func:`simulate`), the ``schedlab`` command and reports.
"""

from ._native import ConfigError, SimulationError, TraceError, WorkloadError
from .api import (
    Metrics,
    SimResult,
    check,
    crsr,
    fair_degree,
    import_trace,
    metric_descriptions,
    parse_duration,
    schedulers,
    simulate,
)

__all__ = [
    "ConfigError",
    "Metrics",
    "SimResult",
    "SimulationError",
    "TraceError",
    "WorkloadError",
    "check",
    "crsr",
    "fair_degree",
    "import_trace",
    "metric_descriptions",
    "parse_duration",
    "schedulers",
    "simulate",
]
