/* Counters and log2 histograms: bucket boundaries, quantiles, concurrent updates, the
 * three output formats (text, JSON, Prometheus with cumulative buckets), and the daemons'
 * statistics answer (proto/metrics.x): its XDR bytes and its printing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <pthread.h>

#include "macros.h"
#include "stats.h"
/* after macros.h: <rpc/rpc.h> redefines MIN/MAX in its system header */
#include "metrics.h"

static void test_buckets(void **state)
{
	assert_int_equal(stats_hist_bucket(0), 0);
	assert_int_equal(stats_hist_bucket(1), 0);
	assert_int_equal(stats_hist_bucket(2), 1);
	assert_int_equal(stats_hist_bucket(3), 1);
	assert_int_equal(stats_hist_bucket(4), 2);
	assert_int_equal(stats_hist_bucket(1023), 9);
	assert_int_equal(stats_hist_bucket(1024), 10);
	assert_int_equal(stats_hist_bucket(1025), 10);
	assert_int_equal(stats_hist_bucket((1ULL << 39) - 1), 38);
	assert_int_equal(stats_hist_bucket(1ULL << 39), 39);
	assert_int_equal(stats_hist_bucket(UINT64_MAX), STATS_HIST_BUCKETS - 1);
}

static void test_quantile(void **state)
{
	struct stats_hist h = {};

	assert_int_equal(stats_hist_quantile(&h, 0.5), 0);
	for (int i = 0; i < 99; i++)
		stats_hist_add(&h, 1500); /* bucket 10: [1024, 2048) */
	stats_hist_add(&h, 1000000); /* bucket 19: [524288, 1048576) */
	assert_int_equal(h.count, 100);
	assert_int_equal(h.sum, 99 * 1500 + 1000000);
	assert_int_equal(h.buckets[10], 99);
	assert_int_equal(h.buckets[19], 1);
	assert_int_equal(stats_hist_quantile(&h, 0.5), 2048);
	assert_int_equal(stats_hist_quantile(&h, 0.99), 2048);
	assert_int_equal(stats_hist_quantile(&h, 1.0), 1048576);
}

static struct stats_hist shared;
static uint64_t shared_counter;

static void *adder(void *arg)
{
	for (int i = 0; i < 100000; i++) {
		stats_hist_add(&shared, i & 1023);
		stats_inc(&shared_counter);
	}
	return NULL;
}

static void test_concurrent(void **state)
{
	pthread_t t[4];
	struct stats_hist snap;

	for (int i = 0; i < 4; i++)
		assert_int_equal(pthread_create(&t[i], NULL, adder, NULL), 0);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	stats_hist_snapshot(&shared, &snap);
	assert_int_equal(snap.count, 400000);
	assert_int_equal(shared_counter, 400000);
}

/* What stats_print() prints for entries e, or stats_print_metrics() for metrics m. */
static char *render_any(enum stats_format fmt, const struct stats_entry *e,
			const stats_metric *m, size_t n)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(e ? stats_print(f, fmt, "nfskeys_test_", e, n)
			   : stats_print_metrics(f, fmt, "nfskeys_test_", m, n), 0);
	fclose(f);
	return buf;
}

static char *render(enum stats_format fmt, const struct stats_entry *e, size_t n)
{
	return render_any(fmt, e, NULL, n);
}

static char *render_metrics(enum stats_format fmt, const stats_metric *m, size_t n)
{
	return render_any(fmt, NULL, m, n);
}

static void test_formats(void **state)
{
	struct stats_hist h = {};
	enum stats_format fmt;
	char *out;

	stats_hist_add(&h, 3000);  /* bucket 11: le 4.096e-06 */
	stats_hist_add(&h, 3000);
	stats_hist_add(&h, 10000); /* bucket 13: le 1.6384e-05 */
	const struct stats_entry e[] = {
		{ "requests_total", "op=\"lookup\"", "Requests", STATS_COUNTER, 7, NULL },
		{ "requests_total", "op=\"ping\"", "Requests", STATS_COUNTER, 2, NULL },
		{ "cache_entries", NULL, "Entries", STATS_GAUGE, 5, NULL },
		{ "latency", "op=\"lookup\"", "Latency", STATS_HISTOGRAM, 0, &h },
	};

	out = render(STATS_PROMETHEUS, e, ARRAY_SIZE(e));
	assert_non_null(strstr(out, "# TYPE nfskeys_test_requests_total counter\n"
				    "nfskeys_test_requests_total{op=\"lookup\"} 7\n"
				    "nfskeys_test_requests_total{op=\"ping\"} 2\n"));
	assert_non_null(strstr(out, "# TYPE nfskeys_test_cache_entries gauge\n"
				    "nfskeys_test_cache_entries 5\n"));
	assert_non_null(strstr(out, "nfskeys_test_latency_seconds_bucket{op=\"lookup\",le=\"4.096e-06\"} 2\n"));
	/* cumulative: the empty bucket between still counts what is below */
	assert_non_null(strstr(out, "nfskeys_test_latency_seconds_bucket{op=\"lookup\",le=\"8.192e-06\"} 2\n"));
	assert_non_null(strstr(out, "nfskeys_test_latency_seconds_bucket{op=\"lookup\",le=\"1.6384e-05\"} 3\n"));
	assert_non_null(strstr(out, "nfskeys_test_latency_seconds_bucket{op=\"lookup\",le=\"+Inf\"} 3\n"));
	assert_non_null(strstr(out, "nfskeys_test_latency_seconds_sum{op=\"lookup\"} 0.000016000\n"));
	assert_non_null(strstr(out, "nfskeys_test_latency_seconds_count{op=\"lookup\"} 3\n"));
	assert_null(strstr(out, "TYPE nfskeys_test_requests_total counter\nnfskeys_test_requests_total{op=\"lookup\"} 7\n# TYPE"));
	free(out);

	out = render(STATS_JSON, e, ARRAY_SIZE(e));
	assert_non_null(strstr(out, "{\"name\":\"requests_total\",\"labels\":{\"op\":\"lookup\"},"
				    "\"type\":\"counter\",\"value\":7}"));
	assert_non_null(strstr(out, "{\"name\":\"cache_entries\",\"labels\":{},\"type\":\"gauge\","
				    "\"value\":5}"));
	assert_non_null(strstr(out, "\"type\":\"histogram\",\"count\":3,\"sum_ns\":16000,"
				    "\"p50_ns\":4096,\"p99_ns\":16384,"
				    "\"buckets\":[0,0,0,0,0,0,0,0,0,0,0,2,0,1]}"));
	free(out);

	out = render(STATS_TEXT, e, ARRAY_SIZE(e));
	assert_non_null(strstr(out, "requests_total{op=\"lookup\"}"));
	assert_non_null(strstr(out, "count 3 mean 5.3us p50 <4.1us p99 <16.4us"));
	assert_non_null(strstr(out, "[   2.0us,    4.1us) 2"));
	free(out);

	assert_int_equal(stats_format_from_string("json", &fmt), 0);
	assert_int_equal(fmt, STATS_JSON);
	assert_int_equal(stats_format_from_string("xml", &fmt), -EINVAL);
}

/* The answer as the daemons send it (idmapd trims trailing empty buckets, attrd sends
 * all 40) prints exactly as the entries it was made from, in every format. */
static void test_metrics_print(void **state)
{
	struct stats_hist h = {};
	uint64_t all[STATS_HIST_BUCKETS];

	stats_hist_add(&h, 3000);
	stats_hist_add(&h, 3000);
	stats_hist_add(&h, 10000);
	memcpy(all, h.buckets, sizeof(all));
	const struct stats_entry e[] = {
		{ "requests_total", "op=\"lookup\"", NULL, STATS_COUNTER, 7, NULL },
		{ "requests_total", "op=\"ping\"", NULL, STATS_COUNTER, 2, NULL },
		{ "cache_entries", NULL, NULL, STATS_GAUGE, 5, NULL },
		{ "latency", "op=\"lookup\"", NULL, STATS_HISTOGRAM, 0, &h },
	};
	stats_metric m[] = {
		{ "requests_total", "op=\"lookup\"", STATS_METRIC_COUNTER, 7, 0, { 0, NULL } },
		{ "requests_total", "op=\"ping\"", STATS_METRIC_COUNTER, 2, 0, { 0, NULL } },
		{ "cache_entries", "", STATS_METRIC_GAUGE, 5, 0, { 0, NULL } },
		{ "latency", "op=\"lookup\"", STATS_METRIC_HISTOGRAM, h.count, h.sum,
		  { STATS_HIST_BUCKETS, (u_quad_t *)all } },
	};
	static const enum stats_format fmts[] = { STATS_TEXT, STATS_JSON, STATS_PROMETHEUS };

	for (size_t i = 0; i < ARRAY_SIZE(fmts); i++) {
		_cleanup_free_ char *want = render(fmts[i], e, ARRAY_SIZE(e));
		_cleanup_free_ char *got = render_metrics(fmts[i], m, ARRAY_SIZE(m));

		assert_string_equal(got, want);
		/* trimmed after the last non-empty bucket (13): the same */
		free(got);
		m[3].buckets.buckets_len = 14;
		got = render_metrics(fmts[i], m, ARRAY_SIZE(m));
		assert_string_equal(got, want);
		m[3].buckets.buckets_len = STATS_HIST_BUCKETS;
	}
	/* no buckets at all: an empty histogram, no crash */
	m[3].buckets.buckets_len = 0;
	_cleanup_free_ char *empty = render_metrics(STATS_JSON, m + 3, 1);
	assert_non_null(strstr(empty, "\"buckets\":[]"));
}

/* The XDR bytes of a stats_res: the layout idmap.x and attr.x each declared before the
 * type was shared (status, metrics<>: name, labels, type, value, sum_ns, buckets<>). */
static void test_metrics_wire(void **state)
{
	static const uint8_t want[] = {
		0, 0, 0, 0,                         /* status */
		0, 0, 0, 1,                         /* one metric */
		0, 0, 0, 2, 'a', 'b', 0, 0,         /* name */
		0, 0, 0, 5, 'k', '=', '"', 'v', '"', 0, 0, 0, /* labels */
		0, 0, 0, 2,                         /* type: histogram */
		0, 0, 0, 0, 0, 0, 0, 3,             /* value (count) */
		0, 0, 0, 1, 0, 0, 0, 0,             /* sum_ns */
		0, 0, 0, 2,                         /* two buckets */
		0, 0, 0, 0, 0, 0, 0, 1,
		0, 0, 0, 0, 0, 0, 0, 2,
	};
	u_quad_t buckets[] = { 1, 2 };
	stats_metric m = { "ab", "k=\"v\"", STATS_METRIC_HISTOGRAM, 3, 1ULL << 32,
			   { 2, buckets } };
	stats_res res = { 0, { 1, &m } }, back = {};
	uint8_t buf[256];
	XDR x;

	xdrmem_create(&x, (char *)buf, sizeof(buf), XDR_ENCODE);
	assert_true(xdr_stats_res(&x, &res));
	assert_int_equal(xdr_getpos(&x), sizeof(want));
	assert_memory_equal(buf, want, sizeof(want));
	xdr_destroy(&x);

	xdrmem_create(&x, (char *)buf, sizeof(want), XDR_DECODE);
	assert_true(xdr_stats_res(&x, &back));
	assert_int_equal(back.metrics.metrics_len, 1);
	assert_string_equal(back.metrics.metrics_val[0].labels, "k=\"v\"");
	assert_int_equal(back.metrics.metrics_val[0].buckets.buckets_val[1], 2);
	xdr_destroy(&x);
	xdr_free((xdrproc_t)xdr_stats_res, (char *)&back);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_buckets),
		cmocka_unit_test(test_quantile),
		cmocka_unit_test(test_concurrent),
		cmocka_unit_test(test_formats),
		cmocka_unit_test(test_metrics_print),
		cmocka_unit_test(test_metrics_wire),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
