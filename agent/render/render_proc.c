/* /proc/driver/nvidia, in the formats of NVIDIA's open kernel module. */
#include <stdio.h>
#include <string.h>

#include "lib/fsutil.h"
#include "lib/log.h"
#include "render/render.h"

/* Module parameters in the driver's order: nvidia-modprobe scans this file
 * with "%31[^:]: %u" and stops at the first line it cannot read, so the
 * numeric keys it needs come first and quoted strings last. */
static const char *const params_numeric[][2] = {
	{ "ResmanDebugLevel", "4294967295" },
	{ "RmLogonRC", "1" },
	{ "ModifyDeviceFiles", "1" },
	{ "DeviceFileUID", "0" },
	{ "DeviceFileGID", "0" },
	{ "DeviceFileMode", "438" },
	{ "InitializeSystemMemoryAllocations", "1" },
	{ "UsePageAttributeTable", "4294967295" },
	{ "EnableMSI", "1" },
	{ "EnablePCIeGen3", "0" },
	{ "MemoryPoolSize", "0" },
	{ "KMallocHeapMaxSize", "0" },
	{ "VMallocHeapMaxSize", "0" },
	{ "IgnoreMMIOCheck", "0" },
	{ "EnableStreamMemOPs", "0" },
	{ "EnableUserNUMAManagement", "1" },
	{ "NvLinkDisable", "0" },
	{ "RmProfilingAdminOnly", "1" },
	{ "PreserveVideoMemoryAllocations", "0" },
	{ "EnableS0ixPowerManagement", "0" },
	{ "S0ixPowerManagementVideoMemoryThreshold", "256" },
	{ "DynamicPowerManagement", "3" },
	{ "DynamicPowerManagementVideoMemoryThreshold", "200" },
	{ "RegisterPCIDriver", "1" },
	{ "EnablePCIERelaxedOrderingMode", "0" },
	{ "EnableResizableBar", "0" },
	{ "EnableGpuFirmware", "18" },
	{ "EnableGpuFirmwareLogs", "2" },
	{ "RmNvlinkBandwidthLinkCount", "0" },
	{ "EnableDbgBreakpoint", "0" },
	{ "OpenRmEnableUnsupportedGpus", "1" },
	{ "DmaRemapPeerMmio", "1" },
	{ "ImexChannelCount", "2048" },
	{ "CreateImexChannel0", "0" },
	{ "GrdmaPciTopoCheckOverride", "0" },
};

static const char *const params_quoted[][2] = {
	{ "CoherentGPUMemoryMode", "\"driver\"" },
	{ "RegistryDwords", "\"\"" },
	{ "RegistryDwordsPerDevice", "\"\"" },
	{ "RmMsg", "\"\"" },
	{ "GpuBlacklist", "\"\"" },
	{ "TemporaryFilePath", "\"/var/tmp\"" },
	{ "ExcludedGpus", "\"\"" },
};

static int write_params(const char *dir)
{
	char buf[4096];
	size_t off = 0;

	for (size_t i = 0; i < sizeof(params_numeric) / sizeof(params_numeric[0]); i++)
		off += (size_t)snprintf(buf + off, sizeof(buf) - off, "%s: %s\n",
					params_numeric[i][0], params_numeric[i][1]);
	for (size_t i = 0; i < sizeof(params_quoted) / sizeof(params_quoted[0]); i++)
		off += (size_t)snprintf(buf + off, sizeof(buf) - off, "%s: %s\n",
					params_quoted[i][0], params_quoted[i][1]);
	return fs_write(dir, "params", buf, off, 0444);
}

/* The field order and separators are the driver's (see driver-files.md);
 * Slurm keys on "Model:", "Device Minor:" and "GPU UUID:". */
size_t render_information_text(const struct nvm_gpu *g, char *buf, size_t len)
{
	char gsp[64] = "";
	int n;

	if (g->gsp_firmware[0])
		snprintf(gsp, sizeof(gsp), "GPU Firmware: \t %s\n", g->gsp_firmware);
	n = snprintf(buf, len,
		     "Model: \t\t %s\n"
		     "IRQ:   \t\t %u\n"
		     "GPU UUID: \t %s\n"
		     "Video BIOS: \t %s\n"
		     "Bus Type: \t PCIe\n"
		     "DMA Size: \t %u bits\n"
		     "DMA Mask: \t 0x%llx\n"
		     "Bus Location: \t %04x:%02x:%02x.%x\n"
		     "Device Minor: \t %u\n"
		     "%s"
		     "GPU Excluded:\t %s\n",
		     g->name, g->irq, g->uuid, g->vbios_version, g->dma_bits,
		     g->dma_bits >= 64 ? ~0ULL : (1ULL << g->dma_bits) - 1, g->domain,
		     g->bus, g->device, g->function, g->minor, gsp,
		     g->fault.mode == NVM_FAULT_EXCLUDED ? "Yes" : "No");
	return n < 0 ? 0 : (size_t)n < len ? (size_t)n : len - 1;
}

static int write_information(const struct nvm_gpu *g, const char *dir)
{
	char buf[2048];

	return fs_write(dir, "information", buf, render_information_text(g, buf, sizeof(buf)), 0444);
}

static int write_power(const char *dir)
{
	return fs_printf(dir, "power",
			 "Runtime D3 status:          Not supported\n"
			 "Video Memory:               Active\n"
			 "\n"
			 "GPU Hardware Support:\n"
			 " Video Memory Self Refresh: Not Supported\n"
			 " Video Memory Off:          Supported\n");
}

int render_proc(const struct nvm_model *m, const char *tree)
{
	char dir[4096], gdir[4200];

	snprintf(dir, sizeof(dir), "%s/proc/driver/nvidia/gpus", tree);
	if (fs_mkdirs(dir))
		return -1;
	snprintf(dir, sizeof(dir), "%s/proc/driver/nvidia", tree);
	if (fs_printf(dir, "version",
		      "NVRM version: NVIDIA UNIX Open Kernel Module for %s  %s  Release Build  "
		      "(nvmirage@mock)  Thu Jan  1 00:00:00 UTC 2026\n"
		      "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14+deb12u1) \n",
		      m->module_arch, m->driver_version) ||
	    write_params(dir) || fs_printf(dir, "registry", "Binary: \"\"\n"))
		return -1;
	for (unsigned i = 0; i < m->ngpus; i++) {
		const struct nvm_gpu *g = &m->gpus[i];

		snprintf(gdir, sizeof(gdir), "%s/gpus/%s", dir, g->bus_id);
		if (fs_mkdirs(gdir) || write_information(g, gdir) ||
		    fs_printf(gdir, "registry", "Binary: \"\"\n") || write_power(gdir))
			return -1;
	}
	return 0;
}
