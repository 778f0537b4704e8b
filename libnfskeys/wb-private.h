/* Writeback internals shared by the device code (wb-dev.c) and the three policies
 * (wb-kara.c, wb-wu.c, wb-nfskeys.c).  Every policy hook runs with dev->lock held and
 * reads time only from the device clock, so one policy runs in real or simulated time. */
#pragma once

#include <pthread.h>
#include <stdint.h>

#include "libnfskeys-private.h"

#define WB_NSEC_PER_SEC 1000000000ull
#define WB_NSEC_PER_MSEC 1000000ull
#define WB_PAGE 4096ull

enum { WB_GO = 0, WB_WAIT = 1 };

struct nfskeys_wb_task {
	struct nfskeys_wb_dev *dev;
	void *userdata;
	struct nfskeys_wb_task *prev, *next; /* dev->tasks */
	struct nfskeys_wb_task *qnext;       /* the policy's wait queue */
	bool queued;
	bool waiting;  /* between a WAIT answer and the GO */
	bool release;  /* the policy has let it go; the next poll answers GO */
	bool woken;    /* real-time mode: wake() was called */
	uint64_t nr_dirtied; /* bytes since the last decision */
	uint64_t ratelimit;  /* bytes before the next decision */
	uint64_t need;       /* bytes charged for the current wait */
	uint64_t credit;     /* bytes granted so far in the current wait */
	uint64_t wait_start;
	uint64_t last_active;
	pthread_cond_t cond;
	union {
		struct {
			uint64_t start_time; /* jiffies */
			long pages_dirtied;
			long pause;
			long max_pause;
			unsigned long dirty_ratelimit;
			unsigned long task_ratelimit;
			unsigned long nr_dirty, thresh; /* for dirty_poll_interval */
			bool freerun;
			/* 3.3 */
			uint64_t paused_when; /* jiffies, 0 = never */
			long next_pause_pages; /* nr_dirtied_pause after the sleep */
		} wu;
		struct {
			uint64_t recent; /* bytes dirtied lately (halved each epoch) */
			uint32_t epoch;
		} kara;
		struct {
			uint64_t reserved; /* headroom held for its next chunk */
		} nk;
	} p;
};

struct wb_policy;

#define WB_SHARDS 8

struct wb_shard {
	uint64_t written, committed, ncompletions, latency_sum;
} __attribute__((aligned(64)));

struct nfskeys_wb_dev {
	char *name;
	int policy_id;
	const struct wb_policy *policy;
	unsigned flags;
	struct nfskeys_wb_clock clock;
	bool real_time;
	pthread_mutex_t lock;
	/* written without the lock: by the throttle call, and by the hook into the
	 * calling thread's shard (so two threads completing do not share a cache line) */
	uint64_t dirtied;
	struct wb_shard shard[WB_SHARDS];
	uint32_t nwaiters;
	uint64_t ratelimit_cap; /* 0 or a device-wide cap on task ratelimits */
	/* 0, or bytes the device may accumulate over all tasks before the task that
	 * crosses it must decide (Linux's per-CPU bdp_ratelimits, one CPU) */
	uint64_t shared_ratelimit;
	uint64_t shared_count;
	uint64_t limit;
	struct nfskeys_wb_task *tasks;
	uint32_t ntasks;
	struct nfskeys_wb_task *qhead, *qtail;
	uint32_t qlen;
	void *priv;
};

struct wb_policy {
	const char *name;
	size_t priv_size;
	void (*init)(struct nfskeys_wb_dev *dev);
	void (*task_init)(struct nfskeys_wb_dev *dev, struct nfskeys_wb_task *task);
	/* The task reached its ratelimit: WB_GO, or WB_WAIT until *ret_deadline. */
	int (*throttle)(struct nfskeys_wb_dev *dev, struct nfskeys_wb_task *task, uint64_t now,
			uint64_t *ret_deadline);
	/* A waiting task's deadline passed or it was woken. */
	int (*poll)(struct nfskeys_wb_dev *dev, struct nfskeys_wb_task *task, uint64_t now,
		    uint64_t *ret_deadline);
	/* Completions arrived while tasks wait (NULL: not needed). */
	void (*complete)(struct nfskeys_wb_dev *dev, uint64_t now);
	void (*task_exit)(struct nfskeys_wb_dev *dev, struct nfskeys_wb_task *task);
	uint64_t (*bandwidth)(struct nfskeys_wb_dev *dev); /* bytes/s */
	uint64_t (*setpoint)(struct nfskeys_wb_dev *dev);  /* bytes of total dirty */
};

extern const struct wb_policy wb_policy_kara2011;
extern const struct wb_policy wb_policy_wu2011;
extern const struct wb_policy wb_policy_wu2012;
extern const struct wb_policy wb_policy_nfskeys;

static inline uint64_t wb_load(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static inline uint64_t wb_shard_sum(const struct nfskeys_wb_dev *dev, size_t offset)
{
	uint64_t sum = 0;

	for (unsigned i = 0; i < WB_SHARDS; i++)
		sum += wb_load((const uint64_t *)((const char *)&dev->shard[i] + offset));
	return sum;
}

#define wb_written(dev) wb_shard_sum(dev, offsetof(struct wb_shard, written))
#define wb_committed(dev) wb_shard_sum(dev, offsetof(struct wb_shard, committed))

/* Cleaned bytes: COMMITs on an unstable device, WRITEs otherwise. */
static inline uint64_t wb_cleaned(const struct nfskeys_wb_dev *dev)
{
	return (dev->flags & NFSKEYS_WB_UNSTABLE) ? wb_committed(dev) : wb_written(dev);
}

/* Dirty in the kernel's sense: dirty + writeback + unstable. */
static inline uint64_t wb_dirty(const struct nfskeys_wb_dev *dev)
{
	uint64_t d = wb_load(&dev->dirtied), c = wb_cleaned(dev);

	return d > c ? d - c : 0;
}

static inline uint64_t wb_unstable(const struct nfskeys_wb_dev *dev)
{
	uint64_t w, c;

	if (!(dev->flags & NFSKEYS_WB_UNSTABLE))
		return 0;
	w = wb_written(dev);
	c = wb_committed(dev);
	return w > c ? w - c : 0;
}

/* Wait queue helpers (FIFO). */
void wb_queue_push(struct nfskeys_wb_dev *dev, struct nfskeys_wb_task *task);
void wb_queue_remove(struct nfskeys_wb_dev *dev, struct nfskeys_wb_task *task);
/* Let a waiting task go: mark it and wake it. */
void wb_release(struct nfskeys_wb_dev *dev, struct nfskeys_wb_task *task);
