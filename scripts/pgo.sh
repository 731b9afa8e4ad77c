#!/usr/bin/env bash
# Make pgo/schedlab.profdata, the profile of the native module's profile-guided build
# (scripts/pgo_env.sh uses it), then rebuild the module with it. Run after changing the
# simulator's hot code or the compiler: a function changed since the profile was made
# is built as in a plain build (see pgo_env.sh), so a stale profile costs speed only.
#
# Steps: an instrumented build of the native module into .venv; the training runs
# (scripts/pgo_train.py: every scheduler, the seed experiments, the speed suite's
# workloads); llvm-profdata merges their counts. llvm-profdata must read the raw
# profiles of rustc's own LLVM: this script looks for the same major version
# (llvm-profdata-N, /usr/lib/llvm-N, rustup's llvm-tools) and, as root with apt,
# installs Debian's llvm-N.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || { echo "pgo: run scripts/setup.sh first" >&2; exit 1; }
major=$(rustc -vV | sed -n 's/^LLVM version: \([0-9]*\).*/\1/p')
find_profdata() {
  local c
  for c in "llvm-profdata-$major" "/usr/lib/llvm-$major/bin/llvm-profdata" \
           "$(rustc --print sysroot)/lib/rustlib/$(rustc -vV | sed -n 's/^host: //p')/bin/llvm-profdata" \
           llvm-profdata; do
    if command -v "$c" >/dev/null 2>&1 \
        && "$c" merge --version 2>/dev/null | grep -q "LLVM version $major\."; then
      echo "$c"
      return 0
    fi
  done
  return 1
}
if ! profdata=$(find_profdata); then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "pgo: installing llvm-$major (llvm-profdata of rustc's LLVM $major)" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "llvm-$major" >/dev/null
  fi
  profdata=$(find_profdata) || {
    echo "pgo: no llvm-profdata of LLVM $major (rustc's); install llvm-$major or rustup's llvm-tools" >&2
    exit 1
  }
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Until the last step the module in .venv is the instrumented one: on a failure, say so.
failed() {
  [ -f "$work/train.log" ] && cat "$work/train.log" >&2
  echo "pgo: failed; the module in .venv may be the instrumented build: run scripts/setup.sh" >&2
  exit 1
}
echo "pgo: instrumented build" >&2
RUSTFLAGS="-Cprofile-generate=$work/raw" SCHEDLAB_PGO="" VIRTUAL_ENV="$PWD/.venv" \
  .venv/bin/maturin develop --release -q
echo "pgo: training (scripts/pgo_train.py)" >&2
.venv/bin/python scripts/pgo_train.py "$work/out" >/dev/null 2>"$work/train.log" || failed
# The example binary that `schedlab.bench --instructions` counts links its own copy of the
# core (other symbols): trained too, in the same profile (pgo_train.py says why).
echo "pgo: instrumented example binary, and its training" >&2
RUSTFLAGS="-Cprofile-generate=$work/raw" CARGO_TARGET_DIR="$work/target" \
  cargo build --release -q --example run || failed
.venv/bin/python scripts/pgo_train.py --example "$work/target/release/examples/run" "$work/out-example" \
  2>"$work/train.log" || failed
mkdir -p pgo
"$profdata" merge -o pgo/schedlab.profdata "$work/raw" || failed
{
  echo "# The profile of the native module's profile-guided build: made by scripts/pgo.sh,"
  echo "# used by scripts/pgo_env.sh only when this rustc builds (the names and hashes it"
  echo "# holds are that compiler's)."
  echo "rustc: $(rustc -V)"
  echo "LLVM: $(rustc -vV | sed -n 's/^LLVM version: //p')"
  echo "trained at: $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- crates || echo ' with uncommitted changes to crates/')"
  echo "training: scripts/pgo_train.py"
} > pgo/PROFILE
echo "pgo: wrote pgo/schedlab.profdata ($(du -k pgo/schedlab.profdata | cut -f1) KiB); rebuilding with it" >&2
# shellcheck source=scripts/pgo_env.sh
source scripts/pgo_env.sh
VIRTUAL_ENV="$PWD/.venv" .venv/bin/maturin develop --release -q
echo "pgo: ok (${SCHEDLAB_PGO:-plain build})" >&2
