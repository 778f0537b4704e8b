/* A plugin for the loader test, built several times with different defines. */
#include <stdint.h>

#include "macros.h"
#include "plugin.h"

struct testplug_ops {
	uint32_t size;
	int (*answer)(void);
};

static int answer(void)
{
	return 42;
}

static const struct testplug_ops ops = { .size = sizeof(ops), .answer = answer };

#ifndef TP_NO_ENTRY
static const struct nfskeys_plugin plugin = {
	.abi = TP_ABI,
	.size = sizeof(plugin),
	.kind = TP_KIND,
	.name = TP_NAME,
	.description = "loader test plugin",
	.ops = &ops,
	.ops_size = sizeof(ops),
};

_public_ const struct nfskeys_plugin *nfskeys_plugin_entry(void)
{
	return &plugin;
}
#else
const void *not_the_entry(void);
_public_ const void *not_the_entry(void)
{
	return &ops;
}
#endif
