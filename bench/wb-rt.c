/* The wall-clock writeback run (see wb-rt.h): a simulated device thread and real writer
 * threads on one nfskeys_wb device, their pauses gathered and sorted. */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "macros.h"
#include "nfskeys.h"
#include "wb-rt.h"

struct rt {
	struct nfskeys_wb_dev *dev;
	atomic_bool stop;
	atomic_int error;
	uint64_t max_dirty; /* written by the device thread only */
	uint64_t write;
	size_t max_pauses;
	uint64_t *pauses; /* WB_RT_WRITERS slices of max_pauses */
	size_t npauses[WB_RT_WRITERS];
	uint64_t bytes[WB_RT_WRITERS];
};

struct rt_writer {
	struct rt *rt;
	int id;
};

static uint64_t mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *rt_device(void *arg)
{
	struct rt *rt = arg;
	uint64_t done = 0, next = mono();

	while (!atomic_load(&rt->stop)) {
		struct nfskeys_wb_stats st;
		struct timespec ts;
		uint64_t n;

		nfskeys_wb_dev_get_stats(rt->dev, &st);
		rt->max_dirty = MAX(rt->max_dirty, st.dirty);
		n = MIN(st.dirtied - done, 256 * 1024ull);
		if (n) {
			nfskeys_wb_complete(rt->dev, n, NFSKEYS_WB_WRITE, 2500000);
			done += n;
		}
		next += 2500000;
		ts.tv_sec = (time_t)(next / 1000000000ull);
		ts.tv_nsec = (long)(next % 1000000000ull);
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	}
	return NULL;
}

static void *rt_writer(void *arg)
{
	struct rt_writer *w = arg;
	struct rt *rt = w->rt;
	uint64_t *pauses = rt->pauses + (size_t)w->id * rt->max_pauses;
	struct nfskeys_wb_task *t = NULL;
	int r;

	r = nfskeys_wb_task_new(rt->dev, NULL, &t);
	while (r >= 0 && !atomic_load(&rt->stop)) {
		uint64_t pause = 0;

		r = nfskeys_wb_throttle(t, rt->write, 0, &pause);
		if (r < 0)
			break;
		rt->bytes[w->id] += rt->write;
		if (pause && rt->npauses[w->id] < rt->max_pauses)
			pauses[rt->npauses[w->id]++] = pause;
	}
	if (r < 0) {
		int none = 0;

		atomic_compare_exchange_strong(&rt->error, &none, r);
		atomic_store(&rt->stop, true);
	}
	nfskeys_wb_task_free(t);
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int wb_rt_run(struct nfskeys_wb_dev *dev, uint64_t write, double secs, size_t max_pauses,
	      struct wb_rt_result *ret)
{
	struct rt rt = { .dev = dev, .write = write, .max_pauses = max_pauses };
	struct rt_writer w[WB_RT_WRITERS];
	pthread_t dev_th, wth[WB_RT_WRITERS];
	struct wb_rt_result res = {};
	uint64_t t0;
	int started = 0, r;

	rt.pauses = calloc(WB_RT_WRITERS * max_pauses + 1, sizeof(uint64_t));
	if (!rt.pauses)
		return -ENOMEM;
	t0 = mono();
	r = pthread_create(&dev_th, NULL, rt_device, &rt);
	if (r) {
		free(rt.pauses);
		return -r;
	}
	for (; started < WB_RT_WRITERS; started++) {
		w[started] = (struct rt_writer){ &rt, started };
		r = pthread_create(&wth[started], NULL, rt_writer, &w[started]);
		if (r)
			break;
	}
	if (!r)
		usleep((useconds_t)(secs * 1e6));
	atomic_store(&rt.stop, true);
	for (int i = 0; i < started; i++)
		pthread_join(wth[i], NULL);
	pthread_join(dev_th, NULL);
	res.elapsed_ns = mono() - t0;
	if (r || atomic_load(&rt.error)) {
		free(rt.pauses);
		return r ? -r : atomic_load(&rt.error);
	}
	for (int i = 0; i < WB_RT_WRITERS; i++) {
		memmove(rt.pauses + res.n_pauses, rt.pauses + (size_t)i * max_pauses,
			rt.npauses[i] * sizeof(uint64_t));
		res.n_pauses += rt.npauses[i];
		res.bytes[i] = rt.bytes[i];
		res.total += rt.bytes[i];
	}
	qsort(rt.pauses, res.n_pauses, sizeof(uint64_t), cmp_u64);
	res.pauses = rt.pauses;
	res.max_dirty = rt.max_dirty;
	*ret = res;
	return 0;
}
