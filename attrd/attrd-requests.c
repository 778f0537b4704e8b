/* nfskeys-attrd's requests: SET and UNSET on a passed directory descriptor (identity,
 * authorization, quotas, durable commit), LOOKUP from the index, and MOUNTS. */
#include <sys/stat.h>

#include "attrd.h"
#include "attrd-mounts.h"
#include "attrd-wb.h"
#include "rpc-args.h"
#include "time-util.h"
/* after macros.h: <rpc/rpc.h> redefines MIN/MAX in its system header */
#include "attr.h"

/* The identity of the directory open as fd: its mount looked up in our mount table, or
 * (a mount of another namespace) in the caller's, read only so far: a caller makes its own
 * namespace's table as long as it likes (doc/security/FINDINGS.md D10). */
static int fd_identity(struct attrd *d, int fd, const struct ucred *peer,
		       struct nfskeys_attr_id **ret_id, char *msg, size_t msg_size)
{
	char peer_mi[64];
	const char *files[] = { "/proc/self/mountinfo", peer_mi, NULL };
	int r;

	snprintf(peer_mi, sizeof(peer_mi), "/proc/%d/mountinfo", (int)peer->pid);
	r = attr_id_from_fd_tables(d->ctx, fd, files, ret_id);
	if (r == -E2BIG)
		snprintf(msg, msg_size, "cannot place the directory: the mount table is longer "
			 "than nfskeys-attrd reads (%d bytes)", ATTR_MOUNTINFO_MAX);
	else if (r == -ESTALE)
		snprintf(msg, msg_size, "cannot place the directory: its mount moved while it "
			 "was looked at, or its path is not in the kernel's cache; try again");
	else if (r < 0)
		snprintf(msg, msg_size, "cannot place the directory in the mount table: %s",
			 strerror(-r));
	return r;
}

/* Take the passed directory, fstat it and work out its identity. */
static int take_dir(struct attrd *d, struct rpc_request *req, int *ret_fd, struct stat *st,
		    struct nfskeys_attr_id **ret_id, char *msg, size_t msg_size)
{
	_cleanup_close_ int fd = -1;
	int r;

	if (rpc_request_take_fd(req, &fd) < 0) {
		snprintf(msg, msg_size, "no directory descriptor came with the request");
		return -EBADF;
	}
	/* Cached attributes only (AT_STATX_DONT_SYNC): a FUSE server that never answers
	 * GETATTR cannot hold the loop; the descriptor is an O_PATH directory (rpc-server). */
	r = attr_fd_stat(fd, st);
	if (r < 0) {
		snprintf(msg, msg_size, "cannot stat the directory: %s", strerror(-r));
		return r;
	}
	if (!S_ISDIR(st->st_mode)) {
		snprintf(msg, msg_size, "the descriptor passed is not a directory");
		return -ENOTDIR;
	}
	r = fd_identity(d, fd, &req->peer, ret_id, msg, msg_size);
	if (r < 0)
		return r;
	*ret_fd = TAKE_FD(fd);
	return 0;
}

/* The directory passed with a change (its identity, and its display form in *ret_where),
 * when the caller may change it; else a message in msg. */
static int take_authorized(struct attrd *d, struct rpc_request *req, int *ret_fd,
			   struct nfskeys_attr_id **ret_id, char **ret_where, bool *ret_admin,
			   char *msg, size_t size)
{
	struct stat st;
	int r = take_dir(d, req, ret_fd, &st, ret_id, msg, size);

	if (r < 0)
		return r;
	*ret_where = attr_id_format(nfskeys_attr_id_get_domain(*ret_id),
				    nfskeys_attr_id_get_path(*ret_id));
	return attrd_authorize(d, &req->peer, &st, *ret_id, *ret_where ? *ret_where : "?",
			       ret_admin, msg, size);
}

/* Answer a set or unset (status r, message msg, the directory id) and free id. */
static void change_reply(struct attrd *d, enum attrd_op op, struct rpc_request *req,
			 attrd_change_res *res, int r, char *msg, struct nfskeys_attr_id *id)
{
	res->status = r;
	res->message = msg;
	res->domain = (char *)(id ? nfskeys_attr_id_get_domain(id) : "");
	res->path = (char *)(id ? nfskeys_attr_id_get_path(id) : "");
	attrd_finish(d, op, req, r);
	rpc_request_reply(req, (xdrproc_t)xdr_attrd_change_res, res);
	nfskeys_attr_id_free(id);
}

void attrd_handle_set(struct attrd *d, struct rpc_request *req, XDR *args)
{
	attrd_set_args a = {};
	attrd_change_res res = {};
	struct nfskeys_attr_policy *policy = NULL;
	struct nfskeys_attr_id *id = NULL;
	struct attr_set_opts o = {};
	_cleanup_free_ char *where = NULL;
	_cleanup_close_ int fd = -1;
	char msg[ATTRD_MESSAGE_MAX + 1] = "";
	bool admin = false;
	int r;

	if (!rpc_args_decode(args, (xdrproc_t)xdr_attrd_set_args, &a)) {
		attrd_finish(d, ATTRD_OP_SET, req, -EINVAL);
		rpc_request_error(req, RPC_STATUS_GARBAGE_ARGS);
		return;
	}
	r = nfskeys_attr_policy_new(&policy);
	if (r < 0)
		goto reply;
	if (a.attrs.attrs_len == 0) {
		snprintf(msg, sizeof(msg), "no attributes given");
		r = -EINVAL;
		goto reply;
	}
	for (u_int i = 0; i < a.attrs.attrs_len; i++) {
		r = nfskeys_attr_policy_set(policy, a.attrs.attrs_val[i].key,
					    a.attrs.attrs_val[i].value, msg, sizeof(msg));
		if (r < 0)
			goto reply;
	}
	r = take_authorized(d, req, &fd, &id, &where, &admin, msg, sizeof(msg));
	if (r < 0)
		goto reply;
	if (!admin) {
		o.max_dirs = d->lim.user_dirs;
		o.max_bytes = d->lim.user_bytes;
	}
	r = attr_store_set_checked(d->store, id, policy, req->peer.uid, &o);
	if (r == -E2BIG) {
		snprintf(msg, sizeof(msg), "too many attributes on one directory (at most %d)",
			 ATTR_MAX_PER_DIR);
		goto reply;
	} else if (r == -EDQUOT) {
		bool dirs = o.max_dirs && o.dirs > o.max_dirs;

		snprintf(msg, sizeof(msg),
			 "uid %u would have policy on %llu directories, %llu bytes: over its limit "
			 "of %llu %s ([Attrd] %s); unset some first",
			 (unsigned)req->peer.uid, (unsigned long long)o.dirs,
			 (unsigned long long)o.bytes,
			 (unsigned long long)(dirs ? o.max_dirs : o.max_bytes),
			 dirs ? "directories" : "bytes",
			 dirs ? "Max-Policies-Per-User" : "Max-Bytes-Per-User");
		log_notice(d->ctx, "refused for pid %d: %s", (int)req->peer.pid, msg);
		goto reply;
	} else if (r < 0) {
		snprintf(msg, sizeof(msg), "cannot store the change: %s", strerror(-r));
		goto reply;
	}
	res.changed = (u_int)nfskeys_attr_policy_count(policy);
	if (o.dropped)
		log_notice(d->ctx, "%s: dropped %u attribute(s) set on a directory of the same "
				   "name that was removed", where, o.dropped);
	nfskeys_ctx_log(d->ctx, LOG_INFO, __FILE__, __LINE__, __func__,
			"uid %u set %u attribute(s) on %s", (unsigned)req->peer.uid, res.changed,
			where);
	attrd_mounts_apply(d->mounts);
	attrd_wb_apply(d->wb);
reply:
	change_reply(d, ATTRD_OP_SET, req, &res, r, msg, id);
	nfskeys_attr_policy_free(policy);
	xdr_free((xdrproc_t)xdr_attrd_set_args, (char *)&a);
}

void attrd_handle_unset(struct attrd *d, struct rpc_request *req, XDR *args)
{
	attrd_unset_args a = {};
	attrd_change_res res = {};
	struct nfskeys_attr_id *id = NULL;
	_cleanup_free_ const char **keys = NULL;
	_cleanup_free_ char *where = NULL;
	_cleanup_close_ int fd = -1;
	char msg[ATTRD_MESSAGE_MAX + 1] = "";
	bool admin;
	int r;

	if (!rpc_args_decode(args, (xdrproc_t)xdr_attrd_unset_args, &a)) {
		attrd_finish(d, ATTRD_OP_UNSET, req, -EINVAL);
		rpc_request_error(req, RPC_STATUS_GARBAGE_ARGS);
		return;
	}
	if (!a.all && a.keys.keys_len == 0) {
		snprintf(msg, sizeof(msg), "no attributes named");
		r = -EINVAL;
		goto reply;
	}
	if (!a.all) {
		keys = calloc(a.keys.keys_len + 1, sizeof(*keys));
		if (!keys) {
			r = -ENOMEM;
			goto reply;
		}
		for (u_int i = 0; i < a.keys.keys_len; i++) {
			r = attr_key_parse(a.keys.keys_val[i], msg, sizeof(msg));
			if (r < 0)
				goto reply;
			keys[i] = a.keys.keys_val[i];
		}
	}
	r = take_authorized(d, req, &fd, &id, &where, &admin, msg, sizeof(msg));
	if (r < 0)
		goto reply;
	r = nfskeys_attr_store_unset(d->store, id, keys, false);
	if (r < 0) {
		snprintf(msg, sizeof(msg), "cannot store the change: %s", strerror(-r));
		goto reply;
	}
	res.changed = (u_int)r;
	r = 0;
	nfskeys_ctx_log(d->ctx, LOG_INFO, __FILE__, __LINE__, __func__,
			"uid %u removed %u attribute(s) from %s", (unsigned)req->peer.uid,
			res.changed, where);
	attrd_mounts_apply(d->mounts);
	attrd_wb_apply(d->wb);
reply:
	change_reply(d, ATTRD_OP_UNSET, req, &res, r, msg, id);
	xdr_free((xdrproc_t)xdr_attrd_unset_args, (char *)&a);
}

void attrd_handle_lookup(struct attrd *d, struct rpc_request *req, XDR *args)
{
	attrd_lookup_args a = {};
	attrd_lookup_res res = {};
	struct nfskeys_attr_policy *policy = NULL;
	struct nfskeys_attr_id *id = NULL;
	attrd_entry ent[ATTRD_ENTRIES_MAX];
	size_t n = 0;
	int r;

	if (!rpc_args_decode(args, (xdrproc_t)xdr_attrd_lookup_args, &a)) {
		attrd_finish(d, ATTRD_OP_LOOKUP, req, -EINVAL);
		rpc_request_error(req, RPC_STATUS_GARBAGE_ARGS);
		return;
	}
	r = nfskeys_attr_id_new(a.domain, a.path, &id);
	if (r < 0)
		goto reply;
	r = nfskeys_attr_policy_new(&policy);
	if (r < 0)
		goto reply;
	if (a.flags & ATTRD_LOOKUP_EFFECTIVE)
		r = attr_index_resolve(attr_store_index(d->store), nfskeys_attr_id_get_domain(id),
				       nfskeys_attr_id_get_path(id),
				       (a.flags & ATTRD_LOOKUP_SOURCES) ? NFSKEYS_ATTR_SOURCES : 0,
				       policy);
	else
		r = attr_index_explicit(attr_store_index(d->store), nfskeys_attr_id_get_domain(id),
					nfskeys_attr_id_get_path(id), policy);
	if (r < 0)
		goto reply;
	n = MIN(nfskeys_attr_policy_count(policy), (size_t)ATTRD_ENTRIES_MAX);
	for (size_t i = 0; i < n; i++) {
		struct nfskeys_attr_entry e;
		nfskeys_attr_policy_entry(policy, i, &e);
		ent[i].key = (char *)e.key;
		ent[i].value = (char *)e.value;
		ent[i].source = (char *)(e.source ? e.source : "");
		ent[i].from_ldap = e.from_ldap;
	}
reply:
	res.status = r;
	res.entries.entries_len = (u_int)n;
	res.entries.entries_val = ent;
	res.cut = (char *)(policy && nfskeys_attr_policy_cut(policy) ?
				   nfskeys_attr_policy_cut(policy) : "");
	attrd_finish(d, ATTRD_OP_LOOKUP, req, r);
	rpc_request_reply(req, (xdrproc_t)xdr_attrd_lookup_res, &res);
	nfskeys_attr_policy_free(policy);
	nfskeys_attr_id_free(id);
	xdr_free((xdrproc_t)xdr_attrd_lookup_args, (char *)&a);
}

/* The sub-mount table of [Mounts] Apply-Mounts: public, as the mount table is. */
void attrd_handle_mounts(struct attrd *d, struct rpc_request *req, XDR *args)
{
	size_t n = attrd_mounts_count(d->mounts), shown = MIN(n, (size_t)ATTRD_MOUNTS_MAX);
	_cleanup_free_ attrd_mount *v = calloc(shown ? shown : 1, sizeof(*v));
	attrd_mounts_res res = { .enabled = attrd_mounts_enabled(d->mounts) };

	if (!v) {
		res.status = -ENOMEM;
		shown = 0;
	}
	for (size_t i = 0; i < shown; i++) {
		struct attrd_mount_info mi;

		attrd_mounts_get(d->mounts, i, &mi);
		v[i] = (attrd_mount){ .target = (char *)mi.target, .source = (char *)mi.source,
				      .options = (char *)mi.options, .state = (char *)mi.state,
				      .error = (char *)mi.error, .layers = mi.layers,
				      .mount_id = mi.mount_id, .since = mi.since,
				      .server = (char *)mi.server, .waiting = mi.waiting };
	}
	res.mounts.mounts_len = (u_int)shown;
	res.mounts.mounts_val = v;
	res.more = (u_int)(n - shown);
	attrd_finish(d, ATTRD_OP_OTHER, req, res.status);
	rpc_request_reply(req, (xdrproc_t)xdr_attrd_mounts_res, &res);
}
