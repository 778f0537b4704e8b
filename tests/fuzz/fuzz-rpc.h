/* Shared driver of the daemons' request-decoding fuzz targets: one client's byte stream
 * fed through the real record-marking reassembly (common/rpc-frame.c) in reads of a
 * fuzzer-chosen size, each record through rpc_call_decode() and the error replies
 * common/rpc-server.c would send, and the rest to the target's dispatcher (the daemon's
 * argument decoding).  No sockets.  Checked on the way: records come out whole, in order
 * and within the cap, exactly as an independent reading of the record marks finds them;
 * a refused record mark really is bad; error replies decode back unchanged. */
#pragma once

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "macros.h"
#include "rpc-frame.h"
#include "rpc-msg.h"

/* A broken invariant is a crash libFuzzer reports. */
#define check(cond)                                                                         \
	do {                                                                                \
		if (!(cond)) {                                                              \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__,    \
				#cond);                                                     \
			abort();                                                            \
		}                                                                           \
	} while (0)

/* Message size cap of the stream (the daemons' caps are at most this). */
#define FUZZ_RPC_MAX_MSG RPC_FRAME_MAX_DEFAULT

/* The record being dispatched: FUZZ_RPC_ROUNDTRIP compares against its bytes. */
static const uint8_t *fuzz_rpc_msg;

/* Decoded arguments (*ptr, of XDR type `type`) re-encode to exactly the bytes they were
 * decoded from: the record's bytes from offset start to the stream's position now. */
#define FUZZ_RPC_ROUNDTRIP(type, fn, ptr, xdrs, start)                                      \
	do {                                                                                \
		static char rt_buf_[FUZZ_RPC_MAX_MSG];                                      \
		u_int rt_end_ = xdr_getpos(xdrs);                                           \
		XDR rt_x_;                                                                  \
                                                                                            \
		check(rt_end_ >= (start) && rt_end_ - (start) <= sizeof(rt_buf_));          \
		xdrmem_create(&rt_x_, rt_buf_, sizeof(rt_buf_), XDR_ENCODE);                \
		check(fn(&rt_x_, (type *)(ptr)));                                           \
		check(xdr_getpos(&rt_x_) == rt_end_ - (start));                             \
		check(memcmp(rt_buf_, fuzz_rpc_msg + (start), rt_end_ - (start)) == 0);     \
		xdr_destroy(&rt_x_);                                                        \
	} while (0)

typedef enum rpc_status (*fuzz_rpc_dispatch_fn)(const struct rpc_call *call, XDR *args);

/* The reply the server would send for status; it must encode and decode back unchanged. */
static inline void fuzz_rpc_reply(const struct rpc_reply *rep)
{
	struct rpc_reply back;
	uint8_t *buf = NULL;
	size_t len = 0;
	XDR x;

	check(rpc_build_reply(rep, NULL, NULL, FUZZ_RPC_MAX_MSG, &buf, &len) == 0);
	check(len > RPC_FRAME_HDR_LEN);
	memset(&back, 0, sizeof(back));
	xdrmem_create(&x, (char *)buf + RPC_FRAME_HDR_LEN, (u_int)(len - RPC_FRAME_HDR_LEN),
		      XDR_DECODE);
	check(rpc_reply_decode(&x, &back) == 0);
	check(back.xid == rep->xid && back.status == rep->status);
	if (rep->status == RPC_STATUS_PROG_MISMATCH || rep->status == RPC_STATUS_RPC_MISMATCH)
		check(back.low == rep->low && back.high == rep->high);
	xdr_destroy(&x);
	free(buf);
}

/* One record, as rpc-server.c handles it (returns false when the server would close). */
static inline bool fuzz_rpc_record(const uint8_t *msg, size_t len, uint32_t prog,
				   uint32_t vers, fuzz_rpc_dispatch_fn dispatch)
{
	struct rpc_reply rep = { .status = RPC_STATUS_SUCCESS };
	struct rpc_call call = {};
	XDR x;
	int r;

	xdrmem_create(&x, (char *)msg, (u_int)len, XDR_DECODE);
	r = rpc_call_decode(&x, &call);
	rep.xid = call.xid;
	if (r == -EPROTONOSUPPORT) {
		rep.status = RPC_STATUS_RPC_MISMATCH;
		rep.low = rep.high = 2;
	} else if (r < 0) {
		check(r == -EBADMSG || r == -EMSGSIZE);
		xdr_destroy(&x);
		return false;
	} else if (call.prog != prog) {
		rep.status = RPC_STATUS_PROG_UNAVAIL;
	} else if (call.vers != vers) {
		rep.status = RPC_STATUS_PROG_MISMATCH;
		rep.low = rep.high = vers;
	} else {
		fuzz_rpc_msg = msg;
		rep.status = dispatch(&call, &x);
		fuzz_rpc_msg = NULL;
	}
	xdr_destroy(&x);
	if (rep.status != RPC_STATUS_SUCCESS)
		fuzz_rpc_reply(&rep);
	return true;
}

/* data[0] picks the read size (below 0x80: 1-128 bytes per read; else all at once); the
 * rest is the stream. */
static inline void fuzz_rpc_stream(const uint8_t *data, size_t size, uint32_t prog,
				   uint32_t vers, fuzz_rpc_dispatch_fn dispatch)
{
	struct rpc_framer fr;
	const uint8_t *s;
	size_t n, chunk, fed = 0, pos = 0;

	if (size < 1)
		return;
	chunk = data[0] < 0x80 ? (size_t)data[0] + 1 : size;
	s = data + 1;
	n = size - 1;
	rpc_framer_init(&fr, FUZZ_RPC_MAX_MSG);
	while (fed < n) {
		size_t want = MIN(chunk, n - fed), avail = 0;
		const uint8_t *msg;
		size_t mlen;
		uint8_t *p;
		int r;

		check(rpc_framer_reserve(&fr, want, &p, &avail) == 0 && avail >= want);
		memcpy(p, s + fed, want);
		rpc_framer_commit(&fr, want);
		fed += want;
		while ((r = rpc_framer_next(&fr, &msg, &mlen)) == 1) {
			/* the independent reading: one last fragment of 1..cap bytes at pos */
			uint32_t mark;

			check(pos + RPC_FRAME_HDR_LEN <= fed);
			mark = (uint32_t)s[pos] << 24 | (uint32_t)s[pos + 1] << 16 |
			       (uint32_t)s[pos + 2] << 8 | s[pos + 3];
			check((mark & RPC_FRAME_LAST) && (mark & ~RPC_FRAME_LAST) == mlen);
			check(mlen >= 1 && mlen <= FUZZ_RPC_MAX_MSG);
			check(pos + RPC_FRAME_HDR_LEN + mlen <= fed);
			check(memcmp(msg, s + pos + RPC_FRAME_HDR_LEN, mlen) == 0);
			pos += RPC_FRAME_HDR_LEN + mlen;
			if (!fuzz_rpc_record(msg, mlen, prog, vers, dispatch))
				goto out;
		}
		if (r < 0) {
			/* refused: the next record mark really is bad */
			uint32_t mark, l;

			check(pos + RPC_FRAME_HDR_LEN <= fed);
			mark = (uint32_t)s[pos] << 24 | (uint32_t)s[pos + 1] << 16 |
			       (uint32_t)s[pos + 2] << 8 | s[pos + 3];
			l = mark & ~RPC_FRAME_LAST;
			check(!(mark & RPC_FRAME_LAST) || l == 0 || l > FUZZ_RPC_MAX_MSG);
			goto out;
		}
	}
out:
	rpc_framer_done(&fr);
}
