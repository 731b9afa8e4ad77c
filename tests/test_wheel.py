"""An installable package (issue 17): the wheel that scripts/build_wheel.sh makes, installed
into a fresh virtualenv, gives a working `schedlab` with the host runner's native worker."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_wheel_in_a_fresh_virtualenv(tmp_path):
    dist = tmp_path / "dist"
    subprocess.run(["bash", str(ROOT / "scripts" / "build_wheel.sh"), str(dist)], check=True,
                   capture_output=True, text=True)
    wheels = list(dist.glob("schedlab-*.whl"))
    assert len(wheels) == 1
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    py = venv / "bin" / "python"
    subprocess.run([str(py), "-m", "pip", "install", "-q", str(wheels[0])], check=True,
                   capture_output=True, text=True)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SCHEDLAB_WORKER", "VIRTUAL_ENV")}

    def run(*args):
        # From outside the source tree, so nothing of it can be picked up.
        return subprocess.run(list(args), capture_output=True, text=True, cwd=tmp_path, env=env, check=True)

    assert run(str(venv / "bin" / "schedlab"), "--version").stdout.startswith("schedlab ")
    assert ": ok:" in run(str(venv / "bin" / "schedlab"), "check", str(ROOT / "examples" / "mixed.json")).stdout
    code = "import schedlab, schedlab.host as h; print(schedlab.__file__); print(h.worker_path())"
    out = run(str(py), "-c", code)
    pkg, worker = out.stdout.split()
    assert pkg.startswith(str(venv)) and worker.startswith(str(venv)), out.stdout
    usage = subprocess.run([worker], capture_output=True, text=True)
    assert "usage: schedlab-worker" in usage.stderr
