/* wbsim: a deterministic, seeded discrete-event simulator of writeback throttling.  It
 * models backing devices (a steady disk, an NFS server with unstable WRITEs, COMMIT
 * bursts and stalls) and dirtying tasks, and drives libnfskeys' real policy code through
 * the public hook and throttle calls on a simulated clock; it prints a comparison table,
 * and optionally CSV time series and gnuplot plots. */
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "macros.h"
#include "cli.h"
#include "nfskeys.h"

#define NS 1000000000ull
#define MS 1000000ull
#define MiB (1024.0 * 1024.0)
#define MAX_PLOT_TASKS 8

extern char **environ;

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

/* ---------------------------------------------------------------- scenarios */

enum dev_kind { DEV_DISK, DEV_NFS };

struct scenario {
	const char *name;
	const char *help;
	enum dev_kind dev;
	double duration, warmup; /* s */
	int heavy;               /* equal writers at heavy_rate */
	double heavy_rate;       /* bytes/s */
	int medium, light;       /* mixed-rate writers */
	double stall_at;         /* s, 0 = none */
	double halve_at;         /* s, 0 = none */
	double spawn_rate;       /* short-lived writers per second */
	bool quick;              /* part of --quick */
};

static const struct scenario scenarios[] = {
	{ "equal-1", "1 writer, steady 100 MB/s device",
	  DEV_DISK, 8, 2, 1, 1e9, 0, 0, 0, 0, 0, true },
	{ "equal-10", "10 equal writers, steady device",
	  DEV_DISK, 8, 2, 10, 1e9, 0, 0, 0, 0, 0, true },
	{ "equal-100", "100 equal writers, steady device",
	  DEV_DISK, 8, 2, 100, 1e9, 0, 0, 0, 0, 0, false },
	{ "equal-1000", "1000 equal writers, steady device",
	  DEV_DISK, 8, 2, 1000, 1e9, 0, 0, 0, 0, 0, false },
	{ "mixed", "4 heavy, 4 at 20 MB/s, 4 at 2 MB/s",
	  DEV_DISK, 8, 2, 4, 1e9, 4, 4, 0, 0, 0, false },
	{ "nfs-burst", "10 writers, NFS WRITEs + COMMIT every 0.5-1 s",
	  DEV_NFS, 10, 3, 10, 1e9, 0, 0, 0, 0, 0, true },
	{ "stall", "10 writers, NFS, server stall of 2 s at 5 s",
	  DEV_NFS, 12, 3, 10, 1e9, 0, 0, 5, 0, 0, true },
	{ "halve", "10 writers, dirty limit halved at 5 s",
	  DEV_DISK, 10, 2, 10, 1e9, 0, 0, 0, 5, 0, false },
	{ "short", "2 writers + short-lived ones (10/s, 1-8 MiB)",
	  DEV_DISK, 8, 2, 2, 1e9, 0, 0, 0, 0, 10, false },
};

#define DEV_BW (100e6)          /* bytes/s */
#define DISK_REQ (256 * 1024)   /* request size */
#define NFS_WSIZE (1024 * 1024) /* WRITE size */
#define STALL_LEN (2.0)
#define LIMIT (256ull << 20)

/* ---------------------------------------------------------------- events */

enum ev_type { EV_WRITE, EV_POLL, EV_DEV_DONE, EV_COMMIT_SEND, EV_COMMIT_DONE, EV_SPAWN,
	       EV_LIMIT, EV_SAMPLE };

struct event {
	uint64_t t, seq;
	int type;
	void *p;
	uint64_t arg;
	uint32_t gen;
};

struct heap {
	struct event *ev;
	size_t n, cap;
};

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

struct simtask {
	struct sim *sim;
	struct nfskeys_wb_task *wt;
	int id;
	int cls; /* 0 heavy, 1 medium, 2 light, 3 short-lived */
	double rate;
	uint64_t to_write; /* 0 = until the end */
	uint64_t dirtied, dirtied_at_warmup, bin_bytes;
	uint64_t wait_start;
	uint32_t gen;
	bool waiting, alive;
};

struct series { /* one row every 10 ms */
	double t, dirty, limit, setpoint, unstable, bw;
	uint32_t waiters;
};

struct rates { /* one row every 100 ms */
	double t, dirty_rate, write_rate;
	double task[MAX_PLOT_TASKS];
};

struct result {
	double p50, p99, pmax; /* ms */
	size_t npauses, ncalls;
	double jain, util, overshoot, above_ms, recovery_ms;
	double light_ratio; /* achieved / wanted, light+medium writers */
};

struct sim {
	const struct scenario *sc;
	int policy;
	uint64_t now, seq, rng;
	struct heap heap;
	struct nfskeys_wb_dev *dev;
	struct simtask **tasks;
	size_t ntasks, tasks_cap;
	int next_id;
	/* device */
	uint64_t backlog, dirtied, cleaned, written, unstable, commit_pending;
	bool busy;
	uint64_t submit_time;
	uint64_t stall_start, stall_end;
	uint64_t limit;
	/* limit drop: what would remain if nothing were dirtied after it */
	bool dropped;
	uint64_t drop_dirty, drop_cleaned;
	/* metrics */
	uint64_t *pauses;
	size_t npauses, pauses_cap, ncalls;
	uint64_t written_at_warmup, written_at_end;
	double max_over;
	uint64_t above_ns;
	uint64_t bin_dirtied, bin_written;
	double prestall_rate_sum;
	int prestall_bins;
	double recovery_ms;
	struct series *ser;
	size_t nser, ser_cap;
	struct rates *rat;
	size_t nrat, rat_cap;
};

static void push(struct sim *s, uint64_t t, int type, void *p, uint64_t arg, uint32_t gen)
{
	heap_push(&s->heap, (struct event){ .t = t, .seq = s->seq++, .type = type, .p = p,
					    .arg = arg, .gen = gen });
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

static void dev_try_submit(struct sim *s)
{
	uint64_t size, svc;
	double f = 1.0;

	if (s->busy || s->backlog == 0)
		return;
	size = MIN(s->backlog, (uint64_t)(s->sc->dev == DEV_NFS ? NFS_WSIZE : DISK_REQ));
	s->backlog -= size;
	s->busy = true;
	if (s->sc->dev == DEV_NFS)
		f = rng_uniform(&s->rng, 0.8, 1.2);
	svc = (uint64_t)((double)size / DEV_BW * f * NS);
	s->submit_time = s->now;
	push(s, stall_adjust(s, s->now, s->now + svc), EV_DEV_DONE, NULL, size, 0);
}

static void record_pause(struct sim *s, uint64_t p)
{
	if (s->npauses == s->pauses_cap) {
		s->pauses_cap = s->pauses_cap ? s->pauses_cap * 2 : 4096;
		s->pauses = realloc(s->pauses, s->pauses_cap * sizeof(*s->pauses));
		if (!s->pauses)
			abort();
	}
	s->pauses[s->npauses++] = p;
}

static bool in_window(const struct sim *s)
{
	return s->now >= (uint64_t)(s->sc->warmup * NS);
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
	if (r < 0) {
		fprintf(stderr, "wbsim: throttle: %s\n", strerror(-r));
		abort();
	}
	if (r == 0) {
		task_go(s, t, wsize);
		return;
	}
	s->ncalls++;
	t->waiting = true;
	t->wait_start = s->now;
	t->gen++;
	push(s, s->now + pause, EV_POLL, t, 0, t->gen);
}

static void on_poll(struct sim *s, struct simtask *t, uint32_t gen, uint64_t wsize)
{
	uint64_t pause = 0;
	int r;

	if (!t->alive || !t->waiting || gen != t->gen)
		return;
	r = nfskeys_wb_task_poll(t->wt, &pause);
	if (r < 0)
		abort();
	if (r == 1) {
		t->gen++;
		push(s, s->now + pause, EV_POLL, t, 0, t->gen);
		return;
	}
	t->waiting = false;
	t->gen++;
	record_pause(s, s->now - t->wait_start);
	task_go(s, t, wsize);
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
			if (k < MAX_PLOT_TASKS && s->tasks[i]->cls != 3)
				r->task[k++] = s->tasks[i]->bin_bytes / 0.1 / MiB;
			s->tasks[i]->bin_bytes = 0;
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

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static double pct(const uint64_t *v, size_t n, double p)
{
	size_t i;

	if (!n)
		return 0;
	i = (size_t)ceil(p * (double)n) - 1;
	return (double)v[MIN(i, n - 1)] / MS;
}

static void sim_run(const struct scenario *sc, int policy, uint64_t seed, uint64_t wsize,
		    struct sim *s, struct result *res)
{
	struct nfskeys_wb_clock clock = { sim_now, sim_wake, s };
	uint64_t end = (uint64_t)(sc->duration * NS);
	double sum = 0, sumsq = 0, win;
	int n = 0;

	memset(s, 0, sizeof(*s));
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
		task_add(s, 0, sc->heavy_rate, 0);
	for (int i = 0; i < sc->medium; i++)
		task_add(s, 1, 20e6, 0);
	for (int i = 0; i < sc->light; i++)
		task_add(s, 2, 2e6, 0);
	for (size_t i = 0; i < s->ntasks; i++) {
		/* staggered starts within the first millisecond */
		struct simtask *t = s->tasks[i];

		push(s, (uint64_t)rng_uniform(&s->rng, 0, MS), EV_WRITE, t, wsize, t->gen);
	}
	if (sc->dev == DEV_NFS)
		push(s, (uint64_t)(rng_uniform(&s->rng, 0.5, 1.0) * NS), EV_COMMIT_SEND, NULL, 0,
		     0);
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
			if (sc->dev == DEV_NFS)
				s->unstable += e.arg;
			else
				s->cleaned += e.arg;
			nfskeys_wb_complete(s->dev, e.arg, NFSKEYS_WB_WRITE,
					    s->now - s->submit_time);
			dev_try_submit(s);
			break;
		case EV_COMMIT_SEND: {
			uint64_t b = s->unstable - s->commit_pending, lat;

			if (b) {
				lat = (uint64_t)(rng_uniform(&s->rng, 10, 50) * MS);
				s->commit_pending += b;
				push(s, stall_adjust(s, s->now, s->now + lat), EV_COMMIT_DONE,
				     NULL, b, 0);
			}
			push(s, s->now + (uint64_t)(rng_uniform(&s->rng, 0.5, 1.0) * NS),
			     EV_COMMIT_SEND, NULL, 0, 0);
			break;
		}
		case EV_COMMIT_DONE:
			s->unstable -= e.arg;
			s->commit_pending -= e.arg;
			s->cleaned += e.arg;
			nfskeys_wb_complete(s->dev, e.arg, NFSKEYS_WB_COMMIT, 30 * MS);
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
	qsort(s->pauses, s->npauses, sizeof(*s->pauses), cmp_u64);
	res->p50 = pct(s->pauses, s->npauses, 0.50);
	res->p99 = pct(s->pauses, s->npauses, 0.99);
	res->pmax = s->npauses ? (double)s->pauses[s->npauses - 1] / MS : 0;
	res->npauses = s->npauses;
	res->ncalls = s->ncalls;
	for (size_t i = 0; i < s->ntasks; i++) {
		struct simtask *t = s->tasks[i];
		double b = (double)(t->dirtied - t->dirtied_at_warmup);

		if (t->cls != 0)
			continue;
		sum += b;
		sumsq += b * b;
		n++;
	}
	res->jain = sumsq > 0 ? sum * sum / (n * sumsq) : 1.0;
	win = sc->duration - sc->warmup;
	if (s->stall_end)
		win -= STALL_LEN;
	res->util = (double)(s->written - s->written_at_warmup) / (DEV_BW * win);
	res->overshoot = s->max_over > 0 ? s->max_over / (double)LIMIT : 0;
	res->above_ms = (double)s->above_ns / MS;
	res->recovery_ms = s->recovery_ms;
	{
		double got = 0, want = 0;

		for (size_t i = 0; i < s->ntasks; i++) {
			struct simtask *t = s->tasks[i];

			if (t->cls != 1 && t->cls != 2)
				continue;
			got += (double)(t->dirtied - t->dirtied_at_warmup);
			want += t->rate * (sc->duration - sc->warmup);
		}
		res->light_ratio = want > 0 ? got / want : -1;
	}
}

static void sim_free(struct sim *s)
{
	for (size_t i = 0; i < s->ntasks; i++) {
		nfskeys_wb_task_free(s->tasks[i]->wt);
		free(s->tasks[i]);
	}
	nfskeys_wb_dev_free(s->dev);
	free(s->tasks);
	free(s->heap.ev);
	free(s->pauses);
	free(s->ser);
	free(s->rat);
}

/* ---------------------------------------------------------------- output */

static int write_csv(const char *dir, const struct sim *s)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s-%s.csv", dir, s->sc->name,
		 nfskeys_wb_policy_to_name(s->policy));
	f = fopen(path, "we");
	if (!f)
		return negerrno();
	fprintf(f, "t,dirty_mib,limit_mib,setpoint_mib,unstable_mib,bw_mibps,waiters\n");
	for (size_t i = 0; i < s->nser; i++) {
		const struct series *r = &s->ser[i];

		fprintf(f, "%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%u\n", r->t, r->dirty, r->limit,
			r->setpoint, r->unstable, r->bw, r->waiters);
	}
	fclose(f);
	snprintf(path, sizeof(path), "%s/%s-%s-rates.csv", dir, s->sc->name,
		 nfskeys_wb_policy_to_name(s->policy));
	f = fopen(path, "we");
	if (!f)
		return negerrno();
	fprintf(f, "t,dirty_rate_mibps,write_rate_mibps");
	for (int k = 0; k < MAX_PLOT_TASKS; k++)
		fprintf(f, ",task%d_mibps", k);
	fputc('\n', f);
	for (size_t i = 0; i < s->nrat; i++) {
		const struct rates *r = &s->rat[i];

		fprintf(f, "%.3f,%.3f,%.3f", r->t, r->dirty_rate, r->write_rate);
		for (int k = 0; k < MAX_PLOT_TASKS; k++)
			fprintf(f, ",%.3f", r->task[k]);
		fputc('\n', f);
	}
	fclose(f);
	return 0;
}

/* One figure per scenario: a column per policy, dirty data on top, task rates below. */
static int write_plot(const char *dir, const char *fmt, const struct scenario *sc,
		      const int *pols, int npols)
{
	char path[4096], out[4096];
	FILE *f;
	pid_t pid;
	int status;
	char *argv[3] = { "gnuplot", path, NULL };
	int ntask = MIN(sc->heavy + sc->medium + sc->light, MAX_PLOT_TASKS);

	snprintf(path, sizeof(path), "%s/%s.gp", dir, sc->name);
	snprintf(out, sizeof(out), "%s/%s.%s", dir, sc->name, fmt);
	f = fopen(path, "we");
	if (!f)
		return negerrno();
	fprintf(f, "set datafile separator ','\n");
	if (streq(fmt, "svg"))
		fprintf(f, "set terminal svg size %d,640 dynamic font 'sans,10'\n", 420 * npols);
	else
		fprintf(f, "set terminal pngcairo size %d,640 font 'sans,9'\n", 420 * npols);
	fprintf(f, "set output '%s'\nset multiplot layout 2,%d title '%s: %s'\n", out, npols,
		sc->name, sc->help);
	fprintf(f, "set grid\nset key top right font ',8'\nset xlabel 's'\n");
	for (int i = 0; i < npols; i++) {
		const char *p = nfskeys_wb_policy_to_name(pols[i]);

		fprintf(f, "set title '%s'\nset ylabel 'MiB'\nset yrange [0:*]\n", p);
		fprintf(f, "plot '%s/%s-%s.csv' every ::1 using 1:2 with lines lw 1.5 title 'dirty', "
			   "'' every ::1 using 1:4 with lines dt 2 title 'setpoint', "
			   "'' every ::1 using 1:3 with lines lw 2 lc rgb 'red' title 'limit'",
			dir, sc->name, p);
		if (sc->dev == DEV_NFS)
			fprintf(f, ", '' every ::1 using 1:5 with lines lc rgb 'gray' title 'unstable'");
		fputc('\n', f);
	}
	for (int i = 0; i < npols; i++) {
		const char *p = nfskeys_wb_policy_to_name(pols[i]);

		fprintf(f, "set title '%s: per-task dirty rate (100 ms bins)'\nset ylabel 'MiB/s'\n", p);
		fprintf(f, "plot '%s/%s-%s-rates.csv' every ::1 using 1:2 with lines lc rgb 'black' "
			   "title 'all tasks'",
			dir, sc->name, p);
		for (int k = 0; k < ntask; k++)
			fprintf(f, ", '' every ::1 using 1:%d with lines notitle", 4 + k);
		fputc('\n', f);
	}
	fprintf(f, "unset multiplot\n");
	fclose(f);
	if (posix_spawnp(&pid, "gnuplot", NULL, NULL, argv, environ) != 0)
		return -ENOENT;
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return -EIO;
	return 0;
}

/* ---------------------------------------------------------------- main */

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: wbsim [OPTIONS]\n"
		"\n"
		"Simulate writeback throttling policies side by side (deterministic, seeded).\n"
		"\n"
		"Options:\n"
		"  -s, --scenario LIST  comma-separated scenarios (default: all; see --list)\n"
		"  -p, --policy LIST    comma-separated policies (default: kara2011,wu2011,nfskeys)\n"
		"  -q, --quick          the quick subset of scenarios\n"
		"      --seed N         random seed (default 1)\n"
		"      --wsize BYTES    bytes per write() of a simulated task (default 4096)\n"
		"      --csv DIR        write CSV time series into DIR\n"
		"      --plot FMT       with --csv: also draw DIR/SCENARIO.FMT with gnuplot (png, svg)\n"
		"      --check          exit 3 unless the nfskeys targets hold\n"
		"  -l, --list           list the scenarios\n"
		"  -h, --help           show this help\n"
		"  -V, --version        show the version\n"
		"\n"
		"Exit status: 0 success, 1 error, 2 usage error, 3 a --check target missed.\n");
}

static bool in_list(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = list; p && *p;) {
		const char *c = strchr(p, ',');
		size_t len = c ? (size_t)(c - p) : strlen(p);

		if (len == n && strncmp(p, name, n) == 0)
			return true;
		p = c ? c + 1 : NULL;
	}
	return false;
}

static bool list_valid(const char *list, bool policy)
{
	char buf[256];

	for (const char *p = list; p && *p;) {
		const char *c = strchr(p, ',');
		size_t len = c ? (size_t)(c - p) : strlen(p);
		bool ok = false;

		snprintf(buf, sizeof(buf), "%.*s", (int)MIN(len, sizeof(buf) - 1), p);
		if (policy)
			ok = nfskeys_wb_policy_from_name(buf) >= 0;
		else
			for (size_t i = 0; i < ARRAY_SIZE(scenarios); i++)
				ok = ok || streq(scenarios[i].name, buf);
		if (!ok) {
			fprintf(stderr, "wbsim: unknown %s '%s' (see --%s)\n",
				policy ? "policy" : "scenario", buf, policy ? "help" : "list");
			return false;
		}
		p = c ? c + 1 : NULL;
	}
	return true;
}

int main(int argc, char *argv[])
{
	enum { OPT_SEED = 0x100, OPT_WSIZE, OPT_CSV, OPT_PLOT, OPT_CHECK };
	static const struct option opts[] = {
		{ "scenario", required_argument, NULL, 's' },
		{ "policy", required_argument, NULL, 'p' },
		{ "quick", no_argument, NULL, 'q' },
		{ "seed", required_argument, NULL, OPT_SEED },
		{ "wsize", required_argument, NULL, OPT_WSIZE },
		{ "csv", required_argument, NULL, OPT_CSV },
		{ "plot", required_argument, NULL, OPT_PLOT },
		{ "check", no_argument, NULL, OPT_CHECK },
		{ "list", no_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{}
	};
	const char *scen = NULL, *pol = "kara2011,wu2011,nfskeys", *csv = NULL, *plot = NULL;
	bool quick = false, check = false;
	uint64_t seed = 1, wsize = 4096;
	int pols[_NFSKEYS_WB_POLICY_MAX], npols = 0, c, missed = 0;
	char *end;

	while ((c = getopt_long(argc, argv, "s:p:qlhV", opts, NULL)) != -1) {
		switch (c) {
		case 's': scen = optarg; break;
		case 'p': pol = optarg; break;
		case 'q': quick = true; break;
		case OPT_SEED:
			errno = 0;
			seed = strtoull(optarg, &end, 0);
			if (errno || *end || !*optarg) {
				fprintf(stderr, "wbsim: --seed: '%s' is not a number\n", optarg);
				return 2;
			}
			break;
		case OPT_WSIZE:
			errno = 0;
			wsize = strtoull(optarg, &end, 0);
			if (errno || *end || wsize < 512 || wsize > (16u << 20)) {
				fprintf(stderr, "wbsim: --wsize: '%s' is not a size in [512, 16M]\n", optarg);
				return 2;
			}
			break;
		case OPT_CSV: csv = optarg; break;
		case OPT_PLOT:
			if (!streq(optarg, "png") && !streq(optarg, "svg")) {
				fprintf(stderr, "wbsim: --plot: '%s' is not png or svg\n", optarg);
				return 2;
			}
			plot = optarg;
			break;
		case OPT_CHECK: check = true; break;
		case 'l':
			for (size_t i = 0; i < ARRAY_SIZE(scenarios); i++)
				printf("%-11s %s%s\n", scenarios[i].name, scenarios[i].help,
				       scenarios[i].quick ? " (quick)" : "");
			return 0;
		default: return cli_std_option(c, "wbsim", usage);
		}
	}
	if (optind < argc) {
		fprintf(stderr, "wbsim: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if ((scen && !list_valid(scen, false)) || !list_valid(pol, true))
		return 2;
	if (plot && !csv) {
		fprintf(stderr, "wbsim: --plot needs --csv DIR\n");
		return 2;
	}
	if (csv && mkdir(csv, 0755) < 0 && errno != EEXIST) {
		fprintf(stderr, "wbsim: %s: %s\n", csv, strerror(errno));
		return 1;
	}
	for (int i = 0; i < _NFSKEYS_WB_POLICY_MAX; i++)
		if (in_list(pol, nfskeys_wb_policy_to_name(i)))
			pols[npols++] = i;

	printf("%-10s %-8s %8s %8s %8s %7s %6s %6s %7s %8s %8s\n", "scenario", "policy",
	       "p50 ms", "p99 ms", "max ms", "pauses", "jain", "util%", "over%", "above ms",
	       "recov ms");
	for (size_t si = 0; si < ARRAY_SIZE(scenarios); si++) {
		const struct scenario *sc = &scenarios[si];
		struct result res[_NFSKEYS_WB_POLICY_MAX];
		double best_p99 = INFINITY;

		if (scen ? !in_list(scen, sc->name) : (quick && !sc->quick))
			continue;
		for (int i = 0; i < npols; i++) {
			struct sim s;
			struct result *r = &res[i];

			sim_run(sc, pols[i], seed * 1000003 + si, wsize, &s, r);
			printf("%-10s %-8s %8.1f %8.1f %8.1f %7zu %6.3f %6.1f %7.2f %8.0f ",
			       sc->name, nfskeys_wb_policy_to_name(pols[i]), r->p50, r->p99, r->pmax,
			       r->npauses, r->jain, 100 * r->util, 100 * r->overshoot, r->above_ms);
			if (sc->stall_at > 0)
				printf("%8.0f\n", r->recovery_ms);
			else
				printf("%8s\n", "-");
			if (csv && write_csv(csv, &s) < 0) {
				fprintf(stderr, "wbsim: cannot write CSV into %s\n", csv);
				sim_free(&s);
				return 1;
			}
			sim_free(&s);
			if (pols[i] != NFSKEYS_WB_NFSKEYS)
				best_p99 = MIN(best_p99, r->p99);
		}
		if (plot) {
			int r = write_plot(csv, plot, sc, pols, npols);

			if (r < 0)
				fprintf(stderr, "wbsim: gnuplot failed for %s: %s\n", sc->name, strerror(-r));
		}
		for (int i = 0; i < npols; i++) {
			const struct result *r = &res[i];
			bool nfsish = sc->dev == DEV_NFS;

			if (pols[i] != NFSKEYS_WB_NFSKEYS)
				continue;
			if (nfsish && isfinite(best_p99) && r->p99 > best_p99 / 5) {
				printf("  target missed: %s p99 %.1f ms > 1/5 of the better baseline (%.1f ms)\n",
				       sc->name, r->p99, best_p99);
				missed++;
			}
			if (nfsish && r->p99 > 50) {
				printf("  target missed: %s p99 %.1f ms > 50 ms\n", sc->name, r->p99);
				missed++;
			}
			if (sc->heavy > 1 && !sc->medium && !sc->spawn_rate && !nfsish &&
			    !sc->halve_at && (r->jain < 0.99 || r->util < 0.98)) {
				printf("  target missed: %s jain %.3f (>= 0.99), util %.1f%% (>= 98%%)\n",
				       sc->name, r->jain, 100 * r->util);
				missed++;
			}
			if (r->overshoot > 0.02) {
				printf("  target missed: %s overshoot %.2f%% of the limit > 2%%\n",
				       sc->name, 100 * r->overshoot);
				missed++;
			}
		}
	}
	if (check)
		printf("targets: %s (%d missed)\n", missed ? "MISSED" : "met", missed);
	return check && missed ? 3 : 0;
}
