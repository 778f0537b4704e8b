/* nfskeys-idmapd: the ID-mapping system service (DESIGN.md §5).  One event-loop thread
 * answers every client from one shared cache; misses go to a small pool of worker
 * threads running the libnfskeys engine, so a slow backend never delays cached answers.
 * Refresh-ahead keeps hot entries warm; serve-stale bridges backend outages. */
#include <getopt.h>
#include <signal.h>
#include <sys/stat.h>
#include <syslog.h>

#include "cli.h"
#include "idmapd.h"

/* The RPC transport's messages (clients refused, out of descriptors). */
static void rpc_log(void *userdata, int priority, const char *message)
{
	log_msg(priority, "%s", message);
}

static void dispatch(struct rpc_server *srv, struct rpc_request *req, XDR *args, void *userdata)
{
	struct daemon *d = userdata;
	uint32_t proc = req->call.proc;

	if (proc < _OP_MAX)
		d->st.requests[proc]++;
	switch (proc) {
	case IDMAPD_NULL:
		reply(d, OP_NULL, req, NULL, NULL);
		return;
	case IDMAPD_PING:
		do_ping(d, req);
		return;
	case IDMAPD_LOOKUP:
		do_lookup(d, req, args);
		return;
	case IDMAPD_FLUSH:
		do_flush(d, req, args);
		return;
	case IDMAPD_STATS:
		do_stats(d, req);
		return;
	case IDMAPD_RELOAD:
		do_reload(d, req);
		return;
	default:
		rpc_request_error(req, RPC_STATUS_PROC_UNAVAIL);
	}
}

/* ---------------------------------------------------------------- main */

static void on_signal(struct evloop *loop, const struct signalfd_siginfo *si, void *userdata)
{
	struct daemon *d = userdata;

	switch (si->ssi_signo) {
	case SIGHUP:
		log_msg(LOG_INFO, "SIGHUP: reloading the configuration%s",
			d->reload ? " (after the running reload)" : "");
		reload_request(d, NULL);
		break;
	case SIGTERM:
	case SIGINT:
		log_msg(LOG_INFO, "signal %u: stopping", si->ssi_signo);
		notify("STOPPING=1");
		evloop_exit(loop, 0);
		break;
	}
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: nfskeys-idmapd [OPTIONS]\n"
		"\n"
		"The nfskeys ID-mapping service: answers nfskeys-upcall and nfskeys from one\n"
		"shared cache over %s.\n"
		"\n"
		"Options:\n"
		"  -c, --config FILE   configuration file (default %s/nfskeys/nfskeys.conf)\n"
		"  -s, --socket PATH   listen on PATH instead of [Idmapd] Socket\n"
		"  -f, --foreground    stay in the foreground and log to stderr\n"
		"  -d, --debug         log every request (implies more library messages)\n"
		"  -h, --help          show this help\n"
		"  -V, --version       show the version\n"
		"\n"
		"Signals: SIGHUP reloads the configuration, SIGTERM stops.  See nfskeys-idmapd(8).\n",
		IDMAPD_SOCKET_DEFAULT, SYSCONFDIR);
}

static void post_exit(struct evloop *loop, void *userdata)
{
	evloop_exit(loop, 0);
}

static int make_parent_dir(const char *path)
{
	char dir[UNIX_PATH_MAX_LEN + 1];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0;
	*slash = 0;
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return negerrno();
	return 0;
}

int main(int argc, char *argv[])
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "socket", required_argument, NULL, 's' },
		{ "foreground", no_argument, NULL, 'f' },
		{ "debug", no_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{}
	};
	static const int sigs[] = { SIGHUP, SIGTERM, SIGINT };
	struct daemon d = { .queue_tail = &d.queue_head };
	struct rpc_server_limits lim;
	char err[IDMAPD_MESSAGE_MAX];
	int c, r, lfd = -1, ret = EXIT_FAIL;

	the_daemon = &d;

	while ((c = getopt_long(argc, argv, "c:s:fdhV", opts, NULL)) >= 0) {
		switch (c) {
		case 'c':
			d.conf_arg = optarg;
			break;
		case 's':
			d.socket_arg = optarg;
			break;
		case 'f':
			d.foreground = true;
			break;
		case 'd':
			d.debug = true;
			break;
		default:
			return cli_std_option(c, "nfskeys-idmapd", usage);
		}
	}
	if (optind < argc) {
		fprintf(stderr, "nfskeys-idmapd: unexpected argument '%s'\n", argv[optind]);
		return EXIT_USAGE;
	}
	if (d.debug)
		log_level = LOG_DEBUG;
	pthread_mutex_init(&d.lock, NULL);
	pthread_cond_init(&d.cond, NULL);

	r = load_ctx(&d, &d.ctx, &d.set, err, sizeof(err));
	if (r < 0) {
		log_msg(LOG_ERR, "%s", err);
		return EXIT_CONFIG;
	}
	r = make_parent_dir(d.set.socket);
	if (r == 0)
		r = unix_listen(d.set.socket, 0666, 128, &lfd);
	if (r < 0) {
		log_msg(LOG_ERR, "cannot listen on %s: %s", d.set.socket, strerror(-r));
		nfskeys_ctx_unref(d.ctx);
		return EXIT_SOCKET;
	}
	if (!d.foreground) {
		if (daemon(0, 0) < 0) {
			log_msg(LOG_ERR, "cannot daemonize: %m");
			goto out;
		}
		openlog("nfskeys-idmapd", LOG_PID, LOG_DAEMON);
		log_to_stderr = false;
	}
	signal(SIGPIPE, SIG_IGN);

	if ((r = evloop_new(&d.loop)) < 0 ||
	    (r = evloop_add_signals(d.loop, sigs, ARRAY_SIZE(sigs), on_signal, &d)) < 0 ||
	    (r = idmapd_cache_new(d.set.cache_size, &d.cache)) < 0) {
		log_msg(LOG_ERR, "cannot set up the event loop: %s", strerror(-r));
		goto out;
	}
	lim = (struct rpc_server_limits){
		.max_msg = d.set.max_request,
		.max_inflight = d.set.max_inflight,
		.idle_timeout_ms = d.set.idle_timeout * 1000,
		.max_clients = d.set.max_clients,
		.log = rpc_log,
	};
	r = rpc_server_new(d.loop, lfd, NFSKEYS_IDMAPD_PROG, NFSKEYS_IDMAPD_V1, &lim, dispatch, &d,
			   &d.srv);
	if (r < 0) {
		log_msg(LOG_ERR, "cannot serve: %s", strerror(-r));
		goto out;
	}
	lfd = -1;
	/* Threads start after the signals are blocked, so they inherit the mask. */
	r = pool_start(&d, d.set.workers);
	if (r < 0) {
		log_msg(LOG_ERR, "cannot start workers: %s", strerror(-r));
		goto out;
	}
	d.start = mono_usec();
	d.generation = 1;
	log_msg(LOG_INFO, "listening on %s (%u workers, cache %u entries, config %s)",
		d.set.socket, d.set.workers, d.set.cache_size, nfskeys_ctx_get_conf_path(d.ctx));
	notify("READY=1\nSTATUS=running");
	r = evloop_run(d.loop);
	ret = r < 0 ? EXIT_FAIL : EXIT_OK;

	/* Stop: no new clients; let workers finish and deliver (answers to gone clients are
	 * dropped), then run the loop once more to process their results. */
	d.stopping = true;
	d.srv = rpc_server_free(d.srv);
	pool_stop(&d);
	reload_wait(&d);
	evloop_post(d.loop, post_exit, NULL);
	evloop_run(d.loop);
	unlink(d.set.socket);
out:
	pool_stop(&d);
	rpc_server_free(d.srv);
	idmapd_cache_free(d.cache);
	evloop_free(d.loop);
	if (lfd >= 0)
		close(lfd);
	nfskeys_ctx_unref(d.ctx);
	free(d.keybuf);
	pthread_cond_destroy(&d.cond);
	pthread_mutex_destroy(&d.lock);
	log_msg(LOG_INFO, "stopped");
	return ret;
}
