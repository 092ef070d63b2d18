/* Room for one more item in an array that grows by doubling, the one way
 * the agent's tables (targets, pods, cgroup walks, directory listings)
 * grow, so that none has a fixed limit but the one its owner sets. */
#ifndef NVM_GROW_H
#define NVM_GROW_H

#include <stdlib.h>

/* items (n used of *cap, each size bytes), made to hold at least n + 1,
 * starting at first: the array to use from now on (items itself when it
 * had room), or NULL when out of memory (items is then as it was). */
static inline void *grow_for_one(void *items, unsigned *cap, unsigned n, size_t size,
				 unsigned first)
{
	unsigned more = *cap ? 2 * *cap : first;
	void *grown;

	if (n < *cap)
		return items;
	if ((grown = realloc(items, (size_t)more * size)))
		*cap = more;
	return grown;
}

#endif
