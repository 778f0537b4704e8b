/* userns-mount: make an NFS mount whose client belongs to a new user namespace, so the
 * kernel maps its owners only through the rpc_pipefs idmap pipe (nfs_idmap_request_key
 * tries request-key only for init_user_ns; KERNEL-INTERFACES.md §2).  NFS cannot be
 * mounted from inside a user namespace, so a child in a new user+mount namespace opens the
 * fs_context (fsopen records its credentials as the client's), hands the descriptor back
 * over a socket, and this process, root in the initial namespace, configures, creates and
 * attaches it.  The new namespace maps every id to itself, so owners read the same.
 *
 * usage: userns-mount [-t FSTYPE] SOURCE TARGET [OPTIONS]
 *        (FSTYPE nfs4 by default; e.g. 127.0.0.1:/ /mnt/x vers=4.2,addr=127.0.0.1)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static int send_fd(int sock, int fd)
{
	char c = 0, buf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { &c, 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = buf,
			     .msg_controllen = sizeof(buf) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(sock, &mh, 0) == 1 ? 0 : -1;
}

static int recv_fd(int sock)
{
	char c, buf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &c, 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = buf,
			     .msg_controllen = sizeof(buf) };
	struct cmsghdr *cm;
	int fd;

	if (recvmsg(sock, &mh, MSG_CMSG_CLOEXEC) != 1)
		return -1;
	cm = CMSG_FIRSTHDR(&mh);
	if (!cm || cm->cmsg_type != SCM_RIGHTS || cm->cmsg_len != CMSG_LEN(sizeof(int)))
		return -1;
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), ok;

	if (fd < 0)
		return -1;
	ok = write(fd, text, strlen(text)) == (ssize_t)strlen(text);
	close(fd);
	return ok ? 0 : -1;
}

/* the child: a new user and mount namespace, then fsopen() there */
static int child(int sock, const char *fstype)
{
	char go;
	int fsfd;

	if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0) {
		perror("userns-mount: unshare");
		return 1;
	}
	if (write(sock, "u", 1) != 1 || read(sock, &go, 1) != 1 || go != 'm')
		return 1; /* the parent writes the id maps, then says go */
	fsfd = fsopen(fstype, FSOPEN_CLOEXEC);
	if (fsfd < 0) {
		perror("userns-mount: fsopen");
		return 1;
	}
	return send_fd(sock, fsfd) < 0;
}

int main(int argc, char *argv[])
{
	const char *source, *target, *opts, *fstype = "nfs4";
	char path[64], u, *copy, *save = NULL;
	int sv[2], fsfd, mfd, status;
	pid_t pid;

	if (argc > 2 && strcmp(argv[1], "-t") == 0) {
		fstype = argv[2];
		argc -= 2;
		argv += 2;
	}
	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: userns-mount [-t FSTYPE] SOURCE TARGET [OPTIONS]\n");
		return 2;
	}
	source = argv[1];
	target = argv[2];
	opts = argc > 3 ? argv[3] : "";
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return 1;
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		close(sv[0]);
		_exit(child(sv[1], fstype));
	}
	close(sv[1]);
	if (read(sv[0], &u, 1) != 1) {
		fprintf(stderr, "userns-mount: the child did not make its namespace\n");
		return 1;
	}
	/* every id maps to itself: owners read the same as in the initial namespace */
	snprintf(path, sizeof(path), "/proc/%d/uid_map", (int)pid);
	if (write_file(path, "0 0 4294967295\n") < 0) {
		perror("userns-mount: uid_map");
		return 1;
	}
	snprintf(path, sizeof(path), "/proc/%d/gid_map", (int)pid);
	if (write_file(path, "0 0 4294967295\n") < 0) {
		perror("userns-mount: gid_map");
		return 1;
	}
	if (write(sv[0], "m", 1) != 1)
		return 1;
	fsfd = recv_fd(sv[0]);
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) || fsfd < 0) {
		fprintf(stderr, "userns-mount: no fs_context from the child\n");
		return 1;
	}
	if (fsconfig(fsfd, FSCONFIG_SET_STRING, "source", source, 0) < 0) {
		perror("userns-mount: source");
		return 1;
	}
	copy = strdup(opts);
	for (char *o = strtok_r(copy, ",", &save); o; o = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(o, '=');
		int r;

		if (eq)
			*eq = '\0';
		r = eq ? fsconfig(fsfd, FSCONFIG_SET_STRING, o, eq + 1, 0) :
			 fsconfig(fsfd, FSCONFIG_SET_FLAG, o, NULL, 0);
		if (r < 0) {
			fprintf(stderr, "userns-mount: option %s: %s\n", o, strerror(errno));
			return 1;
		}
	}
	free(copy);
	/* created and attached by root of the initial namespace; the client keeps the
	 * credentials fsopen() recorded in the child */
	if (fsconfig(fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0) {
		perror("userns-mount: create");
		return 1;
	}
	mfd = fsmount(fsfd, FSMOUNT_CLOEXEC, 0);
	if (mfd < 0 || move_mount(mfd, "", AT_FDCWD, target, MOVE_MOUNT_F_EMPTY_PATH) < 0) {
		perror("userns-mount: attach");
		return 1;
	}
	return 0;
}
