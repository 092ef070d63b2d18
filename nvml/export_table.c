/* The internal export table NVIDIA's nvidia-smi asks NVML for before
 * anything else (without it: "Mismatch in versions between nvidia-smi and
 * NVML"). What it holds is not documented; what is here is what Mokka
 * (NVIDIA's k8s-test-infra mock NVML) published from running nvidia-smi:
 * one table id, a first word that is the table's size in bytes, then
 * entry points called with up to four pointer-sized arguments; slot 81
 * maps a GPU index to a handle; slot 213 lists a GPU's compute processes;
 * every other slot succeeds, and writes a zero count where its first
 * argument is one of our GPUs and its second a pointer (slot 165 takes a
 * GPU and the number 1: that is no pointer). Each slot has an entry point
 * of its own, so that with
 * NVMIRAGE_NVML_TRACE set in the environment every call nvidia-smi makes
 * through the table is logged (slot and arguments) on stderr: observed,
 * never disassembled. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define SLOTS 256

static const unsigned char smi_table_id[16] = { 0xc4, 0xfe, 0x3e, 0x6c, 0xc9, 0x8f, 0x6c, 0x4e,
						0xa3, 0x27, 0xee, 0x69, 0x6e, 0x12, 0xf7, 0xc4 };

static bool is_ours(const void *p)
{
	return p >= (const void *)nvml_devs && p < (const void *)(nvml_devs + nvml_ndev);
}

/* Slot 213: a GPU's compute processes, (GPU, unsigned *count, entries):
 * *count comes in as the room (250 seen) and goes out as how many; each
 * entry 4128 bytes: pid (u32) at 0, memory used (u64, bytes) at 8, GPU
 * and compute instance (u32, 0xffffffff: none) at 16 and 20, protected
 * memory (u64) at 24, the name (NUL-terminated) at 32. Mokka's finding on
 * 580, seen to hold on 550 (nvidia-smi's process box, -q and
 * --query-compute-apps show the profile's processes with their names). */
#define PROC_ENTRY 4128
#define PROC_NAME 4096
static nvmlReturn_t compute_processes(const struct nvmlDevice_st *d, unsigned *count,
				      unsigned char *entries)
{
	struct nvm_proc procs[64];
	unsigned n = nvml_gpu_processes(d, false, procs, 64);

	if (*count < n) {
		*count = n;
		return NVML_ERROR_INSUFFICIENT_SIZE;
	}
	for (unsigned k = 0; k < n; k++) {
		unsigned char *e = entries + (size_t)k * PROC_ENTRY;
		uint32_t none = 0xffffffffu;
		uint64_t zero = 0;

		memset(e, 0, PROC_ENTRY);
		memcpy(e, &procs[k].pid, 4);
		memcpy(e + 8, &procs[k].used, 8);
		memcpy(e + 16, &none, 4);
		memcpy(e + 20, &none, 4);
		memcpy(e + 24, &zero, 8);
		if (nvml_process_name(procs[k].pid, (char *)e + 32, PROC_NAME))
			e[32] = '\0';
	}
	*count = n;
	return NVML_SUCCESS;
}

static nvmlReturn_t dispatch(unsigned slot, void *a0, void *a1, void *a2, void *a3)
{
	/* A GPU and a pointer (a small number is an argument, not a pointer
	 * to write through): a per-GPU slot with a count to write. */
	bool counted = is_ours(a0) && (uintptr_t)a1 >= 0x10000;

	if (getenv("NVMIRAGE_NVML_TRACE")) {
		fprintf(stderr, "nvmirage nvml: export slot %u (%p, %p, %p, %p)", slot, a0, a1, a2, a3);
		if (counted)
			fprintf(stderr, " count in %u", *(unsigned *)a1);
		fputc('\n', stderr);
	}
	if (slot == 81 && (uintptr_t)a0 < MAX_GPUS && (uintptr_t)a2 == 0x22 && a1)
		return nvmlDeviceGetHandleByIndex_v2((unsigned)(uintptr_t)a0, (nvmlDevice_t *)a1);
	if (slot == 213 && counted && (uintptr_t)a2 >= 0x10000)
		return compute_processes(a0, a1, a2);
	if (counted)
		*(unsigned *)a1 = 0;
	return NVML_SUCCESS;
}

/* 256 entry points, slot_<a><b><c><d> with the slot's number in base 4
 * (slot_0123 is slot 27), each calling dispatch with its number. */
#define SLOT(a, b, c, d)                                                                  \
	static nvmlReturn_t slot_##a##b##c##d(void *a0, void *a1, void *a2, void *a3)     \
	{                                                                                 \
		return dispatch(a * 64 + b * 16 + c * 4 + d, a0, a1, a2, a3);             \
	}
#define SLOT4(a, b, c) SLOT(a, b, c, 0) SLOT(a, b, c, 1) SLOT(a, b, c, 2) SLOT(a, b, c, 3)
#define SLOT16(a, b) SLOT4(a, b, 0) SLOT4(a, b, 1) SLOT4(a, b, 2) SLOT4(a, b, 3)
#define SLOT64(a) SLOT16(a, 0) SLOT16(a, 1) SLOT16(a, 2) SLOT16(a, 3)
#define REF(a, b, c, d) (void *)slot_##a##b##c##d,
#define REF4(a, b, c) REF(a, b, c, 0) REF(a, b, c, 1) REF(a, b, c, 2) REF(a, b, c, 3)
#define REF16(a, b) REF4(a, b, 0) REF4(a, b, 1) REF4(a, b, 2) REF4(a, b, 3)
#define REF64(a) REF16(a, 0) REF16(a, 1) REF16(a, 2) REF16(a, 3)

SLOT64(0) SLOT64(1) SLOT64(2) SLOT64(3)

static void *table[SLOTS] = { REF64(0) REF64(1) REF64(2) REF64(3) };

API nvmlReturn_t nvmlInternalGetExportTable(const void **out, const void *id)
{
	if (!out || !id)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (getenv("NVMIRAGE_NVML_TRACE"))
		fprintf(stderr, "nvmirage nvml: export table asked\n");
	if (memcmp(id, smi_table_id, sizeof(smi_table_id)))
		return NVML_ERROR_NOT_SUPPORTED;
	table[0] = (void *)(uintptr_t)sizeof(table); /* slot 0: the size, not an entry point */
	*out = table;
	return NVML_SUCCESS;
}
