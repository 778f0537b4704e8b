/* The NFS client's idmap pipes in rpc_pipefs (clnt*\/idmap): found and watched with
 * inotify as clients come and go, read without blocking, answered in one write(); and
 * the client's idmap cache timeout. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "conf-get.h"
#include "ini.h"
#include "kernel-paths-private.h"
#include "macros.h"
#include "time-util.h"

#define PIPES_MAX 4096

/* ---------------------------------------------------------------- client pipes */

static void pipe_read(struct evloop *loop, struct evio *io, int fd, uint32_t events,
		      void *userdata);

static void pipe_unref(struct kpipe *p)
{
	if (p && --p->refs == 0)
		free(p);
}

/* Stop serving p (its client went away); queries out keep it until answered. */
void kpaths_pipe_close(struct kpipe *p)
{
	struct kpaths *kp = p->kp;

	for (struct kpipe **pp = &kp->pipes; *pp; pp = &(*pp)->next)
		if (*pp == p) {
			*pp = p->next;
			kp->n_pipes--;
			break;
		}
	evloop_io_free(p->io);
	p->io = NULL;
	if (p->dir_wd >= 0)
		(void)inotify_rm_watch(kp->ino_fd, p->dir_wd);
	p->dir_wd = -1;
	if (p->fd >= 0) {
		close(p->fd);
		kpaths_unstore(kp, p->store);
		if (p->ns)
			p->ns->n_open--;
	}
	p->fd = -1;
	if (p->ns)
		p->ns->n_pipes--;
	p->ns = NULL; /* a namespace may be released while queries still hold p */
	pipe_unref(p);
}

struct kpipe *kpaths_pipe_find(struct kpaths *kp, const struct kns *ns, const char *name)
{
	for (struct kpipe *p = kp->pipes; p; p = p->next)
		if (p->ns == ns && !strcmp(p->name, name))
			return p;
	return NULL;
}

/* "clnt3" on the daemon's own rpc_pipefs, "net:[4026532290]/clnt3" in another namespace */
static const char *pipe_label(const struct kpipe *p, char *buf, size_t size)
{
	if (!p->ns)
		return p->name;
	snprintf(buf, size, "%s/%s", p->ns->label, p->name);
	return buf;
}

/* Open clntXX/idmap, or watch clntXX/ until it appears (the kernel makes the directory
 * before the pipe). */
/* Open p's pipe (rel below its namespace's nfs/, or path) and keep a copy in the
 * descriptor store; -1 with errno as open() left it. */
static int pipe_open_new(struct kpipe *p, const char *rel, const char *path)
{
	int fd = p->ns ? openat(p->ns->nfs_fd, rel, O_RDWR | O_NONBLOCK | O_CLOEXEC) :
			 open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);

	if (fd >= 0)
		kpaths_store(p->kp, fd, p->store);
	return fd;
}

static void pipe_try_open(struct kpipe *p)
{
	struct kpaths *kp = p->kp;
	char path[PATH_MAX], rel[NAME_MAX + 8];
	int r;

	if (p->fd >= 0)
		return;
	snprintf(rel, sizeof(rel), "%s/idmap", p->name);
	kpaths_store_name(p->store, sizeof(p->store), "pipe", p->ns ? p->ns->ino : 0, p->name);
	if (p->ns)
		snprintf(path, sizeof(path), "%s/%s", p->ns->label, rel);
	else
		snprintf(path, sizeof(path), "%s/nfs/%s", kp->pipefs, rel);
	/* the last run's, after a clean stop: messages queued meanwhile are waiting in it */
	p->fd = kp->adopt_pipes ? kpaths_adopt(kp, p->store, p->ns ? p->ns->nfs_fd : AT_FDCWD,
					       p->ns ? rel : path) : -1;
	if (p->fd < 0)
		p->fd = pipe_open_new(p, rel, path);
	if (p->fd < 0) {
		if (errno == ENOENT && p->dir_wd < 0) {
			char dir[PATH_MAX];

			if (p->ns)
				snprintf(dir, sizeof(dir), "/proc/self/fd/%d/%s", p->ns->nfs_fd,
					 p->name);
			else
				snprintf(dir, sizeof(dir), "%s/nfs/%s", kp->pipefs, p->name);
			p->dir_wd = inotify_add_watch(kp->ino_fd, dir, IN_CREATE | IN_ONLYDIR);
			/* the kernel may have made the pipe between the open and the watch, and
			 * then no event comes for it: look once more */
			if (p->dir_wd >= 0)
				p->fd = pipe_open_new(p, rel, path);
		} else if (errno != ENOENT) {
			kp->log(LOG_WARNING, "cannot open %s: %m", path);
		}
		if (p->fd < 0)
			return;
	}
	if (p->dir_wd >= 0)
		(void)inotify_rm_watch(kp->ino_fd, p->dir_wd);
	p->dir_wd = -1;
	r = evloop_add_io(kp->loop, p->fd, EPOLLIN, pipe_read, p, &p->io);
	if (r < 0) {
		kp->log(LOG_WARNING, "cannot watch %s: %s", path, strerror(-r));
		close(p->fd);
		p->fd = -1;
		return;
	}
	if (p->ns)
		p->ns->n_open++;
	kp->log(LOG_INFO, "serving NFS client idmap pipe %s", path);
}

void kpaths_pipe_add(struct kpaths *kp, struct kns *ns, const char *name)
{
	struct kpipe *p;

	if (strncmp(name, "clnt", 4) || strlen(name) > NAME_MAX || kpaths_pipe_find(kp, ns, name))
		return;
	if (kp->n_pipes >= PIPES_MAX) {
		kp->log(LOG_WARNING, "more than %d NFS clients: %s not served", PIPES_MAX, name);
		return;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return;
	p->kp = kp;
	p->ns = ns;
	if (ns)
		ns->n_pipes++;
	p->fd = -1;
	p->dir_wd = -1;
	p->refs = 1;
	snprintf(p->name, sizeof(p->name), "%s", name);
	p->next = kp->pipes;
	kp->pipes = p;
	kp->n_pipes++;
	pipe_try_open(p);
}

/* Bring the pipe list in line with <pipefs>/nfs (at start, and when inotify overflows). */
static void pipes_scan(struct kpaths *kp)
{
	char path[PATH_MAX];
	struct kpipe *p, *next;
	struct dirent *de;
	DIR *dir;

	snprintf(path, sizeof(path), "%s/nfs", kp->pipefs);
	dir = opendir(path);
	if (!dir)
		return;
	while ((de = readdir(dir)))
		kpaths_pipe_add(kp, NULL, de->d_name);
	closedir(dir);
	if (kp->ns_rescan)
		kp->ns_rescan(kp);
	for (p = kp->pipes; p; p = next) {
		struct stat st;
		int r;

		next = p->next;
		if (p->ns) {
			r = fstatat(p->ns->nfs_fd, p->name, &st, 0);
		} else {
			snprintf(path, sizeof(path), "%s/nfs/%s", kp->pipefs, p->name);
			r = stat(path, &st);
		}
		if (r < 0)
			kpaths_pipe_close(p);
		else
			pipe_try_open(p);
	}
}

static void inotify_read(struct evloop *loop, struct evio *io, int fd, uint32_t events,
			 void *userdata)
{
	struct kpaths *kp = userdata;
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	bool rescan = false;

	for (;;) {
		ssize_t len = read(fd, buf, sizeof(buf));

		if (len <= 0)
			break;
		for (char *ptr = buf; ptr < buf + len;) {
			const struct inotify_event *ev = (const struct inotify_event *)ptr;

			ptr += sizeof(*ev) + ev->len;
			if (ev->mask & IN_Q_OVERFLOW) {
				rescan = true;
			} else if (ev->wd == kp->nfs_wd && ev->len) {
				struct kpipe *p = kpaths_pipe_find(kp, NULL, ev->name);

				if (ev->mask & IN_CREATE)
					kpaths_pipe_add(kp, NULL, ev->name);
				else if ((ev->mask & IN_DELETE) && p)
					kpaths_pipe_close(p);
			} else if (kp->ns_event &&
				   kp->ns_event(kp, ev->wd, ev->mask, ev->len ? ev->name : NULL)) {
				continue;
			} else {
				for (struct kpipe *p = kp->pipes; p; p = p->next)
					if (p->dir_wd == ev->wd) {
						pipe_try_open(p);
						break;
					}
			}
		}
	}
	if (rescan)
		pipes_scan(kp);
}

static void pipe_read(struct evloop *loop, struct evio *io, int fd, uint32_t events,
		      void *userdata)
{
	struct kpipe *p = userdata;
	struct kpaths *kp = p->kp;
	unsigned char msg[IDMAP_MSG_SIZE + 1];
	struct pipe_request req;
	struct kquery *q;
	const char *why;
	char label[KNS_LABEL_MAX + NAME_MAX + 2];
	ssize_t len = read(fd, msg, sizeof(msg));
	uint32_t kind, host_id = 0;

	if (len < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (len <= 0) {
		/* the client is going away (EPIPE once its pipe is torn down) */
		kp->log(LOG_INFO, "NFS client pipe %s closed (%s)", pipe_label(p, label, sizeof(label)),
			len < 0 ? strerror(errno) : "end of file");
		kpaths_pipe_close(p);
		return;
	}
	if (pipe_parse_request(msg, (size_t)len, &req, &why) < 0) {
		struct idmap_msg im;

		kp->st[KPATH_PIPE].requests++;
		kp->st[KPATH_PIPE].malformed++;
		kp->log(LOG_WARNING, "%s%s%s/idmap: malformed message (%s, %zd bytes)",
			p->ns ? "" : kp->pipefs, p->ns ? "" : "/nfs/",
			pipe_label(p, label, sizeof(label)), why, len);
		/* the kernel waits for an answer to whatever it sent: fail it at once */
		if (len == IDMAP_MSG_SIZE) {
			memcpy(&im, msg, sizeof(im));
			im.im_status = IDMAP_STATUS_INVALIDMSG;
			if (write(fd, &im, sizeof(im)) < 0)
				kp->st[KPATH_PIPE].write_errors++;
		}
		return;
	}
	/* an id as the mount's user namespace sees it; one outside its map is nobody's */
	if (!req.name_to_id && !(p->ns ? kns_to_host(p->ns, req.group, req.id, &host_id) :
					 (host_id = req.id, true)))
		q = NULL;
	else
		q = kpaths_query_new(kp, KPATH_PIPE);
	if (!q) {
		struct idmap_msg im;

		if (pipe_format_reply(&req, false, NULL, 0, &im) == 0 &&
		    write(fd, &im, sizeof(im)) < 0)
			kp->st[KPATH_PIPE].write_errors++;
		return;
	}
	q->pipe = p;
	p->refs++;
	q->req.pipe = req;
	if (req.name_to_id) {
		kind = req.group ? NFSKEYS_IDMAP_GROUP_TO_GID : NFSKEYS_IDMAP_NAME_TO_UID;
		kp->lookup(kp->userdata, q, kind, req.name, true);
	} else {
		char key[16];

		snprintf(key, sizeof(key), "%" PRIu32, host_id);
		kind = req.group ? NFSKEYS_IDMAP_GID_TO_GROUP : NFSKEYS_IDMAP_UID_TO_NAME;
		kp->lookup(kp->userdata, q, kind, key, false);
	}
}

void kpaths_pipe_answer(struct kquery *q, int status, const struct nfskeys_idmap_answer *ans)
{
	struct kpaths *kp = q->kp;
	struct kpipe *p = q->pipe;
	const struct pipe_request *req = &q->req.pipe;
	/* name -> id: the nobody id for a name nobody knows, as rpc.idmapd does; id -> name:
	 * a failure, so the kernel sends the number instead of a made-up name */
	bool ok = status == 0 && ans &&
		  (req->name_to_id || !(ans->flags & NFSKEYS_IDMAP_ANSWER_NOBODY));
	struct idmap_msg im;
	char label[KNS_LABEL_MAX + NAME_MAX + 2];
	uint32_t id = ok ? ans->id : 0;

	/* the id as the mount's user namespace sees it (the kernel maps it back through it) */
	if (ok && req->name_to_id && p->ns)
		id = kns_from_host(p->ns, req->group, id);
	if (pipe_format_reply(req, ok, ok ? ans->name : NULL, id, &im) < 0) {
		ok = false;
		(void)pipe_format_reply(req, false, NULL, 0, &im);
	}
	kp->st[KPATH_PIPE].positive += ok;
	kp->st[KPATH_PIPE].negative += !ok;
	if (p->fd >= 0 && write(p->fd, &im, sizeof(im)) != sizeof(im)) {
		kp->st[KPATH_PIPE].write_errors++;
		kp->log(LOG_WARNING, "NFS client pipe %s: cannot write the answer: %m",
			pipe_label(p, label, sizeof(label)));
	}
	pipe_unref(p);
}

/* The rpc_pipefs mount: configured (taken as it is, if it has nfs/), else the first of
 * nfs.conf's [general] pipefs-directory, Debian's /run/rpc_pipefs and nfs-utils'
 * /var/lib/nfs/rpc_pipefs that is an rpc_pipefs. */
struct nfsconf_find {
	char dir[KPATH_DIR_MAX];
};

static int nfsconf_value(void *userdata, const char *file, unsigned line, const char *section,
			 const char *key, const char *value)
{
	struct nfsconf_find *f = userdata;

	if (section && !strcasecmp(section, "general") && !strcasecmp(key, "pipefs-directory"))
		snprintf(f->dir, sizeof(f->dir), "%s", value);
	return 0;
}

static bool is_pipefs(const char *dir)
{
	struct statfs sf;

	return statfs(dir, &sf) == 0 && (unsigned long)sf.f_type == RPC_PIPEFS_MAGIC;
}

static int pipefs_find(struct kpaths *kp)
{
	struct nfsconf_find f = { "" };
	char err[256];
	const char *cands[4];
	size_t n = 0;

	if (kp->cfg.pipefs_dir[0]) {
		cands[n++] = kp->cfg.pipefs_dir;
	} else {
		(void)ini_parse_file(kp->cfg.nfs_conf, NULL, nfsconf_value, &f, err, sizeof(err));
		if (f.dir[0])
			cands[n++] = f.dir;
		cands[n++] = "/run/rpc_pipefs";
		cands[n++] = "/var/lib/nfs/rpc_pipefs";
	}
	if (kp->cfg.pipefs_dir[0]) {
		struct stat st;
		char nfs[KPATH_DIR_MAX + 8];

		snprintf(nfs, sizeof(nfs), "%s/nfs", cands[0]);
		snprintf(kp->pipefs, sizeof(kp->pipefs), "%s", cands[0]);
		return stat(nfs, &st) == 0 && S_ISDIR(st.st_mode) ? 0 : -ENOENT;
	}
	for (size_t i = 0; i < n; i++)
		if (is_pipefs(cands[i])) {
			snprintf(kp->pipefs, sizeof(kp->pipefs), "%s", cands[i]);
			return 0;
		}
	snprintf(kp->pipefs, sizeof(kp->pipefs), "%s", cands[0]);
	return -ENOENT;
}

int kpaths_pipes_start(struct kpaths *kp, char *err, size_t errlen)
{
	char path[KPATH_DIR_MAX + 8];
	int r;

	if (pipefs_find(kp) < 0) {
		snprintf(err, errlen, "no rpc_pipefs mounted at %s%s", kp->pipefs,
			 kp->cfg.pipefs_dir[0] ? "" : " (nor at the other usual places)");
		return -ENOENT;
	}
	kp->ino_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (kp->ino_fd < 0) {
		r = -errno;
		snprintf(err, errlen, "inotify: %s", strerror(errno));
		return r;
	}
	snprintf(path, sizeof(path), "%s/nfs", kp->pipefs);
	kp->nfs_wd = inotify_add_watch(kp->ino_fd, path, IN_CREATE | IN_DELETE | IN_ONLYDIR);
	if (kp->nfs_wd < 0) {
		r = -errno;
		snprintf(err, errlen, "cannot watch %s: %s%s", path, strerror(errno),
			 errno == ENOENT ? " (sunrpc loaded but no nfs directory: is the nfs "
					   "module loaded?)" : "");
		return r;
	}
	r = evloop_add_io(kp->loop, kp->ino_fd, EPOLLIN, inotify_read, kp, &kp->ino_io);
	if (r < 0) {
		snprintf(err, errlen, "cannot watch inotify: %s", strerror(-r));
		return r;
	}
	pipes_scan(kp);
	return 0;
}

void kpaths_set_client_timeout(struct kpaths *kp)
{
	char buf[32];
	int fd, n;

	if (!kp->serve_pipes || !kp->cfg.client_cache_timeout)
		return;
	n = snprintf(buf, sizeof(buf), "%u\n", kp->cfg.client_cache_timeout);
	fd = open(kp->cfg.sysctl_path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, buf, (size_t)n) != n)
		kp->log(LOG_WARNING, "cannot set %s to %u: %m", kp->cfg.sysctl_path,
			kp->cfg.client_cache_timeout);
	if (fd >= 0)
		close(fd);
}
