/* The kernel formats nfskeys-idmapd answers: knfsd's nfs4.idtoname / nfs4.nametoid channel
 * lines and the rpc_pipefs idmap message.  The expected lines are written out by hand from
 * the kernel's formats (doc/KERNEL-INTERFACES.md §1-2: qword_add escaping, field order, the
 * absolute expiry, a missing last field for a negative entry), not taken from the code. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kernel-proto.h"

#define LINE(s) s, sizeof(s) - 1

static void test_parse_idtoname(void **state)
{
	struct knfsd_request r;
	const char *why;

	assert_int_equal(knfsd_parse_request(KNFSD_IDTONAME, LINE("* user 1000\n"), &r, &why), 0);
	assert_string_equal(r.authname, "*");
	assert_false(r.group);
	assert_int_equal(r.id, 1000);
	assert_int_equal(knfsd_parse_request(KNFSD_IDTONAME, LINE("gss/krb5i group 0\n"), &r,
					     &why), 0);
	assert_string_equal(r.authname, "gss/krb5i");
	assert_true(r.group);
	assert_int_equal(r.id, 0);
	assert_int_equal(knfsd_parse_request(KNFSD_IDTONAME, LINE("h user 4294967295\n"), &r,
					     &why), 0);
	assert_int_equal(r.id, 4294967295u);
}

static void test_parse_nametoid_escapes(void **state)
{
	struct knfsd_request r;
	const char *why;

	/* a space, a backslash and a tab in a name arrive as \040, \134 and \011 */
	assert_int_equal(knfsd_parse_request(KNFSD_NAMETOID,
					     LINE("192.0.2.0/24 user a\\040b\\134c@dom\n"), &r,
					     &why), 0);
	assert_string_equal(r.authname, "192.0.2.0/24");
	assert_string_equal(r.name, "a b\\c@dom");
	assert_int_equal(knfsd_parse_request(KNFSD_NAMETOID, LINE("* group staff@example.org\n"),
					     &r, &why), 0);
	assert_true(r.group);
	assert_string_equal(r.name, "staff@example.org");
}

static void expect_bad(enum knfsd_channel ch, const char *line, const char *why_part)
{
	struct knfsd_request r;
	const char *why = NULL;

	assert_int_equal(knfsd_parse_request(ch, line, strlen(line), &r, &why), -EINVAL);
	assert_non_null(why);
	if (!strstr(why, why_part))
		fail_msg("'%s': reason '%s' does not name '%s'", line, why, why_part);
}

static void test_parse_malformed(void **state)
{
	char longname[300];

	expect_bad(KNFSD_IDTONAME, "* user 1000", "whole line");
	expect_bad(KNFSD_IDTONAME, "* user 1000\n* user 1\n", "more than one line");
	expect_bad(KNFSD_IDTONAME, "* owner 1000\n", "neither user nor group");
	expect_bad(KNFSD_IDTONAME, "* user\n", "missing field");
	expect_bad(KNFSD_IDTONAME, "\n", "missing field");
	expect_bad(KNFSD_IDTONAME, "* user abc\n", "decimal");
	expect_bad(KNFSD_IDTONAME, "* user -1\n", "decimal");
	expect_bad(KNFSD_IDTONAME, "* user 010\n", "decimal");
	expect_bad(KNFSD_IDTONAME, "* user 4294967296\n", "decimal");
	expect_bad(KNFSD_IDTONAME, "* user 1 2\n", "extra field");
	/* qword_get would read a NUL, and the kernel's entry cannot hold one: no reply can
	 * match; nor can a hex field that does not decode */
	expect_bad(KNFSD_NAMETOID, "* user a\\000b\n", "NUL");
	expect_bad(KNFSD_NAMETOID, "* user \\x4\n", "hex");
	expect_bad(KNFSD_NAMETOID, "* user \\x41zz\n", "hex");
	memset(longname, 'x', sizeof(longname));
	memcpy(longname, "* user ", 7);
	longname[sizeof(longname) - 2] = '\n';
	longname[sizeof(longname) - 1] = '\0';
	expect_bad(KNFSD_NAMETOID, longname, "too long");
	/* a 128-byte authname: the kernel's limit is 127 */
	memset(longname, 'a', 128);
	strcpy(longname + 128, " user x\n");
	expect_bad(KNFSD_NAMETOID, longname, "too long");
}

/* A whole request with a field the daemon will not look up is answered negative at once,
 * its fields going back so that the kernel's qword_get reads the very bytes of its key: a
 * byte qword_add escaped, a control byte it sent raw, a backslash it would have escaped
 * (qword_get keeps it as itself), a \x hex field. */
static void expect_refused(enum knfsd_channel ch, const char *line, const char *why_part,
			   const char *reply)
{
	struct knfsd_request r;
	const char *why = NULL;
	char buf[KNFSD_LINE_MAX];
	int n;

	n = knfsd_parse_request(ch, line, strlen(line), &r, &why);
	if (n != KNFSD_REQUEST_REFUSED)
		fail_msg("'%s': %d (%s), not refused", line, n, why ? why : "");
	assert_non_null(why);
	if (!strstr(why, why_part))
		fail_msg("'%s': reason '%s' does not name '%s'", line, why, why_part);
	assert_int_equal(knfsd_format_reply(&r, 1767225600, true, NULL, 0, buf, sizeof(buf)),
			 (int)strlen(reply));
	assert_string_equal(buf, reply);
}

static void test_refused_answered(void **state)
{
	/* the kernel's own escapes of a tab and a newline in an owner string */
	expect_refused(KNFSD_NAMETOID, "* user a\\011b@dom\n", "control byte",
		       "* user a\\011b@dom 1767225600\n");
	expect_refused(KNFSD_NAMETOID, "192.0.2.0/24 group a\\012b\n", "control byte",
		       "192.0.2.0/24 group a\\012b 1767225600\n");
	/* qword_add sends other control bytes raw; they go back escaped */
	expect_refused(KNFSD_NAMETOID, "* user a\x01z\x7f\n", "control byte",
		       "* user a\\001z\\177 1767225600\n");
	expect_refused(KNFSD_NAMETOID, "* user \r@dom\n", "control byte",
		       "* user \\015@dom 1767225600\n");
	/* a backslash not starting \ooo is itself to qword_get: it goes back as \134 */
	expect_refused(KNFSD_NAMETOID, "* user a\\x41\n", "escape",
		       "* user a\\134x41 1767225600\n");
	expect_refused(KNFSD_NAMETOID, "* user a\\4\n", "escape", "* user a\\1344 1767225600\n");
	expect_refused(KNFSD_NAMETOID, "* user a\\\n", "escape", "* user a\\134 1767225600\n");
	/* a field opening with \x is hex to qword_get */
	expect_refused(KNFSD_NAMETOID, "* group \\x4142\n", "hex", "* group AB 1767225600\n");
	/* the authname is part of the key, on both channels */
	expect_refused(KNFSD_IDTONAME, "a\\011b user 7\n", "control byte",
		       "a\\011b user 7 1767225600\n");
	expect_refused(KNFSD_NAMETOID, "a\x1b" "b user x@dom\n", "control byte",
		       "a\\033b user x@dom 1767225600\n");
	/* high bytes are no reason to refuse: looked up as they are */
	{
		struct knfsd_request r;
		const char *why;

		assert_int_equal(knfsd_parse_request(KNFSD_NAMETOID, LINE("* user \xc3\xa9@d\n"),
						     &r, &why), 0);
		assert_string_equal(r.name, "\xc3\xa9@d");
	}
}

static void test_format_replies(void **state)
{
	struct knfsd_request id = { .channel = KNFSD_IDTONAME, .authname = "*", .id = 1000 };
	struct knfsd_request nm = { .channel = KNFSD_NAMETOID, .authname = "gss/krb5",
				    .group = true, .name = "staff@example.org" };
	char buf[KNFSD_LINE_MAX];

	assert_int_equal(knfsd_format_reply(&id, 1767225600, false, "alice@example.org", 0, buf,
					    sizeof(buf)), 41);
	assert_string_equal(buf, "* user 1000 1767225600 alice@example.org\n");
	/* negative: no last field */
	assert_int_equal(knfsd_format_reply(&id, 1767225600, true, NULL, 0, buf, sizeof(buf)),
			 23);
	assert_string_equal(buf, "* user 1000 1767225600\n");
	assert_int_equal(knfsd_format_reply(&nm, 1767225601, false, NULL, 50, buf, sizeof(buf)),
			 47);
	assert_string_equal(buf, "gss/krb5 group staff@example.org 1767225601 50\n");
	assert_int_equal(knfsd_format_reply(&nm, 1767225601, true, NULL, 0, buf, sizeof(buf)), 44);
	assert_string_equal(buf, "gss/krb5 group staff@example.org 1767225601\n");
}

static void test_format_escapes_and_limits(void **state)
{
	struct knfsd_request nm = { .channel = KNFSD_NAMETOID, .authname = "a b",
				    .name = "x\ty\\z" };
	struct knfsd_request id = { .channel = KNFSD_IDTONAME, .authname = "*", .id = 7 };
	char buf[KNFSD_LINE_MAX], name[200];

	/* the authname and name go back exactly as the kernel's key holds them, escaped */
	assert_true(knfsd_format_reply(&nm, 5, false, NULL, 3, buf, sizeof(buf)) > 0);
	assert_string_equal(buf, "a\\040b user x\\011y\\134z 5 3\n");
	/* a name with a newline cannot split the line */
	assert_true(knfsd_format_reply(&id, 5, false, "ev\nil", 0, buf, sizeof(buf)) > 0);
	assert_string_equal(buf, "* user 7 5 ev\\012il\n");
	/* get_expiry refuses 0 and negative; idtoname names must be 1..127 bytes */
	assert_int_equal(knfsd_format_reply(&id, 0, false, "a", 0, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(knfsd_format_reply(&id, -5, true, NULL, 0, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(knfsd_format_reply(&id, 5, false, "", 0, buf, sizeof(buf)), -EINVAL);
	memset(name, 'n', 128);
	name[128] = '\0';
	assert_int_equal(knfsd_format_reply(&id, 5, false, name, 0, buf, sizeof(buf)), -EINVAL);
	name[127] = '\0';
	assert_true(knfsd_format_reply(&id, 5, false, name, 0, buf, sizeof(buf)) > 0);
	assert_int_equal(knfsd_format_reply(&id, 5, false, name, 0, buf, 20), -ENOBUFS);
}

/* The message as nfs_idmap_prepare_message builds it. */
static struct idmap_msg kmsg(int type, int conv, const char *name, uint32_t id)
{
	struct idmap_msg m;

	memset(&m, 0, sizeof(m));
	m.im_type = (uint8_t)type;
	m.im_conv = (uint8_t)conv;
	if (name)
		strcpy(m.im_name, name);
	m.im_id = id;
	return m;
}

static void test_pipe_parse(void **state)
{
	struct idmap_msg m = kmsg(IDMAP_TYPE_USER, IDMAP_CONV_NAMETOID, "alice@dom", 0);
	struct pipe_request r;
	const char *why;

	assert_int_equal(sizeof(m), 140);
	assert_int_equal(offsetof(struct idmap_msg, im_id), 132);
	assert_int_equal(offsetof(struct idmap_msg, im_status), 136);
	assert_int_equal(pipe_parse_request(&m, sizeof(m), &r, &why), 0);
	assert_true(r.name_to_id);
	assert_false(r.group);
	assert_string_equal(r.name, "alice@dom");
	m = kmsg(IDMAP_TYPE_GROUP, IDMAP_CONV_IDTONAME, NULL, 4242);
	assert_int_equal(pipe_parse_request(&m, sizeof(m), &r, &why), 0);
	assert_false(r.name_to_id);
	assert_true(r.group);
	assert_int_equal(r.id, 4242);
}

static void test_pipe_malformed(void **state)
{
	struct idmap_msg m = kmsg(IDMAP_TYPE_USER, IDMAP_CONV_NAMETOID, "a", 0);
	struct pipe_request r;
	const char *why;

	assert_int_equal(pipe_parse_request(&m, 139, &r, &why), -EINVAL);
	assert_non_null(strstr(why, "140"));
	m.im_type = 2;
	assert_int_equal(pipe_parse_request(&m, sizeof(m), &r, &why), -EINVAL);
	assert_non_null(strstr(why, "im_type"));
	m = kmsg(IDMAP_TYPE_USER, 7, "a", 0);
	assert_int_equal(pipe_parse_request(&m, sizeof(m), &r, &why), -EINVAL);
	assert_non_null(strstr(why, "im_conv"));
	m = kmsg(IDMAP_TYPE_USER, IDMAP_CONV_NAMETOID, "", 0);
	assert_int_equal(pipe_parse_request(&m, sizeof(m), &r, &why), -EINVAL);
	assert_non_null(strstr(why, "empty"));
	memset(m.im_name, 'z', sizeof(m.im_name));
	assert_int_equal(pipe_parse_request(&m, sizeof(m), &r, &why), -EINVAL);
	assert_non_null(strstr(why, "NUL"));
	m = kmsg(IDMAP_TYPE_USER, IDMAP_CONV_NAMETOID, "a\nb", 0);
	assert_int_equal(pipe_parse_request(&m, sizeof(m), &r, &why), -EINVAL);
	assert_non_null(strstr(why, "control"));
}

static void test_pipe_replies(void **state)
{
	struct pipe_request n2i = { .name_to_id = true, .name = "alice@dom" };
	struct pipe_request i2n = { .group = true, .id = 50 };
	struct idmap_msg m;
	char big[200];

	assert_int_equal(pipe_format_reply(&n2i, true, NULL, 1000, &m), 0);
	/* what idmap_pipe_downcall and nfs_idmap_read_and_verify_message check */
	assert_int_equal(m.im_type, IDMAP_TYPE_USER);
	assert_int_equal(m.im_conv, IDMAP_CONV_NAMETOID);
	assert_string_equal(m.im_name, "alice@dom");
	assert_int_equal(m.im_id, 1000);
	assert_true(m.im_status & IDMAP_STATUS_SUCCESS);
	assert_int_equal(pipe_format_reply(&i2n, true, "staff@dom", 0, &m), 0);
	assert_int_equal(m.im_type, IDMAP_TYPE_GROUP);
	assert_int_equal(m.im_conv, IDMAP_CONV_IDTONAME);
	assert_int_equal(m.im_id, 50);
	assert_string_equal(m.im_name, "staff@dom");
	assert_int_equal(pipe_format_reply(&i2n, false, NULL, 0, &m), 0);
	assert_false(m.im_status & IDMAP_STATUS_SUCCESS);
	assert_int_equal(m.im_id, 50);
	/* the kernel refuses an empty or unterminated name: never send one as a success */
	assert_int_equal(pipe_format_reply(&i2n, true, "", 0, &m), -EINVAL);
	memset(big, 'b', 128);
	big[128] = '\0';
	assert_int_equal(pipe_format_reply(&i2n, true, big, 0, &m), -EINVAL);
}

/* uid_map text as user_namespaces(7) defines it, written here by hand */
static void test_userns_map_parse(void **state)
{
	static const char text[] = "         0     100000      65536\n"
				   "     65536       5000          1\n";
	struct userns_map m;
	const char *why = NULL;
	uint32_t v;

	assert_int_equal(userns_map_parse(text, sizeof(text) - 1, &m, &why), 0);
	assert_int_equal(m.n, 2);
	assert_true(userns_map_to_inside(&m, 102001, &v));
	assert_int_equal(v, 2001);
	assert_true(userns_map_to_inside(&m, 5000, &v));
	assert_int_equal(v, 65536);
	assert_false(userns_map_to_inside(&m, 2001, &v)); /* the kernel shows the overflow id */
	assert_false(userns_map_to_inside(&m, 165536, &v));
	assert_true(userns_map_to_outside(&m, 0, &v));
	assert_int_equal(v, 100000);
	assert_true(userns_map_to_outside(&m, 65535, &v));
	assert_int_equal(v, 165535);
	assert_true(userns_map_to_outside(&m, 65536, &v)); /* the second line's, not past the first */
	assert_int_equal(v, 5000);
	assert_false(userns_map_to_outside(&m, 65537, &v));
	/* the initial namespace's own map: everything, as it is */
	assert_int_equal(userns_map_parse(LINE("0 0 4294967295\n"), &m, &why), 0);
	assert_true(userns_map_to_inside(&m, 4294967294u, &v));
	assert_int_equal(v, 4294967294u);
	/* an empty map (a user namespace not yet mapped): nothing maps */
	assert_int_equal(userns_map_parse(LINE(""), &m, &why), 0);
	assert_false(userns_map_to_outside(&m, 0, &v));
}

static void test_userns_map_malformed(void **state)
{
	static const char *const bad[] = { "0 100000\n", "0 100000 65536 7\n", "a b c\n",
					   "0 1 0\n", "4294967295 0 2\n", "0 99999999999 1\n",
					   "-1 0 1\n" };
	struct userns_map m;
	const char *why;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why = NULL;
		assert_int_equal(userns_map_parse(bad[i], strlen(bad[i]), &m, &why), -EINVAL);
		assert_non_null(why);
	}
}

/* The map a real user namespace shows: a child unshares one, root writes its maps, and the
 * text read back from /proc/PID/uid_map parses to what was written. */
static void test_userns_map_real(void **state)
{
	char path[64], buf[4096];
	int go[2], done[2], fd;
	struct userns_map m;
	const char *why;
	uint32_t v;
	ssize_t n;
	pid_t pid;

	if (geteuid() != 0) {
		skip(); /* writing another process's uid_map takes CAP_SETUID */
		return;
	}
	assert_int_equal(pipe(go), 0);
	assert_int_equal(pipe(done), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char c;

		if (unshare(CLONE_NEWUSER) < 0)
			_exit(1);
		(void)write(go[1], "u", 1);
		(void)read(done[0], &c, 1);
		_exit(0);
	}
	n = read(go[0], buf, 1);
	if (n != 1) { /* user namespaces are off here */
		waitpid(pid, NULL, 0);
		skip();
		return;
	}
	snprintf(path, sizeof(path), "/proc/%d/uid_map", (int)pid);
	fd = open(path, O_WRONLY);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "0 100000 65536\n70000 7000 10\n", 30), 30);
	close(fd);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	n = read(fd, buf, sizeof(buf));
	close(fd);
	(void)write(done[1], "x", 1);
	waitpid(pid, NULL, 0);
	assert_true(n > 0);
	assert_int_equal(userns_map_parse(buf, (size_t)n, &m, &why), 0);
	assert_int_equal(m.n, 2);
	assert_true(userns_map_to_inside(&m, 100000 + 2001, &v));
	assert_int_equal(v, 2001);
	assert_true(userns_map_to_inside(&m, 7009, &v));
	assert_int_equal(v, 70009);
	assert_false(userns_map_to_inside(&m, 2001, &v));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_idtoname),
		cmocka_unit_test(test_parse_nametoid_escapes),
		cmocka_unit_test(test_parse_malformed),
		cmocka_unit_test(test_refused_answered),
		cmocka_unit_test(test_format_replies),
		cmocka_unit_test(test_format_escapes_and_limits),
		cmocka_unit_test(test_pipe_parse),
		cmocka_unit_test(test_pipe_malformed),
		cmocka_unit_test(test_pipe_replies),
		cmocka_unit_test(test_userns_map_parse),
		cmocka_unit_test(test_userns_map_malformed),
		cmocka_unit_test(test_userns_map_real),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
