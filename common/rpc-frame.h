/* Record marking for ONC RPC over stream sockets (RFC 5531 §11): each message is sent as
 * exactly one fragment, preceded by a 4-byte big-endian header holding the length with
 * the top bit set ("last fragment").  Multi-fragment records, zero-length records and
 * records above the caller's size cap are refused.  Internal; never installed. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RPC_FRAME_HDR_LEN 4
#define RPC_FRAME_LAST 0x80000000u
/* Default message size cap (bytes of RPC message, header excluded). */
#define RPC_FRAME_MAX_DEFAULT (64u * 1024u)

/* Write the header of a one-fragment record of len bytes (len < 2^31). */
void rpc_frame_put_header(uint8_t hdr[RPC_FRAME_HDR_LEN], uint32_t len);

/* Check a received header.  0 and *ret_len on success; -EBADMSG when the last-fragment
 * bit is clear (more fragments would follow, which we do not accept) or the length is 0;
 * -EMSGSIZE when the length exceeds max. */
int rpc_frame_get_header(const uint8_t hdr[RPC_FRAME_HDR_LEN], size_t max, uint32_t *ret_len);

/* Incremental reassembly for nonblocking readers: read into the space given by
 * rpc_framer_reserve(), account with rpc_framer_commit(), then take complete messages
 * with rpc_framer_next() until it returns 0. */
struct rpc_framer {
	uint8_t *buf;
	size_t off; /* start of unconsumed data */
	size_t len; /* end of data */
	size_t cap;
	size_t max; /* message size cap */
};

void rpc_framer_init(struct rpc_framer *fr, size_t max);
/* Free the buffer; the framer can be initialized again. */
void rpc_framer_done(struct rpc_framer *fr);
/* Make at least min free bytes (and at most what one more full message needs, so a
 * client cannot make us buffer without bound) available for reading; -ENOMEM.
 * Invalidates pointers returned by rpc_framer_next(). */
int rpc_framer_reserve(struct rpc_framer *fr, size_t min, uint8_t **ret_ptr, size_t *ret_avail);
/* n bytes were read into the reserved space. */
void rpc_framer_commit(struct rpc_framer *fr, size_t n);
/* 1 and the next complete message (pointing into the buffer, valid until the next
 * reserve) when one is buffered; 0 when more bytes are needed; a negative errno from
 * rpc_frame_get_header() when the stream is malformed (the connection cannot be
 * resynchronized and should be closed). */
int rpc_framer_next(struct rpc_framer *fr, const uint8_t **ret_msg, size_t *ret_len);
/* Bytes buffered that do not yet form a complete message. */
static inline size_t rpc_framer_pending(const struct rpc_framer *fr)
{
	return fr->len - fr->off;
}

/* Blocking helpers for clients.  deadline: CLOCK_MONOTONIC usec, < 0 for none.
 * rpc_frame_send writes a complete record (header + msg, msg already encoded) and, when
 * pass_fd >= 0, attaches that descriptor to its first byte.  -ETIMEDOUT, -EPIPE, ... */
int rpc_frame_send(int fd, const void *msg, size_t len, int pass_fd, int64_t deadline);
/* Read one record of at most max bytes into a malloc()ed buffer.  -ECONNRESET when the
 * peer closes before a complete record (-EPIPE when it closes before the first byte),
 * -ETIMEDOUT, -EBADMSG / -EMSGSIZE for a bad header. */
int rpc_frame_recv(int fd, size_t max, int64_t deadline, uint8_t **ret_msg, size_t *ret_len);
