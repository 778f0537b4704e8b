/* The pure checks of nfskeys-attrd's sub-mounts (attrd/attrd-mounts-check.c): the parent's
 * per-mount attributes a sub-mount carries, parent options whose value holds a comma, and
 * whether a target is the directory its policy was set on (file handle, NFSv4.0's file
 * id, the owner).  The real mounts are tests/kernel/attr-mounts-identity.ktest. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <cmocka.h>

#include "attrd-mounts-private.h"

static void test_attrs(void **state)
{
	const char *refused = "x";
	unsigned long a;

	(void)state;
	/* mountinfo's per-mount options of "mount -o nosymfollow,noexec,nosuid,nodev" */
	a = mounts_attr_from_options("rw,nosuid,nodev,noexec,relatime,nosymfollow",
				     "rw,vers=4.2,addr=127.0.0.1", &refused);
	assert_null(refused);
	assert_int_equal(a, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC |
				    MOUNT_ATTR_NOSYMFOLLOW | MOUNT_ATTR_RELATIME);
	a = mounts_attr_from_options("ro,noatime", "rw", &refused);
	assert_int_equal(a, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOATIME);
	/* a read-only superblock under a read-write mount */
	a = mounts_attr_from_options("rw,relatime", "ro,vers=4.2", &refused);
	assert_int_equal(a, MOUNT_ATTR_RDONLY | MOUNT_ATTR_RELATIME);
	/* "nosymfollowx" is no nosymfollow */
	a = mounts_attr_from_options("rw,nosymfollowx", "rw", &refused);
	assert_int_equal(a, MOUNT_ATTR_RELATIME);
	mounts_attr_from_options("rw,relatime,idmapped", "rw", &refused);
	assert_string_equal(refused, "idmapped");
}

static void test_unsafe_options(void **state)
{
	char *bad = NULL;

	(void)state;
	/* what 6.1 prints for username "alice,noperm" (seq_show_option escapes , = \) */
	assert_int_equal(mounts_options_unsafe("rw,vers=3.0,sec=krb5,cruid=2001,cache=strict,"
					       "username=alice\\054noperm,uid=2001,forceuid",
					       &bad),
			 1);
	assert_string_equal(bad, "username=alice,noperm");
	free(bad);
	bad = NULL;
	assert_int_equal(mounts_options_unsafe("domain=EX\\054AMPLE", &bad), 1);
	assert_string_equal(bad, "domain=EX,AMPLE");
	free(bad);
	bad = NULL;
	/* other escapes are harmless: a space, an equals sign, a backslash */
	assert_int_equal(mounts_options_unsafe("username=a\\040b\\075c\\134d,uid=0", &bad), 0);
	assert_null(bad);
	/* a truncated escape at the end is no comma */
	assert_int_equal(mounts_options_unsafe("rw,username=x\\05", &bad), 0);
	assert_int_equal(mounts_options_unsafe("", &bad), 0);
}

/* A handle as the 6.1 NFS client gives it: file id high, low, S_IFDIR, then the server's
 * handle (the words nfs_encode_fh() writes, little-endian). */
#define H_DIR "7:000000002a000000004000001c00000001000600"
#define H_OTHER "7:000000002b000000004000001c00000001000600"

static void test_handles(void **state)
{
	uint64_t id = 0;

	(void)state;
	assert_int_equal(mounts_handle_fileid(H_DIR, &id), 0);
	assert_int_equal(id, 42);
	assert_int_equal(mounts_handle_fileid("7:00000000010000000080000000", &id),
			 -EINVAL); /* a regular file's */
	assert_int_equal(mounts_handle_fileid("7:00", &id), -EINVAL);
	assert_int_equal(mounts_handle_fileid("garbage", &id), -EINVAL);

	/* nothing recorded: nothing to compare */
	assert_int_equal(mounts_handle_matches(NULL, H_DIR, true, 42), -ENODATA);
	assert_int_equal(mounts_handle_matches("", H_DIR, true, 42), -ENODATA);
	/* the same directory, another one made at its path */
	assert_int_equal(mounts_handle_matches(H_DIR, H_DIR, true, 0), 1);
	assert_int_equal(mounts_handle_matches(H_DIR, H_OTHER, true, 42), 0);
	assert_int_equal(mounts_handle_matches(H_OTHER " " H_DIR, H_DIR, true, 0), 1);
	/* NFSv4.0: no handle at the target, its file id against the recorded one */
	assert_int_equal(mounts_handle_matches(H_DIR, NULL, true, 42), 1);
	assert_int_equal(mounts_handle_matches(H_DIR, NULL, true, 43), 0);
	/* not NFS: no file id to read from a handle */
	assert_int_equal(mounts_handle_matches(H_DIR, NULL, false, 42), 0);
}

static bool admin_2005(uid_t uid, void *userdata)
{
	(void)userdata;
	return uid == 2005;
}

static void test_setters(void **state)
{
	uid_t who = 0;

	(void)state;
	assert_int_equal(mounts_setters_check(NULL, 2002, NULL, NULL, &who), 0);
	assert_int_equal(mounts_setters_check("2001", 2001, NULL, NULL, &who), 0);
	/* alice set it, bob owns what is there now */
	assert_int_equal(mounts_setters_check("2001", 2002, NULL, NULL, &who), 1);
	assert_int_equal(who, 2001);
	assert_int_equal(mounts_setters_check("2002 2001", 2002, NULL, NULL, &who), 1);
	assert_int_equal(who, 2001);
	/* an admin's policy on someone else's directory holds */
	assert_int_equal(mounts_setters_check("2005 2002", 2002, admin_2005, NULL, &who), 0);
	assert_int_equal(mounts_setters_check("x", 2002, NULL, NULL, &who), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_attrs),
		cmocka_unit_test(test_unsafe_options),
		cmocka_unit_test(test_handles),
		cmocka_unit_test(test_setters),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
