"""`schedlab run`'s arguments as data, and a parser for their plain spellings that needs neither
argparse nor `re`.

Why: `schedlab run` is the command that sweeps and scripts start thousands of times, and
importing argparse (with `re`, `enum`, `gettext`) and building its parser, whose help strings go
through gettext's look-ups, cost about a third of a short run's whole process (issue 18: the
whole-process speed-up against SimSo). :data:`RUN_ARGUMENTS` is the one definition of the
command's arguments: cliargs.py gives each to argparse's ``add_argument`` as it stands, and
:func:`parse_run` reads the same table. :func:`parse_run` takes only what it can answer exactly
as argparse would (exact option names, ``--name VALUE`` or ``--name=VALUE``, one positional, no
value that starts with ``-``) and returns None for anything else, help and every error included,
for argparse to parse or report; tests/test_runargs.py checks its answers against argparse's.
"""

from __future__ import annotations

from . import _native

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Sequence, Tuple

PERFETTO_EXT = (".pftrace", ".perfetto-trace", ".pb")


def _type_error(message: str) -> Exception:
    """argparse's ArgumentTypeError, which argparse reports as the message itself; imported only
    on this error path (a parse with a bad value goes to argparse anyway)."""
    import argparse

    return argparse.ArgumentTypeError(message)


def _int_at_least(lo: int, what: str):
    """An argparse type: an integer >= lo, else "expected a WHAT integer"."""
    def parse(v: str) -> int:
        try:
            n = int(v)
        except ValueError:
            n = lo - 1
        if n < lo:
            raise _type_error(f"expected a {what} integer, got {v!r}")
        return n
    return parse


positive = _int_at_least(1, "positive")
nonneg = _int_at_least(0, "non-negative")


def int_list(v: str) -> List[int]:
    try:
        return [int(x) for x in v.split(",") if x.strip()]
    except ValueError:
        raise _type_error(f"expected comma-separated integers, got {v!r}") from None


def start_cpus(v: str) -> List[Tuple[str, int]]:
    out = []
    for item in (x.strip() for x in v.split(",") if x.strip()):
        name, eq, cpu = item.rpartition("=")
        try:
            if not eq or not name:
                raise ValueError
            out.append((name, int(cpu)))
            if out[-1][1] < 0:
                raise ValueError
        except ValueError:
            raise _type_error(
                f"expected THREAD=CPU (a thread's name as in the metrics: hog-3=5), got {item!r}") from None
    return out


def freq_list(v: str) -> List[Tuple[int, int]]:
    out = []
    for item in (x.strip() for x in v.split(",") if x.strip()):
        cur, _, mx = item.partition("/")
        try:
            pair = (int(cur), int(mx or cur))
            if pair[0] <= 0 or pair[1] <= 0:
                raise ValueError
            out.append(pair)
        except ValueError:
            raise _type_error(f"expected MHz or CUR/MAX MHz per CPU, comma-separated, got {item!r}") from None
    return out


# `schedlab run`'s arguments: (names, add_argument's keywords), in the order of its help.
RUN_ARGUMENTS: List[Tuple[Tuple[str, ...], Dict[str, Any]]] = [
    (("workload",), dict(help="rt-app JSON file")),
    (("--scheduler",), dict(
        default="eevdf",
        help="scheduler, or a comma-separated list to compare (default eevdf); a Python policy "
             "is FILE.py:ClassName, or FILE.py if it defines one schedlab.ext.Policy subclass")),
    (("--cpus",), dict(type=positive, default=1, help="simulated CPUs (default 1)")),
    (("--smt",), dict(type=positive, default=1, help="hardware threads per core")),
    (("--llc",), dict(type=nonneg, default=0, help="CPUs per last-level cache (0 = all)")),
    (("--capacity",), dict(type=int_list, metavar="C[,C...]",
                           help="CPU capacity 1..1024, one for all CPUs or one per CPU (default 1024)")),
    (("--freq",), dict(
        type=freq_list, metavar="MHZ[/MAX][,...]",
        help="CPU frequency (current/maximum MHz), one for all or one per CPU (default 2000)")),
    (("--governor",), dict(
        default="userspace", metavar="NAME",
        help="cpufreq governor: userspace (the --freq values), performance, powersave, ondemand, "
             "or schedule:T=MHZ,... (all CPUs to MHZ at T seconds)")),
    (("--freq-levels",), dict(type=int_list, metavar="MHZ,...",
                              help="available frequencies (default 40..100 %% of the maximum in 10 %% steps)")),
    (("--hotplug",), dict(metavar="T=-CPU,T=+CPU",
                          help="take CPUs offline (-) and online (+) at T seconds, e.g. 5=-3,8=+3")),
    (("--dl-policy",), dict(
        default="edf", choices=_native.dl_order_names(),
        help="ordering of SCHED_DEADLINE tasks: the kernel's EDF, or LLF / ILLF (seed 001); "
             "see 'schedlab schedulers'")),
    (("--hz",), dict(type=positive, help="tick frequency (default: the --machine profile's, else 250)")),
    (("--machine",), dict(metavar="PROFILE",
                          help="a machine profile from 'schedlab calibrate': its HZ and wakeup-path tunables "
                               "(--hz and --set still win)")),
    (("--zero-costs",), dict(action="store_true",
                             help="no wakeup-path costs (timer slack and jitter, wakeup, idle exit, IPI, their "
                                  "spread, the switch): closed-form runs")),
    (("--duration",), dict(help="override global.duration: seconds or 500ms, 2s, ...")),
    (("--seed",), dict(type=nonneg, default=0, help="seed of the run's random draws (default 0)")),
    (("--set",), dict(action="append", default=[], metavar="K=V", help="set a tunable")),
    (("--trace",), dict(metavar="FILE",
                        help="write a trace: .pftrace (Perfetto) or any other name (ftrace text)")),
    (("--trace-format",), dict(
        choices=["perfetto", "ftrace"],
        help="format of --trace (default: perfetto for .pftrace names, else ftrace text)")),
    (("--json",), dict(metavar="FILE", help="write all metrics as JSON")),
    (("--fairness",), dict(help="comma-separated tasks for Jain's index (default all)")),
    (("--start-cpus",), dict(
        type=start_cpus, action="append", default=[], metavar="THREAD=CPU[,...]",
        help="start these threads on these CPUs instead of where the fork path puts them")),
    (("--start-from",), dict(metavar="HOST.json",
                             help="start each thread where it first ran in a host run (the metrics JSON of "
                                  "'schedlab host run --json'); --start-cpus entries win")),
    (("--quiet",), dict(action="store_true", help="no table, no progress bar")),
]

# The keywords parse_run understands; an entry with any other (or another action) makes it leave
# every command line to argparse, which tests/test_runargs.py then notices.
_UNDERSTOOD = {"help", "metavar", "default", "type", "choices", "action"}


class RunArgs:
    """The parsed arguments, as attributes (what argparse's Namespace offers the commands)."""

    def __init__(self, **kw: Any) -> None:
        self.__dict__.update(kw)

    def __repr__(self) -> str:
        return f"RunArgs({self.__dict__!r})"


def _dest(names: Tuple[str, ...]) -> str:
    """An option's dest, as argparse derives it from its first name."""
    return names[0].lstrip("-").replace("-", "_")


def _options() -> Optional[Tuple[Optional[str], Dict[str, Tuple[str, Dict[str, Any]]]]]:
    """The positional's dest, and each option name's (dest, keywords); None if an argument is of a
    kind parse_run does not take."""
    positional, options = None, {}
    for names, kw in RUN_ARGUMENTS:
        if set(kw) - _UNDERSTOOD or kw.get("action", "store") not in ("store", "store_true", "append"):
            return None
        if not names[0].startswith("-"):
            positional = names[0]
            continue
        dest = _dest(names)
        for n in names:
            options[n] = (dest, kw)
    return positional, options


def _convert(kw: Dict[str, Any], value: str) -> Tuple[bool, Any]:
    """argparse's conversion of one value (its type, then its choices); (False, None) where
    argparse would report an error."""
    conv = kw.get("type")
    try:
        v = conv(value) if conv else value
    except Exception:  # argparse reports ArgumentTypeError, ValueError, TypeError
        return False, None
    if "choices" in kw and v not in kw["choices"]:
        return False, None
    return True, v


def _read(args: List[str], options: Dict[str, Tuple[str, Dict[str, Any]]]
          ) -> Optional[Tuple[Dict[str, Any], List[str]]]:
    """The options given (dest: value, appended ones as lists) and the positionals, or None."""
    seen: Dict[str, Any] = {}
    pos: List[str] = []
    i = 0
    while i < len(args):
        tok = args[i]
        i += 1
        if not tok.startswith("-"):
            pos.append(tok)
            continue
        name, eq, value = tok.partition("=")
        if name not in options:
            return None  # help, `--`, an abbreviation, a negative number, an unknown option
        dest, kw = options[name]
        action = kw.get("action", "store")
        if action == "store_true":
            if eq:
                return None  # argparse: "ignored explicit argument"
            seen[dest] = True
            continue
        if not eq:
            if i >= len(args):
                return None  # its value missing
            value = args[i]
            i += 1
        if value.startswith("-"):
            return None  # argparse may read it as an option, or refuse it
        ok, v = _convert(kw, value)
        if not ok:
            return None
        if action == "append":
            seen.setdefault(dest, []).append(v)
        else:
            seen[dest] = v
    return seen, pos


def _default(kw: Dict[str, Any]) -> Tuple[bool, Any]:
    """An option's value when it is not given, as argparse sets it: a string default converted
    by the option's type, a list default copied."""
    default = kw.get("default", False if kw.get("action") == "store_true" else None)
    if isinstance(default, str):
        return _convert({"type": kw.get("type")}, default)
    return True, list(default) if isinstance(default, list) else default


def parse_run(argv: Sequence[str]) -> Optional[RunArgs]:
    """``argv`` (``run`` first) parsed as argparse would, or None where this parser cannot be sure
    it answers the same (help, an abbreviated or unknown option, a value starting with ``-``, a
    missing or second positional, a bad value): argparse then parses it, or reports the error."""
    if not argv or argv[0] != "run":
        return None
    table = _options()
    if table is None:
        return None
    positional, options = table
    read = _read(list(argv[1:]), options)
    if read is None or positional is None or len(read[1]) != 1:
        return None
    seen, pos = read
    # `version`: the top-level --version's dest (cliargs.parser), unset as argparse leaves it.
    out: Dict[str, Any] = {"version": None, "cmd": "run", positional: pos[0]}
    for names, kw in RUN_ARGUMENTS:
        if not names[0].startswith("-"):
            continue
        dest = _dest(names)
        if dest in seen:
            append = kw.get("action") == "append"  # argparse appends to a copy of the default
            out[dest] = list(kw.get("default") or []) + seen[dest] if append else seen[dest]
            continue
        ok, out[dest] = _default(kw)
        if not ok:
            return None
    return RunArgs(**out)
