/* Typed client calls to nfskeys-idmapd (proto/idmap.x) for the upcall helper, the CLI,
 * tests and benchmarks, over the blocking RPC client of common/rpc-client.h.
 * Internal; never installed. */
#pragma once

#include "nfskeys.h"
#include "rpc-client.h"
#include "idmap.h"

/* The daemon's socket when nothing else is configured. */
#define IDMAPD_SOCKET_DEFAULT RUNDIR "/idmapd.sock"

/* The socket to use: explicit (non-NULL), else [Idmapd] Socket from ctx (may be NULL),
 * else [General] Runtime-Dir/idmapd.sock, else IDMAPD_SOCKET_DEFAULT.  Returns a pointer
 * into a thread-local buffer in the Runtime-Dir case. */
const char *idmapd_socket_path(struct nfskeys_ctx *ctx, const char *explicit_path);

/* A client for the daemon at path with a per-call timeout. */
int idmapd_client_new(const char *path, int timeout_ms, struct rpc_client **ret_client);

/* Ask the daemon to map key.  flags: IDMAPD_LOOKUP_* (proto/idmap.x).  0 and *ret filled
 * like nfskeys_idmap_lookup_full(); ret_flags (may be NULL) gets the daemon's answer
 * flags (IDMAPD_ANSWER_CACHED, _STALE, ...).  The daemon's own verdicts come back as
 * negative errno (-ENOENT, -EHOSTDOWN, -EINVAL); transport failures as in
 * rpc_client_call (-ENOENT/-ECONNREFUSED: no daemon, -ETIMEDOUT, -EPROTO, ...), with
 * *ret_transport (may be NULL) set true so callers know to fall back. */
/* The answer in a decoded IDMAPD_LOOKUP result for a request of KIND: 0, the daemon's
 * verdict (its negative status), or -EPROTO when the answer does not fit the request
 * (another kind, no name for *_TO_NAME, no valid SID for *_TO_SID): a broken daemon. */
int idmapd_client_answer(const idmapd_lookup_res *res, enum nfskeys_idmap_kind kind,
			 struct nfskeys_idmap_answer *ret, unsigned *ret_flags);
int idmapd_client_lookup(struct rpc_client *c, enum nfskeys_idmap_kind kind, const char *key,
			 unsigned flags, struct nfskeys_idmap_answer *ret, unsigned *ret_flags,
			 bool *ret_transport);

/* Pipelined lookups of n keys of one kind on the one connection (rpc_client_call_batch:
 * up to 64 in flight, one send() for them).  0 when the daemon answered every one:
 * ret_status[i] is then 0 (ret[i] filled) or the daemon's verdict as for
 * idmapd_client_lookup(); a negative return is a transport failure (-EINVAL: a key
 * longer than IDMAPD_KEY_MAX). */
int idmapd_client_lookup_many(struct rpc_client *c, enum nfskeys_idmap_kind kind,
			      const char *const *keys, size_t n, unsigned flags,
			      struct nfskeys_idmap_answer *ret, int *ret_status);
/* Is the daemon there?  Fills release/pid/generation when the pointers are non-NULL. */
int idmapd_client_ping(struct rpc_client *c, char *release, size_t release_size,
		       uint32_t *ret_pid, uint64_t *ret_generation);

/* Flush everything (key NULL) or one key.  *ret_dropped (may be NULL): entries dropped.
 * -EACCES/-EPERM for callers other than root. */
int idmapd_client_flush(struct rpc_client *c, enum nfskeys_idmap_kind kind, const char *key,
			unsigned *ret_dropped, unsigned *ret_keyrings);

/* Reload the configuration; on failure message (may be NULL) says why. */
int idmapd_client_reload(struct rpc_client *c, char *message, size_t message_size,
			 uint64_t *ret_generation);

/* The answers the daemon gave lately (newest first), all of them (key NULL) or those for
 * kind/key.  *ret is the decoded result; free it with xdr_free(xdr_idmapd_recent_res).
 * -EPERM for callers other than root. */
int idmapd_client_recent(struct rpc_client *c, enum nfskeys_idmap_kind kind, const char *key,
			 idmapd_recent_res *ret);

/* The other network namespaces the daemon serves (nfskeys-idmapd(8) CONTAINERS).  *ret is
 * the decoded result; free it with xdr_free(xdr_idmapd_namespaces_res). */
int idmapd_client_namespaces(struct rpc_client *c, idmapd_namespaces_res *ret);

/* Print the daemon's statistics to f as text, JSON or Prometheus (stats.h). */
int idmapd_client_print_stats(struct rpc_client *c, FILE *f, int format);
