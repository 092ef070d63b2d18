/* The rules as the kernel side looks them up: the rules map (every rule's
 * prefix, and the shorter prefixes on the way to it), first_chars, and each
 * rule's replacements for the in-kernel rewrite. */
#include "engine/rules_map.h"

#include <errno.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "lib/log.h"
#include "redirect.h"
#include "redirect.skel.h"

_Static_assert(NVM_RULE_FROM_MAX == NVM_FROM_MAX,
	       "a rule's prefix fits the kernel side's rule keys, NUL included");

/* Puts path in the rules map with value v, and every shorter '/'-boundary
 * prefix of it as a prefix marker, so the kernel side can stop at the first
 * component nothing has. */
static int add_path(int fd, const char *path, __u32 v)
{
	size_t len = strlen(path);

	for (size_t j = 2; j <= len; j++) {
		struct nvm_rule_key k = { 0 };
		__u32 val = j == len ? v : NVM_RULE_PREFIX, old;

		if (j < len && path[j] != '/')
			continue;
		k.len = (__u32)j;
		memcpy(k.s, path, j);
		/* A rule (or the root) wins over a prefix marker of the same bytes. */
		if (val == NVM_RULE_PREFIX && bpf_map_lookup_elem(fd, &k, &old) == 0)
			continue;
		if (bpf_map_update_elem(fd, &k, &val, BPF_ANY))
			return nvm_err_r(-1, "rules map: %s", strerror(errno));
	}
	return 0;
}

static void add_first_char(struct redirect_bpf *skel, unsigned char c)
{
	skel->bss->first_chars[c >> 5] |= 1u << (c & 31);
}

/* Every rule, and the tree root (paths already rewritten to an alias). */
static int load_rules(struct redirect_bpf *skel, const struct nvm_rules *rules, const char *root)
{
	int fd = bpf_map__fd(skel->maps.rules);

	add_first_char(skel, '/');
	add_first_char(skel, (unsigned char)root[1]);
	for (unsigned i = 0; i < rules->n; i++) {
		add_first_char(skel, (unsigned char)rules->r[i].from[1]);
		if (add_path(fd, rules->r[i].from, i | (rules->r[i].exec ? NVM_RULE_EXEC : 0)))
			return -1;
	}
	return add_path(fd, root, NVM_RULE_ALIAS);
}

/* Each rule's replacements for the in-kernel rewrite (see struct nvm_alias). */
static int load_aliases(struct redirect_bpf *skel, const struct nvm_rules *rules)
{
	int fd = bpf_map__fd(skel->maps.aliases);

	if (rules->n > NVM_MAX_RULES)
		return nvm_err_r(-1, "%u rules; the in-kernel rewrite handles at most %d",
				 rules->n, NVM_MAX_RULES);
	for (__u32 i = 0; i < rules->n; i++) {
		const struct nvm_rule *r = &rules->r[i];
		struct nvm_alias a = { 0 };

		for (int v = 0; v < 2; v++) {
			a.need[v] = rules_replacement_len(r, v);
			if (rules_replacement(r, NVM_ALIAS_END, v, a.tail[v]))
				return nvm_err_r(-1, "rule %s: alias %s too long", r->from, r->alias);
		}
		if (bpf_map_update_elem(fd, &i, &a, BPF_ANY))
			return nvm_err_r(-1, "aliases map: %s", strerror(errno));
	}
	return 0;
}

int rules_map_load(struct redirect_bpf *skel, const struct nvm_rules *rules, const char *root)
{
	if (load_rules(skel, rules, root) || load_aliases(skel, rules))
		return -1;
	return 0;
}
