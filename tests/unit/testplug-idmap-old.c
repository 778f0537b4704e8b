/* An idmap backend built against the ops table as it was before lookup_pair (NFSKEYS_0.5):
 * its size ends at lookup_nowait.  What follows it in a real old plugin is whatever the
 * linker put there; here a lookup_pair that aborts, so a loader or engine that reads a
 * hook past the size the plugin declared kills the test (test-plugin: test_old_ops). */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "idmap-plugin.h"
#include "macros.h"
#include "plugin.h"

static int old_lookup(void *data, struct nfskeys_ctx *ctx, struct nfskeys_idmap_request *req,
		      struct nfskeys_idmap_answer *ret)
{
	(void)data;
	(void)ctx;
	if (req->kind != NFSKEYS_IDMAP_NAME_TO_UID || strcmp(req->key, "old@example.org") != 0)
		return -ENOENT;
	ret->id = 4242;
	return 0;
}

static int beyond_size(void *data, struct nfskeys_ctx *ctx, struct nfskeys_idmap_request *req,
		       struct nfskeys_idmap_answer *ret, struct nfskeys_idmap_answer *rev)
{
	(void)data, (void)ctx, (void)req, (void)ret, (void)rev;
	abort();
}

static const struct nfskeys_idmap_ops ops = {
	.size = offsetof(struct nfskeys_idmap_ops, lookup_pair),
	.lookup = old_lookup,
	.kinds = IDMAP_KIND_BIT(NFSKEYS_IDMAP_NAME_TO_UID),
	.lookup_pair = beyond_size,
};

static const struct nfskeys_plugin plugin = {
	.abi = NFSKEYS_PLUGIN_ABI,
	.size = sizeof(plugin),
	.kind = NFSKEYS_PLUGIN_IDMAP,
	.name = "idmap-oldops",
	.description = "idmap backend with the ops table before lookup_pair",
	.ops = &ops,
	.ops_size = offsetof(struct nfskeys_idmap_ops, lookup_pair),
};

_public_ const struct nfskeys_plugin *nfskeys_plugin_entry(void)
{
	return &plugin;
}
