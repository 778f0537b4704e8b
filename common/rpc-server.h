/* The server side of our ONC RPC transport, on top of evloop: accepts AF_UNIX stream
 * clients, reassembles records (rpc-frame.h), decodes call headers, answers wrong
 * program / version / RPC version itself, and hands each call to the daemon's dispatch
 * function with the caller's SO_PEERCRED identity.  Replies may be sent later (after a
 * worker thread finished), always from the loop thread.  Per-client limits: request
 * size, requests in flight, unanswered output, idle time, and a cap on clients; a client
 * that breaks the framing or a limit is disconnected without disturbing the others.
 * Internal; never installed. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
/* macros.h first: <rpc/types.h> pulls in sys/param.h, whose MIN/MAX may then silently
 * replace ours (both evaluate the same), never the other way round with a warning. */
#include "macros.h"
#include <rpc/types.h>
#include <rpc/xdr.h>

#include "evloop.h"
#include "rpc-msg.h"

struct rpc_server;
struct rpc_conn;

struct rpc_server_limits {
	size_t max_msg;            /* request size cap in bytes (0: 64 KiB) */
	unsigned max_inflight;     /* unanswered requests per client before we stop reading (0: 16) */
	unsigned idle_timeout_ms;  /* close a client silent this long with nothing in flight,
				    * or stuck mid-message this long (0: 30 s) */
	unsigned max_clients;      /* connections at once; more are closed at once (0: 1024) */
	unsigned max_clients_per_uid; /* connections at once of one uid other than root, so
				       * one user cannot take every slot (0: no such limit) */
	size_t max_outbuf;         /* unread reply bytes before we drop the client (0: 1 MiB) */
	/* Take descriptors passed with SCM_RIGHTS (for rpc_request_take_fd)?  false: the
	 * kernel discards any, unopened.  true: only directories opened O_PATH are kept
	 * (closing them can never block); anything else goes to the closer thread
	 * (fd-closer.h), and a descriptor not taken by the call it came with is dropped. */
	bool accept_fds;
	/* Told (at most every 10 s each) when clients are refused past max_clients and when
	 * accept() fails for want of descriptors; NULL: quiet.  userdata: rpc_server_new's. */
	void (*log)(void *userdata, int priority, const char *message);
	/* Told when a client goes (closed by either side) with calls still unanswered, so
	 * that the daemon can cancel work nobody waits for; the replies to those calls are
	 * dropped.  Called from inside the server (possibly while a reply is being sent):
	 * only note it and act later from the loop.  NULL: not told. */
	void (*conn_closed)(void *userdata, uid_t uid, unsigned inflight);
};

/* Counters kept by the server (read with rpc_server_get_stats). */
struct rpc_server_stats {
	uint64_t accepted;          /* connections accepted */
	uint64_t refused;           /* closed at once: too many clients */
	uint64_t refused_uid;       /* closed at once: too many clients of that uid */
	uint64_t requests;          /* calls dispatched */
	uint64_t replies;           /* replies queued */
	uint64_t bad_frames;        /* disconnected: bad record mark (oversized, zero, fragment) */
	uint64_t bad_headers;       /* malformed call header (disconnected or error reply) */
	uint64_t idle_closed;       /* disconnected for idleness or a stalled message */
	uint64_t overflow_closed;   /* disconnected: not reading replies */
	uint64_t current;           /* connections open now */
	uint64_t fds_refused;       /* passed descriptors dropped: not an O_PATH directory,
				     * or not taken by the call they came with */
};

/* One call.  The fields are read-only for the dispatcher. */
struct rpc_request {
	struct rpc_call call;      /* xid, prog, vers, proc */
	struct ucred peer;         /* SO_PEERCRED of the client (taken once at accept: the
				    * kernel records it at connect() and never changes it) */
	uint64_t start_ns;         /* mono_nsec() when the message was complete */
	struct rpc_conn *conn;     /* private */
	uint64_t msg_start, msg_end; /* private: the call's place in the byte stream */
	struct rpc_request *next_free; /* private: the connection's pool of answered ones */
};

/* Called on the loop thread for every well-formed call to our program and version.
 * args is positioned at the arguments and is valid only during this call: decode them
 * here (a decoding failure should be answered with RPC_STATUS_GARBAGE_ARGS).  The
 * dispatcher must eventually answer with exactly one rpc_request_reply() or
 * rpc_request_error(), now or later from the loop thread. */
typedef void (*rpc_dispatch_fn)(struct rpc_server *srv, struct rpc_request *req, XDR *args,
				void *userdata);

/* Serve program prog version vers on listen_fd (a listening AF_UNIX stream socket, from
 * unix_listen(); the server takes ownership and closes it).  limits NULL: defaults. */
int rpc_server_new(struct evloop *loop, int listen_fd, uint32_t prog, uint32_t vers,
		   const struct rpc_server_limits *limits, rpc_dispatch_fn dispatch,
		   void *userdata, struct rpc_server **ret_server);
/* Close the listening socket and every client; requests still held by the dispatcher
 * stay valid until answered (their replies are dropped).  NULL-safe; returns NULL. */
struct rpc_server *rpc_server_free(struct rpc_server *srv);
void rpc_server_get_stats(const struct rpc_server *srv, struct rpc_server_stats *ret_stats);

/* Answer with SUCCESS and results encoded by res_fn (NULL: no results).  Frees req (it
 * goes back to its connection's pool: a steady stream of calls allocates nothing).
 * If the results do not fit the client's limit, SYSTEM_ERR is sent instead. */
int rpc_request_reply(struct rpc_request *req, xdrproc_t res_fn, const void *res);
/* Answer with an error status (PROC_UNAVAIL, GARBAGE_ARGS, SYSTEM_ERR, or AUTH_ERROR
 * with RPC_AUTH_TOOWEAK for "not allowed").  Frees req. */
int rpc_request_error(struct rpc_request *req, enum rpc_status status);
/* Take the descriptor the client passed (SCM_RIGHTS) with this call; the caller owns
 * it, an O_PATH directory (limits.accept_fds).  -ENOENT when none.  Clients send the
 * descriptor with the bytes of the call that uses it, so it has always arrived by the
 * time that call is dispatched; one passed with another call is not available here
 * (it was dropped when that call was dispatched).  Only during the dispatch call. */
int rpc_request_take_fd(struct rpc_request *req, int *ret_fd);
/* Whether the client is still connected (a reply to a gone client is dropped). */
bool rpc_request_connected(const struct rpc_request *req);
