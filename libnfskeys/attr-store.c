/* The policy store: one SQLite database in WAL mode, schema version in PRAGMA
 * user_version with step-by-step migrations, every change committed durably
 * (synchronous=FULL) before the call returns, and an in-memory index kept in step with
 * it.  The database and its -wal/-shm are the writer's alone (0600): anyone who can open
 * them can hold a lock that stalls every write.  After each commit the writer publishes
 * a snapshot (PATH.snapshot, 0644, VACUUM INTO a temporary file then rename), which the
 * library's read path opens immutable (no locks at all), so readers never touch the
 * live database.  Here: opening, schema and migrations, the snapshot, loading and
 * refreshing the index; the write path is attr-store-write.c, listing attr-store-list.c. */
#include <fcntl.h>
#include <limits.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <linux/openat2.h>

#include "attr-store-private.h"
#include "socket-path.h"

#define SNAPSHOT_SUFFIX ".snapshot"

static void snapshot_path(const struct nfskeys_attr_store *st, char *buf, size_t size)
{
	snprintf(buf, size, "%s" SNAPSHOT_SUFFIX, st->path);
}

static bool snapshot_exists(const struct nfskeys_attr_store *st)
{
	char snap[PATH_MAX + sizeof(SNAPSHOT_SUFFIX)];

	snapshot_path(st, snap, sizeof(snap));
	return access(snap, F_OK) == 0;
}

/* "file:PATH?immutable=1" with PATH %-escaped as URIs need. */
static char *immutable_uri(const char *path)
{
	size_t n = strlen(path);
	char *u = malloc(3 * n + 32), *p;

	if (!u)
		return NULL;
	p = stpcpy(u, "file:");
	for (const unsigned char *c = (const unsigned char *)path; *c; c++) {
		if (*c == '%' || *c == '?' || *c == '#' || *c < 0x20 || *c >= 0x7f)
			p += sprintf(p, "%%%02X", *c);
		else
			*p++ = (char)*c;
	}
	strcpy(p, "?immutable=1");
	return u;
}

/* Schema history.  Version 1 had no origin column (every row local); version 2 tells
 * local rows from LDAP-sourced ones and adds a meta table (sync state); version 3 keys
 * a policy set through nfskeys-attrd to the directory's file handle as well as its path
 * (handle, and local: where nfskeys-attrd saw it, to check that it is still there) and
 * indexes rows by setter for the per-user limits.  Rows from before have no handle. */
static const char *const migrations[ATTR_SCHEMA_VERSION] = {
	/* 0 -> 1 */
	"CREATE TABLE attrs ("
	" domain TEXT NOT NULL, path TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,"
	" set_by INTEGER NOT NULL, set_at INTEGER NOT NULL,"
	" PRIMARY KEY (domain, path, key)) WITHOUT ROWID;",
	/* 1 -> 2 */
	"CREATE TABLE attrs2 ("
	" domain TEXT NOT NULL, path TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,"
	" origin INTEGER NOT NULL DEFAULT 0, set_by INTEGER NOT NULL, set_at INTEGER NOT NULL,"
	" PRIMARY KEY (domain, path, key, origin)) WITHOUT ROWID;"
	"INSERT INTO attrs2 (domain, path, key, value, origin, set_by, set_at)"
	" SELECT domain, path, key, value, 0, set_by, set_at FROM attrs;"
	"DROP TABLE attrs;"
	"ALTER TABLE attrs2 RENAME TO attrs;"
	"CREATE TABLE meta (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL) WITHOUT ROWID;",
	/* 2 -> 3 */
	"ALTER TABLE attrs ADD COLUMN handle TEXT;"
	"ALTER TABLE attrs ADD COLUMN local TEXT;"
	"CREATE INDEX attrs_by_setter ON attrs (set_by, origin);",
};

int attr_store_sql_err(struct nfskeys_attr_store *st, int rc, const char *what)
{
	log_err(st->ctx, "attr store %s: %s: %s", st->path, what, sqlite3_errmsg(st->db));
	switch (rc & 0xff) {
	case SQLITE_NOMEM:
		return -ENOMEM;
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return -EBUSY;
	case SQLITE_READONLY:
		return -EROFS;
	case SQLITE_CANTOPEN:
		return -ENOENT;
	case SQLITE_PERM:
	case SQLITE_AUTH:
		return -EACCES;
	case SQLITE_FULL:
		return -ENOSPC;
	case SQLITE_CORRUPT:
	case SQLITE_NOTADB:
		return -EBADMSG;
	default:
		return -EIO;
	}
}

int attr_store_exec(struct nfskeys_attr_store *st, const char *sql)
{
	int rc = sqlite3_exec(st->db, sql, NULL, NULL, NULL);

	return rc == SQLITE_OK ? 0 : attr_store_sql_err(st, rc, sql);
}

static int pragma_int(struct nfskeys_attr_store *st, const char *sql, int64_t *ret)
{
	sqlite3_stmt *s;
	int rc;

	rc = sqlite3_prepare_v2(st->db, sql, -1, &s, NULL);
	if (rc != SQLITE_OK)
		return attr_store_sql_err(st, rc, sql);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		*ret = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return rc == SQLITE_ROW ? 0 : attr_store_sql_err(st, rc, sql);
}

/* [section] key when set, else FILE in the [General] dir_key directory (default dir). */
const char *attr_default_store_path(const struct nfskeys_ctx *ctx)
{
	static __thread char buf[4096];

	return socket_path_pick(nfskeys_conf_get(ctx, "Attr", "Store"),
				nfskeys_conf_get(ctx, "General", "State-Dir"), "attr.db",
				STATEDIR "/attr.db", buf, sizeof(buf));
}

const char *attr_store_path(const struct nfskeys_attr_store *store)
{
	return store ? store->path : NULL;
}

struct attr_index *attr_store_index(struct nfskeys_attr_store *store)
{
	return store ? store->index : NULL;
}

_public_ int nfskeys_attr_store_version(struct nfskeys_attr_store *store)
{
	return store ? store->version : -EINVAL;
}

static int migrate(struct nfskeys_attr_store *st)
{
	int64_t v;
	int r;

	r = attr_store_exec(st, "BEGIN IMMEDIATE");
	if (r < 0)
		return r;
	r = pragma_int(st, "PRAGMA user_version", &v);
	if (r < 0)
		goto fail;
	if (v > ATTR_SCHEMA_VERSION) {
		log_err(st->ctx, "attr store %s has schema version %lld, newer than this version "
				 "of nfskeys understands (%d)",
			st->path, (long long)v, ATTR_SCHEMA_VERSION);
		r = -EPROTONOSUPPORT;
		goto fail;
	}
	for (; v < ATTR_SCHEMA_VERSION; v++) {
		char sql[64];

		log_info(st->ctx, "attr store %s: migrating schema %lld -> %lld", st->path,
			 (long long)v, (long long)v + 1);
		r = attr_store_exec(st, migrations[v]);
		if (r < 0)
			goto fail;
		snprintf(sql, sizeof(sql), "PRAGMA user_version = %lld", (long long)v + 1);
		r = attr_store_exec(st, sql);
		if (r < 0)
			goto fail;
	}
	r = attr_store_exec(st, "COMMIT");
	if (r < 0)
		goto fail;
	st->version = ATTR_SCHEMA_VERSION;
	return 0;
fail:
	sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
	return r;
}

/* Fill a fresh index from the database. */
static int load_index(struct nfskeys_attr_store *st, struct attr_index **ret);

/* The in-memory index rebuilt from what is stored, swapped in only once it is whole. */
int attr_store_reload_index(struct nfskeys_attr_store *st)
{
	struct attr_index *ix;
	int r = load_index(st, &ix);

	if (r < 0)
		return r;
	attr_index_free(st->index);
	st->index = ix;
	return 0;
}

static int load_index(struct nfskeys_attr_store *st, struct attr_index **ret)
{
	struct attr_index *ix = NULL;
	sqlite3_stmt *s = NULL;
	const char *sql;
	int r, rc;

	r = attr_index_new(&ix);
	if (r < 0)
		return r;
	if (!st->db || st->version == 0)
		goto done;
	sql = st->version >= 2 ? "SELECT domain, path, key, value, origin FROM attrs"
			       : "SELECT domain, path, key, value, 0 FROM attrs";
	rc = sqlite3_prepare_v2(st->db, sql, -1, &s, NULL);
	if (rc != SQLITE_OK) {
		r = attr_store_sql_err(st, rc, sql);
		goto fail;
	}
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *domain = (const char *)sqlite3_column_text(s, 0);
		const char *path = (const char *)sqlite3_column_text(s, 1);
		const char *key = (const char *)sqlite3_column_text(s, 2);
		const char *value = (const char *)sqlite3_column_text(s, 3);
		bool ldap = sqlite3_column_int(s, 4) != 0;
		_cleanup_free_ char *v = NULL;
		char err[256];
		uint64_t number;
		int k;

		if (!domain || !path || !key || !value)
			continue;
		k = attr_key_parse(key, err, sizeof(err));
		if (k >= 0)
			k = attr_value_parse(k, key, value, &v, &number, err, sizeof(err)) < 0 ? -1 : k;
		if (k < 0) {
			log_warning(st->ctx, "attr store %s: skipping %s%s %s: %s", st->path, domain,
				    path, key, err);
			continue;
		}
		r = attr_index_put(ix, domain, path, k, key, v, number, ldap);
		if (r < 0)
			goto fail;
	}
	if (rc != SQLITE_DONE) {
		r = attr_store_sql_err(st, rc, "reading policies");
		goto fail;
	}
	sqlite3_finalize(s);
	attr_index_compact(ix);
done:
	*ret = ix;
	return 0;
fail:
	sqlite3_finalize(s);
	attr_index_free(ix);
	return r;
}

/* Publish the committed state for readers: VACUUM INTO a temporary file (a consistent
 * copy in rollback-journal mode), make it readable by all, rename it over the snapshot.
 * Readers that have the old one open keep reading it; nobody can lock the writer. */
int attr_store_publish(struct nfskeys_attr_store *st)
{
	char snap[PATH_MAX + sizeof(SNAPSHOT_SUFFIX)], tmp[PATH_MAX + 64];
	sqlite3_stmt *s = NULL;
	int rc, r = 0;

	if (!st->writable || !st->db)
		return 0;
	snapshot_path(st, snap, sizeof(snap));
	snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", snap, (long)getpid());
	(void)unlink(tmp);
	rc = sqlite3_prepare_v2(st->db, "VACUUM INTO ?1", -1, &s, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(s, 1, tmp, -1, SQLITE_STATIC);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(s);
	if (rc != SQLITE_DONE) {
		r = attr_store_sql_err(st, rc, "publish snapshot");
	} else if (chmod(tmp, 0644) < 0 || rename(tmp, snap) < 0) {
		r = negerrno();
		log_err(st->ctx, "cannot publish %s: %s", snap, strerror(-r));
	}
	sqlite3_finalize(s);
	if (r < 0)
		(void)unlink(tmp);
	else if (st->publish_failed)
		log_info(st->ctx, "published %s again: readers see every committed change", snap);
	st->publish_failed = r < 0;
	return r;
}

int attr_store_publish_retry(struct nfskeys_attr_store *st)
{
	return st && st->publish_failed ? attr_store_publish(st) : 0;
}

/* The writer refuses a damaged store before it writes anything (a store it cannot read
 * whole would be served in part, and the next snapshot would publish the part): a file
 * that is not SQLite fails with "file is not a database", a truncated or overwritten one
 * fails PRAGMA quick_check.  It is then closed without a checkpoint, so not one byte of
 * the file (or of a -wal beside it) is changed. */
static int check_intact(struct nfskeys_attr_store *st)
{
	sqlite3_stmt *s = NULL;
	const char *res;
	int rc, r = 0;

	rc = sqlite3_prepare_v2(st->db, "PRAGMA quick_check(1)", -1, &s, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(s);
	if (rc != SQLITE_ROW) {
		log_err(st->ctx, "attr store %s is damaged or not a policy store: %s; refusing "
				 "to open it (move it away, or restore it from a backup)",
			st->path, sqlite3_errmsg(st->db));
		r = attr_store_sql_err(st, rc, "PRAGMA quick_check");
	} else if (!(res = (const char *)sqlite3_column_text(s, 0)) || !streq(res, "ok")) {
		log_err(st->ctx, "attr store %s is damaged: %s; refusing to open it (move it "
				 "away, or restore it from a backup)",
			st->path, res ? res : "(no answer)");
		r = -EBADMSG;
	}
	sqlite3_finalize(s);
	if (r < 0)
		(void)sqlite3_db_config(st->db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, NULL);
	return r;
}

static int open_db(struct nfskeys_attr_store *st)
{
	int flags = st->writable ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE : SQLITE_OPEN_READONLY;
	int64_t v = 0;
	int rc, r;

	char snap[PATH_MAX + sizeof(SNAPSHOT_SUFFIX)];
	_cleanup_free_ char *uri = NULL;
	struct stat sb;

	flags |= SQLITE_OPEN_NOMUTEX;
	snapshot_path(st, snap, sizeof(snap));
	st->snap = !st->writable && stat(snap, &sb) == 0;
	if (st->snap) {
		uri = immutable_uri(snap);
		if (!uri)
			return -ENOMEM;
		st->snap_dev = sb.st_dev;
		st->snap_ino = sb.st_ino;
		flags |= SQLITE_OPEN_URI;
	}
	rc = sqlite3_open_v2(uri ? uri : st->path, &st->db, flags, NULL);
	if (rc != SQLITE_OK) {
		r = st->db ? attr_store_sql_err(st, rc, "open") : -ENOMEM;
		sqlite3_close(st->db);
		st->db = NULL;
		return r;
	}
	sqlite3_busy_timeout(st->db, 5000);
	if (st->writable) {
		/* The writer's alone: SQLite gives -wal/-shm the database file's mode, and
		 * those of an older version (0644) are corrected too.  Readers use the
		 * snapshot published below. */
		static const char *const sfx[] = { "", "-wal", "-shm" };

		for (size_t i = 0; i < ARRAY_SIZE(sfx); i++) {
			char f[PATH_MAX + 8];

			snprintf(f, sizeof(f), "%s%s", st->path, sfx[i]);
			if (chmod(f, 0600) < 0 && errno != ENOENT)
				log_debug(st->ctx, "chmod %s: %m", f);
		}
		r = check_intact(st);
		if (r == 0)
			r = attr_store_exec(st, "PRAGMA journal_mode = WAL");
		if (r == 0)
			r = attr_store_exec(st, "PRAGMA synchronous = FULL");
		if (r == 0)
			r = migrate(st);
		if (r == 0)
			r = attr_store_publish(st);
		return r;
	}
	r = pragma_int(st, "PRAGMA user_version", &v);
	if (r < 0)
		return r;
	if (v > ATTR_SCHEMA_VERSION) {
		log_err(st->ctx, "attr store %s has schema version %lld, newer than this version "
				 "of nfskeys understands (%d)",
			st->path, (long long)v, ATTR_SCHEMA_VERSION);
		return -EPROTONOSUPPORT;
	}
	st->version = (int)v;
	return pragma_int(st, "PRAGMA data_version", &st->data_version);
}

_public_ struct nfskeys_attr_store *nfskeys_attr_store_close(struct nfskeys_attr_store *store)
{
	if (!store)
		return NULL;
	sqlite3_close(store->db);
	attr_index_free(store->index);
	if (store->holds_ctx)
		nfskeys_ctx_unref(store->ctx);
	free(store->path);
	free(store);
	return NULL;
}

static void storep_close(struct nfskeys_attr_store **st)
{
	nfskeys_attr_store_close(*st);
}

_public_ int nfskeys_attr_store_open(struct nfskeys_ctx *ctx, const char *path, unsigned flags,
				     struct nfskeys_attr_store **ret_store)
{
	return attr_store_open_full(ctx, path, flags, true, ret_store);
}

int attr_store_open_full(struct nfskeys_ctx *ctx, const char *path, unsigned flags, bool hold_ctx,
			 struct nfskeys_attr_store **ret_store)
{
	_cleanup_(storep_close) struct nfskeys_attr_store *st = NULL;
	int r;

	if (!ctx || !ret_store || (flags & ~NFSKEYS_ATTR_STORE_WRITE))
		return -EINVAL;
	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->ctx = hold_ctx ? nfskeys_ctx_ref(ctx) : ctx;
	st->holds_ctx = hold_ctx;
	st->writable = flags & NFSKEYS_ATTR_STORE_WRITE;
	st->path = strdup(path ? path : attr_default_store_path(ctx));
	if (!st->path)
		return -ENOMEM;
	/* A read-only open of a store that does not exist yet is an empty store: mounts
	 * at boot must work before anyone has set a policy. */
	if (!st->writable && access(st->path, F_OK) < 0 && errno == ENOENT &&
	    !snapshot_exists(st)) {
		log_debug(ctx, "attr store %s does not exist yet", st->path);
	} else {
		r = open_db(st);
		if (r < 0)
			return r;
	}
	r = load_index(st, &st->index);
	if (r < 0)
		return r;
	*ret_store = TAKE_PTR(st);
	return 0;
}

int attr_store_refresh(struct nfskeys_attr_store *st)
{
	int64_t v;
	int r;

	if (!st || st->writable)
		return 0;
	if (st->db) {
		/* a new snapshot (renamed in), or the first one after a direct open */
		char snap[PATH_MAX + sizeof(SNAPSHOT_SUFFIX)];
		struct stat sb;

		snapshot_path(st, snap, sizeof(snap));
		if (stat(snap, &sb) == 0 &&
		    (!st->snap || sb.st_dev != st->snap_dev || sb.st_ino != st->snap_ino)) {
			sqlite3_close(st->db);
			st->db = NULL;
		}
	}
	if (!st->db) {
		if (access(st->path, F_OK) < 0 && !snapshot_exists(st))
			return 0;
		r = open_db(st);
		if (r < 0) {
			sqlite3_close(st->db);
			st->db = NULL;
			return r;
		}
	} else {
		r = pragma_int(st, "PRAGMA data_version", &v);
		if (r < 0)
			return r;
		if (v == st->data_version)
			return 0;
		st->data_version = v;
		if (st->version == 0) {
			r = pragma_int(st, "PRAGMA user_version", &v);
			if (r < 0)
				return r;
			st->version = (int)v;
		}
	}
	r = attr_store_reload_index(st);
	if (r < 0)
		return r;
	return 1;
}
