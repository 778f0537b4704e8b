/* The keyring layer against the real kernel, inside a private session keyring. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <keyutils.h>
#include <time.h>

#include "macros.h"
#include "nfskeys.h"
#include "test-util.h"

static int32_t session;

static int setup(void **state)
{
	/* a fresh anonymous session keyring for each test */
	session = tu_session_keyring();
	return session < 0 ? -1 : 0;
}

static void test_add_search_read(void **state)
{
	int32_t k = 0, found = 0;
	void *buf = NULL;
	size_t len = 0;

	assert_int_equal(nfskeys_key_add("user", "nfskeys-test:a", "payload", 7,
					 KEY_SPEC_SESSION_KEYRING, &k),
			 0);
	assert_true(k > 0);
	assert_int_equal(nfskeys_key_search(KEY_SPEC_SESSION_KEYRING, "user", "nfskeys-test:a", 0,
					    &found),
			 0);
	assert_int_equal(found, k);
	assert_int_equal(nfskeys_key_read(k, &buf, &len), 0);
	assert_int_equal(len, 7);
	assert_memory_equal(buf, "payload", 7);
	free(buf);
	assert_int_equal(nfskeys_key_search(KEY_SPEC_SESSION_KEYRING, "user", "nfskeys-test:none",
					    0, &found),
			 -ENOKEY);
	/* a key type the kernel does not have */
	assert_int_equal(nfskeys_key_add("nfskeys-no-such-type", "x", "p", 1,
					 KEY_SPEC_SESSION_KEYRING, &k),
			 -ENODEV);
	assert_int_equal(nfskeys_key_add(NULL, "x", "p", 1, KEY_SPEC_SESSION_KEYRING, &k), -EINVAL);
}

static void test_logon_unreadable(void **state)
{
	int32_t k = 0;
	void *buf = NULL;
	size_t len;

	assert_int_equal(nfskeys_key_add("logon", "cifs:a:192.0.2.1", "u:p", 4,
					 KEY_SPEC_SESSION_KEYRING, &k),
			 0);
	/* logon keys cannot be read back from user space, by design */
	assert_int_equal(nfskeys_key_read(k, &buf, &len), -EOPNOTSUPP);
}

static void test_describe(void **state)
{
	struct nfskeys_key_info info;
	int32_t k = 0;

	assert_int_equal(nfskeys_key_add("user", "nfskeys-test:desc;with;semis", "x", 1,
					 KEY_SPEC_SESSION_KEYRING, &k),
			 0);
	assert_int_equal(nfskeys_key_describe(k, &info), 0);
	assert_string_equal(info.type, "user");
	assert_string_equal(info.description, "nfskeys-test:desc;with;semis");
	assert_int_equal(info.uid, getuid());
	assert_int_equal(info.expiry, 0);
	assert_int_equal(info.serial, k);

	assert_int_equal(nfskeys_key_set_timeout(k, 3600), 0);
	assert_int_equal(nfskeys_key_describe(k, &info), 0);
	assert_true(info.expiry > time(NULL) + 3000 && info.expiry <= time(NULL) + 3600 + 60);
}

static void test_parse_description(void **state)
{
	struct nfskeys_key_info info;

	assert_int_equal(nfskeys_key_parse_description("logon;0;0;3f010000;cifs:a:10.0.0.1", &info),
			 0);
	assert_string_equal(info.type, "logon");
	assert_int_equal(info.perm, 0x3f010000);
	assert_string_equal(info.description, "cifs:a:10.0.0.1");
	assert_int_equal(nfskeys_key_parse_description("user;1000;1000;3f010000;", &info), 0);
	assert_string_equal(info.description, "");
	assert_int_equal(nfskeys_key_parse_description("", &info), -EINVAL);
	assert_int_equal(nfskeys_key_parse_description("user", &info), -EINVAL);
	assert_int_equal(nfskeys_key_parse_description("user;x;0;0;d", &info), -EINVAL);
	assert_int_equal(nfskeys_key_parse_description("user;-1;0;0;d", &info), -EINVAL);
	assert_int_equal(nfskeys_key_parse_description("user;0;0;zz;d", &info), -EINVAL);
	assert_int_equal(nfskeys_key_parse_description("user;99999999999;0;0;d", &info), -EINVAL);
	assert_int_equal(nfskeys_key_parse_description(";0;0;0;d", &info), -EINVAL);
	/* only plain digits: no blanks, signs or 0x prefixes (strtoull would take them) */
	assert_int_equal(nfskeys_key_parse_description("user; 1;0;0;d", &info), -EINVAL);
	assert_int_equal(nfskeys_key_parse_description("user;+1;0;0;d", &info), -EINVAL);
	assert_int_equal(nfskeys_key_parse_description("user;1;0;0x3f;d", &info), -EINVAL);
	assert_int_equal(nfskeys_key_parse_description("user;1;0; 3f;d", &info), -EINVAL);
	assert_int_equal(nfskeys_key_parse_description("user;1;0;;d", &info), -EINVAL);
	/* a type too long for the buffer */
	assert_int_equal(nfskeys_key_parse_description(
				 "0123456789012345678901234567890123456789012345678901234567890123;0;0;0;d",
				 &info),
			 -EINVAL);
}

static void test_list_link_unlink(void **state)
{
	int32_t ring = 0, k1 = 0, k2 = 0, *serials = NULL;
	size_t n = 0;

	assert_int_equal(nfskeys_key_add("keyring", "nfskeys-test-ring", NULL, 0,
					 KEY_SPEC_SESSION_KEYRING, &ring),
			 0);
	assert_int_equal(nfskeys_key_add("user", "k1", "1", 1, ring, &k1), 0);
	assert_int_equal(nfskeys_key_add("user", "k2", "2", 1, ring, &k2), 0);
	assert_int_equal(nfskeys_keyring_list(ring, &serials, &n), 0);
	assert_int_equal(n, 2);
	assert_true((serials[0] == k1 && serials[1] == k2) || (serials[0] == k2 && serials[1] == k1));
	free(serials);

	assert_int_equal(nfskeys_key_unlink(k1, ring), 0);
	assert_int_equal(nfskeys_key_unlink(k1, ring), -ENOENT);
	assert_int_equal(nfskeys_keyring_list(ring, &serials, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(serials[0], k2);
	free(serials);
	assert_int_equal(nfskeys_key_link(k2, KEY_SPEC_SESSION_KEYRING), 0);
	assert_int_equal(nfskeys_key_search(KEY_SPEC_SESSION_KEYRING, "user", "k2", 0, NULL), 0);
}

static void test_revoke_invalidate(void **state)
{
	struct nfskeys_key_info info;
	int32_t k = 0, k2 = 0;
	void *buf;
	size_t len;
	int r;

	assert_int_equal(nfskeys_key_add("user", "nfskeys-test:rev", "x", 1,
					 KEY_SPEC_SESSION_KEYRING, &k),
			 0);
	assert_int_equal(nfskeys_key_revoke(k), 0);
	assert_int_equal(nfskeys_key_read(k, &buf, &len), -EKEYREVOKED);

	assert_int_equal(nfskeys_key_add("user", "nfskeys-test:inv", "x", 1,
					 KEY_SPEC_SESSION_KEYRING, &k2),
			 0);
	assert_int_equal(nfskeys_key_invalidate(k2), 0);
	/* gone at once for direct access ... */
	assert_int_equal(nfskeys_key_describe(k2, &info), -ENOKEY);
	/* ... but until the kernel's garbage collector unlinks it (later under load), a
	 * search that meets it reports -EKEYREVOKED instead of -ENOKEY */
	r = nfskeys_key_search(KEY_SPEC_SESSION_KEYRING, "user", "nfskeys-test:inv", 0, NULL);
	assert_true(r == -ENOKEY || r == -EKEYREVOKED);
}

static void test_request_without_upcall(void **state)
{
	int32_t k = 0, found = 0;

	assert_int_equal(nfskeys_key_add("user", "nfskeys-test:req", "x", 1,
					 KEY_SPEC_SESSION_KEYRING, &k),
			 0);
	/* callout NULL only searches */
	assert_int_equal(nfskeys_key_request("user", "nfskeys-test:req", NULL, 0, &found), 0);
	assert_int_equal(found, k);
	assert_int_equal(nfskeys_key_request("user", "nfskeys-test:absent", NULL, 0, &found),
			 -ENOKEY);
}

static void test_possess_keyring(void **state)
{
	int32_t ring = 0, got = 0;

	/* a keyring linked from the user keyring can be searched into the thread keyring */
	assert_int_equal(nfskeys_key_add("keyring", "nfskeys-test-possess", NULL, 0,
					 KEY_SPEC_USER_KEYRING, &ring),
			 0);
	assert_int_equal(nfskeys_key_possess_keyring("nfskeys-test-possess", &got), 0);
	assert_int_equal(got, ring);
	assert_int_equal(nfskeys_key_unlink(ring, KEY_SPEC_USER_KEYRING), 0);
	assert_int_equal(nfskeys_key_possess_keyring("nfskeys-test-no-such-ring", &got), -ENOKEY);
	assert_int_equal(nfskeys_key_possess_keyring("", &got), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_add_search_read, setup),
		cmocka_unit_test_setup(test_logon_unreadable, setup),
		cmocka_unit_test_setup(test_describe, setup),
		cmocka_unit_test(test_parse_description),
		cmocka_unit_test_setup(test_list_link_unlink, setup),
		cmocka_unit_test_setup(test_revoke_invalidate, setup),
		cmocka_unit_test_setup(test_request_without_upcall, setup),
		cmocka_unit_test_setup(test_possess_keyring, setup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
