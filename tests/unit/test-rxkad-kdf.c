/* rxkad-kdf against fixed vectors computed by an independent rendering of the draft's
 * definition (tests/harness/rxkad-kdf.py --vectors; the des3 key is RFC 3961
 * random-to-key of a known 21-byte value), plus the DES helpers and error paths. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "rxkad-kdf.h"

static void unhex(const char *hex, unsigned char *out, size_t *len)
{
	size_t n = strlen(hex) / 2;

	for (size_t i = 0; i < n; i++) {
		unsigned v;
		assert_int_equal(sscanf(hex + 2 * i, "%2x", &v), 1);
		out[i] = (unsigned char)v;
	}
	*len = n;
}

static void check_vector(int32_t enctype, const char *keyhex, const char *wanthex)
{
	unsigned char key[64], want[8], got[8];
	size_t klen, wlen;

	unhex(keyhex, key, &klen);
	unhex(wanthex, want, &wlen);
	assert_int_equal(wlen, 8);
	assert_int_equal(rxkad_session_key(enctype, key, klen, got), 0);
	assert_memory_equal(got, want, 8);
}

static void test_aes256(void **state)
{
	check_vector(18, "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
		     "b60db5e30b266b16");
}

static void test_aes128(void **state)
{
	check_vector(17, "404142434445464748494a4b4c4d4e4f", "296b0ee0ecb95b19");
}

static void test_des3(void **state)
{
	unsigned char key[24], r21[21], out[24];
	size_t klen, rlen, olen;

	check_vector(16, "9e1f6b32c14c51d5b6e9a2f1135d7ca29b25e6f8019bcba2", "a2f8ec62d34fad0e");
	/* the same key under the other 3DES enctype numbers */
	check_vector(5, "9e1f6b32c14c51d5b6e9a2f1135d7ca29b25e6f8019bcba2", "a2f8ec62d34fad0e");
	check_vector(7, "9e1f6b32c14c51d5b6e9a2f1135d7ca29b25e6f8019bcba2", "a2f8ec62d34fad0e");
	/* stripping the parity bits undoes RFC 3961 random-to-key */
	unhex("9e1f6b32c14c51d5b6e9a2f1135d7ca29b25e6f8019bcba2", key, &klen);
	unhex("9e1f6a33c04d51b7e8a2f0135c7d9b24e6f8019acb", r21, &rlen);
	assert_int_equal(rxkad_des3_compress_parity(key, klen, out, &olen), 0);
	assert_int_equal(olen, 21);
	assert_memory_equal(out, r21, 21);
	/* in place works too */
	assert_int_equal(rxkad_des3_compress_parity(key, klen, key, &olen), 0);
	assert_memory_equal(key, r21, 21);
	assert_int_equal(rxkad_des3_compress_parity(key, 20, out, &olen), -EINVAL);
	assert_int_equal(rxkad_session_key(16, key, 20, out), -EINVAL);
}

static void test_des_passthrough(void **state)
{
	check_vector(3, "0123456789abcdef", "0123456789abcdef");
	check_vector(1, "fedcba9876543210", "fedcba9876543210");
	{
		unsigned char k[9] = { 0 }, out[8];
		assert_int_equal(rxkad_session_key(3, k, 9, out), -EINVAL);
		assert_int_equal(rxkad_session_key(2, k, 7, out), -EINVAL);
	}
}

static void test_refused(void **state)
{
	unsigned char k[32] = { 1 }, out[8];

	/* null, reserved and CMS identifiers, private (negative) enctypes */
	assert_int_equal(rxkad_session_key(0, k, 16, out), -EPROTONOSUPPORT);
	assert_int_equal(rxkad_session_key(4, k, 16, out), -EPROTONOSUPPORT);
	assert_int_equal(rxkad_session_key(15, k, 16, out), -EPROTONOSUPPORT);
	assert_int_equal(rxkad_session_key(-128, k, 16, out), -EPROTONOSUPPORT);
	/* a key of fewer than 7 bytes cannot give 56 bits */
	assert_int_equal(rxkad_kdf(k, 6, out), -EINVAL);
	assert_int_equal(rxkad_session_key(18, k, 6, out), -EINVAL);
	assert_int_equal(rxkad_kdf(NULL, 16, out), -EINVAL);
}

static void test_parity_and_weak(void **state)
{
	unsigned char k[8] = { 0x00, 0x01, 0x02, 0x03, 0xfe, 0xff, 0x80, 0x7f };
	static const unsigned char want[8] = { 0x01, 0x01, 0x02, 0x02, 0xfe, 0xfe, 0x80, 0x7f };
	static const unsigned char weak[8] = { 0xe0, 0xe0, 0xe0, 0xe0, 0xf1, 0xf1, 0xf1, 0xf1 };
	static const unsigned char semi[8] = { 0x01, 0xfe, 0x01, 0xfe, 0x01, 0xfe, 0x01, 0xfe };
	static const unsigned char fine[8] = { 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef };

	rxkad_des_set_odd_parity(k);
	assert_memory_equal(k, want, 8);
	for (int i = 0; i < 8; i++)
		assert_int_equal(__builtin_popcount(k[i]) % 2, 1);
	assert_true(rxkad_des_is_weak_key(weak));
	assert_true(rxkad_des_is_weak_key(semi));
	assert_false(rxkad_des_is_weak_key(fine));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_aes256),	  cmocka_unit_test(test_aes128),
		cmocka_unit_test(test_des3),	  cmocka_unit_test(test_des_passthrough),
		cmocka_unit_test(test_refused),	  cmocka_unit_test(test_parity_and_weak),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
