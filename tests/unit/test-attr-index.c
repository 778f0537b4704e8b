/* Directory attributes: the index's inheritance rules over deep trees, the origin of an
 * effective value, the path-compressed trie against a brute-force resolver, the cached
 * effective sets, the fingerprint table and the bound on one directory's history. */
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

static void put(struct attr_index *ix, const char *path, const char *kv, bool ldap)
{
	char key[64], err[256], *v = NULL;
	const char *eq = strchr(kv, '=');
	uint64_t number;
	int k;

	snprintf(key, sizeof(key), "%.*s", (int)(eq - kv), kv);
	k = attr_key_parse(key, err, sizeof(err));
	assert_true(k >= 0);
	assert_int_equal(attr_value_parse(k, key, eq + 1, &v, &number, err, sizeof(err)), 0);
	assert_int_equal(attr_index_put(ix, "nfs://srv", path, k, key, v, number, ldap), 0);
	free(v);
}

static void expect_eff(struct attr_index *ix, struct nfskeys_attr_policy *p, const char *path,
		       const char *key, const char *value, const char *source)
{
	struct nfskeys_attr_entry e;
	int r;

	assert_int_equal(attr_index_resolve(ix, "nfs://srv", path, NFSKEYS_ATTR_SOURCES, p), 0);
	r = nfskeys_attr_policy_get(p, key, &e);
	if (!value) {
		if (r != -ENOENT)
			fail_msg("%s: %s should be unset, is %s from %s", path, key, e.value, e.source);
		return;
	}
	if (r < 0)
		fail_msg("%s: %s unset, expected %s", path, key, value);
	if (!streq(e.value, value) || !streq(e.source, source))
		fail_msg("%s: %s=%s from %s, expected %s from %s", path, key, e.value, e.source, value,
			 source);
}

static void test_index_inheritance(void **state)
{
	struct attr_index *ix = NULL;
	struct nfskeys_attr_policy *p = NULL;
	char deep[512] = "/export", src[600];

	assert_int_equal(attr_index_new(&ix), 0);
	assert_int_equal(nfskeys_attr_policy_new(&p), 0);
	for (int i = 0; i < 24; i++)
		snprintf(deep + strlen(deep), sizeof(deep) - strlen(deep), "/d%d", i);

	put(ix, "/", "cache=full", false);
	put(ix, "/export", "actimeo=60", false);
	put(ix, "/export/d0/d1/d2", "cache=read", false);
	put(ix, "/export/d0/d1/d2/d3/d4/d5/d6/d7", "inherit=no", false);
	put(ix, "/export/d0/d1/d2/d3/d4/d5/d6/d7", "cto=off", false);
	put(ix, "/export/d0/d1/d2/d3/d4/d5/d6/d7/d8/d9", "user.team=ops", false);
	put(ix, "/export/d0/d1/d2/d3/d4/d5/d6/d7/d8/d9/d10/d11/d12/d13/d14/d15", "acregmax=5m",
	    false);
	assert_int_equal(attr_index_count(ix), 6);

	/* nearest ancestor per attribute */
	expect_eff(ix, p, "/export/d0", "cache", "full", "nfs://srv/");
	expect_eff(ix, p, "/export/d0", "actimeo", "60", "nfs://srv/export");
	expect_eff(ix, p, "/export/d0/d1/d2/d3", "cache", "read", "nfs://srv/export/d0/d1/d2");
	expect_eff(ix, p, "/export/d0/d1/d2/d3", "actimeo", "60", "nfs://srv/export");
	assert_null(nfskeys_attr_policy_cut(p));
	/* below inherit=no nothing from above applies, the cut directory's own do */
	snprintf(src, sizeof(src), "nfs://srv%s", deep);
	expect_eff(ix, p, deep, "cache", NULL, NULL);
	expect_eff(ix, p, deep, "actimeo", NULL, NULL);
	expect_eff(ix, p, deep, "cto", "off", "nfs://srv/export/d0/d1/d2/d3/d4/d5/d6/d7");
	assert_string_equal(nfskeys_attr_policy_cut(p), "nfs://srv/export/d0/d1/d2/d3/d4/d5/d6/d7");
	expect_eff(ix, p, deep, "user.team", "ops", "nfs://srv/export/d0/d1/d2/d3/d4/d5/d6/d7/d8/d9");
	expect_eff(ix, p, deep, "acregmax", "300",
		   "nfs://srv/export/d0/d1/d2/d3/d4/d5/d6/d7/d8/d9/d10/d11/d12/d13/d14/d15");
	/* inherit is reported on the directory that sets it only */
	expect_eff(ix, p, "/export/d0/d1/d2/d3/d4/d5/d6/d7", "inherit", "no",
		   "nfs://srv/export/d0/d1/d2/d3/d4/d5/d6/d7");
	expect_eff(ix, p, "/export/d0/d1/d2/d3/d4/d5/d6/d7/d8", "inherit", NULL, NULL);
	/* paths beyond what the index knows, and other domains */
	expect_eff(ix, p, "/export/zz/yy", "actimeo", "60", "nfs://srv/export");
	assert_int_equal(attr_index_resolve(ix, "nfs://other", "/export", 0, p), 0);
	assert_int_equal(nfskeys_attr_policy_count(p), 0);

	/* explicit: only what is set on the directory itself */
	assert_int_equal(attr_index_explicit(ix, "nfs://srv", "/export/d0/d1/d2/d3/d4/d5/d6/d7", p), 0);
	assert_int_equal(nfskeys_attr_policy_count(p), 2);
	assert_int_equal(attr_index_explicit(ix, "nfs://srv", "/export/d0", p), 0);
	assert_int_equal(nfskeys_attr_policy_count(p), 0);

	/* removing the cut restores inheritance */
	assert_int_equal(attr_index_del(ix, "nfs://srv", "/export/d0/d1/d2/d3/d4/d5/d6/d7",
					NFSKEYS_ATTR_INHERIT, "inherit", false), 0);
	expect_eff(ix, p, deep, "cache", "read", "nfs://srv/export/d0/d1/d2");
	assert_int_equal(attr_index_count(ix), 6);
	assert_int_equal(attr_index_del(ix, "nfs://srv", "/export/d0/d1/d2/d3/d4/d5/d6/d7", -1, NULL,
					false), 0);
	assert_int_equal(attr_index_count(ix), 5);
	expect_eff(ix, p, deep, "cto", NULL, NULL);
	assert_true(attr_index_memory(ix) > 0);

	nfskeys_attr_policy_free(p);
	attr_index_free(ix);
}

static void test_index_origin(void **state)
{
	struct attr_index *ix = NULL;
	struct nfskeys_attr_policy *p = NULL;
	struct nfskeys_attr_entry e;

	assert_int_equal(attr_index_new(&ix), 0);
	assert_int_equal(nfskeys_attr_policy_new(&p), 0);
	put(ix, "/export", "cache=none", true);
	put(ix, "/export", "actimeo=10", true);
	put(ix, "/export", "cache=full", false);
	/* a local value wins over an LDAP-sourced one on the same directory */
	assert_int_equal(attr_index_resolve(ix, "nfs://srv", "/export/x", 0, p), 0);
	assert_int_equal(nfskeys_attr_policy_get(p, "cache", &e), 0);
	assert_string_equal(e.value, "full");
	assert_false(e.from_ldap);
	assert_int_equal(nfskeys_attr_policy_get(p, "actimeo", &e), 0);
	assert_true(e.from_ldap);
	/* removing the local one uncovers the LDAP one */
	assert_int_equal(attr_index_del(ix, "nfs://srv", "/export", NFSKEYS_ATTR_CACHE, "cache", false), 0);
	assert_int_equal(attr_index_resolve(ix, "nfs://srv", "/export", 0, p), 0);
	assert_int_equal(nfskeys_attr_policy_get(p, "cache", &e), 0);
	assert_string_equal(e.value, "none");
	assert_true(e.from_ldap);
	nfskeys_attr_policy_free(p);
	attr_index_free(ix);
}

/* The path-compressed trie against a brute-force resolver: random policies on random
 * paths of a small-fanout tree (so that edges are split in every way), including
 * inherit=no, removals and paths that end inside edges. */
struct ref_entry {
	char path[128];
	int key;	/* 0 cache, 1 actimeo, 2 inherit */
	char value[16];
	bool live;
};

static bool is_prefix_dir(const char *dirp, const char *q)
{
	size_t n = strlen(dirp);

	if (streq(dirp, "/"))
		return true;
	return strncmp(q, dirp, n) == 0 && (q[n] == '\0' || q[n] == '/');
}

static int depth_of(const char *p)
{
	int d = 0;

	if (streq(p, "/"))
		return 0;
	for (; *p; p++)
		d += *p == '/';
	return d;
}

/* The lookup path without sources (cached effective sets per node, dropped on every
 * change) against the one with sources (a walk that overlays each level): the same
 * entries in the same order, after every change of a random sequence of sets and
 * removals of typed and user.* attributes, local and LDAP-sourced, with inherit=no. */
static void cached_sets_round(uint32_t prefetch_min)
{
	static const char *const kvs[][2] = { { "cache", "none" },   { "cache", "full" },
					      { "actimeo", "7" },    { "inherit", "no" },
					      { "inherit", "yes" },  { "user.b", "x" },
					      { "user.a", "y" },     { "dirty_limit", "1M" } };
	static const char *const comps[] = { "a", "bb", "long-component-name", "c", "8-bytes!",
					     "sixteen-bytes-xx" };
	struct nfskeys_attr_policy *fast = NULL, *slow = NULL;
	struct attr_index *ix = NULL;
	uint32_t seed = 777;

#define RND() (seed = seed * 1103515245u + 12345u, (seed >> 16) & 0x7fff)
	assert_int_equal(nfskeys_attr_policy_new(&fast), 0);
	assert_int_equal(nfskeys_attr_policy_new(&slow), 0);
	assert_int_equal(attr_index_new(&ix), 0);
	attr_index_set_fp_min(ix, prefetch_min);
	for (int step = 0; step < 400; step++) {
		char path[256] = "", err[256], *v = NULL;
		int depth = (int)(RND() % 6), kv = (int)(RND() % ARRAY_SIZE(kvs)), k;
		bool ldap = RND() % 3 == 0;
		uint64_t number;
		size_t len = 0;

		for (int l = 0; l < depth; l++)
			len += (size_t)snprintf(path + len, sizeof(path) - len, "/%s", comps[RND() % 6]);
		if (depth == 0)
			strcpy(path, "/");
		k = attr_key_parse(kvs[kv][0], err, sizeof(err));
		assert_true(k >= 0);
		if (step % 100 == 99)
			attr_index_compact(ix); /* and grow again after */
		if (RND() % 5 == 0) {
			assert_int_equal(attr_index_del(ix, "nfs://c", path, k, kvs[kv][0], ldap), 0);
		} else {
			assert_int_equal(attr_value_parse(k, kvs[kv][0], kvs[kv][1], &v, &number, err,
							  sizeof(err)), 0);
			assert_int_equal(attr_index_put(ix, "nfs://c", path, k, kvs[kv][0], v, number,
							 ldap), 0);
			free(v);
		}
		for (int q = 0; q < 20; q++) {
			char qp[300] = "";
			int qd = (int)(RND() % 8);

			len = 0;
			for (int l = 0; l < qd; l++)
				len += (size_t)snprintf(qp + len, sizeof(qp) - len, "/%s",
							comps[RND() % 6]);
			if (qd == 0)
				strcpy(qp, "/");
			assert_int_equal(attr_index_resolve(ix, "nfs://c", qp, 0, fast), 0);
			assert_int_equal(attr_index_resolve(ix, "nfs://c", qp, NFSKEYS_ATTR_SOURCES, slow), 0);
			if (nfskeys_attr_policy_count(fast) != nfskeys_attr_policy_count(slow))
				fail_msg("step %d %s: %zu entries, with sources %zu", step, qp,
					 nfskeys_attr_policy_count(fast), nfskeys_attr_policy_count(slow));
			for (size_t i = 0; i < nfskeys_attr_policy_count(fast); i++) {
				struct nfskeys_attr_entry a, b;
				assert_int_equal(nfskeys_attr_policy_entry(fast, i, &a), 0);
				assert_int_equal(nfskeys_attr_policy_entry(slow, i, &b), 0);
				if (!streq(a.key, b.key) || !streq(a.value, b.value) ||
				    a.number != b.number || a.from_ldap != b.from_ldap)
					fail_msg("step %d %s #%zu: %s=%s%s, with sources %s=%s%s", step, qp,
						 i, a.key, a.value, a.from_ldap ? " [ldap]" : "", b.key,
						 b.value, b.from_ldap ? " [ldap]" : "");
				assert_null(a.source);
			}
		}
	}
#undef RND
	assert_true(attr_index_memory(ix) > 0);
	nfskeys_attr_policy_free(fast);
	nfskeys_attr_policy_free(slow);
	attr_index_free(ix);
}

/* both lookup paths: small-index (hash while walking) and prefetching; and once more with
 * every table in its own huge-page mapping, as in a large index (grown, rehashed and cut
 * back by compaction through mmap/munmap rather than realloc) */
static void test_index_cached_sets(void **state)
{
	cached_sets_round(UINT32_MAX);
	cached_sets_round(0);
	attr_index_set_big_min(1);
	cached_sets_round(0);
	attr_index_set_big_min(0);
}

static void test_index_random(void **state)
{
	static const char *const names[] = { "cache", "actimeo", "inherit" };
	static const char *const vals[3][3] = { { "none", "read", "full" },
						{ "1", "2", "3" },
						{ "no", "yes", "no" } };
	enum { N = 600, Q = 3000 };
	struct ref_entry *ref = calloc(N, sizeof(*ref));
	struct attr_index *ix = NULL;
	struct nfskeys_attr_policy *p = NULL;
	uint32_t seed = 12345;

#define RND() (seed = seed * 1103515245u + 12345u, (seed >> 16) & 0x7fff)
	assert_non_null(ref);
	assert_int_equal(attr_index_new(&ix), 0);
	attr_index_set_fp_min(ix, 0); /* the large-index lookup path */
	assert_int_equal(nfskeys_attr_policy_new(&p), 0);
	for (int i = 0; i < N; i++) {
		int depth = (int)(RND() % 7);
		size_t len = 0;
		uint64_t number;
		char *v = NULL;

		ref[i].path[0] = '\0';
		for (int l = 0; l < depth; l++)
			len += (size_t)snprintf(ref[i].path + len, sizeof(ref[i].path) - len, "/%s",
						(const char *[]){ "a", "bb", "a.b", "long-name-x",
										   "8-bytes!" }[RND() % 5]);
		if (depth == 0)
			strcpy(ref[i].path, "/");
		ref[i].key = (int)(RND() % 3);
		if (ref[i].key == 2 && RND() % 4)
			ref[i].key = 0; /* keep cuts rare */
		snprintf(ref[i].value, sizeof(ref[i].value), "%s", vals[ref[i].key][RND() % 3]);
		ref[i].live = true;
		/* later entries on the same (path, key) replace earlier ones */
		for (int j = 0; j < i; j++)
			if (ref[j].live && ref[j].key == ref[i].key && streq(ref[j].path, ref[i].path))
				ref[j].live = false;
		{
			int k = attr_key_parse(names[ref[i].key], NULL, 0);
			assert_int_equal(attr_value_parse(k, names[ref[i].key], ref[i].value, &v, &number,
							  NULL, 0), 0);
			assert_int_equal(attr_index_put(ix, "nfs://r", ref[i].path, k, names[ref[i].key], v,
							 number, false), 0);
			free(v);
		}
		/* now and then remove one */
		if (RND() % 10 == 0) {
			int j = (int)(RND() % (unsigned)(i + 1));
			if (ref[j].live) {
				ref[j].live = false;
				assert_int_equal(attr_index_del(ix, "nfs://r", ref[j].path,
								attr_key_parse(names[ref[j].key], NULL, 0),
								names[ref[j].key], false), 0);
			}
		}
	}
	for (int q = 0; q < Q; q++) {
		char path[160];
		int depth = (int)(RND() % 9);
		size_t len = 0;
		const char *want[3] = { NULL, NULL, NULL };
		int wdepth[3] = { -1, -1, -1 }, cut = -1;

		path[0] = '\0';
		for (int l = 0; l < depth; l++)
			len += (size_t)snprintf(path + len, sizeof(path) - len, "/%s",
						(const char *[]){ "a", "bb", "a.b", "long-name-x", "zz",
										   "8-bytes!" }[RND() % 6]);
		if (depth == 0)
			strcpy(path, "/");
		/* reference: the deepest inherit=no among the ancestors cuts */
		for (int i = 0; i < N; i++)
			if (ref[i].live && ref[i].key == 2 && streq(ref[i].value, "no") &&
			    is_prefix_dir(ref[i].path, path))
				cut = MAX(cut, depth_of(ref[i].path));
		for (int i = 0; i < N; i++) {
			int d;
			if (!ref[i].live || !is_prefix_dir(ref[i].path, path))
				continue;
			d = depth_of(ref[i].path);
			if (d < cut || d < wdepth[ref[i].key])
				continue;
			if (ref[i].key == 2 && !streq(ref[i].path, path))
				continue; /* inherit is not inherited */
			wdepth[ref[i].key] = d;
			want[ref[i].key] = ref[i].value;
		}
		assert_int_equal(attr_index_resolve(ix, "nfs://r", path, 0, p), 0);
		for (int k = 0; k < 3; k++) {
			struct nfskeys_attr_entry e;
			int r = nfskeys_attr_policy_get(p, names[k], &e);
			if (!want[k] && r == 0)
				fail_msg("%s: %s=%s, expected unset", path, names[k], e.value);
			if (want[k] && (r < 0 || !streq(e.value, want[k])))
				fail_msg("%s: %s=%s, expected %s", path, names[k], r < 0 ? "(unset)" : e.value,
					 want[k]);
		}
	}
#undef RND
	nfskeys_attr_policy_free(p);
	attr_index_free(ix);
	free(ref);
}

static void expect_cache(struct attr_index *ix, const char *path, const char *want)
{
	struct nfskeys_attr_policy *fast = NULL, *slow = NULL;
	struct nfskeys_attr_entry e;

	assert_int_equal(nfskeys_attr_policy_new(&fast), 0);
	assert_int_equal(nfskeys_attr_policy_new(&slow), 0);
	assert_int_equal(attr_index_resolve(ix, "nfs://f", path, 0, fast), 0);
	assert_int_equal(attr_index_resolve(ix, "nfs://f", path, NFSKEYS_ATTR_SOURCES, slow), 0);
	if (!want) {
		assert_int_equal(nfskeys_attr_policy_count(fast), 0);
	} else {
		if (nfskeys_attr_policy_get(fast, "cache", &e) < 0 || !streq(e.value, want))
			fail_msg("%.60s: cache=%s, expected %s", path,
				 nfskeys_attr_policy_get(fast, "cache", &e) < 0 ? "(unset)" : e.value,
				 want);
		assert_int_equal(nfskeys_attr_policy_get(slow, "cache", &e), 0);
		assert_string_equal(e.value, want);
	}
	nfskeys_attr_policy_free(fast);
	nfskeys_attr_policy_free(slow);
}

static void put_cache(struct attr_index *ix, const char *path, const char *value)
{
	uint64_t number;
	char *v = NULL;

	assert_int_equal(attr_value_parse(NFSKEYS_ATTR_CACHE, "cache", value, &v, &number, NULL, 0), 0);
	assert_int_equal(attr_index_put(ix, "nfs://f", path, NFSKEYS_ATTR_CACHE, "cache", v, number,
					false), 0);
	free(v);
}

/* The fingerprint table: stored paths whose fingerprints collide under the key are
 * found out (when one is added, and when a key is set) and a new key drawn, so both keep
 * their own policy; queries deeper than the table looks (48 components) and components
 * too long for any label still find the nearest stored ancestor. */
static void test_index_fingerprints(void **state)
{
	struct attr_index *ix = NULL;
	char *deep = malloc(70000), *longc = malloc(70100);
	size_t len = 0;

	assert_non_null(deep);
	assert_non_null(longc);
	/* at K = 2, /a/c and /b/a collide: 2 * ("a" - "b") + ("c" - "a") = 0 in the words
	 * (length | bytes << 16) of fp_comp() */
	assert_int_equal(attr_index_new(&ix), 0);
	attr_index_set_fp_min(ix, 0);
	put_cache(ix, "/a/c", "none");
	assert_int_equal(attr_index_set_fpkey(ix, 2), 0); /* one path: no collision */
	assert_int_equal(attr_index_set_fpkey(ix, 1), -EINVAL);
	put_cache(ix, "/b/a", "full"); /* collides: a new key is drawn */
	expect_cache(ix, "/a/c", "none");
	expect_cache(ix, "/b/a", "full");
	expect_cache(ix, "/b/a/x/y", "full");
	expect_cache(ix, "/a/c/y", "none");
	expect_cache(ix, "/a", NULL);
	assert_int_equal(attr_index_set_fpkey(ix, 2), 1); /* both stored: collide, redrawn */
	expect_cache(ix, "/a/c", "none");
	expect_cache(ix, "/b/a", "full");
	assert_int_equal(attr_index_set_fpkey(ix, 3), 0); /* no collision at K = 3 */
	expect_cache(ix, "/a/c/d", "none");
	expect_cache(ix, "/b/a/d", "full");

	/* 60 components deep, policies at depths 10, 47, 48, 49 and 55 */
	for (int l = 1; l <= 60; l++) {
		len += (size_t)snprintf(deep + len, 70000 - len, "/c%d", l);
		if (l == 10 || l == 47 || l == 48 || l == 49 || l == 55)
			put_cache(ix, deep, (const char *[]){ "none", "read", "full" }[l % 3]);
	}
	expect_cache(ix, deep, "read"); /* from depth 55 */
	for (int cut = 60; len > 0 && cut >= 9; cut--) {
		const char *want = cut >= 55 ? "read" : cut >= 49 ? "read" : cut >= 48 ? "none" :
				   cut >= 47 ? "full" : cut >= 10 ? "read" : NULL;

		expect_cache(ix, deep, want);
		while (len > 0 && deep[--len] != '/')
			;
		deep[len] = '\0';
	}
	/* the same path in another domain is another directory */
	{
		struct nfskeys_attr_policy *p = NULL;
		struct nfskeys_attr_entry e;

		assert_int_equal(nfskeys_attr_policy_new(&p), 0);
		assert_int_equal(attr_index_put(ix, "cifs://g/share", "/c1/c2", NFSKEYS_ATTR_CACHE,
						"cache", "full", 2, false), 0);
		assert_int_equal(attr_index_resolve(ix, "cifs://g/share", "/c1/c2/c3", 0, p), 0);
		assert_int_equal(nfskeys_attr_policy_get(p, "cache", &e), 0);
		assert_string_equal(e.value, "full");
		assert_int_equal(attr_index_resolve(ix, "cifs://g/share", "/c1", 0, p), 0);
		assert_int_equal(nfskeys_attr_policy_count(p), 0);
		nfskeys_attr_policy_free(p);
		expect_cache(ix, "/c1/c2/c3", NULL); /* nfs://f: nothing above depth 10 */
	}
	/* a component of 70 000 bytes: no label is that long */
	memset(longc, 'x', 70099);
	memcpy(longc, "/c1/c2/c3/c4/c5/c6/c7/c8/c9/c10/", 32);
	longc[70099] = '\0';
	expect_cache(ix, longc, "read");
	free(deep);
	free(longc);
	attr_index_free(ix);
}

/* A path that leaves a path-compressed edge inside a component: the edge "a.b/a/export/x"
 * against "a.b/ab/y" splits after "a.b", not after "a.b/a" (which once made /a.b/ab/y
 * unreachable by the walk; found by fuzz-attr-index).  Both lookup paths, both orders. */
static void test_index_split_inside_component(void **state)
{
	for (int fp = 0; fp < 2; fp++) {
		for (int order = 0; order < 2; order++) {
			struct attr_index *ix = NULL;

			assert_int_equal(attr_index_new(&ix), 0);
			attr_index_set_fp_min(ix, fp ? 0 : UINT32_MAX);
			put_cache(ix, order ? "/a.b/ab/y" : "/a.b/a/export/x", order ? "full" : "none");
			put_cache(ix, order ? "/a.b/a/export/x" : "/a.b/ab/y", order ? "none" : "full");
			expect_cache(ix, "/a.b/ab/y", "full");
			expect_cache(ix, "/a.b/ab/y/z", "full");
			expect_cache(ix, "/a.b/a/export/x", "none");
			expect_cache(ix, "/a.b/a/export/x/z", "none");
			expect_cache(ix, "/a.b/a", NULL);
			expect_cache(ix, "/a.b/ab", NULL);
			expect_cache(ix, "/a.b", NULL);
			put_cache(ix, "/a.b/abc", "read"); /* and a longer sibling component */
			expect_cache(ix, "/a.b/abc/q", "read");
			expect_cache(ix, "/a.b/ab/y", "full");
			attr_index_free(ix);
		}
	}
}

/* Setting one directory's attributes over and over (the same value again, a new value
 * every time, removing and setting again) leaves the index's memory bounded: outgrown
 * blocks and values nobody uses any more are collected.  100k rounds; and the same for
 * one key of a policy object set over and over. */
static void test_index_bounded(void **state)
{
	struct nfskeys_attr_policy *p = NULL;
	struct nfskeys_attr_entry e;
	struct attr_index *ix = NULL;
	size_t most = 0;
	char v[32] = "";

	assert_int_equal(attr_index_new(&ix), 0);
	assert_int_equal(nfskeys_attr_policy_new(&p), 0);
	assert_int_equal(attr_index_put(ix, "nfs://b", "/export/other", NFSKEYS_ATTR_CACHE, "cache",
					"read", 1, false), 0);
	for (int i = 0; i < 100000; i++) {
		snprintf(v, sizeof(v), "v%d", i);
		assert_int_equal(attr_index_put(ix, "nfs://b", "/export/a/b", NFSKEYS_ATTR_ACTIMEO,
						"actimeo", "60", 60, false), 0);
		assert_int_equal(attr_index_put(ix, "nfs://b", "/export/a/b", NFSKEYS_ATTR_USER, "user.x",
						v, 0, i % 3 == 0), 0);
		if (i % 2)
			assert_int_equal(attr_index_del(ix, "nfs://b", "/export/a/b", -1, NULL, false), 0);
		if (i % 1000 == 999) { /* a lookup between changes: the computed sets too */
			assert_int_equal(attr_index_resolve(ix, "nfs://b", "/export/a/b/c", 0, p), 0);
			most = MAX(most, attr_index_memory(ix));
		}
	}
	if (most > 256 * 1024)
		fail_msg("index memory grew to %zu bytes over 100k sets of one directory", most);
	/* and it still answers right: the last round set user.x from LDAP and removed the
	 * local ones */
	assert_int_equal(attr_index_resolve(ix, "nfs://b", "/export/a/b/c", 0, p), 0);
	assert_int_equal(nfskeys_attr_policy_count(p), 1);
	assert_int_equal(nfskeys_attr_policy_get(p, "user.x", &e), 0);
	assert_string_equal(e.value, "v99999");
	assert_true(e.from_ldap);
	assert_int_equal(attr_index_put(ix, "nfs://b", "/export/a/b", NFSKEYS_ATTR_USER, "user.x",
					"local", 0, false), 0);
	assert_int_equal(attr_index_resolve(ix, "nfs://b", "/export/a/b/c", 0, p), 0);
	assert_int_equal(nfskeys_attr_policy_get(p, "user.x", &e), 0);
	assert_string_equal(e.value, "local");
	assert_int_equal(attr_index_resolve(ix, "nfs://b", "/export/other", 0, p), 0);
	assert_int_equal(nfskeys_attr_policy_get(p, "cache", &e), 0);
	assert_string_equal(e.value, "read");

	/* the same for a policy object: one key set 100k times (with a source, as lookups
	 * fill them), other entries kept */
	nfskeys_attr_policy_clear(p);
	most = 0;
	assert_int_equal(nfskeys_attr_policy_set(p, "user.keep", "this one", NULL, 0), 0);
	for (int i = 0; i < 100000; i++) {
		snprintf(v, sizeof(v), "%d", i % 3600);
		assert_int_equal(attr_policy_put(p, NFSKEYS_ATTR_ACTIMEO, NULL, v, (uint64_t)(i % 3600),
						 "nfs://b/export/a/long/enough/source", false), 0);
		snprintf(v, sizeof(v), "value-%d", i);
		assert_int_equal(nfskeys_attr_policy_set(p, "user.x", v, NULL, 0), 0);
		most = MAX(most, attr_policy_memory(p));
	}
	if (most > 16 * 1024)
		fail_msg("policy grew to %zu bytes over 100k sets of one key", most);
	assert_int_equal(nfskeys_attr_policy_count(p), 3);
	assert_int_equal(nfskeys_attr_policy_get(p, "actimeo", &e), 0);
	assert_string_equal(e.value, "2799");
	assert_string_equal(e.source, "nfs://b/export/a/long/enough/source");
	assert_int_equal(nfskeys_attr_policy_get(p, "user.keep", &e), 0);
	assert_string_equal(e.value, "this one");
	assert_int_equal(nfskeys_attr_policy_get(p, "user.x", &e), 0);
	assert_string_equal(e.value, "value-99999");
	nfskeys_attr_policy_free(p);
	attr_index_free(ix);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_index_inheritance),
		cmocka_unit_test(test_index_origin),
		cmocka_unit_test(test_index_random),
		cmocka_unit_test(test_index_cached_sets),
		cmocka_unit_test(test_index_fingerprints),
		cmocka_unit_test(test_index_split_inside_component),
		cmocka_unit_test(test_index_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
