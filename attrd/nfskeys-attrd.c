/* nfskeys-attrd: keeps per-directory cache policy on the client.  A library user (the
 * store, index and identity code live in libnfskeys) that adds the write path: it
 * accepts SET/UNSET with an open directory descriptor, fstat()s it for identity and
 * ownership, authorizes (root, the admin group, or the directory's owner), commits
 * durably and answers lookups from the in-memory index; optional LDAP fleet sync.
 * Here: configuration and reload, the dispatch, the sync and sweep timers, main; the
 * requests are in attrd-requests.c, authorization in attrd-auth.c, statistics in
 * attrd-stats.c. */
#include <grp.h>
#include <sys/stat.h>
#include <syslog.h>

#include "attrd.h"
#include "attrd-client.h"
#include "attrd-ldap.h"
#include "conf-get.h"
#include "attrd-mounts.h"
#include "attrd-wb.h"
#include "rpc-args.h"
#include "time-util.h"
/* after macros.h: <rpc/rpc.h> redefines MIN/MAX in its system header */
#include "attr.h"

#define ATTRD_DEFAULT_USER_DIRS 1000
#define ATTRD_DEFAULT_USER_BYTES (1024 * 1024)
#define ATTRD_DEFAULT_SWEEP 300

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

/* The [Attrd] numbers and durations, the per-user limits and the owner rule: type, bounds
 * and default from the schema (common/conf-schema.c); a malformed value is an error
 * naming it. */
static int conf_limits(struct attrd_config *c, char *msg, size_t msg_size)
{
	unsigned dirs, bytes;
	const struct {
		const char *key;
		unsigned *val;
	} num[] = {
		{ "Max-Clients", &c->max_clients },
		{ "Max-Clients-Per-User", &c->max_clients_user },
		{ "Idle-Timeout", &c->idle_timeout },
		{ "Max-Policies-Per-User", &dirs },
		{ "Max-Bytes-Per-User", &bytes },
		{ "Orphan-Check-Interval", &c->lim.sweep_interval },
	};

	for (size_t i = 0; i < ARRAY_SIZE(num); i++)
		if (conf_get_unsigned(c->ctx, "Attrd", num[i].key, num[i].val, msg, msg_size) < 0)
			return -EINVAL;
	if (conf_get_bool(c->ctx, "Attrd", "Trust-Synthesized-Owners",
			  &c->lim.synthesized_owners, msg, msg_size) < 0)
		return -EINVAL;
	c->lim.user_dirs = dirs;
	c->lim.user_bytes = bytes;
	return 0;
}

/* Load the configuration and open the store it names into *c (nothing of the running
 * daemon is touched); on error *msg says why and the exit code class is returned in
 * *ret_exit. */
static int config_load(struct attrd *d, struct attrd_config *c, char *msg, size_t msg_size,
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
	if ((r = conf_limits(c, msg, msg_size)) < 0 ||
	    (r = attrd_ldap_check(c->ctx, msg, msg_size)) < 0 ||
	    (r = conf_get_bool(c->ctx, "Mounts", "Apply-Mounts", &c->apply_mounts, msg,
			       msg_size)) < 0)
		goto fail;
	{
		int64_t v;

		/* checked here, read by attrd_mounts_configure() */
		r = conf_get_typed(c->ctx, "Mounts", "Retry-Interval", &v, msg, msg_size);
		if (r < 0)
			goto fail;
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

static void on_sync_timer(struct evloop *loop, struct evtimer *t, void *userdata);

/* The fleet sync, when [Attrd] LDAP-URI is set: at start, or at the reload that sets it
 * first.  The first sync too is spread over Sync-Splay. */
static int ldap_sync_start(struct attrd *d)
{
	int r = attrd_ldap_new(d->ctx, &d->ldap);

	if (r < 0 || !d->ldap)
		return r;
	r = evloop_add_timer(d->loop, evloop_now(d->loop) + attrd_ldap_delay_usec(d->ldap, true),
			     on_sync_timer, d, &d->sync_timer);
	if (r < 0) {
		attrd_ldap_free(d->ldap);
		d->ldap = NULL;
	}
	return r;
}

/* Swap a loaded configuration in, in one step; *c then holds the old one to free. */
static void config_swap(struct attrd *d, struct attrd_config *c)
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
	attrd_mounts_configure(d->mounts, d->ctx, d->store, d->apply_mounts, d->have_admin,
			       d->admin_gid);
	attrd_wb_configure(d->wb, d->ctx, d->store, d->apply_mounts);
	*c = old;
}

static void sweep(struct attrd *d);

/* SIGHUP or RELOAD: the new configuration and store, all or nothing. */
static int attrd_reload(struct attrd *d, char *msg, size_t msg_size)
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
		if (!d->ldap && ldap_sync_start(d) == 0 && d->ldap)
			daemon_log(LOG_NOTICE, "LDAP-URI set: syncing starts");
		sweep(d);
		d->generation++;
		snprintf(msg, msg_size, "configuration %s loaded (generation %llu)",
			 nfskeys_ctx_get_conf_path(d->ctx), (unsigned long long)d->generation);
	}
	daemon_reload_end(r, msg);
	return r;
}

static void attrd_on_sighup(void *userdata)
{
	char msg[512];

	attrd_reload(userdata, msg, sizeof(msg));
}

/* ---------------------------------------------------------------- dispatch */

static bool attrd_allowed(const struct rpc_request *req);

static void attrd_handle_null(struct attrd *d, struct rpc_request *req, XDR *args)
{
	attrd_finish(d, ATTRD_OP_OTHER, req, 0);
	rpc_request_reply(req, NULL, NULL);
}

static void attrd_handle_ping(struct attrd *d, struct rpc_request *req, XDR *args)
{
	attrd_ping_res res = { .release = (char *)PACKAGE_VERSION,
			       .pid = (u_int)getpid(),
			       .generation = d->generation,
			       .policies = attr_index_count(attr_store_index(d->store)),
			       .store = (char *)attr_store_path(d->store) };

	attrd_finish(d, ATTRD_OP_OTHER, req, 0);
	rpc_request_reply(req, (xdrproc_t)xdr_attrd_ping_res, &res);
}

static void attrd_handle_reload(struct attrd *d, struct rpc_request *req, XDR *args)
{
	char msg[ATTRD_MESSAGE_MAX + 1] = "";
	attrd_reload_res res = { .message = msg };

	if (!attrd_allowed(req)) {
		snprintf(msg, sizeof(msg), "only root may reload nfskeys-attrd");
		res.status = -EPERM;
	} else {
		res.status = attrd_reload(d, msg, sizeof(msg));
	}
	res.generation = d->generation;
	attrd_finish(d, ATTRD_OP_OTHER, req, res.status);
	rpc_request_reply(req, (xdrproc_t)xdr_attrd_reload_res, &res);
}

/* Indexed by procedure number.  Who may change a directory's attributes depends on the
 * directory too: attrd_authorize decides that for SET and UNSET. */
static const struct attrd_proc attrd_procs[] = {
	[ATTRD_NULL] = { ATTRD_NULL, "null", RPC_CALLER_ANY, attrd_handle_null },
	[ATTRD_PING] = { ATTRD_PING, "ping", RPC_CALLER_ANY, attrd_handle_ping },
	[ATTRD_SET] = { ATTRD_SET, "set", RPC_CALLER_ANY, attrd_handle_set },
	[ATTRD_UNSET] = { ATTRD_UNSET, "unset", RPC_CALLER_ANY, attrd_handle_unset },
	[ATTRD_LOOKUP] = { ATTRD_LOOKUP, "lookup", RPC_CALLER_ANY, attrd_handle_lookup },
	[ATTRD_STATS] = { ATTRD_STATS, "stats", RPC_CALLER_ANY, attrd_handle_stats },
	[ATTRD_RELOAD] = { ATTRD_RELOAD, "reload", RPC_CALLER_ROOT, attrd_handle_reload },
	[ATTRD_MOUNTS] = { ATTRD_MOUNTS, "mounts", RPC_CALLER_ANY, attrd_handle_mounts },
};

/* May the caller make this call (its row's who)? */
static bool attrd_allowed(const struct rpc_request *req)
{
	const struct attrd_proc *p = RPC_PROC_FIND(attrd_procs, req->call.proc);

	return p && rpc_caller_permitted(p->who, &req->peer);
}

static void attrd_dispatch(struct rpc_server *srv, struct rpc_request *req, XDR *args,
			   void *userdata)
{
	struct attrd *d = userdata;
	const struct attrd_proc *p = RPC_PROC_FIND(attrd_procs, req->call.proc);

	/* readers may lag behind a commit whose snapshot failed (a full disk): any call
	 * publishes it again, so the lag ends when space returns */
	(void)attr_store_publish_retry(d->store);
	if (!p) {
		attrd_finish(d, ATTRD_OP_OTHER, req, -EOPNOTSUPP);
		rpc_request_error(req, RPC_STATUS_PROC_UNAVAIL);
		return;
	}
	p->handler(d, req, args);
}

/* ---------------------------------------------------------------- sync, main */

static void on_sync_timer(struct evloop *loop, struct evtimer *t, void *userdata)
{
	struct attrd *d = userdata;

	attrd_ldap_sync(d->ldap, loop, &d->store);
	attrd_mounts_configure(d->mounts, d->ctx, d->store, d->apply_mounts, d->have_admin,
			       d->admin_gid);
	attrd_wb_configure(d->wb, d->ctx, d->store, d->apply_mounts);
	evloop_timer_set(t, evloop_now(loop) + attrd_ldap_delay_usec(d->ldap, false));
}

/* Drop the policy of directories that are gone, so it neither binds a new directory of
 * the same name nor counts against its setter's limit: at start, on every
 * reload and every [Attrd] Orphan-Check-Interval. */
static void sweep(struct attrd *d)
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
	struct attrd *d = userdata;

	sweep(d);
	evloop_timer_set(t, evloop_now(loop) + (int64_t)d->lim.sweep_interval * USEC_PER_SEC);
}

static const char *attrd_socket_arg, *attrd_store_arg;

static const struct daemon_option attrd_options[] = {
	{ "socket", 's', "PATH", "listen here instead of [Attrd] Socket", &attrd_socket_arg },
	{ "store", 'S', "PATH", "keep the store here instead of [Attr] Store", &attrd_store_arg },
	{}
};

static void attrd_help_config(FILE *f, bool all)
{
	conf_schema_print(f, all ? NULL : "General Attr Attrd Mounts");
}

static const struct daemon_info attrd_info = {
	.name = "nfskeys-attrd",
	.summary = "Keep per-directory cache policy for network filesystems.",
	.pid_name = "attrd.pid",
	.options = attrd_options,
	.footer = "See nfskeys-attrd(8).",
	.help_config = attrd_help_config,
};

int main(int argc, char *argv[])
{
	struct attrd d = { .generation = 1 };
	struct attrd_config c;
	/* SET/UNSET take an O_PATH directory descriptor (the server refuses any other) */
	struct rpc_server_limits limits = { .max_msg = 256 * 1024, .log = daemon_rpc_log,
					    .accept_fds = true };
	char msg[512] = "";
	int r, lfd = -1, ret = DAEMON_EXIT_FAIL;
	const char *runtime_dir;
	_cleanup_free_ char *mounts_state = NULL;

	r = daemon_parse_args(&d.sh, &attrd_info, argc, argv);
	if (r >= 0)
		return r;
	d.conf_path = d.sh.conf_path;
	d.socket_override = attrd_socket_arg;
	d.store_override = attrd_store_arg;
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
	d.socket_path = strdup(attrd_socket_path(d.ctx, d.socket_override));
	if (!d.socket_path) {
		r = -ENOMEM;
		goto out;
	}
	r = evloop_new(&d.loop);
	if (r < 0)
		goto out;
	r = daemon_add_signals(d.loop, attrd_on_sighup, &d);
	if (r < 0)
		goto out;
	runtime_dir = nfskeys_conf_get(d.ctx, "General", "Runtime-Dir");
	d.runtime_dir = strdup(runtime_dir && *runtime_dir ? runtime_dir : RUNDIR);
	if (!d.runtime_dir) {
		r = -ENOMEM;
		goto out;
	}
	r = daemon_listen(d.runtime_dir, d.socket_path, 0666, 128, &lfd);
	if (r < 0) {
		ret = DAEMON_EXIT_SOCKET;
		goto out;
	}
	r = rpc_server_new(d.loop, lfd, NFSKEYS_ATTRD_PROG, NFSKEYS_ATTRD_V1, &limits,
			   attrd_dispatch, &d, &d.srv);
	if (r < 0) {
		daemon_log(LOG_ERR, "cannot serve: %s", strerror(-r));
		close(lfd);
		lfd = -1;
		goto out;
	}
	r = ldap_sync_start(&d);
	if (r < 0) {
		daemon_log(LOG_ERR, "LDAP sync: %s", strerror(-r));
		goto out;
	}
	/* the sub-mounts' table lives next to the socket (root's runtime directory) */
	if (mkdir(d.runtime_dir, 0755) < 0 && errno != EEXIST)
		daemon_log(LOG_WARNING, "cannot create %s: %m", d.runtime_dir);
	if (asprintf(&mounts_state, "%s/attrd-mounts", d.runtime_dir) < 0 ||
	    attrd_mounts_new(d.loop, mounts_state, &d.mounts) < 0 ||
	    attrd_wb_new(d.loop, d.runtime_dir, &d.wb) < 0) {
		r = -ENOMEM;
		goto out;
	}
	attrd_mounts_configure(d.mounts, d.ctx, d.store, d.apply_mounts, d.have_admin,
			       d.admin_gid);
	attrd_wb_configure(d.wb, d.ctx, d.store, d.apply_mounts);
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
	attrd_wb_free(d.wb);
	attrd_placing_orphan(&d);
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
