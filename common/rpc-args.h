/* Strict decoding of a call's arguments for the daemons' dispatchers (and the fuzz
 * targets that replay them).  libtirpc's xdr_string() accepts a string with NUL bytes
 * inside and hands back only the part before the first one ("alice\0..." arrives as
 * "alice"), so a decode that succeeded is checked to have consumed exactly as many bytes
 * as the decoded value encodes to.  Header-only; internal, never installed. */
#pragma once

#include <stdbool.h>
/* macros.h first, as in rpc-msg.h */
#include "macros.h"
#include <rpc/types.h>
#include <rpc/xdr.h>

/* Decode the arguments at args into obj (zeroed by the caller) with rpcgen routine fn.
 * false when they are malformed or not in the exact encoding; obj is then already freed
 * (xdr_free), so the caller answers GARBAGE_ARGS and must not free it again. */
static inline bool rpc_args_decode(XDR *args, xdrproc_t fn, void *obj)
{
	u_int start = xdr_getpos(args);

	if (fn(args, obj) && xdr_sizeof(fn, obj) == (u_long)(xdr_getpos(args) - start))
		return true;
	xdr_free(fn, (char *)obj);
	return false;
}
