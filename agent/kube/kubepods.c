#include "kube/kubepods.h"

#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>

#include "lib/grow.h"

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

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int kubepods_logs_read(struct kubepods_logs *l, const char *logs_dir)
{
	DIR *d = opendir(logs_dir);
	struct dirent *e;

	for (unsigned i = 0; i < l->n; i++)
		free(l->names[i]);
	l->n = 0;
	if (!d)
		return -1;
	while ((e = readdir(d))) {
		void *grown;

		if (e->d_name[0] == '.')
			continue;
		if (!(grown = grow_for_one(l->names, &l->cap, l->n, sizeof(*l->names), 64)))
			break;
		l->names = grown;
		if (!(l->names[l->n] = strdup(e->d_name)))
			break;
		l->n++;
	}
	closedir(d);
	if (l->n)
		qsort(l->names, l->n, sizeof(*l->names), by_name);
	return 0;
}

const char *kubepods_logs_uid(const struct kubepods_logs *l, const char *ns, const char *name,
			      unsigned i)
{
	char prefix[600];
	size_t plen = (size_t)snprintf(prefix, sizeof(prefix), "%s_%s_", ns, name);
	unsigned lo = 0, hi = l->n;

	if (plen >= sizeof(prefix))
		return NULL;
	/* The first name not below the prefix: those with it follow. */
	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;

		if (strcmp(l->names[mid], prefix) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < l->n && !strncmp(l->names[lo], prefix, plen); lo++)
		if (is_uid(l->names[lo] + plen) && i-- == 0)
			return l->names[lo] + plen;
	return NULL;
}

void kubepods_logs_free(struct kubepods_logs *l)
{
	for (unsigned i = 0; i < l->n; i++)
		free(l->names[i]);
	free(l->names);
	memset(l, 0, sizeof(*l));
}

/* kubepods<...>-pod<uid_>.slice (systemd) or pod<uid> (cgroupfs). */
int kubepods_name_uid(const char *name, char uid[KUBE_UID_LEN + 1])
{
	size_t n = strlen(name);
	const char *u;
	bool slice = n > 6 && !strcmp(name + n - 6, ".slice");

	if (slice) {
		if (n < 6 + KUBE_UID_LEN + 4)
			return -1;
		u = name + n - 6 - KUBE_UID_LEN;
		if (strncmp(u - 4, "-pod", 4))
			return -1;
	} else if (n == 3 + KUBE_UID_LEN && !strncmp(name, "pod", 3)) {
		u = name + 3;
	} else {
		return -1;
	}
	/* systemd escapes '-' in unit names as '_'. */
	for (int i = 0; i < KUBE_UID_LEN; i++)
		uid[i] = slice && u[i] == '_' ? '-' : u[i];
	uid[KUBE_UID_LEN] = '\0';
	return is_uid(uid) ? 0 : -1;
}

#define NEAR_ROOT 2   /* levels below root where a kubepods directory may start */
#define MAX_DEPTH 8
#define MAX_DIRS 4096 /* directories gone down in one walk, at most */

static void add_pod(struct kubepods *k, const char *uid, const char *path)
{
	void *grown = grow_for_one(k->e, &k->cap, k->n, sizeof(*k->e), 64);

	if (!grown)
		return;
	k->e = grown;
	memcpy(k->e[k->n].uid, uid, sizeof(k->e[k->n].uid));
	snprintf(k->e[k->n].path, sizeof(k->e[k->n].path), "%s", path);
	k->n++;
}

static void walk(struct kubepods *k, const char *dir, int depth, bool in_kubepods, int ifd)
{
	struct dirent *e;
	DIR *d;

	if (depth > MAX_DEPTH || k->dirs >= MAX_DIRS || !(d = opendir(dir)))
		return;
	k->dirs++;
	if (ifd >= 0)
		inotify_add_watch(ifd, dir, IN_CREATE | IN_DELETE | IN_ONLYDIR);
	while ((e = readdir(d))) {
		char path[4096], uid[KUBE_UID_LEN + 1];
		bool kp;

		if (e->d_type != DT_DIR || e->d_name[0] == '.')
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >= (int)sizeof(path))
			continue;
		if (!kubepods_name_uid(e->d_name, uid)) {
			add_pod(k, uid, path);
			continue; /* its containers are not pods */
		}
		/* Below a kubepods directory everything that is not a pod
		 * is a QoS class; near root, look for where kubepods starts. */
		kp = in_kubepods || strstr(e->d_name, "kubepods");
		if (kp || depth + 1 < NEAR_ROOT)
			walk(k, path, depth + 1, kp, ifd);
	}
	closedir(d);
}

static int by_uid(const void *a, const void *b)
{
	return strcmp(((const struct kubepods_entry *)a)->uid,
		      ((const struct kubepods_entry *)b)->uid);
}

int kubepods_scan(struct kubepods *k, const char *root, int inotify_fd)
{
	struct stat st;

	k->n = 0;
	k->dirs = 0;
	if (stat(root, &st) || !S_ISDIR(st.st_mode))
		return -1;
	walk(k, root, 0, false, inotify_fd);
	if (k->n)
		qsort(k->e, k->n, sizeof(*k->e), by_uid);
	return 0;
}

const char *kubepods_find(const struct kubepods *k, const char *uid)
{
	struct kubepods_entry key;
	const struct kubepods_entry *e;

	snprintf(key.uid, sizeof(key.uid), "%s", uid);
	e = k->n ? bsearch(&key, k->e, k->n, sizeof(*k->e), by_uid) : NULL;
	return e ? e->path : NULL;
}

void kubepods_free(struct kubepods *k)
{
	free(k->e);
	memset(k, 0, sizeof(*k));
}
