/* The library's directory-attribute read path: a read-only store opened on first use
 * and hung off the context (CTX_EXT_ATTR), effective/explicit lookups through its
 * index, listing, and turning a policy into mount.nfs / mount.cifs options. */
#include <stdarg.h>
#include <time.h>

#include "attr-private.h"

/* How often a long-running program notices changes made by nfskeys-attrd. */
#define REFRESH_NS (250 * 1000 * 1000LL)

struct attr_state {
	struct nfskeys_attr_store *store;
	int64_t last_check;
};

static void state_free(void *data)
{
	struct attr_state *s = data;

	nfskeys_attr_store_close(s->store);
	free(s);
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* The read-only store for ctx, refreshed when the database changed. */
static int read_store(struct nfskeys_ctx *ctx, struct nfskeys_attr_store **ret)
{
	struct attr_state *s = ctx_ext_get(ctx, CTX_EXT_ATTR);
	int64_t now = now_ns();
	int r;

	if (!s) {
		s = calloc(1, sizeof(*s));
		if (!s)
			return -ENOMEM;
		r = attr_store_open_full(ctx, NULL, 0, false, &s->store);
		if (r < 0) {
			free(s);
			return r;
		}
		s->last_check = now;
		ctx_ext_set(ctx, CTX_EXT_ATTR, s, state_free);
	} else if (now - s->last_check >= REFRESH_NS) {
		s->last_check = now;
		r = attr_store_refresh(s->store);
		if (r < 0)
			return r;
	}
	*ret = s->store;
	return 0;
}

_public_ int nfskeys_attr_effective(struct nfskeys_ctx *ctx, const struct nfskeys_attr_id *id,
				    unsigned flags, struct nfskeys_attr_policy *policy)
{
	struct nfskeys_attr_store *st;
	int r;

	if (!ctx || !id || !policy || (flags & ~NFSKEYS_ATTR_SOURCES))
		return -EINVAL;
	r = read_store(ctx, &st);
	if (r < 0)
		return r;
	return attr_index_resolve(attr_store_index(st), nfskeys_attr_id_get_domain(id),
				  nfskeys_attr_id_get_path(id), flags, policy);
}

_public_ int nfskeys_attr_explicit(struct nfskeys_ctx *ctx, const struct nfskeys_attr_id *id,
				   struct nfskeys_attr_policy *policy)
{
	struct nfskeys_attr_store *st;
	int r;

	if (!ctx || !id || !policy)
		return -EINVAL;
	r = read_store(ctx, &st);
	if (r < 0)
		return r;
	return attr_index_explicit(attr_store_index(st), nfskeys_attr_id_get_domain(id),
				   nfskeys_attr_id_get_path(id), policy);
}

_public_ int nfskeys_attr_list(struct nfskeys_ctx *ctx, const struct nfskeys_attr_id *prefix,
			       int (*fn)(void *userdata, const struct nfskeys_attr_id *id,
					 const struct nfskeys_attr_policy *policy),
			       void *userdata)
{
	struct nfskeys_attr_store *st;
	int r;

	if (!ctx || !fn)
		return -EINVAL;
	r = read_store(ctx, &st);
	if (r < 0)
		return r;
	return attr_store_list(st, nfskeys_attr_id_get_domain(prefix),
			       nfskeys_attr_id_get_path(prefix), fn, userdata);
}

/* A new policy holding the effective one at id. */
static int effective_new(struct nfskeys_ctx *ctx, const struct nfskeys_attr_id *id,
			 struct nfskeys_attr_policy **ret)
{
	struct nfskeys_attr_policy *p = NULL;
	int r = nfskeys_attr_policy_new(&p);

	if (r == 0)
		r = nfskeys_attr_effective(ctx, id, 0, p);
	if (r < 0) {
		nfskeys_attr_policy_free(p);
		return r;
	}
	*ret = p;
	return 0;
}

/* ---------------------------------------------------------------- writeback */

#define WB_DEFAULT_LIMIT (256ull << 20) /* as nfskeys_wb_dev_get() */
#define WB_MIN_LIMIT (1ull << 20)

_public_ int nfskeys_attr_wb_apply(struct nfskeys_ctx *ctx, const struct nfskeys_attr_id *id,
				   struct nfskeys_wb_dev *dev, int *ret_mode, uint64_t *ret_limit)
{
	struct nfskeys_attr_policy *p = NULL;
	struct nfskeys_attr_entry e;
	uint64_t limit = WB_DEFAULT_LIMIT;
	int mode = NFSKEYS_ATTR_WB_DEFAULT, r;

	if (!ctx || !id)
		return -EINVAL;
	r = effective_new(ctx, id, &p);
	if (r < 0)
		return r;
	if (nfskeys_attr_policy_get(p, "writeback", &e) == 0)
		mode = NFSKEYS_ATTR_WB_SYNC + (int)e.number; /* sync, async, throttled */
	if (nfskeys_attr_policy_get(p, "dirty_limit", &e) == 0) {
		limit = MAX(e.number, WB_MIN_LIMIT);
	} else {
		const char *v = nfskeys_conf_get(ctx, "Writeback", "Dirty-Limit");
		_cleanup_free_ char *canon = NULL;
		char err[128];

		/* the key, the value and the bounds in the message: not a bare -EINVAL */
		if (v && (attr_value_parse(NFSKEYS_ATTR_DIRTY_LIMIT, "dirty_limit", v, &canon, &limit,
					   err, sizeof(err)) < 0 || limit < WB_MIN_LIMIT)) {
			log_err(ctx, "[Writeback] Dirty-Limit = %s: not a size from 1M to 1T (%s)", v,
				canon ? "below 1M" : err);
			r = -ERANGE;
			goto out;
		}
	}
	if (dev) {
		r = nfskeys_wb_dev_set_limit(dev, limit);
		if (r < 0)
			goto out;
	}
	log_debug(ctx, "writeback policy at %s%s: mode %d, dirty limit %llu",
		  nfskeys_attr_id_get_domain(id), nfskeys_attr_id_get_path(id), mode,
		  (unsigned long long)limit);
	if (ret_mode)
		*ret_mode = mode;
	if (ret_limit)
		*ret_limit = limit;
out:
	nfskeys_attr_policy_free(p);
	return r;
}

/* ---------------------------------------------------------------- mount options */

enum fam { FAM_NFS, FAM_CIFS, FAM_OTHER };

struct optlist {
	char *v[64];
	size_t n;
};

static void optlist_done(struct optlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	l->n = 0;
}

static size_t optname_len(const char *o)
{
	const char *eq = strchr(o, '=');

	return eq ? (size_t)(eq - o) : strlen(o);
}

static bool name_is(const char *o, size_t n, const char *name)
{
	return strlen(name) == n && strncmp(o, name, n) == 0;
}

/* Do options a and b set the same thing (so that only one of them may stay)? */
static bool opts_conflict(const char *a, const char *b)
{
	static const char *const pairs[][2] = { { "ac", "noac" },   { "sync", "async" },
						{ "cto", "nocto" }, { "fsc", "nofsc" },
						{ "noac", "actimeo" }, { "noac", "acregmin" },
						{ "noac", "acregmax" }, { "noac", "acdirmin" },
						{ "noac", "acdirmax" }, { "actimeo", "acregmin" },
						{ "actimeo", "acregmax" }, { "actimeo", "acdirmin" },
						{ "actimeo", "acdirmax" } };
	size_t na = optname_len(a), nb = optname_len(b);

	if (na == nb && strncmp(a, b, na) == 0)
		return true;
	for (size_t i = 0; i < ARRAY_SIZE(pairs); i++)
		if ((name_is(a, na, pairs[i][0]) && name_is(b, nb, pairs[i][1])) ||
		    (name_is(a, na, pairs[i][1]) && name_is(b, nb, pairs[i][0])))
			return true;
	return false;
}

/* Add o, dropping earlier options it overrides (later and finer settings win). */
static int optlist_add(struct optlist *l, const char *fmt, ...) _printf_(2, 3);
static int optlist_add(struct optlist *l, const char *fmt, ...)
{
	va_list ap;
	char *o;
	size_t out = 0;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&o, fmt, ap);
	va_end(ap);
	if (r < 0)
		return -ENOMEM;
	for (size_t i = 0; i < l->n; i++) {
		if (opts_conflict(l->v[i], o))
			free(l->v[i]);
		else
			l->v[out++] = l->v[i];
	}
	l->n = out;
	if (l->n == ARRAY_SIZE(l->v)) {
		free(o);
		return -E2BIG;
	}
	l->v[l->n++] = o;
	return 0;
}

static enum fam family_of(const char *fstype, const char *domain)
{
	if (fstype)
		return (streq(fstype, "nfs") || streq(fstype, "nfs4")) ? FAM_NFS :
		       (streq(fstype, "cifs") || streq(fstype, "smb3")) ? FAM_CIFS :
									  FAM_OTHER;
	if (domain && startswith(domain, "nfs://"))
		return FAM_NFS;
	if (domain && startswith(domain, "cifs://"))
		return FAM_CIFS;
	return FAM_OTHER;
}

static int policy_options(const struct nfskeys_attr_policy *p, enum fam fam, struct optlist *l)
{
	struct nfskeys_attr_entry e;
	int r = 0;

	/* cache first: the finer attributes after it override what it implies */
	if (nfskeys_attr_policy_get(p, "cache", &e) == 0) {
		if (fam == FAM_NFS) {
			if (streq(e.value, "none")) {
				r = optlist_add(l, "noac");
				if (r == 0)
					r = optlist_add(l, "lookupcache=none");
			} else if (streq(e.value, "read")) {
				r = optlist_add(l, "sync");
			} else {
				r = optlist_add(l, "ac");
			}
		} else if (fam == FAM_CIFS) {
			r = optlist_add(l, "cache=%s",
					streq(e.value, "none") ? "none" :
					streq(e.value, "read") ? "strict" : "loose");
		}
		if (r < 0)
			return r;
	}
	for (size_t i = 0; i < nfskeys_attr_policy_count(p); i++) {
		int k;

		nfskeys_attr_policy_entry(p, i, &e);
		k = attr_key_parse(e.key, NULL, 0);
		switch (k) {
		case NFSKEYS_ATTR_FSCACHE:
			if (fam == FAM_NFS)
				r = optlist_add(l, streq(e.value, "on") ? "fsc" : "nofsc");
			else if (fam == FAM_CIFS && streq(e.value, "on"))
				r = optlist_add(l, "fsc");
			break;
		case NFSKEYS_ATTR_ACTIMEO:
		case NFSKEYS_ATTR_ACREGMAX:
		case NFSKEYS_ATTR_ACDIRMAX:
			if (fam != FAM_OTHER)
				r = optlist_add(l, "%s=%s", e.key, e.value);
			break;
		case NFSKEYS_ATTR_ACREGMIN:
		case NFSKEYS_ATTR_ACDIRMIN: /* mount.cifs has no minimums */
			if (fam == FAM_NFS)
				r = optlist_add(l, "%s=%s", e.key, e.value);
			break;
		case NFSKEYS_ATTR_LOOKUPCACHE:
			if (fam == FAM_NFS)
				r = optlist_add(l, "lookupcache=%s", e.value);
			break;
		case NFSKEYS_ATTR_CTO:
			if (fam == FAM_NFS)
				r = optlist_add(l, streq(e.value, "on") ? "cto" : "nocto");
			break;
		case NFSKEYS_ATTR_WRITEBACK:
			if (fam != FAM_OTHER)
				r = optlist_add(l, streq(e.value, "sync") ? "sync" : "async");
			break;
		default: /* cache (above), dirty_limit (the throttler's), inherit, user.* */
			break;
		}
		if (r < 0)
			return r;
	}
	return 0;
}

int attr_policy_mount_options(const struct nfskeys_attr_policy *p, const char *fstype,
			      const char *domain, const char *explicit_opts, char **ret_options)
{
	struct optlist l = { .n = 0 }, ex = { .n = 0 };
	_cleanup_free_ char *copy = NULL;
	char *out = NULL, *save = NULL;
	size_t len = 0;
	int r;

	r = policy_options(p, family_of(fstype, domain), &l);
	if (r < 0)
		goto out;
	if (explicit_opts && *explicit_opts) {
		copy = strdup(explicit_opts);
		if (!copy) {
			r = -ENOMEM;
			goto out;
		}
		for (char *o = strtok_r(copy, ",", &save); o; o = strtok_r(NULL, ",", &save)) {
			if (ex.n == ARRAY_SIZE(ex.v)) {
				r = -E2BIG;
				goto out;
			}
			ex.v[ex.n] = strdup(o);
			if (!ex.v[ex.n++]) {
				r = -ENOMEM;
				goto out;
			}
		}
	}
	/* explicit options win: drop every policy option one of them overrides */
	for (size_t i = 0; i < ex.n; i++) {
		size_t keep = 0;
		for (size_t j = 0; j < l.n; j++) {
			if (opts_conflict(l.v[j], ex.v[i]))
				free(l.v[j]);
			else
				l.v[keep++] = l.v[j];
		}
		l.n = keep;
	}
	for (size_t i = 0; i < l.n + ex.n; i++)
		len += strlen(i < l.n ? l.v[i] : ex.v[i - l.n]) + 1;
	out = calloc(1, len + 1);
	if (!out) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < l.n + ex.n; i++) {
		if (i)
			strcat(out, ",");
		strcat(out, i < l.n ? l.v[i] : ex.v[i - l.n]);
	}
	*ret_options = out;
	r = 0;
out:
	optlist_done(&l);
	optlist_done(&ex);
	return r;
}

_public_ int nfskeys_attr_mount_options(struct nfskeys_ctx *ctx, const struct nfskeys_attr_id *id,
					const char *fstype, const char *explicit_opts,
					char **ret_options)
{
	struct nfskeys_attr_policy *p = NULL;
	int r;

	if (!ctx || !id || !ret_options)
		return -EINVAL;
	r = effective_new(ctx, id, &p);
	if (r < 0)
		return r;
	r = attr_policy_mount_options(p, fstype, nfskeys_attr_id_get_domain(id), explicit_opts,
				      ret_options);
	nfskeys_attr_policy_free(p);
	return r;
}
