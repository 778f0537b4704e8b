/* Directory policy applied to live NFS mounts (issue 23 item 1).  Every NFS mount not made
 * here is a parent; every directory of its export with policy whose mount options (the
 * library's one mapping, attr_policy_mount_options) differ from its parent directory's
 * gets a nosharecache sub-mount.  Mounting is a root action on a path users shape, so
 * targets are opened beneath the parent's root with no symlinks, checked to sit on the
 * expected mount, and the new mount is made detached (fsopen/fsmount), checked to be the
 * same server directory, and only then attached on that descriptor (move_mount).
 *
 * Every syscall that can reach a server (the path walk, fsconfig, umount) runs in a worker
 * thread on a copy of the table, one job at a time: a server that stops answering stalls
 * the sub-mounts, never nfskeys-attrd's loop.  The loop computes what is wanted (from the
 * mount table and the in-memory policy index), hands the copy over, and takes it back when
 * the job is done; a change while a job runs is applied after it. */
#include <fcntl.h>
#include <pthread.h>
#include <libmount.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "attr-private.h"
#include "attrd-mounts.h"
#include "evloop.h"
#include "time-util.h"

enum mstate { MS_PENDING, MS_APPLIED, MS_FAILED };
static const char *const mstate_names[] = { "pending", "applied", "failed" };

struct mentry {
	char *target;	/* local directory mounted over */
	char *source;	/* SERVER:/path */
	char *fstype;
	char *options;	/* policy options wanted there */
	char *applied;	/* options of the top mount made here, NULL when none */
	char *base;	/* the parent mount's options carried over */
	char *parent_mp;
	unsigned parent_id;
	unsigned long mnt_attr; /* MOUNT_ATTR_* of the parent mount */
	unsigned *ids;	/* our mounts at target, bottom first */
	size_t n_ids;
	enum mstate state;
	char *error;
	int64_t since;
	bool wanted;
	bool cifs;	/* a CIFS subtree: reported, not mounted (see ensure()) */
};

/* A table of entries and the context to log through: the loop's own, or a worker's copy. */
struct mset {
	struct nfskeys_ctx *ctx;
	struct mentry *v;
	size_t n;
};

struct mjob;

struct attrd_mounts {
	struct nfskeys_ctx *ctx;
	struct nfskeys_attr_store *store;
	struct evloop *loop;
	struct libmnt_monitor *mon;
	struct evio *io;
	struct evtimer *slow;	/* warns when a job has waited on the kernel too long */
	char *state_path;
	bool enabled, loaded;
	struct mentry *v;
	size_t n;
	struct mjob *job;	/* the job in the worker, NULL when none */
	bool again;		/* something changed while it ran: apply once more after */
};

/* Work handed to the worker thread: a deep copy of the table.  lock guards current,
 * posted and orphaned (the worker's and the loop's meeting point). */
struct mjob {
	struct attrd_mounts *m;
	struct evloop *loop;
	struct mset s;
	int64_t started;
	pthread_mutex_t lock;
	const char *current;	/* the target being worked on (points into s) */
	bool posted;		/* the result is on its way to the loop */
	bool orphaned;		/* the table is gone: the worker frees the job itself */
};

static void mentry_done(struct mentry *e)
{
	free(e->target);
	free(e->source);
	free(e->fstype);
	free(e->options);
	free(e->applied);
	free(e->base);
	free(e->parent_mp);
	free(e->ids);
	free(e->error);
}

static void set_str(char **p, const char *v)
{
	char *n = v ? strdup(v) : NULL;

	if (v && !n)
		return; /* keep the old text rather than lose it */
	free(*p);
	*p = n;
}

static void set_state(struct mset *m, struct mentry *e, enum mstate s, const char *err)
{
	bool same = e->state == s && ((!err && !e->error) || (err && e->error && streq(err, e->error)));

	if (same)
		return;
	e->state = s;
	set_str(&e->error, err);
	e->since = (int64_t)time(NULL);
	if (s == MS_FAILED)
		log_err(m->ctx, "sub-mount %s on %s (%s): %s", e->source, e->target, e->options, err);
}

/* ---------------------------------------------------------------- the state file */

/* One line per mount made here: "ID TARGET OPTIONS", the strings octal-escaped as in
 * mountinfo, so a restarted daemon adopts its mounts instead of stacking duplicates. */
static void put_escaped(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\\')
			fprintf(f, "\\%03o", (unsigned char)*s);
		else
			fputc(*s, f);
	}
}

static void unescape(char *s)
{
	char *o = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*o++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
}

static void state_save(struct attrd_mounts *m)
{
	_cleanup_free_ char *tmp = NULL;
	FILE *f;

	if (!m->state_path || asprintf(&tmp, "%s.tmp", m->state_path) < 0)
		return;
	f = fopen(tmp, "we");
	if (!f) {
		log_err(m->ctx, "cannot write %s: %m", tmp);
		return;
	}
	for (size_t i = 0; i < m->n; i++) {
		struct mentry *e = &m->v[i];

		for (size_t j = 0; j < e->n_ids; j++) {
			fprintf(f, "%u ", e->ids[j]);
			put_escaped(f, e->target);
			fputc(' ', f);
			/* the options of the top mount; lower ones are only ever removed */
			put_escaped(f, j + 1 == e->n_ids && e->applied ? e->applied : "-");
			fputc('\n', f);
		}
	}
	if (fflush(f) != 0 || fsync(fileno(f)) != 0 || fclose(f) != 0 ||
	    rename(tmp, m->state_path) < 0) {
		log_err(m->ctx, "cannot write %s: %m", m->state_path);
		unlink(tmp);
	}
}

static struct mentry *entry_find(struct attrd_mounts *m, const char *target)
{
	for (size_t i = 0; i < m->n; i++)
		if (streq(m->v[i].target, target))
			return &m->v[i];
	return NULL;
}

static struct mentry *entry_add(struct attrd_mounts *m, const char *target)
{
	struct mentry *v = realloc(m->v, (m->n + 1) * sizeof(*v));

	if (!v)
		return NULL;
	m->v = v;
	v[m->n] = (struct mentry){ .target = strdup(target), .since = (int64_t)time(NULL) };
	if (!v[m->n].target)
		return NULL;
	return &v[m->n++];
}

static int ids_push(struct mentry *e, unsigned id)
{
	unsigned *v = realloc(e->ids, (e->n_ids + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	e->ids = v;
	e->ids[e->n_ids++] = id;
	return 0;
}

static bool ids_has(const struct mentry *e, unsigned id)
{
	for (size_t i = 0; i < e->n_ids; i++)
		if (e->ids[i] == id)
			return true;
	return false;
}

/* Read the mounts a previous run made (they are checked against the table before use). */
static void state_load(struct attrd_mounts *m)
{
	_cleanup_fclose_ FILE *f = fopen(m->state_path, "re");
	char line[8192];

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char target[4096], opts[2048];
		unsigned id;
		struct mentry *e;

		if (sscanf(line, "%u %4095s %2047s", &id, target, opts) != 3)
			continue;
		unescape(target);
		unescape(opts);
		e = entry_find(m, target);
		if (!e)
			e = entry_add(m, target);
		if (!e || ids_push(e, id) < 0)
			return;
		set_str(&e->applied, streq(opts, "-") ? NULL : opts);
	}
}

/* ---------------------------------------------------------------- kernel helpers */

static unsigned fd_mnt_id(int fd)
{
	struct statx stx;

	if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_MNT_ID, &stx) < 0 ||
	    !(stx.stx_mask & STATX_MNT_ID))
		return 0;
	return (unsigned)stx.stx_mnt_id;
}

static int openat2_dir(int dirfd, const char *path, uint64_t resolve)
{
	struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC, .resolve = resolve };
	long fd = syscall(SYS_openat2, dirfd, path, &how, sizeof(how));

	return fd < 0 ? -errno : (int)fd;
}

/* Is mount id one the table v made (at any target)? */
static bool ours(const struct mentry *v, size_t n, unsigned id)
{
	for (size_t i = 0; i < n; i++)
		if (ids_has(&v[i], id))
			return true;
	return false;
}

/* The directory target of e, reached without symlinks from its parent mount's root and
 * checked to sit on that mount or one of ours: a user who owns a directory on the way can
 * swap it for a symlink or mount FUSE over it, and neither may steer a root mount. */
static int open_target(struct mset *m, const struct mentry *e, unsigned *ret_top,
		       char *msg, size_t msg_size)
{
	_cleanup_close_ int root = -1;
	const char *rel = e->target + strlen(e->parent_mp);
	unsigned top;
	int fd;

	/* mountinfo's paths are canonical: no symlink is ever needed to reach them */
	root = openat2_dir(AT_FDCWD, e->parent_mp, RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
	if (root < 0 || fd_mnt_id(root) != e->parent_id) {
		snprintf(msg, msg_size, "the parent mount %s moved or went away", e->parent_mp);
		return root < 0 ? root : -ESTALE;
	}
	while (*rel == '/')
		rel++;
	fd = openat2_dir(root, rel, RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
	if (fd < 0) {
		snprintf(msg, msg_size, "cannot open %s without following symlinks: %s", e->target,
			 strerror(-fd));
		return fd;
	}
	top = fd_mnt_id(fd);
	if (top != e->parent_id && !ours(m->v, m->n, top)) {
		snprintf(msg, msg_size, "%s is on another mount (id %u), not mounting over it",
			 e->target, top);
		close(fd);
		return -EXDEV;
	}
	*ret_top = top;
	return fd;
}

static bool same_handle(int a, int b)
{
	union {
		struct file_handle fh;
		char buf[sizeof(struct file_handle) + MAX_HANDLE_SZ];
	} ha, hb;
	int ma, mb;

	ha.fh.handle_bytes = hb.fh.handle_bytes = MAX_HANDLE_SZ;
	if (name_to_handle_at(a, "", &ha.fh, &ma, AT_EMPTY_PATH) < 0 ||
	    name_to_handle_at(b, "", &hb.fh, &mb, AT_EMPTY_PATH) < 0)
		return false;
	return ha.fh.handle_type == hb.fh.handle_type &&
	       ha.fh.handle_bytes == hb.fh.handle_bytes &&
	       memcmp(ha.fh.f_handle, hb.fh.f_handle, ha.fh.handle_bytes) == 0;
}

/* The kernel's own words from an fs_context descriptor ("e nfs4: ..."), appended to msg. */
static void kernel_says(int fsfd, char *msg, size_t msg_size)
{
	char buf[256];
	ssize_t n;

	while ((n = read(fsfd, buf, sizeof(buf) - 1)) > 0) {
		size_t l = strlen(msg);

		buf[n] = '\0';
		if (buf[n - 1] == '\n')
			buf[n - 1] = '\0';
		snprintf(msg + l, msg_size - l, " (kernel: %s)", buf + (n > 2 && buf[1] == ' ' ? 2 : 0));
	}
}

/* Feed "a,b=c,..." to an fs_context; on failure msg names the option. */
static int fs_options(int fsfd, const char *opts, char *msg, size_t msg_size)
{
	_cleanup_free_ char *copy = strdup(opts);
	char *save = NULL;

	if (!copy)
		return -ENOMEM;
	for (char *o = strtok_r(copy, ",", &save); o; o = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(o, '=');
		int r;

		if (eq) {
			*eq = '\0';
			r = fsconfig(fsfd, FSCONFIG_SET_STRING, o, eq + 1, 0);
		} else {
			r = fsconfig(fsfd, FSCONFIG_SET_FLAG, o, NULL, 0);
		}
		if (r < 0) {
			r = -errno;
			snprintf(msg, msg_size, "the kernel refuses option '%s%s%s': %s", o,
				 eq ? "=" : "", eq ? eq + 1 : "", strerror(-r));
			kernel_says(fsfd, msg, msg_size);
			return r;
		}
	}
	return 0;
}

/* A new mount of e's source with its options, attached on the directory open as at. */
static int mount_new(struct mset *m, struct mentry *e, int at, char *msg,
		     size_t msg_size)
{
	_cleanup_close_ int fsfd = -1, mfd = -1;
	_cleanup_free_ char *opts = NULL;
	unsigned id;
	int r;

	if (asprintf(&opts, "%s%snosharecache%s%s", e->base, *e->base ? "," : "",
		     *e->options ? "," : "", e->options) < 0)
		return -ENOMEM;
	fsfd = fsopen(e->fstype, FSOPEN_CLOEXEC);
	if (fsfd < 0) {
		snprintf(msg, msg_size, "fsopen(%s): %m", e->fstype);
		return -errno;
	}
	if (fsconfig(fsfd, FSCONFIG_SET_STRING, "source", e->source, 0) < 0) {
		r = -errno;
		snprintf(msg, msg_size, "the kernel refuses source %s: %s", e->source, strerror(-r));
		kernel_says(fsfd, msg, msg_size);
		return r;
	}
	r = fs_options(fsfd, opts, msg, msg_size);
	if (r < 0)
		return r;
	if (fsconfig(fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0) {
		r = -errno;
		snprintf(msg, msg_size, "the kernel refuses to mount %s with %s: %s", e->source,
			 opts, strerror(-r));
		kernel_says(fsfd, msg, msg_size);
		return r;
	}
	/* the parent's nosuid, nodev, noexec, ro and atime flags, or a user's setuid file
	 * on the server would count on the sub-mount where it does not on the parent */
	mfd = fsmount(fsfd, FSMOUNT_CLOEXEC, (unsigned)e->mnt_attr);
	if (mfd < 0) {
		r = -errno;
		snprintf(msg, msg_size, "fsmount %s: %s", e->source, strerror(-r));
		return r;
	}
	/* by name the server may resolve a path a user has since swapped: the new root must
	 * be the very directory opened at target */
	if (!same_handle(mfd, at)) {
		snprintf(msg, msg_size, "%s on the server is no longer the directory at %s (moved "
			 "or replaced while mounting); not attached", e->source, e->target);
		return -ESTALE;
	}
	if (move_mount(mfd, "", at, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0) {
		r = -errno;
		snprintf(msg, msg_size, "attaching %s on %s: %s", e->source, e->target, strerror(-r));
		return r;
	}
	id = fd_mnt_id(mfd);
	r = ids_push(e, id);
	if (r < 0)
		return r;
	log_notice(m->ctx, "mounted %s on %s (mount id %u, layer %zu) with %s", e->source,
		   e->target, id, e->n_ids, opts);
	set_str(&e->applied, e->options);
	return 0;
}

/* Change the options of our top mount in place (the kernel may refuse: NFS on 6.1 takes
 * no change of ac*, lookupcache, cto or fsc on remount, doc/LIVE-MOUNTS.md). */
static int remount(struct mset *m, struct mentry *e, int at)
{
	_cleanup_close_ int fsfd = fspick(at, "", FSPICK_EMPTY_PATH | FSPICK_CLOEXEC);
	char msg[256] = "";

	if (fsfd < 0)
		return -errno;
	if (fs_options(fsfd, e->options, msg, sizeof(msg)) < 0 ||
	    fsconfig(fsfd, FSCONFIG_CMD_RECONFIGURE, NULL, NULL, 0) < 0) {
		if (!msg[0]) {
			snprintf(msg, sizeof(msg), "%m");
			kernel_says(fsfd, msg, sizeof(msg));
		}
		log_info(m->ctx, "remount of %s with %s refused (%s): stacking a new mount",
			 e->target, e->options, msg);
		return -EINVAL;
	}
	log_notice(m->ctx, "remounted %s with %s", e->target, e->options);
	set_str(&e->applied, e->options);
	return 0;
}

/* At most this many of our mounts are stacked at one target (each policy change that the
 * kernel cannot remount adds one). */
#define MAX_LAYERS 4

static int remove_mounts(struct mset *m, struct mentry *e, const char *why);

/* Why a CIFS subtree is not mounted: a new CIFS superblock needs credentials (a password,
 * or a Kerberos ticket of the mount's owner) that the parent mount used and the kernel
 * does not show in mountinfo, so the daemon cannot make one; the policy is reported, not
 * dropped. */
#define CIFS_NOT_APPLIED                                                                      \
	"not applied: a CIFS sub-mount needs the credentials the parent mount was made with, " \
	"which the kernel does not show; mount this subtree with nfskeys-mount (it adds the "  \
	"policy's options)"

static void ensure(struct mset *m, struct mentry *e)
{
	char msg[512] = "";
	unsigned top = 0;
	int fd, r;

	if (e->cifs) {
		set_state(m, e, MS_FAILED, CIFS_NOT_APPLIED);
		return;
	}

	fd = open_target(m, e, &top, msg, sizeof(msg));
	if (fd < 0) {
		set_state(m, e, MS_FAILED, msg);
		return;
	}
	if (ids_has(e, top) && e->applied && streq(e->applied, e->options)) {
		set_state(m, e, MS_APPLIED, NULL);
		close(fd);
		return;
	}
	r = ids_has(e, top) ? remount(m, e, fd) : -ENOENT;
	if (r < 0 && e->n_ids >= MAX_LAYERS) {
		/* a change stacks a mount; a user who keeps changing a policy must not pile
		 * up mounts without end: the stack goes (lazily, files open on it keep
		 * working) and one fresh mount replaces it */
		close(fd);
		log_notice(m->ctx, "%zu mounts stacked at %s: replacing them by one", e->n_ids,
			   e->target);
		if (remove_mounts(m, e, "replaced by a fresh mount") < 0)
			return;
		fd = open_target(m, e, &top, msg, sizeof(msg));
		if (fd < 0) {
			set_state(m, e, MS_FAILED, msg);
			return;
		}
	}
	if (r < 0)
		r = mount_new(m, e, fd, msg, sizeof(msg));
	close(fd);
	if (r < 0)
		set_state(m, e, MS_FAILED, msg);
	else
		set_state(m, e, MS_APPLIED, NULL);
}

/* Detach our mounts at e's target, top first, as long as the top one is ours; why goes
 * into the log. */
static int remove_mounts(struct mset *m, struct mentry *e, const char *why)
{
	char msg[512] = "", path[64];

	while (e->n_ids) {
		unsigned top = 0;
		int fd = e->parent_mp ? open_target(m, e, &top, msg, sizeof(msg)) : -ENOENT;

		if (fd < 0 || !ids_has(e, top)) {
			if (fd >= 0)
				close(fd);
			break;
		}
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		if (umount2(path, MNT_DETACH) < 0) {
			snprintf(msg, sizeof(msg), "cannot unmount %s (mount id %u): %m", e->target, top);
			close(fd);
			set_state(m, e, MS_FAILED, msg);
			return -errno;
		}
		close(fd);
		log_notice(m->ctx, "unmounted %s (mount id %u): %s", e->target, top, why);
		for (size_t i = 0; i < e->n_ids; i++)
			if (e->ids[i] == top)
				e->ids[i] = e->ids[--e->n_ids];
	}
	return 0;
}

/* ---------------------------------------------------------------- what is wanted */

/* Options of the parent mount kept on a sub-mount: its connection and identity, not its
 * caching (the policy decides that) and not what the kernel only reports (namlen). */
static char *base_options(const char *super)
{
	static const char *const drop[] = { "namlen", "ac", "noac", "actimeo", "acregmin",
					    "acregmax", "acdirmin", "acdirmax", "lookupcache",
					    "cto", "nocto", "fsc", "nofsc", "sharecache",
					    "nosharecache", NULL };
	_cleanup_free_ char *copy = strdup(super ? super : "");
	char *out = calloc(1, copy ? strlen(copy) + 1 : 1), *save = NULL;

	if (!copy || !out) {
		free(out);
		return NULL;
	}
	for (char *o = strtok_r(copy, ",", &save); o; o = strtok_r(NULL, ",", &save)) {
		size_t n = strcspn(o, "=");
		bool skip = false;

		for (size_t i = 0; drop[i] && !skip; i++)
			skip = strlen(drop[i]) == n && strncmp(o, drop[i], n) == 0;
		if (skip)
			continue;
		if (*out)
			strcat(out, ",");
		strcat(out, o);
	}
	return out;
}

static unsigned long mount_attrs(struct libmnt_fs *fs)
{
	static const struct {
		const char *name;
		unsigned long attr;
	} map[] = { { "ro", MOUNT_ATTR_RDONLY },	{ "nosuid", MOUNT_ATTR_NOSUID },
		    { "nodev", MOUNT_ATTR_NODEV },	{ "noexec", MOUNT_ATTR_NOEXEC },
		    { "noatime", MOUNT_ATTR_NOATIME }, { "nodiratime", MOUNT_ATTR_NODIRATIME },
		    { "strictatime", MOUNT_ATTR_STRICTATIME } };
	unsigned long a = MOUNT_ATTR_RELATIME;

	for (size_t i = 0; i < ARRAY_SIZE(map); i++) {
		if (mnt_fs_get_option(fs, map[i].name, NULL, NULL) == 0) {
			if (map[i].attr & MOUNT_ATTR__ATIME)
				a &= ~MOUNT_ATTR__ATIME;
			a |= map[i].attr;
		}
	}
	return a;
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

/* The sub-mounts one parent mount calls for. */
static void want_for_parent(struct attrd_mounts *m, struct libmnt_fs *fs)
{
	const char *fstype = mnt_fs_get_fstype(fs), *source = mnt_fs_get_source(fs);
	const char *mp = mnt_fs_get_target(fs), *colon = NULL;
	struct nfskeys_attr_id *pid = NULL;
	struct dirlist l = {};
	_cleanup_free_ char *base = NULL;
	bool cifs = fstype && (streq(fstype, "cifs") || streq(fstype, "smb3"));
	size_t plen;

	if (!source || !mp || (!cifs && !(colon = strstr(source, ":/"))))
		return;
	if (attr_id_from_mount(fstype, source, mnt_fs_get_root(fs), mnt_fs_get_devno(fs), mp, "",
			       &pid) < 0)
		return;
	if (attr_store_list(m->store, nfskeys_attr_id_get_domain(pid),
			    nfskeys_attr_id_get_path(pid), collect, &l) < 0)
		goto out;
	base = base_options(mnt_fs_get_fs_options(fs));
	plen = strlen(nfskeys_attr_id_get_path(pid));
	if (streq(nfskeys_attr_id_get_path(pid), "/"))
		plen = 0;
	for (size_t i = 0; i < l.n && base; i++) {
		const char *dom = nfskeys_attr_id_get_domain(pid), *dir = l.v[i];
		_cleanup_free_ char *mine = NULL, *up = NULL, *updir = NULL, *target = NULL,
				    *src = NULL;
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
		if (!mine || !up || streq(mine, up))
			continue;
		if (asprintf(&target, "%s%s%s", streq(mp, "/") ? "" : mp, "", dir + plen) < 0)
			break;
		/* CIFS: the share's UNC name and the directory in it (domain cifs://HOST/SHARE) */
		if (cifs ? asprintf(&src, "//%s%s", startswith(dom, "cifs://") ? dom + 7 : dom,
				    dir) < 0 :
			   asprintf(&src, "%.*s:%s", (int)(colon - source), source, dir) < 0)
			break;
		e = entry_find(m, target);
		if (!e)
			e = entry_add(m, target);
		if (!e)
			break;
		e->wanted = true;
		e->cifs = cifs;
		if (!e->options || !streq(e->options, mine))
			e->state = MS_PENDING;
		set_str(&e->options, mine);
		set_str(&e->source, src);
		set_str(&e->fstype, fstype);
		set_str(&e->base, base);
		set_str(&e->parent_mp, mp);
		e->parent_id = (unsigned)mnt_fs_get_id(fs);
		e->mnt_attr = mount_attrs(fs);
	}
out:
	for (size_t i = 0; i < l.n; i++)
		free(l.v[i]);
	free(l.v);
	nfskeys_attr_id_free(pid);
}

/* The entry of mount id in tb (libmount's own lookup by id is 2.40's). */
static struct libmnt_fs *table_find_id(struct libmnt_table *tb, int id)
{
	struct libmnt_iter *it = mnt_new_iter(MNT_ITER_FORWARD);
	struct libmnt_fs *fs = NULL;

	while (it && mnt_table_next_fs(tb, it, &fs) == 0)
		if (mnt_fs_get_id(fs) == id)
			break;
		else
			fs = NULL;
	mnt_free_iter(it);
	return fs;
}

/* A mount adopted from the state file: its parent is the first mount below it that is
 * not ours (needed to reach it again, and to remove it once no policy wants it). */
static void adopt_parent(struct attrd_mounts *m, struct libmnt_table *tb, struct mentry *e)
{
	struct libmnt_fs *fs = table_find_id(tb, (int)e->ids[0]);

	while (fs && ours(m->v, m->n, (unsigned)mnt_fs_get_id(fs)))
		fs = table_find_id(tb, mnt_fs_get_parent_id(fs));
	if (!fs || !mnt_fs_get_target(fs) || !startswith(e->target, mnt_fs_get_target(fs)))
		return;
	set_str(&e->parent_mp, mnt_fs_get_target(fs));
	e->parent_id = (unsigned)mnt_fs_get_id(fs);
}

/* Forget mount ids the table no longer has at the entry's target (unmounted by someone,
 * or gone with their parent). */
static void prune(struct attrd_mounts *m, struct libmnt_table *tb)
{
	for (size_t i = 0; i < m->n; i++) {
		struct mentry *e = &m->v[i];
		size_t keep = 0;

		for (size_t j = 0; j < e->n_ids; j++) {
			struct libmnt_fs *fs = table_find_id(tb, (int)e->ids[j]);

			/* only an NFS nosharecache mount at the recorded place: a stale file
			 * (a persistent Runtime-Dir across a reboot recycles mount ids) must
			 * not make someone else's mount ours, to be unmounted */
			if (fs && mnt_fs_get_target(fs) && streq(mnt_fs_get_target(fs), e->target) &&
			    mnt_fs_get_fstype(fs) && startswith(mnt_fs_get_fstype(fs), "nfs") &&
			    mnt_fs_get_option(fs, "nosharecache", NULL, NULL) == 0)
				e->ids[keep++] = e->ids[j];
		}
		if (keep < e->n_ids && keep == 0)
			set_str(&e->applied, NULL);
		e->n_ids = keep;
		if (keep && !e->parent_mp)
			adopt_parent(m, tb, e);
	}
}

static int by_depth(const void *a, const void *b)
{
	const struct mentry *x = a, *y = b;

	return strcmp(x->target, y->target);
}

/* ---------------------------------------------------------------- the worker */

static void entries_free(struct mentry *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		mentry_done(&v[i]);
	free(v);
}

static char *dup_or_null(const char *s, bool *ok)
{
	char *d = s ? strdup(s) : NULL;

	if (s && !d)
		*ok = false;
	return d;
}

/* A deep copy of the loop's table for the worker. */
static int entries_copy(const struct mentry *v, size_t n, struct mentry **ret)
{
	struct mentry *c = n ? calloc(n, sizeof(*c)) : NULL;
	bool ok = true;

	if (n && !c)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct mentry *e = &v[i];
		struct mentry *d = &c[i];

		*d = (struct mentry){ .parent_id = e->parent_id, .mnt_attr = e->mnt_attr,
				      .n_ids = e->n_ids, .state = e->state, .since = e->since,
				      .wanted = e->wanted, .cifs = e->cifs };
		d->target = dup_or_null(e->target, &ok);
		d->source = dup_or_null(e->source, &ok);
		d->fstype = dup_or_null(e->fstype, &ok);
		d->options = dup_or_null(e->options, &ok);
		d->applied = dup_or_null(e->applied, &ok);
		d->base = dup_or_null(e->base, &ok);
		d->parent_mp = dup_or_null(e->parent_mp, &ok);
		d->error = dup_or_null(e->error, &ok);
		if (e->n_ids) {
			d->ids = malloc(e->n_ids * sizeof(*d->ids));
			if (d->ids)
				memcpy(d->ids, e->ids, e->n_ids * sizeof(*d->ids));
			else
				ok = false;
		}
	}
	if (!ok) {
		entries_free(c, n);
		return -ENOMEM;
	}
	*ret = c;
	return 0;
}

static void job_free(struct mjob *j)
{
	if (!j)
		return;
	entries_free(j->s.v, j->s.n);
	nfskeys_ctx_unref(j->s.ctx);
	pthread_mutex_destroy(&j->lock);
	free(j);
}

static void job_at(struct mjob *j, const char *target)
{
	pthread_mutex_lock(&j->lock);
	j->current = target;
	pthread_mutex_unlock(&j->lock);
}

static void job_done(struct evloop *loop, void *userdata);

/* The kernel's part of an apply, on the copy: our mounts no policy wants any more go
 * (deepest first, the table is sorted), then every wanted one is made or checked. */
static void *worker_main(void *arg)
{
	struct mjob *j = arg;
	struct mset *s = &j->s;
	struct evloop *loop = j->loop;

	for (size_t i = s->n; i-- > 0;) {
		if (!s->v[i].wanted && s->v[i].n_ids) {
			job_at(j, s->v[i].target);
			remove_mounts(s, &s->v[i], "its policy no longer asks for it");
		}
	}
	for (size_t i = 0; i < s->n; i++) {
		if (s->v[i].wanted) {
			job_at(j, s->v[i].target);
			ensure(s, &s->v[i]);
		}
	}
	pthread_mutex_lock(&j->lock);
	j->current = NULL;
	if (j->orphaned) {
		pthread_mutex_unlock(&j->lock);
		/* nfskeys-attrd is stopping: nobody waits for the result.  The context's
		 * count is the loop thread's to change: its reference is left behind. */
		j->s.ctx = NULL;
		job_free(j);
		return NULL;
	}
	/* under the lock, which job_done() takes before it frees the job: the loop may run
	 * it before this thread is out.  A post fails only for want of memory, and the
	 * loop waits for this job: retry. */
	while (evloop_post(loop, job_done, j) < 0)
		sleep(1);
	j->posted = true;
	pthread_mutex_unlock(&j->lock);
	return NULL;
}

/* Back on the loop: the worker's table becomes the table (without the entries that
 * neither a policy wants nor hold a mount), is saved, and a change that came meanwhile
 * is applied. */
static void job_done(struct evloop *loop, void *userdata)
{
	struct mjob *j = userdata;
	struct attrd_mounts *m = j->m;
	size_t keep = 0;

	(void)loop;
	/* the worker posted under the job's lock: once it is free the worker is gone */
	pthread_mutex_lock(&j->lock);
	pthread_mutex_unlock(&j->lock);
	entries_free(m->v, m->n);
	m->v = TAKE_PTR(j->s.v);
	m->n = j->s.n;
	j->s.n = 0;
	for (size_t i = 0; i < m->n; i++) {
		if (m->v[i].wanted || m->v[i].n_ids)
			m->v[keep++] = m->v[i];
		else
			mentry_done(&m->v[i]);
	}
	m->n = keep;
	state_save(m);
	m->job = NULL;
	evloop_timer_cancel(m->slow);
	job_free(j);
	if (m->again) {
		m->again = false;
		attrd_mounts_apply(m);
	}
}

/* A job that waits this long on the kernel is worth a word in the log (once). */
#define SLOW_JOB_USEC (10 * USEC_PER_SEC)

static void on_slow(struct evloop *loop, struct evtimer *t, void *userdata)
{
	struct attrd_mounts *m = userdata;
	_cleanup_free_ char *at = NULL;

	(void)loop, (void)t;
	if (!m->job)
		return;
	pthread_mutex_lock(&m->job->lock);
	at = m->job->current ? strdup(m->job->current) : NULL;
	pthread_mutex_unlock(&m->job->lock);
	log_warning(m->ctx, "sub-mounts: the kernel has not answered for %lld s (at %s; is the "
			    "server down?); nfskeys-attrd goes on serving, the sub-mounts wait",
		    (long long)((evloop_now(m->loop) - m->job->started) / USEC_PER_SEC),
		    at ? at : "?");
}

static int job_start(struct attrd_mounts *m)
{
	struct mjob *j = calloc(1, sizeof(*j));
	pthread_attr_t attr;
	pthread_t t;
	int r;

	if (!j)
		return -ENOMEM;
	pthread_mutex_init(&j->lock, NULL);
	j->m = m;
	j->loop = m->loop;
	j->started = evloop_now(m->loop);
	j->s.ctx = nfskeys_ctx_ref(m->ctx);
	r = entries_copy(m->v, m->n, &j->s.v);
	if (r < 0) {
		job_free(j);
		return r;
	}
	j->s.n = m->n;
	/* detached: a thread stuck on a dead server is never waited for */
	r = -pthread_attr_init(&attr);
	if (r == 0) {
		r = -pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		if (r == 0)
			r = -pthread_create(&t, &attr, worker_main, j);
		pthread_attr_destroy(&attr);
	}
	if (r < 0) {
		job_free(j);
		return r;
	}
	m->job = j;
	if (!m->slow)
		(void)evloop_add_timer(m->loop, j->started + SLOW_JOB_USEC, on_slow, m, &m->slow);
	else
		evloop_timer_set(m->slow, j->started + SLOW_JOB_USEC);
	return 0;
}

/* ---------------------------------------------------------------- apply */

void attrd_mounts_apply(struct attrd_mounts *m)
{
	struct libmnt_table *tb;
	struct libmnt_iter *it;
	struct libmnt_fs *fs;
	int r;

	if (!m || !m->ctx || !m->store)
		return;
	/* off, and nothing of ours left: no cost per SET/UNSET in the default setup */
	if (!m->enabled && m->loaded && m->n == 0)
		return;
	/* the worker owns the kernel side until it hands the table back */
	if (m->job) {
		m->again = true;
		return;
	}
	tb = mnt_new_table_from_file("/proc/self/mountinfo");
	it = mnt_new_iter(MNT_ITER_FORWARD);
	if (!tb || !it) {
		log_err(m->ctx, "cannot read the mount table /proc/self/mountinfo");
		goto out;
	}
	if (!m->loaded) {
		state_load(m);
		m->loaded = true;
	}
	prune(m, tb);
	for (size_t i = 0; i < m->n; i++)
		m->v[i].wanted = false;
	if (m->enabled) {
		while (mnt_table_next_fs(tb, it, &fs) == 0) {
			const char *t = mnt_fs_get_fstype(fs);

			/* CIFS too: its subtrees are listed (and said to be not applied) */
			if (t && (streq(t, "nfs") || streq(t, "nfs4") || streq(t, "cifs") ||
				  streq(t, "smb3")) &&
			    !ours(m->v, m->n, (unsigned)mnt_fs_get_id(fs)))
				want_for_parent(m, fs);
		}
	}
	/* deepest first: a nested sub-mount goes before the one it sits on */
	if (m->n > 1) /* m->v is NULL while empty: qsort must not see it */
		qsort(m->v, m->n, sizeof(*m->v), by_depth);
	if (m->n == 0) {
		state_save(m);
		goto out;
	}
	r = job_start(m);
	if (r < 0)
		log_err(m->ctx, "sub-mounts: cannot start the worker: %s; retrying at the next "
				"change", strerror(-r));
out:
	mnt_free_iter(it);
	mnt_unref_table(tb);
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
	m->state_path = state_path ? strdup(state_path) : NULL;
	*ret = m;
	return 0;
}

void attrd_mounts_configure(struct attrd_mounts *m, struct nfskeys_ctx *ctx,
			    struct nfskeys_attr_store *store, bool enabled)
{
	if (!m)
		return;
	m->ctx = ctx;
	m->store = store;
	if (enabled != m->enabled)
		log_notice(ctx, "[Mounts] Apply-Mounts = %s: %s", enabled ? "yes" : "no",
			   enabled ? "directory policy gets its own sub-mounts on NFS mounts" :
				     "removing the sub-mounts made for directory policy");
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
	evloop_timer_free(m->slow);
	if (m->job) {
		struct mjob *j = m->job;
		bool posted;

		/* never wait for a worker stuck on a dead server: it frees its own job; one
		 * already posted never runs (the loop is stopping) and is freed here */
		pthread_mutex_lock(&j->lock);
		posted = j->posted;
		j->orphaned = !posted;
		pthread_mutex_unlock(&j->lock);
		if (posted)
			job_free(j);
	}
	entries_free(m->v, m->n);
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

	*ret = (struct attrd_mount_info){
		.target = e->target, .source = e->source ? e->source : "",
		.options = e->options ? e->options : "", .state = mstate_names[e->state],
		.error = e->error ? e->error : "", .layers = (unsigned)e->n_ids,
		.mount_id = e->n_ids ? e->ids[e->n_ids - 1] : 0, .since = e->since,
	};
}
