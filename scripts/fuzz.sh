#!/usr/bin/env bash
# Coverage-guided fuzzing (issue 12): builds fuzz/ with cargo-fuzz (libFuzzer)
# and runs each harness for SECONDS (default 60). Exits non-zero when a
# harness crashes, panics, aborts, runs out of memory or hangs; the input is
# left in fuzz/artifacts/<harness>/. Exits 0 with "fuzzing skipped: <why>"
# when this toolchain cannot build the harnesses.
#
# Stable Rust is enough: RUSTC_BOOTSTRAP=1 lets cargo-fuzz pass its -Z
# flags, and libfuzzer-sys compiles libFuzzer from its bundled C++ sources
# (needs a C++ compiler). Without a sanitizer (-s none): the harnesses are
# safe Rust; overflow checks are on (fuzz/Cargo.toml).
#   FUZZ_TARGETS="workload trace_import"  harnesses to run
#   FUZZ_JOBS=1                            parallel processes per harness
#   FUZZ_RUNS=N FUZZ_SEED=S                a fixed number of executions from a
#                                          fixed seed (CI: reproducible), SECONDS
#                                          then only caps the time
set -uo pipefail
secs=${1:-60}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root/fuzz" || exit 1
targets=${FUZZ_TARGETS:-workload trace_import}
target_dir=${CARGO_TARGET_DIR:-$root/target}/fuzz

skip() {
    echo "fuzzing skipped: $*"
    exit 0
}
command -v cargo >/dev/null || skip "cargo not found"
if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "cargo-fuzz not found; installing it (cargo install cargo-fuzz --locked)"
    cargo install cargo-fuzz --locked >/dev/null 2>&1 || skip "cargo-fuzz could not be installed"
fi
command -v c++ >/dev/null || command -v clang++ >/dev/null || skip "no C++ compiler to build libFuzzer"
export RUSTC_BOOTSTRAP=1
if ! build_log=$(cargo fuzz build -s none -O --target-dir "$target_dir" 2>&1); then
    echo "$build_log" | tail -20
    skip "the harnesses do not build with this toolchain ($(rustc --version))"
fi
bin=$target_dir/$(rustc -vV | sed -n 's/^host: //p')/release
status=0
for t in $targets; do
    mkdir -p "corpus/$t" "artifacts/$t"
    dict=()
    [ -f "dict/$t.dict" ] && dict=(-dict="dict/$t.dict")
    log=$(mktemp)
    echo "== $t: ${secs}s"
    # rss/malloc limits turn a runaway allocation into a reported crash;
    # -timeout a slow input into a reported hang.
    "$bin/$t" "corpus/$t" "seeds/$t" "${dict[@]}" -max_len=8192 \
        -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024 \
        ${FUZZ_JOBS:+-jobs=$FUZZ_JOBS -workers=$FUZZ_JOBS} \
        ${FUZZ_RUNS:+-runs=$FUZZ_RUNS} ${FUZZ_SEED:+-seed=$FUZZ_SEED} \
        -artifact_prefix="artifacts/$t/" -print_final_stats=1 >"$log" 2>&1
    rc=$?
    runs=$(grep -h 'stat::number_of_executed_units' "$log" fuzz-*.log 2>/dev/null | awk '{s+=$2} END {print s+0}')
    rate=$(grep -h 'stat::average_exec_per_sec' "$log" fuzz-*.log 2>/dev/null | awk '{s+=$2} END {print s+0}')
    if [ $rc -ne 0 ]; then
        grep -h -E 'panicked|ERROR: libFuzzer|SUMMARY|Test unit written' "$log" fuzz-*.log 2>/dev/null | head -20
        echo "$t: FAILED after $runs executions (exit $rc); inputs in fuzz/artifacts/$t/"
        status=1
    else
        echo "$t: $runs executions, $rate exec/s, no crash"
    fi
    rm -f "$log" fuzz-*.log
done
exit $status
