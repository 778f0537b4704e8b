/* attr-bench: directory-policy benchmarks.  Effective lookups at depth 16 with 1k, 100k
 * and 1M stored policies, in-process (the public nfskeys_attr_effective() on a store
 * read through the library) and through nfskeys-attrd's socket; index memory per
 * policy; durable set latency (in-process store and through the daemon).  Prints each
 * figure next to its target as a ratio.  Not part of 'make check'. */
#include <fcntl.h>
#include <getopt.h>
#include <malloc.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "attr-private.h"
#include "attrd-client.h"
#include "stats.h"
#include "time-util.h"
/* after macros.h: <rpc/rpc.h> redefines MIN/MAX in its system header */
#include "attr.h"
#include "attr-paths.h"

#define TARGET_LOOKUPS_PER_S 2e6
#define TARGET_BYTES_PER_POLICY 150.0
#define DEPTH 16
#define FANOUT BENCH_FANOUT

static const char *const kvs[][2] = {
	{ "cache", "none" },	 { "actimeo", "60" },	    { "lookupcache", "positive" },
	{ "cto", "off" },	 { "acregmax", "300" },	    { "fscache", "on" },
	{ "writeback", "async" }, { "dirty_limit", "67108864" }, { "user.team", "ops" },
};

/* Fill a fresh store with n policies (1-2 attributes each) in one transaction; returns
 * the stored paths (malloc()ed array). */
static char **build_store(struct nfskeys_ctx *ctx, const char *path, size_t n)
{
	struct nfskeys_attr_store *st = NULL;
	sqlite3 *db;
	sqlite3_stmt *s, *chk;
	char **paths = calloc(n, sizeof(char *));
	char buf[512];

	unlink(path);
	if (!paths || nfskeys_attr_store_open(ctx, path, NFSKEYS_ATTR_STORE_WRITE, &st) < 0)
		abort();
	nfskeys_attr_store_close(st);
	if (sqlite3_open(path, &db) != SQLITE_OK)
		abort();
	sqlite3_exec(db, "PRAGMA synchronous=OFF; BEGIN", NULL, NULL, NULL);
	sqlite3_prepare_v2(db,
			   "INSERT OR REPLACE INTO attrs (domain, path, key, value, origin, set_by,"
			   " set_at) VALUES ('nfs://bench', ?, ?, ?, 0, 0, 0)",
			   -1, &s, NULL);
	sqlite3_prepare_v2(db, "SELECT 1 FROM attrs WHERE domain = 'nfs://bench' AND path = ?", -1,
			   &chk, NULL);
	for (size_t i = 0; i < n; i++) {
		int nattr = 1 + (int)(rnd() % 2);

		/* n distinct directories (the shallow ones repeat: redraw) */
		do {
			random_path(buf, sizeof(buf), 1 + (int)(rnd() % DEPTH));
			sqlite3_reset(chk);
			sqlite3_bind_text(chk, 1, buf, -1, SQLITE_TRANSIENT);
		} while (sqlite3_step(chk) == SQLITE_ROW);
		paths[i] = strdup(buf);
		for (int a = 0; a < nattr; a++) {
			unsigned k = rnd() % ARRAY_SIZE(kvs);
			sqlite3_reset(s);
			sqlite3_bind_text(s, 1, buf, -1, SQLITE_TRANSIENT);
			sqlite3_bind_text(s, 2, kvs[k][0], -1, SQLITE_STATIC);
			sqlite3_bind_text(s, 3, kvs[k][1], -1, SQLITE_STATIC);
			sqlite3_step(s);
		}
	}
	sqlite3_finalize(s);
	sqlite3_finalize(chk);
	sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
	sqlite3_close(db);
	return paths;
}

/* Resident bytes of this process. */
static long rss_bytes(void)
{
	long pages = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "re");

	if (f) {
		if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
			resident = 0;
		fclose(f);
	}
	return resident * sysconf(_SC_PAGESIZE);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double now_s(void)
{
	return (double)mono_nsec() / 1e9;
}

/* CPU time of this thread: on a shared machine wall time mostly measures the others. */
static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Query paths: a stored directory (drawn uniformly from all of them) extended with random
 * components to depth 16, so that the walk passes through stored nodes all the way down
 * it can.  nq of them (1M by default), all generated up front in random order, so that
 * the lookups roam the whole index and no cache of recent answers could help. */
static char **make_queries(char **paths, size_t n, size_t nq)
{
	char **q = calloc(nq, sizeof(char *));
	char buf[1024];

	for (size_t i = 0; i < nq; i++) {
		const char *p = paths[rnd() % n];
		int depth = 0;
		size_t len;

		for (const char *c = p; *c; c++)
			depth += *c == '/';
		len = (size_t)snprintf(buf, sizeof(buf), "%s", p);
		for (int l = depth; l <= DEPTH; l++)
			len += (size_t)snprintf(buf + len, sizeof(buf) - len, "/d%d-%u", l, rnd() % FANOUT);
		q[i] = strdup(buf);
	}
	return q;
}

struct result {
	size_t n, policies, nodes_bytes;
	size_t mismatches;
	double load_s, inproc_per_s, inproc_min, inproc_max, daemon_per_s, daemon_p50_us, bytes_per_policy,
		malloc_per_policy;
};

/* The figure counts only if the answers are right: every 97th query (10k of 1M) through
 * the fast path is compared with the lookup that walks every level and says where each
 * value comes from.  Returns the number of differing answers. */
static size_t check_answers(struct nfskeys_ctx *ctx, struct nfskeys_attr_id **ids, size_t nq,
			    struct nfskeys_attr_policy *fast)
{
	struct nfskeys_attr_policy *slow = NULL;
	size_t bad = 0;

	nfskeys_attr_policy_new(&slow);
	for (size_t i = 0; i < nq; i += 97) {
		size_t n;

		if (nfskeys_attr_effective(ctx, ids[i], 0, fast) < 0 ||
		    nfskeys_attr_effective(ctx, ids[i], NFSKEYS_ATTR_SOURCES, slow) < 0 ||
		    (n = nfskeys_attr_policy_count(fast)) != nfskeys_attr_policy_count(slow)) {
			bad++;
			continue;
		}
		for (size_t k = 0; k < n; k++) {
			struct nfskeys_attr_entry a, b;

			nfskeys_attr_policy_entry(fast, k, &a);
			nfskeys_attr_policy_entry(slow, k, &b);
			if (!streq(a.key, b.key) || !streq(a.value, b.value) ||
			    a.from_ldap != b.from_ldap) {
				bad++;
				break;
			}
		}
	}
	nfskeys_attr_policy_free(slow);
	return bad;
}

static pid_t start_daemon(const char *attrd, const char *conf, const char *sock)
{
	pid_t pid = fork();

	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);
		dup2(fd, 2);
		execl(attrd, attrd, "-f", "-c", conf, (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 600; i++) { /* up to 60 s: a 1M-policy store takes a while */
		struct rpc_client *c = NULL;
		if (attrd_client_new(sock, 1000, &c) == 0 && attrd_client_ping(c, NULL, 0, NULL, NULL) == 0) {
			rpc_client_free(c);
			return pid;
		}
		rpc_client_free(c);
		usleep(100000);
	}
	kill(pid, SIGTERM);
	return -1;
}

static void stop_daemon(pid_t pid)
{
	if (pid > 0) {
		kill(pid, SIGTERM);
		waitpid(pid, NULL, 0);
	}
}

static size_t nqueries = 1000000;

static void run_size(const char *dir, const char *attrd, size_t n, double secs, struct result *res)
{
	char conf[600], store[600], sock[600];
	struct nfskeys_ctx *ctx = NULL;
	struct nfskeys_attr_policy *p = NULL;
	struct nfskeys_attr_id **ids;
	struct nfskeys_attr_store *st = NULL;
	struct mallinfo2 m0, m1;
	long rss0, rss1;
	char **paths, **queries;
	size_t nq = nqueries, done = 0;
	double t0, t1;
	FILE *f;

	snprintf(conf, sizeof(conf), "%s/bench.conf", dir);
	snprintf(store, sizeof(store), "%s/bench-%zu.db", dir, n);
	snprintf(sock, sizeof(sock), "%s/attrd.sock", dir);
	f = fopen(conf, "we");
	fprintf(f, "[Attr]\nStore = %s\n[Attrd]\nSocket = %s\n", store, sock);
	fclose(f);
	if (nfskeys_ctx_new(conf, &ctx) < 0)
		abort();
	paths = build_store(ctx, store, n);
	queries = make_queries(paths, n, nq);
	ids = calloc(nq, sizeof(*ids));
	for (size_t i = 0; i < nq; i++)
		nfskeys_attr_id_new("nfs://bench", queries[i], &ids[i]);
	nfskeys_attr_policy_new(&p);
	res->n = n;

	/* memory: the index as the library builds it (read-only open) */
	m0 = mallinfo2();
	rss0 = rss_bytes();
	t0 = now_s();
	if (nfskeys_attr_store_open(ctx, store, 0, &st) < 0)
		abort();
	t1 = now_s();
	m1 = mallinfo2();
	rss1 = rss_bytes();
	res->load_s = t1 - t0;
	res->policies = attr_index_count(attr_store_index(st));
	res->bytes_per_policy = (double)attr_index_memory(attr_store_index(st)) / (double)res->policies;
	/* the index's big tables are mappings of their own, which mallinfo2() does not see:
	 * count what the process grew by beyond the heap, too */
	res->malloc_per_policy = (double)(m1.uordblks + m1.hblkhd - m0.uordblks - m0.hblkhd +
					  MAX(0, (rss1 - rss0) - (long)(m1.arena - m0.arena) -
							 (long)(m1.hblkhd - m0.hblkhd))) /
				 (double)res->policies;
	nfskeys_attr_store_close(st);

	/* in-process: the public call, through the context's read-only store; the rate is
	 * the median of slices of at least 0.2 CPU-s (or secs / 4), so that a burst of
	 * other work on this shared machine moves the figure less than the mean would */
	nfskeys_attr_effective(ctx, ids[0], 0, p); /* opens the store and builds the index */
	{
		double slice = MIN(0.2, secs / 4), rates[256], ts;
		size_t nslices = 0, ds = 0;

		t0 = ts = cpu_s();
		do {
			for (size_t i = 0; i < 4096; i++)
				nfskeys_attr_effective(ctx, ids[(done + i) % nq], 0, p);
			done += 4096;
			t1 = cpu_s();
			if (t1 - ts >= slice && nslices < ARRAY_SIZE(rates)) {
				rates[nslices++] = (double)(done - ds) / (t1 - ts);
				ts = t1;
				ds = done;
			}
		} while (t1 - t0 < secs);
		qsort(rates, nslices, sizeof(double), cmp_double);
		res->inproc_per_s = nslices ? rates[nslices / 2] : (double)done / (t1 - t0);
		res->inproc_min = nslices ? rates[0] : res->inproc_per_s;
		res->inproc_max = nslices ? rates[nslices - 1] : res->inproc_per_s;
	}
	res->mismatches = check_answers(ctx, ids, nq, p);

	/* through the daemon: one client, one call at a time */
	res->daemon_per_s = 0;
	if (attrd) {
		pid_t pid = start_daemon(attrd, conf, sock);
		struct rpc_client *c = NULL;
		struct stats_hist h = { 0 };

		if (pid > 0 && attrd_client_new(sock, 5000, &c) == 0) {
			done = 0;
			t0 = now_s();
			do {
				uint64_t s = mono_nsec();
				attrd_client_lookup(c, "nfs://bench", queries[done % nq],
						    ATTRD_LOOKUP_EFFECTIVE, NULL, NULL, NULL);
				stats_hist_add(&h, mono_nsec() - s);
				done++;
				t1 = now_s();
			} while (t1 - t0 < secs);
			res->daemon_per_s = (double)done / (t1 - t0);
			res->daemon_p50_us = (double)stats_hist_quantile(&h, 0.5) / 1000.0;
		}
		rpc_client_free(c);
		stop_daemon(pid);
	}
	for (size_t i = 0; i < nq; i++) {
		free(queries[i]);
		nfskeys_attr_id_free(ids[i]);
	}
	for (size_t i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
	free(queries);
	free(ids);
	nfskeys_attr_policy_free(p);
	nfskeys_ctx_unref(ctx);
	unlink(store);
}

/* Durable set: through the daemon (descriptor passing, fstat, mount table, fsync'ed
 * commit) and straight into the store. */
static void run_set(const char *dir, const char *attrd, int count)
{
	char conf[600], store[600], sock[600], sub[600];
	struct nfskeys_ctx *ctx = NULL;
	struct nfskeys_attr_store *st = NULL;
	struct nfskeys_attr_policy *p = NULL;
	struct nfskeys_attr_id *id = NULL;
	struct stats_hist direct = { 0 }, viad = { 0 };
	char err[256];
	FILE *f;

	snprintf(conf, sizeof(conf), "%s/set.conf", dir);
	snprintf(store, sizeof(store), "%s/set.db", dir);
	snprintf(sock, sizeof(sock), "%s/attrd.sock", dir);
	snprintf(sub, sizeof(sub), "%s/dir", dir);
	mkdir(sub, 0755);
	f = fopen(conf, "we");
	fprintf(f, "[Attr]\nStore = %s\n[Attrd]\nSocket = %s\n", store, sock);
	fclose(f);
	nfskeys_ctx_new(conf, &ctx);
	nfskeys_attr_policy_new(&p);
	nfskeys_attr_id_new("nfs://bench", "/export/a", &id);
	unlink(store);
	nfskeys_attr_store_open(ctx, store, NFSKEYS_ATTR_STORE_WRITE, &st);
	for (int i = 0; i < count; i++) {
		char v[16];
		uint64_t s;
		snprintf(v, sizeof(v), "%d", i % 3600);
		nfskeys_attr_policy_clear(p);
		nfskeys_attr_policy_set(p, "actimeo", v, err, sizeof(err));
		s = mono_nsec();
		nfskeys_attr_store_set(st, id, p, 0, false);
		stats_hist_add(&direct, mono_nsec() - s);
	}
	nfskeys_attr_store_close(st);
	printf("durable set, in-process store:  mean %8.1f us  p50 < %6.0f us  p99 < %6.0f us  (%d sets)\n",
	       (double)direct.sum / (double)direct.count / 1000.0,
	       (double)stats_hist_quantile(&direct, 0.5) / 1000.0,
	       (double)stats_hist_quantile(&direct, 0.99) / 1000.0, count);
	if (attrd) {
		pid_t pid = start_daemon(attrd, conf, sock);
		struct rpc_client *c = NULL;
		int fd = open(sub, O_PATH | O_DIRECTORY | O_CLOEXEC);

		if (pid > 0 && fd >= 0 && attrd_client_new(sock, 5000, &c) == 0) {
			for (int i = 0; i < count; i++) {
				char v[16];
				uint64_t s;
				snprintf(v, sizeof(v), "%d", i % 3600);
				nfskeys_attr_policy_clear(p);
				nfskeys_attr_policy_set(p, "actimeo", v, err, sizeof(err));
				s = mono_nsec();
				if (attrd_client_set(c, fd, p, err, sizeof(err), NULL) < 0) {
					fprintf(stderr, "set failed: %s\n", err);
					break;
				}
				stats_hist_add(&viad, mono_nsec() - s);
			}
			printf("durable set, through the daemon: mean %8.1f us  p50 < %6.0f us  p99 < %6.0f us  (%llu sets)\n",
			       viad.count ? (double)viad.sum / (double)viad.count / 1000.0 : 0,
			       (double)stats_hist_quantile(&viad, 0.5) / 1000.0,
			       (double)stats_hist_quantile(&viad, 0.99) / 1000.0,
			       (unsigned long long)viad.count);
		}
		if (fd >= 0)
			close(fd);
		rpc_client_free(c);
		stop_daemon(pid);
	}
	unlink(store);
	nfskeys_attr_id_free(id);
	nfskeys_attr_policy_free(p);
	nfskeys_ctx_unref(ctx);
}

int main(int argc, char *argv[])
{
	const char *attrd = NULL, *dir = NULL;
	char sizes_buf[128] = "1000,100000,1000000", tmpl[] = "/tmp/nfskeys-attr-bench.XXXXXX";
	double secs = 2.0;
	int sets = 200, c;
	char ranges[8][64];
	size_t nranges = 0;
	bool failed = false;

	while ((c = getopt(argc, argv, "d:s:t:n:q:h")) >= 0) {
		switch (c) {
		case 'd':
			attrd = optarg;
			break;
		case 's':
			snprintf(sizes_buf, sizeof(sizes_buf), "%s", optarg);
			break;
		case 't':
			secs = atof(optarg);
			break;
		case 'n':
			sets = atoi(optarg);
			break;
		case 'q':
			nqueries = strtoull(optarg, NULL, 10);
			if (nqueries == 0)
				nqueries = 1;
			break;
		default:
			fprintf(stderr, "Usage: attr-bench [-d NFSKEYS-ATTRD] [-s SIZES] [-t SECONDS] [-n SETS] [-q QUERIES]\n");
			return c == 'h' ? 0 : 2;
		}
	}
	signal(SIGPIPE, SIG_IGN);
	dir = mkdtemp(tmpl);
	if (!dir)
		return 1;
	printf("effective lookups at depth %d (policies on random directories of a fanout-%d tree,\n"
	       "%zu queries: stored directories drawn at random, extended at random to depth %d,\n"
	       "cycled through in random order); targets: >= %.0fM lookups/s in-process,\n"
	       "<= %.0f bytes of index per policy\n\n",
	       DEPTH, FANOUT, nqueries, DEPTH, TARGET_LOOKUPS_PER_S / 1e6, TARGET_BYTES_PER_POLICY);
	printf("%10s %8s %14s %8s %14s %10s %12s %8s %12s\n", "policies", "load s", "in-proc/cpu-s",
	       "ratio", "via daemon/s", "p50 us", "index B/pol", "ratio", "memory B/pol");
	for (char *save = NULL, *t = strtok_r(sizes_buf, ",", &save); t;
	     t = strtok_r(NULL, ",", &save)) {
		struct result r = { 0 };
		run_size(dir, attrd, strtoull(t, NULL, 10), secs, &r);
		if (nranges < ARRAY_SIZE(ranges))
			snprintf(ranges[nranges++], sizeof(ranges[0]), "%zu: %.2f-%.2f M",
				 r.policies, r.inproc_min / 1e6, r.inproc_max / 1e6);
		if (r.mismatches) {
			fprintf(stderr, "attr-bench: %zu wrong answers at %zu policies\n",
				r.mismatches, r.policies);
			failed = true;
		}
		printf("%10zu %8.2f %14.0f %7.2fx %14.0f %10.1f %12.1f %7.2fx %12.1f\n", r.policies,
		       r.load_s, r.inproc_per_s, r.inproc_per_s / TARGET_LOOKUPS_PER_S, r.daemon_per_s,
		       r.daemon_p50_us, r.bytes_per_policy,
		       TARGET_BYTES_PER_POLICY / r.bytes_per_policy, r.malloc_per_policy);
		fflush(stdout);
	}
	printf("\n(ratio: measured/target for lookups, target/measured for bytes; >= 1 meets it;\n"
	       " in-process rates are per CPU-second of the benchmark thread, the median of\n"
	       " 0.2 CPU-s slices (slowest-fastest slice:");
	for (size_t i = 0; i < nranges; i++)
		printf("%s %s", i ? ";" : "", ranges[i]);
	printf("); daemon rates and\n"
	       " latencies are wall-clock round trips, so they include waiting for a CPU)\n\n");
	run_set(dir, attrd, sets);
	rmdir(dir); /* best effort: set.db-wal etc. were removed with the stores */
	{
		char cmd[700];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			return 1;
	}
	return failed ? 1 : 0;
}
