// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * userns-mount: try to make an NFS mount whose credentials belong to a container's user
 * namespace (tests/kernel/nfs-netns.ktest prints what the kernel says).
 *
 *   userns-mount [--alone | --fsmount-in-container] [-o OPT[,OPT...]] PID SOURCE TARGET
 *
 * NFS is not FS_USERNS_MOUNT: mount_capable() asks for CAP_SYS_ADMIN in the initial user
 * namespace when the superblock is created (fsconfig(FSCONFIG_CMD_CREATE) or mount(2)), so
 * a process in `unshare -Urm` cannot mount it alone (EPERM).  The candidate this program
 * tries splits the new mount API between the container and a privileged broker:
 *
 *   container: fsopen("nfs4") (CAP_SYS_ADMIN over its own mount namespace's user namespace
 *              is enough), fsconfig(source, options); the fs_context keeps the opener's
 *              credentials (fc->cred), user namespace (fc->user_ns) and network namespace;
 *   broker:    receives the fs_context descriptor (SCM_RIGHTS), fsconfig(FSCONFIG_CMD_CREATE)
 *              (its own CAP_SYS_ADMIN passes mount_capable()), fsmount(), and sends the
 *              detached mount back;
 *   container: move_mount() of it onto a directory of its own mount namespace.
 *
 * Debian 12's 6.1 kernel (6.1.192) refuses it at FSCONFIG_CMD_CREATE with EPERM: sget_fc()
 * creates no superblock whose user namespace is not the initial one for a file system
 * without FS_USERNS_MOUNT ("VFS: Mounting from non-initial user namespace is not allowed",
 * a 2024 fix that stable 6.1 carries).  Where it is allowed, nfs4_create_server() takes
 * server->cred from fc->cred, the nfs_client's rpc client and its idmap take that
 * credential, and the idmap skips request-key (only for the initial user namespace): it
 * asks the container's netns's nfs/clnt*\/idmap pipe and reads the answer with make_kuid()
 * in the container's user namespace.
 *
 * Here one program plays both parts: PID names the container (a process whose network,
 * mount, UTS and user namespaces the mount is for); a child joins them (user last),
 * becomes the container's root (setresuid/setresgid 0, so its uid and gid maps must be
 * written) and does the container's steps; the parent, in the initial namespaces, is the
 * broker.  --alone: the child tries FSCONFIG_CMD_CREATE itself (the kernel refuses);
 * --fsmount-in-container: the broker only creates the superblock and the child calls
 * fsmount() too.  Each step that fails is named with its errno on stderr, and the kernel's
 * fs_context messages are printed.  Exit 0 when the mount is in place, 1 when a step
 * failed, 2 on bad usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/mount.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

enum mode { BROKER_ALL, ALONE, FSMOUNT_IN_CONTAINER };

static int sys_fsopen(const char *fs, unsigned int flags)
{
	return (int)syscall(SYS_fsopen, fs, flags);
}

static int sys_fsconfig(int fd, unsigned int cmd, const char *key, const void *val, int aux)
{
	return (int)syscall(SYS_fsconfig, fd, cmd, key, val, aux);
}

static int sys_fsmount(int fd, unsigned int flags, unsigned int attrs)
{
	return (int)syscall(SYS_fsmount, fd, flags, attrs);
}

static int sys_move_mount(int from, const char *from_path, int to, const char *to_path,
			  unsigned int flags)
{
	return (int)syscall(SYS_move_mount, from, from_path, to, to_path, flags);
}

static int sys_setns(int fd, int type)
{
	return (int)syscall(SYS_setns, fd, type);
}

/* the kernel's messages about this fs_context ("e ...", "w ...", "i ..." lines) */
static void fc_messages(int fd, const char *who)
{
	char buf[512];
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf) - 1)) > 0) {
		while (n > 0 && buf[n - 1] == '\n')
			n--;
		buf[n] = '\0';
		fprintf(stderr, "userns-mount: %s: kernel says: %s\n", who, buf);
	}
}

static int fail(const char *who, const char *step)
{
	fprintf(stderr, "userns-mount: %s: %s: %s\n", who, step, strerror(errno));
	return 1;
}

static int send_fd(int sock, int fd)
{
	char byte = 'f';
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	union {
		struct cmsghdr hdr;
		char buf[CMSG_SPACE(sizeof(int))];
	} u;
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *c;

	memset(&u, 0, sizeof(u));
	if (fd < 0) {
		/* no descriptor: the other side learns that this side failed */
		byte = 'x';
		return send(sock, &byte, 1, 0) == 1 ? 0 : -1;
	}
	msg.msg_control = u.buf;
	msg.msg_controllen = sizeof(u.buf);
	c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	return sendmsg(sock, &msg, 0) == 1 ? 0 : -1;
}

/* a descriptor from the other side, -1 when it sent none (it failed) or hung up */
static int recv_fd(int sock)
{
	char byte;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	union {
		struct cmsghdr hdr;
		char buf[CMSG_SPACE(sizeof(int))];
	} u;
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *c;
	int fd;

	msg.msg_control = u.buf;
	msg.msg_controllen = sizeof(u.buf);
	if (recvmsg(sock, &msg, MSG_CMSG_CLOEXEC) != 1 || byte != 'f')
		return -1;
	c = CMSG_FIRSTHDR(&msg);
	if (!c || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
	    c->cmsg_len != CMSG_LEN(sizeof(int)))
		return -1;
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

/* OPT is key=value (a string) or key (a flag), as mount -o writes them */
static int fc_options(int fc, char *opts)
{
	char *save = NULL;

	for (char *o = strtok_r(opts, ",", &save); o; o = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(o, '=');
		int rc;

		if (eq) {
			*eq = '\0';
			rc = sys_fsconfig(fc, FSCONFIG_SET_STRING, o, eq + 1, 0);
		} else {
			rc = sys_fsconfig(fc, FSCONFIG_SET_FLAG, o, NULL, 0);
		}
		if (rc < 0) {
			fprintf(stderr, "userns-mount: container: fsconfig(%s): %s\n", o,
				strerror(errno));
			fc_messages(fc, "container");
			return -1;
		}
	}
	return 0;
}

/* join the container's namespaces (net, mnt and uts while still privileged, user last) and
 * become its root; the uts namespace gives the NFS client the container's host name in its
 * client id, not the host's (two clients with one id would steal each other's lease) */
static int join(pid_t pid)
{
	static const struct {
		const char *name;
		int type;
	} ns[] = { { "net", CLONE_NEWNET },
		   { "mnt", CLONE_NEWNS },
		   { "uts", CLONE_NEWUTS },
		   { "user", CLONE_NEWUSER } };
	int fds[4];
	char path[64];

	for (size_t i = 0; i < 4; i++) {
		snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)pid, ns[i].name);
		fds[i] = open(path, O_RDONLY | O_CLOEXEC);
		if (fds[i] < 0)
			return fail("container", path);
	}
	for (size_t i = 0; i < 4; i++) {
		snprintf(path, sizeof(path), "setns(%s)", ns[i].name);
		if (sys_setns(fds[i], ns[i].type) < 0)
			return fail("container", path);
		close(fds[i]);
	}
	if (setgroups(0, NULL) < 0)
		return fail("container", "setgroups()");
	if (setresgid(0, 0, 0) < 0)
		return fail("container", "setresgid(0) (is the gid map written?)");
	if (setresuid(0, 0, 0) < 0)
		return fail("container", "setresuid(0) (is the uid map written?)");
	if (chdir("/") < 0)
		return fail("container", "chdir(/)");
	return 0;
}

static int container(int sock, enum mode mode, pid_t pid, const char *source, char *opts,
		     const char *target)
{
	int fc, mfd;

	if (join(pid))
		return 1;
	fc = sys_fsopen("nfs4", FSOPEN_CLOEXEC);
	if (fc < 0)
		return fail("container", "fsopen(nfs4)");
	if (sys_fsconfig(fc, FSCONFIG_SET_STRING, "source", source, 0) < 0) {
		int e = errno;

		fc_messages(fc, "container");
		errno = e;
		return fail("container", "fsconfig(source)");
	}
	if (opts && fc_options(fc, opts))
		return 1;
	if (mode == ALONE) {
		if (sys_fsconfig(fc, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0) {
			int e = errno;

			fc_messages(fc, "container");
			errno = e;
			return fail("container", "fsconfig(FSCONFIG_CMD_CREATE)");
		}
		mfd = sys_fsmount(fc, FSMOUNT_CLOEXEC, 0);
		if (mfd < 0)
			return fail("container", "fsmount()");
	} else {
		if (send_fd(sock, fc) < 0)
			return fail("container", "sending the fs_context");
		mfd = recv_fd(sock);
		if (mfd < 0) {
			fprintf(stderr, "userns-mount: container: the broker sent no descriptor\n");
			return 1;
		}
		if (mode == FSMOUNT_IN_CONTAINER) {
			int m = sys_fsmount(mfd, FSMOUNT_CLOEXEC, 0);

			if (m < 0)
				return fail("container", "fsmount()");
			mfd = m;
		}
	}
	if (sys_move_mount(mfd, "", AT_FDCWD, target, MOVE_MOUNT_F_EMPTY_PATH) < 0)
		return fail("container", "move_mount()");
	return 0;
}

/* The broker creates the NFS client (FSCONFIG_CMD_CREATE runs rpc_create() in its context),
 * and the client id string names utsname()->nodename of that context: without the
 * container's UTS namespace, the client would claim the host's id, and knfsd refuses an id
 * held by another client with other credentials (NFS4ERR_CLID_INUSE, EPERM here). */
static int broker(int sock, enum mode mode, pid_t pid)
{
	char path[64];
	int fc, out, uts;

	snprintf(path, sizeof(path), "/proc/%d/ns/uts", (int)pid);
	uts = open(path, O_RDONLY | O_CLOEXEC);
	if (uts < 0 || sys_setns(uts, CLONE_NEWUTS) < 0) {
		fail("broker", "joining the container's UTS namespace");
		fc = recv_fd(sock);
		send_fd(sock, -1);
		return 1;
	}
	close(uts);
	fc = recv_fd(sock);
	if (fc < 0)
		return 1; /* the container failed before it could send (it said why) */
	if (sys_fsconfig(fc, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0) {
		int e = errno;

		fc_messages(fc, "broker");
		errno = e;
		send_fd(sock, -1);
		return fail("broker", "fsconfig(FSCONFIG_CMD_CREATE)");
	}
	out = fc;
	if (mode == BROKER_ALL) {
		out = sys_fsmount(fc, FSMOUNT_CLOEXEC, 0);
		if (out < 0) {
			send_fd(sock, -1);
			return fail("broker", "fsmount()");
		}
	}
	if (send_fd(sock, out) < 0)
		return fail("broker", "sending the mount");
	return 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: userns-mount [--alone | --fsmount-in-container] "
			"[-o OPT[,OPT...]] PID SOURCE TARGET\n");
	return 2;
}

int main(int argc, char **argv)
{
	enum mode mode = BROKER_ALL;
	char *opts = NULL;
	int sv[2], status, brc = 0;
	pid_t pid, child;
	char *end;
	int i = 1;

	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--alone")) {
			mode = ALONE;
		} else if (!strcmp(argv[i], "--fsmount-in-container")) {
			mode = FSMOUNT_IN_CONTAINER;
		} else if (!strcmp(argv[i], "-o") && i + 1 < argc) {
			opts = argv[++i];
		} else {
			fprintf(stderr, "userns-mount: unknown option %s\n", argv[i]);
			return usage();
		}
	}
	if (argc - i != 3)
		return usage();
	errno = 0;
	pid = (pid_t)strtol(argv[i], &end, 10);
	if (errno || *end || pid <= 0) {
		fprintf(stderr, "userns-mount: PID %s is not a process id\n", argv[i]);
		return 2;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return fail("broker", "socketpair()");
	child = fork();
	if (child < 0)
		return fail("broker", "fork()");
	if (child == 0) {
		close(sv[0]);
		_exit(container(sv[1], mode, pid, argv[i + 1], opts, argv[i + 2]));
	}
	close(sv[1]);
	if (mode != ALONE)
		brc = broker(sv[0], mode, pid);
	close(sv[0]);
	if (waitpid(child, &status, 0) < 0)
		return fail("broker", "waitpid()");
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || brc)
		return 1;
	return 0;
}
