/* The nfskeys-attrd daemon object its files share: nfskeys-attrd.c (configuration,
 * reload, dispatch, timers, main) calls down into attrd-requests.c (the calls on a
 * directory), attrd-auth.c (who may change one) and attrd-stats.c (counting, STATS). */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "daemon.h"
#include "evloop.h"
#include "macros.h"
#include "nfskeys-attr-daemon.h"
#include "rpc-dispatch.h"
#include "rpc-server.h"
#include "stats.h"

enum attrd_op { ATTRD_OP_SET, ATTRD_OP_UNSET, ATTRD_OP_LOOKUP, ATTRD_OP_OTHER, _ATTRD_OP_MAX };

/* What a user who is not an admin may do: bounded storage, so one user cannot fill the
 * store, and no policy on mounts whose owners the client makes up. */
struct attrd_limits {
	uint64_t user_dirs;      /* [Attrd] Max-Policies-Per-User */
	uint64_t user_bytes;     /* [Attrd] Max-Bytes-Per-User */
	unsigned sweep_interval; /* [Attrd] Orphan-Check-Interval, seconds */
	bool synthesized_owners; /* [Attrd] Trust-Synthesized-Owners */
};

struct attrd_op_stats {
	uint64_t calls, errors, refused;
	struct stats_hist latency;
};

struct attrd {
	const char *conf_path;
	const char *socket_override, *store_override;
	struct nfskeys_ctx *ctx;
	struct nfskeys_attr_store *store;
	char *socket_path;
	struct evloop *loop;
	struct rpc_server *srv;
	bool have_admin;
	gid_t admin_gid;
	char *admin_group;
	struct attrd_limits lim;
	uint64_t generation;
	int64_t start_usec;
	struct attrd_op_stats ops[_ATTRD_OP_MAX];
	struct attrd_ldap *ldap;
	struct attrd_mounts *mounts; /* [Mounts]: sub-mounts for policy on live mounts */
	bool apply_mounts;
	struct attrd_wb *wb;	     /* [Mounts]: directory writeback policy on the bdis */
	struct evtimer *sync_timer;
	struct evtimer *sweep_timer;
	struct daemon_shell sh;
	char *runtime_dir;
	unsigned max_clients, idle_timeout; /* as started (they apply at start only) */
	unsigned max_clients_user;
	struct change *placing; /* sets and unsets waiting on a file server (attrd-requests.c) */
	unsigned n_placing;
};

/* nfskeys-attrd.c: the dispatch table, one row per procedure (common/rpc-dispatch.h) */
RPC_PROC_ROW(attrd_proc, struct attrd);

/* attrd-requests.c: the calls on a directory, each answered (and counted). */
void attrd_handle_set(struct attrd *d, struct rpc_request *req, XDR *args);
void attrd_handle_unset(struct attrd *d, struct rpc_request *req, XDR *args);
void attrd_handle_lookup(struct attrd *d, struct rpc_request *req, XDR *args);
/* Sets and unsets whose directory's place in a mount of another namespace its file server
 * must confirm (NFS with actimeo=0) wait for it in a thread each: at most this many at
 * once, this many of one uid; past them the change is refused (EBUSY, "try again"). */
#define ATTRD_PLACING_MAX 16
#define ATTRD_PLACING_PER_UID 2
/* nfskeys-attrd stops: answer the changes still waiting, leave their threads behind. */
void attrd_placing_orphan(struct attrd *d);
/* The sub-mount table of [Mounts] Apply-Mounts: public, as the mount table is. */
void attrd_handle_mounts(struct attrd *d, struct rpc_request *req, XDR *args);

/* attrd-auth.c: may peer change the attributes of the directory st (identity id, shown as
 * where)?  *ret_admin tells root and the admin group (no per-user limits) from owners;
 * on refusal, -EPERM with the reason in msg. */
int attrd_authorize(struct attrd *d, const struct ucred *peer, const struct stat *st,
		    const struct nfskeys_attr_id *id, const char *where, bool *ret_admin, char *msg,
		    size_t msg_size);

/* attrd-stats.c: count a request of kind op that ended with status, and its latency. */
void attrd_finish(struct attrd *d, enum attrd_op op, struct rpc_request *req, int status);
/* The STATS answer (metrics of requests, clients, index, LDAP sync). */
void attrd_handle_stats(struct attrd *d, struct rpc_request *req, XDR *args);
