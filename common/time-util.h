/* Monotonic time in microseconds and deadline arithmetic, shared by the event loop, the
 * RPC client and the statistics.  Internal; never installed. */
#pragma once

#include <stdint.h>
#include <time.h>

#define USEC_PER_SEC 1000000LL
#define USEC_PER_MSEC 1000LL
#define NSEC_PER_USEC 1000LL

/* CLOCK_MONOTONIC in microseconds. */
static inline int64_t mono_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * USEC_PER_SEC + ts.tv_nsec / NSEC_PER_USEC;
}

/* CLOCK_MONOTONIC in nanoseconds (for latency histograms). */
static inline uint64_t mono_nsec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Milliseconds left until deadline (monotonic usec) for poll(): 0 when past, -1 for
 * deadline < 0 (meaning "no deadline"). */
static inline int deadline_poll_ms(int64_t deadline)
{
	int64_t left;

	if (deadline < 0)
		return -1;
	left = deadline - mono_usec();
	if (left <= 0)
		return 0;
	return left / USEC_PER_MSEC + (left % USEC_PER_MSEC ? 1 : 0);
}
