/* nfskeys-idmapd's cache: lookups, LRU order and the size bound, busy entries that are
 * never evicted, and flushes that orphan busy entries instead of freeing them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "idmapd-cache.h"
#include "macros.h"

static struct idmapd_entry *add(struct idmapd_cache *c, uint32_t kind, const char *key)
{
	struct idmapd_entry *e = NULL;

	assert_int_equal(idmapd_cache_add(c, kind, key, &e), 0);
	assert_non_null(e);
	return e;
}

static void test_find(void **state)
{
	struct idmapd_cache *c;
	struct idmapd_entry *a, *b;
	char key[32];

	assert_int_equal(idmapd_cache_new(100000, &c), 0);
	a = add(c, 1, "alice@x");
	b = add(c, 2, "alice@x"); /* same key, other kind: another entry */
	assert_ptr_equal(idmapd_cache_find(c, 1, "alice@x"), a);
	assert_ptr_equal(idmapd_cache_find(c, 2, "alice@x"), b);
	assert_null(idmapd_cache_find(c, 1, "bob@x"));
	/* past the initial bucket count: the table grows and still finds everything */
	for (int i = 0; i < 5000; i++) {
		snprintf(key, sizeof(key), "u%d", i);
		add(c, 1, key);
	}
	for (int i = 0; i < 5000; i++) {
		snprintf(key, sizeof(key), "u%d", i);
		assert_non_null(idmapd_cache_find(c, 1, key));
	}
	assert_int_equal(idmapd_cache_count(c), 5002);
	assert_int_equal(idmapd_cache_evictions(c), 0);
	idmapd_cache_free(c);
}

static void test_lru(void **state)
{
	struct idmapd_cache *c;

	assert_int_equal(idmapd_cache_new(3, &c), 0);
	add(c, 1, "a");
	add(c, 1, "b");
	add(c, 1, "c");
	assert_non_null(idmapd_cache_find(c, 1, "a")); /* a is now the most recent */
	add(c, 1, "d");                                 /* evicts b, the least recent */
	assert_null(idmapd_cache_find(c, 1, "b"));
	assert_non_null(idmapd_cache_find(c, 1, "a"));
	assert_non_null(idmapd_cache_find(c, 1, "c"));
	assert_non_null(idmapd_cache_find(c, 1, "d"));
	assert_int_equal(idmapd_cache_count(c), 3);
	assert_int_equal(idmapd_cache_evictions(c), 1);
	/* lowering the bound evicts at once */
	idmapd_cache_set_capacity(c, 1);
	assert_int_equal(idmapd_cache_count(c), 1);
	assert_int_equal(idmapd_cache_capacity(c), 1);
	idmapd_cache_free(c);
}

static void test_busy(void **state)
{
	struct idmapd_cache *c;
	struct idmapd_entry *a, *b, *n;

	assert_int_equal(idmapd_cache_new(2, &c), 0);
	a = add(c, 1, "a");
	b = add(c, 1, "b");
	a->busy = b->busy = true;
	/* nothing idle to evict: the cache goes over its bound rather than drop a fetch,
	 * and never evicts the entry just added */
	n = add(c, 1, "n");
	assert_int_equal(idmapd_cache_count(c), 3);
	assert_ptr_equal(idmapd_cache_find(c, 1, "n"), n);
	/* flush orphans busy entries (still allocated for their worker) */
	assert_int_equal(idmapd_cache_flush(c), 3);
	assert_int_equal(idmapd_cache_count(c), 0);
	assert_true(a->orphan);
	assert_true(b->orphan);
	assert_null(idmapd_cache_find(c, 1, "a"));
	idmapd_entry_free(a);
	idmapd_entry_free(b);
	/* drop of an idle entry frees it */
	a = add(c, 1, "x");
	idmapd_cache_drop(c, a);
	assert_null(idmapd_cache_find(c, 1, "x"));
	idmapd_cache_free(c);
}

/* Issue 21: an entry being answered (pinned) survives any number of adds past the
 * bound; a flush only orphans it and its last unpin frees it.  Pinned entries are off
 * the LRU list, so eviction never scans them. */
static void test_pin(void **state)
{
	struct idmapd_cache *c;
	struct idmapd_entry *a, *b;
	char key[32];

	assert_int_equal(idmapd_cache_new(2, &c), 0);
	a = add(c, 1, "a");
	idmapd_cache_pin(c, a);
	for (int i = 0; i < 1000; i++) {
		snprintf(key, sizeof(key), "k%d", i);
		add(c, 1, key);
		assert_ptr_equal(idmapd_cache_find(c, 1, "a"), a);
	}
	/* the bound holds (a counts in it): a and the newest key */
	assert_int_equal(idmapd_cache_count(c), 2);
	assert_int_equal(idmapd_cache_evictions(c), 999);
	/* nested pins; unpin puts it back as most recent, then the bound applies again */
	idmapd_cache_pin(c, a);
	assert_false(idmapd_cache_unpin(c, a));
	assert_false(idmapd_cache_unpin(c, a));
	assert_int_equal(idmapd_cache_count(c), 2);
	assert_ptr_equal(idmapd_cache_find(c, 1, "a"), a);
	/* flushed while pinned: orphaned, freed by the last unpin (ASan checks) */
	b = add(c, 1, "b");
	idmapd_cache_pin(c, b);
	assert_int_equal(idmapd_cache_flush(c), 2);
	assert_true(b->orphan);
	assert_null(idmapd_cache_find(c, 1, "b"));
	assert_true(idmapd_cache_unpin(c, b));
	idmapd_cache_free(c);
}

/* The hash is seeded at random per cache: a local user who knows the code still cannot
 * pick names that all land in one probe run of the daemon's table.  And a drop in the
 * middle of many entries leaves every other one findable (the table's backward shift). */
static void test_seeded(void **state)
{
	struct idmapd_cache *c1, *c2;
	struct idmapd_entry *a1, *a2;
	char key[32];
	int same = 0;

	(void)state;
	assert_int_equal(idmapd_cache_new(100000, &c1), 0);
	assert_int_equal(idmapd_cache_new(100000, &c2), 0);
	for (int i = 0; i < 64; i++) {
		snprintf(key, sizeof(key), "user%d@example.org", i);
		a1 = add(c1, 1, key);
		a2 = add(c2, 1, key);
		same += a1->hash == a2->hash;
	}
	assert_int_equal(same, 0);
	for (int i = 0; i < 64; i += 2) {
		snprintf(key, sizeof(key), "user%d@example.org", i);
		idmapd_cache_drop(c1, idmapd_cache_find(c1, 1, key));
	}
	assert_int_equal(idmapd_cache_count(c1), 32);
	for (int i = 0; i < 64; i++) {
		snprintf(key, sizeof(key), "user%d@example.org", i);
		if (i % 2)
			assert_non_null(idmapd_cache_find(c1, 1, key));
		else
			assert_null(idmapd_cache_find(c1, 1, key));
	}
	idmapd_cache_free(c1);
	idmapd_cache_free(c2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_find),
		cmocka_unit_test(test_lru),
		cmocka_unit_test(test_busy),
		cmocka_unit_test(test_pin),
		cmocka_unit_test(test_seeded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
