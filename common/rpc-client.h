/* A blocking ONC RPC client over an AF_UNIX stream socket, for the tools and the upcall
 * helper: connects lazily, starts at a random xid, checks each reply's xid and status,
 * bounds every call by a timeout, and reconnects once when a kept connection turns out
 * to be broken (the daemon restarted).  Not thread-safe: one client per thread.
 * Internal; never installed. */
#pragma once

#include <stdint.h>
/* macros.h first: <rpc/types.h> pulls in sys/param.h, whose MIN/MAX may then silently
 * replace ours (both evaluate the same), never the other way round with a warning. */
#include "macros.h"
#include <rpc/types.h>
#include <rpc/xdr.h>

struct rpc_client;

/* A client for program prog version vers at socket_path.  timeout_ms bounds each call
 * (connect + send + receive); max_msg caps request and reply sizes (0: default 64 KiB).
 * Nothing is connected yet. */
int rpc_client_new(const char *socket_path, uint32_t prog, uint32_t vers, int timeout_ms,
		   size_t max_msg, struct rpc_client **ret_client);
/* Close and free; NULL-safe; returns NULL. */
struct rpc_client *rpc_client_free(struct rpc_client *client);
void rpc_client_set_timeout(struct rpc_client *client, int timeout_ms);

/* Call procedure proc with args encoded by args_fn (NULL: no arguments) and decode the
 * results into res (zero-initialized by the caller) with res_fn (NULL: none expected).  On success the caller owns what
 * res_fn allocated (release with xdr_free(res_fn, res)).  pass_fd >= 0 sends that
 * descriptor along (SCM_RIGHTS).  Errors: -ENOENT/-ECONNREFUSED (no daemon),
 * -ETIMEDOUT, -EPROTO (bad reply: wrong xid, undecodable), -EMSGSIZE, and the mapped RPC
 * status (rpc_status_to_errno: -EACCES, -EOPNOTSUPP, -EINVAL, -EIO,
 * -EPROTONOSUPPORT).  After a timeout or protocol error the connection is closed, so a
 * late reply can never be mistaken for the next call's. */
int rpc_client_call_fd(struct rpc_client *client, uint32_t proc, xdrproc_t args_fn,
		       const void *args, int pass_fd, xdrproc_t res_fn, void *res);
static inline int rpc_client_call(struct rpc_client *client, uint32_t proc, xdrproc_t args_fn,
				  const void *args, xdrproc_t res_fn, void *res)
{
	return rpc_client_call_fd(client, proc, args_fn, args, -1, res_fn, res);
}
/* Pipelining: n calls of procedure proc, at most 64 in flight at once on the one
 * connection (written with one send() per window, replies matched by xid in whatever
 * order they come).  Arguments are args[i] (args + i * args_stride), results go to
 * res + i * res_stride (zero-initialized by the caller).  Returns 0 when every call got
 * a reply: ret_status[i] is then 0 (the caller owns what res_fn allocated in res[i]) or
 * the mapped RPC status (as rpc_client_call).  A negative return is a transport failure
 * (as rpc_client_call); then no results are left allocated and the connection is
 * closed. */
int rpc_client_call_batch(struct rpc_client *client, uint32_t proc, xdrproc_t args_fn,
			  const void *args, size_t args_stride, size_t n, xdrproc_t res_fn,
			  void *res, size_t res_stride, int *ret_status);
/* Calls both daemons answer alike (proto/idmap.x, proto/attr.x), decoded here once.
 * PING (procedure proc, no arguments): its results begin "string release<32>; unsigned
 * int pid; unsigned hyper generation; unsigned hyper extra" (idmapd: uptime in ms;
 * attrd: directories with a policy); later fields are not read.  Every output may be
 * NULL.  Errors as rpc_client_call(). */
int rpc_client_ping(struct rpc_client *client, uint32_t proc, char *release,
		    size_t release_size, uint32_t *ret_pid, uint64_t *ret_generation,
		    uint64_t *ret_extra);
/* RELOAD: results "int status; string message<>; unsigned hyper generation".  message
 * (may be NULL) gets the daemon's text; returns a transport error, else the daemon's
 * status (0, or a negative errno: -EPERM, the configuration error).  *ret_generation
 * (may be NULL) is set on success. */
int rpc_client_reload(struct rpc_client *client, uint32_t proc, char *message,
		      size_t message_size, uint64_t *ret_generation);
/* The xid the next call will use (for tests). */
uint32_t rpc_client_next_xid(const struct rpc_client *client);
/* Close the connection (the next call reconnects). */
void rpc_client_disconnect(struct rpc_client *client);
