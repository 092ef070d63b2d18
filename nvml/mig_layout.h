/* The rules of a 7-slice board's MIG layout, as NVIDIA's MIG user guide
 * gives them: where a GPU instance may go and which id the driver gives
 * it, which compute instances a GPU instance of s slices can hold, and
 * the NVML enum values of both kinds of profile. Shared by the agent,
 * which places the profile's instances and changes them at runtime, and
 * nvmirage's NVML, which answers the profile, placement and capacity
 * calls from the same rules. */
#ifndef NVM_MIG_LAYOUT_H
#define NVM_MIG_LAYOUT_H

#include <stdbool.h>

#define NVM_MIG_UNITS 8  /* memory units: placements count in them */
#define NVM_MIG_SLICES 7 /* compute slices */

/* The memory units a GPU instance of size units at start takes. */
static inline unsigned nvm_mig_mask(unsigned size, unsigned start)
{
	return ((1u << size) - 1) << start;
}

/* GPU instance ids by placement, as a 7-slice board numbers them: the
 * whole board 0, the halves 1-2, the quarters 3-5 (6 would be the last
 * quarter, which no 7-slice profile can take), the eighths 7-13. */
static inline unsigned nvm_mig_gi_id(unsigned size, unsigned start)
{
	switch (size) {
	case 8: return 0;
	case 4: return 1 + start / 4;
	case 2: return 3 + start / 2;
	default: return 7 + start;
	}
}

/* Where the driver puts an instance of a profile of size units with
 * starts placements (0, size, 2*size, ...) when the units in used are
 * taken: a profile of half the board or more at the highest free
 * placement, a narrower one at the lowest, which leaves the most room.
 * want >= 0 asks for that start only. -1: nowhere. */
static inline int nvm_mig_place(unsigned used, unsigned size, unsigned starts, int want)
{
	for (unsigned k = 0; k < starts; k++) {
		unsigned pick = size >= 4 ? starts - 1 - k : k, s = pick * size;

		if ((want < 0 || (unsigned)want == s) && !(used & nvm_mig_mask(size, s)))
			return (int)s;
	}
	return -1;
}

/* NVML_GPU_INSTANCE_PROFILE_* of a profile of slices and size: the
 * 1-slice profile with two memory units is 1_SLICE_REV2 (9). */
static inline unsigned nvm_mig_gi_enum(unsigned slices, unsigned size)
{
	switch (slices) {
	case 1: return size == 2 ? 9 : 0;
	case 2: return 1;
	case 3: return 2;
	case 4: return 3;
	default: return 4;
	}
}

/* NVML_COMPUTE_INSTANCE_PROFILE_* of c slices (1, 2, 3, 4, 7). */
static inline unsigned nvm_mig_ci_enum(unsigned c)
{
	return c == 7 ? 4 : c - 1;
}

/* Whether a GPU instance of s slices holds compute instances of c
 * slices: 1, 2, 3 or 4 that fit, or all of it; a 4-slice instance has no
 * 3-slice one. */
static inline bool nvm_mig_ci_allowed(unsigned s, unsigned c)
{
	if (c == s)
		return true;
	return c >= 1 && c <= 4 && c < s && !(s == 4 && c == 3);
}

/* A compute instance of c slices starts at a multiple of the power of
 * two at or above c (3 slices at 0 or 4), inside its GPU instance. */
static inline unsigned nvm_mig_ci_align(unsigned c)
{
	unsigned a = 1;

	while (a < c)
		a *= 2;
	return a;
}

/* How many placements a compute instance of c slices has in a GPU
 * instance of s. */
static inline unsigned nvm_mig_ci_starts(unsigned s, unsigned c)
{
	return (s - c) / nvm_mig_ci_align(c) + 1;
}

/* Where a compute instance of c slices goes in a GPU instance of s whose
 * slices in used are taken: the lowest free placement, or want only when
 * want >= 0. -1: nowhere (or c is not one of the GPU instance's). */
static inline int nvm_mig_ci_place(unsigned used, unsigned s, unsigned c, int want)
{
	if (!nvm_mig_ci_allowed(s, c))
		return -1;
	for (unsigned k = 0; k < nvm_mig_ci_starts(s, c); k++) {
		unsigned at = k * nvm_mig_ci_align(c);

		if ((want < 0 || (unsigned)want == at) && !(used & nvm_mig_mask(c, at)))
			return (int)at;
	}
	return -1;
}

#endif
