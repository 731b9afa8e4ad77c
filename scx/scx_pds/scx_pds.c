/* SPDX-License-Identifier: GPL-2.0 */
/* scx_pds's user-space half: load, attach, wait (scx/include/schedlab_loader.h). */
#include "schedlab_loader.h"
#include "scx_pds.bpf.skel.h"

SCHEDLAB_SCX_MAIN(scx_pds, pds_ops)
