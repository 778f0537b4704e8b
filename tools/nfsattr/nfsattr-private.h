/* What nfsattr's parts share: the exit codes, the options, the error line (nfsattr-util.c)
 * and the commands that main dispatches to (nfsattr-show.c reads, nfsattr-change.c
 * changes, nfsattr-status.c the daemon's statistics and sub-mounts). */
#pragma once

#include <stdarg.h>
#include <stdbool.h>

#include "macros.h"

struct nfskeys_attr_id;
struct nfskeys_ctx;

enum {
	EXIT_OK = 0,
	EXIT_FAIL = 1,
	EXIT_USAGE = 2,
	EXIT_CONFIG = 3,
	EXIT_REFUSED = 4,
	EXIT_NODAEMON = 5,
};

struct opts {
	bool json, direct, all, prometheus;
	const char *socket, *options, *fstype;
	struct nfskeys_ctx *ctx;
};

/* "nfsattr: ..." on stderr; returns EXIT_FAIL. */
_printf_(1, 2) int nfsattr_fail(const char *fmt, ...);
/* The library has printed an error (naming its cause) since the start. */
extern bool nfsattr_library_said;
/* The policy store could not be read (-r): said once, by the library where it named the
 * cause, else here; returns EXIT_FAIL. */
int nfsattr_store_fail(int r);
/* s as it may be shown to a person: control bytes, invalid UTF-8 and bidirectional
 * controls as \xNN, a backslash as \\ (common/log-escape.h's display_escape).  The
 * result lives in one of 8 rotating buffers: enough for one printf, not for keeping. */
const char *nfsattr_shown(const char *s);
/* The library's log sink: its messages as its default sink prints them (libnfskeys/log.c),
 * escaped, noting in nfsattr_library_said that an error was said. */
_printf_(6, 0) void nfsattr_log(void *userdata, int priority, const char *file, int line,
				const char *fn, const char *format, va_list args);
/* DOMAIN/PATH of an identity (malloc'd; NULL when out of memory). */
char *nfsattr_id_string(const struct nfskeys_attr_id *id);

/* nfsattr-show.c: get and show (effective), list and export, mount-options, writeback */
int nfsattr_cmd_lookup(struct opts *o, int argc, char **argv, bool effective);
int nfsattr_cmd_list(struct opts *o, int argc, char **argv, bool export_mode);
int nfsattr_cmd_mount_options(struct opts *o, int argc, char **argv);
int nfsattr_cmd_writeback(struct opts *o, int argc, char **argv);
/* nfsattr-change.c: set, unset and import, through nfskeys-attrd or --direct */
int nfsattr_cmd_set(struct opts *o, int argc, char **argv);
int nfsattr_cmd_unset(struct opts *o, int argc, char **argv);
int nfsattr_cmd_import(struct opts *o, int argc, char **argv);
/* nfsattr-status.c: the daemon's statistics and its sub-mounts */
int nfsattr_cmd_stats(struct opts *o, int argc, char **argv);
int nfsattr_cmd_status(struct opts *o, int argc, char **argv);
