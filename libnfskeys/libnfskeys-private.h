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

/* The slot's data: an acquire load, so a thread that sees the pointer another thread
 * published (idmap_state_get's unlocked first look) sees the data it points to whole. */
void *ctx_ext_get(const struct nfskeys_ctx *ctx, enum ctx_ext_slot slot);
/* Attach data with its destructor (called at the last unref); replaces and frees any
 * previous data in the slot.  Published with a release store; callers that may race to
 * set a slot serialize among themselves (the old data is freed here). */
void ctx_ext_set(struct nfskeys_ctx *ctx, enum ctx_ext_slot slot, void *data,
		 void (*free_fn)(void *data));

#include "ctx-log.h"

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
