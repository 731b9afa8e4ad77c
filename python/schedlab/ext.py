"""Scheduling policies written in Python for the ext class (sched_ext).

Subclass :class:`Policy`, override the hooks you need (the names and
meanings of ``struct sched_ext_ops``, like the Rust ``ExtOps`` trait) and
pass an instance as the scheduler::

    from schedlab.ext import Policy, SCX_DSQ_GLOBAL, SCX_SLICE_DFL

    class Fifo(Policy):
        name = "fifo"

        def enqueue(self, ctx, p, enq_flags):
            ctx.dsq_insert(p, SCX_DSQ_GLOBAL, SCX_SLICE_DFL, enq_flags)

    schedlab.simulate("wl.json", scheduler=Fifo(), cpus=2)

Every hook gets a ``ctx`` (the ``scx_bpf_*`` kfuncs: :class:`Ctx`), valid
only during that call. A hook the subclass does not override runs the
kernel's default in Rust, without calling Python. Tasks are ``int`` ids
(``ctx.task(p)`` gives name, pid, nice, weight, ...); per-task storage is
``ctx.task_data(p)``, a :class:`types.SimpleNamespace` made on first use.
See docs/policies.md, "Python policies".
"""

from __future__ import annotations

import importlib.util
import inspect
import os
import sys
from typing import Any, List, Optional, Tuple, Type

from . import _native

PolicyError = _native.PolicyError
PolicyError.__module__ = __name__  # shown as schedlab.ext.PolicyError
Ctx = _native.Ctx
TaskView = _native.TaskView
ExitInfo = _native.ExitInfo

# --- constants (kernel values; crates/schedlab-core/src/class/ext/ops.rs) ----

SCX_SLICE_DFL = 20_000_000
SCX_SLICE_INF = (1 << 64) - 1
SCX_WATCHDOG_MAX_TIMEOUT_MS = 30_000
SCX_DSP_DFL_MAX_BATCH = 32

SCX_DSQ_FLAG_BUILTIN = 1 << 63
SCX_DSQ_FLAG_LOCAL_ON = 1 << 62
SCX_DSQ_INVALID = SCX_DSQ_FLAG_BUILTIN
SCX_DSQ_GLOBAL = SCX_DSQ_FLAG_BUILTIN | 1
SCX_DSQ_LOCAL = SCX_DSQ_FLAG_BUILTIN | 2
SCX_DSQ_LOCAL_ON = SCX_DSQ_FLAG_BUILTIN | SCX_DSQ_FLAG_LOCAL_ON
SCX_DSQ_LOCAL_CPU_MASK = 0xFFFF_FFFF

SCX_ENQ_WAKEUP = 1
SCX_ENQ_HEAD = 1 << 16
SCX_ENQ_PREEMPT = 1 << 32
SCX_ENQ_REENQ = 1 << 40
SCX_ENQ_LAST = 1 << 41

SCX_DEQ_SLEEP = 1
SCX_DEQ_CORE_SCHED_EXEC = 1 << 32

SCX_WAKE_FORK = 0x04
SCX_WAKE_TTWU = 0x08
SCX_WAKE_SYNC = 0x10

SCX_KICK_IDLE = 1
SCX_KICK_PREEMPT = 2
SCX_KICK_WAIT = 4

SCX_OPS_KEEP_BUILTIN_IDLE = 1 << 0
SCX_OPS_ENQ_LAST = 1 << 1
SCX_OPS_ENQ_EXITING = 1 << 2
SCX_OPS_SWITCH_PARTIAL = 1 << 3

#: The hook names, in ``struct sched_ext_ops`` order.
HOOKS: Tuple[str, ...] = tuple(_native.EXT_HOOKS)


class Policy:
    """Base class of a Python sched_ext policy: one method per ``sched_ext_ops`` member.

    Class attributes: ``name`` (``ops.name``; default the class name),
    ``flags`` (``SCX_OPS_*``), ``timeout_ms`` (watchdog, 0 = 30 s),
    ``dispatch_max_batch`` (0 = 32). The defaults below are the kernel's
    behaviour for a missing op; they are what runs (in Rust) for every hook
    a subclass does not override, and what ``super().hook(...)`` does.
    An instance holds the state of one run: make a new one per run.
    """

    name: str = ""
    flags: int = 0
    timeout_ms: int = 0
    dispatch_max_batch: int = 0

    #: Hooks this class overrides (computed once per class).
    _overrides: Tuple[str, ...] = ()

    def __init_subclass__(cls, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        cls._overrides = tuple(h for h in HOOKS if getattr(cls, h) is not getattr(Policy, h))

    @property
    def _policy_name(self) -> str:
        return self.name or type(self).__name__

    def __repr__(self) -> str:
        return f"<{type(self).__name__} policy {self._policy_name!r}>"

    # --- hooks (signatures and defaults of ops.rs's ExtOps) ------------------

    def select_cpu(self, ctx: Ctx, p: int, prev_cpu: int, wake_flags: int) -> int:
        """Pick the CPU for waking/new task ``p``; may insert ``p`` directly (skips enqueue).
        Default: ``select_cpu_dfl``, inserting into that CPU's local DSQ if it was idle."""
        cpu, idle = ctx.select_cpu_dfl(p, prev_cpu, wake_flags)
        if idle:
            ctx.dsq_insert(p, SCX_DSQ_LOCAL, SCX_SLICE_DFL, 0)
        return cpu

    def enqueue(self, ctx: Ctx, p: int, enq_flags: int) -> None:
        """Runnable ``p`` is handed to the policy: insert it into a DSQ or keep it for dispatch.
        Default: the global DSQ with the default slice."""
        ctx.dsq_insert(p, SCX_DSQ_GLOBAL, SCX_SLICE_DFL, enq_flags)

    def dequeue(self, ctx: Ctx, p: int, deq_flags: int) -> None:
        """``p``, in the policy's custody, leaves: forget it."""

    def dispatch(self, ctx: Ctx, cpu: int, prev: Optional[int]) -> None:
        """``cpu`` needs work: insert kept tasks or ``dsq_move_to_local`` a DSQ's first task."""

    def tick(self, ctx: Ctx, p: int) -> None:
        """The tick hit running ``p``; ``ctx.set_slice(p, 0)`` makes the CPU reschedule."""

    def runnable(self, ctx: Ctx, p: int, enq_flags: int) -> None:
        """``p`` became runnable (before enqueue)."""

    def running(self, ctx: Ctx, p: int) -> None:
        """``p`` starts running on ``ctx.this_cpu()``."""

    def stopping(self, ctx: Ctx, p: int, runnable: bool) -> None:
        """``p`` stops running (its slice is charged); ``runnable`` False when it sleeps/exits."""

    def quiescent(self, ctx: Ctx, p: int, deq_flags: int) -> None:
        """``p`` stops being runnable (``SCX_DEQ_SLEEP`` for a sleep)."""

    def yield_(self, ctx: Ctx, from_: int, to: Optional[int]) -> bool:
        """Running ``from_`` called ``sched_yield()``. Default: its slice becomes 0."""
        ctx.set_slice(from_, 0)
        return False

    def core_sched_before(self, ctx: Ctx, a: int, b: int) -> bool:
        """Core scheduling order (never called: no core scheduling). Default: runnable first."""
        return ctx.task_runnable_at(a) < ctx.task_runnable_at(b)

    def set_weight(self, ctx: Ctx, p: int, weight: int) -> None:
        """``p``'s weight (1..10000, nice 0 = 100) changed or was set on joining."""

    def set_cpumask(self, ctx: Ctx, p: int, cpumask: List[int]) -> None:
        """``p``'s allowed CPUs (sorted list) changed or were set on joining."""

    def update_idle(self, ctx: Ctx, cpu: int, idle: bool) -> None:
        """``cpu`` enters/leaves idle. Overriding it turns built-in idle tracking off
        unless ``flags`` has ``SCX_OPS_KEEP_BUILTIN_IDLE``."""

    def init_task(self, ctx: Ctx, p: int, fork: bool) -> Optional[str]:
        """``p`` joins the policy. Return None, or an error message to fail it."""
        return None

    def exit_task(self, ctx: Ctx, p: int, cancelled: bool) -> None:
        """``p`` leaves the policy for good."""

    def enable(self, ctx: Ctx, p: int) -> None:
        """``p`` starts being scheduled by the policy."""

    def disable(self, ctx: Ctx, p: int) -> None:
        """``p`` stops being scheduled by the policy."""

    def cpu_online(self, ctx: Ctx, cpu: int) -> None:
        """``cpu`` came online. Default: exit the policy (it cannot follow hotplug)."""
        ctx.exit(0, f"cpu {cpu} going online, exiting scheduler")

    def cpu_offline(self, ctx: Ctx, cpu: int) -> None:
        """``cpu`` goes offline. Default: exit the policy."""
        ctx.exit(0, f"cpu {cpu} going offline, exiting scheduler")

    def init(self, ctx: Ctx) -> Optional[str]:
        """The policy loads (create DSQs here). Return None, or an error message."""
        return None

    def exit(self, ctx: Ctx, info: ExitInfo) -> None:
        """The policy unloads; ``info`` has kind, exit_code, reason, msg."""

    def timer(self, ctx: Ctx, tag: int) -> None:
        """A timer armed with ``ctx.timer_start(at_ns, tag)`` fired."""


def policy_name(policy: Policy) -> str:
    """The name runs with ``policy`` show as their scheduler: ``py:NAME``."""
    return f"py:{policy._policy_name}"


def _load_module(path: str) -> Any:
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{path}: no such policy file")
    mod_name = "schedlab_policy_" + "".join(c if c.isalnum() else "_" for c in os.path.abspath(path))
    spec = importlib.util.spec_from_file_location(mod_name, path)
    if spec is None or spec.loader is None:
        raise _native.ConfigError(f"{path}: not a Python file")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = mod
    try:
        spec.loader.exec_module(mod)
    except SyntaxError as e:
        del sys.modules[mod_name]
        raise _native.ConfigError(f"policy file {path}: line {e.lineno}: SyntaxError: {e.msg}") from None
    except Exception as e:  # noqa: BLE001 - any import-time failure is the file's
        del sys.modules[mod_name]
        raise _native.ConfigError(
            f"policy file {path}: importing it raised {type(e).__name__}: {e}") from None
    return mod


def load_policy_class(spec: str) -> Type[Policy]:
    """The Policy subclass named by ``path/to/file.py:ClassName``, or the only one in ``file.py``."""
    path, _, cls_name = spec.rpartition(":") if ".py:" in spec else (spec, "", "")
    mod = _load_module(path)
    if cls_name:
        cls = getattr(mod, cls_name, None)
        if cls is None:
            raise _native.ConfigError(f"policy file {path} has no {cls_name}")
        if not (inspect.isclass(cls) and issubclass(cls, Policy) and cls is not Policy):
            raise _native.ConfigError(f"{path}:{cls_name} is not a schedlab.ext.Policy subclass")
        return cls
    found = [c for c in vars(mod).values()
             if inspect.isclass(c) and issubclass(c, Policy) and c is not Policy
             and c.__module__ == mod.__name__]
    if len(found) != 1:
        names = ", ".join(sorted(c.__name__ for c in found)) or "none"
        raise _native.ConfigError(
            f"policy file {path} defines {len(found)} Policy subclasses ({names}); "
            f"name one as {path}:ClassName")
    return found[0]


def new_policy(cls: Type[Policy], spec: str = "") -> Policy:
    """``cls()``, its failure a ConfigError naming ``spec``."""
    try:
        return cls()
    except Exception as e:  # noqa: BLE001 - the policy's own constructor failed
        raise _native.ConfigError(
            f"{spec or cls.__name__}: {cls.__name__}() raised {type(e).__name__}: {e}") from None


def load_policy(spec: str) -> Policy:
    """An instance of :func:`load_policy_class` (made without arguments)."""
    return new_policy(load_policy_class(spec), spec)


def is_policy_spec(name: str) -> bool:
    """Whether a ``--scheduler`` value names a policy file rather than a registered scheduler."""
    return name.endswith(".py") or ".py:" in name


__all__ = [
    "Ctx",
    "ExitInfo",
    "HOOKS",
    "Policy",
    "PolicyError",
    "TaskView",
    "is_policy_spec",
    "load_policy",
    "load_policy_class",
    "new_policy",
    "policy_name",
] + [n for n in dir() if n.startswith("SCX_")]
