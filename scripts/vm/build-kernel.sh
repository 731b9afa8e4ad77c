#!/bin/bash
# Build (once) the guest kernel of `schedlab vm`: Linux 6.12 from Debian's linux-source-6.12 with
# sched_ext (SCHED_CLASS_EXT), BTF, SMP, 9p over virtio and tracefs, from tinyconfig plus
# scripts/vm/sched_ext.config (the kit in shared/vm, verified 2026-11-21). About 10-15 minutes on
# 2 cores; later calls find it in the cache and return at once.
#
# Cache: ${SCHEDLAB_VM_CACHE:-~/.cache/schedlab/vm}/linux-<version>-<key>/, key = hash of this
# script, the config fragment and the source package's version, so a change to either rebuilds.
# The tree is kept: tools/sched_ext (our BPF schedulers, scripts/vm/build-scx.sh) builds against it.
# Prints the cache directory on stdout (progress on stderr). Needs root for apt-get on a fresh machine.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
CACHE=${SCHEDLAB_VM_CACHE:-$HOME/.cache/schedlab/vm}
need=(linux-source-6.12 bc bison flex libelf-dev libssl-dev dwarves cpio make gcc)
missing=()
for p in "${need[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
# SCHEDLAB_VM_CHECK_ONLY=1 (`schedlab vm run`): find the cached build or exit 3, changing nothing.
check_only() { [ "${SCHEDLAB_VM_CHECK_ONLY:-}" = 1 ] && { echo "not built: $1" >&2; exit 3; }; return 0; }
if [ ${#missing[@]} -gt 0 ]; then
  check_only "missing packages: ${missing[*]}"
  echo "build-kernel: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null && apt-get install -y -qq "${missing[@]}" >/dev/null
fi
ver=$(dpkg-query -W -f='${Version}' linux-source-6.12)
key=$(cat "$HERE/build-kernel.sh" "$HERE/sched_ext.config" <(echo "$ver") | sha256sum | cut -c1-12)
dir="$CACHE/linux-6.12-$key"
if [ -f "$dir/bzImage" ]; then echo "$dir"; exit 0; fi
check_only "no kernel in $dir"
mkdir -p "$CACHE"
tmp=$(mktemp -d "$CACHE/.build-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
echo "build-kernel: building Linux 6.12 ($ver) with sched_ext in $tmp (10-15 minutes on 2 cores)" >&2
tar -C "$tmp" -xf /usr/src/linux-source-6.12.tar.xz
src="$tmp/linux-source-6.12"
make -C "$src" -s tinyconfig >/dev/null
(cd "$src" && ./scripts/kconfig/merge_config.sh -m .config "$HERE/sched_ext.config" >/dev/null)
make -C "$src" -s olddefconfig >/dev/null
for opt in SCHED_CLASS_EXT DEBUG_INFO_BTF VIRTIO_PCI NET_9P_VIRTIO 9P_FS; do
  grep -q "^CONFIG_$opt=y" "$src/.config" || { echo "build-kernel: CONFIG_$opt did not stick" >&2; exit 1; }
done
make -C "$src" -s -j"$(nproc)" bzImage >&2
cp "$src/arch/x86/boot/bzImage" "$src/bzImage"
echo "$(make -C "$src" -s kernelversion)" > "$src/KERNELVERSION"
mv "$src" "$dir"
echo "build-kernel: done: $dir/bzImage ($(cat "$dir/KERNELVERSION"))" >&2
echo "$dir"
