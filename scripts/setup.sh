#!/usr/bin/env bash
# Set up schedlab on a fresh machine: a virtualenv in .venv with the Python
# dependencies and the Rust core built in release mode.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v cargo >/dev/null || { echo "setup: cargo (Rust) is required" >&2; exit 1; }
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q "maturin>=1.7,<2" "pandas>=2" "pytest>=8" "hypothesis>=6" \
  "perfetto>=0.59" "protobuf>=4" "ruff>=0.6" "matplotlib>=3.7"
# maturin develop installs the package (editable Python sources + native module).
VIRTUAL_ENV="$PWD/.venv" .venv/bin/maturin develop --release -q
# The native worker of the real-kernel runner (schedlab host run).
cargo build --release -q -p schedlab-worker
echo "setup: ok ($(.venv/bin/python -c 'import schedlab, sys; print(schedlab.__file__)'))"
