/* The attribute vocabulary of doc/DESIGN.md §6 (typed keys, validation with errors that name
 * the problem, canonical values) and the policy object that carries a set of attributes
 * with their sources.  No I/O here. */
#include <ctype.h>
#include <inttypes.h>
#include <stdarg.h>

#include "attr-private.h"

enum attr_type { T_ENUM, T_SECONDS, T_BYTES };

struct attr_def {
	const char *name;
	enum attr_type type;
	const char *const *values; /* T_ENUM, NULL-terminated */
};

static const char *const v_cache[] = { "none", "read", "full", NULL };
static const char *const v_onoff[] = { "on", "off", NULL };
static const char *const v_lookup[] = { "all", "positive", "none", NULL };
static const char *const v_wb[] = { "sync", "async", "throttled", NULL };
static const char *const v_yesno[] = { "yes", "no", NULL };

static const struct attr_def defs[_NFSKEYS_ATTR_MAX] = {
	[NFSKEYS_ATTR_CACHE] = { "cache", T_ENUM, v_cache },
	[NFSKEYS_ATTR_FSCACHE] = { "fscache", T_ENUM, v_onoff },
	[NFSKEYS_ATTR_ACTIMEO] = { "actimeo", T_SECONDS, NULL },
	[NFSKEYS_ATTR_ACREGMIN] = { "acregmin", T_SECONDS, NULL },
	[NFSKEYS_ATTR_ACREGMAX] = { "acregmax", T_SECONDS, NULL },
	[NFSKEYS_ATTR_ACDIRMIN] = { "acdirmin", T_SECONDS, NULL },
	[NFSKEYS_ATTR_ACDIRMAX] = { "acdirmax", T_SECONDS, NULL },
	[NFSKEYS_ATTR_LOOKUPCACHE] = { "lookupcache", T_ENUM, v_lookup },
	[NFSKEYS_ATTR_CTO] = { "cto", T_ENUM, v_onoff },
	[NFSKEYS_ATTR_WRITEBACK] = { "writeback", T_ENUM, v_wb },
	[NFSKEYS_ATTR_DIRTY_LIMIT] = { "dirty_limit", T_BYTES, NULL },
	[NFSKEYS_ATTR_INHERIT] = { "inherit", T_ENUM, v_yesno },
};

/* Attribute cache timeouts: the NFS client keeps at most 3600 s for acregmax/acdirmax by
 * default and accepts more; a day is a generous cap that still catches typos. */
#define SECONDS_MAX 86400ULL
/* Dirty limits from one page up to 1 TiB. */
#define BYTES_MIN 4096ULL
#define BYTES_MAX (1ULL << 40)

_printf_(3, 4) static int fail(char *errbuf, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (errbuf && errlen) {
		va_start(ap, fmt);
		vsnprintf(errbuf, errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

_public_ const char *nfskeys_attr_key_name(enum nfskeys_attr_key key)
{
	if ((unsigned)key >= _NFSKEYS_ATTR_MAX)
		return NULL;
	return defs[key].name;
}

static bool user_name_valid(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n > ATTR_USER_NAME_MAX)
		return false;
	for (const char *p = name; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '_' && *p != '-' && *p != '.')
			return false;
	return true;
}

int attr_key_parse(const char *key, char *errbuf, size_t errlen)
{
	if (!key || !*key)
		return fail(errbuf, errlen, "empty attribute name");
	for (int i = 0; i < _NFSKEYS_ATTR_MAX; i++)
		if (streq(defs[i].name, key))
			return i;
	if (startswith(key, ATTR_USER_PREFIX)) {
		if (!user_name_valid(key + strlen(ATTR_USER_PREFIX)))
			return fail(errbuf, errlen,
				    "bad attribute name '%s': user.<name> takes 1-%d letters, "
				    "digits, '_', '-' or '.'",
				    key, ATTR_USER_NAME_MAX);
		return NFSKEYS_ATTR_USER;
	}
	return fail(errbuf, errlen,
		    "unknown attribute '%s' (known: cache, fscache, actimeo, acregmin, acregmax, "
		    "acdirmin, acdirmax, lookupcache, cto, writeback, dirty_limit, inherit, "
		    "user.<name>)",
		    key);
}

static int parse_enum(const struct attr_def *d, const char *value, char **ret_value,
		      uint64_t *ret_number, char *errbuf, size_t errlen)
{
	char list[128] = "";
	const char *v = value;

	/* "pos" is what nfs(5) documents next to "positive". */
	if (d == &defs[NFSKEYS_ATTR_LOOKUPCACHE] && strcaseeq(v, "pos"))
		v = "positive";
	for (size_t i = 0; d->values[i]; i++) {
		if (strcaseeq(d->values[i], v)) {
			char *s = strdup(d->values[i]);
			if (!s)
				return -ENOMEM;
			*ret_value = s;
			*ret_number = i;
			return 0;
		}
		if (i)
			strcat(list, "|");
		strcat(list, d->values[i]);
	}
	return fail(errbuf, errlen, "bad value '%s' for %s (expected %s)", value, d->name, list);
}

/* Digits, then an optional unit; *ret_unit points at the unit text. */
static int parse_number(const char *value, uint64_t *ret, const char **ret_unit)
{
	uint64_t v = 0;
	const char *p = value;

	if (!isdigit((unsigned char)*p))
		return -EINVAL;
	for (; isdigit((unsigned char)*p); p++) {
		if (v > (UINT64_MAX - 9) / 10)
			return -ERANGE;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	*ret = v;
	*ret_unit = p;
	return 0;
}

static int parse_seconds(const struct attr_def *d, const char *value, char **ret_value,
			 uint64_t *ret_number, char *errbuf, size_t errlen)
{
	const char *unit;
	uint64_t v, mult = 1;
	int r;

	r = parse_number(value, &v, &unit);
	if (r == -ERANGE)
		goto range;
	if (r < 0)
		return fail(errbuf, errlen,
			    "bad value '%s' for %s (expected seconds, e.g. 30, 30s, 5m or 1h)",
			    value, d->name);
	if (streq(unit, "") || streq(unit, "s"))
		mult = 1;
	else if (streq(unit, "m"))
		mult = 60;
	else if (streq(unit, "h"))
		mult = 3600;
	else
		return fail(errbuf, errlen, "bad time unit '%s' in %s=%s (use s, m or h)", unit,
			    d->name, value);
	if (v > SECONDS_MAX / mult)
		goto range;
	v *= mult;
	if (asprintf(ret_value, "%" PRIu64, v) < 0)
		return -ENOMEM;
	*ret_number = v;
	return 0;
range:
	return fail(errbuf, errlen, "%s=%s is out of range (0-%llu seconds)", d->name, value,
		    SECONDS_MAX);
}

static int parse_bytes(const struct attr_def *d, const char *value, char **ret_value,
		       uint64_t *ret_number, char *errbuf, size_t errlen)
{
	static const struct {
		const char *s;
		unsigned shift;
	} units[] = {
		{ "", 0 },    { "B", 0 },   { "K", 10 },  { "KB", 10 },  { "KiB", 10 },
		{ "M", 20 },  { "MB", 20 }, { "MiB", 20 }, { "G", 30 }, { "GB", 30 },
		{ "GiB", 30 }, { "T", 40 }, { "TB", 40 },  { "TiB", 40 },
	};
	const char *unit;
	uint64_t v;
	int r, shift = -1;

	r = parse_number(value, &v, &unit);
	if (r == -ERANGE)
		goto range;
	if (r < 0)
		return fail(errbuf, errlen,
			    "bad value '%s' for %s (expected bytes with an optional K, M or G "
			    "suffix, e.g. 64M)",
			    value, d->name);
	for (size_t i = 0; i < ARRAY_SIZE(units); i++)
		if (strcaseeq(units[i].s, unit)) /* k and K alike */
			shift = (int)units[i].shift;
	if (shift < 0)
		return fail(errbuf, errlen, "bad size suffix '%s' in %s=%s (use K, M, G or T)", unit,
			    d->name, value);
	if (v > (BYTES_MAX >> shift))
		goto range;
	v <<= shift;
	if (v < BYTES_MIN)
		goto range;
	if (asprintf(ret_value, "%" PRIu64, v) < 0)
		return -ENOMEM;
	*ret_number = v;
	return 0;
range:
	return fail(errbuf, errlen, "%s=%s is out of range (4K-1T)", d->name, value);
}

int attr_value_parse(int key, const char *keyname, const char *value, char **ret_value,
		     uint64_t *ret_number, char *errbuf, size_t errlen)
{
	const struct attr_def *d;

	if (!value)
		return fail(errbuf, errlen, "missing value for %s", keyname ? keyname : "attribute");
	if (key == NFSKEYS_ATTR_USER) {
		size_t n = strlen(value);
		if (n > ATTR_USER_VALUE_MAX)
			return fail(errbuf, errlen, "value of %s is too long (%zu bytes, at most %d)",
				    keyname, n, ATTR_USER_VALUE_MAX);
		for (const unsigned char *p = (const unsigned char *)value; *p; p++)
			if (*p < 0x20 || *p == 0x7f)
				return fail(errbuf, errlen,
					    "value of %s contains a control character", keyname);
		*ret_value = strdup(value);
		if (!*ret_value)
			return -ENOMEM;
		*ret_number = 0;
		return 0;
	}
	if (key < 0 || key >= _NFSKEYS_ATTR_MAX)
		return -EINVAL;
	d = &defs[key];
	if (!*value)
		return fail(errbuf, errlen, "empty value for %s", d->name);
	switch (d->type) {
	case T_ENUM:
		return parse_enum(d, value, ret_value, ret_number, errbuf, errlen);
	case T_SECONDS:
		return parse_seconds(d, value, ret_value, ret_number, errbuf, errlen);
	case T_BYTES:
		return parse_bytes(d, value, ret_value, ret_number, errbuf, errlen);
	}
	return -EINVAL;
}

_public_ int nfskeys_attr_check(const char *key, const char *value, char **ret_value,
				char *errbuf, size_t errlen)
{
	uint64_t number;
	char *v = NULL;
	int k, r;

	k = attr_key_parse(key, errbuf, errlen);
	if (k < 0)
		return k;
	r = attr_value_parse(k, key, value, &v, &number, errbuf, errlen);
	if (r < 0)
		return r;
	if (ret_value)
		*ret_value = v;
	else
		free(v);
	return 0;
}

/* ---------------------------------------------------------------- policy object */

/* Entries point into one growing text buffer by offset, so that refilling a policy
 * (the effective-lookup hot path) does not allocate once the buffer is big enough. */
#define NO_TEXT UINT32_MAX

struct pentry {
	int key;
	uint32_t keyname; /* user.* only */
	uint32_t value;
	uint32_t source;
	uint64_t number;
	bool from_ldap;
};

struct nfskeys_attr_policy {
	struct pentry *e;
	size_t n, cap;
	char *text;
	size_t len, textcap;
	size_t garbage; /* text bytes no entry uses any more (replaced values and sources) */
	uint32_t cut;
};

_public_ int nfskeys_attr_policy_new(struct nfskeys_attr_policy **ret_policy)
{
	struct nfskeys_attr_policy *p;

	if (!ret_policy)
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->cut = NO_TEXT;
	*ret_policy = p;
	return 0;
}

_public_ struct nfskeys_attr_policy *nfskeys_attr_policy_free(struct nfskeys_attr_policy *policy)
{
	if (!policy)
		return NULL;
	free(policy->e);
	free(policy->text);
	free(policy);
	return NULL;
}

_public_ void nfskeys_attr_policy_clear(struct nfskeys_attr_policy *policy)
{
	if (!policy)
		return;
	policy->n = 0;
	policy->len = 0;
	policy->garbage = 0;
	policy->cut = NO_TEXT;
}

static int text_addn(struct nfskeys_attr_policy *p, const char *s, size_t len, uint32_t *ret)
{
	size_t n = len + 1;

	if (p->len + n > p->textcap) {
		size_t cap = MAX(p->textcap * 2, p->len + n + 256);
		char *t;
		if (cap >= NO_TEXT)
			return -E2BIG;
		t = realloc(p->text, cap);
		if (!t)
			return -ENOMEM;
		p->text = t;
		p->textcap = cap;
	}
	memcpy(p->text + p->len, s, n);
	*ret = (uint32_t)p->len;
	p->len += n;
	return 0;
}

static int text_add(struct nfskeys_attr_policy *p, const char *s, uint32_t *ret)
{
	if (!s) {
		*ret = NO_TEXT;
		return 0;
	}
	return text_addn(p, s, strlen(s), ret);
}

static const char *text_at(const struct nfskeys_attr_policy *p, uint32_t off)
{
	return off == NO_TEXT ? NULL : p->text + off;
}

static size_t text_size(const struct nfskeys_attr_policy *p, uint32_t off)
{
	return off == NO_TEXT ? 0 : strlen(p->text + off) + 1;
}

/* Replacing a value appends the new text: once replaced text is the larger part, copy
 * what is still used into a new buffer, so that setting one key over and over keeps
 * the policy's size bounded.  Failing to is no error (the garbage stays for later). */
static void text_collect(struct nfskeys_attr_policy *p)
{
	struct nfskeys_attr_policy q = { .text = NULL };
	_cleanup_free_ uint32_t *off = calloc(p->n * 3 + 1, sizeof(uint32_t));

	if (!off)
		return;
	for (size_t i = 0; i < p->n; i++) {
		const uint32_t old[3] = { p->e[i].keyname, p->e[i].value, p->e[i].source };

		for (size_t k = 0; k < 3; k++)
			if (text_add(&q, text_at(p, old[k]), &off[i * 3 + k]) < 0)
				goto fail;
	}
	if (text_add(&q, text_at(p, p->cut), &off[p->n * 3]) < 0)
		goto fail;
	for (size_t i = 0; i < p->n; i++) {
		p->e[i].keyname = off[i * 3];
		p->e[i].value = off[i * 3 + 1];
		p->e[i].source = off[i * 3 + 2];
	}
	p->cut = off[p->n * 3];
	free(p->text);
	p->text = q.text;
	p->len = q.len;
	p->textcap = q.textcap;
	p->garbage = 0;
	return;
fail:
	free(q.text);
}

/* Room for one more entry. */
static int entries_reserve(struct nfskeys_attr_policy *p)
{
	size_t cap = p->cap ? p->cap * 2 : 16;
	struct pentry *ne;

	if (p->n < p->cap)
		return 0;
	ne = realloc(p->e, cap * sizeof(*ne));
	if (!ne)
		return -ENOMEM;
	p->e = ne;
	p->cap = cap;
	return 0;
}

size_t attr_policy_memory(const struct nfskeys_attr_policy *p)
{
	return p ? sizeof(*p) + p->cap * sizeof(*p->e) + p->textcap : 0;
}

static const char *entry_key(const struct nfskeys_attr_policy *p, const struct pentry *e)
{
	return e->key == NFSKEYS_ATTR_USER ? text_at(p, e->keyname) : defs[e->key].name;
}

/* Sort order: typed keys by enum, then user.* by name. */
static int entry_cmp(const struct nfskeys_attr_policy *p, const struct pentry *e, int key,
		     const char *keyname)
{
	if (e->key != key)
		return e->key < key ? -1 : 1;
	if (key != NFSKEYS_ATTR_USER)
		return 0;
	return strcmp(text_at(p, e->keyname), keyname);
}

int attr_policy_put(struct nfskeys_attr_policy *p, int key, const char *keyname,
		    const char *value, uint64_t number, const char *source, bool from_ldap)
{
	struct pentry *e;
	bool inserted = false;
	size_t i;
	int c = 1, r;

	for (i = 0; i < p->n; i++) {
		c = entry_cmp(p, &p->e[i], key, keyname);
		if (c >= 0)
			break;
	}
	if (i < p->n && c == 0) {
		e = &p->e[i];
		p->garbage += text_size(p, e->value) + text_size(p, e->source);
	} else {
		if (p->n >= ATTR_MAX_PER_DIR * 2)
			return -E2BIG;
		r = entries_reserve(p);
		if (r < 0)
			return r;
		memmove(&p->e[i + 1], &p->e[i], (p->n - i) * sizeof(*p->e));
		p->n++;
		e = &p->e[i];
		inserted = true;
		e->key = key;
		e->keyname = NO_TEXT;
		if (key == NFSKEYS_ATTR_USER) {
			r = text_add(p, keyname, &e->keyname);
			if (r < 0)
				goto undo;
		}
	}
	e->number = number;
	e->from_ldap = from_ldap;
	r = text_add(p, value, &e->value);
	if (r < 0)
		goto undo;
	r = text_add(p, source, &e->source);
	if (r < 0)
		goto undo;
	if (p->garbage > 1024 && p->garbage * 2 > p->len)
		text_collect(p);
	return 0;
undo:
	if (inserted) {
		memmove(&p->e[i], &p->e[i + 1], (p->n - i - 1) * sizeof(*p->e));
		p->n--;
	}
	return r;
}

int attr_policy_append(struct nfskeys_attr_policy *p, int key, const char *keyname,
		       const char *value, size_t vlen, uint64_t number, const char *source,
		       bool from_ldap)
{
	struct pentry *e;
	int r;

	r = entries_reserve(p);
	if (r < 0)
		return r;
	e = &p->e[p->n];
	e->key = key;
	e->keyname = NO_TEXT;
	e->number = number;
	e->from_ldap = from_ldap;
	if (key == NFSKEYS_ATTR_USER && (r = text_add(p, keyname, &e->keyname)) < 0)
		return r;
	r = text_addn(p, value, vlen, &e->value);
	if (r == 0)
		r = text_add(p, source, &e->source);
	if (r < 0)
		return r;
	p->n++;
	return 0;
}

int attr_policy_copy(struct nfskeys_attr_policy *dst, const struct nfskeys_attr_policy *src)
{
	if (dst->cap < src->n) {
		struct pentry *ne = realloc(dst->e, src->n * sizeof(*ne));

		if (!ne)
			return -ENOMEM;
		dst->e = ne;
		dst->cap = src->n;
	}
	if (dst->textcap < src->len) {
		char *t = realloc(dst->text, src->len);

		if (!t)
			return -ENOMEM;
		dst->text = t;
		dst->textcap = src->len;
	}
	if (src->n)
		memcpy(dst->e, src->e, src->n * sizeof(*src->e));
	if (src->len)
		memcpy(dst->text, src->text, src->len);
	dst->n = src->n;
	dst->len = src->len;
	dst->garbage = src->garbage;
	dst->cut = src->cut;
	return 0;
}

void attr_policy_set_cut(struct nfskeys_attr_policy *policy, const char *cut)
{
	if (text_add(policy, cut, &policy->cut) < 0)
		policy->cut = NO_TEXT;
}

_public_ int nfskeys_attr_policy_set(struct nfskeys_attr_policy *policy, const char *key,
				     const char *value, char *errbuf, size_t errlen)
{
	_cleanup_free_ char *v = NULL;
	uint64_t number;
	int k, r;

	if (!policy)
		return -EINVAL;
	k = attr_key_parse(key, errbuf, errlen);
	if (k < 0)
		return k;
	r = attr_value_parse(k, key, value, &v, &number, errbuf, errlen);
	if (r < 0)
		return r;
	if (policy->n >= ATTR_MAX_PER_DIR && nfskeys_attr_policy_get(policy, key, NULL) < 0)
		return fail(errbuf, errlen, "too many attributes on one directory (at most %d)",
			    ATTR_MAX_PER_DIR);
	return attr_policy_put(policy, k, key, v, number, NULL, false);
}

_public_ int nfskeys_attr_policy_parse(struct nfskeys_attr_policy *policy, const char *assignment,
				       char *errbuf, size_t errlen)
{
	_cleanup_free_ char *key = NULL;
	const char *eq;

	if (!policy || !assignment)
		return -EINVAL;
	eq = strchr(assignment, '=');
	if (!eq)
		return fail(errbuf, errlen, "'%s' is not key=value", assignment);
	key = strndup(assignment, (size_t)(eq - assignment));
	if (!key)
		return -ENOMEM;
	return nfskeys_attr_policy_set(policy, key, eq + 1, errbuf, errlen);
}

_public_ size_t nfskeys_attr_policy_count(const struct nfskeys_attr_policy *policy)
{
	return policy ? policy->n : 0;
}

static void fill_entry(const struct nfskeys_attr_policy *p, const struct pentry *e,
		       struct nfskeys_attr_entry *ret)
{
	ret->key = entry_key(p, e);
	ret->value = text_at(p, e->value);
	ret->number = e->number;
	ret->source = text_at(p, e->source);
	ret->from_ldap = e->from_ldap;
}

_public_ int nfskeys_attr_policy_entry(const struct nfskeys_attr_policy *policy, size_t idx,
				       struct nfskeys_attr_entry *ret_entry)
{
	if (!policy || !ret_entry)
		return -EINVAL;
	if (idx >= policy->n)
		return -ERANGE;
	fill_entry(policy, &policy->e[idx], ret_entry);
	return 0;
}

_public_ int nfskeys_attr_policy_get(const struct nfskeys_attr_policy *policy, const char *key,
				     struct nfskeys_attr_entry *ret_entry)
{
	if (!policy || !key)
		return -EINVAL;
	for (size_t i = 0; i < policy->n; i++) {
		if (streq(entry_key(policy, &policy->e[i]), key)) {
			if (ret_entry)
				fill_entry(policy, &policy->e[i], ret_entry);
			return 0;
		}
	}
	return -ENOENT;
}

_public_ const char *nfskeys_attr_policy_cut(const struct nfskeys_attr_policy *policy)
{
	return policy ? text_at(policy, policy->cut) : NULL;
}
