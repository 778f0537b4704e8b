/* libFuzzer target: the directory-policy index (libnfskeys/attr-index.c), differentially.
 * The input is a program of operations on one index: set and remove attributes (typed and
 * user.*, local and LDAP-sourced, inherit=no among them) on paths built from a small
 * alphabet of components (so that paths share prefixes, split path-compressed edges and
 * have labels longer than a node holds inline), compact, and look up.  Each lookup is
 * answered three ways: through the fingerprint table (forced on from the first node),
 * by walking the trie (a second index given the same changes, table off), and by the
 * walk that reports sources.  All three must give the same entries in the same order;
 * abort() otherwise. */
#include <stdint.h>
#include <string.h>

#include "attr-private.h"
#include "macros.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(bool ok)
{
	if (!ok)
		abort();
}

static const char *const comps[] = {
	"a", "b", "ab", "a.b", "export", "8-bytes!", "nine-byte", "sixteen-bytes-xx",
	"a-component-longer-than-sixteen-bytes", "d1-0", "d1-1", "d2-0",
};

static const char *const kvs[][2] = {
	{ "cache", "none" },	{ "cache", "full" },	  { "actimeo", "7" },
	{ "actimeo", "60" },	{ "inherit", "no" },	  { "inherit", "yes" },
	{ "user.team", "ops" }, { "user.a", "x" },	  { "dirty_limit", "1M" },
	{ "writeback", "async" }, { "lookupcache", "positive" }, { "cto", "off" },
};

struct cursor {
	const uint8_t *p;
	size_t left;
};

static unsigned next(struct cursor *c)
{
	if (!c->left)
		return 0;
	c->left--;
	return *c->p++;
}

/* A path of 0..9 components (0: "/"), or deeper now and then (up to 60). */
static void make_path(struct cursor *c, char *buf, size_t size)
{
	unsigned b = next(c), depth = b % 10;
	size_t len = 0;

	if (b >= 250)
		depth = 40 + b % 21; /* past the table's 48-component reach, and below it */
	buf[0] = '\0';
	for (unsigned l = 0; l < depth && len + 64 < size; l++)
		len += (size_t)snprintf(buf + len, size - len, "/%s", comps[next(c) % ARRAY_SIZE(comps)]);
	if (depth == 0)
		snprintf(buf, size, "/");
}

static void same(const struct nfskeys_attr_policy *a, const struct nfskeys_attr_policy *b)
{
	size_t n = nfskeys_attr_policy_count(a);

	check(n == nfskeys_attr_policy_count(b));
	for (size_t i = 0; i < n; i++) {
		struct nfskeys_attr_entry x, y;

		check(nfskeys_attr_policy_entry(a, i, &x) == 0);
		check(nfskeys_attr_policy_entry(b, i, &y) == 0);
		check(streq(x.key, y.key) && streq(x.value, y.value) && x.number == y.number &&
		      x.from_ldap == y.from_ldap);
	}
}

static void lookup(struct attr_index *fp, struct attr_index *walk, const char *path,
		   struct nfskeys_attr_policy *p[3])
{
	check(attr_index_resolve(fp, "nfs://f", path, 0, p[0]) == 0);
	check(attr_index_resolve(walk, "nfs://f", path, 0, p[1]) == 0);
	check(attr_index_resolve(walk, "nfs://f", path, NFSKEYS_ATTR_SOURCES, p[2]) == 0);
	same(p[0], p[1]);
	same(p[1], p[2]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cursor c = { data, size };
	struct attr_index *ix[2] = { NULL, NULL };
	struct nfskeys_attr_policy *p[3] = { NULL, NULL, NULL };
	char path[4096];

	check(attr_index_new(&ix[0]) == 0);
	check(attr_index_new(&ix[1]) == 0);
	attr_index_set_fp_min(ix[0], 0);
	attr_index_set_fp_min(ix[1], UINT32_MAX);
	for (int i = 0; i < 3; i++)
		check(nfskeys_attr_policy_new(&p[i]) == 0);
	for (int ops = 0; c.left && ops < 256; ops++) {
		unsigned op = next(&c) % 8, kv = next(&c) % ARRAY_SIZE(kvs);
		bool ldap = op & 1;
		int k = attr_key_parse(kvs[kv][0], NULL, 0);
		uint64_t number;
		char *v = NULL;
		int r[2];

		make_path(&c, path, sizeof(path));
		check(k >= 0);
		switch (op) {
		case 0:
		case 1:
		case 2:
		case 3: /* set */
			check(attr_value_parse(k, kvs[kv][0], kvs[kv][1], &v, &number, NULL, 0) == 0);
			for (int i = 0; i < 2; i++)
				r[i] = attr_index_put(ix[i], "nfs://f", path, k, kvs[kv][0], v, number,
						      ldap);
			free(v);
			check(r[0] == r[1]);
			break;
		case 4:
		case 5: /* remove one, or (odd byte) all of one origin */
			for (int i = 0; i < 2; i++)
				r[i] = kv & 1 ? attr_index_del(ix[i], "nfs://f", path, -1, NULL, ldap) :
						attr_index_del(ix[i], "nfs://f", path, k, kvs[kv][0], ldap);
			check(r[0] == r[1]);
			break;
		case 6: /* after a bulk load */
			attr_index_compact(ix[0]);
			attr_index_compact(ix[1]);
			break;
		default:
			break;
		}
		lookup(ix[0], ix[1], path, p);
		/* and a query below it, which the walk may leave early */
		if (strlen(path) + 16 < sizeof(path)) {
			strcat(path, path[1] ? "/x/a" : "x/a");
			lookup(ix[0], ix[1], path, p);
		}
	}
	check(attr_index_count(ix[0]) == attr_index_count(ix[1]));
	for (int i = 0; i < 3; i++)
		nfskeys_attr_policy_free(p[i]);
	attr_index_free(ix[0]);
	attr_index_free(ix[1]);
	return 0;
}
