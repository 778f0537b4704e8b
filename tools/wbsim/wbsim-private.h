/* What wbsim's parts share: the scenario, the recorded trace, the event heap, the
 * simulation's state and its results, and the calls across wbsim.c (scenarios, main,
 * statistics, goals), wbsim-sim.c, wbsim-trace.c and wbsim-output.c. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nfskeys.h"

#define NS 1000000000ull
#define MS 1000000ull
#define MiB (1024.0 * 1024.0)
#define MAX_PLOT_TASKS 8

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

enum metric {
	M_CALL_P99, M_BYTE_P50, M_BYTE_P99, M_MAX, M_PAUSED, M_UTIL, M_CV, M_WAKEUPS,
	M_PEAK_DIRTY, M_PEAK_UNSTABLE, M_OVER, M_LIGHT, M_JAIN, M_BURST, M_RECOV, M_HOOK_NS,
	M_COMMITS, M_COMMIT_MIB, M_COMMIT_MS, _M_MAX,
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


/* wbsim-trace.c: load a recorded completion trace (0, or -errno with the line named). */
int wbsim_trace_load(const char *path, struct trace *tr);
/* wbsim-sim.c: run one scenario under one policy; wbsim_free() releases what it kept. */
void wbsim_run(const struct scenario *sc, int policy, uint64_t seed, uint64_t wsize,
	       const struct trace *trace, struct sim *s, struct result *res);
void wbsim_free(struct sim *s);
/* wbsim-output.c: the CSV time series of a run, and a scenario's gnuplot figure. */
int wbsim_write_csv(const char *dir, const struct sim *s);
int wbsim_write_plot(const char *dir, const char *fmt, const struct scenario *sc,
		     const int *pols, int npols);
