/* nfskeys wb: the dirty limit of a kernel NFS/CIFS mount's bdi (apply, restore, status)
 * and the adaptive loop fed by /proc/self/mountstats (run, with a completion trace). */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "conf-get.h"
#include "nfskeys-tool.h"
#include "units.h"

static int wb_apply(struct nfskeys_ctx *ctx, int argc, char *argv[]);
static int wb_restore(struct nfskeys_ctx *ctx, int argc, char *argv[]);
static int wb_status(struct nfskeys_ctx *ctx, int argc, char *argv[]);
static int wb_run(struct nfskeys_ctx *ctx, int argc, char *argv[]);

/* the table's handlers get the context as their state */
static int wb_apply_sub(void *ctx, int argc, char *argv[])
{
	return wb_apply(ctx, argc, argv);
}
static int wb_restore_sub(void *ctx, int argc, char *argv[])
{
	return wb_restore(ctx, argc, argv);
}
static int wb_status_sub(void *ctx, int argc, char *argv[])
{
	return wb_status(ctx, argc, argv);
}
static int wb_run_sub(void *ctx, int argc, char *argv[])
{
	return wb_run(ctx, argc, argv);
}

const struct cli_sub wb_subs[] = {
	{ "apply", NULL, "MOUNT --dirty-limit SIZE", "set the limit (SIZE: 1M..1T, K/M/G/T suffixes)",
	  wb_apply_sub },
	{ "restore", NULL, "MOUNT", "put the kernel's values back", wb_restore_sub },
	{ "status", NULL, "[--json] [MOUNT...]",
	  "what each network mount's bdi has (all mounts without MOUNT)", wb_status_sub },
	{ "run", NULL,
	  "[--interval MS] [--dirty-limit SIZE] [--controller NAME] [--target MS] "
	  "[--record TRACE] MOUNT...",
	  "sample /proc/self/mountstats every MS (default 100) and keep each\n"
	  "mount's limit adaptive below SIZE (default: the applied limit, else\n"
	  "[Writeback] Dirty-Limit, else 256M); restores on SIGTERM/SIGINT;\n"
	  "--controller nfskeys|halve: nfskeys (default), the nfskeys throttler's\n"
	  "bandwidth estimate x --target MS (default 500); halve, halve on a stall\n"
	  "and grow by 1/16 per tick; --record TRACE (one MOUNT) writes the\n"
	  "WRITE/COMMIT deltas to TRACE",
	  wb_run_sub },
	{},
};

static void wb_usage(FILE *f)
{
	fprintf(f,
		"Usage: nfskeys wb COMMAND [OPTIONS] [MOUNT...]\n"
		"\n"
		"The dirty limit of an NFS or CIFS mount's backing device (/sys/class/bdi/MAJ:MIN):\n"
		"max_bytes and strict_limit on Linux 6.2 and later, max_ratio on 6.1.  The\n"
		"kernel's values are saved on the first apply and put back by restore.\n"
		"\n"
		"Commands:\n");
	cli_sub_usage(f, wb_subs, 12);
	fprintf(f, "\n"
		"Setting and restoring need root.  See nfskeys(1).\n");
}

static int open_mount(struct nfskeys_ctx *ctx, const char *path, struct nfskeys_wb_mount **ret)
{
	int r = nfskeys_wb_mount_open(ctx, path, ret);

	/* the library names the reason (no such path, the fstype, a missing bdi) in its one
	 * message; only what it does not log is said here, so each error is printed once */
	if (r == -ENOMEM || r == -ENAMETOOLONG || r == -EINVAL)
		tool_error("%s: cannot manage its writeback: %s", path, strerror(-r));
	return r;
}

static int parse_limit(const char *arg, uint64_t *ret)
{
	/* the bounds of [Writeback] Dirty-Limit (common/conf-schema.c) */
	const struct conf_key_def *d = conf_schema_find("Writeback", "Dirty-Limit");
	const char *bad = NULL;
	char lo[32], hi[32];
	int r = units_parse_size(arg, ret, &bad);

	if (r == -ERANGE || (r >= 0 && (*ret < (uint64_t)d->min || *ret > (uint64_t)d->max))) {
		units_size_text((uint64_t)d->min, lo, sizeof(lo));
		units_size_text((uint64_t)d->max, hi, sizeof(hi));
		tool_error("--dirty-limit '%s': out of range (%s..%s)", arg, lo, hi);
		return -ERANGE;
	}
	if (r < 0) {
		if (bad)
			tool_error("--dirty-limit '%s': unknown unit '%s' (K, M, G, T)", arg, bad);
		else
			tool_error("--dirty-limit '%s': not a size (e.g. 64M)", arg);
		return r;
	}
	return 0;
}

static int explain_write_error(const char *path, int r)
{
	if (r == -EACCES || r == -EPERM)
		return tool_error("%s: %s (setting a bdi's limit needs root)", path, strerror(-r));
	return tool_error("%s: %s", path, strerror(-r));
}

static int wb_apply(struct nfskeys_ctx *ctx, int argc, char *argv[])
{
	static const struct option opts[] = {
		{ "dirty-limit", required_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct nfskeys_wb_mount *m = NULL;
	uint64_t limit = 0;
	bool have = false;
	int c, r;

	optind = 0;
	argv[0] = program_invocation_short_name; /* getopt's messages name the program */
	while ((c = getopt_long(argc, argv, "l:h", opts, NULL)) >= 0) {
		if (c == 'l') {
			if (parse_limit(optarg, &limit) < 0)
				return EXIT_USAGE;
			have = true;
		} else {
			wb_usage(c == 'h' ? stdout : stderr);
			return c == 'h' ? EXIT_OK : EXIT_USAGE;
		}
	}
	if (optind != argc - 1 || !have) {
		fprintf(stderr, "nfskeys: wb apply needs one MOUNT and --dirty-limit SIZE\n");
		return EXIT_USAGE;
	}
	if (open_mount(ctx, argv[optind], &m) < 0)
		return EXIT_FAIL;
	r = nfskeys_wb_mount_apply(m, limit);
	if (r < 0)
		r = explain_write_error(argv[optind], r);
	else
		printf("%s: bdi %s dirty limit %" PRIu64 " bytes\n", nfskeys_wb_mount_get_path(m),
		       nfskeys_wb_mount_get_bdi(m), limit);
	nfskeys_wb_mount_free(m);
	return r < 0 ? EXIT_FAIL : r;
}

static int wb_restore(struct nfskeys_ctx *ctx, int argc, char *argv[])
{
	struct nfskeys_wb_mount *m = NULL;
	int r;

	if (argc == 2 && (streq(argv[1], "-h") || streq(argv[1], "--help"))) {
		wb_usage(stdout);
		return EXIT_OK;
	}
	if (argc != 2) {
		fprintf(stderr, "nfskeys: wb restore needs one MOUNT\n");
		return EXIT_USAGE;
	}
	if (open_mount(ctx, argv[1], &m) < 0)
		return EXIT_FAIL;
	r = nfskeys_wb_mount_restore(m);
	if (r == -ENOENT)
		r = tool_error("%s: no dirty limit of nfskeys on bdi %s (nothing to restore)",
			       argv[1], nfskeys_wb_mount_get_bdi(m));
	else if (r < 0)
		r = explain_write_error(argv[1], r);
	else
		printf("%s: bdi %s has the kernel's values again\n", nfskeys_wb_mount_get_path(m),
		       nfskeys_wb_mount_get_bdi(m));
	nfskeys_wb_mount_free(m);
	return r;
}

static void print_state(const char *path, const struct nfskeys_wb_mount_state *s, bool json,
			bool first)
{
	if (json) {
		printf("%s{\"mount\":", first ? "" : ",");
		print_json_str(path);
		printf(",\"bdi\":\"%s\",\"fstype\":", s->bdi);
		print_json_str(s->fstype);
		printf(",\"knobs\":\"%s\",\"applied\":%s,\"limit\":%" PRIu64 ",\"thresh\":%" PRIu64
		       ",\"max_ratio\":%u",
		       s->kernel_knobs == 2 ? "max_bytes" : "max_ratio",
		       s->applied ? "true" : "false", s->limit, s->thresh, s->max_ratio);
		if (s->kernel_knobs == 2)
			printf(",\"max_bytes\":%" PRIu64 ",\"strict_limit\":%d", s->max_bytes,
			       s->strict_limit);
		if (s->applied)
			printf(",\"saved_max_ratio\":%u", s->saved_max_ratio);
		if (s->applied && s->saved_strict_limit >= 0)
			printf(",\"saved_strict_limit\":%d", s->saved_strict_limit);
		printf("}");
		return;
	}
	printf("%s: bdi %s (%s) max_ratio %u", path, s->bdi, s->fstype, s->max_ratio);
	if (s->kernel_knobs == 2)
		printf(" max_bytes %" PRIu64 " strict_limit %d", s->max_bytes, s->strict_limit);
	if (s->applied)
		printf("; nfskeys limit %" PRIu64 " (threshold %" PRIu64 "), kernel's max_ratio %u\n",
		       s->limit, s->thresh, s->saved_max_ratio);
	else
		printf("; the kernel's values\n");
}

/* The network mounts in mountinfo (unescaped mount points), for status without MOUNT. */
static int list_mounts(char ***ret, size_t *ret_n)
{
	const char *proc = secure_getenv("NFSKEYS_WB_PROC");
	char p[PATH_MAX], mp[PATH_MAX], type[64], *line = NULL, **v = NULL;
	size_t cap = 0, n = 0;
	FILE *f;

	snprintf(p, sizeof(p), "%s/self/mountinfo", proc && *proc ? proc : "/proc");
	f = fopen(p, "re");
	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		char *sep = strstr(line, " - "), **nv;

		if (strlen(line) >= sizeof(mp) || !sep ||
		    sscanf(line, "%*d %*d %*s %*s %4095s", mp) != 1 ||
		    sscanf(sep + 3, "%63s", type) != 1)
			continue;
		if (!streq(type, "nfs") && !streq(type, "nfs4") && !streq(type, "cifs") &&
		    !streq(type, "smb3"))
			continue;
		/* \ooo escapes back to bytes */
		for (char *s = mp, *o = mp;; s++) {
			if (s[0] == '\\' && s[1] && s[2] && s[3]) {
				*o++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
				s += 3;
			} else if (!(*o++ = *s)) {
				break;
			}
		}
		nv = reallocarray(v, n + 1, sizeof(*v));
		if (!nv || !(nv[n] = strdup(mp))) {
			v = nv ? nv : v;
			break;
		}
		v = nv;
		n++;
	}
	free(line);
	fclose(f);
	*ret = v;
	*ret_n = n;
	return 0;
}

static int wb_status(struct nfskeys_ctx *ctx, int argc, char *argv[])
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	char **paths = NULL, **all = NULL;
	size_t n = 0;
	bool json = false, first = true;
	int c, ret = EXIT_OK;

	optind = 0;
	argv[0] = program_invocation_short_name; /* getopt's messages name the program */
	while ((c = getopt_long(argc, argv, "jh", opts, NULL)) >= 0) {
		if (c == 'j') {
			json = true;
		} else {
			wb_usage(c == 'h' ? stdout : stderr);
			return c == 'h' ? EXIT_OK : EXIT_USAGE;
		}
	}
	if (optind < argc) {
		paths = argv + optind;
		n = (size_t)(argc - optind);
	} else if (list_mounts(&all, &n) < 0) {
		return tool_error("cannot read the mount table: %s", strerror(errno));
	} else {
		paths = all;
	}
	if (json)
		printf("[");
	for (size_t i = 0; i < n; i++) {
		struct nfskeys_wb_mount *m = NULL;
		struct nfskeys_wb_mount_state s;
		int r;

		if (open_mount(ctx, paths[i], &m) < 0) {
			ret = EXIT_FAIL;
			continue;
		}
		r = nfskeys_wb_mount_get_state(m, &s);
		if (r < 0) {
			ret = tool_error("%s: reading bdi %s: %s", paths[i],
					 nfskeys_wb_mount_get_bdi(m), strerror(-r));
		} else {
			print_state(nfskeys_wb_mount_get_path(m), &s, json, first);
			first = false;
		}
		nfskeys_wb_mount_free(m);
	}
	if (json)
		printf("]\n");
	else if (optind >= argc && n == 0)
		printf("No NFS or CIFS mounts.\n");
	for (size_t i = 0; all && i < n; i++)
		free(all[i]);
	free(all);
	return ret;
}

/* ------------------------------------------------------------------ run */

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct trace {
	FILE *f;
	uint64_t start;
	uint64_t now;
};

static void on_sample(void *userdata, const struct nfskeys_wb_mount *m, enum nfskeys_wb_kind k,
		      const struct nfskeys_wb_opstats *d)
{
	struct trace *t = userdata;

	(void)m;
	if (!t->f)
		return;
	fprintf(t->f, "%" PRIu64 " %s %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n",
		(t->now - t->start) / 1000, k == NFSKEYS_WB_COMMIT ? "COMMIT" : "WRITE", d->ops,
		d->bytes_sent, d->rtt_ms * 1000, d->exec_ms * 1000, d->errors);
}

struct managed {
	struct nfskeys_wb_mount *m;
	struct nfskeys_wb_dev *dev;
	uint64_t written; /* the limit last written to the bdi */
	bool gone;
};

static int run_loop(struct nfskeys_wb_sampler *s, struct managed *v, size_t n, unsigned interval,
		    struct trace *t)
{
	uint64_t next = now_ns(), last_check = next, thresh = 0;
	int ret = EXIT_OK;

	nfskeys_wb_dirty_threshold(&thresh);
	while (!stop_signal) {
		struct timespec ts;
		size_t live = 0;
		bool refresh = false;
		uint64_t th;
		int r;

		next += (uint64_t)interval * 1000000ull;
		ts.tv_sec = (time_t)(next / 1000000000ull);
		ts.tv_nsec = (long)(next % 1000000000ull);
		if (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			continue;
		t->now = now_ns();
		r = nfskeys_wb_sampler_tick(s, t->now, on_sample, t);
		if (r < 0 && r != -ENOENT) {
			ret = EXIT_FAIL;
			break;
		}
		if (t->f)
			fflush(t->f);
		/* once a second, one read of the global threshold: the knobs of every mount
		 * are recomputed only when it moved */
		if (t->now - last_check > 1000000000ull) {
			last_check = t->now;
			if (nfskeys_wb_dirty_threshold(&th) >= 0 && th != thresh) {
				thresh = th;
				refresh = true;
			}
		}
		for (size_t i = 0; i < n; i++) {
			struct nfskeys_wb_mount_state st;
			uint64_t lim;

			if (v[i].gone)
				continue;
			if (r == -ENOENT && nfskeys_wb_mount_get_state(v[i].m, &st) < 0) {
				fprintf(stderr, "nfskeys: %s is no longer mounted (its limit went "
						"with its bdi)\n", nfskeys_wb_mount_get_path(v[i].m));
				nfskeys_wb_mount_restore(v[i].m); /* drops the saved state */
				v[i].gone = true;
				continue;
			}
			live++;
			lim = nfskeys_wb_sampler_get_limit(s, v[i].m);
			if (lim && lim != v[i].written) {
				if (nfskeys_wb_mount_apply(v[i].m, lim) >= 0)
					v[i].written = lim;
				/* a comment line for the trace's reader: the limit set now */
				if (t->f)
					fprintf(t->f, "# limit %" PRIu64 " %" PRIu64 "\n",
						(t->now - t->start) / 1000, v[i].written);
			} else if (refresh) {
				nfskeys_wb_mount_refresh(v[i].m);
			}
		}
		if (!live)
			break;
	}
	return ret;
}

static int wb_run(struct nfskeys_ctx *ctx, int argc, char *argv[])
{
	static const struct option opts[] = {
		{ "interval", required_argument, NULL, 'i' },
		{ "record", required_argument, NULL, 'r' },
		{ "dirty-limit", required_argument, NULL, 'l' },
		{ "controller", required_argument, NULL, 'c' },
		{ "target", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct nfskeys_wb_sampler *s = NULL;
	const char *controller = "nfskeys";
	unsigned long target = 0;
	struct managed *v = NULL;
	struct trace t = { 0 };
	const char *record = NULL;
	uint64_t ceiling = 0;
	bool ceiling_given = false;
	unsigned long interval = 100;
	struct sigaction sa = { .sa_handler = on_signal };
	size_t n = 0;
	int c, r, ret = EXIT_FAIL;
	char *end;

	optind = 0;
	argv[0] = program_invocation_short_name; /* getopt's messages name the program */
	while ((c = getopt_long(argc, argv, "i:r:l:c:t:h", opts, NULL)) >= 0) {
		switch (c) {
		case 'i':
			errno = 0;
			interval = strtoul(optarg, &end, 10);
			if (errno || end == optarg || *end || interval < 10 || interval > 60000) {
				fprintf(stderr, "nfskeys: --interval '%s': milliseconds, 10..60000\n",
					optarg);
				return EXIT_USAGE;
			}
			break;
		case 'r':
			record = optarg;
			break;
		case 'c':
			if (!streq(optarg, "nfskeys") && !streq(optarg, "halve")) {
				fprintf(stderr, "nfskeys: --controller '%s': nfskeys or halve\n",
					optarg);
				return EXIT_USAGE;
			}
			controller = optarg;
			break;
		case 't':
			errno = 0;
			target = strtoul(optarg, &end, 10);
			if (errno || end == optarg || *end || target < 10 || target > 60000) {
				fprintf(stderr, "nfskeys: --target '%s': milliseconds, 10..60000\n",
					optarg);
				return EXIT_USAGE;
			}
			break;
		case 'l':
			if (parse_limit(optarg, &ceiling) < 0)
				return EXIT_USAGE;
			ceiling_given = true;
			break;
		default:
			wb_usage(c == 'h' ? stdout : stderr);
			return c == 'h' ? EXIT_OK : EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "nfskeys: wb run needs at least one MOUNT\n");
		return EXIT_USAGE;
	}
	if (record && argc - optind != 1) {
		fprintf(stderr, "nfskeys: --record traces one mount: give exactly one MOUNT\n");
		return EXIT_USAGE;
	}
	if (!ceiling) {
		int64_t c64 = 0;
		char err[256];

		/* bounds and default (256M) from the schema */
		r = conf_get_typed(ctx, "Writeback", "Dirty-Limit", &c64, err, sizeof(err));
		if (r < 0) {
			tool_error("%s", err);
			return EXIT_CONFIG;
		}
		ceiling = (uint64_t)c64;
	}
	r = nfskeys_wb_sampler_new(ctx, &s);
	if (r >= 0)
		r = nfskeys_wb_sampler_set_controller(s, controller, (uint64_t)target * 1000000ull);
	if (r < 0) {
		nfskeys_wb_sampler_free(s);
		return tool_error("%s", strerror(-r));
	}
	v = calloc((size_t)(argc - optind), sizeof(*v));
	if (!v)
		goto out;
	for (int i = optind; i < argc; i++, n++) {
		struct nfskeys_wb_mount_state st;
		uint64_t cap = ceiling;

		if (open_mount(ctx, argv[i], &v[n].m) < 0)
			goto out;
		/* an applied limit (nfskeys wb apply) is the ceiling unless one was given */
		if (!ceiling_given &&
		    nfskeys_wb_mount_get_state(v[n].m, &st) >= 0 && st.applied)
			cap = st.limit;
		r = nfskeys_wb_dev_new(nfskeys_wb_mount_get_bdi(v[n].m), NFSKEYS_WB_NFSKEYS, cap,
				       NFSKEYS_WB_UNSTABLE, NULL, &v[n].dev);
		if (r >= 0)
			r = nfskeys_wb_sampler_add(s, v[n].m, v[n].dev, cap);
		if (r >= 0)
			r = nfskeys_wb_mount_apply(v[n].m, cap);
		if (r < 0) {
			explain_write_error(argv[i], r);
			n++;
			goto out;
		}
		v[n].written = cap;
	}
	if (record) {
		t.f = fopen(record, "we");
		if (!t.f) {
			tool_error("--record %s: %s", record, strerror(errno));
			goto out;
		}
		fprintf(t.f, "# nfskeys-wbtrace 1\n# mount %s bdi %s interval_ms %lu ceiling %" PRIu64
			     " controller %s target_ms %lu\n# T_US OP OPS BYTES RTT_US EXEC_US ERRORS; '# limit T_US BYTES': the bdi's limit set\n",
			nfskeys_wb_mount_get_path(v[0].m), nfskeys_wb_mount_get_bdi(v[0].m), interval,
			v[0].written, controller,
			target ? target : (unsigned long)500);
		fflush(t.f);
	}
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	t.start = t.now = now_ns();
	nfskeys_wb_sampler_tick(s, t.now, NULL, NULL); /* the baseline */
	ret = run_loop(s, v, n, (unsigned)interval, &t);
out:
	for (size_t i = 0; i < n; i++) {
		int k = 0;

		if (v[i].m && !v[i].gone)
			k = nfskeys_wb_mount_restore(v[i].m);
		if (k < 0 && k != -ENOENT) {
			tool_error("%s: restoring the kernel's values: %s",
				   nfskeys_wb_mount_get_path(v[i].m), strerror(-k));
			ret = EXIT_FAIL;
		}
		nfskeys_wb_mount_free(v[i].m);
		nfskeys_wb_dev_free(v[i].dev);
	}
	free(v);
	if (t.f && fclose(t.f) != 0)
		ret = tool_error("--record %s: %s", record, strerror(errno));
	nfskeys_wb_sampler_free(s);
	return ret;
}

int cmd_wb(struct nfskeys_ctx *ctx, int argc, char *argv[])
{
	const struct cli_sub *row;
	const char *sub;

	if (argc < 2 || streq(argv[1], "--help") || streq(argv[1], "-h") || streq(argv[1], "help")) {
		wb_usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? EXIT_USAGE : EXIT_OK;
	}
	sub = argv[1];
	row = cli_sub_find(wb_subs, sub);
	if (row)
		return row->fn(ctx, argc - 1, argv + 1);
	fprintf(stderr, "nfskeys: wb: unknown command '%s' (", sub);
	cli_sub_names(stderr, wb_subs, 0, 0); /* the table's, as the help's list */
	fputs(")\n", stderr);
	return EXIT_USAGE;
}
