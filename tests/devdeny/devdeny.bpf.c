// SPDX-License-Identifier: GPL-2.0
/* A cgroup v2 device program as Slurm's ConstrainDevices attaches one to a
 * job's cgroup under cgroup/v2: the listed character devices are denied,
 * every other device allowed. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

#define MAX_DENY 16
#define DEV_CHAR 2 /* BPF_DEVCG_DEV_CHAR, a #define that BTF does not carry */
/* (major << 20) | minor of each denied character device (set before load). */
const volatile __u32 deny[MAX_DENY];
const volatile __u32 ndeny;

SEC("cgroup/dev")
int devdeny(struct bpf_cgroup_dev_ctx *ctx)
{
	__u32 dev = (ctx->major << 20) | ctx->minor;

	if ((ctx->access_type & 0xffff) != DEV_CHAR)
		return 1;
	for (__u32 i = 0; i < MAX_DENY; i++)
		if (i < ndeny && deny[i] == dev)
			return 0;
	return 1;
}
