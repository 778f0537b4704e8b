/* Writeback on kernel mounts: the /proc/self/mountstats parser on hand-written 6.1 text
 * (and older 8-field lines, and damage), the 6.1 ratio arithmetic, the bdi knobs set and
 * put back (a sysfs/proc tree in the test directory: the real kernel is
 * tests/kernel/wb-bdi.ktest's), and the sampler's deltas, completions and adaptive
 * limit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "macros.h"
#include "nfskeys.h"
#include "test-util.h"
#include "wb-kernel.h"

#define MiB (1024ull * 1024)

/* Two NFS mounts, as 6.1 prints them (statvers 1.1, 9 per-op numbers), with a proc
 * mount between them; /mnt/a b has a space (escaped by the kernel). */
static const char stats61[] =
	"device proc mounted on /proc with fstype proc\n"
	"device 127.0.0.1:/ mounted on /mnt/nfs4 with fstype nfs4 statvers=1.1\n"
	"\topts:\trw,vers=4.2,rsize=524288,wsize=524288,namlen=255,hard,proto=tcp,sec=sys\n"
	"\tage:\t42\n"
	"\tcaps:\tcaps=0x3ffbffff,wtmult=512,dtsize=32768,bsize=0,namlen=255\n"
	"\tsec:\tflavor=1,pseudoflavor=1\n"
	"\tevents:\t3 26 0 0 3 7 33 1024 0 1 0 0 0 0 1 0 0 1 0 0 0 0 0 0 0 0 0\n"
	"\tbytes:\t0 67108864 0 0 0 67108864 0 16384\n"
	"\tRPC iostats version: 1.1  p/v: 100003/4 (nfs)\n"
	"\txprt:\ttcp 0 0 1 0 42 1102 1102 0 1234 0 2 1 3\n"
	"\tper-op statistics\n"
	"\t        NULL: 1 1 0 44 24 0 0 0 0\n"
	"\t        READ: 0 0 0 0 0 0 0 0 0\n"
	"\t       WRITE: 128 130 1 67131392 17408 12 3456 3500 2\n"
	"\t      COMMIT: 2 2 0 304 232 0 40 41 0\n"
	"\t        OPEN: 1 1 0 300 400 0 1 1 0\n"
	"\n"
	"device 127.0.0.1:/b mounted on /mnt/a\\040b with fstype nfs4 statvers=1.1\n"
	"\tper-op statistics\n"
	"\t       WRITE: 7 7 0 7000 700 1 70 71 0\n"
	"\t      COMMIT: 1 1 0 100 100 0 5 6 0\n";

static void parse_61(void **state)
{
	const char *mps[] = { "/mnt/a\\040b", "/mnt/nfs4", "/mnt/absent" };
	struct wbk_found f[3];
	unsigned bad = 99;

	(void)state;
	assert_int_equal(wbk_parse_mountstats(stats61, strlen(stats61), mps, 3, f, &bad), 2);
	assert_int_equal(bad, 0);
	/* every one of the 9 fields, in the kernel's order */
	assert_int_equal(f[1].have, 7);
	assert_int_equal(f[1].write.ops, 128);
	assert_int_equal(f[1].write.trans, 130);
	assert_int_equal(f[1].write.timeouts, 1);
	assert_int_equal(f[1].write.bytes_sent, 67131392);
	assert_int_equal(f[1].write.bytes_recv, 17408);
	assert_int_equal(f[1].write.queue_ms, 12);
	assert_int_equal(f[1].write.rtt_ms, 3456);
	assert_int_equal(f[1].write.exec_ms, 3500);
	assert_int_equal(f[1].write.errors, 2);
	assert_int_equal(f[1].commit.ops, 2);
	assert_int_equal(f[1].commit.exec_ms, 41);
	/* the second mount's lines are its own (an escaped space in its mount point) */
	assert_int_equal(f[0].have, 7);
	assert_int_equal(f[0].write.ops, 7);
	assert_int_equal(f[0].commit.rtt_ms, 5);
	assert_int_equal(f[2].have, 0);
}

static void parse_8_fields(void **state)
{
	static const char old[] = "device s:/ mounted on /m with fstype nfs statvers=1.1\n"
				  "\t       WRITE: 5 5 0 500 50 1 2 3\n";
	const char *mps[] = { "/m" };
	struct wbk_found f[1];

	(void)state;
	assert_int_equal(wbk_parse_mountstats(old, strlen(old), mps, 1, f, NULL), 1);
	assert_int_equal(f[0].have, 3);
	assert_int_equal(f[0].write.exec_ms, 3);
	assert_int_equal(f[0].write.errors, 0);
}

static void parse_malformed(void **state)
{
	char *big, *buf;
	const char *mps[] = { "/m" };
	struct wbk_found f[1];
	unsigned bad = 0;
	size_t n;

	(void)state;
	/* a field that is no number, too few fields, an overflowing number, an overlong line;
	 * the good COMMIT line after them still counts; then a header without "with fstype"
	 * ends the mount's lines, and the last line has no newline (a short read) */
	big = malloc(WBK_MAX_LINE + 100);
	assert_non_null(big);
	memset(big, '1', WBK_MAX_LINE + 50);
	big[WBK_MAX_LINE + 50] = '\0';
	assert_true(asprintf(&buf,
			     "device s:/ mounted on /m with fstype nfs4 statvers=1.1\n"
			     "\t       WRITE: 5 x 0 500 50 1 2 3 0\n"
			     "\t       WRITE: 5 5 0\n"
			     "\t       WRITE: 5 5 0 99999999999999999999999 50 1 2 3 0\n"
			     "\t       WRITE: %s\n"
			     "\t      COMMIT: 1 1 0 10 10 0 1 1 0\n"
			     "device broken mounted on /m\n"
			     "\t      COMMIT: 2 2 0 10 10 0 1 1 0", big) > 0);
	n = wbk_parse_mountstats(buf, strlen(buf), mps, 1, f, &bad);
	assert_int_equal(n, 1);
	assert_int_equal(bad, 5);
	assert_int_equal(f[0].have, 1 | 4); /* no WRITE taken from the damaged lines */
	assert_int_equal(f[0].commit.ops, 1);
	/* every prefix of the text (a read cut anywhere): no crash, no overrun (ASan) */
	for (size_t i = 0; i <= strlen(stats61); i++) {
		char *cut = malloc(i ? i : 1);

		memcpy(cut, stats61, i);
		wbk_parse_mountstats(cut, i, mps, 1, f, NULL);
		free(cut);
	}
	free(big);
	free(buf);
}

static void escape_and_ratio(void **state)
{
	char b[64];

	(void)state;
	assert_int_equal(wbk_escape_path("/mnt/a b\\c\td", b, sizeof(b)), 0);
	assert_string_equal(b, "/mnt/a\\040b\\134c\\011d");
	assert_int_equal(wbk_escape_path("/mnt/abcdef", b, 8), -ENAMETOOLONG);
	/* 64 MiB of a 340 MiB threshold is 18.8 %: ceil gives 19 */
	assert_int_equal(wbk_ratio_for(64 * MiB, 340 * MiB), 19);
	assert_int_equal(wbk_ratio_for(64 * MiB, 64 * MiB * 100), 1);
	assert_int_equal(wbk_ratio_for(1, 1ull << 40), 1);
	assert_int_equal(wbk_ratio_for(512 * MiB, 340 * MiB), 100);
	assert_int_equal(wbk_ratio_for(64 * MiB, 0), 100);
}

/* ------------------------------------------------------------------ a sysfs/proc tree */

static char sysd[512], procd[512], bdid[1024], mntd[512], rund[512];

static void put(const char *dir, const char *name, const char *val)
{
	char p[PATH_MAX + 64];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	tu_write_file(p, "%s", val);
}

static char *get(const char *dir, const char *name)
{
	static char v[64];
	char p[PATH_MAX + 64];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	f = fopen(p, "re");
	assert_non_null(f);
	if (!fgets(v, sizeof(v), f))
		v[0] = '\0';
	fclose(f);
	v[strcspn(v, "\n")] = '\0';
	return v;
}

/* thresh_pages: /proc/vmstat nr_dirty_threshold; knobs 1 (6.1) or 2 (6.2+) */
static void tree(const char *fstype, unsigned long thresh_pages, int knobs)
{
	char p[PATH_MAX * 2];
	struct stat st;

	tu_path(sysd, sizeof(sysd), "sys");
	tu_path(procd, sizeof(procd), "proc");
	tu_path(mntd, sizeof(mntd), "mnt");
	tu_path(rund, sizeof(rund), "run");
	snprintf(p, sizeof(p), "mkdir -p %s/class/bdi %s/self %s", sysd, procd, mntd);
	assert_int_equal(system(p), 0);
	assert_int_equal(stat(mntd, &st), 0);
	snprintf(bdid, sizeof(bdid), "%s/class/bdi/%u:%u", sysd, major(st.st_dev),
		 minor(st.st_dev));
	assert_true(mkdir(bdid, 0755) == 0 || errno == EEXIST);
	put(bdid, "max_ratio", "100\n");
	put(bdid, "min_ratio", "0\n");
	if (knobs == 2) {
		put(bdid, "max_ratio_fine", "1000000\n");
		put(bdid, "max_bytes", "356515840\n");
		put(bdid, "strict_limit", "0\n");
	}
	snprintf(p, sizeof(p), "%s/self/mountinfo", procd);
	tu_write_file(p,
		      "22 1 0:1 / / rw - ext4 /dev/root rw\n"
		      "100 22 %u:%u / %s rw,relatime - %s 127.0.0.1:/ rw,vers=4.2\n",
		      major(st.st_dev), minor(st.st_dev), mntd, fstype);
	snprintf(p, sizeof(p), "%s/vmstat", procd);
	tu_write_file(p, "nr_dirty 5\nnr_dirty_threshold %lu\nnr_dirty_background_threshold 1\n",
		      thresh_pages);
	setenv("NFSKEYS_WB_SYSFS", sysd, 1);
	setenv("NFSKEYS_WB_PROC", procd, 1);
}

static struct nfskeys_ctx *run_ctx(void)
{
	return tu_ctx_conf("[General]\nRuntime-Dir = %s\n", rund);
}

static int setup(void **state)
{
	(void)state;
	return tu_dir_setup("wb-kernel");
}

static int teardown(void **state)
{
	(void)state;
	unsetenv("NFSKEYS_WB_SYSFS");
	unsetenv("NFSKEYS_WB_PROC");
	return tu_dir_teardown();
}

static void bdi_61_apply_restore(void **state)
{
	struct nfskeys_ctx *ctx;
	struct nfskeys_wb_mount *m = NULL;
	struct nfskeys_wb_mount_state s;
	char sp[PATH_MAX * 2];
	unsigned long pages = 340 * MiB / (unsigned long)sysconf(_SC_PAGESIZE);

	(void)state;
	tree("nfs4", pages, 1);
	ctx = run_ctx();
	assert_int_equal(nfskeys_wb_mount_open(ctx, mntd, &m), 0);
	assert_string_equal(nfskeys_wb_mount_get_path(m), mntd);
	assert_int_equal(nfskeys_wb_mount_get_state(m, &s), 0);
	assert_int_equal(s.kernel_knobs, 1);
	assert_int_equal(s.applied, 0);
	assert_int_equal(nfskeys_wb_mount_apply(m, 64 * MiB), 0);
	assert_string_equal(get(bdid, "max_ratio"), "19");
	snprintf(sp, sizeof(sp), "%s/wb/%s", rund, nfskeys_wb_mount_get_bdi(m));
	assert_int_equal(access(sp, F_OK), 0);
	assert_int_equal(nfskeys_wb_mount_get_state(m, &s), 0);
	assert_int_equal(s.applied, 1);
	assert_int_equal(s.limit, 64 * MiB);
	assert_int_equal(s.max_ratio, 19);
	assert_int_equal(s.saved_max_ratio, 100);
	/* a second apply keeps the kernel's first values, not ours */
	assert_int_equal(nfskeys_wb_mount_apply(m, 128 * MiB), 0);
	assert_string_equal(get(bdid, "max_ratio"), "38");
	/* the threshold moves: refresh recomputes; unmoved: nothing */
	assert_int_equal(nfskeys_wb_mount_refresh(m), 0);
	tu_write_file(strcat(strcpy(sp, procd), "/vmstat"), "nr_dirty_threshold %lu\n", pages * 2);
	assert_int_equal(nfskeys_wb_mount_refresh(m), 1);
	assert_string_equal(get(bdid, "max_ratio"), "19");
	assert_int_equal(nfskeys_wb_mount_refresh(m), 0);
	/* restore puts the kernel's 100 back, once */
	assert_int_equal(nfskeys_wb_mount_restore(m), 0);
	assert_string_equal(get(bdid, "max_ratio"), "100");
	assert_int_equal(nfskeys_wb_mount_restore(m), -ENOENT);
	/* from another process's object (the CLI's apply, then restore) */
	assert_int_equal(nfskeys_wb_mount_apply(m, 64 * MiB), 0);
	nfskeys_wb_mount_free(m);
	m = NULL;
	assert_int_equal(nfskeys_wb_mount_open(ctx, mntd, &m), 0);
	assert_int_equal(nfskeys_wb_mount_restore(m), 0);
	assert_string_equal(get(bdid, "max_ratio"), "100");
	nfskeys_wb_mount_free(m);
	nfskeys_ctx_unref(ctx);
}

static void bdi_62_apply_restore(void **state)
{
	struct nfskeys_ctx *ctx;
	struct nfskeys_wb_mount *m = NULL;
	struct nfskeys_wb_mount_state s;
	char link[PATH_MAX + 32];

	(void)state;
	tree("nfs", 87040, 2);
	put(bdid, "max_ratio_fine", "500000\n"); /* an admin's 50 % */
	ctx = run_ctx();
	assert_int_equal(nfskeys_wb_mount_open(ctx, mntd, &m), 0);
	assert_int_equal(nfskeys_wb_mount_apply(m, 64 * MiB), 0);
	assert_string_equal(get(bdid, "max_bytes"), "67108864");
	assert_string_equal(get(bdid, "strict_limit"), "1");
	/* the threshold moves by less than 1/64: the kernel's share is left as written; by
	 * more: max_bytes is written again (the kernel keeps a share, not bytes) */
	put(bdid, "max_bytes", "1\n");
	tu_write_file(strcat(strcpy(link, procd), "/vmstat"), "nr_dirty_threshold %lu\n",
		      87040ul + 87040 / 128);
	assert_int_equal(nfskeys_wb_mount_refresh(m), 0);
	assert_string_equal(get(bdid, "max_bytes"), "1");
	tu_write_file(strcat(strcpy(link, procd), "/vmstat"), "nr_dirty_threshold %lu\n",
		      87040ul + 87040 / 32);
	assert_int_equal(nfskeys_wb_mount_refresh(m), 1);
	assert_string_equal(get(bdid, "max_bytes"), "67108864");
	tu_write_file(strcat(strcpy(link, procd), "/vmstat"), "nr_dirty_threshold %lu\n", 87040ul);
	assert_int_equal(nfskeys_wb_mount_get_state(m, &s), 0);
	assert_int_equal(s.kernel_knobs, 2);
	assert_int_equal(s.saved_max_ratio, 50);
	assert_int_equal(s.saved_strict_limit, 0);
	assert_int_equal(nfskeys_wb_mount_restore(m), 0);
	assert_string_equal(get(bdid, "max_ratio_fine"), "500000");
	assert_string_equal(get(bdid, "strict_limit"), "0");
	/* a limit over the global threshold (340 MiB here): the kernel would refuse it as
	 * max_bytes (a share over 100 %), so the whole threshold, max_ratio 100, strictly */
	assert_int_equal(nfskeys_wb_mount_apply(m, 1024 * MiB), 0);
	assert_string_equal(get(bdid, "max_ratio"), "100");
	assert_string_equal(get(bdid, "max_bytes"), "67108864");
	assert_string_equal(get(bdid, "strict_limit"), "1");
	assert_int_equal(nfskeys_wb_mount_restore(m), 0);
	assert_string_equal(get(bdid, "max_ratio_fine"), "500000");
	/* a knob the kernel refuses: the bdi is put back and nothing stays saved */
	snprintf(link, sizeof(link), "%s/max_bytes", bdid);
	assert_int_equal(unlink(link), 0);
	assert_int_equal(symlink("/dev/null", link), 0);
	assert_int_equal(nfskeys_wb_mount_apply(m, 64 * MiB), -ELOOP);
	assert_string_equal(get(bdid, "max_ratio_fine"), "500000");
	assert_int_equal(nfskeys_wb_mount_restore(m), -ENOENT);
	nfskeys_wb_mount_free(m);
	nfskeys_ctx_unref(ctx);
}

static void bdi_refusals(void **state)
{
	struct nfskeys_ctx *ctx;
	struct nfskeys_wb_mount *m = NULL;
	char sp[PATH_MAX * 2];

	(void)state;
	tree("tmpfs", 87040, 1);
	ctx = tu_ctx_empty(tu_log_capture);
	/* not a network filesystem: refused, naming what it is */
	assert_int_equal(nfskeys_wb_mount_open(ctx, mntd, &m), -EMEDIUMTYPE);
	assert_non_null(strstr(tu_last_log, "tmpfs"));
	assert_null(m);
	assert_int_equal(nfskeys_wb_mount_open(ctx, "/nonexistent/x", &m), -ENOENT);
	nfskeys_ctx_unref(ctx);
	/* no bdi directory */
	tree("nfs4", 87040, 1);
	snprintf(sp, sizeof(sp), "rm -r %s", bdid);
	assert_int_equal(system(sp), 0);
	ctx = tu_ctx_empty(tu_log_capture);
	assert_int_equal(nfskeys_wb_mount_open(ctx, mntd, &m), -ENODEV);
	assert_non_null(strstr(tu_last_log, "bdi"));
	nfskeys_ctx_unref(ctx);
	/* out-of-range limits */
	assert_int_equal(mkdir(bdid, 0755), 0);
	put(bdid, "max_ratio", "100\n");
	ctx = run_ctx();
	assert_int_equal(nfskeys_wb_mount_open(ctx, mntd, &m), 0);
	assert_int_equal(nfskeys_wb_mount_apply(m, MiB - 1), -ERANGE);
	assert_int_equal(nfskeys_wb_mount_apply(m, (1ull << 40) + 1), -ERANGE);
	assert_string_equal(get(bdid, "max_ratio"), "100");
	/* a state left by an earlier mount with the same device number is not restored */
	assert_int_equal(mkdir(rund, 0755), 0);
	snprintf(sp, sizeof(sp), "%s/wb", rund);
	assert_int_equal(mkdir(sp, 0755), 0);
	snprintf(sp, sizeof(sp), "%s/wb/%s", rund, nfskeys_wb_mount_get_bdi(m));
	tu_write_file(sp, "# nfskeys wb state 1\nmnt_id 99\nlimit 1048576\nsaved max_ratio 7\n");
	assert_int_equal(nfskeys_wb_mount_restore(m), -ENOENT);
	assert_string_equal(get(bdid, "max_ratio"), "100");
	nfskeys_wb_mount_free(m);
	nfskeys_ctx_unref(ctx);
}

/* ------------------------------------------------------------------ the sampler */

struct seen {
	unsigned n;
	struct nfskeys_wb_opstats w, c;
};

static void on_sample(void *u, const struct nfskeys_wb_mount *m, enum nfskeys_wb_kind k,
		      const struct nfskeys_wb_opstats *d)
{
	struct seen *s = u;

	(void)m;
	s->n++;
	if (k == NFSKEYS_WB_WRITE)
		s->w = *d;
	else
		s->c = *d;
}

static void stats_file(uint64_t wops, uint64_t wbytes, uint64_t wrtt, uint64_t cops)
{
	char p[PATH_MAX + 32];

	snprintf(p, sizeof(p), "%s/self/mountstats", procd);
	tu_write_file(p,
		      "device s:/ mounted on /mnt/s with fstype nfs4 statvers=1.1\n"
		      "\tper-op statistics\n"
		      "\t       WRITE: %llu %llu 0 %llu 10 0 %llu %llu 0\n"
		      "\t      COMMIT: %llu %llu 0 100 100 0 1 1 0\n",
		      (unsigned long long)wops, (unsigned long long)wops,
		      (unsigned long long)wbytes, (unsigned long long)wrtt,
		      (unsigned long long)wrtt + wops, (unsigned long long)cops,
		      (unsigned long long)cops);
}

static void sampler(void **state)
{
	struct nfskeys_ctx *ctx;
	struct nfskeys_wb_sampler *s = NULL;
	struct seen seen = { 0 };
	uint64_t t = 1000000000ull, lim;

	(void)state;
	tree("nfs4", 87040, 1);
	ctx = run_ctx();
	assert_int_equal(nfskeys_wb_sampler_new(ctx, &s), 0);
	assert_int_equal(nfskeys_wb_sampler_set_controller(s, "halve", 0), 0);
	assert_int_equal(wbk_sampler_add_path(s, "/mnt/s", 64 * MiB), 0);
	assert_int_equal(wbk_sampler_add_path(s, "/mnt/s", MiB - 1), -ERANGE);
	stats_file(100, 100 * MiB, 200, 3);
	/* the first tick is the baseline: nothing reported */
	assert_int_equal(nfskeys_wb_sampler_tick(s, t, on_sample, &seen), 0);
	assert_int_equal(seen.n, 0);
	/* deltas only, for WRITE and COMMIT */
	stats_file(110, 110 * MiB, 220, 4);
	t += 100000000ull;
	assert_int_equal(nfskeys_wb_sampler_tick(s, t, on_sample, &seen), 0);
	assert_int_equal(seen.n, 2);
	assert_int_equal(seen.w.ops, 10);
	assert_int_equal(seen.w.bytes_sent, 10 * MiB);
	assert_int_equal(seen.w.rtt_ms, 20);
	assert_int_equal(seen.w.exec_ms, 30);
	assert_int_equal(seen.c.ops, 1);
	/* nothing new: no lines (ops 0 are not reported) */
	seen.n = 0;
	t += 100000000ull;
	assert_int_equal(nfskeys_wb_sampler_tick(s, t, on_sample, &seen), 0);
	assert_int_equal(seen.n, 0);
	lim = nfskeys_wb_sampler_get_limit(s, NULL);
	assert_int_equal(lim, 64 * MiB);
	/* the server stalls: 2 ms per WRITE becomes 100 ms; the limit halves, twice */
	stats_file(120, 120 * MiB, 1220, 4);
	t += 100000000ull;
	nfskeys_wb_sampler_tick(s, t, NULL, NULL);
	assert_int_equal(nfskeys_wb_sampler_get_limit(s, NULL), 32 * MiB);
	stats_file(130, 130 * MiB, 2220, 4);
	t += 100000000ull;
	nfskeys_wb_sampler_tick(s, t, NULL, NULL);
	assert_int_equal(nfskeys_wb_sampler_get_limit(s, NULL), 16 * MiB);
	/* and keeps up again: it grows back by ceiling/16 per tick, up to the ceiling */
	for (unsigned i = 0; i < 20; i++) {
		stats_file(140 + 10 * i, (140 + 10 * i) * MiB, 2240 + 20 * i, 4);
		t += 100000000ull;
		nfskeys_wb_sampler_tick(s, t, NULL, NULL);
		if (i == 0)
			assert_int_equal(nfskeys_wb_sampler_get_limit(s, NULL), 20 * MiB);
	}
	assert_int_equal(nfskeys_wb_sampler_get_limit(s, NULL), 64 * MiB);
	/* the mount is gone from mountstats */
	stats_file(1, 1, 1, 1);
	{
		char p[PATH_MAX + 32];

		snprintf(p, sizeof(p), "%s/self/mountstats", procd);
		tu_write_file(p, "device proc mounted on /proc with fstype proc\n");
	}
	assert_int_equal(nfskeys_wb_sampler_tick(s, t, NULL, NULL), -ENOENT);
	nfskeys_wb_sampler_free(s);
	nfskeys_ctx_unref(ctx);
}

/* The nfskeys controller's mapping: bandwidth x target, clamped to [max(ceiling / 16,
 * 1 MiB), ceiling], the ceiling while there is no estimate. */
static void limit_mapping(void **state)
{
	(void)state;
	assert_int_equal(wbk_limit_from_bandwidth(0, 0.5, 64 * MiB), 64 * MiB);
	assert_int_equal(wbk_limit_from_bandwidth(-1, 0.5, 64 * MiB), 64 * MiB);
	assert_int_equal(wbk_limit_from_bandwidth(0.0 / 0.0, 0.5, 64 * MiB), 64 * MiB);
	assert_int_equal(wbk_limit_from_bandwidth(10.0 * MiB, 0, 64 * MiB), 64 * MiB);
	assert_int_equal(wbk_limit_from_bandwidth(20.0 * MiB, 0.5, 64 * MiB), 10 * MiB);
	assert_int_equal(wbk_limit_from_bandwidth(20.0 * MiB, 0.25, 64 * MiB), 5 * MiB);
	/* above the ceiling: the ceiling; far above (no overflow): the ceiling */
	assert_int_equal(wbk_limit_from_bandwidth(200.0 * MiB, 0.5, 64 * MiB), 64 * MiB);
	assert_int_equal(wbk_limit_from_bandwidth(1e300, 60, 64 * MiB), 64 * MiB);
	/* below the floor: ceiling / 16, and never under 1 MiB */
	assert_int_equal(wbk_limit_from_bandwidth(1.0 * MiB, 0.5, 64 * MiB), 4 * MiB);
	assert_int_equal(wbk_limit_from_bandwidth(1.0 * MiB, 0.5, 8 * MiB), MiB);
}

static void controller_names(void **state)
{
	struct nfskeys_ctx *ctx = run_ctx();
	struct nfskeys_wb_sampler *s = NULL;

	(void)state;
	assert_int_equal(nfskeys_wb_sampler_new(ctx, &s), 0);
	assert_int_equal(nfskeys_wb_sampler_set_controller(s, "nfskeys", 0), 0);
	assert_int_equal(nfskeys_wb_sampler_set_controller(s, "halve", 0), 0);
	assert_int_equal(nfskeys_wb_sampler_set_controller(s, "kara2011", 0), -EINVAL);
	assert_int_equal(nfskeys_wb_sampler_set_controller(s, "nfskeys", 1000), -ERANGE);
	assert_int_equal(nfskeys_wb_sampler_set_controller(s, "nfskeys", 61000000000ull), -ERANGE);
	assert_int_equal(nfskeys_wb_sampler_set_controller(NULL, "nfskeys", 0), -EINVAL);
	nfskeys_wb_sampler_free(s);
	nfskeys_ctx_unref(ctx);
}

static uint64_t fake_now(void *u)
{
	return *(uint64_t *)u;
}

/* The default controller: the sampler's WRITE deltas go through nfskeys_wb_complete()
 * into an nfskeys device, whose smoothed bandwidth estimate, times the target, is the
 * limit: 100 MiB/s x 0.4 s = 40 MiB; then 20 MiB/s: it follows down to 8 MiB; ticks
 * with no completion (a stalled server) hold it. */
static void sampler_nfskeys(void **state)
{
	struct nfskeys_ctx *ctx;
	struct nfskeys_wb_sampler *s = NULL;
	struct nfskeys_wb_dev *dev = NULL;
	uint64_t t = 1000000000ull, ops = 100, bytes = 100 * MiB, lim;
	struct nfskeys_wb_clock clock = { .now = fake_now, .userdata = &t };

	(void)state;
	tree("nfs4", 87040, 1);
	ctx = run_ctx();
	assert_int_equal(nfskeys_wb_dev_new("s", NFSKEYS_WB_NFSKEYS, 64 * MiB,
					    NFSKEYS_WB_UNSTABLE, &clock, &dev), 0);
	assert_int_equal(nfskeys_wb_sampler_new(ctx, &s), 0);
	assert_int_equal(nfskeys_wb_sampler_set_controller(s, "nfskeys", 400000000ull), 0);
	assert_int_equal(wbk_sampler_add_path_dev(s, "/mnt/s", dev, 64 * MiB), 0);
	stats_file(ops, bytes, 200, 3);
	assert_int_equal(nfskeys_wb_sampler_tick(s, t, NULL, NULL), 0);
	/* no estimate yet: the ceiling */
	assert_int_equal(nfskeys_wb_sampler_get_limit(s, NULL), 64 * MiB);
	/* 10 MiB per 100 ms */
	for (unsigned i = 0; i < 30; i++) {
		ops += 10, bytes += 10 * MiB, t += 100000000ull;
		stats_file(ops, bytes, 200 + ops, 3);
		nfskeys_wb_sampler_tick(s, t, NULL, NULL);
	}
	lim = nfskeys_wb_sampler_get_limit(s, NULL);
	assert_true(lim >= 39 * MiB && lim <= 41 * MiB);
	/* 2 MiB per 100 ms: the estimate follows down (EWMA, 0.4 s) */
	for (unsigned i = 0; i < 40; i++) {
		ops += 2, bytes += 2 * MiB, t += 100000000ull;
		stats_file(ops, bytes, 200 + ops, 3);
		nfskeys_wb_sampler_tick(s, t, NULL, NULL);
		if (i == 2)
			assert_true(nfskeys_wb_sampler_get_limit(s, NULL) < 35 * MiB);
	}
	lim = nfskeys_wb_sampler_get_limit(s, NULL);
	assert_true(lim >= (uint64_t)(7.5 * MiB) && lim <= (uint64_t)(8.5 * MiB));
	/* the server answers nothing for a second: the estimate (and the limit) is held */
	for (unsigned i = 0; i < 10; i++) {
		t += 100000000ull;
		nfskeys_wb_sampler_tick(s, t, NULL, NULL);
	}
	assert_int_equal(nfskeys_wb_sampler_get_limit(s, NULL), lim);
	/* far faster than the ceiling allows: the ceiling */
	for (unsigned i = 0; i < 30; i++) {
		ops += 100, bytes += 100 * MiB, t += 100000000ull;
		stats_file(ops, bytes, 200 + ops, 3);
		nfskeys_wb_sampler_tick(s, t, NULL, NULL);
	}
	assert_int_equal(nfskeys_wb_sampler_get_limit(s, NULL), 64 * MiB);
	nfskeys_wb_sampler_free(s);
	nfskeys_wb_dev_free(dev);
	nfskeys_ctx_unref(ctx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parse_61),
		cmocka_unit_test(parse_8_fields),
		cmocka_unit_test(parse_malformed),
		cmocka_unit_test(escape_and_ratio),
		cmocka_unit_test_setup_teardown(bdi_61_apply_restore, setup, teardown),
		cmocka_unit_test_setup_teardown(bdi_62_apply_restore, setup, teardown),
		cmocka_unit_test_setup_teardown(bdi_refusals, setup, teardown),
		cmocka_unit_test_setup_teardown(sampler, setup, teardown),
		cmocka_unit_test(limit_mapping),
		cmocka_unit_test_setup_teardown(controller_names, setup, teardown),
		cmocka_unit_test_setup_teardown(sampler_nfskeys, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
