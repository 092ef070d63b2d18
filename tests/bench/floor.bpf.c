/* The cheapest entry point there is: an empty tp_btf/sys_enter program.
 * What it costs every syscall is the floor under `make bench`'s (1) and
 * (2) on a kernel where tp_btf is the only entry point. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

SEC("tp_btf/sys_enter")
int BPF_PROG(floor_sys_enter, struct pt_regs *regs, long id)
{
	return 0;
}
