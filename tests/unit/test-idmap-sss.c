/* Interop: the "sid" backend maps SIDs exactly as SSSD's libsss_idmap does with the same
 * settings (defaults: min 200000, max 2000200000, slice 200000), for thousands of
 * generated SIDs over several domains, with RIDs below and above the slice size, and
 * the reverse mapping returns the original SID. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <inttypes.h>
#include <sss_idmap.h>

#include "macros.h"
#include "nfskeys.h"

#define N_DOMAINS 6
#define SIDS_PER_DOMAIN 700

static char dir[64];

static int setup(void **state)
{
	strcpy(dir, "/tmp/nfskeys-test-sss.XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/slices", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/nfskeys.conf", dir);
	unlink(path);
	rmdir(dir);
	return 0;
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

	snprintf(path, sizeof(path), "%s/nfskeys.conf", dir);
	f = fopen(path, "we");
	assert_non_null(f);
	fprintf(f, "[Translation]\nMethod = sid\n[Idmap]\nCache-Size = 64\n[SID]\nState-File = %s/slices\nDomains = %s\n",
		dir, domlist);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_sid_matches_sss, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
