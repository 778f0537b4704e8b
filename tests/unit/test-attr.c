/* Directory attributes, library side: the vocabulary and its error messages, policy
 * objects, directory identity on recorded mountinfo samples (nfs, nfs4, cifs, afs,
 * local bind mounts) and on this machine's own mount table, the index's inheritance
 * rules over deep trees, the SQLite store (restart, migration from schema 1, newer
 * schema refused) and policy -> mount options. */
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

/* A context whose store lives in the test directory. */
static struct nfskeys_ctx *test_ctx(void)
{
	return tu_ctx_conf("[Attr]\nStore = %s/attr.db\n[Attrd]\nSocket = %s/attrd.sock\n", tu_dir,
			   tu_dir);
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

/* ---------------------------------------------------------------- identity */

/* Recorded from real clients (options trimmed where long; the fields libmount reads are
 * as the kernel writes them). */
static const char mountinfo_sample[] =
	"26 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard\n"
	"44 26 254:0 /srv/export/a /srv/bind rw,relatime - ext4 /dev/vda rw,discard\n"
	"412 26 0:52 / /mnt/home rw,relatime shared:230 - nfs4 fileserver.example.com:/export/home "
	"rw,vers=4.2,rsize=1048576,wsize=1048576,namlen=255,hard,proto=tcp,timeo=600,retrans=2,"
	"sec=sys,clientaddr=192.168.1.10,local_lock=none,addr=192.168.1.2\n"
	"413 26 0:52 / /srv/projects rw,relatime shared:231 - nfs4 "
	"FileServer.Example.com:/export/home/projects rw,vers=4.2,hard,proto=tcp,sec=sys,"
	"addr=192.168.1.2\n"
	"415 26 0:53 / /mnt/data rw,relatime shared:233 - nfs 192.168.1.2:/export/data rw,vers=3,"
	"rsize=1048576,wsize=1048576,namlen=255,hard,proto=tcp,timeo=600,retrans=2,sec=sys,"
	"mountaddr=192.168.1.2,mountvers=3,mountport=20048,mountproto=udp,local_lock=none,"
	"addr=192.168.1.2\n"
	"420 26 0:55 / /mnt/v6 rw,relatime shared:240 - nfs4 [fd00::2]:/export rw,vers=4.2,"
	"addr=fd00::2\n"
	"421 26 0:56 / /mnt/with\\040space rw,relatime - nfs4 srv:/export/with\\040space rw,vers=4.1\n"
	"450 26 0:60 / /mnt/share rw,relatime shared:250 - cifs //winsrv/Public rw,vers=3.1.1,"
	"cache=strict,username=alice,uid=1000,noforceuid,gid=1000,noforcegid,addr=192.168.1.5,"
	"file_mode=0755,dir_mode=0755,soft,nounix,serverino,mapposix,rsize=4194304,wsize=4194304,"
	"bsize=1048576,echo_interval=60,actimeo=1,closetimeo=1\n"
	"451 26 0:61 / /mnt/docs rw,relatime shared:251 - cifs //WINSRV/public/Team/Docs "
	"rw,vers=3.1.1,cache=strict,addr=192.168.1.5\n"
	"452 26 0:60 /Team /mnt/team rw,relatime shared:252 - cifs //winsrv/Public rw,vers=3.1.1\n"
	"453 26 0:62 /Team/Docs /mnt/docs2 rw,relatime - cifs //winsrv/public/Team/Docs rw\n"
	"460 26 0:70 / /afs rw,relatime shared:260 - afs none rw,autocell\n"
	"461 460 0:71 / /afs/example.com rw,relatime shared:261 - afs %example.com:root.cell. rw\n"
	"462 461 0:72 / /afs/example.com/user/alice rw,relatime shared:262 - afs "
	"%example.com:user.alice. rw\n"
	"463 460 0:73 / /afs/.example.com rw,relatime - afs #Example.COM:root.cell.readonly. rw\n"
	"470 26 0:80 / /tmp rw,nosuid,nodev - tmpfs tmpfs rw,size=1024k\n";

static struct libmnt_table *sample_table(void)
{
	char path[128];
	FILE *f;
	struct libmnt_table *tb;

	snprintf(path, sizeof(path), "%s/mountinfo", tu_dir);
	f = fopen(path, "we");
	assert_non_null(f);
	fputs(mountinfo_sample, f);
	fclose(f);
	tb = mnt_new_table_from_file(path);
	assert_non_null(tb);
	return tb;
}

static void expect_id(struct libmnt_table *tb, const char *path, const char *domain,
		      const char *inside)
{
	struct nfskeys_attr_id *id = NULL;
	int r = attr_id_from_table(tb, path, &id);

	if (r < 0)
		fail_msg("%s: %s", path, strerror(-r));
	if (!streq(nfskeys_attr_id_get_domain(id), domain) ||
	    !streq(nfskeys_attr_id_get_path(id), inside))
		fail_msg("%s: got %s %s, expected %s %s", path, nfskeys_attr_id_get_domain(id),
			 nfskeys_attr_id_get_path(id), domain, inside);
	nfskeys_attr_id_free(id);
}

static void test_id_samples(void **state)
{
	struct libmnt_table *tb = sample_table();
	struct nfskeys_attr_id *id = NULL;

	/* nfs4: the export path plus the path inside it */
	expect_id(tb, "/mnt/home", "nfs://fileserver.example.com", "/export/home");
	expect_id(tb, "/mnt/home/alice/src", "nfs://fileserver.example.com", "/export/home/alice/src");
	/* a subtree mount of the same export (server name in another case) lands on the
	 * same identity as the path through the first mount */
	expect_id(tb, "/srv/projects/x", "nfs://fileserver.example.com", "/export/home/projects/x");
	expect_id(tb, "/mnt/home/projects/x", "nfs://fileserver.example.com", "/export/home/projects/x");
	/* nfs (v3) by address, IPv6, escaped spaces */
	expect_id(tb, "/mnt/data/db", "nfs://192.168.1.2", "/export/data/db");
	expect_id(tb, "/mnt/v6/a", "nfs://[fd00::2]", "/export/a");
	expect_id(tb, "/mnt/with space/d", "nfs://srv", "/export/with space/d");
	/* cifs: server and share are case-insensitive, the prefix path kept; a bind mount
	 * of a subdirectory (root field) and a prefix-path mount agree */
	expect_id(tb, "/mnt/share/Dir", "cifs://winsrv/public", "/Dir");
	expect_id(tb, "/mnt/docs/x", "cifs://winsrv/public", "/Team/Docs/x");
	expect_id(tb, "/mnt/team/Docs/x", "cifs://winsrv/public", "/Team/Docs/x");
	expect_id(tb, "/mnt/docs2/x", "cifs://winsrv/public", "/Team/Docs/x");
	/* afs: cell and volume; the read-only replica shares the volume's policy; the
	 * dynamic root has no volume and falls back to the device identity */
	expect_id(tb, "/afs/example.com/user/alice/www", "afs://example.com/user.alice", "/www");
	expect_id(tb, "/afs/example.com/proj", "afs://example.com/root.cell", "/proj");
	expect_id(tb, "/afs/.example.com/proj", "afs://example.com/root.cell", "/proj");
	expect_id(tb, "/afs", "local://0:70", "/");
	/* local: device identity, the bind mount's root places it in the filesystem */
	expect_id(tb, "/srv/bind/x", "local://254:0", "/srv/export/a/x");
	expect_id(tb, "/srv/export/a/x", "local://254:0", "/srv/export/a/x");
	expect_id(tb, "/tmp/q", "local://0:80", "/q");
	/* ".." leads out of a mount: the identity is where it leads (found by fuzz-mountinfo,
	 * which got nfs://.../etc out of an export for this path) */
	expect_id(tb, "/mnt/home/../../etc", "local://254:0", "/etc");
	expect_id(tb, "/mnt/home/alice/../bob/./src", "nfs://fileserver.example.com",
		  "/export/home/bob/src");
	expect_id(tb, "/afs/.example.com//../x", "local://0:70", "/x"); /* on /afs */

	assert_int_equal(attr_id_from_table(tb, "relative", &id), -EINVAL);
	mnt_unref_table(tb);
}

static void expect_spec(const char *spec, const char *domain, const char *inside)
{
	struct nfskeys_attr_id *id = NULL;

	assert_int_equal(nfskeys_attr_id_from_spec(spec, &id), 0);
	assert_string_equal(nfskeys_attr_id_get_domain(id), domain);
	assert_string_equal(nfskeys_attr_id_get_path(id), inside);
	nfskeys_attr_id_free(id);
}

static void test_id_spec(void **state)
{
	struct nfskeys_attr_id *id = NULL;

	expect_spec("FileServer.example.com:/export/home/", "nfs://fileserver.example.com",
		    "/export/home");
	expect_spec("srv:/export//a/./b/../c", "nfs://srv", "/export/a/c");
	expect_spec("[fd00::2]:/x", "nfs://[fd00::2]", "/x");
	expect_spec("//WinSrv/Public/Team", "cifs://winsrv/public", "/Team");
	expect_spec("\\\\winsrv\\public", "cifs://winsrv/public", "/");
	expect_spec("example.com:user.alice/www", "afs://example.com/user.alice", "/www");
	expect_spec("%example.com:root.cell.", "afs://example.com/root.cell", "/");
	assert_int_equal(nfskeys_attr_id_from_spec("/just/a/path", &id), -EINVAL);
	assert_int_equal(nfskeys_attr_id_from_spec("//server", &id), -EINVAL);
	assert_int_equal(nfskeys_attr_id_from_spec("srv:", &id), -EINVAL);
	assert_null(id);

	assert_int_equal(nfskeys_attr_id_new("nfs://srv", "/a//b/", &id), 0);
	assert_string_equal(nfskeys_attr_id_get_path(id), "/a/b");
	assert_null(nfskeys_attr_id_get_mountpoint(id));
	nfskeys_attr_id_free(id);
	id = NULL;
	assert_int_equal(nfskeys_attr_id_new("http://srv", "/a", &id), -EINVAL);
	assert_int_equal(nfskeys_attr_id_new("nfs://", "/a", &id), -EINVAL);
	assert_int_equal(nfskeys_attr_id_new("nfs://srv", "a", &id), -EINVAL);
	assert_int_equal(nfskeys_attr_id_new("nfs://s rv", "/a", &id), -EINVAL);
	assert_null(id);
}

/* This machine's own mount table: a directory reached through a bind mount has the same
 * identity as through its real path (in a private mount namespace when root). */
static void test_id_live(void **state)
{
	struct nfskeys_ctx *ctx = test_ctx();
	struct nfskeys_attr_id *a = NULL, *b = NULL;
	char src[128], dst[128], sub[160], viadst[160];

	snprintf(src, sizeof(src), "%s/export", tu_dir);
	snprintf(dst, sizeof(dst), "%s/mnt", tu_dir);
	snprintf(sub, sizeof(sub), "%s/sub", src);
	snprintf(viadst, sizeof(viadst), "%s/sub", dst);
	assert_int_equal(mkdir(src, 0755), 0);
	assert_int_equal(mkdir(dst, 0755), 0);
	assert_int_equal(mkdir(sub, 0755), 0);

	assert_int_equal(nfskeys_attr_id_from_path(ctx, sub, &a), 0);
	assert_string_equal(nfskeys_attr_id_get_mountpoint(a) ? "" : "x", "");
	assert_int_equal(nfskeys_attr_id_from_path(ctx, "/nonexistent-nfskeys", &b), -ENOENT);
	assert_int_equal(nfskeys_attr_id_from_path(ctx, "/etc/passwd", &b), -ENOTDIR);

	if (geteuid() != 0 || unshare(CLONE_NEWNS) < 0 ||
	    mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount(src, dst, "none", MS_BIND, NULL) < 0) {
		nfskeys_attr_id_free(a);
		nfskeys_ctx_unref(ctx);
		skip(); /* needs root for a private mount namespace */
		return;
	}
	assert_int_equal(nfskeys_attr_id_from_path(ctx, viadst, &b), 0);
	assert_string_equal(nfskeys_attr_id_get_domain(a), nfskeys_attr_id_get_domain(b));
	assert_string_equal(nfskeys_attr_id_get_path(a), nfskeys_attr_id_get_path(b));
	assert_string_equal(nfskeys_attr_id_get_mountpoint(b), dst);
	assert_true(startswith(nfskeys_attr_id_get_domain(b), "local://"));
	umount(dst);
	nfskeys_attr_id_free(a);
	nfskeys_attr_id_free(b);
	nfskeys_ctx_unref(ctx);
}

/* ---------------------------------------------------------------- index */

static void put(struct attr_index *ix, const char *path, const char *kv, bool ldap)
{
	char key[64], err[256], *v = NULL;
	const char *eq = strchr(kv, '=');
	uint64_t number;
	int k;

	snprintf(key, sizeof(key), "%.*s", (int)(eq - kv), kv);
	k = attr_key_parse(key, err, sizeof(err));
	assert_true(k >= 0);
	assert_int_equal(attr_value_parse(k, key, eq + 1, &v, &number, err, sizeof(err)), 0);
	assert_int_equal(attr_index_put(ix, "nfs://srv", path, k, key, v, number, ldap), 0);
	free(v);
}

static void expect_eff(struct attr_index *ix, struct nfskeys_attr_policy *p, const char *path,
		       const char *key, const char *value, const char *source)
{
	struct nfskeys_attr_entry e;
	int r;

	assert_int_equal(attr_index_resolve(ix, "nfs://srv", path, NFSKEYS_ATTR_SOURCES, p), 0);
	r = nfskeys_attr_policy_get(p, key, &e);
	if (!value) {
		if (r != -ENOENT)
			fail_msg("%s: %s should be unset, is %s from %s", path, key, e.value, e.source);
		return;
	}
	if (r < 0)
		fail_msg("%s: %s unset, expected %s", path, key, value);
	if (!streq(e.value, value) || !streq(e.source, source))
		fail_msg("%s: %s=%s from %s, expected %s from %s", path, key, e.value, e.source, value,
			 source);
}

static void test_index_inheritance(void **state)
{
	struct attr_index *ix = NULL;
	struct nfskeys_attr_policy *p = NULL;
	char deep[512] = "/export", src[600];

	assert_int_equal(attr_index_new(&ix), 0);
	assert_int_equal(nfskeys_attr_policy_new(&p), 0);
	for (int i = 0; i < 24; i++)
		snprintf(deep + strlen(deep), sizeof(deep) - strlen(deep), "/d%d", i);

	put(ix, "/", "cache=full", false);
	put(ix, "/export", "actimeo=60", false);
	put(ix, "/export/d0/d1/d2", "cache=read", false);
	put(ix, "/export/d0/d1/d2/d3/d4/d5/d6/d7", "inherit=no", false);
	put(ix, "/export/d0/d1/d2/d3/d4/d5/d6/d7", "cto=off", false);
	put(ix, "/export/d0/d1/d2/d3/d4/d5/d6/d7/d8/d9", "user.team=ops", false);
	put(ix, "/export/d0/d1/d2/d3/d4/d5/d6/d7/d8/d9/d10/d11/d12/d13/d14/d15", "acregmax=5m",
	    false);
	assert_int_equal(attr_index_count(ix), 6);

	/* nearest ancestor per attribute */
	expect_eff(ix, p, "/export/d0", "cache", "full", "nfs://srv/");
	expect_eff(ix, p, "/export/d0", "actimeo", "60", "nfs://srv/export");
	expect_eff(ix, p, "/export/d0/d1/d2/d3", "cache", "read", "nfs://srv/export/d0/d1/d2");
	expect_eff(ix, p, "/export/d0/d1/d2/d3", "actimeo", "60", "nfs://srv/export");
	assert_null(nfskeys_attr_policy_cut(p));
	/* below inherit=no nothing from above applies, the cut directory's own do */
	snprintf(src, sizeof(src), "nfs://srv%s", deep);
	expect_eff(ix, p, deep, "cache", NULL, NULL);
	expect_eff(ix, p, deep, "actimeo", NULL, NULL);
	expect_eff(ix, p, deep, "cto", "off", "nfs://srv/export/d0/d1/d2/d3/d4/d5/d6/d7");
	assert_string_equal(nfskeys_attr_policy_cut(p), "nfs://srv/export/d0/d1/d2/d3/d4/d5/d6/d7");
	expect_eff(ix, p, deep, "user.team", "ops", "nfs://srv/export/d0/d1/d2/d3/d4/d5/d6/d7/d8/d9");
	expect_eff(ix, p, deep, "acregmax", "300",
		   "nfs://srv/export/d0/d1/d2/d3/d4/d5/d6/d7/d8/d9/d10/d11/d12/d13/d14/d15");
	/* inherit is reported on the directory that sets it only */
	expect_eff(ix, p, "/export/d0/d1/d2/d3/d4/d5/d6/d7", "inherit", "no",
		   "nfs://srv/export/d0/d1/d2/d3/d4/d5/d6/d7");
	expect_eff(ix, p, "/export/d0/d1/d2/d3/d4/d5/d6/d7/d8", "inherit", NULL, NULL);
	/* paths beyond what the index knows, and other domains */
	expect_eff(ix, p, "/export/zz/yy", "actimeo", "60", "nfs://srv/export");
	assert_int_equal(attr_index_resolve(ix, "nfs://other", "/export", 0, p), 0);
	assert_int_equal(nfskeys_attr_policy_count(p), 0);

	/* explicit: only what is set on the directory itself */
	assert_int_equal(attr_index_explicit(ix, "nfs://srv", "/export/d0/d1/d2/d3/d4/d5/d6/d7", p), 0);
	assert_int_equal(nfskeys_attr_policy_count(p), 2);
	assert_int_equal(attr_index_explicit(ix, "nfs://srv", "/export/d0", p), 0);
	assert_int_equal(nfskeys_attr_policy_count(p), 0);

	/* removing the cut restores inheritance */
	assert_int_equal(attr_index_del(ix, "nfs://srv", "/export/d0/d1/d2/d3/d4/d5/d6/d7",
					NFSKEYS_ATTR_INHERIT, "inherit", false), 0);
	expect_eff(ix, p, deep, "cache", "read", "nfs://srv/export/d0/d1/d2");
	assert_int_equal(attr_index_count(ix), 6);
	assert_int_equal(attr_index_del(ix, "nfs://srv", "/export/d0/d1/d2/d3/d4/d5/d6/d7", -1, NULL,
					false), 0);
	assert_int_equal(attr_index_count(ix), 5);
	expect_eff(ix, p, deep, "cto", NULL, NULL);
	assert_true(attr_index_memory(ix) > 0);

	nfskeys_attr_policy_free(p);
	attr_index_free(ix);
}

static void test_index_origin(void **state)
{
	struct attr_index *ix = NULL;
	struct nfskeys_attr_policy *p = NULL;
	struct nfskeys_attr_entry e;

	assert_int_equal(attr_index_new(&ix), 0);
	assert_int_equal(nfskeys_attr_policy_new(&p), 0);
	put(ix, "/export", "cache=none", true);
	put(ix, "/export", "actimeo=10", true);
	put(ix, "/export", "cache=full", false);
	/* a local value wins over an LDAP-sourced one on the same directory */
	assert_int_equal(attr_index_resolve(ix, "nfs://srv", "/export/x", 0, p), 0);
	assert_int_equal(nfskeys_attr_policy_get(p, "cache", &e), 0);
	assert_string_equal(e.value, "full");
	assert_false(e.from_ldap);
	assert_int_equal(nfskeys_attr_policy_get(p, "actimeo", &e), 0);
	assert_true(e.from_ldap);
	/* removing the local one uncovers the LDAP one */
	assert_int_equal(attr_index_del(ix, "nfs://srv", "/export", NFSKEYS_ATTR_CACHE, "cache", false), 0);
	assert_int_equal(attr_index_resolve(ix, "nfs://srv", "/export", 0, p), 0);
	assert_int_equal(nfskeys_attr_policy_get(p, "cache", &e), 0);
	assert_string_equal(e.value, "none");
	assert_true(e.from_ldap);
	nfskeys_attr_policy_free(p);
	attr_index_free(ix);
}

/* The path-compressed trie against a brute-force resolver: random policies on random
 * paths of a small-fanout tree (so that edges are split in every way), including
 * inherit=no, removals and paths that end inside edges. */
struct ref_entry {
	char path[128];
	int key;	/* 0 cache, 1 actimeo, 2 inherit */
	char value[16];
	bool live;
};

static bool is_prefix_dir(const char *dirp, const char *q)
{
	size_t n = strlen(dirp);

	if (streq(dirp, "/"))
		return true;
	return strncmp(q, dirp, n) == 0 && (q[n] == '\0' || q[n] == '/');
}

static int depth_of(const char *p)
{
	int d = 0;

	if (streq(p, "/"))
		return 0;
	for (; *p; p++)
		d += *p == '/';
	return d;
}

/* The lookup path without sources (cached effective sets per node, dropped on every
 * change) against the one with sources (a walk that overlays each level): the same
 * entries in the same order, after every change of a random sequence of sets and
 * removals of typed and user.* attributes, local and LDAP-sourced, with inherit=no. */
static void cached_sets_round(uint32_t prefetch_min)
{
	static const char *const kvs[][2] = { { "cache", "none" },   { "cache", "full" },
					      { "actimeo", "7" },    { "inherit", "no" },
					      { "inherit", "yes" },  { "user.b", "x" },
					      { "user.a", "y" },     { "dirty_limit", "1M" } };
	static const char *const comps[] = { "a", "bb", "long-component-name", "c", "8-bytes!",
					     "sixteen-bytes-xx" };
	struct nfskeys_attr_policy *fast = NULL, *slow = NULL;
	struct attr_index *ix = NULL;
	uint32_t seed = 777;

#define RND() (seed = seed * 1103515245u + 12345u, (seed >> 16) & 0x7fff)
	assert_int_equal(nfskeys_attr_policy_new(&fast), 0);
	assert_int_equal(nfskeys_attr_policy_new(&slow), 0);
	assert_int_equal(attr_index_new(&ix), 0);
	attr_index_set_fp_min(ix, prefetch_min);
	for (int step = 0; step < 400; step++) {
		char path[256] = "", err[256], *v = NULL;
		int depth = (int)(RND() % 6), kv = (int)(RND() % ARRAY_SIZE(kvs)), k;
		bool ldap = RND() % 3 == 0;
		uint64_t number;
		size_t len = 0;

		for (int l = 0; l < depth; l++)
			len += (size_t)snprintf(path + len, sizeof(path) - len, "/%s", comps[RND() % 6]);
		if (depth == 0)
			strcpy(path, "/");
		k = attr_key_parse(kvs[kv][0], err, sizeof(err));
		assert_true(k >= 0);
		if (step % 100 == 99)
			attr_index_compact(ix); /* and grow again after */
		if (RND() % 5 == 0) {
			assert_int_equal(attr_index_del(ix, "nfs://c", path, k, kvs[kv][0], ldap), 0);
		} else {
			assert_int_equal(attr_value_parse(k, kvs[kv][0], kvs[kv][1], &v, &number, err,
							  sizeof(err)), 0);
			assert_int_equal(attr_index_put(ix, "nfs://c", path, k, kvs[kv][0], v, number,
							 ldap), 0);
			free(v);
		}
		for (int q = 0; q < 20; q++) {
			char qp[300] = "";
			int qd = (int)(RND() % 8);

			len = 0;
			for (int l = 0; l < qd; l++)
				len += (size_t)snprintf(qp + len, sizeof(qp) - len, "/%s",
							comps[RND() % 6]);
			if (qd == 0)
				strcpy(qp, "/");
			assert_int_equal(attr_index_resolve(ix, "nfs://c", qp, 0, fast), 0);
			assert_int_equal(attr_index_resolve(ix, "nfs://c", qp, NFSKEYS_ATTR_SOURCES, slow), 0);
			if (nfskeys_attr_policy_count(fast) != nfskeys_attr_policy_count(slow))
				fail_msg("step %d %s: %zu entries, with sources %zu", step, qp,
					 nfskeys_attr_policy_count(fast), nfskeys_attr_policy_count(slow));
			for (size_t i = 0; i < nfskeys_attr_policy_count(fast); i++) {
				struct nfskeys_attr_entry a, b;
				assert_int_equal(nfskeys_attr_policy_entry(fast, i, &a), 0);
				assert_int_equal(nfskeys_attr_policy_entry(slow, i, &b), 0);
				if (!streq(a.key, b.key) || !streq(a.value, b.value) ||
				    a.number != b.number || a.from_ldap != b.from_ldap)
					fail_msg("step %d %s #%zu: %s=%s%s, with sources %s=%s%s", step, qp,
						 i, a.key, a.value, a.from_ldap ? " [ldap]" : "", b.key,
						 b.value, b.from_ldap ? " [ldap]" : "");
				assert_null(a.source);
			}
		}
	}
#undef RND
	assert_true(attr_index_memory(ix) > 0);
	nfskeys_attr_policy_free(fast);
	nfskeys_attr_policy_free(slow);
	attr_index_free(ix);
}

/* both lookup paths: small-index (hash while walking) and prefetching; and once more with
 * every table in its own huge-page mapping, as in a large index (grown, rehashed and cut
 * back by compaction through mmap/munmap rather than realloc) */
static void test_index_cached_sets(void **state)
{
	cached_sets_round(UINT32_MAX);
	cached_sets_round(0);
	attr_index_set_big_min(1);
	cached_sets_round(0);
	attr_index_set_big_min(0);
}

static void test_index_random(void **state)
{
	static const char *const names[] = { "cache", "actimeo", "inherit" };
	static const char *const vals[3][3] = { { "none", "read", "full" },
						{ "1", "2", "3" },
						{ "no", "yes", "no" } };
	enum { N = 600, Q = 3000 };
	struct ref_entry *ref = calloc(N, sizeof(*ref));
	struct attr_index *ix = NULL;
	struct nfskeys_attr_policy *p = NULL;
	uint32_t seed = 12345;

#define RND() (seed = seed * 1103515245u + 12345u, (seed >> 16) & 0x7fff)
	assert_non_null(ref);
	assert_int_equal(attr_index_new(&ix), 0);
	attr_index_set_fp_min(ix, 0); /* the large-index lookup path */
	assert_int_equal(nfskeys_attr_policy_new(&p), 0);
	for (int i = 0; i < N; i++) {
		int depth = (int)(RND() % 7);
		size_t len = 0;
		uint64_t number;
		char *v = NULL;

		ref[i].path[0] = '\0';
		for (int l = 0; l < depth; l++)
			len += (size_t)snprintf(ref[i].path + len, sizeof(ref[i].path) - len, "/%s",
						(const char *[]){ "a", "bb", "a.b", "long-name-x",
										   "8-bytes!" }[RND() % 5]);
		if (depth == 0)
			strcpy(ref[i].path, "/");
		ref[i].key = (int)(RND() % 3);
		if (ref[i].key == 2 && RND() % 4)
			ref[i].key = 0; /* keep cuts rare */
		snprintf(ref[i].value, sizeof(ref[i].value), "%s", vals[ref[i].key][RND() % 3]);
		ref[i].live = true;
		/* later entries on the same (path, key) replace earlier ones */
		for (int j = 0; j < i; j++)
			if (ref[j].live && ref[j].key == ref[i].key && streq(ref[j].path, ref[i].path))
				ref[j].live = false;
		{
			int k = attr_key_parse(names[ref[i].key], NULL, 0);
			assert_int_equal(attr_value_parse(k, names[ref[i].key], ref[i].value, &v, &number,
							  NULL, 0), 0);
			assert_int_equal(attr_index_put(ix, "nfs://r", ref[i].path, k, names[ref[i].key], v,
							 number, false), 0);
			free(v);
		}
		/* now and then remove one */
		if (RND() % 10 == 0) {
			int j = (int)(RND() % (unsigned)(i + 1));
			if (ref[j].live) {
				ref[j].live = false;
				assert_int_equal(attr_index_del(ix, "nfs://r", ref[j].path,
								attr_key_parse(names[ref[j].key], NULL, 0),
								names[ref[j].key], false), 0);
			}
		}
	}
	for (int q = 0; q < Q; q++) {
		char path[160];
		int depth = (int)(RND() % 9);
		size_t len = 0;
		const char *want[3] = { NULL, NULL, NULL };
		int wdepth[3] = { -1, -1, -1 }, cut = -1;

		path[0] = '\0';
		for (int l = 0; l < depth; l++)
			len += (size_t)snprintf(path + len, sizeof(path) - len, "/%s",
						(const char *[]){ "a", "bb", "a.b", "long-name-x", "zz",
										   "8-bytes!" }[RND() % 6]);
		if (depth == 0)
			strcpy(path, "/");
		/* reference: the deepest inherit=no among the ancestors cuts */
		for (int i = 0; i < N; i++)
			if (ref[i].live && ref[i].key == 2 && streq(ref[i].value, "no") &&
			    is_prefix_dir(ref[i].path, path))
				cut = MAX(cut, depth_of(ref[i].path));
		for (int i = 0; i < N; i++) {
			int d;
			if (!ref[i].live || !is_prefix_dir(ref[i].path, path))
				continue;
			d = depth_of(ref[i].path);
			if (d < cut || d < wdepth[ref[i].key])
				continue;
			if (ref[i].key == 2 && !streq(ref[i].path, path))
				continue; /* inherit is not inherited */
			wdepth[ref[i].key] = d;
			want[ref[i].key] = ref[i].value;
		}
		assert_int_equal(attr_index_resolve(ix, "nfs://r", path, 0, p), 0);
		for (int k = 0; k < 3; k++) {
			struct nfskeys_attr_entry e;
			int r = nfskeys_attr_policy_get(p, names[k], &e);
			if (!want[k] && r == 0)
				fail_msg("%s: %s=%s, expected unset", path, names[k], e.value);
			if (want[k] && (r < 0 || !streq(e.value, want[k])))
				fail_msg("%s: %s=%s, expected %s", path, names[k], r < 0 ? "(unset)" : e.value,
					 want[k]);
		}
	}
#undef RND
	nfskeys_attr_policy_free(p);
	attr_index_free(ix);
	free(ref);
}

static void expect_cache(struct attr_index *ix, const char *path, const char *want)
{
	struct nfskeys_attr_policy *fast = NULL, *slow = NULL;
	struct nfskeys_attr_entry e;

	assert_int_equal(nfskeys_attr_policy_new(&fast), 0);
	assert_int_equal(nfskeys_attr_policy_new(&slow), 0);
	assert_int_equal(attr_index_resolve(ix, "nfs://f", path, 0, fast), 0);
	assert_int_equal(attr_index_resolve(ix, "nfs://f", path, NFSKEYS_ATTR_SOURCES, slow), 0);
	if (!want) {
		assert_int_equal(nfskeys_attr_policy_count(fast), 0);
	} else {
		if (nfskeys_attr_policy_get(fast, "cache", &e) < 0 || !streq(e.value, want))
			fail_msg("%.60s: cache=%s, expected %s", path,
				 nfskeys_attr_policy_get(fast, "cache", &e) < 0 ? "(unset)" : e.value,
				 want);
		assert_int_equal(nfskeys_attr_policy_get(slow, "cache", &e), 0);
		assert_string_equal(e.value, want);
	}
	nfskeys_attr_policy_free(fast);
	nfskeys_attr_policy_free(slow);
}

static void put_cache(struct attr_index *ix, const char *path, const char *value)
{
	uint64_t number;
	char *v = NULL;

	assert_int_equal(attr_value_parse(NFSKEYS_ATTR_CACHE, "cache", value, &v, &number, NULL, 0), 0);
	assert_int_equal(attr_index_put(ix, "nfs://f", path, NFSKEYS_ATTR_CACHE, "cache", v, number,
					false), 0);
	free(v);
}

/* The fingerprint table: stored paths whose fingerprints collide under the key are
 * found out (when one is added, and when a key is set) and a new key drawn, so both keep
 * their own policy; queries deeper than the table looks (48 components) and components
 * too long for any label still find the nearest stored ancestor. */
static void test_index_fingerprints(void **state)
{
	struct attr_index *ix = NULL;
	char *deep = malloc(70000), *longc = malloc(70100);
	size_t len = 0;

	assert_non_null(deep);
	assert_non_null(longc);
	/* at K = 2, /a/c and /b/a collide: 2 * ("a" - "b") + ("c" - "a") = 0 in the words
	 * (length | bytes << 16) of fp_comp() */
	assert_int_equal(attr_index_new(&ix), 0);
	attr_index_set_fp_min(ix, 0);
	put_cache(ix, "/a/c", "none");
	assert_int_equal(attr_index_set_fpkey(ix, 2), 0); /* one path: no collision */
	assert_int_equal(attr_index_set_fpkey(ix, 1), -EINVAL);
	put_cache(ix, "/b/a", "full"); /* collides: a new key is drawn */
	expect_cache(ix, "/a/c", "none");
	expect_cache(ix, "/b/a", "full");
	expect_cache(ix, "/b/a/x/y", "full");
	expect_cache(ix, "/a/c/y", "none");
	expect_cache(ix, "/a", NULL);
	assert_int_equal(attr_index_set_fpkey(ix, 2), 1); /* both stored: collide, redrawn */
	expect_cache(ix, "/a/c", "none");
	expect_cache(ix, "/b/a", "full");
	assert_int_equal(attr_index_set_fpkey(ix, 3), 0); /* no collision at K = 3 */
	expect_cache(ix, "/a/c/d", "none");
	expect_cache(ix, "/b/a/d", "full");

	/* 60 components deep, policies at depths 10, 47, 48, 49 and 55 */
	for (int l = 1; l <= 60; l++) {
		len += (size_t)snprintf(deep + len, 70000 - len, "/c%d", l);
		if (l == 10 || l == 47 || l == 48 || l == 49 || l == 55)
			put_cache(ix, deep, (const char *[]){ "none", "read", "full" }[l % 3]);
	}
	expect_cache(ix, deep, "read"); /* from depth 55 */
	for (int cut = 60; len > 0 && cut >= 9; cut--) {
		const char *want = cut >= 55 ? "read" : cut >= 49 ? "read" : cut >= 48 ? "none" :
				   cut >= 47 ? "full" : cut >= 10 ? "read" : NULL;

		expect_cache(ix, deep, want);
		while (len > 0 && deep[--len] != '/')
			;
		deep[len] = '\0';
	}
	/* the same path in another domain is another directory */
	{
		struct nfskeys_attr_policy *p = NULL;
		struct nfskeys_attr_entry e;

		assert_int_equal(nfskeys_attr_policy_new(&p), 0);
		assert_int_equal(attr_index_put(ix, "cifs://g/share", "/c1/c2", NFSKEYS_ATTR_CACHE,
						"cache", "full", 2, false), 0);
		assert_int_equal(attr_index_resolve(ix, "cifs://g/share", "/c1/c2/c3", 0, p), 0);
		assert_int_equal(nfskeys_attr_policy_get(p, "cache", &e), 0);
		assert_string_equal(e.value, "full");
		assert_int_equal(attr_index_resolve(ix, "cifs://g/share", "/c1", 0, p), 0);
		assert_int_equal(nfskeys_attr_policy_count(p), 0);
		nfskeys_attr_policy_free(p);
		expect_cache(ix, "/c1/c2/c3", NULL); /* nfs://f: nothing above depth 10 */
	}
	/* a component of 70 000 bytes: no label is that long */
	memset(longc, 'x', 70099);
	memcpy(longc, "/c1/c2/c3/c4/c5/c6/c7/c8/c9/c10/", 32);
	longc[70099] = '\0';
	expect_cache(ix, longc, "read");
	free(deep);
	free(longc);
	attr_index_free(ix);
}

/* A path that leaves a path-compressed edge inside a component: the edge "a.b/a/export/x"
 * against "a.b/ab/y" splits after "a.b", not after "a.b/a" (which once made /a.b/ab/y
 * unreachable by the walk; found by fuzz-attr-index).  Both lookup paths, both orders. */
static void test_index_split_inside_component(void **state)
{
	for (int fp = 0; fp < 2; fp++) {
		for (int order = 0; order < 2; order++) {
			struct attr_index *ix = NULL;

			assert_int_equal(attr_index_new(&ix), 0);
			attr_index_set_fp_min(ix, fp ? 0 : UINT32_MAX);
			put_cache(ix, order ? "/a.b/ab/y" : "/a.b/a/export/x", order ? "full" : "none");
			put_cache(ix, order ? "/a.b/a/export/x" : "/a.b/ab/y", order ? "none" : "full");
			expect_cache(ix, "/a.b/ab/y", "full");
			expect_cache(ix, "/a.b/ab/y/z", "full");
			expect_cache(ix, "/a.b/a/export/x", "none");
			expect_cache(ix, "/a.b/a/export/x/z", "none");
			expect_cache(ix, "/a.b/a", NULL);
			expect_cache(ix, "/a.b/ab", NULL);
			expect_cache(ix, "/a.b", NULL);
			put_cache(ix, "/a.b/abc", "read"); /* and a longer sibling component */
			expect_cache(ix, "/a.b/abc/q", "read");
			expect_cache(ix, "/a.b/ab/y", "full");
			attr_index_free(ix);
		}
	}
}

/* Setting one directory's attributes over and over (the same value again, a new value
 * every time, removing and setting again) leaves the index's memory bounded: outgrown
 * blocks and values nobody uses any more are collected.  100k rounds; and the same for
 * one key of a policy object set over and over. */
static void test_index_bounded(void **state)
{
	struct nfskeys_attr_policy *p = NULL;
	struct nfskeys_attr_entry e;
	struct attr_index *ix = NULL;
	size_t most = 0;
	char v[32] = "";

	assert_int_equal(attr_index_new(&ix), 0);
	assert_int_equal(nfskeys_attr_policy_new(&p), 0);
	assert_int_equal(attr_index_put(ix, "nfs://b", "/export/other", NFSKEYS_ATTR_CACHE, "cache",
					"read", 1, false), 0);
	for (int i = 0; i < 100000; i++) {
		snprintf(v, sizeof(v), "v%d", i);
		assert_int_equal(attr_index_put(ix, "nfs://b", "/export/a/b", NFSKEYS_ATTR_ACTIMEO,
						"actimeo", "60", 60, false), 0);
		assert_int_equal(attr_index_put(ix, "nfs://b", "/export/a/b", NFSKEYS_ATTR_USER, "user.x",
						v, 0, i % 3 == 0), 0);
		if (i % 2)
			assert_int_equal(attr_index_del(ix, "nfs://b", "/export/a/b", -1, NULL, false), 0);
		if (i % 1000 == 999) { /* a lookup between changes: the computed sets too */
			assert_int_equal(attr_index_resolve(ix, "nfs://b", "/export/a/b/c", 0, p), 0);
			most = MAX(most, attr_index_memory(ix));
		}
	}
	if (most > 256 * 1024)
		fail_msg("index memory grew to %zu bytes over 100k sets of one directory", most);
	/* and it still answers right: the last round set user.x from LDAP and removed the
	 * local ones */
	assert_int_equal(attr_index_resolve(ix, "nfs://b", "/export/a/b/c", 0, p), 0);
	assert_int_equal(nfskeys_attr_policy_count(p), 1);
	assert_int_equal(nfskeys_attr_policy_get(p, "user.x", &e), 0);
	assert_string_equal(e.value, "v99999");
	assert_true(e.from_ldap);
	assert_int_equal(attr_index_put(ix, "nfs://b", "/export/a/b", NFSKEYS_ATTR_USER, "user.x",
					"local", 0, false), 0);
	assert_int_equal(attr_index_resolve(ix, "nfs://b", "/export/a/b/c", 0, p), 0);
	assert_int_equal(nfskeys_attr_policy_get(p, "user.x", &e), 0);
	assert_string_equal(e.value, "local");
	assert_int_equal(attr_index_resolve(ix, "nfs://b", "/export/other", 0, p), 0);
	assert_int_equal(nfskeys_attr_policy_get(p, "cache", &e), 0);
	assert_string_equal(e.value, "read");

	/* the same for a policy object: one key set 100k times (with a source, as lookups
	 * fill them), other entries kept */
	nfskeys_attr_policy_clear(p);
	most = 0;
	assert_int_equal(nfskeys_attr_policy_set(p, "user.keep", "this one", NULL, 0), 0);
	for (int i = 0; i < 100000; i++) {
		snprintf(v, sizeof(v), "%d", i % 3600);
		assert_int_equal(attr_policy_put(p, NFSKEYS_ATTR_ACTIMEO, NULL, v, (uint64_t)(i % 3600),
						 "nfs://b/export/a/long/enough/source", false), 0);
		snprintf(v, sizeof(v), "value-%d", i);
		assert_int_equal(nfskeys_attr_policy_set(p, "user.x", v, NULL, 0), 0);
		most = MAX(most, attr_policy_memory(p));
	}
	if (most > 16 * 1024)
		fail_msg("policy grew to %zu bytes over 100k sets of one key", most);
	assert_int_equal(nfskeys_attr_policy_count(p), 3);
	assert_int_equal(nfskeys_attr_policy_get(p, "actimeo", &e), 0);
	assert_string_equal(e.value, "2799");
	assert_string_equal(e.source, "nfs://b/export/a/long/enough/source");
	assert_int_equal(nfskeys_attr_policy_get(p, "user.keep", &e), 0);
	assert_string_equal(e.value, "this one");
	assert_int_equal(nfskeys_attr_policy_get(p, "user.x", &e), 0);
	assert_string_equal(e.value, "value-99999");
	nfskeys_attr_policy_free(p);
	attr_index_free(ix);
}

/* ---------------------------------------------------------------- store */

static void test_store_restart(void **state)
{
	struct nfskeys_ctx *ctx = test_ctx();
	struct nfskeys_attr_store *st = NULL;
	struct nfskeys_attr_policy *p = NULL, *q = NULL;
	struct nfskeys_attr_id *id = NULL, *below = NULL;
	struct nfskeys_attr_entry e;
	char err[256], path[128];

	snprintf(path, sizeof(path), "%s/attr.db", tu_dir);
	/* reading a store nobody created yet: empty, not an error */
	assert_int_equal(nfskeys_attr_store_open(ctx, NULL, 0, &st), 0);
	assert_int_equal(nfskeys_attr_store_version(st), 0);
	nfskeys_attr_store_close(st);
	st = NULL;
	assert_int_equal(access(path, F_OK), -1);

	assert_int_equal(nfskeys_attr_store_open(ctx, NULL, NFSKEYS_ATTR_STORE_WRITE, &st), 0);
	assert_int_equal(nfskeys_attr_store_version(st), ATTR_SCHEMA_VERSION);
	assert_int_equal(nfskeys_attr_id_new("nfs://srv", "/export", &id), 0);
	assert_int_equal(nfskeys_attr_id_new("nfs://srv", "/export/a/b", &below), 0);
	assert_int_equal(nfskeys_attr_policy_new(&p), 0);
	assert_int_equal(nfskeys_attr_policy_new(&q), 0);
	assert_int_equal(nfskeys_attr_policy_parse(p, "cache=none", err, sizeof(err)), 0);
	assert_int_equal(nfskeys_attr_policy_parse(p, "user.owner=alice", err, sizeof(err)), 0);
	assert_int_equal(nfskeys_attr_store_set(st, id, p, 1000, false), 0);
	assert_int_equal(nfskeys_attr_store_unset(st, id, (const char *const[]){ "user.owner", NULL },
						  false), 1);
	assert_int_equal(nfskeys_attr_store_unset(st, id, (const char *const[]){ "user.owner", NULL },
						  false), 0);
	assert_int_equal(nfskeys_attr_store_unset(st, id, (const char *const[]){ "bogus", NULL },
						  false), -EINVAL);
	nfskeys_attr_store_close(st);

	/* "restart": the library's read path sees it */
	assert_int_equal(nfskeys_attr_effective(ctx, below, NFSKEYS_ATTR_SOURCES, q), 0);
	assert_int_equal(nfskeys_attr_policy_count(q), 1);
	assert_int_equal(nfskeys_attr_policy_get(q, "cache", &e), 0);
	assert_string_equal(e.value, "none");
	assert_string_equal(e.source, "nfs://srv/export");
	/* a read-only store refuses changes */
	assert_int_equal(nfskeys_attr_store_open(ctx, NULL, 0, &st), 0);
	assert_int_equal(nfskeys_attr_store_set(st, id, p, 0, false), -EROFS);
	nfskeys_attr_store_close(st);

	nfskeys_attr_policy_free(p);
	nfskeys_attr_policy_free(q);
	nfskeys_attr_id_free(id);
	nfskeys_attr_id_free(below);
	nfskeys_ctx_unref(ctx);
}

/* One directory holds at most ATTR_MAX_PER_DIR attributes even when they arrive one set at a
 * time: the set that would pass the bound is refused whole and nothing already stored is lost. */
static void test_store_dir_bound(void **state)
{
	struct nfskeys_ctx *ctx = test_ctx();
	struct nfskeys_attr_store *st = NULL;
	struct nfskeys_attr_policy *p = NULL, *q = NULL;
	struct nfskeys_attr_id *id = NULL;
	char err[256], kv[64];

	assert_int_equal(nfskeys_attr_store_open(ctx, NULL, NFSKEYS_ATTR_STORE_WRITE, &st), 0);
	assert_int_equal(nfskeys_attr_id_new("nfs://srv", "/bound", &id), 0);
	for (int i = 0; i < ATTR_MAX_PER_DIR; i++) {
		assert_int_equal(nfskeys_attr_policy_new(&p), 0);
		snprintf(kv, sizeof(kv), "user.k%d=v%d", i, i);
		assert_int_equal(nfskeys_attr_policy_parse(p, kv, err, sizeof(err)), 0);
		assert_int_equal(nfskeys_attr_store_set(st, id, p, 0, false), 0);
		nfskeys_attr_policy_free(p);
	}
	/* replacing a value is fine at the bound; one more key is not */
	assert_int_equal(nfskeys_attr_policy_new(&p), 0);
	assert_int_equal(nfskeys_attr_policy_parse(p, "user.k0=changed", err, sizeof(err)), 0);
	assert_int_equal(nfskeys_attr_store_set(st, id, p, 0, false), 0);
	assert_int_equal(nfskeys_attr_policy_parse(p, "user.extra=x", err, sizeof(err)), 0);
	assert_int_equal(nfskeys_attr_store_set(st, id, p, 0, false), -E2BIG);
	nfskeys_attr_store_close(st);
	nfskeys_attr_policy_free(p);

	assert_int_equal(nfskeys_attr_policy_new(&q), 0);
	assert_int_equal(nfskeys_attr_explicit(ctx, id, q), 0);
	assert_int_equal(nfskeys_attr_policy_count(q), ATTR_MAX_PER_DIR);
	assert_int_equal(nfskeys_attr_policy_get(q, "user.extra", NULL), -ENOENT);
	assert_int_equal(nfskeys_attr_policy_get(q, "user.k0", NULL), 0);
	nfskeys_attr_policy_free(q);
	nfskeys_attr_id_free(id);
	nfskeys_ctx_unref(ctx);
}

static void sql(sqlite3 *db, const char *s)
{
	char *err = NULL;

	if (sqlite3_exec(db, s, NULL, NULL, &err) != SQLITE_OK)
		fail_msg("%s: %s", s, err);
}

static void test_store_migration(void **state)
{
	struct nfskeys_ctx *ctx = test_ctx();
	struct nfskeys_attr_store *st = NULL;
	struct nfskeys_attr_policy *p = NULL;
	struct nfskeys_attr_id *id = NULL;
	struct nfskeys_attr_entry e;
	sqlite3 *db;
	char path[128];

	/* a store as schema version 1 wrote it */
	snprintf(path, sizeof(path), "%s/attr.db", tu_dir);
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	sql(db, "CREATE TABLE attrs (domain TEXT NOT NULL, path TEXT NOT NULL, key TEXT NOT NULL,"
		" value TEXT NOT NULL, set_by INTEGER NOT NULL, set_at INTEGER NOT NULL,"
		" PRIMARY KEY (domain, path, key)) WITHOUT ROWID;"
		"INSERT INTO attrs VALUES ('nfs://srv', '/export', 'actimeo', '30', 0, 0);"
		"INSERT INTO attrs VALUES ('nfs://srv', '/export', 'nonsense', 'x', 0, 0);"
		"PRAGMA user_version = 1;");
	sqlite3_close(db);

	/* the read path understands version 1 as it is */
	assert_int_equal(nfskeys_attr_id_new("nfs://srv", "/export/x", &id), 0);
	assert_int_equal(nfskeys_attr_policy_new(&p), 0);
	assert_int_equal(nfskeys_attr_effective(ctx, id, 0, p), 0);
	assert_int_equal(nfskeys_attr_policy_get(p, "actimeo", &e), 0);

	/* opening for writing migrates, keeping the rows as local ones */
	assert_int_equal(nfskeys_attr_store_open(ctx, NULL, NFSKEYS_ATTR_STORE_WRITE, &st), 0);
	assert_int_equal(nfskeys_attr_store_version(st), ATTR_SCHEMA_VERSION);
	assert_int_equal(attr_index_resolve(attr_store_index(st), "nfs://srv", "/export/x", 0, p), 0);
	assert_int_equal(nfskeys_attr_policy_get(p, "actimeo", &e), 0);
	assert_string_equal(e.value, "30");
	assert_false(e.from_ldap);
	assert_int_equal(nfskeys_attr_policy_count(p), 1); /* the bad row skipped */
	nfskeys_attr_store_close(st);
	st = NULL;

	/* a store from the future is refused, not misread */
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	sql(db, "PRAGMA user_version = 99");
	sqlite3_close(db);
	/* readers read the snapshot the last writer published, so no reader can lock the
	 * store (doc/security/FINDINGS.md D3): without one
	 * they fall back to the database itself (which only root may read) */
	snprintf(path, sizeof(path), "%s/attr.db.snapshot", tu_dir);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(nfskeys_attr_store_open(ctx, NULL, NFSKEYS_ATTR_STORE_WRITE, &st),
			 -EPROTONOSUPPORT);
	assert_int_equal(nfskeys_attr_store_open(ctx, NULL, 0, &st), -EPROTONOSUPPORT);
	assert_null(st);

	nfskeys_attr_policy_free(p);
	nfskeys_attr_id_free(id);
	nfskeys_ctx_unref(ctx);
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
	struct nfskeys_ctx *ctx = test_ctx();
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

/* doc/security/FINDINGS.md D4: a store written by schema version 2 (the SQL of the code before
 * version 3, as it created and filled it) opens, is migrated, and nothing is lost: local
 * and LDAP rows, who set them and when, the sync state; old rows have no handle (so they
 * are never taken for a removed directory's) and count towards their setter's usage. */
static void test_store_migration_v2(void **state)
{
	struct nfskeys_ctx *ctx = test_ctx();
	struct nfskeys_attr_store *st = NULL;
	struct nfskeys_attr_policy *p = NULL;
	struct nfskeys_attr_id *id = NULL;
	struct nfskeys_attr_entry e;
	sqlite3_stmt *q;
	uint64_t dirs, bytes;
	sqlite3 *db;
	char path[128];
	int n = 0;

	snprintf(path, sizeof(path), "%s/attr.db", tu_dir);
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	/* versions 0 -> 1 -> 2 exactly as the old migrations ran them */
	sql(db, "CREATE TABLE attrs ("
		" domain TEXT NOT NULL, path TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,"
		" set_by INTEGER NOT NULL, set_at INTEGER NOT NULL,"
		" PRIMARY KEY (domain, path, key)) WITHOUT ROWID;");
	sql(db, "CREATE TABLE attrs2 ("
		" domain TEXT NOT NULL, path TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,"
		" origin INTEGER NOT NULL DEFAULT 0, set_by INTEGER NOT NULL, set_at INTEGER NOT NULL,"
		" PRIMARY KEY (domain, path, key, origin)) WITHOUT ROWID;"
		"INSERT INTO attrs2 (domain, path, key, value, origin, set_by, set_at)"
		" SELECT domain, path, key, value, 0, set_by, set_at FROM attrs;"
		"DROP TABLE attrs;"
		"ALTER TABLE attrs2 RENAME TO attrs;"
		"CREATE TABLE meta (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL) WITHOUT ROWID;"
		"PRAGMA user_version = 2;");
	/* rows as the version 2 daemon and LDAP sync wrote them */
	sql(db, "INSERT INTO attrs (domain, path, key, value, origin, set_by, set_at) VALUES"
		" ('nfs://srv', '/export', 'actimeo', '30', 0, 1000, 1700000000),"
		" ('nfs://srv', '/export', 'inherit', 'no', 0, 1000, 1700000001),"
		" ('nfs://srv', '/export/b', 'user.note', 'kept', 0, 1001, 1700000002),"
		" ('nfs://srv', '/export', 'actimeo', '60', 1, 0, 1700000003);"
		"INSERT INTO meta VALUES ('ldap_csn', '20250101000000Z');");
	sqlite3_close(db);

	assert_int_equal(nfskeys_attr_store_open(ctx, NULL, NFSKEYS_ATTR_STORE_WRITE, &st), 0);
	assert_int_equal(nfskeys_attr_store_version(st), 3);
	assert_int_equal(attr_index_count(attr_store_index(st)), 2);
	assert_int_equal(nfskeys_attr_id_new("nfs://srv", "/export", &id), 0);
	assert_int_equal(nfskeys_attr_policy_new(&p), 0);
	assert_int_equal(attr_index_explicit(attr_store_index(st), "nfs://srv", "/export", p), 0);
	assert_int_equal(nfskeys_attr_policy_count(p), 2);
	assert_int_equal(nfskeys_attr_policy_get(p, "inherit", &e), 0);
	assert_string_equal(e.value, "no");
	assert_int_equal(attr_store_usage(st, 1000, &dirs, &bytes), 0);
	assert_int_equal(dirs, 1);
	assert_int_equal(bytes, strlen("nfs://srv/exportactimeo30") +
					strlen("nfs://srv/exportinheritno"));
	/* a sweep keeps rows without a handle */
	{
		unsigned dropped = 99;
		assert_int_equal(attr_store_sweep(st, &dropped), 0);
		assert_int_equal(dropped, 0);
	}
	nfskeys_attr_store_close(st);

	/* every row and column there, byte for byte, and the sync state */
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT domain || path || key || value || origin"
						" || set_by || set_at || coalesce(handle, '-')"
						" || coalesce(local, '-') FROM attrs ORDER BY 1",
					    -1, &q, NULL),
			 SQLITE_OK);
	{
		static const char *const want[] = {
			"nfs://srv/export/buser.notekept0"
			"10011700000002--",
			"nfs://srv/exportactimeo300"
			"10001700000000--",
			"nfs://srv/exportactimeo601"
			"01700000003--",
			"nfs://srv/exportinheritno0"
			"10001700000001--",
		};
		while (sqlite3_step(q) == SQLITE_ROW) {
			assert_true(n < 4);
			assert_string_equal((const char *)sqlite3_column_text(q, 0), want[n]);
			n++;
		}
	}
	sqlite3_finalize(q);
	assert_int_equal(n, 4);
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = 'ldap_csn'", -1,
					    &q, NULL),
			 SQLITE_OK);
	assert_int_equal(sqlite3_step(q), SQLITE_ROW);
	assert_string_equal((const char *)sqlite3_column_text(q, 0), "20250101000000Z");
	sqlite3_finalize(q);
	sqlite3_close(db);

	nfskeys_attr_policy_free(p);
	nfskeys_attr_id_free(id);
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
		cmocka_unit_test_setup_teardown(test_id_samples, setup, teardown),
		cmocka_unit_test(test_id_spec),
		cmocka_unit_test_setup_teardown(test_id_live, setup, teardown),
		cmocka_unit_test(test_index_inheritance),
		cmocka_unit_test(test_index_origin),
		cmocka_unit_test(test_index_random),
		cmocka_unit_test(test_index_cached_sets),
		cmocka_unit_test(test_index_fingerprints),
		cmocka_unit_test(test_index_split_inside_component),
		cmocka_unit_test(test_index_bounded),
		cmocka_unit_test_setup_teardown(test_wb_apply, setup, teardown),
		cmocka_unit_test_setup_teardown(test_store_dir_bound, setup, teardown),
		cmocka_unit_test_setup_teardown(test_store_restart, setup, teardown),
		cmocka_unit_test_setup_teardown(test_store_migration, setup, teardown),
		cmocka_unit_test_setup_teardown(test_store_migration_v2, setup, teardown),
		cmocka_unit_test(test_owner_synthesized),
		cmocka_unit_test_setup_teardown(test_mount_options, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
