/* The credential API over the real kernel keyring (the test runs in its own session
 * keyring): dlopen of every credential plugin, the CIFS calls and their error paths. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <keyutils.h>
#include <time.h>

#include "cred-plugin.h"
#include "libnfskeys-private.h"
#include "test-util.h"

static struct nfskeys_ctx *new_ctx(void)
{
	return tu_ctx_empty(tu_log_capture);
}

static struct nfskeys_secret *secret(const char *s)
{
	struct nfskeys_secret *sec = NULL;

	assert_int_equal(nfskeys_secret_new(strlen(s) + 1, &sec), 0);
	memcpy(nfskeys_secret_data(sec), s, strlen(s));
	assert_int_equal(nfskeys_secret_set_len(sec, strlen(s)), 0);
	return sec;
}

static int setup(void **state)
{
	struct nfskeys_ctx *ctx = new_ctx();

	nfskeys_cred_clear_all(ctx, "cifs", 0);
	nfskeys_ctx_unref(ctx);
	return 0;
}

/* Every credential plugin built loads through plugin_load() with the right kind. */
static void test_plugins_load(void **state)
{
	static const char *const fs[] = { "cifs", "afs", "nfs" };
	struct nfskeys_ctx *ctx = new_ctx();

	for (size_t i = 0; i < ARRAY_SIZE(fs); i++) {
		const struct nfskeys_plugin *p = NULL;
		const struct nfskeys_cred_ops *ops;
		char name[32];

		snprintf(name, sizeof(name), "cred-%s", fs[i]);
		assert_int_equal(plugin_load(ctx, name, NFSKEYS_PLUGIN_CRED,
					     NFSKEYS_CRED_OPS_MIN_SIZE, &p),
				 0);
		ops = p->ops;
		assert_string_equal(ops->fs, fs[i]);
		assert_non_null(ops->add);
		assert_non_null(ops->find);
		assert_non_null(ops->clear);
		/* and not as an ID-mapping plugin */
		assert_int_equal(plugin_load(ctx, name, NFSKEYS_PLUGIN_IDMAP, 8, &p), -EPROTO);
	}
	nfskeys_ctx_unref(ctx);
}

static void test_bad_fs(void **state)
{
	struct nfskeys_ctx *ctx = new_ctx();
	struct nfskeys_cred_params p = { .target = "127.0.0.1" };

	assert_int_equal(nfskeys_cred_add(ctx, "nosuch", &p), -EPROTONOSUPPORT);
	assert_non_null(strstr(tu_last_log, "no credential plugin"));
	assert_int_equal(nfskeys_cred_add(ctx, "../cifs", &p), -EINVAL);
	assert_int_equal(nfskeys_cred_add(ctx, "", &p), -EINVAL);
	assert_int_equal(nfskeys_cred_add(ctx, NULL, &p), -EINVAL);
	assert_int_equal(nfskeys_cred_add(NULL, "cifs", &p), -EINVAL);
	assert_int_equal(nfskeys_cred_add(ctx, "cifs", NULL), -EINVAL);
	nfskeys_ctx_unref(ctx);
}

static void test_cifs_cycle(void **state)
{
	struct nfskeys_ctx *ctx = new_ctx();
	struct nfskeys_secret *pw = secret("first pass"), *pw2 = secret("second");
	struct nfskeys_cred_params p = { .target = "127.0.0.1", .user = "alice", .password = pw };
	struct nfskeys_cred_info info, *v = NULL;
	size_t n = 0;

	assert_int_equal(nfskeys_cred_check_session(ctx), 0);
	assert_int_equal(nfskeys_cred_find(ctx, "cifs", &p, &info), -ENOKEY);
	assert_int_equal(nfskeys_cred_add(ctx, "cifs", &p), 1);
	assert_int_equal(nfskeys_cred_add(ctx, "cifs", &p), -EEXIST);
	assert_non_null(strstr(tu_last_log, "already exist"));
	assert_int_equal(nfskeys_cred_find(ctx, "cifs", &p, &info), 0);
	assert_string_equal(info.fs, "cifs");
	assert_string_equal(info.type, "logon");
	assert_string_equal(info.description, "cifs:a:127.0.0.1");
	assert_int_equal(info.expiry, 0);
	/* the key is in the session keyring with cifscreds' permissions */
	assert_int_equal(keyctl_search(KEY_SPEC_SESSION_KEYRING, "logon", "cifs:a:127.0.0.1", 0),
			 info.serial);
	{
		struct nfskeys_key_info k;
		assert_int_equal(nfskeys_key_describe(info.serial, &k), 0);
		assert_int_equal(k.perm, 0x0d0d0000);
	}
	p.password = pw2;
	assert_int_equal(nfskeys_cred_update(ctx, "cifs", &p), 1);

	/* a domain key next to it, listed and cleared together */
	p.target = "Example.COM";
	p.flags = NFSKEYS_CRED_DOMAIN;
	assert_int_equal(nfskeys_cred_update(ctx, "cifs", &p), -ENOKEY);
	assert_int_equal(nfskeys_cred_add(ctx, "cifs", &p), 1);
	assert_int_equal(nfskeys_cred_list(ctx, "cifs", 0, &v, &n), 0);
	assert_int_equal(n, 2);
	assert_true(streq(v[0].description, "cifs:d:Example.COM") ||
		    streq(v[1].description, "cifs:d:Example.COM"));
	free(v);
	/* the all-filesystems list sees them too */
	assert_int_equal(nfskeys_cred_list(ctx, NULL, 0, &v, &n), 0);
	assert_true(n >= 2);
	free(v);
	assert_int_equal(nfskeys_cred_clear(ctx, "cifs", &p), 1);
	assert_int_equal(nfskeys_cred_clear(ctx, "cifs", &p), -ENOKEY);
	assert_int_equal(nfskeys_cred_clear_all(ctx, "cifs", 0), 1);
	assert_int_equal(nfskeys_cred_clear_all(ctx, "cifs", 0), 0);
	assert_int_equal(nfskeys_cred_list(ctx, "cifs", 0, &v, &n), 0);
	assert_int_equal(n, 0);
	free(v);

	nfskeys_secret_free(pw);
	nfskeys_secret_free(pw2);
	nfskeys_ctx_unref(ctx);
}

static void test_cifs_timeout_and_user_keyring(void **state)
{
	struct nfskeys_ctx *ctx = new_ctx();
	struct nfskeys_secret *pw = secret("pw");
	char dom[64];
	struct nfskeys_cred_params p = { .target = "::1", .user = "bob", .password = pw,
					 .timeout = 3600 };
	struct nfskeys_cred_info info;
	int64_t now = (int64_t)time(NULL);

	assert_int_equal(nfskeys_cred_add(ctx, "cifs", &p), 1);
	assert_int_equal(nfskeys_cred_find(ctx, "cifs", &p, &info), 0);
	assert_string_equal(info.description, "cifs:a:::1");
	assert_true(info.expiry > now + 3000 && info.expiry <= now + 3600 + 5);
	/* a timeout cannot be set on update */
	assert_int_equal(nfskeys_cred_update(ctx, "cifs", &p), -EINVAL);
	assert_int_equal(nfskeys_cred_clear(ctx, "cifs", &p), 1);

	/* user keyring on request: not in the session keyring */
	snprintf(dom, sizeof(dom), "NFSKEYS-TEST-%d", (int)getpid());
	p = (struct nfskeys_cred_params){ .target = dom, .user = "bob", .password = pw,
					  .flags = NFSKEYS_CRED_DOMAIN |
						   NFSKEYS_CRED_USER_KEYRING };
	assert_int_equal(nfskeys_cred_add(ctx, "cifs", &p), 1);
	assert_int_equal(nfskeys_cred_find(ctx, "cifs", &p, &info), 0);
	assert_true(keyctl_search(KEY_SPEC_USER_KEYRING, "logon", info.description, 0) > 0);
	p.flags &= ~NFSKEYS_CRED_USER_KEYRING;
	assert_int_equal(nfskeys_cred_find(ctx, "cifs", &p, &info), -ENOKEY);
	p.flags |= NFSKEYS_CRED_USER_KEYRING;
	assert_int_equal(nfskeys_cred_clear(ctx, "cifs", &p), 1);

	nfskeys_secret_free(pw);
	nfskeys_ctx_unref(ctx);
}

static void test_cifs_validation(void **state)
{
	struct nfskeys_ctx *ctx = new_ctx();
	struct nfskeys_secret *pw = secret("pw"), *empty = NULL, *big = NULL;
	char user[300];
	struct nfskeys_cred_params p = { .target = "127.0.0.1", .user = "", .password = pw };
	struct nfskeys_cred_info info;
	struct nfskeys_secret *payload = NULL;

	assert_int_equal(nfskeys_cred_add(ctx, "cifs", &p), -EINVAL);
	assert_non_null(strstr(tu_last_log, "empty user name"));
	p.user = NULL;
	assert_int_equal(nfskeys_cred_add(ctx, "cifs", &p), -EINVAL);
	memset(user, 'u', 257);
	user[257] = '\0';
	p.user = user;
	assert_int_equal(nfskeys_cred_add(ctx, "cifs", &p), -EINVAL);
	assert_non_null(strstr(tu_last_log, "257 bytes"));
	user[256] = '\0'; /* exactly 256 is fine */
	assert_int_equal(nfskeys_cred_add(ctx, "cifs", &p), 1);
	assert_int_equal(nfskeys_cred_clear(ctx, "cifs", &p), 1);
	p.user = "dom:user";
	assert_int_equal(nfskeys_cred_add(ctx, "cifs", &p), -EINVAL);
	assert_non_null(strstr(tu_last_log, "':'"));

	p.user = "alice";
	p.password = NULL;
	assert_int_equal(nfskeys_cred_add(ctx, "cifs", &p), -EINVAL);
	assert_non_null(strstr(tu_last_log, "empty password"));
	assert_int_equal(nfskeys_secret_new(8, &empty), 0);
	p.password = empty;
	assert_int_equal(nfskeys_cred_add(ctx, "cifs", &p), -EINVAL);
	assert_int_equal(nfskeys_secret_new(600, &big), 0);
	memset(nfskeys_secret_data(big), 'p', 600);
	assert_int_equal(nfskeys_secret_set_len(big, 513), 0);
	p.password = big;
	assert_int_equal(nfskeys_cred_add(ctx, "cifs", &p), -EINVAL);
	assert_non_null(strstr(tu_last_log, "513 bytes"));
	assert_int_equal(nfskeys_secret_set_len(big, 512), 0);
	assert_int_equal(nfskeys_cred_add(ctx, "cifs", &p), 1);
	assert_int_equal(nfskeys_cred_clear(ctx, "cifs", &p), 1);

	p.password = pw;
	p.target = "no-such-host.invalid";
	assert_int_equal(nfskeys_cred_add(ctx, "cifs", &p), -EHOSTUNREACH);
	assert_non_null(strstr(tu_last_log, "cannot resolve host 'no-such-host.invalid'"));
	p.target = "";
	assert_int_equal(nfskeys_cred_add(ctx, "cifs", &p), -EINVAL);
	p.target = "bad/domain";
	p.flags = NFSKEYS_CRED_DOMAIN;
	assert_int_equal(nfskeys_cred_add(ctx, "cifs", &p), -EINVAL);
	assert_non_null(strstr(tu_last_log, "domain name"));

	p.target = "127.0.0.1";
	p.flags = 0;
	assert_int_equal(nfskeys_cred_clear(ctx, "cifs", &p), -ENOKEY);
	assert_int_equal(nfskeys_cred_find(ctx, "cifs", &p, NULL), -EINVAL);
	assert_int_equal(nfskeys_cred_build(ctx, "cifs", &p, &payload, &info), -EOPNOTSUPP);
	assert_int_equal(nfskeys_cred_renew(ctx, "cifs", &p, &info), -EOPNOTSUPP);
	assert_null(payload);

	nfskeys_secret_free(pw);
	nfskeys_secret_free(empty);
	nfskeys_secret_free(big);
	nfskeys_ctx_unref(ctx);
}

/* AFS through the API, no KDC needed for the error paths. */
static void test_afs_errors(void **state)
{
	struct nfskeys_ctx *ctx = new_ctx();
	struct nfskeys_cred_params p = { .target = "example.org" };
	struct nfskeys_cred_info info;
	struct nfskeys_secret *payload = NULL;

	setenv("KRB5_CONFIG", "/dev/null", 1);
	setenv("KRB5CCNAME", "FILE:/nonexistent/nfskeys-test-ccache", 1);
	assert_int_equal(nfskeys_cred_build(ctx, "afs", &p, &payload, &info), -ENOKEY);
	assert_non_null(strstr(tu_last_log, "no Kerberos credentials"));
	assert_int_equal(nfskeys_cred_add(ctx, "afs", &p), -ENOKEY);
	assert_int_equal(nfskeys_cred_find(ctx, "afs", &p, &info), -ENOKEY);
	assert_int_equal(nfskeys_cred_clear(ctx, "afs", &p), -ENOKEY);
	assert_int_equal(nfskeys_cred_renew(ctx, "afs", &p, &info), -EOPNOTSUPP);
	p.target = "bad/cell";
	assert_int_equal(nfskeys_cred_build(ctx, "afs", &p, &payload, &info), -EINVAL);
	assert_non_null(strstr(tu_last_log, "contains '/'"));
	assert_int_equal(nfskeys_cred_find(ctx, "afs", &p, &info), -EINVAL);
	p.target = NULL; /* no cell and no default realm */
	assert_int_equal(nfskeys_cred_build(ctx, "afs", &p, &payload, &info), -EINVAL);
	assert_non_null(strstr(tu_last_log, "no default Kerberos realm"));
	assert_null(payload);
	unsetenv("KRB5_CONFIG");
	unsetenv("KRB5CCNAME");
	nfskeys_ctx_unref(ctx);
}

/* NFS through the API: the error paths that need no KDC. */
static void test_nfs_errors(void **state)
{
	struct nfskeys_ctx *ctx = new_ctx();
	struct nfskeys_cred_params p = { .ccache = "FILE:/nonexistent/nfskeys-test-ccache" };
	struct nfskeys_cred_info info;
	struct nfskeys_secret *payload = NULL;

	setenv("KRB5_CONFIG", "/dev/null", 1);
	assert_int_equal(nfskeys_cred_find(ctx, "nfs", &p, &info), -ENOKEY);
	assert_int_equal(nfskeys_cred_clear(ctx, "nfs", &p), -ENOKEY);
	assert_int_equal(nfskeys_cred_renew(ctx, "nfs", &p, &info), -ENOKEY);
	assert_non_null(strstr(tu_last_log, "no credentials"));
	assert_int_equal(nfskeys_cred_add(ctx, "nfs", &p), -EINVAL);
	assert_non_null(strstr(tu_last_log, "no password and no keytab"));
	p.keytab = "/nonexistent/nfskeys-test.keytab";
	assert_int_equal(nfskeys_cred_add(ctx, "nfs", &p), -ENOENT);
	assert_non_null(strstr(tu_last_log, "cannot read keytab"));
	assert_int_equal(nfskeys_cred_build(ctx, "nfs", &p, &payload, &info), -EOPNOTSUPP);
	p.ccache = "NOSUCHTYPE:x";
	assert_true(nfskeys_cred_find(ctx, "nfs", &p, &info) < 0);
	unsetenv("KRB5_CONFIG");
	nfskeys_ctx_unref(ctx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plugins_load),
		cmocka_unit_test_setup(test_bad_fs, setup),
		cmocka_unit_test_setup(test_cifs_cycle, setup),
		cmocka_unit_test_setup(test_cifs_timeout_and_user_keyring, setup),
		cmocka_unit_test_setup(test_cifs_validation, setup),
		cmocka_unit_test(test_afs_errors),
		cmocka_unit_test(test_nfs_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
