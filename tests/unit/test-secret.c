/* Secret buffers and password reading (from a pipe, as a non-terminal stdin). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "macros.h"
#include "nfskeys.h"

/* A field of /proc/self/status in kB, -1 when absent. */
static long status_kb(const char *field)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	long v = -1;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (startswith(line, field) && line[strlen(field)] == ':')
			v = strtol(line + strlen(field) + 1, NULL, 10);
	fclose(f);
	return v;
}

/* The VmFlags line of the /proc/self/smaps entry holding addr. */
static bool smaps_flags(const void *addr, char *flags, size_t len)
{
	FILE *f = fopen("/proc/self/smaps", "re");
	char line[512];
	bool in = false, found = false;

	assert_non_null(f);
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' '))
			in = (uintptr_t)addr >= lo && (uintptr_t)addr < hi;
		else if (in && startswith(line, "VmFlags:")) {
			snprintf(flags, len, "%s", line);
			found = true;
		}
	}
	fclose(f);
	return found;
}

static int pipe_with(const char *text)
{
	int p[2];

	assert_int_equal(pipe(p), 0);
	assert_int_equal(write(p[1], text, strlen(text)), (ssize_t)strlen(text));
	close(p[1]);
	return p[0];
}

static void test_buffer(void **state)
{
	struct nfskeys_secret *s = NULL;
	unsigned char *d;

	assert_int_equal(nfskeys_secret_new(0, &s), -EINVAL);
	assert_int_equal(nfskeys_secret_new(16, NULL), -EINVAL);
	assert_int_equal(nfskeys_secret_new(16, &s), 0);
	assert_int_equal(nfskeys_secret_capacity(s), 16);
	assert_int_equal(nfskeys_secret_len(s), 0);
	d = nfskeys_secret_data(s);
	memcpy(d, "hunter2hunter2", 14);
	assert_int_equal(nfskeys_secret_set_len(s, 14), 0);
	assert_int_equal(nfskeys_secret_set_len(s, 17), -EINVAL);
	/* shrinking wipes the tail */
	assert_int_equal(nfskeys_secret_set_len(s, 7), 0);
	for (int i = 7; i < 14; i++)
		assert_int_equal(d[i], 0);
	assert_memory_equal(d, "hunter2", 7);
	assert_null(nfskeys_secret_free(s));
	assert_null(nfskeys_secret_free(NULL));
}

static void test_read_password(void **state)
{
	struct nfskeys_secret *s = NULL;
	int fd = pipe_with("s3cr:t pass\nsecond line\n");

	assert_int_equal(nfskeys_secret_read_password(fd, NULL, 512, &s), 0);
	assert_int_equal(nfskeys_secret_len(s), 11);
	assert_string_equal(nfskeys_secret_data(s), "s3cr:t pass");
	s = nfskeys_secret_free(s);
	/* the second line was not consumed by the first read */
	assert_int_equal(nfskeys_secret_read_password(fd, NULL, 512, &s), 0);
	assert_string_equal(nfskeys_secret_data(s), "second line");
	s = nfskeys_secret_free(s);
	assert_int_equal(nfskeys_secret_read_password(fd, NULL, 512, &s), -ENODATA);
	assert_null(s);
	close(fd);
}

static void test_read_password_limits(void **state)
{
	struct nfskeys_secret *s = NULL;
	int fd;

	fd = pipe_with("12345678\n");
	assert_int_equal(nfskeys_secret_read_password(fd, NULL, 8, &s), 0);
	assert_string_equal(nfskeys_secret_data(s), "12345678");
	s = nfskeys_secret_free(s);
	close(fd);

	fd = pipe_with("123456789\nnext\n");
	assert_int_equal(nfskeys_secret_read_password(fd, NULL, 8, &s), -EMSGSIZE);
	assert_null(s);
	/* the overlong line was drained */
	assert_int_equal(nfskeys_secret_read_password(fd, NULL, 8, &s), 0);
	assert_string_equal(nfskeys_secret_data(s), "next");
	s = nfskeys_secret_free(s);
	close(fd);

	fd = pipe_with("crlf\r\n");
	assert_int_equal(nfskeys_secret_read_password(fd, NULL, 8, &s), 0);
	assert_string_equal(nfskeys_secret_data(s), "crlf");
	s = nfskeys_secret_free(s);
	close(fd);

	/* CRLF after exactly max bytes is still a max-byte password */
	fd = pipe_with("12345678\r\n");
	assert_int_equal(nfskeys_secret_read_password(fd, NULL, 8, &s), 0);
	assert_string_equal(nfskeys_secret_data(s), "12345678");
	s = nfskeys_secret_free(s);
	close(fd);
	fd = pipe_with("12345678\rx\n");
	assert_int_equal(nfskeys_secret_read_password(fd, NULL, 8, &s), -EMSGSIZE);
	close(fd);

	fd = pipe_with("\n");
	assert_int_equal(nfskeys_secret_read_password(fd, NULL, 8, &s), -ENODATA);
	close(fd);
	assert_int_equal(nfskeys_secret_read_password(-1, NULL, 8, &s), -EINVAL);
}

static void test_own_locked_pages(void **state)
{
	struct nfskeys_secret *a = NULL, *b = NULL;
	long base = status_kb("VmLck"), page_kb = sysconf(_SC_PAGESIZE) / 1024;
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t da, db;
	char flags[512];

	assert_int_equal(nfskeys_secret_new(16, &a), 0);
	assert_int_equal(nfskeys_secret_new(16, &b), 0);
	/* each secret starts a page of its own (just past a small header), so no page
	 * holds two secrets ... */
	da = (uintptr_t)nfskeys_secret_data(a);
	db = (uintptr_t)nfskeys_secret_data(b);
	assert_true(da % page < 64 && db % page < 64);
	assert_true(da / page != db / page);
	/* ... and stays out of core dumps */
	assert_true(smaps_flags(nfskeys_secret_data(b), flags, sizeof(flags)));
	assert_non_null(strstr(flags, " dd"));
	if (base >= 0 && status_kb("VmLck") - base >= 2 * page_kb) {
		/* freeing one secret must not unlock the other (mlock does not nest) */
		nfskeys_secret_free(a);
		assert_true(status_kb("VmLck") - base >= page_kb);
		nfskeys_secret_free(b);
		assert_int_equal(status_kb("VmLck"), base);
	} else {
		/* ASan makes mlock() a no-op; RLIMIT_MEMLOCK may forbid it */
		printf("# mlock has no effect here: lock accounting not checked\n");
		nfskeys_secret_free(a);
		nfskeys_secret_free(b);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_buffer),
		cmocka_unit_test(test_read_password),
		cmocka_unit_test(test_read_password_limits),
		cmocka_unit_test(test_own_locked_pages),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
