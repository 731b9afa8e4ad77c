"""Type stubs for the native module (crates/schedlab-py)."""

from typing import Any, Callable, List, Mapping, Optional, Tuple

class WorkloadError(ValueError):
    file: str
    path: str
    line: Optional[int]
    column: Optional[int]
    reason: str

class ConfigError(ValueError): ...
class SimulationError(RuntimeError): ...
class PolicyError(SimulationError): ...

class RunResult:
    def metrics_json(self) -> str: ...
    def activations(self) -> list[tuple[int, float, float]]: ...
    def jobs(self) -> list[tuple[int, float, float, float, float]]: ...
    def has_trace(self) -> bool: ...
    def trace_len(self) -> int: ...
    def write_perfetto(self, path: str) -> None: ...
    def perfetto_bytes(self) -> bytes: ...
    def write_perfetto_to(self, file: Any) -> None: ...
    def waking_to_run(self, prefix: str) -> List[Tuple[str, int, int]]: ...
    def write_ftrace(self, path: str) -> None: ...
    def ftrace_text(self) -> str: ...

def check_workload(text: str, source: str) -> str: ...
def schedulers_json() -> str: ...
def metric_descriptions_json() -> str: ...
def simulate(
    text: str,
    source: str,
    config: Mapping[str, Any],
    progress: Optional[Callable[[int, Optional[int]], None]] = None,
    policy: Optional[Any] = None,
) -> RunResult: ...

class TraceError(ValueError): ...

def import_trace(source: str, text: str, tolerant: bool) -> tuple[RunResult, list[str], int, str]: ...

EXT_HOOKS: List[str]

class TaskView:
    id: int
    pid: int
    tgid: int
    name: str
    nice: int
    weight: int
    cpumask: List[int]
    slice: int
    dsq_vtime: int
    policy: str
    cpu: int
    running: bool
    runnable: bool

class ExitInfo:
    kind: str
    exit_code: int
    reason: str
    msg: str

class Ctx:
    """The kfunc context of one ext hook call (valid only during it); see docs/policies.md."""

    valid: bool
    def __getattr__(self, name: str) -> Any: ...
