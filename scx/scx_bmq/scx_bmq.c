/* SPDX-License-Identifier: GPL-2.0 */
/* scx_bmq's user-space half: load, attach, wait (scx/include/schedlab_loader.h). */
#include "schedlab_loader.h"
#include "scx_bmq.bpf.skel.h"

SCHEDLAB_SCX_MAIN(scx_bmq, bmq_ops)
