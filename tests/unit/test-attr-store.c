/* Directory attributes: the SQLite store across a restart, the per-directory bound, the
 * migrations from schema versions 1 and 2, and a newer schema refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <fcntl.h>
#include <ftw.h>
#include <libmount.h>
#include <sched.h>
#include <sqlite3.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "attr-private.h"
#include "test-util.h"

static int setup(void **state)
{
	return tu_dir_setup("attr-store");
}

static int teardown(void **state)
{
	return tu_dir_teardown();
}

static void test_store_restart(void **state)
{
	struct nfskeys_ctx *ctx = tu_ctx_attr();
	struct nfskeys_attr_store *st = NULL;
	struct nfskeys_attr_policy *p = NULL, *q = NULL;
	struct nfskeys_attr_id *id = NULL, *below = NULL;
	struct nfskeys_attr_entry e;
	char err[256], path[128];

	snprintf(path, sizeof(path), "%s/attr.db", tu_dir);
	/* reading a store nobody created yet: empty, not an error */
	assert_int_equal(nfskeys_attr_store_open(ctx, NULL, 0, &st), 0);
	assert_int_equal(nfskeys_attr_store_version(st), 0);
	nfskeys_attr_store_close(st);
	st = NULL;
	assert_int_equal(access(path, F_OK), -1);

	assert_int_equal(nfskeys_attr_store_open(ctx, NULL, NFSKEYS_ATTR_STORE_WRITE, &st), 0);
	assert_int_equal(nfskeys_attr_store_version(st), ATTR_SCHEMA_VERSION);
	assert_int_equal(nfskeys_attr_id_new("nfs://srv", "/export", &id), 0);
	assert_int_equal(nfskeys_attr_id_new("nfs://srv", "/export/a/b", &below), 0);
	assert_int_equal(nfskeys_attr_policy_new(&p), 0);
	assert_int_equal(nfskeys_attr_policy_new(&q), 0);
	assert_int_equal(nfskeys_attr_policy_parse(p, "cache=none", err, sizeof(err)), 0);
	assert_int_equal(nfskeys_attr_policy_parse(p, "user.owner=alice", err, sizeof(err)), 0);
	assert_int_equal(nfskeys_attr_store_set(st, id, p, 1000, false), 0);
	assert_int_equal(nfskeys_attr_store_unset(st, id, (const char *const[]){ "user.owner", NULL },
						  false), 1);
	assert_int_equal(nfskeys_attr_store_unset(st, id, (const char *const[]){ "user.owner", NULL },
						  false), 0);
	assert_int_equal(nfskeys_attr_store_unset(st, id, (const char *const[]){ "bogus", NULL },
						  false), -EINVAL);
	nfskeys_attr_store_close(st);

	/* "restart": the library's read path sees it */
	assert_int_equal(nfskeys_attr_effective(ctx, below, NFSKEYS_ATTR_SOURCES, q), 0);
	assert_int_equal(nfskeys_attr_policy_count(q), 1);
	assert_int_equal(nfskeys_attr_policy_get(q, "cache", &e), 0);
	assert_string_equal(e.value, "none");
	assert_string_equal(e.source, "nfs://srv/export");
	/* a read-only store refuses changes */
	assert_int_equal(nfskeys_attr_store_open(ctx, NULL, 0, &st), 0);
	assert_int_equal(nfskeys_attr_store_set(st, id, p, 0, false), -EROFS);
	nfskeys_attr_store_close(st);

	nfskeys_attr_policy_free(p);
	nfskeys_attr_policy_free(q);
	nfskeys_attr_id_free(id);
	nfskeys_attr_id_free(below);
	nfskeys_ctx_unref(ctx);
}

/* One directory holds at most ATTR_MAX_PER_DIR attributes even when they arrive one set at a
 * time: the set that would pass the bound is refused whole and nothing already stored is lost. */
static void test_store_dir_bound(void **state)
{
	struct nfskeys_ctx *ctx = tu_ctx_attr();
	struct nfskeys_attr_store *st = NULL;
	struct nfskeys_attr_policy *p = NULL, *q = NULL;
	struct nfskeys_attr_id *id = NULL;
	char err[256], kv[64];

	assert_int_equal(nfskeys_attr_store_open(ctx, NULL, NFSKEYS_ATTR_STORE_WRITE, &st), 0);
	assert_int_equal(nfskeys_attr_id_new("nfs://srv", "/bound", &id), 0);
	for (int i = 0; i < ATTR_MAX_PER_DIR; i++) {
		assert_int_equal(nfskeys_attr_policy_new(&p), 0);
		snprintf(kv, sizeof(kv), "user.k%d=v%d", i, i);
		assert_int_equal(nfskeys_attr_policy_parse(p, kv, err, sizeof(err)), 0);
		assert_int_equal(nfskeys_attr_store_set(st, id, p, 0, false), 0);
		nfskeys_attr_policy_free(p);
	}
	/* replacing a value is fine at the bound; one more key is not */
	assert_int_equal(nfskeys_attr_policy_new(&p), 0);
	assert_int_equal(nfskeys_attr_policy_parse(p, "user.k0=changed", err, sizeof(err)), 0);
	assert_int_equal(nfskeys_attr_store_set(st, id, p, 0, false), 0);
	assert_int_equal(nfskeys_attr_policy_parse(p, "user.extra=x", err, sizeof(err)), 0);
	assert_int_equal(nfskeys_attr_store_set(st, id, p, 0, false), -E2BIG);
	nfskeys_attr_store_close(st);
	nfskeys_attr_policy_free(p);

	assert_int_equal(nfskeys_attr_policy_new(&q), 0);
	assert_int_equal(nfskeys_attr_explicit(ctx, id, q), 0);
	assert_int_equal(nfskeys_attr_policy_count(q), ATTR_MAX_PER_DIR);
	assert_int_equal(nfskeys_attr_policy_get(q, "user.extra", NULL), -ENOENT);
	assert_int_equal(nfskeys_attr_policy_get(q, "user.k0", NULL), 0);
	nfskeys_attr_policy_free(q);
	nfskeys_attr_id_free(id);
	nfskeys_ctx_unref(ctx);
}

static void sql(sqlite3 *db, const char *s)
{
	char *err = NULL;

	if (sqlite3_exec(db, s, NULL, NULL, &err) != SQLITE_OK)
		fail_msg("%s: %s", s, err);
}

static void test_store_migration(void **state)
{
	struct nfskeys_ctx *ctx = tu_ctx_attr();
	struct nfskeys_attr_store *st = NULL;
	struct nfskeys_attr_policy *p = NULL;
	struct nfskeys_attr_id *id = NULL;
	struct nfskeys_attr_entry e;
	sqlite3 *db;
	char path[128];

	/* a store as schema version 1 wrote it */
	snprintf(path, sizeof(path), "%s/attr.db", tu_dir);
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	sql(db, "CREATE TABLE attrs (domain TEXT NOT NULL, path TEXT NOT NULL, key TEXT NOT NULL,"
		" value TEXT NOT NULL, set_by INTEGER NOT NULL, set_at INTEGER NOT NULL,"
		" PRIMARY KEY (domain, path, key)) WITHOUT ROWID;"
		"INSERT INTO attrs VALUES ('nfs://srv', '/export', 'actimeo', '30', 0, 0);"
		"INSERT INTO attrs VALUES ('nfs://srv', '/export', 'nonsense', 'x', 0, 0);"
		"PRAGMA user_version = 1;");
	sqlite3_close(db);

	/* the read path understands version 1 as it is */
	assert_int_equal(nfskeys_attr_id_new("nfs://srv", "/export/x", &id), 0);
	assert_int_equal(nfskeys_attr_policy_new(&p), 0);
	assert_int_equal(nfskeys_attr_effective(ctx, id, 0, p), 0);
	assert_int_equal(nfskeys_attr_policy_get(p, "actimeo", &e), 0);

	/* opening for writing migrates, keeping the rows as local ones */
	assert_int_equal(nfskeys_attr_store_open(ctx, NULL, NFSKEYS_ATTR_STORE_WRITE, &st), 0);
	assert_int_equal(nfskeys_attr_store_version(st), ATTR_SCHEMA_VERSION);
	assert_int_equal(attr_index_resolve(attr_store_index(st), "nfs://srv", "/export/x", 0, p), 0);
	assert_int_equal(nfskeys_attr_policy_get(p, "actimeo", &e), 0);
	assert_string_equal(e.value, "30");
	assert_false(e.from_ldap);
	assert_int_equal(nfskeys_attr_policy_count(p), 1); /* the bad row skipped */
	nfskeys_attr_store_close(st);
	st = NULL;

	/* a store from the future is refused, not misread */
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	sql(db, "PRAGMA user_version = 99");
	sqlite3_close(db);
	/* readers read the snapshot the last writer published, so no reader can lock the
	 * store (doc/security/FINDINGS.md D3): without one
	 * they fall back to the database itself (which only root may read) */
	snprintf(path, sizeof(path), "%s/attr.db.snapshot", tu_dir);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(nfskeys_attr_store_open(ctx, NULL, NFSKEYS_ATTR_STORE_WRITE, &st),
			 -EPROTONOSUPPORT);
	assert_int_equal(nfskeys_attr_store_open(ctx, NULL, 0, &st), -EPROTONOSUPPORT);
	assert_null(st);

	nfskeys_attr_policy_free(p);
	nfskeys_attr_id_free(id);
	nfskeys_ctx_unref(ctx);
}

/* doc/security/FINDINGS.md D4: a store written by schema version 2 (the SQL of the code before
 * version 3, as it created and filled it) opens, is migrated, and nothing is lost: local
 * and LDAP rows, who set them and when, the sync state; old rows have no handle (so they
 * are never taken for a removed directory's) and count towards their setter's usage. */
static void test_store_migration_v2(void **state)
{
	struct nfskeys_ctx *ctx = tu_ctx_attr();
	struct nfskeys_attr_store *st = NULL;
	struct nfskeys_attr_policy *p = NULL;
	struct nfskeys_attr_id *id = NULL;
	struct nfskeys_attr_entry e;
	sqlite3_stmt *q;
	uint64_t dirs, bytes;
	sqlite3 *db;
	char path[128];
	int n = 0;

	snprintf(path, sizeof(path), "%s/attr.db", tu_dir);
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	/* versions 0 -> 1 -> 2 exactly as the old migrations ran them */
	sql(db, "CREATE TABLE attrs ("
		" domain TEXT NOT NULL, path TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,"
		" set_by INTEGER NOT NULL, set_at INTEGER NOT NULL,"
		" PRIMARY KEY (domain, path, key)) WITHOUT ROWID;");
	sql(db, "CREATE TABLE attrs2 ("
		" domain TEXT NOT NULL, path TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,"
		" origin INTEGER NOT NULL DEFAULT 0, set_by INTEGER NOT NULL, set_at INTEGER NOT NULL,"
		" PRIMARY KEY (domain, path, key, origin)) WITHOUT ROWID;"
		"INSERT INTO attrs2 (domain, path, key, value, origin, set_by, set_at)"
		" SELECT domain, path, key, value, 0, set_by, set_at FROM attrs;"
		"DROP TABLE attrs;"
		"ALTER TABLE attrs2 RENAME TO attrs;"
		"CREATE TABLE meta (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL) WITHOUT ROWID;"
		"PRAGMA user_version = 2;");
	/* rows as the version 2 daemon and LDAP sync wrote them */
	sql(db, "INSERT INTO attrs (domain, path, key, value, origin, set_by, set_at) VALUES"
		" ('nfs://srv', '/export', 'actimeo', '30', 0, 1000, 1700000000),"
		" ('nfs://srv', '/export', 'inherit', 'no', 0, 1000, 1700000001),"
		" ('nfs://srv', '/export/b', 'user.note', 'kept', 0, 1001, 1700000002),"
		" ('nfs://srv', '/export', 'actimeo', '60', 1, 0, 1700000003);"
		"INSERT INTO meta VALUES ('ldap_csn', '20250101000000Z');");
	sqlite3_close(db);

	assert_int_equal(nfskeys_attr_store_open(ctx, NULL, NFSKEYS_ATTR_STORE_WRITE, &st), 0);
	assert_int_equal(nfskeys_attr_store_version(st), 3);
	assert_int_equal(attr_index_count(attr_store_index(st)), 2);
	assert_int_equal(nfskeys_attr_id_new("nfs://srv", "/export", &id), 0);
	assert_int_equal(nfskeys_attr_policy_new(&p), 0);
	assert_int_equal(attr_index_explicit(attr_store_index(st), "nfs://srv", "/export", p), 0);
	assert_int_equal(nfskeys_attr_policy_count(p), 2);
	assert_int_equal(nfskeys_attr_policy_get(p, "inherit", &e), 0);
	assert_string_equal(e.value, "no");
	assert_int_equal(attr_store_usage(st, 1000, &dirs, &bytes), 0);
	assert_int_equal(dirs, 1);
	assert_int_equal(bytes, strlen("nfs://srv/exportactimeo30") +
					strlen("nfs://srv/exportinheritno"));
	/* a sweep keeps rows without a handle */
	{
		unsigned dropped = 99;
		assert_int_equal(attr_store_sweep(st, &dropped), 0);
		assert_int_equal(dropped, 0);
	}
	nfskeys_attr_store_close(st);

	/* every row and column there, byte for byte, and the sync state */
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT domain || path || key || value || origin"
						" || set_by || set_at || coalesce(handle, '-')"
						" || coalesce(local, '-') FROM attrs ORDER BY 1",
					    -1, &q, NULL),
			 SQLITE_OK);
	{
		static const char *const want[] = {
			"nfs://srv/export/buser.notekept0"
			"10011700000002--",
			"nfs://srv/exportactimeo300"
			"10001700000000--",
			"nfs://srv/exportactimeo601"
			"01700000003--",
			"nfs://srv/exportinheritno0"
			"10001700000001--",
		};
		while (sqlite3_step(q) == SQLITE_ROW) {
			assert_true(n < 4);
			assert_string_equal((const char *)sqlite3_column_text(q, 0), want[n]);
			n++;
		}
	}
	sqlite3_finalize(q);
	assert_int_equal(n, 4);
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = 'ldap_csn'", -1,
					    &q, NULL),
			 SQLITE_OK);
	assert_int_equal(sqlite3_step(q), SQLITE_ROW);
	assert_string_equal((const char *)sqlite3_column_text(q, 0), "20250101000000Z");
	sqlite3_finalize(q);
	sqlite3_close(db);

	nfskeys_attr_policy_free(p);
	nfskeys_attr_id_free(id);
	nfskeys_ctx_unref(ctx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_store_dir_bound, setup, teardown),
		cmocka_unit_test_setup_teardown(test_store_restart, setup, teardown),
		cmocka_unit_test_setup_teardown(test_store_migration, setup, teardown),
		cmocka_unit_test_setup_teardown(test_store_migration_v2, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
