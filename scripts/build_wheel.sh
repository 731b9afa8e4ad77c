#!/usr/bin/env bash
# Build an installable wheel of schedlab into dist/ (or $1): the Python package, the native
# module and the host runner's native worker (schedlab/bin/schedlab-worker), so that
# `pip install dist/schedlab-*.whl` in a fresh virtualenv gives a working `schedlab`,
# `schedlab host run` included. Needs cargo and the maturin of .venv (scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-dist}
# shellcheck source=scripts/pgo_env.sh
source scripts/pgo_env.sh
cargo build --release -q -p schedlab-worker
mkdir -p python/schedlab/bin
cp target/release/schedlab-worker python/schedlab/bin/schedlab-worker
trap 'rm -f python/schedlab/bin/schedlab-worker; rmdir python/schedlab/bin 2>/dev/null || true' EXIT
.venv/bin/maturin build --release -q -o "$out"
ls "$out"/schedlab-*.whl
