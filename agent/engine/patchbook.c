#include "engine/patchbook.h"

#include <string.h>
#include <sys/mman.h>

struct patchbook *book_new_shared(void)
{
	/* Populated now: a page first touched under the book's lock would
	 * wait for the agent's memory-map lock, which the main thread may
	 * hold while a target keeps it off its CPU (see janitor.c). */
	void *p = mmap(NULL, sizeof(struct patchbook), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	return p == MAP_FAILED ? NULL : p; /* zeroed: n is 0 */
}

void book_free_shared(struct patchbook *b)
{
	if (b)
		munmap(b, sizeof(*b));
}

struct patch_rec *book_find(struct patchbook *b, uint64_t mm, uint64_t addr)
{
	for (unsigned i = 0; i < b->n; i++)
		if (b->r[i].mm == mm && b->r[i].addr == addr)
			return &b->r[i];
	return NULL;
}

struct patch_rec *book_add(struct patchbook *b, uint64_t mm, uint64_t addr)
{
	struct patch_rec *r = book_find(b, mm, addr);

	if (!r) {
		if (b->n >= NVM_BOOK_MAX)
			return NULL;
		r = &b->r[b->n++];
	}
	memset(r, 0, sizeof(*r));
	r->mm = mm;
	r->addr = addr;
	r->live = true;
	return r;
}

void book_retire(struct patch_rec *r, uint64_t now_ns)
{
	r->live = false;
	r->when_ns = now_ns;
}

void book_expire(struct patchbook *b, uint64_t now_ns, uint64_t keep_ns)
{
	for (unsigned i = 0; i < b->n;) {
		if (!b->r[i].live && now_ns - b->r[i].when_ns > keep_ns)
			b->r[i] = b->r[--b->n];
		else
			i++;
	}
}
