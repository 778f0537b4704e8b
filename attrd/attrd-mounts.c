/* Directory policy applied to live NFS mounts (doc/LIVE-MOUNTS.md).  Every NFS mount not made
 * here is a parent; every directory of its export with policy whose mount options (the
 * library's one mapping, attr_policy_mount_options) differ from its parent directory's
 * gets a nosharecache sub-mount.  Mounting is a root action on a path users shape, so
 * targets are opened beneath the parent's root with no symlinks, checked to sit on the
 * expected mount, and the new mount is made detached (fsopen/fsmount), checked to be the
 * same server directory, and only then attached on that descriptor (move_mount).
 *
 * Every syscall that can reach a server (the path walk, fsconfig, umount) runs in a worker
 * thread on a copy of one server's entries, one job per server at a time and a few servers
 * at once: a server that stops answering stalls its own sub-mounts, never nfskeys-attrd's
 * loop nor other servers' sub-mounts.  The loop computes what is wanted (from the mount
 * table and the in-memory policy index), hands each server's copy over, and takes it back
 * when that job is done; a change for a server whose job runs is applied after it. */
/* Here: what is wanted, apply and the life cycle; the workers are in attrd-mounts-jobs.c,
 * the server of a mount and the choice of jobs in attrd-mounts-servers.c, the kernel side
 * in attrd-mounts-kernel.c, the state file in attrd-mounts-state.c, the table of entries
 * in attrd-mounts-table.c. */
#include <libmount.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "attrd-mounts.h"
#include "attrd-mounts-private.h"
#include "conf-get.h"
#include "evloop.h"
#include "macros.h"
#include "nfskeys-attr-daemon.h"
#include "time-util.h"

static const char *const mstate_names[] = { "pending", "applied", "failed" };

/* ---------------------------------------------------------------- what is wanted */

/* Options of the parent mount kept on a sub-mount: its connection and identity, not its
 * caching (the policy decides that) and not what the kernel only reports (namlen). */
static char *base_options(const char *super)
{
	static const char *const drop[] = { "namlen", "ac", "noac", "actimeo", "acregmin",
					    "acregmax", "acdirmin", "acdirmax", "lookupcache",
					    "cto", "nocto", "fsc", "nofsc", "sharecache",
					    "nosharecache", NULL };

	return mount_options_without(super, drop);
}

/* The parent's superblock options exactly as the kernel printed them in mountinfo (its
 * octal escapes kept: libmount's copy is unescaped, and a value's comma then reads as a
 * separator); NULL when the mount is not found or for want of memory. */
static char *raw_super_options(unsigned id)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/mountinfo", "re");
	_cleanup_free_ char *line = NULL;
	size_t size = 0;

	while (f && getline(&line, &size, f) > 0) {
		char *sep, *save = NULL, *fld;

		if (strtoul(line, NULL, 10) != id || !(sep = strstr(line, " - ")))
			continue;
		/* " - FSTYPE SOURCE SUPER_OPTIONS" */
		fld = strtok_r(sep + 3, " \n", &save);
		for (int k = 0; fld && k < 2; k++)
			fld = strtok_r(NULL, " \n", &save);
		return fld ? strdup(fld) : NULL;
	}
	return NULL;
}

/* Why no sub-mount of parent fs can be made for reasons of its own options (a value the
 * options string cannot carry, an attribute that cannot be carried over); NULL when one
 * can.  *ret_attr: the MOUNT_ATTR_* it takes from the parent. */
static char *parent_refused(struct attrd_mounts *m, struct libmnt_fs *fs, unsigned long *ret_attr)
{
	_cleanup_free_ char *raw = raw_super_options((unsigned)mnt_fs_get_id(fs)), *bad = NULL;
	const char *attr = NULL;
	char *why = NULL;

	*ret_attr = mounts_attr_from_options(mnt_fs_get_vfs_options(fs), mnt_fs_get_fs_options(fs),
					     &attr);
	if (attr) {
		if (asprintf(&why, "not applied: the parent mount %s is %s, which a sub-mount "
				   "cannot be given (its mapping cannot be read back)",
			     mnt_fs_get_target(fs), attr) < 0)
			return NULL;
		return why;
	}
	if (!raw) {
		if (asprintf(&why, "not applied: the options of the parent mount %s cannot be "
				   "read from /proc/self/mountinfo", mnt_fs_get_target(fs)) < 0)
			return NULL;
		return why;
	}
	(void)m;
	if (mounts_options_unsafe(raw, &bad) > 0) {
		if (asprintf(&why, "not applied: the parent mount %s has the option '%s', whose "
				   "value holds a comma (it would split into options of its own)",
			     mnt_fs_get_target(fs), bad) < 0)
			return NULL;
	}
	return why;
}

static char *options_at(struct attrd_mounts *m, const char *fstype, const char *domain,
			const char *path)
{
	struct nfskeys_attr_policy *p = NULL;
	char *out = NULL;

	if (nfskeys_attr_policy_new(&p) == 0 &&
	    attr_index_resolve(attr_store_index(m->store), domain, path, 0, p) == 0)
		(void)attr_policy_mount_options(p, fstype, domain, NULL, &out);
	nfskeys_attr_policy_free(p);
	return out;
}

struct dirlist {
	char **v;
	size_t n;
};

static int collect(void *userdata, const struct nfskeys_attr_id *id,
		   const struct nfskeys_attr_policy *policy)
{
	struct dirlist *l = userdata;
	char **v = realloc(l->v, (l->n + 1) * sizeof(*v));

	(void)policy;
	if (!v)
		return -ENOMEM;
	l->v = v;
	v[l->n] = strdup(nfskeys_attr_id_get_path(id));
	return v[l->n++] ? 0 : -ENOMEM;
}

/* Which directory the policy of (domain, dir) was set on: the handles its rows recorded
 * and who set them (root and LDAP rows are the administrator's: no owner to re-check). */
struct dirrows {
	char *handles, *setters;
	int error;
};

static void words_add(char **list, const char *w, struct dirrows *d)
{
	size_t n = strlen(w);
	char *l = NULL;

	for (const char *p = *list; p && *p; p = strchr(p, ' ') ? strchr(p, ' ') + 1 : NULL)
		if (strncmp(p, w, n) == 0 && (p[n] == ' ' || !p[n]))
			return;
	if (asprintf(&l, "%s%s%s", *list ? *list : "", *list ? " " : "", w) < 0) {
		d->error = -ENOMEM;
		return;
	}
	free(*list);
	*list = l;
}

static int dir_row(void *userdata, uid_t by, bool ldap, const char *handle)
{
	struct dirrows *d = userdata;
	char uid[16];

	if (handle && *handle && !strchr(handle, ' '))
		words_add(&d->handles, handle, d);
	if (!ldap && by != 0) {
		snprintf(uid, sizeof(uid), "%u", (unsigned)by);
		words_add(&d->setters, uid, d);
	}
	return d->error;
}

/* The sub-mounts one parent mount calls for. */
static void want_for_parent(struct attrd_mounts *m, struct libmnt_fs *fs)
{
	const char *fstype = mnt_fs_get_fstype(fs), *source = mnt_fs_get_source(fs);
	const char *mp = mnt_fs_get_target(fs), *colon = NULL;
	struct nfskeys_attr_id *pid = NULL;
	struct dirlist l = {};
	_cleanup_free_ char *base = NULL, *why = NULL, *server = NULL, *refused = NULL;
	bool cifs = mounts_cifs_fstype(fstype);
	unsigned long attr = 0;
	size_t plen;

	if (!source || !mp || (!cifs && !(colon = strstr(source, ":/"))))
		return;
	if (attr_id_from_mount(fstype, source, mnt_fs_get_root(fs), mnt_fs_get_devno(fs), mp, "",
			       &pid) < 0)
		return;
	if (attr_store_list(m->store, nfskeys_attr_id_get_domain(pid),
			    nfskeys_attr_id_get_path(pid), collect, &l) < 0)
		goto out;
	/* CIFS: only some parents' credentials can be reused (why says when not) */
	if (cifs ? mounts_cifs_base(mnt_fs_get_fs_options(fs), &base, &why) < 0 :
		   !(base = base_options(mnt_fs_get_fs_options(fs))))
		goto out;
	/* its own options: values that cannot be passed on, attributes that cannot be kept */
	refused = parent_refused(m, fs, &attr);
	if (refused) {
		free(why);
		why = TAKE_PTR(refused);
	}
	/* none (no address, no host): the entries share one job of an unnamed server */
	(void)mounts_server_of(mnt_fs_get_fs_options(fs), source, &server);
	plen = strlen(nfskeys_attr_id_get_path(pid));
	if (streq(nfskeys_attr_id_get_path(pid), "/"))
		plen = 0;
	for (size_t i = 0; i < l.n; i++) {
		const char *dom = nfskeys_attr_id_get_domain(pid), *dir = l.v[i];
		struct dirrows rows = {};
		_cleanup_free_ char *mine = NULL, *up = NULL, *updir = NULL, *target = NULL,
				    *src = NULL, *rmine = NULL, *rup = NULL, *rwhy = NULL;
		char *slash;
		struct mentry *e;

		if (streq(dir, nfskeys_attr_id_get_path(pid)) || strlen(dir) <= plen)
			continue; /* the mount's own root: the options it was mounted with rule */
		updir = strdup(dir);
		if (!updir)
			break;
		slash = strrchr(updir, '/');
		if (slash == updir)
			slash[1] = '\0';
		else if (slash)
			*slash = '\0';
		mine = options_at(m, fstype, dom, dir);
		up = options_at(m, fstype, dom, updir);
		/* CIFS: attributes it has no option for differ too, to be reported */
		if (cifs && (!(rmine = mounts_cifs_refused_at(m->store, dom, dir)) ||
			     !(rup = mounts_cifs_refused_at(m->store, dom, updir)) ||
			     (*rmine && !(rwhy = mounts_cifs_refused_why(rmine)))))
			continue;
		if (!mine || !up || (streq(mine, up) && (!cifs || streq(rmine, rup))))
			continue;
		if (asprintf(&target, "%s%s%s", streq(mp, "/") ? "" : mp, "", dir + plen) < 0)
			break;
		/* CIFS: the share's UNC name and the directory in it (domain cifs://HOST/SHARE) */
		if (cifs ? asprintf(&src, "//%s%s", startswith(dom, "cifs://") ? dom + 7 : dom,
				    dir) < 0 :
			   asprintf(&src, "%.*s:%s", (int)(colon - source), source, dir) < 0)
			break;
		/* which directory it was set on, checked at the target before each mount */
		if (attr_store_dir_rows(m->store, dom, dir, dir_row, &rows) < 0 || rows.error) {
			free(rows.handles);
			free(rows.setters);
			continue;
		}
		e = mounts_entry_find(m, target);
		if (!e)
			e = mounts_entry_add(m, target);
		if (!e) {
			free(rows.handles);
			free(rows.setters);
			break;
		}
		if (!streq(e->handles ? e->handles : "", rows.handles ? rows.handles : "") ||
		    !streq(e->setters ? e->setters : "", rows.setters ? rows.setters : ""))
			e->state = MS_PENDING;
		free(e->handles);
		e->handles = rows.handles;
		free(e->setters);
		e->setters = rows.setters;
		e->wanted = true;
		e->cifs = cifs;
		mounts_set_str(&e->blocked, rwhy ? rwhy : why);
		if (!e->options || !streq(e->options, mine))
			e->state = MS_PENDING;
		mounts_set_str(&e->options, mine);
		mounts_set_str(&e->source, src);
		mounts_set_str(&e->fstype, fstype);
		mounts_set_str(&e->base, base);
		mounts_set_str(&e->parent_mp, mp);
		mounts_set_str(&e->server, server);
		e->parent_id = (unsigned)mnt_fs_get_id(fs);
		e->mnt_attr = attr;
	}
out:
	for (size_t i = 0; i < l.n; i++)
		free(l.v[i]);
	free(l.v);
	nfskeys_attr_id_free(pid);
}

static int by_depth(const void *a, const void *b)
{
	const struct mentry *x = a, *y = b;

	return strcmp(x->target, y->target);
}

/* ---------------------------------------------------------------- apply */

/* Is target where a running job works?  A mount there is not taken for a parent until the
 * job is back: the job may have just mounted there and its report (job_progress()) not
 * reached the loop yet, and a sub-mount of ours taken for a parent would get sub-mounts
 * of its own.  Someone else's mount there is considered when the job returns (its return
 * reads the mount table again); doc/LIVE-MOUNTS.md. */
static bool busy_target(const struct attrd_mounts *m, const char *target)
{
	for (size_t i = 0; target && i < m->n; i++)
		if (m->v[i].busy && streq(m->v[i].target, target))
			return true;
	return false;
}

/* Recompute what is wanted and start a job for each server with work and no worker.
 * Entries a job holds (busy) keep their kernel side until it is back. */
static void mounts_refresh(struct attrd_mounts *m)
{
	struct libmnt_table *tb;
	struct libmnt_iter *it;
	struct libmnt_fs *fs;
	size_t keep = 0;
	bool adopting = false;

	tb = mnt_new_table_from_file("/proc/self/mountinfo");
	it = mnt_new_iter(MNT_ITER_FORWARD);
	if (!tb || !it) {
		log_err(m->ctx, "cannot read the mount table /proc/self/mountinfo");
		goto out;
	}
	if (!m->loaded) {
		mounts_state_load(m);
		m->loaded = adopting = true;
	}
	mounts_prune(m, tb, adopting);
	for (size_t i = 0; i < m->n; i++)
		m->v[i].wanted = false;
	if (m->enabled) {
		while (mnt_table_next_fs(tb, it, &fs) == 0) {
			const char *t = mnt_fs_get_fstype(fs);

			/* CIFS too: sub-mounts of Kerberos parents, the others reported */
			if (t && (streq(t, "nfs") || streq(t, "nfs4") || mounts_cifs_fstype(t)) &&
			    !mounts_ours(m->v, m->n, (unsigned)mnt_fs_get_id(fs)) &&
			    !busy_target(m, mnt_fs_get_target(fs)))
				want_for_parent(m, fs);
		}
	}
	/* entries neither a policy wants nor holding a mount (nor in a job) go */
	for (size_t i = 0; i < m->n; i++) {
		if (m->v[i].wanted || m->v[i].n_ids || m->v[i].busy)
			m->v[keep++] = m->v[i];
		else
			mounts_entry_done(&m->v[i]);
	}
	m->n = keep;
	/* deepest first: a nested sub-mount goes before the one it sits on */
	if (m->n > 1) /* m->v is NULL while empty: qsort must not see it */
		qsort(m->v, m->n, sizeof(*m->v), by_depth);
	if (m->n == 0) {
		mounts_state_save(m);
		goto out;
	}
	mounts_jobs_start(m);
out:
	mnt_free_iter(it);
	mnt_unref_table(tb);
}

/* A sub-mount that failed (a server that refused or did not answer, a Kerberos ticket not
 * there yet, ...) is tried again on a timer too, not only at the next change: after
 * [Mounts] Retry-Interval, doubling while failures remain, up to 32 times that.  Its log
 * line comes only when the reason changes (set_state).  Entries refused by our own checks
 * (blocked) wait for a change: trying them again gives the same answer. */
#define RETRY_MAX_SHIFT 5

static void mounts_retry_arm(struct attrd_mounts *m);

static bool retry_wanted(const struct mentry *e)
{
	return e->wanted && e->state == MS_FAILED && !e->blocked;
}

static void on_retry(struct evloop *loop, struct evtimer *t, void *userdata)
{
	struct attrd_mounts *m = userdata;
	size_t n = 0;

	(void)loop;
	evloop_timer_free(t);
	m->retry = NULL;
	m->retries++;
	for (size_t i = 0; i < m->n; i++) {
		if (retry_wanted(&m->v[i]) && !m->v[i].busy) {
			m->v[i].seen = 0; /* older than any generation: its server's job takes it */
			n++;
		}
	}
	if (n)
		log_notice(m->ctx, "sub-mounts: trying %zu failed one%s again", n, n == 1 ? "" : "s");
	mounts_refresh(m);
	mounts_retry_arm(m);
}

static void mounts_retry_arm(struct attrd_mounts *m)
{
	bool failed = false;
	int64_t delay;

	for (size_t i = 0; i < m->n && !failed; i++)
		failed = retry_wanted(&m->v[i]);
	if (!failed || !m->enabled) {
		evloop_timer_free(m->retry);
		m->retry = NULL;
		m->retries = 0;
		return;
	}
	if (m->retry)
		return;
	delay = (m->retry_first ? m->retry_first : 30 * USEC_PER_SEC)
		<< (m->retries < RETRY_MAX_SHIFT ? m->retries : RETRY_MAX_SHIFT);
	if (evloop_add_timer(m->loop, evloop_now(m->loop) + delay, on_retry, m, &m->retry) < 0)
		m->retry = NULL; /* out of memory: the next change tries them */
}

/* A job is back (its entries merged, the table saved): whatever waits gets its job. */
static void job_back(struct attrd_mounts *m)
{
	mounts_refresh(m);
	mounts_retry_arm(m);
}

/* A change from outside (policy, mount table, configuration): every server's entries are
 * checked again, those whose worker still runs once it is back. */
void attrd_mounts_apply(struct attrd_mounts *m)
{
	if (!m || !m->ctx || !m->store)
		return;
	/* off, and nothing of ours left: no cost per SET/UNSET in the default setup */
	if (!m->enabled && m->loaded && m->n == 0)
		return;
	m->gen++;
	mounts_refresh(m);
}

/* ---------------------------------------------------------------- life cycle */

static void on_monitor(struct evloop *loop, struct evio *io, int fd, uint32_t events,
		       void *userdata)
{
	struct attrd_mounts *m = userdata;

	(void)loop, (void)io, (void)fd, (void)events;
	mnt_monitor_event_cleanup(m->mon);
	attrd_mounts_apply(m);
}

static int monitor_start(struct attrd_mounts *m)
{
	int fd;

	if (m->mon)
		return 0;
	m->mon = mnt_new_monitor();
	if (!m->mon || mnt_monitor_enable_kernel(m->mon, 1) < 0)
		return -ENOMEM;
	fd = mnt_monitor_get_fd(m->mon);
	if (fd < 0)
		return fd;
	return evloop_add_io(m->loop, fd, EPOLLIN, on_monitor, m, &m->io);
}

static void monitor_stop(struct attrd_mounts *m)
{
	evloop_io_free(m->io);
	m->io = NULL;
	mnt_unref_monitor(m->mon);
	m->mon = NULL;
}

int attrd_mounts_new(struct evloop *loop, const char *state_path, struct attrd_mounts **ret)
{
	struct attrd_mounts *m = calloc(1, sizeof(*m));

	if (!m)
		return -ENOMEM;
	m->loop = loop;
	m->job_back = job_back;
	m->state_path = state_path ? strdup(state_path) : NULL;
	*ret = m;
	return 0;
}

/* Whether this process has CAP_SYS_ADMIN in its effective set (/proc/self/status). */
static int have_cap_sys_admin(void)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	unsigned long long eff;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1)
			return !!(eff & (1ULL << 21 /* CAP_SYS_ADMIN */));
	return -ENOENT;
}

/* The id of the first mount in a mountinfo file (the namespace's root): a mount namespace
 * made as a copy (unshare, a service's sandbox) gives every mount a new id.  /proc/1/
 * mountinfo is world-readable, unlike /proc/1/ns/mnt (ptrace rights, which a sandboxed
 * daemon without capabilities lacks). */
static int first_mount_id(const char *path)
{
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	int id;

	if (!f)
		return -errno;
	return fscanf(f, "%d", &id) == 1 ? id : -EIO;
}

/* Apply-Mounts makes mounts for every process to see: a daemon in a mount namespace of its
 * own (a sandboxed service unit: ProtectSystem= and friends) would make them where nobody
 * looks, and one without CAP_SYS_ADMIN fails every one.  Say so once, with the fix.  (PID
 * 1's mount table may be hidden, e.g. in some containers: then nothing is said.) */
static void check_mount_rights(struct nfskeys_ctx *ctx)
{
	static const char fix[] = "with systemd, install the drop-in " PKGDATADIR
				  "/nfskeys-attrd-apply-mounts.conf (nfskeys-attrd(8), SUB-MOUNTS)";
	int self = first_mount_id("/proc/self/mountinfo"), init = first_mount_id("/proc/1/mountinfo");

	if (self >= 0 && init >= 0 && self != init)
		log_warning(ctx, "[Mounts] Apply-Mounts: this daemon runs in a mount namespace of "
				 "its own, not the system's (a sandboxed service?): no other process "
				 "would see its sub-mounts; %s", fix);
	if (have_cap_sys_admin() == 0)
		log_warning(ctx, "[Mounts] Apply-Mounts: this daemon lacks CAP_SYS_ADMIN: every "
				 "sub-mount will fail with EPERM; %s", fix);
}

void attrd_mounts_configure(struct attrd_mounts *m, struct nfskeys_ctx *ctx,
			    struct nfskeys_attr_store *store, bool enabled, bool have_admin,
			    gid_t admin_gid)
{
	int64_t v;

	if (!m)
		return;
	m->ctx = ctx;
	m->store = store;
	m->have_admin = have_admin;
	m->admin_gid = admin_gid;
	/* refused at load (nfskeys-attrd.c) when it does not parse */
	m->retry_first = conf_get_typed(ctx, "Mounts", "Retry-Interval", &v, NULL, 0) == 0 ?
				 v * USEC_PER_SEC :
				 30 * USEC_PER_SEC;
	if (enabled != m->enabled)
		log_notice(ctx, "[Mounts] Apply-Mounts = %s: %s", enabled ? "yes" : "no",
			   enabled ? "directory policy gets its own sub-mounts on NFS and "
						     "CIFS mounts" :
				     "removing the sub-mounts made for directory policy");
	if (enabled && !m->enabled)
		check_mount_rights(ctx);
	m->enabled = enabled;
	if (enabled) {
		int r = monitor_start(m);

		if (r < 0)
			log_err(ctx, "cannot watch the mount table: %s; sub-mounts follow policy "
				     "changes only", strerror(-r));
	} else {
		monitor_stop(m);
	}
	/* disabled: still run, to remove what a previous configuration (or run) mounted */
	attrd_mounts_apply(m);
}

void attrd_mounts_free(struct attrd_mounts *m)
{
	if (!m)
		return;
	monitor_stop(m);
	evloop_timer_free(m->retry);
	mounts_jobs_orphan(m);
	for (size_t i = 0; i < m->n; i++)
		mounts_entry_done(&m->v[i]);
	free(m->v);
	free(m->state_path);
	free(m);
}

bool attrd_mounts_enabled(const struct attrd_mounts *m)
{
	return m && m->enabled;
}

size_t attrd_mounts_count(const struct attrd_mounts *m)
{
	return m ? m->n : 0;
}

void attrd_mounts_get(const struct attrd_mounts *m, size_t i, struct attrd_mount_info *ret)
{
	const struct mentry *e = &m->v[i];
	const char *server = mounts_server_name(e->server);
	unsigned waiting = 0;

	/* a pending entry of a server that stopped answering: its worker's time so far */
	for (const struct mjob *j = m->jobs; j; j = j->next)
		if (streq(j->server, server))
			waiting = (unsigned)MAX((evloop_now(m->loop) - j->started) / USEC_PER_SEC,
						(int64_t)1);
	*ret = (struct attrd_mount_info){
		.target = e->target, .source = e->source ? e->source : "",
		.options = e->options ? e->options : "", .state = mstate_names[e->state],
		.error = e->error ? e->error : "", .layers = (unsigned)e->n_ids,
		.mount_id = e->n_ids ? e->ids[e->n_ids - 1] : 0, .since = e->since,
		.server = server, .waiting = waiting,
	};
}
