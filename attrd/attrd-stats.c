/* nfskeys-attrd's statistics: the STATS answer, per-operation counters and latency
 * histograms with the server's connection counts, the index size and LDAP sync. */
#include "attrd.h"
#include "attrd-ldap.h"
#include "time-util.h"
/* after macros.h: <rpc/rpc.h> redefines MIN/MAX in its system header */
#include "attr.h"

static const char *const attrd_op_names[_ATTRD_OP_MAX] = { "set", "unset", "lookup", "other" };

void attrd_finish(struct attrd *d, enum attrd_op op, struct rpc_request *req, int status)
{
	struct attrd_op_stats *s = &d->ops[op];

	stats_inc(&s->calls);
	if (status == -EPERM)
		stats_inc(&s->refused);
	else if (status < 0)
		stats_inc(&s->errors);
	stats_hist_add(&s->latency, mono_nsec() - req->start_ns);
}

void attrd_handle_stats(struct attrd *d, struct rpc_request *req, XDR *args)
{
	stats_metric m[4 * _ATTRD_OP_MAX + 16];
	uint64_t buckets[_ATTRD_OP_MAX][STATS_HIST_BUCKETS];
	char labels[_ATTRD_OP_MAX][32];
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
	GAUGE("placing", d->n_placing);
	GAUGE("uptime_seconds", (uint64_t)((mono_usec() - d->start_usec) / USEC_PER_SEC));
	COUNTER("connections_total", "", ss.accepted);
	COUNTER("bad_messages_total", "", ss.bad_frames + ss.bad_headers);
	COUNTER("connections_refused_total", "", ss.refused);
	COUNTER("connections_refused_user_total", "", ss.refused_uid);
	COUNTER("idle_closed_total", "", ss.idle_closed);
	for (int o = 0; o < _ATTRD_OP_MAX; o++) {
		struct stats_hist h;

		snprintf(labels[o], sizeof(labels[o]), "op=\"%s\"", attrd_op_names[o]);
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
	attrd_finish(d, ATTRD_OP_OTHER, req, 0);
	rpc_request_reply(req, (xdrproc_t)xdr_stats_res, &res);
}
