/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scx_pds: Project C's PDS (v6.0-r0) as a sched_ext scheduler for Linux 6.12.
 *
 * The BPF twin of crates/schedlab-core/src/policy/scx_pds.rs (read its header
 * for the algorithm and its departures from PDS); in short:
 *
 *  - time in edges of 2^22 ns; a task's virtual deadline is edge + nice + 20,
 *    set at creation and renewed each time its 4 << 20 ns slice is used up,
 *    never at wakeup (a sleeper keeps its early deadline and its slice left);
 *  - one DSQ ordered by max(deadline, edge - 24) taken at enqueue (PDS's level
 *    deadline - edge + 24 clamped at 0), FIFO among equal keys;
 *  - ops.dispatch renews an expired @prev's deadline and keeps it running when
 *    its new key is earlier than the DSQ's first task, which it reads with the
 *    DSQ iterator (bpf_for_each(scx_dsq, ...), 6.12).
 *
 * Kfuncs as named in 6.12 (scx_bpf_dispatch_vtime, scx_bpf_consume).
 */
#include <scx/common.bpf.h>

char _license[] SEC("license") = "GPL";

UEI_DEFINE(uei);

#define SLICE_NS	(4ULL << 20)	/* sched_timeslice_ns */
#define EDGE_SHIFT	22		/* sched_timeslice_shift */
#define PAST_EDGES	24		/* NORMAL_PRIO_NUM - NICE_WIDTH */
#define SHARED_DSQ	0

struct task_ctx {
	u64 deadline;	/* virtual deadline, in edges */
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct task_ctx);
} task_ctxs SEC(".maps");

static struct task_ctx *lookup(struct task_struct *p)
{
	return bpf_task_storage_get(&task_ctxs, p, 0, 0);
}

static u64 edge_now(void)
{
	return bpf_ktime_get_ns() >> EDGE_SHIFT;
}

/* time_slice_expired's deadline: edge + nice + 20 */
static void renew(struct task_struct *p, struct task_ctx *tctx)
{
	s32 nice = (s32)p->static_prio - 120;

	if (nice < -20)
		nice = -20;
	if (nice > 19)
		nice = 19;
	tctx->deadline = edge_now() + (u64)(nice + 20);
}

/* The DSQ key: the deadline, at most PAST_EDGES before the edge. */
static u64 key_of(struct task_ctx *tctx)
{
	u64 edge = edge_now();
	u64 floor = edge > PAST_EDGES ? edge - PAST_EDGES : 0;

	return tctx->deadline > floor ? tctx->deadline : floor;
}

/* What is left of the slice (0 = keep), or a full one with a new deadline. */
static u64 refill(struct task_struct *p, struct task_ctx *tctx)
{
	if (p->scx.slice)
		return 0;
	renew(p, tctx);
	return SLICE_NS;
}

s32 BPF_STRUCT_OPS(pds_select_cpu, struct task_struct *p, s32 prev_cpu, u64 wake_flags)
{
	struct task_ctx *tctx;
	bool is_idle = false;
	s32 cpu;

	cpu = scx_bpf_select_cpu_dfl(p, prev_cpu, wake_flags, &is_idle);
	if (is_idle && (tctx = lookup(p)))
		scx_bpf_dispatch(p, SCX_DSQ_LOCAL, refill(p, tctx), 0);
	return cpu;
}

void BPF_STRUCT_OPS(pds_enqueue, struct task_struct *p, u64 enq_flags)
{
	struct task_ctx *tctx = lookup(p);
	u64 slice;

	if (!tctx) {
		scx_bpf_error("pds: no task_ctx for %s[%d]", p->comm, p->pid);
		return;
	}
	slice = refill(p, tctx);
	scx_bpf_dispatch_vtime(p, SHARED_DSQ, slice, key_of(tctx), enq_flags);
}

void BPF_STRUCT_OPS(pds_dispatch, s32 cpu, struct task_struct *prev)
{
	struct task_struct *q;
	struct task_ctx *tctx;
	bool found = false;
	u64 first = 0;

	if (prev && (prev->scx.flags & SCX_TASK_QUEUED) && (tctx = lookup(prev))) {
		/* Its slice is used up (else the kernel kept it already). */
		renew(prev, tctx);
		bpf_for_each(scx_dsq, q, SHARED_DSQ, 0) {
			first = q->scx.dsq_vtime;
			found = true;
			break;
		}
		if (!found || key_of(tctx) < first) {
			prev->scx.slice = SLICE_NS;
			return;
		}
	}
	scx_bpf_consume(SHARED_DSQ);
}

s32 BPF_STRUCT_OPS(pds_init_task, struct task_struct *p, struct scx_init_task_args *args)
{
	struct task_ctx *tctx;

	tctx = bpf_task_storage_get(&task_ctxs, p, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!tctx)
		return -ENOMEM;
	renew(p, tctx);
	return 0;
}

void BPF_STRUCT_OPS(pds_enable, struct task_struct *p)
{
	p->scx.slice = SLICE_NS;
}

s32 BPF_STRUCT_OPS_SLEEPABLE(pds_init)
{
	return scx_bpf_create_dsq(SHARED_DSQ, -1);
}

void BPF_STRUCT_OPS(pds_exit, struct scx_exit_info *ei)
{
	UEI_RECORD(uei, ei);
}

SCX_OPS_DEFINE(pds_ops,
	       .select_cpu		= (void *)pds_select_cpu,
	       .enqueue			= (void *)pds_enqueue,
	       .dispatch		= (void *)pds_dispatch,
	       .init_task		= (void *)pds_init_task,
	       .enable			= (void *)pds_enable,
	       .init			= (void *)pds_init,
	       .exit			= (void *)pds_exit,
	       .name			= "pds");
