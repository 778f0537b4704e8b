/* nfskeys-attrd: keeps per-directory cache policy on the client.  A library user (the
 * store, index and identity code live in libnfskeys) that adds the write path: it
 * accepts SET/UNSET with an open directory descriptor, fstat()s it for identity and
 * ownership, authorizes (root, the admin group, or the directory's owner), commits
 * durably and answers lookups from the in-memory index; optional LDAP fleet sync. */
#include <grp.h>
#include <sys/stat.h>
#include <syslog.h>

#include "attr-private.h"
#include "attrd-ldap.h"
#include "conf-get.h"
#include "attrd-mounts.h"
#include "daemon.h"
#include "evloop.h"
#include "rpc-args.h"
#include "rpc-server.h"
#include "stats.h"
#include "time-util.h"
#include "unix-socket.h"
/* after macros.h: <rpc/rpc.h> redefines MIN/MAX in its system header */
#include "attr.h"

enum op { OP_SET, OP_UNSET, OP_LOOKUP, OP_OTHER, _OP_MAX };
static const char *const op_names[_OP_MAX] = { "set", "unset", "lookup", "other" };

/* What a user who is not an admin may do (issue 21 items 4 and 6). */
struct attrd_limits {
	uint64_t user_dirs;      /* [Attrd] Max-Policies-Per-User */
	uint64_t user_bytes;     /* [Attrd] Max-Bytes-Per-User */
	unsigned sweep_interval; /* [Attrd] Orphan-Check-Interval, seconds */
	bool synthesized_owners; /* [Attrd] Trust-Synthesized-Owners */
};

#define ATTRD_DEFAULT_USER_DIRS 1000
#define ATTRD_DEFAULT_USER_BYTES (1024 * 1024)
#define ATTRD_DEFAULT_SWEEP 300

struct op_stats {
	uint64_t calls, errors, refused;
	struct stats_hist latency;
};

struct daemon {
	const char *conf_path;
	const char *socket_override, *store_override;
	struct nfskeys_ctx *ctx;
	struct nfskeys_attr_store *store;
	char *socket_path;
	struct evloop *loop;
	struct rpc_server *srv;
	bool have_admin;
	gid_t admin_gid;
	char *admin_group;
	struct attrd_limits lim;
	uint64_t generation;
	int64_t start_usec;
	struct op_stats ops[_OP_MAX];
	struct attrd_ldap *ldap;
	struct attrd_mounts *mounts; /* [Mounts]: sub-mounts for policy on live mounts */
	bool apply_mounts;
	struct evtimer *sync_timer;
	struct evtimer *sweep_timer;
	struct daemon_shell sh;
	char *runtime_dir;
	unsigned max_clients, idle_timeout; /* as started (they apply at start only) */
	unsigned max_clients_user;
};

/* ---------------------------------------------------------------- configuration */

/* Everything a configuration decides, built whole before it replaces the running one. */
struct attrd_config {
	struct nfskeys_ctx *ctx;
	struct nfskeys_attr_store *store;
	bool have_admin;
	gid_t admin_gid;
	char *admin_group;
	struct attrd_limits lim;
	unsigned max_clients;  /* [Attrd] Max-Clients; applies at start */
	unsigned max_clients_user; /* [Attrd] Max-Clients-Per-User (root exempt); at start */
	unsigned idle_timeout; /* [Attrd] Idle-Timeout, seconds; applies at start */
	bool apply_mounts;     /* [Mounts] Apply-Mounts */
};

static void config_clear(struct attrd_config *c)
{
	nfskeys_attr_store_close(c->store);
	nfskeys_ctx_unref(c->ctx);
	free(c->admin_group);
	*c = (struct attrd_config){};
}

/* An [Attrd] number or duration: type, bounds and default from the schema
 * (libnfskeys/conf-schema.c); a malformed value is an error naming it. */
static int conf_limit(struct nfskeys_ctx *ctx, const char *key, unsigned *val, char *msg,
		      size_t msg_size)
{
	int64_t v;
	int r = conf_get_typed(ctx, "Attrd", key, &v, msg, msg_size);

	if (r < 0)
		return -EINVAL;
	*val = (unsigned)v;
	return 0;
}

/* The per-user limits and the owner rule; a malformed value is an error naming it. */
static int conf_user_limits(struct nfskeys_ctx *ctx, struct attrd_limits *lim, char *msg,
			    size_t msg_size)
{
	unsigned dirs, bytes, owners;
	int r;

	if ((r = conf_limit(ctx, "Max-Policies-Per-User", &dirs, msg, msg_size)) < 0 ||
	    (r = conf_limit(ctx, "Max-Bytes-Per-User", &bytes, msg, msg_size)) < 0 ||
	    (r = conf_limit(ctx, "Orphan-Check-Interval", &lim->sweep_interval, msg, msg_size)) < 0 ||
	    (r = conf_limit(ctx, "Trust-Synthesized-Owners", &owners, msg, msg_size)) < 0)
		return r;
	lim->user_dirs = dirs;
	lim->user_bytes = bytes;
	lim->synthesized_owners = owners;
	return 0;
}

/* Load the configuration and open the store it names into *c (nothing of the running
 * daemon is touched); on error *msg says why and the exit code class is returned in
 * *ret_exit. */
static int config_load(struct daemon *d, struct attrd_config *c, char *msg, size_t msg_size,
		       int *ret_exit)
{
	const char *g, *store_path;
	char why[256];
	int r;

	*c = (struct attrd_config){ .max_clients = 1024, .max_clients_user = 64,
				    .idle_timeout = 30,
				    .lim = { .user_dirs = ATTRD_DEFAULT_USER_DIRS,
					     .user_bytes = ATTRD_DEFAULT_USER_BYTES,
					     .sweep_interval = ATTRD_DEFAULT_SWEEP } };
	*ret_exit = DAEMON_EXIT_CONFIG;
	daemon_capture_errors(why, sizeof(why));
	r = nfskeys_ctx_new_full(d->conf_path, daemon_lib_log, NULL, &c->ctx);
	daemon_capture_errors(NULL, 0);
	if (r < 0) {
		snprintf(msg, msg_size, "cannot load configuration %s: %s%s%s%s",
			 d->conf_path ? d->conf_path : SYSCONFDIR "/nfskeys/nfskeys.conf",
			 strerror(-r), why[0] ? " (" : "", why, why[0] ? ")" : "");
		goto fail;
	}
	nfskeys_ctx_set_log_priority(c->ctx, daemon_lib_priority(&d->sh));
	nfskeys_conf_log_warnings(c->ctx); /* typos: unknown keys, with file and line */
	g = nfskeys_conf_get(c->ctx, "Attrd", "Admin-Group");
	if (g && *g) {
		struct group *gr = getgrnam(g);
		char *end;
		unsigned long v = strtoul(g, &end, 10);

		if (gr)
			c->admin_gid = gr->gr_gid;
		else if (*end == '\0' && v < (gid_t)-1)
			c->admin_gid = (gid_t)v;
		else {
			snprintf(msg, msg_size, "[Attrd] Admin-Group: no group '%s'", g);
			r = -EINVAL;
			goto fail;
		}
		c->have_admin = true;
		c->admin_group = strdup(g);
		if (!c->admin_group) {
			r = -ENOMEM;
			goto fail;
		}
	}
	if ((r = conf_limit(c->ctx, "Max-Clients", &c->max_clients, msg, msg_size)) < 0 ||
	    (r = conf_limit(c->ctx, "Max-Clients-Per-User", &c->max_clients_user, msg,
			    msg_size)) < 0 ||
	    (r = conf_limit(c->ctx, "Idle-Timeout", &c->idle_timeout, msg, msg_size)) < 0 ||
	    (r = conf_user_limits(c->ctx, &c->lim, msg, msg_size)) < 0 ||
	    (r = attrd_ldap_check(c->ctx, msg, msg_size)) < 0)
		goto fail;
	{
		int64_t v;

		r = conf_get_typed(c->ctx, "Mounts", "Apply-Mounts", &v, msg, msg_size);
		if (r < 0)
			goto fail;
		c->apply_mounts = v;
	}
	store_path = d->store_override ? d->store_override : attr_default_store_path(c->ctx);
	/* Opened anew on every reload, even at the same path: the index is rebuilt from what
	 * is stored, which picks up 'nfsattr import' and 'nfsattr --direct' changes. */
	r = nfskeys_attr_store_open(c->ctx, store_path, NFSKEYS_ATTR_STORE_WRITE, &c->store);
	if (r < 0) {
		snprintf(msg, msg_size, "cannot open store %s: %s", store_path, strerror(-r));
		*ret_exit = DAEMON_EXIT_FAIL;
		goto fail;
	}
	return 0;
fail:
	config_clear(c);
	return r;
}

/* Swap a loaded configuration in, in one step; *c then holds the old one to free. */
static void config_swap(struct daemon *d, struct attrd_config *c)
{
	struct attrd_config old = { .ctx = d->ctx, .store = d->store,
				    .have_admin = d->have_admin, .admin_gid = d->admin_gid,
				    .admin_group = d->admin_group, .lim = d->lim,
				    .apply_mounts = d->apply_mounts };

	d->ctx = c->ctx;
	d->store = c->store;
	d->have_admin = c->have_admin;
	d->admin_gid = c->admin_gid;
	d->admin_group = c->admin_group;
	d->lim = c->lim;
	d->apply_mounts = c->apply_mounts;
	if (d->ldap)
		attrd_ldap_configure(d->ldap, d->ctx);
	/* the new store and context (the old ones are freed by the caller) */
	attrd_mounts_configure(d->mounts, d->ctx, d->store, d->apply_mounts);
	*c = old;
}

static void sweep(struct daemon *d);

/* SIGHUP or RELOAD: the new configuration and store, all or nothing. */
static int do_reload(struct daemon *d, char *msg, size_t msg_size)
{
	struct attrd_config c;
	int code, r;

	daemon_reload_begin();
	r = config_load(d, &c, msg, msg_size, &code);
	if (r == 0) {
		if (c.max_clients != d->max_clients || c.idle_timeout != d->idle_timeout ||
		    c.max_clients_user != d->max_clients_user)
			daemon_log(LOG_NOTICE, "Max-Clients, Max-Clients-Per-User and Idle-Timeout "
					       "changes take effect at restart");
		config_swap(d, &c);
		config_clear(&c);
		sweep(d);
		d->generation++;
		snprintf(msg, msg_size, "configuration %s loaded (generation %llu)",
			 nfskeys_ctx_get_conf_path(d->ctx), (unsigned long long)d->generation);
	}
	daemon_reload_end(r, msg);
	return r;
}

static void on_sighup(void *userdata)
{
	char msg[512];

	do_reload(userdata, msg, sizeof(msg));
}

/* ---------------------------------------------------------------- authorization */

/* Is gid among the caller's groups?  The supplementary groups come from
 * /proc/PID/status of the connecting process (SO_PEERCRED's pid), checked against its
 * uid so that a recycled pid cannot lend someone else's groups. */
static bool peer_in_group(const struct ucred *peer, gid_t gid)
{
	char path[64], line[4096];
	_cleanup_fclose_ FILE *f = NULL;
	bool uid_ok = false, found = false;

	if (peer->gid == gid)
		return true;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)peer->pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		unsigned ruid, euid;
		if (sscanf(line, "Uid: %u %u", &ruid, &euid) == 2)
			uid_ok = euid == peer->uid;
		if (startswith(line, "Groups:")) {
			char *save = NULL;
			for (char *t = strtok_r(line + 7, " \t\n", &save); t;
			     t = strtok_r(NULL, " \t\n", &save))
				if ((gid_t)strtoul(t, NULL, 10) == gid)
					found = true;
		}
	}
	return uid_ok && found;
}

/* May peer change the attributes of the directory st (identity id, shown as where)?
 * *ret_admin tells root and the admin group (no per-user limits) from owners. */
static int authorize(struct daemon *d, const struct ucred *peer, const struct stat *st,
		     const struct nfskeys_attr_id *id, const char *where, bool *ret_admin,
		     char *msg, size_t msg_size)
{
	const char *fstype = nfskeys_attr_id_get_fstype(id);

	*ret_admin = true;
	if (peer->uid == 0)
		return 0;
	if (d->have_admin && peer_in_group(peer, d->admin_gid))
		return 0;
	*ret_admin = false;
	if (st->st_uid == peer->uid) {
		/* On a mount whose client makes owners up (cifs without Unix extensions or
		 * cifsacl, forceuid; afs) whoever mounted it "owns" every directory. */
		if (d->lim.synthesized_owners ||
		    !attr_owner_synthesized(fstype, attr_id_get_options(id)))
			return 0;
		snprintf(msg, msg_size,
			 "uid %u may not change the attributes of %s: its owner is made up by the "
			 "%s client (not the server's), so only root%s%s%s may "
			 "(see [Attrd] Trust-Synthesized-Owners)",
			 (unsigned)peer->uid, where, fstype,
			 d->have_admin ? " or members of group '" : "",
			 d->have_admin ? d->admin_group : "", d->have_admin ? "'" : "");
		log_notice(d->ctx, "refused for pid %d: %s", (int)peer->pid, msg);
		return -EPERM;
	}
	snprintf(msg, msg_size,
		 "uid %u may not change the attributes of %s: it belongs to uid %u, and only its "
		 "owner%s%s%s may",
		 (unsigned)peer->uid, where, (unsigned)st->st_uid,
		 d->have_admin ? ", root or members of group '" : " or root",
		 d->have_admin ? d->admin_group : "", d->have_admin ? "'" : "");
	log_notice(d->ctx, "refused for pid %d: %s", (int)peer->pid, msg);
	return -EPERM;
}

/* ---------------------------------------------------------------- requests */

/* The identity of the directory open as fd: its mount looked up in our mount table, or
 * (a mount of another namespace) in the caller's, read only so far (issue 21 item 7). */
static int fd_identity(struct daemon *d, int fd, const struct ucred *peer,
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
static int take_dir(struct daemon *d, struct rpc_request *req, int *ret_fd, struct stat *st,
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

static void finish(struct daemon *d, enum op op, struct rpc_request *req, int status)
{
	struct op_stats *s = &d->ops[op];

	stats_inc(&s->calls);
	if (status == -EPERM)
		stats_inc(&s->refused);
	else if (status < 0)
		stats_inc(&s->errors);
	stats_hist_add(&s->latency, mono_nsec() - req->start_ns);
}

/* The directory passed with a change (its identity, and its display form in *ret_where),
 * when the caller may change it; else a message in msg. */
static int take_authorized(struct daemon *d, struct rpc_request *req, int *ret_fd,
			   struct nfskeys_attr_id **ret_id, char **ret_where, bool *ret_admin,
			   char *msg, size_t size)
{
	struct stat st;
	int r = take_dir(d, req, ret_fd, &st, ret_id, msg, size);

	if (r < 0)
		return r;
	*ret_where = attr_id_format(nfskeys_attr_id_get_domain(*ret_id),
				    nfskeys_attr_id_get_path(*ret_id));
	return authorize(d, &req->peer, &st, *ret_id, *ret_where ? *ret_where : "?", ret_admin,
			 msg, size);
}

/* Answer a set or unset (status r, message msg, the directory id) and free id. */
static void change_reply(struct daemon *d, enum op op, struct rpc_request *req,
			 attrd_change_res *res, int r, char *msg, struct nfskeys_attr_id *id)
{
	res->status = r;
	res->message = msg;
	res->domain = (char *)(id ? nfskeys_attr_id_get_domain(id) : "");
	res->path = (char *)(id ? nfskeys_attr_id_get_path(id) : "");
	finish(d, op, req, r);
	rpc_request_reply(req, (xdrproc_t)xdr_attrd_change_res, res);
	nfskeys_attr_id_free(id);
}

static void handle_set(struct daemon *d, struct rpc_request *req, XDR *args)
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
		finish(d, OP_SET, req, -EINVAL);
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
reply:
	change_reply(d, OP_SET, req, &res, r, msg, id);
	nfskeys_attr_policy_free(policy);
	xdr_free((xdrproc_t)xdr_attrd_set_args, (char *)&a);
}

static void handle_unset(struct daemon *d, struct rpc_request *req, XDR *args)
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
		finish(d, OP_UNSET, req, -EINVAL);
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
reply:
	change_reply(d, OP_UNSET, req, &res, r, msg, id);
	xdr_free((xdrproc_t)xdr_attrd_unset_args, (char *)&a);
}

static void handle_lookup(struct daemon *d, struct rpc_request *req, XDR *args)
{
	attrd_lookup_args a = {};
	attrd_lookup_res res = {};
	struct nfskeys_attr_policy *policy = NULL;
	struct nfskeys_attr_id *id = NULL;
	attrd_entry ent[ATTRD_ENTRIES_MAX];
	size_t n = 0;
	int r;

	if (!rpc_args_decode(args, (xdrproc_t)xdr_attrd_lookup_args, &a)) {
		finish(d, OP_LOOKUP, req, -EINVAL);
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
	finish(d, OP_LOOKUP, req, r);
	rpc_request_reply(req, (xdrproc_t)xdr_attrd_lookup_res, &res);
	nfskeys_attr_policy_free(policy);
	nfskeys_attr_id_free(id);
	xdr_free((xdrproc_t)xdr_attrd_lookup_args, (char *)&a);
}

static void handle_stats(struct daemon *d, struct rpc_request *req)
{
	stats_metric m[4 * _OP_MAX + 16];
	uint64_t buckets[_OP_MAX][STATS_HIST_BUCKETS];
	char labels[_OP_MAX][32];
	struct rpc_server_stats ss;
	stats_res res = {};
	size_t n = 0;

	rpc_server_get_stats(d->srv, &ss);
	memset(m, 0, sizeof(m));
#define GAUGE(nm, v) (m[n++] = (stats_metric){ .name = nm, .labels = "", .type = STATS_METRIC_GAUGE, .value = (v) })
#define COUNTER(nm, lb, v) (m[n++] = (stats_metric){ .name = nm, .labels = lb, .type = STATS_METRIC_COUNTER, .value = (v) })
	GAUGE("policies", attr_index_count(attr_store_index(d->store)));
	GAUGE("index_bytes", attr_index_memory(attr_store_index(d->store)));
	GAUGE("clients", ss.current);
	GAUGE("uptime_seconds", (uint64_t)((mono_usec() - d->start_usec) / USEC_PER_SEC));
	COUNTER("connections_total", "", ss.accepted);
	COUNTER("bad_messages_total", "", ss.bad_frames + ss.bad_headers);
	COUNTER("connections_refused_total", "", ss.refused);
	COUNTER("connections_refused_user_total", "", ss.refused_uid);
	for (int o = 0; o < _OP_MAX; o++) {
		struct stats_hist h;

		snprintf(labels[o], sizeof(labels[o]), "op=\"%s\"", op_names[o]);
		COUNTER("requests_total", labels[o], __atomic_load_n(&d->ops[o].calls, __ATOMIC_RELAXED));
		COUNTER("errors_total", labels[o], __atomic_load_n(&d->ops[o].errors, __ATOMIC_RELAXED));
		COUNTER("refused_total", labels[o], __atomic_load_n(&d->ops[o].refused, __ATOMIC_RELAXED));
		stats_hist_snapshot(&d->ops[o].latency, &h);
		memcpy(buckets[o], h.buckets, sizeof(h.buckets));
		m[n++] = (stats_metric){ .name = "latency", .labels = labels[o],
					 .type = STATS_METRIC_HISTOGRAM, .value = h.count,
					 .sum_ns = h.sum,
					 .buckets = { STATS_HIST_BUCKETS, buckets[o] } };
	}
	if (d->ldap)
		n += attrd_ldap_metrics(d->ldap, m + n, ARRAY_SIZE(m) - n);
#undef GAUGE
#undef COUNTER
	res.metrics.metrics_len = (u_int)n;
	res.metrics.metrics_val = m;
	finish(d, OP_OTHER, req, 0);
	rpc_request_reply(req, (xdrproc_t)xdr_stats_res, &res);
}

/* The sub-mount table (issue 23 item 1): public, as the mount table is. */
static void handle_mounts(struct daemon *d, struct rpc_request *req)
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
				      .mount_id = mi.mount_id, .since = mi.since };
	}
	res.mounts.mounts_len = (u_int)shown;
	res.mounts.mounts_val = v;
	res.more = (u_int)(n - shown);
	finish(d, OP_OTHER, req, res.status);
	rpc_request_reply(req, (xdrproc_t)xdr_attrd_mounts_res, &res);
}

static void dispatch(struct rpc_server *srv, struct rpc_request *req, XDR *args, void *userdata)
{
	struct daemon *d = userdata;

	/* readers may lag behind a commit whose snapshot failed (a full disk): any call
	 * publishes it again, so the lag ends when space returns */
	(void)attr_store_publish_retry(d->store);
	switch (req->call.proc) {
	case ATTRD_NULL:
		finish(d, OP_OTHER, req, 0);
		rpc_request_reply(req, NULL, NULL);
		return;
	case ATTRD_PING: {
		attrd_ping_res res = { .release = (char *)PACKAGE_VERSION,
				       .pid = (u_int)getpid(),
				       .generation = d->generation,
				       .policies = attr_index_count(attr_store_index(d->store)),
				       .store = (char *)attr_store_path(d->store) };
		finish(d, OP_OTHER, req, 0);
		rpc_request_reply(req, (xdrproc_t)xdr_attrd_ping_res, &res);
		return;
	}
	case ATTRD_SET:
		handle_set(d, req, args);
		return;
	case ATTRD_UNSET:
		handle_unset(d, req, args);
		return;
	case ATTRD_LOOKUP:
		handle_lookup(d, req, args);
		return;
	case ATTRD_STATS:
		handle_stats(d, req);
		return;
	case ATTRD_MOUNTS:
		handle_mounts(d, req);
		return;
	case ATTRD_RELOAD: {
		char msg[ATTRD_MESSAGE_MAX + 1] = "";
		attrd_reload_res res = { .message = msg };

		if (req->peer.uid != 0) {
			snprintf(msg, sizeof(msg), "only root may reload nfskeys-attrd");
			res.status = -EPERM;
		} else {
			res.status = do_reload(d, msg, sizeof(msg));
		}
		res.generation = d->generation;
		finish(d, OP_OTHER, req, res.status);
		rpc_request_reply(req, (xdrproc_t)xdr_attrd_reload_res, &res);
		return;
	}
	default:
		finish(d, OP_OTHER, req, -EOPNOTSUPP);
		rpc_request_error(req, RPC_STATUS_PROC_UNAVAIL);
	}
}

/* ---------------------------------------------------------------- sync, main */

static void on_sync_timer(struct evloop *loop, struct evtimer *t, void *userdata)
{
	struct daemon *d = userdata;
	unsigned interval = attrd_ldap_interval(d->ldap);

	attrd_ldap_sync(d->ldap, loop, &d->store);
	attrd_mounts_configure(d->mounts, d->ctx, d->store, d->apply_mounts);
	evloop_timer_set(t, evloop_now(loop) + (int64_t)interval * USEC_PER_SEC);
}

/* Drop the policy of directories that are gone (issue 21 item 4), at start, on every
 * reload and every [Attrd] Orphan-Check-Interval. */
static void sweep(struct daemon *d)
{
	unsigned dropped;
	int r = attr_store_sweep(d->store, &dropped);

	if (r < 0)
		log_err(d->ctx, "checking for policy of removed directories: %s", strerror(-r));
	else if (dropped)
		log_notice(d->ctx, "dropped %u attribute(s) of removed directories", dropped);
}

static void on_sweep_timer(struct evloop *loop, struct evtimer *t, void *userdata)
{
	struct daemon *d = userdata;

	sweep(d);
	evloop_timer_set(t, evloop_now(loop) + (int64_t)d->lim.sweep_interval * USEC_PER_SEC);
}

static const char *socket_arg, *store_arg;

static const struct daemon_option options[] = {
	{ "socket", 's', "PATH", "listen here instead of [Attrd] Socket", &socket_arg },
	{ "store", 'S', "PATH", "keep the store here instead of [Attr] Store", &store_arg },
	{}
};

static void help_config(FILE *f, bool all)
{
	conf_schema_print(f, all ? NULL : "General Attr Attrd Mounts");
}

static const struct daemon_info info = {
	.name = "nfskeys-attrd",
	.summary = "Keep per-directory cache policy for network filesystems.",
	.pid_name = "attrd.pid",
	.options = options,
	.footer = "See nfskeys-attrd(8).",
	.help_config = help_config,
};

int main(int argc, char *argv[])
{
	struct daemon d = { .generation = 1 };
	struct attrd_config c;
	/* SET/UNSET take an O_PATH directory descriptor (the server refuses any other) */
	struct rpc_server_limits limits = { .max_msg = 256 * 1024, .log = daemon_rpc_log,
					    .accept_fds = true };
	char msg[512] = "";
	int r, lfd = -1, ret = DAEMON_EXIT_FAIL;
	const char *runtime_dir;
	_cleanup_free_ char *mounts_state = NULL;

	r = daemon_parse_args(&d.sh, &info, argc, argv);
	if (r >= 0)
		return r;
	d.conf_path = d.sh.conf_path;
	d.socket_override = socket_arg;
	d.store_override = store_arg;
	r = daemon_detach(&d.sh);
	if (r < 0) {
		daemon_log(LOG_ERR, "cannot detach: %s", strerror(-r));
		return DAEMON_EXIT_FAIL;
	}
	d.start_usec = mono_usec();
	r = config_load(&d, &c, msg, sizeof(msg), &ret);
	if (r < 0) {
		daemon_log(LOG_ERR, "%s", msg);
		return ret;
	}
	ret = DAEMON_EXIT_FAIL;
	d.max_clients = limits.max_clients = c.max_clients;
	/* one user cannot take every slot: the same per-uid count as nfskeys-idmapd's */
	d.max_clients_user = limits.max_clients_per_uid = c.max_clients_user;
	d.idle_timeout = c.idle_timeout;
	limits.idle_timeout_ms = c.idle_timeout * 1000;
	config_swap(&d, &c);
	config_clear(&c); /* what was there before: nothing */
	d.socket_path = strdup(d.socket_override ? d.socket_override :
						   attr_default_socket_path(d.ctx));
	if (!d.socket_path) {
		r = -ENOMEM;
		goto out;
	}
	r = evloop_new(&d.loop);
	if (r < 0)
		goto out;
	r = daemon_add_signals(d.loop, on_sighup, &d);
	if (r < 0)
		goto out;
	runtime_dir = nfskeys_conf_get(d.ctx, "General", "Runtime-Dir");
	d.runtime_dir = strdup(runtime_dir && *runtime_dir ? runtime_dir : RUNDIR);
	if (!d.runtime_dir) {
		r = -ENOMEM;
		goto out;
	}
	r = daemon_socket_dir(d.runtime_dir, d.socket_path);
	if (r == 0) {
		r = unix_listen(d.socket_path, 0666, 128, &lfd);
		if (r < 0)
			daemon_log(LOG_ERR, "cannot listen on %s: %s", d.socket_path, strerror(-r));
	}
	if (r < 0) {
		ret = DAEMON_EXIT_SOCKET;
		goto out;
	}
	r = rpc_server_new(d.loop, lfd, NFSKEYS_ATTRD_PROG, NFSKEYS_ATTRD_V1, &limits, dispatch, &d,
			   &d.srv);
	if (r < 0) {
		daemon_log(LOG_ERR, "cannot serve: %s", strerror(-r));
		close(lfd);
		lfd = -1;
		goto out;
	}
	r = attrd_ldap_new(d.ctx, &d.ldap);
	if (r < 0) {
		daemon_log(LOG_ERR, "LDAP sync: %s", strerror(-r));
		goto out;
	}
	if (d.ldap) {
		r = evloop_add_timer(d.loop, 0, on_sync_timer, &d, &d.sync_timer);
		if (r < 0)
			goto out;
	}
	/* the sub-mounts' table lives next to the socket (root's runtime directory) */
	if (mkdir(d.runtime_dir, 0755) < 0 && errno != EEXIST)
		daemon_log(LOG_WARNING, "cannot create %s: %m", d.runtime_dir);
	if (asprintf(&mounts_state, "%s/attrd-mounts", d.runtime_dir) < 0 ||
	    attrd_mounts_new(d.loop, mounts_state, &d.mounts) < 0) {
		r = -ENOMEM;
		goto out;
	}
	attrd_mounts_configure(d.mounts, d.ctx, d.store, d.apply_mounts);
	sweep(&d);
	r = evloop_add_timer(d.loop,
			     evloop_now(d.loop) + (int64_t)d.lim.sweep_interval * USEC_PER_SEC,
			     on_sweep_timer, &d, &d.sweep_timer);
	if (r < 0)
		goto out;
	daemon_log(LOG_NOTICE, "nfskeys-attrd %s: %zu directories with policy in %s, listening on %s",
		   PACKAGE_VERSION, attr_index_count(attr_store_index(d.store)),
		   attr_store_path(d.store), d.socket_path);
	daemon_ready(&d.sh, d.runtime_dir, "serving");
	r = evloop_run(d.loop);
	ret = r < 0 ? DAEMON_EXIT_FAIL : DAEMON_EXIT_OK;
out:
	evloop_timer_free(d.sync_timer);
	evloop_timer_free(d.sweep_timer);
	attrd_ldap_free(d.ldap);
	attrd_mounts_free(d.mounts);
	rpc_server_free(d.srv);
	if (d.socket_path && lfd >= 0)
		unlink(d.socket_path);
	evloop_free(d.loop);
	nfskeys_attr_store_close(d.store);
	nfskeys_ctx_unref(d.ctx);
	free(d.socket_path);
	free(d.runtime_dir);
	free(d.admin_group);
	daemon_shell_done(&d.sh);
	return ret;
}
