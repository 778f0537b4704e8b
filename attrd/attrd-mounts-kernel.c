/* The kernel side of nfskeys-attrd's sub-mounts, run in the worker thread: targets
 * opened without symlinks beneath the parent mount, mounts made detached and checked
 * before they are attached, remounted in place or stacked, and detached again. */
#include <fcntl.h>
#include <grp.h>
#include <linux/openat2.h>
#include <pwd.h>
#include <stdio.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "attrd-mounts-private.h"
#include "macros.h"
#include "nfskeys-attr-daemon.h"

static void set_state(struct mset *m, struct mentry *e, enum mstate s, const char *err)
{
	bool same = e->state == s && ((!err && !e->error) || (err && e->error && streq(err, e->error)));

	if (same)
		return;
	e->state = s;
	mounts_set_str(&e->error, err);
	e->since = (int64_t)time(NULL);
	if (s == MS_FAILED)
		log_err(m->ctx, "sub-mount %s on %s (%s): %s", e->source, e->target, e->options, err);
}

int mounts_ids_push(struct mentry *e, unsigned id)
{
	unsigned *v = realloc(e->ids, (e->n_ids + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	e->ids = v;
	e->ids[e->n_ids++] = id;
	return 0;
}

/* How many of e's mounts lie at or below id in its stack: 0 when id is none of them. */
static size_t ids_upto(const struct mentry *e, unsigned id)
{
	for (size_t i = 0; i < e->n_ids; i++)
		if (e->ids[i] == id)
			return i + 1;
	return 0;
}

static bool ids_has(const struct mentry *e, unsigned id)
{
	return ids_upto(e, id) > 0;
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

/* Is mount id in the mount table, anywhere?  Read from /proc/self/mountinfo: no server is
 * asked.  Cannot tell: yes. */
static bool id_mounted(unsigned id)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/mountinfo", "re");
	_cleanup_free_ char *line = NULL;
	size_t size = 0;

	if (!f)
		return true;
	while (getline(&line, &size, f) > 0)
		if (strtoul(line, NULL, 10) == id)
			return true;
	return false;
}

/* Is mount id one the table v made (at any target)? */
bool mounts_ours(const struct mentry *v, size_t n, unsigned id)
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
	if (top != e->parent_id && !mounts_ours(m->v, m->n, top)) {
		snprintf(msg, msg_size, "%s is on another mount (id %u), not mounting over it",
			 e->target, top);
		close(fd);
		return -EXDEV;
	}
	*ret_top = top;
	return fd;
}

/* The file handles of a and b: 1 when equal, 0 when not, -EOPNOTSUPP when the client
 * gives none (NFSv4.0 on 6.1, doc/LIVE-MOUNTS.md), another -errno on failure. */
static int same_handle(int a, int b)
{
	union {
		struct file_handle fh;
		char buf[sizeof(struct file_handle) + MAX_HANDLE_SZ];
	} ha, hb;
	int ma, mb;

	ha.fh.handle_bytes = hb.fh.handle_bytes = MAX_HANDLE_SZ;
	if (name_to_handle_at(a, "", &ha.fh, &ma, AT_EMPTY_PATH) < 0 ||
	    name_to_handle_at(b, "", &hb.fh, &mb, AT_EMPTY_PATH) < 0)
		return -errno;
	return ha.fh.handle_type == hb.fh.handle_type &&
	       ha.fh.handle_bytes == hb.fh.handle_bytes &&
	       memcmp(ha.fh.f_handle, hb.fh.f_handle, ha.fh.handle_bytes) == 0;
}

/* Is uid in [Attrd] Admin-Group (primary or supplementary, from NSS: in the worker)? */
static bool in_admin_group(uid_t uid, void *userdata)
{
	const struct mset *m = userdata;
	struct passwd pw, *res = NULL;
	gid_t groups[256];
	int n = (int)ARRAY_SIZE(groups);
	char buf[16384];

	if (!m->have_admin || getpwuid_r(uid, &pw, buf, sizeof(buf), &res) != 0 || !res)
		return false;
	if (pw.pw_gid == m->admin_gid)
		return true;
	if (getgrouplist(pw.pw_name, pw.pw_gid, groups, &n) < 0)
		return false;
	for (int i = 0; i < n; i++)
		if (groups[i] == m->admin_gid)
			return true;
	return false;
}

/* Is the directory open as fd (at e's target) the one e's policy was set on?  The policy
 * follows a directory, not its name: one removed or renamed (from a mount namespace of
 * its own, where it is no mount point) and another made in its place by someone else
 * must not get the first one's options mounted over it, which would also keep its new
 * owner from renaming or removing it (EBUSY).  By the file handle the store recorded
 * (on NFSv4.0, where the target's mount gives none, the file id in it), and a policy set
 * by a user other than root or an admin holds only while that user owns the directory. */
static bool policy_dir(struct mset *m, const struct mentry *e, int fd, char *msg, size_t msg_size)
{
	_cleanup_free_ char *h = NULL;
	struct statx st = {};
	uid_t who = 0;
	int r;

	if (e->handles) {
		h = attr_fd_handle(fd);
		/* no handle from its mount: the file id, as cached (it never changes; asking
		 * the server about a directory removed there only says ESTALE) */
		if (!h && statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_INO, &st) < 0) {
			snprintf(msg, msg_size, "cannot stat %s: %m", e->target);
			return false;
		}
	}
	r = mounts_handle_matches(e->handles, h, !e->cifs, st.stx_ino);
	if (r == 0) {
		snprintf(msg, msg_size, "not mounting over %s: it is not the directory its policy "
			 "was set on (%s; removed or renamed, and another made in its place?); "
			 "set the policy again on this one", e->target,
			 h ? "another file handle" : "another file id");
		return false;
	}
	if (r < 0 && r != -ENODATA) {
		snprintf(msg, msg_size, "cannot compare %s with the directory its policy was set "
			 "on: %s", e->target, strerror(-r));
		return false;
	}
	if (!e->setters)
		return true;
	/* from the server: an owner changed there is not in a long attribute cache yet */
	if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_FORCE_SYNC, STATX_UID, &st) < 0) {
		snprintf(msg, msg_size, "cannot stat %s: %m", e->target);
		return false;
	}
	r = mounts_setters_check(e->setters, st.stx_uid, in_admin_group, m, &who);
	if (r != 0) {
		if (r > 0)
			snprintf(msg, msg_size, "not mounting over %s: its policy was set by uid %u, "
				 "who does not own it (uid %u does)", e->target, (unsigned)who,
				 (unsigned)st.stx_uid);
		else
			snprintf(msg, msg_size, "cannot tell who set the policy of %s", e->target);
		return false;
	}
	return true;
}

/* The server's file system id of the NFS superblock on device maj:min, as the client
 * prints it in /proc/fs/nfsfs/volumes ("v4 7f000001 801 0:40 0:0 no"); read from the
 * client's table, it reaches no server. */
static int nfs_server_fsid(unsigned maj, unsigned min, char *ret, size_t size)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/fs/nfsfs/volumes", "re");
	char line[256], dev[64], want[64], fsid[64];

	if (!f)
		return -errno;
	snprintf(want, sizeof(want), "%u:%u", maj, min);
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%*s %*s %*s %63s %63s", dev, fsid) == 2 && streq(dev, want)) {
			snprintf(ret, size, "%s", fsid);
			return 0;
		}
	}
	return -ENOENT;
}

/* Without handles: the same file system on the server (its fsid) and the same file id
 * there (st_ino: the client shows the server's 64-bit fileid).  Like CIFS's check, no
 * generation number: a server that reuses a removed directory's file id at once for the
 * one made in its place would pass (knfsd on tmpfs, ext4, xfs does not reuse at once). */
static bool nfs_same_fileid(const struct mentry *e, int mfd, int at, char *msg, size_t msg_size)
{
	struct statx a, b;
	char fa[64], fb[64];
	int r;

	if (statx(mfd, "", AT_EMPTY_PATH, STATX_INO | STATX_TYPE, &a) < 0 ||
	    statx(at, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_INO | STATX_TYPE, &b) < 0) {
		snprintf(msg, msg_size, "cannot stat %s or %s: %m", e->source, e->target);
		return false;
	}
	r = nfs_server_fsid(a.stx_dev_major, a.stx_dev_minor, fa, sizeof(fa));
	if (r == 0)
		r = nfs_server_fsid(b.stx_dev_major, b.stx_dev_minor, fb, sizeof(fb));
	if (r < 0) {
		snprintf(msg, msg_size, "the client gives no file handles and its table of "
			 "volumes (/proc/fs/nfsfs/volumes) has no server fsid for %s or %s: %s; "
			 "%s cannot be checked to be that directory, not attached", e->source,
			 e->target, strerror(-r), e->source);
		return false;
	}
	if (!S_ISDIR(a.stx_mode) || a.stx_ino != b.stx_ino || !streq(fa, fb)) {
		snprintf(msg, msg_size, "%s on the server is no longer the directory at %s "
			 "(fsid %s file id %llu, not fsid %s file id %llu: moved or replaced "
			 "while mounting); not attached", e->source, e->target, fa,
			 (unsigned long long)a.stx_ino, fb, (unsigned long long)b.stx_ino);
		return false;
	}
	return true;
}

/* Is the root of the new NFS mount mfd the directory open as at?  By file handle where
 * the client gives them (NFSv4.1 and later), by server fsid and file id where it does
 * not (NFSv4.0 on 6.1: name_to_handle_at() fails with EOPNOTSUPP). */
static bool nfs_same_dir(const struct mentry *e, int mfd, int at, char *msg, size_t msg_size)
{
	int r = same_handle(mfd, at);

	if (r == -EOPNOTSUPP)
		return nfs_same_fileid(e, mfd, at, msg, msg_size);
	if (r < 0)
		snprintf(msg, msg_size, "cannot read the file handle of %s or %s: %s; not "
			 "attached", e->source, e->target, strerror(-r));
	else if (r == 0)
		snprintf(msg, msg_size, "%s on the server is no longer the directory at %s "
			 "(moved or replaced while mounting); not attached", e->source, e->target);
	return r > 0;
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

/* A new mount of e's source with its options, attached on the directory open as at, on
 * top of the below mounts of e there. */
static int mount_new(struct mset *m, struct mentry *e, int at, size_t below, char *msg,
		     size_t msg_size)
{
	_cleanup_close_ int fsfd = -1, mfd = -1;
	_cleanup_free_ char *opts = NULL, *user = NULL;
	const char *mid;
	unsigned id;
	int r;

	if (e->cifs) {
		r = mounts_cifs_user_option(e->base, &user);
		if (r < 0) {
			snprintf(msg, msg_size, "no user name for the multiuser parent's cruid= "
				 "(the kernel needs one): %s", strerror(-r));
			return r;
		}
	}
	/* CIFS has no nosharecache: a new prefix path or different options already make a
	 * superblock of its own (doc/LIVE-MOUNTS.md) */
	mid = e->cifs ? (user ? user : "") : "nosharecache";
	if (asprintf(&opts, "%s%s%s%s%s", e->base, *e->base ? "," : "", mid,
		     *mid && *e->options ? "," : "", e->options) < 0)
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
	if (e->cifs ? !mounts_cifs_same_dir(e, mfd, at, msg, msg_size) :
		      !nfs_same_dir(e, mfd, at, msg, msg_size))
		return -ESTALE;
	if (move_mount(mfd, "", at, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0) {
		r = -errno;
		snprintf(msg, msg_size, "attaching %s on %s: %s", e->source, e->target, strerror(-r));
		return r;
	}
	id = fd_mnt_id(mfd);
	/* ids are unique among mounts: one recorded with the new mount's id has gone, and
	 * the kernel gave its id to this one */
	for (size_t i = 0; i < e->n_ids; i++)
		if (e->ids[i] == id)
			memmove(&e->ids[i], &e->ids[i + 1], (--e->n_ids - i) * sizeof(*e->ids));
	r = mounts_ids_push(e, id);
	if (r < 0)
		return r;
	log_notice(m->ctx, "mounted %s on %s (mount id %u, layer %zu) with %s", e->source,
		   e->target, id, below + 1, opts);
	mounts_set_str(&e->applied, e->options);
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
	mounts_set_str(&e->applied, e->options);
	return 0;
}

/* e's mounts recorded above top, the mount its target shows (all of them when that is none
 * of e's), went away while a job held e, out of the loop's sight (mounts_prune()):
 * unmounted from outside, or moved along with their renamed directory.  Those the mount
 * table no longer has are forgotten, so they count as no layer; a moved one is the loop's
 * to find when the job is back. */
static void forget_gone(struct mset *m, struct mentry *e, unsigned top)
{
	size_t keep = ids_upto(e, top), n = e->n_ids;

	for (size_t i = keep; i < n; i++) {
		if (id_mounted(e->ids[i])) {
			e->ids[keep++] = e->ids[i];
			continue;
		}
		log_notice(m->ctx, "mount id %u at %s is gone (unmounted outside nfskeys-attrd)",
			   e->ids[i], e->target);
		/* the options recorded were the top one's */
		if (i + 1 == n)
			mounts_set_str(&e->applied, NULL);
	}
	e->n_ids = keep;
}

/* At most this many of our mounts are stacked at one target (each policy change that the
 * kernel cannot remount adds one). */
#define MAX_LAYERS 4

void mounts_ensure(struct mset *m, struct mentry *e)
{
	char msg[512] = "";
	unsigned top = 0;
	int fd, r;

	/* reported, never dropped: a CIFS parent whose credentials cannot be reused, or a
	 * policy CIFS has no option for; a mount made before no longer follows the policy */
	if (e->blocked) {
		if (e->n_ids && mounts_remove_mounts(m, e, "its policy cannot be applied") < 0)
			return;
		set_state(m, e, MS_FAILED, e->blocked);
		return;
	}

	fd = open_target(m, e, &top, msg, sizeof(msg));
	if (fd < 0) {
		set_state(m, e, MS_FAILED, msg);
		return;
	}
	/* checked on the descriptor the mount is attached on: no other directory can take
	 * its place in between */
	if (!policy_dir(m, e, fd, msg, sizeof(msg))) {
		close(fd);
		if (e->n_ids && mounts_remove_mounts(m, e, "its directory is not the one its "
							   "policy was set on") < 0)
			return;
		set_state(m, e, MS_FAILED, msg);
		return;
	}
	forget_gone(m, e, top);
	if (ids_has(e, top) && e->applied && streq(e->applied, e->options)) {
		set_state(m, e, MS_APPLIED, NULL);
		close(fd);
		return;
	}
	/* CIFS: a reconfigure starts from the defaults and would reset everything not passed
	 * (and change every mount sharing the superblock): always a new mount */
	r = ids_has(e, top) && !e->cifs ? remount(m, e, fd) : -ENOENT;
	if (r < 0 && e->n_ids >= MAX_LAYERS) {
		/* a change stacks a mount; a user who keeps changing a policy must not pile
		 * up mounts without end: the stack goes (lazily, files open on it keep
		 * working) and one fresh mount replaces it */
		close(fd);
		log_notice(m->ctx, "%zu mounts stacked at %s: replacing them by one", e->n_ids,
			   e->target);
		if (mounts_remove_mounts(m, e, "replaced by a fresh mount") < 0)
			return;
		fd = open_target(m, e, &top, msg, sizeof(msg));
		if (fd < 0) {
			set_state(m, e, MS_FAILED, msg);
			return;
		}
	}
	if (r < 0)
		r = mount_new(m, e, fd, ids_upto(e, top), msg, sizeof(msg));
	close(fd);
	if (r < 0)
		set_state(m, e, MS_FAILED, msg);
	else
		set_state(m, e, MS_APPLIED, NULL);
}

/* Detach our mounts at e's target, top first, as long as the top one is ours; why goes
 * into the log. */
int mounts_remove_mounts(struct mset *m, struct mentry *e, const char *why)
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
