/* kara2011: Jan Kara's IO-less throttling as posted in March 2011 (the "per-bdi
 * throttling" series, with its patch 5/5 that autotunes the distribution interval),
 * written from the published design.  A task whose dirtying crosses its own dirty limit
 * queues up and waits until as many bytes as it dirtied have been written.  The WRITE
 * completions since the last distribution are shared out equally among the waiters (a
 * satisfied waiter's leftover goes round again); the next distribution is due after
 * the time the device needs to write the smallest outstanding need once per waiter
 * (need x waiters / bandwidth), clamped to 20..250 ms, with the bandwidth estimated
 * over a 10 s window.  Below the limit lies the throttle zone of the per-task limits:
 * a task's limit is the device limit less up to an eighth of it in proportion to the
 * task's share of recent dirtying, so heavy dirtiers are held just below the limit
 * while light ones pass; a waiter in the zone is let go once it is under its own limit.
 * Poll interval: 32 pages, 8 while the limit is exceeded (the pre-3.2 ratelimits). */
#include "wb-private.h"

#define KARA_MIN_NAP (WB_NSEC_PER_SEC / 50) /* HZ/50 */
#define KARA_MAX_NAP (WB_NSEC_PER_SEC / 4)  /* HZ/4 */
#define KARA_WINDOW (10 * WB_NSEC_PER_SEC)  /* the throughput estimate's window */
#define KARA_TASK_FRACTION 8                /* the zone: limit - limit/8 .. limit */

struct kara_state {
	uint64_t next_tick;       /* 0: no distribution scheduled (nobody waits) */
	uint64_t written_start;   /* written at the last distribution */
	uint64_t start_time;      /* time of the last distribution */
	double bw;                /* bytes/s, starts at one page per second as bdi_init() */
	uint64_t nap;             /* the last interval chosen, for statistics and tests */
	bool exceeded;
	/* the tasks' shares of recent dirtying: halved every time the device dirties
	 * as much as its limit (the kernel's floating proportions over a period sized
	 * by the dirty threshold) */
	uint64_t recent_total;
	uint64_t period_dirtied;
	uint32_t epoch;
};

static void kara_init(struct nfskeys_wb_dev *dev)
{
	struct kara_state *st = dev->priv;

	st->bw = (double)WB_PAGE;
}

static void kara_task_init(struct nfskeys_wb_dev *dev, struct nfskeys_wb_task *task)
{
	struct kara_state *st = dev->priv;

	task->ratelimit = 32 * WB_PAGE;
	task->p.kara.epoch = st->epoch;
	task->p.kara.recent = 0;
}

static void set_exceeded(struct nfskeys_wb_dev *dev, struct kara_state *st, bool on)
{
	st->exceeded = on;
	__atomic_store_n(&dev->ratelimit_cap, on ? 8 * WB_PAGE : 0, __ATOMIC_RELAXED);
}

static uint64_t task_recent(const struct kara_state *st, struct nfskeys_wb_task *task)
{
	uint32_t age = st->epoch - task->p.kara.epoch;

	task->p.kara.recent = age >= 64 ? 0 : task->p.kara.recent >> age;
	task->p.kara.epoch = st->epoch;
	return task->p.kara.recent;
}

static void account_dirtied(struct nfskeys_wb_dev *dev, struct kara_state *st,
			    struct nfskeys_wb_task *task, uint64_t bytes)
{
	task_recent(st, task);
	task->p.kara.recent += bytes;
	st->recent_total += bytes;
	st->period_dirtied += bytes;
	if (st->period_dirtied >= wb_load(&dev->limit)) {
		st->period_dirtied = 0;
		st->recent_total /= 2;
		st->epoch++;
	}
}

/* The task's own limit: limit - limit/8 x its share of recent dirtying. */
static uint64_t task_limit(struct nfskeys_wb_dev *dev, struct nfskeys_wb_task *task)
{
	struct kara_state *st = dev->priv;
	uint64_t limit = wb_load(&dev->limit), recent = task_recent(st, task);
	double share = st->recent_total ? (double)recent / (double)st->recent_total : 0;

	if (share > 1)
		share = 1;
	return limit - (uint64_t)((double)(limit / KARA_TASK_FRACTION) * share);
}

static bool over_own_limit(struct nfskeys_wb_dev *dev, struct nfskeys_wb_task *task)
{
	uint64_t dirty = wb_dirty(dev), limit = wb_load(&dev->limit);

	if (dirty > limit)
		return true;
	if (dirty <= limit - limit / KARA_TASK_FRACTION)
		return false;
	return dirty > task_limit(dev, task);
}

/* need x waiters / bandwidth, within [HZ/50, HZ/4] */
static uint64_t kara_nap(const struct kara_state *st, uint64_t need, uint32_t waiters)
{
	double t = (double)need * waiters / st->bw * WB_NSEC_PER_SEC;

	if (t < KARA_MIN_NAP)
		return KARA_MIN_NAP;
	if (t > KARA_MAX_NAP)
		return KARA_MAX_NAP;
	return (uint64_t)t;
}

static void update_throughput(struct kara_state *st, uint64_t written, uint64_t now)
{
	uint64_t dt = now - st->start_time;
	double w = (double)(written - st->written_start);

	if (dt >= KARA_WINDOW) {
		st->bw = 1 + w * WB_NSEC_PER_SEC / (double)dt;
		return;
	}
	/* the rest of an imaginary 10 s window is assumed written at the old rate */
	st->bw = 1 + (st->bw * (double)(KARA_WINDOW - dt) + w * WB_NSEC_PER_SEC) / KARA_WINDOW;
}

/* The distribution, due at next_tick (the kernel's delayed work; here run by whoever
 * enters the device at or after that time: a waiter's poll or the completion hook). */
static void kara_tick(struct nfskeys_wb_dev *dev, uint64_t now)
{
	struct kara_state *st = dev->priv;
	uint64_t written, credit, min_need = UINT64_MAX, limit = wb_load(&dev->limit);
	struct nfskeys_wb_task *t, *next;

	if (!st->next_tick || now < st->next_tick)
		return;
	written = wb_written(dev);
	credit = written - st->written_start;
	update_throughput(st, written, now);
	st->written_start = written;
	st->start_time = now;
	st->next_tick = 0;

	if (wb_dirty(dev) <= limit - limit / KARA_TASK_FRACTION) {
		/* below every task's limit: everybody goes */
		while (dev->qhead)
			wb_release(dev, dev->qhead);
		set_exceeded(dev, st, false);
		return;
	}
	while (credit > 0 && dev->qlen > 0) {
		uint64_t share = credit / dev->qlen, given = 0;

		if (share == 0)
			share = 1;
		for (t = dev->qhead; t && credit > 0; t = next) {
			uint64_t want = t->need - t->credit, give = MIN(share, MIN(want, credit));

			next = t->qnext;
			t->credit += give;
			credit -= give;
			given += give;
			if (t->credit >= t->need)
				wb_release(dev, t);
		}
		if (given == 0)
			break;
	}
	/* in the zone: waiters now under their own limits go; the others set the nap */
	for (t = dev->qhead; t; t = next) {
		next = t->qnext;
		if (wb_dirty(dev) <= limit && !over_own_limit(dev, t))
			wb_release(dev, t);
		else
			min_need = MIN(min_need, t->need - t->credit);
	}
	if (wb_dirty(dev) <= limit)
		set_exceeded(dev, st, false);
	if (dev->qhead) {
		st->nap = kara_nap(st, min_need, dev->qlen);
		st->next_tick = now + st->nap;
	}
}

static int kara_throttle(struct nfskeys_wb_dev *dev, struct nfskeys_wb_task *task, uint64_t now,
			 uint64_t *ret_deadline)
{
	struct kara_state *st = dev->priv;

	kara_tick(dev, now);
	account_dirtied(dev, st, task, task->nr_dirtied);
	task->ratelimit = 32 * WB_PAGE;
	task->need = task->nr_dirtied;
	task->nr_dirtied = 0;
	if (!over_own_limit(dev, task))
		return WB_GO;
	if (!st->exceeded)
		set_exceeded(dev, st, true);
	task->credit = 0;
	wb_queue_push(dev, task);
	if (dev->qlen == 1) {
		/* the first waiter schedules the distribution */
		st->written_start = wb_written(dev);
		st->start_time = now;
		st->nap = kara_nap(st, task->need, 1);
		st->next_tick = now + st->nap;
	}
	*ret_deadline = st->next_tick;
	return WB_WAIT;
}

static int kara_poll(struct nfskeys_wb_dev *dev, struct nfskeys_wb_task *task, uint64_t now,
		     uint64_t *ret_deadline)
{
	struct kara_state *st = dev->priv;

	kara_tick(dev, now);
	if (task->release || !task->queued)
		return WB_GO;
	*ret_deadline = st->next_tick;
	return WB_WAIT;
}

static void kara_complete(struct nfskeys_wb_dev *dev, uint64_t now)
{
	kara_tick(dev, now);
}

static void kara_task_exit(struct nfskeys_wb_dev *dev, struct nfskeys_wb_task *task)
{
	struct kara_state *st = dev->priv;

	if (task->queued && dev->qlen == 1)
		st->next_tick = 0;
}

static uint64_t kara_bandwidth(struct nfskeys_wb_dev *dev)
{
	return (uint64_t)((struct kara_state *)dev->priv)->bw;
}

const struct wb_policy wb_policy_kara2011 = {
	.name = "kara2011",
	.priv_size = sizeof(struct kara_state),
	.init = kara_init,
	.task_init = kara_task_init,
	.throttle = kara_throttle,
	.poll = kara_poll,
	.complete = kara_complete,
	.task_exit = kara_task_exit,
	.bandwidth = kara_bandwidth,
};
