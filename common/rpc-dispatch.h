/* The dispatch table both daemons answer their calls from: one row per procedure with
 * its number, its name (logs and the op="" label of metrics), who may call it and the
 * function that answers it.  A daemon declares its row type once with RPC_PROC_ROW, so
 * that the handlers take the daemon's own object and the compiler checks every row.
 * Internal; never installed. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "macros.h"
#include "rpc-server.h"

/* Who may make a call.  The handler does the check itself (rpc_caller_permitted), after
 * decoding its arguments, so that a refusal is answered in the procedure's own result. */
enum rpc_caller {
	RPC_CALLER_ANY,	 /* every local user */
	RPC_CALLER_ROOT, /* uid 0 only */
};

/* struct tag { proc, name, who, handler }, handler answering with the object daemon_type. */
#define RPC_PROC_ROW(tag, daemon_type)                                                \
	struct tag {                                                                  \
		uint32_t proc;                                                        \
		const char *name;                                                     \
		enum rpc_caller who;                                                  \
		void (*handler)(daemon_type *d, struct rpc_request *req, XDR *args);  \
	}

/* The row of table (an array indexed by procedure number) for proc, or NULL when the
 * program has no such procedure. */
#define RPC_PROC_FIND(table, proc) \
	((proc) < ARRAY_SIZE(table) && (table)[proc].handler ? &(table)[proc] : NULL)

static inline bool rpc_caller_permitted(enum rpc_caller who, const struct ucred *peer)
{
	return who == RPC_CALLER_ANY || peer->uid == 0;
}
