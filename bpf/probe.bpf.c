// SPDX-License-Identifier: GPL-2.0
/* Tiny programs that tell what the kernel allows; each is loaded on its own. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

SEC("tp_btf/sys_enter")
int BPF_PROG(probe_tp_btf, struct pt_regs *regs, long id)
{
	return 0;
}

/* The attach target is set at run time to this arch's openat function. */
SEC("fentry/do_sys_openat2")
int BPF_PROG(probe_fentry)
{
	return 0;
}

SEC("lsm/file_open")
int BPF_PROG(probe_lsm, struct file *file)
{
	return 0;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(probe_write_user, struct pt_regs *regs, long id)
{
	char c = 0;

	if (id == -4242)
		bpf_probe_write_user((void *)0, &c, 1);
	return 0;
}
