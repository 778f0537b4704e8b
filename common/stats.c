/* log2 histograms and counters with text / JSON / Prometheus output (see stats.h), and
 * the daemons' statistics answer (proto/metrics.x) fetched and printed the same way. */
#include <inttypes.h>

#include "macros.h"
#include "rpc-client.h"
#include "stats.h"
/* after macros.h: <rpc/rpc.h> redefines MIN/MAX in its system header */
#include "metrics.h"

unsigned stats_hist_bucket(uint64_t value)
{
	unsigned b;

	if (value < 2)
		return 0;
	b = 63 - __builtin_clzll(value);
	return MIN(b, (unsigned)STATS_HIST_BUCKETS - 1);
}

void stats_hist_add(struct stats_hist *h, uint64_t value)
{
	__atomic_fetch_add(&h->buckets[stats_hist_bucket(value)], 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&h->sum, value, __ATOMIC_RELAXED);
	__atomic_fetch_add(&h->count, 1, __ATOMIC_RELAXED);
}

void stats_hist_snapshot(const struct stats_hist *h, struct stats_hist *ret)
{
	struct stats_hist s;

	s.count = 0;
	for (unsigned b = 0; b < STATS_HIST_BUCKETS; b++) {
		s.buckets[b] = __atomic_load_n(&h->buckets[b], __ATOMIC_RELAXED);
		s.count += s.buckets[b];
	}
	s.sum = __atomic_load_n(&h->sum, __ATOMIC_RELAXED);
	*ret = s;
}

/* Exclusive upper bound of bucket b in ns. */
static uint64_t bucket_upper(unsigned b)
{
	return b >= 63 ? UINT64_MAX : 1ULL << (b + 1);
}

uint64_t stats_hist_quantile(const struct stats_hist *h, double q)
{
	uint64_t total = 0, seen = 0, want;

	for (unsigned b = 0; b < STATS_HIST_BUCKETS; b++)
		total += h->buckets[b];
	if (total == 0 || q <= 0)
		return 0;
	if (q > 1)
		q = 1;
	want = (uint64_t)(q * (double)total + 0.999999);
	if (want == 0)
		want = 1;
	for (unsigned b = 0; b < STATS_HIST_BUCKETS; b++) {
		seen += h->buckets[b];
		if (seen >= want)
			return bucket_upper(b);
	}
	return bucket_upper(STATS_HIST_BUCKETS - 1);
}

int stats_format_from_string(const char *s, enum stats_format *ret)
{
	if (streq(s, "text"))
		*ret = STATS_TEXT;
	else if (streq(s, "json"))
		*ret = STATS_JSON;
	else if (streq(s, "prometheus"))
		*ret = STATS_PROMETHEUS;
	else
		return -EINVAL;
	return 0;
}

/* A duration in ns for people: "850ns", "12.3us", "4.1ms", "2.00s". */
static void fmt_dur(char *buf, size_t len, uint64_t ns)
{
	if (ns < 1000)
		snprintf(buf, len, "%" PRIu64 "ns", ns);
	else if (ns < 1000000)
		snprintf(buf, len, "%.1fus", ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, len, "%.1fms", ns / 1e6);
	else
		snprintf(buf, len, "%.2fs", ns / 1e9);
}

static void print_text(FILE *f, const struct stats_entry *e, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char label[256];

		snprintf(label, sizeof(label), "%s%s%s%s", e[i].name, e[i].labels ? "{" : "",
			 e[i].labels ? e[i].labels : "", e[i].labels ? "}" : "");
		if (e[i].type != STATS_HISTOGRAM) {
			fprintf(f, "%-48s %" PRIu64 "\n", label, e[i].value);
			continue;
		}
		struct stats_hist h;
		char mean[32], p50[32], p99[32];

		stats_hist_snapshot(e[i].hist, &h);
		fmt_dur(mean, sizeof(mean), h.count ? h.sum / h.count : 0);
		fmt_dur(p50, sizeof(p50), stats_hist_quantile(&h, 0.5));
		fmt_dur(p99, sizeof(p99), stats_hist_quantile(&h, 0.99));
		fprintf(f, "%-48s count %" PRIu64 " mean %s p50 <%s p99 <%s\n", label, h.count,
			mean, p50, p99);
		for (unsigned b = 0; b < STATS_HIST_BUCKETS; b++) {
			char lo[32], hi[32];

			if (!h.buckets[b])
				continue;
			fmt_dur(lo, sizeof(lo), b ? 1ULL << b : 0);
			fmt_dur(hi, sizeof(hi), bucket_upper(b));
			fprintf(f, "    [%8s, %8s) %" PRIu64 "\n", lo, hi, h.buckets[b]);
		}
	}
}

/* labels 'op="lookup",kind="uid"' as JSON members '"op":"lookup","kind":"uid"'.  Label
 * values are ours (no quotes or backslashes inside), so a plain rewrite is enough. */
static void json_labels(FILE *f, const char *labels)
{
	const char *p = labels;

	fputs("\"labels\":{", f);
	while (p && *p) {
		const char *eq = strchr(p, '=');
		const char *end;

		if (!eq || eq[1] != '"')
			break;
		end = strchr(eq + 2, '"');
		if (!end)
			break;
		fprintf(f, "%s\"%.*s\":\"%.*s\"", p == labels ? "" : ",", (int)(eq - p), p,
			(int)(end - eq - 2), eq + 2);
		p = end + 1;
		if (*p == ',')
			p++;
	}
	fputs("},", f);
}

static void print_json(FILE *f, const char *prefix, const struct stats_entry *e, size_t n)
{
	fprintf(f, "{\"prefix\":\"%s\",\"metrics\":[", prefix ? prefix : "");
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "%s{\"name\":\"%s\",", i ? "," : "", e[i].name);
		json_labels(f, e[i].labels);
		if (e[i].type != STATS_HISTOGRAM) {
			fprintf(f, "\"type\":\"%s\",\"value\":%" PRIu64 "}",
				e[i].type == STATS_COUNTER ? "counter" : "gauge", e[i].value);
			continue;
		}
		struct stats_hist h;
		unsigned last = 0;

		stats_hist_snapshot(e[i].hist, &h);
		for (unsigned b = 0; b < STATS_HIST_BUCKETS; b++)
			if (h.buckets[b])
				last = b + 1;
		fprintf(f,
			"\"type\":\"histogram\",\"count\":%" PRIu64 ",\"sum_ns\":%" PRIu64
			",\"p50_ns\":%" PRIu64 ",\"p99_ns\":%" PRIu64 ",\"buckets\":[",
			h.count, h.sum, stats_hist_quantile(&h, 0.5), stats_hist_quantile(&h, 0.99));
		for (unsigned b = 0; b < last; b++)
			fprintf(f, "%s%" PRIu64, b ? "," : "", h.buckets[b]);
		fputs("]}", f);
	}
	fputs("]}\n", f);
}

static void print_prometheus(FILE *f, const char *prefix, const struct stats_entry *e, size_t n)
{
	const char *px = prefix ? prefix : "";

	for (size_t i = 0; i < n; i++) {
		bool first = i == 0 || !streq(e[i - 1].name, e[i].name);
		const char *lb = e[i].labels ? e[i].labels : "";
		const char *sep = *lb ? "," : "";

		if (e[i].type != STATS_HISTOGRAM) {
			if (first) {
				if (e[i].help)
					fprintf(f, "# HELP %s%s %s\n", px, e[i].name, e[i].help);
				fprintf(f, "# TYPE %s%s %s\n", px, e[i].name,
					e[i].type == STATS_COUNTER ? "counter" : "gauge");
			}
			fprintf(f, "%s%s%s%s%s %" PRIu64 "\n", px, e[i].name, *lb ? "{" : "", lb,
				*lb ? "}" : "", e[i].value);
			continue;
		}
		struct stats_hist h;
		uint64_t cum = 0;
		unsigned last = 0;

		stats_hist_snapshot(e[i].hist, &h);
		if (first) {
			if (e[i].help)
				fprintf(f, "# HELP %s%s_seconds %s\n", px, e[i].name, e[i].help);
			fprintf(f, "# TYPE %s%s_seconds histogram\n", px, e[i].name);
		}
		for (unsigned b = 0; b < STATS_HIST_BUCKETS - 1; b++)
			if (h.buckets[b])
				last = b + 1;
		for (unsigned b = 0; b < last; b++) {
			cum += h.buckets[b];
			fprintf(f, "%s%s_seconds_bucket{%s%sle=\"%.9g\"} %" PRIu64 "\n", px,
				e[i].name, lb, sep, (double)bucket_upper(b) / 1e9, cum);
		}
		fprintf(f, "%s%s_seconds_bucket{%s%sle=\"+Inf\"} %" PRIu64 "\n", px, e[i].name, lb,
			sep, h.count);
		fprintf(f, "%s%s_seconds_sum%s%s%s %.9f\n", px, e[i].name, *lb ? "{" : "", lb,
			*lb ? "}" : "", (double)h.sum / 1e9);
		fprintf(f, "%s%s_seconds_count%s%s%s %" PRIu64 "\n", px, e[i].name, *lb ? "{" : "",
			lb, *lb ? "}" : "", h.count);
	}
}

int stats_print(FILE *f, enum stats_format fmt, const char *prefix,
		const struct stats_entry *entries, size_t n)
{
	switch (fmt) {
	case STATS_TEXT:
		print_text(f, entries, n);
		break;
	case STATS_JSON:
		print_json(f, prefix, entries, n);
		break;
	case STATS_PROMETHEUS:
		print_prometheus(f, prefix, entries, n);
		break;
	default:
		return -EINVAL;
	}
	return fflush(f) == 0 && !ferror(f) ? 0 : -EIO;
}

int stats_print_metrics(FILE *f, enum stats_format fmt, const char *prefix,
			const struct stats_metric *metrics, size_t n)
{
	_cleanup_free_ struct stats_entry *e = calloc(n ? n : 1, sizeof(*e));
	_cleanup_free_ struct stats_hist *h = calloc(n ? n : 1, sizeof(*h));

	if (!e || !h)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const stats_metric *m = &metrics[i];

		e[i].name = m->name;
		e[i].labels = m->labels && *m->labels ? m->labels : NULL;
		e[i].value = m->value;
		switch (m->type) {
		case STATS_METRIC_COUNTER:
			e[i].type = STATS_COUNTER;
			break;
		case STATS_METRIC_GAUGE:
			e[i].type = STATS_GAUGE;
			break;
		default:
			e[i].type = STATS_HISTOGRAM;
			h[i].count = m->value;
			h[i].sum = m->sum_ns;
			for (u_int b = 0; b < m->buckets.buckets_len && b < STATS_HIST_BUCKETS; b++)
				h[i].buckets[b] = m->buckets.buckets_val[b];
			e[i].hist = &h[i];
		}
	}
	return stats_print(f, fmt, prefix, e, n);
}

int stats_client_print(struct rpc_client *c, uint32_t proc, FILE *f, enum stats_format fmt,
		       const char *prefix)
{
	stats_res res = {};
	int r;

	r = rpc_client_call(c, proc, NULL, NULL, (xdrproc_t)xdr_stats_res, &res);
	if (r < 0)
		return r;
	if (res.status < 0)
		r = res.status;
	else
		r = stats_print_metrics(f, fmt, prefix, res.metrics.metrics_val,
					res.metrics.metrics_len);
	xdr_free((xdrproc_t)xdr_stats_res, (char *)&res);
	return r;
}
