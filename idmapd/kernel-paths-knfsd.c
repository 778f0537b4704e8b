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
	char name[32];
	int r;

	c->kp = kp;
	c->which = which;
	snprintf(c->path, sizeof(c->path), "%s/%s/channel", kp->cfg.channel_dir,
		 which == KNFSD_IDTONAME ? "nfs4.idtoname" : "nfs4.nametoid");
	kpaths_store_name(name, sizeof(name), which == KNFSD_IDTONAME ? "knfsd-idtoname" :
									   "knfsd-nametoid", 0, NULL);
	/* the last run's: requests knfsd queued meanwhile are waiting in it */
	c->fd = kpaths_adopt(kp, name, AT_FDCWD, c->path);
	if (c->fd < 0 && (c->fd = open(c->path, O_RDWR | O_NONBLOCK | O_CLOEXEC)) >= 0)
		kpaths_store(kp, c->fd, name);
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

/* Odd requests are a client's doing (any owner string an NFS client sends reaches us):
 * one warning a minute per channel, with the count of those not logged, so that a client
 * cannot fill the log. */
#define ODD_WARN_INTERVAL_USEC (60 * USEC_PER_SEC)

static void channel_warn_odd(struct kchannel *c, bool answered, const char *why, const char *line)
{
	struct kpaths *kp = c->kp;
	int64_t now = mono_usec();
	char safe[KNFSD_LINE_MAX], more[64] = "";

	if (c->warned_usec && now - c->warned_usec < ODD_WARN_INTERVAL_USEC) {
		c->unwarned++;
		return;
	}
	if (c->unwarned)
		snprintf(more, sizeof(more), " (and %" PRIu64 " more since the last warning)",
			 c->unwarned);
	kp->log(LOG_WARNING, "%s: %s (%s): %s%s", c->path,
		answered ? "refused request, answered negative" : "malformed request, no answer",
		why, logsafe(line, safe, sizeof(safe)), more);
	c->warned_usec = now;
	c->unwarned = 0;
}

static void channel_write(struct kchannel *c, enum kpath_src src, const char *line, int len);

/* A whole request the daemon will not look up: the negative entry at once, with its fields
 * echoed as the kernel keyed it, so the nfsd thread waiting on it (and the client's
 * retries) end now instead of waiting for an answer that never comes. */
static void channel_refuse(struct kchannel *c, enum kpath_src src, const struct knfsd_request *req)
{
	struct kpaths *kp = c->kp;
	char line[KNFSD_LINE_MAX];
	int len;

	len = knfsd_format_reply(req, (int64_t)time(NULL) + kp->cfg.negative_ttl, true, NULL, 0,
				 line, sizeof(line));
	if (len < 0) {
		kp->st[src].write_errors++;
		return;
	}
	kp->st[src].negative++;
	channel_write(c, src, line, len);
}

static void channel_read(struct evloop *loop, struct evio *io, int fd, uint32_t events,
			 void *userdata)
{
	struct kchannel *c = userdata;
	struct kpaths *kp = c->kp;
	enum kpath_src src = c->which == KNFSD_IDTONAME ? KPATH_NFSD_IDTONAME : KPATH_NFSD_NAMETOID;

	/* a few requests per wake-up, so one busy channel cannot starve the socket callers */
	for (int n = 0; n < 32 && c->inflight < CHANNEL_INFLIGHT_MAX; n++) {
		char line[8192];
		struct knfsd_request req;
		struct kquery *q;
		const char *why;
		char key[16];
		ssize_t len = read(fd, line, sizeof(line) - 1);
		int r;

		if (len < 0) {
			if (errno != EAGAIN && errno != EINTR)
				kp->log(LOG_WARNING, "%s: read: %m", c->path);
			break;
		}
		if (len == 0)
			break;
		line[len] = '\0';
		r = knfsd_parse_request(c->which, line, (size_t)len, &req, &why);
		if (r != 0) {
			kp->st[src].requests++;
			kp->st[src].malformed++;
			channel_warn_odd(c, r == KNFSD_REQUEST_REFUSED, why, line);
			if (r == KNFSD_REQUEST_REFUSED)
				channel_refuse(c, src, &req);
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

static void channel_write(struct kchannel *c, enum kpath_src src, const char *line, int len)
{
	struct kpaths *kp = c->kp;

	if (len > 0 && c->fd >= 0 && write(c->fd, line, (size_t)len) != len) {
		kp->st[src].write_errors++;
		kp->log(LOG_WARNING, "%s: cannot write the answer: %m", c->path);
	}
}

/* ---------------------------------------------------------------- Prime-Reverse */

/* How long a nametoid reply waits for its id's name: a fraction of nfsd's own wait (1 s
 * when its pool is busy), so a slow reverse lookup never turns into NFS4ERR_DELAY. */
#define PRIME_HOLD_MS 100

/* Send the held nametoid reply now (after the idtoname entry, when that came in time). */
static void held_release(struct kheld *h)
{
	struct kpaths *kp = h->kp;

	channel_write(h->chan, KPATH_NFSD_NAMETOID, h->line, h->len);
	h->chan->inflight--;
	channel_throttle(h->chan);
	if (h->prime)
		h->prime->held = NULL;
	*h->pprev = h->next;
	if (h->next)
		h->next->pprev = h->pprev;
	evloop_timer_free(h->timer);
	free(h);
	if (--kp->refs == 0)
		free(kp);
}

static void held_expired(struct evloop *loop, struct evtimer *t, void *userdata)
{
	held_release(userdata);
}

void kpaths_held_release_all(struct kpaths *kp)
{
	while (kp->held)
		held_release(kp->held);
}

/* After a positive nametoid answer (name -> id) and before it is sent, fetch the id's name
 * for knfsd's idtoname cache.  True when the reply (line) is now held by the prime. */
static bool prime_start(struct kquery *q, uint32_t id, const char *line, int len)
{
	struct kpaths *kp = q->kp;
	const struct knfsd_request *req = &q->req.nfsd;
	struct kchannel *rc = &kp->chan[KNFSD_IDTONAME];
	struct kheld *h;
	struct kquery *p;
	char key[16];

	if (!kp->cfg.prime_reverse || q->prime || q->chan->which != KNFSD_NAMETOID ||
	    rc->fd < 0 || len <= 0 || (size_t)len > sizeof(h->line))
		return false;
	h = calloc(1, sizeof(*h));
	p = calloc(1, sizeof(*p));
	if (!h || !p ||
	    evloop_add_timer(kp->loop, evloop_now(kp->loop) + PRIME_HOLD_MS * USEC_PER_MSEC,
			     held_expired, h, &h->timer) < 0) {
		free(h);
		free(p);
		return false; /* the reply goes now, unprimed */
	}
	h->kp = kp;
	h->chan = q->chan;
	h->prime = p;
	h->len = len;
	memcpy(h->line, line, (size_t)len);
	h->next = kp->held;
	if (h->next)
		h->next->pprev = &h->next;
	h->pprev = &kp->held;
	kp->held = h;
	p->kp = kp;
	p->src = KPATH_NFSD_IDTONAME;
	p->prime = true;
	p->held = h;
	p->chan = rc;
	p->req.nfsd.channel = KNFSD_IDTONAME;
	p->req.nfsd.group = req->group;
	p->req.nfsd.id = id;
	memcpy(p->req.nfsd.authname, req->authname, sizeof(req->authname));
	p->start_ns = mono_nsec();
	kp->refs += 2; /* h's and p's */
	snprintf(key, sizeof(key), "%" PRIu32, id);
	/* may answer at once (a cached name): then h is released before this returns */
	kp->lookup(kp->userdata, p, req->group ? NFSKEYS_IDMAP_GID_TO_GROUP : NFSKEYS_IDMAP_UID_TO_NAME,
		   key, false);
	return true;
}

/* The reverse lookup's answer: a positive one becomes knfsd's idtoname entry (written
 * unasked: the channel takes any well-formed line, as mountd primes its caches), then the
 * held nametoid reply goes. */
static void prime_answered(struct kquery *p, int status, const struct nfskeys_idmap_answer *ans,
			   unsigned ttl)
{
	struct kpaths *kp = p->kp;
	char line[KNFSD_LINE_MAX];
	int len;

	if (status == 0 && ans && !(ans->flags & NFSKEYS_IDMAP_ANSWER_NOBODY)) {
		len = knfsd_format_reply(&p->req.nfsd, (int64_t)time(NULL) + (ttl ? ttl : 1), false,
					 ans->name, 0, line, sizeof(line));
		if (len > 0 && p->chan->fd >= 0) {
			channel_write(p->chan, KPATH_NFSD_IDTONAME, line, len);
			kp->st[KPATH_NFSD_IDTONAME].primed++;
		}
	}
	if (p->held) {
		p->held->prime = NULL;
		held_release(p->held);
	}
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
	unsigned life;
	int len;

	if (q->prime) {
		prime_answered(q, status, ans, ttl);
		return;
	}
	/* nfsd: a negative nametoid is NFS4ERR_BADOWNER, a negative idtoname sends the
	 * number; never a made-up owner (doc/KERNEL-INTERFACES.md §2).  "No such owner" is
	 * kept for Negative-TTL; a lookup that failed (directory down or slow, queue full)
	 * only as long as the daemon keeps the failure, so that nfsd asks again when the
	 * daemon retries instead of refusing the owner for a whole Negative-TTL. */
	if (positive)
		life = ttl ? ttl : 1;
	else if (kquery_status_definitive(status))
		life = kp->cfg.negative_ttl;
	else
		life = MIN(ttl ? ttl : 1, kp->cfg.negative_ttl);
	expiry = (int64_t)time(NULL) + life;
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
	if (positive && prime_start(q, ans->id, line, len))
		return; /* sent by the prime (or its timer) */
	channel_write(c, q->src, line, len);
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
