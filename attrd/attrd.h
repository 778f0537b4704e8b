/* The nfskeys-attrd daemon object its files share: nfskeys-attrd.c (configuration,
 * reload, timers, main), attrd-requests.c (the requests and their dispatch),
 * attrd-auth.c (who may change a directory's policy), attrd-stats.c (the STATS answer). */
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
#include "rpc-server.h"
#include "stats.h"

enum op { OP_SET, OP_UNSET, OP_LOOKUP, OP_OTHER, _OP_MAX };

/* What a user who is not an admin may do (issue 21 items 4 and 6). */
struct attrd_limits {
	uint64_t user_dirs;      /* [Attrd] Max-Policies-Per-User */
	uint64_t user_bytes;     /* [Attrd] Max-Bytes-Per-User */
	unsigned sweep_interval; /* [Attrd] Orphan-Check-Interval, seconds */
	bool synthesized_owners; /* [Attrd] Trust-Synthesized-Owners */
};

struct op_stats {
	uint64_t calls, errors, refused;
	struct stats_hist latency;
};

struct daemon {
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
	struct op_stats ops[_OP_MAX];
	struct attrd_ldap *ldap;
	struct attrd_mounts *mounts; /* [Mounts]: sub-mounts for policy on live mounts */
	bool apply_mounts;
	struct evtimer *sync_timer;
	struct evtimer *sweep_timer;
	struct daemon_shell sh;
	char *runtime_dir;
	unsigned max_clients, idle_timeout; /* as started (they apply at start only) */
	unsigned max_clients_user;
};

/* nfskeys-attrd.c: SIGHUP or RELOAD: the new configuration and store, all or nothing. */
int attrd_reload(struct daemon *d, char *msg, size_t msg_size);

/* attrd-requests.c: one request, answered (the rpc_server's dispatch function). */
void attrd_dispatch(struct rpc_server *srv, struct rpc_request *req, XDR *args, void *userdata);
/* Count a request of kind op that ended with status, and its latency. */
void attrd_finish(struct daemon *d, enum op op, struct rpc_request *req, int status);

/* attrd-auth.c: may peer change the attributes of the directory st (identity id, shown as
 * where)?  *ret_admin tells root and the admin group (no per-user limits) from owners;
 * on refusal, -EPERM with the reason in msg. */
int attrd_authorize(struct daemon *d, const struct ucred *peer, const struct stat *st,
		    const struct nfskeys_attr_id *id, const char *where, bool *ret_admin,
		    char *msg, size_t msg_size);

/* attrd-stats.c: the STATS answer (metrics of requests, clients, index, LDAP sync). */
void attrd_handle_stats(struct daemon *d, struct rpc_request *req);
