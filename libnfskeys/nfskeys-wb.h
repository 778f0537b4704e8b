/* Writeback: the completion-reporting hook and the throttler (doc/DESIGN.md §7).
 * Included by nfskeys.h; do not include directly. */
#pragma once

#ifdef __cplusplus
extern "C" {
#endif

/* One backing device (server/export) and one task dirtying data on it. */
struct nfskeys_wb_dev;
struct nfskeys_wb_task;

/* What a completion reports: a WRITE reply (data reached the device, or the server's
 * cache when the device is NFSKEYS_WB_UNSTABLE) or a COMMIT reply (unstable data made
 * stable, and so clean). */
enum nfskeys_wb_kind {
	NFSKEYS_WB_WRITE = 0,
	NFSKEYS_WB_COMMIT = 1,
};

/* Throttling policies, all behind the same calls. */
enum nfskeys_wb_policy {
	NFSKEYS_WB_KARA2011 = 0, /* waiters share completions equally, autotuned interval */
	NFSKEYS_WB_WU2011 = 1,   /* Linux 3.2: bandwidth estimation + position control */
	NFSKEYS_WB_NFSKEYS = 2,  /* ours: smoothed, completion-driven, bounded pauses */
	NFSKEYS_WB_WU2012 = 3,   /* Linux 3.3 and later: 3.2 plus the pause-time control */
	_NFSKEYS_WB_POLICY_MAX,
};

/* Device flag: WRITE completions leave the data unstable (still counted as dirty)
 * until a COMMIT completion; without it a WRITE completion cleans the data. */
#define NFSKEYS_WB_UNSTABLE 0x1u

/* Throttle flag: do not sleep; return 1 and the time to wait instead. */
#define NFSKEYS_WB_NOSLEEP 0x1u

/* Time source and wake-up for waiting tasks.  now() returns monotonic nanoseconds;
 * wake() is called (with the device lock held: it must not call back into the
 * library) when a task waiting in NOSLEEP mode should call nfskeys_wb_task_poll()
 * before its deadline.  A NULL clock means CLOCK_MONOTONIC and real sleeping. */
struct nfskeys_wb_clock {
	uint64_t (*now)(void *userdata);
	void (*wake)(void *userdata, void *task_userdata);
	void *userdata;
};

/* A snapshot of a device's state (bytes, bytes/s, ns). */
struct nfskeys_wb_stats {
	uint64_t limit;       /* the dirty limit */
	uint64_t dirty;       /* dirtied and not yet clean: dirty + writeback + unstable */
	uint64_t unstable;    /* written but not committed (UNSTABLE devices) */
	uint64_t dirtied;     /* total reported through nfskeys_wb_throttle() */
	uint64_t written;     /* total WRITE completions */
	uint64_t committed;   /* total COMMIT completions */
	uint64_t completions; /* number of completions reported */
	uint64_t latency_avg; /* mean completion latency */
	uint64_t bandwidth;   /* the policy's write bandwidth estimate */
	uint64_t setpoint;    /* the dirty level the policy steers to (total dirty) */
	uint32_t waiters;     /* tasks currently throttled */
	uint32_t tasks;       /* tasks registered */
};

/* Policy names: "kara2011", "wu2011", "nfskeys", "wu2012".  -EINVAL for anything else. */
int nfskeys_wb_policy_from_name(const char *name);
const char *nfskeys_wb_policy_to_name(int policy);

/* Create a device with a policy and a dirty limit in bytes (>= 1 MiB).  flags:
 * NFSKEYS_WB_UNSTABLE.  clock NULL: real time.  Free with nfskeys_wb_dev_free() after
 * its tasks are freed (-EBUSY otherwise). */
int nfskeys_wb_dev_new(const char *name, int policy, uint64_t dirty_limit, unsigned flags,
		       const struct nfskeys_wb_clock *clock, struct nfskeys_wb_dev **ret_dev);
/* Free a device; NULL-safe; returns NULL.  Tasks still registered are freed too. */
struct nfskeys_wb_dev *nfskeys_wb_dev_free(struct nfskeys_wb_dev *dev);

/* The device called name in ctx, created on first use from configuration
 * [Writeback] Policy (default nfskeys) and Dirty-Limit (bytes with K/M/G suffix,
 * default 256M), in real time.  The ctx owns it (freed at the last unref); flags only
 * apply at creation.  -EINVAL with a logged reason for malformed configuration, -ERANGE
 * for a [Writeback] Dirty-Limit outside 1M..1T (the bounds of the dirty_limit attribute). */
int nfskeys_wb_dev_get(struct nfskeys_ctx *ctx, const char *name, unsigned flags,
		       struct nfskeys_wb_dev **ret_dev);

const char *nfskeys_wb_dev_get_name(const struct nfskeys_wb_dev *dev);
int nfskeys_wb_dev_get_policy(const struct nfskeys_wb_dev *dev);

/* Change the dirty limit (bytes, >= 1 MiB), e.g. from an attrd dirty_limit attribute;
 * takes effect at the next throttle decision. */
int nfskeys_wb_dev_set_limit(struct nfskeys_wb_dev *dev, uint64_t dirty_limit);
uint64_t nfskeys_wb_dev_get_limit(const struct nfskeys_wb_dev *dev);

int nfskeys_wb_dev_get_stats(struct nfskeys_wb_dev *dev, struct nfskeys_wb_stats *ret_stats);

/* The completion-reporting hook: bytes completed by a WRITE or COMMIT reply after
 * latency_ns.  Safe from any thread, lock-free unless tasks are waiting for it. */
void nfskeys_wb_complete(struct nfskeys_wb_dev *dev, uint64_t bytes, enum nfskeys_wb_kind kind,
			 uint64_t latency_ns);

/* Register a task (a thread or process dirtying data on dev); userdata is passed to
 * the clock's wake().  One task is used by one thread at a time. */
int nfskeys_wb_task_new(struct nfskeys_wb_dev *dev, void *userdata,
			struct nfskeys_wb_task **ret_task);
/* Unregister; NULL-safe; returns NULL.  A waiting task is dequeued first. */
struct nfskeys_wb_task *nfskeys_wb_task_free(struct nfskeys_wb_task *task);

/* The throttle call: the task has just dirtied bytes.  Returns 0 when the task may go
 * on; *ret_pause_ns (optional) is the time it slept.  With NFSKEYS_WB_NOSLEEP it may
 * return 1 instead: wait up to *ret_pause_ns (or until the clock's wake() names the
 * task) and then call nfskeys_wb_task_poll().  -EBUSY while the task is waiting. */
int nfskeys_wb_throttle(struct nfskeys_wb_task *task, uint64_t bytes, unsigned flags,
			uint64_t *ret_pause_ns);
/* For a task told to wait: 0 when it may go on, 1 to wait again up to *ret_pause_ns.
 * -EINVAL when the task is not waiting. */
int nfskeys_wb_task_poll(struct nfskeys_wb_task *task, uint64_t *ret_pause_ns);
/* Bytes the task may dirty before its next throttle decision (its poll interval);
 * calls below it return at once without taking a lock. */
uint64_t nfskeys_wb_task_get_ratelimit(const struct nfskeys_wb_task *task);

/* ------------------------------------------------------------------------------------
 * Kernel mounts (NFSKEYS_0.3): the dirty limit of a mount's bdi and the completion
 * stream from /proc/self/mountstats (doc/DESIGN.md §7, doc/WRITEBACK.md).
 */

/* The backing device (bdi, /sys/class/bdi/MAJ:MIN) of a mounted network filesystem. */
struct nfskeys_wb_mount;

/* What a mount's bdi has now and what nfskeys applied to it. */
struct nfskeys_wb_mount_state {
	char bdi[32];            /* "MAJ:MIN" */
	char fstype[32];
	int kernel_knobs;        /* 2: max_bytes + strict_limit (6.2+); 1: max_ratio only (6.1) */
	int applied;             /* 1 when nfskeys saved the kernel's values and set a limit */
	uint64_t limit;          /* the byte limit asked for (0 when none) */
	uint64_t thresh;         /* the global dirty threshold (bytes) the knobs were set from */
	unsigned max_ratio;      /* the bdi's max_ratio now (percent) */
	int strict_limit;        /* now: 0 or 1; -1 when the kernel has no such knob */
	uint64_t max_bytes;      /* now (6.2+), else 0 */
	unsigned saved_max_ratio; /* the kernel's values before nfskeys (when applied) */
	int saved_strict_limit;
};

/* Find the mount that path is on (any path inside it), its superblock's MAJ:MIN and its
 * bdi.  -ENOENT: no such path; -EMEDIUMTYPE: not an NFS or CIFS mount (logged: the
 * fstype); -ENODEV: the bdi has no directory in /sys/class/bdi.  Applies nothing. */
int nfskeys_wb_mount_open(struct nfskeys_ctx *ctx, const char *path,
			  struct nfskeys_wb_mount **ret_mount);
/* NULL-safe; returns NULL.  Leaves the bdi as it is (see nfskeys_wb_mount_restore()). */
struct nfskeys_wb_mount *nfskeys_wb_mount_free(struct nfskeys_wb_mount *mount);
const char *nfskeys_wb_mount_get_path(const struct nfskeys_wb_mount *mount);
const char *nfskeys_wb_mount_get_bdi(const struct nfskeys_wb_mount *mount);

/* Set the bdi's dirty limit to limit bytes (1 MiB..1 TiB): max_bytes and strict_limit=1
 * where the kernel has them, else max_ratio = ceil(100 * limit / global threshold)
 * clamped to 1..100.  The kernel's values are saved first (once: in
 * [General] Runtime-Dir/wb/MAJ:MIN, so another process can restore them).  -ERANGE for a
 * limit out of bounds, -EACCES/-EPERM when not allowed (root only). */
int nfskeys_wb_mount_apply(struct nfskeys_wb_mount *mount, uint64_t limit);
/* The global dirty threshold now, in bytes (/proc/vmstat nr_dirty_threshold): one read
 * tells a loop over many mounts whether any nfskeys_wb_mount_refresh() is due. */
int nfskeys_wb_dirty_threshold(uint64_t *ret_bytes);
/* Re-set the knobs when the global dirty threshold moved since the last apply (the
 * kernel turns a limit into a ratio once, at the threshold of that moment).  1 when
 * the knobs were rewritten, 0 when nothing moved, -ENOENT when nothing is applied. */
int nfskeys_wb_mount_refresh(struct nfskeys_wb_mount *mount);
/* Put back the kernel's saved values and forget them.  -ENOENT when nfskeys applied
 * nothing to this mount. */
int nfskeys_wb_mount_restore(struct nfskeys_wb_mount *mount);
int nfskeys_wb_mount_get_state(struct nfskeys_wb_mount *mount,
			       struct nfskeys_wb_mount_state *ret_state);

/* Per-op counters of one NFS operation in /proc/self/mountstats (times in ms, as the
 * kernel keeps them; errors is 0 on kernels that print 8 fields). */
struct nfskeys_wb_opstats {
	uint64_t ops, trans, timeouts, bytes_sent, bytes_recv, queue_ms, rtt_ms, exec_ms,
		errors;
};

/* The sampler: one read of /proc/self/mountstats per tick for all its mounts; the
 * WRITE and COMMIT deltas go to each mount's device through nfskeys_wb_complete() and
 * to the callback (for a trace), and each mount's adaptive limit is computed from them. */
struct nfskeys_wb_sampler;

/* A delta of one mount's per-op counters since the previous tick (only when ops > 0). */
typedef void (*nfskeys_wb_sample_fn)(void *userdata, const struct nfskeys_wb_mount *mount,
				     enum nfskeys_wb_kind kind,
				     const struct nfskeys_wb_opstats *delta);

int nfskeys_wb_sampler_new(struct nfskeys_ctx *ctx, struct nfskeys_wb_sampler **ret_sampler);
/* NULL-safe; returns NULL.  Frees neither the mounts nor the devices. */
struct nfskeys_wb_sampler *nfskeys_wb_sampler_free(struct nfskeys_wb_sampler *sampler);
/* Manage a mount: completions go to dev (may be NULL); the adaptive limit stays within
 * [ceiling / 16 (at least 1 MiB), ceiling]. */
int nfskeys_wb_sampler_add(struct nfskeys_wb_sampler *sampler, struct nfskeys_wb_mount *mount,
			   struct nfskeys_wb_dev *dev, uint64_t ceiling);
/* Read and report once; now_ns is the caller's monotonic time.  The first tick only
 * takes the baseline.  -ENOENT when a managed mount is no longer in mountstats. */
int nfskeys_wb_sampler_tick(struct nfskeys_wb_sampler *sampler, uint64_t now_ns,
			    nfskeys_wb_sample_fn fn, void *userdata);
/* How the adaptive limit is computed: "nfskeys" (the default): the nfskeys throttler's
 * write bandwidth estimate of the mount's device (fed by the sampler's WRITE deltas)
 * times target_ns (0: 500 ms), clamped to the mount's range; "halve": halve on signs of
 * a stall (RTT or COMMIT time 4 x their normal, retransmissions, errors), grow by a
 * sixteenth of the ceiling per tick otherwise (also what a mount without a device
 * gets).  -EINVAL for another name, -ERANGE for a target outside 10 ms..60 s. */
int nfskeys_wb_sampler_set_controller(struct nfskeys_wb_sampler *sampler, const char *name,
				      uint64_t target_ns);
/* The adaptive limit of a managed mount after the last tick (bytes; 0 if not managed). */
uint64_t nfskeys_wb_sampler_get_limit(const struct nfskeys_wb_sampler *sampler,
				      const struct nfskeys_wb_mount *mount);

#ifdef __cplusplus
}
#endif
