/* LD_PRELOAD shim for the kernel benches' anchors: times a daemon's answers on knfsd's
 * idmap channels (/proc/net/rpc/nfs4.{idtoname,nametoid}/channel) from outside it, as
 * nfskeys-idmapd's own kernel_latency histogram does from inside: from the read(2) that
 * returned a request to the end of the write(2) of its answer.  One line per answer,
 * the nanoseconds, appended to $CHANLAT_LOG (opened once, kept open).  Any other
 * descriptor passes through untouched; the cost on a channel request is one readlink(2)
 * and two clock_gettime(2) calls (vDSO).  Built without sanitizers so it can be preloaded
 * into any program (rpc.idmapd in tests/kernel/nfs-fleet.ktest). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_FD 4096

static ssize_t (*real_read)(int, void *, size_t);
static ssize_t (*real_write)(int, const void *, size_t);
static unsigned long long started[MAX_FD]; /* ns of the request's read, 0: none pending */
static int log_fd = -1;

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
}

static int is_channel(int fd)
{
	char link[64], path[256];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, sizeof(path) - 1);
	if (n <= 0)
		return 0;
	path[n] = '\0';
	return strstr(path, "/nfs4.idtoname/channel") || strstr(path, "/nfs4.nametoid/channel");
}

static void record(unsigned long long ns)
{
	char line[32];
	int len;

	if (log_fd < 0) {
		const char *p = getenv("CHANLAT_LOG");

		if (!p)
			return;
		log_fd = open(p, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
		if (log_fd < 0)
			return;
	}
	len = snprintf(line, sizeof(line), "%llu\n", ns);
	syscall(SYS_write, log_fd, line, (size_t)len);
}

ssize_t read(int fd, void *buf, size_t count)
{
	ssize_t r;

	if (!real_read)
		real_read = (ssize_t(*)(int, void *, size_t))dlsym(RTLD_NEXT, "read");
	r = real_read(fd, buf, count);
	if (r > 0 && fd >= 0 && fd < MAX_FD && is_channel(fd))
		started[fd] = now_ns();
	return r;
}

ssize_t write(int fd, const void *buf, size_t count)
{
	ssize_t r;

	if (!real_write)
		real_write = (ssize_t(*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
	r = real_write(fd, buf, count);
	if (fd < 0 || fd >= MAX_FD || !started[fd])
		return r;
	record(now_ns() - started[fd]);
	started[fd] = 0;
	return r;
}
