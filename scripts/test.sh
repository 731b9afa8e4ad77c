#!/usr/bin/env bash
# Set up and run every check: formatting, lints, Rust tests, Python lint and tests.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
rustup component add rustfmt clippy >/dev/null 2>&1 || true
echo "== cargo fmt --check"; cargo fmt --all --check
echo "== cargo clippy"; cargo clippy --workspace --all-targets -q -- -D warnings
echo "== cargo test"; cargo test --workspace -q 2>&1 | tail -n 40
test "${PIPESTATUS[0]}" -eq 0
echo "== fuzz (one minute of each harness from a fixed seed; scripts/fuzz.sh)"
FUZZ_SEED=1 bash scripts/fuzz.sh 60
echo "== ruff"; .venv/bin/ruff check python tests
echo "== pytest"
set +e
.venv/bin/python -m pytest -q tests
rc=$?
set -e
if [ "$rc" -eq 5 ]; then echo "pytest collected no tests: failing" >&2; exit 1; fi
exit "$rc"
