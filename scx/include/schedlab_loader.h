/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The user-space half every schedlab sched_ext scheduler shares: open, load
 * and attach the BPF skeleton (the kernel's tools/sched_ext/scx_simple.c
 * pattern, Linux 6.12), say so on stdout, wait for SIGINT/SIGTERM or for the
 * kernel to eject the scheduler, then print the exit record.
 *
 * Lines on stdout/stderr that `schedlab vm` (python/schedlab/vm.py) reads:
 *   "schedlab-scx: attached NAME"      the scheduler is loaded and attached
 *   "EXIT: REASON" / "message"         printed by UEI_REPORT when the kernel
 *                                      ejects it (error, watchdog stall) or
 *                                      on unload
 * A verifier rejection fails in SCX_OPS_LOAD: libbpf prints the verifier log
 * on stderr (LIBBPF_WARN level) and the program exits non-zero.
 *
 * Use: #define SCHED name-of-skeleton, OPS name-of-struct_ops, then
 * SCHEDLAB_SCX_MAIN(skeleton, ops).
 */
#ifndef __SCHEDLAB_LOADER_H
#define __SCHEDLAB_LOADER_H

#include <stdio.h>
#include <unistd.h>
#include <signal.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <scx/common.h>

static volatile int schedlab_exit_req;

static int schedlab_print_fn(enum libbpf_print_level level, const char *format, va_list args)
{
	if (level == LIBBPF_DEBUG)
		return 0;
	return vfprintf(stderr, format, args);
}

static void schedlab_on_signal(int sig)
{
	schedlab_exit_req = 1;
}

#define SCHEDLAB_SCX_MAIN(__skel_name, __ops_name)					\
int main(int argc, char **argv)								\
{											\
	struct __skel_name *skel;							\
	struct bpf_link *link;								\
											\
	libbpf_set_print(schedlab_print_fn);						\
	signal(SIGINT, schedlab_on_signal);						\
	signal(SIGTERM, schedlab_on_signal);						\
	skel = SCX_OPS_OPEN(__ops_name, __skel_name);					\
	if (argc > 1 && argv[1][0] == '-' && argv[1][1] == 'p')				\
		skel->struct_ops.__ops_name->flags |= SCX_OPS_SWITCH_PARTIAL;		\
	SCX_OPS_LOAD(skel, __ops_name, __skel_name, uei);				\
	link = SCX_OPS_ATTACH(skel, __ops_name, __skel_name);				\
	printf("schedlab-scx: attached %s\n", #__skel_name);				\
	fflush(stdout);									\
	while (!schedlab_exit_req && !UEI_EXITED(skel, uei))				\
		sleep(1);								\
	bpf_link__destroy(link);							\
	UEI_REPORT(skel, uei);								\
	__skel_name##__destroy(skel);							\
	return 0;									\
}

#endif /* __SCHEDLAB_LOADER_H */
