/* kara2011: Jan Kara's IO-less throttling as presented at LSF/MM 2011.  A task that finds
 * the device over its dirty limit queues up and waits until as many bytes as it dirtied
 * have completed; every 100 ms the WRITE completions of the last period are shared out
 * equally among the waiters (a waiter's leftover goes round again), satisfied waiters
 * are woken, and everyone is woken once the device is back under the limit.  Poll
 * interval: 32 pages, 8 while the limit is exceeded (the pre-3.2 ratelimits). */
#include "wb-private.h"

#define KARA_PERIOD (100 * WB_NSEC_PER_MSEC)

struct kara_state {
	uint64_t next_tick;
	uint64_t written_at_tick;
	bool exceeded;
	uint64_t bw; /* bytes/s over the last period, for statistics only */
};

static void kara_init(struct nfskeys_wb_dev *dev)
{
	struct kara_state *st = dev->priv;

	st->next_tick = dev->clock.now(dev->clock.userdata) + KARA_PERIOD;
}

static void kara_task_init(struct nfskeys_wb_dev *dev, struct nfskeys_wb_task *task)
{
	task->ratelimit = 32 * WB_PAGE;
}

static void set_exceeded(struct nfskeys_wb_dev *dev, struct kara_state *st, bool on)
{
	st->exceeded = on;
	__atomic_store_n(&dev->ratelimit_cap, on ? 8 * WB_PAGE : 0, __ATOMIC_RELAXED);
}

/* The periodic distribution, run lazily by whoever enters the device after a tick. */
static void kara_tick(struct nfskeys_wb_dev *dev, uint64_t now)
{
	struct kara_state *st = dev->priv;
	uint64_t written, credit;

	if (now < st->next_tick)
		return;
	written = wb_written(dev);
	credit = written - st->written_at_tick;
	st->bw = credit * WB_NSEC_PER_SEC / (KARA_PERIOD + (now - st->next_tick));
	st->written_at_tick = written;
	st->next_tick += KARA_PERIOD * (1 + (now - st->next_tick) / KARA_PERIOD);

	while (credit > 0 && dev->qlen > 0) {
		uint64_t share = credit / dev->qlen, given = 0;
		struct nfskeys_wb_task *t, *next;

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
	if (wb_dirty(dev) <= wb_load(&dev->limit)) {
		while (dev->qhead)
			wb_release(dev, dev->qhead);
		set_exceeded(dev, st, false);
	}
}

static int kara_throttle(struct nfskeys_wb_dev *dev, struct nfskeys_wb_task *task, uint64_t now,
			 uint64_t *ret_deadline)
{
	struct kara_state *st = dev->priv;

	kara_tick(dev, now);
	task->ratelimit = 32 * WB_PAGE;
	task->need = task->nr_dirtied;
	task->nr_dirtied = 0;
	if (wb_dirty(dev) <= wb_load(&dev->limit))
		return WB_GO;
	if (!st->exceeded)
		set_exceeded(dev, st, true);
	task->credit = 0;
	wb_queue_push(dev, task);
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

static uint64_t kara_bandwidth(struct nfskeys_wb_dev *dev)
{
	return ((struct kara_state *)dev->priv)->bw;
}

const struct wb_policy wb_policy_kara2011 = {
	.name = "kara2011",
	.priv_size = sizeof(struct kara_state),
	.init = kara_init,
	.task_init = kara_task_init,
	.throttle = kara_throttle,
	.poll = kara_poll,
	.bandwidth = kara_bandwidth,
};
