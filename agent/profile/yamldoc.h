/* A loaded YAML document with typed, position-aware accessors.
 * Every failing accessor reports "FILE:LINE:COL: key.path: what is wrong". */
#ifndef NVM_YAMLDOC_H
#define NVM_YAMLDOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yaml.h>

struct ydoc {
	yaml_document_t doc;
	const char *file;
	bool loaded;
};

/* Loads text (len bytes) as one YAML document. Returns 0, or -1 (reported,
 * nothing left to free). */
int ydoc_load(struct ydoc *y, const char *file, const char *text, size_t len);
void ydoc_free(struct ydoc *y);
yaml_node_t *ydoc_root(struct ydoc *y);

/* Reports an error at node n (or at the top of the file when n is NULL).
 * Always returns -1. */
int ydoc_fail(struct ydoc *y, const yaml_node_t *n, const char *path,
	      const char *fmt, ...) __attribute__((format(printf, 4, 5)));

bool ydoc_is_map(const yaml_node_t *n);
bool ydoc_is_seq(const yaml_node_t *n);
/* A scalar that is empty, "~" or "null" counts as absent. */
bool ydoc_is_null(const yaml_node_t *n);

/* The value of key in mapping map; NULL when map is NULL, not a mapping, or
 * has no such key (or the value is null). */
yaml_node_t *ydoc_get(struct ydoc *y, yaml_node_t *map, const char *key);

/* map is a mapping whose keys are all in allowed (NULL-terminated);
 * else reported at the first other key. */
int ydoc_only_keys(struct ydoc *y, yaml_node_t *map, const char *path, const char *const *allowed);

size_t ydoc_seq_len(const yaml_node_t *seq);
yaml_node_t *ydoc_seq_at(struct ydoc *y, yaml_node_t *seq, size_t i);

/* Typed reads of a present node; path names it in errors. */
int ydoc_str(struct ydoc *y, yaml_node_t *n, const char *path, char *buf,
	     size_t len);
/* Decimal or 0x-hex, quoted or not, at most max. */
int ydoc_uint(struct ydoc *y, yaml_node_t *n, const char *path, uint64_t max,
	      uint64_t *out);
int ydoc_int(struct ydoc *y, yaml_node_t *n, const char *path, int64_t min,
	     int64_t max, int64_t *out);
/* true or false (YAML's spellings: true, True, TRUE, false, ...), unquoted. */
int ydoc_bool(struct ydoc *y, yaml_node_t *n, const char *path, bool *out);

#endif
