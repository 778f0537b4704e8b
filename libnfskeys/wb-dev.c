/* Writeback devices and tasks: the lock-free completion hook, the throttle call with
 * its lock-free fast path, real-time sleeping, and the per-context device registry
 * configured from [Writeback].  The policies (wb-*.c) make the decisions. */
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <time.h>

#include "wb-private.h"

static const struct wb_policy *const policies[_NFSKEYS_WB_POLICY_MAX] = {
	[NFSKEYS_WB_KARA2011] = &wb_policy_kara2011,
	[NFSKEYS_WB_WU2011] = &wb_policy_wu2011,
	[NFSKEYS_WB_NFSKEYS] = &wb_policy_nfskeys,
	[NFSKEYS_WB_WU2012] = &wb_policy_wu2012,
};

#define WB_MIN_LIMIT (1024ull * 1024)
#define WB_MAX_LIMIT (1ull << 40)

_public_ int nfskeys_wb_policy_from_name(const char *name)
{
	if (!name)
		return -EINVAL;
	for (int i = 0; i < _NFSKEYS_WB_POLICY_MAX; i++)
		if (strcaseeq(name, policies[i]->name))
			return i;
	return -EINVAL;
}

_public_ const char *nfskeys_wb_policy_to_name(int policy)
{
	if (policy < 0 || policy >= _NFSKEYS_WB_POLICY_MAX)
		return NULL;
	return policies[policy]->name;
}

static uint64_t clock_monotonic(void *userdata)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * WB_NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

static void wake_cond(void *userdata, void *task_userdata)
{
	struct nfskeys_wb_task *task = task_userdata;

	task->woken = true;
	pthread_cond_signal(&task->cond);
}

_public_ int nfskeys_wb_dev_new(const char *name, int policy, uint64_t dirty_limit,
				unsigned flags, const struct nfskeys_wb_clock *clock,
				struct nfskeys_wb_dev **ret_dev)
{
	struct nfskeys_wb_dev *dev;

	if (!name || !*name || !ret_dev || policy < 0 || policy >= _NFSKEYS_WB_POLICY_MAX ||
	    dirty_limit < WB_MIN_LIMIT || (flags & ~NFSKEYS_WB_UNSTABLE))
		return -EINVAL;
	if (clock && !clock->now)
		return -EINVAL;
	dev = aligned_alloc(_Alignof(struct nfskeys_wb_dev), sizeof(*dev));
	if (!dev)
		return -ENOMEM;
	memset(dev, 0, sizeof(*dev));
	dev->name = strdup(name);
	dev->policy = policies[policy];
	dev->priv = dev->policy->priv_size ? calloc(1, dev->policy->priv_size) : NULL;
	if (!dev->name || (dev->policy->priv_size && !dev->priv)) {
		free(dev->priv);
		free(dev->name);
		free(dev);
		return -ENOMEM;
	}
	dev->policy_id = policy;
	dev->flags = flags;
	dev->limit = dirty_limit;
	if (clock) {
		dev->clock = *clock;
	} else {
		dev->clock.now = clock_monotonic;
		dev->real_time = true;
	}
	pthread_mutex_init(&dev->lock, NULL);
	if (dev->policy->init)
		dev->policy->init(dev);
	*ret_dev = dev;
	return 0;
}

_public_ struct nfskeys_wb_dev *nfskeys_wb_dev_free(struct nfskeys_wb_dev *dev)
{
	if (!dev)
		return NULL;
	while (dev->tasks)
		nfskeys_wb_task_free(dev->tasks);
	pthread_mutex_destroy(&dev->lock);
	free(dev->priv);
	free(dev->name);
	free(dev);
	return NULL;
}

_public_ const char *nfskeys_wb_dev_get_name(const struct nfskeys_wb_dev *dev)
{
	return dev ? dev->name : NULL;
}

_public_ int nfskeys_wb_dev_get_policy(const struct nfskeys_wb_dev *dev)
{
	return dev ? dev->policy_id : -EINVAL;
}

_public_ int nfskeys_wb_dev_set_limit(struct nfskeys_wb_dev *dev, uint64_t dirty_limit)
{
	if (!dev || dirty_limit < WB_MIN_LIMIT)
		return -EINVAL;
	pthread_mutex_lock(&dev->lock);
	__atomic_store_n(&dev->limit, dirty_limit, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&dev->lock);
	return 0;
}

_public_ uint64_t nfskeys_wb_dev_get_limit(const struct nfskeys_wb_dev *dev)
{
	return dev ? wb_load(&dev->limit) : 0;
}

_public_ int nfskeys_wb_dev_get_stats(struct nfskeys_wb_dev *dev, struct nfskeys_wb_stats *ret)
{
	struct nfskeys_wb_stats s = { 0 };
	uint64_t n;

	if (!dev || !ret)
		return -EINVAL;
	pthread_mutex_lock(&dev->lock);
	s.limit = dev->limit;
	s.dirty = wb_dirty(dev);
	s.unstable = wb_unstable(dev);
	s.dirtied = wb_load(&dev->dirtied);
	s.written = wb_written(dev);
	s.committed = wb_committed(dev);
	n = wb_shard_sum(dev, offsetof(struct wb_shard, ncompletions));
	s.completions = n;
	s.latency_avg = n ? wb_shard_sum(dev, offsetof(struct wb_shard, latency_sum)) / n : 0;
	s.bandwidth = dev->policy->bandwidth ? dev->policy->bandwidth(dev) : 0;
	s.setpoint = dev->policy->setpoint ? dev->policy->setpoint(dev) : dev->limit;
	s.waiters = __atomic_load_n(&dev->nwaiters, __ATOMIC_RELAXED);
	s.tasks = dev->ntasks;
	pthread_mutex_unlock(&dev->lock);
	*ret = s;
	return 0;
}

/* Each thread adds into its own shard of the counters, picked once per thread. */
static unsigned shard_next;
static __thread unsigned shard_mine = UINT32_MAX;

static inline struct wb_shard *my_shard(struct nfskeys_wb_dev *dev)
{
	if (_unlikely_(shard_mine == UINT32_MAX))
		shard_mine = __atomic_fetch_add(&shard_next, 1, __ATOMIC_RELAXED) % WB_SHARDS;
	return &dev->shard[shard_mine];
}

_public_ void nfskeys_wb_complete(struct nfskeys_wb_dev *dev, uint64_t bytes,
				  enum nfskeys_wb_kind kind, uint64_t latency_ns)
{
	struct wb_shard *sh;

	if (_unlikely_(!dev))
		return;
	sh = my_shard(dev);
	__atomic_fetch_add(kind == NFSKEYS_WB_COMMIT ? &sh->committed : &sh->written, bytes,
			   __ATOMIC_RELAXED);
	__atomic_fetch_add(&sh->ncompletions, 1, __ATOMIC_RELAXED);
	if (latency_ns)
		__atomic_fetch_add(&sh->latency_sum, latency_ns, __ATOMIC_RELAXED);
	/* Waiters only: the uncontended hook stays two atomic adds and a load. */
	if (__atomic_load_n(&dev->nwaiters, __ATOMIC_ACQUIRE) == 0 || !dev->policy->complete)
		return;
	pthread_mutex_lock(&dev->lock);
	dev->policy->complete(dev, dev->clock.now(dev->clock.userdata));
	pthread_mutex_unlock(&dev->lock);
}

/* ---------------------------------------------------------------- tasks */

_public_ int nfskeys_wb_task_new(struct nfskeys_wb_dev *dev, void *userdata,
				 struct nfskeys_wb_task **ret_task)
{
	struct nfskeys_wb_task *task;
	pthread_condattr_t attr;

	if (!dev || !ret_task)
		return -EINVAL;
	task = calloc(1, sizeof(*task));
	if (!task)
		return -ENOMEM;
	task->dev = dev;
	task->userdata = userdata;
	task->ratelimit = 32 * WB_PAGE;
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&task->cond, &attr);
	pthread_condattr_destroy(&attr);

	pthread_mutex_lock(&dev->lock);
	task->last_active = dev->clock.now(dev->clock.userdata);
	task->next = dev->tasks;
	if (dev->tasks)
		dev->tasks->prev = task;
	dev->tasks = task;
	dev->ntasks++;
	if (dev->policy->task_init)
		dev->policy->task_init(dev, task);
	pthread_mutex_unlock(&dev->lock);
	*ret_task = task;
	return 0;
}

static void task_stop_waiting(struct nfskeys_wb_dev *dev, struct nfskeys_wb_task *task)
{
	if (!task->waiting)
		return;
	task->waiting = false;
	task->release = false;
	__atomic_fetch_sub(&dev->nwaiters, 1, __ATOMIC_RELEASE);
}

_public_ struct nfskeys_wb_task *nfskeys_wb_task_free(struct nfskeys_wb_task *task)
{
	struct nfskeys_wb_dev *dev;

	if (!task)
		return NULL;
	dev = task->dev;
	pthread_mutex_lock(&dev->lock);
	if (dev->policy->task_exit)
		dev->policy->task_exit(dev, task);
	if (task->queued)
		wb_queue_remove(dev, task);
	task_stop_waiting(dev, task);
	if (task->prev)
		task->prev->next = task->next;
	else
		dev->tasks = task->next;
	if (task->next)
		task->next->prev = task->prev;
	dev->ntasks--;
	pthread_mutex_unlock(&dev->lock);
	pthread_cond_destroy(&task->cond);
	free(task);
	return NULL;
}

_public_ uint64_t nfskeys_wb_task_get_ratelimit(const struct nfskeys_wb_task *task)
{
	uint64_t cap;

	if (!task)
		return 0;
	cap = wb_load(&task->dev->ratelimit_cap);
	return cap && cap < task->ratelimit ? cap : task->ratelimit;
}

void wb_queue_push(struct nfskeys_wb_dev *dev, struct nfskeys_wb_task *task)
{
	if (task->queued)
		return;
	task->qnext = NULL;
	if (dev->qtail)
		dev->qtail->qnext = task;
	else
		dev->qhead = task;
	dev->qtail = task;
	task->queued = true;
	dev->qlen++;
}

void wb_queue_remove(struct nfskeys_wb_dev *dev, struct nfskeys_wb_task *task)
{
	struct nfskeys_wb_task *prev = NULL;

	if (!task->queued)
		return;
	for (struct nfskeys_wb_task *t = dev->qhead; t; prev = t, t = t->qnext) {
		if (t != task)
			continue;
		if (prev)
			prev->qnext = t->qnext;
		else
			dev->qhead = t->qnext;
		if (dev->qtail == t)
			dev->qtail = prev;
		break;
	}
	task->qnext = NULL;
	task->queued = false;
	dev->qlen--;
}

void wb_release(struct nfskeys_wb_dev *dev, struct nfskeys_wb_task *task)
{
	if (task->queued)
		wb_queue_remove(dev, task);
	task->release = true;
	if (dev->real_time)
		wake_cond(NULL, task);
	else if (dev->clock.wake)
		dev->clock.wake(dev->clock.userdata, task->userdata);
}

/* Sleep on the task's condition variable until the deadline or a wake-up. */
static void sleep_until(struct nfskeys_wb_dev *dev, struct nfskeys_wb_task *task,
			uint64_t deadline)
{
	struct timespec ts = {
		.tv_sec = (time_t)(deadline / WB_NSEC_PER_SEC),
		.tv_nsec = (long)(deadline % WB_NSEC_PER_SEC),
	};

	while (!task->woken && !task->release) {
		if (pthread_cond_timedwait(&task->cond, &dev->lock, &ts) == ETIMEDOUT)
			break;
	}
	task->woken = false;
}

static int decide(struct nfskeys_wb_dev *dev, struct nfskeys_wb_task *task, bool first,
		  uint64_t now, uint64_t *ret_deadline)
{
	int r;

	if (!first && task->release) {
		task_stop_waiting(dev, task);
		return WB_GO;
	}
	r = first ? dev->policy->throttle(dev, task, now, ret_deadline)
		  : dev->policy->poll(dev, task, now, ret_deadline);
	if (r == WB_GO) {
		if (task->queued)
			wb_queue_remove(dev, task);
		task_stop_waiting(dev, task);
		return WB_GO;
	}
	if (!task->waiting) {
		task->waiting = true;
		__atomic_fetch_add(&dev->nwaiters, 1, __ATOMIC_RELEASE);
	}
	if (*ret_deadline < now)
		*ret_deadline = now;
	return WB_WAIT;
}

_public_ int nfskeys_wb_throttle(struct nfskeys_wb_task *task, uint64_t bytes, unsigned flags,
				 uint64_t *ret_pause_ns)
{
	struct nfskeys_wb_dev *dev;
	uint64_t now, deadline = 0, start;
	int r;

	if (!task || (flags & ~NFSKEYS_WB_NOSLEEP))
		return -EINVAL;
	dev = task->dev;
	if (!(flags & NFSKEYS_WB_NOSLEEP) && !dev->real_time)
		return -EOPNOTSUPP; /* a simulated clock cannot sleep */
	if (task->waiting)
		return -EBUSY;
	__atomic_fetch_add(&dev->dirtied, bytes, __ATOMIC_RELAXED);
	task->nr_dirtied += bytes;
	if (task->nr_dirtied < nfskeys_wb_task_get_ratelimit(task)) {
		uint64_t shared = wb_load(&dev->shared_ratelimit);

		if (!shared ||
		    __atomic_add_fetch(&dev->shared_count, bytes, __ATOMIC_RELAXED) < shared) {
			if (ret_pause_ns)
				*ret_pause_ns = 0;
			return 0;
		}
	}
	if (wb_load(&dev->shared_ratelimit))
		__atomic_store_n(&dev->shared_count, 0, __ATOMIC_RELAXED);

	pthread_mutex_lock(&dev->lock);
	start = now = dev->clock.now(dev->clock.userdata);
	task->wait_start = now;
	task->last_active = now;
	task->release = false;
	task->woken = false;
	r = decide(dev, task, true, now, &deadline);
	if (r == WB_WAIT && (flags & NFSKEYS_WB_NOSLEEP)) {
		pthread_mutex_unlock(&dev->lock);
		if (ret_pause_ns)
			*ret_pause_ns = deadline - now;
		return 1;
	}
	while (r == WB_WAIT) {
		sleep_until(dev, task, deadline);
		now = dev->clock.now(dev->clock.userdata);
		r = decide(dev, task, false, now, &deadline);
	}
	pthread_mutex_unlock(&dev->lock);
	if (ret_pause_ns)
		*ret_pause_ns = now - start;
	return 0;
}

_public_ int nfskeys_wb_task_poll(struct nfskeys_wb_task *task, uint64_t *ret_pause_ns)
{
	struct nfskeys_wb_dev *dev;
	uint64_t now, deadline = 0;
	int r;

	if (!task)
		return -EINVAL;
	dev = task->dev;
	pthread_mutex_lock(&dev->lock);
	if (!task->waiting) {
		pthread_mutex_unlock(&dev->lock);
		return -EINVAL;
	}
	now = dev->clock.now(dev->clock.userdata);
	r = decide(dev, task, false, now, &deadline);
	pthread_mutex_unlock(&dev->lock);
	if (ret_pause_ns)
		*ret_pause_ns = r == WB_WAIT ? deadline - now : 0;
	return r;
}

/* ---------------------------------------------------------------- ctx registry */

struct wb_registry {
	struct nfskeys_wb_dev **devs;
	size_t n;
};

static void registry_free(void *data)
{
	struct wb_registry *reg = data;

	for (size_t i = 0; i < reg->n; i++)
		nfskeys_wb_dev_free(reg->devs[i]);
	free(reg->devs);
	free(reg);
}

/* "256M", "1G", "65536": bytes with an optional K/M/G/T suffix (powers of 1024). */
static int parse_size(const char *s, uint64_t *ret)
{
	char *end;
	unsigned long long v;
	unsigned shift = 0;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	default: break;
	}
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end || (shift && v > (UINT64_MAX >> shift)))
		return -EINVAL;
	*ret = (uint64_t)v << shift;
	return 0;
}

_public_ int nfskeys_wb_dev_get(struct nfskeys_ctx *ctx, const char *name, unsigned flags,
				struct nfskeys_wb_dev **ret_dev)
{
	struct wb_registry *reg;
	struct nfskeys_wb_dev *dev, **devs;
	const char *v;
	uint64_t limit = 256ull << 20;
	int policy = NFSKEYS_WB_NFSKEYS, r;

	if (!ctx || !name || !*name || !ret_dev)
		return -EINVAL;
	reg = ctx_ext_get(ctx, CTX_EXT_WB);
	for (size_t i = 0; reg && i < reg->n; i++)
		if (streq(reg->devs[i]->name, name)) {
			*ret_dev = reg->devs[i];
			return 0;
		}

	v = nfskeys_conf_get(ctx, "Writeback", "Policy");
	if (v) {
		policy = nfskeys_wb_policy_from_name(v);
		if (policy < 0) {
			log_err(ctx, "[Writeback] Policy: unknown policy '%s' "
				"(kara2011, wu2011, wu2012 or nfskeys)", v);
			return -EINVAL;
		}
	}
	v = nfskeys_conf_get(ctx, "Writeback", "Dirty-Limit");
	if (v && parse_size(v, &limit) < 0) {
		log_err(ctx, "[Writeback] Dirty-Limit = %s: not a size (a number with K, M, G or T)",
			v);
		return -EINVAL;
	}
	if (v && (limit < WB_MIN_LIMIT || limit > WB_MAX_LIMIT)) {
		/* the same bounds as nfskeys_attr_wb_apply() and the dirty_limit attribute */
		log_err(ctx, "[Writeback] Dirty-Limit = %s: not a size from 1M to 1T", v);
		return -ERANGE;
	}
	r = nfskeys_wb_dev_new(name, policy, limit, flags, NULL, &dev);
	if (r < 0)
		return r;
	if (!reg) {
		reg = calloc(1, sizeof(*reg));
		if (!reg) {
			nfskeys_wb_dev_free(dev);
			return -ENOMEM;
		}
		ctx_ext_set(ctx, CTX_EXT_WB, reg, registry_free);
	}
	devs = realloc(reg->devs, (reg->n + 1) * sizeof(*devs));
	if (!devs) {
		nfskeys_wb_dev_free(dev);
		return -ENOMEM;
	}
	reg->devs = devs;
	reg->devs[reg->n++] = dev;
	log_debug(ctx, "writeback device %s: policy %s, dirty limit %" PRIu64, name,
		  nfskeys_wb_policy_to_name(policy), limit);
	*ret_dev = dev;
	return 0;
}
