/* Internal declarations shared by the library's source files.  Not installed. */
#pragma once

#include <syslog.h>

#include "macros.h"
#include "nfskeys.h"

/* Per-area state hung off the context, created lazily by each area. */
enum ctx_ext_slot {
	CTX_EXT_CRED,
	CTX_EXT_IDMAP,
	CTX_EXT_ATTR,
	CTX_EXT_WB,
	_CTX_EXT_MAX,
};

void *ctx_ext_get(const struct nfskeys_ctx *ctx, enum ctx_ext_slot slot);
/* Attach data with its destructor (called at the last unref); replaces and frees any
 * previous data in the slot. */
void ctx_ext_set(struct nfskeys_ctx *ctx, enum ctx_ext_slot slot, void *data,
		 void (*free_fn)(void *data));

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

/* config.c */
struct conf;
/* ret_skipped NULL: any file with an error fails the load; else drop-ins with errors are
 * counted there and the load goes on (nfskeys_ctx_new_partial); the main file must
 * parse either way. */
int conf_load(struct nfskeys_ctx *ctx, const char *path, bool explicit_path,
	      unsigned *ret_skipped, struct conf **ret);
struct conf *conf_free(struct conf *conf);

/* conf-schema.c: the typed schema (conf-schema.h) */
#include "conf-schema.h"

/* plugin.c: see plugin.h for the loader interface. */
struct plugin_registry;
struct plugin_registry *plugin_registry_free(struct plugin_registry *reg);
