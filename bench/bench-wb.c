/* bench-wb: the cost of the writeback completion hook (uncontended and with two threads
 * hammering one device) and of the throttle call (lock-free fast path and a full policy
 * decision), side by side with reference operations, as ratios.  Built by 'make bench'. */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "macros.h"
#include "nfskeys.h"
#include "wb-rt.h"

#define TARGET_NS 100.0 /* the hook's target per call, uncontended */

/* CPU time of the calling thread: on a shared machine, time-slices given to other
 * processes do not count against the code measured. */
static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t fake_ns;

static uint64_t fake_now(void *userdata)
{
	return fake_ns;
}

static void fake_wake(void *userdata, void *task)
{
}

static struct nfskeys_wb_dev *dev_new(int policy, bool fake)
{
	struct nfskeys_wb_clock clk = { fake_now, fake_wake, NULL };
	struct nfskeys_wb_dev *dev = NULL;

	if (nfskeys_wb_dev_new("bench", policy, 1ull << 40, NFSKEYS_WB_UNSTABLE, fake ? &clk : NULL,
			       &dev) < 0)
		abort();
	return dev;
}

/* best of 5 runs of n calls, ns per call */
#define MEASURE(n, body)                                              \
	({                                                            \
		double _best = 1e30;                                  \
		for (int _r = 0; _r < 5; _r++) {                      \
			uint64_t _t0 = cpu_ns();                      \
			for (long _i = 0; _i < (n); _i++) {           \
				body;                                 \
			}                                             \
			double _v = (double)(cpu_ns() - _t0) / (double)(n); \
			_best = MIN(_best, _v);                       \
		}                                                     \
		_best;                                                \
	})

struct hammer {
	struct nfskeys_wb_dev *dev;
	long n;
	atomic_int *go;
	double ns;
};

static void *hammer(void *arg)
{
	struct hammer *h = arg;
	uint64_t t0;

	while (!atomic_load(h->go))
		;
	t0 = cpu_ns();
	for (long i = 0; i < h->n; i++)
		nfskeys_wb_complete(h->dev, 4096, (i & 7) ? NFSKEYS_WB_WRITE : NFSKEYS_WB_COMMIT,
				    1000);
	h->ns = (double)(cpu_ns() - t0) / (double)h->n;
	return NULL;
}

/* ---------------------------------------------------------------- wall clock */

#define RT_MAX_PAUSES 100000

/* Real threads through the sleeping throttle call of each policy for `secs`. */
static void wall_clock(double secs)
{
	printf("\nwall clock: 4 threads writing 4 KiB per call, a 100 MB/s device thread, "
	       "64 MiB limit, %.1f s per policy\n", secs);
	printf("%-9s %8s %8s %8s %8s %9s %10s %6s\n", "policy", "pauses", "p50 ms", "p99 ms",
	       "max ms", "MB/s", "max dirty", "jain");
	for (int p = 0; p < _NFSKEYS_WB_POLICY_MAX; p++) {
		struct nfskeys_wb_dev *dev;
		struct wb_rt_result rt;
		const uint64_t *all;
		double sum = 0, sumsq = 0;
		size_t n;

		if (nfskeys_wb_dev_new("rt", p, 64ull << 20, 0, NULL, &dev) < 0)
			abort();
		if (wb_rt_run(dev, 4096, secs, RT_MAX_PAUSES, &rt) < 0)
			abort();
		for (int i = 0; i < WB_RT_WRITERS; i++) {
			sum += (double)rt.bytes[i];
			sumsq += (double)rt.bytes[i] * (double)rt.bytes[i];
		}
		all = rt.pauses;
		n = rt.n_pauses;
		printf("%-9s %8zu %8.1f %8.1f %8.1f %9.1f %7.1f MiB %6.3f\n",
		       nfskeys_wb_policy_to_name(p), n, n ? all[n / 2] / 1e6 : 0,
		       n ? all[(n * 99) / 100] / 1e6 : 0, n ? all[n - 1] / 1e6 : 0,
		       (double)rt.total / ((double)rt.elapsed_ns / 1e9) / 1e6,
		       rt.max_dirty / 1048576.0, sumsq > 0 ? sum * sum / (4 * sumsq) : 1.0);
		free(rt.pauses);
		nfskeys_wb_dev_free(dev);
	}
}

/* Usage: bench-wb [CALLS [WALL-SECONDS]]  (default 5000000 per measurement, 3 s) */
int main(int argc, char *argv[])
{
	const long N = argc > 1 ? atol(argv[1]) : 5000000;
	struct nfskeys_wb_dev *dev;
	struct nfskeys_wb_task *task = NULL;
	static uint64_t counter;
	pthread_mutex_t mtx = PTHREAD_MUTEX_INITIALIZER;
	double atomic_ns, mutex_ns, hook_ns, hook2_ns = 0, fast_ns, slow_ns[_NFSKEYS_WB_POLICY_MAX];
	double waiters_ns[_NFSKEYS_WB_POLICY_MAX];
	pthread_t th[2];
	struct hammer h[2];
	atomic_int go = 0;

	/* references */
	atomic_ns = MEASURE(N, __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED));
	mutex_ns = MEASURE(N, { pthread_mutex_lock(&mtx); counter++; pthread_mutex_unlock(&mtx); });

	/* the hook, no waiters (the common case) */
	dev = dev_new(NFSKEYS_WB_NFSKEYS, false);
	hook_ns = MEASURE(N, nfskeys_wb_complete(dev, 4096, NFSKEYS_WB_WRITE, 1000));

	/* two threads on one device */
	for (int i = 0; i < 2; i++) {
		h[i] = (struct hammer){ dev, N, &go, 0 };
		pthread_create(&th[i], NULL, hammer, &h[i]);
	}
	atomic_store(&go, 1);
	for (int i = 0; i < 2; i++) {
		pthread_join(th[i], NULL);
		hook2_ns = MAX(hook2_ns, h[i].ns);
	}
	nfskeys_wb_dev_free(dev);

	/* the throttle call below the task's ratelimit: the lock-free fast path */
	dev = dev_new(NFSKEYS_WB_NFSKEYS, true);
	nfskeys_wb_task_new(dev, NULL, &task);
	fast_ns = MEASURE(N, {
		uint64_t p;
		nfskeys_wb_throttle(task, 1, NFSKEYS_WB_NOSLEEP, &p);
	});
	nfskeys_wb_task_free(task);
	nfskeys_wb_dev_free(dev);

	/* a full decision on every call (a whole ratelimit each time, device far from its
	 * limit, fake time moving 1 ms per call so every policy lets the task go) */
	for (int p = 0; p < _NFSKEYS_WB_POLICY_MAX; p++) {
		dev = dev_new(p, true);
		nfskeys_wb_task_new(dev, NULL, &task);
		fake_ns = 0;
		slow_ns[p] = MEASURE(N / 10, {
			uint64_t pp;
			uint64_t rl = nfskeys_wb_task_get_ratelimit(task);
			fake_ns += 1000000;
			if (nfskeys_wb_throttle(task, rl, NFSKEYS_WB_NOSLEEP, &pp) == 1)
				while (nfskeys_wb_task_poll(task, &pp) == 1)
					fake_ns += pp;
			nfskeys_wb_complete(dev, rl, NFSKEYS_WB_WRITE, 0);
			nfskeys_wb_complete(dev, rl, NFSKEYS_WB_COMMIT, 0);
		});
		nfskeys_wb_task_free(task);
		nfskeys_wb_dev_free(dev);
	}

	/* the hook while a task waits (an unstable device far over its limit, so the waiter
	 * stays): where a policy reacts to completions, this is the hook's slow path */
	for (int p = 0; p < _NFSKEYS_WB_POLICY_MAX; p++) {
		struct nfskeys_wb_clock clk = { fake_now, fake_wake, NULL };
		uint64_t pp;

		if (nfskeys_wb_dev_new("w", p, 16ull << 20, NFSKEYS_WB_UNSTABLE, &clk, &dev) < 0)
			abort();
		nfskeys_wb_task_new(dev, NULL, &task);
		fake_ns = 1000000;
		if (nfskeys_wb_throttle(task, 1ull << 30, NFSKEYS_WB_NOSLEEP, &pp) != 1)
			abort();
		waiters_ns[p] = MEASURE(N / 10, nfskeys_wb_complete(dev, 1, NFSKEYS_WB_WRITE, 1000));
		nfskeys_wb_task_free(task);
		nfskeys_wb_dev_free(dev);
	}

	printf("%-44s %10s %12s\n", "operation", "ns/call", "ratio");
	printf("%-44s %10.1f %12s\n", "reference: relaxed atomic add", atomic_ns, "1.00x");
	printf("%-44s %10.1f %11.2fx\n", "reference: mutex lock+unlock", mutex_ns, mutex_ns / atomic_ns);
	printf("%-44s %10.1f %11.2fx  (%.2fx of the %.0f ns target)\n",
	       "nfskeys_wb_complete, uncontended", hook_ns, hook_ns / atomic_ns, hook_ns / TARGET_NS,
	       TARGET_NS);
	printf("%-44s %10.1f %11.2fx  (%.2fx of the %.0f ns target)\n",
	       "nfskeys_wb_complete, 2 threads, one device", hook2_ns, hook2_ns / atomic_ns,
	       hook2_ns / TARGET_NS, TARGET_NS);
	printf("%-44s %10.1f %11.2fx\n", "nfskeys_wb_throttle, below ratelimit", fast_ns,
	       fast_ns / atomic_ns);
	for (int p = 0; p < _NFSKEYS_WB_POLICY_MAX; p++) {
		char name[64];

		snprintf(name, sizeof(name), "throttle decision + 2 hooks, %s", nfskeys_wb_policy_to_name(p));
		printf("%-44s %10.1f %11.2fx\n", name, slow_ns[p], slow_ns[p] / mutex_ns);
	}
	for (int p = 0; p < _NFSKEYS_WB_POLICY_MAX; p++) {
		char name[64];

		snprintf(name, sizeof(name), "nfskeys_wb_complete, a waiter, %s",
			 nfskeys_wb_policy_to_name(p));
		printf("%-44s %10.1f %11.2fx\n", name, waiters_ns[p], waiters_ns[p] / atomic_ns);
	}
	printf("(thread CPU time per call, best of 5; ratios: hook and fast path vs the atomic add,\n"
	       " decisions vs the mutex pair)\n");
	wall_clock(argc > 2 ? atof(argv[2]) : 3.0);
	return hook_ns <= TARGET_NS ? 0 : 1;
}
