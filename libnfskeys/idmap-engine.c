/* The ID-mapping engine: loads the backend chain named by [Translation] Method (and
 * GSS-Methods for principals), walks it (-ENOENT passes on), caches answers (except those a
 * pure algorithmic backend computes faster than a cache probe), applies the nobody
 * fallback with its short TTL.  Its explanations live in idmap-explain.c, the kernel's
 * upcall formats in idmap-kernel.c. */
#include <ctype.h>
#include <grp.h>
#include <inttypes.h>
#include <pthread.h>
#include <pwd.h>
#include <stdarg.h>

#include "conf-get.h"
#include "idmap-engine.h"

/* Serializes the lazy creation of the per-context state (not state itself). */
static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;

static const char *const kind_names[_NFSKEYS_IDMAP_KIND_MAX] = {
	[NFSKEYS_IDMAP_NAME_TO_UID] = "name-to-uid",
	[NFSKEYS_IDMAP_GROUP_TO_GID] = "group-to-gid",
	[NFSKEYS_IDMAP_UID_TO_NAME] = "uid-to-name",
	[NFSKEYS_IDMAP_GID_TO_GROUP] = "gid-to-group",
	[NFSKEYS_IDMAP_PRINCIPAL_TO_IDS] = "principal-to-ids",
	[NFSKEYS_IDMAP_SID_TO_UID] = "sid-to-uid",
	[NFSKEYS_IDMAP_SID_TO_GID] = "sid-to-gid",
	[NFSKEYS_IDMAP_UID_TO_SID] = "uid-to-sid",
	[NFSKEYS_IDMAP_GID_TO_SID] = "gid-to-sid",
};

_public_ const char *nfskeys_idmap_kind_to_string(enum nfskeys_idmap_kind kind)
{
	if ((unsigned)kind >= _NFSKEYS_IDMAP_KIND_MAX)
		return NULL;
	return kind_names[kind];
}

_public_ int nfskeys_idmap_kind_from_string(const char *s, enum nfskeys_idmap_kind *ret_kind)
{
	if (!s || !ret_kind)
		return -EINVAL;
	for (unsigned k = 1; k < _NFSKEYS_IDMAP_KIND_MAX; k++)
		if (strcaseeq(kind_names[k], s)) {
			*ret_kind = (enum nfskeys_idmap_kind)k;
			return 0;
		}
	return -EINVAL;
}

static int resolve_nobody(const char *value, bool group, uint32_t *ret)
{
	char buf[4096];
	uint32_t id;

	if (idmap_parse_id(value, &id) == 0) {
		*ret = id;
		return 0;
	}
	if (group) {
		struct group gr, *g = NULL;

		if (getgrnam_r(value, &gr, buf, sizeof(buf), &g) == 0 && g) {
			*ret = g->gr_gid;
			return 0;
		}
	} else {
		struct passwd pw, *p = NULL;

		if (getpwnam_r(value, &pw, buf, sizeof(buf), &p) == 0 && p) {
			*ret = p->pw_uid;
			return 0;
		}
	}
	return -ENOENT;
}

/* A number or duration of the schema (libnfskeys/conf-schema.c: bounds, default). */
static int conf_uint(struct nfskeys_ctx *ctx, const char *section, const char *key,
		     unsigned *ret)
{
	char err[256];
	int64_t v;
	int r = conf_get_typed(ctx, section, key, &v, err, sizeof(err));

	if (r < 0) {
		log_err(ctx, "%s", err);
		return r;
	}
	*ret = (unsigned)v;
	return 0;
}

/* Find or load the backend for method.  A backend that cannot be loaded stays in the
 * chain as a failing one (the others still answer; explain names it). */
static struct backend *backend_get(struct nfskeys_ctx *ctx, struct idmap_state *st,
				   const char *method, int *ret_error)
{
	const struct nfskeys_plugin *p;
	struct backend *b;
	char plugname[64];
	int r;

	for (size_t i = 0; i < st->n_backends; i++)
		if (strcaseeq(st->backends[i].method, method))
			return &st->backends[i];
	if (st->n_backends >= MAX_BACKENDS || strlen(method) >= sizeof(b->method)) {
		*ret_error = -E2BIG;
		return NULL;
	}
	b = &st->backends[st->n_backends++];
	snprintf(b->method, sizeof(b->method), "%s", method);
	/* idmapd.conf spells the LDAP backend umich_ldap. */
	if (strcaseeq(method, "umich_ldap"))
		method = "ldap";
	snprintf(plugname, sizeof(plugname), "idmap-%s", method);
	for (char *c = plugname; *c; c++)
		*c = (char)tolower((unsigned char)*c);
	r = plugin_load(ctx, plugname, NFSKEYS_PLUGIN_IDMAP,
			offsetof(struct nfskeys_idmap_ops, ttl) + sizeof(uint32_t), &p);
	if (r < 0) {
		/* a name with no plugin is a typo, said once by nfskeys_idmap_check_config()
		 * (the tools and daemons call it first); a plugin that will not load is not */
		if (r != -ENOENT)
			log_err(ctx, "[Translation] Method: cannot load backend '%s' (%s/%s.so): %s",
				method, plugin_dir(), plugname, strerror(-r));
		b->load_error = r;
		return b;
	}
	if (!((const struct nfskeys_idmap_ops *)p->ops)->lookup) {
		b->load_error = -EPROTO;
		return b;
	}
	if (((const struct nfskeys_idmap_ops *)p->ops)->init) {
		r = ((const struct nfskeys_idmap_ops *)p->ops)->init(ctx, &b->data);
		if (r < 0) {
			log_err(ctx, "idmap backend %s: initialisation failed: %s", method,
				strerror(-r));
			b->load_error = r;
			return b;
		}
	}
	b->ops = p->ops;
	return b;
}

static int chain_parse(struct nfskeys_ctx *ctx, struct idmap_state *st, const char *text,
		       struct backend **chain, size_t *ret_n)
{
	char buf[256], *save = NULL, *tok;
	size_t n = 0;
	int r = 0;

	if (strlen(text) >= sizeof(buf))
		return -EINVAL;
	snprintf(buf, sizeof(buf), "%s", text);
	for (tok = strtok_r(buf, ", \t", &save); tok; tok = strtok_r(NULL, ", \t", &save)) {
		struct backend *b;

		if (n >= MAX_BACKENDS) {
			log_err(ctx, "[Translation] Method: more than %d backends", MAX_BACKENDS);
			return -E2BIG;
		}
		b = backend_get(ctx, st, tok, &r);
		if (!b)
			return r;
		chain[n++] = b;
	}
	if (n == 0) {
		log_err(ctx, "[Translation] Method: empty");
		return -EINVAL;
	}
	*ret_n = n;
	return 0;
}

static bool backend_has_pure_sid(const struct backend *b)
{
	return b->ops &&
	       b->ops->size >= offsetof(struct nfskeys_idmap_ops, pure_sid_to_id) +
					sizeof(b->ops->pure_sid_to_id) &&
	       b->ops->pure_sid_to_id;
}

typedef int (*lookup_fn)(void *data, struct nfskeys_ctx *ctx, struct nfskeys_idmap_request *req,
			 struct nfskeys_idmap_answer *ret);

/* What a NOWAIT lookup may ask b for kind: lookup when it never blocks, lookup_nowait,
 * or NULL (b may block: the whole lookup would). */
static lookup_fn backend_nowait_fn(const struct backend *b, unsigned kind)
{
	if (b->ops->size < offsetof(struct nfskeys_idmap_ops, lookup_nowait) +
				   sizeof(b->ops->lookup_nowait))
		return NULL;
	if (b->ops->nowait_kinds & IDMAP_KIND_BIT(kind))
		return b->ops->lookup;
	return b->ops->lookup_nowait;
}

static bool backend_has_pair(const struct backend *b)
{
	return b->ops->size >= offsetof(struct nfskeys_idmap_ops, lookup_pair) +
				       sizeof(b->ops->lookup_pair) &&
	       b->ops->lookup_pair;
}

/* The kind that maps a name -> id answer back (0: none). */
static unsigned reverse_kind(unsigned kind)
{
	return kind == NFSKEYS_IDMAP_NAME_TO_UID    ? NFSKEYS_IDMAP_UID_TO_NAME :
	       kind == NFSKEYS_IDMAP_GROUP_TO_GID ? NFSKEYS_IDMAP_GID_TO_GROUP :
						    0;
}

/* Whether the chain's answer for kind/id would be by's: every backend before it that maps
 * the kind is asked at once, without blocking, and must not know the id.  One that may
 * block, is not loaded, fails or answers might give another answer: then false (the
 * reverse is looked up on its own, as without lookup_pair). */
static bool reverse_is_by(struct nfskeys_ctx *ctx, struct idmap_state *st,
			  const struct backend *by, unsigned kind, uint32_t id)
{
	struct nfskeys_idmap_request req = { 0 };
	struct nfskeys_idmap_answer a;
	char key[16], reason[256];

	snprintf(key, sizeof(key), "%" PRIu32, id);
	req.kind = kind;
	req.key = key;
	req.nfs_domain = st->domain;
	req.id = id;
	req.nowait = true;
	for (size_t i = 0; i < st->n_chain; i++) {
		struct backend *b = st->chain[i];
		lookup_fn fn;

		if (b == by)
			return true;
		if (!b->ops)
			return false;
		if (!(b->ops->kinds & IDMAP_KIND_BIT(kind)))
			continue;
		fn = backend_nowait_fn(b, kind);
		if (!fn)
			return false;
		a.flags = 0;
		a.id = a.gid = a.n_groups = 0;
		a.name[0] = a.backend[0] = '\0';
		reason[0] = '\0';
		req.reason = reason;
		req.reason_size = sizeof(reason);
		req.cause = IDMAP_CAUSE_NONE;
		if (fn(b->data, ctx, &req, &a) != -ENOENT)
			return false;
	}
	return false;
}

/* Which backend, if any, answers SID->uid/gid by pure computation (see pure_sid). */
static void pure_sid_find(struct idmap_state *st)
{
	for (unsigned k = 0; k < 2; k++) {
		unsigned kind = k ? NFSKEYS_IDMAP_SID_TO_GID : NFSKEYS_IDMAP_SID_TO_UID;

		for (size_t i = 0; i < st->n_chain; i++) {
			struct backend *b = st->chain[i];

			if (!b->ops)
				break; /* it might have answered: no shortcut past it */
			if (!(b->ops->kinds & IDMAP_KIND_BIT(kind)))
				continue;
			if (backend_has_pure_sid(b))
				st->pure_sid[k] = b;
			break;
		}
	}
}

static void state_free(void *p)
{
	struct idmap_state *st = p;

	if (!st)
		return;
	for (size_t i = 0; i < st->n_backends; i++)
		if (st->backends[i].ops && st->backends[i].ops->done)
			st->backends[i].ops->done(st->backends[i].data);
	idmap_cache_free(st->cache);
	free(st);
}

static int state_new(struct nfskeys_ctx *ctx, struct idmap_state **ret)
{
	struct idmap_state *st;
	const char *v;
	unsigned cache_size;
	int r;

	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	r = idmap_discover_domain(ctx, st->domain, sizeof(st->domain), &st->domain_source);
	if (r < 0)
		goto fail;
	if ((r = conf_uint(ctx, "Idmap", "Positive-TTL", &st->pos_ttl)) < 0 ||
	    (r = conf_uint(ctx, "Idmap", "Negative-TTL", &st->neg_ttl)) < 0 ||
	    (r = conf_uint(ctx, "Mapping", "Nobody-TTL", &st->nobody_ttl)) < 0 ||
	    (r = conf_uint(ctx, "Idmap", "Cache-Size", &cache_size)) < 0)
		goto fail;

	v = nfskeys_conf_get(ctx, "Mapping", "Nobody-User");
	if (resolve_nobody(v ? v : "nobody", false, &st->nobody_uid) < 0) {
		if (v)
			log_warning(ctx, "[Mapping] Nobody-User: no user '%s'; using 65534", v);
		st->nobody_uid = 65534;
	}
	v = nfskeys_conf_get(ctx, "Mapping", "Nobody-Group");
	if (resolve_nobody(v ? v : "nogroup", true, &st->nobody_gid) < 0 &&
	    (v || resolve_nobody("nobody", true, &st->nobody_gid) < 0)) {
		if (v)
			log_warning(ctx, "[Mapping] Nobody-Group: no group '%s'; using 65534", v);
		st->nobody_gid = 65534;
	}

	v = nfskeys_conf_get(ctx, "Translation", "Method");
	snprintf(st->method_text, sizeof(st->method_text), "%s", v && *v ? v : "nsswitch");
	r = chain_parse(ctx, st, st->method_text, st->chain, &st->n_chain);
	if (r < 0)
		goto fail;
	v = nfskeys_conf_get(ctx, "Translation", "GSS-Methods");
	snprintf(st->gss_method_text, sizeof(st->gss_method_text), "%s",
		 v && *v ? v : st->method_text);
	r = chain_parse(ctx, st, st->gss_method_text, st->gss_chain, &st->n_gss_chain);
	if (r < 0)
		goto fail;

	pure_sid_find(st);
	st->cache = idmap_cache_new(cache_size ? cache_size : 1);
	if (!st->cache) {
		r = -ENOMEM;
		goto fail;
	}
	log_debug(ctx, "idmap: domain %s (%s), Method %s, GSS-Methods %s", st->domain,
		  st->domain_source, st->method_text, st->gss_method_text);
	*ret = st;
	return 0;
fail:
	state_free(st);
	return r;
}

int idmap_state_get(struct nfskeys_ctx *ctx, struct idmap_state **ret)
{
	struct idmap_state *st;
	int r = 0;

	st = ctx_ext_get(ctx, CTX_EXT_IDMAP);
	if (_likely_(st != NULL)) {
		*ret = st;
		return 0;
	}
	pthread_mutex_lock(&init_lock);
	st = ctx_ext_get(ctx, CTX_EXT_IDMAP);
	if (!st) {
		r = state_new(ctx, &st);
		if (r == 0)
			ctx_ext_set(ctx, CTX_EXT_IDMAP, st, state_free);
	}
	pthread_mutex_unlock(&init_lock);
	if (r == 0)
		*ret = st;
	return r;
}

/* Split and validate key into req (name/domain parts in buf). */
int idmap_request_prepare(struct idmap_state *st, unsigned kind, const char *key, char *buf,
			  size_t bufsize, struct nfskeys_sid *sid,
			   struct nfskeys_idmap_request *req)
{
	size_t len = strlen(key);
	int r;

	if (len == 0 || len >= bufsize)
		return -EINVAL;
	req->kind = kind;
	req->key = key;
	req->nfs_domain = st->domain;
	if (kind_is_name(kind)) {
		char *at;

		memcpy(buf, key, len + 1);
		at = strrchr(buf, '@');
		if (at) {
			*at = '\0';
			req->domain = at + 1;
			if (!*req->domain)
				return -EINVAL;
		}
		/* "@localdomain": an owner with no user part, which nfsidmap maps to nobody;
		 * no backend is asked (idmap_chain_run) */
		if (!*buf && !at)
			return -EINVAL;
		req->name = buf;
	} else if (kind_is_id(kind)) {
		r = idmap_parse_id(key, &req->id);
		if (r < 0)
			return -EINVAL;
	} else if (kind_is_sid(kind)) {
		r = nfskeys_sid_from_string(key, sid);
		if (r < 0)
			return r;
		req->sid = sid;
	}
	return 0;
}

void _printf_(2, 3) idmap_trace_add(struct trace *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!t || t->len >= t->size)
		return;
	va_start(ap, fmt);
	n = vsnprintf(t->buf + t->len, t->size - t->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		t->len = MIN(t->size - 1, t->len + (size_t)n);
}

int idmap_chain_run(struct nfskeys_ctx *ctx, struct idmap_state *st,
		     struct nfskeys_idmap_request *req, struct nfskeys_idmap_answer *ret,
		     struct nfskeys_idmap_answer *ret_reverse, struct trace *t,
		     struct backend **ret_backend)
{
	struct backend **chain = req->kind == NFSKEYS_IDMAP_PRINCIPAL_TO_IDS ? st->gss_chain :
									      st->chain;
	size_t n = req->kind == NFSKEYS_IDMAP_PRINCIPAL_TO_IDS ? st->n_gss_chain : st->n_chain;
	unsigned rkind = ret_reverse && !req->nowait ? reverse_kind(req->kind) : 0;
	int failure = 0;
	bool asked = false;

	if (ret_reverse)
		ret_reverse->kind = 0;
	if (kind_is_sid(req->kind) &&
	    idmap_builtin_sid(st, req->kind, req->key, req->sid, ret) == 0) {
		idmap_trace_add(t, "  %-9s answered: a Unix SID names the id itself\n", "builtin");
		if (ret_backend)
			*ret_backend = NULL;
		return 0;
	}
	if (kind_is_name(req->kind) && !*req->name) {
		idmap_trace_add(t, "  %-9s no user part in \"%s\": no backend asked\n", "builtin",
				req->key);
		if (t) {
			t->worst_cause = IDMAP_CAUSE_NO_SUCH;
			snprintf(t->reason, sizeof(t->reason), "no user part in the name");
		}
		return -ENOENT;
	}
	for (size_t i = 0; i < n; i++) {
		struct backend *b = chain[i];
		struct nfskeys_idmap_answer a, rev;
		char reason[256];
		bool pair;
		lookup_fn fn;
		int r;

		if (!b->ops) {
			asked = true;
			if (!failure)
				failure = -EHOSTDOWN;
			if (t && !t->down_backend[0])
				snprintf(t->down_backend, sizeof(t->down_backend), "%s",
					 b->method);
			idmap_trace_add(t, "  %-9s FAILED: backend not available (%s)\n", b->method,
				  strerror(-b->load_error));
			if (t) {
				t->worst_cause = IDMAP_CAUSE_BACKEND_DOWN;
				snprintf(t->reason, sizeof(t->reason), "not loaded: %s",
					 strerror(-b->load_error));
			}
			continue;
		}
		if (!(b->ops->kinds & IDMAP_KIND_BIT(req->kind))) {
			idmap_trace_add(t, "  %-9s does not map %s\n", b->method,
				  kind_names[req->kind]);
			continue;
		}
		fn = b->ops->lookup;
		if (req->nowait && !(fn = backend_nowait_fn(b, req->kind))) {
			/* a later backend must not answer what this one might */
			idmap_trace_add(t, "  %-9s may block: a NOWAIT lookup stops here\n",
					b->method);
			req->reason = NULL;
			return -EWOULDBLOCK;
		}
		asked = true;
		/* backends fill what their kinds need; the rest starts empty (no 700-byte
		 * memset on the hot path) */
		a.flags = 0;
		a.id = a.gid = a.n_groups = 0;
		a.name[0] = a.backend[0] = '\0';
		if (req->kind == NFSKEYS_IDMAP_UID_TO_SID || req->kind == NFSKEYS_IDMAP_GID_TO_SID)
			memset(&a.sid, 0, sizeof(a.sid));
		reason[0] = '\0';
		req->reason = reason;
		req->reason_size = sizeof(reason);
		req->cause = IDMAP_CAUSE_NONE;
		pair = rkind && backend_has_pair(b);
		if (pair) {
			rev.kind = 0;
			rev.flags = 0;
			rev.id = rev.gid = rev.n_groups = 0;
			rev.name[0] = rev.backend[0] = '\0';
			r = b->ops->lookup_pair(b->data, ctx, req, &a, &rev);
		} else {
			r = fn(b->data, ctx, req, &a);
		}
		if (r == -EWOULDBLOCK) {
			idmap_trace_add(t, "  %-9s cannot answer without blocking\n", b->method);
			req->reason = NULL;
			return -EWOULDBLOCK;
		}
		if (r == 0) {
			a.kind = req->kind;
			a.error = 0;
			a.flags &= NFSKEYS_IDMAP_ANSWER_TRUNCATED;
			/* method is NUL-terminated and shorter than backend (no snprintf here) */
			_Static_assert(sizeof(b->method) <= sizeof(a.backend), "backend name");
			memcpy(a.backend, b->method, sizeof(b->method));
			a.ttl = b->ops->ttl ? b->ops->ttl : st->pos_ttl;
			idmap_trace_add(t, "  %-9s answered\n", b->method);
			*ret = a;
			if (ret_backend)
				*ret_backend = b;
			/* the id's name from the same search, when the chain would answer the
			 * id with this backend too: as if looked up (kind, backend, TTL) */
			if (pair && rev.kind == rkind && rev.id == a.id &&
			    reverse_is_by(ctx, st, b, rkind, a.id)) {
				rev.error = 0;
				rev.flags = 0;
				memcpy(rev.backend, b->method, sizeof(b->method));
				rev.ttl = a.ttl;
				*ret_reverse = rev;
			}
			return 0;
		}
		if (r != -ENOENT) {
			log_debug(ctx, "idmap: backend %s failed for %s: %s", b->method, req->key,
				  strerror(-r));
			if (!failure)
				failure = r;
			if (t && !t->down_backend[0])
				snprintf(t->down_backend, sizeof(t->down_backend), "%s",
					 b->method);
			if (req->cause == IDMAP_CAUSE_NONE)
				req->cause = IDMAP_CAUSE_BACKEND_DOWN;
		} else if (req->cause == IDMAP_CAUSE_NONE) {
			req->cause = IDMAP_CAUSE_NO_SUCH;
		}
		idmap_trace_add(t, "  %-9s %s: %s\n", b->method,
			  r == -ENOENT ? "not found" : "FAILED", reason[0] ? reason : strerror(-r));
		if (t) {
			/* The most telling cause wins: down > realm > domain > no such. */
			static const int rank[] = {
				[IDMAP_CAUSE_NONE] = 0,	       [IDMAP_CAUSE_NOT_HANDLED] = 1,
				[IDMAP_CAUSE_NO_SUCH] = 2,     [IDMAP_CAUSE_DOMAIN_MISMATCH] = 3,
				[IDMAP_CAUSE_REALM] = 4,       [IDMAP_CAUSE_BACKEND_DOWN] = 5,
			};
			if (req->cause < ARRAY_SIZE(rank) &&
			    rank[req->cause] > rank[t->worst_cause]) {
				t->worst_cause = req->cause;
				snprintf(t->reason, sizeof(t->reason), "%s", reason);
			}
		}
	}
	req->reason = NULL;
	if (failure && asked)
		return failure;
	/* nothing found (and no backend down): the meanings fixed outside the backends */
	if (idmap_builtin_fallback(st, req, ret) == 0) {
		idmap_trace_add(t, "  %-9s answered: %s\n", "builtin",
				kind_is_name(req->kind) ? "a numeric or nobody owner"
							: "the Unix SID of an id no domain has");
		if (ret_backend)
			*ret_backend = NULL;
		return 0;
	}
	return -ENOENT;
}

static void nobody_answer(struct idmap_state *st, unsigned kind, int error,
			  struct nfskeys_idmap_answer *ret)
{
	memset(ret, 0, sizeof(*ret));
	ret->kind = kind;
	ret->flags = NFSKEYS_IDMAP_ANSWER_NOBODY;
	ret->error = error;
	ret->ttl = st->nobody_ttl;
	ret->id = kind_is_group(kind) ? st->nobody_gid : st->nobody_uid;
	ret->gid = st->nobody_gid;
	snprintf(ret->backend, sizeof(ret->backend), "nobody");
}

/* Everything after a cache miss (kept out of line so the hit path sets up no request,
 * key buffer or answer on the stack). */
static __attribute__((noinline)) int lookup_slow(struct nfskeys_ctx *ctx, struct idmap_state *st,
				  enum nfskeys_idmap_kind kind, const char *key, unsigned flags,
				  int r, struct nfskeys_idmap_answer *ret,
				  struct nfskeys_idmap_answer *ret_reverse)
{
	struct nfskeys_idmap_request req = { 0 };
	struct nfskeys_idmap_answer rev = { .kind = 0 };
	struct backend *by = NULL;
	struct nfskeys_sid sid;
	char buf[KEY_MAX];

	if (r < 0)
		goto fail;
	r = idmap_request_prepare(st, kind, key, buf, sizeof(buf), &sid, &req);
	if (r < 0)
		return r; /* malformed keys never get nobody */
	req.nowait = flags & NFSKEYS_IDMAP_LOOKUP_NOWAIT;
	/* idmap_chain_run() writes ret only on success (no second copy of the answer here) */
	/* a reverse only where it can be used: the cache, or a caller that asked for it */
	r = idmap_chain_run(ctx, st, &req, ret,
			    ret_reverse || !(flags & NFSKEYS_IDMAP_LOOKUP_NO_CACHE) ? &rev : NULL,
			    NULL, &by);
	if (!(flags & NFSKEYS_IDMAP_LOOKUP_NO_CACHE)) {
		/* a pure backend's answer is recomputed next time (lookup_pure_sid) */
		if (r == 0 && !(kind_is_sid(kind) && by == st->pure_sid[kind_sid_index(kind)]))
			idmap_cache_put(st->cache, kind, key, ret, 0, ret->ttl);
		else if (r == -ENOENT)
			idmap_cache_put(st->cache, kind, key, NULL, r, st->neg_ttl);
		if (r == 0 && rev.kind) {
			char rkey[16];

			snprintf(rkey, sizeof(rkey), "%" PRIu32, rev.id);
			idmap_cache_put(st->cache, rev.kind, rkey, &rev, 0, rev.ttl);
		}
	}
	if (r == 0 && ret_reverse)
		*ret_reverse = rev;
	if (r == 0)
		return 0;
fail:
	if ((flags & NFSKEYS_IDMAP_LOOKUP_NOBODY) && kind_has_nobody(kind) && r != -EWOULDBLOCK) {
		nobody_answer(st, kind, r, ret);
		return 0;
	}
	return r;
}

/* SID->uid/gid answered by a pure backend's computation: no cache (neither read nor
 * filled, so ANSWER_CACHED stays clear), the same answer, TTL and backend name as
 * idmap_chain_run() would give.  -EAGAIN when the backend needs its full lookup. */
static int lookup_pure_sid(struct idmap_state *st, unsigned kind, const char *key,
			   struct nfskeys_idmap_answer *ret)
{
	const struct backend *b = st->pure_sid[kind_sid_index(kind)];
	uint32_t id;

	if (!b || b->ops->pure_sid_to_id(b->data, key, &id) < 0)
		return -EAGAIN;
	ret->kind = kind;
	ret->flags = 0;
	ret->error = 0;
	ret->ttl = b->ops->ttl ? b->ops->ttl : st->pos_ttl;
	ret->id = id;
	ret->gid = ret->n_groups = 0;
	ret->name[0] = '\0';
	memcpy(ret->backend, b->method, sizeof(b->method));
	return 0;
}

#define LOOKUP_FLAGS_KNOWN                                                                 \
	(NFSKEYS_IDMAP_LOOKUP_NOBODY | NFSKEYS_IDMAP_LOOKUP_NO_CACHE | NFSKEYS_IDMAP_LOOKUP_NOWAIT)

/* ret_reverse (may be NULL): on success, the id -> name answer that came with a name -> id
 * one (lookup_pair), kind 0 when none did (a cache hit, another backend, ...). */
static int lookup_impl(struct nfskeys_ctx *ctx, enum nfskeys_idmap_kind kind, const char *key,
		       unsigned flags, struct nfskeys_idmap_answer *ret,
		       struct nfskeys_idmap_answer *ret_reverse)
{
	struct idmap_state *st;
	int r = 0;

	if (!ctx || !key || !ret || !kind_valid(kind) || (flags & ~LOOKUP_FLAGS_KNOWN))
		return -EINVAL;
	/* NOWAIT loads no plugin and reads no configuration: that is the first lookup's */
	if ((flags & NFSKEYS_IDMAP_LOOKUP_NOWAIT) && !ctx_ext_get(ctx, CTX_EXT_IDMAP))
		return -EWOULDBLOCK;
	r = idmap_state_get(ctx, &st);
	if (r < 0)
		return r;
	if (kind_is_sid(kind) && (idmap_builtin_sid(st, kind, key, NULL, ret) == 0 ||
				  lookup_pure_sid(st, kind, key, ret) == 0))
		return 0;
	if (!(flags & NFSKEYS_IDMAP_LOOKUP_NO_CACHE)) {
		/* the hot path: a hit is copied straight into ret (and only then written);
		 * a negative hit (r < 0) goes on to the nobody handling */
		r = idmap_cache_get(st->cache, kind, key, ret);
		if (r > 0) {
			if (ret_reverse)
				ret_reverse->kind = 0;
			return 0;
		}
	}
	r = lookup_slow(ctx, st, kind, key, flags, r, ret, ret_reverse);
	/* a nobody answer (the chain failed) comes with no reverse */
	if (r == 0 && ret_reverse && (ret->flags & NFSKEYS_IDMAP_ANSWER_NOBODY))
		ret_reverse->kind = 0;
	return r;
}

_public_ int nfskeys_idmap_lookup_full(struct nfskeys_ctx *ctx, enum nfskeys_idmap_kind kind,
				       const char *key, unsigned flags,
				       struct nfskeys_idmap_answer *ret)
{
	return lookup_impl(ctx, kind, key, flags, ret, NULL);
}

_public_ int nfskeys_idmap_lookup_pair(struct nfskeys_ctx *ctx, enum nfskeys_idmap_kind kind,
				       const char *key, unsigned flags,
				       struct nfskeys_idmap_answer *ret,
				       struct nfskeys_idmap_answer *ret_reverse)
{
	if (!ret_reverse)
		return -EINVAL;
	return lookup_impl(ctx, kind, key, flags, ret, ret_reverse);
}

_public_ int nfskeys_idmap_lookup(struct nfskeys_ctx *ctx, enum nfskeys_idmap_kind kind,
				  const char *key, struct nfskeys_idmap_answer *ret)
{
	return lookup_impl(ctx, kind, key, 0, ret, NULL);
}

static int lookup_answer(struct nfskeys_ctx *ctx, unsigned kind, const char *key,
			 struct nfskeys_idmap_answer *a, struct nfskeys_idmap_answer *ret_answer)
{
	int r = nfskeys_idmap_lookup(ctx, (enum nfskeys_idmap_kind)kind, key, a);

	if (r == 0 && ret_answer)
		*ret_answer = *a;
	return r;
}

_public_ int nfskeys_idmap_name_to_uid(struct nfskeys_ctx *ctx, const char *name,
				       uid_t *ret_uid, struct nfskeys_idmap_answer *ret_answer)
{
	struct nfskeys_idmap_answer a;
	int r = lookup_answer(ctx, NFSKEYS_IDMAP_NAME_TO_UID, name, &a, ret_answer);

	if (r == 0 && ret_uid)
		*ret_uid = a.id;
	return r;
}

_public_ int nfskeys_idmap_group_to_gid(struct nfskeys_ctx *ctx, const char *group,
					gid_t *ret_gid, struct nfskeys_idmap_answer *ret_answer)
{
	struct nfskeys_idmap_answer a;
	int r = lookup_answer(ctx, NFSKEYS_IDMAP_GROUP_TO_GID, group, &a, ret_answer);

	if (r == 0 && ret_gid)
		*ret_gid = a.id;
	return r;
}

static int id_to_name(struct nfskeys_ctx *ctx, unsigned kind, uint32_t id, char **ret_name,
		      struct nfskeys_idmap_answer *ret_answer)
{
	struct nfskeys_idmap_answer a;
	char key[16];
	char *s = NULL;
	int r;

	snprintf(key, sizeof(key), "%" PRIu32, id);
	r = nfskeys_idmap_lookup(ctx, (enum nfskeys_idmap_kind)kind, key, &a);
	if (r < 0)
		return r;
	if (ret_name) {
		s = strdup(a.name);
		if (!s)
			return -ENOMEM;
		*ret_name = s;
	}
	if (ret_answer)
		*ret_answer = a;
	return 0;
}

_public_ int nfskeys_idmap_uid_to_name(struct nfskeys_ctx *ctx, uid_t uid, char **ret_name,
				       struct nfskeys_idmap_answer *ret_answer)
{
	return id_to_name(ctx, NFSKEYS_IDMAP_UID_TO_NAME, uid, ret_name, ret_answer);
}

_public_ int nfskeys_idmap_gid_to_group(struct nfskeys_ctx *ctx, gid_t gid, char **ret_group,
					struct nfskeys_idmap_answer *ret_answer)
{
	return id_to_name(ctx, NFSKEYS_IDMAP_GID_TO_GROUP, gid, ret_group, ret_answer);
}

_public_ int nfskeys_idmap_principal_to_ids(struct nfskeys_ctx *ctx, const char *principal,
					    uid_t *ret_uid, gid_t *ret_gid, gid_t **ret_groups,
					    size_t *ret_ngroups,
					    struct nfskeys_idmap_answer *ret_answer)
{
	struct nfskeys_idmap_answer a;
	gid_t *groups = NULL;
	int r;

	r = nfskeys_idmap_lookup(ctx, NFSKEYS_IDMAP_PRINCIPAL_TO_IDS, principal, &a);
	if (r < 0)
		return r;
	if (ret_groups) {
		groups = calloc(a.n_groups ? a.n_groups : 1, sizeof(gid_t));
		if (!groups)
			return -ENOMEM;
		for (uint32_t i = 0; i < a.n_groups; i++)
			groups[i] = a.groups[i];
		*ret_groups = groups;
	}
	if (ret_ngroups)
		*ret_ngroups = a.n_groups;
	if (ret_uid)
		*ret_uid = a.id;
	if (ret_gid)
		*ret_gid = a.gid;
	if (ret_answer)
		*ret_answer = a;
	return 0;
}

_public_ int nfskeys_idmap_sid_to_uid(struct nfskeys_ctx *ctx, const char *sid, uid_t *ret_uid,
				      struct nfskeys_idmap_answer *ret_answer)
{
	struct nfskeys_idmap_answer a;
	int r = lookup_answer(ctx, NFSKEYS_IDMAP_SID_TO_UID, sid, &a, ret_answer);

	if (r == 0 && ret_uid)
		*ret_uid = a.id;
	return r;
}

_public_ int nfskeys_idmap_sid_to_gid(struct nfskeys_ctx *ctx, const char *sid, gid_t *ret_gid,
				      struct nfskeys_idmap_answer *ret_answer)
{
	struct nfskeys_idmap_answer a;
	int r = lookup_answer(ctx, NFSKEYS_IDMAP_SID_TO_GID, sid, &a, ret_answer);

	if (r == 0 && ret_gid)
		*ret_gid = a.id;
	return r;
}

static int id_to_sid(struct nfskeys_ctx *ctx, unsigned kind, uint32_t id,
		     struct nfskeys_sid *ret_sid, struct nfskeys_idmap_answer *ret_answer)
{
	struct nfskeys_idmap_answer a;
	char key[16];
	int r;

	snprintf(key, sizeof(key), "%" PRIu32, id);
	r = nfskeys_idmap_lookup(ctx, (enum nfskeys_idmap_kind)kind, key, &a);
	if (r < 0)
		return r;
	if (ret_sid)
		*ret_sid = a.sid;
	if (ret_answer)
		*ret_answer = a;
	return 0;
}

_public_ int nfskeys_idmap_uid_to_sid(struct nfskeys_ctx *ctx, uid_t uid,
				      struct nfskeys_sid *ret_sid,
				      struct nfskeys_idmap_answer *ret_answer)
{
	return id_to_sid(ctx, NFSKEYS_IDMAP_UID_TO_SID, uid, ret_sid, ret_answer);
}

_public_ int nfskeys_idmap_gid_to_sid(struct nfskeys_ctx *ctx, gid_t gid,
				      struct nfskeys_sid *ret_sid,
				      struct nfskeys_idmap_answer *ret_answer)
{
	return id_to_sid(ctx, NFSKEYS_IDMAP_GID_TO_SID, gid, ret_sid, ret_answer);
}

_public_ int nfskeys_idmap_flush(struct nfskeys_ctx *ctx)
{
	struct idmap_state *st;
	int r;

	if (!ctx)
		return -EINVAL;
	r = idmap_state_get(ctx, &st);
	if (r < 0)
		return r;
	idmap_cache_clear(st->cache);
	return 0;
}

_public_ int nfskeys_idmap_flush_key(struct nfskeys_ctx *ctx, enum nfskeys_idmap_kind kind,
				     const char *key)
{
	struct idmap_state *st;
	int r;

	if (!ctx || !key || !kind_valid(kind))
		return -EINVAL;
	r = idmap_state_get(ctx, &st);
	if (r < 0)
		return r;
	return idmap_cache_drop(st->cache, kind, key);
}

_public_ int nfskeys_idmap_cache_stats(struct nfskeys_ctx *ctx,
				       struct nfskeys_idmap_cache_stats *ret)
{
	struct idmap_state *st;
	int r;

	if (!ctx || !ret)
		return -EINVAL;
	r = idmap_state_get(ctx, &st);
	if (r < 0)
		return r;
	idmap_cache_get_stats(st->cache, ret);
	return 0;
}

/* "nsswitch, sid, static" from the idmap-*.so plugins installed; "" when none. */
void idmap_installed_backends(char *buf, size_t size)
{
	char **names = NULL;
	size_t n = 0, len = 0;

	buf[0] = '\0';
	if (plugin_list(NFSKEYS_PLUGIN_IDMAP, &names, &n) < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		const char *m = strncmp(names[i], "idmap-", 6) == 0 ? names[i] + 6 : names[i];
		int w = snprintf(buf + len, size - len, "%s%s", len ? ", " : "", m);

		if (w > 0 && (size_t)w < size - len)
			len += (size_t)w;
		free(names[i]);
	}
	free(names);
}

/* A chain entry that names no installed backend is a typo, not an outage. */
static const struct backend *unknown_backend(struct backend *const *chain, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!chain[i]->ops && chain[i]->load_error == -ENOENT)
			return chain[i];
	return NULL;
}

_public_ int nfskeys_idmap_check_config(struct nfskeys_ctx *ctx)
{
	const struct backend *b;
	struct idmap_state *st;
	const char *key = "Method", *text;
	char installed[256];
	int r;

	if (!ctx)
		return -EINVAL;
	r = idmap_state_get(ctx, &st);
	if (r < 0)
		return r;
	text = st->method_text;
	b = unknown_backend(st->chain, st->n_chain);
	if (!b) {
		key = "GSS-Methods";
		text = st->gss_method_text;
		b = unknown_backend(st->gss_chain, st->n_gss_chain);
	}
	if (!b)
		return 0;
	idmap_installed_backends(installed, sizeof(installed));
	log_err(ctx, "unknown backend '%s' ([Translation] %s = %s in %s): no idmap-%s.so in %s "
		"(installed: %s)", b->method, key, text, nfskeys_ctx_get_conf_path(ctx),
		strcaseeq(b->method, "umich_ldap") ? "ldap" : b->method, plugin_dir(),
		installed[0] ? installed : "none");
	return -EINVAL;
}

_public_ int nfskeys_idmap_get_domain(struct nfskeys_ctx *ctx, const char **ret_domain,
				      const char **ret_source)
{
	struct idmap_state *st;
	int r;

	if (!ctx || !ret_domain)
		return -EINVAL;
	r = idmap_state_get(ctx, &st);
	if (r < 0)
		return r;
	*ret_domain = st->domain;
	if (ret_source)
		*ret_source = st->domain_source;
	return 0;
}
