/* The plugin interface.  A plugin is a shared object in PKGPLUGINDIR exporting
 *
 *     const struct nfskeys_plugin *nfskeys_plugin_entry(void);
 *
 * The loader checks abi, size and kind before using anything, never calls a NULL hook,
 * and loads only from the plugin directory ($NFSKEYS_PLUGIN_DIR is honoured for tests,
 * but never in a setuid/setgid process).  Kind-specific ops tables start with their own
 * size field so they can grow at the end. */
#pragma once

#include <stdint.h>

#include "nfskeys.h"

#define NFSKEYS_PLUGIN_ABI 1
#define NFSKEYS_PLUGIN_ENTRY "nfskeys_plugin_entry"

enum nfskeys_plugin_kind {
	NFSKEYS_PLUGIN_CRED = 1,  /* ops: struct nfskeys_cred_ops (cred-plugin.h) */
	NFSKEYS_PLUGIN_IDMAP = 2, /* ops: struct nfskeys_idmap_ops (idmap-plugin.h) */
};

struct nfskeys_plugin {
	uint32_t abi;  /* NFSKEYS_PLUGIN_ABI */
	uint32_t size; /* sizeof(struct nfskeys_plugin) */
	uint32_t kind; /* enum nfskeys_plugin_kind */
	const char *name;
	const char *description;
	const void *ops;   /* kind-specific table; its first member is uint32_t size */
	uint32_t ops_size; /* must equal that first member */
};

typedef const struct nfskeys_plugin *(*nfskeys_plugin_entry_fn)(void);

/* What every plugin defines (and exports with _public_). */
const struct nfskeys_plugin *nfskeys_plugin_entry(void);

/* Load (once per context) the plugin "name" and check it is of the given kind and its
 * ops table is at least min_ops_size bytes.  The plugin stays loaded until the context
 * is freed.  -ENOENT when no such plugin, -EPROTO on an ABI/size/kind mismatch,
 * -EINVAL for a bad name. */
int plugin_load(struct nfskeys_ctx *ctx, const char *name, uint32_t kind, uint32_t min_ops_size,
		const struct nfskeys_plugin **ret);

/* The directory plugins are loaded from for this process. */
const char *plugin_dir(void);

/* Names of the plugins of a kind found in the plugin directory (for listings); *ret is an
 * array of malloc()ed strings, sorted. */
int plugin_list(uint32_t kind, char ***ret, size_t *ret_count);
