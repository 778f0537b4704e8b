/* A small JSON reader and writer helpers for nfsattr's export/import and --json output:
 * enough of RFC 8259 for our documents (objects, arrays, strings with escapes, numbers,
 * literals), with errors that say where the input went wrong.  Tool-internal. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum json_type { JSON_NULL, JSON_BOOL, JSON_NUMBER, JSON_STRING, JSON_ARRAY, JSON_OBJECT };

struct json {
	enum json_type type;
	bool b;
	double num;
	char *str;		/* JSON_STRING */
	struct json **items;	/* JSON_ARRAY values, JSON_OBJECT values */
	char **keys;		/* JSON_OBJECT keys */
	size_t n;
};

/* Parse text (NUL-terminated); on error -EINVAL and "line L column C: reason" in err. */
int json_parse(const char *text, struct json **ret, char *err, size_t errlen);
void json_free(struct json *j);
/* Member of an object by key, NULL when absent or j is not an object. */
const struct json *json_get(const struct json *j, const char *key);

/* Write s as a JSON string literal. */
void json_print_string(FILE *f, const char *s);
