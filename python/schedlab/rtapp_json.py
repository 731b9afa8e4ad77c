"""rt-app JSON read in Python as the core reads it (crates/schedlab-core/src/workload/json.rs):
comments, trailing commas, a bare ``"suspend"`` member and duplicate keys renamed as rt-app's
workgen does (``run``, ``run1``, ``run2``...). Used where Python edits a workload before the core
simulates it (schedlab sweep)."""

from __future__ import annotations

import json
import re
from typing import Any, List, Tuple


def _next(text: str, i: int) -> str:
    """The next non-blank character at or after i ('' at the end)."""
    m = re.compile(r"\S").search(text, i)
    return m.group(0) if m else ""


def _clean(text: str) -> str:
    """Strict JSON from rt-app JSON: comments blanked, trailing commas dropped, a bare
    ``"suspend..."`` member given the value ``""``; strings are left untouched."""
    out: List[str] = []
    i, n = 0, len(text)
    last = ""  # the last non-blank character emitted outside strings
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            token = text[i:j + 1]
            out.append(token)
            i = j + 1
            if last in ("{", ",") and token[1:].startswith("suspend") and _next(text, i) in (",", "}"):
                out.append(': ""')
            last = '"'
            continue
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append("".join("\n" if ch == "\n" else " " for ch in text[i:end]))
            i = end
            continue
        if text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            out.append(" " * (end - i))
            i = end
            continue
        if c == "," and _next(text, i + 1) in ("}", "]"):
            out.append(" ")  # a trailing comma
            i += 1
            continue
        out.append(c)
        if not c.isspace():
            last = c
        i += 1
    return "".join(out)


def _unique(pairs: List[Tuple[str, Any]]) -> dict:
    out: dict = {}
    curid = 1
    for k, v in pairs:
        if k in out:
            new = f"{k}{curid}"
            while new in out:
                curid += 1
                new = f"{k}{curid}"
            k = new
        out[k] = v
    return out


def loads(text: str) -> Any:
    return json.loads(_clean(text), object_pairs_hook=_unique)
