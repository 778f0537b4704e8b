/* The ldap backend's id parser (plugins/ldap-values.c): RFC 2307's unsigned decimal and
 * Active Directory's 32-bit signed storage of ids of 2^31 and more (3000000000 kept as
 * -1294967296), every boundary, and the malformed values a directory could hold; the
 * filter that finds an id either way. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "ldap-values.h"

static int parse(const char *v, uint32_t *ret)
{
	*ret = 12345; /* untouched on failure */
	return ldap_value_id(v, strlen(v), ret);
}

static void test_unsigned(void **state)
{
	static const struct {
		const char *v;
		uint32_t id;
	} ok[] = {
		{ "0", 0 },
		{ "1", 1 },
		{ "10001", 10001 },
		{ "2147483647", 2147483647u },
		{ "2147483648", 2147483648u },
		{ "3000000000", 3000000000u },
		{ "4294967294", 4294967294u },
	};
	uint32_t id;

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		assert_int_equal(parse(ok[i].v, &id), 0);
		assert_int_equal(id, ok[i].id);
	}
}

static void test_ad_signed(void **state)
{
	uint32_t id;

	(void)state;
	/* what the DC returns for uidNumber 3000000000, and the two ends of the range */
	assert_int_equal(parse("-1294967296", &id), 0);
	assert_int_equal(id, 3000000000u);
	assert_int_equal(parse("-2147483648", &id), 0);
	assert_int_equal(id, 2147483648u);
	assert_int_equal(parse("-2", &id), 0);
	assert_int_equal(id, 4294967294u);
	assert_int_equal(parse("-1294967295", &id), 0);
	assert_int_equal(id, 3000000001u);
}

static void test_out_of_range(void **state)
{
	static const char *const bad[] = {
		"4294967295", /* (uid_t)-1 */
		"-1",	      /* the same, signed */
		"4294967296",  "99999999999999999999999999", "-2147483649",
		"-4294967296", "-99999999999999999999",
	};
	uint32_t id;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(parse(bad[i], &id), -ERANGE);
		assert_int_equal(id, 12345);
	}
}

static void test_malformed(void **state)
{
	static const char *const bad[] = {
		"",    "-",  "+1",   " 1",  "1 ",  "01",  "-0",
		"-01", "1x", "0x10", "1.0", "1e3", "--1", "١",
	};
	uint32_t id;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(parse(bad[i], &id), -EINVAL);
		assert_int_equal(id, 12345);
	}
	/* a NUL inside the value, and a length that stops before the end */
	assert_int_equal(ldap_value_id("12\0003", 4, &id), -EINVAL);
	assert_int_equal(ldap_value_id("1234", 2, &id), 0);
	assert_int_equal(id, 12);
}

static void test_id_filter(void **state)
{
	char buf[128];

	(void)state;
	assert_int_equal(ldap_id_filter("uidNumber", 10001, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "(uidNumber=10001)");
	assert_int_equal(ldap_id_filter("uidNumber", 2147483647u, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "(uidNumber=2147483647)");
	assert_int_equal(ldap_id_filter("uidNumber", 3000000000u, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "(|(uidNumber=3000000000)(uidNumber=-1294967296))");
	assert_int_equal(ldap_id_filter("gidNumber", 2147483648u, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "(|(gidNumber=2147483648)(gidNumber=-2147483648))");
	/* every id the parser takes comes back from its filter's signed form */
	for (uint64_t i = 2147483648u; i < 4294967295u; i += 104729) {
		const char *neg;
		uint32_t id;

		assert_int_equal(ldap_id_filter("a", (uint32_t)i, buf, sizeof(buf)), 0);
		neg = strstr(buf, "(a=-");
		assert_non_null(neg);
		assert_int_equal(ldap_value_id(neg + 3, strcspn(neg + 3, ")"), &id), 0);
		assert_int_equal(id, (uint32_t)i);
	}
	assert_int_equal(ldap_id_filter("uidNumber", 3000000000u, buf, 20), -ENOSPC);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unsigned),     cmocka_unit_test(test_ad_signed),
		cmocka_unit_test(test_out_of_range), cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_id_filter),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
