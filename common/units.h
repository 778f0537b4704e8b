/* The one value syntax of nfskeys for durations and sizes, in the configuration and on
 * the command line alike: a decimal number with an optional unit.  Durations: ms, s, m,
 * h, d (no unit: the key's own unit, which its documentation names); sizes: K, M, G, T
 * (KB/KiB... too, any case; powers of 1024; no unit: bytes).  Header only, libc only
 * (the lean nfskeys-upcall uses it). */
#pragma once

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* The leading decimal number of s; *ret_unit points after it.  -EINVAL when s does not
 * start with a digit, -ERANGE when it overflows. */
static inline int units_number(const char *s, uint64_t *ret, const char **ret_unit)
{
	uint64_t v = 0;

	if (!s || !isdigit((unsigned char)*s))
		return -EINVAL;
	for (; isdigit((unsigned char)*s); s++) {
		if (v > (UINT64_MAX - 9) / 10)
			return -ERANGE;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*ret = v;
	*ret_unit = s;
	return 0;
}

/* A duration in units of unit_ms milliseconds (1000 for seconds), rounded up: "30",
 * "30s", "500ms", "5m", "1h", "2d".  -EINVAL (no number, unknown unit, *ret_bad_unit then
 * names the unit when there was one), -ERANGE. */
static inline int units_parse_duration(const char *s, uint64_t unit_ms, uint64_t *ret,
				       const char **ret_bad_unit)
{
	static const struct {
		const char *name;
		uint64_t ms;
	} units[] = { { "ms", 1 }, { "s", 1000 }, { "m", 60000 }, { "h", 3600000 },
		      { "d", 86400000 } };
	const char *unit;
	uint64_t v, ms = unit_ms;
	int r;

	if (ret_bad_unit)
		*ret_bad_unit = NULL;
	r = units_number(s, &v, &unit);
	if (r < 0)
		return r;
	if (*unit) {
		ms = 0;
		for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
			if (!strcmp(unit, units[i].name))
				ms = units[i].ms;
		if (!ms) {
			if (ret_bad_unit)
				*ret_bad_unit = unit;
			return -EINVAL;
		}
	}
	if (v && ms > UINT64_MAX / v)
		return -ERANGE;
	v *= ms;
	*ret = (v + unit_ms - 1) / unit_ms;
	return 0;
}

/* A size in bytes: "4096", "64K", "1M", "2GiB".  -EINVAL (*ret_bad_unit as above),
 * -ERANGE. */
static inline int units_parse_size(const char *s, uint64_t *ret, const char **ret_bad_unit)
{
	static const struct {
		const char *name;
		unsigned shift;
	} units[] = {
		{ "B", 0 },   { "K", 10 },   { "KB", 10 }, { "KiB", 10 }, { "M", 20 },
		{ "MB", 20 }, { "MiB", 20 }, { "G", 30 },  { "GB", 30 },  { "GiB", 30 },
		{ "T", 40 },  { "TB", 40 },  { "TiB", 40 },
	};
	const char *unit;
	uint64_t v;
	int r, shift = 0;

	if (ret_bad_unit)
		*ret_bad_unit = NULL;
	r = units_number(s, &v, &unit);
	if (r < 0)
		return r;
	if (*unit) {
		shift = -1;
		for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
			if (!strcasecmp(unit, units[i].name)) /* k and K alike */
				shift = (int)units[i].shift;
		if (shift < 0) {
			if (ret_bad_unit)
				*ret_bad_unit = unit;
			return -EINVAL;
		}
	}
	if (v > (UINT64_MAX >> shift))
		return -ERANGE;
	*ret = v << shift;
	return 0;
}

/* A size in bytes as the man pages write it: 1M, not 1048576 (the largest unit that
 * divides it). */
static inline void units_size_text(uint64_t v, char *buf, size_t len)
{
	static const char units[] = "KMGT";
	int u = -1;

	while (v >= 1024 && v % 1024 == 0 && u < 3) {
		v /= 1024;
		u++;
	}
	if (u < 0)
		snprintf(buf, len, "%" PRIu64, v);
	else
		snprintf(buf, len, "%" PRIu64 "%c", v, units[u]);
}
