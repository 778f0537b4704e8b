/* What kernel-paths-core.c (configuration, the whole), kernel-paths-knfsd.c (knfsd's
 * channels) and kernel-paths-pipes.c (the NFS client's rpc_pipefs pipes) share: the
 * object, a query, and the calls each side makes into the other. */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "hashmap.h"
#include "kernel-paths.h"
#include "kernel-proto.h"

#define RPC_PIPEFS_MAGIC 0x67596969 /* linux/magic.h */
#define KNS_LABEL_MAX 32  /* "net:[4026532290]" */

/* Another network namespace whose rpc_pipefs is served (kernel-paths-netns.c). */
struct kns {
	struct kpaths *kp;
	uint64_t ino;        /* its nsfs inode: the namespace's identity */
	uint64_t userns_ino; /* the user namespace that owns it */
	int nfs_fd;          /* nfs/ of a detached rpc_pipefs there; -1: could not be opened */
	int wd;              /* inotify watch on nfs/ */
	unsigned n_pipes;    /* kpipes of this namespace: its clnt* directories known */
	unsigned n_open;     /* ... whose idmap pipe is open (a cloned client has none) */
	bool seen;           /* in the last scan */
	bool translate;      /* owned by another user namespace: ids go through its maps */
	bool maps_read;
	unsigned profile;    /* the daemon's configuration for it (kpaths_ns_match_fn), 0: its own */
	struct userns_map uid_map, gid_map;
	char label[KNS_LABEL_MAX];
	char name[NAME_MAX + 1]; /* its /run/netns name, "" when none seen */
	char cgroup[256];        /* the cgroup of the process it was found through, "" if none */
	struct kns *next;
};

struct kchannel {
	struct kpaths *kp;
	enum knfsd_channel which;
	int fd;
	struct evio *io;
	unsigned inflight;
	int64_t warned_usec;  /* the last odd-request warning logged (monotonic), 0: never */
	uint64_t unwarned;    /* odd requests since, not logged */
	char path[KPATH_DIR_MAX + 32];
};

/* One clnt*\/idmap pipe; queries hold a reference so a pipe closed under them is not
 * freed before they are answered (into nothing). */
struct kpipe {
	struct kpaths *kp;
	struct kns *ns;    /* NULL: the daemon's own rpc_pipefs */
	int fd;
	unsigned refs;
	int dir_wd;        /* inotify watch on clntXX/ while idmap is not there yet */
	struct evio *io;
	char name[NAME_MAX + 1]; /* clntXX */
	char store[NAME_MAX + 32]; /* its name in the descriptor store */
	struct kpipe *next;
};

/* A nametoid reply held back while the id's name is fetched for the idtoname channel
 * (Prime-Reverse): knfsd, once answered, encodes the new owner at once (the GETATTR after a
 * SETATTR), and finds it cached instead of asking again.  Held at most PRIME_HOLD_MS. */
struct kheld {
	struct kpaths *kp;
	struct kchannel *chan;
	struct kquery *prime; /* the reverse lookup; NULL once it has answered */
	struct evtimer *timer;
	struct kheld *next, **pprev; /* kpaths.held */
	int len;
	char line[KNFSD_LINE_MAX];
};

struct kquery {
	struct kpaths *kp;
	enum kpath_src src;
	bool prime;          /* the reverse lookup of Prime-Reverse, not the kernel's request */
	struct kheld *held;  /* prime: the reply it holds back (NULL once released) */
	struct kchannel *chan;
	struct kpipe *pipe;
	union {
		struct knfsd_request nfsd;
		struct pipe_request pipe;
	} req;
	uint64_t start_ns;
};

struct kpaths {
	struct evloop *loop;
	struct kpaths_config cfg;
	kpaths_lookup_fn lookup;
	kpaths_log_fn log;
	void *userdata;
	struct kchannel chan[2];
	bool serve_channels;
	/* client pipes */
	bool serve_pipes;
	char pipefs[KPATH_DIR_MAX];
	int ino_fd;
	int nfs_wd;
	struct evio *ino_io;
	struct kpipe *pipes;
	unsigned n_pipes;
	/* other network namespaces (kernel-paths-netns.c) */
	struct kns *nss;
	unsigned n_ns;
	bool ns_full_warned;
	struct hashmap ns_by_ino;
	uint64_t ns_seed;
	int self_netns_fd;
	uint64_t self_netns_ino, self_userns_ino;
	uint32_t overflow_uid, overflow_gid;
	struct evtimer *ns_timer;
	/* set by kernel-paths-netns.c while it serves other namespaces: the pipes' code calls
	 * up through these (an inotify event on a namespace's nfs/, a rescan after an inotify
	 * overflow) and so needs nothing of the namespace code */
	bool (*ns_event)(struct kpaths *kp, int wd, uint32_t mask, const char *name);
	void (*ns_rescan)(struct kpaths *kp);
	kpaths_ns_match_fn ns_match; /* the daemon's: which configuration a namespace takes */
	struct kheld *held; /* nametoid replies held by Prime-Reverse */
	/* handing the kernel's descriptors to the next run (daemon_fdstore_*): adopt what the
	 * last run stored; handing_over: at stop, close without dropping the store's copies */
	bool adopt_pipes;   /* the last run stopped cleanly: its pipes hold no read message */
	bool handing_over;
	unsigned adopted;   /* descriptors taken back from the last run */
	struct kpath_stats st[_KPATH_SRC_MAX];
	unsigned refs; /* the owner's, and one per query out */
};

/* kernel-paths-store.c: the descriptor store's names ("knfsd-idtoname", "pipe-clnt3",
 * "netns-4026532290", "netns-4026532290-clnt3") */
void kpaths_store_name(char *buf, size_t size, const char *what, uint64_t ns, const char *clnt);
/* A descriptor of name the last run handed over, if it is the file at dirfd/path (dirfd
 * AT_FDCWD for an absolute path); -1 when none (or another file: then closed). */
int kpaths_adopt(struct kpaths *kp, const char *name, int dirfd, const char *path);
/* Keep a copy of fd in the store under name (no-op without one). */
void kpaths_store(struct kpaths *kp, int fd, const char *name);
/* Drop name's copy (its client went away), unless the daemon is handing over. */
void kpaths_unstore(struct kpaths *kp, const char *name);

/* kernel-paths-query.c */
struct kquery *kpaths_query_new(struct kpaths *kp, enum kpath_src src);

/* kernel-paths-knfsd.c */
int kpaths_channel_open(struct kpaths *kp, enum knfsd_channel which, char *err, size_t errlen);
void kpaths_channel_close(struct kchannel *c);
void kpaths_held_release_all(struct kpaths *kp);
void kpaths_channel_answer(struct kquery *q, int status, const struct nfskeys_idmap_answer *ans,
			   unsigned ttl);

/* kernel-paths-pipes.c */
int kpaths_pipes_start(struct kpaths *kp, char *err, size_t errlen);
void kpaths_pipe_add(struct kpaths *kp, struct kns *ns, const char *name);
struct kpipe *kpaths_pipe_find(struct kpaths *kp, const struct kns *ns, const char *name);
void kpaths_pipe_close(struct kpipe *p);
void kpaths_pipe_answer(struct kquery *q, int status, const struct nfskeys_idmap_answer *ans);
void kpaths_set_client_timeout(struct kpaths *kp);

/* kernel-paths-netns.c */
int kpaths_netns_start(struct kpaths *kp);
void kpaths_netns_stop(struct kpaths *kp);

/* An id of the namespace's user namespace as the host's (false: outside its map). */
static inline bool kns_to_host(const struct kns *ns, bool group, uint32_t id, uint32_t *host)
{
	if (!ns->translate) {
		*host = id;
		return true;
	}
	return userns_map_to_outside(group ? &ns->gid_map : &ns->uid_map, id, host);
}

/* A host id as the namespace's user namespace sees it (the overflow id outside its map,
 * as the kernel shows such an id). */
static inline uint32_t kns_from_host(const struct kns *ns, bool group, uint32_t host)
{
	uint32_t id;

	if (!ns->translate ||
	    userns_map_to_inside(group ? &ns->gid_map : &ns->uid_map, host, &id))
		return ns->translate ? id : host;
	return group ? ns->kp->overflow_gid : ns->kp->overflow_uid;
}
