// SPDX-License-Identifier: GPL-2.0
/* Tiny programs that tell what the kernel allows; each is loaded on its own. */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "lib/syscalls.h"

char LICENSE[] SEC("license") = "GPL";

SEC("tp_btf/sys_enter")
int BPF_PROG(probe_tp_btf, struct pt_regs *regs, long id)
{
	return 0;
}

/* Where the redirect's fentry entry points go: the syscall functions. */
SEC("fentry/" NVM_SYS_PREFIX "openat")
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
