/* The mountstats sampler's CPU at N managed NFS mounts (the goal: < 1% of a core
 * at 20 mounts).  Writes a mountstats file with N NFSv4.2 entries in 6.1's shape (every
 * per-op line of 4.2, the counters moving each tick) plus M other mounts, points the
 * sampler at it (NFSKEYS_WB_PROC, the test-only override) and times ticks in process CPU
 * time: the read, the parse, the deltas, the hook and the adaptive limit.  The kernel's
 * own cost of printing /proc/self/mountstats is not in it (see doc/PERFORMANCE.md).
 *   wb-sampler [MOUNTS [TICKS [INTERVAL-MS]]]   (default 20 2000 100)
 *   wb-sampler --real TICKS MOUNT...  the real /proc/self/mountstats (kernel time included:
 *                                     user and system CPU per tick, getrusage) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nfskeys.h"
#include "wb-kernel.h"

static const char *const ops42[] = {
	"NULL", "READ", "WRITE", "COMMIT", "OPEN", "OPEN_CONFIRM", "OPEN_NOATTR",
	"OPEN_DOWNGRADE", "CLOSE", "SETATTR", "FSINFO", "RENEW", "SETCLIENTID",
	"SETCLIENTID_CONFIRM", "LOCK", "LOCKT", "LOCKU", "ACCESS", "GETATTR", "LOOKUP",
	"LOOKUP_ROOT", "REMOVE", "RENAME", "LINK", "SYMLINK", "CREATE", "PATHCONF", "STATFS",
	"READLINK", "READDIR", "SERVER_CAPS", "DELEGRETURN", "GETACL", "SETACL", "FS_LOCATIONS",
	"RELEASE_LOCKOWNER", "SECINFO", "FSID_PRESENT", "EXCHANGE_ID", "CREATE_SESSION",
	"DESTROY_SESSION", "SEQUENCE", "GET_LEASE_TIME", "RECLAIM_COMPLETE", "LAYOUTGET",
	"GETDEVICEINFO", "LAYOUTCOMMIT", "LAYOUTRETURN", "SECINFO_NO_NAME", "TEST_STATEID",
	"FREE_STATEID", "GETDEVICELIST", "BIND_CONN_TO_SESSION", "DESTROY_CLIENTID", "SEEK",
	"ALLOCATE", "DEALLOCATE", "LAYOUTSTATS", "CLONE", "COPY", "OFFLOAD_CANCEL",
	"COPY_NOTIFY", "LOOKUPP", "LAYOUTERROR", "GETXATTR", "SETXATTR", "LISTXATTRS",
	"REMOVEXATTR", "READ_PLUS",
};

static int streq_w(const char *op)
{
	return strcmp(op, "WRITE") == 0;
}

static void write_stats(const char *path, unsigned mounts, unsigned others, unsigned long t)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		perror(path);
		exit(1);
	}
	for (unsigned i = 0; i < others; i++)
		fprintf(f, "device tmpfs mounted on /run/other%u with fstype tmpfs\n", i);
	for (unsigned m = 0; m < mounts; m++) {
		fprintf(f, "device 10.0.0.%u:/export mounted on /mnt/nfs%u with fstype nfs4 "
			   "statvers=1.1\n", m + 1, m);
		fprintf(f, "\topts:\trw,vers=4.2,rsize=1048576,wsize=1048576,namlen=255,acregmin=3,"
			   "acregmax=60,acdirmin=30,acdirmax=60,hard,proto=tcp,timeo=600,retrans=2,"
			   "sec=sys,clientaddr=10.0.0.100,local_lock=none\n"
			   "\tage:\t%lu\n\timpl_id:\tname='',domain='',date='0,0'\n"
			   "\tcaps:\tcaps=0x3ffbffff,wtmult=512,dtsize=1048576,bsize=0,namlen=255\n"
			   "\tnfsv4:\tbm0=0xfdffbfff,bm1=0xf9be3e,bm2=0x68800,acl=0x3,sessions,"
			   "pnfs=not configured,lease_time=90,lease_expired=0\n"
			   "\tsec:\tflavor=1,pseudoflavor=1\n"
			   "\tevents:\t3 26 0 0 3 7 33 %lu 0 1 0 0 0 0 1 0 0 1 0 0 0 0 0 0 0 0 0\n"
			   "\tbytes:\t0 %lu 0 0 0 %lu 0 %lu\n"
			   "\tRPC iostats version: 1.1  p/v: 100003/4 (nfs)\n"
			   "\txprt:\ttcp 0 0 1 0 42 %lu %lu 0 1234 0 2 1 3\n"
			   "\tper-op statistics\n",
			t, t * 256, t << 20, t << 20, t * 256, t * 300, t * 300);
		for (size_t o = 0; o < sizeof(ops42) / sizeof(ops42[0]); o++) {
			unsigned long n = streq_w(ops42[o]) ? t * 8 : (o % 5 ? 0 : t);

			fprintf(f, "\t%12s: %lu %lu 0 %lu %lu %lu %lu %lu 0\n", ops42[o], n, n,
				n * (streq_w(ops42[o]) ? 131300 : 200), n * 120, n / 4, n * 2, n * 2 + 1);
		}
		fputc('\n', f);
	}
	fclose(f);
}

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double tv(struct timeval t)
{
	return (double)t.tv_sec + (double)t.tv_usec / 1e6;
}

/* The sampler on the kernel's own file: user and system time per tick. */
static int real(unsigned ticks, int n, char *mounts[])
{
	struct nfskeys_wb_sampler *s = NULL;
	struct nfskeys_ctx *ctx = NULL;
	struct rusage a, b;

	if (nfskeys_ctx_new("/dev/null", &ctx) < 0 || nfskeys_wb_sampler_new(ctx, &s) < 0)
		return 1;
	for (int i = 0; i < n; i++)
		if (wbk_sampler_add_path(s, mounts[i], 64ull << 20) < 0)
			return 1;
	getrusage(RUSAGE_SELF, &a);
	for (unsigned i = 0; i < ticks; i++)
		if (nfskeys_wb_sampler_tick(s, (uint64_t)i * 100000000ull, NULL, NULL) < 0)
			return fprintf(stderr, "wb-sampler: a mount is not in mountstats\n"), 1;
	getrusage(RUSAGE_SELF, &b);
	printf("wb-sampler --real: %d mounts, %u ticks: user %.1f us/tick, system %.1f us/tick; "
	       "at 100 ms: %.3f%% of one core\n", n, ticks,
	       (tv(b.ru_utime) - tv(a.ru_utime)) / ticks * 1e6,
	       (tv(b.ru_stime) - tv(a.ru_stime)) / ticks * 1e6,
	       (tv(b.ru_utime) - tv(a.ru_utime) + tv(b.ru_stime) - tv(a.ru_stime)) / ticks / 0.1 *
		       100.0);
	nfskeys_wb_sampler_free(s);
	nfskeys_ctx_unref(ctx);
	return 0;
}

int main(int argc, char *argv[])
{
	unsigned mounts = argc > 1 ? (unsigned)atoi(argv[1]) : 20;
	unsigned ticks = argc > 2 ? (unsigned)atoi(argv[2]) : 2000;
	unsigned interval = argc > 3 ? (unsigned)atoi(argv[3]) : 100;
	char dir[] = "/tmp/wb-sampler.XXXXXX", path[128], mp[64];
	struct nfskeys_wb_sampler *s = NULL;
	struct nfskeys_ctx *ctx = NULL;
	double total = 0, best = 1e9;
	long size;
	FILE *f;

	if (argc > 3 && strcmp(argv[1], "--real") == 0)
		return real((unsigned)atoi(argv[2]), argc - 3, argv + 3);
	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof(path), "%s/self", dir);
	if (mkdir(path, 0755) < 0)
		return 1;
	snprintf(path, sizeof(path), "%s/self/mountstats", dir);
	setenv("NFSKEYS_WB_PROC", dir, 1);
	if (nfskeys_ctx_new("/dev/null", &ctx) < 0 || nfskeys_wb_sampler_new(ctx, &s) < 0)
		return 1;
	for (unsigned m = 0; m < mounts; m++) {
		snprintf(mp, sizeof(mp), "/mnt/nfs%u", m);
		if (wbk_sampler_add_path(s, mp, 64ull << 20) < 0)
			return 1;
	}
	write_stats(path, mounts, 30, 1);
	f = fopen(path, "r");
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	fclose(f);
	for (unsigned i = 0; i < ticks; i++) {
		double t0, dt;

		/* counters move every tick (outside the timed part) */
		if (i % 10 == 0)
			write_stats(path, mounts, 30, i + 2);
		t0 = cpu_now();
		nfskeys_wb_sampler_tick(s, (uint64_t)i * interval * 1000000ull, NULL, NULL);
		dt = cpu_now() - t0;
		total += dt;
		if (dt < best)
			best = dt;
	}
	printf("wb-sampler: %u mounts, %ld bytes of mountstats, %u ticks: mean %.1f us/tick "
	       "(best %.1f) CPU; at %u ms: %.3f%% of one core\n",
	       mounts, size, ticks, total / ticks * 1e6, best * 1e6, interval,
	       total / ticks / (interval / 1000.0) * 100.0);
	nfskeys_wb_sampler_free(s);
	nfskeys_ctx_unref(ctx);
	unlink(path);
	snprintf(path, sizeof(path), "%s/self", dir);
	rmdir(path);
	rmdir(dir);
	return 0;
}
