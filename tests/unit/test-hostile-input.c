/* doc/security/FINDINGS.md D11, D13: untrusted text in log lines is escaped (log-escape.h),
 * and nfskeys-upcall never reads the kernel's arguments as options
 * (common/upcall-args.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <getopt.h>

#include "log-escape.h"
#include "upcall-args.h"

static void test_log_escape(void **state)
{
	char buf[64];

	log_escape(buf, sizeof(buf), "uid:alice@example.test");
	assert_string_equal(buf, "uid:alice@example.test");
	/* a newline would start a forged line; ESC a terminal sequence; DEL, high bytes */
	log_escape(buf, sizeof(buf), "a\nnfskeys-idmapd: fake\r\x1b[2J\x7f\xff");
	assert_string_equal(buf, "a\\x0anfskeys-idmapd: fake\\x0d\\x1b[2J\\x7f\\xff");
	/* cut at a whole escape, always terminated */
	log_escape(buf, 7, "ab\ncd");
	assert_string_equal(buf, "ab\\x0a");
	log_escape(buf, 6, "ab\ncd");
	assert_string_equal(buf, "ab");
}

/* what a command shows a person: UTF-8 names readable, everything that could move the
 * cursor, start a line or reorder the text escaped, a backslash doubled */
static void test_display_escape(void **state)
{
	char buf[64];

	display_escape(buf, sizeof(buf), "/srv/caf\xc3\xa9/\xe6\x97\xa5");
	assert_string_equal(buf, "/srv/caf\xc3\xa9/\xe6\x97\xa5");
	display_escape(buf, sizeof(buf), "a\n\x1b[2J\\x0a\x7f");
	assert_string_equal(buf, "a\\x0a\\x1b[2J\\\\x0a\\x7f");
	/* C1 control (U+0085), bidi override (U+202E), invalid, overlong, cut sequences */
	display_escape(buf, sizeof(buf), "\xc2\x85|\xe2\x80\xae|\xff|\xc0\xaf|\xe6\x97");
	assert_string_equal(buf, "\\xc2\\x85|\\xe2\\x80\\xae|\\xff|\\xc0\\xaf|\\xe6\\x97");
	/* cut at a whole character or escape, always terminated */
	display_escape(buf, 5, "ab\xc3\xa9");
	assert_string_equal(buf, "ab\xc3\xa9");
	display_escape(buf, 4, "ab\xc3\xa9");
	assert_string_equal(buf, "ab");
	display_escape(buf, 4, "ab\\");
	assert_string_equal(buf, "ab");
}

static void fmt(char *buf, size_t size, const char *f, ...)
{
	va_list ap;

	va_start(ap, f);
	log_vformat(buf, size, f, ap);
	va_end(ap);
}

static void test_log_vformat(void **state)
{
	char buf[128];

	fmt(buf, sizeof(buf), "lookup %s for uid %u", "x\n<13>forged", 7u);
	assert_string_equal(buf, "lookup x\\x0a<13>forged for uid 7");
}

static int parse(struct upcall_args *a, int argc, ...)
{
	static char *argv[8];
	va_list ap;

	va_start(ap, argc);
	for (int i = 0; i < argc; i++)
		argv[i] = va_arg(ap, char *);
	va_end(ap);
	argv[argc] = NULL;
	optind = 0; /* a fresh getopt scan */
	opterr = 0;
	return upcall_args_parse(argc, argv, a);
}

static void test_upcall_args_stop_at_key(void **state)
{
	struct upcall_args a;

	/* the request-key.d line: nfskeys-upcall %k %d, %d chosen by the requester */
	assert_int_equal(parse(&a, 3, "nfskeys-upcall", "123", "-c/tmp/evil.conf"), 0);
	assert_int_equal(a.serial, 123);
	assert_string_equal(a.desc, "-c/tmp/evil.conf");
	assert_null(a.config);
	assert_int_equal(parse(&a, 3, "nfskeys-upcall", "123", "--config=/tmp/evil.conf"), 0);
	assert_string_equal(a.desc, "--config=/tmp/evil.conf");
	assert_null(a.config);
	assert_int_equal(parse(&a, 3, "nfskeys-upcall", "123", "-t0"), 0);
	assert_false(a.have_timeout);
	assert_string_equal(a.desc, "-t0");
	/* options before KEY still work, and "--" */
	assert_int_equal(parse(&a, 5, "nfskeys-upcall", "-t", "30", "7", "uid:a@b"), 0);
	assert_true(a.have_timeout);
	assert_int_equal(a.timeout, 30);
	assert_int_equal(parse(&a, 4, "nfskeys-upcall", "--", "7", "-v"), 0);
	assert_false(a.verbose);
	assert_string_equal(a.desc, "-v");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_log_escape),
		cmocka_unit_test(test_display_escape),
		cmocka_unit_test(test_log_vformat),
		cmocka_unit_test(test_upcall_args_stop_at_key),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
