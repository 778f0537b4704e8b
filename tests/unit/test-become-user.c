/* Dropping to a user's privileges (common/become-user.h), for real: each case runs in a
 * child of a root process, which drops for good and reports by its exit status.  A drop
 * that leaves a way back to root (here: the process keeps its capabilities across the
 * uid change, as SECBIT_NO_SETUID_FIXUP makes it) must be refused, not gone on with. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <errno.h>
#include <linux/securebits.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "become-user.h"

#define NOBODY 65534

/* Run fn in a child; its exit status (0: as expected; 77: cannot be set up here). */
static int in_child(int (*fn)(void))
{
	int status;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0)
		_exit(fn());
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static void need_root(void)
{
	if (geteuid() != 0) {
		print_message("SKIP: not root: no privileges to drop\n");
		skip();
	}
}

static int drop_child(void)
{
	gid_t g = NOBODY, got[4];
	uid_t ru, eu, su;
	gid_t rg, eg, sg;
	int r = become_user(NOBODY, NOBODY, &g, 1);

	if (r != 0) {
		fprintf(stderr, "become_user: %s\n", strerror(-r));
		return 1;
	}
	if (getresuid(&ru, &eu, &su) < 0 || ru != NOBODY || eu != NOBODY || su != NOBODY)
		return 2;
	if (getresgid(&rg, &eg, &sg) < 0 || rg != NOBODY || eg != NOBODY || sg != NOBODY)
		return 3;
	if (getgroups(4, got) != 1 || got[0] != NOBODY)
		return 4;
	if (setresuid(0, 0, 0) == 0 || setgroups(0, NULL) == 0)
		return 5; /* root came back */
	return 0;
}

/* all three uids and gids, the groups given and nothing else, and no way back */
static void test_drop(void **state)
{
	(void)state;
	need_root();
	assert_int_equal(in_child(drop_child), 0);
}

static int keepcaps_child(void)
{
	gid_t g = NOBODY;

	/* the capabilities survive the uid change: setresuid(0) will work afterwards */
	if (prctl(PR_SET_SECUREBITS, SECBIT_NO_SETUID_FIXUP, 0, 0, 0) < 0)
		return 77;
	return become_user(NOBODY, NOBODY, &g, 1) == -EPERM ? 0 : 1;
}

/* a drop that root could undo is refused */
static void test_regain_refused(void **state)
{
	int r;

	(void)state;
	need_root();
	r = in_child(keepcaps_child);
	if (r == 77) {
		print_message("SKIP: cannot set SECBIT_NO_SETUID_FIXUP (no CAP_SETPCAP)\n");
		skip();
	}
	assert_int_equal(r, 0);
}

static int named_child(void)
{
	struct passwd *pw = getpwnam("nobody");
	uid_t ru, eu, su;

	if (!pw)
		return 77;
	if (become_user_named(pw->pw_name, pw->pw_uid, pw->pw_gid) != 0)
		return 1;
	if (getresuid(&ru, &eu, &su) < 0 || ru != pw->pw_uid || eu != pw->pw_uid ||
	    su != pw->pw_uid || getgid() != pw->pw_gid)
		return 2;
	return setresuid(0, 0, 0) == 0 ? 3 : 0;
}

/* the groups from the group database */
static void test_named(void **state)
{
	int r;

	(void)state;
	need_root();
	r = in_child(named_child);
	if (r == 77) {
		print_message("SKIP: no user 'nobody' here\n");
		skip();
	}
	assert_int_equal(r, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_drop),
		cmocka_unit_test(test_regain_refused),
		cmocka_unit_test(test_named),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
