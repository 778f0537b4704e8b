/* ONC RPC version 2 message headers (RFC 5531 §9) encoded and decoded with libtirpc XDR,
 * plus builders that produce a complete framed message (record mark + header + body
 * encoded by an rpcgen xdrproc).  Authentication is AUTH_NONE on the wire: the daemons
 * identify callers with SO_PEERCRED instead.  Internal; never installed. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
/* macros.h first: <rpc/types.h> pulls in sys/param.h, whose MIN/MAX may then silently
 * replace ours (both evaluate the same), never the other way round with a warning. */
#include "macros.h"
#include <rpc/types.h>
#include <rpc/xdr.h>

#define RPC_VERSION 2
/* Largest opaque_auth body (RFC 5531 §8.2). */
#define RPC_AUTH_MAX 400

enum rpc_msg_type { RPC_MSG_CALL = 0, RPC_MSG_REPLY = 1 };

/* What a reply says, flattened: the accepted statuses (RFC 5531 accept_stat) keep their
 * wire values 0-5, the denied ones are mapped above them. */
enum rpc_status {
	RPC_STATUS_SUCCESS = 0,
	RPC_STATUS_PROG_UNAVAIL = 1,
	RPC_STATUS_PROG_MISMATCH = 2, /* low/high: supported versions */
	RPC_STATUS_PROC_UNAVAIL = 3,
	RPC_STATUS_GARBAGE_ARGS = 4,
	RPC_STATUS_SYSTEM_ERR = 5,
	RPC_STATUS_RPC_MISMATCH = 16, /* MSG_DENIED/RPC_MISMATCH; low/high: rpc versions */
	RPC_STATUS_AUTH_ERROR = 17,   /* MSG_DENIED/AUTH_ERROR; auth_stat says why */
};

/* auth_stat values we send (RFC 5531 §9). */
enum { RPC_AUTH_BADCRED = 1, RPC_AUTH_REJECTEDCRED = 2, RPC_AUTH_TOOWEAK = 5 };

struct rpc_call {
	uint32_t xid;
	uint32_t prog;
	uint32_t vers;
	uint32_t proc;
};

struct rpc_reply {
	uint32_t xid;
	enum rpc_status status;
	uint32_t low, high;  /* for PROG_MISMATCH / RPC_MISMATCH */
	uint32_t auth_stat;  /* for AUTH_ERROR */
};

/* Encode a call header (AUTH_NONE credential and verifier); the arguments follow. */
int rpc_call_encode(XDR *xdrs, const struct rpc_call *call);
/* Decode a call header, leaving xdrs at the arguments.  Fills call as far as it gets (so
 * the xid is known for an error reply): 0 on success, -EPROTONOSUPPORT when rpcvers is
 * not 2 (reply RPC_MISMATCH), -EBADMSG when the header is malformed or not a CALL
 * (call->xid valid when at least 4 bytes were there), -EMSGSIZE when an auth body is
 * longer than 400 bytes. */
int rpc_call_decode(XDR *xdrs, struct rpc_call *call);

/* Encode a reply header (AUTH_NONE verifier); results follow only for SUCCESS. */
int rpc_reply_encode(XDR *xdrs, const struct rpc_reply *reply);
/* Decode a reply header, leaving xdrs at the results; -EBADMSG when malformed. */
int rpc_reply_decode(XDR *xdrs, struct rpc_reply *reply);
/* The errno a client reports for a reply status: 0, -EPROTONOSUPPORT (prog/version/rpc
 * mismatch, program unavailable), -EOPNOTSUPP (procedure), -EINVAL (garbage args),
 * -EIO (system error), -EACCES (auth error). */
int rpc_status_to_errno(enum rpc_status status);
/* Short name of a status for messages ("success", "garbage-args", ...). */
const char *rpc_status_to_string(enum rpc_status status);

/* Build a framed message: 4-byte record mark, the header, then body encoded by body_fn
 * (NULL for no body).  *ret is malloc()ed and *ret_len includes the record mark.
 * -EMSGSIZE when the message exceeds max bytes, -EINVAL when body_fn fails. */
int rpc_build_call(const struct rpc_call *call, xdrproc_t body_fn, const void *body, size_t max,
		   uint8_t **ret, size_t *ret_len);
int rpc_build_reply(const struct rpc_reply *reply, xdrproc_t body_fn, const void *body,
		    size_t max, uint8_t **ret, size_t *ret_len);
/* Encode a framed call into buf (cap bytes) without allocating; *ret_len includes the
 * record mark.  -EMSGSIZE when it does not fit (also when body_fn fails: a full buffer
 * and bad arguments look alike; rpc_build_call() tells them apart). */
int rpc_encode_call(const struct rpc_call *call, xdrproc_t body_fn, const void *body,
		    uint8_t *buf, size_t cap, size_t *ret_len);
int rpc_encode_reply(const struct rpc_reply *reply, xdrproc_t body_fn, const void *body,
		     uint8_t *buf, size_t cap, size_t *ret_len);
