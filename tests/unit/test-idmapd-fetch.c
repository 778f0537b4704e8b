/* nfskeys-idmapd's in-flight table (idmapd/idmapd-fetch.c): one fetch per (kind, key),
 * found until done, and flushes that orphan fetches (out of the table, still allocated for
 * their job, which frees them) instead of freeing them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <cmocka.h>

#include "idmapd-fetch.h"

static struct idmapd_fetch *add(struct idmapd_fetches *t, uint32_t kind, const char *key)
{
	struct idmapd_fetch *f = NULL;

	assert_int_equal(idmapd_fetch_add(t, kind, key, &f), 0);
	assert_non_null(f);
	return f;
}

static void test_find(void **state)
{
	struct idmapd_fetches *t;
	struct idmapd_fetch *a, *b;
	char key[32];

	(void)state;
	assert_int_equal(idmapd_fetches_new(&t), 0);
	a = add(t, 1, "alice@x");
	b = add(t, 2, "alice@x"); /* same key, other kind: another fetch */
	assert_ptr_equal(idmapd_fetch_find(t, 1, "alice@x"), a);
	assert_ptr_equal(idmapd_fetch_find(t, 2, "alice@x"), b);
	assert_null(idmapd_fetch_find(t, 1, "bob@x"));
	for (int i = 0; i < 5000; i++) {
		snprintf(key, sizeof(key), "u%d", i);
		add(t, 1, key);
	}
	for (int i = 0; i < 5000; i++) {
		snprintf(key, sizeof(key), "u%d", i);
		assert_non_null(idmapd_fetch_find(t, 1, key));
	}
	assert_int_equal(idmapd_fetch_count(t), 5002);
	/* done: gone from the table (ASan checks the free) */
	idmapd_fetch_done(t, a);
	assert_null(idmapd_fetch_find(t, 1, "alice@x"));
	assert_ptr_equal(idmapd_fetch_find(t, 2, "alice@x"), b);
	assert_int_equal(idmapd_fetch_count(t), 5001);
	for (int i = 0; i < 5000; i++) {
		snprintf(key, sizeof(key), "u%d", i);
		idmapd_fetch_done(t, idmapd_fetch_find(t, 1, key));
	}
	idmapd_fetch_done(t, b);
	assert_int_equal(idmapd_fetch_count(t), 0);
	idmapd_fetches_free(t);
}

/* A flush orphans fetches: out of the table (a new lookup of the key starts a new fetch)
 * but still allocated for the job that answers their callers, which frees them. */
static void test_orphans(void **state)
{
	struct idmapd_fetches *t;
	struct idmapd_fetch *a, *b, *c, *a2;
	size_t unpinned = 99;

	(void)state;
	assert_int_equal(idmapd_fetches_new(&t), 0);
	a = add(t, 1, "a");
	b = add(t, 1, "b");
	c = add(t, 1, "c");
	a->pinned = true; /* a refetch: its key had an answer */
	assert_int_equal(idmapd_fetch_orphan_all(t, &unpinned), 3);
	assert_int_equal(unpinned, 2);
	assert_int_equal(idmapd_fetch_count(t), 0);
	assert_true(a->orphan);
	assert_true(b->orphan);
	assert_true(c->orphan);
	assert_null(idmapd_fetch_find(t, 1, "a"));
	a2 = add(t, 1, "a");
	assert_ptr_equal(idmapd_fetch_find(t, 1, "a"), a2);
	/* an orphan's done leaves the new fetch of its key alone */
	idmapd_fetch_done(t, a);
	assert_ptr_equal(idmapd_fetch_find(t, 1, "a"), a2);
	idmapd_fetch_done(t, b);
	/* one key's flush */
	idmapd_fetch_orphan(t, a2);
	assert_true(a2->orphan);
	assert_null(idmapd_fetch_find(t, 1, "a"));
	idmapd_fetch_orphan(t, a2); /* twice: no harm */
	idmapd_fetch_done(t, a2);
	/* freeing the table orphans what is left; the job still frees it */
	a = add(t, 1, "x");
	idmapd_fetches_free(t);
	assert_true(a->orphan);
	idmapd_fetch_done(NULL, a);
	idmapd_fetch_done(NULL, c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_find),
		cmocka_unit_test(test_orphans),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
