/* What the store's files share (attr-store.c: open, schema, snapshot, index load;
 * attr-store-write.c: the write path; attr-store-list.c: listing rows): the store object
 * and the SQLite helpers.  Only libnfskeys/attr-store*.c include it. */
#pragma once

#include <sqlite3.h>

#include "attr-private.h"

struct nfskeys_attr_store {
	struct nfskeys_ctx *ctx;
	bool holds_ctx; /* false for the context's own read store (no reference cycle) */
	sqlite3 *db;
	char *path;
	bool writable;
	int version;
	int64_t data_version;
	struct attr_index *index;
	bool publish_failed;    /* the snapshot lags behind the last commit */
	bool snap;              /* a reader of the published snapshot */
	dev_t snap_dev;         /* ... which file it opened (a new one is renamed in) */
	ino_t snap_ino;
};

/* Log the failed step with SQLite's message; rc as an -errno. */
int attr_store_sql_err(struct nfskeys_attr_store *st, int rc, const char *what);
/* Run sql (no rows expected). */
int attr_store_exec(struct nfskeys_attr_store *st, const char *sql);
/* The in-memory index rebuilt from what is stored, swapped in only once it is whole. */
int attr_store_reload_index(struct nfskeys_attr_store *st);
