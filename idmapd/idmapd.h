/* nfskeys-idmapd's private header: the one daemon object and what its parts (main loop,
 * lookups, flushes, reloads, metrics) call of each other. */
#pragma once

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <syslog.h>

#include "daemon.h"
#include "evloop.h"
#include "idmapd-client.h"
#include "idmapd-fetch.h"
#include "idmapd-quota.h"
#include "kernel-paths.h"
#include "macros.h"
#include "nfskeys.h"
#include "nfskeys-idmap-daemon.h"
#include "rpc-dispatch.h"
#include "rpc-server.h"
#include "stats.h"
#include "time-util.h"
#include "unix-socket.h"
/* after macros.h: <rpc/rpc.h> redefines MIN/MAX silently in its system header */
#include "idmap.h"

#define MAX_BACKENDS 16

/* [Idmapd] settings; see nfskeys-idmapd(8). */
struct idmapd_settings {
	char socket[UNIX_PATH_MAX_LEN + 1];
	unsigned workers;
	bool inline_lookups;     /* answer what needs no I/O in the loop (LOOKUP_NOWAIT) */
	unsigned cache_size;
	unsigned negative_ttl;   /* s, cached errors of id -> name lookups */
	unsigned refresh_pct;    /* refresh-ahead after this % of the TTL; 0 = off */
	unsigned refresh_hits;   /* ... for entries hit at least this often */
	unsigned stale_limit;    /* s past expiry a positive answer may be served; 0 = off */
	unsigned stale_ttl;      /* s, TTL of stale answers and retry period while failing */
	unsigned stale_wait_ms;  /* wait this long for a refetch before answering stale */
	unsigned max_clients;
	unsigned max_request;
	unsigned max_inflight;
	unsigned idle_timeout;   /* s */
	unsigned max_clients_user; /* connections per uid (root exempt) */
	unsigned max_queue;      /* lookups queued or running for the workers, in all */
	unsigned max_queue_user; /* ... for one uid (root exempt) */
	char keyrings[256];      /* kernel keyrings cleared on flush/reload */
	char runtime_dir[UNIX_PATH_MAX_LEN + 1]; /* [General] Runtime-Dir, created if missing */
	struct kpaths_config kernel; /* [Kernel]: knfsd channels, client pipes */
	char namespace_dir[256];     /* [Kernel] Namespace-Dir */
	char snapshot[256];          /* [Idmapd] Cache-Snapshot; "" = none */
	struct idmapd_profiles *profiles; /* its files, owned by whoever holds the settings */
};

/* Configurations of other network namespaces (idmapd-profiles.c): a file of Namespace-Dir
 * each.  A kernel query from a namespace that takes one looks up kind | (its number <<
 * IDMAPD_KIND_PROFILE_SHIFT): the number keeps its answers apart in the cache and the
 * in-flight table, and picks the engine that fetches them. */
#define IDMAPD_PROFILES_MAX 64
#define IDMAPD_KIND_PROFILE_SHIFT 16
#define IDMAPD_KIND_BASE(k) ((uint32_t)(k) & ((1u << IDMAPD_KIND_PROFILE_SHIFT) - 1))
#define IDMAPD_KIND_PROFILE(k) ((uint32_t)(k) >> IDMAPD_KIND_PROFILE_SHIFT)
struct idmapd_profile {
	char name[64];   /* the file's name without .conf */
	char path[512];
	char netns[512]; /* [Match] Netns */
	char cgroup[512]; /* [Match] Cgroup */
	struct nfskeys_ctx *ctx;
};
struct idmapd_profiles {
	unsigned n;
	struct idmapd_profile p[IDMAPD_PROFILES_MAX];
};
int idmapd_profiles_load(const char *dir, int lib_priority, struct idmapd_profiles **ret,
			 char *err, size_t errlen);
struct idmapd_profiles *idmapd_profiles_free(struct idmapd_profiles *ps);
/* 0: none matches (the daemon's own configuration), else the profile's number. */
unsigned idmapd_profiles_match(const struct idmapd_profiles *ps, const char *netns_name,
			       const char *cgroup);
/* kpaths_ns_match_fn over the daemon's current profiles. */
unsigned idmapd_ns_match(void *userdata, const char *netns_name, const char *cgroup);
struct idmapd;
/* The answer cache across restarts (idmapd-snapshot.c). */
uint64_t idmapd_snapshot_fingerprint(struct nfskeys_ctx *ctx);
int idmapd_snapshot_save(struct idmapd *d);
int idmapd_snapshot_load(struct idmapd *d);
/* The engine that fetches a (profiled) kind. */
struct nfskeys_ctx *idmapd_kind_ctx(struct idmapd *d, uint32_t kind);

enum idmapd_op {
	IDMAPD_OP_NULL,
	IDMAPD_OP_PING,
	IDMAPD_OP_LOOKUP,
	IDMAPD_OP_FLUSH,
	IDMAPD_OP_STATS,
	IDMAPD_OP_RELOAD,
	IDMAPD_OP_RECENT,
	IDMAPD_OP_NAMESPACES,
	_IDMAPD_OP_MAX
};

enum lres { LR_HIT, LR_MISS, LR_NEGATIVE_HIT, LR_STALE, LR_COALESCED, LR_REFRESH_AHEAD,
	    LR_NOBODY, LR_ERROR, _LR_MAX };
extern const char *const lres_names[_LR_MAX];

struct backend_stats {
	char name[NFSKEYS_IDMAP_BACKEND_MAX];
	uint64_t requests, failures;
	struct stats_hist latency;
};

struct idmapd_stats {
	uint64_t requests[_IDMAPD_OP_MAX];
	struct stats_hist latency[_IDMAPD_OP_MAX];
	uint64_t denied[_IDMAPD_OP_MAX];
	uint64_t lookups[_LR_MAX];
	struct backend_stats backends[MAX_BACKENDS];
	size_t n_backends;
	uint64_t flushes, keyrings_cleared, reloads, reload_failures;
	uint64_t queue_refused;  /* lookups refused: the per-user and total worker queue bounds */
	uint64_t cancelled;      /* queued lookups dropped: every caller had gone */
	uint64_t inlined;        /* misses answered in the loop, no worker (Inline-Lookups) */
	uint64_t rev_prefetched; /* reverse answers fetched in a name -> id job (Prime-Reverse) */
	uint64_t rev_cocached;   /* ... of which came with the name's own search (Unique-Ids) */
	uint64_t names_cocached; /* name -> id answers that came with an id's search
				  * (Unique-Names) */
	uint64_t detached;       /* running lookups whose callers had all gone */
	uint64_t snapshot_restored; /* answers taken back from the cache snapshot at start */
};

/* One answer given, remembered for `nfskeys idmap explain` (idmapd-recent.c). */
#define RECENT_RING IDMAPD_RECENT_RING
#define RECENT_KEY_MAX 128 /* longer keys are kept cut, and match no query */
struct recent {
	int64_t when;          /* evloop_now() */
	uint64_t netns;        /* a client pipe of another network namespace: its inode */
	uint32_t kind, pid, uid, id;
	int32_t status;
	uint8_t path;          /* enum recent_path */
	uint8_t result;        /* enum lres */
	bool has_name;
	char key[RECENT_KEY_MAX];
	char name[NFSKEYS_IDMAP_NAME_MAX];
};
/* RP_NAME_SEARCH, RP_PREFETCH: an id's name fetched with a name's lookup for the idtoname
 * request that follows it (Prime-Reverse): from the name's own search ([LDAP] Unique-Ids),
 * or looked up right after it.  RP_ID_SEARCH: a name's id from an id's own search
 * ([LDAP] Unique-Names). */
enum recent_path { RP_SOCKET, RP_NFSD_IDTONAME, RP_NFSD_NAMETOID, RP_PIPE, RP_NFSD_PRIME,
		   RP_NAME_SEARCH, RP_PREFETCH, RP_ID_SEARCH, _RP_MAX };

struct idmapd_job;
struct reload_job;
struct reload_waiter;

struct idmapd {
	struct evloop *loop;
	struct rpc_server *srv;
	struct nfskeys_ctx *ctx; /* current configuration; jobs hold their own reference */
	const char *conf_arg;
	const char *socket_arg;
	uint64_t generation;
	struct idmapd_settings set;
	struct idmap_cache *cache;        /* the answers: the library's one cache, µs clock */
	struct idmapd_fetches *fetches;   /* the lookups being fetched now, and their callers */
	struct idmapd_quota quota; /* worker jobs per uid (loop thread) */
	struct kpaths *kpaths;   /* the kernel's own paths in (kernel-paths-*.c) */
	bool kpaths_namespaces;  /* [Kernel] Namespaces = auto when kpaths was made (a reload
				  * changes set.kernel, not what is served) */
	struct idmapd_stats st;
	uint64_t snapshot_fp; /* the configuration's fingerprint (idmapd-snapshot.c) */
	char *keybuf; /* lookup keys decode here: no allocation per lookup (idmapd_handle_lookup) */
	struct recent *recent; /* RECENT_RING answers, a ring; recent_next is the oldest */
	unsigned recent_next, recent_count;
	int64_t start;
	struct daemon_shell sh;
	int lib_priority; /* the library's log priority at this verbosity */
	bool stopping;

	/* reload: the new configuration is built in a thread of its own and swapped in on
	 * the loop thread (reload_done); requests go on being answered meanwhile. */
	struct reload_job *reload;             /* the one running, NULL when none */
	bool reload_again;                     /* asked for while running: once more after */
	struct reload_waiter *reload_waiting;  /* RELOAD callers of the running one */
	struct reload_waiter *reload_next;     /* RELOAD callers of the one after */

	/* worker pool */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct idmapd_job *queue_head, **queue_tail;
	size_t queued;
	struct evtimer *cancel_timer; /* a client went with calls unanswered: sweep the queue */
	bool pool_stop;
	pthread_t *threads;
	size_t n_threads;
};

/* The one daemon of this process, for timer callbacks that carry an entry. */
extern struct idmapd *idmapd_instance;

/* The cache entry a caller is answered from: copied out of the one cache
 * (idmap_cache_peek), or for a flushed fetch its own result. */
struct idmapd_entry {
	uint32_t kind;
	const char *key;
	struct idmap_cache_view m; /* status, stale, expires, ... */
	struct nfskeys_idmap_answer ans;
};

/* A caller waiting on a fetch: a socket request or a kernel query, never both. */
struct idmapd_waiter {
	struct rpc_request *req;
	struct kquery *kq;
	unsigned flags; /* IDMAPD_LOOKUP_* */
	struct idmapd_waiter *next;
};

struct idmapd_job {
	struct idmapd_job *next;
	struct idmapd *d;
	struct nfskeys_ctx *ctx;
	struct idmapd_fetch *f;
	uid_t uid;               /* whose lookup started it (idmapd_quota) */
	uint32_t kind;
	char *key;
	int r;
	struct nfskeys_idmap_answer ans;
	uint64_t latency_ns;
	/* Prime-Reverse: the id's name, fetched right after a positive name -> id answer in
	 * the same job, so the prime that follows is a cache hit, not a second worker trip;
	 * for an id -> name job, the name's id when the same search gave it (Unique-Names) */
	bool reverse;
	bool reverse_done;
	bool reverse_cocached; /* rev_ans came with the name's answer: no lookup of its own */
	int rev_r;
	struct nfskeys_idmap_answer rev_ans;
	uint64_t rev_latency_ns;
};

/* A reload: idmapd_load_ctx() in its own thread (a large [Static] section or a slow backend
 * init would otherwise stall the loop), then reload_done() on the loop thread swaps the
 * configuration in or keeps the old one.  Requests are answered entirely by the old
 * configuration until the swap and entirely by the new one after it; lookups in flight
 * on the worker pool keep the old context alive through their own reference. */
struct reload_job {
	struct idmapd *d;
	pthread_t thread;
	bool joined;
	int r;
	struct nfskeys_ctx *ctx;
	struct idmapd_settings set;
	char msg[IDMAPD_MESSAGE_MAX];
};

struct reload_waiter {
	struct rpc_request *req;
	struct reload_waiter *next;
};

/* nfskeys-idmapd.c: the dispatch table, one row per procedure (common/rpc-dispatch.h),
 * indexed by procedure number.  The handlers in the other files read their rows through
 * the two inline functions below, data only: they never call back into the dispatcher
 * (scripts/call-graph keeps the files of a folder free of call circles). */
RPC_PROC_ROW(idmapd_proc, struct idmapd);
extern const struct idmapd_proc idmapd_procs[_IDMAPD_OP_MAX];

/* The procedure's name, in logs and as the op="" label of the statistics. */
static inline const char *idmapd_op_name(enum idmapd_op op)
{
	return idmapd_procs[op].name;
}

/* May the caller make the call op (its row's who)?  Counts and logs a refusal. */
static inline bool idmapd_allowed(struct idmapd *d, enum idmapd_op op, struct rpc_request *req)
{
	if (rpc_caller_permitted(idmapd_procs[op].who, &req->peer))
		return true;
	d->st.denied[op]++;
	daemon_log(LOG_NOTICE, "%s refused for pid %d uid %u (root only)", idmapd_procs[op].name,
		   (int)req->peer.pid, (unsigned)req->peer.uid);
	return false;
}

/* idmapd-lookup.c: lookups on the worker pool */
int idmapd_pool_start(struct idmapd *d, unsigned n);
void idmapd_pool_stop(struct idmapd *d);
void idmapd_handle_lookup(struct idmapd *d, struct rpc_request *req, XDR *args);
/* kpaths_lookup_fn: a kernel query through the same cache and engine */
void idmapd_kernel_lookup(void *userdata, struct kquery *q, uint32_t kind, const char *key,
			  bool nobody);
void idmapd_handle_ping(struct idmapd *d, struct rpc_request *req, XDR *args);
/* rpc_server_limits.conn_closed: cancel queued work nobody waits for any more (from the
 * loop, soon after); idmapd_cancel_sweep is the timer that does it. */
void idmapd_lookups_orphaned(void *userdata, uid_t uid, unsigned inflight);
void idmapd_cancel_sweep(struct evloop *loop, struct evtimer *t, void *userdata);

/* idmapd-flush.c: cache flushes and the kernel's keyrings */
unsigned idmapd_clear_kernel_keyrings(struct idmapd *d);
size_t idmapd_flush_cache(struct idmapd *d);
void idmapd_handle_flush(struct idmapd *d, struct rpc_request *req, XDR *args);

/* idmapd-reload.c: configuration load and reload */
int idmapd_load_ctx(struct idmapd *d, struct nfskeys_ctx **ret_ctx,
		    struct idmapd_settings *ret_set, char *err, size_t errlen);
void idmapd_reload_request(struct idmapd *d, struct rpc_request *req);
void idmapd_reload_wait(struct idmapd *d);
void idmapd_handle_reload(struct idmapd *d, struct rpc_request *req, XDR *args);

/* idmapd-recent.c: the answers given lately, for IDMAPD_RECENT */
void idmapd_recent_free(struct idmapd *d);
/* kq: the kernel's query answered (its path and network namespace), else NULL */
void idmapd_recent_note(struct idmapd *d, const struct idmapd_entry *e, enum recent_path path,
			const struct rpc_request *req, const struct kquery *kq, int status,
			enum lres result);
enum recent_path idmapd_recent_path_of(const struct kquery *kq);
void idmapd_handle_recent(struct idmapd *d, struct rpc_request *req, XDR *args);

/* idmapd-metrics.c: statistics */
struct backend_stats *idmapd_backend_slot(struct idmapd *d, const char *name);
void idmapd_reply(struct idmapd *d, enum idmapd_op op, struct rpc_request *req, xdrproc_t fn,
		  const void *res);
void idmapd_handle_stats(struct idmapd *d, struct rpc_request *req, XDR *args);

/* idmapd-netns.c: the other network namespaces served, for IDMAPD_NAMESPACES */
void idmapd_handle_namespaces(struct idmapd *d, struct rpc_request *req, XDR *args);
