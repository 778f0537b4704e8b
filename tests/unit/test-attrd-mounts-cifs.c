/* nfskeys-attrd's CIFS sub-mounts (attrd/attrd-mounts-cifs.c) on mountinfo lines: which
 * parent options a sub-mount carries, which parents are refused and why, the user name a
 * multiuser parent needs, and which mounts a restarted daemon may take for its own.  The
 * parent lines are the 6.1 kernel's own (tests/kernel/attr-mounts-cifs.ktest printed
 * them); the real mounts are tested there. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "attrd-mounts-private.h"

/* what 6.1 showed for mount -t cifs -o sec=krb5,vers=3.0,cruid=2001,uid=2001,gid=3001 */
#define KRB5_PARENT                                                                      \
	"rw,vers=3.0,sec=krb5,cruid=2001,cache=strict,username=root,uid=2001,forceuid,"  \
	"gid=3001,forcegid,addr=127.0.0.1,file_mode=0755,dir_mode=0755,soft,nounix,"     \
	"serverino,mapposix,rsize=4194304,wsize=4194304,bsize=1048576,echo_interval=60," \
	"actimeo=1,closetimeo=1"

static bool has(const char *opts, const char *o)
{
	size_t n = strlen(o);

	for (const char *p = opts; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
		if (strncmp(p, o, n) == 0 && (p[n] == ',' || p[n] == '\0'))
			return true;
	return false;
}

static void test_krb5_parent(void **state)
{
	char *base = NULL, *why = NULL;

	assert_int_equal(mounts_cifs_base(KRB5_PARENT, &base, &why), 0);
	assert_null(why);
	assert_non_null(base);
	/* the identity and the view: all carried over */
	for (const char *const *o =
		     (const char *const[]){ "vers=3.0", "sec=krb5", "cruid=2001", "username=root",
					    "uid=2001", "forceuid", "gid=3001", "forcegid",
					    "addr=127.0.0.1", "file_mode=0755", "dir_mode=0755",
					    "serverino", "closetimeo=1", NULL };
	     *o; o++)
		assert_true(has(base, *o));
	/* the caching ones are the policy's */
	assert_false(has(base, "cache=strict"));
	assert_false(has(base, "actimeo=1"));
	free(base);

	assert_int_equal(mounts_cifs_base("vers=3.1.1,sec=krb5i,cruid=0,multiuser,acregmax=5,"
					  "acdirmax=6,fsc,seal",
					  &base, &why),
			 0);
	assert_string_equal(base, "vers=3.1.1,sec=krb5i,cruid=0,multiuser,seal");
	free(base);
}

static void test_never_a_password(void **state)
{
	char *base = NULL, *why = NULL;

	/* mountinfo shows none; should a kernel ever, it stays behind */
	assert_int_equal(mounts_cifs_base("sec=krb5,cruid=5,password=s3cret,pass=x,"
					  "credentials=/root/c,cred=/root/d,uid=5",
					  &base, &why),
			 0);
	assert_string_equal(base, "sec=krb5,cruid=5,uid=5");
	free(base);
}

static void test_refused_parents(void **state)
{
	char *base = NULL, *why = NULL;

	assert_int_equal(mounts_cifs_base("vers=3.0,sec=ntlmssp,cache=strict,username=alice,uid=0",
					  &base, &why),
			 0);
	assert_null(base);
	assert_non_null(strstr(why, "authenticates with sec=ntlmssp, which needs the password"));
	assert_non_null(strstr(why, "never reads a password"));
	free(why);

	assert_int_equal(mounts_cifs_base("vers=3.0,sec=ntlmv2i,username=a", &base, &why), 0);
	assert_null(base);
	assert_non_null(strstr(why, "sec=ntlmv2i"));
	free(why);

	assert_int_equal(mounts_cifs_base("vers=3.0,cache=strict,uid=0", &base, &why), 0);
	assert_null(base);
	assert_non_null(strstr(why, "no sec= shown"));
	free(why);

	/* a Kerberos line without cruid: whose ticket is unknown */
	assert_int_equal(mounts_cifs_base("vers=3.0,sec=krb5,uid=0", &base, &why), 0);
	assert_null(base);
	assert_non_null(strstr(why, "no cruid="));
	free(why);

	/* sec=krb5 must be the whole value, not a prefix of something else */
	assert_int_equal(mounts_cifs_base("sec=krb5x,cruid=0", &base, &why), 0);
	assert_null(base);
	free(why);
}

static void test_multiuser_user(void **state)
{
	char *opt = NULL;

	/* mountinfo shows no username= for multiuser mounts: the cruid user's name */
	assert_int_equal(mounts_cifs_user_option("sec=krb5,cruid=0,multiuser,uid=0", &opt), 0);
	assert_string_equal(opt, "username=root");
	free(opt);
	/* single-user mounts show their username=, which is carried over as it is */
	assert_int_equal(mounts_cifs_user_option("sec=krb5,cruid=0,username=kb", &opt), 0);
	assert_null(opt);
	assert_int_equal(mounts_cifs_user_option("sec=krb5,cruid=0,multiuser,username=kb", &opt),
			 0);
	assert_null(opt);
	assert_int_equal(mounts_cifs_user_option("sec=krb5,cruid=12x,multiuser", &opt), -EINVAL);
	assert_int_equal(mounts_cifs_user_option("sec=krb5,cruid=4294967295,multiuser", &opt),
			 -ENOENT);
}

static bool could_be_ours(const char *fstype, const char *source, const char *target)
{
	struct libmnt_fs *fs = mnt_new_fs();
	bool r;

	assert_non_null(fs);
	assert_int_equal(mnt_fs_set_fstype(fs, fstype), 0);
	assert_int_equal(mnt_fs_set_source(fs, source), 0);
	assert_int_equal(mnt_fs_set_target(fs, target), 0);
	r = mounts_cifs_could_be_ours(fs);
	mnt_unref_fs(fs);
	return r;
}

static void test_adoption(void **state)
{
	assert_true(could_be_ours("cifs", "//h/share/t/a", "/mnt/k/t/a"));
	assert_true(could_be_ours("smb3", "//h/share/x/a", "/mnt/p/a"));
	/* a share's root, another directory, another file system: never ours */
	assert_false(could_be_ours("cifs", "//h/share", "/mnt/k/t/a"));
	assert_false(could_be_ours("cifs", "//h/share/", "/mnt/k/t/a"));
	assert_false(could_be_ours("cifs", "//h/share/t/b", "/mnt/k/t/a"));
	assert_false(could_be_ours("nfs4", "//h/share/t/a", "/mnt/k/t/a"));
	assert_false(could_be_ours("cifs", "h:/share/t/a", "/mnt/k/t/a"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_krb5_parent),	cmocka_unit_test(test_never_a_password),
		cmocka_unit_test(test_refused_parents), cmocka_unit_test(test_multiuser_user),
		cmocka_unit_test(test_adoption),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
