/* The credential plugin interface (kind NFSKEYS_PLUGIN_CRED): what a plugin for one
 * network filesystem provides to libnfskeys/cred.c.  Internal: built into the plugins
 * in this tree, never installed. */
#pragma once

#include <stdint.h>

#include "nfskeys.h"
#include "plugin.h"

/* Plugin file name for filesystem fs: "cred-<fs>". */
#define NFSKEYS_CRED_PLUGIN_PREFIX "cred-"

struct nfskeys_cred_ops {
	uint32_t size; /* sizeof(struct nfskeys_cred_ops) as the plugin was built */
	const char *fs; /* "cifs", "afs", "nfs": must match the plugin name's suffix */
	/* Kernel key type and description prefix of this filesystem's keys; the library
	 * lists and clears them generically.  NULL when credentials are not kernel keys
	 * (then list and clear_all must be given). */
	const char *key_type;
	const char *desc_prefix;

	/* Add (update false: -EEXIST when present) or update (update true: -ENOKEY when
	 * absent) the credential for p in keyring.  Returns the number of keys written. */
	int (*add)(struct nfskeys_ctx *ctx, const struct nfskeys_cred_params *p, int32_t keyring,
		   bool update);
	/* Find the credential for p; -ENOKEY when absent. */
	int (*find)(struct nfskeys_ctx *ctx, const struct nfskeys_cred_params *p, int32_t keyring,
		    struct nfskeys_cred_info *ret_info);
	/* Remove it; returns the number removed, -ENOKEY when none. */
	int (*clear)(struct nfskeys_ctx *ctx, const struct nfskeys_cred_params *p,
		     int32_t keyring);
	/* Optional: build the payload without adding it. */
	int (*build)(struct nfskeys_ctx *ctx, const struct nfskeys_cred_params *p,
		     struct nfskeys_secret **ret_payload, struct nfskeys_cred_info *ret_info);
	/* Optional: renew. */
	int (*renew)(struct nfskeys_ctx *ctx, const struct nfskeys_cred_params *p,
		     struct nfskeys_cred_info *ret_info);
	/* Optional when key_type is set: list / clear every credential of this fs. */
	int (*list)(struct nfskeys_ctx *ctx, int32_t keyring, struct nfskeys_cred_info **ret,
		    size_t *ret_count);
	int (*clear_all)(struct nfskeys_ctx *ctx, int32_t keyring);
};

/* Smallest ops table the library accepts (the first published layout). */
#define NFSKEYS_CRED_OPS_MIN_SIZE ((uint32_t)sizeof(struct nfskeys_cred_ops))

/* The entry point every credential plugin defines (see plugin.h). */
const struct nfskeys_plugin *nfskeys_plugin_entry(void);
