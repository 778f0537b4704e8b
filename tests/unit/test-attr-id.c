/* Directory attributes: a directory's identity on recorded mountinfo samples (nfs, nfs4,
 * cifs, afs, local bind mounts), from a mount spec, and on this machine's own mount
 * table. */
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
	return tu_dir_setup("attr-id");
}

static int teardown(void **state)
{
	return tu_dir_teardown();
}

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
	struct nfskeys_ctx *ctx = tu_ctx_attr();
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_id_samples, setup, teardown),
		cmocka_unit_test(test_id_spec),
		cmocka_unit_test_setup_teardown(test_id_live, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
