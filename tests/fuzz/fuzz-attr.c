/* libFuzzer target: directory attribute assignments (nfskeys_attr_policy_parse and
 * nfskeys_attr_check, libnfskeys/attr-model.c).  The input is a list of "key=value" lines
 * applied to one policy.  Beyond the sanitizers it checks every typed value against an
 * independent reading of the vocabulary (numbers, s/m/h and K/M/G/T suffixes, ranges,
 * enums), that canonical values parse back to themselves (parse -> format -> parse),
 * and that the policy holds exactly the last value of each key, sorted. */
#include <ctype.h>
#include <inttypes.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "macros.h"
#include "nfskeys.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_KEYS 64 /* ATTR_MAX_PER_DIR */

static void check(bool ok)
{
	if (!ok)
		abort();
}

enum kind { K_ENUM, K_SECONDS, K_BYTES };
static const struct {
	const char *name;
	enum kind kind;
	const char *values[4];
} vocab[] = {
	{ "cache", K_ENUM, { "none", "read", "full" } },
	{ "fscache", K_ENUM, { "on", "off" } },
	{ "actimeo", K_SECONDS, {} },
	{ "acregmin", K_SECONDS, {} },
	{ "acregmax", K_SECONDS, {} },
	{ "acdirmin", K_SECONDS, {} },
	{ "acdirmax", K_SECONDS, {} },
	{ "lookupcache", K_ENUM, { "all", "positive", "none" } },
	{ "cto", K_ENUM, { "on", "off" } },
	{ "writeback", K_ENUM, { "sync", "async", "throttled" } },
	{ "dirty_limit", K_BYTES, {} },
	{ "inherit", K_ENUM, { "yes", "no" } },
};

/* The expected outcome of key=value: -1 rejected, else 0 with the canonical value and
 * number.  Written from doc/DESIGN.md §6 and nfskeys-attr.h, not from the parser. */
static int expect(const char *key, const char *value, char *canon, size_t csize,
		  uint64_t *number, int *typed)
{
	*typed = -1;
	for (size_t i = 0; i < ARRAY_SIZE(vocab); i++) {
		unsigned long long v;
		char *end;

		if (!streq(key, vocab[i].name))
			continue;
		*typed = (int)i;
		if (vocab[i].kind == K_ENUM) {
			const char *val = value;

			if (i == NFSKEYS_ATTR_LOOKUPCACHE && strcasecmp(val, "pos") == 0)
				val = "positive";
			for (size_t j = 0; j < 4 && vocab[i].values[j]; j++)
				if (strcasecmp(val, vocab[i].values[j]) == 0) {
					snprintf(canon, csize, "%s", vocab[i].values[j]);
					*number = j;
					return 0;
				}
			return -1;
		}
		if (!isdigit((unsigned char)value[0]))
			return -1;
		errno = 0;
		v = strtoull(value, &end, 10);
		if (errno == ERANGE) {
			/* too many digits: refused whatever the unit */
			return -1;
		}
		if (vocab[i].kind == K_SECONDS) {
			unsigned long long mult = streq(end, "") || streq(end, "s") ? 1 :
						  streq(end, "m")		    ? 60 :
						  streq(end, "h")		    ? 3600 : 0;
			if (!mult || v > 86400 / mult)
				return -1;
			v *= mult;
		} else {
			static const char *const units[] = { "", "b", "k", "kb", "kib", "m", "mb",
							     "mib", "g", "gb", "gib", "t", "tb", "tib" };
			static const unsigned shift[] = { 0, 0, 10, 10, 10, 20, 20, 20, 30, 30, 30, 40, 40, 40 };
			int s = -1;

			for (size_t u = 0; u < ARRAY_SIZE(units); u++)
				if (strcasecmp(end, units[u]) == 0)
					s = (int)shift[u];
			if (s < 0 || v > ((1ULL << 40) >> s))
				return -1;
			v <<= s;
			if (v < 4096)
				return -1;
		}
		snprintf(canon, csize, "%llu", v);
		*number = v;
		return 0;
	}
	if (strncmp(key, "user.", 5) != 0)
		return -1;
	{
		size_t n = strlen(key + 5), vl = strlen(value);

		if (n == 0 || n > 64 || vl > 1024)
			return -1;
		for (const char *p = key + 5; *p; p++)
			if (!isalnum((unsigned char)*p) && !strchr("_-.", *p))
				return -1;
		for (const unsigned char *p = (const unsigned char *)value; *p; p++)
			if (*p < 0x20 || *p == 0x7f)
				return -1;
		snprintf(canon, csize, "%s", value);
		*number = 0;
		return 0;
	}
}

struct shadow {
	char key[80];
	char value[1100];
	uint64_t number;
	int typed;
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nfskeys_attr_policy *policy = NULL;
	static struct shadow sh[MAX_KEYS];
	size_t nsh = 0;
	char *text, *line, *save = NULL;
	static char canon[8192];

	/* 2 KiB hold more than the 64 attributes one directory may have */
	if (size > 2048)
		return 0;
	text = strndup((const char *)data, size);
	check(text != NULL);
	check(nfskeys_attr_policy_new(&policy) == 0);

	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char err[256] = "";
		char *eq = strchr(line, '=');
		const char *key, *value;
		struct nfskeys_attr_entry e;
		uint64_t number = 0;
		char *v = NULL, *v2 = NULL;
		int typed, want, r;
		size_t i;

		r = nfskeys_attr_policy_parse(policy, line, err, sizeof(err));
		if (!eq) {
			check(r == -EINVAL && err[0]);
			continue;
		}
		*eq = '\0';
		key = line;
		value = eq + 1;
		want = expect(key, value, canon, sizeof(canon), &number, &typed);
		for (i = 0; i < nsh && !streq(sh[i].key, key); i++)
			;
		if (want == 0 && i == nsh && nsh == MAX_KEYS)
			want = -1; /* too many attributes on one directory */
		if (want < 0) {
			check(r == -EINVAL && err[0] && strnlen(err, sizeof(err)) < sizeof(err));
			check(nfskeys_attr_check(key, value, NULL, NULL, 0) == -EINVAL ||
			      nsh == MAX_KEYS);
			continue;
		}
		check(r == 0);
		/* the public checker agrees, and its canonical value is a fixed point */
		check(nfskeys_attr_check(key, value, &v, err, sizeof(err)) == 0 && streq(v, canon));
		if (!streq(v, value)) {
			check(nfskeys_attr_check(key, v, &v2, err, sizeof(err)) == 0 && streq(v2, v));
			free(v2);
		}
		free(v);
		check(nfskeys_attr_policy_get(policy, key, &e) == 0);
		check(streq(e.key, key) && streq(e.value, canon) && e.number == number && !e.source &&
		      !e.from_ldap);
		if (i == nsh)
			nsh++;
		snprintf(sh[i].key, sizeof(sh[i].key), "%s", key);
		snprintf(sh[i].value, sizeof(sh[i].value), "%s", canon);
		sh[i].number = number;
		sh[i].typed = typed;
	}

	/* exactly the last value of each key, typed keys in enum order, then user.* by name */
	check(nfskeys_attr_policy_count(policy) == nsh);
	for (size_t i = 0; i < nsh; i++) {
		struct nfskeys_attr_entry e, prev;
		size_t j;

		check(nfskeys_attr_policy_entry(policy, i, &e) == 0);
		for (j = 0; j < nsh && !streq(sh[j].key, e.key); j++)
			;
		check(j < nsh && streq(sh[j].value, e.value) && sh[j].number == e.number);
		if (i > 0) {
			int ti = sh[j].typed, tp;

			check(nfskeys_attr_policy_entry(policy, i - 1, &prev) == 0);
			for (j = 0; j < nsh && !streq(sh[j].key, prev.key); j++)
				;
			tp = sh[j].typed;
			if (ti >= 0)
				check(tp >= 0 && tp < ti);
			else
				check(tp >= 0 || strcmp(prev.key, e.key) < 0);
		}
	}
	check(nfskeys_attr_policy_entry(policy, nsh, &(struct nfskeys_attr_entry){}) == -ERANGE);
	nfskeys_attr_policy_clear(policy);
	check(nfskeys_attr_policy_count(policy) == 0);
	nfskeys_attr_policy_free(policy);
	free(text);
	return 0;
}
