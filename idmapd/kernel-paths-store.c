/* The kernel's descriptors in the service manager's store (common/daemon-fdstore.c): their
 * names, taking one back from the last run when it is still the same file, keeping and
 * dropping copies.  Below the other kernel-paths files: they all call these. */
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <syslog.h>
#include <unistd.h>

#include "daemon.h"
#include "kernel-paths-private.h"

#define PROC_SUPER_MAGIC 0x9fa0 /* linux/magic.h */

void kpaths_store_name(char *buf, size_t size, const char *what, uint64_t ns, const char *clnt)
{
	if (ns)
		snprintf(buf, size, "netns-%" PRIu64 "%s%s", ns, clnt ? "-" : "", clnt ? clnt : "");
	else
		snprintf(buf, size, "%s%s%s", what, clnt ? "-" : "", clnt ? clnt : "");
}

/* Whether fd is the file at dirfd/path: the same inode, or for a file of /proc/net (knfsd's
 * channels), whose inode differs from one process's view to the next, the same path
 * below the process's net/ directory. */
static bool same_file(int fd, int dirfd, const char *path)
{
	char link[PATH_MAX], self[64];
	const char *a_rel, *b_rel = path;
	struct statfs sf;
	struct stat a, b;
	ssize_t n;

	if (fstat(fd, &a) < 0 || fstatat(dirfd, path, &b, 0) < 0)
		return false;
	if (a.st_dev == b.st_dev && a.st_ino == b.st_ino)
		return true;
	if (dirfd != AT_FDCWD || strncmp(path, "/proc/net/", 10))
		return false;
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	n = readlink(self, link, sizeof(link) - 1);
	if (n <= 0)
		return false;
	link[n] = '\0';
	/* "/1234/net/rpc/nfs4.idtoname/channel" (the last run's /proc, in a mount namespace
	 * gone with it) against "/proc/net/rpc/...": a proc file, the same path below net/ */
	a_rel = strstr(link, "/net/");
	b_rel = path + 5;
	return a_rel && fstatfs(fd, &sf) == 0 && (unsigned long)sf.f_type == PROC_SUPER_MAGIC &&
	       !strcmp(a_rel, b_rel);
}

int kpaths_adopt(struct kpaths *kp, const char *name, int dirfd, const char *path)
{
	int fd = daemon_fdstore_take(name);

	if (fd < 0)
		return -1;
	if (!same_file(fd, dirfd, path)) {
		kp->log(LOG_INFO, "handed-over %s is not %s any more: dropped", name, path);
		close(fd);
		daemon_fdstore_remove(name);
		return -1;
	}
	kp->adopted++;
	return fd;
}

void kpaths_store(struct kpaths *kp, int fd, const char *name)
{
	(void)kp;
	(void)daemon_fdstore_add(fd, name);
}

void kpaths_unstore(struct kpaths *kp, const char *name)
{
	if (!kp->handing_over)
		daemon_fdstore_remove(name);
}
