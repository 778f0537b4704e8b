/* What `nfskeys idmap`'s files share: the setup commands (cmd-idmap-setup.c) and the
 * lookups (cmd-idmap-lookup.c) that the dispatch in cmd-idmap.c calls. */
#pragma once

#include <stdbool.h>

#include "nfskeys.h"
#include "nfskeys-idmap.h"

/* import-conf: an idmapd.conf converted into nfskeys.conf settings */
int cmd_idmap_import_conf(int argc, char *argv[]);
/* enable-upcalls: install the request-key routing for nfskeys-upcall */
int cmd_idmap_enable_upcalls(int argc, char *argv[]);

/* cmd-idmap-lookup.c: one answer as a JSON object (no newline): lookup --json, query,
 * explain --json */
void print_answer_json(const char *key, const struct nfskeys_idmap_answer *a);
/* one answer, as text or as JSON */
void print_answer(const char *key, const struct nfskeys_idmap_answer *a, bool json);
/* explain's text for a person, every line escaped */
void print_explanation(const char *text, const char *key);
/* Look up the keys on the command line ("-": from stdin) through nfskeys-idmapd when it
 * answers at the configured socket (batched, in order, an error per key), else in this
 * process.  An EXIT_* code. */
int lookup_keys(struct nfskeys_ctx *ctx, const char *cmd, enum nfskeys_idmap_kind kind,
		bool sid_auto, int argc, char *argv[], unsigned flags, bool json, bool local);
