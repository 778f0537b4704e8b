/* Directory identity: which filesystem a directory lives on and where inside it, read
 * from the mount table with libmount, so that a policy set through one mount point of
 * an export applies through every other mount of it (and through subtree mounts). */
#include <fcntl.h>
#include <libmount.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <linux/openat2.h>

#include "attr-private.h"

struct nfskeys_attr_id {
	char *domain;
	char *path;
	char *fstype;
	char *source;
	char *mountpoint;
	char *options;     /* the superblock's options from mountinfo (attr_owner_synthesized) */
	char *handle;      /* name_to_handle_at() of the directory, hex; NULL if none */
	char *local;       /* the directory's path in nfskeys-attrd's own mount namespace */
};

_public_ struct nfskeys_attr_id *nfskeys_attr_id_free(struct nfskeys_attr_id *id)
{
	if (!id)
		return NULL;
	free(id->domain);
	free(id->path);
	free(id->fstype);
	free(id->source);
	free(id->mountpoint);
	free(id->options);
	free(id->handle);
	free(id->local);
	free(id);
	return NULL;
}

static void attr_id_freep(struct nfskeys_attr_id **id)
{
	nfskeys_attr_id_free(*id);
}
#define _cleanup_id_ _cleanup_(attr_id_freep)

_public_ const char *nfskeys_attr_id_get_domain(const struct nfskeys_attr_id *id)
{
	return id ? id->domain : NULL;
}

_public_ const char *nfskeys_attr_id_get_path(const struct nfskeys_attr_id *id)
{
	return id ? id->path : NULL;
}

_public_ const char *nfskeys_attr_id_get_fstype(const struct nfskeys_attr_id *id)
{
	return id ? id->fstype : NULL;
}

_public_ const char *nfskeys_attr_id_get_source(const struct nfskeys_attr_id *id)
{
	return id ? id->source : NULL;
}

_public_ const char *nfskeys_attr_id_get_mountpoint(const struct nfskeys_attr_id *id)
{
	return id ? id->mountpoint : NULL;
}

const char *attr_id_get_options(const struct nfskeys_attr_id *id)
{
	return id ? id->options : NULL;
}

const char *attr_id_get_handle(const struct nfskeys_attr_id *id)
{
	return id ? id->handle : NULL;
}

const char *attr_id_get_local(const struct nfskeys_attr_id *id)
{
	return id ? id->local : NULL;
}

int attr_path_normalize(const char *path, char **ret)
{
	size_t n, len = 0;
	char *out;

	if (!path || path[0] != '/')
		return -EINVAL;
	n = strlen(path);
	if (n >= PATH_MAX)
		return -ENAMETOOLONG;
	out = malloc(n + 2);
	if (!out)
		return -ENOMEM;
	for (const char *p = path; *p;) {
		const char *s;
		size_t cl;

		while (*p == '/')
			p++;
		s = p;
		while (*p && *p != '/')
			p++;
		cl = (size_t)(p - s);
		if (cl == 0 || (cl == 1 && s[0] == '.'))
			continue;
		if (cl == 2 && s[0] == '.' && s[1] == '.') {
			while (len > 0 && out[len - 1] != '/')
				len--;
			if (len > 0)
				len--; /* the slash; ".." at the root stays at the root */
			continue;
		}
		out[len++] = '/';
		memcpy(out + len, s, cl);
		len += cl;
	}
	if (len == 0)
		out[len++] = '/';
	out[len] = '\0';
	*ret = out;
	return 0;
}

char *attr_id_format(const char *domain, const char *path)
{
	char *s;

	if (asprintf(&s, "%s%s", domain, path) < 0)
		return NULL;
	return s;
}

static bool domain_valid(const char *domain)
{
	static const char *const schemes[] = { "nfs://", "cifs://", "afs://", "local://" };
	bool ok = false;

	for (size_t i = 0; i < ARRAY_SIZE(schemes); i++)
		if (startswith(domain, schemes[i]) && domain[strlen(schemes[i])] != '\0')
			ok = true;
	if (!ok || strlen(domain) > 512)
		return false;
	for (const unsigned char *p = (const unsigned char *)domain; *p; p++)
		if (*p <= 0x20 || *p == 0x7f)
			return false;
	return domain[strlen(domain) - 1] != '/';
}

static int id_build(const char *domain, const char *path, const char *fstype, const char *source,
		    const char *mountpoint, struct nfskeys_attr_id **ret_id)
{
	_cleanup_id_ struct nfskeys_attr_id *id = NULL;
	int r;

	if (!domain_valid(domain))
		return -EINVAL;
	id = calloc(1, sizeof(*id));
	if (!id)
		return -ENOMEM;
	r = attr_path_normalize(path, &id->path);
	if (r < 0)
		return r;
	id->domain = strdup(domain);
	if (!id->domain)
		return -ENOMEM;
	if ((fstype && !(id->fstype = strdup(fstype))) || (source && !(id->source = strdup(source))) ||
	    (mountpoint && !(id->mountpoint = strdup(mountpoint))))
		return -ENOMEM;
	*ret_id = TAKE_PTR(id);
	return 0;
}

_public_ int nfskeys_attr_id_new(const char *domain, const char *path,
				 struct nfskeys_attr_id **ret_id)
{
	if (!domain || !path || !ret_id)
		return -EINVAL;
	return id_build(domain, path, NULL, NULL, NULL, ret_id);
}

/* base + "/" + rel, normalized. */
static int join(const char *base, const char *mid, const char *rel, char **ret)
{
	_cleanup_free_ char *s = NULL;

	if (asprintf(&s, "%s/%s/%s", base, mid ? mid : "", rel ? rel : "") < 0)
		return -ENOMEM;
	return attr_path_normalize(s[0] == '/' ? s : "/", ret);
}

static bool path_has_prefix(const char *path, const char *prefix)
{
	size_t n = strlen(prefix);

	if (streq(prefix, "/"))
		return true;
	return strncmp(path, prefix, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

int attr_id_from_mount(const char *fstype, const char *source, const char *root, dev_t devno,
		       const char *mountpoint, const char *rel, struct nfskeys_attr_id **ret_id)
{
	_cleanup_free_ char *domain = NULL, *path = NULL, *server = NULL, *prefix = NULL;
	const char *spath;
	int r;

	if (!fstype || !root)
		return -EINVAL;
	if (!source)
		source = "none";

	if ((streq(fstype, "nfs") || streq(fstype, "nfs4")) &&
	    attr_split_nfs_source(source, &server, &spath) == 0) {
		/* The NFS client names a mount by the server path of its root dentry (also for
		 * bind mounts of subdirectories) and always shows "/" as the root, so the
		 * source alone places the mount in the server's tree.  nfs and nfs4 share one
		 * domain: a server without an fsid=0 pseudo-root shows the same paths to both. */
		if (asprintf(&domain, "nfs://%s", server) < 0)
			return -ENOMEM;
		r = join(spath, NULL, rel, &path);
	} else if ((streq(fstype, "cifs") || streq(fstype, "smb3")) &&
		   attr_split_cifs_source(source, &domain, &prefix) == 0) {
		/* The root field may or may not already include the prefix path, depending
		 * on whether the superblock's root is the share or the prefix directory. */
		_cleanup_free_ char *nroot = NULL;
		r = attr_path_normalize(root, &nroot);
		if (r < 0)
			return r;
		if (!streq(prefix, "/") && path_has_prefix(nroot, prefix))
			r = join(nroot, NULL, rel, &path);
		else
			r = join(prefix, nroot, rel, &path);
	} else if (streq(fstype, "afs") && attr_split_afs_source(source, &domain) == 0) {
		r = join(root, NULL, rel, &path);
	} else {
		/* Local filesystems (and network ones whose source we cannot parse) are keyed
		 * by device identity; the root field places bind mounts in the filesystem. */
		if (asprintf(&domain, "local://%u:%u", major(devno), minor(devno)) < 0)
			return -ENOMEM;
		r = join(root, NULL, rel, &path);
	}
	if (r < 0)
		return r;
	return id_build(domain, path, fstype, source, mountpoint, ret_id);
}

/* The path of fd relative to mountpoint ("" at the mount point itself). */
static int rel_below(const char *abs, const char *mountpoint, const char **ret_rel)
{
	size_t n = strlen(mountpoint);

	if (streq(mountpoint, "/")) {
		*ret_rel = abs + 1;
		return 0;
	}
	if (strncmp(abs, mountpoint, n) != 0 || (abs[n] != '\0' && abs[n] != '/'))
		return -EXDEV;
	*ret_rel = abs[n] ? abs + n + 1 : "";
	return 0;
}

/* The line of mount mnt_id in a mountinfo file, parsed by libmount.  Bounded before
 * anything is authorized: at most ATTR_MOUNTINFO_MAX bytes are read (a caller in its own
 * mount namespace can make its table huge), and only the one line is parsed.  -ENOENT
 * when the mount is not in the table, -E2BIG when the table is longer than the bound. */
static int mountinfo_find(struct nfskeys_ctx *ctx, const char *file, int mnt_id,
			  struct libmnt_fs **ret_fs)
{
	_cleanup_fclose_ FILE *f = NULL;
	_cleanup_free_ char *line = NULL;
	size_t cap = 0, total = 0;
	char want[24];
	int wl, r = -ENOENT;
	ssize_t n;

	wl = snprintf(want, sizeof(want), "%d ", mnt_id);
	f = fopen(file, "re");
	if (!f)
		return negerrno();
	while ((n = getline(&line, &cap, f)) > 0) {
		struct libmnt_table *tb;
		struct libmnt_iter *it;
		struct libmnt_fs *fs = NULL;
		FILE *m;

		total += (size_t)n;
		if (total > ATTR_MOUNTINFO_MAX) {
			log_notice(ctx, "%s: more than %d bytes before mount %d: not read further",
				   file, ATTR_MOUNTINFO_MAX, mnt_id);
			return -E2BIG;
		}
		if (strncmp(line, want, (size_t)wl) != 0)
			continue;
		tb = mnt_new_table();
		m = fmemopen(line, (size_t)n, "r");
		it = mnt_new_iter(MNT_ITER_FORWARD);
		r = -ENOMEM;
		if (tb && m && it && mnt_table_parse_stream(tb, m, file) == 0 &&
		    mnt_table_next_fs(tb, it, &fs) == 0 && mnt_fs_get_id(fs) == mnt_id) {
			mnt_ref_fs(fs);
			*ret_fs = fs;
			r = 0;
		} else if (tb && m && it) {
			r = -EBADMSG;
		}
		mnt_free_iter(it);
		if (m)
			fclose(m);
		mnt_unref_table(tb);
		return r;
	}
	return r;
}

static int fd_mount_id(int fd, int *ret)
{
	struct statx stx;
	char path[64];
	char line[128];
	_cleanup_fclose_ FILE *f = NULL;

	if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_MNT_ID, &stx) == 0 &&
	    (stx.stx_mask & STATX_MNT_ID)) {
		*ret = (int)stx.stx_mnt_id;
		return 0;
	}
	/* Kernels before 5.8: fdinfo has carried mnt_id since 3.15. */
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "re");
	if (!f)
		return negerrno();
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "mnt_id: %d", ret) == 1)
			return 0;
	return -ENOENT;
}

int attr_fd_stat(int fd, struct stat *ret_st)
{
	struct statx stx;

	if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC,
		  STATX_TYPE | STATX_MODE | STATX_UID | STATX_GID | STATX_INO, &stx) < 0)
		return negerrno();
	memset(ret_st, 0, sizeof(*ret_st));
	ret_st->st_mode = stx.stx_mode;
	ret_st->st_uid = stx.stx_uid;
	ret_st->st_gid = stx.stx_gid;
	ret_st->st_ino = stx.stx_ino;
	ret_st->st_dev = makedev(stx.stx_dev_major, stx.stx_dev_minor);
	return 0;
}

static int fd_path(int fd, char *buf, size_t size)
{
	char link[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, buf, size - 1);
	if (n < 0)
		return negerrno();
	if (n >= (ssize_t)size - 1)
		return -ENAMETOOLONG;
	buf[n] = '\0';
	if (buf[0] != '/' || (n > 10 && streq(buf + n - 10, " (deleted)")))
		return -ENOENT;
	return 0;
}

static int fd_statx(int fd, struct statx *stx)
{
	if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_INO | STATX_MNT_ID, stx) < 0)
		return negerrno();
	return 0;
}

/* Does rel, opened beneath root, lead to the directory want?  0, -ESTALE when it does not
 * (moved, renamed, another mount on the way), -EAGAIN when cached and a component needs
 * the filesystem to revalidate it. */
static int beneath_is(int root, const char *rel, const struct statx *want, bool cached)
{
	struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
				.resolve = RESOLVE_BENEATH | RESOLVE_NO_XDEV | RESOLVE_NO_SYMLINKS |
					   RESOLVE_NO_MAGICLINKS | (cached ? RESOLVE_CACHED : 0) };
	_cleanup_close_ int chk = -1;
	struct statx s;
	int r;

	chk = (int)syscall(SYS_openat2, root, rel, &how, sizeof(how));
	if (chk < 0)
		return errno == ENOENT || errno == EXDEV ? -ESTALE : negerrno();
	r = fd_statx(chk, &s);
	if (r < 0)
		return r;
	if (s.stx_mnt_id != want->stx_mnt_id || s.stx_ino != want->stx_ino)
		return -ESTALE;
	return 0;
}

/* The parent of the directory open as dir (the mount's mount point at its root); cached:
 * from the dentry cache only, -EAGAIN where the filesystem would be asked (the search
 * permission of dir: FUSE and NFS may refresh its attributes from the server first). */
static int open_parent(int dir, bool cached)
{
	struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
				.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
					   (cached ? RESOLVE_CACHED : 0) };
	int up = (int)syscall(SYS_openat2, dir, "..", &how, sizeof(how));

	return up < 0 ? negerrno() : up;
}

/* The directory's path below the root of its own mount, computed from one view: walk
 * ".." from fd while the mount stays the same to find the mount's root, and take both
 * paths from the kernel the same way (readlink of the descriptors), so neither the
 * caller's root nor its view of the mount table enters.  The result is checked by
 * opening it again beneath the mount's root: a mount moved in between fails instead of
 * shifting.  cached: every step from the dentry cache only, so that no filesystem call
 * can block a daemon; -EAGAIN where the cache cannot tell (a directory whose attributes
 * or entries the filesystem revalidates first: NFS with actimeo=0, FUSE without entry
 * caching). */
static int rel_in_mount(int fd, char **ret_rel, bool cached)
{
	char abs[PATH_MAX + 1], rootp[PATH_MAX + 1];
	struct statx sfd, scur, sup;
	_cleanup_close_ int cur = -1;
	const char *rel;
	int r;

	r = fd_statx(fd, &sfd);
	if (r < 0)
		return r;
	cur = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (cur < 0)
		return negerrno();
	scur = sfd;
	for (int depth = 0;; depth++) {
		int up;

		if (depth > PATH_MAX / 2)
			return -ELOOP;
		up = open_parent(cur, cached);
		if (up < 0)
			return up;
		r = fd_statx(up, &sup);
		if (r < 0 || sup.stx_mnt_id != sfd.stx_mnt_id ||
		    (sup.stx_ino == scur.stx_ino && sup.stx_dev_major == scur.stx_dev_major &&
		     sup.stx_dev_minor == scur.stx_dev_minor)) {
			close(up);
			if (r < 0)
				return r;
			break;
		}
		close(cur);
		cur = up;
		scur = sup;
	}
	r = fd_path(cur, rootp, sizeof(rootp));
	if (r == 0)
		r = fd_path(fd, abs, sizeof(abs));
	if (r < 0)
		return r;
	r = rel_below(abs, rootp, &rel);
	if (r < 0)
		return r;
	if (*rel) {
		r = beneath_is(cur, rel, &sfd, cached);
		if (r < 0)
			return r;
	}
	*ret_rel = strdup(rel);
	return *ret_rel ? 0 : -ENOMEM;
}

/* A directory's place in a mount of another namespace that the dentry cache alone could
 * not confirm: rel_in_mount() again, allowed to wait on the filesystem. */
struct attr_id_check {
	int fd;			/* the directory (a copy of the caller's descriptor) */
	struct libmnt_fs *fs;	/* its mount in the caller's table */
	char *rel;		/* attr_id_check_run()'s answer */
};

struct attr_id_check *attr_id_check_free(struct attr_id_check *c)
{
	if (!c)
		return NULL;
	if (c->fd >= 0)
		close(c->fd);
	mnt_unref_fs(c->fs);
	free(c->rel);
	free(c);
	return NULL;
}

int attr_id_check_run(struct attr_id_check *c)
{
	return rel_in_mount(c->fd, &c->rel, false);
}

/* name_to_handle_at() of fd as "TYPE:HEX", or NULL where the filesystem has none. */
static char *fd_handle(int fd)
{
	union {
		struct file_handle fh;
		char buf[sizeof(struct file_handle) + MAX_HANDLE_SZ];
	} h;
	int mnt;
	char *s, *p;

	h.fh.handle_bytes = MAX_HANDLE_SZ;
	if (name_to_handle_at(fd, "", &h.fh, &mnt, AT_EMPTY_PATH) < 0 ||
	    h.fh.handle_bytes > MAX_HANDLE_SZ)
		return NULL;
	s = malloc(16 + 2 * h.fh.handle_bytes);
	if (!s)
		return NULL;
	p = s + sprintf(s, "%d:", h.fh.handle_type);
	for (unsigned i = 0; i < h.fh.handle_bytes; i++)
		p += sprintf(p, "%02x", h.fh.f_handle[i]);
	return s;
}

char *attr_fd_handle(int fd)
{
	return fd_handle(fd);
}

/* The identity of the directory fd at rel below the mount fs; local: the mount is in our
 * own table (its mount point is then where we see the directory). */
static int id_from_fs(struct libmnt_fs *fs, const char *rel, int fd, bool local,
		    struct nfskeys_attr_id **ret_id)
{
	_cleanup_id_ struct nfskeys_attr_id *id = NULL;
	const char *o = mnt_fs_get_fs_options(fs);
	int r;

	r = attr_id_from_mount(mnt_fs_get_fstype(fs), mnt_fs_get_source(fs), mnt_fs_get_root(fs),
			       mnt_fs_get_devno(fs), mnt_fs_get_target(fs), rel, &id);
	if (r < 0)
		return r;
	if (o && !(id->options = strdup(o)))
		return -ENOMEM;
	id->handle = fd_handle(fd);
	/* the mount point, only where our own view placed it: the orphan check opens the
	 * handle on its filesystem */
	if (local && !(id->local = strdup(mnt_fs_get_target(fs))))
		return -ENOMEM;
	*ret_id = TAKE_PTR(id);
	return 0;
}

int attr_id_check_finish(struct attr_id_check *c, struct nfskeys_attr_id **ret_id)
{
	return c->rel ? id_from_fs(c->fs, c->rel, c->fd, false, ret_id) : -EINVAL;
}

int attr_id_from_fd_tables(struct nfskeys_ctx *ctx, int fd, const char *const *mountinfo_files,
			   struct nfskeys_attr_id **ret_id, struct attr_id_check **ret_check)
{
	static const char *const self[] = { "/proc/self/mountinfo", NULL };
	const char *const *files = mountinfo_files ? mountinfo_files : self;
	_cleanup_free_ char *relbuf = NULL;
	char abs[PATH_MAX + 1];
	struct libmnt_fs *fs = NULL;
	const char *rel = NULL;
	struct stat st;
	int mnt_id, r;

	if (fd < 0 || !ret_id)
		return -EINVAL;
	*ret_id = NULL;
	if (ret_check)
		*ret_check = NULL;
	r = attr_fd_stat(fd, &st);
	if (r < 0)
		return r;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	r = fd_mount_id(fd, &mnt_id);
	if (r < 0)
		return r;
	r = fd_path(fd, abs, sizeof(abs));
	if (r < 0)
		return r;

	/* Our own table first: the readlink above and its mount points are one view. */
	r = mountinfo_find(ctx, files[0], mnt_id, &fs);
	if (r == 0) {
		r = rel_below(abs, mnt_fs_get_target(fs), &rel);
		if (r < 0)
			log_debug(ctx, "%s is not below its mount point %s", abs,
				  mnt_fs_get_target(fs));
	} else if (r == -ENOENT) {
		/* A mount of another namespace (the caller's): the other tables give only what
		 * does not depend on who looks (type, source, root in the filesystem, device,
		 * options); the path inside the mount comes from the mount itself.  Their
		 * mount points are the caller's view (its root, its chroot): never joined with
		 * ours. */
		for (const char *const *file = files + 1; *file && r == -ENOENT; file++)
			r = mountinfo_find(ctx, *file, mnt_id, &fs);
		if (r == 0) {
			r = rel_in_mount(fd, &relbuf, true);
			rel = relbuf;
		}
		if (r == -EAGAIN && ret_check) {
			/* the filesystem must answer first: the caller makes the walk again
			 * where it may wait (attr_id_check_run), then finishes the identity */
			struct attr_id_check *c = calloc(1, sizeof(*c));

			if (!c) {
				mnt_unref_fs(fs);
				return -ENOMEM;
			}
			c->fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
			c->fs = TAKE_PTR(fs);
			if (c->fd < 0) {
				r = negerrno();
				attr_id_check_free(c);
				return r;
			}
			*ret_check = c;
			return 0;
		}
	}
	if (r == -ENOENT)
		log_debug(ctx, "mount %d of %s not found in the mount table", mnt_id, abs);
	if (r == 0)
		r = id_from_fs(fs, rel, fd, !relbuf, ret_id);
	mnt_unref_fs(fs);
	return r;
}

_public_ int nfskeys_attr_id_from_fd(struct nfskeys_ctx *ctx, int fd,
				     struct nfskeys_attr_id **ret_id)
{
	return attr_id_from_fd_tables(ctx, fd, NULL, ret_id, NULL);
}

_public_ int nfskeys_attr_id_from_path(struct nfskeys_ctx *ctx, const char *path,
				       struct nfskeys_attr_id **ret_id)
{
	_cleanup_close_ int fd = -1;

	if (!path || !ret_id)
		return -EINVAL;
	fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return negerrno();
	return attr_id_from_fd_tables(ctx, fd, NULL, ret_id, NULL);
}

int attr_id_from_table(struct libmnt_table *tb, const char *path, struct nfskeys_attr_id **ret_id)
{
	struct libmnt_iter *it;
	struct libmnt_fs *fs = NULL, *best = NULL;
	_cleanup_free_ char *norm = NULL;
	size_t best_len = 0;
	const char *rel;
	int r;

	if (!tb || !path || path[0] != '/')
		return -EINVAL;
	/* Match the directory the path leads to: "/mnt/nfs/../x" is not on /mnt/nfs (found by
	 * fuzz-mountinfo: the ".." then climbed out of the export in the identity). */
	r = attr_path_normalize(path, &norm);
	if (r < 0)
		return r;
	path = norm;
	it = mnt_new_iter(MNT_ITER_FORWARD);
	if (!it)
		return -ENOMEM;
	while (mnt_table_next_fs(tb, it, &fs) == 0) {
		const char *t = mnt_fs_get_target(fs);
		size_t n = t ? strlen(t) : 0;

		/* Later entries are mounted on top of earlier ones at the same place. */
		if (t && path_has_prefix(path, t) && (!best || n >= best_len)) {
			best = fs;
			best_len = n;
		}
	}
	mnt_free_iter(it);
	if (!best)
		return -ENOENT;
	r = rel_below(path, mnt_fs_get_target(best), &rel);
	if (r < 0)
		return r;
	return attr_id_from_mount(mnt_fs_get_fstype(best), mnt_fs_get_source(best),
				  mnt_fs_get_root(best), mnt_fs_get_devno(best),
				  mnt_fs_get_target(best), rel, ret_id);
}

_public_ int nfskeys_attr_id_from_spec(const char *spec, struct nfskeys_attr_id **ret_id)
{
	_cleanup_free_ char *domain = NULL, *prefix = NULL, *server = NULL, *afs = NULL;
	const char *spath;
	int r;

	if (!spec || !ret_id)
		return -EINVAL;
	if (startswith(spec, "//") || startswith(spec, "\\\\")) {
		r = attr_split_cifs_source(spec, &domain, &prefix);
		if (r < 0)
			return r;
		return id_build(domain, prefix, "cifs", spec, NULL, ret_id);
	}
	if (attr_split_nfs_source(spec, &server, &spath) == 0) {
		if (asprintf(&domain, "nfs://%s", server) < 0)
			return -ENOMEM;
		return id_build(domain, spath, "nfs", spec, NULL, ret_id);
	}
	/* cell:volume[/sub] */
	afs = strdup(spec);
	if (!afs)
		return -ENOMEM;
	{
		char *slash = strchr(afs, '/');
		const char *sub = "/";
		_cleanup_free_ char *subcopy = NULL;

		if (slash) {
			subcopy = strdup(slash);
			if (!subcopy)
				return -ENOMEM;
			*slash = '\0';
			sub = subcopy;
		}
		r = attr_split_afs_source(afs, &domain);
		if (r < 0)
			return -EINVAL;
		return id_build(domain, sub, "afs", spec, NULL, ret_id);
	}
}
