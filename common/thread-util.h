/* Threads the daemons start and never join. */
#pragma once
#include <pthread.h>

/* Start fn(arg) in a detached thread: one that may wait on a dead server for good is never
 * waited for.  0 or -errno (then fn never runs and arg is still the caller's). */
static inline int thread_start_detached(void *(*fn)(void *), void *arg)
{
	pthread_attr_t attr;
	pthread_t t;
	int r = -pthread_attr_init(&attr);

	if (r < 0)
		return r;
	r = -pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (r == 0)
		r = -pthread_create(&t, &attr, fn, arg);
	pthread_attr_destroy(&attr);
	return r;
}
