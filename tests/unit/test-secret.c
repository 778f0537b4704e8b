/* Secret buffers and password reading (from a pipe, as a non-terminal stdin). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "macros.h"
#include "nfskeys.h"

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

	fd = pipe_with("\n");
	assert_int_equal(nfskeys_secret_read_password(fd, NULL, 8, &s), -ENODATA);
	close(fd);
	assert_int_equal(nfskeys_secret_read_password(-1, NULL, 8, &s), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_buffer),
		cmocka_unit_test(test_read_password),
		cmocka_unit_test(test_read_password_limits),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
