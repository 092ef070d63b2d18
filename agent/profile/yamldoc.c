#include "profile/yamldoc.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/log.h"

int ydoc_load(struct ydoc *y, const char *file, const char *text, size_t len)
{
	yaml_parser_t parser;
	int ok;

	memset(y, 0, sizeof(*y));
	y->file = file;
	if (!yaml_parser_initialize(&parser))
		return nvm_err_r(-1, "%s: cannot initialise the YAML parser", file);
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	ok = yaml_parser_load(&parser, &y->doc);
	if (!ok) {
		nvm_err("%s:%zu:%zu: not valid YAML: %s%s%s", file,
			parser.problem_mark.line + 1, parser.problem_mark.column + 1,
			parser.problem ? parser.problem : "parse error",
			parser.context ? " " : "", parser.context ? parser.context : "");
		yaml_parser_delete(&parser);
		return -1;
	}
	yaml_parser_delete(&parser);
	y->loaded = true;
	if (!yaml_document_get_root_node(&y->doc)) {
		ydoc_fail(y, NULL, "(document)", "the file is empty");
		ydoc_free(y);
		return -1;
	}
	return 0;
}

void ydoc_free(struct ydoc *y)
{
	if (y->loaded)
		yaml_document_delete(&y->doc);
	y->loaded = false;
}

yaml_node_t *ydoc_root(struct ydoc *y)
{
	return yaml_document_get_root_node(&y->doc);
}

int ydoc_fail(struct ydoc *y, const yaml_node_t *n, const char *path,
	      const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	nvm_err("%s:%zu:%zu: %s: %s", y->file, n ? n->start_mark.line + 1 : 1,
		n ? n->start_mark.column + 1 : 1, path, msg);
	return -1;
}

bool ydoc_is_map(const yaml_node_t *n) { return n && n->type == YAML_MAPPING_NODE; }
bool ydoc_is_seq(const yaml_node_t *n) { return n && n->type == YAML_SEQUENCE_NODE; }

static const char *scalar(const yaml_node_t *n)
{
	return (const char *)n->data.scalar.value;
}

bool ydoc_is_null(const yaml_node_t *n)
{
	if (!n)
		return true;
	if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return false;
	return !*scalar(n) || !strcmp(scalar(n), "~") || !strcasecmp(scalar(n), "null");
}

yaml_node_t *ydoc_get(struct ydoc *y, yaml_node_t *map, const char *key)
{
	yaml_node_pair_t *p;

	if (!ydoc_is_map(map))
		return NULL;
	for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(&y->doc, p->key);

		if (k && k->type == YAML_SCALAR_NODE && !strcmp(scalar(k), key)) {
			yaml_node_t *v = yaml_document_get_node(&y->doc, p->value);

			return ydoc_is_null(v) ? NULL : v;
		}
	}
	return NULL;
}

int ydoc_only_keys(struct ydoc *y, yaml_node_t *map, const char *path, const char *const *allowed)
{
	yaml_node_pair_t *p;

	if (!ydoc_is_map(map))
		return ydoc_fail(y, map, path, "expected a mapping");
	for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(&y->doc, p->key);
		bool known = false;

		for (const char *const *a = allowed; *a && !known; a++)
			known = k && k->type == YAML_SCALAR_NODE && !strcmp(scalar(k), *a);
		if (!known)
			return ydoc_fail(y, k, path, "unknown key \"%s\"",
					 k && k->type == YAML_SCALAR_NODE ? scalar(k) : "?");
	}
	return 0;
}

size_t ydoc_seq_len(const yaml_node_t *seq)
{
	if (!ydoc_is_seq(seq))
		return 0;
	return seq->data.sequence.items.top - seq->data.sequence.items.start;
}

yaml_node_t *ydoc_seq_at(struct ydoc *y, yaml_node_t *seq, size_t i)
{
	return yaml_document_get_node(&y->doc, seq->data.sequence.items.start[i]);
}

static int want_scalar(struct ydoc *y, yaml_node_t *n, const char *path,
		       const char *what)
{
	if (n->type == YAML_SCALAR_NODE)
		return 0;
	return ydoc_fail(y, n, path, "expected %s, found a %s", what,
			 n->type == YAML_MAPPING_NODE ? "mapping" : "list");
}

int ydoc_str(struct ydoc *y, yaml_node_t *n, const char *path, char *buf,
	     size_t len)
{
	if (want_scalar(y, n, path, "a string"))
		return -1;
	if (n->data.scalar.length >= len)
		return ydoc_fail(y, n, path, "longer than %zu characters", len - 1);
	memcpy(buf, scalar(n), n->data.scalar.length + 1);
	return 0;
}

int ydoc_uint(struct ydoc *y, yaml_node_t *n, const char *path, uint64_t max,
	      uint64_t *out)
{
	const char *s;
	char *end;
	unsigned long long v;

	if (want_scalar(y, n, path, "an unsigned integer"))
		return -1;
	s = scalar(n);
	if (!*s || *s == '-' || *s == '+' || *s == ' ')
		return ydoc_fail(y, n, path, "expected an unsigned integer, found \"%s\"", s);
	errno = 0;
	v = strtoull(s, &end, 0);
	if (*end || end == s)
		return ydoc_fail(y, n, path, "expected an unsigned integer, found \"%s\"", s);
	if (errno || v > max)
		return ydoc_fail(y, n, path, "%s is out of range (at most %llu)", s,
				 (unsigned long long)max);
	*out = v;
	return 0;
}

int ydoc_int(struct ydoc *y, yaml_node_t *n, const char *path, int64_t min,
	     int64_t max, int64_t *out)
{
	const char *s;
	char *end;
	long long v;

	if (want_scalar(y, n, path, "an integer"))
		return -1;
	s = scalar(n);
	errno = 0;
	v = strtoll(s, &end, 0);
	if (!*s || *end)
		return ydoc_fail(y, n, path, "expected an integer, found \"%s\"", s);
	if (errno || v < min || v > max)
		return ydoc_fail(y, n, path, "%s is out of range (%lld..%lld)", s,
				 (long long)min, (long long)max);
	*out = v;
	return 0;
}

int ydoc_bool(struct ydoc *y, yaml_node_t *n, const char *path, bool *out)
{
	static const char *const yes[] = { "true", "True", "TRUE" }, *const no[] = { "false", "False", "FALSE" };

	if (n->type == YAML_SCALAR_NODE && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE)
		for (size_t i = 0; i < 3; i++)
			if (!strcmp(scalar(n), yes[i]) || !strcmp(scalar(n), no[i])) {
				*out = !strcmp(scalar(n), yes[i]);
				return 0;
			}
	return ydoc_fail(y, n, path, "expected true or false");
}
