"""`schedlab repro all` writes reports/index.html and a page per experiment (issue 16): the
pages render in headless Chromium without a console message or a missing image, and the
figures and pages are the same bytes when an experiment is run again."""

import os
import shutil
import subprocess
import sys

import pytest
from schedlab.htmlreport import markdown_to_html

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--virtual-time-budget=3000"]


def test_markdown_subset():
    out = markdown_to_html("# T <x>\n\ntext `a|b` and **b** and *i*\n\n| m | v |\n|---|---|\n| 1 | 2.5 |\n\n"
                           "* one\n  more\n* two\n\n![fig](f.svg)\n")
    assert "<h1>T &lt;x&gt;</h1>" in out
    assert "<code>a|b</code>" in out and "<strong>b</strong>" in out and "<em>i</em>" in out
    assert "<th>m</th><th>v</th>" in out and "<td>1</td><td>2.5</td>" in out
    assert "<li>one more</li><li>two</li>" in out
    assert '<img src="f.svg" alt="fig">' in out


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = tmp_path_factory.mktemp("reports")
    subprocess.run([sys.executable, "-m", "schedlab", "repro", "all", "--out", str(root), "--quiet"],
                   check=True, capture_output=True, text=True)
    return root


def test_every_experiment_has_a_page_with_its_command(site):
    pages = sorted(p.parent.name for p in site.glob("*/report.html"))
    assert pages == ["cfs-lab", "dwcfs", "illf", "shootout", "tsf"]
    index = (site / "index.html").read_text()
    for name in pages:
        assert f'href="{name}/report.html"' in index
        assert f"schedlab repro {name} --out reports/{name}" in (site / name / "report.html").read_text()


def test_figures_and_pages_are_the_same_bytes_on_a_rerun(site, tmp_path):
    again = tmp_path / "reports"
    subprocess.run([sys.executable, "-m", "schedlab", "repro", "all", "--out", str(again), "--quiet"],
                   check=True, capture_output=True, text=True)
    files = sorted(p.relative_to(site) for p in site.rglob("*") if p.suffix in (".svg", ".png", ".html"))
    assert any(f.suffix == ".svg" for f in files) and any(f.suffix == ".png" for f in files)
    for f in files:
        assert (site / f).read_bytes() == (again / f).read_bytes(), f


@pytest.mark.skipif(CHROMIUM is None,
                    reason="Debian's chromium is not installed (scripts/setup.sh installs it as root)")
def test_pages_render_in_chromium_without_errors_or_missing_images(site, tmp_path):
    pages = [site / "index.html"] + sorted(site.glob("*/report.html"))
    for page in pages:
        profile = tmp_path / f"profile-{page.parent.name}"
        shot = tmp_path / f"{page.parent.name}.png"
        common = [CHROMIUM, *FLAGS, f"--user-data-dir={profile}"]
        dom = subprocess.run(common + ["--enable-logging=stderr", "--v=0", "--dump-dom", page.as_uri()],
                             capture_output=True, text=True, timeout=120)
        console = [ln for ln in dom.stderr.splitlines() if ":CONSOLE" in ln]
        assert console == [], (page, console)
        assert 'data-images="ok"' in dom.stdout, (page, "images did not all load")
        subprocess.run(common + ["--window-size=1100,1400", f"--screenshot={shot}", page.as_uri()],
                       capture_output=True, text=True, timeout=120, check=True)
        assert shot.stat().st_size > 10_000, page  # a rendered page, not a blank one
    kept = os.environ.get("SCHEDLAB_SCREENSHOTS")
    if kept:  # keep the screenshots for a look
        shutil.copytree(tmp_path, kept, dirs_exist_ok=True, ignore=shutil.ignore_patterns("profile-*"))
