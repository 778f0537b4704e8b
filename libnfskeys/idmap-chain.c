/* The ID-mapping engine's walk: one request down a backend chain (-ENOENT passes on to the
 * next backend), the reverse answer a backend found on the way, and the trace `explain`
 * prints; with the names of the lookup kinds it reports.  The chain itself is loaded by
 * idmap-loader.c. */
#include <inttypes.h>
#include <stdarg.h>

#include "idmap-engine.h"

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

/* The kind that maps an answer back (0: none): name -> id to id -> name and back. */
static unsigned reverse_kind(unsigned kind)
{
	switch (kind) {
	case NFSKEYS_IDMAP_NAME_TO_UID:
		return NFSKEYS_IDMAP_UID_TO_NAME;
	case NFSKEYS_IDMAP_GROUP_TO_GID:
		return NFSKEYS_IDMAP_GID_TO_GROUP;
	case NFSKEYS_IDMAP_UID_TO_NAME:
		return NFSKEYS_IDMAP_NAME_TO_UID;
	case NFSKEYS_IDMAP_GID_TO_GROUP:
		return NFSKEYS_IDMAP_GROUP_TO_GID;
	default:
		return 0;
	}
}

/* Whether the chain's answer for kind/key (an id, or a name for the name -> id kinds)
 * would be by's: every backend before it that maps the kind is asked at once, without
 * blocking, and must not know the key.  One that may block, is not loaded, fails or
 * answers might give another answer: then false (the reverse is looked up on its own, as
 * without lookup_pair). */
static bool reverse_is_by(struct nfskeys_ctx *ctx, struct idmap_state *st,
			  const struct backend *by, unsigned kind, const char *key)
{
	struct nfskeys_idmap_request req = { 0 };
	struct nfskeys_idmap_answer a;
	char buf[KEY_MAX], reason[256];

	/* (a name with no user part is nobody's: the chain would not ask) */
	if (idmap_request_prepare(st, kind, key, buf, sizeof(buf), NULL, &req) < 0 ||
	    (kind_is_name(kind) && !*req.name))
		return false;
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

const char *idmap_reverse_key(const struct nfskeys_idmap_answer *ans,
			      const struct nfskeys_idmap_answer *rev, char buf[16])
{
	if (kind_is_name(rev->kind))
		return ans->name;
	snprintf(buf, 16, "%" PRIu32, rev->id);
	return buf;
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
		char reason[256], rkey[16];
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
			/* the id's name (or the name's id) from the same search, when the chain
			 * would answer that with this backend too: as if looked up (kind,
			 * backend, TTL) */
			if (pair && rev.kind == rkind && rev.id == a.id &&
			    reverse_is_by(ctx, st, b, rkind, idmap_reverse_key(&a, &rev, rkey))) {
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
			/* The most telling cause wins: down > found without an id > realm >
			 * domain > no such. */
			static const int rank[] = {
				[IDMAP_CAUSE_NONE] = 0,	       [IDMAP_CAUSE_NOT_HANDLED] = 1,
				[IDMAP_CAUSE_NO_SUCH] = 2,     [IDMAP_CAUSE_DOMAIN_MISMATCH] = 3,
				[IDMAP_CAUSE_REALM] = 4,       [IDMAP_CAUSE_NO_ID] = 5,
				[IDMAP_CAUSE_BACKEND_DOWN] = 6,
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
