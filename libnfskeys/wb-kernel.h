/* Kernel mounts' writeback, the parts unit tests and the bench reach directly: the
 * /proc/self/mountstats parser and the 6.1 ratio arithmetic.  Not installed. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "nfskeys.h"

/* Lines longer than this are skipped as malformed (a real per-op line is < 200 bytes; a
 * header holds an escaped mount point, at most 4 x PATH_MAX). */
#define WBK_MAX_LINE 16384

struct wbk_found {
	struct nfskeys_wb_opstats write, commit;
	unsigned have;           /* bit 0: the mount's header seen; 1: WRITE; 2: COMMIT */
};

/* Parse mountstats text (buf, len; need not end in a NUL or newline) for the mount
 * points in escaped form (as the kernel prints them: space, tab, newline and backslash
 * as \ooo).  found[i] gets mount i's WRITE and COMMIT counters (the first entry wins
 * when a mount point is listed twice).  Malformed lines are skipped and counted in
 * *ret_malformed (optional).  Returns how many mount points were found. */
size_t wbk_parse_mountstats(const char *buf, size_t len, const char *const *mountpoints,
			    size_t n, struct wbk_found *found, unsigned *ret_malformed);

/* Escape a mount point as the kernel prints it in mountstats and mountinfo (into buf of
 * size; -ENAMETOOLONG when it does not fit). */
int wbk_escape_path(const char *path, char *buf, size_t size);

/* 6.1: max_ratio (percent) for a byte limit at a global dirty threshold in bytes:
 * ceil(100 * limit / thresh) clamped to 1..100 (100 when thresh is 0). */
unsigned wbk_ratio_for(uint64_t limit, uint64_t thresh);

/* Add a mount point to a sampler without a mount object (the bench, the unit tests):
 * the sampler reads its mountstats from NFSKEYS_WB_PROC/self/mountstats like a real one. */
int wbk_sampler_add_path(struct nfskeys_wb_sampler *sampler, const char *mountpoint,
			 uint64_t ceiling);
/* The same with a device for its completions (and the nfskeys controller's estimate). */
int wbk_sampler_add_path_dev(struct nfskeys_wb_sampler *sampler, const char *mountpoint,
			     struct nfskeys_wb_dev *dev, uint64_t ceiling);

/* The adaptive limit's controllers (nfskeys_wb_sampler_set_controller()). */
enum { WBK_CTL_NFSKEYS, WBK_CTL_HALVE };
#define WBK_TARGET_DEFAULT_MS 500

/* The nfskeys controller's mapping: the byte limit for a write bandwidth estimate bw
 * (bytes/s) and a target latency (s): bw x target, clamped to [max(ceiling / 16, 1 MiB),
 * ceiling]; the ceiling while there is no estimate (bw <= 0). */
uint64_t wbk_limit_from_bandwidth(double bw, double target_s, uint64_t ceiling);

