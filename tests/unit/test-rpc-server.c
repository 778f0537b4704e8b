/* The RPC server transport and the blocking client against each other over a real
 * AF_UNIX socket: calls and error statuses, slow calls that do not stall others, the
 * per-client limits (oversized, malformed, truncated and idle clients are dropped while
 * others are served), client timeouts and reconnects, SO_PEERCRED and descriptor
 * passing, no allocation per call, the PING/RELOAD helpers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "evloop.h"
#include "macros.h"
#include "rpc-client.h"
#include "rpc-frame.h"
#include "rpc-server.h"
#include "time-util.h"
#include "unix-socket.h"

#define PROG 0x20000999
#define VERS 1
enum { P_NULL, P_ECHO, P_SLOW, P_FDINO, P_WHOAMI, P_EXIT, P_PING, P_RELOAD };

/* Allocations by our code linked into this program (the RPC server and client; linked
 * with -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc, tests/Makemodule.am). */
static atomic_ulong allocs;
void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n)
{
	allocs++;
	return __real_malloc(n);
}
void *__wrap_calloc(size_t n, size_t size)
{
	allocs++;
	return __real_calloc(n, size);
}
void *__wrap_realloc(void *p, size_t n)
{
	allocs++;
	return __real_realloc(p, n);
}

/* The shapes both daemons give PING and RELOAD results (rpc_client_ping/_reload). */
struct ping_res {
	char *release;
	uint32_t pid;
	uint64_t generation, extra;
	char *tail; /* a later field the client does not read */
};

static bool_t xdr_ping_res(XDR *x, struct ping_res *p)
{
	return xdr_string(x, &p->release, 32) && xdr_uint32_t(x, &p->pid) &&
	       xdr_uint64_t(x, &p->generation) && xdr_uint64_t(x, &p->extra) &&
	       xdr_string(x, &p->tail, 64);
}

struct reload_res {
	int status;
	char *message;
	uint64_t generation;
};

static bool_t xdr_reload_res(XDR *x, struct reload_res *r)
{
	return xdr_int(x, &r->status) && xdr_string(x, &r->message, 512) &&
	       xdr_uint64_t(x, &r->generation);
}

static struct {
	char dir[64];
	char path[128];
	struct evloop *loop;
	struct rpc_server *srv;
	pthread_t thread;
} T;

struct slow {
	struct rpc_request *req;
	uint32_t v;
	struct evtimer *t;
};

static void slow_done(struct evloop *loop, struct evtimer *t, void *ud)
{
	struct slow *s = ud;

	rpc_request_reply(s->req, (xdrproc_t)xdr_uint32_t, &s->v);
	evloop_timer_free(t);
	free(s);
}

static void dispatch(struct rpc_server *srv, struct rpc_request *req, XDR *args, void *ud)
{
	uint32_t v = 0;

	switch (req->call.proc) {
	case P_NULL:
		rpc_request_reply(req, NULL, NULL);
		return;
	case P_ECHO:
		if (!xdr_uint32_t(args, &v)) {
			rpc_request_error(req, RPC_STATUS_GARBAGE_ARGS);
			return;
		}
		v++;
		rpc_request_reply(req, (xdrproc_t)xdr_uint32_t, &v);
		return;
	case P_PING: {
		struct ping_res p = { .release = "9.9", .pid = 1234, .generation = 7,
				      .extra = UINT64_C(1) << 40, .tail = "not read" };

		rpc_request_reply(req, (xdrproc_t)xdr_ping_res, &p);
		return;
	}
	case P_RELOAD: {
		/* refused the first time, done the second */
		static unsigned calls;
		struct reload_res r = { .status = calls++ % 2 ? 0 : -EINVAL,
					.message = calls % 2 ? "[X] Y: bad" : "loaded",
					.generation = 5 };

		rpc_request_reply(req, (xdrproc_t)xdr_reload_res, &r);
		return;
	}
	case P_SLOW: {
		struct slow *s = calloc(1, sizeof(*s));

		if (!s || !xdr_uint32_t(args, &v)) {
			free(s);
			rpc_request_error(req, RPC_STATUS_GARBAGE_ARGS);
			return;
		}
		s->req = req;
		s->v = v;
		evloop_add_timer(T.loop, evloop_now(T.loop) + v * USEC_PER_MSEC, slow_done, s, &s->t);
		return;
	}
	case P_FDINO: {
		struct stat st;
		int fd;

		if (rpc_request_take_fd(req, &fd) < 0) {
			rpc_request_error(req, RPC_STATUS_GARBAGE_ARGS);
			return;
		}
		v = fstat(fd, &st) == 0 ? (uint32_t)st.st_ino : 0;
		close(fd);
		rpc_request_reply(req, (xdrproc_t)xdr_uint32_t, &v);
		return;
	}
	case P_WHOAMI:
		v = req->peer.uid;
		rpc_request_reply(req, (xdrproc_t)xdr_uint32_t, &v);
		return;
	case P_EXIT:
		evloop_exit(T.loop, 0);
		rpc_request_reply(req, NULL, NULL);
		return;
	default:
		rpc_request_error(req, RPC_STATUS_PROC_UNAVAIL);
	}
}

static void *loop_thread(void *arg)
{
	evloop_run(T.loop);
	return NULL;
}

static int setup(void **state)
{
	struct rpc_server_limits lim = { .max_msg = 1024, .max_inflight = 4,
					 .idle_timeout_ms = 300, .accept_fds = true };
	int lfd;

	snprintf(T.dir, sizeof(T.dir), "/tmp/nfskeys-rpcsrv.XXXXXX");
	assert_non_null(mkdtemp(T.dir));
	snprintf(T.path, sizeof(T.path), "%s/s.sock", T.dir);
	assert_int_equal(evloop_new(&T.loop), 0);
	assert_int_equal(unix_listen(T.path, 0666, 64, &lfd), 0);
	assert_int_equal(rpc_server_new(T.loop, lfd, PROG, VERS, &lim, dispatch, NULL, &T.srv), 0);
	assert_int_equal(pthread_create(&T.thread, NULL, loop_thread, NULL), 0);
	return 0;
}

static int teardown(void **state)
{
	struct rpc_client *c;

	assert_int_equal(rpc_client_new(T.path, PROG, VERS, 2000, 0, &c), 0);
	assert_int_equal(rpc_client_call(c, P_EXIT, NULL, NULL, NULL, NULL), 0);
	rpc_client_free(c);
	pthread_join(T.thread, NULL);
	rpc_server_free(T.srv);
	evloop_free(T.loop);
	unlink(T.path);
	rmdir(T.dir);
	return 0;
}

static struct rpc_client *client(int timeout_ms)
{
	struct rpc_client *c = NULL;

	assert_int_equal(rpc_client_new(T.path, PROG, VERS, timeout_ms, 0, &c), 0);
	return c;
}

static void echo_ok(struct rpc_client *c, uint32_t v)
{
	uint32_t out = 0;

	assert_int_equal(rpc_client_call(c, P_ECHO, (xdrproc_t)xdr_uint32_t, &v,
					 (xdrproc_t)xdr_uint32_t, &out), 0);
	assert_int_equal(out, v + 1);
}

static void test_calls(void **state)
{
	struct rpc_client *c = client(2000), *c2 = client(2000), *bad;
	uint32_t x0 = rpc_client_next_xid(c), v = 1;

	echo_ok(c, 41);
	assert_int_equal(rpc_client_next_xid(c), x0 + 1);
	/* two clients start at different random xids (fails with probability 2^-32) */
	assert_int_not_equal(rpc_client_next_xid(c2), x0 + 1);
	assert_int_equal(rpc_client_call(c, P_NULL, NULL, NULL, NULL, NULL), 0);
	assert_int_equal(rpc_client_call(c, 99, NULL, NULL, NULL, NULL), -EOPNOTSUPP);
	/* no arguments where one is expected */
	assert_int_equal(rpc_client_call(c, P_ECHO, NULL, NULL, (xdrproc_t)xdr_uint32_t, &v),
			 -EINVAL);
	echo_ok(c, 1); /* the connection survives error replies */
	assert_int_equal(rpc_client_call(c, P_WHOAMI, NULL, NULL, (xdrproc_t)xdr_uint32_t, &v), 0);
	assert_int_equal(v, getuid());

	assert_int_equal(rpc_client_new(T.path, PROG, VERS + 1, 2000, 0, &bad), 0);
	assert_int_equal(rpc_client_call(bad, P_NULL, NULL, NULL, NULL, NULL), -EPROTONOSUPPORT);
	rpc_client_free(bad);
	assert_int_equal(rpc_client_new(T.path, PROG + 1, VERS, 2000, 0, &bad), 0);
	assert_int_equal(rpc_client_call(bad, P_NULL, NULL, NULL, NULL, NULL), -EPROTONOSUPPORT);
	rpc_client_free(bad);
	assert_int_equal(rpc_client_new("/nonexistent/nfskeys.sock", PROG, VERS, 200, 0, &bad), 0);
	assert_int_equal(rpc_client_call(bad, P_NULL, NULL, NULL, NULL, NULL), -ENOENT);
	rpc_client_free(bad);
	rpc_client_free(c);
	rpc_client_free(c2);
}

/* Pipelined calls: more than one window, replies out of order, per-call statuses. */
static void test_batch(void **state)
{
	struct rpc_client *c = client(5000);
	uint32_t in[150], out[150], x0 = rpc_client_next_xid(c);
	int st[150];

	for (unsigned i = 0; i < 150; i++)
		in[i] = i * 3;
	memset(out, 0, sizeof(out));
	assert_int_equal(rpc_client_call_batch(c, P_ECHO, (xdrproc_t)xdr_uint32_t, in,
					       sizeof(in[0]), 150, (xdrproc_t)xdr_uint32_t, out,
					       sizeof(out[0]), st), 0);
	for (unsigned i = 0; i < 150; i++) {
		assert_int_equal(st[i], 0);
		assert_int_equal(out[i], i * 3 + 1);
	}
	assert_int_equal(rpc_client_next_xid(c), x0 + 150);
	/* the later calls finish first (delays 40, 35, ... ms) */
	for (unsigned i = 0; i < 8; i++)
		in[i] = 40 - 5 * i;
	memset(out, 0, sizeof(out));
	assert_int_equal(rpc_client_call_batch(c, P_SLOW, (xdrproc_t)xdr_uint32_t, in,
					       sizeof(in[0]), 8, (xdrproc_t)xdr_uint32_t, out,
					       sizeof(out[0]), st), 0);
	for (unsigned i = 0; i < 8; i++) {
		assert_int_equal(st[i], 0);
		assert_int_equal(out[i], in[i]);
	}
	/* an error status per call, the connection stays usable */
	assert_int_equal(rpc_client_call_batch(c, 99, NULL, NULL, 0, 3, NULL, NULL, 0, st), 0);
	assert_int_equal(st[0], -EOPNOTSUPP);
	assert_int_equal(st[2], -EOPNOTSUPP);
	echo_ok(c, 7);
	assert_int_equal(rpc_client_call_batch(c, P_ECHO, NULL, NULL, 0, 0, NULL, NULL, 0, NULL), 0);
	rpc_client_free(c);
}

static void test_slow_does_not_block(void **state)
{
	struct rpc_client *slow = client(2000), *fast = client(2000);
	int64_t t0;
	uint32_t ms = 400, out;
	pid_t pid;
	int st;

	/* The slow call runs in a child process; the fast client must not wait for it. */
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int r = rpc_client_call(slow, P_SLOW, (xdrproc_t)xdr_uint32_t, &ms,
					(xdrproc_t)xdr_uint32_t, &out);
		_exit(r == 0 && out == ms ? 0 : 1);
	}
	usleep(50000);
	t0 = mono_usec();
	for (int i = 0; i < 100; i++)
		echo_ok(fast, i);
	assert_true(mono_usec() - t0 < 300 * USEC_PER_MSEC);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	rpc_client_free(slow);
	rpc_client_free(fast);
}

static void test_timeout_and_reconnect(void **state)
{
	struct rpc_client *c = client(100);
	uint32_t ms = 300, out;
	int64_t t0 = mono_usec();

	assert_int_equal(rpc_client_call(c, P_SLOW, (xdrproc_t)xdr_uint32_t, &ms,
					 (xdrproc_t)xdr_uint32_t, &out), -ETIMEDOUT);
	assert_true(mono_usec() - t0 < 250 * USEC_PER_MSEC);
	/* the next call uses a fresh connection, never the late reply */
	echo_ok(c, 7);
	/* the server drops the idle connection after 300 ms; the client reconnects once */
	usleep(450000);
	echo_ok(c, 8);
	rpc_client_free(c);
}

/* A raw connection for misbehaving clients. */
static int raw_connect(void)
{
	int fd;

	assert_int_equal(unix_connect(T.path, -1, &fd), 0);
	return fd;
}

/* Wait until the server closes fd (read returns 0 or an error); returns ms waited. */
static int wait_closed(int fd, int max_ms)
{
	int64_t t0 = mono_usec();
	char buf[256];

	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int left = max_ms - (mono_usec() - t0) / 1000;

		if (left <= 0 || poll(&p, 1, left) <= 0)
			return -1;
		if (read(fd, buf, sizeof(buf)) <= 0)
			return (mono_usec() - t0) / 1000;
	}
}

static void test_bad_clients(void **state)
{
	struct rpc_client *good = client(2000);
	struct rpc_server_stats st0, st1;
	int idle, partial, big, zero, frag, garbage;

	usleep(10000);
	rpc_server_get_stats(T.srv, &st0);
	idle = raw_connect();                     /* connects, sends nothing */
	partial = raw_connect();                  /* half a message, then nothing */
	assert_int_equal(write(partial, "\x80\0\0\x40" "abcd", 8), 8);
	big = raw_connect();                      /* above the 1024-byte cap */
	assert_int_equal(write(big, "\x80\0\x10\0", 4), 4);
	zero = raw_connect();
	assert_int_equal(write(zero, "\x80\0\0\0", 4), 4);
	frag = raw_connect();                     /* multi-fragment record */
	assert_int_equal(write(frag, "\0\0\0\x04" "abcd", 8), 8);
	garbage = raw_connect();                  /* well framed, not an RPC call */
	assert_int_equal(write(garbage, "\x80\0\0\x08" "\0\0\0\x01\0\0\0\x01", 12), 12);

	/* The others are served at once while those sit there. */
	for (int i = 0; i < 50; i++)
		echo_ok(good, i);
	assert_true(wait_closed(big, 1000) >= 0);
	assert_true(wait_closed(zero, 1000) >= 0);
	assert_true(wait_closed(frag, 1000) >= 0);
	assert_true(wait_closed(garbage, 1000) >= 0);
	/* idle and stalled clients go after the idle timeout (300 ms) */
	assert_true(wait_closed(idle, 2000) >= 100);
	assert_true(wait_closed(partial, 2000) >= 0);
	echo_ok(good, 99);
	rpc_server_get_stats(T.srv, &st1);
	assert_int_equal(st1.bad_frames - st0.bad_frames, 3);
	assert_int_equal(st1.bad_headers - st0.bad_headers, 1);
	assert_true(st1.idle_closed - st0.idle_closed >= 2);
	close(idle);
	close(partial);
	close(big);
	close(zero);
	close(frag);
	close(garbage);
	rpc_client_free(good);
}

static void test_inflight_limit(void **state)
{
	/* Pipeline 8 slow calls on one connection with max_inflight 4: all are answered
	 * (the rest wait in the buffer), in two waves. */
	int fd = raw_connect();
	int64_t t0 = mono_usec();
	size_t got = 0;

	for (uint32_t i = 0; i < 8; i++) {
		struct rpc_call call = { .xid = 100 + i, .prog = PROG, .vers = VERS,
					 .proc = P_SLOW };
		uint32_t ms = 150;
		uint8_t *msg;
		size_t len;

		assert_int_equal(rpc_build_call(&call, (xdrproc_t)xdr_uint32_t, &ms, 1024, &msg,
						&len), 0);
		assert_int_equal(write(fd, msg, len), (ssize_t)len);
		free(msg);
	}
	while (got < 8) {
		uint8_t *m = NULL;
		size_t ml;

		assert_int_equal(rpc_frame_recv(fd, 1024, mono_usec() + 2 * USEC_PER_SEC, &m, &ml),
				 0);
		free(m);
		got++;
	}
	assert_true(mono_usec() - t0 >= 290 * USEC_PER_MSEC);
	close(fd);
}

static void test_pass_fd(void **state)
{
	struct rpc_client *c = client(2000);
	struct stat st;
	uint32_t ino = 0;
	int dir = open(T.dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	int rdir = open(T.dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int file = open("/dev/null", O_RDONLY | O_CLOEXEC);

	assert_true(dir >= 0 && rdir >= 0 && file >= 0);
	assert_int_equal(fstat(dir, &st), 0);
	assert_int_equal(rpc_client_call_fd(c, P_FDINO, NULL, NULL, dir, (xdrproc_t)xdr_uint32_t,
					    &ino), 0);
	assert_int_equal(ino, (uint32_t)st.st_ino);
	/* without a descriptor the call is refused */
	assert_int_equal(rpc_client_call(c, P_FDINO, NULL, NULL, (xdrproc_t)xdr_uint32_t, &ino),
			 -EINVAL);
	/* only O_PATH directories are taken (a plain descriptor could block the
	 * loop in close() or fstat()); the others are refused at once */
	assert_int_equal(rpc_client_call_fd(c, P_FDINO, NULL, NULL, rdir, (xdrproc_t)xdr_uint32_t,
					    &ino), -EINVAL);
	assert_int_equal(rpc_client_call_fd(c, P_FDINO, NULL, NULL, file, (xdrproc_t)xdr_uint32_t,
					    &ino), -EINVAL);
	/* a descriptor passed with a call that takes none is dropped, not kept for the next */
	assert_int_equal(rpc_client_call_fd(c, P_WHOAMI, NULL, NULL, dir, (xdrproc_t)xdr_uint32_t,
					    &ino), 0);
	assert_int_equal(rpc_client_call(c, P_FDINO, NULL, NULL, (xdrproc_t)xdr_uint32_t, &ino),
			 -EINVAL);
	close(dir);
	close(rdir);
	close(file);
	rpc_client_free(c);
}

/* Steady state allocates nothing: requests come from a per-connection pool, replies are
 * encoded in place, the client keeps its buffers.  (Before the pool: one calloc per call.) */
static void test_no_allocation_per_call(void **state)
{
	struct rpc_client *c = client(5000);
	uint32_t in[150], out[150];
	unsigned long before;
	int st[150];

	for (unsigned i = 0; i < 150; i++)
		in[i] = i;
	/* warm up: connection, buffers, the pool up to max_inflight (4) requests */
	echo_ok(c, 1);
	assert_int_equal(rpc_client_call_batch(c, P_ECHO, (xdrproc_t)xdr_uint32_t, in,
					       sizeof(in[0]), 150, (xdrproc_t)xdr_uint32_t, out,
					       sizeof(out[0]), st),
			 0);
	before = allocs;
	for (unsigned i = 0; i < 200; i++)
		echo_ok(c, i);
	assert_int_equal(rpc_client_call_batch(c, P_ECHO, (xdrproc_t)xdr_uint32_t, in,
					       sizeof(in[0]), 150, (xdrproc_t)xdr_uint32_t, out,
					       sizeof(out[0]), st),
			 0);
	assert_int_equal(out[149], 150);
	assert_int_equal(allocs - before, 0);
	rpc_client_free(c);
}

/* rpc_client_ping and rpc_client_reload decode the shapes both daemons answer. */
static void test_ping_reload(void **state)
{
	struct rpc_client *c = client(2000);
	char rel[8], msg[64];
	uint32_t pid = 0;
	uint64_t gen = 0, extra = 0;

	assert_int_equal(rpc_client_ping(c, P_PING, rel, sizeof(rel), &pid, &gen, &extra), 0);
	assert_string_equal(rel, "9.9");
	assert_int_equal(pid, 1234);
	assert_int_equal(gen, 7);
	assert_true(extra == UINT64_C(1) << 40);
	assert_int_equal(rpc_client_ping(c, P_PING, NULL, 0, NULL, NULL, NULL), 0);
	gen = 0;
	assert_int_equal(rpc_client_reload(c, P_RELOAD, msg, sizeof(msg), &gen), -EINVAL);
	assert_string_equal(msg, "[X] Y: bad");
	assert_int_equal(gen, 0); /* only set on success */
	assert_int_equal(rpc_client_reload(c, P_RELOAD, msg, sizeof(msg), &gen), 0);
	assert_string_equal(msg, "loaded");
	assert_int_equal(gen, 5);
	assert_int_equal(rpc_client_reload(c, P_RELOAD, NULL, 0, NULL), -EINVAL);
	rpc_client_free(c);
}

static void test_many_clients(void **state)
{
	struct rpc_client *cs[32];

	for (size_t i = 0; i < ARRAY_SIZE(cs); i++)
		cs[i] = client(2000);
	for (int round = 0; round < 20; round++)
		for (size_t i = 0; i < ARRAY_SIZE(cs); i++)
			echo_ok(cs[i], round * 100 + i);
	for (size_t i = 0; i < ARRAY_SIZE(cs); i++)
		rpc_client_free(cs[i]);
}

static void post_never(struct evloop *loop, void *ud)
{
	(void)loop;
	(void)ud;
	fail_msg("a post ran although the loop never ran");
}

static void post_drop(void *ud)
{
	(*(int *)ud)++;
}

/* A post the loop never runs (it stops first) goes to its drop function, not lost. */
static void test_post_dropped_at_free(void **state)
{
	struct evloop *loop = NULL;
	int dropped = 0, plain = 0;

	(void)state;
	assert_int_equal(evloop_new(&loop), 0);
	assert_int_equal(evloop_post_owned(loop, post_never, &dropped, post_drop), 0);
	assert_int_equal(evloop_post(loop, post_never, &plain), 0);
	assert_int_equal(evloop_post_owned(loop, post_never, &dropped, post_drop), 0);
	assert_null(evloop_free(loop));
	assert_int_equal(dropped, 2);
	assert_int_equal(plain, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_calls),
		cmocka_unit_test(test_batch),
		cmocka_unit_test(test_slow_does_not_block),
		cmocka_unit_test(test_timeout_and_reconnect),
		cmocka_unit_test(test_bad_clients),
		cmocka_unit_test(test_inflight_limit),
		cmocka_unit_test(test_pass_fd),
		cmocka_unit_test(test_many_clients),
		cmocka_unit_test(test_no_allocation_per_call),
		cmocka_unit_test(test_ping_reload),
		cmocka_unit_test(test_post_dropped_at_free),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
