/* wbsim's simulation: the seeded event heap, the device models (a steady disk; an NFS
 * server with WRITEs in flight, grouped replies, COMMITs and stalls), the writers driving
 * libnfskeys' real throttle calls on a simulated clock, and the metrics of a run. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "macros.h"
#include "wbsim-private.h"

/* ---------------------------------------------------------------- rng */

static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static double rng_uniform(uint64_t *s, double lo, double hi)
{
	return lo + (hi - lo) * ((double)(rng_next(s) >> 11) / 9007199254740992.0);
}

/* ---------------------------------------------------------------- events */

static bool ev_before(const struct event *a, const struct event *b)
{
	return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static void heap_push(struct heap *h, struct event e)
{
	size_t i;

	if (h->n == h->cap) {
		h->cap = h->cap ? h->cap * 2 : 1024;
		h->ev = realloc(h->ev, h->cap * sizeof(*h->ev));
		if (!h->ev)
			abort();
	}
	i = h->n++;
	while (i > 0 && ev_before(&e, &h->ev[(i - 1) / 2])) {
		h->ev[i] = h->ev[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h->ev[i] = e;
}

static struct event heap_pop(struct heap *h)
{
	struct event top = h->ev[0], last = h->ev[--h->n];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= h->n)
			break;
		if (c + 1 < h->n && ev_before(&h->ev[c + 1], &h->ev[c]))
			c++;
		if (!ev_before(&h->ev[c], &last))
			break;
		h->ev[i] = h->ev[c];
		i = c;
	}
	if (h->n)
		h->ev[i] = last;
	return top;
}

/* ---------------------------------------------------------------- the simulation */

static unsigned hbucket(uint64_t ns)
{
	unsigned b;

	if (ns == 0)
		return 0;
	b = 1 + (unsigned)(log2((double)ns) * 16);
	return MIN(b, HBUCKETS - 1);
}

static void hist_add(struct hist *h, uint64_t ns, double weight)
{
	h->w[hbucket(ns)] += weight;
	h->total += weight;
}

/* The upper bound of the bucket holding the p-quantile, ms. */
static double hist_pct(const struct hist *h, double p)
{
	double want = p * h->total, acc = 0;

	if (h->total <= 0)
		return 0;
	for (unsigned b = 0; b < HBUCKETS; b++) {
		acc += h->w[b];
		if (acc >= want && h->w[b] > 0)
			return b == 0 ? 0 : exp2((double)b / 16) / MS;
	}
	return exp2((double)(HBUCKETS - 1) / 16) / MS;
}

static void push(struct sim *s, uint64_t t, int type, void *p, uint64_t arg, uint32_t gen)
{
	heap_push(&s->heap, (struct event){ .t = t, .seq = s->seq++, .type = type, .p = p,
					    .arg = arg, .gen = gen });
}

static void push2(struct sim *s, uint64_t t, int type, uint64_t arg, uint64_t arg2)
{
	heap_push(&s->heap, (struct event){ .t = t, .seq = s->seq++, .type = type, .arg = arg,
					    .arg2 = arg2 });
}

/* A server stall postpones whatever the server would finish inside it. */
static uint64_t stall_adjust(struct sim *s, uint64_t start, uint64_t done)
{
	if (!s->stall_end)
		return done;
	if (start < s->stall_start && done > s->stall_start)
		return done + (s->stall_end - s->stall_start);
	if (start >= s->stall_start && start < s->stall_end)
		return s->stall_end + (done - start);
	return done;
}

static uint64_t sim_now(void *userdata)
{
	return ((struct sim *)userdata)->now;
}

static void sim_wake(void *userdata, void *task_userdata)
{
	struct sim *s = userdata;
	struct simtask *t = task_userdata;

	t->gen++;
	push(s, s->now, EV_POLL, t, 0, t->gen);
}

/* Every completion goes to the library through the one public hook, whatever the policy;
 * its CPU cost is measured while tasks wait (when policies may do work in it). */
static void complete(struct sim *s, uint64_t bytes, enum nfskeys_wb_kind kind, uint64_t lat)
{
	struct timespec a, b;

	if (!s->nwaiting) {
		nfskeys_wb_complete(s->dev, bytes, kind, lat);
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	nfskeys_wb_complete(s->dev, bytes, kind, lat);
	clock_gettime(CLOCK_MONOTONIC, &b);
	s->hook_ns += (double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec);
	s->hook_calls++;
}

static void note_peaks(struct sim *s)
{
	uint64_t d = s->dirtied - s->cleaned;

	s->peak_dirty = MAX(s->peak_dirty, d);
	s->peak_unstable = MAX(s->peak_unstable, s->unstable);
}

/* The NFS client sends a COMMIT the way Linux's does on writeback: one at a time, once
 * the data waiting for it is more than half of what the client holds for the file
 * (unstable > dirty not yet answered), e.g. when the WRITE queue has drained.  The
 * server then makes its cache stable: the latency grows with the bytes. */
static void nfs_maybe_commit(struct sim *s)
{
	uint64_t b = s->unstable - s->commit_pending, lat;

	if (s->commit_inflight || b == 0 || s->trace)
		return;
	if (b <= s->backlog + s->inflight_bytes)
		return;
	lat = COMMIT_BASE + (uint64_t)((double)b / SERVER_DISK_BW * NS);
	s->commit_pending += b;
	s->commit_inflight = true;
	push2(s, stall_adjust(s, s->now, s->now + lat), EV_COMMIT_DONE, b, s->now);
}

static void dev_try_submit(struct sim *s)
{
	uint64_t size, svc, start;

	if (s->trace)
		return; /* the trace says when data is written */
	if (s->sc->dev == DEV_NFS) {
		/* several WRITEs in flight; the server takes them in at its network rate */
		while (s->backlog && s->inflight < NFS_SLOTS) {
			size = MIN(s->backlog, (uint64_t)NFS_WSIZE);
			s->backlog -= size;
			s->inflight++;
			s->inflight_bytes += size;
			start = MAX(s->now, s->link_free);
			svc = (uint64_t)((double)size / DEV_BW * rng_uniform(&s->rng, 0.8, 1.2) *
					 NS);
			s->link_free = stall_adjust(s, start, start + svc);
			push2(s, s->link_free, EV_NFS_SERVED, size, s->now);
		}
		return;
	}
	if (s->busy || s->backlog == 0)
		return;
	size = MIN(s->backlog, (uint64_t)DISK_REQ);
	s->backlog -= size;
	s->busy = true;
	svc = (uint64_t)((double)size / DEV_BW * NS);
	s->submit_time = s->now;
	push(s, stall_adjust(s, s->now, s->now + svc), EV_DEV_DONE, NULL, size, 0);
}

/* The server holds the replies of served WRITEs and sends them in groups. */
static void nfs_served(struct sim *s, uint64_t bytes, uint64_t submit)
{
	if (s->nheld == s->held_cap) {
		s->held_cap = s->held_cap ? s->held_cap * 2 : 64;
		s->held = realloc(s->held, s->held_cap * sizeof(*s->held));
		if (!s->held)
			abort();
	}
	s->held[s->nheld++] = (struct held){ bytes, submit };
}

static void nfs_reply_flush(struct sim *s)
{
	uint64_t next = s->now + (uint64_t)rng_uniform(&s->rng, REPLY_GAP_MIN, REPLY_GAP_MAX);

	if (s->stall_end && s->now >= s->stall_start && s->now < s->stall_end)
		next = s->stall_end; /* a stalled server answers nothing */
	for (size_t i = 0; i < s->nheld; i++) {
		uint64_t b = s->held[i].bytes;

		s->inflight--;
		s->inflight_bytes -= b;
		s->written += b;
		s->bin_written += b;
		s->unstable += b;
		complete(s, b, NFSKEYS_WB_WRITE, s->now - s->held[i].submit);
	}
	s->nheld = 0;
	note_peaks(s);
	dev_try_submit(s);
	nfs_maybe_commit(s);
	push(s, next, EV_REPLY_FLUSH, NULL, 0, 0);
}

static bool in_window(const struct sim *s)
{
	return s->now >= (uint64_t)(s->sc->warmup * NS);
}

/* One write() call of n bytes returned after pausing p (0 on the fast path).  Per call,
 * every call counts once; per byte, a pause counts for the bytes it paid for: those the
 * task dirtied since its previous pause (a long pause every 20 MiB weighs as much as a
 * ten times shorter one every 2 MiB times ten). */
static void record_call(struct sim *s, struct simtask *t, uint64_t p, uint64_t n)
{
	uint64_t w = (uint64_t)(s->sc->warmup * NS);

	if (!in_window(s))
		return;
	t->chunk += n;
	hist_add(&s->per_call, p, 1);
	if (p) {
		hist_add(&s->per_byte, p, (double)t->chunk);
		t->chunk = 0;
	}
	if (t->cls != 3) /* the long-lived writers' time, only the part in the window */
		s->paused_ns += MIN(p, s->now - w);
	s->pause_max = MAX(s->pause_max, p);
}

/* Dirty above the ceiling: the limit, or after a limit drop what would remain of the
 * dirty data of that moment had nothing been dirtied since. */
static double ceiling(const struct sim *s)
{
	double c = (double)s->limit;

	if (s->dropped) {
		double left = (double)s->drop_dirty - (double)(s->cleaned - s->drop_cleaned);

		c = MAX(c, left);
	}
	return c;
}

static void check_over(struct sim *s)
{
	double over = (double)(s->dirtied - s->cleaned) - ceiling(s);

	if (over > s->max_over)
		s->max_over = over;
}

static void schedule_write(struct sim *s, struct simtask *t, uint64_t wsize)
{
	uint64_t n = wsize;

	if (t->to_write)
		n = MIN(n, t->to_write - t->dirtied);
	push(s, s->now + (uint64_t)((double)n / t->rate * NS) + 1, EV_WRITE, t, n, t->gen);
}

static struct simtask *task_add(struct sim *s, int cls, double rate, uint64_t to_write)
{
	struct simtask *t = calloc(1, sizeof(*t));

	if (!t)
		abort();
	t->sim = s;
	t->id = s->next_id++;
	t->cls = cls;
	t->rate = rate;
	t->to_write = to_write;
	t->alive = true;
	if (nfskeys_wb_task_new(s->dev, t, &t->wt) < 0)
		abort();
	if (s->ntasks == s->tasks_cap) {
		s->tasks_cap = s->tasks_cap ? s->tasks_cap * 2 : 64;
		s->tasks = realloc(s->tasks, s->tasks_cap * sizeof(*s->tasks));
		if (!s->tasks)
			abort();
	}
	s->tasks[s->ntasks++] = t;
	return t;
}

static void task_done(struct simtask *t)
{
	if (t->cls == 0 && t->to_write)
		t->sim->burst_done = MAX(t->sim->burst_done, t->sim->now);
	t->alive = false;
	t->wt = nfskeys_wb_task_free(t->wt);
}

static void task_go(struct sim *s, struct simtask *t, uint64_t wsize)
{
	if (t->to_write && t->dirtied >= t->to_write) {
		task_done(t);
		return;
	}
	schedule_write(s, t, wsize);
}

static void on_write(struct sim *s, struct simtask *t, uint64_t n, uint64_t wsize)
{
	uint64_t pause = 0;
	int r;

	if (!t->alive)
		return;
	t->dirtied += n;
	t->bin_bytes += n;
	s->dirtied += n;
	s->bin_dirtied += n;
	s->backlog += n;
	dev_try_submit(s);
	r = nfskeys_wb_throttle(t->wt, n, NFSKEYS_WB_NOSLEEP, &pause);
	check_over(s);
	note_peaks(s);
	if (r < 0) {
		fprintf(stderr, "wbsim: throttle: %s\n", strerror(-r));
		abort();
	}
	if (r == 0) {
		record_call(s, t, 0, n);
		task_go(s, t, wsize);
		return;
	}
	t->waiting = true;
	s->nwaiting++;
	t->wait_start = s->now;
	t->wait_bytes = n;
	t->gen++;
	push(s, s->now + pause, EV_POLL, t, 0, t->gen);
}

static void on_poll(struct sim *s, struct simtask *t, uint32_t gen, uint64_t wsize)
{
	uint64_t pause = 0;
	int r;

	if (!t->alive || !t->waiting || gen != t->gen)
		return;
	if (in_window(s))
		s->wakeups++; /* every time a waiting task runs to re-check */
	r = nfskeys_wb_task_poll(t->wt, &pause);
	if (r < 0)
		abort();
	if (r == 1) {
		t->gen++;
		push(s, s->now + pause, EV_POLL, t, 0, t->gen);
		return;
	}
	t->waiting = false;
	s->nwaiting--;
	t->gen++;
	record_call(s, t, s->now - t->wait_start, t->wait_bytes);
	task_go(s, t, wsize);
}

/* Replay one trace sample. */
static void trace_step(struct sim *s)
{
	const struct trace_rec *r = &s->trace->rec[s->trace_pos++];

	if (r->op == TR_WRITE && r->ops) {
		uint64_t b = MIN(r->bytes, s->backlog);

		if (in_window(s))
			s->trace_capacity += r->bytes;
		if (b) {
			s->backlog -= b;
			s->written += b;
			s->bin_written += b;
			s->unstable += b;
			complete(s, b, NFSKEYS_WB_WRITE,
				 MIN(r->rtt_us / r->ops, UINT64_MAX / 1000) * 1000);
		}
	} else if (r->op == TR_COMMIT && r->ops && s->unstable) {
		uint64_t b = s->unstable;

		s->unstable = 0;
		s->cleaned += b;
		complete(s, b, NFSKEYS_WB_COMMIT,
			 MIN(r->exec_us / r->ops, UINT64_MAX / 1000) * 1000);
	}
	note_peaks(s);
	if (s->trace_pos < s->trace->n)
		push(s, s->trace->rec[s->trace_pos].t, EV_TRACE, NULL, 0, 0);
}

static void sample(struct sim *s)
{
	struct nfskeys_wb_stats st;
	struct series *row;

	nfskeys_wb_dev_get_stats(s->dev, &st);
	if (s->nser == s->ser_cap) {
		s->ser_cap = s->ser_cap ? s->ser_cap * 2 : 2048;
		s->ser = realloc(s->ser, s->ser_cap * sizeof(*s->ser));
		if (!s->ser)
			abort();
	}
	row = &s->ser[s->nser++];
	*row = (struct series){ (double)s->now / NS, st.dirty / MiB, st.limit / MiB,
				st.setpoint / MiB, st.unstable / MiB, st.bandwidth / MiB,
				st.waiters };
	if (in_window(s) && (double)(s->dirtied - s->cleaned) > ceiling(s))
		s->above_ns += 10 * MS;

	if (s->now % (100 * MS) == 0 && s->now > 0) {
		struct rates *r;
		double dr = s->bin_dirtied / 0.1;
		int k = 0;

		if (s->nrat == s->rat_cap) {
			s->rat_cap = s->rat_cap ? s->rat_cap * 2 : 512;
			s->rat = realloc(s->rat, s->rat_cap * sizeof(*s->rat));
			if (!s->rat)
				abort();
		}
		r = &s->rat[s->nrat++];
		memset(r, 0, sizeof(*r));
		r->t = (double)s->now / NS;
		r->dirty_rate = dr / MiB;
		r->write_rate = s->bin_written / 0.1 / MiB;
		for (size_t i = 0; i < s->ntasks; i++) {
			struct simtask *t = s->tasks[i];
			double rate = t->bin_bytes / 0.1;

			if (k < MAX_PLOT_TASKS && t->cls != 3)
				r->task[k++] = rate / MiB;
			if (in_window(s) && t->cls != 3 && !t->to_write &&
			    s->now > s->sc->warmup * NS) {
				t->bin_sum += rate;
				t->bin_sumsq += rate * rate;
				t->nbins++;
			}
			t->bin_bytes = 0;
		}
		if (s->stall_end) {
			if (in_window(s) && s->now <= s->stall_start) {
				s->prestall_rate_sum += dr;
				s->prestall_bins++;
			} else if (s->now > s->stall_end && s->recovery_ms < 0 &&
				   s->prestall_bins &&
				   dr >= 0.9 * s->prestall_rate_sum / s->prestall_bins) {
				s->recovery_ms = (double)(s->now - s->stall_end) / MS;
			}
		}
		s->bin_dirtied = s->bin_written = 0;
	}
	if (s->now == (uint64_t)(s->sc->warmup * NS)) {
		s->written_at_warmup = s->written;
		for (size_t i = 0; i < s->ntasks; i++)
			s->tasks[i]->dirtied_at_warmup = s->tasks[i]->dirtied;
	}
}

void wbsim_run(const struct scenario *sc, int policy, uint64_t seed, uint64_t wsize,
		    const struct trace *trace, struct sim *s, struct result *res)
{
	struct nfskeys_wb_clock clock = { sim_now, sim_wake, s };
	uint64_t end = (uint64_t)(sc->duration * NS);
	double sum = 0, sumsq = 0, win, cv_sum = 0;
	int n = 0, ntask = 0, ncv = 0;

	memset(s, 0, sizeof(*s));
	s->trace = trace;
	s->sc = sc;
	s->policy = policy;
	s->rng = seed;
	s->limit = LIMIT;
	s->recovery_ms = -1;
	if (sc->stall_at > 0) {
		s->stall_start = (uint64_t)(sc->stall_at * NS);
		s->stall_end = s->stall_start + (uint64_t)(STALL_LEN * NS);
	}
	if (nfskeys_wb_dev_new(sc->name, policy, LIMIT,
			       sc->dev == DEV_NFS ? NFSKEYS_WB_UNSTABLE : 0, &clock, &s->dev) < 0)
		abort();
	for (int i = 0; i < sc->heavy; i++)
		task_add(s, 0, sc->heavy_rate, sc->burst);
	for (int i = 0; i < sc->medium; i++)
		task_add(s, 1, 20e6, 0);
	for (int i = 0; i < sc->light; i++)
		task_add(s, 2, 2e6, 0);
	for (size_t i = 0; i < s->ntasks; i++) {
		/* staggered starts within the first millisecond */
		struct simtask *t = s->tasks[i];

		push(s, (uint64_t)rng_uniform(&s->rng, 0, MS), EV_WRITE, t, wsize, t->gen);
	}
	if (sc->dev == DEV_NFS && !s->trace)
		push(s, (uint64_t)rng_uniform(&s->rng, REPLY_GAP_MIN, REPLY_GAP_MAX),
		     EV_REPLY_FLUSH, NULL, 0, 0);
	if (s->trace && s->trace->n)
		push(s, s->trace->rec[0].t, EV_TRACE, NULL, 0, 0);
	if (sc->spawn_rate > 0)
		push(s, (uint64_t)(rng_uniform(&s->rng, 0, 2.0 / sc->spawn_rate) * NS), EV_SPAWN,
		     NULL, 0, 0);
	if (sc->halve_at > 0)
		push(s, (uint64_t)(sc->halve_at * NS), EV_LIMIT, NULL, LIMIT / 2, 0);
	for (uint64_t t = 0; t <= end; t += 10 * MS)
		push(s, t, EV_SAMPLE, NULL, 0, 0);

	while (s->heap.n) {
		struct event e = heap_pop(&s->heap);

		if (e.t > end)
			break;
		s->now = e.t;
		switch (e.type) {
		case EV_WRITE:
			on_write(s, e.p, e.arg, wsize);
			break;
		case EV_POLL:
			on_poll(s, e.p, e.gen, wsize);
			break;
		case EV_DEV_DONE:
			s->busy = false;
			s->written += e.arg;
			s->bin_written += e.arg;
			s->cleaned += e.arg;
			complete(s, e.arg, NFSKEYS_WB_WRITE, s->now - s->submit_time);
			dev_try_submit(s);
			break;
		case EV_NFS_SERVED:
			nfs_served(s, e.arg, e.arg2);
			break;
		case EV_REPLY_FLUSH:
			nfs_reply_flush(s);
			break;
		case EV_COMMIT_DONE:
			s->unstable -= e.arg;
			s->commit_pending -= e.arg;
			s->cleaned += e.arg;
			s->commit_inflight = false;
			s->commits++;
			s->commit_bytes += e.arg;
			s->commit_ns += s->now - e.arg2;
			complete(s, e.arg, NFSKEYS_WB_COMMIT, s->now - e.arg2);
			nfs_maybe_commit(s);
			break;
		case EV_TRACE:
			trace_step(s);
			break;
		case EV_SPAWN: {
			uint64_t size = (uint64_t)rng_uniform(&s->rng, 1, 8) * (1u << 20);
			struct simtask *t = task_add(s, 3, 200e6, size);

			push(s, s->now, EV_WRITE, t, wsize, t->gen);
			push(s, s->now + (uint64_t)(rng_uniform(&s->rng, 0, 2.0 / sc->spawn_rate) *
						    NS),
			     EV_SPAWN, NULL, 0, 0);
			break;
		}
		case EV_LIMIT:
			s->dropped = e.arg < s->limit;
			s->drop_dirty = s->dirtied - s->cleaned;
			s->drop_cleaned = s->cleaned;
			s->limit = e.arg;
			nfskeys_wb_dev_set_limit(s->dev, e.arg);
			break;
		case EV_SAMPLE:
			sample(s);
			break;
		}
	}
	s->now = end;

	memset(res, 0, sizeof(*res));
	for (size_t i = 0; i < s->ntasks; i++)
		hist_add(&s->per_byte, 0, (double)s->tasks[i]->chunk);
	win = sc->duration - sc->warmup;
	res->m[M_CALL_P99] = hist_pct(&s->per_call, 0.99);
	res->m[M_BYTE_P50] = hist_pct(&s->per_byte, 0.50);
	res->m[M_BYTE_P99] = hist_pct(&s->per_byte, 0.99);
	res->m[M_MAX] = (double)s->pause_max / MS;
	for (size_t i = 0; i < s->ntasks; i++) {
		struct simtask *t = s->tasks[i];
		double b = (double)(t->dirtied - t->dirtied_at_warmup);

		if (t->cls == 3)
			continue;
		ntask++;
		if (t->nbins > 1) {
			double mean = t->bin_sum / t->nbins;
			double var = t->bin_sumsq / t->nbins - mean * mean;

			cv_sum += mean > 0 ? sqrt(MAX(var, 0)) / mean : 0;
			ncv++;
		}
		if (t->cls != 0)
			continue;
		sum += b;
		sumsq += b * b;
		n++;
	}
	/* the share of the writers' time spent paused */
	res->m[M_PAUSED] = ntask ? 100 * (double)s->paused_ns / NS / (win * ntask) : 0;
	res->m[M_CV] = ncv ? cv_sum / ncv : 0;
	res->m[M_JAIN] = sumsq > 0 ? sum * sum / (n * sumsq) : 1.0;
	res->m[M_WAKEUPS] = s->wakeups / win;
	res->m[M_PEAK_DIRTY] = s->peak_dirty / MiB;
	res->m[M_PEAK_UNSTABLE] = s->peak_unstable / MiB;
	res->m[M_HOOK_NS] = s->hook_calls ? s->hook_ns / (double)s->hook_calls : 0;
	res->m[M_COMMITS] = s->commits;
	res->m[M_COMMIT_MIB] = s->commits ? s->commit_bytes / MiB / s->commits : NAN;
	res->m[M_COMMIT_MS] = s->commits ? (double)s->commit_ns / MS / s->commits : NAN;
	res->m[M_BURST] = sc->burst ? (s->burst_done ? (double)s->burst_done / MS : INFINITY) : NAN;
	if (s->stall_end)
		win -= STALL_LEN;
	/* throughput: what reached the device, against what it (or the trace) could take */
	res->m[M_UTIL] = 100 * (double)(s->written - s->written_at_warmup) /
			 (s->trace ? (double)MAX(s->trace_capacity, 1) : DEV_BW * win);
	if (sc->burst)
		res->m[M_UTIL] = NAN; /* the device idles after the burst */
	res->m[M_OVER] = s->max_over > 0 ? 100 * s->max_over / (double)LIMIT : 0;
	res->m[M_RECOV] = s->stall_end ? s->recovery_ms : NAN;
	{
		double got = 0, want = 0;

		for (size_t i = 0; i < s->ntasks; i++) {
			struct simtask *t = s->tasks[i];

			if (t->cls != 1 && t->cls != 2)
				continue;
			got += (double)(t->dirtied - t->dirtied_at_warmup);
			want += t->rate * (sc->duration - sc->warmup);
		}
		res->m[M_LIGHT] = want > 0 ? got / want : NAN;
	}
}

void wbsim_free(struct sim *s)
{
	for (size_t i = 0; i < s->ntasks; i++) {
		nfskeys_wb_task_free(s->tasks[i]->wt);
		free(s->tasks[i]);
	}
	nfskeys_wb_dev_free(s->dev);
	free(s->tasks);
	free(s->heap.ev);
	free(s->held);
	free(s->ser);
	free(s->rat);
}
