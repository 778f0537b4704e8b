/* upcall-latency: end-to-end kernel upcall latency, measured with real request_key(2)
 * calls on user-type keys routed by /etc/request-key.d to several helpers by their callout
 * info, interleaved in one run (the order rotates every round) so all see the same
 * machine; the first is the reference (the trivial /bin/keyctl instantiate).  Each key is
 * unlinked after use so every request is a fresh upcall.  Run inside its own session. */
#include <inttypes.h>
#include <keyutils.h>

#include "macros.h"
#include "time-util.h"

#define MAX_HELPERS 8

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* Sorts v; prints its quantiles; returns the median. */
static int64_t report(const char *name, int64_t *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_i64);
	printf("%-15s n=%zu median_us=%" PRId64 " p10_us=%" PRId64 " p90_us=%" PRId64
	       " p99_us=%" PRId64 "\n",
	       name, n, v[n / 2], v[n / 10], v[n * 9 / 10], v[n * 99 / 100]);
	return v[n / 2];
}

static void usage(FILE *f)
{
	fprintf(f, "Usage: upcall-latency PREFIX SUFFIX KEYS N NAME=CALLOUT NAME=CALLOUT...\n"
		   "  N requests per helper on descriptions PREFIX<i>SUFFIX (i in 0..KEYS-1),\n"
		   "  e.g. uid:user @example.test; each CALLOUT is the callout info a\n"
		   "  request-key.d line routes to one helper, the first one being the\n"
		   "  reference: prints each helper's quantiles and ratio_median=<helper>/\n"
		   "  <reference> per helper.\n");
}

int main(int argc, char *argv[])
{
	const char *prefix, *suffix, *name[MAX_HELPERS], *callout[MAX_HELPERS];
	int64_t *t[MAX_HELPERS] = {}, median[MAX_HELPERS];
	unsigned n, keys, fails = 0, m;
	int rc = 1;

	if (argc > 1 && (streq(argv[1], "--help") || streq(argv[1], "-h"))) {
		usage(stdout);
		return 0;
	}
	if (argc < 7 || argc - 5 > MAX_HELPERS) {
		usage(stderr);
		return 2;
	}
	prefix = argv[1];
	suffix = argv[2];
	keys = (unsigned)atoi(argv[3]);
	n = (unsigned)atoi(argv[4]);
	m = (unsigned)(argc - 5);
	if (!keys || !n) {
		usage(stderr);
		return 2;
	}
	for (unsigned h = 0; h < m; h++) {
		char *eq = strchr(argv[5 + h], '=');

		if (!eq || eq == argv[5 + h] || !eq[1]) {
			fprintf(stderr, "upcall-latency: '%s' is not NAME=CALLOUT\n", argv[5 + h]);
			return 2;
		}
		*eq = 0;
		name[h] = argv[5 + h];
		callout[h] = eq + 1;
		t[h] = calloc(n, sizeof(int64_t));
		if (!t[h])
			goto out;
	}
	for (unsigned i = 0; i < n; i++) {
		for (unsigned s = 0; s < m; s++) {
			/* rotate the order, so none always follows another */
			unsigned h = (i + s) % m;
			char desc[256];
			int64_t t0;
			key_serial_t k;

			snprintf(desc, sizeof(desc), "%s%u%s", prefix, i % keys, suffix);
			t0 = mono_usec();
			k = request_key("user", desc, callout[h], KEY_SPEC_SESSION_KEYRING);
			t0 = mono_usec() - t0;
			if (k < 0) {
				fprintf(stderr, "upcall-latency: %s (%s): %m\n", desc, name[h]);
				fails++;
				continue;
			}
			t[h][i] = t0;
			/* unlink (not invalidate: an invalidated key lingers until the
			 * garbage collector runs and a new request would find it revoked) */
			keyctl_unlink(k, KEY_SPEC_SESSION_KEYRING);
		}
	}
	if (fails)
		goto out;
	for (unsigned h = 0; h < m; h++)
		median[h] = report(name[h], t[h], n);
	for (unsigned h = 1; h < m; h++)
		printf("ratio_median %s/%s=%.3f\n", name[h], name[0],
		       (double)median[h] / (double)median[0]);
	rc = 0;
out:
	for (unsigned h = 0; h < m; h++)
		free(t[h]);
	return rc;
}
