#!/bin/bash
# Build (once) the guest's sched_ext schedulers: the kernel's own scx_simple (with our loader) and
# ours (scx/scx_*/, one directory per scheduler as in the scx repository, plus the test fixtures in scx/fixtures/),
# with the kernel tree's tools/sched_ext Makefile (its own libbpf and bpftool, vmlinux.h from the
# guest kernel's BTF) and clang-19. Needs scripts/vm/build-kernel.sh's tree (built if missing).
#
# Cache: ${SCHEDLAB_VM_CACHE:-~/.cache/schedlab/vm}/scx-<key>/ with one static-free binary per
# scheduler (they link libelf, zlib, zstd dynamically: the guest image copies them with ldd),
# key = hash of the kernel tree's name and every file under scx/. Prints the directory on stdout.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
CACHE=${SCHEDLAB_VM_CACHE:-$HOME/.cache/schedlab/vm}
# qemu and busybox are for the guest (python/schedlab/vm.py), installed here with the rest.
need=(clang-19 llvm-19 libelf-dev zlib1g-dev libzstd-dev make gcc pkg-config qemu-system-x86 busybox-static)
missing=()
for p in "${need[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
# SCHEDLAB_VM_CHECK_ONLY=1 (`schedlab vm run`): find the cached build or exit 3, changing nothing.
check_only() { [ "${SCHEDLAB_VM_CHECK_ONLY:-}" = 1 ] && { echo "not built: $1" >&2; exit 3; }; return 0; }
if [ ${#missing[@]} -gt 0 ]; then
  check_only "missing packages: ${missing[*]}"
  echo "build-scx: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null && apt-get install -y -qq "${missing[@]}" >/dev/null
fi
KDIR=$(bash "$HERE/build-kernel.sh")
key=$( (echo "$KDIR"; cat "$HERE/build-scx.sh"; find "$ROOT/scx" -type f | sort | xargs cat) | sha256sum | cut -c1-12)
out="$CACHE/scx-$key"
if [ -f "$out/.done" ]; then echo "$out"; exit 0; fi
check_only "no schedulers in $out"
scheds=()
T="$KDIR/tools/sched_ext"
cp "$ROOT/scx/include/"*.h "$T/include/"
# A directory without a .bpf.c (scx_simple) keeps the tree's own BPF half and brings its loader.
for d in "$ROOT"/scx/scx_* "$ROOT"/scx/fixtures/scx_*; do
  n=$(basename "$d")
  [ -f "$d/$n.bpf.c" ] && cp "$d/$n.bpf.c" "$T/"
  cp "$d/$n.c" "$T/"
  scheds+=("$n")
done
echo "build-scx: building ${scheds[*]} against $(cat "$KDIR/KERNELVERSION")" >&2
# c-sched-targets on the command line replaces the Makefile's list (scx_qmap etc. are not needed).
make -C "$T" -s -j"$(nproc)" CLANG=clang-19 LLVM_STRIP=llvm-strip-19 \
  c-sched-targets="${scheds[*]}" "${scheds[@]}" >&2
mkdir -p "$out"
for n in "${scheds[@]}"; do cp "$T/build/bin/$n" "$out/"; done
touch "$out/.done"
echo "build-scx: done: $out" >&2
echo "$out"
