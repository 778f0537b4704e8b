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
#include <time.h>

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
	uint64_t burst;          /* >0: the heavy writers write this much once, then stop */
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
	{ "nfs-burst", "10 writers, NFS: WRITEs in flight, grouped replies, client COMMITs",
	  DEV_NFS, 10, 3, 10, 1e9, 0, 0, 0, 0, 0, true },
	{ "stall", "10 writers, NFS, server stall of 2 s at 5 s",
	  DEV_NFS, 12, 3, 10, 1e9, 0, 0, 5, 0, 0, true },
	{ "halve", "10 writers, dirty limit halved at 5 s",
	  DEV_DISK, 10, 2, 10, 1e9, 0, 0, 0, 5, 0, false },
	{ "short", "2 writers + short-lived ones (10/s, 1-8 MiB)",
	  DEV_DISK, 8, 2, 2, 1e9, 0, 0, 0, 0, 10, false },
	{ "burst", "idle NFS device, one 64 MiB burst at 1 GB/s (under the limit)",
	  DEV_NFS, 2, 0, 1, 1e9, 0, 0, 0, 0, 0, true, 64ull << 20 },
};

/* The trace replay's writers: equal heavy writers on the recorded device. */
static struct scenario trace_scenario = {
	"replay", "10 writers on a device replaying a recorded completion trace",
	DEV_NFS, 0, 0, 10, 1e9, 0, 0, 0, 0, 0, false, 0,
};

#define DEV_BW (100e6)          /* bytes/s: the disk, and the NFS server's network intake */
#define DISK_REQ (256 * 1024)   /* request size */
#define NFS_WSIZE (1024 * 1024) /* WRITE size */
#define NFS_SLOTS 16            /* WRITEs in flight (RPC slots) */
#define SERVER_DISK_BW (200e6)  /* how fast the server makes its cache stable (COMMIT) */
#define COMMIT_BASE (1 * MS)    /* COMMIT latency with nothing to flush */
#define REPLY_GAP_MIN (1 * MS)  /* the server sends held replies in groups, every 1-20 ms */
#define REPLY_GAP_MAX (20 * MS)
#define STALL_LEN (2.0)
#define LIMIT (256ull << 20)
#define MEM_BW (1e9)            /* a writer's own speed: "memory speed" */

/* ---------------------------------------------------------------- traces */

/* A completion trace recorded from the kernel (the sampler's format):
 *   # nfskeys-wbtrace 1
 *   T_US OP OPS BYTES RTT_US EXEC_US ERRORS
 * OP is WRITE or COMMIT, the rest are deltas of the mount's per-op counters since the
 * previous sample; T_US is monotonic.  Replayed, a WRITE sample is what the server took
 * in during that interval (written as far as the writers have dirtied data) and a
 * COMMIT sample makes the unstable data stable. */
enum { TR_WRITE, TR_COMMIT };

struct trace_rec {
	uint64_t t; /* ns */
	int op;
	uint64_t ops, bytes, rtt_us, exec_us, errors;
};

struct trace {
	struct trace_rec *rec;
	size_t n;
};

/* An unsigned decimal ending at a space or the end of the field: no sign, no
 * leading zeros beyond "0", no overflow. */
static const char *parse_u64(const char *p, uint64_t *ret)
{
	uint64_t v = 0;
	const char *start = p;

	if (*p < '0' || *p > '9')
		return NULL;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
			return NULL;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	if (*start == '0' && p - start > 1)
		return NULL;
	*ret = v;
	return p;
}

static int trace_parse_line(const char *line, struct trace_rec *r, uint64_t prev_t,
			    const char **ret_problem)
{
	static const char *const names[] = { "T_US", "OP", "OPS", "BYTES", "RTT_US", "EXEC_US",
					     "ERRORS" };
	static char problem[160];
	uint64_t v[7] = { 0 };
	const char *p = line, *q;

	if (!*line) {
		*ret_problem = "an empty line";
		return -EINVAL;
	}
	for (int f = 0; f < 7; f++) {
		if (f > 0) {
			if (*p != ' ') {
				if (*p)
					snprintf(problem, sizeof(problem), "%s: not a number",
						 names[f - 1]);
				else
					snprintf(problem, sizeof(problem),
						 "%d fields, want 7 (T_US OP OPS BYTES RTT_US "
						 "EXEC_US ERRORS)", f);
				*ret_problem = problem;
				return -EINVAL;
			}
			p++;
			if (*p == ' ') {
				*ret_problem = "two spaces in a row (fields are separated by one)";
				return -EINVAL;
			}
		}
		if (f == 1) {
			if (strncmp(p, "WRITE", 5) == 0 && (p[5] == ' ' || !p[5])) {
				r->op = TR_WRITE;
				p += 5;
			} else if (strncmp(p, "COMMIT", 6) == 0 && (p[6] == ' ' || !p[6])) {
				r->op = TR_COMMIT;
				p += 6;
			} else {
				*ret_problem = "OP: not WRITE or COMMIT";
				return -EINVAL;
			}
			continue;
		}
		q = parse_u64(p, &v[f]);
		if (!q || (*q && *q != ' ')) {
			bool big = !q && *p >= '0' && *p <= '9' && strspn(p, "0123456789") > 19;

			snprintf(problem, sizeof(problem), "%s: %s", names[f],
				 big ? "out of range" : "not an unsigned decimal number");
			*ret_problem = problem;
			return -EINVAL;
		}
		p = q;
	}
	if (*p) {
		*ret_problem = "more than 7 fields (or a trailing space)";
		return -EINVAL;
	}
	if (v[0] > UINT64_MAX / 1000) {
		*ret_problem = "T_US: out of range";
		return -EINVAL;
	}
	if (v[0] * 1000 < prev_t) {
		*ret_problem = "T_US goes backwards";
		return -EINVAL;
	}
	if (v[6] > v[2]) {
		*ret_problem = "ERRORS exceeds OPS";
		return -EINVAL;
	}
	if (v[2] == 0 && (v[3] || v[4] || v[5])) {
		*ret_problem = "BYTES, RTT_US or EXEC_US without OPS";
		return -EINVAL;
	}
	r->t = v[0] * 1000;
	r->ops = v[2];
	r->bytes = v[3];
	r->rtt_us = v[4];
	r->exec_us = v[5];
	r->errors = v[6];
	return 0;
}

/* Load a trace; on error print "wbsim: FILE:LINE: problem" and return -EINVAL. */
static int trace_load(const char *path, struct trace *tr)
{
	FILE *f = fopen(path, "re");
	char *line = NULL;
	size_t cap = 0, lineno = 0;
	ssize_t len;
	int r = 0;

	memset(tr, 0, sizeof(*tr));
	if (!f) {
		fprintf(stderr, "wbsim: %s: %s\n", path, strerror(errno));
		return -errno;
	}
	while ((len = getline(&line, &cap, f)) >= 0) {
		const char *problem = NULL;
		struct trace_rec rec;

		lineno++;
		if (len > 0 && line[len - 1] == '\n')
			line[--len] = '\0';
		if ((size_t)len != strlen(line)) {
			problem = "a NUL byte";
		} else if (lineno == 1) {
			if (!streq(line, "# nfskeys-wbtrace 1"))
				problem = "not a trace: the first line must be '# nfskeys-wbtrace 1'";
		} else if (line[0] == '#') {
			continue;
		} else if (trace_parse_line(line, &rec, tr->n ? tr->rec[tr->n - 1].t : 0,
					    &problem) == 0) {
			struct trace_rec *n = realloc(tr->rec, (tr->n + 1) * sizeof(*n));

			if (!n) {
				r = -ENOMEM;
				fprintf(stderr, "wbsim: %s: out of memory\n", path);
				break;
			}
			tr->rec = n;
			tr->rec[tr->n++] = rec;
		}
		if (problem) {
			fprintf(stderr, "wbsim: %s:%zu: %s\n", path, lineno, problem);
			r = -EINVAL;
			break;
		}
	}
	if (!r && lineno == 0) {
		fprintf(stderr, "wbsim: %s:1: empty file, not a trace\n", path);
		r = -EINVAL;
	}
	if (!r && tr->n == 0) {
		fprintf(stderr, "wbsim: %s: no samples\n", path);
		r = -EINVAL;
	}
	free(line);
	fclose(f);
	if (r < 0) {
		free(tr->rec);
		tr->rec = NULL;
		tr->n = 0;
	}
	return r;
}

/* ---------------------------------------------------------------- events */

enum ev_type { EV_WRITE, EV_POLL, EV_DEV_DONE, EV_NFS_SERVED, EV_REPLY_FLUSH, EV_COMMIT_DONE,
	       EV_SPAWN, EV_LIMIT, EV_SAMPLE, EV_TRACE };

struct event {
	uint64_t t, seq;
	int type;
	void *p;
	uint64_t arg, arg2;
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
	double bin_sum, bin_sumsq; /* its 100 ms rates in the window */
	uint64_t chunk; /* bytes dirtied since its last pause (in the window) */
	int nbins;
	uint64_t wait_start, wait_bytes;
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

/* Pauses as writers feel them: a log histogram (16 buckets per doubling, so a
 * percentile is exact to within 4.5%) of every throttle call, each counted once (per
 * call) and weighted by the bytes it wrote (per byte). */
#define HBUCKETS (1 + 40 * 16)

struct hist {
	double w[HBUCKETS];
	double total;
};

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

enum metric {
	M_CALL_P99, M_BYTE_P50, M_BYTE_P99, M_MAX, M_PAUSED, M_UTIL, M_CV, M_WAKEUPS,
	M_PEAK_DIRTY, M_PEAK_UNSTABLE, M_OVER, M_LIGHT, M_JAIN, M_BURST, M_RECOV, M_HOOK_NS,
	M_COMMITS, M_COMMIT_MIB, M_COMMIT_MS, _M_MAX,
};

static const struct {
	const char *name, *head, *unit;
	int width, prec;
} metrics[_M_MAX] = {
	[M_CALL_P99] = { "call_p99_ms", "call p99", "ms", 9, 2 },
	[M_BYTE_P50] = { "byte_p50_ms", "byte p50", "ms", 9, 1 },
	[M_BYTE_P99] = { "byte_p99_ms", "byte p99", "ms", 9, 1 },
	[M_MAX] = { "max_pause_ms", "max ms", "ms", 8, 0 },
	[M_PAUSED] = { "paused_pct", "paused%", "%", 8, 1 },
	[M_UTIL] = { "throughput_pct", "tput%", "%", 7, 1 },
	[M_CV] = { "rate_cv", "rate cv", "", 7, 2 },
	[M_WAKEUPS] = { "wakeups_per_s", "wake/s", "/s", 7, 0 },
	[M_PEAK_DIRTY] = { "peak_dirty_mib", "dirty^", "MiB", 7, 0 },
	[M_PEAK_UNSTABLE] = { "peak_unstable_mib", "unst^", "MiB", 6, 0 },
	[M_OVER] = { "overshoot_pct", "over%", "%", 6, 2 },
	[M_LIGHT] = { "light_ratio", "light", "", 6, 2 },
	[M_JAIN] = { "jain", "jain", "", 6, 3 },
	[M_BURST] = { "burst_ms", "burst ms", "ms", 9, 0 },
	[M_RECOV] = { "recovery_ms", "recov ms", "ms", 9, 0 },
	[M_HOOK_NS] = { "hook_ns_waiters", "hook ns", "ns", 8, 0 },
	/* JSON only: the COMMITs the client sent (whole run) */
	[M_COMMITS] = { "commits", "commits", "", 7, 0 },
	[M_COMMIT_MIB] = { "commit_mean_mib", "commit MiB", "MiB", 9, 2 },
	[M_COMMIT_MS] = { "commit_mean_ms", "commit ms", "ms", 9, 2 },
};

struct result {
	double m[_M_MAX];
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
	unsigned inflight;        /* NFS WRITEs sent, not yet answered */
	uint64_t inflight_bytes;
	uint64_t link_free;       /* when the server's intake is free */
	struct held { uint64_t bytes, submit; } *held; /* served, reply not yet sent */
	size_t nheld, held_cap;
	bool commit_inflight;
	/* trace replay */
	const struct trace *trace;
	size_t trace_pos;
	uint64_t trace_capacity; /* bytes the trace wrote in the window */
	uint64_t stall_start, stall_end;
	uint64_t limit;
	/* limit drop: what would remain if nothing were dirtied after it */
	bool dropped;
	uint64_t drop_dirty, drop_cleaned;
	/* metrics */
	struct hist per_call, per_byte;
	uint64_t pause_max, paused_ns, wakeups;
	uint64_t peak_dirty, peak_unstable;
	uint64_t burst_done;
	unsigned nwaiting;
	double hook_ns;
	uint64_t hook_calls;
	uint64_t commits, commit_bytes, commit_ns;
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

static void sim_run(const struct scenario *sc, int policy, uint64_t seed, uint64_t wsize,
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

static void sim_free(struct sim *s)
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
		"  -p, --policy LIST    comma-separated policies\n"
		"                       (default: kara2011,wu2011,wu2012,nfskeys)\n"
		"  -q, --quick          the quick subset of scenarios\n"
		"      --seed N         the first random seed (default 1)\n"
		"      --seeds N        run N seeds (N, N+1, ...) and give means with 95%% CIs\n"
		"                       (default 1, at most 100)\n"
		"      --wsize BYTES    bytes per write() of a simulated task (default 4096)\n"
		"      --trace FILE     replay a completion trace recorded from the kernel\n"
		"                       (10 writers on the recorded device; instead of scenarios)\n"
		"      --json           print the results as JSON\n"
		"      --csv DIR        write CSV time series into DIR (the first seed)\n"
		"      --plot FMT       with --csv: also draw DIR/SCENARIO.FMT with gnuplot (png, svg)\n"
		"      --check          exit 3 unless the nfskeys goals hold\n"
		"  -l, --list           list the scenarios\n"
		"  -h, --help           show this help\n"
		"  -V, --version        show the version\n"
		"\n"
		"Exit status: 0 success, 1 error (e.g. a malformed trace), 2 usage error,\n"
		"3 a --check goal missed.\n");
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

static bool in_list_ids(const int *ids, int n, int id)
{
	for (int i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
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

/* ---------------------------------------------------------------- statistics */

/* Two-sided 95% Student t quantiles for n - 1 degrees of freedom. */
static double t95(int n)
{
	static const double t[] = { 0, 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306,
				    2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110,
				    2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
				    2.052, 2.048, 2.045, 2.042 };
	int df = n - 1;

	if (df < 1)
		return 0;
	return df < (int)ARRAY_SIZE(t) ? t[df] : 1.96;
}

struct summary {
	double mean[_M_MAX], ci[_M_MAX];
};

static void summarize(const struct result *r, int n, struct summary *sum)
{
	for (int m = 0; m < _M_MAX; m++) {
		double mean = 0, var = 0;
		int k = 0;

		for (int i = 0; i < n; i++)
			if (!isnan(r[i].m[m])) {
				mean += r[i].m[m];
				k++;
			}
		if (!k) {
			sum->mean[m] = sum->ci[m] = NAN;
			continue;
		}
		mean /= k;
		for (int i = 0; i < n; i++)
			if (!isnan(r[i].m[m]))
				var += (r[i].m[m] - mean) * (r[i].m[m] - mean);
		sum->mean[m] = mean;
		sum->ci[m] = k > 1 && isfinite(mean) ? t95(k) * sqrt(var / (k - 1)) / sqrt(k) : 0;
	}
}

/* the text table's columns, in order */
static const int columns[] = { M_CALL_P99, M_BYTE_P50, M_BYTE_P99, M_MAX, M_PAUSED, M_UTIL,
			       M_CV, M_WAKEUPS, M_PEAK_DIRTY, M_PEAK_UNSTABLE, M_OVER, M_LIGHT,
			       M_BURST, M_RECOV, M_HOOK_NS };

static void print_value(double v, int width, int prec)
{
	if (isnan(v))
		printf(" %*s", width, "-");
	else
		printf(" %*.*f", width, prec, v);
}

static void json_num(double v, int prec)
{
	if (isfinite(v))
		printf("%.*f", prec + 2, v);
	else
		printf("null");
}

/* ---------------------------------------------------------------- goals */

#define GOAL_P99_MS 50.0
#define GOAL_TPUT 95.0
#define GOAL_OVER 2.0
#define GOAL_JAIN 0.99
#define BURST_SLACK 1.10

struct goal_ctx {
	bool json;
	bool first;
	int missed;
	FILE *out; /* JSON: the goals array, printed after the results */
};

static void goal(struct goal_ctx *g, const char *sc, const char *what, double value, double bound,
		 bool le)
{
	bool met = le ? value <= bound : value >= bound;

	if (!met)
		g->missed++;
	if (g->json) {
		fprintf(g->out, "%s\n    {\"scenario\": \"%s\", \"goal\": \"%s\", \"value\": %.3f, "
			"\"bound\": %.3f, \"met\": %s}",
			g->first ? "" : ",", sc, what, isfinite(value) ? value : -1.0, bound,
			met ? "true" : "false");
		g->first = false;
	} else {
		printf("  goal %-10s %-34s %9.2f %s %7.2f  %s\n", sc, what, value, le ? "<=" : ">=",
		       bound, met ? "met" : "MISSED");
	}
}

/* The absolute goals for nfskeys (means over the seeds). */
static void check_goals(struct goal_ctx *g, const struct scenario *sc, const struct summary *m)
{
	bool stall_or_cut = sc->stall_at > 0 || sc->halve_at > 0;

	if (sc->burst) {
		double ideal = (double)sc->burst / MEM_BW * 1e3;

		goal(g, sc->name, "burst finishes at memory speed (ms)", m->mean[M_BURST],
		     ideal * BURST_SLACK + 1, true);
		return;
	}
	if (!stall_or_cut) {
		goal(g, sc->name, "writers' p99 pause per call (ms)", m->mean[M_CALL_P99],
		     GOAL_P99_MS, true);
		goal(g, sc->name, "writers' p99 pause per byte (ms)", m->mean[M_BYTE_P99],
		     GOAL_P99_MS, true);
	}
	goal(g, sc->name, "throughput (% of the device)", m->mean[M_UTIL], GOAL_TPUT, false);
	goal(g, sc->name, "overshoot (% of the limit)", m->mean[M_OVER], GOAL_OVER, true);
	if (sc->heavy > 1 && !sc->medium && !sc->spawn_rate && !stall_or_cut)
		goal(g, sc->name, "fairness (Jain)", m->mean[M_JAIN], GOAL_JAIN, false);
}

/* ---------------------------------------------------------------- main */

int main(int argc, char *argv[])
{
	enum { OPT_SEED = 0x100, OPT_SEEDS, OPT_WSIZE, OPT_CSV, OPT_PLOT, OPT_CHECK, OPT_JSON,
	       OPT_TRACE };
	static const struct option opts[] = {
		{ "scenario", required_argument, NULL, 's' },
		{ "policy", required_argument, NULL, 'p' },
		{ "quick", no_argument, NULL, 'q' },
		{ "seed", required_argument, NULL, OPT_SEED },
		{ "seeds", required_argument, NULL, OPT_SEEDS },
		{ "wsize", required_argument, NULL, OPT_WSIZE },
		{ "csv", required_argument, NULL, OPT_CSV },
		{ "plot", required_argument, NULL, OPT_PLOT },
		{ "check", no_argument, NULL, OPT_CHECK },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "trace", required_argument, NULL, OPT_TRACE },
		{ "list", no_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{}
	};
	const char *scen = NULL, *pol = "kara2011,wu2011,wu2012,nfskeys", *csv = NULL;
	const char *plot = NULL, *trace_path = NULL;
	bool quick = false, check = false, json = false, first_row = true;
	uint64_t seed = 1, wsize = 4096, nseeds = 1;
	int pols[_NFSKEYS_WB_POLICY_MAX], npols = 0, c;
	struct goal_ctx goals = { .first = true };
	struct trace trace = { 0 };
	struct result *res;
	char *end, *goals_buf = NULL;
	size_t goals_len = 0;

	while ((c = getopt_long(argc, argv, "s:p:qlhV", opts, NULL)) != -1) {
		switch (c) {
		case 's': scen = optarg; break;
		case 'p': pol = optarg; break;
		case 'q': quick = true; break;
		case OPT_SEED:
			errno = 0;
			seed = strtoull(optarg, &end, 0);
			if (errno || *end || !*optarg || *optarg == '-') {
				fprintf(stderr, "wbsim: --seed: '%s' is not a number\n", optarg);
				return 2;
			}
			break;
		case OPT_SEEDS:
			errno = 0;
			nseeds = strtoull(optarg, &end, 10);
			if (errno || *end || !*optarg || nseeds < 1 || nseeds > 100) {
				fprintf(stderr, "wbsim: --seeds: '%s' is not a number from 1 to 100\n",
					optarg);
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
		case OPT_JSON: json = true; break;
		case OPT_TRACE: trace_path = optarg; break;
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
	if (trace_path && (scen || quick || check)) {
		fprintf(stderr, "wbsim: --trace replaces the scenarios (no --scenario, --quick, --check)\n");
		return 2;
	}
	if (trace_path) {
		if (trace_load(trace_path, &trace) < 0)
			return 1;
		trace_scenario.duration = (double)trace.rec[trace.n - 1].t / NS + 0.01;
		trace_scenario.warmup = MIN(1.0, trace_scenario.duration / 4);
		/* the sample grid is 10 ms: keep the warm-up on it */
		trace_scenario.warmup = floor(trace_scenario.warmup * 100) / 100;
	}
	if (csv && mkdir(csv, 0755) < 0 && errno != EEXIST) {
		fprintf(stderr, "wbsim: %s: %s\n", csv, strerror(errno));
		free(trace.rec);
		return 1;
	}
	for (const char *p = pol; *p;) {
		size_t len = strcspn(p, ",");
		char name[64];
		int id;

		snprintf(name, sizeof(name), "%.*s", (int)MIN(len, sizeof(name) - 1), p);
		id = nfskeys_wb_policy_from_name(name);
		if (id >= 0 && npols < _NFSKEYS_WB_POLICY_MAX && !in_list_ids(pols, npols, id))
			pols[npols++] = id;
		p += len + (p[len] == ',');
	}
	res = calloc(nseeds, sizeof(*res));
	if (!res)
		return 1;
	goals.json = json;
	if (check && json) {
		goals.out = open_memstream(&goals_buf, &goals_len);
		if (!goals.out)
			return 1;
	}

	if (json) {
		printf("{\n  \"seeds\": %" PRIu64 ", \"first_seed\": %" PRIu64 ", \"wsize\": %" PRIu64
		       ",\n  \"results\": [",
		       nseeds, seed, wsize);
	} else {
		printf("%-10s %-8s", "scenario", "policy");
		for (size_t k = 0; k < ARRAY_SIZE(columns); k++)
			printf(" %*s", metrics[columns[k]].width, metrics[columns[k]].head);
		putchar('\n');
	}
	for (size_t si = 0; si < ARRAY_SIZE(scenarios) + 1; si++) {
		const struct scenario *sc =
			si < ARRAY_SIZE(scenarios) ? &scenarios[si] : &trace_scenario;
		struct summary nk = { .mean = { [M_OVER] = NAN } };
		bool want;

		if (trace_path)
			want = sc == &trace_scenario;
		else
			want = sc != &trace_scenario &&
			       (scen ? in_list(scen, sc->name) : (!quick || sc->quick));
		if (!want)
			continue;
		for (int i = 0; i < npols; i++) {
			struct summary sum;

			for (uint64_t k = 0; k < nseeds; k++) {
				struct sim s;

				sim_run(sc, pols[i], (seed + k) * 1000003 + si, wsize,
					trace_path ? &trace : NULL, &s, &res[k]);
				if (csv && k == 0 && write_csv(csv, &s) < 0) {
					fprintf(stderr, "wbsim: cannot write CSV into %s\n", csv);
					sim_free(&s);
					free(res);
					free(trace.rec);
					return 1;
				}
				sim_free(&s);
			}
			summarize(res, (int)nseeds, &sum);
			if (json) {
				printf("%s\n    {\"scenario\": \"%s\", \"policy\": \"%s\", \"metrics\": {",
				       first_row ? "" : ",", sc->name, nfskeys_wb_policy_to_name(pols[i]));
				for (int m = 0; m < _M_MAX; m++) {
					printf("%s\"%s\": {\"mean\": ", m ? ", " : "", metrics[m].name);
					json_num(sum.mean[m], metrics[m].prec);
					printf(", \"ci95\": ");
					json_num(sum.ci[m], metrics[m].prec);
					printf("}");
				}
				printf("}}");
				first_row = false;
			} else {
				printf("%-10s %-8s", sc->name, nfskeys_wb_policy_to_name(pols[i]));
				for (size_t k = 0; k < ARRAY_SIZE(columns); k++)
					print_value(sum.mean[columns[k]], metrics[columns[k]].width,
						    metrics[columns[k]].prec);
				putchar('\n');
				if (nseeds > 1) {
					printf("%-10s %-8s", "", "  +-95%");
					for (size_t k = 0; k < ARRAY_SIZE(columns); k++)
						print_value(sum.ci[columns[k]],
							    metrics[columns[k]].width,
							    metrics[columns[k]].prec);
					putchar('\n');
				}
			}
			if (pols[i] == NFSKEYS_WB_NFSKEYS)
				nk = sum;
		}
		if (check && isfinite(nk.mean[M_OVER]))
			check_goals(&goals, sc, &nk);
		if (plot) {
			int r = write_plot(csv, plot, sc, pols, npols);

			if (r < 0)
				fprintf(stderr, "wbsim: gnuplot failed for %s: %s\n", sc->name, strerror(-r));
		}
	}
	if (json)
		printf("\n  ]");
	if (check && json) {
		fclose(goals.out);
		printf(",\n  \"goals\": [%s\n  ]", goals_buf);
		free(goals_buf);
	}
	if (json)
		printf(",\n  \"goals_missed\": %d\n}\n", goals.missed);
	else if (check)
		printf("goals: %s (%d missed)\n", goals.missed ? "MISSED" : "met", goals.missed);
	free(res);
	free(trace.rec);
	return check && goals.missed ? 3 : 0;
}
