/* Strict decoding of a call's arguments for the daemons' dispatchers (and the fuzz
 * targets that replay them).  libtirpc's xdr_string() accepts a string with NUL bytes
 * inside and hands back only the part before the first one ("alice\0..." arrives as
 * "alice"), so a decode that succeeded is checked to re-encode to exactly the bytes it
 * came from.  Header-only; internal, never installed. */
#pragma once

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
/* macros.h first, as in rpc-msg.h */
#include "macros.h"
#include <rpc/types.h>
#include <rpc/xdr.h>

/* Decode the arguments at args (an xdrmem stream, as rpc-server.c makes) into obj (zeroed
 * by the caller) with rpcgen routine fn, and check that obj encodes back to exactly the
 * bytes it was read from: a NUL inside a string, a boolean other than 0 or 1 and
 * non-zero padding are refused.  false when malformed; obj is then already freed
 * (xdr_free), so the caller answers GARBAGE_ARGS and must not free it again. */
static inline bool rpc_args_decode(XDR *args, xdrproc_t fn, void *obj)
{
	u_int start = xdr_getpos(args), len;
	const char *wire;
	char small[2048], *enc = NULL; /* most arguments re-encode on the stack */
	bool ok = false;
	XDR e;

	if (!fn(args, obj))
		goto out;
	len = xdr_getpos(args) - start;
	if (len == 0)
		return true; /* nothing read (empty argument list) */
	/* the bytes just decoded, through the public API: back to the start, take them */
	if (!xdr_setpos(args, start) || !(wire = (const char *)xdr_inline(args, (int)len)))
		goto out;
	enc = len <= sizeof(small) ? small : malloc(len);
	if (!enc)
		goto out;
	xdrmem_create(&e, enc, len, XDR_ENCODE);
	ok = fn(&e, obj) && xdr_getpos(&e) == len && memcmp(enc, wire, len) == 0;
	xdr_destroy(&e);
out:
	if (enc != small)
		free(enc);
	if (!ok)
		xdr_free(fn, (char *)obj);
	return ok;
}
