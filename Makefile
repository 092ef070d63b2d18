# nvmirage build. `make` builds build/nvmirage; `make test` runs every test;
# `make demo` sets up a fresh Debian 12 machine and shows the mock GPUs.
# Quiet unless V=1. Every output goes under build/.

HOST_ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
ARCH     ?= $(HOST_ARCH)
CLANG    ?= clang
BPFTOOL  ?= bpftool
PKGS     := libbpf yaml-0.1 json-c libprotobuf-c libnghttp2 libmicrohttpd
ifeq ($(ARCH),$(HOST_ARCH))
OUT      ?= build
CC       ?= gcc
PKG_CONFIG := pkg-config
else ifeq ($(ARCH)-$(HOST_ARCH),arm64-x86)
# make ARCH=arm64: cross-built against Debian's arm64 libraries, unpacked
# into $(OUT)/sysroot by tests/vm/sysroot.sh (the first build fetches them).
OUT      ?= build/arm64
CC       := aarch64-linux-gnu-gcc
SYSROOT  := $(OUT)/sysroot
SYSLIB   := $(SYSROOT)/usr/lib/aarch64-linux-gnu
PKG_CONFIG := PKG_CONFIG_SYSROOT_DIR=$(SYSROOT) \
              PKG_CONFIG_LIBDIR=$(SYSLIB)/pkgconfig:$(SYSROOT)/usr/share/pkgconfig pkg-config
CROSS_FLAGS := -I$(SYSROOT)/usr/include -I$(SYSROOT)/usr/include/aarch64-linux-gnu
LDFLAGS  += -L$(SYSLIB) -L$(SYSROOT)/lib/aarch64-linux-gnu \
            -Wl,-rpath-link,$(SYSLIB):$(SYSROOT)/lib/aarch64-linux-gnu
CROSS_DEP := $(SYSROOT)/.done
else
$(error ARCH=$(ARCH) on a $(HOST_ARCH) machine: only arm64 can be cross-built, from x86)
endif
CFLAGS   ?= -O2 -g
CFLAGS   += -std=gnu11 -Wall -Wextra -Wno-missing-field-initializers -Wno-format-truncation \
            -D_GNU_SOURCE -I$(OUT)/bpf -I$(OUT)/proto -Ibpf -Iagent -Invml \
            $(shell $(PKG_CONFIG) --cflags $(PKGS) 2>/dev/null) $(CROSS_FLAGS)
LDLIBS   += $(shell $(PKG_CONFIG) --libs $(PKGS) 2>/dev/null) -lelf -lz -lpthread -ldl
SANITIZE := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all

ifeq ($(V),1)
Q :=
msg :=
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

# Sources are found, not listed: agent/ in its layer folders, one object per
# source under $(OUT)/agent/<folder>/; each object's header dependencies
# come from the compiler (-MMD -MP, in .d files next to it).
BPF_SRCS   := $(wildcard bpf/*.bpf.c)
BPF_OBJS   := $(patsubst bpf/%.bpf.c,$(OUT)/bpf/%.bpf.o,$(BPF_SRCS))
BPF_SKELS  := $(patsubst bpf/%.bpf.c,$(OUT)/bpf/%.skel.h,$(BPF_SRCS))
BPF_HDRS   := $(shell find bpf -name '*.h')
# agent/smi/nvidia-smi.c is the main of a program of its own (below).
AGENT_SRCS := $(filter-out agent/smi/nvidia-smi.c,$(shell find agent -name '*.c' | sort))
PROTOS     := $(shell find agent -name '*.proto')
PROTO_SRCS := $(patsubst %.proto,$(OUT)/proto/%.pb-c.c,$(notdir $(PROTOS)))
PROTO_HDRS := $(PROTO_SRCS:.c=.h)
PROTO_OBJS := $(PROTO_SRCS:.c=.o)
AGENT_OBJS := $(patsubst agent/%.c,$(OUT)/agent/%.o,$(AGENT_SRCS)) $(PROTO_OBJS)
LIB_OBJS   := $(filter-out $(OUT)/agent/cli/main.o,$(AGENT_OBJS))
ASAN_OBJS  := $(patsubst $(OUT)/%.o,$(OUT)/asan/%.o,$(LIB_OBJS))
UNIT_SRCS  := $(wildcard tests/unit/test_*.c)
UNIT_BINS  := $(patsubst tests/unit/%.c,$(OUT)/unit/%,$(UNIT_SRCS))
ASAN_BINS  := $(patsubst tests/unit/%.c,$(OUT)/unit-asan/%,$(UNIT_SRCS))
HELPERS    := $(patsubst tests/helpers/%.c,$(OUT)/helpers/%,$(wildcard tests/helpers/*.c))
# Generated headers must exist before the first compile that includes them;
# afterwards the .d files know who includes what.
GENERATED  := $(BPF_SKELS) $(PROTO_HDRS)
DEPFLAGS    = -MMD -MP -MF $(@D)/.$(@F).d
vpath %.proto $(sort $(dir $(PROTOS)))

.SECONDARY:
PREFIX   ?= /usr/local

.PHONY: all clean test test-all unit ktest e2e vmtest vmbench arm64-guest bench demo helpers install image
all: $(OUT)/nvmirage $(OUT)/nvidia-smi $(OUT)/libnvidia-ml.so.1 $(OUT)/libnvidia-ml.so

# The mock NVML: only the nvml* API is exported. (Its NOT_SUPPORTED stubs
# take the API's arguments and use none of them.)
NVML_SRCS := $(wildcard nvml/*.c)
$(OUT)/libnvidia-ml.so.1: $(NVML_SRCS) $(wildcard nvml/*.h)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -O2 -g -Wall -Wextra -Wno-unused-parameter -fPIC -shared -fvisibility=hidden -Invml \
		-Wl,-soname,libnvidia-ml.so.1 $(NVML_SRCS) -o $@ -lpthread -lm

# The unversioned name too: Slurm 22.05's AutoDetect=nvml dlopens only
# libnvidia-ml.so.
$(OUT)/libnvidia-ml.so: | $(OUT)/libnvidia-ml.so.1
	$(Q)ln -sfn libnvidia-ml.so.1 $@

$(OUT)/bpf/%.bpf.o: bpf/%.bpf.c $(BPF_HDRS) vmlinux/$(ARCH)/vmlinux.h
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Ivmlinux/$(ARCH) -Ibpf \
		-mcpu=v3 -Wall -Wno-unused-function -c $< -o $@

$(OUT)/bpf/%.skel.h: $(OUT)/bpf/%.bpf.o
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@.tmp && mv $@.tmp $@

# protobuf-c's encoders and decoders for the kubelet API.
$(OUT)/proto/%.pb-c.c $(OUT)/proto/%.pb-c.h: %.proto
	$(call msg,PROTOC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)protoc-c --proto_path=$(<D) --c_out=$(OUT)/proto $<

$(OUT)/agent/%.o: agent/%.c | $(GENERATED) $(CROSS_DEP)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(DEPFLAGS) -c $< -o $@

$(OUT)/proto/%.pb-c.o: $(OUT)/proto/%.pb-c.c $(PROTO_HDRS) | $(CROSS_DEP)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(OUT)/nvmirage: $(AGENT_OBJS)
	$(call msg,LD,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ -o $@ $(LDLIBS)

# The nvidia-smi the tree delivers into every target: nvmirage's smi as a
# program that needs only the C library.
SMI_OBJS := $(OUT)/agent/smi/nvidia-smi.o $(patsubst %.c,$(OUT)/%.o,$(filter-out agent/smi/nvidia-smi.c,$(wildcard agent/smi/*.c))) $(OUT)/agent/lib/log.o \
            $(OUT)/agent/lib/fsutil.o
$(OUT)/nvidia-smi: $(SMI_OBJS)
	$(call msg,LD,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ -o $@ -ldl

$(OUT)/sysroot/.done: tests/vm/sysroot.sh
	$(call msg,SYSROOT,$(@D))
	$(Q)sh tests/vm/sysroot.sh $(OUT)

# Unit tests: cmocka, linked with the agent's objects, built twice: plain and
# under AddressSanitizer + UndefinedBehaviorSanitizer.
$(OUT)/asan/agent/%.o: agent/%.c | $(GENERATED)
	$(call msg,CC-ASAN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(SANITIZE) $(DEPFLAGS) -c $< -o $@

$(OUT)/asan/proto/%.pb-c.o: $(OUT)/proto/%.pb-c.c $(PROTO_HDRS)
	$(call msg,CC-ASAN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(SANITIZE) -c $< -o $@

$(OUT)/unit/%: tests/unit/%.c $(LIB_OBJS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(DEPFLAGS) -Itests/unit $< $(LIB_OBJS) -o $@ $(LDLIBS) -lcmocka

$(OUT)/unit-asan/%: tests/unit/%.c $(ASAN_OBJS)
	$(call msg,CC-ASAN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(SANITIZE) $(DEPFLAGS) -Itests/unit $< $(ASAN_OBJS) -o $@ $(LDLIBS) -lcmocka

$(OUT)/helpers/%: tests/helpers/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -O2 -g -Wall -Wextra -pthread $< -o $@

# The bench's floor: an empty tp_btf program, and its loader.
$(OUT)/bench/floor.bpf.o: tests/bench/floor.bpf.c vmlinux/$(ARCH)/vmlinux.h
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Ivmlinux/$(ARCH) -Wall -c $< -o $@

$(OUT)/bench/floor.skel.h: $(OUT)/bench/floor.bpf.o
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@.tmp && mv $@.tmp $@

$(OUT)/helpers/floor: tests/bench/floor.c $(OUT)/bench/floor.skel.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -I$(OUT)/bench $(LDFLAGS) $< -o $@ $(LDLIBS)

# The cgroup v2 device program Slurm's ConstrainDevices attaches, as a
# helper of the NVML and Slurm tests.
$(OUT)/devdeny/devdeny.bpf.o: tests/devdeny/devdeny.bpf.c vmlinux/$(ARCH)/vmlinux.h
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Ivmlinux/$(ARCH) -Wall -c $< -o $@

$(OUT)/devdeny/devdeny.skel.h: $(OUT)/devdeny/devdeny.bpf.o
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@.tmp && mv $@.tmp $@

$(OUT)/helpers/devdeny: tests/devdeny/devdeny.c $(OUT)/devdeny/devdeny.skel.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -I$(OUT)/devdeny $(LDFLAGS) $< -o $@ $(LDLIBS)

# A static binary the container tests bind into their containers (Debian's
# busybox-static).
$(OUT)/helpers/busybox: /bin/busybox
	$(call msg,CP,$@)
	$(Q)mkdir -p $(@D)
	$(Q)cp $< $@

$(OUT)/helpers/libshim.so: tests/bench/shim.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -O2 -Wall -shared -fPIC $< -o $@ -ldl

$(OUT)/helpers/check_nvml: tests/nvml/check_nvml.c $(LIB_OBJS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(DEPFLAGS) $(LDFLAGS) $< $(LIB_OBJS) -o $@ $(LDLIBS)

$(OUT)/helpers/check_faults: tests/faults/check_faults.c nvml/nvml.h nvml/nvml_mig.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -O2 -g -Wall -Wextra -Invml $< -o $@ -ldl

# The kernel stage's rule-matcher table test (tests/kernel/match.c).
$(OUT)/helpers/match: tests/kernel/match.c $(LIB_OBJS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(DEPFLAGS) $(LDFLAGS) $< $(LIB_OBJS) -o $@ $(LDLIBS)

# Go programs (golang-go, a test dependency): one that dlopens NVML through
# cgo as NVIDIA's Go bindings do, one static (no cgo) that reads the /proc
# files with the Go runtime's own system calls.
GO_ENV := GOCACHE=$(abspath $(OUT))/cache/go GOPATH=$(abspath $(OUT))/cache/gopath GO111MODULE=off
$(OUT)/helpers/nvml_dlopen: tests/helpers/go/nvml_dlopen.go
	$(call msg,GO,$@)
	$(Q)mkdir -p $(@D)
	$(Q)env $(GO_ENV) CGO_ENABLED=1 go build -o $@ $<

$(OUT)/helpers/ls_gpus: tests/helpers/go/ls_gpus.go
	$(call msg,GO,$@)
	$(Q)mkdir -p $(@D)
	$(Q)env $(GO_ENV) CGO_ENABLED=0 go build -o $@ $<

helpers: $(HELPERS) $(OUT)/helpers/libshim.so $(OUT)/helpers/check_nvml \
	 $(OUT)/helpers/nvml_dlopen $(OUT)/helpers/ls_gpus \
	 $(OUT)/libnvidia-ml.so.1 $(OUT)/libnvidia-ml.so $(OUT)/nvidia-smi \
	 $(OUT)/helpers/check_faults \
	 $(OUT)/helpers/floor $(OUT)/helpers/match $(OUT)/helpers/devdeny $(OUT)/helpers/busybox

unit: $(UNIT_BINS) $(ASAN_BINS) $(OUT)/nvmirage
	$(Q)tests/run-unit.sh $(OUT)

ktest: $(OUT)/nvmirage helpers
	$(Q)tests/kernel/run.sh $(OUT)

e2e: $(OUT)/nvmirage helpers
	$(Q)tests/e2e/run.sh $(OUT)

# The guests: this build, and the arm64 one for the arm64 guest.
ARM64_OUT := $(OUT)/arm64
arm64-guest:
	$(Q)$(MAKE) --no-print-directory ARCH=arm64 OUT=$(ARM64_OUT) \
		$(ARM64_OUT)/nvmirage $(ARM64_OUT)/nvidia-smi $(ARM64_OUT)/libnvidia-ml.so.1 \
		$(ARM64_OUT)/helpers/reader $(ARM64_OUT)/helpers/bench

vmtest: $(OUT)/nvmirage helpers arm64-guest
	$(Q)sh tests/vm/run.sh $(OUT)

vmbench: $(OUT)/nvmirage helpers arm64-guest
	$(Q)sh tests/vm/run.sh $(OUT) bench

# make test on a fresh machine: installs what the tests need first, then
# builds and runs them in a new make (its flags come from pkg-config, which
# must find the libraries just installed).
test:
	$(Q)tests/deps.sh --test
	$(Q)$(MAKE) --no-print-directory test-all

test-all: $(UNIT_BINS) $(ASAN_BINS) $(OUT)/nvmirage helpers arm64-guest
	$(Q)sh tests/run-all.sh $(OUT)

bench: $(OUT)/nvmirage helpers
	$(Q)sh tests/bench/run.sh $(OUT)

demo:
	$(Q)./tests/demo.sh

# The binary finds its profiles in $(PREFIX)/share/nvmirage/profiles, and
# `smi` its NVML in $(PREFIX)/lib/nvmirage.
install: $(OUT)/nvmirage $(OUT)/nvidia-smi $(OUT)/libnvidia-ml.so.1 $(OUT)/libnvidia-ml.so
	$(call msg,INSTALL,$(DESTDIR)$(PREFIX))
	$(Q)install -D -m 755 $(OUT)/nvmirage $(DESTDIR)$(PREFIX)/bin/nvmirage
	$(Q)install -D -m 755 $(OUT)/nvidia-smi $(DESTDIR)$(PREFIX)/lib/nvmirage/nvidia-smi
	$(Q)install -D -m 755 $(OUT)/libnvidia-ml.so.1 $(DESTDIR)$(PREFIX)/lib/nvmirage/libnvidia-ml.so.1
	$(Q)ln -sfn libnvidia-ml.so.1 $(DESTDIR)$(PREFIX)/lib/nvmirage/libnvidia-ml.so
	$(Q)install -d $(DESTDIR)$(PREFIX)/share/nvmirage/profiles
	$(Q)install -m 644 profiles/*.yaml $(DESTDIR)$(PREFIX)/share/nvmirage/profiles/

# The image (Containerfile), with podman or docker, whichever is here.
VERSION := $(shell sed -n 's/^\#define NVM_VERSION "\(.*\)"/\1/p' agent/lib/version.h)
IMAGE   ?= nvmirage:$(VERSION)
CONTAINER_ENGINE ?= $(shell command -v podman || command -v docker)
image:
	$(if $(CONTAINER_ENGINE),,$(error make image needs podman or docker))
	$(call msg,IMAGE,$(IMAGE))
	$(Q)$(CONTAINER_ENGINE) build $(IMAGE_BUILD_FLAGS) -t $(IMAGE) -f Containerfile .

clean:
	$(call msg,CLEAN,$(OUT))
	$(Q)rm -rf $(OUT)

# The header dependencies the compiler wrote (see DEPFLAGS).
-include $(shell find $(addprefix $(OUT)/,agent asan unit unit-asan helpers) -name '.*.d' -type f 2>/dev/null)
