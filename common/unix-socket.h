/* AF_UNIX stream socket helpers for the daemons and their clients: listening, connecting
 * with a deadline, the caller's identity (SO_PEERCRED) and descriptor passing
 * (SCM_RIGHTS).  All sockets are created O_CLOEXEC.  Internal; never installed. */
#pragma once

#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

/* Longest path a sockaddr_un holds (without the NUL). */
#define UNIX_PATH_MAX_LEN 107

/* Most descriptors accepted in one message; extra ones are closed on receipt. */
#define UNIX_MAX_FDS 4

/* Create a nonblocking listening socket bound to path with the given mode (chmod after
 * bind).  A stale socket file at path is removed first; any other kind of file there is
 * an error (-EEXIST).  -ENAMETOOLONG when path does not fit a sockaddr_un. */
int unix_listen(const char *path, mode_t mode, int backlog, int *ret_fd);

/* Connect a nonblocking stream socket to path, waiting at most until deadline
 * (CLOCK_MONOTONIC usec, see time-util.h; < 0 waits forever).  -ENOENT or
 * -ECONNREFUSED when nobody listens, -ETIMEDOUT when the deadline passes. */
int unix_connect(const char *path, int64_t deadline, int *ret_fd);

/* The credentials of the process that connected the socket (SO_PEERCRED). */
int unix_peer_cred(int fd, struct ucred *ret_cred);

/* The pid of the process listening on path (SO_PEERCRED of a connection to it), or 0
 * when nobody answers within a second or its pid is not visible here (another pid
 * namespace). */
pid_t unix_listener_pid(const char *path);

/* sendmsg() of buf with, when pass_fd >= 0, that descriptor attached (SCM_RIGHTS).
 * Never raises SIGPIPE.  Returns the bytes sent (possibly short) or -errno. */
ssize_t unix_send_fd(int sock, const void *buf, size_t len, int pass_fd);

/* recvmsg() into buf; descriptors that arrive are stored in fds[] (at most max_fds, the
 * rest closed, all O_CLOEXEC) and counted in *ret_nfds.  Returns the bytes read (0 at
 * end of stream) or -errno; -EAGAIN when nothing is ready on a nonblocking socket.
 * fds NULL or max_fds 0: no descriptor is ever installed (the kernel discards them). */
ssize_t unix_recv_fds(int sock, void *buf, size_t len, int *fds, size_t max_fds,
		      size_t *ret_nfds);
