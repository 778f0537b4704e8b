/* AF_UNIX helpers: listen/connect, SO_PEERCRED and SCM_RIGHTS descriptor passing, used by
 * the RPC server and client (rpc-server.c, rpc-client.c) of both daemons. */
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "macros.h"
#include "time-util.h"
#include "unix-socket.h"

static int make_addr(const char *path, struct sockaddr_un *sa, socklen_t *ret_len)
{
	size_t l;

	if (!path || !*path)
		return -EINVAL;
	l = strlen(path);
	if (l > UNIX_PATH_MAX_LEN || l >= sizeof(sa->sun_path))
		return -ENAMETOOLONG;
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	memcpy(sa->sun_path, path, l);
	*ret_len = offsetof(struct sockaddr_un, sun_path) + l + 1;
	return 0;
}

int unix_listen(const char *path, mode_t mode, int backlog, int *ret_fd)
{
	_cleanup_close_ int fd = -1;
	struct sockaddr_un sa;
	socklen_t salen;
	struct stat st;
	int r;

	r = make_addr(path, &sa, &salen);
	if (r < 0)
		return r;
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode))
			return -EEXIST;
		/* A socket left by a crashed daemon refuses connections and is replaced; one a
		 * live daemon still listens on is not taken from it. */
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (fd < 0)
			return negerrno();
		if (connect(fd, (struct sockaddr *)&sa, salen) == 0 || errno == EAGAIN ||
		    errno == EINPROGRESS)
			return -EADDRINUSE;
		close(fd);
		fd = -1;
		if (unlink(path) < 0 && errno != ENOENT)
			return negerrno();
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return negerrno();
	if (bind(fd, (struct sockaddr *)&sa, salen) < 0)
		return negerrno();
	if (chmod(path, mode) < 0)
		return negerrno();
	if (listen(fd, backlog) < 0)
		return negerrno();
	*ret_fd = TAKE_FD(fd);
	return 0;
}

int unix_connect(const char *path, int64_t deadline, int *ret_fd)
{
	_cleanup_close_ int fd = -1;
	struct sockaddr_un sa;
	socklen_t salen, elen;
	int r, err;

	r = make_addr(path, &sa, &salen);
	if (r < 0)
		return r;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return negerrno();
	if (connect(fd, (struct sockaddr *)&sa, salen) == 0)
		goto done;
	if (errno != EAGAIN && errno != EINPROGRESS)
		return negerrno();
	/* A full backlog: wait for the listener to accept. */
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLOUT };

		r = poll(&p, 1, deadline_poll_ms(deadline));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return negerrno();
		if (r == 0)
			return -ETIMEDOUT;
		break;
	}
	elen = sizeof(err);
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) < 0)
		return negerrno();
	if (err)
		return -err;
done:
	*ret_fd = TAKE_FD(fd);
	return 0;
}

int unix_peer_cred(int fd, struct ucred *ret_cred)
{
	struct ucred uc;
	socklen_t l = sizeof(uc);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &l) < 0)
		return negerrno();
	if (l != sizeof(uc))
		return -EIO;
	*ret_cred = uc;
	return 0;
}

pid_t unix_listener_pid(const char *path)
{
	_cleanup_close_ int fd = -1;
	struct ucred uc;

	/* the listener's credentials, as listen() recorded them, reach a connected client
	 * before (and without) any accept() */
	if (unix_connect(path, mono_usec() + USEC_PER_SEC, &fd) < 0 || unix_peer_cred(fd, &uc) < 0)
		return 0;
	return uc.pid > 0 ? uc.pid : 0;
}

ssize_t unix_send_fd(int sock, const void *buf, size_t len, int pass_fd)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int))];
	} control;
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t n;

	if (pass_fd >= 0) {
		struct cmsghdr *cm;

		memset(&control, 0, sizeof(control));
		mh.msg_control = control.buf;
		mh.msg_controllen = sizeof(control.buf);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &pass_fd, sizeof(int));
	}
	do
		n = sendmsg(sock, &mh, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	return n < 0 ? negerrno() : n;
}

ssize_t unix_recv_fds(int sock, void *buf, size_t len, int *fds, size_t max_fds,
		      size_t *ret_nfds)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int) * UNIX_MAX_FDS)];
	} control;
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr mh = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = control.buf,
		.msg_controllen = sizeof(control.buf),
	};
	size_t nfds = 0;
	ssize_t n;

	/* No room for descriptors: the kernel drops any that came without ever installing
	 * them here (no close() of ours, so no FLUSH of a FUSE file can block us). */
	if (!fds || max_fds == 0) {
		mh.msg_control = NULL;
		mh.msg_controllen = 0;
	}

	do
		n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return negerrno();
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
		size_t k;

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < k; i++) {
			int f;

			memcpy(&f, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
			if (fds && nfds < max_fds)
				fds[nfds++] = f;
			else
				close(f);
		}
	}
	if (ret_nfds)
		*ret_nfds = nfds;
	return n;
}
