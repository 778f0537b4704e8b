/* Writeback on kernel mounts, the sampler: /proc/self/mountstats' WRITE and COMMIT counters
 * parsed, turned into completions for the mount's throttler device and into an adaptive
 * per-mount limit (the nfskeys and halve controllers).  The bdi knobs are in wb-kernel.c. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libnfskeys-private.h"
#include "wb-kernel.h"
#include "wb-kernel-private.h"
#include "wb-private.h"

/* ------------------------------------------------------------------ mountstats */

/* Up to 9 decimal numbers separated by blanks: 0 when 8 or more (older kernels print
 * 8: no errors), -EBADMSG otherwise (a non-number, an overflow, fewer than 8). */
static int parse_op(const char *s, const char *end, struct nfskeys_wb_opstats *o)
{
	uint64_t v[9] = { 0 };
	unsigned n = 0;

	while (s < end) {
		uint64_t x = 0;

		while (s < end && (*s == ' ' || *s == '\t'))
			s++;
		if (s >= end)
			break;
		if (*s < '0' || *s > '9')
			return -EBADMSG;
		for (; s < end && *s >= '0' && *s <= '9'; s++) {
			if (x > (UINT64_MAX - 9) / 10)
				return -EBADMSG;
			x = x * 10 + (uint64_t)(*s - '0');
		}
		if (s < end && *s != ' ' && *s != '\t')
			return -EBADMSG;
		if (n < 9)
			v[n] = x;
		n++; /* more than 9: a newer kernel's extra fields, ignored */
	}
	if (n < 8)
		return -EBADMSG;
	*o = (struct nfskeys_wb_opstats){ v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8] };
	return 0;
}

/* Which wanted mount point a "device X mounted on MP with fstype ..." line names. */
static ssize_t header_mount(const char *s, const char *end, const char *const *mps, size_t n,
			    const struct wbk_found *found)
{
	static const char on[] = " mounted on ", with[] = " with fstype ";
	const char *a = memmem(s, (size_t)(end - s), on, sizeof(on) - 1), *b;
	size_t len;

	if (!a)
		return -2; /* malformed */
	a += sizeof(on) - 1;
	b = memmem(a, (size_t)(end - a), with, sizeof(with) - 1);
	if (!b)
		return -2;
	len = (size_t)(b - a);
	for (size_t i = 0; i < n; i++)
		if (!(found[i].have & 1) && strlen(mps[i]) == len && memcmp(mps[i], a, len) == 0)
			return (ssize_t)i;
	return -1;
}

size_t wbk_parse_mountstats(const char *buf, size_t len, const char *const *mps, size_t n,
			    struct wbk_found *found, unsigned *ret_malformed)
{
	const char *p = buf, *end = buf + len;
	unsigned bad = 0;
	ssize_t cur = -1;
	size_t nfound = 0;

	memset(found, 0, n * sizeof(*found));
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end, *s = p;

		p = nl ? nl + 1 : end;
		if ((size_t)(le - s) > WBK_MAX_LINE) {
			bad++;
			continue;
		}
		if (le - s >= 7 && memcmp(s, "device ", 7) == 0) {
			cur = header_mount(s, le, mps, n, found);
			if (cur == -2)
				bad++;
			if (cur >= 0) {
				found[cur].have |= 1;
				nfound++;
			}
			continue;
		}
		if (cur < 0)
			continue;
		while (s < le && (*s == ' ' || *s == '\t'))
			s++;
		if (le - s > 6 && memcmp(s, "WRITE:", 6) == 0) {
			if (parse_op(s + 6, le, &found[cur].write) < 0)
				bad++;
			else
				found[cur].have |= 2;
		} else if (le - s > 7 && memcmp(s, "COMMIT:", 7) == 0) {
			if (parse_op(s + 7, le, &found[cur].commit) < 0)
				bad++;
			else
				found[cur].have |= 4;
		}
	}
	if (ret_malformed)
		*ret_malformed = bad;
	return nfound;
}

/* ------------------------------------------------------------------ the sampler */

struct sampled {
	struct nfskeys_wb_mount *mount; /* NULL for wbk_sampler_add_path() */
	struct nfskeys_wb_dev *dev;
	char *esc;
	uint64_t ceiling, limit;
	struct nfskeys_wb_opstats w, c; /* the previous tick's counters */
	bool have_prev;
	uint64_t last_ns;
	double bw;                      /* WRITE bytes/s, held through quiet ticks */
	double rtt_base, commit_base;   /* per-op ms when the server keeps up */
};

struct nfskeys_wb_sampler {
	struct nfskeys_ctx *ctx;
	int controller;                 /* WBK_CTL_* */
	double target_s;                /* nfskeys: the limit is bandwidth x this */
	struct sampled *m;
	size_t n;
	const char **mps;
	struct wbk_found *found;
	char *buf;
	size_t cap;
};

_public_ int nfskeys_wb_sampler_new(struct nfskeys_ctx *ctx, struct nfskeys_wb_sampler **ret)
{
	struct nfskeys_wb_sampler *s;

	if (!ctx || !ret)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->ctx = nfskeys_ctx_ref(ctx);
	s->controller = WBK_CTL_NFSKEYS;
	s->target_s = WBK_TARGET_DEFAULT_MS / 1000.0;
	*ret = s;
	return 0;
}

_public_ int nfskeys_wb_sampler_set_controller(struct nfskeys_wb_sampler *s, const char *name,
					       uint64_t target_ns)
{
	if (!s || !name)
		return -EINVAL;
	if (target_ns && (target_ns < 10 * WB_NSEC_PER_MSEC || target_ns > 60 * WB_NSEC_PER_SEC))
		return -ERANGE;
	if (streq(name, "nfskeys"))
		s->controller = WBK_CTL_NFSKEYS;
	else if (streq(name, "halve"))
		s->controller = WBK_CTL_HALVE;
	else
		return -EINVAL;
	if (target_ns)
		s->target_s = (double)target_ns / WB_NSEC_PER_SEC;
	return 0;
}

_public_ struct nfskeys_wb_sampler *nfskeys_wb_sampler_free(struct nfskeys_wb_sampler *s)
{
	if (!s)
		return NULL;
	for (size_t i = 0; i < s->n; i++)
		free(s->m[i].esc);
	free(s->m);
	free(s->mps);
	free(s->found);
	free(s->buf);
	nfskeys_ctx_unref(s->ctx);
	free(s);
	return NULL;
}

static int add(struct nfskeys_wb_sampler *s, struct nfskeys_wb_mount *mount,
	       struct nfskeys_wb_dev *dev, const char *esc, uint64_t ceiling)
{
	struct sampled *m;
	const char **mps;
	struct wbk_found *found;

	if (ceiling < LIMIT_MIN || ceiling > LIMIT_MAX)
		return -ERANGE;
	m = reallocarray(s->m, s->n + 1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	s->m = m;
	mps = reallocarray(s->mps, s->n + 1, sizeof(*mps));
	if (!mps)
		return -ENOMEM;
	s->mps = mps;
	found = reallocarray(s->found, s->n + 1, sizeof(*found));
	if (!found)
		return -ENOMEM;
	s->found = found;
	m = &s->m[s->n];
	*m = (struct sampled){ .mount = mount, .dev = dev, .ceiling = ceiling, .limit = ceiling };
	m->esc = strdup(esc);
	if (!m->esc)
		return -ENOMEM;
	s->n++;
	for (size_t i = 0; i < s->n; i++)
		s->mps[i] = s->m[i].esc;
	return 0;
}

_public_ int nfskeys_wb_sampler_add(struct nfskeys_wb_sampler *s, struct nfskeys_wb_mount *mount,
				    struct nfskeys_wb_dev *dev, uint64_t ceiling)
{
	if (!s || !mount)
		return -EINVAL;
	return add(s, mount, dev, mount->esc, ceiling);
}

int wbk_sampler_add_path_dev(struct nfskeys_wb_sampler *s, const char *mountpoint,
			     struct nfskeys_wb_dev *dev, uint64_t ceiling)
{
	char esc[PATH_MAX * 4];
	int r;

	if (!s || !mountpoint)
		return -EINVAL;
	r = wbk_escape_path(mountpoint, esc, sizeof(esc));
	return r < 0 ? r : add(s, NULL, dev, esc, ceiling);
}

int wbk_sampler_add_path(struct nfskeys_wb_sampler *s, const char *mountpoint, uint64_t ceiling)
{
	return wbk_sampler_add_path_dev(s, mountpoint, NULL, ceiling);
}

static int read_all(struct nfskeys_wb_sampler *s, size_t *ret_len)
{
	char p[PATH_MAX];
	_cleanup_close_ int fd = -1;
	size_t len = 0;

	snprintf(p, sizeof(p), "%s/self/mountstats", wbk_proc_root());
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (;;) {
		ssize_t n;

		if (s->cap - len < 4096) {
			size_t cap = s->cap ? s->cap * 2 : 65536;
			char *b;

			if (cap > 64 * MIB)
				return -EFBIG;
			b = realloc(s->buf, cap);
			if (!b)
				return -ENOMEM;
			s->buf = b;
			s->cap = cap;
		}
		n = read(fd, s->buf + len, s->cap - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	*ret_len = len;
	return 0;
}

static struct nfskeys_wb_opstats op_delta(const struct nfskeys_wb_opstats *a,
					  const struct nfskeys_wb_opstats *b)
{
	return (struct nfskeys_wb_opstats){
		a->ops - b->ops,     a->trans - b->trans,       a->timeouts - b->timeouts,
		a->bytes_sent - b->bytes_sent, a->bytes_recv - b->bytes_recv,
		a->queue_ms - b->queue_ms,     a->rtt_ms - b->rtt_ms,
		a->exec_ms - b->exec_ms,       a->errors - b->errors,
	};
}

static bool went_back(const struct nfskeys_wb_opstats *a, const struct nfskeys_wb_opstats *b)
{
	return a->ops < b->ops || a->trans < b->trans || a->bytes_sent < b->bytes_sent ||
	       a->rtt_ms < b->rtt_ms || a->exec_ms < b->exec_ms || a->errors < b->errors ||
	       a->timeouts < b->timeouts;
}

/* Per-op time base: the lowest seen, creeping up slowly so a slower server becomes the
 * new normal after a while. */
static void track_base(double *base, double v)
{
	if (*base <= 0 || v < *base)
		*base = v;
	else
		*base += (v - *base) * 0.02;
}

uint64_t wbk_limit_from_bandwidth(double bw, double target_s, uint64_t ceiling)
{
	uint64_t floor = MAX(ceiling / 16, LIMIT_MIN);
	double l;

	if (!(bw > 0) || !(target_s > 0))
		return ceiling; /* no estimate yet: the ceiling, as the kernel would run */
	l = bw * target_s;
	if (!(l < (double)ceiling))
		return ceiling;
	return MAX((uint64_t)l, floor);
}

/* The nfskeys throttler's write bandwidth estimate of dev, brought up to now: the
 * completions the sampler reported through nfskeys_wb_complete() run its estimator
 * (which the hook itself only does while writers wait, and none wait in the kernel's
 * case).  0 while it has none, or for a policy without an estimate. */
static double dev_bandwidth(struct nfskeys_wb_dev *dev)
{
	double bw = 0;

	if (!dev || !dev->policy->bandwidth)
		return 0;
	pthread_mutex_lock(&dev->lock);
	if (dev->policy->complete)
		dev->policy->complete(dev, dev->clock.now(dev->clock.userdata));
	bw = (double)dev->policy->bandwidth(dev);
	pthread_mutex_unlock(&dev->lock);
	return bw;
}

/* The adaptive limit (halve): halve it while the server stalls or answers in bursts (per-op
 * RTT or COMMIT time well above its normal, retransmissions, timeouts, errors); grow it
 * by a sixteenth of the ceiling per tick while WRITEs complete at the normal pace. */
static void adapt(struct sampled *m, const struct nfskeys_wb_opstats *w,
		  const struct nfskeys_wb_opstats *c, double dt)
{
	uint64_t floor = MAX(m->ceiling / 16, LIMIT_MIN);
	bool congested = w->trans > w->ops || w->timeouts || w->errors || c->errors;

	if (w->ops) {
		double rtt = (double)w->rtt_ms / (double)w->ops, a = dt / (dt + 0.4);
		double bw = (double)w->bytes_sent / dt;

		m->bw = m->bw > 0 ? m->bw + (bw - m->bw) * a : bw;
		if (m->rtt_base > 0 && rtt > 4 * m->rtt_base && rtt > 2.0)
			congested = true;
		track_base(&m->rtt_base, rtt);
	}
	if (c->ops) {
		double ct = (double)c->exec_ms / (double)c->ops;

		if (m->commit_base > 0 && ct > 4 * m->commit_base && ct > 10.0)
			congested = true;
		track_base(&m->commit_base, ct);
	}
	if (congested)
		m->limit = MAX(m->limit / 2, floor);
	else if (w->ops)
		m->limit = MIN(m->limit + m->ceiling / 16, m->ceiling);
}

_public_ int nfskeys_wb_sampler_tick(struct nfskeys_wb_sampler *s, uint64_t now_ns,
				     nfskeys_wb_sample_fn fn, void *userdata)
{
	size_t len = 0;
	unsigned bad = 0;
	int r, ret = 0;

	if (!s)
		return -EINVAL;
	r = read_all(s, &len);
	if (r < 0) {
		log_err(s->ctx, "reading %s/self/mountstats: %s", wbk_proc_root(), strerror(-r));
		return r;
	}
	wbk_parse_mountstats(s->buf, len, s->mps, s->n, s->found, &bad);
	if (bad)
		log_debug(s->ctx, "mountstats: %u malformed lines skipped", bad);
	for (size_t i = 0; i < s->n; i++) {
		struct sampled *m = &s->m[i];
		const struct wbk_found *f = &s->found[i];
		struct nfskeys_wb_opstats dw, dc;
		double dt;

		if (!(f->have & 1)) {
			ret = -ENOENT; /* unmounted */
			m->have_prev = false;
			continue;
		}
		if (!m->have_prev || went_back(&f->write, &m->w) || went_back(&f->commit, &m->c)) {
			m->w = f->write;
			m->c = f->commit;
			m->last_ns = now_ns;
			m->have_prev = true;
			continue;
		}
		dw = op_delta(&f->write, &m->w);
		dc = op_delta(&f->commit, &m->c);
		m->w = f->write;
		m->c = f->commit;
		dt = now_ns > m->last_ns ? (double)(now_ns - m->last_ns) / 1e9 : 1e-3;
		m->last_ns = now_ns;
		if (dw.ops) {
			nfskeys_wb_complete(m->dev, dw.bytes_sent, NFSKEYS_WB_WRITE,
					    dw.exec_ms * 1000000 / dw.ops);
			if (fn)
				fn(userdata, m->mount, NFSKEYS_WB_WRITE, &dw);
		}
		if (dc.ops) {
			nfskeys_wb_complete(m->dev, dc.bytes_sent, NFSKEYS_WB_COMMIT,
					    dc.exec_ms * 1000000 / dc.ops);
			if (fn)
				fn(userdata, m->mount, NFSKEYS_WB_COMMIT, &dc);
		}
		if (s->controller == WBK_CTL_NFSKEYS && m->dev)
			m->limit = wbk_limit_from_bandwidth(dev_bandwidth(m->dev), s->target_s,
							    m->ceiling);
		else
			adapt(m, &dw, &dc, dt);
	}
	return ret;
}

_public_ uint64_t nfskeys_wb_sampler_get_limit(const struct nfskeys_wb_sampler *s,
					       const struct nfskeys_wb_mount *mount)
{
	if (!s)
		return 0;
	for (size_t i = 0; i < s->n; i++)
		if (s->m[i].mount == mount)
			return s->m[i].limit;
	return 0;
}
