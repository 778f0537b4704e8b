/* A wall-clock writeback run shared by bench-wb and tests/unit/test-wb: writer threads
 * through the real (sleeping) throttle call of one device, and a device thread that
 * completes 100 MB/s (256 KiB every 2.5 ms) of what they dirtied. */
#pragma once

#include <stddef.h>
#include <stdint.h>

struct nfskeys_wb_dev;

#define WB_RT_WRITERS 4

struct wb_rt_result {
	uint64_t *pauses; /* every writer's pauses (ns), sorted; free() it */
	size_t n_pauses;
	uint64_t bytes[WB_RT_WRITERS]; /* written by each writer */
	uint64_t total;                /* by all of them */
	uint64_t elapsed_ns;
	uint64_t max_dirty; /* the most the device held dirty */
};

/* Run WB_RT_WRITERS writers on dev for secs seconds, each writing `write` bytes per
 * throttle call and keeping up to max_pauses of its pauses.  Returns 0, -ENOMEM, a
 * pthread error or the first error of a writer's task call (ret then untouched). */
int wb_rt_run(struct nfskeys_wb_dev *dev, uint64_t write, double secs, size_t max_pauses,
	      struct wb_rt_result *ret);
