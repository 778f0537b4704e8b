/* Interop: the "sid" backend maps SIDs exactly as SSSD's libsss_idmap does with the same
 * settings (defaults: min 200000, max 2000200000, slice 200000), for thousands of
 * generated SIDs over several domains, with RIDs below and above the slice size, and
 * the reverse mapping returns the original SID.  The fast path of known domains (answers
 * computed, never cached) gives exactly what the backend chain gives, for odd spellings,
 * fixed ranges and secondary slices, and stays consistent while threads add domains. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <inttypes.h>
#include <pthread.h>
#include <sss_idmap.h>

#include "macros.h"
#include "nfskeys.h"
#include "test-util.h"

#define N_DOMAINS 6
#define SIDS_PER_DOMAIN 700

static int setup(void **state)
{
	return tu_dir_setup("sss");
}

static int teardown(void **state)
{
	return tu_dir_teardown();
}

/* A deterministic generator so a failure can be reproduced. */
static uint32_t rng_state = 12345;
static uint32_t rng(void)
{
	rng_state = rng_state * 1103515245u + 12345u;
	return rng_state >> 1;
}

static void test_sid_matches_sss(void **state)
{
	struct sss_idmap_ctx *sss = NULL;
	struct nfskeys_ctx *ctx = NULL;
	char domains[N_DOMAINS][64], path[128], domlist[N_DOMAINS * 64 + 1] = "";
	unsigned compared = 0, secondary = 0;
	FILE *f;

	assert_int_equal(sss_idmap_init(NULL, NULL, NULL, &sss), IDMAP_SUCCESS);
	for (int d = 0; d < N_DOMAINS; d++) {
		struct sss_idmap_range range;
		id_t slice = (id_t)-1;
		char name[32];

		snprintf(domains[d], sizeof(domains[d]), "S-1-5-21-%u-%u-%u", rng(), rng(), rng());
		snprintf(name, sizeof(name), "dom%d", d);
		assert_int_equal(sss_idmap_calculate_range(sss, domains[d], &slice, &range),
				 IDMAP_SUCCESS);
		assert_int_equal(sss_idmap_add_auto_domain_ex(sss, name, domains[d], &range, NULL,
							      0, false, NULL, NULL),
				 IDMAP_SUCCESS);
		strcat(domlist, d ? "," : "");
		strcat(domlist, domains[d]);
	}

	snprintf(path, sizeof(path), "%s/nfskeys.conf", tu_dir);
	f = fopen(path, "we");
	assert_non_null(f);
	fprintf(f, "[Translation]\nMethod = sid\n[Idmap]\nCache-Size = 64\n[SID]\nState-File = %s/slices\nDomains = %s\n",
		tu_dir, domlist);
	fclose(f);
	assert_int_equal(nfskeys_ctx_new(path, &ctx), 0);

	for (int d = 0; d < N_DOMAINS; d++) {
		for (int i = 0; i < SIDS_PER_DOMAIN; i++) {
			/* a third of the RIDs beyond the first slice, up to 12 slices out */
			uint32_t rid = i % 3 ? rng() % 200000 : rng() % 2400000;
			struct nfskeys_idmap_answer a, b;
			char sid[400];
			uint32_t want;
			uid_t got;
			enum idmap_error_code err;

			snprintf(sid, sizeof(sid), "%s-%" PRIu32, domains[d], rid);
			err = sss_idmap_sid_to_unix(sss, sid, &want);
			if (err != IDMAP_SUCCESS)
				fail_msg("libsss_idmap failed for %s: %s", sid, idmap_error_string(err));
			assert_int_equal(nfskeys_idmap_sid_to_uid(ctx, sid, &got, &a), 0);
			if (got != want)
				fail_msg("%s: nfskeys %u, libsss_idmap %u", sid, got, want);
			assert_string_equal(a.backend, "sid");
			/* and back */
			{
				char key[16];

				snprintf(key, sizeof(key), "%u", got);
				assert_int_equal(nfskeys_idmap_lookup(ctx, NFSKEYS_IDMAP_UID_TO_SID,
								      key, &b), 0);
				assert_string_equal(b.name, sid);
			}
			secondary += rid >= 200000;
			compared++;
		}
	}
	print_message("# compared %u SIDs over %d domains (%u in secondary slices)\n", compared,
		      N_DOMAINS, secondary);
	assert_true(secondary > 100);

	/* BUILTIN SIDs are refused by both */
	{
		uint32_t id;
		uid_t uid;

		assert_int_equal(sss_idmap_sid_to_unix(sss, "S-1-5-32-544", &id), IDMAP_BUILTIN_SID);
		assert_int_equal(nfskeys_idmap_sid_to_uid(ctx, "S-1-5-32-544", &uid, NULL), -ENOENT);
	}

	/* A second context (another process) reads the persisted slices: same answers. */
	{
		struct nfskeys_ctx *ctx2 = NULL;
		char sid[400], key[16];
		struct nfskeys_idmap_answer b;
		uid_t u1, u2;

		snprintf(sid, sizeof(sid), "%s-%u", domains[2], 1000000u);
		assert_int_equal(nfskeys_idmap_sid_to_uid(ctx, sid, &u1, NULL), 0);
		assert_int_equal(nfskeys_ctx_new(path, &ctx2), 0);
		snprintf(key, sizeof(key), "%u", u1);
		assert_int_equal(nfskeys_idmap_lookup(ctx2, NFSKEYS_IDMAP_UID_TO_SID, key, &b), 0);
		assert_string_equal(b.name, sid);
		assert_int_equal(nfskeys_idmap_sid_to_uid(ctx2, sid, &u2, NULL), 0);
		assert_int_equal(u1, u2);
		nfskeys_ctx_unref(ctx2);
	}
	nfskeys_ctx_unref(ctx);
	sss_idmap_free(sss);
}

static struct nfskeys_ctx *ctx_conf(const char *body)
{
	return tu_ctx_conf("%s[SID]\nState-File = %s/slices\n", body, tu_dir);
}

/* What the backend chain itself answers (explain never takes the fast path): the id, or
 * -1 for no mapping, -2 for malformed text. */
static int64_t chain_answer(struct nfskeys_ctx *ctx, enum nfskeys_idmap_kind kind, const char *sid)
{
	_cleanup_free_ char *text = NULL;
	const char *res;
	uint32_t id;

	assert_int_equal(nfskeys_idmap_explain(ctx, kind, sid, &text), 0);
	res = strstr(text, "result: ");
	assert_non_null(res);
	if (sscanf(res, "result: %" SCNu32 " (backend sid, ttl 600s)", &id) == 1 &&
	    strstr(res, "(backend sid, ttl 600s)"))
		return id;
	if (strstr(res, "malformed"))
		return -2;
	return -1;
}

/* Each key, twice, as SID->uid and SID->gid: the normal call equals the chain's answer,
 * says backend sid and TTL 600 and is never ANSWER_CACHED; answers are not cached (only
 * the negative ones are). */
static void test_fast_path_equals_chain(void **state)
{
	struct nfskeys_ctx *ctx = ctx_conf("[Translation]\nMethod = nsswitch,sid\n[SID]\n"
					   "Domains = S-1-5-21-11-22-33\n"
					   "S-1-5-21-7-8-9 = 5000000-5000999\n");
	static const char *const keys[] = {
		"S-1-5-21-11-22-33-1000",	 /* primary slice */
		"s-1-5-21-11-22-33-1000",	 /* lower-case s */
		"S-1-5-21-011-22-33-1000",	 /* leading zero: not the table's text */
		"S-1-5-21-11-22-33-0001000",	 /* leading zeros in the RID */
		"S-1-5-21-11-22-33-00000001000", /* 11 characters of RID */
		"S-1-5-21-11-22-33-0",
		"S-1-5-21-11-22-33-199999",
		"S-1-5-21-11-22-33-200000",	 /* the first secondary slice */
		"S-1-5-21-11-22-33-4294967295",	 /* the largest RID */
		"S-1-5-21-11-22-33-4294967296",	 /* too large: malformed */
		"S-1-5-21-11-22-33-12x",
		"S-1-5-21-11-22-33-",
		"S-1-5-21-11-22-33",		 /* no RID: a domain SID, not mapped */
		"S-1-5-21-11-22-33-44-1000",	 /* one sub-authority too many */
		"S-1-5-21-7-8-9-0",		 /* fixed range */
		"S-1-5-21-7-8-9-999",
		"S-1-5-21-7-8-9-1000",		 /* beyond the fixed range */
		"S-1-5-21-4294967295-4294967295-4294967295-5", /* a new domain, longest text */
		"S-1-5-21-1-2-3-5",		 /* a new domain, short text */
		"S-1-5-32-544",			 /* BUILTIN */
		"S-1-5-21-1-2-3-5-",
		"S-1-5-0x15-1-2-3-5",		 /* hex authority... of a sub-authority: bad */
		"S-1-0x5-21-11-22-33-1000",	 /* hex authority: the same SID */
		"S-1-5-21-11-22-33-1000\n",
		"",
		"S", "s-", "S-1-5", "S-1-5-21", "S-1-5-21-", "S-1-5-21-1", "S-1-5-21-1-2-3", /* short */
		"S-1-5-21-1-2-3-", "S-1-5-21-1-2-3-4",
	};
	struct nfskeys_idmap_cache_stats st;
	unsigned negatives = 0;

	for (unsigned round = 0; round < 2; round++)
		for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
			for (int k = 0; k < 2; k++) {
				enum nfskeys_idmap_kind kind = k ? NFSKEYS_IDMAP_SID_TO_GID :
								   NFSKEYS_IDMAP_SID_TO_UID;
				struct nfskeys_idmap_answer a;
				/* an exact-size heap copy: ASan sees any read past its end */
				_cleanup_free_ char *key = strdup(keys[i]);
				int64_t want, r;

				assert_non_null(key);
				want = chain_answer(ctx, kind, key);
				r = nfskeys_idmap_lookup(ctx, kind, key, &a);

				if (want >= 0) {
					if (r != 0 || a.id != want)
						fail_msg("%s: %" PRId64 "/%u, chain %" PRId64, key,
							 r, a.id, want);
					assert_string_equal(a.backend, "sid");
					assert_int_equal(a.ttl, 600);
					assert_int_equal(a.kind, kind);
					assert_int_equal(a.flags, 0); /* never ANSWER_CACHED */
					assert_string_equal(a.name, "");
				} else {
					if (r != (want == -2 ? -EINVAL : -ENOENT))
						fail_msg("%s: %" PRId64 ", chain %" PRId64, key, r,
							 want);
					negatives += want == -1 && round == 0;
				}
			}
	/* two spellings of one SID, one answer; the fixed range and the slices */
	{
		uid_t u1, u2, u3;

		assert_int_equal(nfskeys_idmap_sid_to_uid(ctx, "S-1-5-21-11-22-33-1000", &u1, NULL), 0);
		assert_int_equal(nfskeys_idmap_sid_to_uid(ctx, "S-1-5-21-011-22-33-01000", &u2, NULL), 0);
		assert_int_equal(nfskeys_idmap_sid_to_uid(ctx, "S-1-0x5-21-11-22-33-1000", &u3, NULL), 0);
		assert_int_equal(u1, u2);
		assert_int_equal(u1, u3);
		assert_int_equal(nfskeys_idmap_sid_to_uid(ctx, "S-1-5-21-7-8-9-999", &u1, NULL), 0);
		assert_int_equal(u1, 5000999);
	}
	assert_int_equal(nfskeys_idmap_cache_stats(ctx, &st), 0);
	assert_int_equal(st.entries, negatives); /* the positive answers were not cached */
	assert_int_equal(st.hits, 0);
	assert_true(st.negative_hits >= negatives);
	nfskeys_ctx_unref(ctx);

	/* Auto-Domains = no: a domain neither listed nor in the state file stays unmapped on
	 * every path */
	ctx = ctx_conf("[Translation]\nMethod = sid\n[SID]\nAuto-Domains = no\n"
		       "Domains = S-1-5-21-11-22-33\n");
	for (int i = 0; i < 2; i++) {
		struct nfskeys_idmap_answer a;

		assert_int_equal(nfskeys_idmap_lookup(ctx, NFSKEYS_IDMAP_SID_TO_UID,
						      "S-1-5-21-99-98-97-1000", &a),
				 -ENOENT);
		assert_int_equal(chain_answer(ctx, NFSKEYS_IDMAP_SID_TO_UID, "S-1-5-21-99-98-97-1000"),
				 -1);
		assert_int_equal(nfskeys_idmap_lookup(ctx, NFSKEYS_IDMAP_SID_TO_UID,
						      "S-1-5-21-11-22-33-1000", &a),
				 0);
		assert_int_equal(chain_answer(ctx, NFSKEYS_IDMAP_SID_TO_UID, "S-1-5-21-11-22-33-1000"),
				 a.id);
	}
	nfskeys_ctx_unref(ctx);
}

/* A backend before sid that maps SIDs keeps the chain (and its cache) in charge: a chain
 * whose first SID backend is not pure is not short-cut.  Method = sid alone and a chain
 * with backends that do not map SIDs both are. */
static void test_fast_path_chain_order(void **state)
{
	struct nfskeys_ctx *ctx = ctx_conf("[Translation]\nMethod = static,sid\n");
	struct nfskeys_idmap_answer a;

	assert_int_equal(nfskeys_idmap_lookup(ctx, NFSKEYS_IDMAP_SID_TO_UID, "S-1-5-21-1-2-3-7", &a), 0);
	assert_int_equal(nfskeys_idmap_lookup(ctx, NFSKEYS_IDMAP_SID_TO_UID, "S-1-5-21-1-2-3-7", &a), 0);
	assert_false(a.flags & NFSKEYS_IDMAP_ANSWER_CACHED); /* static maps no SIDs */
	nfskeys_ctx_unref(ctx);
	/* a backend that cannot be loaded before sid: no shortcut past it, so the cache */
	ctx = ctx_conf("[Translation]\nMethod = nosuchbackend,sid\n");
	assert_int_equal(nfskeys_idmap_lookup(ctx, NFSKEYS_IDMAP_SID_TO_UID, "S-1-5-21-1-2-3-7", &a), 0);
	assert_int_equal(nfskeys_idmap_lookup(ctx, NFSKEYS_IDMAP_SID_TO_UID, "S-1-5-21-1-2-3-7", &a), 0);
	assert_true(a.flags & NFSKEYS_IDMAP_ANSWER_CACHED);
	assert_string_equal(a.backend, "sid");
	nfskeys_ctx_unref(ctx);
}

/* Threads map SIDs of 200 new domains (growing the lock-free table several times, and
 * the secondary-slice lists) while others read: every answer equals the chain's. */
#define T_THREADS 4
#define T_DOMAINS 200

struct t_arg {
	struct nfskeys_ctx *ctx;
	unsigned seed;
	uint32_t ids[T_DOMAINS][3];
	int err;
};

static void t_sid(char *buf, size_t size, unsigned d, unsigned j)
{
	static const uint32_t rids[3] = { 1000, 400123, 1600007 }; /* primary, two secondary */

	snprintf(buf, size, "S-1-5-21-%u-%u-%u-%" PRIu32, 1000003u * d + 17, 77u + d,
		 3000000000u - d, rids[j]);
}

static void *t_run(void *p)
{
	struct t_arg *t = p;

	for (unsigned n = 0; n < T_DOMAINS * 3 * 4; n++) {
		unsigned v = (n * 2654435761u + t->seed) % (T_DOMAINS * 3), d = v / 3, j = v % 3;
		struct nfskeys_idmap_answer a;
		char sid[96];

		t_sid(sid, sizeof(sid), d, j);
		if (nfskeys_idmap_lookup(t->ctx, NFSKEYS_IDMAP_SID_TO_UID, sid, &a) < 0) {
			t->err = 1;
			continue;
		}
		if (t->ids[d][j] && t->ids[d][j] != a.id)
			t->err = 2;
		t->ids[d][j] = a.id;
	}
	return NULL;
}

static void test_fast_path_threads(void **state)
{
	struct nfskeys_ctx *ctx = ctx_conf("[Translation]\nMethod = sid\n");
	static struct t_arg args[T_THREADS];
	pthread_t th[T_THREADS];

	for (unsigned i = 0; i < T_THREADS; i++) {
		args[i] = (struct t_arg){ .ctx = ctx, .seed = i * 7919u };
		assert_int_equal(pthread_create(&th[i], NULL, t_run, &args[i]), 0);
	}
	for (unsigned i = 0; i < T_THREADS; i++)
		assert_int_equal(pthread_join(th[i], NULL), 0);
	for (unsigned d = 0; d < T_DOMAINS; d++)
		for (unsigned j = 0; j < 3; j++) {
			char sid[96];
			int64_t want;

			t_sid(sid, sizeof(sid), d, j);
			want = chain_answer(ctx, NFSKEYS_IDMAP_SID_TO_UID, sid);
			assert_true(want >= 0);
			for (unsigned i = 0; i < T_THREADS; i++) {
				assert_int_equal(args[i].err, 0);
				if (args[i].ids[d][j] && args[i].ids[d][j] != want)
					fail_msg("%s: thread %u got %u, chain %" PRId64, sid, i,
						 args[i].ids[d][j], want);
			}
		}
	nfskeys_ctx_unref(ctx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_sid_matches_sss, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fast_path_equals_chain, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fast_path_chain_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fast_path_threads, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
