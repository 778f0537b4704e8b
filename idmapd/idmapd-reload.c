/* nfskeys-idmapd configuration: [Idmapd] settings, the load of a new context, and reloads
 * built off the loop thread and swapped in on it (the old configuration kept on error). */
#include <inttypes.h>
#include <syslog.h>
#include <unistd.h>

#include "conf-get.h"
#include "idmapd.h"

/* ---------------------------------------------------------------- settings */

static int settings_load(struct nfskeys_ctx *ctx, const char *socket_arg,
			 struct idmapd_settings *ret, char *err, size_t errlen)
{
	struct idmapd_settings s = { 0 };
	unsigned helper_timeout;
	const struct {
		const char *key;
		unsigned *val;
	} num[] = {
		{ "Workers", &s.workers },
		{ "Cache-Size", &s.cache_size },
		{ "Negative-TTL", &s.negative_ttl },
		{ "Refresh-Ahead", &s.refresh_pct },
		{ "Refresh-Hits", &s.refresh_hits },
		{ "Stale-Limit", &s.stale_limit },
		{ "Stale-TTL", &s.stale_ttl },
		{ "Stale-Wait", &s.stale_wait_ms },
		{ "Max-Clients", &s.max_clients },
		{ "Max-Request", &s.max_request },
		{ "Max-Inflight", &s.max_inflight },
		{ "Idle-Timeout", &s.idle_timeout },
		/* read by nfskeys-upcall, checked here so that a typo is refused, not ignored */
		{ "Helper-Timeout", &helper_timeout },
		{ "Max-Clients-Per-User", &s.max_clients_user },
		{ "Max-Queue", &s.max_queue },
		{ "Max-Queue-Per-User", &s.max_queue_user },
	};
	const char *v;
	int r;

	v = idmapd_socket_path(ctx, socket_arg);
	if (strlen(v) > UNIX_PATH_MAX_LEN) {
		snprintf(err, errlen, "socket path too long (%zu > %d bytes): %s", strlen(v),
			 UNIX_PATH_MAX_LEN, v);
		return -ENAMETOOLONG;
	}
	snprintf(s.socket, sizeof(s.socket), "%s", v);
	v = nfskeys_conf_get(ctx, "General", "Runtime-Dir");
	snprintf(s.runtime_dir, sizeof(s.runtime_dir), "%s", v && *v ? v : RUNDIR);
	v = nfskeys_conf_get(ctx, "Idmapd", "Kernel-Keyrings");
	snprintf(s.keyrings, sizeof(s.keyrings), "%s", v ? v : ".id_resolver .cifs_idmap");
	/* numbers, durations and sizes: type, bounds and default from the schema
	 * (common/conf-schema.c); a bad value is an error naming key, value and bounds */
	for (size_t i = 0; i < ARRAY_SIZE(num); i++)
		if (conf_get_unsigned(ctx, "Idmapd", num[i].key, num[i].val, err, errlen) < 0)
			return -EINVAL;
	if (conf_get_bool(ctx, "Idmapd", "Inline-Lookups", &s.inline_lookups, err, errlen) < 0)
		return -EINVAL;
	r = kpaths_config_load(ctx, &s.kernel, err, errlen);
	if (r < 0)
		return r;
	v = nfskeys_conf_get(ctx, "Idmapd", "Cache-Snapshot");
	if (v && *v && strcmp(v, "none") && v[0] != '/') {
		snprintf(err, errlen, "[Idmapd] Cache-Snapshot = %s: expected an absolute path or none",
			 v);
		return -EINVAL;
	}
	if (v && *v) {
		snprintf(s.snapshot, sizeof(s.snapshot), "%s", strcmp(v, "none") ? v : "");
	} else {
		/* under systemd, its StateDirectory= (the first, if several) */
		const char *sd = getenv("STATE_DIRECTORY");

		if (sd && sd[0] == '/')
			snprintf(s.snapshot, sizeof(s.snapshot), "%.*s/idmapd-cache.snap",
				 (int)strcspn(sd, ":"), sd);
	}
	v = nfskeys_conf_get(ctx, "Kernel", "Namespace-Dir");
	if (v && *v) {
		snprintf(s.namespace_dir, sizeof(s.namespace_dir), "%s", v);
	} else {
		/* beside the main file, as its conf.d */
		const char *main = nfskeys_ctx_get_conf_path(ctx), *slash = strrchr(main, '/');

		snprintf(s.namespace_dir, sizeof(s.namespace_dir), "%.*snamespaces.d",
			 slash ? (int)(slash - main + 1) : 0, main);
	}
	*ret = s;
	return 0;
}

/* A new context from the configuration, with the engine initialized (backends loaded,
 * domain found) so that a broken configuration fails here and not on first use. */
int idmapd_load_ctx(struct idmapd *d, struct nfskeys_ctx **ret_ctx,
		    struct idmapd_settings *ret_set, char *err, size_t errlen)
{
	struct nfskeys_ctx *ctx = NULL;
	struct idmapd_settings s;
	const char *domain;
	char why[256] = "";
	int r;

	daemon_capture_errors(why, sizeof(why));
	r = nfskeys_ctx_new_full(d->conf_arg, daemon_lib_log, NULL, &ctx);
	if (r < 0) {
		snprintf(err, errlen, "cannot load configuration %s: %s%s%s%s",
			 d->conf_arg ? d->conf_arg : "(default)", strerror(-r),
			 why[0] ? " (" : "", why, why[0] ? ")" : "");
		goto out;
	}
	nfskeys_ctx_set_log_priority(ctx, d->lib_priority);
	nfskeys_conf_log_warnings(ctx); /* typos: unknown keys, with file and line */
	r = settings_load(ctx, d->socket_arg, &s, err, errlen);
	if (r < 0)
		goto out;
	r = nfskeys_idmap_get_domain(ctx, &domain, NULL);
	if (r == 0)
		r = nfskeys_idmap_check_config(ctx); /* a misspelt backend is a bad value */
	if (r < 0) {
		snprintf(err, errlen, "ID-mapping configuration in %s is not usable: %s%s%s%s",
			 nfskeys_ctx_get_conf_path(ctx), strerror(-r), why[0] ? " (" : "", why,
			 why[0] ? ")" : "");
		goto out;
	}
	/* The library logs a backend it cannot load (or init) and goes on without it; a
	 * daemon must not start, or reload into, a translation chain missing a part. */
	if (why[0]) {
		snprintf(err, errlen, "ID-mapping configuration in %s is not usable: %s",
			 nfskeys_ctx_get_conf_path(ctx), why);
		r = -EINVAL;
		goto out;
	}
	if (s.kernel.namespaces && s.kernel.client_pipe != KPATH_NO) {
		r = idmapd_profiles_load(s.namespace_dir, d->lib_priority, &s.profiles, err,
					 errlen);
		if (r < 0)
			goto out;
	}
	*ret_ctx = TAKE_PTR(ctx);
	*ret_set = s;
out:
	daemon_capture_errors(NULL, 0);
	nfskeys_ctx_unref(ctx);
	return r;
}
static void reload_done(struct evloop *loop, void *userdata);

static void *reload_main(void *arg)
{
	struct reload_job *j = arg;

	j->r = idmapd_load_ctx(j->d, &j->ctx, &j->set, j->msg, sizeof(j->msg));
	while (evloop_post(j->d->loop, reload_done, j) < 0)
		usleep(1000); /* out of memory: retry rather than lose the callers */
	return NULL;
}

static void reload_answer(struct idmapd *d, struct reload_waiter **list, int status,
			  const char *msg)
{
	while (*list) {
		struct reload_waiter *w = *list;
		idmapd_reload_res res = { .status = status, .message = (char *)msg,
					  .generation = d->generation };

		*list = w->next;
		idmapd_reply(d, IDMAPD_OP_RELOAD, w->req, (xdrproc_t)xdr_idmapd_reload_res, &res);
		free(w);
	}
}

/* Swap in the configuration a reload thread built (on the loop thread). */
static void reload_apply(struct idmapd *d, struct reload_job *j)
{
	struct idmapd_settings *s = &j->set;

	if (!streq(s->socket, d->set.socket) || s->workers != d->set.workers)
		daemon_log(LOG_NOTICE, "Socket and Workers changes take effect at restart");
	if (s->kernel.server_channels != d->set.kernel.server_channels ||
	    s->kernel.client_pipe != d->set.kernel.client_pipe ||
	    !streq(s->kernel.channel_dir, d->set.kernel.channel_dir) ||
	    !streq(s->kernel.pipefs_dir, d->set.kernel.pipefs_dir) ||
	    s->kernel.namespaces != d->set.kernel.namespaces ||
	    s->kernel.namespace_owner_ids != d->set.kernel.namespace_owner_ids)
		daemon_log(LOG_NOTICE, "[Kernel] path changes take effect at restart (the kernel's "
				       "channels stay open across a reload)");
	snprintf(s->socket, sizeof(s->socket), "%s", d->set.socket);
	s->workers = d->set.workers;
	kpaths_update(d->kpaths, &s->kernel);
	nfskeys_ctx_unref(d->ctx);
	d->ctx = TAKE_PTR(j->ctx);
	idmapd_profiles_free(d->set.profiles);
	d->set = *s;
	d->snapshot_fp = idmapd_snapshot_fingerprint(d->ctx);
	s->profiles = NULL; /* the daemon's now */
	if (d->kpaths)
		kpaths_set_ns_match(d->kpaths, idmapd_ns_match);
	d->generation++;
	idmap_cache_set_capacity(d->cache, s->cache_size);
	idmapd_flush_cache(d);
	idmapd_clear_kernel_keyrings(d);
	(void)kpaths_flush_server(d->kpaths); /* knfsd's cached answers may have changed too */
	snprintf(j->msg, sizeof(j->msg), "configuration %s loaded (generation %" PRIu64 ")",
		 nfskeys_ctx_get_conf_path(d->ctx), d->generation);
}

static void reload_start(struct idmapd *d)
{
	struct reload_job *j = calloc(1, sizeof(*j));
	int r;

	daemon_reload_begin();
	d->st.reloads++;
	if (!j) {
		r = -ENOMEM;
		goto fail;
	}
	j->d = d;
	r = -pthread_create(&j->thread, NULL, reload_main, j);
	if (r < 0)
		goto fail;
	d->reload = j;
	return;
fail:
	free(j);
	d->st.reload_failures++;
	daemon_reload_end(r, strerror(-r));
	reload_answer(d, &d->reload_waiting, r, "cannot start the reload");
}

static void reload_done(struct evloop *loop, void *userdata)
{
	struct reload_job *j = userdata;
	struct idmapd *d = j->d;
	struct reload_waiter *callers;

	if (!j->joined)
		pthread_join(j->thread, NULL);
	d->reload = NULL;
	if (d->stopping) {
		snprintf(j->msg, sizeof(j->msg), "the daemon is stopping");
		j->r = -ESHUTDOWN;
	} else if (j->r < 0) {
		d->st.reload_failures++;
		daemon_reload_end(j->r, j->msg);
	} else {
		reload_apply(d, j);
		daemon_reload_end(0, j->msg);
	}
	/* A SIGHUP or RELOAD that came while this one ran may have followed a later edit:
	 * one more reload answers all of them.  It starts before this one's callers are
	 * answered, since answering may dispatch a RELOAD queued behind them. */
	callers = TAKE_PTR(d->reload_waiting);
	if (d->reload_again && !d->stopping) {
		d->reload_again = false;
		d->reload_waiting = TAKE_PTR(d->reload_next);
		reload_start(d);
	}
	reload_answer(d, &callers, j->r, j->msg);
	if (d->stopping)
		reload_answer(d, &d->reload_next, -ESHUTDOWN, "the daemon is stopping");
	nfskeys_ctx_unref(j->ctx);
	idmapd_profiles_free(j->set.profiles); /* a reload that failed or was not applied */
	free(j);
}

/* Ask for a reload; req (NULL for SIGHUP) is answered when it is done. */
void idmapd_reload_request(struct idmapd *d, struct rpc_request *req)
{
	struct reload_waiter *w = NULL;

	if (req) {
		w = calloc(1, sizeof(*w));
		if (!w) {
			rpc_request_error(req, RPC_STATUS_SYSTEM_ERR);
			return;
		}
		w->req = req;
	}
	if (d->reload) {
		d->reload_again = true;
		if (w) {
			w->next = d->reload_next;
			d->reload_next = w;
		}
		return;
	}
	if (w) {
		w->next = d->reload_waiting;
		d->reload_waiting = w;
	}
	reload_start(d);
}

/* At shutdown: wait for a running reload thread (its result is then discarded by
 * reload_done, which the final loop iteration runs). */
void idmapd_reload_wait(struct idmapd *d)
{
	if (d->reload && !d->reload->joined) {
		pthread_join(d->reload->thread, NULL);
		d->reload->joined = true;
	}
}

void idmapd_handle_reload(struct idmapd *d, struct rpc_request *req, XDR *args)
{
	if (!idmapd_allowed(d, IDMAPD_OP_RELOAD, req)) {
		idmapd_reload_res res = { .status = -EPERM,
					  .message = (char *)"reload is reserved to root",
					  .generation = d->generation };

		idmapd_reply(d, IDMAPD_OP_RELOAD, req, (xdrproc_t)xdr_idmapd_reload_res, &res);
		return;
	}
	idmapd_reload_request(d, req);
}
