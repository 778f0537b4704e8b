/* wbsim: a deterministic, seeded discrete-event simulator of writeback throttling.  It
 * models backing devices (a steady disk, an NFS server with unstable WRITEs, COMMIT
 * bursts and stalls) and dirtying tasks, and drives libnfskeys' real policy code through
 * the public hook and throttle calls on a simulated clock; it prints a comparison table,
 * and optionally CSV time series and gnuplot plots. */
/* Here: the scenarios, the command line, the statistics over seeds and the goals; the
 * simulation is in wbsim-sim.c, traces in wbsim-trace.c, CSV and plots in wbsim-output.c. */
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "macros.h"
#include "cli.h"
#include "nfskeys.h"
#include "wbsim-private.h"

/* ---------------------------------------------------------------- scenarios */

static const struct scenario scenarios[] = {
	{ "equal-1", "1 writer, steady 100 MB/s device",
	  DEV_DISK, 8, 2, 1, 1e9, 0, 0, 0, 0, 0, true },
	{ "equal-10", "10 equal writers, steady device",
	  DEV_DISK, 8, 2, 10, 1e9, 0, 0, 0, 0, 0, true },
	{ "equal-100", "100 equal writers, steady device",
	  DEV_DISK, 8, 2, 100, 1e9, 0, 0, 0, 0, 0, false },
	{ "equal-1000", "1000 equal writers, steady device",
	  DEV_DISK, 8, 2, 1000, 1e9, 0, 0, 0, 0, 0, false },
	{ "mixed", "4 heavy, 4 at 20 MB/s, 4 at 2 MB/s",
	  DEV_DISK, 8, 2, 4, 1e9, 4, 4, 0, 0, 0, false },
	{ "nfs-burst", "10 writers, NFS: WRITEs in flight, grouped replies, client COMMITs",
	  DEV_NFS, 10, 3, 10, 1e9, 0, 0, 0, 0, 0, true },
	{ "stall", "10 writers, NFS, server stall of 2 s at 5 s",
	  DEV_NFS, 12, 3, 10, 1e9, 0, 0, 5, 0, 0, true },
	{ "halve", "10 writers, dirty limit halved at 5 s",
	  DEV_DISK, 10, 2, 10, 1e9, 0, 0, 0, 5, 0, false },
	{ "short", "2 writers + short-lived ones (10/s, 1-8 MiB)",
	  DEV_DISK, 8, 2, 2, 1e9, 0, 0, 0, 0, 10, false },
	{ "burst", "idle NFS device, one 64 MiB burst at 1 GB/s (under the limit)",
	  DEV_NFS, 2, 0, 1, 1e9, 0, 0, 0, 0, 0, true, 64ull << 20 },
};

/* The trace replay's writers: equal heavy writers on the recorded device. */
static struct scenario trace_scenario = {
	"replay", "10 writers on a device replaying a recorded completion trace",
	DEV_NFS, 0, 0, 10, 1e9, 0, 0, 0, 0, 0, false, 0,
};

static const struct {
	const char *name, *head, *unit;
	int width, prec;
} metrics[_M_MAX] = {
	[M_CALL_P99] = { "call_p99_ms", "call p99", "ms", 9, 2 },
	[M_BYTE_P50] = { "byte_p50_ms", "byte p50", "ms", 9, 1 },
	[M_BYTE_P99] = { "byte_p99_ms", "byte p99", "ms", 9, 1 },
	[M_MAX] = { "max_pause_ms", "max ms", "ms", 8, 0 },
	[M_PAUSED] = { "paused_pct", "paused%", "%", 8, 1 },
	[M_UTIL] = { "throughput_pct", "tput%", "%", 7, 1 },
	[M_CV] = { "rate_cv", "rate cv", "", 7, 2 },
	[M_WAKEUPS] = { "wakeups_per_s", "wake/s", "/s", 7, 0 },
	[M_PEAK_DIRTY] = { "peak_dirty_mib", "dirty^", "MiB", 7, 0 },
	[M_PEAK_UNSTABLE] = { "peak_unstable_mib", "unst^", "MiB", 6, 0 },
	[M_OVER] = { "overshoot_pct", "over%", "%", 6, 2 },
	[M_LIGHT] = { "light_ratio", "light", "", 6, 2 },
	[M_JAIN] = { "jain", "jain", "", 6, 3 },
	[M_BURST] = { "burst_ms", "burst ms", "ms", 9, 0 },
	[M_RECOV] = { "recovery_ms", "recov ms", "ms", 9, 0 },
	[M_HOOK_NS] = { "hook_ns_waiters", "hook ns", "ns", 8, 0 },
	/* JSON only: the COMMITs the client sent (whole run) */
	[M_COMMITS] = { "commits", "commits", "", 7, 0 },
	[M_COMMIT_MIB] = { "commit_mean_mib", "commit MiB", "MiB", 9, 2 },
	[M_COMMIT_MS] = { "commit_mean_ms", "commit ms", "ms", 9, 2 },
};

/* ---------------------------------------------------------------- main */

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: wbsim [OPTIONS]\n"
		"\n"
		"Simulate writeback throttling policies side by side (deterministic, seeded).\n"
		"\n"
		"Options:\n"
		"  -s, --scenario LIST  comma-separated scenarios (default: all; see --list)\n"
		"  -p, --policy LIST    comma-separated policies\n"
		"                       (default: kara2011,wu2011,wu2012,nfskeys)\n"
		"  -q, --quick          the quick subset of scenarios\n"
		"      --seed N         the first random seed (default 1)\n"
		"      --seeds N        run N seeds (N, N+1, ...) and give means with 95%% CIs\n"
		"                       (default 1, at most 100)\n"
		"      --wsize BYTES    bytes per write() of a simulated task (default 4096)\n"
		"      --trace FILE     replay a completion trace recorded from the kernel\n"
		"                       (10 writers on the recorded device; instead of scenarios)\n"
		"      --json           print the results as JSON\n"
		"      --csv DIR        write CSV time series into DIR (the first seed)\n"
		"      --plot FMT       with --csv: also draw DIR/SCENARIO.FMT with gnuplot (png, svg)\n"
		"      --check          exit 3 unless the nfskeys goals hold\n"
		"  -l, --list           list the scenarios\n"
		"  -h, --help           show this help\n"
		"  -V, --version        show the version\n"
		"\n"
		"Exit status: 0 success, 1 error (e.g. a malformed trace), 2 usage error,\n"
		"3 a --check goal missed.\n");
}

static bool in_list(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = list; p && *p;) {
		const char *c = strchr(p, ',');
		size_t len = c ? (size_t)(c - p) : strlen(p);

		if (len == n && strncmp(p, name, n) == 0)
			return true;
		p = c ? c + 1 : NULL;
	}
	return false;
}

static bool in_list_ids(const int *ids, int n, int id)
{
	for (int i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}

static bool list_valid(const char *list, bool policy)
{
	char buf[256];

	for (const char *p = list; p && *p;) {
		const char *c = strchr(p, ',');
		size_t len = c ? (size_t)(c - p) : strlen(p);
		bool ok = false;

		snprintf(buf, sizeof(buf), "%.*s", (int)MIN(len, sizeof(buf) - 1), p);
		if (policy)
			ok = nfskeys_wb_policy_from_name(buf) >= 0;
		else
			for (size_t i = 0; i < ARRAY_SIZE(scenarios); i++)
				ok = ok || streq(scenarios[i].name, buf);
		if (!ok) {
			fprintf(stderr, "wbsim: unknown %s '%s' (see --%s)\n",
				policy ? "policy" : "scenario", buf, policy ? "help" : "list");
			return false;
		}
		p = c ? c + 1 : NULL;
	}
	return true;
}

/* ---------------------------------------------------------------- statistics */

/* Two-sided 95% Student t quantiles for n - 1 degrees of freedom. */
static double t95(int n)
{
	static const double t[] = { 0, 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306,
				    2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110,
				    2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
				    2.052, 2.048, 2.045, 2.042 };
	int df = n - 1;

	if (df < 1)
		return 0;
	return df < (int)ARRAY_SIZE(t) ? t[df] : 1.96;
}

struct summary {
	double mean[_M_MAX], ci[_M_MAX];
};

static void summarize(const struct result *r, int n, struct summary *sum)
{
	for (int m = 0; m < _M_MAX; m++) {
		double mean = 0, var = 0;
		int k = 0;

		for (int i = 0; i < n; i++)
			if (!isnan(r[i].m[m])) {
				mean += r[i].m[m];
				k++;
			}
		if (!k) {
			sum->mean[m] = sum->ci[m] = NAN;
			continue;
		}
		mean /= k;
		for (int i = 0; i < n; i++)
			if (!isnan(r[i].m[m]))
				var += (r[i].m[m] - mean) * (r[i].m[m] - mean);
		sum->mean[m] = mean;
		sum->ci[m] = k > 1 && isfinite(mean) ? t95(k) * sqrt(var / (k - 1)) / sqrt(k) : 0;
	}
}

/* the text table's columns, in order */
static const int columns[] = { M_CALL_P99, M_BYTE_P50, M_BYTE_P99, M_MAX, M_PAUSED, M_UTIL,
			       M_CV, M_WAKEUPS, M_PEAK_DIRTY, M_PEAK_UNSTABLE, M_OVER, M_LIGHT,
			       M_BURST, M_RECOV, M_HOOK_NS };

static void print_value(double v, int width, int prec)
{
	if (isnan(v))
		printf(" %*s", width, "-");
	else
		printf(" %*.*f", width, prec, v);
}

static void json_num(double v, int prec)
{
	if (isfinite(v))
		printf("%.*f", prec + 2, v);
	else
		printf("null");
}

/* ---------------------------------------------------------------- goals */

#define GOAL_P99_MS 50.0
#define GOAL_TPUT 95.0
#define GOAL_OVER 2.0
#define GOAL_JAIN 0.99
#define BURST_SLACK 1.10

struct goal_ctx {
	bool json;
	bool first;
	int missed;
	FILE *out; /* JSON: the goals array, printed after the results */
};

static void goal(struct goal_ctx *g, const char *sc, const char *what, double value, double bound,
		 bool le)
{
	bool met = le ? value <= bound : value >= bound;

	if (!met)
		g->missed++;
	if (g->json) {
		fprintf(g->out, "%s\n    {\"scenario\": \"%s\", \"goal\": \"%s\", \"value\": %.3f, "
			"\"bound\": %.3f, \"met\": %s}",
			g->first ? "" : ",", sc, what, isfinite(value) ? value : -1.0, bound,
			met ? "true" : "false");
		g->first = false;
	} else {
		printf("  goal %-10s %-34s %9.2f %s %7.2f  %s\n", sc, what, value, le ? "<=" : ">=",
		       bound, met ? "met" : "MISSED");
	}
}

/* The absolute goals for nfskeys (means over the seeds). */
static void check_goals(struct goal_ctx *g, const struct scenario *sc, const struct summary *m)
{
	bool stall_or_cut = sc->stall_at > 0 || sc->halve_at > 0;

	if (sc->burst) {
		double ideal = (double)sc->burst / MEM_BW * 1e3;

		goal(g, sc->name, "burst finishes at memory speed (ms)", m->mean[M_BURST],
		     ideal * BURST_SLACK + 1, true);
		return;
	}
	if (!stall_or_cut) {
		goal(g, sc->name, "writers' p99 pause per call (ms)", m->mean[M_CALL_P99],
		     GOAL_P99_MS, true);
		goal(g, sc->name, "writers' p99 pause per byte (ms)", m->mean[M_BYTE_P99],
		     GOAL_P99_MS, true);
	}
	goal(g, sc->name, "throughput (% of the device)", m->mean[M_UTIL], GOAL_TPUT, false);
	goal(g, sc->name, "overshoot (% of the limit)", m->mean[M_OVER], GOAL_OVER, true);
	if (sc->heavy > 1 && !sc->medium && !sc->spawn_rate && !stall_or_cut)
		goal(g, sc->name, "fairness (Jain)", m->mean[M_JAIN], GOAL_JAIN, false);
}

/* ---------------------------------------------------------------- main */

int main(int argc, char *argv[])
{
	enum { OPT_SEED = 0x100, OPT_SEEDS, OPT_WSIZE, OPT_CSV, OPT_PLOT, OPT_CHECK, OPT_JSON,
	       OPT_TRACE };
	static const struct option opts[] = {
		{ "scenario", required_argument, NULL, 's' },
		{ "policy", required_argument, NULL, 'p' },
		{ "quick", no_argument, NULL, 'q' },
		{ "seed", required_argument, NULL, OPT_SEED },
		{ "seeds", required_argument, NULL, OPT_SEEDS },
		{ "wsize", required_argument, NULL, OPT_WSIZE },
		{ "csv", required_argument, NULL, OPT_CSV },
		{ "plot", required_argument, NULL, OPT_PLOT },
		{ "check", no_argument, NULL, OPT_CHECK },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "trace", required_argument, NULL, OPT_TRACE },
		{ "list", no_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{}
	};
	const char *scen = NULL, *pol = "kara2011,wu2011,wu2012,nfskeys", *csv = NULL;
	const char *plot = NULL, *trace_path = NULL;
	bool quick = false, check = false, json = false, first_row = true;
	uint64_t seed = 1, wsize = 4096, nseeds = 1;
	int pols[_NFSKEYS_WB_POLICY_MAX], npols = 0, c;
	struct goal_ctx goals = { .first = true };
	struct trace trace = { 0 };
	struct result *res;
	char *end, *goals_buf = NULL;
	size_t goals_len = 0;

	while ((c = getopt_long(argc, argv, "s:p:qlhV", opts, NULL)) != -1) {
		switch (c) {
		case 's': scen = optarg; break;
		case 'p': pol = optarg; break;
		case 'q': quick = true; break;
		case OPT_SEED:
			errno = 0;
			seed = strtoull(optarg, &end, 0);
			if (errno || *end || !*optarg || *optarg == '-') {
				fprintf(stderr, "wbsim: --seed: '%s' is not a number\n", optarg);
				return 2;
			}
			break;
		case OPT_SEEDS:
			errno = 0;
			nseeds = strtoull(optarg, &end, 10);
			if (errno || *end || !*optarg || nseeds < 1 || nseeds > 100) {
				fprintf(stderr, "wbsim: --seeds: '%s' is not a number from 1 to 100\n",
					optarg);
				return 2;
			}
			break;
		case OPT_WSIZE:
			errno = 0;
			wsize = strtoull(optarg, &end, 0);
			if (errno || *end || wsize < 512 || wsize > (16u << 20)) {
				fprintf(stderr, "wbsim: --wsize: '%s' is not a size in [512, 16M]\n", optarg);
				return 2;
			}
			break;
		case OPT_CSV: csv = optarg; break;
		case OPT_PLOT:
			if (!streq(optarg, "png") && !streq(optarg, "svg")) {
				fprintf(stderr, "wbsim: --plot: '%s' is not png or svg\n", optarg);
				return 2;
			}
			plot = optarg;
			break;
		case OPT_CHECK: check = true; break;
		case OPT_JSON: json = true; break;
		case OPT_TRACE: trace_path = optarg; break;
		case 'l':
			for (size_t i = 0; i < ARRAY_SIZE(scenarios); i++)
				printf("%-11s %s%s\n", scenarios[i].name, scenarios[i].help,
				       scenarios[i].quick ? " (quick)" : "");
			return 0;
		default: return cli_std_option(c, "wbsim", usage);
		}
	}
	if (optind < argc) {
		fprintf(stderr, "wbsim: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if ((scen && !list_valid(scen, false)) || !list_valid(pol, true))
		return 2;
	if (plot && !csv) {
		fprintf(stderr, "wbsim: --plot needs --csv DIR\n");
		return 2;
	}
	if (trace_path && (scen || quick || check)) {
		fprintf(stderr, "wbsim: --trace replaces the scenarios (no --scenario, --quick, --check)\n");
		return 2;
	}
	if (trace_path) {
		if (wbsim_trace_load(trace_path, &trace) < 0)
			return 1;
		trace_scenario.duration = (double)trace.rec[trace.n - 1].t / NS + 0.01;
		trace_scenario.warmup = MIN(1.0, trace_scenario.duration / 4);
		/* the sample grid is 10 ms: keep the warm-up on it */
		trace_scenario.warmup = floor(trace_scenario.warmup * 100) / 100;
	}
	if (csv && mkdir(csv, 0755) < 0 && errno != EEXIST) {
		fprintf(stderr, "wbsim: %s: %s\n", csv, strerror(errno));
		free(trace.rec);
		return 1;
	}
	for (const char *p = pol; *p;) {
		size_t len = strcspn(p, ",");
		char name[64];
		int id;

		snprintf(name, sizeof(name), "%.*s", (int)MIN(len, sizeof(name) - 1), p);
		id = nfskeys_wb_policy_from_name(name);
		if (id >= 0 && npols < _NFSKEYS_WB_POLICY_MAX && !in_list_ids(pols, npols, id))
			pols[npols++] = id;
		p += len + (p[len] == ',');
	}
	res = calloc(nseeds, sizeof(*res));
	if (!res)
		return 1;
	goals.json = json;
	if (check && json) {
		goals.out = open_memstream(&goals_buf, &goals_len);
		if (!goals.out)
			return 1;
	}

	if (json) {
		printf("{\n  \"seeds\": %" PRIu64 ", \"first_seed\": %" PRIu64 ", \"wsize\": %" PRIu64
		       ",\n  \"results\": [",
		       nseeds, seed, wsize);
	} else {
		printf("%-10s %-8s", "scenario", "policy");
		for (size_t k = 0; k < ARRAY_SIZE(columns); k++)
			printf(" %*s", metrics[columns[k]].width, metrics[columns[k]].head);
		putchar('\n');
	}
	for (size_t si = 0; si < ARRAY_SIZE(scenarios) + 1; si++) {
		const struct scenario *sc =
			si < ARRAY_SIZE(scenarios) ? &scenarios[si] : &trace_scenario;
		struct summary nk = { .mean = { [M_OVER] = NAN } };
		bool want;

		if (trace_path)
			want = sc == &trace_scenario;
		else
			want = sc != &trace_scenario &&
			       (scen ? in_list(scen, sc->name) : (!quick || sc->quick));
		if (!want)
			continue;
		for (int i = 0; i < npols; i++) {
			struct summary sum;

			for (uint64_t k = 0; k < nseeds; k++) {
				struct sim s;

				wbsim_run(sc, pols[i], (seed + k) * 1000003 + si, wsize,
					trace_path ? &trace : NULL, &s, &res[k]);
				if (csv && k == 0 && wbsim_write_csv(csv, &s) < 0) {
					fprintf(stderr, "wbsim: cannot write CSV into %s\n", csv);
					wbsim_free(&s);
					free(res);
					free(trace.rec);
					return 1;
				}
				wbsim_free(&s);
			}
			summarize(res, (int)nseeds, &sum);
			if (json) {
				printf("%s\n    {\"scenario\": \"%s\", \"policy\": \"%s\", \"metrics\": {",
				       first_row ? "" : ",", sc->name, nfskeys_wb_policy_to_name(pols[i]));
				for (int m = 0; m < _M_MAX; m++) {
					printf("%s\"%s\": {\"mean\": ", m ? ", " : "", metrics[m].name);
					json_num(sum.mean[m], metrics[m].prec);
					printf(", \"ci95\": ");
					json_num(sum.ci[m], metrics[m].prec);
					printf("}");
				}
				printf("}}");
				first_row = false;
			} else {
				printf("%-10s %-8s", sc->name, nfskeys_wb_policy_to_name(pols[i]));
				for (size_t k = 0; k < ARRAY_SIZE(columns); k++)
					print_value(sum.mean[columns[k]], metrics[columns[k]].width,
						    metrics[columns[k]].prec);
				putchar('\n');
				if (nseeds > 1) {
					printf("%-10s %-8s", "", "  +-95%");
					for (size_t k = 0; k < ARRAY_SIZE(columns); k++)
						print_value(sum.ci[columns[k]],
							    metrics[columns[k]].width,
							    metrics[columns[k]].prec);
					putchar('\n');
				}
			}
			if (pols[i] == NFSKEYS_WB_NFSKEYS)
				nk = sum;
		}
		if (check && isfinite(nk.mean[M_OVER]))
			check_goals(&goals, sc, &nk);
		if (plot) {
			int r = wbsim_write_plot(csv, plot, sc, pols, npols);

			if (r < 0)
				fprintf(stderr, "wbsim: gnuplot failed for %s: %s\n", sc->name, strerror(-r));
		}
	}
	if (json)
		printf("\n  ]");
	if (check && json) {
		fclose(goals.out);
		printf(",\n  \"goals\": [%s\n  ]", goals_buf);
		free(goals_buf);
	}
	if (json)
		printf(",\n  \"goals_missed\": %d\n}\n", goals.missed);
	else if (check)
		printf("goals: %s (%d missed)\n", goals.missed ? "MISSED" : "met", goals.missed);
	free(res);
	free(trace.rec);
	return check && goals.missed ? 3 : 0;
}
