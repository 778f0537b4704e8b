/* The nss_files index: an immutable snapshot (sorted arrays by name and by id) behind a
 * pointer that a rwlock guards only for reading the pointer and searching; a rebuild
 * reads the files with no lock readers take, then swaps the pointer under the write lock
 * for an instant.  Anything nss_files would parse differently than a plain
 * name:x:id:... line makes the whole file unindexed (then NSS is always asked).
 *
 * Whether the snapshot still matches the files: inotify watches on the directory and on
 * both files, and /proc/self/mountinfo for mounts over them, all in one epoll set that
 * the process's indexes of the directory share; a lookup asks that set once (epoll_wait,
 * no wait) and compares the files' identities (stat) only after it reported something.
 * Where a watch cannot see every change (a symbolic link on the way, a network file
 * system, no inotify or no watch left) each lookup stat()s the two files instead. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "nss-files-index.h"

struct ident {
	bool present;
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtim;
};

struct ent {
	uint32_t id;
	uint32_t name_off; /* into snap->names */
	uint32_t seq;      /* line order: the first occurrence wins */
};

struct snap {
	struct ident file, conf;
	bool usable;
	size_t n_name, n_id;
	struct ent *by_name, *by_id;
	char *names;
};

struct nfi {
	enum nfi_db db;
	char file_path[4096], conf_path[4096], dir_path[4096];
	pthread_rwlock_t lock; /* guards cur: read to search, write only to swap */
	pthread_mutex_t build; /* one rebuild at a time (held while reading files) */
	struct snap *cur;
	unsigned builds;
	/* the watches (see watch_*), all under watch_lock */
	struct watcher *w;	 /* NULL: no watching, stat() every lookup */
	bool watch_tried;	 /* watch_start ran (it is not retried after a failure) */
	bool verified;		 /* the snapshot of build number verified_build matched */
	unsigned verified_build; /* the files when w's report count was verified_gen */
	unsigned long verified_gen;
};

/* One set of watches per directory in the process, shared by all its indexes (both
 * databases, every context): an inotify instance is a resource of the user (128 by
 * default), not one to take per index.  Each index drains what the set reported when it
 * looks, so gen counts the reports taken: an index whose verification is older than the
 * last report taken stat()s the files again. */
enum { W_PASSWD, W_GROUP, W_CONF, W_FILES };

struct watcher {
	struct watcher *next;
	unsigned refs;
	bool broken; /* its queue could not be read: every index stat()s */
	int epfd, ino_fd, mnt_fd;
	int wd[W_FILES]; /* -1: not watched (absent: the directory's watch sees it come) */
	unsigned long gen;
	char dir[4096];
};

static pthread_mutex_t watch_lock = PTHREAD_MUTEX_INITIALIZER;
static struct watcher *watchers;
static pthread_once_t watch_once = PTHREAD_ONCE_INIT;

/* A child of fork() shares the sets' inotify queues with its parent: were it to drain
 * them, the parent would miss those reports.  The child's indexes stat() instead. */
static void watch_fork_prepare(void)
{
	pthread_mutex_lock(&watch_lock);
}

static void watch_fork_parent(void)
{
	pthread_mutex_unlock(&watch_lock);
}

static void watch_fork_child(void)
{
	for (struct watcher *w = watchers; w; w = w->next)
		w->broken = true;
	pthread_mutex_unlock(&watch_lock);
}

static void watch_once_init(void)
{
	pthread_atfork(watch_fork_prepare, watch_fork_parent, watch_fork_child);
}

struct nfi *nfi_new(enum nfi_db db, const char *etc_dir)
{
	struct nfi *x = calloc(1, sizeof(*x));
	const char *dir = etc_dir ? etc_dir : "/etc";

	if (!x)
		return NULL;
	x->db = db;
	snprintf(x->file_path, sizeof(x->file_path), "%s/%s", dir,
		 db == NFI_GROUP ? "group" : "passwd");
	snprintf(x->conf_path, sizeof(x->conf_path), "%s/nsswitch.conf", dir);
	snprintf(x->dir_path, sizeof(x->dir_path), "%s", dir);
	pthread_rwlock_init(&x->lock, NULL);
	pthread_mutex_init(&x->build, NULL);
	return x;
}

static void snap_free(struct snap *s)
{
	if (!s)
		return;
	free(s->by_name);
	free(s->by_id);
	free(s->names);
	free(s);
}

/* Every change to a file (the directory: a name replaced, created, removed; the files'
 * inodes: written, truncated, their links changed); never what reading them causes. */
#define DIR_MASK                                                                            \
	(IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_MODIFY | IN_CLOSE_WRITE | \
	 IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW)
#define FILE_MASK \
	(IN_MODIFY | IN_CLOSE_WRITE | IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF | IN_DONT_FOLLOW)

/* Is path on a file system whose every change goes through this kernel (so inotify sees
 * it)?  Not NFS, CIFS, 9p, FUSE and the like: another host or a daemon changes those. */
static bool fs_local(const char *path)
{
	static const uint32_t local[] = {
		EXT4_SUPER_MAGIC,      XFS_SUPER_MAGIC, BTRFS_SUPER_MAGIC,
		F2FS_SUPER_MAGIC,      TMPFS_MAGIC,	RAMFS_MAGIC,
		OVERLAYFS_SUPER_MAGIC, SQUASHFS_MAGIC,	EROFS_SUPER_MAGIC_V1,
	};
	struct statfs st;

	if (statfs(path, &st) < 0)
		return false;
	for (size_t i = 0; i < sizeof(local) / sizeof(local[0]); i++)
		if ((uint32_t)st.f_type == local[i])
			return true;
	return false;
}

static void watcher_free(struct watcher *w)
{
	if (w->epfd >= 0)
		close(w->epfd);
	if (w->ino_fd >= 0)
		close(w->ino_fd);
	if (w->mnt_fd >= 0)
		close(w->mnt_fd);
	free(w);
}

/* This index back to stat() on every lookup.  Under watch_lock. */
static void watch_put(struct nfi *x)
{
	struct watcher *w = x->w, **pp;

	x->w = NULL;
	x->verified = false;
	if (!w || --w->refs > 0)
		return;
	for (pp = &watchers; *pp != w; pp = &(*pp)->next)
		;
	*pp = w->next;
	watcher_free(w);
}

/* The directory's set: inotify (the directory's watch here, the files' in watch_rearm)
 * and the mount table, which reports EPOLLPRI once per change of this mount namespace.
 * Only for a directory named by its real path (no symbolic link, no ..) on a local file
 * system; anything failing (no inotify, EMFILE, ENOSPC: no watch left) leaves stat().
 * Under watch_lock. */
static void watch_start(struct nfi *x)
{
	struct epoll_event ev = { .events = EPOLLIN };
	char real[PATH_MAX];
	struct watcher *w;

	x->watch_tried = true;
	pthread_once(&watch_once, watch_once_init);
	for (w = watchers; w; w = w->next)
		if (!w->broken && strcmp(w->dir, x->dir_path) == 0) {
			w->refs++;
			x->w = w;
			return;
		}
	if (!realpath(x->dir_path, real) || strcmp(real, x->dir_path) != 0 ||
	    !fs_local(x->dir_path) || !(w = calloc(1, sizeof(*w))))
		return;
	snprintf(w->dir, sizeof(w->dir), "%s", x->dir_path);
	for (int i = 0; i < W_FILES; i++)
		w->wd[i] = -1;
	w->epfd = epoll_create1(EPOLL_CLOEXEC);
	w->ino_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	w->mnt_fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
	if (w->epfd < 0 || w->ino_fd < 0 || w->mnt_fd < 0 ||
	    inotify_add_watch(w->ino_fd, w->dir, DIR_MASK) < 0 ||
	    epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->ino_fd, &ev) < 0)
		goto fail;
	ev.events = EPOLLPRI;
	if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->mnt_fd, &ev) < 0)
		goto fail;
	w->refs = 1;
	w->next = watchers;
	watchers = w;
	x->w = w;
	return;
fail:
	watcher_free(w);
}

/* Watch the inode at path, the set's file i (a file replaced is a new inode: the old
 * watch goes); absent, the directory's watch sees it come.  False when it cannot be
 * watched soundly. */
static bool file_watch(struct watcher *w, int i, const char *path)
{
	struct stat st;
	int wd = -1;

	if (lstat(path, &st) < 0) {
		if (errno != ENOENT)
			return false;
	} else {
		/* a link's target may change where no watch of ours sees it */
		if (S_ISLNK(st.st_mode) || !fs_local(path))
			return false;
		wd = inotify_add_watch(w->ino_fd, path, FILE_MASK);
		if (wd < 0 && errno != ENOENT)
			return false;
	}
	if (w->wd[i] >= 0 && w->wd[i] != wd) {
		bool shared = false;

		for (int j = 0; j < W_FILES; j++)
			shared |= j != i && w->wd[j] == w->wd[i];
		if (!shared)
			inotify_rm_watch(w->ino_fd, w->wd[i]); /* EINVAL when its inode is gone */
	}
	w->wd[i] = wd;
	return true;
}

/* Take what the set reported (read the inotify queue empty; epoll_wait polls the mount
 * table, which takes its report) and watch this index's files as they are now: any
 * change after this is reported.  Under watch_lock. */
static void watch_rearm(struct nfi *x)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	struct watcher *w = x->w;
	struct epoll_event ev[2];
	bool taken = false;
	ssize_t n;

	if (!w)
		return;
	if (w->broken) {
		watch_put(x);
		return;
	}
	if (epoll_wait(w->epfd, ev, 2, 0) != 0)
		taken = true;
	while ((n = read(w->ino_fd, buf, sizeof(buf))) > 0)
		taken = true;
	if (taken)
		w->gen++;
	if (n < 0 && errno != EAGAIN && errno != EINTR) {
		w->broken = true;
		w->gen++;
	}
	if (w->broken || !file_watch(w, x->db == NFI_GROUP ? W_GROUP : W_PASSWD, x->file_path) ||
	    !file_watch(w, W_CONF, x->conf_path))
		watch_put(x);
}

/* Has the set reported nothing since the snapshot the caller holds the read lock on was
 * found to match the files?  One epoll_wait, no waiting. */
static bool watch_quiet(struct nfi *x)
{
	struct epoll_event ev;
	struct watcher *w;
	bool quiet = false;

	pthread_mutex_lock(&watch_lock);
	w = x->w;
	if (w && !w->broken && x->verified && x->verified_build == x->builds &&
	    x->verified_gen == w->gen) {
		quiet = epoll_wait(w->epfd, &ev, 1, 0) == 0;
		if (!quiet)
			w->gen++; /* (the mount table's report is taken now) */
	}
	pthread_mutex_unlock(&watch_lock);
	return quiet;
}

void nfi_free(struct nfi *x)
{
	if (!x)
		return;
	snap_free(x->cur);
	pthread_mutex_lock(&watch_lock);
	watch_put(x);
	pthread_mutex_unlock(&watch_lock);
	pthread_rwlock_destroy(&x->lock);
	pthread_mutex_destroy(&x->build);
	free(x);
}

static void ident_of(const struct stat *st, struct ident *ret)
{
	ret->present = true;
	ret->dev = st->st_dev;
	ret->ino = st->st_ino;
	ret->size = st->st_size;
	ret->mtim = st->st_mtim;
}

/* 0 (present or absent), -errno when it cannot be told */
static int ident_stat(const char *path, struct ident *ret)
{
	struct stat st;

	memset(ret, 0, sizeof(*ret));
	if (stat(path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	ident_of(&st, ret);
	return 0;
}

static bool ident_eq(const struct ident *a, const struct ident *b)
{
	if (a->present != b->present)
		return false;
	return !a->present || (a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
			       a->mtim.tv_sec == b->mtim.tv_sec &&
			       a->mtim.tv_nsec == b->mtim.tv_nsec);
}

/* Read a whole regular file of at most NFI_FILE_MAX bytes, NUL-terminated; its identity
 * from the descriptor read.  -ENOENT when absent, -EFBIG when too large. */
static int read_file(const char *path, char **ret_buf, size_t *ret_len, struct ident *ret_id)
{
	struct stat st;
	char *buf;
	size_t len = 0;
	int fd, r = 0;

	memset(ret_id, 0, sizeof(*ret_id));
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		r = -EINVAL;
		goto out;
	}
	if ((uint64_t)st.st_size > NFI_FILE_MAX) {
		r = -EFBIG;
		goto out;
	}
	ident_of(&st, ret_id);
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		r = -ENOMEM;
		goto out;
	}
	while (len < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + len, (size_t)st.st_size - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break; /* shrank under us: the identity will differ next time */
		len += (size_t)n;
	}
	buf[len] = '\0';
	*ret_buf = buf;
	*ret_len = len;
out:
	close(fd);
	return r;
}

/* Is the first source of db's line in nsswitch.conf text plain `files` (no [action] after
 * it that could let a later source override a hit)?  Two lines for the db: no. */
static bool conf_files_first(char *text, const char *db)
{
	bool found = false, ok = false;
	char *save = NULL;

	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *hash = strchr(line, '#'), *colon, *p, *tok, *end;

		if (hash)
			*hash = '\0';
		line += strspn(line, " \t");
		colon = strchr(line, ':');
		if (!colon)
			continue;
		end = colon;
		while (end > line && (end[-1] == ' ' || end[-1] == '\t'))
			end--;
		if ((size_t)(end - line) != strlen(db) || strncasecmp(line, db, strlen(db)) != 0)
			continue;
		if (found)
			return false;
		found = true;
		p = colon + 1 + strspn(colon + 1, " \t");
		tok = p;
		p += strcspn(p, " \t");
		if ((size_t)(p - tok) != 5 || strncmp(tok, "files", 5) != 0)
			continue;
		p += strspn(p, " \t");
		ok = *p != '[';
	}
	return found && ok;
}

/* Decimal digits only, < UINT32_MAX (what strtoul would read the same in any locale). */
static bool parse_id(const char **p, uint32_t *ret)
{
	uint64_t v = 0;
	const char *s = *p;

	if (*s < '0' || *s > '9')
		return false;
	for (; *s >= '0' && *s <= '9'; s++) {
		v = v * 10 + (uint64_t)(*s - '0');
		if (v >= UINT32_MAX)
			return false;
	}
	*ret = (uint32_t)v;
	*p = s;
	return true;
}

static const char *sort_names;

static int cmp_name(const void *a, const void *b)
{
	const struct ent *x = a, *y = b;
	int c = strcmp(sort_names + x->name_off, sort_names + y->name_off);

	return c ? c : (x->seq > y->seq) - (x->seq < y->seq);
}

static int cmp_id(const void *a, const void *b)
{
	const struct ent *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

static pthread_mutex_t sort_lock = PTHREAD_MUTEX_INITIALIZER; /* qsort has no context arg */

/* Parse text (modified in place: names are NUL-terminated in it) into s; false when the
 * file has a line nss_files would treat otherwise than we would. */
static bool parse_db(struct snap *s, enum nfi_db db, char *text, size_t len)
{
	size_t cap = 0, n = 0;
	struct ent *v = NULL;
	uint32_t seq = 0;

	if (memchr(text, '\0', len))
		return false;
	for (char *line = text, *next; line < text + len; line = next) {
		char *nl = strchr(line, '\n'), *colon;
		const char *p;
		uint32_t id, gid;

		next = nl ? nl + 1 : text + len;
		if (nl)
			*nl = '\0';
		if (!*line || *line == '#')
			continue;
		/* compat (+/-) lines, leading blanks: nss_files reads those its own way */
		if (*line == '+' || *line == '-' || strchr(" \t\r\v\f", *line))
			goto bad;
		colon = strchr(line, ':');
		if (!colon || colon == line)
			goto bad;
		*colon = '\0';
		p = strchr(colon + 1, ':'); /* past the password field */
		if (!p)
			goto bad;
		p++;
		if (!parse_id(&p, &id))
			goto bad;
		if (db == NFI_PASSWD) {
			/* nss_files skips a passwd line whose gid is not a number */
			if (*p != ':')
				goto bad;
			p++;
			if (!parse_id(&p, &gid))
				goto bad;
		}
		if (*p != ':' && *p != '\0')
			goto bad;
		if (n == cap) {
			struct ent *nv;

			cap = cap ? cap * 2 : 64;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv)
				goto bad;
			v = nv;
		}
		v[n++] = (struct ent){ .id = id, .name_off = (uint32_t)(line - text), .seq = seq++ };
	}
	s->by_name = v;
	s->by_id = n ? malloc(n * sizeof(*v)) : NULL;
	if (n && !s->by_id)
		goto bad;
	if (n)
		memcpy(s->by_id, v, n * sizeof(*v));
	pthread_mutex_lock(&sort_lock);
	sort_names = text;
	qsort(s->by_name, n, sizeof(*v), cmp_name);
	sort_names = NULL;
	pthread_mutex_unlock(&sort_lock);
	qsort(s->by_id, n, sizeof(*v), cmp_id);
	/* keep the first occurrence of each name and of each id */
	s->n_name = s->n_id = 0;
	for (size_t i = 0; i < n; i++)
		if (i == 0 || strcmp(text + v[i].name_off, text + v[i - 1].name_off) != 0)
			s->by_name[s->n_name++] = v[i];
	for (size_t i = 0; i < n; i++)
		if (i == 0 || s->by_id[i].id != s->by_id[i - 1].id)
			s->by_id[s->n_id++] = s->by_id[i];
	return true;
bad:
	free(v);
	s->by_name = NULL;
	return false;
}

/* A new snapshot of the files as they are now (never NULL but on ENOMEM). */
static struct snap *snap_build(struct nfi *x)
{
	struct snap *s = calloc(1, sizeof(*s));
	char *conf = NULL, *text = NULL;
	size_t conf_len, len;

	if (!s)
		return NULL;
	if (read_file(x->conf_path, &conf, &conf_len, &s->conf) < 0) {
		/* absent or unreadable: no index; the identity (absent) is still watched */
		ident_stat(x->conf_path, &s->conf);
		ident_stat(x->file_path, &s->file);
		return s;
	}
	if (!conf_files_first(conf, x->db == NFI_GROUP ? "group" : "passwd")) {
		ident_stat(x->file_path, &s->file);
		goto out;
	}
	if (read_file(x->file_path, &text, &len, &s->file) < 0) {
		ident_stat(x->file_path, &s->file);
		goto out;
	}
	s->usable = parse_db(s, x->db, text, len);
	if (s->usable) {
		s->names = text; /* the names point into it */
		text = NULL;
	}
out:
	free(conf);
	free(text);
	return s;
}

/* Do the files still match s?  Only stat(2): no file is read. */
static bool snap_fresh(const struct nfi *x, const struct snap *s)
{
	struct ident conf, file;

	if (!s || ident_stat(x->conf_path, &conf) < 0 || ident_stat(x->file_path, &file) < 0)
		return false;
	return ident_eq(&conf, &s->conf) && ident_eq(&file, &s->file);
}

/* Does s (x->cur, the caller holds the read lock) match the files?  Nothing reported since
 * it last did: yes, with no stat; else the reports are taken, the watches re-armed, and
 * the files stat()ed (then, matching, it is known to match until the next report). */
static bool snap_current(struct nfi *x, const struct snap *s)
{
	bool fresh;

	if (!s)
		return false;
	if (watch_quiet(x))
		return true;
	pthread_mutex_lock(&watch_lock);
	watch_rearm(x);
	if (!x->w) {
		pthread_mutex_unlock(&watch_lock);
		return snap_fresh(x, s);
	}
	fresh = snap_fresh(x, s);
	if (fresh) {
		x->verified = true;
		x->verified_build = x->builds;
		x->verified_gen = x->w->gen;
	}
	pthread_mutex_unlock(&watch_lock);
	return fresh;
}

/* Make x->cur match the files (reading them aside, no reader waits on that). */
static void refresh(struct nfi *x)
{
	struct snap *s = NULL, *old = NULL;
	unsigned long gen = 0;
	struct epoll_event ev;
	bool fresh;

	pthread_rwlock_rdlock(&x->lock);
	fresh = snap_current(x, x->cur);
	pthread_rwlock_unlock(&x->lock);
	if (fresh)
		return;
	pthread_mutex_lock(&x->build);
	pthread_rwlock_rdlock(&x->lock);
	fresh = snap_current(x, x->cur); /* another thread may have rebuilt it meanwhile */
	pthread_rwlock_unlock(&x->lock);
	if (fresh)
		goto out;
	/* armed before the files are read: a change while they are is reported */
	pthread_mutex_lock(&watch_lock);
	if (!x->watch_tried)
		watch_start(x);
	watch_rearm(x);
	if (x->w)
		gen = x->w->gen;
	pthread_mutex_unlock(&watch_lock);
	s = snap_build(x);
	if (!s)
		goto out;
	pthread_rwlock_wrlock(&x->lock);
	old = x->cur;
	x->cur = s;
	x->builds++;
	pthread_rwlock_unlock(&x->lock);
	/* (the builds count only changes under the build mutex, held here) */
	pthread_mutex_lock(&watch_lock);
	if (x->w && !x->w->broken && x->w->gen == gen) {
		x->verified = epoll_wait(x->w->epfd, &ev, 1, 0) == 0;
		x->verified_build = x->builds;
		x->verified_gen = gen;
		if (!x->verified)
			x->w->gen++;
	}
	pthread_mutex_unlock(&watch_lock);
out:
	pthread_mutex_unlock(&x->build);
	snap_free(old);
}

/* Take the read lock on a current, usable snapshot; NULL (lock not held) when none. */
static const struct snap *snap_get(struct nfi *x, bool nowait)
{
	if (!nowait)
		refresh(x);
	pthread_rwlock_rdlock(&x->lock);
	if (x->cur && x->cur->usable && (!nowait || snap_current(x, x->cur)))
		return x->cur;
	pthread_rwlock_unlock(&x->lock);
	return NULL;
}

int nfi_name_to_id(struct nfi *x, const char *name, bool nowait, uint32_t *ret_id)
{
	const struct snap *s = snap_get(x, nowait);
	size_t lo = 0, hi;
	int r = -EAGAIN;

	if (!s)
		return -EAGAIN;
	hi = s->n_name;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(name, s->names + s->by_name[mid].name_off);

		if (c == 0) {
			*ret_id = s->by_name[mid].id;
			r = 0;
			break;
		}
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	pthread_rwlock_unlock(&x->lock);
	return r;
}

int nfi_id_to_name(struct nfi *x, uint32_t id, bool nowait, char *buf, size_t size)
{
	const struct snap *s = snap_get(x, nowait);
	size_t lo = 0, hi;
	int r = -EAGAIN;

	if (!s)
		return -EAGAIN;
	hi = s->n_id;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->by_id[mid].id == id) {
			const char *name = s->names + s->by_id[mid].name_off;
			size_t len = strlen(name);

			r = len < size ? 0 : -ENAMETOOLONG;
			if (r == 0)
				memcpy(buf, name, len + 1);
			break;
		}
		if (id < s->by_id[mid].id)
			hi = mid;
		else
			lo = mid + 1;
	}
	pthread_rwlock_unlock(&x->lock);
	return r;
}

unsigned nfi_builds(struct nfi *x)
{
	unsigned n;

	pthread_rwlock_rdlock(&x->lock);
	n = x->builds;
	pthread_rwlock_unlock(&x->lock);
	return n;
}
