/* The library's log sink: the caller's callback (stderr by default) and the priority
 * filter ($NFSKEYS_LOG, [General] Verbosity, nfskeys_ctx_set_log_priority). */
#include <stdarg.h>

#include "ctx-private.h"
#include "log-escape.h"

_printf_(6, 0) void ctx_log_stderr(void *userdata, int priority, const char *file, int line,
				   const char *fn, const char *format, va_list args)
{
	static const char *const names[] = { "emerg", "alert", "crit", "error",
					     "warning", "notice", "info", "debug" };

	char raw[LOG_LINE_MAX], shown[LOG_LINE_MAX];

	/* the running program's name (nfsattr, nfskeys-mount, ...), as its own errors; a
	 * message quotes paths and names a user chose: escaped for the terminal */
	vsnprintf(raw, sizeof(raw), format, args);
	display_escape(shown, sizeof(shown), raw);
	fprintf(stderr, "%s: %s: %s\n", program_invocation_short_name, names[priority & 7], shown);
}

int ctx_log_priority_parse(const char *s)
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

_public_ void nfskeys_ctx_set_log_fn(struct nfskeys_ctx *ctx, nfskeys_log_fn log_fn,
				     void *userdata)
{
	if (!ctx)
		return;
	ctx->log_fn = log_fn ? log_fn : ctx_log_stderr;
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
	char msg[LOG_LINE_MAX];

	if (!ctx || !format || priority > ctx->log_priority)
		return;
	/* Messages carry untrusted text (key descriptions, paths, lookup keys): every log
	 * sink gets it escaped (log-escape.h), as "%s". */
	va_start(ap, format);
	log_vformat(msg, sizeof(msg), format, ap);
	va_end(ap);
	call_log_fn(ctx, priority, file, line, fn, "%s", msg);
}
