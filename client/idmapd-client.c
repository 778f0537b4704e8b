/* Typed calls to nfskeys-idmapd: argument packing, answer conversion to the engine's
 * struct nfskeys_idmap_answer, and stats rendering through common/stats.c. */
#include <stdio.h>

#include "idmapd-client.h"
#include "macros.h"
#include "socket-path.h"
#include "stats.h"
/* after macros.h: <rpc/rpc.h> redefines MIN/MAX silently in its system header */
#include "idmap.h"

const char *idmapd_socket_path(struct nfskeys_ctx *ctx, const char *explicit_path)
{
	static __thread char buf[4096];

	if (explicit_path && *explicit_path)
		return explicit_path;
	if (!ctx)
		return IDMAPD_SOCKET_DEFAULT;
	return socket_path_pick(nfskeys_conf_get(ctx, "Idmapd", "Socket"),
				nfskeys_conf_get(ctx, "General", "Runtime-Dir"), "idmapd.sock", IDMAPD_SOCKET_DEFAULT, buf,
				sizeof(buf));
}

int idmapd_client_new(const char *path, int timeout_ms, struct rpc_client **ret_client)
{
	return rpc_client_new(path, NFSKEYS_IDMAPD_PROG, NFSKEYS_IDMAPD_V1, timeout_ms,
			      256 * 1024, ret_client);
}

/* (not snprintf: this runs twice per answer, and a batch decodes up to 64 answers) */
static void copy_str(char *dst, size_t size, const char *src)
{
	size_t n = src ? strnlen(src, size - 1) : 0;

	if (n)
		memcpy(dst, src, n);
	dst[n] = 0;
}

/* An answer from its wire form; consumes nothing. */
static int answer_from_wire(const idmapd_lookup_res *res, struct nfskeys_idmap_answer *ret,
			    unsigned *ret_flags)
{
	const idmapd_answer *w = &res->idmapd_lookup_res_u.answer;
	struct nfskeys_idmap_answer a = {};

	if (res->status != 0)
		return res->status < 0 ? res->status : -EIO;
	a.kind = w->kind;
	a.flags = w->flags & 0xffff;
	a.error = w->error;
	a.ttl = w->ttl;
	a.id = w->id;
	a.gid = w->gid;
	a.n_groups = MIN(w->groups.groups_len, (unsigned)NFSKEYS_IDMAP_GROUPS_MAX);
	if (a.n_groups)
		memcpy(a.groups, w->groups.groups_val, a.n_groups * sizeof(uint32_t));
	if (w->sid.sid_len > 0 && nfskeys_sid_from_binary(w->sid.sid_val, w->sid.sid_len, &a.sid) < 0)
		return -EPROTO;
	copy_str(a.name, sizeof(a.name), w->name);
	copy_str(a.backend, sizeof(a.backend), w->backend);
	*ret = a;
	if (ret_flags)
		*ret_flags = w->flags;
	return 0;
}

/* Does a successful answer have the shape of an answer to KIND (the kind asked, a name
 * for the *_TO_NAME kinds, a SID for the *_TO_SID kinds)? */
static bool answer_fits(enum nfskeys_idmap_kind kind, const struct nfskeys_idmap_answer *a)
{
	if (a->kind != (uint32_t)kind)
		return false;
	switch (kind) {
	case NFSKEYS_IDMAP_UID_TO_NAME:
	case NFSKEYS_IDMAP_GID_TO_GROUP:
		return a->name[0] != '\0';
	case NFSKEYS_IDMAP_UID_TO_SID:
	case NFSKEYS_IDMAP_GID_TO_SID:
		return a->sid.revision != 0; /* set only when a binary SID was parsed */
	default:
		return true;
	}
}

int idmapd_client_answer(const idmapd_lookup_res *res, enum nfskeys_idmap_kind kind,
			 struct nfskeys_idmap_answer *ret, unsigned *ret_flags)
{
	int r = answer_from_wire(res, ret, ret_flags);

	return r == 0 && !answer_fits(kind, ret) ? -EPROTO : r;
}

int idmapd_client_lookup(struct rpc_client *c, enum nfskeys_idmap_kind kind, const char *key,
			 unsigned flags, struct nfskeys_idmap_answer *ret, unsigned *ret_flags,
			 bool *ret_transport)
{
	idmapd_lookup_args args = { .kind = kind, .flags = flags, .key = (char *)key };
	idmapd_lookup_res res = {};
	int r;

	if (ret_transport)
		*ret_transport = false;
	if (!key || strlen(key) > IDMAPD_KEY_MAX)
		return -EINVAL;
	r = rpc_client_call(c, IDMAPD_LOOKUP, (xdrproc_t)xdr_idmapd_lookup_args, &args,
			    (xdrproc_t)xdr_idmapd_lookup_res, &res);
	if (r < 0) {
		if (ret_transport)
			*ret_transport = true;
		return r;
	}
	r = idmapd_client_answer(&res, kind, ret, ret_flags);
	xdr_free((xdrproc_t)xdr_idmapd_lookup_res, (char *)&res);
	/* A malformed answer is a broken daemon, not its verdict: callers that can resolve
	 * themselves (nfskeys-upcall, as root) must do so, never use what it says. */
	if (r == -EPROTO && ret_transport)
		*ret_transport = true;
	return r;
}

int idmapd_client_lookup_many(struct rpc_client *c, enum nfskeys_idmap_kind kind,
			      const char *const *keys, size_t n, unsigned flags,
			      struct nfskeys_idmap_answer *ret, int *ret_status)
{
	_cleanup_free_ idmapd_lookup_args *args = NULL;
	_cleanup_free_ idmapd_lookup_res *res = NULL;
	int r;

	if (n == 0)
		return 0;
	if (!keys || !ret || !ret_status)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!keys[i] || strlen(keys[i]) > IDMAPD_KEY_MAX)
			return -EINVAL;
	args = calloc(n, sizeof(*args));
	res = calloc(n, sizeof(*res));
	if (!args || !res)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		args[i] = (idmapd_lookup_args){ .kind = kind, .flags = flags, .key = (char *)keys[i] };
	r = rpc_client_call_batch(c, IDMAPD_LOOKUP, (xdrproc_t)xdr_idmapd_lookup_args, args,
				  sizeof(*args), n, (xdrproc_t)xdr_idmapd_lookup_res, res,
				  sizeof(*res), ret_status);
	if (r < 0)
		return r;
	for (size_t i = 0; i < n; i++) {
		if (ret_status[i] < 0)
			continue;
		ret_status[i] = answer_from_wire(&res[i], &ret[i], NULL);
		xdr_free((xdrproc_t)xdr_idmapd_lookup_res, (char *)&res[i]);
	}
	return 0;
}

int idmapd_client_ping(struct rpc_client *c, char *release, size_t release_size,
		       uint32_t *ret_pid, uint64_t *ret_generation)
{
	return rpc_client_ping(c, IDMAPD_PING, release, release_size, ret_pid, ret_generation,
			       NULL);
}

int idmapd_client_flush(struct rpc_client *c, enum nfskeys_idmap_kind kind, const char *key,
			unsigned *ret_dropped, unsigned *ret_keyrings)
{
	idmapd_flush_args args = { .all = !key, .kind = kind, .key = (char *)(key ? key : "") };
	idmapd_flush_res res = {};
	int r;

	r = rpc_client_call(c, IDMAPD_FLUSH, (xdrproc_t)xdr_idmapd_flush_args, &args,
			    (xdrproc_t)xdr_idmapd_flush_res, &res);
	if (r < 0)
		return r;
	if (res.status < 0)
		return res.status;
	if (ret_dropped)
		*ret_dropped = res.dropped;
	if (ret_keyrings)
		*ret_keyrings = res.kernel_keyrings_cleared;
	return 0;
}

int idmapd_client_recent(struct rpc_client *c, enum nfskeys_idmap_kind kind, const char *key,
			 idmapd_recent_res *ret)
{
	idmapd_recent_args args = { .kind = kind, .key = (char *)(key ? key : "") };
	idmapd_recent_res res = {};
	int r;

	r = rpc_client_call(c, IDMAPD_RECENT, (xdrproc_t)xdr_idmapd_recent_args, &args,
			    (xdrproc_t)xdr_idmapd_recent_res, &res);
	if (r < 0)
		return r;
	if (res.status < 0) {
		r = res.status;
		xdr_free((xdrproc_t)xdr_idmapd_recent_res, (char *)&res);
		return r;
	}
	*ret = res;
	return 0;
}

int idmapd_client_namespaces(struct rpc_client *c, idmapd_namespaces_res *ret)
{
	idmapd_namespaces_res res = {};
	int r;

	r = rpc_client_call(c, IDMAPD_NAMESPACES, NULL, NULL, (xdrproc_t)xdr_idmapd_namespaces_res,
			    &res);
	if (r < 0)
		return r;
	if (res.status < 0) {
		r = res.status;
		xdr_free((xdrproc_t)xdr_idmapd_namespaces_res, (char *)&res);
		return r;
	}
	*ret = res;
	return 0;
}

int idmapd_client_reload(struct rpc_client *c, char *message, size_t message_size,
			 uint64_t *ret_generation)
{
	return rpc_client_reload(c, IDMAPD_RELOAD, message, message_size, ret_generation);
}

int idmapd_client_print_stats(struct rpc_client *c, FILE *f, int format)
{
	return stats_client_print(c, IDMAPD_STATS, f, (enum stats_format)format, "nfskeys_idmapd_");
}
