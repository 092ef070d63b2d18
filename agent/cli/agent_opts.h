/* The options `run` and `exec` share: the agent's (struct agent_opts). */
#ifndef NVM_AGENT_OPTS_H
#define NVM_AGENT_OPTS_H

#include <getopt.h>

#include "daemon/agent.h"
#include "render/render.h"

/* For getopt_long: handles opt if it is one of them. Returns 1 if it was,
 * 0 if not, -1 on a bad value (reported). */
int agent_parse_opt(int opt, const char *arg, struct agent_opts *o);

#define AGENT_LONG_OPTS                                      \
	{ "profile", required_argument, 0, 'p' },            \
	{ "gpus", required_argument, 0, 'g' },               \
	{ "root", required_argument, 0, 'r' },               \
	{ "device-nodes", no_argument, 0, 'd' },             \
	{ "no-clip-cpus", no_argument, 0, 'C' },             \
	{ "deadline-ms", required_argument, 0, 'D' },        \
	{ "linger-us", required_argument, 0, 'L' },          \
	{ "btf", required_argument, 0, 'B' },                \
	{ "strategy", required_argument, 0, 'S' },           \
	{ "entry", required_argument, 0, 'E' },              \
	{ "time-scale", required_argument, 0, 'T' },         \
	{ "no-driver-userspace", no_argument, 0, 'U' },      \
	{ "nvidia-smi", required_argument, 0, 'N' }
#define AGENT_OPTS_HELP                                                              \
	"  -p, --profile P       a profile name (profiles/P.yaml) or a YAML file\n"       \
	"  -g, --gpus N          only the first N GPUs of the profile\n"                  \
	"  -r, --root T          where the tree goes (default " NVM_DEFAULT_ROOT ")\n"     \
	"  -d, --device-nodes    also redirect /dev/nvidiaN, nvidiactl, nvidia-modeset,\n" \
	"                        nvidia-uvm, nvidia-uvm-tools and /dev/nvidia-caps\n"     \
	"      --no-clip-cpus    keep CPU affinities this machine does not have\n"        \
	"      --deadline-ms N   while every CPU of the agent's holds a waiting task,\n" \
	"                        longest a syscall waits to be taken up (default\n"     \
	"                        50); else it waits while the agent lives, up to 1 s;\n" \
	"                        past that it goes on unredirected, counted and logged\n" \
	"      --linger-us N     keep polling this long after work (default 100000)\n"    \
	"      --btf FILE        kernel BTF (default /sys/kernel/btf/vmlinux)\n"          \
	"      --strategy NAME   auto (default: in-kernel where the kernel allows it,\n"  \
	"                        else assisted), in-kernel, or assisted\n"                \
	"      --entry NAME      auto (default: fentry where it attaches, else\n"         \
	"                        tp_btf), fentry, or tp_btf\n"                            \
	"      --time-scale F    multiply every deadline and time limit by F (1 to\n"     \
	"                        1000, default 1): for emulated machines, tens of\n"      \
	"                        times slower than the hardware the defaults fit\n"      \
	"      --no-driver-userspace  do not put NVML and nvidia-smi into the targets\n"  \
	"                        (by default the tree holds them, and a target finds\n"  \
	"                        them where the container toolkit puts them:\n"          \
	"                        libnvidia-ml.so.1 where the dynamic linker looks,\n"   \
	"                        /usr/bin/nvidia-smi)\n"                                 \
	"      --nvidia-smi PATH the nvidia-smi to put there (default nvmirage's,\n"     \
	"                        which answers -L and --query-gpu)\n"

#endif
