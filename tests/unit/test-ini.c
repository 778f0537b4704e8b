/* The INI reader: what it accepts and every way it rejects a line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "ini.h"
#include "macros.h"

struct seen {
	char buf[1024];
};

static int on_value(void *userdata, const char *file, unsigned line, const char *section,
		    const char *key, const char *value)
{
	struct seen *s = userdata;
	size_t n = strlen(s->buf);

	snprintf(s->buf + n, sizeof(s->buf) - n, "%u:%s.%s=%s;", line, section, key, value);
	return 0;
}

static void test_accepts(void **state)
{
	struct seen s = { "" };
	char err[256] = "";
	const char *text = "# comment\n; other comment\n\n[General]\n  Domain = example.com  \n"
			   "[Static]\nalice@EXAMPLE.COM = alice\nq = \"quoted value\"\r\n"
			   "empty =\n";

	assert_int_equal(ini_parse_string(text, "t.conf", NULL, on_value, &s, err, sizeof(err)), 0);
	assert_string_equal(s.buf, "5:General.Domain=example.com;7:Static.alice@EXAMPLE.COM=alice;"
				   "8:Static.q=quoted value;9:Static.empty=;");
}

static void expect_error(const char *text, const char *msg)
{
	struct seen s = { "" };
	char err[256] = "";

	assert_int_equal(ini_parse_string(text, "bad.conf", NULL, on_value, &s, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, msg);
}

static void test_rejects(void **state)
{
	expect_error("[General\n", "bad.conf:1: section header without closing ']'");
	expect_error("[]\n", "bad.conf:1: empty section name");
	expect_error("[A] x\n", "bad.conf:1: text after section header");
	expect_error("[A]\njunk\n", "bad.conf:2: expected 'key = value', '[section]' or a comment");
	expect_error("[A]\n = v\n", "bad.conf:2: missing key before '='");
	expect_error("key = v\n", "bad.conf:1: key 'key' outside of any [section]");
	expect_error("[A]\nbad key = v\n", "bad.conf:2: invalid character ' ' in key 'bad key'");
	expect_error("[A!]\n", "bad.conf:1: invalid character '!' in section name");
	/* non-printable bytes are shown escaped, never raw, in messages */
	expect_error("[A\033]\n", "bad.conf:1: invalid character '\\x1b' in section name");
	expect_error("[A]\nk\033[31m = v\n",
		     "bad.conf:2: invalid character '\\x1b' in key 'k\\x1b[31m'");
	expect_error("[A]\n\xc3\xa9 = v\n",
		     "bad.conf:2: invalid character '\\xc3' in key '\\xc3\\xa9'");
}

static void test_long_line(void **state)
{
	char *text = malloc(6000);
	struct seen s = { "" };
	char err[256];

	assert_non_null(text);
	strcpy(text, "[A]\nk = ");
	memset(text + 8, 'x', 5000);
	text[5008] = '\0';
	assert_int_equal(ini_parse_string(text, "f", NULL, on_value, &s, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "f:2: line longer than 4096 bytes");
	free(text);
}

static int stop_at_second(void *userdata, const char *file, unsigned line, const char *section,
			  const char *key, const char *value)
{
	int *count = userdata;
	return ++*count == 2 ? -ECANCELED : 0;
}

static void test_handler_stops(void **state)
{
	int count = 0;

	assert_int_equal(ini_parse_string("[A]\na=1\nb=2\nc=3\n", "f", NULL, stop_at_second, &count,
					  NULL, 0),
			 -ECANCELED);
	assert_int_equal(count, 2);
}

static void test_missing_file(void **state)
{
	char err[256] = "";

	assert_int_equal(ini_parse_file("/nonexistent/x.conf", NULL, on_value, NULL, err,
					sizeof(err)),
			 -ENOENT);
	assert_string_equal(err, "/nonexistent/x.conf: No such file or directory");
	assert_int_equal(ini_parse_file("/", NULL, on_value, NULL, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "/: not a regular file");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_accepts),
		cmocka_unit_test(test_rejects),
		cmocka_unit_test(test_long_line),
		cmocka_unit_test(test_handler_stops),
		cmocka_unit_test(test_missing_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
