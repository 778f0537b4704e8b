/* The context object itself, for the library's lowest parts (log.c, config.c, plugin.c)
 * and ctx.c, which creates it.  Everything else goes through libnfskeys-private.h's
 * accessors.  Not installed. */
#pragma once

#include <stdarg.h>

#include "libnfskeys-private.h"

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

/* log.c */
_printf_(6, 0) void ctx_log_stderr(void *userdata, int priority, const char *file, int line,
				   const char *fn, const char *format, va_list args);
/* A syslog priority by number (0-7) or name ("err", "warning", ...); -EINVAL otherwise. */
int ctx_log_priority_parse(const char *s);
