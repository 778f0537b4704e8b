/* upcall-latency: end-to-end kernel upcall latency, measured with real request_key(2)
 * calls on user-type keys routed by /etc/request-key.d to two helpers, alternated in one
 * run so both see the same machine: callout info A goes to the helper under test, B to
 * the reference (the trivial /bin/keyctl instantiate).  Each key is unlinked after
 * use so every request is a fresh upcall.  Run inside its own session keyring. */
#include <inttypes.h>
#include <keyutils.h>

#include "macros.h"
#include "time-util.h"

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static void report(const char *name, int64_t *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_i64);
	printf("%-10s n=%zu median_us=%" PRId64 " p10_us=%" PRId64 " p90_us=%" PRId64 "\n", name,
	       n, v[n / 2], v[n / 10], v[n * 9 / 10]);
}

int main(int argc, char *argv[])
{
	const char *callout_a, *callout_b, *prefix, *suffix;
	int64_t *ta, *tb;
	unsigned n, keys, fails = 0;

	if (argc != 7) {
		fprintf(stderr, "Usage: upcall-latency CALLOUT_A CALLOUT_B PREFIX SUFFIX KEYS N\n"
				"  descriptions are PREFIX<i>SUFFIX, i in 0..KEYS-1, e.g.\n"
				"  uid:user @example.test\n");
		return 2;
	}
	callout_a = argv[1];
	callout_b = argv[2];
	prefix = argv[3];
	suffix = argv[4];
	keys = atoi(argv[5]);
	n = atoi(argv[6]);
	if (!keys || !n)
		return 2;
	ta = calloc(n, sizeof(*ta));
	tb = calloc(n, sizeof(*tb));
	if (!ta || !tb)
		return 1;
	for (unsigned i = 0; i < n; i++) {
		for (int side = 0; side < 2; side++) {
			/* alternate which goes first, so neither always follows the other */
			bool a = (side == 0) == (i % 2 == 0);
			char desc[256];
			int64_t t0;
			key_serial_t k;

			snprintf(desc, sizeof(desc), "%s%u%s", prefix, i % keys, suffix);
			t0 = mono_usec();
			k = request_key("user", desc, a ? callout_a : callout_b,
					KEY_SPEC_SESSION_KEYRING);
			t0 = mono_usec() - t0;
			if (k < 0) {
				fprintf(stderr, "upcall-latency: %s (%s): %m\n", desc, a ? "A" : "B");
				fails++;
				continue;
			}
			(a ? ta : tb)[i] = t0;
			/* unlink (not invalidate: an invalidated key lingers until the
			 * garbage collector runs and a new request would find it revoked) */
			keyctl_unlink(k, KEY_SPEC_SESSION_KEYRING);
		}
	}
	if (fails)
		return 1;
	report("helper", ta, n);
	report("reference", tb, n);
	qsort(ta, n, sizeof(*ta), cmp_i64);
	qsort(tb, n, sizeof(*tb), cmp_i64);
	printf("ratio_median=%.3f\n", (double)ta[n / 2] / (double)tb[n / 2]);
	free(ta);
	free(tb);
	return 0;
}
