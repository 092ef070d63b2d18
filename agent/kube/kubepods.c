#include "kube/kubepods.h"

#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static bool is_uid(const char *s)
{
	if (strlen(s) != KUBE_UID_LEN)
		return false;
	for (int i = 0; i < KUBE_UID_LEN; i++) {
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;

		if (dash ? s[i] != '-' : !strchr("0123456789abcdef", s[i]))
			return false;
	}
	return true;
}

int kubepods_uid(const char *logs_dir, const char *ns, const char *name,
		 char uid[KUBE_UID_LEN + 1])
{
	char prefix[600];
	size_t plen = (size_t)snprintf(prefix, sizeof(prefix), "%s_%s_", ns, name);
	DIR *d = opendir(logs_dir);
	struct dirent *e;
	int r = -1;

	if (!d)
		return -1;
	while (r && (e = readdir(d)))
		if (!strncmp(e->d_name, prefix, plen) && is_uid(e->d_name + plen)) {
			memcpy(uid, e->d_name + plen, KUBE_UID_LEN + 1);
			r = 0;
		}
	closedir(d);
	return r;
}

static bool is_dir(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

int kubepods_cgroup(const char *root, const char *uid, char *path, size_t len)
{
	static const char *const qos[] = { "", "burstable", "besteffort" };
	char u[KUBE_UID_LEN + 1];

	for (int i = 0; i <= KUBE_UID_LEN; i++)
		u[i] = uid[i] == '-' ? '_' : uid[i];
	for (int q = 0; q < 3; q++) {
		const char *c = qos[q];

		if (*c)
			snprintf(path, len, "%s/kubepods.slice/kubepods-%s.slice/kubepods-%s-pod%s.slice",
				 root, c, c, u);
		else
			snprintf(path, len, "%s/kubepods.slice/kubepods-pod%s.slice", root, u);
		if (is_dir(path))
			return 0;
		snprintf(path, len, "%s/kubepods%s%s/pod%s", root, *c ? "/" : "", c, uid);
		if (is_dir(path))
			return 0;
	}
	return -1;
}

unsigned kubepods_parents(const char *root, char dirs[][4096], unsigned max)
{
	static const char *const rel[] = {
		"kubepods.slice", "kubepods.slice/kubepods-burstable.slice",
		"kubepods.slice/kubepods-besteffort.slice", "kubepods", "kubepods/burstable",
		"kubepods/besteffort",
	};
	unsigned n = 0;

	for (unsigned i = 0; i < sizeof(rel) / sizeof(rel[0]) && n < max; i++) {
		snprintf(dirs[n], 4096, "%s/%s", root, rel[i]);
		if (is_dir(dirs[n]))
			n++;
	}
	return n;
}
