/* The library context: creation from the configuration, reference counting and per-area
 * state.  The log sink is log.c, the configuration store config.c, plugins plugin.c. */
#include <stdarg.h>

#include "conf-schema.h"
#include "ctx-private.h"

static int ctx_new(const char *conf_path, nfskeys_log_fn log_fn, void *userdata,
		   unsigned *ret_skipped, struct nfskeys_ctx **ret_ctx)
{
	struct nfskeys_ctx *ctx;
	const char *env, *verbosity;
	bool explicit_path = true;
	int r;

	if (!ret_ctx)
		return -EINVAL;

	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return -ENOMEM;
	ctx->refcount = 1;
	ctx->log_fn = log_fn ? log_fn : ctx_log_stderr;
	ctx->log_data = log_fn ? userdata : NULL;
	ctx->log_priority = LOG_ERR;
	env = secure_getenv("NFSKEYS_LOG");
	if (env) {
		r = ctx_log_priority_parse(env);
		if (r >= 0)
			ctx->log_priority = r;
	}

	if (!conf_path) {
		/* secure_getenv() already returns NULL in a setuid/setgid process. */
		conf_path = secure_getenv("NFSKEYS_CONF");
		if (!conf_path || !*conf_path) {
			conf_path = SYSCONFDIR "/nfskeys/nfskeys.conf";
			explicit_path = false;
		}
	}
	ctx->conf_path = strdup(conf_path);
	if (!ctx->conf_path) {
		free(ctx);
		return -ENOMEM;
	}

	r = conf_load(ctx, ctx->conf_path, explicit_path, ret_skipped, &ctx->conf);
	if (r < 0) {
		nfskeys_ctx_unref(ctx);
		return r;
	}
	/* [General] Verbosity applies from here on; of it and $NFSKEYS_LOG the more verbose
	 * wins (so a tool may set a floor in the environment). */
	verbosity = nfskeys_conf_get(ctx, "General", "Verbosity");
	if (verbosity) {
		r = ctx_log_priority_parse(verbosity);
		if (r < 0) {
			/* the load refuses it first (config.c); the schema's words if not */
			char expect[256];

			conf_schema_expect(conf_schema_find("General", "Verbosity"), expect,
					   sizeof(expect));
			log_err(ctx, "%s: bad value: [General] Verbosity = %s: expected %s",
				ctx->conf_path, verbosity, expect);
			nfskeys_ctx_unref(ctx);
			return -EINVAL;
		}
		ctx->log_priority = MAX(ctx->log_priority, r);
	}
	log_debug(ctx, "context %p created from %s", (void *)ctx, ctx->conf_path);
	*ret_ctx = ctx;
	return 0;
}

_public_ int nfskeys_ctx_new_full(const char *conf_path, nfskeys_log_fn log_fn, void *userdata,
				  struct nfskeys_ctx **ret_ctx)
{
	return ctx_new(conf_path, log_fn, userdata, NULL, ret_ctx);
}

_public_ int nfskeys_ctx_new_partial(const char *conf_path, nfskeys_log_fn log_fn,
				     void *userdata, struct nfskeys_ctx **ret_ctx,
				     unsigned *ret_skipped)
{
	unsigned skipped = 0;
	int r;

	if (!ret_skipped)
		return -EINVAL;
	r = ctx_new(conf_path, log_fn, userdata, &skipped, ret_ctx);
	if (r == 0)
		*ret_skipped = skipped;
	return r;
}

_public_ int nfskeys_ctx_new(const char *conf_path, struct nfskeys_ctx **ret_ctx)
{
	return nfskeys_ctx_new_full(conf_path, NULL, NULL, ret_ctx);
}

_public_ struct nfskeys_ctx *nfskeys_ctx_ref(struct nfskeys_ctx *ctx)
{
	if (!ctx)
		return NULL;
	ctx->refcount++;
	return ctx;
}

_public_ struct nfskeys_ctx *nfskeys_ctx_unref(struct nfskeys_ctx *ctx)
{
	if (!ctx)
		return NULL;
	if (--ctx->refcount > 0)
		return NULL;
	/* Areas first (they may still use plugins), then plugins, then configuration. */
	for (int i = _CTX_EXT_MAX - 1; i >= 0; i--)
		if (ctx->ext[i].data && ctx->ext[i].free_fn)
			ctx->ext[i].free_fn(ctx->ext[i].data);
	ctx->plugins = plugin_registry_free(ctx->plugins);
	ctx->conf = conf_free(ctx->conf);
	free(ctx->conf_path);
	free(ctx);
	return NULL;
}

_public_ const char *nfskeys_ctx_get_conf_path(const struct nfskeys_ctx *ctx)
{
	return ctx ? ctx->conf_path : NULL;
}

void *ctx_ext_get(const struct nfskeys_ctx *ctx, enum ctx_ext_slot slot)
{
	if (!ctx || slot >= _CTX_EXT_MAX)
		return NULL;
	return __atomic_load_n(&ctx->ext[slot].data, __ATOMIC_ACQUIRE);
}

void ctx_ext_set(struct nfskeys_ctx *ctx, enum ctx_ext_slot slot, void *data,
		 void (*free_fn)(void *data))
{
	if (!ctx || slot >= _CTX_EXT_MAX)
		return;
	if (ctx->ext[slot].data && ctx->ext[slot].free_fn && ctx->ext[slot].data != data)
		ctx->ext[slot].free_fn(ctx->ext[slot].data);
	ctx->ext[slot].free_fn = free_fn;
	__atomic_store_n(&ctx->ext[slot].data, data, __ATOMIC_RELEASE);
}
