/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scx_bmq: Project C's BMQ (v6.0-r0) as a sched_ext scheduler for Linux 6.12.
 *
 * The BPF twin of crates/schedlab-core/src/policy/scx_bmq.rs: the same rules,
 * hook for hook, so that `schedlab compare --workload W --vm --scheduler
 * scx_bmq` compares one algorithm in the simulator and in the kernel. Read
 * the Rust file's header for the algorithm and its departures from BMQ; in
 * short:
 *
 *  - one user DSQ per level, level = 50 + (127 + nice + boost) / 2 (100..126),
 *    127 for SCHED_IDLE; dispatch takes the first non-empty level (strict
 *    priority), FIFO within a level;
 *  - boost in [-7, +7]: +1 when a 4 << 20 ns slice is used up (ops.tick sees
 *    the slice at 0), -1 when a task blocks less than slice >> (8 - boost) ns
 *    after it started running, -1 at a wakeup after more than a slice asleep
 *    (floor -7 for SCHED_NORMAL, 0 for BATCH/IDLE), +7 at fork;
 *  - ops.dispatch keeps an expired @prev (refilling its slice) when no level at
 *    or above its own is queued: ops.dispatch runs before @prev is enqueued
 *    again (balance_one in kernel/sched/ext.c), so without this a waiting task
 *    of a lower level would take the CPU at every expiry.
 *
 * Kfuncs as named in 6.12 (scx_bpf_dispatch, scx_bpf_consume); 6.13 renamed
 * them scx_bpf_dsq_insert and scx_bpf_dsq_move_to_local.
 */
#include <scx/common.bpf.h>

char _license[] SEC("license") = "GPL";

UEI_DEFINE(uei);

#define SLICE_NS	(4ULL << 20)	/* sched_timeslice_ns */
#define MAX_ADJ		7		/* MAX_PRIORITY_ADJ */
#define FIRST_LEVEL	100ULL
#define IDLE_LEVEL	127ULL
#define POLICY_NORMAL	0		/* SCHED_NORMAL (uapi, not in BTF) */
#define POLICY_IDLE	5		/* SCHED_IDLE */

struct task_ctx {
	s32 boost;		/* boost_prio */
	u64 last_ran;		/* when it last started running */
	u64 last_stopped;	/* when it last stopped running */
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

static u64 level_of(struct task_struct *p, struct task_ctx *tctx)
{
	s32 nice = (s32)p->static_prio - 120;

	if (p->policy == POLICY_IDLE)
		return IDLE_LEVEL;
	if (nice < -20)
		nice = -20;
	if (nice > 19)
		nice = 19;
	/* 127 + nice + boost >= 100: unsigned division is exact */
	return 50 + (u32)(127 + nice + tctx->boost) / 2;
}

static void boost(struct task_struct *p, struct task_ctx *tctx)
{
	s32 floor = p->policy == POLICY_NORMAL ? -MAX_ADJ : 0;

	if (tctx->boost > floor)
		tctx->boost--;
}

/* What is left of the slice (0 = keep p->scx.slice), or a full one. */
static u64 slice_of(struct task_struct *p)
{
	return p->scx.slice ? 0 : SLICE_NS;
}

s32 BPF_STRUCT_OPS(bmq_select_cpu, struct task_struct *p, s32 prev_cpu, u64 wake_flags)
{
	bool is_idle = false;
	s32 cpu;

	cpu = scx_bpf_select_cpu_dfl(p, prev_cpu, wake_flags, &is_idle);
	if (is_idle)
		scx_bpf_dispatch(p, SCX_DSQ_LOCAL, slice_of(p), 0);
	return cpu;
}

void BPF_STRUCT_OPS(bmq_runnable, struct task_struct *p, u64 enq_flags)
{
	struct task_ctx *tctx = lookup(p);

	if (tctx && (enq_flags & SCX_ENQ_WAKEUP) &&
	    bpf_ktime_get_ns() - tctx->last_stopped > SLICE_NS)
		boost(p, tctx);
}

void BPF_STRUCT_OPS(bmq_enqueue, struct task_struct *p, u64 enq_flags)
{
	struct task_ctx *tctx = lookup(p);

	if (!tctx) {
		scx_bpf_error("bmq: no task_ctx for %s[%d]", p->comm, p->pid);
		return;
	}
	scx_bpf_dispatch(p, level_of(p, tctx), slice_of(p), enq_flags);
}

void BPF_STRUCT_OPS(bmq_dispatch, s32 cpu, struct task_struct *prev)
{
	struct task_ctx *tctx;
	u64 best = 0, l;

	bpf_for(l, FIRST_LEVEL, IDLE_LEVEL + 1) {
		if (scx_bpf_dsq_nr_queued(l) > 0) {
			best = l;
			break;
		}
	}
	/* An expired @prev that is still runnable keeps the CPU if it outranks
	 * every queued task (the kernel kept it already if its slice was left). */
	if (prev && (prev->scx.flags & SCX_TASK_QUEUED) && (tctx = lookup(prev)) &&
	    (!best || level_of(prev, tctx) < best)) {
		prev->scx.slice = SLICE_NS;
		return;
	}
	if (best)
		scx_bpf_consume(best);
}

void BPF_STRUCT_OPS(bmq_tick, struct task_struct *p)
{
	struct task_ctx *tctx = lookup(p);

	if (tctx && !p->scx.slice && tctx->boost < MAX_ADJ)
		tctx->boost++;
}

void BPF_STRUCT_OPS(bmq_running, struct task_struct *p)
{
	struct task_ctx *tctx = lookup(p);

	if (tctx)
		tctx->last_ran = bpf_ktime_get_ns();
}

void BPF_STRUCT_OPS(bmq_stopping, struct task_struct *p, bool runnable)
{
	struct task_ctx *tctx = lookup(p);
	u64 now = bpf_ktime_get_ns();
	s32 shift;

	if (!tctx)
		return;
	tctx->last_stopped = now;
	if (runnable)
		return;
	/* boost_threshold: slice >> (15 - MAX_PRIORITY_ADJ - boost_prio) */
	shift = 15 - MAX_ADJ - tctx->boost;
	if (shift < 0)
		shift = 0;
	if (shift > 63)
		shift = 63;
	if (now - tctx->last_ran < SLICE_NS >> shift)
		boost(p, tctx);
}

s32 BPF_STRUCT_OPS(bmq_init_task, struct task_struct *p, struct scx_init_task_args *args)
{
	struct task_ctx *tctx;

	tctx = bpf_task_storage_get(&task_ctxs, p, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!tctx)
		return -ENOMEM;
	tctx->boost = args->fork ? MAX_ADJ : 0;
	tctx->last_stopped = bpf_ktime_get_ns();
	return 0;
}

void BPF_STRUCT_OPS(bmq_enable, struct task_struct *p)
{
	p->scx.slice = SLICE_NS;
}

s32 BPF_STRUCT_OPS_SLEEPABLE(bmq_init)
{
	u64 l;
	s32 ret;

	bpf_for(l, FIRST_LEVEL, IDLE_LEVEL + 1) {
		ret = scx_bpf_create_dsq(l, -1);
		if (ret)
			return ret;
	}
	return 0;
}

void BPF_STRUCT_OPS(bmq_exit, struct scx_exit_info *ei)
{
	UEI_RECORD(uei, ei);
}

SCX_OPS_DEFINE(bmq_ops,
	       .select_cpu		= (void *)bmq_select_cpu,
	       .runnable		= (void *)bmq_runnable,
	       .enqueue			= (void *)bmq_enqueue,
	       .dispatch		= (void *)bmq_dispatch,
	       .tick			= (void *)bmq_tick,
	       .running			= (void *)bmq_running,
	       .stopping		= (void *)bmq_stopping,
	       .init_task		= (void *)bmq_init_task,
	       .enable			= (void *)bmq_enable,
	       .init			= (void *)bmq_init,
	       .exit			= (void *)bmq_exit,
	       .name			= "bmq");
