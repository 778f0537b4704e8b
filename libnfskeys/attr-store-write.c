/* The store's write path: sets and unsets committed durably with the index kept in
 * step, the per-setter quotas of nfskeys-attrd, the sweep of directories that are gone,
 * and the LDAP fleet sync's replacement of its rows. */
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <linux/openat2.h>

#include "attr-store-private.h"

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
		return attr_store_sql_err(st, rc, sql);
	sqlite3_bind_text(s, 1, domain, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, path, -1, SQLITE_STATIC);
	sqlite3_bind_int(s, 3, origin_ldap ? 1 : 0);
	rc = sqlite3_step(s);
	r = rc == SQLITE_ROW ? sqlite3_column_int(s, 0) : attr_store_sql_err(st, rc, "count");
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
	r = rc == SQLITE_DONE ? 0 : attr_store_sql_err(st, rc, "insert");
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
		*ret_r = attr_store_sql_err(st, rc, sql);
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
		*ret_r = attr_store_sql_err(st, rc, "query");
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
	r = attr_store_exec(st, "BEGIN IMMEDIATE");
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
		r = attr_store_sql_err(st, rc, sql);
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
	r = attr_store_exec(st, "COMMIT");
	if (r < 0)
		goto fail;
	(void)attr_store_publish(st);
	if (o->dropped) {

		r = attr_store_reload_index(st);
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
	if (mfd < 0 || attr_id_from_fd_tables(st->ctx, mfd, NULL, &mid, NULL) < 0)
		return 0;
	if (streq(nfskeys_attr_id_get_domain(mid), domain)) {
		fd = open_by_handle_at(mfd, &h.fh, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			gone = errno == ESTALE;
		else if (attr_id_from_fd_tables(st->ctx, fd, NULL, &did, NULL) == 0)
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
	r = attr_store_exec(st, "BEGIN IMMEDIATE");
	if (r < 0)
		return r;
	rc = sqlite3_prepare_v2(st->db, list, -1, &s, NULL);
	if (rc != SQLITE_OK) {
		r = attr_store_sql_err(st, rc, list);
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
		r = attr_store_exec(st, "SAVEPOINT sweep");
		if (r < 0)
			goto fail;
		(void)query_int(st, del, d, p, h, 0, &r);
		if (r < 0)
			goto fail;
		dropped += (unsigned)sqlite3_changes(st->db);
		r = attr_store_exec(st, "RELEASE sweep");
		if (r < 0)
			goto fail;
	}
	if (rc != SQLITE_DONE) {
		r = attr_store_sql_err(st, rc, "sweep");
		goto fail;
	}
	sqlite3_finalize(s);
	s = NULL;
	r = attr_store_exec(st, "COMMIT");
	if (r < 0)
		goto fail;
	if (!dropped)
		return 0;
	(void)attr_store_publish(st);
	r = attr_store_reload_index(st);
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
	r = attr_store_exec(st, "BEGIN IMMEDIATE");
	if (r < 0)
		return r;
	rc = sqlite3_prepare_v2(st->db, sql, -1, &s, NULL);
	if (rc != SQLITE_OK) {
		r = attr_store_sql_err(st, rc, sql);
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
	r = attr_store_exec(st, "COMMIT");
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
	r = attr_store_exec(st, "BEGIN IMMEDIATE");
	if (r < 0)
		return r;
	rc = sqlite3_prepare_v2(st->db, sql, -1, &s, NULL);
	if (rc != SQLITE_OK) {
		r = attr_store_sql_err(st, rc, sql);
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
			r = attr_store_sql_err(st, rc, "delete");
			goto fail;
		}
		removed += sqlite3_changes(st->db);
		sqlite3_reset(s);
		if (!keys)
			break;
	}
	sqlite3_finalize(s);
	s = NULL;
	r = attr_store_exec(st, "COMMIT");
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
	r = attr_store_exec(st, "BEGIN IMMEDIATE");
	if (r < 0)
		return r;
	r = attr_store_exec(st, "DELETE FROM attrs WHERE origin = 1");
	if (r < 0)
		goto fail;
	rc = sqlite3_prepare_v2(st->db, sql, -1, &s, NULL);
	if (rc != SQLITE_OK) {
		r = attr_store_sql_err(st, rc, sql);
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
	r = attr_store_exec(st, "COMMIT");
	if (r < 0)
		goto fail;
	(void)attr_store_publish(st);
	r = attr_store_reload_index(st);
	if (r < 0)
		return r;
	return 0;
fail:
	sqlite3_finalize(s);
	sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
	return r;
}
