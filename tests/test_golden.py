"""The engine's output is byte-identical to the recorded golden hashes (scripts/golden.py).

A change that alters the model on purpose re-records them with
``scripts/golden.py --record`` in the same commit and says why.
"""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_golden_hashes_unchanged():
    p = subprocess.run([sys.executable, str(ROOT / "scripts" / "golden.py")], capture_output=True, text=True)
    assert p.returncode == 0, p.stdout[-4000:] + p.stderr[-4000:]
    assert " 0 differ" in p.stdout
