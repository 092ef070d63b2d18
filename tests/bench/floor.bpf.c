/* The cheapest entry points there are: an empty tp_btf/sys_enter program,
 * and with it an empty tp_btf/sys_exit one. What they cost every syscall
 * is the floor under `make bench`'s (1) and (2) on a kernel where tp_btf
 * is the only entry point (the engine needs both: the exit program puts
 * the original bytes back). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

SEC("tp_btf/sys_enter")
int BPF_PROG(floor_sys_enter, struct pt_regs *regs, long id)
{
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(floor_sys_exit, struct pt_regs *regs, long ret)
{
	return 0;
}
