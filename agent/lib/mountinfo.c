#include "lib/mountinfo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool mountinfo_has_opt(const char *list, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = list; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
		if (!strncmp(p, word, n) && (p[n] == ',' || p[n] == '\0'))
			return true;
	return false;
}

/* "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue":
 * the root within the file system and the mount point are the fourth and
 * fifth fields; after " - " come the type, the source and the super
 * options. */
static bool parse(const char *line, struct mount_entry *e)
{
	const char *dash = strstr(line, " - ");

	return dash && sscanf(line, "%*s %*s %*s %4095s %4095s", e->root, e->point) == 2 &&
	       sscanf(dash, " - %63s %255s %511s", e->fstype, e->source, e->super_opts) == 3;
}

int mountinfo_find(bool (*want)(const struct mount_entry *e, void *ctx), void *ctx,
		   struct mount_entry *out)
{
	FILE *f = fopen("/proc/self/mountinfo", "r");
	char line[8192];
	int found = -1;

	if (!f)
		return -1;
	while (found < 0 && fgets(line, sizeof(line), f))
		if (parse(line, out) && want(out, ctx))
			found = 0;
	fclose(f);
	return found;
}
