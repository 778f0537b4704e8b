/* The policy store: one SQLite database in WAL mode, schema version in PRAGMA
 * user_version with step-by-step migrations, every change committed durably
 * (synchronous=FULL) before the call returns, and an in-memory index kept in step with
 * it.  The database and its -wal/-shm are the writer's alone (0600): anyone who can open
 * them can hold a lock that stalls every write.  After each commit the writer publishes
 * a snapshot (PATH.snapshot, 0644, VACUUM INTO a temporary file then rename), which the
 * library's read path opens immutable (no locks at all), so readers never touch the
 * live database. */
#include <fcntl.h>
#include <limits.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <linux/openat2.h>

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

static int sql_err(struct nfskeys_attr_store *st, int rc, const char *what)
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

static int exec(struct nfskeys_attr_store *st, const char *sql)
{
	int rc = sqlite3_exec(st->db, sql, NULL, NULL, NULL);

	return rc == SQLITE_OK ? 0 : sql_err(st, rc, sql);
}

static int pragma_int(struct nfskeys_attr_store *st, const char *sql, int64_t *ret)
{
	sqlite3_stmt *s;
	int rc;

	rc = sqlite3_prepare_v2(st->db, sql, -1, &s, NULL);
	if (rc != SQLITE_OK)
		return sql_err(st, rc, sql);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		*ret = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return rc == SQLITE_ROW ? 0 : sql_err(st, rc, sql);
}

/* [section] key when set, else FILE in the [General] dir_key directory (default dir). */
static const char *conf_path(const struct nfskeys_ctx *ctx, const char *section, const char *key,
			     const char *dir_key, const char *dir, const char *file, char *buf,
			     size_t size)
{
	const char *p = nfskeys_conf_get(ctx, section, key);
	const char *d = nfskeys_conf_get(ctx, "General", dir_key);

	if (p && *p)
		return p;
	snprintf(buf, size, "%s/%s", d && *d ? d : dir, file);
	return buf;
}

const char *attr_default_store_path(const struct nfskeys_ctx *ctx)
{
	static __thread char buf[4096];

	return conf_path(ctx, "Attr", "Store", "State-Dir", STATEDIR, "attr.db", buf, sizeof(buf));
}

const char *attr_default_socket_path(const struct nfskeys_ctx *ctx)
{
	static __thread char buf[4096];

	return conf_path(ctx, "Attrd", "Socket", "Runtime-Dir", RUNDIR, "attrd.sock", buf,
			 sizeof(buf));
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

	r = exec(st, "BEGIN IMMEDIATE");
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
		r = exec(st, migrations[v]);
		if (r < 0)
			goto fail;
		snprintf(sql, sizeof(sql), "PRAGMA user_version = %lld", (long long)v + 1);
		r = exec(st, sql);
		if (r < 0)
			goto fail;
	}
	r = exec(st, "COMMIT");
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
static int reload_index(struct nfskeys_attr_store *st)
{
	struct attr_index *ix;
	int r = load_index(st, &ix);

	if (r < 0)
		return r;
	attr_index_free(st->index);
	st->index = ix;
	return 0;
}

/* The in-memory index in step with a policy just committed for (domain, path). */
static int index_put_policy(struct nfskeys_attr_store *st, const char *domain, const char *path,
			    const struct nfskeys_attr_policy *policy, bool origin_ldap)
{
	struct nfskeys_attr_entry e;

	for (size_t i = 0; i < nfskeys_attr_policy_count(policy); i++) {
		int r;

		nfskeys_attr_policy_entry(policy, i, &e);
		r = attr_index_put(st->index, domain, path, attr_key_parse(e.key, NULL, 0), e.key,
				   e.value, e.number, origin_ldap);
		if (r < 0) {
			log_err(st->ctx, "attr index update failed: %s", strerror(-r));
			return r;
		}
	}
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
		r = sql_err(st, rc, sql);
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
		r = sql_err(st, rc, "reading policies");
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
		r = sql_err(st, rc, "publish snapshot");
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
		r = sql_err(st, rc, "PRAGMA quick_check");
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
		r = st->db ? sql_err(st, rc, "open") : -ENOMEM;
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
			r = exec(st, "PRAGMA journal_mode = WAL");
		if (r == 0)
			r = exec(st, "PRAGMA synchronous = FULL");
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
	r = reload_index(st);
	if (r < 0)
		return r;
	return 1;
}

static int writable(struct nfskeys_attr_store *st, const struct nfskeys_attr_id *id)
{
	if (!st || !id)
		return -EINVAL;
	if (!st->writable || !st->db)
		return -EROFS;
	return 0;
}

/* Attributes stored on one directory from one origin (inside the caller's transaction). */
static int count_dir(struct nfskeys_attr_store *st, const char *domain, const char *path,
		     bool origin_ldap)
{
	static const char sql[] = "SELECT count(*) FROM attrs WHERE domain = ? AND path = ?"
				  " AND origin = ?";
	sqlite3_stmt *s = NULL;
	int r, rc;

	rc = sqlite3_prepare_v2(st->db, sql, -1, &s, NULL);
	if (rc != SQLITE_OK)
		return sql_err(st, rc, sql);
	sqlite3_bind_text(s, 1, domain, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, path, -1, SQLITE_STATIC);
	sqlite3_bind_int(s, 3, origin_ldap ? 1 : 0);
	rc = sqlite3_step(s);
	r = rc == SQLITE_ROW ? sqlite3_column_int(s, 0) : sql_err(st, rc, "count");
	sqlite3_finalize(s);
	return r;
}

/* One attribute row, through a prepared INSERT_ROW statement. */
#define INSERT_ROW                                                                        \
	"INSERT OR REPLACE INTO attrs (domain, path, key, value, origin, set_by, set_at," \
	" handle, local) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
static int insert_row_at(struct nfskeys_attr_store *st, sqlite3_stmt *s, const char *domain,
			 const char *path, const char *key, const char *value, bool origin_ldap,
			 uid_t by, const char *handle, const char *local)
{
	int rc, r;

	sqlite3_bind_text(s, 1, domain, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, path, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 3, key, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 4, value, -1, SQLITE_STATIC);
	sqlite3_bind_int(s, 5, origin_ldap ? 1 : 0);
	sqlite3_bind_int64(s, 6, (int64_t)by);
	sqlite3_bind_int64(s, 7, (int64_t)time(NULL));
	if (handle)
		sqlite3_bind_text(s, 8, handle, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(s, 8);
	if (local)
		sqlite3_bind_text(s, 9, local, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(s, 9);
	rc = sqlite3_step(s);
	r = rc == SQLITE_DONE ? 0 : sql_err(st, rc, "insert");
	sqlite3_reset(s);
	return r;
}

static int insert_row(struct nfskeys_attr_store *st, sqlite3_stmt *s, const char *domain,
		      const char *path, const char *key, const char *value, bool origin_ldap,
		      uid_t by)
{
	return insert_row_at(st, s, domain, path, key, value, origin_ldap, by, NULL, NULL);
}

/* One integer from sql with text parameters ?1.. and an integer ?9 (inside the caller's
 * transaction). */
static int64_t query_int(struct nfskeys_attr_store *st, const char *sql, const char *t1,
			 const char *t2, const char *t3, int64_t i9, int *ret_r)
{
	sqlite3_stmt *s = NULL;
	int64_t v = 0;
	int rc;

	rc = sqlite3_prepare_v2(st->db, sql, -1, &s, NULL);
	if (rc != SQLITE_OK) {
		*ret_r = sql_err(st, rc, sql);
		return 0;
	}
	if (t1)
		sqlite3_bind_text(s, 1, t1, -1, SQLITE_STATIC);
	if (t2)
		sqlite3_bind_text(s, 2, t2, -1, SQLITE_STATIC);
	if (t3)
		sqlite3_bind_text(s, 3, t3, -1, SQLITE_STATIC);
	if (sqlite3_bind_parameter_index(s, "?9"))
		sqlite3_bind_int64(s, sqlite3_bind_parameter_index(s, "?9"), i9);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW || rc == SQLITE_DONE) {
		v = rc == SQLITE_ROW ? sqlite3_column_int64(s, 0) : 0;
		*ret_r = 0;
	} else {
		*ret_r = sql_err(st, rc, "query");
	}
	sqlite3_finalize(s);
	return v;
}

int attr_store_usage(struct nfskeys_attr_store *st, uid_t uid, uint64_t *ret_dirs,
		     uint64_t *ret_bytes)
{
	int r;

	if (!st || !st->db || st->version < 3)
		return -EINVAL;
	*ret_dirs = (uint64_t)query_int(st, "SELECT count(*) FROM (SELECT DISTINCT domain, path"
					    " FROM attrs WHERE set_by = ?9 AND origin = 0)",
					NULL, NULL, NULL, (int64_t)uid, &r);
	if (r < 0)
		return r;
	*ret_bytes = (uint64_t)query_int(st, "SELECT coalesce(sum(length(CAST(domain AS BLOB)) +"
					     " length(CAST(path AS BLOB)) + length(CAST(key AS BLOB))"
					     " + length(CAST(value AS BLOB))), 0) FROM attrs"
					     " WHERE set_by = ?9 AND origin = 0",
					 NULL, NULL, NULL, (int64_t)uid, &r);
	return r;
}

int attr_store_set_checked(struct nfskeys_attr_store *st, const struct nfskeys_attr_id *id,
			   const struct nfskeys_attr_policy *policy, uid_t by,
			   struct attr_set_opts *o)
{
	static const char sql[] = INSERT_ROW;
	const char *domain = nfskeys_attr_id_get_domain(id), *path = nfskeys_attr_id_get_path(id);
	const char *handle = attr_id_get_handle(id), *local = attr_id_get_local(id);
	struct nfskeys_attr_entry e;
	sqlite3_stmt *s = NULL;
	size_t n = nfskeys_attr_policy_count(policy);
	int r, rc;

	r = writable(st, id);
	if (r < 0 || !policy || !o)
		return r < 0 ? r : -EINVAL;
	o->dropped = 0;
	r = exec(st, "BEGIN IMMEDIATE");
	if (r < 0)
		return r;
	if (handle) {
		/* Rows on this path keyed to another directory: that one was removed (or moved
		 * away) and this is a new one of the same name, which they must not bind. */
		static const char drop[] = "DELETE FROM attrs WHERE domain = ?1 AND path = ?2"
					   " AND origin = 0 AND handle IS NOT NULL AND handle != ?3";

		(void)query_int(st, drop, domain, path, handle, 0, &r);
		if (r < 0)
			goto fail;
		o->dropped = (unsigned)sqlite3_changes(st->db);
	}
	rc = sqlite3_prepare_v2(st->db, sql, -1, &s, NULL);
	if (rc != SQLITE_OK) {
		r = sql_err(st, rc, sql);
		goto fail;
	}
	for (size_t i = 0; i < n; i++) {
		nfskeys_attr_policy_entry(policy, i, &e);
		r = insert_row_at(st, s, domain, path, e.key, e.value, false, by, handle, local);
		if (r < 0)
			goto fail;
	}
	sqlite3_finalize(s);
	s = NULL;
	r = count_dir(st, domain, path, false);
	if (r < 0)
		goto fail;
	if (r > ATTR_MAX_PER_DIR) {
		r = -E2BIG;
		goto fail;
	}
	if (o->max_dirs || o->max_bytes) {
		r = attr_store_usage(st, by, &o->dirs, &o->bytes);
		if (r < 0)
			goto fail;
		if ((o->max_dirs && o->dirs > o->max_dirs) ||
		    (o->max_bytes && o->bytes > o->max_bytes)) {
			r = -EDQUOT;
			goto fail;
		}
	}
	r = exec(st, "COMMIT");
	if (r < 0)
		goto fail;
	(void)attr_store_publish(st);
	if (o->dropped) {

		r = reload_index(st);
		if (r < 0)
			return r;
		return 0;
	}
	return index_put_policy(st, domain, path, policy, false);
fail:
	sqlite3_finalize(s);
	sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
	o->dropped = 0;
	return r;
}

/* "TYPE:HEX" back into a file handle in buf (room for MAX_HANDLE_SZ bytes). */
static int handle_parse(const char *text, struct file_handle *fh)
{
	char *end;
	long type = strtol(text, &end, 10);
	size_t n;

	if (end == text || *end != ':')
		return -EINVAL;
	text = end + 1;
	n = strlen(text);
	if (n % 2 || n / 2 > MAX_HANDLE_SZ)
		return -EINVAL;
	fh->handle_type = (int)type;
	fh->handle_bytes = (unsigned)(n / 2);
	for (size_t i = 0; i < n / 2; i++) {
		unsigned b;

		if (sscanf(text + 2 * i, "%2x", &b) != 1)
			return -EINVAL;
		fh->f_handle[i] = (unsigned char)b;
	}
	return 0;
}

/* Is the directory stored as (domain, path, handle) gone, or no longer at path?  1 yes,
 * 0 still there or unknown.  local is the mount point it was set through: its filesystem
 * (checked to still be the row's domain) opens the handle, which fails with ESTALE once
 * the directory is removed; found, its path must still be the row's.  Only local
 * filesystems: opening a handle on a network one can wait for a server. */
static int orphan_check(struct nfskeys_attr_store *st, const char *domain, const char *path,
			const char *handle, const char *local)
{
	/* open_by_handle_at() wants a real descriptor on the filesystem, not O_PATH */
	struct open_how how = { .flags = O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC,
				.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
	union {
		struct file_handle fh;
		char buf[sizeof(struct file_handle) + MAX_HANDLE_SZ];
	} h;
	struct nfskeys_attr_id *mid = NULL, *did = NULL;
	_cleanup_close_ int mfd = -1, fd = -1;
	int gone = 0;

	if (!startswith(domain, "local://") || handle_parse(handle, &h.fh) < 0)
		return 0;
	mfd = (int)syscall(SYS_openat2, AT_FDCWD, local, &how, sizeof(how));
	if (mfd < 0 || attr_id_from_fd_tables(st->ctx, mfd, NULL, &mid) < 0)
		return 0;
	if (streq(nfskeys_attr_id_get_domain(mid), domain)) {
		fd = open_by_handle_at(mfd, &h.fh, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			gone = errno == ESTALE;
		else if (attr_id_from_fd_tables(st->ctx, fd, NULL, &did) == 0)
			gone = !streq(nfskeys_attr_id_get_domain(did), domain) ||
			       !streq(nfskeys_attr_id_get_path(did), path);
	}
	nfskeys_attr_id_free(mid);
	nfskeys_attr_id_free(did);
	return gone;
}

int attr_store_sweep(struct nfskeys_attr_store *st, unsigned *ret_dropped)
{
	static const char list[] = "SELECT DISTINCT domain, path, handle, local FROM attrs"
				   " WHERE origin = 0 AND handle IS NOT NULL AND local IS NOT NULL";
	static const char del[] = "DELETE FROM attrs WHERE domain = ?1 AND path = ?2"
				  " AND origin = 0 AND handle = ?3";
	sqlite3_stmt *s = NULL;
	unsigned dropped = 0;
	int r, rc;

	*ret_dropped = 0;
	if (!st || !st->writable || !st->db || st->version < 3)
		return 0;
	r = exec(st, "BEGIN IMMEDIATE");
	if (r < 0)
		return r;
	rc = sqlite3_prepare_v2(st->db, list, -1, &s, NULL);
	if (rc != SQLITE_OK) {
		r = sql_err(st, rc, list);
		goto fail;
	}
	/* collected first: no DELETE while the SELECT is stepping */
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *d = (const char *)sqlite3_column_text(s, 0);
		const char *p = (const char *)sqlite3_column_text(s, 1);
		const char *h = (const char *)sqlite3_column_text(s, 2);
		const char *l = (const char *)sqlite3_column_text(s, 3);

		if (!d || !p || !h || !l || !orphan_check(st, d, p, h, l))
			continue;
		log_info(st->ctx, "attr store %s: %s%s is gone (its directory was removed): "
				  "dropping its policy", st->path, d, p);
		r = exec(st, "SAVEPOINT sweep");
		if (r < 0)
			goto fail;
		(void)query_int(st, del, d, p, h, 0, &r);
		if (r < 0)
			goto fail;
		dropped += (unsigned)sqlite3_changes(st->db);
		r = exec(st, "RELEASE sweep");
		if (r < 0)
			goto fail;
	}
	if (rc != SQLITE_DONE) {
		r = sql_err(st, rc, "sweep");
		goto fail;
	}
	sqlite3_finalize(s);
	s = NULL;
	r = exec(st, "COMMIT");
	if (r < 0)
		goto fail;
	if (!dropped)
		return 0;
	(void)attr_store_publish(st);
	r = reload_index(st);
	if (r < 0)
		return r;
	*ret_dropped = dropped;
	return 0;
fail:
	sqlite3_finalize(s);
	sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
	return r;
}

_public_ int nfskeys_attr_store_set(struct nfskeys_attr_store *st, const struct nfskeys_attr_id *id,
				    const struct nfskeys_attr_policy *policy, uid_t by,
				    bool origin_ldap)
{
	static const char sql[] = INSERT_ROW;
	const char *domain = nfskeys_attr_id_get_domain(id), *path = nfskeys_attr_id_get_path(id);
	struct nfskeys_attr_entry e;
	sqlite3_stmt *s = NULL;
	size_t n = nfskeys_attr_policy_count(policy);
	int r, rc;

	r = writable(st, id);
	if (r < 0 || !policy)
		return r < 0 ? r : -EINVAL;
	r = exec(st, "BEGIN IMMEDIATE");
	if (r < 0)
		return r;
	rc = sqlite3_prepare_v2(st->db, sql, -1, &s, NULL);
	if (rc != SQLITE_OK) {
		r = sql_err(st, rc, sql);
		goto fail;
	}
	for (size_t i = 0; i < n; i++) {
		nfskeys_attr_policy_entry(policy, i, &e);
		r = insert_row(st, s, domain, path, e.key, e.value, origin_ldap, by);
		if (r < 0)
			goto fail;
	}
	sqlite3_finalize(s);
	s = NULL;
	r = count_dir(st, domain, path, origin_ldap);
	if (r < 0)
		goto fail;
	if (r > ATTR_MAX_PER_DIR) {
		/* one answer carries every attribute of a directory: refuse rather than lose some */
		log_debug(st->ctx, "%s:%s would hold %d attributes (at most %d)", domain, path, r,
			  ATTR_MAX_PER_DIR);
		r = -E2BIG;
		goto fail;
	}
	r = exec(st, "COMMIT");
	if (r < 0)
		goto fail;
	(void)attr_store_publish(st); /* logged; the change itself is durable */
	return index_put_policy(st, domain, path, policy, origin_ldap);
fail:
	sqlite3_finalize(s);
	sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
	return r;
}

_public_ int nfskeys_attr_store_unset(struct nfskeys_attr_store *st,
				      const struct nfskeys_attr_id *id, const char *const *keys,
				      bool origin_ldap)
{
	const char *domain = nfskeys_attr_id_get_domain(id), *path = nfskeys_attr_id_get_path(id);
	const char *sql = keys ? "DELETE FROM attrs WHERE domain = ? AND path = ? AND origin = ?"
				 " AND key = ?"
			       : "DELETE FROM attrs WHERE domain = ? AND path = ? AND origin = ?";
	sqlite3_stmt *s = NULL;
	int removed = 0, r, rc;

	r = writable(st, id);
	if (r < 0)
		return r;
	for (const char *const *k = keys; k && *k; k++) {
		r = attr_key_parse(*k, NULL, 0);
		if (r < 0)
			return r;
	}
	r = exec(st, "BEGIN IMMEDIATE");
	if (r < 0)
		return r;
	rc = sqlite3_prepare_v2(st->db, sql, -1, &s, NULL);
	if (rc != SQLITE_OK) {
		r = sql_err(st, rc, sql);
		goto fail;
	}
	for (size_t i = 0; !keys || keys[i]; i++) {
		sqlite3_bind_text(s, 1, domain, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 2, path, -1, SQLITE_STATIC);
		sqlite3_bind_int(s, 3, origin_ldap ? 1 : 0);
		if (keys)
			sqlite3_bind_text(s, 4, keys[i], -1, SQLITE_STATIC);
		rc = sqlite3_step(s);
		if (rc != SQLITE_DONE) {
			r = sql_err(st, rc, "delete");
			goto fail;
		}
		removed += sqlite3_changes(st->db);
		sqlite3_reset(s);
		if (!keys)
			break;
	}
	sqlite3_finalize(s);
	s = NULL;
	r = exec(st, "COMMIT");
	if (r < 0)
		goto fail;
	(void)attr_store_publish(st);
	if (!keys)
		attr_index_del(st->index, domain, path, -1, NULL, origin_ldap);
	for (const char *const *k = keys; k && *k; k++)
		attr_index_del(st->index, domain, path, attr_key_parse(*k, NULL, 0), *k, origin_ldap);
	return removed;
fail:
	sqlite3_finalize(s);
	sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
	return r;
}

int attr_store_list(struct nfskeys_attr_store *st, const char *domain, const char *path,
		    int (*fn)(void *userdata, const struct nfskeys_attr_id *id,
			      const struct nfskeys_attr_policy *policy),
		    void *userdata)
{
	_cleanup_free_ char *lo = NULL, *hi = NULL, *cur_domain = NULL, *cur_path = NULL;
	struct nfskeys_attr_policy *policy = NULL;
	sqlite3_stmt *s = NULL;
	const char *sql;
	int r = 0, rc;

	if (!st || !fn)
		return -EINVAL;
	if (!st->db || st->version == 0)
		return 0;
	if (!domain) {
		sql = "SELECT domain, path, key, value, origin FROM attrs"
		      " ORDER BY domain, path, key, origin DESC";
	} else if (!path || streq(path, "/")) {
		sql = "SELECT domain, path, key, value, origin FROM attrs WHERE domain = ?1"
		      " ORDER BY domain, path, key, origin DESC";
	} else {
		/* the directory and everything below it: '0' sorts right after '/' */
		sql = "SELECT domain, path, key, value, origin FROM attrs WHERE domain = ?1 AND"
		      " (path = ?2 OR (path > ?3 AND path < ?4)) ORDER BY domain, path, key, origin DESC";
		if (asprintf(&lo, "%s/", path) < 0 || asprintf(&hi, "%s0", path) < 0)
			return -ENOMEM;
	}
	if (st->version < 2) {
		log_err(st->ctx, "attr store %s: schema version %d is too old to list; "
				 "let nfskeys-attrd migrate it", st->path, st->version);
		return -EPROTONOSUPPORT;
	}
	r = nfskeys_attr_policy_new(&policy);
	if (r < 0)
		return r;
	rc = sqlite3_prepare_v2(st->db, sql, -1, &s, NULL);
	if (rc != SQLITE_OK) {
		r = sql_err(st, rc, sql);
		goto out;
	}
	if (domain)
		sqlite3_bind_text(s, 1, domain, -1, SQLITE_STATIC);
	if (lo) {
		sqlite3_bind_text(s, 2, path, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 3, lo, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 4, hi, -1, SQLITE_STATIC);
	}
	for (;;) {
		const char *d = NULL, *p = NULL;

		rc = sqlite3_step(s);
		if (rc == SQLITE_ROW) {
			d = (const char *)sqlite3_column_text(s, 0);
			p = (const char *)sqlite3_column_text(s, 1);
			if (!d || !p)
				continue;
		} else if (rc != SQLITE_DONE) {
			r = sql_err(st, rc, "list");
			goto out;
		}
		/* a new directory (or the end): hand over the one collected so far */
		if (cur_domain && (!d || !streq(d, cur_domain) || !streq(p, cur_path))) {
			struct nfskeys_attr_id *id = NULL;
			if (nfskeys_attr_policy_count(policy) &&
			    nfskeys_attr_id_new(cur_domain, cur_path, &id) == 0) {
				r = fn(userdata, id, policy);
				nfskeys_attr_id_free(id);
				if (r < 0)
					goto out;
			}
			nfskeys_attr_policy_clear(policy);
			free(cur_domain);
			free(cur_path);
			cur_domain = cur_path = NULL;
		}
		if (!d)
			break;
		if (!cur_domain) {
			cur_domain = strdup(d);
			cur_path = strdup(p);
			if (!cur_domain || !cur_path) {
				r = -ENOMEM;
				goto out;
			}
		}
		{
			const char *key = (const char *)sqlite3_column_text(s, 2);
			const char *value = (const char *)sqlite3_column_text(s, 3);
			_cleanup_free_ char *v = NULL;
			uint64_t number;
			int k = key ? attr_key_parse(key, NULL, 0) : -EINVAL;

			if (k < 0 || attr_value_parse(k, key, value, &v, &number, NULL, 0) < 0)
				continue;
			r = attr_policy_put(policy, k, key, v, number, NULL, sqlite3_column_int(s, 4));
			if (r < 0)
				goto out;
		}
	}
	r = 0;
out:
	sqlite3_finalize(s);
	nfskeys_attr_policy_free(policy);
	return r;
}

int attr_store_replace_ldap(struct nfskeys_attr_store *st, const struct attr_sync_row *rows,
			    size_t n)
{
	static const char sql[] = INSERT_ROW;
	sqlite3_stmt *s = NULL;
	int r, rc;

	if (!st || (n && !rows))
		return -EINVAL;
	if (!st->writable || !st->db)
		return -EROFS;
	r = exec(st, "BEGIN IMMEDIATE");
	if (r < 0)
		return r;
	r = exec(st, "DELETE FROM attrs WHERE origin = 1");
	if (r < 0)
		goto fail;
	rc = sqlite3_prepare_v2(st->db, sql, -1, &s, NULL);
	if (rc != SQLITE_OK) {
		r = sql_err(st, rc, sql);
		goto fail;
	}
	for (size_t i = 0; i < n; i++) {
		r = insert_row(st, s, rows[i].domain, rows[i].path, rows[i].key, rows[i].value,
			       true, 0);
		if (r < 0)
			goto fail;
	}
	sqlite3_finalize(s);
	s = NULL;
	r = exec(st, "COMMIT");
	if (r < 0)
		goto fail;
	(void)attr_store_publish(st);
	r = reload_index(st);
	if (r < 0)
		return r;
	return 0;
fail:
	sqlite3_finalize(s);
	sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
	return r;
}
