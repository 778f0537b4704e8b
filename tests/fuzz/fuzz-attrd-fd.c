/* libFuzzer target: the descriptor-passing path of nfskeys-attrd's server.  A real
 * common/rpc-server.c (accept_fds, as attrd) on a real AF_UNIX socket and event loop;
 * one client sends the fuzzed byte stream in fuzzed chunks, with a descriptor of a
 * fuzzed type (none, O_PATH directory, O_RDONLY directory, O_PATH file, regular file,
 * pipe, socket, O_PATH symlink, /dev/null) attached to a fuzzed chunk, sometimes two.
 * The dispatcher does attrd's first steps for SET/UNSET (strict argument decode, take
 * the descriptor, attr_fd_stat, directory check) and answers every call.  Checked:
 * only an O_PATH directory is ever handed to a call, and only to a call whose bytes
 * came with it; every descriptor the server received is taken or counted refused; no
 * descriptor leaks (the process has as many open after the input as before); the
 * server ends the connection at the client's EOF or at a bad record. */
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "fuzz-rpc.h"
#include "evloop.h"
#include "fd-closer.h"
#include "rpc-args.h"
#include "rpc-server.h"
#include "time-util.h"
#include "unix-socket.h"
#include "attr.h"
#include "nfskeys-attr-daemon.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum fd_kind { FD_NONE, FD_PATH_DIR, FD_RDONLY_DIR, FD_PATH_FILE, FD_FILE, FD_PIPE,
	       FD_SOCKET, FD_PATH_SYMLINK, FD_DEVNULL, _FD_KIND_MAX };

static char dir[] = "/tmp/nfskeys-fuzz-fd.XXXXXX";
static char sock_path[sizeof(dir) + 16];
static struct evloop *loop;
static struct rpc_server *srv;

/* per input */
static unsigned taken, taken_wrong, calls;
static int client = -1;
static struct evio *client_io;
static enum fd_kind sent_kind;
static uint64_t fd_end; /* stream offset where the chunk carrying the descriptors ends */
static bool done;

static void cleanup(void)
{
	char p[sizeof(dir) + 32];

	srv = rpc_server_free(srv);
	loop = evloop_free(loop);
	unlink(sock_path);
	snprintf(p, sizeof(p), "%s/file", dir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/link", dir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/sub", dir);
	rmdir(p);
	rmdir(dir);
}

static int open_kind(enum fd_kind k, int *ret_other)
{
	char p[sizeof(dir) + 32];
	int sv[2];

	*ret_other = -1;
	switch (k) {
	case FD_PATH_DIR:
		snprintf(p, sizeof(p), "%s/sub", dir);
		return open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
	case FD_RDONLY_DIR:
		snprintf(p, sizeof(p), "%s/sub", dir);
		return open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	case FD_PATH_FILE:
		snprintf(p, sizeof(p), "%s/file", dir);
		return open(p, O_PATH | O_CLOEXEC);
	case FD_FILE:
		snprintf(p, sizeof(p), "%s/file", dir);
		return open(p, O_RDONLY | O_CLOEXEC);
	case FD_PIPE:
		if (pipe2(sv, O_CLOEXEC) < 0)
			return -1;
		*ret_other = sv[1];
		return sv[0];
	case FD_SOCKET:
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
			return -1;
		*ret_other = sv[1];
		return sv[0];
	case FD_PATH_SYMLINK:
		snprintf(p, sizeof(p), "%s/link", dir);
		return open(p, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	case FD_DEVNULL:
		return open("/dev/null", O_RDWR | O_CLOEXEC);
	default:
		return -1;
	}
}

static unsigned count_fds(void)
{
	unsigned n = 0;

	for (int fd = 0; fd < 1024; fd++)
		n += fcntl(fd, F_GETFD) >= 0;
	return n;
}

/* attrd's first steps with the descriptor of a change (take_dir, nfskeys-attrd.c) */
static void with_dir(struct rpc_request *req)
{
	struct stat st;
	int fd, fl;

	if (rpc_request_take_fd(req, &fd) < 0)
		return;
	taken++;
	fl = fcntl(fd, F_GETFL);
	/* only an O_PATH directory may ever reach a call */
	check(fl >= 0 && (fl & O_PATH) && (fl & O_DIRECTORY));
	if (sent_kind != FD_PATH_DIR)
		taken_wrong++;
	/* it came with this call's bytes: a read ends with the chunk that carries
	 * descriptors, so the call began before that chunk ended */
	check(req->msg_start < fd_end);
	check(attr_fd_stat(fd, &st) == 0 && S_ISDIR(st.st_mode));
	close(fd);
}

static void dispatch(struct rpc_server *s, struct rpc_request *req, XDR *args, void *ud)
{
	calls++;
	switch (req->call.proc) {
	case ATTRD_SET: {
		attrd_set_args a = {};

		if (!rpc_args_decode(args, (xdrproc_t)xdr_attrd_set_args, &a)) {
			rpc_request_error(req, RPC_STATUS_GARBAGE_ARGS);
			return;
		}
		with_dir(req);
		xdr_free((xdrproc_t)xdr_attrd_set_args, (char *)&a);
		break;
	}
	case ATTRD_UNSET: {
		attrd_unset_args a = {};

		if (!rpc_args_decode(args, (xdrproc_t)xdr_attrd_unset_args, &a)) {
			rpc_request_error(req, RPC_STATUS_GARBAGE_ARGS);
			return;
		}
		with_dir(req);
		xdr_free((xdrproc_t)xdr_attrd_unset_args, (char *)&a);
		break;
	}
	case ATTRD_NULL:
	case ATTRD_PING:
	case ATTRD_LOOKUP:
	case ATTRD_STATS:
		break; /* calls that take no descriptor: the server drops one sent with them */
	default:
		rpc_request_error(req, RPC_STATUS_PROC_UNAVAIL);
		return;
	}
	rpc_request_reply(req, NULL, NULL);
}

/* The client reads the replies until the server closes the connection. */
static void client_event(struct evloop *l, struct evio *io, int fd, uint32_t events, void *ud)
{
	char buf[65536];
	ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);

	if (n > 0 || (n < 0 && errno == EAGAIN))
		return;
	done = true;
	evloop_exit(l, 0);
}

static void guard_fired(struct evloop *l, struct evtimer *t, void *ud)
{
	/* the server never ended a connection whose client had sent everything and shut
	 * down its side */
	check(!"the server did not end the connection within 20 s");
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct rpc_server_limits lim = { .max_msg = 256 * 1024, .accept_fds = true };
	char p[sizeof(dir) + 32];
	int lfd, fd;

	if (!mkdtemp(dir))
		abort();
	atexit(cleanup);
	snprintf(sock_path, sizeof(sock_path), "%s/s", dir);
	snprintf(p, sizeof(p), "%s/sub", dir);
	check(mkdir(p, 0755) == 0);
	snprintf(p, sizeof(p), "%s/file", dir);
	fd = open(p, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
	check(fd >= 0);
	close(fd);
	snprintf(p, sizeof(p), "%s/link", dir);
	check(symlink("sub", p) == 0);
	check(evloop_new(&loop) == 0);
	check(unix_listen(sock_path, 0600, 16, &lfd) == 0);
	check(rpc_server_new(loop, lfd, NFSKEYS_ATTRD_PROG, NFSKEYS_ATTRD_V1, &lim, dispatch,
			     NULL, &srv) == 0);
	return 0;
}

/* data[0]: descriptor kind (low nibble), a second one too (bit 4); data[1]: the chunk
 * that carries it; data[2]: chunk size - 1; the rest is the stream. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rpc_server_stats st0, st1;
	struct evtimer *guard = NULL;
	unsigned long total;
	unsigned pending, fds0, fds1, nsent = 0, chunk_no = 0, fd_chunk;
	size_t chunk, off = 0;
	int sv_other[2] = { -1, -1 }, pass[2] = { -1, -1 };
	bool two;

	if (!loop)
		LLVMFuzzerInitialize(NULL, NULL);
	if (size < 4)
		return 0;
	sent_kind = (enum fd_kind)(data[0] & 0x0f) % _FD_KIND_MAX;
	two = data[0] & 0x10;
	fd_chunk = data[1] % 8;
	chunk = (size_t)data[2] + 1;
	data += 3;
	size -= 3;
	if (size > 16384)
		size = 16384; /* the whole stream fits the socket buffer */
	fds0 = count_fds();
	rpc_server_get_stats(srv, &st0);
	taken = taken_wrong = calls = 0;
	done = false;
	fd_end = 0;

	client = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	check(client >= 0);
	{
		struct sockaddr_un sa = { .sun_family = AF_UNIX };
		int bufsz = 1 << 20;

		strcpy(sa.sun_path, sock_path);
		setsockopt(client, SOL_SOCKET, SO_SNDBUF, &bufsz, sizeof(bufsz));
		check(connect(client, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	}
	if (sent_kind != FD_NONE) {
		pass[0] = open_kind(sent_kind, &sv_other[0]);
		check(pass[0] >= 0);
		if (two) {
			pass[1] = open_kind(sent_kind, &sv_other[1]);
			check(pass[1] >= 0);
		}
	}
	do {
		size_t n = MIN(chunk, size - off);
		struct iovec iov = { .iov_base = (void *)(data + off), .iov_len = n };
		union {
			char buf[CMSG_SPACE(2 * sizeof(int))];
			struct cmsghdr align;
		} u;
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

		if (pass[0] >= 0 && chunk_no == fd_chunk) {
			struct cmsghdr *c;
			int k = pass[1] >= 0 ? 2 : 1;

			memset(&u, 0, sizeof(u));
			mh.msg_control = u.buf;
			mh.msg_controllen = CMSG_SPACE(k * sizeof(int));
			c = CMSG_FIRSTHDR(&mh);
			c->cmsg_level = SOL_SOCKET;
			c->cmsg_type = SCM_RIGHTS;
			c->cmsg_len = CMSG_LEN(k * sizeof(int));
			memcpy(CMSG_DATA(c), pass, k * sizeof(int));
			nsent = k;
			fd_end = off + n;
		}
		if (sendmsg(client, &mh, MSG_NOSIGNAL) < 0) {
			check(errno == EPIPE || errno == ECONNRESET);
			nsent = mh.msg_control ? 0 : nsent;
			break;
		}
		off += n;
		chunk_no++;
	} while (off < size);
	/* the chunk chosen may lie past the end: the descriptors then go with no bytes */
	for (int i = 0; i < 2; i++) {
		if (pass[i] >= 0)
			close(pass[i]);
		if (sv_other[i] >= 0)
			close(sv_other[i]);
	}
	shutdown(client, SHUT_WR);

	check(evloop_add_io(loop, client, EPOLLIN, client_event, NULL, &client_io) == 0);
	check(evloop_add_timer(loop, mono_usec() + 20 * USEC_PER_SEC, guard_fired, NULL,
			       &guard) == 0);
	while (!done)
		check(evloop_run(loop) >= 0);
	evloop_timer_free(guard);
	evloop_io_free(client_io);
	client_io = NULL;
	close(client);
	client = -1;

	rpc_server_get_stats(srv, &st1);
	check(st1.current == st0.current); /* the connection ended */
	check(taken_wrong == 0);
	check(taken <= nsent);
	if (sent_kind != FD_PATH_DIR)
		check(taken == 0);
	/* everything received was either taken or refused (the rest the kernel discarded
	 * unopened, with the connection or without a control buffer) */
	check(taken + (st1.fds_refused - st0.fds_refused) <= nsent);
	/* the closer thread has closed what it was given, and nothing else stays open */
	for (int i = 0; i < 2000; i++) {
		fd_closer_stats(&total, &pending);
		if (!pending)
			break;
		usleep(1000);
	}
	check(pending == 0);
	fds1 = count_fds();
	check(fds1 == fds0);
	return 0;
}
