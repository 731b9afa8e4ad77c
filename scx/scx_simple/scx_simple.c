/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel's own scx_simple (tools/sched_ext/scx_simple.bpf.c of the guest's tree, unchanged)
 * with schedlab's loader instead of tools/sched_ext/scx_simple.c: the 6.12 loader has no -p
 * (SCX_OPS_SWITCH_PARTIAL), which `schedlab vm` needs for workloads of SCHED_EXT tasks, and prints
 * statistics we do not read. scripts/vm/build-scx.sh builds this file against the tree's .bpf.c.
 */
#include "schedlab_loader.h"
#include "scx_simple.bpf.skel.h"

SCHEDLAB_SCX_MAIN(scx_simple, simple_ops)
