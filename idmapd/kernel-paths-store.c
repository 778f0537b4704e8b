/* The kernel's descriptors in the service manager's store (common/daemon-fdstore.c): their
 * names, taking one back from the last run when it is still the same file, keeping and
 * dropping copies.  Below the other kernel-paths files: they all call these. */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "daemon.h"
#include "kernel-paths-private.h"

void kpaths_store_name(char *buf, size_t size, const char *what, uint64_t ns, const char *clnt)
{
	if (ns)
		snprintf(buf, size, "netns-%" PRIu64 "%s%s", ns, clnt ? "-" : "", clnt ? clnt : "");
	else
		snprintf(buf, size, "%s%s%s", what, clnt ? "-" : "", clnt ? clnt : "");
}

int kpaths_adopt(struct kpaths *kp, const char *name, int dirfd, const char *path)
{
	struct stat a, b;
	int fd = daemon_fdstore_take(name);

	if (fd < 0)
		return -1;
	if (fstat(fd, &a) < 0 || fstatat(dirfd, path, &b, 0) < 0 || a.st_dev != b.st_dev ||
	    a.st_ino != b.st_ino) {
		kp->log(LOG_INFO, "handed-over %s is not %s any more: dropped", name, path);
		close(fd);
		daemon_fdstore_remove(name);
		return -1;
	}
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
