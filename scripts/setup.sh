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
  "perfetto>=0.59" "protobuf>=4" "ruff>=0.6" "matplotlib>=3.7" "pyarrow>=14" "dask[distributed]>=2024"
# The native module's build is profile-guided where this tree's profile applies
# (scripts/pgo_env.sh says which and why; scripts/pgo.sh makes the profile).
# shellcheck source=scripts/pgo_env.sh
source scripts/pgo_env.sh
# maturin develop installs the package (editable Python sources + native module).
VIRTUAL_ENV="$PWD/.venv" .venv/bin/maturin develop --release -q
# Byte-compile the (editable) sources, as pip does for a regular install: where
# PYTHONDONTWRITEBYTECODE is set, every command would otherwise compile them again
# at start-up (about 13 ms of each `schedlab run`).
.venv/bin/python -m compileall -q python/schedlab
# Debian's Chromium, for the test that opens the HTML reports headless (tests/test_html_report.py);
# installed only as root and only when missing (the test skips, saying why, without it).
if ! command -v chromium >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null 2>&1 \
    || echo "setup: could not install chromium (the HTML report test will skip)" >&2
fi
# trace-cmd, to read trace.dat files (schedlab trace import); same rules.
if ! command -v trace-cmd >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq trace-cmd >/dev/null 2>&1 \
    || echo "setup: could not install trace-cmd (the trace.dat test will skip)" >&2
fi
# The native worker of the real-kernel runner (schedlab host run); the same RUSTFLAGS,
# so that the dependencies it shares with the module are not built twice.
cargo build --release -q -p schedlab-worker
echo "setup: ok ($(.venv/bin/python -c 'import schedlab, sys; print(schedlab.__file__)'))"
