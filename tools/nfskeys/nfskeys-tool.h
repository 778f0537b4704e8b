/* The nfskeys multi-call tool: the command table and what each command file provides. */
#pragma once

#include "cli.h"
#include "cli-table.h"
#include "macros.h"
#include "nfskeys.h"

struct nfskeys_cmd {
	const char *name;
	/* argv[0] is the command name; ctx is loaded unless the command sets no_ctx. */
	int (*fn)(struct nfskeys_ctx *ctx, int argc, char *argv[]);
	const char *help; /* the subcommands' names follow it in 'nfskeys help' */
	bool no_ctx;
	const struct cli_sub *subs; /* its subcommands (NULL: none), as it dispatches them */
};

/* Each command's subcommand table, read by its dispatch, its --help and 'nfskeys help'. */
extern const struct cli_sub keys_subs[], cifs_subs[], afs_subs[], nfs_subs[], idmap_subs[],
	idmapd_subs[], wb_subs[];

/* Exit codes (documented in nfskeys(1)). */
enum {
	EXIT_OK = 0,
	EXIT_FAIL = 1,  /* the operation failed */
	EXIT_USAGE = 2, /* bad command line */
	EXIT_CONFIG = 3 /* configuration could not be loaded */
};

/* cmd-keys.c: a JSON string on standard output, escaped (invalid UTF-8 as \u00XX). */
void print_json_str(const char *s);
/* cmd-keys.c: text from another party (key descriptions, principals, names a backend
 * gave) on standard output through display_escape(): control bytes and invalid UTF-8 as
 * \xNN so they cannot drive the terminal, valid UTF-8 as it is. */
void print_text_safe(const char *s);
/* nfskeys status: every credential held for the three filesystems (tools/nfskeys/cmd-status.c) */
int cmd_status(struct nfskeys_ctx *ctx, int argc, char *argv[]);
int cmd_keys(struct nfskeys_ctx *ctx, int argc, char *argv[]);
/* credential commands */
int cmd_cifs(struct nfskeys_ctx *ctx, int argc, char *argv[]);
int cmd_afs(struct nfskeys_ctx *ctx, int argc, char *argv[]);
int cmd_nfs(struct nfskeys_ctx *ctx, int argc, char *argv[]);
/* idmap commands */
int cmd_idmap(struct nfskeys_ctx *ctx, int argc, char *argv[]);
/* idmapd commands */
int cmd_idmapd(struct nfskeys_ctx *ctx, int argc, char *argv[]);
/* doctor: the installed system's health (tools/nfskeys/cmd-doctor.c) */
int cmd_doctor(struct nfskeys_ctx *ctx, int argc, char *argv[]);
/* wb: a kernel mount's bdi dirty limit and the mountstats loop (tools/nfskeys/cmd-wb.c) */
int cmd_wb(struct nfskeys_ctx *ctx, int argc, char *argv[]);
/* nfskeys idmap explain: which path asked nfskeys-idmapd for kind/key lately (one or more
 * lines on standard output, whatever the daemon's state). */
void explain_recent(struct nfskeys_ctx *ctx, enum nfskeys_idmap_kind kind, const char *key);
/* cmd-idmap.c: nfskeys_idmap_check_config() with its message in buf instead of the log
 * (for doctor); 0 when the chain's backends are all installed, else -errno.  Leaves ctx
 * on the default log sink. */
int tool_idmap_config_problem(struct nfskeys_ctx *ctx, char *buf, size_t size);
/* The same records as a JSON array, or null and "recent_error" (a member's value and
 * the members after it, inside the caller's object). */
void explain_recent_json(struct nfskeys_ctx *ctx, enum nfskeys_idmap_kind kind, const char *key);
/* "nfskeys idmap stats ...": argv[0] is "stats". */
int cmd_idmapd_stats(struct nfskeys_ctx *ctx, int argc, char *argv[]);

/* nfskeys -c FILE (NULL: $NFSKEYS_CONF or the default), and whether it failed to load:
 * then the idmapd commands run with no context (they need only the daemon's socket). */
extern const char *tool_config_path;
extern bool tool_config_failed;

/* Print "PROGRAM: " + message to stderr (cli_verror_self); returns EXIT_FAIL. */
int tool_error(const char *fmt, ...) _printf_(1, 2);
/* A time (seconds since the epoch) as "%Y-%m-%d %H:%M:%S" local time, "never" when <= 0. */
void tool_format_time(int64_t t, char *buf, size_t size);
