/* nfskeys-idmapd statistics: counters and latency histograms per operation and per
 * backend, answered as metrics to `nfskeys idmap stats`. */
#include <syslog.h>

#include "idmapd.h"

const char *const lres_names[_LR_MAX] = { "hit", "miss", "negative_hit", "stale",
					  "coalesced", "refresh_ahead", "nobody", "error" };

/* ---------------------------------------------------------------- statistics */

struct backend_stats *idmapd_backend_slot(struct idmapd *d, const char *name)
{
	struct idmapd_stats *st = &d->st;

	if (!name || !*name)
		name = "unknown";
	for (size_t i = 0; i < st->n_backends; i++)
		if (streq(st->backends[i].name, name))
			return &st->backends[i];
	if (st->n_backends == MAX_BACKENDS)
		return &st->backends[MAX_BACKENDS - 1]; /* shared overflow slot */
	snprintf(st->backends[st->n_backends].name, NFSKEYS_IDMAP_BACKEND_MAX, "%s", name);
	return &st->backends[st->n_backends++];
}

/* Reply and account the request's latency under its operation. */
void idmapd_reply(struct idmapd *d, enum idmapd_op op, struct rpc_request *req, xdrproc_t fn,
		  const void *res)
{
	uint64_t start = req->start_ns;

	rpc_request_reply(req, fn, res);
	stats_hist_add(&d->st.latency[op], mono_nsec() - start);
}
struct metrics {
	stats_metric *m;
	size_t n, cap;
	char labels[_IDMAPD_OP_MAX * 4 + _LR_MAX + MAX_BACKENDS * 4 + _KPATH_SRC_MAX * 6]
		   [STATS_METRIC_LABELS_MAX];
	size_t nlabels;
};

/* A label pair name="v" kept alive in ms until the reply is sent. */
static const char *mlabel(struct metrics *ms, const char *name, const char *v)
{
	char *l;

	if (ms->nlabels >= ARRAY_SIZE(ms->labels))
		return "";
	l = ms->labels[ms->nlabels++];
	snprintf(l, STATS_METRIC_LABELS_MAX, "%s=\"%s\"", name, v);
	return l;
}

static void madd(struct metrics *ms, const char *name, const char *labels,
		 enum stats_metric_type type, uint64_t value, const struct stats_hist *h)
{
	stats_metric *m;

	if (ms->n == ms->cap)
		return;
	m = &ms->m[ms->n++];
	memset(m, 0, sizeof(*m));
	m->name = (char *)name;
	m->labels = (char *)(labels ? labels : "");
	m->type = type;
	m->value = value;
	if (h) {
		struct stats_hist s;
		static uint64_t bucket_store[STATS_METRICS_MAX][STATS_HIST_BUCKETS];
		uint64_t *bs = bucket_store[ms->n - 1];
		unsigned last = 0;

		stats_hist_snapshot(h, &s);
		m->value = s.count;
		m->sum_ns = s.sum;
		for (unsigned b = 0; b < STATS_HIST_BUCKETS; b++) {
			bs[b] = s.buckets[b];
			if (s.buckets[b])
				last = b + 1;
		}
		m->buckets.buckets_len = last;
		m->buckets.buckets_val = (u_quad_t *)bs;
	}
}

void idmapd_handle_stats(struct idmapd *d, struct rpc_request *req, XDR *args)
{
	_cleanup_free_ struct metrics *ms = calloc(1, sizeof(*ms));
	_cleanup_free_ stats_metric *m = calloc(STATS_METRICS_MAX, sizeof(*m));
	struct nfskeys_idmap_cache_stats cst;
	struct rpc_server_stats ss;
	stats_res res = {};

	if (!ms || !m) {
		rpc_request_error(req, RPC_STATUS_SYSTEM_ERR);
		return;
	}
	ms->m = m;
	ms->cap = STATS_METRICS_MAX;
	for (int op = 0; op < _IDMAPD_OP_MAX; op++)
		madd(ms, "requests_total", mlabel(ms, "op", idmapd_op_name(op)),
		     STATS_METRIC_COUNTER, d->st.requests[op], NULL);
	for (int op = 0; op < _IDMAPD_OP_MAX; op++)
		if (d->st.denied[op])
			madd(ms, "denied_total", mlabel(ms, "op", idmapd_op_name(op)),
			     STATS_METRIC_COUNTER, d->st.denied[op], NULL);
	for (int i = 0; i < _LR_MAX; i++)
		madd(ms, "lookups_total", mlabel(ms, "result", lres_names[i]),
		     STATS_METRIC_COUNTER, d->st.lookups[i], NULL);
	for (size_t i = 0; i < d->st.n_backends; i++)
		madd(ms, "backend_requests_total",
		     mlabel(ms, "backend", d->st.backends[i].name), STATS_METRIC_COUNTER,
		     d->st.backends[i].requests, NULL);
	for (size_t i = 0; i < d->st.n_backends; i++)
		madd(ms, "backend_failures_total",
		     mlabel(ms, "backend", d->st.backends[i].name), STATS_METRIC_COUNTER,
		     d->st.backends[i].failures, NULL);
	/* the kernel's paths in: knfsd channels and client pipes */
	for (int s = 0; d->kpaths && s < _KPATH_SRC_MAX; s++) {
		const struct kpath_stats *k = kpaths_stats(d->kpaths, s);
		const char *name = kpath_src_name(s);

		madd(ms, "kernel_requests_total", mlabel(ms, "path", name), STATS_METRIC_COUNTER,
		     k->requests, NULL);
		madd(ms, "kernel_malformed_total", mlabel(ms, "path", name),
		     STATS_METRIC_COUNTER, k->malformed, NULL);
		madd(ms, "kernel_answers_total",
		     mlabel(ms, "path", name), STATS_METRIC_COUNTER, k->positive, NULL);
		madd(ms, "kernel_negative_total", mlabel(ms, "path", name),
		     STATS_METRIC_COUNTER, k->negative, NULL);
		madd(ms, "kernel_write_errors_total", mlabel(ms, "path", name),
		     STATS_METRIC_COUNTER, k->write_errors, NULL);
		madd(ms, "kernel_primed_total", mlabel(ms, "path", name),
		     STATS_METRIC_COUNTER, k->primed, NULL);
	}
	madd(ms, "kernel_namespaces", NULL, STATS_METRIC_GAUGE, kpaths_netns_count(d->kpaths),
	     NULL);
	idmap_cache_get_stats(d->cache, &cst);
	madd(ms, "cache_entries", NULL, STATS_METRIC_GAUGE, cst.entries, NULL);
	madd(ms, "cache_capacity", NULL, STATS_METRIC_GAUGE, cst.capacity, NULL);
	madd(ms, "cache_evictions_total", NULL, STATS_METRIC_COUNTER, cst.evictions, NULL);
	madd(ms, "cache_flushes_total", NULL, STATS_METRIC_COUNTER, d->st.flushes, NULL);
	madd(ms, "cache_snapshot_restored", NULL, STATS_METRIC_GAUGE, d->st.snapshot_restored,
	     NULL);
	madd(ms, "queue_jobs", NULL, STATS_METRIC_GAUGE, d->quota.total, NULL);
	madd(ms, "queue_refused_total", NULL, STATS_METRIC_COUNTER, d->st.queue_refused, NULL);
	madd(ms, "queue_cancelled_total", NULL, STATS_METRIC_COUNTER, d->st.cancelled, NULL);
	madd(ms, "inline_lookups_total", NULL, STATS_METRIC_COUNTER, d->st.inlined, NULL);
	madd(ms, "reverse_prefetched_total", NULL, STATS_METRIC_COUNTER, d->st.rev_prefetched, NULL);
	madd(ms, "reverse_cocached_total", NULL, STATS_METRIC_COUNTER, d->st.rev_cocached, NULL);
	madd(ms, "reverse_names_cocached_total", NULL, STATS_METRIC_COUNTER, d->st.names_cocached,
	     NULL);
	madd(ms, "kernel_keyrings_cleared_total", NULL, STATS_METRIC_COUNTER,
	     d->st.keyrings_cleared, NULL);
	madd(ms, "reloads_total", NULL, STATS_METRIC_COUNTER, d->st.reloads, NULL);
	madd(ms, "reload_failures_total", NULL, STATS_METRIC_COUNTER, d->st.reload_failures,
	     NULL);
	madd(ms, "config_generation", NULL, STATS_METRIC_GAUGE, d->generation, NULL);
	madd(ms, "workers", NULL, STATS_METRIC_GAUGE, d->n_threads, NULL);
	pthread_mutex_lock(&d->lock);
	madd(ms, "queue_depth", NULL, STATS_METRIC_GAUGE, d->queued, NULL);
	pthread_mutex_unlock(&d->lock);
	rpc_server_get_stats(d->srv, &ss);
	madd(ms, "connections_total", NULL, STATS_METRIC_COUNTER, ss.accepted, NULL);
	madd(ms, "connections", NULL, STATS_METRIC_GAUGE, ss.current, NULL);
	madd(ms, "connections_refused_total", NULL, STATS_METRIC_COUNTER, ss.refused, NULL);
	madd(ms, "connections_refused_user_total", NULL, STATS_METRIC_COUNTER, ss.refused_uid,
	     NULL);
	madd(ms, "bad_frames_total", NULL, STATS_METRIC_COUNTER, ss.bad_frames, NULL);
	madd(ms, "bad_headers_total", NULL, STATS_METRIC_COUNTER, ss.bad_headers, NULL);
	madd(ms, "idle_closed_total", NULL, STATS_METRIC_COUNTER, ss.idle_closed, NULL);
	madd(ms, "overflow_closed_total", NULL, STATS_METRIC_COUNTER, ss.overflow_closed, NULL);
	madd(ms, "uptime_seconds", NULL, STATS_METRIC_GAUGE,
	     (evloop_now(d->loop) - d->start) / USEC_PER_SEC, NULL);
	for (int op = 0; op < _IDMAPD_OP_MAX; op++)
		madd(ms, "request_latency", mlabel(ms, "op", idmapd_op_name(op)),
		     STATS_METRIC_HISTOGRAM, 0, &d->st.latency[op]);
	for (size_t i = 0; i < d->st.n_backends; i++)
		madd(ms, "backend_latency", mlabel(ms, "backend", d->st.backends[i].name),
		     STATS_METRIC_HISTOGRAM, 0, &d->st.backends[i].latency);
	for (int s = 0; d->kpaths && s < _KPATH_SRC_MAX; s++)
		madd(ms, "kernel_latency", mlabel(ms, "path", kpath_src_name(s)),
		     STATS_METRIC_HISTOGRAM, 0, &kpaths_stats(d->kpaths, s)->latency);
	res.metrics.metrics_len = ms->n;
	res.metrics.metrics_val = m;
	idmapd_reply(d, IDMAPD_OP_STATS, req, (xdrproc_t)xdr_stats_res, &res);
}
