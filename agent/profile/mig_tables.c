/* NVIDIA's MIG GPU instance profiles per board, as the MIG user guide's
 * Supported MIG Profiles lists them and nvidia-smi mig -lgip prints them:
 * name, the driver's profile id, compute slices, memory units (of 8) and
 * placements, memory in MiB, SMs, copy engines, decoders, encoders, JPEG
 * decoders and OFAs. Media-extension profiles (1g.*+me, id 20) are not
 * among them: one instance with seven placements does not fit the model
 * of placements at multiples of the size. */
#include <string.h>

#include "profile/mig.h"

/* Placements are in memory units, eight on a 7-slice board: a profile of
 * size s may start at 0, s, 2s, ... (starts of them). */
static const struct nvm_mig_profile a100_40gb[] = {
	{ "1g.5gb", 19, 1, 1, 7, 4864, 14, 1, 0, 0, 0, 0 },
	{ "2g.10gb", 14, 2, 2, 3, 9984, 28, 2, 1, 0, 0, 0 },
	{ "3g.20gb", 9, 3, 4, 2, 20096, 42, 3, 2, 0, 0, 0 },
	{ "4g.20gb", 5, 4, 4, 1, 20096, 56, 4, 2, 0, 0, 0 },
	{ "7g.40gb", 0, 7, 8, 1, 40320, 98, 7, 5, 0, 1, 1 },
	{ 0 },
};
static const struct nvm_mig_profile a100_80gb[] = {
	{ "1g.10gb", 19, 1, 1, 7, 9856, 14, 1, 0, 0, 0, 0 },
	{ "1g.20gb", 15, 1, 2, 4, 19968, 14, 1, 1, 0, 0, 0 },
	{ "2g.20gb", 14, 2, 2, 3, 19968, 28, 2, 1, 0, 0, 0 },
	{ "3g.40gb", 9, 3, 4, 2, 40192, 42, 3, 2, 0, 0, 0 },
	{ "4g.40gb", 5, 4, 4, 1, 40192, 56, 4, 2, 0, 0, 0 },
	{ "7g.80gb", 0, 7, 8, 1, 80896, 98, 7, 5, 0, 1, 1 },
	{ 0 },
};
static const struct nvm_mig_profile h100_80gb[] = {
	{ "1g.10gb", 19, 1, 1, 7, 9984, 16, 1, 1, 0, 1, 0 },
	{ "1g.20gb", 15, 1, 2, 4, 19968, 26, 1, 1, 0, 1, 0 },
	{ "2g.20gb", 14, 2, 2, 3, 19968, 32, 2, 2, 0, 2, 0 },
	{ "3g.40gb", 9, 3, 4, 2, 40320, 60, 3, 3, 0, 3, 0 },
	{ "4g.40gb", 5, 4, 4, 1, 40320, 64, 4, 4, 0, 4, 0 },
	{ "7g.80gb", 0, 7, 8, 1, 80896, 132, 8, 7, 0, 7, 1 },
	{ 0 },
};
/* The Hopper and Blackwell boards' figures are as nvidia-smi mig -lgip
 * prints them on those boards (driver 550 to 580); memory varies a little
 * between drivers. */
static const struct nvm_mig_profile h100_nvl[] = {
	{ "1g.12gb", 19, 1, 1, 7, 11008, 16, 1, 1, 0, 1, 0 },
	{ "1g.24gb", 15, 1, 2, 4, 22144, 26, 1, 1, 0, 1, 0 },
	{ "2g.24gb", 14, 2, 2, 3, 22144, 32, 2, 2, 0, 2, 0 },
	{ "3g.47gb", 9, 3, 4, 2, 47488, 60, 3, 3, 0, 3, 0 },
	{ "4g.47gb", 5, 4, 4, 1, 47488, 64, 4, 4, 0, 4, 0 },
	{ "7g.94gb", 0, 7, 8, 1, 95360, 132, 8, 7, 0, 7, 1 },
	{ 0 },
};
static const struct nvm_mig_profile gh200_96gb[] = {
	{ "1g.12gb", 19, 1, 1, 7, 11264, 16, 1, 1, 0, 1, 0 },
	{ "1g.24gb", 15, 1, 2, 4, 23552, 26, 1, 1, 0, 1, 0 },
	{ "2g.24gb", 14, 2, 2, 3, 23552, 32, 2, 2, 0, 2, 0 },
	{ "3g.48gb", 9, 3, 4, 2, 47616, 60, 3, 3, 0, 3, 0 },
	{ "4g.48gb", 5, 4, 4, 1, 47616, 64, 4, 4, 0, 4, 0 },
	{ "7g.96gb", 0, 7, 8, 1, 95232, 132, 8, 7, 0, 7, 1 },
	{ 0 },
};
static const struct nvm_mig_profile h200[] = {
	{ "1g.18gb", 19, 1, 1, 7, 16384, 16, 1, 1, 0, 1, 0 },
	{ "1g.35gb", 15, 1, 2, 4, 33024, 26, 1, 1, 0, 1, 0 },
	{ "2g.35gb", 14, 2, 2, 3, 33024, 32, 2, 2, 0, 2, 0 },
	{ "3g.71gb", 9, 3, 4, 2, 71168, 60, 3, 3, 0, 3, 0 },
	{ "4g.71gb", 5, 4, 4, 1, 71168, 64, 4, 4, 0, 4, 0 },
	{ "7g.141gb", 0, 7, 8, 1, 143104, 132, 8, 7, 0, 7, 1 },
	{ 0 },
};
static const struct nvm_mig_profile b200[] = {
	{ "1g.23gb", 19, 1, 1, 7, 20992, 18, 2, 1, 0, 1, 0 },
	{ "1g.45gb", 15, 1, 2, 4, 45312, 30, 2, 1, 0, 1, 0 },
	{ "2g.45gb", 14, 2, 2, 3, 45312, 36, 4, 2, 0, 2, 0 },
	{ "3g.90gb", 9, 3, 4, 2, 91136, 70, 6, 3, 0, 3, 0 },
	{ "4g.90gb", 5, 4, 4, 1, 91136, 72, 8, 4, 0, 4, 0 },
	{ "7g.180gb", 0, 7, 8, 1, 182784, 148, 16, 7, 0, 7, 1 },
	{ 0 },
};

/* The board's table, by the GPU's name as nvidia-smi gives it; NULL: not
 * MIG-capable here. GH200 144G and GB200 have none yet: their wider
 * profiles' memory and SMs are not known here. */
const struct nvm_mig_profile *mig_board_table(const char *name)
{
	if (strstr(name, "A100") && strstr(name, "40GB"))
		return a100_40gb;
	if (strstr(name, "A100") && strstr(name, "80GB"))
		return a100_80gb;
	if (strstr(name, "H100 NVL"))
		return h100_nvl;
	if (strstr(name, "H100") && strstr(name, "80GB"))
		return h100_80gb;
	if (strstr(name, "GH200")) /* the 96 GB GPU, with 120 or 480 GB of CPU memory */
		return strstr(name, "480GB") || strstr(name, "120GB") ? gh200_96gb : NULL;
	if (strstr(name, "GB200"))
		return NULL;
	if (strstr(name, "H200")) /* H200 SXM and H200 NVL */
		return h200;
	if (strstr(name, "B200"))
		return b200;
	return NULL;
}
