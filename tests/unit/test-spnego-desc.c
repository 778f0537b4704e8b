/* The cifs.spnego description parser (tools/upcall/spnego-desc.c) against every form the 6.1
 * and later kernels write (fs/smb/client/cifs_spnego.c, cifs_get_spnego_key()) and the
 * malformed or forged forms a local user could hand the helper. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "spnego-desc.h"

static struct spnego_desc parse_ok(const char *desc)
{
	struct spnego_desc d;
	const char *why = NULL;
	int r = spnego_desc_parse(desc, &d, &why);

	if (r != 0)
		fail_msg("'%s' refused: %s", desc, why ? why : "?");
	return d;
}

static void parse_bad(const char *desc, const char *expect)
{
	struct spnego_desc d;
	const char *why = NULL;

	memset(&d, 0x5a, sizeof(d));
	if (spnego_desc_parse(desc, &d, &why) != -EINVAL)
		fail_msg("'%s' accepted", desc);
	assert_non_null(why);
	if (expect && strcmp(why, expect) != 0)
		fail_msg("'%s': reason '%s', expected '%s'", desc, why, expect);
	assert_int_equal(((unsigned char *)&d)[0], 0x5a); /* ret untouched */
}

/* 6.1 (Debian 12's kernel): no upcall_target=, user= only with a username. */
static void test_linux61(void **state)
{
	struct spnego_desc d;
	char a[INET_ADDRSTRLEN];

	d = parse_ok("ver=0x2;host=fs1.example.test;ip4=192.0.2.10;sec=krb5;uid=0x3e8;"
		     "creduid=0x3e9;pid=0x4d2");
	assert_int_equal(d.version, 2);
	assert_string_equal(d.host, "fs1.example.test");
	assert_int_equal(d.family, AF_INET);
	inet_ntop(AF_INET, &d.addr.v4, a, sizeof(a));
	assert_string_equal(a, "192.0.2.10");
	assert_int_equal(d.sec, SPNEGO_SEC_KRB5);
	assert_int_equal(d.uid, 1000);
	assert_int_equal(d.creduid, 1001);
	assert_int_equal(d.pid, 1234);
	assert_false(d.have_user);
	assert_int_equal(d.target, SPNEGO_TARGET_UNSPECIFIED);
	assert_int_equal(d.unknown, 0);

	d = parse_ok("ver=0x2;host=FS1;ip4=10.0.0.1;sec=mskrb5;uid=0x0;creduid=0x0;"
		     "user=Administrator;pid=0x1");
	assert_int_equal(d.sec, SPNEGO_SEC_MSKRB5);
	assert_true(d.have_user);
	assert_string_equal(d.user, "Administrator");
	assert_string_equal(d.host, "FS1");
	assert_int_equal(d.creduid, 0);

	/* the kernel's %pI6 is the full, uncompressed form */
	d = parse_ok("ver=0x2;host=fs6.example.test;ip6=2001:0db8:0000:0000:0000:0000:0000:0010;"
		     "sec=krb5;uid=0xfffe;creduid=0xfffe;pid=0x7fffffff");
	assert_int_equal(d.family, AF_INET6);
	assert_int_equal(d.addr.v6.s6_addr[15], 0x10);
	assert_int_equal(d.uid, 65534);
	assert_int_equal(d.pid, 0x7fffffff);

	/* an address as the host (mount //192.0.2.10/share), IPv6 literal too */
	d = parse_ok("ver=0x2;host=192.0.2.10;ip4=192.0.2.10;sec=krb5;uid=0x0;creduid=0x0;"
		     "pid=0x10");
	assert_string_equal(d.host, "192.0.2.10");
	d = parse_ok("ver=0x2;host=fe80::1;ip6=fe80:0000:0000:0000:0000:0000:0000:0001;"
		     "sec=krb5;uid=0x0;creduid=0x0;pid=0x10");
	assert_string_equal(d.host, "fe80::1");
	/* the largest ids the kernel can write (from_kuid_munged overflow ids included) */
	d = parse_ok("ver=0x2;host=h;ip4=0.0.0.0;sec=krb5;uid=0xffffffff;creduid=0xFFFFFFFF;"
		     "pid=0xffffffff");
	assert_int_equal(d.uid, 0xffffffffu);
	assert_int_equal(d.creduid, 0xffffffffu);
}

/* 2024 and later kernels append upcall_target=; a later one may add other fields. */
static void test_upcall_target_and_future(void **state)
{
	struct spnego_desc d;

	d = parse_ok("ver=0x2;host=fs1.example.test;ip4=192.0.2.10;sec=krb5;uid=0x3e8;"
		     "creduid=0x3e8;user=alice;pid=0x99;upcall_target=mount");
	assert_int_equal(d.target, SPNEGO_TARGET_MOUNT);
	assert_string_equal(d.user, "alice");
	d = parse_ok("ver=0x2;host=fs1.example.test;ip4=192.0.2.10;sec=krb5;uid=0x3e8;"
		     "creduid=0x3e8;pid=0x99;upcall_target=app");
	assert_int_equal(d.target, SPNEGO_TARGET_APP);
	d = parse_ok("ver=0x2;host=fs1;ip4=192.0.2.10;sec=iakerb;uid=0x3e8;creduid=0x3e8;"
		     "pid=0x99;upcall_target=app;netns=0x4026531840;fut_ure=x y");
	assert_int_equal(d.sec, SPNEGO_SEC_IAKERB);
	assert_int_equal(d.unknown, 2);
	/* field order is the kernel's, but nothing depends on it */
	d = parse_ok("pid=0x1;creduid=0x2;uid=0x3;sec=krb5;ip4=127.0.0.1;host=h;ver=0x2");
	assert_int_equal(d.creduid, 2);
}

static void test_missing(void **state)
{
	parse_bad("", "empty description");
	parse_bad("host=h;ip4=1.2.3.4;sec=krb5;uid=0x0;creduid=0x0;pid=0x1", "no ver=");
	parse_bad("ver=0x2;ip4=1.2.3.4;sec=krb5;uid=0x0;creduid=0x0;pid=0x1", "no host=");
	parse_bad("ver=0x2;host=h;sec=krb5;uid=0x0;creduid=0x0;pid=0x1", "no ip4= or ip6=");
	parse_bad("ver=0x2;host=h;ip4=1.2.3.4;uid=0x0;creduid=0x0;pid=0x1", "no sec=");
	parse_bad("ver=0x2;host=h;ip4=1.2.3.4;sec=krb5;creduid=0x0;pid=0x1", "no uid=");
	parse_bad("ver=0x2;host=h;ip4=1.2.3.4;sec=krb5;uid=0x0;pid=0x1", "no creduid=");
	parse_bad("ver=0x2;host=h;ip4=1.2.3.4;sec=krb5;uid=0x0;creduid=0x0", "no pid=");
}

static void test_malformed(void **state)
{
#define D(x) "ver=0x2;host=h;ip4=1.2.3.4;sec=krb5;uid=0x0;creduid=0x0;pid=0x1" x
	parse_bad("ver=0x3;host=h;ip4=1.2.3.4;sec=krb5;uid=0x0;creduid=0x0;pid=0x1",
		  "unsupported upcall version (not 0x2)");
	parse_bad("ver=2;host=h;ip4=1.2.3.4;sec=krb5;uid=0x0;creduid=0x0;pid=0x1",
		  "ver= is not 0x<hex>");
	parse_bad("ver=0x2;host=h;ip4=1.2.3.4;sec=krb5;uid=0;creduid=0x0;pid=0x1",
		  "uid= is not 0x<hex>");
	parse_bad("ver=0x2;host=h;ip4=1.2.3.4;sec=krb5;uid=0x100000000;creduid=0x0;pid=0x1",
		  "uid= is not 0x<hex>");
	parse_bad("ver=0x2;host=h;ip4=1.2.3.4;sec=krb5;uid=0x-1;creduid=0x0;pid=0x1", NULL);
	parse_bad("ver=0x2;host=h;ip4=1.2.3.4;sec=krb5;uid=0x0;creduid=0x 0;pid=0x1", NULL);
	parse_bad("ver=0x2;host=h;ip4=1.2.3.4;sec=krb5;uid=0x0;creduid=0x0;pid=0x", NULL);
	parse_bad("ver=0x2;host=h;ip4=300.2.3.4;sec=krb5;uid=0x0;creduid=0x0;pid=0x1",
		  "bad ip4= address");
	parse_bad("ver=0x2;host=h;ip6=1.2.3.4;sec=krb5;uid=0x0;creduid=0x0;pid=0x1",
		  "bad ip6= address");
	parse_bad(D(";ip6=::1"), "more than one address field");
	parse_bad("ver=0x2;host=h;ip4=1.2.3.4;sec=ntlmssp;uid=0x0;creduid=0x0;pid=0x1",
		  "sec= is not krb5, mskrb5 or iakerb");
	parse_bad("ver=0x2;host=h;ip4=1.2.3.4;sec=krb5x;uid=0x0;creduid=0x0;pid=0x1", NULL);
	parse_bad(D(";upcall_target=both"), "upcall_target= is not mount or app");
	parse_bad(D(";"), "empty field");
	parse_bad(";" D(""), "empty field");
	parse_bad("ver=0x2;;host=h;ip4=1.2.3.4;sec=krb5;uid=0x0;creduid=0x0;pid=0x1",
		  "empty field");
	parse_bad(D(";junk"), "field without '='");
	parse_bad(D(";Bad=1"), "bad field name");
	parse_bad(D(";=1"), "bad field name");
	parse_bad(D(";user="), "bad user=");
	parse_bad(D(";user=a\tb"), "bad user=");
	parse_bad(D(";x=a\nb"), "control character in a field");
	/* hosts that would change the service principal or a path built from them */
	parse_bad("ver=0x2;host=h@EVIL.REALM;ip4=1.2.3.4;sec=krb5;uid=0x0;creduid=0x0;pid=0x1",
		  "bad host=");
	parse_bad("ver=0x2;host=h/x;ip4=1.2.3.4;sec=krb5;uid=0x0;creduid=0x0;pid=0x1",
		  "bad host=");
	parse_bad("ver=0x2;host=;ip4=1.2.3.4;sec=krb5;uid=0x0;creduid=0x0;pid=0x1", "bad host=");
	parse_bad("ver=0x2;host=-o;ip4=1.2.3.4;sec=krb5;uid=0x0;creduid=0x0;pid=0x1",
		  "bad host=");
#undef D
}

/* A user name is the one field a user chooses: one carrying ";creduid=0x0" must not
 * override the kernel's creduid=. */
static void test_forged_duplicates(void **state)
{
	parse_bad("ver=0x2;host=h;ip4=1.2.3.4;sec=krb5;uid=0x3e8;creduid=0x3e8;"
		  "user=x;creduid=0x0;pid=0x1", "field given twice");
	parse_bad("ver=0x2;host=h;ip4=1.2.3.4;sec=krb5;uid=0x3e8;creduid=0x3e8;pid=0x1;"
		  "user=x;pid=0x2", "field given twice");
	parse_bad("ver=0x2;ver=0x2;host=h;ip4=1.2.3.4;sec=krb5;uid=0x0;creduid=0x0;pid=0x1",
		  "field given twice");
	parse_bad("ver=0x2;host=h;host=g;ip4=1.2.3.4;sec=krb5;uid=0x0;creduid=0x0;pid=0x1",
		  "field given twice");
}

static void test_bounds(void **state)
{
	char buf[SPNEGO_DESC_MAX + 64], host[SPNEGO_HOST_MAX + 2], user[SPNEGO_USER_MAX + 2];
	const char *tail = ";ip4=1.2.3.4;sec=krb5;uid=0x0;creduid=0x0;pid=0x1";
	struct spnego_desc d;
	int n;

	memset(host, 'a', sizeof(host));
	host[SPNEGO_HOST_MAX] = 0;
	snprintf(buf, sizeof(buf), "ver=0x2;host=%s%s", host, tail);
	d = parse_ok(buf);
	assert_int_equal(strlen(d.host), SPNEGO_HOST_MAX);
	host[SPNEGO_HOST_MAX] = 'a';
	host[SPNEGO_HOST_MAX + 1] = 0;
	snprintf(buf, sizeof(buf), "ver=0x2;host=%s%s", host, tail);
	parse_bad(buf, "bad host=");

	memset(user, 'u', sizeof(user));
	user[SPNEGO_USER_MAX] = 0;
	snprintf(buf, sizeof(buf), "ver=0x2;host=h%s;user=%s", tail, user);
	d = parse_ok(buf);
	assert_int_equal(strlen(d.user), SPNEGO_USER_MAX);
	user[SPNEGO_USER_MAX] = 'u';
	user[SPNEGO_USER_MAX + 1] = 0;
	snprintf(buf, sizeof(buf), "ver=0x2;host=h%s;user=%s", tail, user);
	parse_bad(buf, "bad user=");

	/* unknown fields: at most SPNEGO_UNKNOWN_MAX */
	n = snprintf(buf, sizeof(buf), "ver=0x2;host=h%s", tail);
	for (int i = 0; i < SPNEGO_UNKNOWN_MAX; i++)
		n += snprintf(buf + n, sizeof(buf) - n, ";f%d=1", i);
	d = parse_ok(buf);
	assert_int_equal(d.unknown, SPNEGO_UNKNOWN_MAX);
	snprintf(buf + n, sizeof(buf) - n, ";one_more=1");
	parse_bad(buf, "too many unknown fields");

	/* longer than the kernel's limit */
	n = snprintf(buf, sizeof(buf), "ver=0x2;host=h%s;x=", tail);
	memset(buf + n, 'x', sizeof(buf) - n - 1);
	buf[sizeof(buf) - 1] = 0;
	parse_bad(buf, "description longer than the kernel writes");
	parse_bad(NULL, "no description");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_linux61),
		cmocka_unit_test(test_upcall_target_and_future),
		cmocka_unit_test(test_missing),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_forged_duplicates),
		cmocka_unit_test(test_bounds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
