/* The plugin loader: loads good plugins, refuses ABI, kind and entry-point mismatches and
 * bad names, and caches per context. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "libnfskeys-private.h"
#include "nfskeys.h"
#include "plugin.h"
#include "test-util.h"

struct testplug_ops {
	uint32_t size;
	int (*answer)(void);
};

static struct nfskeys_ctx *new_ctx(void)
{
	setenv("NFSKEYS_PLUGIN_DIR", TEST_PLUGIN_DIR, 1);
	return tu_ctx_empty(tu_log_quiet);
}

static void test_good(void **state)
{
	struct nfskeys_ctx *ctx = new_ctx();
	const struct nfskeys_plugin *p = NULL, *p2 = NULL;

	assert_int_equal(plugin_load(ctx, "testplug-good", NFSKEYS_PLUGIN_CRED,
				     sizeof(struct testplug_ops), &p),
			 0);
	assert_string_equal(p->name, "testplug-good");
	assert_int_equal(((const struct testplug_ops *)p->ops)->answer(), 42);
	/* second load returns the cached one */
	assert_int_equal(plugin_load(ctx, "testplug-good", NFSKEYS_PLUGIN_CRED,
				     sizeof(struct testplug_ops), &p2),
			 0);
	assert_ptr_equal(p, p2);
	/* asking for a larger ops table than it has is refused */
	assert_int_equal(plugin_load(ctx, "testplug-good", NFSKEYS_PLUGIN_CRED,
				     sizeof(struct testplug_ops) + 8, &p2),
			 -EPROTO);
	nfskeys_ctx_unref(ctx);
}

static void test_refused(void **state)
{
	struct nfskeys_ctx *ctx = new_ctx();
	const struct nfskeys_plugin *p = NULL;

	assert_int_equal(plugin_load(ctx, "testplug-badabi", NFSKEYS_PLUGIN_CRED, 8, &p), -EPROTO);
	assert_int_equal(plugin_load(ctx, "testplug-badkind", NFSKEYS_PLUGIN_CRED, 8, &p), -EPROTO);
	assert_int_equal(plugin_load(ctx, "testplug-noentry", NFSKEYS_PLUGIN_CRED, 8, &p), -EPROTO);
	assert_int_equal(plugin_load(ctx, "no-such-plugin", NFSKEYS_PLUGIN_CRED, 8, &p), -ENOENT);
	/* names that could escape the plugin directory */
	assert_int_equal(plugin_load(ctx, "../unit/testplug-good", NFSKEYS_PLUGIN_CRED, 8, &p),
			 -EINVAL);
	assert_int_equal(plugin_load(ctx, "/tmp/x", NFSKEYS_PLUGIN_CRED, 8, &p), -EINVAL);
	assert_int_equal(plugin_load(ctx, "", NFSKEYS_PLUGIN_CRED, 8, &p), -EINVAL);
	assert_int_equal(plugin_load(ctx, NULL, NFSKEYS_PLUGIN_CRED, 8, &p), -EINVAL);
	assert_int_equal(plugin_load(ctx, "testplug-good", NFSKEYS_PLUGIN_CRED, 8, NULL), -EINVAL);
	/* a NULL context is an argument error, not a crash */
	assert_int_equal(plugin_load(NULL, "testplug-good", NFSKEYS_PLUGIN_CRED, 8, &p), -EINVAL);
	assert_null(p);
	nfskeys_ctx_unref(ctx);
}

static void test_list(void **state)
{
	char **names = NULL;
	size_t n = 0;
	bool good = false, badkind = false;

	setenv("NFSKEYS_PLUGIN_DIR", TEST_PLUGIN_DIR, 1);
	assert_int_equal(plugin_list(NFSKEYS_PLUGIN_CRED, &names, &n), 0);
	for (size_t i = 0; i < n; i++) {
		good |= streq(names[i], "testplug-good");
		badkind |= streq(names[i], "testplug-badkind");
		free(names[i]);
	}
	free(names);
	assert_true(good);
	assert_false(badkind);
	assert_int_equal(plugin_list(NFSKEYS_PLUGIN_CRED, NULL, &n), -EINVAL);
	setenv("NFSKEYS_PLUGIN_DIR", "/nonexistent/nfskeys-plugins", 1);
	assert_int_equal(plugin_list(NFSKEYS_PLUGIN_CRED, &names, &n), -ENOENT);
}

/* A backend built before lookup_pair (ops table ending at lookup_nowait) loads and
 * answers; nfskeys_idmap_lookup_pair gives its plain answer and no reverse, and never
 * calls the hook past the table's size (testplug-idmap-old.c aborts there). */
static void test_old_ops(void **state)
{
	struct nfskeys_ctx *ctx;
	struct nfskeys_idmap_answer a, rev;

	setenv("NFSKEYS_PLUGIN_DIR", TEST_PLUGIN_DIR, 1);
	assert_int_equal(tu_dir_setup("plugin"), 0);
	ctx = tu_ctx_conf("[General]\nDomain = example.org\n[Translation]\nMethod = oldops\n");
	rev.kind = 99;
	assert_int_equal(nfskeys_idmap_lookup_pair(ctx, NFSKEYS_IDMAP_NAME_TO_UID,
						   "old@example.org", 0, &a, &rev),
			 0);
	assert_int_equal(a.id, 4242);
	assert_string_equal(a.backend, "oldops");
	assert_int_equal(rev.kind, 0);
	nfskeys_ctx_unref(ctx);
	tu_dir_teardown();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_old_ops),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_list),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
