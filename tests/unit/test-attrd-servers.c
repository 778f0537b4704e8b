/* nfskeys-attrd's per-server sub-mount jobs: which server a parent mount
 * belongs to (mountinfo's addr=, else the source's host), and which servers get a worker
 * (one job per server, never a second for a server whose worker still runs, at most
 * MOUNTS_MAX_WORKERS at once).  The kernel side is tests/kernel/attr-mounts-servers.ktest. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "attrd-mounts-private.h"
#include "macros.h"

static void expect_server(const char *opts, const char *source, const char *want)
{
	char *s = NULL;

	assert_int_equal(mounts_server_of(opts, source, &s), 0);
	if (!streq(s, want))
		fail_msg("options '%s', source '%s': server '%s', expected '%s'", opts ? opts : "",
			 source ? source : "", s, want);
	free(s);
}

static void test_server_from_addr(void **state)
{
	(void)state;
	/* mountinfo's superblock options of an NFS mount as 6.1 prints them */
	expect_server("rw,vers=4.2,rsize=1048576,namlen=255,hard,proto=tcp,timeo=600,sec=sys,"
		      "clientaddr=127.0.0.1,local_lock=none,addr=127.0.0.2",
		      "127.0.0.2:/", "127.0.0.2");
	/* addr= wins over the source's host name: the kernel talks to the address */
	expect_server("rw,vers=4.0,addr=192.0.2.7,clientaddr=192.0.2.1", "Files.Example:/home",
		      "192.0.2.7");
	/* clientaddr= and mountaddr= are not addr= */
	expect_server("rw,clientaddr=10.0.0.1,mountaddr=10.0.0.9", "srv:/x", "srv");
	expect_server("rw,addr=fe80::1,clientaddr=fe80::2", "[fe80::1]:/x", "fe80::1");
	/* CIFS prints addr= too */
	expect_server("rw,vers=3.1.1,cache=strict,username=u,addr=127.0.0.1,file_mode=0755",
		      "//localhost/share", "127.0.0.1");
}

static void test_server_from_source(void **state)
{
	(void)state;
	expect_server("rw,vers=4.2", "Files.Example:/home/a", "files.example");
	expect_server(NULL, "127.0.0.3:/", "127.0.0.3");
	expect_server("", "[2001:db8::5]:/srv", "2001:db8::5");
	expect_server("rw,addr=", "//FS1/share", "fs1"); /* an empty addr= is no address */
}

static void test_server_refused(void **state)
{
	char *s = (char *)"untouched";

	(void)state;
	assert_int_equal(mounts_server_of("rw", "no-colon-slash", &s), -EINVAL);
	assert_int_equal(mounts_server_of("rw", ":/x", &s), -EINVAL);
	assert_int_equal(mounts_server_of("rw", "[::1:/x", &s), -EINVAL);
	assert_int_equal(mounts_server_of("rw", "///share", &s), -EINVAL);
	assert_int_equal(mounts_server_of("rw", NULL, &s), -EINVAL);
	assert_string_equal(s, "untouched"); /* ret_* written on success only */
}

/* plan over a table given as servers and needs; the started servers joined by ' ' */
static char *plan_seen(const char *const *server, const bool *need, const uint64_t *seen, size_t n,
		       const char *const *running, size_t n_running, size_t max, bool *waiting)
{
	const char *start[64];
	static char out[512];
	size_t k = mounts_plan(server, need, seen, n, running, n_running, max, start, waiting);

	out[0] = '\0';
	for (size_t i = 0; i < k; i++) {
		if (i)
			strcat(out, " ");
		strcat(out, start[i][0] ? start[i] : "(none)");
	}
	return out;
}

static char *plan(const char *const *server, const bool *need, size_t n, const char *const *running,
		  size_t n_running, size_t max, bool *waiting)
{
	return plan_seen(server, need, NULL, n, running, n_running, max, waiting);
}

static void test_plan_one_job_per_server(void **state)
{
	/* two exports of A (four entries), one of B: two jobs, A's once */
	const char *srv[] = { "A", "B", "A", "A", "A" };
	bool need[] = { true, true, true, true, true };
	bool waiting = true;

	(void)state;
	assert_string_equal(plan(srv, need, 5, NULL, 0, 8, &waiting), "A B");
	assert_false(waiting);
	/* an entry without a server (NULL): a job of its own, never another server's */
	const char *srv2[] = { "A", NULL, "B", NULL };
	bool need2[] = { true, true, true, true };

	assert_string_equal(plan(srv2, need2, 4, NULL, 0, 8, &waiting), "A (none) B");
}

static void test_plan_running_not_restarted(void **state)
{
	const char *srv[] = { "A", "B", "C" };
	bool need[] = { true, true, true };
	const char *running[] = { "B" };
	bool waiting = true;

	(void)state;
	/* B's worker still runs (a silent server): no second job for it, the others go */
	assert_string_equal(plan(srv, need, 3, running, 1, 8, &waiting), "A C");
	assert_false(waiting);
	/* nothing needs work: nothing starts */
	bool none[] = { false, false, false };

	assert_string_equal(plan(srv, none, 3, NULL, 0, 8, &waiting), "");
	assert_false(waiting);
	/* only the entry that needs work decides (C's other entry is covered) */
	const char *srv2[] = { "C", "D", "C" };
	bool need2[] = { false, false, true };

	assert_string_equal(plan(srv2, need2, 3, NULL, 0, 8, &waiting), "C");
}

static void test_plan_bounded(void **state)
{
	char names[20][8];
	const char *srv[20], *running[3] = { "s17", "s18", "s19" };
	bool need[20];
	bool waiting = false;

	(void)state;
	for (int i = 0; i < 20; i++) {
		snprintf(names[i], sizeof(names[i]), "s%d", i);
		srv[i] = names[i];
		need[i] = true;
	}
	/* twenty servers, none running: the first MOUNTS_MAX_WORKERS, the rest wait */
	assert_string_equal(plan(srv, need, 20, NULL, 0, MOUNTS_MAX_WORKERS, &waiting),
			    "s0 s1 s2 s3 s4 s5 s6 s7");
	assert_true(waiting);
	/* three still running (stuck): five more, never more than eight in all */
	assert_string_equal(plan(srv, need, 20, running, 3, MOUNTS_MAX_WORKERS, &waiting),
			    "s0 s1 s2 s3 s4");
	assert_true(waiting);
	/* all workers taken by stuck servers: nobody starts, everybody waits */
	const char *eight[] = { "s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7" };

	assert_string_equal(plan(srv, need, 20, eight, 8, MOUNTS_MAX_WORKERS, &waiting), "");
	assert_true(waiting);
	assert_int_equal(MOUNTS_MAX_WORKERS, 8);
}

/* More servers with work than workers: the one that waited longest goes first, so a
 * server whose policies keep changing cannot keep the ninth waiting for ever. */
static void test_plan_oldest_first(void **state)
{
	char names[10][8];
	const char *srv[10];
	uint64_t seen[10];
	bool need[10];
	bool waiting = false;

	(void)state;
	for (int i = 0; i < 10; i++) {
		snprintf(names[i], sizeof(names[i]), "s%d", i);
		srv[i] = names[i];
		need[i] = true;
		seen[i] = 7; /* all covered by the same earlier job round */
	}
	seen[9] = 2; /* s9 has waited since generation 2 */
	seen[8] = 5;
	/* one worker free: s9, not s0 */
	const char *seven[] = { "x1", "x2", "x3", "x4", "x5", "x6", "x7" };

	assert_string_equal(plan_seen(srv, need, seen, 10, seven, 7, MOUNTS_MAX_WORKERS, &waiting),
			    "s9");
	assert_true(waiting);
	/* eight free: the two oldest, then table order among equals */
	assert_string_equal(plan_seen(srv, need, seen, 10, NULL, 0, MOUNTS_MAX_WORKERS, &waiting),
			    "s9 s8 s0 s1 s2 s3 s4 s5");
	assert_true(waiting);
	/* a server's oldest entry counts: s0's second entry waited since 1 */
	const char *srv2[] = { "s0", "s1", "s0" };
	uint64_t seen2[] = { 7, 3, 1 };
	bool need2[] = { true, true, true };

	assert_string_equal(plan_seen(srv2, need2, seen2, 3, seven, 7, MOUNTS_MAX_WORKERS, &waiting),
			    "s0");
	assert_true(waiting);
	/* an entry that needs nothing does not make its server old */
	bool need3[] = { true, true, false };

	assert_string_equal(plan_seen(srv2, need3, seen2, 3, seven, 7, MOUNTS_MAX_WORKERS, &waiting),
			    "s1");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_server_from_addr),
		cmocka_unit_test(test_server_from_source),
		cmocka_unit_test(test_server_refused),
		cmocka_unit_test(test_plan_one_job_per_server),
		cmocka_unit_test(test_plan_running_not_restarted),
		cmocka_unit_test(test_plan_bounded),
		cmocka_unit_test(test_plan_oldest_first),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
