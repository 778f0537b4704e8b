/* The library's log macros: a message built only when the context's priority lets it
 * through, then handed to nfskeys_ctx_log() (public API only, so nfskeys-attrd may use
 * them through nfskeys-attr-daemon.h).  Not installed. */
#pragma once

#include <syslog.h>

#include "nfskeys.h"

#define log_cond(ctx, prio, ...)                                                          \
	do {                                                                              \
		struct nfskeys_ctx *_lc_ = (ctx);                                         \
		if (_lc_ && nfskeys_ctx_get_log_priority(_lc_) >= (prio))                 \
			nfskeys_ctx_log(_lc_, prio, __FILE__, __LINE__, __func__, __VA_ARGS__); \
	} while (0)

#define log_debug(ctx, ...) log_cond(ctx, LOG_DEBUG, __VA_ARGS__)
#define log_info(ctx, ...) log_cond(ctx, LOG_INFO, __VA_ARGS__)
#define log_notice(ctx, ...) log_cond(ctx, LOG_NOTICE, __VA_ARGS__)
#define log_warning(ctx, ...) log_cond(ctx, LOG_WARNING, __VA_ARGS__)
#define log_err(ctx, ...) log_cond(ctx, LOG_ERR, __VA_ARGS__)
