"""The seed experiments as one HTML site: ``reports/index.html`` and ``reports/NAME/report.html``.

Each experiment page is its ``report.md`` rendered (the Markdown stays the primary report; the
page shows exactly what it says, figures included), followed by the exact command that rebuilds
it and the software and machine it ran on. The renderer below handles the Markdown subset the
reports use (headings, paragraphs, bullet lists, pipe tables, images, links, inline code, bold,
italics, fenced code) and escapes everything else; it is deterministic, so the same report gives
the same page. Every page checks its own images once loaded and reports a missing one on the
console (tests/test_html_report.py opens the pages in headless Chromium and fails on any console
message or missing image).
"""

from __future__ import annotations

import html
import json
import platform
import re
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Dict, List, Optional, Tuple

STYLE = """
body { font: 15px/1.45 system-ui, sans-serif; max-width: 1100px; margin: 2em auto; padding: 0 1em;
       color: #1b1b1b; }
table { border-collapse: collapse; margin: 1em 0; font-size: 13px; }
th, td { border: 1px solid #ccc; padding: 3px 7px; text-align: right; }
th:first-child, td:first-child { text-align: left; }
th { background: #f0f0f0; }
code { background: #f3f3f3; padding: 0 3px; }
pre { background: #f3f3f3; padding: 0.6em; overflow-x: auto; }
img { max-width: 100%; border: 1px solid #eee; }
nav a { margin-right: 1em; }
.meta { color: #555; font-size: 13px; }
"""

# Once the page has loaded, every image must have loaded: a missing one is named on the console.
IMAGE_CHECK = """<script>
window.addEventListener("load", () => {
  const bad = [...document.images].filter(i => !(i.complete && i.naturalWidth > 0))
    .map(i => i.getAttribute("src"));
  if (bad.length) { console.error("missing image(s): " + bad.join(", ")); }
  document.body.dataset.images = bad.length ? "missing" : "ok";
});
</script>"""


def _inline(text: str) -> str:
    """Inline Markdown: `code`, ![img](src), [link](href), **bold**, *italic*; the rest escaped."""
    out: List[str] = []
    pattern = re.compile(r"`([^`]+)`|!\[([^\]]*)\]\(([^)\s]+)\)|\[([^\]]+)\]\(([^)\s]+)\)"
                         r"|\*\*(.+?)\*\*|\*([^*\s][^*]*)\*")
    pos = 0
    for m in pattern.finditer(text):
        out.append(html.escape(text[pos:m.start()], quote=False))
        code, alt, src, label, href, bold, ital = m.groups()
        if code is not None:
            out.append(f"<code>{html.escape(code, quote=False)}</code>")
        elif src is not None:
            out.append(f'<img src="{html.escape(src)}" alt="{html.escape(alt)}">')
        elif href is not None:
            out.append(f'<a href="{html.escape(href)}">{_inline(label)}</a>')
        elif bold is not None:
            out.append(f"<strong>{_inline(bold)}</strong>")
        else:
            out.append(f"<em>{_inline(ital)}</em>")
        pos = m.end()
    out.append(html.escape(text[pos:], quote=False))
    return "".join(out)


def _cells(row: str) -> List[str]:
    row = row.strip()
    if row.startswith("|"):
        row = row[1:]
    if row.endswith("|") and not row.endswith("\\|"):
        row = row[:-1]
    return [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", row)]


def _table_html(lines: List[str], i: int) -> Tuple[str, int]:
    """A pipe table starting at line i (header, separator, rows); returns it and the next line."""
    head = _cells(lines[i])
    rows = []
    i += 2
    while i < len(lines) and lines[i].strip().startswith("|"):
        rows.append(_cells(lines[i]))
        i += 1
    out = ["<table><thead><tr>" + "".join(f"<th>{_inline(c)}</th>" for c in head) + "</tr></thead><tbody>"]
    out += ["<tr>" + "".join(f"<td>{_inline(c)}</td>" for c in r) + "</tr>" for r in rows]
    return "".join(out) + "</tbody></table>", i


def _list_html(lines: List[str], i: int) -> Tuple[str, int]:
    """A bullet list starting at line i (items may continue on indented lines)."""
    items = []
    while i < len(lines) and re.match(r"\s*[*-]\s+", lines[i]):
        item = re.sub(r"^\s*[*-]\s+", "", lines[i])
        i += 1
        while i < len(lines) and lines[i].startswith("  ") and not re.match(r"\s*[*-]\s+", lines[i]):
            item += " " + lines[i].strip()
            i += 1
        items.append(f"<li>{_inline(item)}</li>")
    return "<ul>" + "".join(items) + "</ul>", i


def _code_html(lines: List[str], i: int) -> Tuple[str, int]:
    """A fenced code block starting at line i."""
    block = []
    i += 1
    while i < len(lines) and not lines[i].strip().startswith("```"):
        block.append(lines[i])
        i += 1
    return f"<pre><code>{html.escape(chr(10).join(block), quote=False)}</code></pre>", i + 1


def markdown_to_html(md: str) -> str:
    """Render the Markdown subset of the reports (see the module docstring)."""
    lines = md.splitlines()
    out: List[str] = []
    para: List[str] = []
    i = 0

    def flush() -> None:
        if para:
            out.append(f"<p>{_inline(' '.join(para))}</p>")
            para.clear()

    while i < len(lines):
        s = lines[i].strip()
        heading = re.match(r"(#{1,6})\s+(.*)", s)
        block = None
        if s.startswith("```"):
            block = _code_html
        elif s.startswith("|") and i + 1 < len(lines) and re.match(r"^\|?\s*:?-{2,}", lines[i + 1].strip()):
            block = _table_html
        elif re.match(r"[*-]\s+", s):
            block = _list_html
        if block is not None or heading or not s:
            flush()
        if block is not None:
            text, i = block(lines, i)
            out.append(text)
            continue
        if heading:
            n = len(heading.group(1))
            out.append(f"<h{n}>{_inline(heading.group(2))}</h{n}>")
        elif s:
            para.append(s)
        i += 1
    flush()
    return "\n".join(out)


def _page(title: str, body: str, nav: str) -> str:
    return (f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
            f"<title>{html.escape(title)}</title><style>{STYLE}</style></head>\n"
            f"<body>\n<nav>{nav}</nav>\n{body}\n{IMAGE_CHECK}\n</body></html>\n")


def software() -> Dict[str, str]:
    """What produced the reports: versions only (no time stamps, so a page is reproducible)."""
    from . import _native
    from .cliargs import _version

    info = {"schedlab": _version(), "python": platform.python_version()}
    try:
        commit = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True,
                                cwd=Path(__file__).resolve().parent, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True,
                               text=True, cwd=Path(__file__).resolve().parent, check=True).stdout.strip()
        info["git commit"] = commit + (" (with uncommitted changes)" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        info["git commit"] = "not a git checkout"
    info["native core"] = getattr(_native, "__version__", "built with the package")
    # The installed versions, read from the packages' metadata: importing pandas only to ask cost
    # half a second of a `schedlab repro all` that no longer uses it (issue 18).
    for mod in ("numpy", "pandas", "matplotlib"):
        try:
            info[mod] = metadata.version(mod)
        except metadata.PackageNotFoundError:
            pass
    return info


def _machine(report: dict) -> List[Tuple[str, str]]:
    """The simulated machine (the report's platform) and, for host halves, the kernel it ran on."""
    rows: List[Tuple[str, str]] = []
    for key in ("platform", "machine"):
        if isinstance(report.get(key), dict):
            rows += [(f"{key}: {k}", json.dumps(v) if not isinstance(v, str) else v)
                     for k, v in sorted(report[key].items())]
    host = report.get("host")
    if isinstance(host, dict):
        facts = host.get("facts") or host.get("machine") or {}
        if isinstance(facts, dict):
            rows += [(f"host: {k}", str(v)) for k, v in sorted(facts.items())
                     if not isinstance(v, (dict, list))]
    rows.append(("ran the simulator on", f"{platform.system()} {platform.machine()}"))
    return rows


def _table(rows: List[Tuple[str, str]]) -> str:
    return ("<table>" + "".join(f"<tr><td>{html.escape(k)}</td><td>{html.escape(v)}</td></tr>" for k, v in rows)
            + "</table>")


def write_site(reports: Path, names: List[str], soft: Optional[Dict[str, str]] = None) -> Path:
    """Write ``reports/NAME/report.html`` for each experiment with a report, and the index."""
    soft = soft or software()
    present = [n for n in names if (reports / n / "report.md").is_file()]
    nav = '<a href="../index.html">all experiments</a>'
    for n in present:
        md = (reports / n / "report.md").read_text(encoding="utf-8")
        try:
            data = json.loads((reports / n / "report.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = {}
        body = (markdown_to_html(md)
                + "\n<h2>Rebuild this report</h2>\n"
                + f"<pre><code>schedlab repro {html.escape(n)} --out reports/{html.escape(n)}</code></pre>"
                + '\n<p class="meta">The Markdown original: <a href="report.md">report.md</a>; '
                + 'the numbers: <a href="report.json">report.json</a>.</p>'
                + "\n<h2>Software</h2>\n" + _table(sorted(soft.items()))
                + "\n<h2>Machine</h2>\n" + _table(_machine(data if isinstance(data, dict) else {})))
        (reports / n / "report.html").write_text(_page(f"schedlab: {n}", body, nav), encoding="utf-8")
    items = []
    for n in present:
        md = (reports / n / "report.md").read_text(encoding="utf-8")
        title = next((ln.lstrip("# ").strip() for ln in md.splitlines() if ln.startswith("# ")), n)
        items.append(f'<li><a href="{html.escape(n)}/report.html">{html.escape(n)}</a>: {_inline(title)}</li>')
    body = ("<h1>schedlab: the seed experiments</h1>\n"
            "<p>Each page puts the published figures beside ours; rebuild them all with "
            "<code>schedlab repro all</code>.</p>\n<ul>" + "".join(items) + "</ul>\n"
            "<h2>Software</h2>\n" + _table(sorted(soft.items())))
    index = reports / "index.html"
    index.write_text(_page("schedlab: seed experiments", body, ""), encoding="utf-8")
    return index
