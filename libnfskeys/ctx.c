/* The library context: reference counting, the log sink and per-area state. */
#include <stdarg.h>

#include "libnfskeys-private.h"
#include "log-escape.h"

struct nfskeys_ctx {
	int refcount;
	nfskeys_log_fn log_fn;
	void *log_data;
	int log_priority;
	char *conf_path;
	struct conf *conf;
	struct plugin_registry *plugins;
	struct {
		void *data;
		void (*free_fn)(void *data);
	} ext[_CTX_EXT_MAX];
};

_printf_(6, 0) static void log_stderr(void *userdata, int priority, const char *file, int line,
		       const char *fn, const char *format, va_list args)
{
	static const char *const names[] = { "emerg", "alert", "crit", "error",
					     "warning", "notice", "info", "debug" };

	fprintf(stderr, "nfskeys: %s: ", names[priority & 7]);
	vfprintf(stderr, format, args);
	fputc('\n', stderr);
}

static int log_priority_parse(const char *s)
{
	static const char *const names[] = { "emerg", "alert", "crit", "err",
					     "warning", "notice", "info", "debug" };
	char *end;
	long v;

	if (!s || !*s)
		return -EINVAL;
	v = strtol(s, &end, 10);
	if (*end == '\0')
		return (v >= 0 && v <= 7) ? (int)v : -EINVAL;
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (strcaseeq(s, names[i]))
			return (int)i;
	if (strcaseeq(s, "error"))
		return LOG_ERR;
	if (strcaseeq(s, "warn"))
		return LOG_WARNING;
	return -EINVAL;
}

_public_ int nfskeys_ctx_new_full(const char *conf_path, nfskeys_log_fn log_fn, void *userdata,
				  struct nfskeys_ctx **ret_ctx)
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
	ctx->log_fn = log_fn ? log_fn : log_stderr;
	ctx->log_data = log_fn ? userdata : NULL;
	ctx->log_priority = LOG_ERR;
	env = secure_getenv("NFSKEYS_LOG");
	if (env) {
		r = log_priority_parse(env);
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

	r = conf_load(ctx, ctx->conf_path, explicit_path, &ctx->conf);
	if (r < 0) {
		nfskeys_ctx_unref(ctx);
		return r;
	}
	/* [General] Verbosity applies from here on; of it and $NFSKEYS_LOG the more verbose
	 * wins (so a tool may set a floor in the environment). */
	verbosity = nfskeys_conf_get(ctx, "General", "Verbosity");
	if (verbosity) {
		r = log_priority_parse(verbosity);
		if (r < 0) {
			log_err(ctx, "%s: [General] Verbosity: invalid value '%s' (use err, "
				"warning, notice, info, debug or 0-7)", ctx->conf_path, verbosity);
			nfskeys_ctx_unref(ctx);
			return -EINVAL;
		}
		ctx->log_priority = MAX(ctx->log_priority, r);
	}
	log_debug(ctx, "context %p created from %s", (void *)ctx, ctx->conf_path);
	*ret_ctx = ctx;
	return 0;
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

_public_ void nfskeys_ctx_set_log_fn(struct nfskeys_ctx *ctx, nfskeys_log_fn log_fn,
				     void *userdata)
{
	if (!ctx)
		return;
	ctx->log_fn = log_fn ? log_fn : log_stderr;
	ctx->log_data = log_fn ? userdata : NULL;
}

_public_ int nfskeys_ctx_get_log_priority(const struct nfskeys_ctx *ctx)
{
	return ctx ? ctx->log_priority : LOG_ERR;
}

_public_ void nfskeys_ctx_set_log_priority(struct nfskeys_ctx *ctx, int priority)
{
	if (!ctx)
		return;
	ctx->log_priority = MAX(0, MIN(priority, LOG_DEBUG));
}

_printf_(6, 7) static void call_log_fn(struct nfskeys_ctx *ctx, int priority, const char *file,
				      int line, const char *fn, const char *format, ...)
{
	va_list ap;

	va_start(ap, format);
	ctx->log_fn(ctx->log_data, priority, file, line, fn, format, ap);
	va_end(ap);
}

_public_ void nfskeys_ctx_log(struct nfskeys_ctx *ctx, int priority, const char *file, int line,
			      const char *fn, const char *format, ...)
{
	va_list ap;

	if (!ctx || !format || priority > ctx->log_priority)
		return;
	char msg[LOG_LINE_MAX];

	/* Messages carry untrusted text (key descriptions, paths, lookup keys): every log
	 * sink gets it escaped (log-escape.h), as "%s". */
	va_start(ap, format);
	log_vformat(msg, sizeof(msg), format, ap);
	va_end(ap);
	call_log_fn(ctx, priority, file, line, fn, "%s", msg);
}

_public_ const char *nfskeys_ctx_get_conf_path(const struct nfskeys_ctx *ctx)
{
	return ctx ? ctx->conf_path : NULL;
}

const struct conf *ctx_get_conf(const struct nfskeys_ctx *ctx)
{
	return ctx ? ctx->conf : NULL;
}

struct plugin_registry **ctx_plugins(struct nfskeys_ctx *ctx)
{
	return &ctx->plugins;
}

void *ctx_ext_get(const struct nfskeys_ctx *ctx, enum ctx_ext_slot slot)
{
	if (!ctx || slot >= _CTX_EXT_MAX)
		return NULL;
	return ctx->ext[slot].data;
}

void ctx_ext_set(struct nfskeys_ctx *ctx, enum ctx_ext_slot slot, void *data,
		 void (*free_fn)(void *data))
{
	if (!ctx || slot >= _CTX_EXT_MAX)
		return;
	if (ctx->ext[slot].data && ctx->ext[slot].free_fn && ctx->ext[slot].data != data)
		ctx->ext[slot].free_fn(ctx->ext[slot].data);
	ctx->ext[slot].data = data;
	ctx->ext[slot].free_fn = free_fn;
}
