/* Writeback on kernel mounts: the dirty limit of a mount's bdi (/sys/class/bdi/MAJ:MIN,
 * doc/KERNEL-INTERFACES.md §6), the kernel's own values saved and restored, and the
 * sampler that turns /proc/self/mountstats' WRITE and COMMIT counters into completions
 * and an adaptive per-mount limit. */
/* Here: the bdi knobs and the saved state; finding a path's mount and bdi is
 * wb-kernel-mount.c, the mountstats parser and the sampler wb-kernel-sampler.c, what they
 * share wb-kernel-private.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "libnfskeys-private.h"
#include "wb-kernel.h"
#include "wb-private.h"
#include "wb-kernel-private.h"

#define STATE_MAGIC "# nfskeys wb state 1"

/* What nfskeys saved before touching a bdi, and what it set (Runtime-Dir/wb/MAJ:MIN). */
struct wb_state {
	int mnt_id;
	uint64_t limit, thresh;
	char ratio_file[16]; /* max_ratio or max_ratio_fine */
	uint64_t ratio;      /* the kernel's value of ratio_file */
	int strict;          /* the kernel's strict_limit, -1 when absent */
};

/* The root of /proc; a test-only override, ignored when setuid (secure_getenv). */
const char *wbk_proc_root(void)
{
	const char *s = secure_getenv("NFSKEYS_WB_PROC");

	return s && *s ? s : "/proc";
}

int wbk_escape_path(const char *path, char *buf, size_t size)
{
	size_t o = 0;

	for (const char *p = path; *p; p++) {
		unsigned char c = (unsigned char)*p;

		if (c == ' ' || c == '\t' || c == '\n' || c == '\\') {
			if (o + 4 >= size)
				return -ENAMETOOLONG;
			o += (size_t)snprintf(buf + o, size - o, "\\%03o", c);
		} else {
			if (o + 1 >= size)
				return -ENAMETOOLONG;
			buf[o++] = (char)c;
		}
	}
	if (o >= size)
		return -ENAMETOOLONG;
	buf[o] = '\0';
	return 0;
}

unsigned wbk_ratio_for(uint64_t limit, uint64_t thresh)
{
	uint64_t r;

	if (thresh == 0)
		return 100;
	if (limit >= thresh)
		return 100;
	/* limit < thresh <= 2^64, so 100 * limit / thresh < 100: compute without overflow */
	r = (uint64_t)ceil((double)limit * 100.0 / (double)thresh);
	return (unsigned)MIN(MAX(r, 1ull), 100ull);
}

/* ------------------------------------------------------------------ small file I/O */

static int read_small(const char *path, char *buf, size_t size)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

static int read_u64_file(const char *path, uint64_t *ret)
{
	char buf[64], *end;
	unsigned long long v;
	int r = read_small(path, buf, sizeof(buf));

	if (r < 0)
		return r;
	errno = 0;
	v = strtoull(buf, &end, 10);
	if (errno || end == buf || (*end && *end != '\n'))
		return -EBADMSG;
	*ret = v;
	return 0;
}

static int write_str_file(const char *path, const char *val)
{
	_cleanup_close_ int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOFOLLOW);
	size_t len = strlen(val);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, val, len);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

static int knob_read(const struct nfskeys_wb_mount *m, const char *knob, uint64_t *ret)
{
	char p[PATH_MAX + 32];

	snprintf(p, sizeof(p), "%s/%s", m->bdidir, knob);
	return read_u64_file(p, ret);
}

static int knob_write(const struct nfskeys_wb_mount *m, const char *knob, uint64_t val)
{
	char p[PATH_MAX + 32], v[32];
	int r;

	snprintf(p, sizeof(p), "%s/%s", m->bdidir, knob);
	snprintf(v, sizeof(v), "%llu", (unsigned long long)val);
	r = write_str_file(p, v);
	if (r < 0)
		log_err(m->ctx, "writing %s to %s: %s", v, p, strerror(-r));
	return r;
}

/* The global dirty threshold in bytes (/proc/vmstat nr_dirty_threshold, pages). */
static int global_thresh(uint64_t *ret);

_public_ int nfskeys_wb_dirty_threshold(uint64_t *ret_bytes)
{
	uint64_t v;
	int r;

	if (!ret_bytes)
		return -EINVAL;
	r = global_thresh(&v);
	if (r >= 0)
		*ret_bytes = v;
	return r;
}

static int global_thresh(uint64_t *ret)
{
	char p[PATH_MAX], line[256];
	_cleanup_fclose_ FILE *f = NULL;
	unsigned long long pages;

	snprintf(p, sizeof(p), "%s/vmstat", wbk_proc_root());
	f = fopen(p, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "nr_dirty_threshold %llu", &pages) == 1) {
			*ret = (uint64_t)pages * (uint64_t)sysconf(_SC_PAGESIZE);
			return 0;
		}
	return -ENODATA;
}

/* ------------------------------------------------------------------ saved state */

static void state_dir(const struct nfskeys_ctx *ctx, char *buf, size_t size)
{
	const char *d = nfskeys_conf_get(ctx, "General", "Runtime-Dir");

	snprintf(buf, size, "%s/wb", d && *d ? d : RUNDIR);
}

static void state_path(const struct nfskeys_wb_mount *m, char *buf, size_t size)
{
	char d[PATH_MAX];

	state_dir(m->ctx, d, sizeof(d));
	snprintf(buf, size, "%s/%s", d, m->bdi);
}

/* 0 and *st filled; -ENOENT when none; -EBADMSG when the file is damaged. */
static int state_load(const struct nfskeys_wb_mount *m, struct wb_state *st)
{
	char p[PATH_MAX + 64], line[256];
	_cleanup_fclose_ FILE *f = NULL;
	unsigned seen = 0;

	state_path(m, p, sizeof(p));
	f = fopen(p, "re");
	if (!f)
		return -errno;
	*st = (struct wb_state){ .strict = -1 };
	if (!fgets(line, sizeof(line), f) || strncmp(line, STATE_MAGIC, strlen(STATE_MAGIC)))
		return -EBADMSG;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long v;
		char name[16];
		int i;

		if (sscanf(line, "mnt_id %d", &i) == 1)
			st->mnt_id = i, seen |= 1;
		else if (sscanf(line, "limit %llu", &v) == 1)
			st->limit = v, seen |= 2;
		else if (sscanf(line, "thresh %llu", &v) == 1)
			st->thresh = v;
		else if (sscanf(line, "saved %15s %llu", name, &v) == 2 &&
			 (streq(name, "max_ratio") || streq(name, "max_ratio_fine")))
			snprintf(st->ratio_file, sizeof(st->ratio_file), "%s", name), st->ratio = v,
				seen |= 4;
		else if (sscanf(line, "saved_strict_limit %d", &i) == 1 && i >= -1 && i <= 1)
			st->strict = i;
	}
	return seen == 7 ? 0 : -EBADMSG;
}

static int mkdir_p(const char *d)
{
	char buf[PATH_MAX];

	snprintf(buf, sizeof(buf), "%s", d);
	for (char *s = buf + 1; *s; s++)
		if (*s == '/') {
			*s = '\0';
			if (mkdir(buf, 0755) < 0 && errno != EEXIST)
				return -errno;
			*s = '/';
		}
	return mkdir(buf, 0755) < 0 && errno != EEXIST ? -errno : 0;
}

static int state_save(const struct nfskeys_wb_mount *m, const struct wb_state *st)
{
	char d[PATH_MAX], p[PATH_MAX + 64], tmp[PATH_MAX + 80];
	_cleanup_fclose_ FILE *f = NULL;
	int fd, r;

	state_dir(m->ctx, d, sizeof(d));
	r = mkdir_p(d);
	if (r < 0) {
		log_err(m->ctx, "cannot keep the kernel's values of bdi %s in %s: %s", m->bdi, d,
			strerror(-r));
		return r;
	}
	state_path(m, p, sizeof(p));
	snprintf(tmp, sizeof(tmp), "%s.tmp%ld", p, (long)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		r = -errno;
		log_err(m->ctx, "cannot keep the kernel's values of bdi %s in %s: %s", m->bdi, tmp,
			strerror(-r));
		return r;
	}
	f = fdopen(fd, "w");
	if (!f) {
		r = -errno;
		close(fd);
		unlink(tmp);
		return r;
	}
	fprintf(f, "%s\n# the kernel's values of bdi %s before nfskeys set a dirty limit\n",
		STATE_MAGIC, m->bdi);
	fprintf(f, "mount %s\nmnt_id %d\nlimit %llu\nthresh %llu\nsaved %s %llu\n"
		   "saved_strict_limit %d\n",
		m->esc, m->mnt_id, (unsigned long long)st->limit, (unsigned long long)st->thresh,
		st->ratio_file, (unsigned long long)st->ratio, st->strict);
	/* no fsync: the file only has to outlive the process (a crash of wb run or of attrd),
	 * which the page cache does; a power loss takes the mount, its bdi and the runtime
	 * directory with it, and a file left by an earlier mount is dropped by its mnt_id.
	 * wb run saves on every limit it sets, up to ten times a second per mount. */
	if (fflush(f) != 0) {
		r = -errno;
		unlink(tmp);
		return r;
	}
	if (rename(tmp, p) < 0) {
		r = -errno;
		unlink(tmp);
		return r;
	}
	return 0;
}

static void state_remove(const struct nfskeys_wb_mount *m)
{
	char p[PATH_MAX + 64];

	state_path(m, p, sizeof(p));
	unlink(p);
}

/* The state of this mount, or -ENOENT (none, or a stale one left by an earlier mount
 * that had the same device number: dropped). */
static int state_get(const struct nfskeys_wb_mount *m, struct wb_state *st)
{
	int r = state_load(m, st);

	if (r == -EBADMSG) {
		log_warning(m->ctx, "bdi %s: damaged saved state, ignored", m->bdi);
		return -ENOENT;
	}
	if (r < 0)
		return r;
	if (st->mnt_id != m->mnt_id) {
		log_info(m->ctx, "bdi %s: saved state of an earlier mount (id %d), dropped",
			 m->bdi, st->mnt_id);
		state_remove(m);
		return -ENOENT;
	}
	return 0;
}

/* ------------------------------------------------------------------ apply / restore */

/* 6.2+: the kernel keeps max_bytes as a share of the global threshold it has at the time of
 * the write (parts per million, rounded down), and refuses a share above 100% (EINVAL). A
 * limit at or above the threshold is the whole threshold: max_ratio 100, the same bound;
 * so is one the threshold fell under between our read of it and the kernel's. */
static int set_max_bytes(const struct nfskeys_wb_mount *m, uint64_t limit, uint64_t thresh)
{
	char p[PATH_MAX + 32], v[32];
	int r;

	if (limit < thresh) {
		snprintf(p, sizeof(p), "%s/max_bytes", m->bdidir);
		snprintf(v, sizeof(v), "%llu", (unsigned long long)limit);
		r = write_str_file(p, v);
		if (r != -EINVAL) {
			if (r < 0)
				log_err(m->ctx, "writing %s to %s: %s", v, p, strerror(-r));
			return r;
		}
		log_info(m->ctx, "bdi %s: %s bytes is over the kernel's global dirty threshold "
				 "now: the whole threshold (max_ratio 100)", m->bdi, v);
	}
	return knob_write(m, "max_ratio", 100);
}

static int set_knobs(const struct nfskeys_wb_mount *m, uint64_t limit, uint64_t thresh)
{
	int r;

	if (m->knobs == 2) {
		r = set_max_bytes(m, limit, thresh);
		if (r >= 0)
			r = knob_write(m, "strict_limit", 1);
		return r;
	}
	return knob_write(m, "max_ratio", wbk_ratio_for(limit, thresh));
}

static int put_back(const struct nfskeys_wb_mount *m, const struct wb_state *st)
{
	int r = 0, k;

	if (st->strict >= 0 && m->knobs == 2)
		r = knob_write(m, "strict_limit", (uint64_t)st->strict);
	k = knob_write(m, st->ratio_file, st->ratio);
	return r < 0 ? r : k;
}

_public_ int nfskeys_wb_mount_apply(struct nfskeys_wb_mount *m, uint64_t limit)
{
	struct wb_state st;
	uint64_t thresh, v;
	int r;

	if (!m)
		return -EINVAL;
	if (limit < LIMIT_MIN || limit > LIMIT_MAX) {
		log_err(m->ctx, "dirty limit %llu bytes is out of range (1M..1T)",
			(unsigned long long)limit);
		return -ERANGE;
	}
	r = global_thresh(&thresh);
	if (r < 0) {
		log_err(m->ctx, "the global dirty threshold (%s/vmstat nr_dirty_threshold): %s",
			wbk_proc_root(), strerror(-r));
		return r;
	}
	r = state_get(m, &st);
	if (r == -ENOENT) {
		/* first apply: save the kernel's values before touching anything */
		st = (struct wb_state){ .mnt_id = m->mnt_id, .strict = -1 };
		snprintf(st.ratio_file, sizeof(st.ratio_file), "%s",
			 m->knobs == 2 ? "max_ratio_fine" : "max_ratio");
		const char *knob = st.ratio_file;

		r = knob_read(m, knob, &st.ratio);
		if (r >= 0 && m->knobs == 2) {
			knob = "strict_limit";
			r = knob_read(m, knob, &v);
			st.strict = v ? 1 : 0;
		}
		if (r < 0) {
			log_err(m->ctx, "reading bdi %s's %s: %s", m->bdi, knob, strerror(-r));
			return r;
		}
	} else if (r < 0) {
		return r;
	}
	st.limit = limit;
	st.thresh = thresh;
	r = state_save(m, &st);
	if (r < 0)
		return r;
	r = set_knobs(m, limit, thresh);
	if (r < 0) {
		/* leave the bdi as the kernel had it, and nothing saved that is not applied */
		put_back(m, &st);
		state_remove(m);
	}
	return r;
}

/* 6.2+: the bytes the kernel enforces move with its threshold (it keeps the share it had
 * when we wrote); a drift under 1/64 of the threshold since that write is left alone, as
 * is a limit written as the whole threshold while it still covers it.  The threshold
 * moves with free memory nearly every second, and each rewrite is two sysfs writes and a
 * synced state file per mount. */
static bool drift_small(const struct wb_state *st, uint64_t thresh)
{
	uint64_t d = thresh > st->thresh ? thresh - st->thresh : st->thresh - thresh;

	if (st->limit >= st->thresh)
		return st->limit >= thresh;
	return st->limit < thresh && d <= st->thresh / 64;
}

_public_ int nfskeys_wb_mount_refresh(struct nfskeys_wb_mount *m)
{
	struct wb_state st;
	uint64_t thresh, cur;
	int r;

	if (!m)
		return -EINVAL;
	r = state_get(m, &st);
	if (r < 0)
		return r;
	r = global_thresh(&thresh);
	if (r < 0)
		return r;
	if (thresh == st.thresh || (m->knobs == 2 && drift_small(&st, thresh)))
		return 0;
	if (m->knobs == 1 && knob_read(m, "max_ratio", &cur) >= 0 &&
	    cur == wbk_ratio_for(st.limit, thresh)) {
		r = 0;
	} else {
		r = set_knobs(m, st.limit, thresh);
		if (r < 0)
			return r;
		r = 1;
	}
	st.thresh = thresh;
	return state_save(m, &st) < 0 ? -EIO : r;
}

_public_ int nfskeys_wb_mount_restore(struct nfskeys_wb_mount *m)
{
	struct wb_state st;
	int r;

	if (!m)
		return -EINVAL;
	r = state_get(m, &st);
	if (r < 0)
		return r;
	if (access(m->bdidir, F_OK) < 0 && errno == ENOENT) {
		/* unmounted: the kernel's values went with the bdi; forget ours */
		state_remove(m);
		return 0;
	}
	r = put_back(m, &st);
	if (r < 0)
		return r;
	state_remove(m);
	return 0;
}

_public_ int nfskeys_wb_mount_get_state(struct nfskeys_wb_mount *m,
					struct nfskeys_wb_mount_state *ret)
{
	struct nfskeys_wb_mount_state s = { .strict_limit = -1, .saved_strict_limit = -1 };
	struct wb_state st;
	uint64_t v;
	int r;

	if (!m || !ret)
		return -EINVAL;
	snprintf(s.bdi, sizeof(s.bdi), "%s", m->bdi);
	snprintf(s.fstype, sizeof(s.fstype), "%s", m->fstype);
	s.kernel_knobs = m->knobs;
	r = knob_read(m, "max_ratio", &v);
	if (r < 0)
		return r;
	s.max_ratio = (unsigned)v;
	if (m->knobs == 2) {
		if (knob_read(m, "strict_limit", &v) >= 0)
			s.strict_limit = v ? 1 : 0;
		if (knob_read(m, "max_bytes", &v) >= 0)
			s.max_bytes = v;
	}
	if (state_get(m, &st) == 0) {
		s.applied = 1;
		s.limit = st.limit;
		s.thresh = st.thresh;
		s.saved_max_ratio = streq(st.ratio_file, "max_ratio_fine") ?
					    (unsigned)(st.ratio / 10000) : (unsigned)st.ratio;
		s.saved_strict_limit = st.strict;
	}
	*ret = s;
	return 0;
}
