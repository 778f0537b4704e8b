/* Counters and log2 latency histograms, updated lock-free from any thread, and one
 * formatter that prints a set of them as text, JSON or Prometheus exposition format, so
 * every daemon and tool reports statistics the same way.  Internal; never installed. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* Bucket b counts values v (nanoseconds) with 2^b <= v < 2^(b+1); bucket 0 also takes 0.
 * The last bucket takes everything larger (2^39 ns is about 9 minutes). */
#define STATS_HIST_BUCKETS 40

struct stats_hist {
	uint64_t count;
	uint64_t sum; /* nanoseconds */
	uint64_t buckets[STATS_HIST_BUCKETS];
};

/* The bucket a value falls in. */
unsigned stats_hist_bucket(uint64_t value);
/* Record one value (atomic; safe from several threads). */
void stats_hist_add(struct stats_hist *h, uint64_t value);
/* Atomic counter increment. */
static inline void stats_inc(uint64_t *counter)
{
	__atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
}
/* A consistent-enough copy (each field read atomically) for reporting. */
void stats_hist_snapshot(const struct stats_hist *h, struct stats_hist *ret);
/* The upper bound (exclusive, ns) of the bucket holding the q-quantile (0 < q <= 1);
 * 0 when empty.  Accurate to a factor of two by construction. */
uint64_t stats_hist_quantile(const struct stats_hist *h, double q);

enum stats_type { STATS_COUNTER, STATS_GAUGE, STATS_HISTOGRAM };

/* One line of a report.  name: a metric name ("requests_total"); labels: Prometheus
 * label pairs without braces ('op="lookup"') or NULL. */
struct stats_entry {
	const char *name;
	const char *labels;
	const char *help;
	enum stats_type type;
	uint64_t value;                /* counters and gauges */
	const struct stats_hist *hist; /* histograms (values in ns) */
};

enum stats_format { STATS_TEXT, STATS_JSON, STATS_PROMETHEUS };

/* Print entries.  prefix names the metric family for Prometheus ("nfskeys_idmapd_";
 * histograms are exported in seconds as <prefix><name>_seconds) and is the JSON object's
 * context only.  Text shows counters and per histogram count, mean, p50, p99 and the
 * non-empty buckets.  Returns 0 or -EIO when writing failed. */
int stats_print(FILE *f, enum stats_format fmt, const char *prefix,
		const struct stats_entry *entries, size_t n);
/* Print a daemon's statistics answer (proto/metrics.x: struct stats_metric, the wire
 * form of the entries above) as stats_print() does.  Returns 0, -ENOMEM or -EIO. */
struct stats_metric;
int stats_print_metrics(FILE *f, enum stats_format fmt, const char *prefix,
			const struct stats_metric *metrics, size_t n);
/* Call procedure proc (void arguments, a stats_res answer) on client c and print the
 * answer with stats_print_metrics().  Returns 0, the transport error, the daemon's
 * negative status, -ENOMEM or -EIO. */
struct rpc_client;
int stats_client_print(struct rpc_client *c, uint32_t proc, FILE *f, enum stats_format fmt,
		       const char *prefix);
/* Parse "text", "json" or "prometheus"; -EINVAL otherwise. */
int stats_format_from_string(const char *s, enum stats_format *ret);
