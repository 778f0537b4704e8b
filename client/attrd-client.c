/* Typed calls to nfskeys-attrd: packing a policy into a SET, keys into an UNSET (the
 * directory travels as a descriptor), unpacking lookups and statistics. */
#include <stdio.h>

#include "macros.h"
#include "attrd-client.h"
#include "socket-path.h"
#include "stats.h"
/* after macros.h: <rpc/rpc.h> redefines MIN/MAX in its system header */
#include "attr.h"

const char *attrd_socket_path(struct nfskeys_ctx *ctx, const char *explicit_path)
{
	static __thread char buf[4096];

	if (explicit_path && *explicit_path)
		return explicit_path;
	if (!ctx)
		return RUNDIR "/attrd.sock";
	return socket_path_pick(nfskeys_conf_get(ctx, "Attrd", "Socket"),
				nfskeys_conf_get(ctx, "General", "Runtime-Dir"), "attrd.sock",
				RUNDIR "/attrd.sock", buf, sizeof(buf));
}

int attrd_client_new(const char *path, int timeout_ms, struct rpc_client **ret_client)
{
	return rpc_client_new(path, NFSKEYS_ATTRD_PROG, NFSKEYS_ATTRD_V1, timeout_ms, 512 * 1024,
			      ret_client);
}

static void copy_msg(char *dst, size_t size, const char *src)
{
	if (dst && size)
		snprintf(dst, size, "%s", src ? src : "");
}

static int change_result(attrd_change_res *res, char *msg, size_t msg_size, char **ret_where,
			 unsigned *ret_changed)
{
	copy_msg(msg, msg_size, res->message);
	if (res->status < 0)
		return res->status;
	if (ret_where && asprintf(ret_where, "%s%s", res->domain ? res->domain : "",
				  res->path ? res->path : "") < 0)
		return -ENOMEM;
	if (ret_changed)
		*ret_changed = res->changed;
	return 0;
}

int attrd_client_set(struct rpc_client *c, int dirfd, const struct nfskeys_attr_policy *policy,
		     char *msg, size_t msg_size, char **ret_where)
{
	size_t n = nfskeys_attr_policy_count(policy);
	_cleanup_free_ attrd_kv *kv = NULL;
	attrd_set_args args = {};
	attrd_change_res res = {};
	int r;

	copy_msg(msg, msg_size, "");
	if (dirfd < 0 || !policy || n == 0 || n > ATTRD_ATTRS_MAX)
		return -EINVAL;
	kv = calloc(n, sizeof(*kv));
	if (!kv)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct nfskeys_attr_entry e;
		nfskeys_attr_policy_entry(policy, i, &e);
		kv[i].key = (char *)e.key;
		kv[i].value = (char *)e.value;
	}
	args.attrs.attrs_len = (u_int)n;
	args.attrs.attrs_val = kv;
	r = rpc_client_call_fd(c, ATTRD_SET, (xdrproc_t)xdr_attrd_set_args, &args, dirfd,
			       (xdrproc_t)xdr_attrd_change_res, &res);
	if (r < 0)
		return r;
	r = change_result(&res, msg, msg_size, ret_where, NULL);
	xdr_free((xdrproc_t)xdr_attrd_change_res, (char *)&res);
	return r;
}

int attrd_client_unset(struct rpc_client *c, int dirfd, const char *const *keys, char *msg,
		       size_t msg_size, unsigned *ret_changed)
{
	attrd_unset_args args = { .all = !keys };
	attrd_change_res res = {};
	size_t n = 0;
	int r;

	copy_msg(msg, msg_size, "");
	if (dirfd < 0)
		return -EINVAL;
	while (keys && keys[n])
		n++;
	if (n > ATTRD_ATTRS_MAX)
		return -E2BIG;
	args.keys.keys_len = (u_int)n;
	args.keys.keys_val = (attrd_key *)keys;
	r = rpc_client_call_fd(c, ATTRD_UNSET, (xdrproc_t)xdr_attrd_unset_args, &args, dirfd,
			       (xdrproc_t)xdr_attrd_change_res, &res);
	if (r < 0)
		return r;
	r = change_result(&res, msg, msg_size, NULL, ret_changed);
	xdr_free((xdrproc_t)xdr_attrd_change_res, (char *)&res);
	return r;
}

int attrd_client_lookup(struct rpc_client *c, const char *domain, const char *path,
			unsigned flags,
			void (*fn)(void *userdata, const char *key, const char *value,
				   const char *source, bool from_ldap),
			void *userdata, char **ret_cut)
{
	attrd_lookup_args args = { .domain = (char *)domain, .path = (char *)path, .flags = flags };
	attrd_lookup_res res = {};
	int r;

	if (!domain || !path)
		return -EINVAL;
	r = rpc_client_call(c, ATTRD_LOOKUP, (xdrproc_t)xdr_attrd_lookup_args, &args,
			    (xdrproc_t)xdr_attrd_lookup_res, &res);
	if (r < 0)
		return r;
	r = res.status;
	if (r < 0)
		goto out;
	for (u_int i = 0; i < res.entries.entries_len; i++) {
		attrd_entry *e = &res.entries.entries_val[i];
		if (fn)
			fn(userdata, e->key, e->value, e->source ? e->source : "", e->from_ldap);
	}
	if (ret_cut) {
		*ret_cut = NULL;
		if (res.cut && *res.cut && !(*ret_cut = strdup(res.cut))) {
			r = -ENOMEM;
			goto out;
		}
	}
	r = (int)res.entries.entries_len;
out:
	xdr_free((xdrproc_t)xdr_attrd_lookup_res, (char *)&res);
	return r;
}

int attrd_client_ping(struct rpc_client *c, char *release, size_t release_size,
		      uint32_t *ret_pid, uint64_t *ret_policies)
{
	return rpc_client_ping(c, ATTRD_PING, release, release_size, ret_pid, NULL,
			       ret_policies);
}

int attrd_client_reload(struct rpc_client *c, char *msg, size_t msg_size)
{
	return rpc_client_reload(c, ATTRD_RELOAD, msg, msg_size, NULL);
}

int attrd_client_print_stats(struct rpc_client *c, FILE *f, int format)
{
	return stats_client_print(c, ATTRD_STATS, f, (enum stats_format)format, "nfskeys_attrd_");
}

int attrd_client_mounts(struct rpc_client *c, bool *ret_enabled, unsigned *ret_more,
			void (*fn)(void *userdata, const struct attrd_client_mount *m),
			void *userdata)
{
	attrd_mounts_res res = {};
	int r = rpc_client_call(c, ATTRD_MOUNTS, NULL, NULL,
				(xdrproc_t)xdr_attrd_mounts_res, &res);

	if (r < 0)
		return r;
	r = res.status;
	if (r == 0) {
		*ret_enabled = res.enabled;
		*ret_more = res.more;
		for (u_int i = 0; i < res.mounts.mounts_len; i++) {
			attrd_mount *e = &res.mounts.mounts_val[i];
			struct attrd_client_mount m = {
				.target = e->target, .source = e->source, .options = e->options,
				.state = e->state, .error = e->error, .layers = e->layers,
				.mount_id = e->mount_id, .since = e->since,
				.server = e->server, .waiting = e->waiting,
			};
			fn(userdata, &m);
		}
	}
	xdr_free((xdrproc_t)xdr_attrd_mounts_res, (char *)&res);
	return r;
}
