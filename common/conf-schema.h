/* The typed configuration schema: one row per (section, key) with its type, bounds,
 * default and a line of description.  The load's typo warnings and bad-value messages,
 * the typed getter, --help-config and the man page's key list all come from it.  Built
 * into libcommon (libc only) so that the daemons and tools, which link the public
 * libnfskeys.so, read the same table as the library. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum conf_type {
	CONF_STRING,   /* any text */
	CONF_LIST,     /* words separated by blanks or commas */
	CONF_PATH,     /* an absolute path; empty: unset */
	CONF_BOOL,     /* yes/no, true/false, on/off, 1/0 */
	CONF_INT,      /* a decimal number from min to max */
	CONF_DURATION, /* a number with ms, s, m, h or d; bare: unit_ms; min..max in unit_ms */
	CONF_SIZE,     /* a number with K, M, G or T (powers of 1024); bare: bytes */
	CONF_ENUM,     /* one of values ("a|b|c"), any case */
	CONF_TABLE,    /* key "*" or "PREFIX*": the keys are data ([Static]) */
};

struct conf_key_def {
	const char *section;
	const char *key;
	enum conf_type type;
	int64_t min, max;    /* CONF_INT, CONF_DURATION (in unit_ms), CONF_SIZE (bytes) */
	unsigned unit_ms;    /* CONF_DURATION: 1000 (seconds) or 1 (milliseconds) */
	const char *values;  /* CONF_ENUM */
	const char *def;     /* as written in the file; "(...)" a computed default; NULL none */
	const char *desc;
};

/* Is [section] key known?  1 known, 0 unknown key, -1 unknown section. */
int conf_schema_check(const char *section, const char *key);

/* The row of (section, key) (a table row when a "*" row covers it), or NULL. */
const struct conf_key_def *conf_schema_find(const char *section, const char *key);

/* All rows, in table order; *ret_n gets their number. */
const struct conf_key_def *conf_schema_rows(size_t *ret_n);

/* Parse value as row d says: bools give 0/1, enums the index in values, numbers their
 * value (durations in d->unit_ms), text 0.  On error (-EINVAL, -ERANGE) err says
 * "[Section] Key = value: expected ...", naming the bounds. */
int conf_value_parse(const struct conf_key_def *d, const char *value, int64_t *ret, char *err,
		     size_t errlen);

/* "a duration from 1 to 86400 s", "yes or no", ...: what d accepts. */
void conf_schema_expect(const struct conf_key_def *d, char *buf, size_t len);

/* The type's name in --help-config and the man page: "duration", "size", ... */
const char *conf_type_name(const struct conf_key_def *d);

/* Print the rows of the sections listed in sections (blank-separated; NULL: all) as
 * "[Section] Key  type  default  description" lines; needs no configuration. */
void conf_schema_print(FILE *f, const char *sections);
