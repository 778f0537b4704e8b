/* The kernel's own ways into nfskeys-idmapd (doc/DESIGN.md §5, doc/KERNEL-INTERFACES.md §1-2):
 * knfsd's nfs4.idtoname / nfs4.nametoid cache channels on a server, and the NFS client's
 * rpc_pipefs clnt*\/idmap pipes.  This file owns the descriptors and the protocol; the
 * daemon resolves each query through the same engine and cache as its socket callers. */
#pragma once

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "evloop.h"
#include "nfskeys.h"
#include "stats.h"

enum kpath_mode { KPATH_NO, KPATH_YES, KPATH_AUTO };

#define KPATH_DIR_MAX 256 /* configured directories and files */

enum kpath_src { KPATH_NFSD_IDTONAME, KPATH_NFSD_NAMETOID, KPATH_PIPE, _KPATH_SRC_MAX };

struct kpaths_config {
	enum kpath_mode server_channels; /* [Kernel] Server-Channels */
	enum kpath_mode client_pipe;     /* [Kernel] Client-Pipe */
	char channel_dir[KPATH_DIR_MAX];      /* where nfs4.idtoname/ and nfs4.nametoid/ are */
	char pipefs_dir[KPATH_DIR_MAX];       /* rpc_pipefs mount; "" = find it */
	char nfs_conf[KPATH_DIR_MAX];         /* nfs.conf read for pipefs-directory */
	unsigned negative_ttl;           /* s, knfsd negative entries */
	unsigned client_cache_timeout;   /* s written to idmap_cache_timeout; 0 = leave it */
	char sysctl_path[KPATH_DIR_MAX];      /* /proc/sys/fs/nfs/idmap_cache_timeout */
	bool check_rpc_idmapd;           /* refuse (yes) or skip (auto) a path rpc.idmapd runs */
	bool prime_reverse;              /* [Kernel] Prime-Reverse */
	bool namespaces;                 /* [Kernel] Namespaces = auto */
	bool namespace_owner_ids;        /* [Kernel] Namespace-Ids = owner */
	unsigned namespace_scan;         /* s, [Kernel] Namespace-Scan */
	unsigned namespaces_max;         /* [Kernel] Namespaces-Max */
};

/* Default configuration: auto, /proc/net/rpc, discovery, 60 s. */
void kpaths_config_default(struct kpaths_config *cfg);
/* Read [Kernel] from ctx into cfg (defaults first).  -EINVAL with err naming key and value. */
int kpaths_config_load(struct nfskeys_ctx *ctx, struct kpaths_config *cfg, char *err,
		       size_t errlen);

struct kpaths;
struct kquery;

typedef void (*kpaths_log_fn)(int prio, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Resolve kind/key for q; the daemon then calls kquery_answer() once (maybe at once).
 * nobody: a name the backends do not know answers the nobody id (client pipe). */
typedef void (*kpaths_lookup_fn)(void *userdata, struct kquery *q, uint32_t kind,
				 const char *key, bool nobody);

/* Open the paths cfg asks for.  With KPATH_YES a path that cannot be served is an error
 * (-errno, err says which and why); with KPATH_AUTO it is logged and left out. */
int kpaths_new(struct evloop *loop, const struct kpaths_config *cfg, kpaths_lookup_fn lookup,
	       kpaths_log_fn log, void *userdata, struct kpaths **ret, char *err, size_t errlen);
/* Close everything; queries still out are answered into nothing. */
void kpaths_free(struct kpaths *kp);
/* At stop: read nothing more from the kernel (what comes stays queued for the next run);
 * queries already read are still answered. */
void kpaths_stop_reading(struct kpaths *kp);
/* At a clean stop, after the last answers: the descriptors stay in the service manager's
 * store for the next run (kpaths_free then closes only this run's copies), marked clean. */
void kpaths_hand_over(struct kpaths *kp);
/* Apply a new configuration's TTLs (the descriptors stay open: closing knfsd's channels
 * for 30 s makes nfsd say idmapd died). */
void kpaths_update(struct kpaths *kp, const struct kpaths_config *cfg);
/* Make knfsd forget every cached mapping (after start and after a reload). */
int kpaths_flush_server(struct kpaths *kp);
/* One line saying what is served, e.g. "knfsd channels, client pipes (3 open) in /run/rpc_pipefs". */
void kpaths_describe(const struct kpaths *kp, char *buf, size_t size);

/* Whether a lookup's status says something of the owner (found; no such owner; a key
 * that is malformed or of an unsupported kind), not that finding out failed (directory
 * down or slow, out of memory, queue full): a failure is tried again, never kept long. */
static inline bool kquery_status_definitive(int status)
{
	return status == 0 || status == -ENOENT || status == -EINVAL || status == -EOPNOTSUPP;
}

/* The answer for q: status 0 with ans, or -errno (unknown / failed).  ttl in seconds: how
 * long the answer holds (the daemon keeps a failure for Stale-TTL at most).  Frees q. */
void kquery_answer(struct kquery *q, int status, const struct nfskeys_idmap_answer *ans,
		   unsigned ttl);
enum kpath_src kquery_source(const struct kquery *q);
/* Whether q is Prime-Reverse's own lookup (the id's name for knfsd's idtoname cache, after
 * a nametoid answer), not a request the kernel made. */
bool kquery_is_prime(const struct kquery *q);
/* A knfsd nametoid query whose positive answer will be primed into idtoname
 * (Prime-Reverse): its worker fetches the reverse in the same job. */
bool kquery_will_prime(const struct kquery *q);

struct kpath_stats {
	uint64_t requests, malformed, positive, negative, write_errors;
	uint64_t primed; /* entries written before knfsd asked (Prime-Reverse) */
	struct stats_hist latency;
};
const struct kpath_stats *kpaths_stats(const struct kpaths *kp, enum kpath_src src);
/* Other network namespaces served now. */
unsigned kpaths_netns_count(const struct kpaths *kp);

/* One served network namespace (nfskeys-idmapd(8) CONTAINERS). */
struct kpaths_ns_info {
	uint64_t ino;        /* its nsfs inode (readlink /proc/PID/ns/net: net:[ino]) */
	uint64_t userns_ino; /* the user namespace that owns it */
	unsigned pipes;      /* NFS client idmap pipes of it the daemon has open */
	bool open;           /* its rpc_pipefs could be opened (else: logged, not served) */
	bool translate;      /* ids go through its user namespace's maps */
	bool maps_read;      /* ... and those maps were read */
	unsigned profile;    /* the configuration it takes (kpaths_ns_match_fn), 0: the daemon's */
	char name[256];      /* its /run/netns name, "" when none */
	char cgroup[256];    /* the cgroup of a process in it, "" when none was seen */
};
/* Which of the daemon's configurations serves a namespace of this /run/netns name and
 * cgroup (either may be ""): 0 for its own, else the configuration's number. */
typedef unsigned (*kpaths_ns_match_fn)(void *userdata, const char *netns_name,
				       const char *cgroup);
/* Set (or change, after a reload) the matcher; every served namespace is matched again. */
void kpaths_set_ns_match(struct kpaths *kp, kpaths_ns_match_fn match);
/* The configuration q's namespace takes (0: the daemon's own). */
unsigned kquery_profile(const struct kquery *q);

/* Up to max served namespaces into out; returns how many there are in all. */
size_t kpaths_netns_list(const struct kpaths *kp, struct kpaths_ns_info *out, size_t max);
/* The network namespace (nsfs inode) whose NFS client asked q; 0: the daemon's own, or a
 * knfsd channel. */
uint64_t kquery_netns(const struct kquery *q);
const char *kpath_src_name(enum kpath_src src);
