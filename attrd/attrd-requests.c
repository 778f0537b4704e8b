/* nfskeys-attrd's requests: SET and UNSET on a passed directory descriptor (identity,
 * authorization, quotas, durable commit), LOOKUP from the index, and MOUNTS. */
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attrd.h"
#include "attrd-mounts.h"
#include "attrd-wb.h"
#include "rpc-args.h"
#include "thread-util.h"
#include "time-util.h"
/* after macros.h: <rpc/rpc.h> redefines MIN/MAX in its system header */
#include "attr.h"

/* A set or unset from its decoding to its answer.  Placing its directory (the identity)
 * never waits on a file server on the loop: where a mount of another namespace needs its
 * server to confirm the directory's path (NFS with actimeo=0 revalidates every component),
 * that lookup runs in a thread of its own (struct place) and the change goes on when it
 * is back. */
struct change {
	struct attrd *d;
	enum attrd_op op;
	struct rpc_request *req;
	int fd;
	struct stat st;
	struct nfskeys_attr_id *id;
	struct nfskeys_attr_policy *policy; /* set */
	attrd_unset_args a;		    /* unset: its arguments and keys (NULL: all) */
	const char **keys;
	u_int changed;
	struct place *place; /* the lookup running in its thread */
	struct change *next; /* in d->placing */
	char msg[ATTRD_MESSAGE_MAX + 1];
};

/* The thread's side of a lookup: the loop's change, NULL once nfskeys-attrd stops (the
 * thread then frees this alone). */
struct place {
	pthread_mutex_t lock;
	struct evloop *loop;
	struct attr_id_check *check;
	struct change *c;
	int r;
	bool posted;
};

static struct change *change_new(struct attrd *d, enum attrd_op op, struct rpc_request *req)
{
	struct change *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->d = d;
	c->op = op;
	c->req = req;
	c->fd = -1;
	return c;
}

static void change_free(struct change *c)
{
	if (c->fd >= 0)
		close(c->fd);
	nfskeys_attr_id_free(c->id);
	nfskeys_attr_policy_free(c->policy);
	free(c->keys);
	xdr_free((xdrproc_t)xdr_attrd_unset_args, (char *)&c->a);
	free(c);
}

/* Answer the change with status r (its message in c->msg) and free it. */
static void change_done(struct change *c, int r)
{
	attrd_change_res res = {
		.status = r,
		.message = c->msg,
		.changed = c->changed,
		.domain = (char *)(c->id ? nfskeys_attr_id_get_domain(c->id) : ""),
		.path = (char *)(c->id ? nfskeys_attr_id_get_path(c->id) : ""),
	};

	attrd_finish(c->d, c->op, c->req, r);
	rpc_request_reply(c->req, (xdrproc_t)xdr_attrd_change_res, &res);
	change_free(c);
}

/* The identity of the directory open as fd: its mount looked up in our mount table, or
 * (a mount of another namespace) in the caller's, read only so far: a caller makes its own
 * namespace's table as long as it likes (doc/security/FINDINGS.md D10). */
static int fd_identity(struct change *c, struct attr_id_check **ret_check)
{
	char peer_mi[64];
	const char *files[] = { "/proc/self/mountinfo", peer_mi, NULL };
	int r;

	snprintf(peer_mi, sizeof(peer_mi), "/proc/%d/mountinfo", (int)c->req->peer.pid);
	r = attr_id_from_fd_tables(c->d->ctx, c->fd, files, &c->id, ret_check);
	if (r == -E2BIG)
		snprintf(c->msg, sizeof(c->msg), "cannot place the directory: the mount table is "
			 "longer than nfskeys-attrd reads (%d bytes)", ATTR_MOUNTINFO_MAX);
	else if (r == -ESTALE)
		snprintf(c->msg, sizeof(c->msg), "cannot place the directory: its mount moved "
			 "while it was looked at, or its path is not in the kernel's cache; "
			 "try again");
	else if (r < 0)
		snprintf(c->msg, sizeof(c->msg),
			 "cannot place the directory in the mount table: %s", strerror(-r));
	return r;
}

/* Take the passed directory, fstat it and work out its identity. */
static int take_dir(struct change *c, struct attr_id_check **ret_check)
{
	int r;

	if (rpc_request_take_fd(c->req, &c->fd) < 0) {
		snprintf(c->msg, sizeof(c->msg), "no directory descriptor came with the request");
		return -EBADF;
	}
	/* Cached attributes only (AT_STATX_DONT_SYNC): a FUSE server that never answers
	 * GETATTR cannot hold the loop; the descriptor is an O_PATH directory (rpc-server). */
	r = attr_fd_stat(c->fd, &c->st);
	if (r < 0) {
		snprintf(c->msg, sizeof(c->msg), "cannot stat the directory: %s", strerror(-r));
		return r;
	}
	if (!S_ISDIR(c->st.st_mode)) {
		snprintf(c->msg, sizeof(c->msg), "the descriptor passed is not a directory");
		return -ENOTDIR;
	}
	return fd_identity(c, ret_check);
}

static int apply_set(struct change *c, bool admin, const char *where)
{
	struct attr_set_opts o = {};
	struct attrd *d = c->d;
	int r;

	if (!admin) {
		o.max_dirs = d->lim.user_dirs;
		o.max_bytes = d->lim.user_bytes;
	}
	r = attr_store_set_checked(d->store, c->id, c->policy, c->req->peer.uid, &o);
	if (r == -E2BIG) {
		snprintf(c->msg, sizeof(c->msg),
			 "too many attributes on one directory (at most %d)", ATTR_MAX_PER_DIR);
		return r;
	} else if (r == -EDQUOT) {
		bool dirs = o.max_dirs && o.dirs > o.max_dirs;

		snprintf(c->msg, sizeof(c->msg),
			 "uid %u would have policy on %llu directories, %llu bytes: over its limit "
			 "of %llu %s ([Attrd] %s); unset some first",
			 (unsigned)c->req->peer.uid, (unsigned long long)o.dirs,
			 (unsigned long long)o.bytes,
			 (unsigned long long)(dirs ? o.max_dirs : o.max_bytes),
			 dirs ? "directories" : "bytes",
			 dirs ? "Max-Policies-Per-User" : "Max-Bytes-Per-User");
		log_notice(d->ctx, "refused for pid %d: %s", (int)c->req->peer.pid, c->msg);
		return r;
	} else if (r < 0) {
		snprintf(c->msg, sizeof(c->msg), "cannot store the change: %s", strerror(-r));
		return r;
	}
	c->changed = (u_int)nfskeys_attr_policy_count(c->policy);
	if (o.dropped)
		log_notice(d->ctx, "%s: dropped %u attribute(s) set on a directory of the same "
				   "name that was removed", where, o.dropped);
	nfskeys_ctx_log(d->ctx, LOG_INFO, __FILE__, __LINE__, __func__,
			"uid %u set %u attribute(s) on %s", (unsigned)c->req->peer.uid, c->changed,
			where);
	return 0;
}

static int apply_unset(struct change *c, const char *where)
{
	int r = nfskeys_attr_store_unset(c->d->store, c->id, c->keys, false);

	if (r < 0) {
		snprintf(c->msg, sizeof(c->msg), "cannot store the change: %s", strerror(-r));
		return r;
	}
	c->changed = (u_int)r;
	nfskeys_ctx_log(c->d->ctx, LOG_INFO, __FILE__, __LINE__, __func__,
			"uid %u removed %u attribute(s) from %s", (unsigned)c->req->peer.uid,
			c->changed, where);
	return 0;
}

/* The directory placed: may the caller change it?  Then store the change and answer. */
static void change_apply(struct change *c)
{
	_cleanup_free_ char *where = attr_id_format(nfskeys_attr_id_get_domain(c->id),
						    nfskeys_attr_id_get_path(c->id));
	bool admin = false;
	int r;

	r = attrd_authorize(c->d, &c->req->peer, &c->st, c->id, where ? where : "?", &admin,
			    c->msg, sizeof(c->msg));
	if (r == 0)
		r = c->op == ATTRD_OP_SET ? apply_set(c, admin, where ? where : "?") :
					    apply_unset(c, where ? where : "?");
	if (r == 0) {
		attrd_mounts_apply(c->d->mounts);
		attrd_wb_apply(c->d->wb);
	}
	change_done(c, r);
}

static void place_free(struct place *p)
{
	attr_id_check_free(p->check);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

/* Back on the loop: the lookup's answer. */
static void placed(struct evloop *loop, void *userdata)
{
	struct place *p = userdata;
	struct change *c = p->c, **pp;
	int r;

	(void)loop;
	/* the thread posted this under the lock: let it out before freeing */
	pthread_mutex_lock(&p->lock);
	r = p->r;
	pthread_mutex_unlock(&p->lock);
	for (pp = &c->d->placing; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	c->d->n_placing--;
	c->place = NULL;
	if (r == 0)
		r = attr_id_check_finish(p->check, &c->id);
	place_free(p);
	if (r == -ESTALE)
		snprintf(c->msg, sizeof(c->msg), "cannot place the directory: it moved while it "
			 "was looked at; try again");
	else if (r < 0)
		snprintf(c->msg, sizeof(c->msg), "cannot place the directory: looking its path "
			 "up again on its file system failed: %s", strerror(-r));
	if (r < 0)
		change_done(c, r);
	else
		change_apply(c);
}

static void *place_main(void *arg)
{
	struct place *p = arg;
	int r = attr_id_check_run(p->check);

	pthread_mutex_lock(&p->lock);
	p->r = r;
	if (!p->c) {
		/* nfskeys-attrd is stopping: nobody waits for the answer */
		pthread_mutex_unlock(&p->lock);
		place_free(p);
		return NULL;
	}
	/* a post fails only for want of memory, and the change waits for it: retry */
	while (evloop_post(p->loop, placed, p) < 0)
		sleep(1);
	p->posted = true;
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

/* Hand the lookup to a thread (check: taken), within the limits: at most ATTRD_PLACING_MAX
 * changes wait on file servers at once, ATTRD_PLACING_PER_UID of one uid (a server that
 * never answers keeps its threads). */
static int place_start(struct change *c, struct attr_id_check *check)
{
	struct attrd *d = c->d;
	struct place *p;
	unsigned mine = 0;
	int r;

	for (struct change *o = d->placing; o; o = o->next)
		mine += o->req->peer.uid == c->req->peer.uid;
	if (d->n_placing >= ATTRD_PLACING_MAX || mine >= ATTRD_PLACING_PER_UID) {
		attr_id_check_free(check);
		snprintf(c->msg, sizeof(c->msg), "cannot place the directory now: %u change(s) "
			 "of uid %u (%u in all) already wait for their file servers to answer; "
			 "try again later", mine, (unsigned)c->req->peer.uid, d->n_placing);
		return -EBUSY;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		attr_id_check_free(check);
		snprintf(c->msg, sizeof(c->msg), "cannot place the directory: %s",
			 strerror(ENOMEM));
		return -ENOMEM;
	}
	pthread_mutex_init(&p->lock, NULL);
	p->loop = d->loop;
	p->check = check;
	p->c = c;
	r = thread_start_detached(place_main, p);
	if (r < 0) {
		place_free(p);
		snprintf(c->msg, sizeof(c->msg), "cannot place the directory: %s", strerror(-r));
		return r;
	}
	c->place = p;
	c->next = d->placing;
	d->placing = c;
	d->n_placing++;
	return 0;
}

/* Place the change's directory, now or from a thread, then apply it. */
static void change_place(struct change *c)
{
	struct attr_id_check *check = NULL;
	int r = take_dir(c, &check);

	if (r == 0 && check) {
		r = place_start(c, check);
		if (r == 0)
			return;
	}
	if (r < 0)
		change_done(c, r);
	else
		change_apply(c);
}

void attrd_placing_orphan(struct attrd *d)
{
	while (d->placing) {
		struct change *c = d->placing;
		struct place *p = c->place;
		bool posted;

		d->placing = c->next;
		d->n_placing--;
		pthread_mutex_lock(&p->lock);
		posted = p->posted;
		p->c = NULL;
		pthread_mutex_unlock(&p->lock);
		/* a posted answer never runs now (the loop has stopped) */
		if (posted)
			place_free(p);
		snprintf(c->msg, sizeof(c->msg), "nfskeys-attrd is stopping");
		change_done(c, -ESHUTDOWN);
	}
}

void attrd_handle_set(struct attrd *d, struct rpc_request *req, XDR *args)
{
	attrd_set_args a = {};
	struct change *c;
	int r;

	if (!rpc_args_decode(args, (xdrproc_t)xdr_attrd_set_args, &a)) {
		attrd_finish(d, ATTRD_OP_SET, req, -EINVAL);
		rpc_request_error(req, RPC_STATUS_GARBAGE_ARGS);
		return;
	}
	c = change_new(d, ATTRD_OP_SET, req);
	if (!c) {
		attrd_finish(d, ATTRD_OP_SET, req, -ENOMEM);
		rpc_request_error(req, RPC_STATUS_SYSTEM_ERR);
		goto out;
	}
	r = nfskeys_attr_policy_new(&c->policy);
	if (r == 0 && a.attrs.attrs_len == 0) {
		snprintf(c->msg, sizeof(c->msg), "no attributes given");
		r = -EINVAL;
	}
	for (u_int i = 0; r == 0 && i < a.attrs.attrs_len; i++)
		r = nfskeys_attr_policy_set(c->policy, a.attrs.attrs_val[i].key,
					    a.attrs.attrs_val[i].value, c->msg, sizeof(c->msg));
	if (r < 0)
		change_done(c, r);
	else
		change_place(c);
out:
	xdr_free((xdrproc_t)xdr_attrd_set_args, (char *)&a);
}

void attrd_handle_unset(struct attrd *d, struct rpc_request *req, XDR *args)
{
	struct change *c = change_new(d, ATTRD_OP_UNSET, req);
	int r = 0;

	if (!c) {
		attrd_finish(d, ATTRD_OP_UNSET, req, -ENOMEM);
		rpc_request_error(req, RPC_STATUS_SYSTEM_ERR);
		return;
	}
	if (!rpc_args_decode(args, (xdrproc_t)xdr_attrd_unset_args, &c->a)) {
		attrd_finish(d, ATTRD_OP_UNSET, req, -EINVAL);
		rpc_request_error(req, RPC_STATUS_GARBAGE_ARGS);
		change_free(c);
		return;
	}
	if (!c->a.all && c->a.keys.keys_len == 0) {
		snprintf(c->msg, sizeof(c->msg), "no attributes named");
		r = -EINVAL;
	}
	if (r == 0 && !c->a.all) {
		c->keys = calloc(c->a.keys.keys_len + 1, sizeof(*c->keys));
		if (!c->keys)
			r = -ENOMEM;
		for (u_int i = 0; r == 0 && i < c->a.keys.keys_len; i++) {
			r = attr_key_parse(c->a.keys.keys_val[i], c->msg, sizeof(c->msg));
			c->keys[i] = c->a.keys.keys_val[i];
		}
	}
	if (r < 0)
		change_done(c, r);
	else
		change_place(c);
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
