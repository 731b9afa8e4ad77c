#!/usr/bin/env bash
# The 16-CPU host references of issue 13, in one unattended run (made for a lent 16-core Linux 6.18
# machine that runs only prebuilt files: the native module and the worker are built beforehand and
# carried; nothing here compiles). Writes into OUTDIR (default: $OUT, else ./out/ref16), at most 8
# files (what such a machine hands back):
#   log.txt          every step's output (tables, warnings, timings)
#   refs.json        `schedlab fidelity` of issue 13's two 16-CPU workloads (examples/fidelity/), 3 host runs
#   suite.json       `schedlab fidelity` of the fixed suite sized for this machine, 2 host runs
#   hosts.tar.xz     (.gz without xz) refs/ and suite/: every host run above saved by --save-host (with facts.json),
#                    to be judged again anywhere by `schedlab fidelity --host-from DIR`
#                    (kept in experiments/host-runs/, see its README)
#   profile.json     `schedlab calibrate` of this machine
#   host-traced.json, trace.txt.xz   one traced host run (of the 32 sleepers unless TRACED is set)
# Steps are independent (each under `timeout`), ordered by worth, so one that fails or a run cut
# short leaves the earlier ones' results.
# Usage: bash scripts/ref16.sh [OUTDIR]   (root; PYTHON defaults to python3; NO_BENCH=1 skips benchmarks;
#   REFS="W.json ..." replaces the two workloads of the refs step; TRACED=W.json the traced run's workload;
#   REFS_ONLY=1 skips the suite and calibrate steps)
set -u
cd "$(dirname "$0")/.."
OUTDIR=${1:-${OUT:-out/ref16}}
mkdir -p "$OUTDIR"
PY=${PYTHON:-python3}
export PYTHONPATH=$PWD/python PYTHONUNBUFFERED=1
LOG=$OUTDIR/log.txt
T0=$(date +%s)
SAVED=$(mktemp -d)

step() {  # step NAME SECONDS CMD...: run CMD under a time limit, log its output and its time
    local name=$1 limit=$2 t rc
    shift 2
    t=$(date +%s)
    echo "=== $name (limit ${limit}s, at +$((t - T0))s)" >>"$LOG"
    timeout --kill-after=10 "$limit" "$@" >>"$LOG" 2>&1
    rc=$?
    echo "=== $name: rc=$rc in $(($(date +%s) - t))s" >>"$LOG"
}
pack() {  # the saved host runs so far, as one file
    tar -C "$SAVED" -cJf "$OUTDIR/hosts.tar.xz" . 2>>"$LOG" ||
        { rm -f "$OUTDIR/hosts.tar.xz"; tar -C "$SAVED" -czf "$OUTDIR/hosts.tar.gz" . 2>>"$LOG"; }
}

SL=("$PY" -m schedlab)

step facts 30 bash -c "uname -a; nproc; lscpu || true; cat /proc/cmdline; cat /proc/loadavg;
  mount | grep -E 'cgroup|tracefs|debugfs' || true; $PY -V"
if uname -r | grep -q '^4\.4\.0'; then
    echo "gVisor (kernel $(uname -r)): no real scheduler to measure; host steps skipped" >>"$LOG"
else
    WL=()
    for w in ${REFS:-examples/fidelity/hogs-nice20.json examples/fidelity/sleepers32.json}; do
        WL+=(--workload "$w")
    done
    step refs 240 "${SL[@]}" fidelity "${WL[@]}" --host-runs 3 --json "$OUTDIR/refs.json" \
        --save-host "$SAVED/refs"
    pack
    if [ -z "${REFS_ONLY:-}" ]; then
        step suite 150 "${SL[@]}" fidelity --seconds 3 --host-runs 2 --json "$OUTDIR/suite.json" \
            --save-host "$SAVED/suite"
        pack
        step calibrate 150 "${SL[@]}" calibrate --seconds 2 --out "$OUTDIR/profile.json"
    fi
    step traced 40 "${SL[@]}" host run "${TRACED:-examples/fidelity/sleepers32.json}" \
        --trace "$OUTDIR/trace.txt" --json "$OUTDIR/host-traced.json"
    step compress 30 bash -c "xz -T0 -3 $OUTDIR/trace.txt || gzip -3 $OUTDIR/trace.txt"
fi
if [ -z "${NO_BENCH:-}" ]; then  # NO_BENCH=1 skips the speed benchmarks
    step bench-suite 60 "$PY" -m schedlab.bench --suite --repeat 3
fi
rm -rf "$SAVED"
echo "=== done at +$(($(date +%s) - T0))s" >>"$LOG"
