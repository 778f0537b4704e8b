/* wu2011 and wu2012: the dirty throttling of Linux 3.2 and of 3.3 onwards (Wu Fengguang's
 * IO-less balance_dirty_pages)
 * for one backing device, written from the published design and mm/page-writeback.c of
 * 3.2: kernel units (4 KiB pages, jiffies at HZ=1000), bandwidth estimated every 200 ms
 * over a 3 s (4096-jiffy) period, cubic global position control around the setpoint,
 * linear bdi control line, balanced dirty ratelimit with step filtering, task pause =
 * pages / task_ratelimit capped by bdi_max_pause (<= MAX_PAUSE = 200 ms), and the
 * adaptive nr_dirtied_pause poll interval.  wu2012 adds 3.3's pause-time control (Wu
 * Fengguang's "writeback:" patches merged for 3.3, unchanged in its essentials since):
 * the think time since the last pause is deducted from the next (dirty_paused_when),
 * pauses shorter than bdi_min_pause are not slept but carried over, nr_dirtied_pause is
 * sized so that a pause lasts the target time (10 ms + 10 ms per doubling of concurrent
 * tasks), and bdi_max_pause depends only on how long the device needs to write what is
 * dirty (bdi_dirty / (bw / 8), at most 200 ms). */
#include "wb-private.h"

#define HZ 1000
#define MAX_PAUSE (HZ / 5)
#define BANDWIDTH_INTERVAL (HZ / 5)
#define RATELIMIT_CALC_SHIFT 10
#define INIT_BW (100ul << (20 - 12)) /* 100 MB/s in pages/s, as bdi_init() */
#define BW_PERIOD 4096ul             /* roundup_pow_of_two(3 * HZ) */

struct wu_state {
	uint64_t bw_time_stamp; /* jiffies */
	unsigned long dirtied_stamp, written_stamp;
	unsigned long write_bandwidth, avg_write_bandwidth;
	unsigned long dirty_ratelimit, balanced_dirty_ratelimit;
	unsigned long global_dirty_limit;
	uint64_t global_update_time;
	bool dirty_exceeded;
	bool v33; /* wu2012 */
};

static inline uint64_t jiffies_at(uint64_t now_ns)
{
	return now_ns / (WB_NSEC_PER_SEC / HZ);
}

static unsigned ilog2_ul(unsigned long v)
{
	return v ? 63u - (unsigned)__builtin_clzl(v) : 0;
}

static unsigned long clamp_ul(unsigned long v, unsigned long lo, unsigned long hi)
{
	return v < lo ? lo : (v > hi ? hi : v);
}

static unsigned long freerun_ceiling(unsigned long thresh, unsigned long bg_thresh)
{
	return (thresh + bg_thresh) / 2;
}

static unsigned long hard_limit(const struct wu_state *st, unsigned long thresh)
{
	return MAX(thresh, st->global_dirty_limit);
}

/* One device's thresholds in pages: the dirty limit and half of it as the background
 * threshold (the kernel defaults, dirty_ratio 20 / dirty_background_ratio 10). */
static void wu_limits(const struct nfskeys_wb_dev *dev, unsigned long *thresh, unsigned long *bg)
{
	*thresh = (unsigned long)(wb_load(&dev->limit) / WB_PAGE);
	*bg = *thresh / 2;
}

static long long pos_ratio(const struct wu_state *st, unsigned long thresh, unsigned long bg_thresh,
			   unsigned long dirty, unsigned long bdi_thresh, unsigned long bdi_dirty)
{
	unsigned long write_bw = st->avg_write_bandwidth;
	unsigned long freerun = freerun_ceiling(thresh, bg_thresh);
	unsigned long limit = hard_limit(st, thresh);
	unsigned long setpoint, bdi_setpoint, span, x_intercept;
	long long pos, x;
	unsigned long long xs;

	if (dirty >= limit)
		return 0;
	/* global control: 1 + ((setpoint - dirty) / (limit - setpoint))^3 */
	setpoint = (freerun + limit) / 2;
	x = ((long long)setpoint - (long long)dirty) * (1 << RATELIMIT_CALC_SHIFT) /
	    (long long)(limit - setpoint + 1);
	pos = x;
	pos = pos * x >> RATELIMIT_CALC_SHIFT;
	pos = pos * x >> RATELIMIT_CALC_SHIFT;
	pos += 1 << RATELIMIT_CALC_SHIFT;

	/* bdi control line: slope -1/(8 write_bw) through bdi_setpoint, floor 1/4 */
	if (bdi_thresh > thresh)
		bdi_thresh = thresh;
	bdi_thresh = MAX(bdi_thresh, (limit - dirty) / 8);
	xs = ((unsigned long long)bdi_thresh << 16) / (thresh + 1);
	bdi_setpoint = (unsigned long)(setpoint * xs >> 16);
	span = (unsigned long)((thresh - bdi_thresh + 8 * write_bw) * xs >> 16);
	x_intercept = bdi_setpoint + span;
	if (bdi_dirty < x_intercept - span / 4)
		pos = pos * (long long)(x_intercept - bdi_dirty) /
		      (long long)(x_intercept - bdi_setpoint + 1);
	else
		pos /= 4;

	/* bdi reserve area: keep the device from running dry */
	x_intercept = bdi_thresh / 2;
	if (bdi_dirty < x_intercept) {
		if (bdi_dirty > x_intercept / 8)
			pos = pos * (long long)x_intercept / (long long)bdi_dirty;
		else
			pos *= 8;
	}
	return pos;
}

static void update_write_bandwidth(struct wu_state *st, unsigned long elapsed,
				   unsigned long written)
{
	unsigned long avg = st->avg_write_bandwidth;
	unsigned long old = st->write_bandwidth;
	unsigned long long bw;

	/* bw = written/elapsed blended into the estimate with weight elapsed/period */
	bw = (unsigned long long)(written - st->written_stamp) * HZ;
	if (elapsed > BW_PERIOD) {
		bw /= elapsed;
		avg = (unsigned long)bw;
		goto out;
	}
	bw += (unsigned long long)old * (BW_PERIOD - elapsed);
	bw >>= 12; /* ilog2(BW_PERIOD) */
	/* second smoothing stage that filters out spikes */
	if (avg > old && old >= (unsigned long)bw)
		avg -= (avg - old) >> 3;
	if (avg < old && old <= (unsigned long)bw)
		avg += (old - avg) >> 3;
out:
	st->write_bandwidth = (unsigned long)bw;
	st->avg_write_bandwidth = avg;
}

/* global_dirty_limit follows a raised threshold at once and a lowered one slowly. */
static void update_dirty_limit(struct wu_state *st, unsigned long thresh, unsigned long dirty)
{
	unsigned long limit = st->global_dirty_limit;

	if (limit < thresh) {
		st->global_dirty_limit = thresh;
		return;
	}
	thresh = MAX(thresh, dirty);
	if (limit > thresh)
		st->global_dirty_limit = limit - ((limit - thresh) >> 5);
}

static void update_dirty_ratelimit(struct wu_state *st, unsigned long thresh,
				   unsigned long bg_thresh, unsigned long dirty,
				   unsigned long bdi_thresh, unsigned long bdi_dirty,
				   unsigned long dirtied, unsigned long elapsed)
{
	unsigned long freerun = freerun_ceiling(thresh, bg_thresh);
	unsigned long limit = hard_limit(st, thresh);
	unsigned long setpoint = (freerun + limit) / 2;
	unsigned long write_bw = st->avg_write_bandwidth;
	unsigned long dirty_ratelimit = st->dirty_ratelimit;
	unsigned long dirty_rate, task_ratelimit, balanced, step, x;
	long long pos;

	dirty_rate = (dirtied - st->dirtied_stamp) * HZ / elapsed;
	pos = pos_ratio(st, thresh, bg_thresh, dirty, bdi_thresh, bdi_dirty);
	task_ratelimit = (unsigned long)(((unsigned long long)dirty_ratelimit *
					  (unsigned long long)pos) >> RATELIMIT_CALC_SHIFT);
	task_ratelimit++;
	/* N tasks each at task_ratelimit give dirty_rate: write_bw/N is the balance */
	balanced = (unsigned long)((unsigned long long)task_ratelimit * write_bw /
				   (dirty_rate | 1));

	/* follow balanced only when the position error points the same way, in steps
	 * bounded by |task_ratelimit - dirty_ratelimit| */
	step = 0;
	if (dirty < setpoint) {
		x = MIN(st->balanced_dirty_ratelimit, MIN(balanced, task_ratelimit));
		if (dirty_ratelimit < x)
			step = x - dirty_ratelimit;
	} else {
		x = MAX(st->balanced_dirty_ratelimit, MAX(balanced, task_ratelimit));
		if (dirty_ratelimit > x)
			step = dirty_ratelimit - x;
	}
	{
		unsigned long sh = dirty_ratelimit / (2 * step + 1);

		step = sh >= 64 ? 0 : step >> sh;
	}
	step = (step + 7) / 8;
	if (dirty_ratelimit < balanced)
		dirty_ratelimit += step;
	else
		dirty_ratelimit -= step;
	st->dirty_ratelimit = MAX(dirty_ratelimit, 1ul);
	st->balanced_dirty_ratelimit = balanced;
}

static void update_bandwidth(struct nfskeys_wb_dev *dev, struct wu_state *st, uint64_t now_j,
			     unsigned long thresh, unsigned long bg_thresh, unsigned long dirty,
			     unsigned long bdi_thresh, unsigned long bdi_dirty, uint64_t start_time)
{
	unsigned long elapsed = (unsigned long)(now_j - st->bw_time_stamp);
	unsigned long dirtied, written;

	if (elapsed < BANDWIDTH_INTERVAL)
		return;
	dirtied = (unsigned long)(wb_load(&dev->dirtied) / WB_PAGE);
	written = (unsigned long)(wb_written(dev) / WB_PAGE);
	/* skip quiet periods (over 1 s idle before this throttle began) */
	if (elapsed > HZ && st->bw_time_stamp < start_time)
		goto snapshot;
	if (thresh) {
		if (now_j >= st->global_update_time + BANDWIDTH_INTERVAL) {
			update_dirty_limit(st, thresh, dirty);
			st->global_update_time = now_j;
		}
		update_dirty_ratelimit(st, thresh, bg_thresh, dirty, bdi_thresh, bdi_dirty,
				       dirtied, elapsed);
	}
	update_write_bandwidth(st, elapsed, written);
snapshot:
	st->dirtied_stamp = dirtied;
	st->written_stamp = written;
	st->bw_time_stamp = now_j;
}

static unsigned long dirty_poll_interval(unsigned long dirty, unsigned long thresh)
{
	if (thresh > dirty)
		return 1ul << (ilog2_ul(thresh - dirty) >> 1);
	return 1;
}

/* 3.2's bdi_max_pause: 20 ms for one task, +20 ms per doubling of concurrent tasks,
 * no longer than an eighth of the time to write out bdi_dirty, within [4, 200] ms. */
static long max_pause_of(const struct wu_state *st, unsigned long bdi_dirty)
{
	unsigned long bw = st->avg_write_bandwidth;
	unsigned long hi = ilog2_ul(bw), lo = ilog2_ul(st->dirty_ratelimit);
	unsigned long t = HZ / 50;

	if (hi > lo)
		t += (hi - lo) * (20 * HZ) / 1024;
	t = MIN(t, bdi_dirty * HZ / (8 * bw + 1));
	return (long)clamp_ul(t, 4, MAX_PAUSE);
}

static unsigned long roundup_pow2(unsigned long v)
{
	return v <= 1 ? 1 : 1ul << (ilog2_ul(v - 1) + 1);
}

/* 3.3's bdi_max_pause: an eighth of the time the device needs to write bdi_dirty. */
static long max_pause_33(const struct wu_state *st, unsigned long bdi_dirty)
{
	unsigned long t = bdi_dirty / (1 + st->avg_write_bandwidth / roundup_pow2(1 + HZ / 8));

	return (long)MIN(t + 1, (unsigned long)MAX_PAUSE);
}

/* 3.3's bdi_min_pause: the target pause (10 ms + 10 ms per doubling of concurrent
 * tasks) and the nr_dirtied_pause that makes a pause last about that long. */
static long min_pause_33(const struct wu_state *st, long max_pause, unsigned long task_ratelimit,
			 unsigned long dirty_ratelimit, long *ret_pages)
{
	long hi = (long)ilog2_ul(st->avg_write_bandwidth), lo = (long)ilog2_ul(dirty_ratelimit);
	long t = MAX(1, HZ / 100), pause, pages;
	const long poll_thresh = 128 >> (12 - 10); /* DIRTY_POLL_THRESH */

	if (hi > lo)
		t += (hi - lo) * (10 * HZ) / 1024;
	t = MIN(t, 1 + max_pause / 2);
	pages = (long)(dirty_ratelimit * (unsigned long)t / roundup_pow2(HZ));
	if (pages < poll_thresh) {
		t = max_pause;
		pages = (long)(dirty_ratelimit * (unsigned long)t / roundup_pow2(HZ));
		if (pages > poll_thresh) {
			pages = poll_thresh;
			t = (long)((unsigned long)HZ * (unsigned long)poll_thresh /
				   (dirty_ratelimit | 1));
		}
	}
	pause = (long)((unsigned long)HZ * (unsigned long)pages / (task_ratelimit + 1));
	if (pause > max_pause) {
		t = max_pause;
		pages = (long)(task_ratelimit * (unsigned long)t / roundup_pow2(HZ));
	}
	*ret_pages = MAX(pages, 1l);
	return pages >= poll_thresh ? 1 + t / 2 : t;
}

static void wu_init(struct nfskeys_wb_dev *dev)
{
	struct wu_state *st = dev->priv;

	st->bw_time_stamp = jiffies_at(dev->clock.now(dev->clock.userdata));
	st->write_bandwidth = st->avg_write_bandwidth = INIT_BW;
	st->dirty_ratelimit = st->balanced_dirty_ratelimit = INIT_BW;
	dev->shared_ratelimit = MAX(dev->limit / WB_PAGE / 32, 16ull) * WB_PAGE;
}

static void wu_task_init(struct nfskeys_wb_dev *dev, struct nfskeys_wb_task *task)
{
	task->ratelimit = (128 >> (12 - 10)) * WB_PAGE; /* INIT nr_dirtied_pause: 32 pages */
}

/* End of one balance_dirty_pages(): clear dirty_exceeded and pick nr_dirtied_pause. */
static int wu_finish(struct nfskeys_wb_dev *dev, struct nfskeys_wb_task *task, bool exceeded)
{
	struct wu_state *st = dev->priv;
	long pause = task->p.wu.pause, max_pause = task->p.wu.max_pause;
	unsigned long pages = (unsigned long)task->p.wu.pages_dirtied;
	unsigned long nr_pause = (unsigned long)(task->ratelimit / WB_PAGE);
	unsigned long rl = task->p.wu.dirty_ratelimit;

	if (!exceeded && st->dirty_exceeded) {
		st->dirty_exceeded = false;
		__atomic_store_n(&dev->ratelimit_cap, 0, __ATOMIC_RELAXED);
	}
	task->nr_dirtied = 0;
	if (pause == 0)
		nr_pause = dirty_poll_interval(task->p.wu.nr_dirty, task->p.wu.thresh);
	else if (pause <= max_pause / 4 && pages >= nr_pause)
		nr_pause = clamp_ul(rl * (unsigned long)(max_pause / 2) / HZ, pages + pages / 8,
				    pages * 4);
	else if (pause >= max_pause)
		nr_pause = 1 | clamp_ul(rl * (unsigned long)(max_pause / 2) / HZ, pages / 4,
					pages - pages / 8);
	task->ratelimit = MAX(nr_pause, 1ul) * WB_PAGE;
	return WB_GO;
}

/* One turn of the balance_dirty_pages() loop. */
static int wu_iter(struct nfskeys_wb_dev *dev, struct nfskeys_wb_task *task, uint64_t now,
		   uint64_t *ret_deadline)
{
	struct wu_state *st = dev->priv;
	uint64_t now_j = jiffies_at(now);
	unsigned long thresh, bg, freerun, nr_dirty, bdi_thresh, bdi_dirty, task_ratelimit;
	long pause, max_pause;
	long long pos;
	bool exceeded;

	nr_dirty = (unsigned long)(wb_dirty(dev) / WB_PAGE);
	wu_limits(dev, &thresh, &bg);
	/* writeback_set_ratelimit(): ratelimit_pages = thresh / (CPUs * 32), >= 16 */
	__atomic_store_n(&dev->shared_ratelimit, MAX(thresh / 32, 16ul) * WB_PAGE,
			 __ATOMIC_RELAXED);
	task->p.wu.nr_dirty = nr_dirty;
	task->p.wu.thresh = thresh;
	freerun = freerun_ceiling(thresh, bg);
	if (nr_dirty <= freerun) {
		/* the flusher keeps the bandwidth estimate current meanwhile */
		update_bandwidth(dev, st, now_j, 0, 0, 0, 0, 0, task->p.wu.start_time);
		return wu_finish(dev, task, false);
	}
	bdi_thresh = thresh; /* one device: its share of the dirty limit is all of it */
	bdi_dirty = nr_dirty;
	exceeded = bdi_dirty > bdi_thresh || nr_dirty > thresh;
	if (exceeded && !st->dirty_exceeded) {
		st->dirty_exceeded = true;
		__atomic_store_n(&dev->ratelimit_cap, (32 >> (12 - 10)) * WB_PAGE,
				 __ATOMIC_RELAXED);
	}
	update_bandwidth(dev, st, now_j, thresh, bg, nr_dirty, bdi_thresh, bdi_dirty,
			 task->p.wu.start_time);
	max_pause = max_pause_of(st, bdi_dirty);
	task->p.wu.max_pause = max_pause;
	task->p.wu.dirty_ratelimit = st->dirty_ratelimit;
	pos = pos_ratio(st, thresh, bg, nr_dirty, bdi_thresh, bdi_dirty);
	task_ratelimit = (unsigned long)(((unsigned long long)st->dirty_ratelimit *
					  (unsigned long long)pos) >> RATELIMIT_CALC_SHIFT);
	task->p.wu.task_ratelimit = task_ratelimit;
	if (task_ratelimit == 0) {
		pause = max_pause;
	} else {
		pause = (long)((unsigned long)HZ * (unsigned long)task->p.wu.pages_dirtied /
			       task_ratelimit);
		if (pause <= 0) {
			task->p.wu.pause = 1;
			return wu_finish(dev, task, exceeded);
		}
		pause = MIN(pause, max_pause);
	}
	task->p.wu.pause = pause;
	task->p.wu.freerun = exceeded; /* remembered for the finish after the sleep */
	*ret_deadline = now + (uint64_t)pause * (WB_NSEC_PER_SEC / HZ);
	return WB_WAIT;
}

/* One turn of 3.3's balance_dirty_pages() loop. */
static int wu33_iter(struct nfskeys_wb_dev *dev, struct nfskeys_wb_task *task, uint64_t now,
		     uint64_t *ret_deadline)
{
	struct wu_state *st = dev->priv;
	uint64_t now_j = jiffies_at(now);
	unsigned long thresh, bg, nr_dirty, task_ratelimit, rl;
	long pause, period, max_pause, min_pause, nr_pause, pages = task->p.wu.pages_dirtied;
	long long pos;
	bool exceeded;

	nr_dirty = (unsigned long)(wb_dirty(dev) / WB_PAGE);
	wu_limits(dev, &thresh, &bg);
	__atomic_store_n(&dev->shared_ratelimit, MAX(thresh / 32, 16ul) * WB_PAGE,
			 __ATOMIC_RELAXED);
	if (nr_dirty <= freerun_ceiling(thresh, bg)) {
		update_bandwidth(dev, st, now_j, 0, 0, 0, 0, 0, task->p.wu.start_time);
		task->p.wu.paused_when = now_j;
		task->nr_dirtied = 0;
		task->ratelimit = dirty_poll_interval(nr_dirty, thresh) * WB_PAGE;
		exceeded = false;
		goto go;
	}
	/* one device: its share of the limit is all of it, bdi_dirty is nr_dirty */
	exceeded = nr_dirty > thresh;
	if (exceeded && !st->dirty_exceeded) {
		st->dirty_exceeded = true;
		__atomic_store_n(&dev->ratelimit_cap, (32 >> (12 - 10)) * WB_PAGE,
				 __ATOMIC_RELAXED);
	}
	update_bandwidth(dev, st, now_j, thresh, bg, nr_dirty, thresh, nr_dirty,
			 task->p.wu.start_time);
	rl = st->dirty_ratelimit;
	pos = pos_ratio(st, thresh, bg, nr_dirty, thresh, nr_dirty);
	task_ratelimit = (unsigned long)(((unsigned long long)rl * (unsigned long long)pos) >>
					 RATELIMIT_CALC_SHIFT);
	max_pause = max_pause_33(st, nr_dirty);
	min_pause = min_pause_33(st, max_pause, task_ratelimit, rl, &nr_pause);
	task->p.wu.task_ratelimit = task_ratelimit;
	task->p.wu.freerun = exceeded;
	if (task_ratelimit == 0) {
		pause = max_pause;
		goto sleep;
	}
	period = (long)((unsigned long)HZ * (unsigned long)pages / task_ratelimit);
	pause = period;
	if (task->p.wu.paused_when)
		pause -= (long)(now_j - task->p.wu.paused_when);
	if (pause < min_pause) {
		/* too short to sleep: carried over to the next decision */
		if (pause < -HZ) {
			task->p.wu.paused_when = now_j;
			task->nr_dirtied = 0;
		} else if (period) {
			task->p.wu.paused_when += (uint64_t)period;
			task->nr_dirtied = 0;
		} else if ((long)(task->ratelimit / WB_PAGE) <= pages) {
			task->ratelimit += (uint64_t)pages * WB_PAGE;
		}
		goto go;
	}
	if (pause > max_pause) {
		now_j += (uint64_t)MIN(pause - max_pause, max_pause);
		pause = max_pause;
	}
sleep:
	task->p.wu.paused_when = now_j + (uint64_t)pause;
	task->p.wu.next_pause_pages = nr_pause;
	*ret_deadline = now + (uint64_t)pause * (WB_NSEC_PER_SEC / HZ);
	return WB_WAIT;
go:
	if (!exceeded && st->dirty_exceeded) {
		st->dirty_exceeded = false;
		__atomic_store_n(&dev->ratelimit_cap, 0, __ATOMIC_RELAXED);
	}
	return WB_GO;
}

static int wu_throttle(struct nfskeys_wb_dev *dev, struct nfskeys_wb_task *task, uint64_t now,
		       uint64_t *ret_deadline)
{
	task->p.wu.start_time = jiffies_at(now);
	task->p.wu.pages_dirtied = (long)MAX(task->nr_dirtied / WB_PAGE, 1ull);
	task->p.wu.pause = 0;
	task->p.wu.max_pause = MAX_PAUSE;
	task->p.wu.dirty_ratelimit = ((struct wu_state *)dev->priv)->dirty_ratelimit;
	if (((struct wu_state *)dev->priv)->v33)
		return wu33_iter(dev, task, now, ret_deadline);
	return wu_iter(dev, task, now, ret_deadline);
}

static int wu_poll(struct nfskeys_wb_dev *dev, struct nfskeys_wb_task *task, uint64_t now,
		   uint64_t *ret_deadline)
{
	struct wu_state *st = dev->priv;

	if (st->v33) {
		/* after the sleep: the poll interval bdi_min_pause chose */
		task->nr_dirtied = 0;
		task->ratelimit = (uint64_t)task->p.wu.next_pause_pages * WB_PAGE;
		if (!task->p.wu.task_ratelimit)
			return wu33_iter(dev, task, now, ret_deadline);
		if (!task->p.wu.freerun && st->dirty_exceeded) {
			st->dirty_exceeded = false;
			__atomic_store_n(&dev->ratelimit_cap, 0, __ATOMIC_RELAXED);
		}
		return WB_GO;
	}
	/* after the sleep: done, unless the task was fully blocked (task_ratelimit 0) */
	if (task->p.wu.task_ratelimit)
		return wu_finish(dev, task, task->p.wu.freerun);
	return wu_iter(dev, task, now, ret_deadline);
}

static uint64_t wu_bandwidth(struct nfskeys_wb_dev *dev)
{
	return (uint64_t)((struct wu_state *)dev->priv)->avg_write_bandwidth * WB_PAGE;
}

static uint64_t wu_setpoint(struct nfskeys_wb_dev *dev)
{
	struct wu_state *st = dev->priv;
	unsigned long thresh, bg;

	wu_limits(dev, &thresh, &bg);
	return (uint64_t)((freerun_ceiling(thresh, bg) + hard_limit(st, thresh)) / 2) * WB_PAGE;
}

const struct wb_policy wb_policy_wu2011 = {
	.name = "wu2011",
	.priv_size = sizeof(struct wu_state),
	.init = wu_init,
	.task_init = wu_task_init,
	.throttle = wu_throttle,
	.poll = wu_poll,
	.bandwidth = wu_bandwidth,
	.setpoint = wu_setpoint,
};

static void wu2012_init(struct nfskeys_wb_dev *dev)
{
	wu_init(dev);
	((struct wu_state *)dev->priv)->v33 = true;
}

const struct wb_policy wb_policy_wu2012 = {
	.name = "wu2012",
	.priv_size = sizeof(struct wu_state),
	.init = wu2012_init,
	.task_init = wu_task_init,
	.throttle = wu_throttle,
	.poll = wu_poll,
	.bandwidth = wu_bandwidth,
	.setpoint = wu_setpoint,
};
