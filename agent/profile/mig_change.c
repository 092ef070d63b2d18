/* Runtime changes to a GPU's MIG layout, as an admin makes them with
 * nvidia-smi mig -cgi and -dgi: each request is checked whole on a copy,
 * and the layout changes only if all of it fits. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mig_layout.h"
#include "profile/mig.h"

const struct nvm_mig_profile *mig_find_profile(const struct nvm_mig *mig, const char *name)
{
	char *end;
	unsigned long id = strtoul(name, &end, 10);
	bool numeric = end != name && !*end;

	for (const struct nvm_mig_profile *p = mig->table; p && p->name; p++)
		if (numeric ? p->id == id : !strcasecmp(p->name, name))
			return p;
	return NULL;
}

/* The board's profiles, for an error message: "1g.5gb (19), ..." */
static void list_profiles(const struct nvm_mig *mig, char *out, size_t len)
{
	size_t at = 0;

	out[0] = '\0';
	for (const struct nvm_mig_profile *p = mig->table; p && p->name && at < len; p++)
		at += (size_t)snprintf(out + at, len - at, "%s%s (%u)", at ? ", " : "", p->name,
				       p->id);
}

int mig_create(struct nvm_mig *mig, const char *list, char *why, size_t len)
{
	struct nvm_mig next = *mig;
	char copy[256], names[256], *save = NULL;

	if (!mig->table || !mig->enabled) {
		snprintf(why, len, mig->table ? "MIG mode is disabled on this GPU (the profile's "
						"mig.mode_current turns it on)"
					      : "this GPU is not MIG-capable in nvmirage's tables");
		return -1;
	}
	snprintf(copy, sizeof(copy), "%s", list);
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(tok, ':'), *end;
		const struct nvm_mig_profile *p;
		const char *err;
		long start = -1;

		if (colon) {
			*colon = '\0';
			errno = 0;
			start = strtol(colon + 1, &end, 10);
			if (errno || end == colon + 1 || *end || start < 0 || start >= NVM_MIG_UNITS) {
				snprintf(why, len, "%s: \"%s\" is not a placement start (0..7)", tok,
					 colon + 1);
				return -1;
			}
		}
		if (!(p = mig_find_profile(&next, tok))) {
			list_profiles(mig, names, sizeof(names));
			snprintf(why, len, "\"%s\": not a GPU instance profile of this board (%s)", tok,
				 names);
			return -1;
		}
		if ((err = mig_add_instance(&next, p, (int)start))) {
			snprintf(why, len, "%s: %s", p->name, err);
			return -1;
		}
	}
	if (next.ngi == mig->ngi) {
		snprintf(why, len, "no profile given");
		return -1;
	}
	mig_sort(&next);
	*mig = next;
	return 0;
}

int mig_destroy(struct nvm_mig *mig, const char *list, char *why, size_t len)
{
	struct nvm_mig next = *mig;
	char copy[256], *save = NULL;

	if (!mig->table || !mig->enabled) {
		snprintf(why, len, "MIG mode is disabled on this GPU");
		return -1;
	}
	if (!strcmp(list, "all")) {
		mig->ngi = 0;
		return 0;
	}
	snprintf(copy, sizeof(copy), "%s", list);
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *end;
		unsigned long id = strtoul(tok, &end, 10);
		unsigned k = 0;

		while (k < next.ngi && (end == tok || *end || next.gi[k].id != id))
			k++;
		if (k == next.ngi) {
			snprintf(why, len, "\"%s\": no GPU instance with that id", tok);
			return -1;
		}
		next.gi[k] = next.gi[--next.ngi];
	}
	if (next.ngi == mig->ngi) {
		snprintf(why, len, "no GPU instance id given");
		return -1;
	}
	mig_sort(&next);
	*mig = next;
	return 0;
}

void mig_describe(const struct nvm_mig *mig, char *out, size_t len)
{
	size_t at = 0;

	out[0] = '\0';
	for (unsigned k = 0; k < mig->ngi && at < len; k++) {
		const struct nvm_mig_gi *gi = &mig->gi[k];

		at += (size_t)snprintf(out + at, len - at, "%s%s@%u(gi%u)", k ? " " : "",
				       gi->profile->name, gi->start, gi->id);
		/* Compute instances, unless the one spanning it. */
		for (unsigned c = 0; at < len && gi->ci[0].slices != gi->profile->slices && c < gi->nci;
		     c++) {
			char name[32];

			mig_compute_name(gi, &gi->ci[c], name, sizeof(name));
			at += (size_t)snprintf(out + at, len - at, "%sci%u %s@%u%s", c ? ", " : "[",
					       gi->ci[c].id, name, gi->ci[c].start,
					       c + 1 == gi->nci ? "]" : "");
		}
	}
	if (!mig->ngi)
		snprintf(out, len, "no instances");
}
