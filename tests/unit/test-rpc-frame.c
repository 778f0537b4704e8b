/* Record-marking framing: header codec, the incremental reassembler fed in every way a
 * stream can split, and the blocking send/receive helpers over a real socket pair. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "macros.h"
#include "rpc-frame.h"
#include "time-util.h"
#include "unix-socket.h"

static void test_header(void **state)
{
	uint8_t h[4];
	uint32_t len = 0;

	rpc_frame_put_header(h, 0x1234);
	assert_memory_equal(h, "\x80\x00\x12\x34", 4);
	assert_int_equal(rpc_frame_get_header(h, 0x1234, &len), 0);
	assert_int_equal(len, 0x1234);
	/* oversized: one byte above the cap */
	assert_int_equal(rpc_frame_get_header(h, 0x1233, &len), -EMSGSIZE);
	/* zero length */
	assert_int_equal(rpc_frame_get_header((const uint8_t *)"\x80\0\0\0", 100, &len), -EBADMSG);
	/* a non-last fragment: multi-fragment records are refused */
	assert_int_equal(rpc_frame_get_header((const uint8_t *)"\x00\0\0\x10", 100, &len),
			 -EBADMSG);
	/* the largest length the format allows, against a cap */
	assert_int_equal(rpc_frame_get_header((const uint8_t *)"\xff\xff\xff\xff", 65536, &len),
			 -EMSGSIZE);
	assert_int_equal(len, 0x1234); /* untouched on failure */
}

static void feed(struct rpc_framer *fr, const void *data, size_t n)
{
	uint8_t *p;
	size_t avail;

	assert_int_equal(rpc_framer_reserve(fr, n, &p, &avail), 0);
	assert_true(avail >= n);
	memcpy(p, data, n);
	rpc_framer_commit(fr, n);
}

static void test_framer_split(void **state)
{
	/* two messages back to back: "hello" and "xy" */
	const uint8_t stream[] = "\x80\0\0\x05hello\x80\0\0\x02xy";
	size_t slen = sizeof(stream) - 1;

	/* Every split point, and byte by byte. */
	for (size_t cut = 0; cut <= slen; cut++) {
		struct rpc_framer fr;
		const uint8_t *m;
		size_t ml, got = 0;
		char seen[32] = "";

		rpc_framer_init(&fr, 100);
		feed(&fr, stream, cut);
		while (rpc_framer_next(&fr, &m, &ml) == 1) {
			strncat(seen, (const char *)m, ml);
			strcat(seen, "|");
			got++;
		}
		for (size_t i = cut; i < slen; i++) {
			feed(&fr, stream + i, 1);
			while (rpc_framer_next(&fr, &m, &ml) == 1) {
				strncat(seen, (const char *)m, ml);
				strcat(seen, "|");
				got++;
			}
		}
		assert_int_equal(got, 2);
		assert_string_equal(seen, "hello|xy|");
		assert_int_equal(rpc_framer_pending(&fr), 0);
		rpc_framer_done(&fr);
	}
}

static void test_framer_bad(void **state)
{
	struct rpc_framer fr;
	const uint8_t *m;
	size_t ml;

	/* truncated: header promises 10, 3 arrive */
	rpc_framer_init(&fr, 100);
	feed(&fr, "\x80\0\0\x0a" "abc", 7);
	assert_int_equal(rpc_framer_next(&fr, &m, &ml), 0);
	assert_int_equal(rpc_framer_pending(&fr), 7);
	/* a truncated header alone is not yet an error either */
	rpc_framer_done(&fr);
	feed(&fr, "\x80\0", 2);
	assert_int_equal(rpc_framer_next(&fr, &m, &ml), 0);
	rpc_framer_done(&fr);

	/* oversized: refused from the header alone, before any body arrives */
	feed(&fr, "\x80\0\0\x65", 4);
	assert_int_equal(rpc_framer_next(&fr, &m, &ml), -EMSGSIZE);
	rpc_framer_done(&fr);
	/* zero-length */
	feed(&fr, "\x80\0\0\0", 4);
	assert_int_equal(rpc_framer_next(&fr, &m, &ml), -EBADMSG);
	rpc_framer_done(&fr);
	/* first fragment of several */
	feed(&fr, "\x00\0\0\x02hi\x80\0\0\x01!", 11);
	assert_int_equal(rpc_framer_next(&fr, &m, &ml), -EBADMSG);
	rpc_framer_done(&fr);
}

static void test_framer_bounded(void **state)
{
	struct rpc_framer fr;
	uint8_t *p;
	size_t avail;

	/* The reader is never offered more room than one maximal message needs. */
	rpc_framer_init(&fr, 100);
	assert_int_equal(rpc_framer_reserve(&fr, 1 << 20, &p, &avail), 0);
	assert_true(avail >= 104);
	assert_true(avail <= 4096);
	rpc_framer_done(&fr);
	/* exactly max is fine */
	{
		uint8_t buf[4 + 100];
		const uint8_t *m;
		size_t ml;

		rpc_frame_put_header(buf, 100);
		memset(buf + 4, 'a', 100);
		rpc_framer_init(&fr, 100);
		feed(&fr, buf, sizeof(buf));
		assert_int_equal(rpc_framer_next(&fr, &m, &ml), 1);
		assert_int_equal(ml, 100);
		rpc_framer_done(&fr);
	}
}

static void test_blocking(void **state)
{
	int sv[2];
	uint8_t *msg = NULL;
	size_t len = 0;
	int64_t dl = mono_usec() + 2 * USEC_PER_SEC;

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	assert_int_equal(rpc_frame_send(sv[0], "ping", 4, -1, dl), 0);
	assert_int_equal(rpc_frame_recv(sv[1], 100, dl, &msg, &len), 0);
	assert_int_equal(len, 4);
	assert_memory_equal(msg, "ping", 4);
	free(msg);
	msg = NULL;

	/* oversized for the receiver */
	assert_int_equal(rpc_frame_send(sv[0], "0123456789", 10, -1, dl), 0);
	assert_int_equal(rpc_frame_recv(sv[1], 9, dl, &msg, &len), -EMSGSIZE);
	{
		/* the stream is unusable after that (the client disconnects); drain the
		 * record (the header may or may not have been consumed) */
		char drain[14];
		int64_t until = mono_usec() + USEC_PER_SEC;

		assert_int_equal(fcntl(sv[1], F_SETFL, O_NONBLOCK), 0);
		while (mono_usec() < until && read(sv[1], drain, sizeof(drain)) > 0)
			;
		assert_int_equal(fcntl(sv[1], F_SETFL, 0), 0);
	}
	/* zero-length refused on the sending side too */
	assert_int_equal(rpc_frame_send(sv[0], "", 0, -1, dl), -EMSGSIZE);

	/* timeout: nothing comes */
	assert_int_equal(fcntl(sv[1], F_SETFL, O_NONBLOCK), 0);
	assert_int_equal(rpc_frame_recv(sv[1], 100, mono_usec() + 50 * USEC_PER_MSEC, &msg, &len),
			 -ETIMEDOUT);

	/* truncated: the peer closes in the middle of a record */
	assert_int_equal(write(sv[0], "\x80\0\0\x08" "abc", 7), 7);
	close(sv[0]);
	assert_int_equal(rpc_frame_recv(sv[1], 100, dl, &msg, &len), -ECONNRESET);
	/* and closed before anything: EPIPE */
	assert_int_equal(rpc_frame_recv(sv[1], 100, dl, &msg, &len), -EPIPE);
	assert_null(msg);
	close(sv[1]);
}

static void test_pass_fd(void **state)
{
	int sv[2], fds[UNIX_MAX_FDS], dir;
	size_t nfds = 0;
	uint8_t buf[64];
	struct stat a, b;
	struct ucred uc;
	ssize_t n;

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	dir = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(dir >= 0);
	assert_int_equal(rpc_frame_send(sv[0], "dirfd", 5, dir, -1), 0);
	n = unix_recv_fds(sv[1], buf, sizeof(buf), fds, ARRAY_SIZE(fds), &nfds);
	assert_true(n >= 4);
	assert_int_equal(nfds, 1);
	assert_int_equal(fstat(dir, &a), 0);
	assert_int_equal(fstat(fds[0], &b), 0);
	assert_int_equal(a.st_ino, b.st_ino);
	assert_int_equal(a.st_dev, b.st_dev);
	assert_true(fcntl(fds[0], F_GETFD) & FD_CLOEXEC);
	close(fds[0]);
	close(dir);

	assert_int_equal(unix_peer_cred(sv[1], &uc), 0);
	assert_int_equal(uc.pid, getpid());
	assert_int_equal(uc.uid, getuid());
	close(sv[0]);
	close(sv[1]);
}

static void test_listen_connect(void **state)
{
	char dir[] = "/tmp/nfskeys-frame.XXXXXX", path[128], longp[200];
	int l, c;
	struct stat st;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/s.sock", dir);
	assert_int_equal(unix_connect(path, -1, &c), -ENOENT);
	assert_int_equal(unix_listen(path, 0666, 8, &l), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0666);
	assert_int_equal(unix_connect(path, -1, &c), 0);
	close(c);
	close(l);
	/* a stale socket is replaced; a regular file is not */
	assert_int_equal(unix_listen(path, 0600, 8, &l), 0);
	close(l);
	unlink(path);
	close(open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600));
	assert_int_equal(unix_listen(path, 0600, 8, &l), -EEXIST);
	unlink(path);
	memset(longp, 'x', sizeof(longp) - 1);
	longp[sizeof(longp) - 1] = 0;
	assert_int_equal(unix_listen(longp, 0600, 8, &l), -ENAMETOOLONG);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_header),
		cmocka_unit_test(test_framer_split),
		cmocka_unit_test(test_framer_bad),
		cmocka_unit_test(test_framer_bounded),
		cmocka_unit_test(test_blocking),
		cmocka_unit_test(test_pass_fd),
		cmocka_unit_test(test_listen_connect),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
