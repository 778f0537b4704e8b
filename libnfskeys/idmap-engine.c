/* The ID-mapping engine's lookup: the cache first, then the chain walk (idmap-chain.c),
 * then the nobody fallback with its short TTL.  SID answers a pure algorithmic backend
 * computes faster than a cache probe skip the cache.  Explanations live in idmap-explain.c,
 * the kernel's upcall formats in idmap-kernel.c, the typed wrappers in idmap-public.c. */
#include <inttypes.h>

#include "idmap-engine.h"

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

			idmap_cache_put(st->cache, rev.kind, idmap_reverse_key(ret, &rev, rkey),
					&rev, 0, rev.ttl);
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
