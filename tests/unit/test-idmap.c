/* The ID-mapping engine through its public API with real backends (static, nsswitch)
 * loaded as plugins: SID text/binary forms, kernel descriptions and payloads, the chain
 * (-ENOENT passes on), the cache (hits, negative entries, expiry bound, size bound,
 * flush), the nobody fallback and its TTL, explain's causes, and a dlopen of every
 * idmap plugin built. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <dirent.h>
#include <inttypes.h>
#include <pwd.h>

#include "idmap-plugin.h"
#include "libnfskeys-private.h"
#include "test-util.h"

static int setup(void **state)
{
	return tu_dir_setup("idmap");
}

static int teardown(void **state)
{
	return tu_dir_teardown();
}

static struct nfskeys_ctx *ctx_with(const char *text)
{
	return tu_ctx_conf("%s", text);
}

static void test_sid_text(void **state)
{
	struct nfskeys_sid sid;
	char buf[NFSKEYS_SID_STRING_MAX];

	assert_int_equal(nfskeys_sid_from_string("S-1-5-21-1-2-3-1000", &sid), 0);
	assert_int_equal(sid.revision, 1);
	assert_int_equal(sid.num_subauth, 5);
	assert_int_equal(sid.authority[5], 5);
	assert_int_equal(sid.subauth[4], 1000);
	assert_int_equal(nfskeys_sid_to_string(&sid, buf, sizeof(buf)), 19);
	assert_string_equal(buf, "S-1-5-21-1-2-3-1000");
	/* authority >= 2^32 is written in hex, as the kernel does */
	assert_int_equal(nfskeys_sid_from_string("S-1-0x123456789ab-7", &sid), 0);
	assert_int_equal(sid.authority[0], 0x01);
	assert_int_equal(sid.authority[5], 0xab);
	assert_int_equal(nfskeys_sid_to_string(&sid, buf, sizeof(buf)), 19);
	assert_string_equal(buf, "S-1-0x123456789ab-7");
	assert_int_equal(nfskeys_sid_from_string("S-1-4294967295", &sid), 0);
	assert_int_equal(nfskeys_sid_to_string(&sid, buf, sizeof(buf)), 14);
	assert_string_equal(buf, "S-1-4294967295");
	/* too small a buffer */
	assert_int_equal(nfskeys_sid_to_string(&sid, buf, 5), -ENOBUFS);
	/* 15 sub-authorities is the maximum */
	assert_int_equal(nfskeys_sid_from_string("S-1-5-1-2-3-4-5-6-7-8-9-10-11-12-13-14-15", &sid), 0);
	assert_int_equal(sid.num_subauth, 15);
	assert_int_equal(nfskeys_sid_from_string("S-1-5-1-2-3-4-5-6-7-8-9-10-11-12-13-14-15-16", &sid),
			 -EINVAL);
	/* decimal runs of every length around the 8-at-a-time step, leading zeros */
	{
		static const struct {
			const char *text;
			uint32_t last;
		} good[] = {
			{ "S-1-5-21-12345678-1", 1 },		{ "S-1-5-21-1-12345678", 12345678 },
			{ "S-1-5-21-1-123456789", 123456789 },	{ "S-1-5-21-1-4294967295", 4294967295u },
			{ "S-1-5-21-1-00000000000000000007", 7 }, { "S-1-5-21-1-1234567", 1234567 },
			{ "S-1-5-21-1-0000000012345678", 12345678 }, { "S-1-5-21-99999999-0", 0 },
			{ "S-1-5-21-3623811015-3361044348-30300820-1013", 1013 },
		};
		for (size_t i = 0; i < ARRAY_SIZE(good); i++) {
			assert_int_equal(nfskeys_sid_from_string(good[i].text, &sid), 0);
			assert_int_equal(sid.subauth[sid.num_subauth - 1], good[i].last);
		}
		assert_int_equal(nfskeys_sid_from_string("S-1-5-21-3623811015-3361044348-30300820-1013",
							 &sid), 0);
		assert_int_equal(sid.subauth[1], 3623811015u);
		assert_int_equal(sid.subauth[3], 30300820);
	}
	/* malformed */
	static const char *const bad[] = { "S-1-5-21-1-4294967296", "S-1-5-21-1234567x-1",
					   "S-1-5-21-12345678x-1", "S-1-5-21-1234\xfa5678-1",
					   "S-1-5-21-12345678901234567890-1", "S-1-5-21-1-2-3-1234567 ",
					   "",	      "S",	    "S-",	  "S-1",
					   "S-1-",    "X-1-5-21",   "S-1-5-",	  "S-1-5--1",
					   "S-1-x-21", "S-256-5",    "S-1-5-4294967296",
					   "S-1-5-21 ", "S-1-0x-1", "S-1-0x1000000000000" };
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		if (nfskeys_sid_from_string(bad[i], &sid) != -EINVAL)
			fail_msg("accepted '%s'", bad[i]);
}

static void test_sid_binary(void **state)
{
	struct nfskeys_sid sid, back;
	uint8_t buf[NFSKEYS_SID_BINARY_MAX];
	static const uint8_t want[] = { 1, 5, 0, 0, 0, 0, 0, 5, 21, 0, 0, 0, 1, 0, 0, 0,
					2, 0, 0, 0, 3, 0, 0, 0, 0xe8, 3, 0, 0 };

	assert_int_equal(nfskeys_sid_from_string("S-1-5-21-1-2-3-1000", &sid), 0);
	assert_int_equal(nfskeys_sid_to_binary(&sid, buf, sizeof(buf)), 68);
	assert_memory_equal(buf, want, sizeof(want));
	for (size_t i = sizeof(want); i < sizeof(buf); i++)
		assert_int_equal(buf[i], 0);
	assert_int_equal(nfskeys_sid_to_binary(&sid, buf, 28), 28);
	assert_int_equal(nfskeys_sid_to_binary(&sid, buf, 27), -ENOBUFS);
	assert_int_equal(nfskeys_sid_from_binary(want, sizeof(want), &back), 0);
	assert_memory_equal(&back, &sid, sizeof(sid));
	assert_int_equal(nfskeys_sid_from_binary(want, 27, &back), -EINVAL);
	buf[1] = 16;
	assert_int_equal(nfskeys_sid_from_binary(buf, sizeof(buf), &back), -EINVAL);
}

static void test_descriptions(void **state)
{
	enum nfskeys_idmap_kind k;
	const char *key;
	char longname[200];

	assert_int_equal(nfskeys_idmap_parse_description("id_resolver", "uid:alice@x", &k, &key), 0);
	assert_int_equal(k, NFSKEYS_IDMAP_NAME_TO_UID);
	assert_string_equal(key, "alice@x");
	assert_int_equal(nfskeys_idmap_parse_description("id_resolver", "group:10", &k, &key), 0);
	assert_int_equal(k, NFSKEYS_IDMAP_GID_TO_GROUP);
	assert_int_equal(nfskeys_idmap_parse_description("cifs.idmap", "os:S-1-5-21-1-2-3-4", &k, &key), 0);
	assert_int_equal(k, NFSKEYS_IDMAP_SID_TO_UID);
	assert_int_equal(nfskeys_idmap_parse_description("cifs.idmap", "gi:100", &k, &key), 0);
	assert_int_equal(k, NFSKEYS_IDMAP_GID_TO_SID);
	assert_int_equal(nfskeys_idmap_parse_description("user", "oi:0", &k, &key), 0);
	/* a prefix of the other type */
	assert_int_equal(nfskeys_idmap_parse_description("id_resolver", "os:S-1-5-21-1-2-3-4", &k, &key),
			 -EOPNOTSUPP);
	assert_int_equal(nfskeys_idmap_parse_description("cifs.idmap", "uid:a@b", &k, &key), -EOPNOTSUPP);
	/* malformed */
	memset(longname, 'a', sizeof(longname));
	memcpy(longname, "uid:", 4);
	strcpy(longname + 150, "@example.org");
	/* a bare name is a name (nfsidmap takes it too; the backends decide) */
	assert_int_equal(nfskeys_idmap_parse_description("id_resolver", "uid:alice", &k, &key), 0);
	assert_int_equal(k, NFSKEYS_IDMAP_NAME_TO_UID);
	assert_string_equal(key, "alice");
	/* no user part: nobody, as nfsidmap (doc/KERNEL-INTERFACES.md §3), not malformed */
	assert_int_equal(nfskeys_idmap_parse_description("id_resolver", "uid:@x", &k, &key), 0);
	assert_string_equal(key, "@x");
	static const char *const bad[] = { "uid:", "gid:alice@", "user:abc", "user:-1",
					   "user:4294967295", "os:S-1-x", "gi:", "foo:bar", "",
					   /* found by fuzz-upcall: lookups refuse these keys */
					   "uid:alice@", "gid:@", "uid:a@b@" };
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		if (nfskeys_idmap_parse_description("user", bad[i], &k, &key) != -EINVAL)
			fail_msg("accepted '%s'", bad[i]);
	assert_int_equal(nfskeys_idmap_parse_description("user", longname, &k, &key), -EINVAL);
}

static void test_payloads(void **state)
{
	struct nfskeys_idmap_answer a = { .kind = NFSKEYS_IDMAP_NAME_TO_UID, .id = 4242 };
	uint8_t buf[128];
	uint32_t id;

	assert_int_equal(nfskeys_idmap_payload(&a, buf, sizeof(buf)), 5);
	assert_memory_equal(buf, "4242\0", 5);
	assert_int_equal(nfskeys_idmap_payload(&a, buf, 4), -ENOBUFS);
	a.kind = NFSKEYS_IDMAP_UID_TO_NAME;
	strcpy(a.name, "alice@example.org");
	assert_int_equal(nfskeys_idmap_payload(&a, buf, sizeof(buf)), 17);
	assert_memory_equal(buf, "alice@example.org", 17);
	a.kind = NFSKEYS_IDMAP_SID_TO_GID;
	a.id = 0x01020304;
	assert_int_equal(nfskeys_idmap_payload(&a, buf, sizeof(buf)), 4);
	memcpy(&id, buf, 4);
	assert_int_equal(id, 0x01020304); /* host byte order */
	a.kind = NFSKEYS_IDMAP_UID_TO_SID;
	assert_int_equal(nfskeys_sid_from_string("S-1-5-21-1-2-3-1000", &a.sid), 0);
	assert_int_equal(nfskeys_idmap_payload(&a, buf, sizeof(buf)), 68);
	assert_int_equal(buf[0], 1);
	assert_int_equal(buf[1], 5);
	assert_int_equal(buf[24], 0xe8);
	assert_int_equal(nfskeys_idmap_payload(&a, buf, 60), -ENOBUFS);
}

static void test_kinds(void **state)
{
	enum nfskeys_idmap_kind k;

	for (unsigned i = 1; i < _NFSKEYS_IDMAP_KIND_MAX; i++) {
		const char *s = nfskeys_idmap_kind_to_string((enum nfskeys_idmap_kind)i);

		assert_non_null(s);
		assert_int_equal(nfskeys_idmap_kind_from_string(s, &k), 0);
		assert_int_equal(k, i);
	}
	assert_null(nfskeys_idmap_kind_to_string(_NFSKEYS_IDMAP_KIND_MAX));
	assert_int_equal(nfskeys_idmap_kind_from_string("name-to-sid", &k), -EINVAL);
}

static void test_chain(void **state)
{
	struct nfskeys_ctx *ctx = ctx_with("[General]\nDomain = Example.ORG\nLocal-Realms = EXAMPLE.ORG\n"
					   "[Translation]\nMethod = static, nsswitch\n"
					   "[Static]\nalice@example.org = 5001\nroot@example.org = 7\n"
					   "group:staff@example.org = 6001\nbob@EXAMPLE.ORG = daemon\n"
					   "[Idmap]\nPositive-TTL = 900\nNegative-TTL = 30\n"
					   "[Mapping]\nNobody-User = 65534\nNobody-Group = 65533\nNobody-TTL = 45\n");
	struct nfskeys_idmap_answer a;
	const char *domain, *source;
	char *name = NULL;
	uid_t uid;
	gid_t gid;

	assert_int_equal(nfskeys_idmap_get_domain(ctx, &domain, &source), 0);
	assert_string_equal(domain, "Example.ORG");
	assert_string_equal(source, "config");

	/* static answers first, nsswitch after -ENOENT */
	assert_int_equal(nfskeys_idmap_name_to_uid(ctx, "alice@example.org", &uid, &a), 0);
	assert_int_equal(uid, 5001);
	assert_string_equal(a.backend, "static");
	assert_int_equal(a.ttl, 900);
	assert_int_equal(nfskeys_idmap_name_to_uid(ctx, "root@example.org", &uid, &a), 0);
	assert_int_equal(uid, 7);
	assert_int_equal(nfskeys_idmap_name_to_uid(ctx, "daemon@EXAMPLE.org", &uid, &a), 0);
	assert_int_equal(uid, 1);
	assert_string_equal(a.backend, "nsswitch");
	assert_int_equal(nfskeys_idmap_group_to_gid(ctx, "staff@example.org", &gid, &a), 0);
	assert_int_equal(gid, 6001);
	assert_int_equal(nfskeys_idmap_group_to_gid(ctx, "root@example.org", &gid, &a), 0);
	assert_int_equal(gid, 0);

	/* cached the second time, with the remaining ttl */
	assert_int_equal(nfskeys_idmap_name_to_uid(ctx, "daemon@EXAMPLE.org", &uid, &a), 0);
	assert_true(a.flags & NFSKEYS_IDMAP_ANSWER_CACHED);
	assert_true(a.ttl <= 900 && a.ttl >= 898);

	/* reverse through nsswitch, with the configured domain */
	assert_int_equal(nfskeys_idmap_uid_to_name(ctx, 0, &name, &a), 0);
	assert_string_equal(name, "root@Example.ORG");
	free(name);
	name = NULL;
	assert_int_equal(nfskeys_idmap_gid_to_group(ctx, 0, &name, NULL), 0);
	assert_string_equal(name, "root@Example.ORG");
	free(name);
	name = NULL;
	/* reverse through [Static]: its key */
	assert_int_equal(nfskeys_idmap_uid_to_name(ctx, 5001, &name, &a), 0);
	assert_string_equal(name, "alice@example.org");
	assert_string_equal(a.backend, "static");
	free(name);
	assert_int_equal(nfskeys_idmap_uid_to_name(ctx, 3999999999u, &name, NULL), -ENOENT);

	/* unknown: -ENOENT, negative-cached; with NOBODY: nobody, short ttl, reason */
	assert_int_equal(nfskeys_idmap_name_to_uid(ctx, "nosuchuser@example.org", &uid, NULL), -ENOENT);
	assert_int_equal(nfskeys_idmap_lookup_full(ctx, NFSKEYS_IDMAP_NAME_TO_UID,
						   "nosuchuser@example.org",
						   NFSKEYS_IDMAP_LOOKUP_NOBODY, &a), 0);
	assert_int_equal(a.id, 65534);
	assert_int_equal(a.ttl, 45);
	assert_int_equal(a.error, -ENOENT);
	assert_true(a.flags & NFSKEYS_IDMAP_ANSWER_NOBODY);
	assert_string_equal(a.backend, "nobody");
	assert_int_equal(nfskeys_idmap_lookup_full(ctx, NFSKEYS_IDMAP_GROUP_TO_GID, "nosuch@example.org",
						   NFSKEYS_IDMAP_LOOKUP_NOBODY, &a), 0);
	assert_int_equal(a.id, 65533);
	/* id -> name has no nobody answer */
	assert_int_equal(nfskeys_idmap_lookup_full(ctx, NFSKEYS_IDMAP_UID_TO_NAME, "3999999999",
						   NFSKEYS_IDMAP_LOOKUP_NOBODY, &a), -ENOENT);
	/* foreign domain */
	assert_int_equal(nfskeys_idmap_name_to_uid(ctx, "root@other.org", &uid, NULL), -ENOENT);
	/* a bare name is not known to be ours: no mapping (nobody for the kernel), as nfsidmap */
	assert_int_equal(nfskeys_idmap_name_to_uid(ctx, "root", &uid, NULL), -ENOENT);
	assert_int_equal(nfskeys_idmap_lookup_full(ctx, NFSKEYS_IDMAP_NAME_TO_UID, "root",
						   NFSKEYS_IDMAP_LOOKUP_NOBODY, &a), 0);
	assert_int_equal(a.id, 65534);
	assert_true(a.flags & NFSKEYS_IDMAP_ANSWER_NOBODY);
	/* malformed keys never get nobody */
	assert_int_equal(nfskeys_idmap_lookup_full(ctx, NFSKEYS_IDMAP_UID_TO_NAME, "12x",
						   NFSKEYS_IDMAP_LOOKUP_NOBODY, &a), -EINVAL);
	assert_int_equal(nfskeys_idmap_lookup_full(ctx, NFSKEYS_IDMAP_NAME_TO_UID, "alice@",
						   NFSKEYS_IDMAP_LOOKUP_NOBODY, &a), -EINVAL);
	assert_int_equal(nfskeys_idmap_lookup(ctx, NFSKEYS_IDMAP_NAME_TO_UID, "", &a), -EINVAL);
	assert_int_equal(nfskeys_idmap_lookup(ctx, 0, "x", &a), -EINVAL);
	assert_int_equal(nfskeys_idmap_lookup(ctx, _NFSKEYS_IDMAP_KIND_MAX, "x", &a), -EINVAL);

	/* principals: realm must be local */
	{
		gid_t *groups = NULL;
		size_t n = 0;

		/* [Static] keys match principals exactly (realms are case-sensitive) */
		assert_int_equal(nfskeys_idmap_principal_to_ids(ctx, "root@EXAMPLE.ORG", &uid, &gid,
								&groups, &n, &a), 0);
		assert_int_equal(uid, 0);
		assert_string_equal(a.backend, "nsswitch");
		free(groups);
		groups = NULL;
		assert_int_equal(nfskeys_idmap_principal_to_ids(ctx, "bob@EXAMPLE.ORG", &uid, &gid,
								&groups, &n, &a), 0);
		assert_int_equal(uid, 1);
		assert_int_equal(gid, 1);
		assert_string_equal(a.backend, "static");
		assert_true(n >= 1);
		free(groups);
	}
	nfskeys_ctx_unref(ctx);
}

/* nfskeys_idmap_lookup_pair: the answer of lookup_full, and a reverse only from a backend
 * with lookup_pair (ldap, tests/integration/idmap-ldap-pair.sh): never from static or
 * nsswitch, a cache hit or a nobody answer; kind 0 is written over whatever was there. */
static void test_lookup_pair(void **state)
{
	struct nfskeys_ctx *ctx = ctx_with("[General]\nDomain = example.org\n"
					   "[Translation]\nMethod = static, nsswitch\n"
					   "[Static]\nalice@example.org = 5001\n");
	struct nfskeys_idmap_answer a, rev;

	assert_int_equal(nfskeys_idmap_lookup_pair(ctx, NFSKEYS_IDMAP_NAME_TO_UID,
						   "alice@example.org", 0, &a, NULL),
			 -EINVAL);
	rev.kind = 99;
	assert_int_equal(nfskeys_idmap_lookup_pair(ctx, NFSKEYS_IDMAP_NAME_TO_UID,
						   "alice@example.org", 0, &a, &rev),
			 0);
	assert_int_equal(a.id, 5001);
	assert_string_equal(a.backend, "static");
	assert_int_equal(rev.kind, 0);
	rev.kind = 99; /* now a cache hit */
	assert_int_equal(nfskeys_idmap_lookup_pair(ctx, NFSKEYS_IDMAP_NAME_TO_UID,
						   "alice@example.org", 0, &a, &rev),
			 0);
	assert_true(a.flags & NFSKEYS_IDMAP_ANSWER_CACHED);
	assert_int_equal(rev.kind, 0);
	rev.kind = 99; /* nobody */
	assert_int_equal(nfskeys_idmap_lookup_pair(ctx, NFSKEYS_IDMAP_NAME_TO_UID,
						   "nosuch-pair@example.org",
						   NFSKEYS_IDMAP_LOOKUP_NOBODY, &a, &rev),
			 0);
	assert_true(a.flags & NFSKEYS_IDMAP_ANSWER_NOBODY);
	assert_int_equal(rev.kind, 0);
	nfskeys_ctx_unref(ctx);
}

static void test_principal(void **state)
{
	struct nfskeys_ctx *ctx = ctx_with("[General]\nDomain = example.org\nLocal-Realms = EXAMPLE.ORG,OTHER.ORG\n"
					   "[Translation]\nMethod = nsswitch\n");
	gid_t *groups = NULL, gid;
	size_t n = 0;
	uid_t uid;

	assert_int_equal(nfskeys_idmap_principal_to_ids(ctx, "root@OTHER.ORG", &uid, &gid, &groups,
							&n, NULL), 0);
	assert_int_equal(uid, 0);
	assert_int_equal(gid, 0);
	assert_true(n >= 1);
	assert_int_equal(groups[0], 0);
	free(groups);
	assert_int_equal(nfskeys_idmap_principal_to_ids(ctx, "root@EVIL.ORG", &uid, NULL, NULL, NULL,
							NULL), -ENOENT);
	assert_int_equal(nfskeys_idmap_principal_to_ids(ctx, "nfs/host@EXAMPLE.ORG", &uid, NULL, NULL,
							NULL, NULL), -ENOENT);
	nfskeys_ctx_unref(ctx);
}

static void test_cache_bounds(void **state)
{
	struct nfskeys_ctx *ctx = ctx_with("[General]\nDomain = example.org\n"
					   "[Translation]\nMethod = nsswitch\n[Idmap]\nCache-Size = 4\n");
	struct nfskeys_idmap_cache_stats st;
	struct nfskeys_idmap_answer a;
	char key[32];

	for (int i = 0; i < 10; i++) {
		snprintf(key, sizeof(key), "nosuch%d@example.org", i);
		assert_int_equal(nfskeys_idmap_lookup(ctx, NFSKEYS_IDMAP_NAME_TO_UID, key, &a), -ENOENT);
	}
	assert_int_equal(nfskeys_idmap_cache_stats(ctx, &st), 0);
	assert_int_equal(st.entries, 4);
	assert_int_equal(st.capacity, 4);
	assert_int_equal(st.evictions, 6);
	/* the latest is still there, negative */
	assert_int_equal(nfskeys_idmap_lookup(ctx, NFSKEYS_IDMAP_NAME_TO_UID, key, &a), -ENOENT);
	assert_int_equal(nfskeys_idmap_cache_stats(ctx, &st), 0);
	assert_int_equal(st.negative_hits, 1);
	/* root stays hot under LRU */
	assert_int_equal(nfskeys_idmap_lookup(ctx, NFSKEYS_IDMAP_NAME_TO_UID, "root@example.org", &a), 0);
	for (int i = 0; i < 3; i++) {
		snprintf(key, sizeof(key), "other%d@example.org", i);
		nfskeys_idmap_lookup(ctx, NFSKEYS_IDMAP_NAME_TO_UID, key, &a);
	}
	assert_int_equal(nfskeys_idmap_lookup(ctx, NFSKEYS_IDMAP_NAME_TO_UID, "root@example.org", &a), 0);
	assert_true(a.flags & NFSKEYS_IDMAP_ANSWER_CACHED);
	/* flush one key, then all */
	assert_int_equal(nfskeys_idmap_flush_key(ctx, NFSKEYS_IDMAP_NAME_TO_UID, "root@example.org"), 0);
	assert_int_equal(nfskeys_idmap_flush_key(ctx, NFSKEYS_IDMAP_NAME_TO_UID, "root@example.org"),
			 -ENOENT);
	assert_int_equal(nfskeys_idmap_lookup(ctx, NFSKEYS_IDMAP_NAME_TO_UID, "root@example.org", &a), 0);
	assert_false(a.flags & NFSKEYS_IDMAP_ANSWER_CACHED);
	assert_int_equal(nfskeys_idmap_flush(ctx), 0);
	assert_int_equal(nfskeys_idmap_cache_stats(ctx, &st), 0);
	assert_int_equal(st.entries, 0);
	/* NO_CACHE neither reads nor fills */
	assert_int_equal(nfskeys_idmap_lookup_full(ctx, NFSKEYS_IDMAP_NAME_TO_UID, "root@example.org",
						   NFSKEYS_IDMAP_LOOKUP_NO_CACHE, &a), 0);
	assert_int_equal(nfskeys_idmap_cache_stats(ctx, &st), 0);
	assert_int_equal(st.entries, 0);
	nfskeys_ctx_unref(ctx);
}

static void test_zero_ttl_not_cached(void **state)
{
	struct nfskeys_ctx *ctx = ctx_with("[General]\nDomain = example.org\n[Translation]\nMethod = nsswitch\n"
					   "[Idmap]\nPositive-TTL = 0\nNegative-TTL = 0\n");
	struct nfskeys_idmap_cache_stats st;
	struct nfskeys_idmap_answer a;

	assert_int_equal(nfskeys_idmap_lookup(ctx, NFSKEYS_IDMAP_NAME_TO_UID, "root@example.org", &a), 0);
	assert_int_equal(nfskeys_idmap_lookup(ctx, NFSKEYS_IDMAP_NAME_TO_UID, "x@example.org", &a), -ENOENT);
	assert_int_equal(nfskeys_idmap_cache_stats(ctx, &st), 0);
	assert_int_equal(st.entries, 0);
	nfskeys_ctx_unref(ctx);
}

static void test_expiry(void **state)
{
	struct nfskeys_ctx *ctx = ctx_with("[General]\nDomain = example.org\n[Translation]\nMethod = nsswitch\n"
					   "[Idmap]\nPositive-TTL = 1\n");
	struct nfskeys_idmap_cache_stats st;
	struct nfskeys_idmap_answer a;

	assert_int_equal(nfskeys_idmap_lookup(ctx, NFSKEYS_IDMAP_NAME_TO_UID, "root@example.org", &a), 0);
	assert_int_equal(a.ttl, 1);
	usleep(2100 * 1000); /* whole seconds on a coarse clock: at most 2 s */
	assert_int_equal(nfskeys_idmap_lookup(ctx, NFSKEYS_IDMAP_NAME_TO_UID, "root@example.org", &a), 0);
	assert_false(a.flags & NFSKEYS_IDMAP_ANSWER_CACHED);
	assert_int_equal(nfskeys_idmap_cache_stats(ctx, &st), 0);
	assert_int_equal(st.expired, 1);
	assert_int_equal(st.entries, 1);
	nfskeys_ctx_unref(ctx);
}

static void test_explain(void **state)
{
	struct nfskeys_ctx *ctx = ctx_with("[General]\nDomain = example.org\nLocal-Realms = EXAMPLE.ORG\n"
					   "[Translation]\nMethod = nsswitch\n");
	char *text = NULL;

	assert_int_equal(nfskeys_idmap_explain(ctx, NFSKEYS_IDMAP_NAME_TO_UID, "root@other.org", &text), 0);
	assert_non_null(strstr(text, "cause: domain mismatch"));
	assert_non_null(strstr(text, "[General] Domain = other.org"));
	free(text);
	assert_int_equal(nfskeys_idmap_explain(ctx, NFSKEYS_IDMAP_NAME_TO_UID, "nosuchuser@example.org",
					       &text), 0);
	assert_non_null(strstr(text, "cause: no such user in any backend"));
	assert_non_null(strstr(text, "[Static] nosuchuser@example.org"));
	free(text);
	assert_int_equal(nfskeys_idmap_explain(ctx, NFSKEYS_IDMAP_PRINCIPAL_TO_IDS, "root@ELSEWHERE.ORG",
					       &text), 0);
	assert_non_null(strstr(text, "cause: realm not in Local-Realms"));
	assert_non_null(strstr(text, "Local-Realms = ELSEWHERE.ORG"));
	free(text);
	assert_int_equal(nfskeys_idmap_explain(ctx, NFSKEYS_IDMAP_NAME_TO_UID, "root@example.org", &text), 0);
	assert_non_null(strstr(text, "result: 0 (backend nsswitch"));
	free(text);
	assert_int_equal(nfskeys_idmap_explain(ctx, NFSKEYS_IDMAP_SID_TO_UID, "S-1-bad", &text), 0);
	assert_non_null(strstr(text, "malformed"));
	free(text);
	nfskeys_ctx_unref(ctx);

	/* a backend that cannot be loaded is "down"; the others still answer */
	ctx = ctx_with("[General]\nDomain = example.org\n[Translation]\nMethod = nosuchbackend,nsswitch\n");
	nfskeys_ctx_set_log_priority(ctx, LOG_CRIT);
	assert_int_equal(nfskeys_idmap_explain(ctx, NFSKEYS_IDMAP_NAME_TO_UID, "nosuch@example.org", &text),
			 0);
	assert_non_null(strstr(text, "cause: backend down: 'nosuchbackend'"));
	assert_non_null(strstr(text, "[Translation] Method = nosuchbackend,nsswitch"));
	free(text);
	{
		uid_t uid;

		assert_int_equal(nfskeys_idmap_name_to_uid(ctx, "root@example.org", &uid, NULL), 0);
		assert_int_equal(nfskeys_idmap_name_to_uid(ctx, "nosuch@example.org", &uid, NULL),
				 -EHOSTDOWN);
	}
	nfskeys_ctx_unref(ctx);
}

static void test_bad_config(void **state)
{
	struct nfskeys_ctx *ctx = ctx_with("[Translation]\nMethod = ,\n");
	struct nfskeys_idmap_answer a;
	uid_t uid;
	gid_t gid;

	nfskeys_ctx_set_log_priority(ctx, LOG_CRIT);
	assert_int_equal(nfskeys_idmap_lookup(ctx, NFSKEYS_IDMAP_NAME_TO_UID, "root@x", &a), -EINVAL);
	nfskeys_ctx_unref(ctx);
	ctx = ctx_with("[Idmap]\nPositive-TTL = soon\n");
	nfskeys_ctx_set_log_priority(ctx, LOG_CRIT);
	assert_int_equal(nfskeys_idmap_lookup(ctx, NFSKEYS_IDMAP_NAME_TO_UID, "root@x", &a), -EINVAL);
	nfskeys_ctx_unref(ctx);
	/* ... but with No-Strip a bare name is looked up as it is */
	ctx = ctx_with("[General]\nDomain=x\n[Translation]\nNo-Strip = both\n");
	assert_int_equal(nfskeys_idmap_name_to_uid(ctx, "root", &uid, NULL), 0);
	assert_int_equal(uid, 0);
	assert_int_equal(nfskeys_idmap_group_to_gid(ctx, "root", &gid, NULL), 0);
	assert_int_equal(gid, 0);
	nfskeys_ctx_unref(ctx);
	ctx = ctx_with("[General]\nDomain=x\n[Translation]\nNo-Strip = sometimes\n");
	nfskeys_ctx_set_log_priority(ctx, LOG_CRIT);
	assert_int_equal(nfskeys_idmap_lookup(ctx, NFSKEYS_IDMAP_NAME_TO_UID, "root@x", &a), -EHOSTDOWN);
	nfskeys_ctx_unref(ctx);
}

/* Every idmap plugin built loads, is of the idmap kind and has a lookup hook. */
/* Answers fixed outside the backends: Samba's Unix SIDs and the MS-NFS SIDs are the ids
 * they name; ids no domain has get their S-1-22 SID; a bare decimal owner is that id; the
 * kernel's "nobody"/"nogroup" are the configured nobody ids; no user part is nobody. */
static void test_builtin(void **state)
{
	struct nfskeys_ctx *ctx = ctx_with("[General]\nDomain = example.org\n"
					   "[Translation]\nMethod = static\n"
					   "[Static]\nalice@example.org = 5001\n"
					   "[Mapping]\nNobody-User = 65000\nNobody-Group = 65001\n");
	static const struct {
		unsigned kind;
		const char *key;
		uint32_t id;
	} yes[] = {
		{ NFSKEYS_IDMAP_SID_TO_UID, "S-1-22-1-4242", 4242 },
		{ NFSKEYS_IDMAP_SID_TO_GID, "S-1-22-2-4343", 4343 },
		{ NFSKEYS_IDMAP_SID_TO_UID, "s-1-22-1-0", 0 },
		{ NFSKEYS_IDMAP_SID_TO_UID, "S-1-5-88-1-77", 77 },
		{ NFSKEYS_IDMAP_SID_TO_GID, "S-1-5-88-2-78", 78 },
		{ NFSKEYS_IDMAP_NAME_TO_UID, "4242", 4242 },
		{ NFSKEYS_IDMAP_GROUP_TO_GID, "0", 0 },
		{ NFSKEYS_IDMAP_NAME_TO_UID, "nobody", 65000 },
		{ NFSKEYS_IDMAP_NAME_TO_UID, "nobody@Example.ORG", 65000 },
		{ NFSKEYS_IDMAP_GROUP_TO_GID, "nogroup", 65001 },
		{ NFSKEYS_IDMAP_GROUP_TO_GID, "nobody@example.org", 65001 },
	};
	static const struct {
		unsigned kind;
		const char *key;
	} no[] = {
		{ NFSKEYS_IDMAP_SID_TO_GID, "S-1-22-1-4242" },   /* a user's SID as a group */
		{ NFSKEYS_IDMAP_SID_TO_UID, "S-1-22-2-4242" },
		{ NFSKEYS_IDMAP_SID_TO_UID, "S-1-22-1-4242-1" }, /* not Samba's form */
		{ NFSKEYS_IDMAP_SID_TO_UID, "S-1-22-3-4242" },
		{ NFSKEYS_IDMAP_SID_TO_UID, "S-1-5-88-3-420" },  /* a mode, not an id */
		{ NFSKEYS_IDMAP_SID_TO_UID, "S-1-5-21-1-2-3-1000" },
		{ NFSKEYS_IDMAP_NAME_TO_UID, "4242@example.org" }, /* not nfsidmap's strtol quirk */
		{ NFSKEYS_IDMAP_NAME_TO_UID, "4294967295" },
		{ NFSKEYS_IDMAP_NAME_TO_UID, "nobody@other.example" },
		{ NFSKEYS_IDMAP_NAME_TO_UID, "nogroup" },
		{ NFSKEYS_IDMAP_NAME_TO_UID, "@example.org" },
	};
	struct nfskeys_idmap_answer a;
	struct nfskeys_sid sid;
	char text[NFSKEYS_SID_STRING_MAX];

	for (size_t i = 0; i < ARRAY_SIZE(yes); i++) {
		memset(&a, 0, sizeof(a));
		if (nfskeys_idmap_lookup(ctx, yes[i].kind, yes[i].key, &a) != 0)
			fail_msg("%s: no answer", yes[i].key);
		if (a.id != yes[i].id || strcmp(a.backend, "builtin") || a.flags)
			fail_msg("%s: %u from %s (flags %u), expected %u from builtin", yes[i].key,
				 a.id, a.backend, a.flags, yes[i].id);
	}
	for (size_t i = 0; i < ARRAY_SIZE(no); i++)
		if (nfskeys_idmap_lookup(ctx, no[i].kind, no[i].key, &a) != -ENOENT)
			fail_msg("%s: answered %u by %s", no[i].key, a.id, a.backend);
	/* the backends still come first for names */
	assert_int_equal(nfskeys_idmap_lookup(ctx, NFSKEYS_IDMAP_NAME_TO_UID, "alice@example.org", &a), 0);
	assert_string_equal(a.backend, "static");
	/* no user part: nobody, flagged, when the caller asks for nobody answers */
	assert_int_equal(nfskeys_idmap_lookup_full(ctx, NFSKEYS_IDMAP_NAME_TO_UID, "@example.org",
						   NFSKEYS_IDMAP_LOOKUP_NOBODY, &a), 0);
	assert_int_equal(a.id, 65000);
	assert_true(a.flags & NFSKEYS_IDMAP_ANSWER_NOBODY);
	/* an id no domain has: its Unix SID, S-1-22-1-<uid> / S-1-22-2-<gid> */
	assert_int_equal(nfskeys_idmap_uid_to_sid(ctx, 5001, &sid, &a), 0);
	assert_int_equal(nfskeys_sid_to_string(&sid, text, sizeof(text)), 13);
	assert_string_equal(text, "S-1-22-1-5001");
	assert_string_equal(a.name, "S-1-22-1-5001");
	assert_int_equal(nfskeys_idmap_gid_to_sid(ctx, 4343, &sid, &a), 0);
	assert_int_equal(sid.num_subauth, 2);
	assert_int_equal(sid.subauth[0], 2);
	assert_int_equal(sid.subauth[1], 4343);
	assert_int_equal(sid.authority[5], 22);
	nfskeys_ctx_unref(ctx);
}

static void test_plugins_load(void **state)
{
	struct nfskeys_ctx *ctx = ctx_with("[General]\nDomain = example.org\n");
	DIR *d = opendir(plugin_dir());
	struct dirent *de;
	unsigned n = 0;

	assert_non_null(d);
	while ((de = readdir(d))) {
		const struct nfskeys_plugin *p;
		char name[64];
		size_t len = strlen(de->d_name);

		if (strncmp(de->d_name, "idmap-", 6) != 0 || len < 4 || len > 60 ||
		    strcmp(de->d_name + len - 3, ".so") != 0)
			continue;
		snprintf(name, sizeof(name), "%.*s", (int)(len - 3), de->d_name);
		if (plugin_load(ctx, name, NFSKEYS_PLUGIN_IDMAP, sizeof(struct nfskeys_idmap_ops), &p) != 0)
			fail_msg("plugin %s does not load", name);
		assert_non_null(((const struct nfskeys_idmap_ops *)p->ops)->lookup);
		assert_int_not_equal(((const struct nfskeys_idmap_ops *)p->ops)->kinds, 0);
		print_message("# loaded %s: %s\n", name, p->description);
		n++;
	}
	closedir(d);
	assert_true(n >= 3);
	nfskeys_ctx_unref(ctx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sid_text),
		cmocka_unit_test(test_sid_binary),
		cmocka_unit_test(test_descriptions),
		cmocka_unit_test(test_payloads),
		cmocka_unit_test(test_kinds),
		cmocka_unit_test_setup_teardown(test_chain, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lookup_pair, setup, teardown),
		cmocka_unit_test_setup_teardown(test_principal, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cache_bounds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_zero_ttl_not_cached, setup, teardown),
		cmocka_unit_test_setup_teardown(test_expiry, setup, teardown),
		cmocka_unit_test_setup_teardown(test_explain, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_config, setup, teardown),
		cmocka_unit_test_setup_teardown(test_builtin, setup, teardown),
		cmocka_unit_test_setup_teardown(test_plugins_load, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
