/* knfsd's idmap cache channels (nfs4.idtoname, nfs4.nametoid) served from
 * nfskeys-idmapd's loop: requests read without blocking, at most CHANNEL_INFLIGHT_MAX
 * out per channel, each answered in one write(); and the flush of knfsd's caches. */
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

#include "kernel-paths-private.h"
#include "macros.h"
#include "time-util.h"

/* Requests of one knfsd channel waiting for the engine; past this the channel is not read
 * until answers drain (the kernel keeps the rest queued). */
#define CHANNEL_INFLIGHT_MAX 1024

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

int kpaths_channel_open(struct kpaths *kp, enum knfsd_channel which, char *err, size_t errlen)
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

void kpaths_channel_close(struct kchannel *c)
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
		q = kpaths_query_new(kp, src);
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

void kpaths_channel_answer(struct kquery *q, int status, const struct nfskeys_idmap_answer *ans,
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
