/* The store's listing: every stored policy at or below a directory, read from the
 * database in path order and handed out one directory at a time. */
#include "attr-store-private.h"

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
		r = attr_store_sql_err(st, rc, sql);
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
			r = attr_store_sql_err(st, rc, "list");
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

int attr_store_dir_rows(struct nfskeys_attr_store *st, const char *domain, const char *path,
			int (*fn)(void *userdata, uid_t by, bool ldap, const char *handle),
			void *userdata)
{
	static const char sql[] = "SELECT DISTINCT set_by, origin, handle FROM attrs"
				  " WHERE domain = ?1 AND path = ?2";
	sqlite3_stmt *s = NULL;
	int r = 0, rc;

	if (!st || !domain || !path || !fn)
		return -EINVAL;
	if (!st->db || st->version == 0)
		return 0;
	if (st->version < 3)
		return -EPROTONOSUPPORT;
	rc = sqlite3_prepare_v2(st->db, sql, -1, &s, NULL);
	if (rc != SQLITE_OK)
		return attr_store_sql_err(st, rc, sql);
	sqlite3_bind_text(s, 1, domain, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, path, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		r = fn(userdata, (uid_t)sqlite3_column_int64(s, 0), sqlite3_column_int(s, 1) != 0,
		       (const char *)sqlite3_column_text(s, 2));
		if (r < 0)
			break;
	}
	if (r >= 0 && rc != SQLITE_ROW && rc != SQLITE_DONE)
		r = attr_store_sql_err(st, rc, "dir rows");
	sqlite3_finalize(s);
	return r < 0 ? r : 0;
}
