/* The typed getter over the schema (conf-schema.h) for code that holds a context: the
 * library, the daemons, the tools and plugins.  Header only: libcommon, which carries the
 * table, does not link libnfskeys. */
#pragma once

#include <errno.h>
#include <stdbool.h>

#include "conf-schema.h"
#include "nfskeys.h"

/* The value of a typed (section, key) from ctx: the file's value, else the table's
 * default.  0 on success, -ENOENT when unset with no default, -ENOKEY when the schema has
 * no such row (a programming error), else the parse error with err filled. */
static inline int conf_get_typed(const struct nfskeys_ctx *ctx, const char *section,
				 const char *key, int64_t *ret, char *err, size_t errlen)
{
	const struct conf_key_def *d = conf_schema_find(section, key);
	const char *v = nfskeys_conf_get(ctx, section, key);

	if (err && errlen)
		err[0] = '\0';
	if (!d || d->type == CONF_TABLE) {
		if (err && errlen)
			snprintf(err, errlen, "[%s] %s: not in the configuration schema", section,
				 key);
		return -ENOKEY;
	}
	if (!v)
		v = d->def && d->def[0] != '(' ? d->def : NULL;
	if (!v)
		return -ENOENT;
	return conf_value_parse(d, v, ret, err, errlen);
}

/* conf_get_typed() into an unsigned, for the rows whose bounds fit one: 0, or the error of
 * conf_get_typed() (err filled, "" when unset with no default). */
static inline int conf_get_unsigned(const struct nfskeys_ctx *ctx, const char *section,
				    const char *key, unsigned *ret, char *err, size_t errlen)
{
	int64_t v;
	int r = conf_get_typed(ctx, section, key, &v, err, errlen);

	if (r < 0)
		return r;
	*ret = (unsigned)v;
	return 0;
}

/* conf_get_typed() of a yes/no row into a bool: as conf_get_unsigned(). */
static inline int conf_get_bool(const struct nfskeys_ctx *ctx, const char *section,
				const char *key, bool *ret, char *err, size_t errlen)
{
	int64_t v;
	int r = conf_get_typed(ctx, section, key, &v, err, errlen);

	if (r < 0)
		return r;
	*ret = v != 0;
	return 0;
}

/* conf_get_typed() into an int, for the rows whose bounds fit one: as conf_get_unsigned(). */
static inline int conf_get_int(const struct nfskeys_ctx *ctx, const char *section,
			       const char *key, int *ret, char *err, size_t errlen)
{
	int64_t v;
	int r = conf_get_typed(ctx, section, key, &v, err, errlen);

	if (r < 0)
		return r;
	*ret = (int)v;
	return 0;
}
