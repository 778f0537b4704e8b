/* Directory attributes, library side: the vocabulary and its error messages, policy
 * objects, policy -> writeback throttling and mount options, and which mounts have owners
 * the kernel client makes up.  Identity, the index and the store have their own tests
 * (test-attr-id.c, test-attr-index.c, test-attr-store.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <fcntl.h>
#include <ftw.h>
#include <libmount.h>
#include <sched.h>
#include <sqlite3.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "attr-private.h"
#include "test-util.h"

static int setup(void **state)
{
	return tu_dir_setup("attr");
}

static int teardown(void **state)
{
	return tu_dir_teardown();
}

/* ---------------------------------------------------------------- vocabulary */

static void check_ok(const char *key, const char *value, const char *canonical)
{
	char err[256] = "", *v = NULL;

	assert_int_equal(nfskeys_attr_check(key, value, &v, err, sizeof(err)), 0);
	assert_string_equal(v, canonical);
	free(v);
}

static void check_err(const char *key, const char *value, const char *needle)
{
	char err[256] = "", *v = NULL;

	assert_int_equal(nfskeys_attr_check(key, value, &v, err, sizeof(err)), -EINVAL);
	assert_null(v);
	if (!strstr(err, needle))
		fail_msg("error '%s' does not contain '%s'", err, needle);
}

static void test_vocabulary(void **state)
{
	check_ok("cache", "none", "none");
	check_ok("cache", "FULL", "full");
	check_ok("fscache", "on", "on");
	check_ok("actimeo", "30", "30");
	check_ok("acregmin", "30s", "30");
	check_ok("acregmax", "5m", "300");
	check_ok("acdirmin", "0", "0");
	check_ok("acdirmax", "1h", "3600");
	check_ok("lookupcache", "pos", "positive");
	check_ok("lookupcache", "none", "none");
	check_ok("cto", "off", "off");
	check_ok("writeback", "throttled", "throttled");
	check_ok("dirty_limit", "64M", "67108864");
	check_ok("dirty_limit", "4k", "4096");
	check_ok("dirty_limit", "1G", "1073741824");
	check_ok("dirty_limit", "8192", "8192");
	check_ok("inherit", "no", "no");
	check_ok("user.project", "Apollo 11", "Apollo 11");
	assert_string_equal(nfskeys_attr_key_name(NFSKEYS_ATTR_DIRTY_LIMIT), "dirty_limit");
	assert_null(nfskeys_attr_key_name(_NFSKEYS_ATTR_MAX));
}

static void test_vocabulary_errors(void **state)
{
	check_err("cahce", "none", "unknown attribute 'cahce'");
	check_err("", "x", "empty attribute name");
	check_err("cache", "maybe", "bad value 'maybe' for cache (expected none|read|full)");
	check_err("cache", "", "empty value for cache");
	check_err("actimeo", "90000", "actimeo=90000 is out of range (0-86400 seconds)");
	check_err("actimeo", "99999999999999999999999", "out of range");
	check_err("actimeo", "-1", "bad value '-1' for actimeo");
	check_err("acregmax", "5d", "bad time unit 'd'");
	check_err("dirty_limit", "64X", "bad size suffix 'X' in dirty_limit=64X");
	check_err("dirty_limit", "2T", "out of range (4K-1T)");
	check_err("dirty_limit", "100", "out of range (4K-1T)");
	check_err("dirty_limit", "M", "bad value 'M' for dirty_limit");
	check_err("inherit", "maybe", "expected yes|no");
	check_err("user.", "x", "bad attribute name 'user.'");
	check_err("user.a b", "x", "bad attribute name");
	check_err("user.note", "line\nbreak", "control character");
}

static void test_policy(void **state)
{
	struct nfskeys_attr_policy *p = NULL;
	struct nfskeys_attr_entry e;
	char err[256];

	assert_int_equal(nfskeys_attr_policy_new(&p), 0);
	assert_int_equal(nfskeys_attr_policy_parse(p, "user.zz=1", err, sizeof(err)), 0);
	assert_int_equal(nfskeys_attr_policy_parse(p, "dirty_limit=1M", err, sizeof(err)), 0);
	assert_int_equal(nfskeys_attr_policy_parse(p, "cache=read", err, sizeof(err)), 0);
	assert_int_equal(nfskeys_attr_policy_parse(p, "user.aa=2", err, sizeof(err)), 0);
	assert_int_equal(nfskeys_attr_policy_parse(p, "cache=full", err, sizeof(err)), 0);
	assert_int_equal(nfskeys_attr_policy_parse(p, "cachefull", err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "'cachefull' is not key=value");
	assert_int_equal(nfskeys_attr_policy_count(p), 4);
	/* typed keys in enum order, then user.* by name */
	assert_int_equal(nfskeys_attr_policy_entry(p, 0, &e), 0);
	assert_string_equal(e.key, "cache");
	assert_string_equal(e.value, "full");
	assert_int_equal(e.number, 2);
	assert_int_equal(nfskeys_attr_policy_entry(p, 1, &e), 0);
	assert_string_equal(e.key, "dirty_limit");
	assert_int_equal(e.number, 1048576);
	assert_int_equal(nfskeys_attr_policy_entry(p, 2, &e), 0);
	assert_string_equal(e.key, "user.aa");
	assert_int_equal(nfskeys_attr_policy_entry(p, 3, &e), 0);
	assert_string_equal(e.key, "user.zz");
	assert_int_equal(nfskeys_attr_policy_entry(p, 4, &e), -ERANGE);
	assert_int_equal(nfskeys_attr_policy_get(p, "cto", &e), -ENOENT);
	nfskeys_attr_policy_clear(p);
	assert_int_equal(nfskeys_attr_policy_count(p), 0);
	nfskeys_attr_policy_free(p);
	assert_null(nfskeys_attr_policy_free(NULL));
}

/* writeback= and dirty_limit feed the throttler object of the export (kara2011 here: a
 * plain threshold, so the limit shows directly in its answers): its limit follows
 * the effective dirty_limit (clamped to 1 MiB, back to [Writeback] Dirty-Limit when none
 * applies) and the throttler acts on it; the mode says whether writers are throttled. */
static void test_wb_apply(void **state)
{
	static const char *const sets[][3] = {
		{ "srv:/export/a", "dirty_limit=64M", "writeback=throttled" },
		{ "srv:/export/a/b", "writeback=sync", NULL },
		{ "srv:/export/c", "writeback=async", "dirty_limit=64K" },
		{ "srv:/export/d", "user.x=y", NULL },
	};
	struct nfskeys_ctx *ctx = NULL;
	struct nfskeys_attr_store *st = NULL;
	struct nfskeys_attr_policy *p = NULL;
	struct nfskeys_attr_id *id = NULL;
	struct nfskeys_wb_dev *dev = NULL;
	struct nfskeys_wb_task *task = NULL;
	struct nfskeys_wb_stats stats;
	char conf[160], err[256];
	uint64_t limit = 0, pause = 0;
	int mode = -1;
	FILE *f;

	snprintf(conf, sizeof(conf), "%s/wb.conf", tu_dir);
	f = fopen(conf, "we");
	assert_non_null(f);
	fprintf(f, "[Attr]\nStore = %s/wb.db\n[Writeback]\nPolicy = kara2011\nDirty-Limit = 128M\n", tu_dir);
	fclose(f);
	assert_int_equal(nfskeys_ctx_new(conf, &ctx), 0);
	assert_int_equal(nfskeys_attr_store_open(ctx, NULL, NFSKEYS_ATTR_STORE_WRITE, &st), 0);
	assert_int_equal(nfskeys_attr_policy_new(&p), 0);
	for (size_t i = 0; i < ARRAY_SIZE(sets); i++) {
		nfskeys_attr_policy_clear(p);
		for (int k = 1; k < 3 && sets[i][k]; k++)
			assert_int_equal(nfskeys_attr_policy_parse(p, sets[i][k], err, sizeof(err)), 0);
		assert_int_equal(nfskeys_attr_id_from_spec(sets[i][0], &id), 0);
		assert_int_equal(nfskeys_attr_store_set(st, id, p, 0, false), 0);
		id = nfskeys_attr_id_free(id);
	}
	nfskeys_attr_store_close(st);
	assert_int_equal(nfskeys_wb_dev_get(ctx, "srv:/export", NFSKEYS_WB_UNSTABLE, &dev), 0);
	assert_int_equal(nfskeys_wb_dev_get_limit(dev), 128ull << 20);

	/* inherited by a subdirectory: the device takes the limit, writers are throttled */
	assert_int_equal(nfskeys_attr_id_from_spec("srv:/export/a/x/y", &id), 0);
	assert_int_equal(nfskeys_attr_wb_apply(ctx, id, dev, &mode, &limit), 0);
	assert_int_equal(mode, NFSKEYS_ATTR_WB_THROTTLED);
	assert_int_equal(limit, 64ull << 20);
	assert_int_equal(nfskeys_wb_dev_get_limit(dev), 64ull << 20);
	assert_int_equal(nfskeys_wb_dev_get_stats(dev, &stats), 0);
	assert_int_equal(stats.limit, 64ull << 20);
	id = nfskeys_attr_id_free(id);
	/* 4 MiB dirtied under a 64 MiB limit: go on */
	assert_int_equal(nfskeys_wb_task_new(dev, NULL, &task), 0);
	assert_int_equal(nfskeys_wb_throttle(task, 4ull << 20, NFSKEYS_WB_NOSLEEP, &pause), 0);
	task = nfskeys_wb_task_free(task);
	nfskeys_wb_complete(dev, 4ull << 20, NFSKEYS_WB_WRITE, 1000000);
	nfskeys_wb_complete(dev, 4ull << 20, NFSKEYS_WB_COMMIT, 1000000);
	/* writeback=sync below it, the limit still inherited */
	assert_int_equal(nfskeys_attr_id_from_spec("srv:/export/a/b", &id), 0);
	assert_int_equal(nfskeys_attr_wb_apply(ctx, id, dev, &mode, &limit), 0);
	assert_int_equal(mode, NFSKEYS_ATTR_WB_SYNC);
	assert_int_equal(limit, 64ull << 20);
	id = nfskeys_attr_id_free(id);

	/* a dirty_limit under the throttler's minimum is raised to 1 MiB, and the
	 * throttler acts on it: 4 MiB dirtied with nothing completed must wait */
	assert_int_equal(nfskeys_attr_id_from_spec("srv:/export/c", &id), 0);
	assert_int_equal(nfskeys_attr_wb_apply(ctx, id, dev, &mode, &limit), 0);
	assert_int_equal(mode, NFSKEYS_ATTR_WB_ASYNC);
	assert_int_equal(limit, 1ull << 20);
	assert_int_equal(nfskeys_wb_dev_get_limit(dev), 1ull << 20);
	id = nfskeys_attr_id_free(id);
	assert_int_equal(nfskeys_wb_task_new(dev, NULL, &task), 0);
	assert_int_equal(nfskeys_wb_throttle(task, 4ull << 20, NFSKEYS_WB_NOSLEEP, &pause), 1);
	assert_true(pause > 0);
	task = nfskeys_wb_task_free(task);

	/* nothing in effect: back to the configured default */
	assert_int_equal(nfskeys_attr_id_from_spec("srv:/export/d/e", &id), 0);
	assert_int_equal(nfskeys_attr_wb_apply(ctx, id, dev, &mode, &limit), 0);
	assert_int_equal(mode, NFSKEYS_ATTR_WB_DEFAULT);
	assert_int_equal(limit, 128ull << 20);
	assert_int_equal(nfskeys_wb_dev_get_limit(dev), 128ull << 20);
	/* no device: only asks */
	assert_int_equal(nfskeys_attr_wb_apply(ctx, id, NULL, &mode, NULL), 0);
	assert_int_equal(mode, NFSKEYS_ATTR_WB_DEFAULT);
	assert_int_equal(nfskeys_attr_wb_apply(NULL, id, dev, NULL, NULL), -EINVAL);
	id = nfskeys_attr_id_free(id);

	nfskeys_attr_policy_free(p);
	nfskeys_ctx_unref(ctx);
}

static void test_mount_options(void **state)
{
	struct nfskeys_ctx *ctx = tu_ctx_attr();
	struct nfskeys_attr_store *st = NULL;
	struct nfskeys_attr_policy *p = NULL;
	struct nfskeys_attr_id *id = NULL, *sub = NULL, *cifs = NULL;
	char err[256], *o = NULL;

	assert_int_equal(nfskeys_attr_store_open(ctx, NULL, NFSKEYS_ATTR_STORE_WRITE, &st), 0);
	assert_int_equal(nfskeys_attr_id_from_spec("srv:/export", &id), 0);
	assert_int_equal(nfskeys_attr_id_from_spec("srv:/export/sub", &sub), 0);
	assert_int_equal(nfskeys_attr_id_from_spec("//srv/share", &cifs), 0);
	assert_int_equal(nfskeys_attr_policy_new(&p), 0);
	assert_int_equal(nfskeys_attr_policy_parse(p, "cache=none", err, sizeof(err)), 0);
	assert_int_equal(nfskeys_attr_policy_parse(p, "fscache=on", err, sizeof(err)), 0);
	assert_int_equal(nfskeys_attr_policy_parse(p, "acregmin=10", err, sizeof(err)), 0);
	assert_int_equal(nfskeys_attr_policy_parse(p, "cto=off", err, sizeof(err)), 0);
	assert_int_equal(nfskeys_attr_policy_parse(p, "dirty_limit=64M", err, sizeof(err)), 0);
	assert_int_equal(nfskeys_attr_store_set(st, id, p, 0, false), 0);
	nfskeys_attr_policy_clear(p);
	assert_int_equal(nfskeys_attr_policy_parse(p, "cache=full", err, sizeof(err)), 0);
	assert_int_equal(nfskeys_attr_policy_parse(p, "actimeo=30", err, sizeof(err)), 0);
	assert_int_equal(nfskeys_attr_store_set(st, cifs, p, 0, false), 0);
	nfskeys_attr_store_close(st);

	/* finer attributes override what cache=none implies (acregmin drops noac) */
	assert_int_equal(nfskeys_attr_mount_options(ctx, sub, NULL, NULL, &o), 0);
	assert_string_equal(o, "lookupcache=none,fsc,acregmin=10,nocto");
	free(o);
	/* explicit options win and come last */
	assert_int_equal(nfskeys_attr_mount_options(ctx, sub, "nfs4", "vers=4.2,cto,actimeo=3", &o), 0);
	assert_string_equal(o, "lookupcache=none,fsc,vers=4.2,cto,actimeo=3");
	free(o);
	assert_int_equal(nfskeys_attr_mount_options(ctx, cifs, NULL, "cache=none,ro", &o), 0);
	assert_string_equal(o, "actimeo=30,cache=none,ro");
	free(o);
	assert_int_equal(nfskeys_attr_mount_options(ctx, cifs, NULL, NULL, &o), 0);
	assert_string_equal(o, "cache=loose,actimeo=30");
	free(o);
	/* nothing applies: only the explicit options */
	nfskeys_attr_id_free(id);
	assert_int_equal(nfskeys_attr_id_from_spec("other:/x", &id), 0);
	assert_int_equal(nfskeys_attr_mount_options(ctx, id, NULL, "ro", &o), 0);
	assert_string_equal(o, "ro");
	free(o);

	nfskeys_attr_policy_free(p);
	nfskeys_attr_id_free(id);
	nfskeys_attr_id_free(sub);
	nfskeys_attr_id_free(cifs);
	nfskeys_ctx_unref(ctx);
}

/* doc/security/FINDINGS.md D9: which mounts have owners the kernel client makes up, over every
 * combination of the options that decide it, for every type (the rule written out
 * independently of attr_owner_synthesized), plus options as the kernels print them. */
static void test_owner_synthesized(void **state)
{
	static const char *const types[] = { "cifs", "smb3", "afs", "nfs", "nfs4", "tmpfs",
					     "ext4", "fuse.cifs", "fuse", "9p", "cifsx", "" };
	static const char *const opts[] = { "forceuid", "unix", "posix", "cifsacl",
					    "idsfromsid" };
	unsigned checked = 0;

	for (size_t t = 0; t < ARRAY_SIZE(types); t++) {
		for (unsigned m = 0; m < 1u << ARRAY_SIZE(opts); m++) {
			for (int noise = 0; noise < 2; noise++) {
				char o[256];
				bool cifs = streq(types[t], "cifs") || streq(types[t], "smb3");
				bool want;
				size_t len = 0;

				o[0] = '\0';
				if (noise) /* what the kernel prints around them */
					len += (size_t)snprintf(o + len, sizeof(o) - len,
								"rw,vers=3.1.1,uid=1000,noforceuid,"
								"nounix,forcegid,");
				for (size_t i = 0; i < ARRAY_SIZE(opts); i++)
					if (m & (1u << i))
						len += (size_t)snprintf(o + len, sizeof(o) - len,
									"%s,", opts[i]);
				if (len)
					o[len - 1] = '\0';
				if (streq(types[t], "afs"))
					want = true;
				else if (!cifs)
					want = false;
				else if (m & 1u) /* forceuid */
					want = true;
				else
					want = (m & 0x1eu) == 0;
				if (attr_owner_synthesized(types[t], o) != want)
					fail_msg("%s \"%s\": expected %s", types[t], o,
						 want ? "made up" : "real");
				checked++;
			}
		}
	}
	assert_int_equal(checked, ARRAY_SIZE(types) * 32 * 2);
	/* as mountinfo shows them */
	assert_true(attr_owner_synthesized("cifs", "rw,vers=3.1.1,cache=strict,username=u,"
					   "uid=1000,forceuid,gid=0,noforcegid,addr=10.0.0.1,"
					   "file_mode=0755,dir_mode=0755,soft,nounix,serverino"));
	assert_true(attr_owner_synthesized("smb3", "rw,vers=3.1.1,uid=1000,noforceuid,nounix"));
	assert_false(attr_owner_synthesized("cifs", "rw,vers=1.0,uid=0,noforceuid,unix,"
					    "posixpaths,serverino"));
	assert_false(attr_owner_synthesized("cifs", "rw,vers=3.1.1,uid=0,noforceuid,nounix,"
					    "cifsacl,multiuser"));
	/* option names are whole words: neither "nounix" nor "unix_x" is "unix" */
	assert_true(attr_owner_synthesized("cifs", "nounix,unix_x,xcifsacl,posixpaths"));
	assert_false(attr_owner_synthesized("cifs", "posix=1"));
	assert_true(attr_owner_synthesized("afs", NULL));
	assert_true(attr_owner_synthesized("cifs", NULL));
	assert_false(attr_owner_synthesized(NULL, "forceuid"));
	assert_false(attr_owner_synthesized("nfs4", "rw,forceuid"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vocabulary),
		cmocka_unit_test(test_vocabulary_errors),
		cmocka_unit_test(test_policy),
		cmocka_unit_test_setup_teardown(test_wb_apply, setup, teardown),
		cmocka_unit_test(test_owner_synthesized),
		cmocka_unit_test_setup_teardown(test_mount_options, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
