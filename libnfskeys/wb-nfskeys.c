/* nfskeys: our throttling policy.  The write bandwidth is estimated from the steady WRITE
 * stream (never from COMMIT bursts) and held through stalls; dirty data not yet written
 * is steered to a setpoint that leaves room for the unstable data the next COMMIT will
 * clean; the resulting dirty rate is handed out as tokens to a FIFO of waiters (equal
 * shares for equal writers), each waiter released the moment tokens and headroom allow
 * (completions re-run the release at once); a hard check keeps dirty + the chunks that
 * released tasks may still dirty under the limit; sleeps last at most 20 ms. */
#include "wb-private.h"

#define NK_TICK (100 * WB_NSEC_PER_MSEC)  /* estimation period */
#define NK_TAU (0.4)                      /* bandwidth EWMA time constant, s */
#define NK_SLOTS 100                      /* 10 s of unstable peaks */
#define NK_MAX_SLEEP (20 * WB_NSEC_PER_MSEC)
#define NK_TARGET_PAUSE (0.005)           /* chunk = share of the rate for 5 ms */
#define NK_MIN_CHUNK (4 * 1024ull)
#define NK_MAX_CHUNK (1024 * 1024ull)
#define NK_ACTIVE (500 * WB_NSEC_PER_MSEC)

struct nk_state {
	uint64_t tick_time;
	uint64_t written_at_tick;
	double bw;         /* bytes/s */
	double pending, pending_el; /* the last window's sample, applied one window late */
	bool stalled, prev_stalled;
	uint64_t peak[NK_SLOTS];
	unsigned slot;
	double tokens;
	uint64_t tokens_time;
	uint64_t inflight; /* headroom reserved for released tasks' next chunks */
	uint64_t queued_need;
	unsigned active;
	double rate;       /* last computed dirty rate, bytes/s */
};

static uint64_t unstable_reserve(const struct nfskeys_wb_dev *dev, const struct nk_state *st)
{
	uint64_t peak = 0, limit = wb_load(&dev->limit);

	if (!(dev->flags & NFSKEYS_WB_UNSTABLE))
		return 0;
	for (unsigned i = 0; i < NK_SLOTS; i++)
		peak = MAX(peak, st->peak[i]);
	peak = MAX(peak, wb_unstable(dev));
	return MIN(peak + peak / 4, limit / 2);
}

/* Where dirty-not-yet-written data should sit, and its ceiling. */
static void nk_targets(const struct nfskeys_wb_dev *dev, const struct nk_state *st, double *ret_s,
		       double *ret_top)
{
	double top = (double)(wb_load(&dev->limit) - unstable_reserve(dev, st));

	*ret_top = top;
	*ret_s = top - top / 16;
}

static void nk_estimate(struct nfskeys_wb_dev *dev, struct nk_state *st, uint64_t now)
{
	uint64_t written, el, dw, unst = wb_unstable(dev);
	unsigned active = 0;

	st->peak[st->slot] = MAX(st->peak[st->slot], unst);
	if (now < st->tick_time + NK_TICK)
		return;
	el = now - st->tick_time;
	written = wb_written(dev);
	dw = written - st->written_at_tick;
	/* A window is used one period late, and only when neither it nor its neighbours
	 * were stalled: the windows a stall begins or ends in are partial and would drag
	 * the estimate down. */
	if (dw > 0) {
		if (st->pending > 0 && !st->prev_stalled) {
			double t = st->pending_el, a = t / (t + NK_TAU);

			st->bw = st->bw > 0 ? st->bw + (st->pending - st->bw) * a : st->pending;
		}
		st->prev_stalled = st->stalled;
		st->pending = (double)dw * WB_NSEC_PER_SEC / (double)el;
		st->pending_el = (double)el / WB_NSEC_PER_SEC;
		st->stalled = false;
	} else if (wb_dirty(dev) > unst) {
		st->stalled = true; /* data waits but nothing completes: hold the estimate */
		st->pending = 0;
	}
	for (struct nfskeys_wb_task *t = dev->tasks; t; t = t->next)
		if (t->last_active + NK_ACTIVE >= now)
			active++;
	st->active = MAX(active, 1u);
	st->tick_time = now;
	st->written_at_tick = written;
	st->slot = (st->slot + 1) % NK_SLOTS;
	st->peak[st->slot] = unst;
}

/* The dirty rate to allow now: bandwidth scaled by a linear position term around the
 * setpoint, plus a fill term so an idle or unknown device still ramps up. */
static double nk_rate(struct nfskeys_wb_dev *dev, struct nk_state *st)
{
	double s, top, x = (double)(wb_dirty(dev) - MIN(wb_dirty(dev), wb_unstable(dev)));
	double pos, rate;

	nk_targets(dev, st, &s, &top);
	/* 1 at the setpoint, 2 when empty; above it 1 - u^3 with u from 0 at the setpoint
	 * to 1 at top: flat near the setpoint (a small bandwidth error moves the balance
	 * point only a little), steep near top, and quick to recover when a stall ends */
	if (x <= s) {
		pos = 1.0 + (s - x) / s;
	} else {
		double u = MIN((x - s) / (top - s), 1.0);

		pos = 1.0 - u * u * u;
	}
	rate = st->bw * pos;
	if (x < s)
		rate += (s - x) / 0.5;
	st->rate = rate;
	return rate;
}

static void nk_refill(struct nfskeys_wb_dev *dev, struct nk_state *st, uint64_t now)
{
	double rate = nk_rate(dev, st), cap;

	if (now > st->tokens_time)
		st->tokens += rate * (double)(now - st->tokens_time) / WB_NSEC_PER_SEC;
	st->tokens_time = now;
	/* no banking while nobody waits: at most 5 ms worth or one large chunk */
	cap = MAX(rate * 0.005, (double)NK_MAX_CHUNK);
	if (!dev->qhead && st->tokens > cap)
		st->tokens = cap;
}

static uint64_t nk_chunk(const struct nk_state *st)
{
	/* the task's share of the current rate for one target pause: pauses stay short
	 * when the rate drops, the chunks shrink instead */
	double share = MAX(st->rate, 1e5) / MAX(st->active, 1u) * NK_TARGET_PAUSE;
	uint64_t c = (uint64_t)share & ~(NK_MIN_CHUNK - 1);

	return c < NK_MIN_CHUNK ? NK_MIN_CHUNK : (c > NK_MAX_CHUNK ? NK_MAX_CHUNK : c);
}

static bool nk_headroom(struct nfskeys_wb_dev *dev, struct nk_state *st, uint64_t next)
{
	return wb_dirty(dev) + st->inflight + next <= wb_load(&dev->limit);
}

/* Below the free-run line, half the ceiling (the kernel's is halfway between its
 * background and dirty thresholds), nothing is paced: an idle device takes a burst that
 * fits at memory speed, and pacing starts only once dirty data has built up. */
static bool nk_freerun(const struct nfskeys_wb_dev *dev, const struct nk_state *st,
		       uint64_t next)
{
	double s, top;

	nk_targets(dev, st, &s, &top);
	return (double)(wb_dirty(dev) + st->inflight + next) <= top / 2;
}

/* Let a task go: charge its tokens (unless free-running) and reserve headroom for what it
 * dirties next. */
static void nk_admit(struct nfskeys_wb_dev *dev, struct nk_state *st, struct nfskeys_wb_task *t,
		     uint64_t next, bool charge)
{
	if (charge)
		st->tokens -= (double)t->need;
	t->ratelimit = nk_chunk(st);
	t->p.nk.reserved = next;
	st->inflight += next;
	t->nr_dirtied = 0;
}

static uint64_t nk_next(const struct nk_state *st, const struct nfskeys_wb_task *t)
{
	return MAX(nk_chunk(st), t->need);
}

static void nk_release_waiters(struct nfskeys_wb_dev *dev, struct nk_state *st)
{
	while (dev->qhead) {
		struct nfskeys_wb_task *t = dev->qhead;
		uint64_t next = nk_next(st, t);

		if (st->tokens < (double)t->need || !nk_headroom(dev, st, next))
			break;
		st->queued_need -= t->need;
		nk_admit(dev, st, t, next, true);
		wb_release(dev, t);
	}
}

static uint64_t nk_deadline(struct nk_state *st, uint64_t now)
{
	double missing = (double)st->queued_need - st->tokens;
	uint64_t wait = NK_MAX_SLEEP;

	if (missing <= 0)
		wait = WB_NSEC_PER_MSEC;
	else if (st->rate > 0)
		wait = MIN((uint64_t)(missing / st->rate * WB_NSEC_PER_SEC) + 1, NK_MAX_SLEEP);
	return now + wait;
}

static void nk_init(struct nfskeys_wb_dev *dev)
{
	struct nk_state *st = dev->priv;
	uint64_t now = dev->clock.now(dev->clock.userdata);

	st->tick_time = st->tokens_time = now;
}

static void nk_task_init(struct nfskeys_wb_dev *dev, struct nfskeys_wb_task *task)
{
	struct nk_state *st = dev->priv;

	st->active++; /* a new task counts as active until the next estimate */
	task->ratelimit = nk_chunk(st);
}

static void nk_unreserve(struct nk_state *st, struct nfskeys_wb_task *task)
{
	st->inflight -= MIN(st->inflight, task->p.nk.reserved);
	task->p.nk.reserved = 0;
}

static int nk_throttle(struct nfskeys_wb_dev *dev, struct nfskeys_wb_task *task, uint64_t now,
		       uint64_t *ret_deadline)
{
	struct nk_state *st = dev->priv;
	uint64_t next;

	nk_unreserve(st, task);
	nk_estimate(dev, st, now);
	nk_refill(dev, st, now);
	task->need = task->nr_dirtied;
	nk_release_waiters(dev, st);
	next = nk_next(st, task);
	if (!dev->qhead && nk_freerun(dev, st, next)) {
		nk_admit(dev, st, task, next, false);
		return WB_GO;
	}
	if (!dev->qhead && st->tokens >= (double)task->need && nk_headroom(dev, st, next)) {
		nk_admit(dev, st, task, next, true);
		return WB_GO;
	}
	wb_queue_push(dev, task);
	st->queued_need += task->need;
	*ret_deadline = nk_deadline(st, now);
	return WB_WAIT;
}

static int nk_poll(struct nfskeys_wb_dev *dev, struct nfskeys_wb_task *task, uint64_t now,
		   uint64_t *ret_deadline)
{
	struct nk_state *st = dev->priv;

	nk_estimate(dev, st, now);
	nk_refill(dev, st, now);
	nk_release_waiters(dev, st);
	if (task->release || !task->queued)
		return WB_GO;
	*ret_deadline = nk_deadline(st, now);
	return WB_WAIT;
}

static void nk_complete(struct nfskeys_wb_dev *dev, uint64_t now)
{
	struct nk_state *st = dev->priv;

	nk_estimate(dev, st, now);
	nk_refill(dev, st, now);
	nk_release_waiters(dev, st);
}

static void nk_task_exit(struct nfskeys_wb_dev *dev, struct nfskeys_wb_task *task)
{
	struct nk_state *st = dev->priv;

	nk_unreserve(st, task);
	if (st->active > 1)
		st->active--;
	if (task->queued)
		st->queued_need -= MIN(st->queued_need, task->need);
}

static uint64_t nk_bandwidth(struct nfskeys_wb_dev *dev)
{
	return (uint64_t)((struct nk_state *)dev->priv)->bw;
}

static uint64_t nk_setpoint(struct nfskeys_wb_dev *dev)
{
	struct nk_state *st = dev->priv;
	double s, top;

	nk_targets(dev, st, &s, &top);
	return (uint64_t)s + wb_unstable(dev);
}

const struct wb_policy wb_policy_nfskeys = {
	.name = "nfskeys",
	.priv_size = sizeof(struct nk_state),
	.init = nk_init,
	.task_init = nk_task_init,
	.throttle = nk_throttle,
	.poll = nk_poll,
	.complete = nk_complete,
	.task_exit = nk_task_exit,
	.bandwidth = nk_bandwidth,
	.setpoint = nk_setpoint,
};
