/* Rule matching: the rule whose prefix a path starts with, at a '/'
 * boundary, with repeated '/' folded; the same rules as agent/render/rules.c
 * matches with rules_match (a table of paths runs through both, see
 * tests/kernel/match.c).
 *
 * Part of redirect.bpf.c, which defines, before including it, the rules map, struct scratch and
 * unknown_zero. */
#ifndef NVM_MATCH_BPF_H
#define NVM_MATCH_BPF_H

/* Finds the rule whose prefix the path starts with, at a '/' boundary, with
 * repeated '/' folded. The rules map also holds every shorter prefix of a
 * rule (value NVM_RULE_PREFIX), so a path leaves at its first component that
 * no rule has: most paths cost one lookup. One character per bpf_loop step,
 * so the verifier checks the step once, not every path through 72 of them. */
struct match_ctx {
	struct scratch *sc;
	__u32 klen;
	__u32 rule;
	__u32 span;
	int state; /* 0 scanning, 1 matched, 2 exact checked, 3 alias, -1 no match */
};

static long match_step(__u64 i, void *data)
{
	struct match_ctx *m = data;
	struct nvm_rule_key *k = &m->sc->key;
	__u32 j = (__u32)i, klen = m->klen;
	char c;

	if (j >= NVM_PATH_READ)
		return 1;
	c = m->sc->path[j & 127];
	if (m->state == 1) {
		/* After the prefix: only '/' up to the end means "exact". */
		if (c == '\0') {
			m->state = 2;
			return 1;
		}
		if (c != '/')
			return 1;
		return 0;
	}
	/* A repeated '/' folds into the one before, as the kernel's own
	 * lookup folds it: before the lookup, whose key has no '/' at its end. */
	if (c == '/' && klen && k->s[(klen - 1) & (NVM_FROM_MAX - 1)] == '/')
		return 0;
	if ((c == '/' || c == '\0') && klen > 1) {
		__u32 *r;

		k->len = klen;
		r = bpf_map_lookup_elem(&rules, k);
		if (!r) {
			m->state = -1;
			return 1;
		}
		if (*r == NVM_RULE_ALIAS) {
			m->state = 3;
			return 1;
		}
		if (*r != NVM_RULE_PREFIX) {
			m->rule = *r;
			m->span = j;
			m->state = 1;
			if (c == '\0') {
				m->state = 2;
				return 1;
			}
			return 0;
		}
	}
	if (c == '\0' || klen >= NVM_FROM_MAX - 1) {
		m->state = -1;
		return 1;
	}
	k->s[klen & (NVM_FROM_MAX - 1)] = c;
	m->klen = klen + 1;
	return 0;
}

enum match { M_NONE, M_RULE, M_ALIAS };

/* M_ALIAS: the path is already under the tree root, e.g. a string another
 * thread of this address space has patched. */
static __always_inline enum match match_rule(struct scratch *sc, __u32 *rule,
					     __u32 *span, __u32 *flags)
{
	struct match_ctx m = { .sc = sc, .klen = unknown_zero, .rule = unknown_zero,
			       .span = unknown_zero, .state = (int)unknown_zero };

	if (sc->path[0] != '/')
		return M_NONE;
	__builtin_memset(&sc->key, 0, sizeof(sc->key));
	bpf_loop(NVM_PATH_READ, match_step, &m, 0);
	if (m.state == 3)
		return M_ALIAS;
	if (m.state <= 0)
		return M_NONE;
	*rule = m.rule & ~NVM_RULE_EXEC;
	*span = m.span;
	*flags = (m.state == 2 ? NVM_REQ_EXACT : 0) | (m.rule & NVM_RULE_EXEC ? NVM_REQ_EXEC_OK : 0);
	return M_RULE;
}

#endif
