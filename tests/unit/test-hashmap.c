/* common/hashmap: lookups, insertion, backward-shift deletion across the wrap of the slot
 * array, iteration, reserve, clear; and a randomized run of operations checked step by
 * step against a plain array (with a good hash and with one that collides on purpose). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "hashmap.h"
#include "macros.h"

#define NKEYS 1000

/* Values are key + 1; the key is the uint32_t at *key. */
static bool eq_u32(const void *ctx, uintptr_t val, const void *key)
{
	(void)ctx;
	return val - 1 == *(const uint32_t *)key;
}

static uint64_t good_hash(uint32_t k)
{
	return hashmap_hash(42, &k, sizeof(k));
}

/* Seven home slots only: long runs that cross the end of the array and each other. */
static uint64_t bad_hash(uint32_t k)
{
	return (uint64_t)(k % 7) * 0x9e3779b97f4a7c15ull + (k % 7 == 3 ? 15 : 0);
}

static uintptr_t find(const struct hashmap *m, uint64_t (*h)(uint32_t), uint32_t k)
{
	return hashmap_find(m, h(k), eq_u32, NULL, &k);
}

static void test_basic(void **state)
{
	struct hashmap m = HASHMAP_INIT;
	uint32_t k = 5;
	uintptr_t v;
	size_t it = 0, seen = 0;

	(void)state;
	assert_int_equal(find(&m, good_hash, 5), 0); /* empty, no slots yet */
	assert_int_equal(hashmap_remove(&m, good_hash(5), eq_u32, NULL, &k), 0);
	assert_false(hashmap_next(&m, &it, &v));
	for (uint32_t i = 0; i < 100; i++)
		assert_int_equal(hashmap_put(&m, good_hash(i), i + 1), 0);
	assert_int_equal(m.count, 100);
	assert_true(m.mask + 1 >= 200); /* at most half full */
	for (uint32_t i = 0; i < 100; i++)
		assert_int_equal(find(&m, good_hash, i), i + 1);
	assert_int_equal(find(&m, good_hash, 100), 0);
	while (hashmap_next(&m, &it, &v)) {
		assert_true(v >= 1 && v <= 100);
		seen++;
	}
	assert_int_equal(seen, 100);
	assert_int_equal(hashmap_remove(&m, good_hash(5), eq_u32, NULL, &k), 6);
	assert_int_equal(find(&m, good_hash, 5), 0);
	assert_false(hashmap_remove_val(&m, good_hash(5), 6));
	assert_true(hashmap_remove_val(&m, good_hash(7), 8));
	assert_int_equal(find(&m, good_hash, 7), 0);
	assert_int_equal(m.count, 98);
	hashmap_clear(&m);
	assert_int_equal(m.count, 0);
	assert_int_equal(find(&m, good_hash, 9), 0);
	hashmap_free(&m);
	assert_null(m.slots);
	assert_int_equal(hashmap_put(&m, good_hash(1), 2), 0); /* usable again */
	assert_int_equal(find(&m, good_hash, 1), 2);
	hashmap_free(&m);
}

static void test_reserve(void **state)
{
	struct hashmap m = HASHMAP_INIT;
	struct hashmap_slot *slots;

	(void)state;
	assert_int_equal(hashmap_reserve(&m, 1000), 0);
	slots = m.slots;
	for (uint32_t i = 0; i < 1000; i++)
		assert_int_equal(hashmap_put(&m, good_hash(i), i + 1), 0);
	assert_ptr_equal(m.slots, slots); /* no growth after a reserve */
	assert_int_equal(hashmap_reserve(&m, SIZE_MAX), -ENOMEM);
	assert_ptr_equal(m.slots, slots);
	hashmap_free(&m);
}

static void test_hash(void **state)
{
	char a[40] = "a name of some thirty bytes, or more", b[40];

	(void)state;
	memcpy(b, a, sizeof(a));
	for (size_t n = 0; n <= 36; n++) {
		assert_true(hashmap_hash(1, a, n) == hashmap_hash(1, b, n));
		assert_true(hashmap_hash(1, a, n) != hashmap_hash(2, a, n)); /* seeded */
		if (n > 0) {
			b[n - 1] ^= 1;
			assert_true(hashmap_hash(1, a, n) != hashmap_hash(1, b, n));
			b[n - 1] ^= 1;
		}
	}
}

/* A run of random puts, removes (by key and by value), lookups, clears and full
 * iterations, every result compared with the reference array. */
static void randomized(uint64_t (*h)(uint32_t), unsigned seed, unsigned steps)
{
	struct hashmap m = HASHMAP_INIT;
	bool ref[NKEYS] = { 0 };
	size_t nref = 0;

	srandom(seed);
	for (unsigned s = 0; s < steps; s++) {
		uint32_t k = (uint32_t)(random() % (s % 2000 < 1000 ? 64 : NKEYS));
		unsigned op = (unsigned)random() % 100;

		if (op < 45) {
			if (!ref[k]) {
				assert_int_equal(hashmap_put(&m, h(k), k + 1), 0);
				ref[k] = true;
				nref++;
			}
		} else if (op < 70) {
			assert_int_equal(hashmap_remove(&m, h(k), eq_u32, NULL, &k), ref[k] ? k + 1 : 0);
			nref -= ref[k];
			ref[k] = false;
		} else if (op < 80) {
			assert_int_equal(hashmap_remove_val(&m, h(k), k + 1), ref[k]);
			nref -= ref[k];
			ref[k] = false;
		} else if (op < 99) {
			assert_int_equal(find(&m, h, k), ref[k] ? k + 1 : 0);
		} else if (random() % 20 == 0) {
			hashmap_clear(&m);
			memset(ref, 0, sizeof(ref));
			nref = 0;
		} else {
			bool seen[NKEYS] = { 0 };
			size_t it = 0, n = 0;
			uintptr_t v;

			while (hashmap_next(&m, &it, &v)) {
				assert_true(v >= 1 && v <= NKEYS);
				assert_true(ref[v - 1]);
				assert_false(seen[v - 1]);
				seen[v - 1] = true;
				n++;
			}
			assert_int_equal(n, nref);
		}
		assert_int_equal(m.count, nref);
	}
	for (uint32_t k = 0; k < NKEYS; k++)
		assert_int_equal(find(&m, h, k), ref[k] ? k + 1 : 0);
	hashmap_free(&m);
}

static void test_randomized(void **state)
{
	(void)state;
	for (unsigned seed = 1; seed <= 8; seed++)
		randomized(good_hash, seed, 50000);
}

static void test_randomized_collisions(void **state)
{
	(void)state;
	for (unsigned seed = 1; seed <= 8; seed++)
		randomized(bad_hash, seed, 20000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_basic),
		cmocka_unit_test(test_reserve),
		cmocka_unit_test(test_hash),
		cmocka_unit_test(test_randomized),
		cmocka_unit_test(test_randomized_collisions),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
