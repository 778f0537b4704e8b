/* nfskeys-idmapd: the ID-mapping system service (doc/DESIGN.md §5).  One event-loop thread
 * answers every client from one shared cache; misses go to a small pool of worker
 * threads running the libnfskeys engine, so a slow backend never delays cached answers.
 * Refresh-ahead keeps hot entries warm; serve-stale bridges backend outages.  This file:
 * the dispatch and main on the daemon shell (common/daemon.h). */
#include <syslog.h>

#include "conf-schema.h"
#include "idmapd.h"

static void idmapd_handle_null(struct idmapd *d, struct rpc_request *req, XDR *args)
{
	idmapd_reply(d, IDMAPD_OP_NULL, req, NULL, NULL);
}

/* Indexed by procedure number, which is also the enum idmapd_op of its statistics. */
const struct idmapd_proc idmapd_procs[_IDMAPD_OP_MAX] = {
	[IDMAPD_NULL] = { IDMAPD_NULL, "null", RPC_CALLER_ANY, idmapd_handle_null },
	[IDMAPD_PING] = { IDMAPD_PING, "ping", RPC_CALLER_ANY, idmapd_handle_ping },
	[IDMAPD_LOOKUP] = { IDMAPD_LOOKUP, "lookup", RPC_CALLER_ANY, idmapd_handle_lookup },
	[IDMAPD_FLUSH] = { IDMAPD_FLUSH, "flush", RPC_CALLER_ROOT, idmapd_handle_flush },
	[IDMAPD_STATS] = { IDMAPD_STATS, "stats", RPC_CALLER_ANY, idmapd_handle_stats },
	[IDMAPD_RELOAD] = { IDMAPD_RELOAD, "reload", RPC_CALLER_ROOT, idmapd_handle_reload },
	[IDMAPD_RECENT] = { IDMAPD_RECENT, "recent", RPC_CALLER_ROOT, idmapd_handle_recent },
	[IDMAPD_NAMESPACES] = { IDMAPD_NAMESPACES, "namespaces", RPC_CALLER_ANY,
				idmapd_handle_namespaces },
};

static void idmapd_dispatch(struct rpc_server *srv, struct rpc_request *req, XDR *args,
			    void *userdata)
{
	struct idmapd *d = userdata;
	const struct idmapd_proc *p = RPC_PROC_FIND(idmapd_procs, req->call.proc);

	if (!p) {
		rpc_request_error(req, RPC_STATUS_PROC_UNAVAIL);
		return;
	}
	d->st.requests[p->proc]++;
	p->handler(d, req, args);
}

/* ---------------------------------------------------------------- main */

static void idmapd_on_sighup(void *userdata)
{
	struct idmapd *d = userdata;

	if (d->reload)
		daemon_log(LOG_INFO, "a reload is running: one more after it");
	idmapd_reload_request(d, NULL);
}

static const char *idmapd_socket_arg;

static const struct daemon_option idmapd_options[] = {
	{ "socket", 's', "PATH", "listen on PATH instead of [Idmapd] Socket", &idmapd_socket_arg },
	{ "debug", 'd', NULL, "log every request (the same as -vv)", NULL, 2 },
	{}
};

static void idmapd_help_config(FILE *f, bool all)
{
	conf_schema_print(f, all ? NULL : "General Idmapd Kernel Mapping Translation Static Regex "
					  "LDAP SID Idmap");
}

static const struct daemon_info idmapd_info = {
	.name = "nfskeys-idmapd",
	.summary = "The nfskeys ID-mapping service: answers nfskeys-upcall and nfskeys from one\n"
		   "shared cache over " IDMAPD_SOCKET_DEFAULT ".",
	.pid_name = "idmapd.pid",
	.options = idmapd_options,
	.footer = "See nfskeys-idmapd(8).",
	.help_config = idmapd_help_config,
};

static void post_exit(struct evloop *loop, void *userdata)
{
	evloop_exit(loop, 0);
}

int main(int argc, char *argv[])
{
	struct idmapd d = { .queue_tail = &d.queue_head };
	struct rpc_server_limits lim;
	char err[IDMAPD_MESSAGE_MAX];
	int r, lfd = -1, ret = DAEMON_EXIT_FAIL;

	idmapd_instance = &d;
	r = daemon_parse_args(&d.sh, &idmapd_info, argc, argv);
	if (r >= 0)
		return r;
	d.conf_arg = d.sh.conf_path;
	d.socket_arg = idmapd_socket_arg;
	d.lib_priority = daemon_lib_priority(&d.sh);
	r = daemon_detach(&d.sh);
	if (r < 0) {
		daemon_log(LOG_ERR, "cannot detach: %s", strerror(-r));
		return DAEMON_EXIT_FAIL;
	}
	pthread_mutex_init(&d.lock, NULL);
	pthread_cond_init(&d.cond, NULL);

	r = idmapd_load_ctx(&d, &d.ctx, &d.set, err, sizeof(err));
	if (r < 0) {
		daemon_log(LOG_ERR, "%s", err);
		return DAEMON_EXIT_CONFIG;
	}
	r = daemon_listen(d.set.runtime_dir, d.set.socket, 0666, 128, &lfd);
	if (r < 0) {
		nfskeys_ctx_unref(d.ctx);
		return DAEMON_EXIT_SOCKET;
	}

	if ((r = evloop_new(&d.loop)) < 0 ||
	    (r = daemon_add_signals(d.loop, idmapd_on_sighup, &d)) < 0 ||
	    (r = (d.cache = idmap_cache_new(d.set.cache_size)) ? 0 : -ENOMEM) < 0 ||
	    (r = idmapd_fetches_new(&d.fetches)) < 0 ||
	    (r = evloop_add_timer(d.loop, 0, idmapd_cancel_sweep, &d, &d.cancel_timer)) < 0) {
		daemon_log(LOG_ERR, "cannot set up the event loop: %s", strerror(-r));
		goto out;
	}
	lim = (struct rpc_server_limits){
		.max_msg = d.set.max_request,
		.max_inflight = d.set.max_inflight,
		.idle_timeout_ms = d.set.idle_timeout * 1000,
		.max_clients = d.set.max_clients,
		.max_clients_per_uid = d.set.max_clients_user,
		.log = daemon_rpc_log,
		.conn_closed = idmapd_lookups_orphaned,
	};
	evloop_timer_cancel(d.cancel_timer);
	r = rpc_server_new(d.loop, lfd, NFSKEYS_IDMAPD_PROG, NFSKEYS_IDMAPD_V1, &lim,
			   idmapd_dispatch, &d, &d.srv);
	if (r < 0) {
		daemon_log(LOG_ERR, "cannot serve: %s", strerror(-r));
		goto out;
	}
	lfd = -1;
	/* Threads start after the signals are blocked, so they inherit the mask. */
	r = idmapd_pool_start(&d, d.set.workers);
	if (r < 0) {
		daemon_log(LOG_ERR, "cannot start workers: %s", strerror(-r));
		goto out;
	}
	r = kpaths_new(d.loop, &d.set.kernel, idmapd_kernel_lookup, daemon_log, &d, &d.kpaths, err,
		       sizeof(err));
	if (r < 0) {
		daemon_log(LOG_ERR, "%s", err);
		ret = DAEMON_EXIT_CONFIG;
		goto out;
	}
	kpaths_set_ns_match(d.kpaths, idmapd_ns_match);
	d.kpaths_namespaces = d.set.kernel.namespaces;
	/* what the last run knew, still fresh: the first minutes are not a backend storm */
	d.snapshot_fp = idmapd_snapshot_fingerprint(d.ctx);
	(void)idmapd_snapshot_load(&d);
	d.start = mono_usec();
	d.generation = 1;
	kpaths_describe(d.kpaths, err, sizeof(err));
	daemon_log(LOG_INFO, "listening on %s (%u workers, cache %u entries, config %s); kernel: %s",
		   d.set.socket, d.set.workers, d.set.cache_size, nfskeys_ctx_get_conf_path(d.ctx),
		   err);
	daemon_ready(&d.sh, d.set.runtime_dir, "running");
	r = evloop_run(d.loop);
	ret = r < 0 ? DAEMON_EXIT_FAIL : DAEMON_EXIT_OK;

	/* Stop: no new clients; let workers finish and deliver (answers to gone clients are
	 * dropped), then run the loop once more to process their results. */
	d.stopping = true;
	/* what the kernel asks from now on waits for the next run, in descriptors the
	 * service manager keeps (kpaths_hand_over); what it asked before is answered now */
	kpaths_stop_reading(d.kpaths);
	d.srv = rpc_server_free(d.srv);
	idmapd_pool_stop(&d);
	idmapd_reload_wait(&d);
	evloop_post(d.loop, post_exit, NULL);
	evloop_run(d.loop);
	kpaths_hand_over(d.kpaths);
	unlink(d.set.socket);
	(void)idmapd_snapshot_save(&d);
out:
	idmapd_pool_stop(&d);
	rpc_server_free(d.srv);
	kpaths_free(d.kpaths); /* after the last answers: kernel queries are cache waiters */
	idmapd_fetches_free(d.fetches);
	idmap_cache_free(d.cache);
	idmapd_quota_clear(&d.quota);
	evloop_timer_free(d.cancel_timer);
	evloop_free(d.loop);
	if (lfd >= 0)
		close(lfd);
	nfskeys_ctx_unref(d.ctx);
	idmapd_profiles_free(d.set.profiles);
	free(d.keybuf);
	idmapd_recent_free(&d);
	pthread_cond_destroy(&d.cond);
	pthread_mutex_destroy(&d.lock);
	daemon_shell_done(&d.sh);
	daemon_log(LOG_INFO, "stopped");
	return ret;
}
