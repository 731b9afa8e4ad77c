"""Machine profiles (issue 13): what ``schedlab calibrate`` measured on a machine, as the simulator
tunables and HZ that make a run model it. ``schedlab run --machine PROFILE`` and ``schedlab compare
--workload FILE --machine PROFILE`` use one; explicit ``--set`` and ``--hz`` still win.

A profile is JSON::

    {"schedlab_machine_profile": 1,
     "measured_on": {"kernel": ..., "cpus": ..., "hz": ..., "preempt": ..., "date": ...},
     "hz": 250,
     "tunables": {"wakeup_ns": ..., "idle_exit_ns": ..., "timer_slack_ns": ..., "context_switch_ns": ...},
     "measurements": {...raw figures...},
     "not_measured": {"ipi_ns": "why", ...}}
"""

from __future__ import annotations

import json

from . import _native
from .api import schedulers

# Names for annotations only: importing typing costs `schedlab run` about 3 ms of start-up
# (issue 18), and every annotation here is a string (`from __future__ import annotations`).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, Tuple

VERSION = 1


def _engine_tunables() -> Dict[str, Dict[str, Any]]:
    return {t["name"]: t for t in schedulers()["engine_tunables"]}


def load(path: str) -> Tuple[Dict[str, int], int]:
    """(tunables, hz) of the profile at ``path``; ConfigError naming the file and JSON path."""
    def bad(where: str, what: str) -> Exception:
        return _native.ConfigError(f"{path}: {where}: {what}")

    try:
        with open(path, encoding="utf-8") as f:
            p = json.load(f)
    except OSError as e:
        raise _native.ConfigError(f"{path}: cannot read the machine profile: {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise _native.ConfigError(f"{path}: line {e.lineno}: not JSON ({e.msg})") from None
    if not isinstance(p, dict) or p.get("schedlab_machine_profile") != VERSION:
        raise bad("schedlab_machine_profile", f"expected {VERSION} (a profile written by schedlab calibrate)")
    hz = p.get("hz")
    if not isinstance(hz, int) or isinstance(hz, bool) or not 1 <= hz <= 10_000:
        raise bad("hz", "expected an integer 1..10000")
    tun = p.get("tunables")
    if not isinstance(tun, dict):
        raise bad("tunables", "expected an object of engine tunables")
    known = _engine_tunables()
    out = {}
    for k, v in tun.items():
        spec = known.get(k)
        if spec is None:
            raise bad(f"tunables.{k}", f"unknown engine tunable; expected one of: {', '.join(sorted(known))}")
        if not isinstance(v, int) or isinstance(v, bool) or not spec["min"] <= v <= spec["max"]:
            raise bad(f"tunables.{k}", f"expected an integer {spec['min']}..{spec['max']}")
        out[k] = v
    return out, hz
