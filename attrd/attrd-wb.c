/* Directory writeback policy on the kernel's mounts (attrd-wb.h).  The policy in effect at
 * a mounted filesystem's root decides its bdi's limit: a bdi is one superblock, so a
 * policy below the root reaches the kernel only where it has a mount of its own (the
 * sub-mounts attrd-mounts.c makes are nosharecache: a superblock and a bdi each).  Only
 * the mount table is read (no path on the network filesystem is touched: a server that
 * stopped answering must not hang the daemon), through the same libnfskeys calls as
 * `nfskeys wb apply` and `nfskeys wb run`. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libmount.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "attrd-wb.h"
#include "conf-get.h"
#include "evloop.h"
#include "macros.h"
#include "nfskeys-attr-daemon.h"
#include "nfskeys-wb.h"
#include "time-util.h"

/* the adaptive limit's period, as `nfskeys wb run`'s default --interval */
#define TICK_USEC (100 * USEC_PER_MSEC)
/* how often a fixed limit is checked against a moved global dirty threshold (6.1 turns
 * a limit into a ratio of the threshold of the moment) */
#define REFRESH_USEC (5 * USEC_PER_SEC)

struct wbent {
	dev_t dev;
	struct nfskeys_wb_mount *m;
	struct nfskeys_wb_dev *wdev; /* the adaptive limit's estimator (writeback=throttled) */
	uint64_t want;		     /* the policy's limit (adaptive: its ceiling), 0: none */
	bool adaptive, sampled;	     /* asked for; in the sampler now */
	uint64_t written;	     /* the limit last written to the bdi, 0: none */
	bool seen;
};

struct attrd_wb {
	struct nfskeys_ctx *ctx;
	struct nfskeys_attr_store *store;
	struct evloop *loop;
	struct libmnt_monitor *mon;
	struct evio *io;
	struct evtimer *timer;
	struct nfskeys_wb_sampler *sampler;
	struct wbent *v;
	size_t n;
	char *owned_path; /* RUNDIR/attrd-wb: the bdis set, for a start after a crash */
	dev_t *orphans;	  /* read from it at start: put back unless a policy wants them */
	size_t n_orphans;
	bool enabled;
	uint64_t thresh;
	int64_t last_refresh;
};

static bool network_fstype(const char *t)
{
	return t && (streq(t, "nfs") || streq(t, "nfs4") || streq(t, "cifs") || streq(t, "smb3"));
}

/* The limit the policy at the mount's root asks for (0: none) and whether it asks for the
 * adaptive one: dirty_limit in effect, or writeback=throttled (with dirty_limit as the
 * ceiling, else [Writeback] Dirty-Limit, else 256M). */
static uint64_t policy_at(struct attrd_wb *w, struct libmnt_fs *fs, bool *ret_adaptive)
{
	struct nfskeys_attr_id *id = NULL;
	struct nfskeys_attr_policy *p = NULL;
	struct nfskeys_attr_entry e;
	const struct conf_key_def *d = conf_schema_find("Writeback", "Dirty-Limit");
	uint64_t limit = 0;
	bool throttled = false;

	*ret_adaptive = false;
	if (attr_id_from_mount(mnt_fs_get_fstype(fs), mnt_fs_get_source(fs), mnt_fs_get_root(fs),
			       mnt_fs_get_devno(fs), mnt_fs_get_target(fs), "", &id) < 0)
		return 0;
	/* the daemon's own store (its index), as the sub-mounts read it */
	if (nfskeys_attr_policy_new(&p) < 0 ||
	    attr_index_resolve(attr_store_index(w->store), nfskeys_attr_id_get_domain(id),
			       nfskeys_attr_id_get_path(id), 0, p) < 0)
		goto out;
	/* enum index: sync, async, throttled */
	throttled = nfskeys_attr_policy_get(p, "writeback", &e) == 0 && e.number == 2;
	if (nfskeys_attr_policy_get(p, "dirty_limit", &e) == 0) {
		limit = e.number;
	} else if (throttled) {
		int64_t v = 0;

		/* [Writeback] Dirty-Limit or its default (a bad value was refused when the
		 * configuration was loaded) */
		if (conf_get_typed(w->ctx, "Writeback", "Dirty-Limit", &v, NULL, 0) == 0)
			limit = (uint64_t)v;
	}
	/* within the bounds of [Writeback] Dirty-Limit, which are a bdi limit's */
	if (limit)
		limit = MIN(MAX(limit, (uint64_t)d->min), (uint64_t)d->max);
	/* the adaptive limit follows mountstats, which has NFS mounts only */
	*ret_adaptive = throttled && limit && strncmp(mnt_fs_get_fstype(fs), "nfs", 3) == 0;
out:
	nfskeys_attr_policy_free(p);
	nfskeys_attr_id_free(id);
	return limit;
}

static struct wbent *entry_find(struct attrd_wb *w, dev_t dev)
{
	for (size_t i = 0; i < w->n; i++)
		if (w->v[i].dev == dev)
			return &w->v[i];
	return NULL;
}

static void entry_done(struct attrd_wb *w, struct wbent *e, const char *why)
{
	if (e->written) {
		int r = nfskeys_wb_mount_restore(e->m);

		if (why)
			log_notice(w->ctx, "writeback: bdi %s (%s): %s: %s",
				   nfskeys_wb_mount_get_bdi(e->m), nfskeys_wb_mount_get_path(e->m),
				   why,
				   r >= 0 ? "the kernel's values put back" :
					    "nothing to put back (the bdi went with its mount)");
	}
	nfskeys_wb_mount_free(e->m);
	nfskeys_wb_dev_free(e->wdev);
	*e = (struct wbent){};
}

static void write_limit(struct attrd_wb *w, struct wbent *e, uint64_t limit, bool say)
{
	int r = nfskeys_wb_mount_apply(e->m, limit);

	if (r < 0) {
		if (say)
			log_err(w->ctx,
				"writeback: bdi %s (%s): cannot set the dirty limit %" PRIu64
				": %s",
				nfskeys_wb_mount_get_bdi(e->m), nfskeys_wb_mount_get_path(e->m),
				limit, strerror(-r));
		return;
	}
	if (say)
		log_notice(w->ctx, "writeback: bdi %s (%s): dirty limit %" PRIu64 " bytes%s",
			   nfskeys_wb_mount_get_bdi(e->m), nfskeys_wb_mount_get_path(e->m), limit,
			   e->adaptive ? ", adaptive below it (writeback=throttled)" : "");
	e->written = limit;
}

/* The sampler holds the adaptive entries; it has no removal, so a change rebuilds it. */
static void sampler_rebuild(struct attrd_wb *w)
{
	bool need = false, same = true;

	for (size_t i = 0; i < w->n; i++) {
		need |= w->v[i].adaptive;
		same &= w->v[i].adaptive == w->v[i].sampled;
	}
	if (same && (w->sampler || !need))
		return;
	w->sampler = nfskeys_wb_sampler_free(w->sampler);
	for (size_t i = 0; i < w->n; i++) {
		w->v[i].sampled = false;
		w->v[i].wdev = nfskeys_wb_dev_free(w->v[i].wdev);
	}
	if (!need)
		return;
	if (nfskeys_wb_sampler_new(w->ctx, &w->sampler) < 0 ||
	    nfskeys_wb_sampler_set_controller(w->sampler, "nfskeys", 0) < 0) {
		w->sampler = nfskeys_wb_sampler_free(w->sampler);
		log_err(w->ctx, "writeback: cannot start the adaptive limit: out of memory");
		return;
	}
	for (size_t i = 0; i < w->n; i++) {
		struct wbent *e = &w->v[i];

		if (!e->adaptive)
			continue;
		if (nfskeys_wb_dev_new(nfskeys_wb_mount_get_bdi(e->m), NFSKEYS_WB_NFSKEYS, e->want,
				       NFSKEYS_WB_UNSTABLE, NULL, &e->wdev) < 0 ||
		    nfskeys_wb_sampler_add(w->sampler, e->m, e->wdev, e->want) < 0) {
			e->wdev = nfskeys_wb_dev_free(e->wdev);
			continue; /* the fixed limit stays */
		}
		e->sampled = true;
	}
}

/* The bdis this daemon has set ("MAJ:MIN" lines, written anew after each change): one
 * killed before it could put the kernel's values back finds them at its next start.  The
 * kernel's values themselves are in the library's saved state (nfskeys_wb_mount_apply()). */
static void owned_save(struct attrd_wb *w)
{
	char tmp[PATH_MAX];
	FILE *f;
	size_t n = 0;
	int fd;

	if (!w->owned_path)
		return;
	for (size_t i = 0; i < w->n; i++)
		n += w->v[i].written != 0;
	if (!n) {
		unlink(w->owned_path);
		return;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", w->owned_path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		if (fd >= 0)
			close(fd);
		log_warning(w->ctx, "writeback: %s: %s; a crash would leave the limits set", tmp,
			    strerror(errno));
		return;
	}
	for (size_t i = 0; i < w->n; i++)
		if (w->v[i].written)
			fprintf(f, "%u:%u\n", major(w->v[i].dev), minor(w->v[i].dev));
	if (fclose(f) != 0 || rename(tmp, w->owned_path) < 0)
		unlink(tmp);
}

static void owned_load(struct attrd_wb *w)
{
	FILE *f = w->owned_path ? fopen(w->owned_path, "re") : NULL;
	unsigned maj, min;

	if (!f)
		return;
	while (fscanf(f, "%u:%u\n", &maj, &min) == 2) {
		dev_t *nv = reallocarray(w->orphans, w->n_orphans + 1, sizeof(*nv));

		if (!nv)
			break;
		w->orphans = nv;
		w->orphans[w->n_orphans++] = makedev(maj, min);
	}
	fclose(f);
}

/* The bdis an earlier run set that no policy wants now: the kernel's values back (once). */
static void orphans_restore(struct attrd_wb *w, struct libmnt_table *tb)
{
	struct libmnt_iter *it = mnt_new_iter(MNT_ITER_FORWARD);
	struct libmnt_fs *fs;

	for (size_t i = 0; it && i < w->n_orphans; i++) {
		struct nfskeys_wb_mount *m = NULL;

		if (entry_find(w, w->orphans[i]))
			continue; /* wanted: its saved state keeps the kernel's first values */
		mnt_reset_iter(it, MNT_ITER_FORWARD);
		fs = NULL;
		while (mnt_table_next_fs(tb, it, &fs) == 0)
			if (mnt_fs_get_devno(fs) == w->orphans[i] &&
			    network_fstype(mnt_fs_get_fstype(fs)))
				break;
		if (!fs || mnt_fs_get_devno(fs) != w->orphans[i] ||
		    wbk_mount_from_table(w->ctx, mnt_fs_get_id(fs), mnt_fs_get_target(fs),
					 w->orphans[i], mnt_fs_get_fstype(fs), &m) < 0)
			continue; /* unmounted meanwhile: the limit went with the bdi */
		if (nfskeys_wb_mount_restore(m) >= 0)
			log_notice(w->ctx,
				   "writeback: bdi %s (%s): set by an earlier run, no policy "
				   "now: the kernel's values put back",
				   nfskeys_wb_mount_get_bdi(m), nfskeys_wb_mount_get_path(m));
		nfskeys_wb_mount_free(m);
	}
	mnt_free_iter(it);
	free(w->orphans);
	w->orphans = NULL;
	w->n_orphans = 0;
}

static void on_timer(struct evloop *loop, struct evtimer *t, void *userdata);

static void timer_arm(struct attrd_wb *w)
{
	bool adaptive = false;
	int64_t when;

	for (size_t i = 0; i < w->n; i++)
		adaptive |= w->v[i].sampled;
	if (!w->n || !w->enabled) {
		evloop_timer_free(w->timer);
		w->timer = NULL;
		return;
	}
	when = evloop_now(w->loop) + (adaptive ? TICK_USEC : REFRESH_USEC);
	if (w->timer)
		evloop_timer_set(w->timer, when);
	else if (evloop_add_timer(w->loop, when, on_timer, w, &w->timer) < 0)
		w->timer = NULL; /* out of memory: the next change re-arms */
}

static void on_timer(struct evloop *loop, struct evtimer *t, void *userdata)
{
	struct attrd_wb *w = userdata;
	int64_t now = evloop_now(loop);
	bool refresh = false;
	uint64_t th;
	int r = 0;

	(void)t;
	if (w->sampler)
		r = nfskeys_wb_sampler_tick(w->sampler, (uint64_t)now * 1000, NULL, NULL);
	if (r == -ENOENT) {
		/* a sampled mount left mountstats: the monitor brings the table in step; until
		 * then the others keep their last limit */
		attrd_wb_apply(w);
		return;
	}
	if (now - w->last_refresh >= REFRESH_USEC) {
		w->last_refresh = now;
		refresh = nfskeys_wb_dirty_threshold(&th) >= 0 && th != w->thresh;
		if (refresh)
			w->thresh = th;
	}
	for (size_t i = 0; i < w->n; i++) {
		struct wbent *e = &w->v[i];
		uint64_t lim = e->sampled ? nfskeys_wb_sampler_get_limit(w->sampler, e->m) : 0;

		if (lim && lim != e->written)
			write_limit(w, e, lim, false);
		else if (refresh && e->written)
			nfskeys_wb_mount_refresh(e->m);
	}
	timer_arm(w);
}

/* One superblock (dev) can be mounted at several places (bind mounts, a shared superblock):
 * the smallest limit asked at any of them wins, adaptive when any asks. */
static void want_mount(struct attrd_wb *w, struct libmnt_fs *fs)
{
	dev_t dev = mnt_fs_get_devno(fs);
	struct wbent *e = entry_find(w, dev), *nv;
	bool adaptive;
	uint64_t limit = policy_at(w, fs, &adaptive);

	if (!limit && !e)
		return;
	if (!e) {
		nv = reallocarray(w->v, w->n + 1, sizeof(*nv));
		if (!nv)
			return;
		w->v = nv;
		e = &w->v[w->n];
		*e = (struct wbent){ .dev = dev };
		if (wbk_mount_from_table(w->ctx, mnt_fs_get_id(fs), mnt_fs_get_target(fs), dev,
					 mnt_fs_get_fstype(fs), &e->m) < 0)
			return;
		w->n++;
	}
	if (!e->seen) {
		e->seen = true;
		e->want = limit;
		e->adaptive = adaptive;
	} else if (limit) {
		e->want = e->want ? MIN(e->want, limit) : limit;
		e->adaptive |= adaptive;
	}
}

void attrd_wb_apply(struct attrd_wb *w)
{
	struct libmnt_table *tb = NULL;
	struct libmnt_iter *it = NULL;
	struct libmnt_fs *fs;
	size_t k = 0;

	if (!w || !w->ctx || !w->store)
		return;
	for (size_t i = 0; i < w->n; i++)
		w->v[i].seen = false;
	if (w->enabled) {
		tb = mnt_new_table_from_file("/proc/self/mountinfo");
		it = mnt_new_iter(MNT_ITER_FORWARD);
		if (!tb || !it) {
			log_err(w->ctx, "writeback: cannot read the mount table; limits kept");
			for (size_t i = 0; i < w->n; i++)
				w->v[i].seen = true;
		}
		while (tb && it && mnt_table_next_fs(tb, it, &fs) == 0)
			if (network_fstype(mnt_fs_get_fstype(fs)))
				want_mount(w, fs);
		if (tb && w->n_orphans)
			orphans_restore(w, tb);
		mnt_free_iter(it);
		mnt_unref_table(tb);
	}
	for (size_t i = 0; i < w->n; i++) {
		struct wbent *e = &w->v[i];

		if (!e->seen || !e->want) {
			entry_done(w, e,
				   !w->enabled ? "[Mounts] Apply-Mounts = no" :
				   !e->seen    ? "unmounted" :
						 "no dirty_limit or writeback=throttled policy");
			continue;
		}
		/* a fixed limit, or the ceiling the adaptive one starts from */
		if (!e->written || (!e->adaptive && e->written != e->want) ||
		    (e->adaptive && e->written > e->want) || (e->adaptive && !e->sampled))
			write_limit(w, e, e->want, true);
		w->v[k++] = *e;
	}
	w->n = k;
	owned_save(w);
	sampler_rebuild(w);
	timer_arm(w);
}

static void on_monitor(struct evloop *loop, struct evio *io, int fd, uint32_t events,
		       void *userdata)
{
	struct attrd_wb *w = userdata;

	(void)loop, (void)io, (void)fd, (void)events;
	mnt_monitor_event_cleanup(w->mon);
	attrd_wb_apply(w);
}

static int monitor_start(struct attrd_wb *w)
{
	int fd;

	if (w->mon)
		return 0;
	w->mon = mnt_new_monitor();
	if (!w->mon || mnt_monitor_enable_kernel(w->mon, 1) < 0)
		return -ENOMEM;
	fd = mnt_monitor_get_fd(w->mon);
	if (fd < 0)
		return fd;
	return evloop_add_io(w->loop, fd, EPOLLIN, on_monitor, w, &w->io);
}

static void monitor_stop(struct attrd_wb *w)
{
	evloop_io_free(w->io);
	w->io = NULL;
	mnt_unref_monitor(w->mon);
	w->mon = NULL;
}

int attrd_wb_new(struct evloop *loop, const char *runtime_dir, struct attrd_wb **ret)
{
	struct attrd_wb *w = calloc(1, sizeof(*w));

	if (!w)
		return -ENOMEM;
	w->loop = loop;
	if (runtime_dir && asprintf(&w->owned_path, "%s/attrd-wb", runtime_dir) < 0) {
		free(w);
		return -ENOMEM;
	}
	owned_load(w);
	*ret = w;
	return 0;
}

void attrd_wb_configure(struct attrd_wb *w, struct nfskeys_ctx *ctx,
			struct nfskeys_attr_store *store, bool enabled)
{
	if (!w)
		return;
	w->ctx = ctx;
	w->store = store;
	w->enabled = enabled;
	if (enabled) {
		int r = monitor_start(w);

		if (r < 0)
			log_err(ctx,
				"writeback: cannot watch the mount table: %s; dirty limits "
				"follow policy changes only",
				strerror(-r));
	} else {
		monitor_stop(w);
	}
	nfskeys_wb_dirty_threshold(&w->thresh);
	attrd_wb_apply(w);
}

void attrd_wb_free(struct attrd_wb *w)
{
	if (!w)
		return;
	monitor_stop(w);
	evloop_timer_free(w->timer);
	nfskeys_wb_sampler_free(w->sampler);
	for (size_t i = 0; i < w->n; i++)
		entry_done(w, &w->v[i], "nfskeys-attrd stops");
	w->n = 0;
	owned_save(w);
	free(w->owned_path);
	free(w->orphans);
	free(w->v);
	free(w);
}
