/* The [SID] settings of the winbind-compatible parts of the "sid" backend: each bad
 * value (a domain's range, Algorithm, the autorid ranges, Domains, the ad directory, a
 * state file of another configuration, a bind password file others may read) stops the
 * backend, or the lookup, with a message naming the key,
 * the value and what is wrong; good ones map as documented: "[rid] MIN - MAX", and
 * Algorithm = autorid (range 0 the pool, domains in order of first use, DOMAIN#N ranges,
 * preallocated well-known gids, the same answers from a second context). */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "nfskeys.h"
#include "test-util.h"

static char logbuf[8192];

static void log_all(void *u, int p, const char *f, int l, const char *fn, const char *fmt,
		    va_list ap)
{
	size_t n = strlen(logbuf);

	if (n + 2 < sizeof(logbuf)) {
		vsnprintf(logbuf + n, sizeof(logbuf) - n - 1, fmt, ap);
		strcat(logbuf, "\n");
	}
}

static int setup(void **state)
{
	return tu_dir_setup("sid-conf");
}

static int teardown(void **state)
{
	return tu_dir_teardown();
}

/* A context on [Translation] Method = sid and the [SID] lines given, logging into logbuf. */
static struct nfskeys_ctx *sid_ctx(const char *sid_lines)
{
	struct nfskeys_ctx *ctx = NULL;
	const char *path =
		tu_write_conf("[General]\nVerbosity = warning\n[Translation]\nMethod = sid\n[SID]\n"
			      "State-File = %s/state\n%s",
			      tu_dir, sid_lines);

	logbuf[0] = '\0';
	assert_int_equal(nfskeys_ctx_new_full(path, log_all, NULL, &ctx), 0);
	return ctx;
}

/* The backend refuses sid_lines, saying want. */
static void refused(const char *sid_lines, const char *want)
{
	struct nfskeys_ctx *ctx = sid_ctx(sid_lines);
	uid_t uid;

	assert_int_not_equal(nfskeys_idmap_sid_to_uid(ctx, "S-1-5-21-1-2-3-1000", &uid, NULL), 0);
	if (!strstr(logbuf, want))
		fail_msg("config:\n%s\nwanted the message \"%s\", got:\n%s", sid_lines, want,
			 logbuf);
	nfskeys_ctx_unref(ctx);
}

static void test_bad_ranges(void **state)
{
	refused("S-1-5-21-1-2-3 = ad 10 - 5\n",
		"[SID] S-1-5-21-1-2-3 = ad 10 - 5: MIN must be above 0 and at most MAX");
	refused("S-1-5-21-1-2-3 = 0 - 5\n", "= 0 - 5: MIN must be above 0 and at most MAX");
	refused("S-1-5-21-1-2-3 = autorid 1 - 5\n",
		"= autorid 1 - 5: the kind of range is rid (the default) or ad");
	refused("S-1-5-21-1-2-3 = adx 1 - 5\n", "the kind of range is rid (the default) or ad");
	refused("S-1-5-21-1-2-3 = 1 - 4294967296\n",
		"= 1 - 4294967296: expected [rid|ad] MIN - MAX, numbers below 2^32");
	refused("S-1-5-21-1-2-3 = 1 - -5\n", "expected [rid|ad] MIN - MAX");
	refused("S-1-5-21-1-2-3 = rid 1 - 5 x\n", "expected [rid|ad] MIN - MAX");
	refused("S-1-5-21-1-2-3 = 100\n", "expected [rid|ad] MIN - MAX");
	refused("S-1-5-32 = 1 - 5\n", "S-1-5-32 is not a domain SID S-1-5-21-A-B-C");
}

static void test_bad_algorithm_and_ad(void **state)
{
	refused("Algorithm = autoridd\n", "[SID] Algorithm = autoridd: expected sssd or autorid");
	refused("Algorithm = autorid\nRange-Min = 1000\nRange-Max = 1999\nRange-Size = 1000\n",
		"holds 1 ranges of Range-Size 1000; need 2");
	refused("Algorithm = autorid\nRange-Min = 1000\nRange-Max = 999\nRange-Size = 10\n",
		"Range-Min 1000 to Range-Max 999 holds 0 ranges");
	refused("Algorithm = autorid\nDomains = S-1-5-21-1-2\n",
		"[SID] Domains: 'S-1-5-21-1-2' is not a domain SID S-1-5-21-A-B-C or S-1-5-32");
	refused("S-1-5-21-1-2-3 = ad 1000 - 2000\n",
		"[SID] S-1-5-21-1-2-3 = ad: no directory URI (AD-URI, or the domain's own "
		"S-1-5-21-1-2-3.AD-URI)");
	refused("S-1-5-21-1-2-3 = ad 1000 - 2000\nAD-URI = ldap://127.0.0.1\n",
		"[SID] S-1-5-21-1-2-3 = ad: no base (AD-Base, or the domain's own "
		"S-1-5-21-1-2-3.AD-Base)");
	refused("S-1-5-21-1-2-3 = ad 1000 - 2000\nAD-URI = http://x\nAD-Base = dc=x\n",
		"[SID] AD-URI = http://x: not an ldap://, ldaps:// or ldapi:// URI");
	refused("S-1-5-21-1-2-3 = ad 1 - 2\nAD-URI = ldap://127.0.0.1\nAD-Base = dc=x\n"
		"AD-Bind-DN = cn=a\n",
		"[SID] AD-Bind-DN needs AD-Bind-Password-File");
	refused("S-1-5-21-1-2-3 = ad 1 - 2\nAD-URI = ldap://127.0.0.1\nAD-Base = dc=x\n"
		"AD-Bind-DN = cn=a\nAD-Bind-Password-File = /nonexistent\n",
		"AD-Allow-Cleartext-Bind");
}

/* The bind password file must be its owner's only; checked before anything is sent (the
 * URI is a closed port of the loopback).  The file as [SID]'s AD-Bind-Password-File, then
 * as the domain's own S-1-5-21-1-2-3.AD-Bind-Password-File: the message names that key. */
static void test_ad_password_file(void **state)
{
	static const char *const keys[] = { "AD-Bind-Password-File",
					    "S-1-5-21-1-2-3.AD-Bind-Password-File" };
	char pw[128], conf[512], want[128];

	tu_path(pw, sizeof(pw), "pw");
	tu_write_file(pw, "secret\n");
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		snprintf(conf, sizeof(conf),
			 "S-1-5-21-1-2-3 = ad 1 - 99999\nAD-URI = ldap://127.0.0.1:1\n"
			 "AD-Base = dc=x\nAD-Bind-DN = cn=a\n%s = %s\n"
			 "AD-Allow-Cleartext-Bind = yes\nAD-Timeout = 1\n",
			 keys[i], pw);
		snprintf(want, sizeof(want), "[SID] %s %s: ", keys[i], pw);
		assert_int_equal(chmod(pw, 0644), 0);
		refused(conf, want);
		assert_non_null(strstr(logbuf, "others may read it (mode 0644); make it 0600"));
		assert_int_equal(chmod(pw, 0600), 0);
		refused(conf, "ldap://127.0.0.1:1: bind: ");
		assert_null(strstr(logbuf, "make it 0600"));
	}
}

/* A domain's own directory settings (S-1-5-21-A-B-C.AD-URI and the like): only those
 * four keys, only for a domain with an ad range, and its lookups go to its own URI (a
 * closed port of the loopback, named in the answer) while [SID]'s serves the others. */
static void test_ad_domain_keys(void **state)
{
	const char *ad = "S-1-5-21-1-2-3 = ad 1 - 99999\nAD-URI = ldap://127.0.0.1:1\n"
			 "AD-Base = dc=x\nAD-Timeout = 1\n";
	char conf[512];

	snprintf(conf, sizeof(conf), "%sS-1-5-21-1-2-3.AD-Port = 3\n", ad);
	refused(conf, "[SID] S-1-5-21-1-2-3.AD-Port = 3: a domain's own setting is "
		      "S-1-5-21-A-B-C.KEY with KEY AD-URI, AD-Base, AD-Bind-DN or "
		      "AD-Bind-Password-File");
	snprintf(conf, sizeof(conf), "%sS-1-5-21-1-2.AD-URI = ldap://127.0.0.1:2\n", ad);
	refused(conf, "[SID] S-1-5-21-1-2.AD-URI = ldap://127.0.0.1:2: a domain's own setting");
	snprintf(conf, sizeof(conf),
		 "%sS-1-5-21-4-5-6 = 1000 - 2000\n"
		 "S-1-5-21-4-5-6.AD-URI = ldap://127.0.0.1:2\n",
		 ad);
	refused(conf, "[SID] S-1-5-21-4-5-6.AD-URI: that domain has no ad range");
	/* a bad value of a domain's own key: the message names that key as written */
	snprintf(conf, sizeof(conf), "%sS-1-5-21-1-2-3.AD-URI = http://y\n", ad);
	refused(conf, "[SID] S-1-5-21-1-2-3.AD-URI = http://y: not an ldap://, ldaps:// or "
		      "ldapi:// URI");
	snprintf(conf, sizeof(conf), "%ss-1-5-21-1-2-3.ad-uri = http://y\n", ad);
	refused(conf, "[SID] s-1-5-21-1-2-3.ad-uri = http://y: not an ldap://");
	snprintf(conf, sizeof(conf), "%sS-1-5-21-1-2-3.AD-Bind-DN = cn=a\n", ad);
	refused(conf, "[SID] S-1-5-21-1-2-3.AD-Bind-DN needs AD-Bind-Password-File");
	snprintf(conf, sizeof(conf),
		 "%sS-1-5-21-1-2-3.AD-Bind-DN = cn=a\nAD-Bind-Password-File = /nonexistent\n", ad);
	refused(conf, "[SID] S-1-5-21-1-2-3.AD-Bind-DN with a password over ldap://127.0.0.1:1 "
		      "would send the password in clear");
	/* the domain's own URI, and [SID]'s for another ad domain */
	snprintf(conf, sizeof(conf),
		 "%sS-1-5-21-1-2-3.AD-URI = ldap://127.0.0.1:2\n"
		 "S-1-5-21-4-5-6 = ad 100000 - 199999\n",
		 ad);
	refused(conf, "ldap://127.0.0.1:2: bind: ");
	assert_null(strstr(logbuf, "ldap://127.0.0.1:1"));
	{
		struct nfskeys_ctx *ctx = sid_ctx(conf);
		uid_t uid;

		assert_int_not_equal(
			nfskeys_idmap_sid_to_uid(ctx, "S-1-5-21-4-5-6-1000", &uid, NULL), 0);
		assert_non_null(strstr(logbuf, "ldap://127.0.0.1:1: bind: "));
		assert_null(strstr(logbuf, "ldap://127.0.0.1:2"));
		nfskeys_ctx_unref(ctx);
	}
}

static void test_rid_kinds(void **state)
{
	struct nfskeys_ctx *ctx = sid_ctx("Auto-Domains = no\nS-1-5-21-1-2-3 = rid 100 - 200\n"
					  "S-1-5-21-4-5-6 = 1000-1100\n");
	uid_t uid;

	assert_int_equal(nfskeys_idmap_sid_to_uid(ctx, "S-1-5-21-1-2-3-5", &uid, NULL), 0);
	assert_int_equal(uid, 105);
	assert_int_equal(nfskeys_idmap_sid_to_uid(ctx, "S-1-5-21-4-5-6-100", &uid, NULL), 0);
	assert_int_equal(uid, 1100);
	assert_int_not_equal(nfskeys_idmap_sid_to_uid(ctx, "S-1-5-21-4-5-6-101", &uid, NULL), 0);
	nfskeys_ctx_unref(ctx);
}

#define AUTORID                                                                               \
	"Algorithm = autorid\nRange-Min = 1000000\nRange-Max = 1999999\nRange-Size = 10000\n" \
	"Auto-Domains = no\n"

static void test_autorid(void **state)
{
	struct nfskeys_ctx *ctx = sid_ctx(AUTORID "Domains = S-1-5-21-1-2-3, S-1-5-32\n"), *ctx2;
	struct nfskeys_idmap_answer a;
	uid_t uid;
	gid_t gid;
	char path[128];
	FILE *f;

	/* range 0 the pool; Domains in order: 1 and 2; then DOMAIN#N in order of first use */
	assert_int_equal(nfskeys_idmap_sid_to_uid(ctx, "S-1-5-21-1-2-3-500", &uid, NULL), 0);
	assert_int_equal(uid, 1010500);
	assert_int_equal(nfskeys_idmap_sid_to_gid(ctx, "S-1-5-32-544", &gid, NULL), 0);
	assert_int_equal(gid, 1020544);
	assert_int_equal(nfskeys_idmap_sid_to_uid(ctx, "S-1-5-21-1-2-3-54321", &uid, NULL), 0);
	assert_int_equal(uid, 1034321); /* "S-1-5-21-1-2-3#5", range 3 */
	assert_int_equal(nfskeys_idmap_sid_to_uid(ctx, "S-1-5-21-1-2-3-10001", &uid, NULL), 0);
	assert_int_equal(uid, 1040001); /* "#1", range 4 */
	/* well-known: preallocated gids from the top of the pool down, no uid */
	assert_int_equal(nfskeys_idmap_sid_to_gid(ctx, "S-1-1-0", &gid, NULL), 0);
	assert_int_equal(gid, 1009999);
	assert_int_equal(nfskeys_idmap_sid_to_gid(ctx, "S-1-5-18", &gid, NULL), 0);
	assert_int_equal(gid, 1009976);
	assert_int_not_equal(nfskeys_idmap_sid_to_uid(ctx, "S-1-1-0", &uid, NULL), 0);
	assert_int_not_equal(nfskeys_idmap_sid_to_gid(ctx, "S-1-5-113", &gid, NULL), 0);
	/* a domain not in Domains gets no range */
	assert_int_not_equal(nfskeys_idmap_sid_to_uid(ctx, "S-1-5-21-7-8-9-500", &uid, NULL), 0);
	/* back */
	assert_int_equal(nfskeys_idmap_lookup(ctx, NFSKEYS_IDMAP_UID_TO_SID, "1034321", &a), 0);
	assert_string_equal(a.name, "S-1-5-21-1-2-3-54321");
	assert_int_equal(nfskeys_idmap_lookup(ctx, NFSKEYS_IDMAP_GID_TO_SID, "1009976", &a), 0);
	assert_string_equal(a.name, "S-1-5-18");

	/* another context (another process, a restart) has the same ranges, whatever its
	 * order: its Domains has the domains the other way round */
	ctx2 = sid_ctx(AUTORID "Domains = S-1-5-32 S-1-5-21-1-2-3\n");
	assert_int_equal(nfskeys_idmap_sid_to_uid(ctx2, "S-1-5-21-1-2-3-10001", &uid, NULL), 0);
	assert_int_equal(uid, 1040001);
	assert_int_equal(nfskeys_idmap_sid_to_gid(ctx2, "S-1-5-32-544", &gid, NULL), 0);
	assert_int_equal(gid, 1020544);
	assert_int_equal(nfskeys_idmap_lookup(ctx2, NFSKEYS_IDMAP_UID_TO_SID, "1010500", &a), 0);
	assert_string_equal(a.name, "S-1-5-21-1-2-3-500");
	/* a range this context assigns is seen by the first one (it re-reads the file) */
	assert_int_equal(nfskeys_idmap_sid_to_uid(ctx2, "S-1-5-21-1-2-3-20001", &uid, NULL), 0);
	assert_int_equal(uid, 1050001);
	assert_int_equal(nfskeys_idmap_lookup(ctx, NFSKEYS_IDMAP_UID_TO_SID, "1050001", &a), 0);
	assert_string_equal(a.name, "S-1-5-21-1-2-3-20001");
	nfskeys_ctx_unref(ctx2);
	nfskeys_ctx_unref(ctx);

	/* the state file of another configuration is refused */
	refused("Algorithm = autorid\nRange-Min = 1000000\nRange-Max = 1999999\n"
		"Range-Size = 20000\nDomains = S-1-5-21-1-2-3\n",
		"was made for Range-Min 1000000, Range-Size 10000, 100 ranges, not 1000000, "
		"20000, 50");
	tu_path(path, sizeof(path), "state");
	f = fopen(path, "r");
	assert_non_null(f);
	fclose(f);
}

/* Each context loads the sid plugin and closes it when it goes; the ad part makes the
 * plugin load libldap, whose process-wide state (its global options, the SASL client
 * plugins it loads on its first connection) is never freed and would be orphaned, and
 * reported as lost, when the last context unloads it.  A daemon keeps its plugins for the
 * life of the process: do the same here, so a leak report is one of ours, with its
 * stack. */
static void *keep_plugin_loaded(void)
{
	const char *dir = getenv("NFSKEYS_PLUGIN_DIR");
	char path[4096];

	if (!dir || snprintf(path, sizeof(path), "%s/idmap-sid.so", dir) >= (int)sizeof(path))
		return NULL;
	return dlopen(path, RTLD_NOW | RTLD_NODELETE);
}

int main(void)
{
	void *keep = keep_plugin_loaded();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_bad_ranges, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_algorithm_and_ad, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ad_password_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ad_domain_keys, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rid_kinds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_autorid, setup, teardown),
	};

	int r = cmocka_run_group_tests(tests, NULL, NULL);

	if (keep)
		dlclose(keep);
	return r;
}
