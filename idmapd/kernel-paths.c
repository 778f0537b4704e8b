/* knfsd's idmap cache channels and the NFS client's rpc_pipefs idmap pipes, served from
 * nfskeys-idmapd's event loop.  Reads never block (O_NONBLOCK, one request per read),
 * every request is parsed by kernel-proto.c before anything else sees it, and the answer
 * goes back in one write().  Formats and kernel behaviour: KERNEL-INTERFACES.md §1-2. */
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
#include "kernel-paths.h"
#include "kernel-proto.h"
#include "macros.h"
#include "time-util.h"

#define RPC_PIPEFS_MAGIC 0x67596969
/* Requests of one knfsd channel waiting for the engine; past this the channel is not read
 * until answers drain (the kernel keeps the rest queued). */
#define CHANNEL_INFLIGHT_MAX 1024
#define PIPES_MAX 4096

struct kchannel {
	struct kpaths *kp;
	enum knfsd_channel which;
	int fd;
	struct evio *io;
	unsigned inflight;
	char path[KPATH_DIR_MAX + 32];
};

/* One clnt*\/idmap pipe; queries hold a reference so a pipe closed under them is not
 * freed before they are answered (into nothing). */
struct kpipe {
	struct kpaths *kp;
	int fd;
	unsigned refs;
	int dir_wd;        /* inotify watch on clntXX/ while idmap is not there yet */
	struct evio *io;
	char name[NAME_MAX + 1]; /* clntXX */
	struct kpipe *next;
};

struct kquery {
	struct kpaths *kp;
	enum kpath_src src;
	struct kchannel *chan;
	struct kpipe *pipe;
	union {
		struct knfsd_request nfsd;
		struct pipe_request pipe;
	} req;
	uint64_t start_ns;
};

struct kpaths {
	struct evloop *loop;
	struct kpaths_config cfg;
	kpaths_lookup_fn lookup;
	kpaths_log_fn log;
	void *userdata;
	struct kchannel chan[2];
	bool serve_channels;
	/* client pipes */
	bool serve_pipes;
	char pipefs[KPATH_DIR_MAX];
	int ino_fd;
	int nfs_wd;
	struct evio *ino_io;
	struct kpipe *pipes;
	unsigned n_pipes;
	struct kpath_stats st[_KPATH_SRC_MAX];
	unsigned refs; /* the owner's, and one per query out */
};

static const char *const src_names[_KPATH_SRC_MAX] = { "nfsd_idtoname", "nfsd_nametoid",
							"client_pipe" };

const char *kpath_src_name(enum kpath_src src)
{
	return src < _KPATH_SRC_MAX ? src_names[src] : "unknown";
}

/* ---------------------------------------------------------------- configuration */

void kpaths_config_default(struct kpaths_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->server_channels = KPATH_AUTO;
	cfg->client_pipe = KPATH_AUTO;
	snprintf(cfg->channel_dir, sizeof(cfg->channel_dir), "/proc/net/rpc");
	snprintf(cfg->nfs_conf, sizeof(cfg->nfs_conf), "/etc/nfs.conf");
	snprintf(cfg->sysctl_path, sizeof(cfg->sysctl_path), "/proc/sys/fs/nfs/idmap_cache_timeout");
	cfg->negative_ttl = 60;
	cfg->check_rpc_idmapd = true;
}

static int mode_parse(const char *v, enum kpath_mode *ret)
{
	if (!strcasecmp(v, "auto"))
		*ret = KPATH_AUTO;
	else if (!strcasecmp(v, "yes") || !strcasecmp(v, "true") || !strcasecmp(v, "on") ||
		 !strcmp(v, "1"))
		*ret = KPATH_YES;
	else if (!strcasecmp(v, "no") || !strcasecmp(v, "false") || !strcasecmp(v, "off") ||
		 !strcmp(v, "0"))
		*ret = KPATH_NO;
	else
		return -EINVAL;
	return 0;
}

static int path_setting(struct nfskeys_ctx *ctx, const char *key, char *dst, size_t size,
			char *err, size_t errlen)
{
	const char *v = nfskeys_conf_get(ctx, "Kernel", key);

	if (!v)
		return 0;
	if (v[0] != '/' || strlen(v) >= size) {
		snprintf(err, errlen, "[Kernel] %s = %s: expected an absolute path", key, v);
		return -EINVAL;
	}
	snprintf(dst, size, "%s", v);
	return 0;
}

int kpaths_config_load(struct nfskeys_ctx *ctx, struct kpaths_config *cfg, char *err,
		       size_t errlen)
{
	static const struct {
		const char *key;
		size_t off;
	} modes[] = {
		{ "Server-Channels", offsetof(struct kpaths_config, server_channels) },
		{ "Client-Pipe", offsetof(struct kpaths_config, client_pipe) },
	};
	struct kpaths_config c;
	int64_t v;
	int r;

	kpaths_config_default(&c);
	for (size_t i = 0; i < ARRAY_SIZE(modes); i++) {
		const char *s = nfskeys_conf_get(ctx, "Kernel", modes[i].key);

		if (s && mode_parse(s, (enum kpath_mode *)((char *)&c + modes[i].off)) < 0) {
			snprintf(err, errlen, "[Kernel] %s = %s: expected yes, no or auto",
				 modes[i].key, s);
			return -EINVAL;
		}
	}
	if ((r = path_setting(ctx, "Channel-Dir", c.channel_dir, sizeof(c.channel_dir), err,
			      errlen)) < 0 ||
	    (r = path_setting(ctx, "Pipefs-Directory", c.pipefs_dir, sizeof(c.pipefs_dir), err,
			      errlen)) < 0)
		return r;
	/* durations: bounds and defaults from the schema (libnfskeys/conf-schema.c) */
	if ((r = conf_get_typed(ctx, "Kernel", "Negative-TTL", &v, err, errlen)) < 0)
		return -EINVAL;
	c.negative_ttl = (unsigned)v;
	if ((r = conf_get_typed(ctx, "Kernel", "Client-Cache-Timeout", &v, err, errlen)) < 0)
		return -EINVAL;
	c.client_cache_timeout = (unsigned)v;
	*cfg = c;
	return 0;
}

/* ---------------------------------------------------------------- helpers */

/* What rpc.idmapd's command line says it serves: -S only knfsd's channels, -C only the
 * client's pipes, both without either (rpc.idmapd(8)); -p and -c take an argument. */
static void rpc_idmapd_serves(const char *cmdline, size_t len, bool *server, bool *client)
{
	bool only_server = false, only_client = false;

	/* argv[0], then the arguments, NUL-separated */
	for (size_t i = strnlen(cmdline, len) + 1; i < len; i += strnlen(cmdline + i, len - i) + 1) {
		const char *a = cmdline + i;

		if (a[0] != '-' || a[1] == '-')
			continue;
		for (const char *o = a + 1; *o; o++) {
			if (*o == 'S')
				only_server = true;
			else if (*o == 'C')
				only_client = true;
			else if (*o == 'p' || *o == 'c')
				break; /* the rest is the option's argument */
		}
	}
	*server = !only_client;
	*client = !only_server;
}

/* The pid of a running rpc.idmapd that serves knfsd's channels (SERVER) or the client's
 * pipes (!SERVER), or 0. */
static pid_t find_rpc_idmapd(bool server)
{
	DIR *dir = opendir("/proc");
	struct dirent *de;
	pid_t found = 0;

	if (!dir)
		return 0;
	while (!found && (de = readdir(dir))) {
		char path[NAME_MAX + 16], comm[32] = "", cmdline[4096];
		bool srv, cli;
		size_t n;
		FILE *f;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", de->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		if (!fgets(comm, sizeof(comm), f) || strcmp(comm, "rpc.idmapd\n") != 0) {
			fclose(f);
			continue;
		}
		fclose(f);
		snprintf(path, sizeof(path), "/proc/%s/cmdline", de->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		n = fread(cmdline, 1, sizeof(cmdline) - 1, f);
		fclose(f);
		cmdline[n] = '\0';
		rpc_idmapd_serves(cmdline, n, &srv, &cli);
		if (server ? srv : cli)
			found = (pid_t)atoi(de->d_name);
	}
	closedir(dir);
	return found;
}

/* Escape a kernel-supplied string for a log line. */
static const char *logsafe(const char *s, char *buf, size_t size)
{
	if (knfsd_escape_field(s, buf, size) < 0)
		snprintf(buf, size, "(too long)");
	return buf;
}

/* ---------------------------------------------------------------- knfsd channels */

static void channel_read(struct evloop *loop, struct evio *io, int fd, uint32_t events,
			 void *userdata);

static int channel_open(struct kpaths *kp, enum knfsd_channel which, char *err, size_t errlen)
{
	struct kchannel *c = &kp->chan[which];
	int r;

	c->kp = kp;
	c->which = which;
	snprintf(c->path, sizeof(c->path), "%s/%s/channel", kp->cfg.channel_dir,
		 which == KNFSD_IDTONAME ? "nfs4.idtoname" : "nfs4.nametoid");
	c->fd = open(c->path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (c->fd < 0) {
		r = -errno;
		snprintf(err, errlen, "cannot open %s: %s%s", c->path, strerror(errno),
			 errno == ENOENT ? " (nfsd not loaded, or /proc/fs/nfsd not mounted?)" : "");
		return r;
	}
	r = evloop_add_io(kp->loop, c->fd, EPOLLIN, channel_read, c, &c->io);
	if (r < 0) {
		snprintf(err, errlen, "cannot watch %s: %s", c->path, strerror(-r));
		close(c->fd);
		c->fd = -1;
	}
	return r;
}

static void channel_close(struct kchannel *c)
{
	evloop_io_free(c->io);
	c->io = NULL;
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

static void channel_throttle(struct kchannel *c)
{
	if (c->io)
		(void)evloop_io_set_events(c->io, c->inflight < CHANNEL_INFLIGHT_MAX ? EPOLLIN : 0);
}

static struct kquery *query_new(struct kpaths *kp, enum kpath_src src)
{
	struct kquery *q = calloc(1, sizeof(*q));

	if (!q)
		return NULL;
	q->kp = kp;
	q->src = src;
	q->start_ns = mono_nsec();
	kp->st[src].requests++;
	kp->refs++;
	return q;
}

static void channel_read(struct evloop *loop, struct evio *io, int fd, uint32_t events,
			 void *userdata)
{
	struct kchannel *c = userdata;
	struct kpaths *kp = c->kp;
	enum kpath_src src = c->which == KNFSD_IDTONAME ? KPATH_NFSD_IDTONAME : KPATH_NFSD_NAMETOID;

	/* a few requests per wake-up, so one busy channel cannot starve the socket callers */
	for (int n = 0; n < 32 && c->inflight < CHANNEL_INFLIGHT_MAX; n++) {
		char line[8192], safe[KNFSD_LINE_MAX];
		struct knfsd_request req;
		struct kquery *q;
		const char *why;
		char key[16];
		ssize_t len = read(fd, line, sizeof(line) - 1);

		if (len < 0) {
			if (errno != EAGAIN && errno != EINTR)
				kp->log(LOG_WARNING, "%s: read: %m", c->path);
			break;
		}
		if (len == 0)
			break;
		line[len] = '\0';
		if (knfsd_parse_request(c->which, line, (size_t)len, &req, &why) < 0) {
			kp->st[src].requests++;
			kp->st[src].malformed++;
			kp->log(LOG_WARNING, "%s: malformed request (%s): %s", c->path, why,
				logsafe(line, safe, sizeof(safe)));
			continue;
		}
		q = query_new(kp, src);
		if (!q) {
			kp->log(LOG_ERR, "%s: out of memory", c->path);
			break;
		}
		q->chan = c;
		q->req.nfsd = req;
		c->inflight++;
		if (c->which == KNFSD_IDTONAME) {
			snprintf(key, sizeof(key), "%" PRIu32, req.id);
			kp->lookup(kp->userdata, q,
				   req.group ? NFSKEYS_IDMAP_GID_TO_GROUP : NFSKEYS_IDMAP_UID_TO_NAME,
				   key, false);
		} else {
			kp->lookup(kp->userdata, q,
				   req.group ? NFSKEYS_IDMAP_GROUP_TO_GID : NFSKEYS_IDMAP_NAME_TO_UID,
				   req.name, false);
		}
	}
	channel_throttle(c);
}

static void channel_answer(struct kquery *q, int status, const struct nfskeys_idmap_answer *ans,
			   unsigned ttl)
{
	struct kpaths *kp = q->kp;
	struct kchannel *c = q->chan;
	const struct knfsd_request *req = &q->req.nfsd;
	bool positive = status == 0 && ans && !(ans->flags & NFSKEYS_IDMAP_ANSWER_NOBODY);
	char line[KNFSD_LINE_MAX], safe[KNFSD_LINE_MAX];
	int64_t expiry;
	int len;

	/* nfsd: a negative nametoid is NFS4ERR_BADOWNER, a negative idtoname sends the
	 * number; never a made-up owner (KERNEL-INTERFACES.md §2) */
	expiry = (int64_t)time(NULL) + (positive ? (ttl ? ttl : 1) : kp->cfg.negative_ttl);
	len = knfsd_format_reply(req, expiry, !positive, positive ? ans->name : NULL,
				 positive ? ans->id : 0, line, sizeof(line));
	if (len < 0 && positive) {
		kp->log(LOG_WARNING, "%s: answer %s cannot be sent to nfsd (%s): negative entry",
			c->path, logsafe(ans->name, safe, sizeof(safe)), strerror(-len));
		positive = false;
		len = knfsd_format_reply(req, expiry, true, NULL, 0, line, sizeof(line));
	}
	kp->st[q->src].positive += positive;
	kp->st[q->src].negative += !positive;
	if (len > 0 && c->fd >= 0 && write(c->fd, line, (size_t)len) != len) {
		kp->st[q->src].write_errors++;
		kp->log(LOG_WARNING, "%s: cannot write the answer: %m", c->path);
	}
	c->inflight--;
	channel_throttle(c);
}

int kpaths_flush_server(struct kpaths *kp)
{
	int ret = 0;

	if (!kp || !kp->serve_channels)
		return 0;
	for (int i = 0; i < 2; i++) {
		char path[PATH_MAX], now[32];
		int fd, n;

		snprintf(path, sizeof(path), "%s/%s/flush", kp->cfg.channel_dir,
			 i == KNFSD_IDTONAME ? "nfs4.idtoname" : "nfs4.nametoid");
		n = snprintf(now, sizeof(now), "%lld\n", (long long)time(NULL));
		fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd < 0 || write(fd, now, (size_t)n) != n) {
			ret = -errno;
			kp->log(LOG_WARNING, "cannot flush %s: %m", path);
		}
		if (fd >= 0)
			close(fd);
	}
	return ret;
}

/* ---------------------------------------------------------------- client pipes */

static void pipe_read(struct evloop *loop, struct evio *io, int fd, uint32_t events,
		      void *userdata);

static void pipe_unref(struct kpipe *p)
{
	if (p && --p->refs == 0)
		free(p);
}

/* Stop serving p (its client went away); queries out keep it until answered. */
static void pipe_close(struct kpipe *p)
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
	if (p->fd >= 0)
		close(p->fd);
	p->fd = -1;
	pipe_unref(p);
}

static struct kpipe *pipe_find(struct kpaths *kp, const char *name)
{
	for (struct kpipe *p = kp->pipes; p; p = p->next)
		if (!strcmp(p->name, name))
			return p;
	return NULL;
}

/* Open clntXX/idmap, or watch clntXX/ until it appears (the kernel makes the directory
 * before the pipe). */
static void pipe_try_open(struct kpipe *p)
{
	struct kpaths *kp = p->kp;
	char path[PATH_MAX];
	int r;

	if (p->fd >= 0)
		return;
	snprintf(path, sizeof(path), "%s/nfs/%s/idmap", kp->pipefs, p->name);
	p->fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (p->fd < 0) {
		if (errno == ENOENT && p->dir_wd < 0) {
			snprintf(path, sizeof(path), "%s/nfs/%s", kp->pipefs, p->name);
			p->dir_wd = inotify_add_watch(kp->ino_fd, path, IN_CREATE | IN_ONLYDIR);
		} else if (errno != ENOENT) {
			kp->log(LOG_WARNING, "cannot open %s: %m", path);
		}
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
	kp->log(LOG_INFO, "serving NFS client idmap pipe %s", path);
}

static void pipe_add(struct kpaths *kp, const char *name)
{
	struct kpipe *p;

	if (strncmp(name, "clnt", 4) || strlen(name) > NAME_MAX || pipe_find(kp, name))
		return;
	if (kp->n_pipes >= PIPES_MAX) {
		kp->log(LOG_WARNING, "more than %d NFS clients: %s not served", PIPES_MAX, name);
		return;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return;
	p->kp = kp;
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
		pipe_add(kp, de->d_name);
	closedir(dir);
	for (p = kp->pipes; p; p = next) {
		struct stat st;

		next = p->next;
		snprintf(path, sizeof(path), "%s/nfs/%s", kp->pipefs, p->name);
		if (stat(path, &st) < 0)
			pipe_close(p);
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
				struct kpipe *p = pipe_find(kp, ev->name);

				if (ev->mask & IN_CREATE)
					pipe_add(kp, ev->name);
				else if ((ev->mask & IN_DELETE) && p)
					pipe_close(p);
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
	ssize_t len = read(fd, msg, sizeof(msg));
	uint32_t kind;

	if (len < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (len <= 0) {
		/* the client is going away (EPIPE once its pipe is torn down) */
		kp->log(LOG_INFO, "NFS client pipe %s closed (%s)", p->name,
			len < 0 ? strerror(errno) : "end of file");
		pipe_close(p);
		return;
	}
	if (pipe_parse_request(msg, (size_t)len, &req, &why) < 0) {
		struct idmap_msg im;

		kp->st[KPATH_PIPE].requests++;
		kp->st[KPATH_PIPE].malformed++;
		kp->log(LOG_WARNING, "%s/nfs/%s/idmap: malformed message (%s, %zd bytes)", kp->pipefs,
			p->name, why, len);
		/* the kernel waits for an answer to whatever it sent: fail it at once */
		if (len == IDMAP_MSG_SIZE) {
			memcpy(&im, msg, sizeof(im));
			im.im_status = IDMAP_STATUS_INVALIDMSG;
			if (write(fd, &im, sizeof(im)) < 0)
				kp->st[KPATH_PIPE].write_errors++;
		}
		return;
	}
	q = query_new(kp, KPATH_PIPE);
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

		snprintf(key, sizeof(key), "%" PRIu32, req.id);
		kind = req.group ? NFSKEYS_IDMAP_GID_TO_GROUP : NFSKEYS_IDMAP_UID_TO_NAME;
		kp->lookup(kp->userdata, q, kind, key, false);
	}
}

static void pipe_answer(struct kquery *q, int status, const struct nfskeys_idmap_answer *ans)
{
	struct kpaths *kp = q->kp;
	struct kpipe *p = q->pipe;
	const struct pipe_request *req = &q->req.pipe;
	/* name -> id: the nobody id for a name nobody knows, as rpc.idmapd does; id -> name:
	 * a failure, so the kernel sends the number instead of a made-up name */
	bool ok = status == 0 && ans &&
		  (req->name_to_id || !(ans->flags & NFSKEYS_IDMAP_ANSWER_NOBODY));
	struct idmap_msg im;

	if (pipe_format_reply(req, ok, ok ? ans->name : NULL, ok ? ans->id : 0, &im) < 0) {
		ok = false;
		(void)pipe_format_reply(req, false, NULL, 0, &im);
	}
	kp->st[KPATH_PIPE].positive += ok;
	kp->st[KPATH_PIPE].negative += !ok;
	if (p->fd >= 0 && write(p->fd, &im, sizeof(im)) != sizeof(im)) {
		kp->st[KPATH_PIPE].write_errors++;
		kp->log(LOG_WARNING, "NFS client pipe %s: cannot write the answer: %m", p->name);
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

static int pipes_start(struct kpaths *kp, char *err, size_t errlen)
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

static void set_client_timeout(struct kpaths *kp)
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

/* ---------------------------------------------------------------- the whole */

int kpaths_new(struct evloop *loop, const struct kpaths_config *cfg, kpaths_lookup_fn lookup,
	       kpaths_log_fn log, void *userdata, struct kpaths **ret, char *err, size_t errlen)
{
	struct kpaths *kp = calloc(1, sizeof(*kp));
	pid_t other = 0;
	char why[KPATH_DIR_MAX * 3];
	int r = 0;

	if (!kp)
		return -ENOMEM;
	kp->refs = 1;
	kp->loop = loop;
	kp->cfg = *cfg;
	kp->lookup = lookup;
	kp->log = log;
	kp->userdata = userdata;
	kp->chan[0].fd = kp->chan[1].fd = -1;
	kp->ino_fd = kp->nfs_wd = -1;
	if (cfg->server_channels != KPATH_NO) {
		why[0] = '\0';
		other = cfg->check_rpc_idmapd ? find_rpc_idmapd(true) : 0;
		if (other) {
			snprintf(why, sizeof(why), "rpc.idmapd (pid %d) already serves knfsd's idmap "
				 "channels: stop it (systemctl stop nfs-idmapd) or set "
				 "[Kernel] Server-Channels = no", (int)other);
			r = -EBUSY;
		} else if ((r = channel_open(kp, KNFSD_IDTONAME, why, sizeof(why))) == 0 &&
			   (r = channel_open(kp, KNFSD_NAMETOID, why, sizeof(why))) == 0) {
			kp->serve_channels = true;
		}
		if (!kp->serve_channels) {
			channel_close(&kp->chan[0]);
			channel_close(&kp->chan[1]);
			if (cfg->server_channels == KPATH_YES) {
				snprintf(err, errlen, "[Kernel] Server-Channels = yes: %s", why);
				goto fail;
			}
			log(r == -ENOENT ? LOG_DEBUG : LOG_WARNING,
			    "not serving knfsd's idmap channels: %s", why);
			r = 0;
		}
	}
	if (cfg->client_pipe != KPATH_NO) {
		why[0] = '\0';
		other = cfg->check_rpc_idmapd ? find_rpc_idmapd(false) : 0;
		if (other) {
			snprintf(why, sizeof(why), "rpc.idmapd (pid %d) already serves the NFS client's "
				 "idmap pipes: stop it (systemctl stop nfs-idmapd) or set "
				 "[Kernel] Client-Pipe = no", (int)other);
			r = -EBUSY;
		} else {
			r = pipes_start(kp, why, sizeof(why));
		}
		if (r == 0) {
			kp->serve_pipes = true;
			set_client_timeout(kp);
		} else {
			evloop_io_free(kp->ino_io);
			kp->ino_io = NULL;
			if (kp->ino_fd >= 0)
				close(kp->ino_fd);
			kp->ino_fd = -1;
			if (cfg->client_pipe == KPATH_YES) {
				snprintf(err, errlen, "[Kernel] Client-Pipe = yes: %s", why);
				goto fail;
			}
			log(r == -ENOENT ? LOG_DEBUG : LOG_WARNING,
			    "not serving the NFS client's idmap pipes: %s", why);
			r = 0;
		}
	}
	if (kp->serve_channels)
		(void)kpaths_flush_server(kp);
	*ret = kp;
	return 0;
fail:
	kpaths_free(kp);
	return r < 0 ? r : -EINVAL;
}

void kpaths_free(struct kpaths *kp)
{
	if (!kp)
		return;
	channel_close(&kp->chan[0]);
	channel_close(&kp->chan[1]);
	while (kp->pipes)
		pipe_close(kp->pipes);
	evloop_io_free(kp->ino_io);
	if (kp->ino_fd >= 0)
		close(kp->ino_fd);
	kp->ino_fd = -1;
	kp->serve_channels = kp->serve_pipes = false;
	/* queries still out keep kp until they are answered (into nothing) */
	if (--kp->refs == 0)
		free(kp);
}

void kpaths_update(struct kpaths *kp, const struct kpaths_config *cfg)
{
	if (!kp)
		return;
	kp->cfg.negative_ttl = cfg->negative_ttl;
	kp->cfg.client_cache_timeout = cfg->client_cache_timeout;
	set_client_timeout(kp);
}

void kpaths_describe(const struct kpaths *kp, char *buf, size_t size)
{
	if (!kp || (!kp->serve_channels && !kp->serve_pipes)) {
		snprintf(buf, size, "no kernel paths");
		return;
	}
	snprintf(buf, size, "%s%s%s%s%s", kp->serve_channels ? "knfsd idmap channels in " : "",
		 kp->serve_channels ? kp->cfg.channel_dir : "",
		 kp->serve_channels && kp->serve_pipes ? ", " : "",
		 kp->serve_pipes ? "NFS client idmap pipes in " : "",
		 kp->serve_pipes ? kp->pipefs : "");
}

void kquery_answer(struct kquery *q, int status, const struct nfskeys_idmap_answer *ans,
		   unsigned ttl)
{
	struct kpaths *kp = q->kp;

	stats_hist_add(&kp->st[q->src].latency, mono_nsec() - q->start_ns);
	if (q->src == KPATH_PIPE)
		pipe_answer(q, status, ans);
	else
		channel_answer(q, status, ans, ttl);
	free(q);
	if (--kp->refs == 0)
		free(kp);
}

enum kpath_src kquery_source(const struct kquery *q)
{
	return q->src;
}

const struct kpath_stats *kpaths_stats(const struct kpaths *kp, enum kpath_src src)
{
	return kp && src < _KPATH_SRC_MAX ? &kp->st[src] : NULL;
}
