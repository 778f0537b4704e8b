/* The one answer cache (libnfskeys/idmap-cache.c) as nfskeys-idmapd uses it, through the
 * *_at calls of nfskeys-idmap-daemon.h: lookups, LRU order and the size bound, pinned
 * entries that are never evicted, flushes, the seeded hash, and what serve-stale and
 * refresh-ahead rely on (µs expiry on the caller's clock, expired positive answers kept up
 * to a limit, fetched time and hits). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "nfskeys-idmap-daemon.h"

#define FAR ((int64_t)1 << 60) /* an expiry never reached */

static void put(struct idmap_cache *c, uint32_t kind, const char *key, int64_t now,
		int64_t expires)
{
	struct nfskeys_idmap_answer a = { .kind = NFSKEYS_IDMAP_NAME_TO_UID, .id = 1000 };

	snprintf(a.backend, sizeof(a.backend), "static");
	assert_int_equal(idmap_cache_store(c, kind, key, &a, 0, now, expires), 0);
}

static void add(struct idmap_cache *c, uint32_t kind, const char *key)
{
	put(c, kind, key, 0, FAR);
}

static bool has(struct idmap_cache *c, uint32_t kind, const char *key)
{
	struct idmap_cache_view v;
	struct nfskeys_idmap_answer a;

	return idmap_cache_peek(c, kind, key, 1, 0, &v, &a) == 1;
}

static unsigned count(struct idmap_cache *c)
{
	struct nfskeys_idmap_cache_stats st;

	idmap_cache_get_stats(c, &st);
	return st.entries;
}

static uint64_t evictions(struct idmap_cache *c)
{
	struct nfskeys_idmap_cache_stats st;

	idmap_cache_get_stats(c, &st);
	return st.evictions;
}

static void test_find(void **state)
{
	struct idmap_cache *c = idmap_cache_new(100000);
	struct idmap_cache_view v;
	struct nfskeys_idmap_answer a;
	char key[32];

	(void)state;
	put(c, 1, "alice@x", 0, FAR);
	assert_int_equal(idmap_cache_store(c, 2, "alice@x", NULL, -ENOENT, 0, FAR), 0);
	/* same key, other kind: another entry */
	assert_int_equal(idmap_cache_peek(c, 1, "alice@x", 1, 0, &v, &a), 1);
	assert_int_equal(v.status, 0);
	assert_int_equal(a.id, 1000);
	assert_string_equal(a.backend, "static");
	assert_int_equal(idmap_cache_peek(c, 2, "alice@x", 1, 0, &v, &a), 1);
	assert_int_equal(v.status, -ENOENT);
	assert_false(has(c, 1, "bob@x"));
	/* past the initial bucket count: the table grows and still finds everything */
	for (int i = 0; i < 5000; i++) {
		snprintf(key, sizeof(key), "u%d", i);
		add(c, 1, key);
	}
	for (int i = 0; i < 5000; i++) {
		snprintf(key, sizeof(key), "u%d", i);
		assert_true(has(c, 1, key));
	}
	assert_int_equal(count(c), 5002);
	assert_int_equal(evictions(c), 0);
	idmap_cache_free(c);
}

static void test_lru(void **state)
{
	struct idmap_cache *c = idmap_cache_new(3);
	struct nfskeys_idmap_cache_stats st;

	(void)state;
	add(c, 1, "a");
	add(c, 1, "b");
	add(c, 1, "c");
	assert_true(has(c, 1, "a")); /* a is now the most recent */
	add(c, 1, "d");              /* evicts b, the least recent */
	assert_false(has(c, 1, "b"));
	assert_true(has(c, 1, "a"));
	assert_true(has(c, 1, "c"));
	assert_true(has(c, 1, "d"));
	assert_int_equal(count(c), 3);
	assert_int_equal(evictions(c), 1);
	/* lowering the bound evicts at once */
	idmap_cache_set_capacity(c, 1);
	idmap_cache_get_stats(c, &st);
	assert_int_equal(st.entries, 1);
	assert_int_equal(st.capacity, 1);
	idmap_cache_free(c);
}

/* Entries a fetch depends on (pinned) are never evicted: with nothing else to evict the
 * cache goes over its bound rather than drop them, and never evicts the entry just
 * stored.  A flush drops them all the same (the daemon orphans their fetches). */
static void test_pinned_over_bound(void **state)
{
	struct idmap_cache *c = idmap_cache_new(2);

	(void)state;
	add(c, 1, "a");
	add(c, 1, "b");
	assert_int_equal(idmap_cache_pin(c, 1, "a"), 0);
	assert_int_equal(idmap_cache_pin(c, 1, "b"), 0);
	assert_int_equal(idmap_cache_pin(c, 1, "nothing"), -ENOENT);
	add(c, 1, "n");
	assert_int_equal(count(c), 3);
	assert_true(has(c, 1, "n"));
	assert_true(has(c, 1, "a"));
	assert_true(has(c, 1, "b"));
	/* lowering the bound cannot evict them either */
	idmap_cache_set_capacity(c, 1);
	assert_int_equal(count(c), 2);
	assert_false(has(c, 1, "n"));
	assert_true(has(c, 1, "a"));
	/* flush drops pinned entries too */
	assert_int_equal(idmap_cache_clear(c), 2);
	assert_int_equal(count(c), 0);
	assert_false(has(c, 1, "a"));
	assert_int_equal(idmap_cache_unpin(c, 1, "a"), -ENOENT);
	/* drop of an idle entry frees it (ASan checks) */
	add(c, 1, "x");
	assert_int_equal(idmap_cache_drop(c, 1, "x"), 0);
	assert_false(has(c, 1, "x"));
	assert_int_equal(idmap_cache_drop(c, 1, "x"), -ENOENT);
	idmap_cache_free(c);
}

/* doc/security/FINDINGS.md D1: an entry being answered (pinned) survives any stores past the
 * bound, and eviction never scans it (pinned entries are off the LRU list); pins nest,
 * and a store over a pinned entry keeps its pins. */
static void test_pin(void **state)
{
	struct idmap_cache *c = idmap_cache_new(2);
	char key[32];

	(void)state;
	add(c, 1, "a");
	assert_int_equal(idmap_cache_pin(c, 1, "a"), 0);
	for (int i = 0; i < 1000; i++) {
		snprintf(key, sizeof(key), "k%d", i);
		add(c, 1, key);
		assert_true(has(c, 1, "a"));
	}
	/* the bound holds (a counts in it): a and the newest key */
	assert_int_equal(count(c), 2);
	assert_int_equal(evictions(c), 999);
	/* a refetch's result replaces a pinned entry: still pinned */
	add(c, 1, "a");
	add(c, 1, "y");
	add(c, 1, "z");
	assert_true(has(c, 1, "a"));
	/* nested pins; the last unpin puts it back as most recent, then the bound applies */
	assert_int_equal(idmap_cache_pin(c, 1, "a"), 0);
	assert_int_equal(idmap_cache_unpin(c, 1, "a"), 0);
	add(c, 1, "w");
	assert_true(has(c, 1, "a"));
	assert_int_equal(idmap_cache_unpin(c, 1, "a"), 0);
	assert_int_equal(count(c), 2);
	assert_true(has(c, 1, "a"));
	add(c, 1, "v");
	add(c, 1, "u");
	assert_false(has(c, 1, "a")); /* unpinned: evicted as any other */
	idmap_cache_free(c);
}

/* The hash is seeded at random per cache: a local user who knows the code still cannot
 * pick names that all land in one probe run of the daemon's table.  And a drop in the
 * middle of many entries leaves every other one findable (the table's backward shift). */
static void test_seeded(void **state)
{
	struct idmap_cache *c1 = idmap_cache_new(100000), *c2 = idmap_cache_new(100000);
	char key[32];
	int same = 0;

	(void)state;
	for (int i = 0; i < 64; i++) {
		snprintf(key, sizeof(key), "user%d@example.org", i);
		add(c1, 1, key);
		add(c2, 1, key);
		same += idmap_cache_key_hash(c1, 1, key) == idmap_cache_key_hash(c2, 1, key);
	}
	assert_int_equal(same, 0);
	for (int i = 0; i < 64; i += 2) {
		snprintf(key, sizeof(key), "user%d@example.org", i);
		assert_int_equal(idmap_cache_drop(c1, 1, key), 0);
	}
	assert_int_equal(count(c1), 32);
	for (int i = 0; i < 64; i++) {
		snprintf(key, sizeof(key), "user%d@example.org", i);
		assert_int_equal(has(c1, 1, key), i % 2);
	}
	idmap_cache_free(c1);
	idmap_cache_free(c2);
}

/* Expiry is on the caller's clock to the unit (the daemon's: µs): fresh until the exact
 * instant, not rounded to seconds. */
static void test_us_expiry(void **state)
{
	struct idmap_cache *c = idmap_cache_new(16);
	struct idmap_cache_view v;
	struct nfskeys_idmap_answer a;
	const int64_t t0 = 5000000, exp = t0 + 1000001; /* 1 s and 1 µs */

	(void)state;
	put(c, 1, "alice", t0, exp);
	assert_int_equal(idmap_cache_peek(c, 1, "alice", exp - 1, 0, &v, &a), 1);
	assert_int_equal(v.expires, exp);
	assert_int_equal(v.fetched, t0);
	assert_true(v.positive);
	assert_false(v.stale);
	/* one µs later it is expired: with no stale limit it goes */
	assert_int_equal(idmap_cache_peek(c, 1, "alice", exp, 0, &v, &a), 0);
	assert_int_equal(count(c), 0);
	/* a negative entry the same way */
	assert_int_equal(idmap_cache_store(c, 1, "nobody", NULL, -ENOENT, t0, t0 + 1), 0);
	assert_int_equal(idmap_cache_peek(c, 1, "nobody", t0, 0, &v, &a), 1);
	assert_int_equal(v.status, -ENOENT);
	assert_false(v.positive);
	assert_int_equal(idmap_cache_peek(c, 1, "nobody", t0 + 1, 0, &v, &a), 0);
	idmap_cache_free(c);
}

/* Serve-stale: an expired positive answer is kept (and given out, marked as what it is)
 * up to good_expires + the stale limit; past it, or when it was negative or nobody, it
 * goes.  Marking it stale moves its expiry, not the limit's base. */
static void test_stale_retention(void **state)
{
	struct idmap_cache *c = idmap_cache_new(16);
	struct idmap_cache_view v;
	struct nfskeys_idmap_answer a, nobody = { .kind = NFSKEYS_IDMAP_NAME_TO_UID, .id = 65534,
						  .flags = NFSKEYS_IDMAP_ANSWER_NOBODY };
	const int64_t lim = 1000;

	(void)state;
	put(c, 1, "alice", 0, 2000);
	assert_int_equal(idmap_cache_peek(c, 1, "alice", 2500, lim, &v, &a), 1);
	assert_int_equal(v.status, 0);
	assert_int_equal(a.id, 1000);
	assert_true(v.positive);
	assert_int_equal(v.good_expires, 2000);
	assert_int_equal(idmap_cache_peek(c, 1, "alice", 3000, lim, &v, &a), 1); /* the limit */
	/* refetch failing: served stale for a while; the base stays */
	assert_int_equal(idmap_cache_mark_stale(c, 1, "alice", 3500), 0);
	assert_int_equal(idmap_cache_peek(c, 1, "alice", 3100, lim, &v, &a), 1);
	assert_true(v.stale);
	assert_int_equal(v.expires, 3500);
	assert_int_equal(v.good_expires, 2000);
	assert_int_equal(a.id, 1000);
	/* past expiry and past the limit: gone */
	assert_int_equal(idmap_cache_peek(c, 1, "alice", 3501, lim, &v, &a), 0);
	assert_int_equal(count(c), 0);
	assert_int_equal(idmap_cache_mark_stale(c, 1, "alice", 9000), -ENOENT);

	/* nobody and negative answers are never kept past expiry */
	assert_int_equal(idmap_cache_store(c, 1, "nb", &nobody, 0, 0, 2000), 0);
	assert_int_equal(idmap_cache_store(c, 1, "neg", NULL, -ENOENT, 0, 2000), 0);
	assert_int_equal(idmap_cache_peek(c, 1, "nb", 1999, lim, &v, &a), 1);
	assert_false(v.positive);
	assert_int_equal(idmap_cache_peek(c, 1, "nb", 2001, lim, &v, &a), 0);
	assert_int_equal(idmap_cache_peek(c, 1, "neg", 2001, lim, &v, &a), 0);

	/* ... unless pinned (a refetch running): kept as it is until unpinned */
	assert_int_equal(idmap_cache_store(c, 1, "neg", NULL, -ENOENT, 0, 2000), 0);
	assert_int_equal(idmap_cache_pin(c, 1, "neg"), 0);
	assert_int_equal(idmap_cache_peek(c, 1, "neg", 9999, lim, &v, &a), 1);
	assert_int_equal(v.status, -ENOENT);
	assert_int_equal(idmap_cache_unpin(c, 1, "neg"), 0);
	assert_int_equal(idmap_cache_peek(c, 1, "neg", 9999, lim, &v, &a), 0);
	idmap_cache_free(c);
}

/* Refresh-ahead: hits count lookups answered while fresh, fetched is the store's time;
 * a new store starts both again.  read() only looks. */
static void test_refresh_facts(void **state)
{
	struct idmap_cache *c = idmap_cache_new(16);
	struct idmap_cache_view v;
	struct nfskeys_idmap_answer a;

	(void)state;
	put(c, 1, "alice", 100, 1100);
	for (int i = 0; i < 3; i++)
		assert_int_equal(idmap_cache_peek(c, 1, "alice", 500 + i, 0, &v, &a), 1);
	assert_int_equal(v.hits, 3);
	assert_int_equal(v.fetched, 100);
	assert_int_equal(idmap_cache_read(c, 1, "alice", &v, &a), 1);
	assert_int_equal(v.hits, 3);
	/* an expired lookup is no hit */
	assert_int_equal(idmap_cache_pin(c, 1, "alice"), 0);
	assert_int_equal(idmap_cache_peek(c, 1, "alice", 1100, 0, &v, &a), 1);
	assert_int_equal(v.hits, 3);
	put(c, 1, "alice", 1200, 2200);
	assert_int_equal(idmap_cache_read(c, 1, "alice", &v, &a), 1);
	assert_int_equal(v.hits, 0);
	assert_int_equal(v.fetched, 1200);
	assert_int_equal(v.expires, 2200);
	assert_int_equal(idmap_cache_read(c, 1, "other", &v, &a), 0);
	idmap_cache_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_find),
		cmocka_unit_test(test_lru),
		cmocka_unit_test(test_pinned_over_bound),
		cmocka_unit_test(test_pin),
		cmocka_unit_test(test_seeded),
		cmocka_unit_test(test_us_expiry),
		cmocka_unit_test(test_stale_retention),
		cmocka_unit_test(test_refresh_facts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
