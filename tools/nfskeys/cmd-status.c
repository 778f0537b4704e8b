/* nfskeys status: every credential a user holds for the three filesystems (CIFS logon
 * keys, AFS tokens, the NFS Kerberos cache) with expiry, warnings about what runs out
 * soon, and the user's key quota.  Never shows a payload.  As root, --user NAME looks at
 * that user's keyrings from a child that has become the user. */
#include <getopt.h>
#include <grp.h>
#include <keyutils.h>
#include <pwd.h>
#include <stdarg.h>
#include <sys/wait.h>
#include <syslog.h>
#include <time.h>

#include "become-user.h"
#include "nfskeys-tool.h"

#define WARN_SECONDS_DEFAULT (60 * 60) /* warn when something runs out within an hour */

struct status {
	bool json;
	int64_t now, warn;
	unsigned shown, warnings, expired;
	const char *ccache;     /* the NFS cache; NULL: KEYRING:persistent:<uid> */
	const char *missing[3]; /* filesystems whose plugin is not installed */
	unsigned n_missing;
};

/* The library's last error message: said once with the failure it explains, and not at
 * all for a filesystem whose support is simply not installed. */
static char last_error[512];

static void status_log(void *userdata, int priority, const char *file, int line, const char *fn,
		       const char *format, va_list args)
{
	if (priority <= LOG_ERR)
		vsnprintf(last_error, sizeof(last_error), format, args);
}

static void format_when(int64_t t, int64_t now, char *buf, size_t size)
{
	time_t tt = (time_t)t;
	struct tm tm;
	char day[32];
	int64_t d = t - now;

	if (t <= 0) {
		snprintf(buf, size, "never");
		return;
	}
	strftime(day, sizeof(day), "%Y-%m-%d %H:%M:%S", localtime_r(&tt, &tm));
	if (d <= 0)
		snprintf(buf, size, "%s (expired)", day);
	else if (d < 3600)
		snprintf(buf, size, "%s (in %lldm)", day, (long long)(d + 59) / 60);
	else
		snprintf(buf, size, "%s (in %lldh%02lldm)", day, (long long)d / 3600,
			 (long long)(d % 3600) / 60);
}

/* What is wrong with one credential, in words (NULL: nothing); counts it. */
static const char *judge(struct status *st, const struct nfskeys_cred_info *c)
{
	bool nfs = streq(c->fs, "nfs");

	if (c->expiry > 0 && c->expiry <= st->now) {
		st->expired++;
		if (nfs && c->renew_until > st->now)
			return "expired; still renewable: nfskeys nfs renew";
		if (nfs)
			return "expired: nfskeys nfs login";
		return streq(c->fs, "afs") ? "expired: nfskeys afs login" :
					     "expired: nfskeys cifs update";
	}
	if (c->expiry <= 0 || c->expiry - st->now > st->warn)
		return NULL;
	st->warnings++;
	if (nfs && c->renew_until > c->expiry)
		return c->renew_until - st->now > st->warn ?
			       "expires soon; renewable: nfskeys nfs renew" :
			       "expires soon and its renewable life ends too: nfskeys nfs login";
	if (nfs)
		return "expires soon and is not renewable: nfskeys nfs login";
	return streq(c->fs, "afs") ? "expires soon: nfskeys afs login" : "expires soon";
}

static void show(struct status *st, const char *where, const struct nfskeys_cred_info *c)
{
	const char *problem = judge(st, c);
	char exp[64], ren[64];

	format_when(c->expiry, st->now, exp, sizeof(exp));
	format_when(c->renew_until, st->now, ren, sizeof(ren));
	if (st->json) {
		printf("%s{\"fs\":", st->shown ? "," : "");
		print_json_str(c->fs);
		printf(",\"keyring\":");
		print_json_str(where);
		printf(",\"type\":");
		print_json_str(c->type);
		printf(",\"description\":");
		print_json_str(c->description);
		printf(",\"principal\":");
		print_json_str(c->principal);
		printf(",\"serial\":%d,\"expiry\":%lld,\"renew_until\":%lld,\"problem\":",
		       c->serial, (long long)c->expiry, (long long)c->renew_until);
		if (problem)
			print_json_str(problem);
		else
			printf("null");
		putchar('}');
	} else {
		if (st->shown == 0)
			printf("%-5s %-8s %-32s %s\n", "FS", "KEYRING", "CREDENTIAL", "EXPIRES");
		printf("%-5s %-8s ", c->fs, where);
		print_text_safe(c->description);
		printf("%*s %s\n", (int)(strlen(c->description) < 32 ? 32 - strlen(c->description) : 0),
		       "", exp);
		if (c->principal[0]) {
			printf("%15s principal ", "");
			print_text_safe(c->principal);
			putchar('\n');
		}
		if (streq(c->fs, "nfs"))
			printf("%15s renewable until %s\n", "", c->renew_until ? ren : "no");
		if (problem)
			printf("%15s warning: %s\n", "", problem);
	}
	st->shown++;
}

static int show_fs(struct nfskeys_ctx *ctx, struct status *st, const char *fs, const char *where,
		   unsigned flags)
{
	_cleanup_free_ struct nfskeys_cred_info *v = NULL;
	size_t n = 0;
	int r;

	for (unsigned i = 0; i < st->n_missing; i++)
		if (streq(st->missing[i], fs))
			return 0;
	last_error[0] = '\0';
	r = nfskeys_cred_list(ctx, fs, flags, &v, &n);
	/* a filesystem whose plugin is not installed has nothing to show */
	if (r == -EPROTONOSUPPORT && st->n_missing < ARRAY_SIZE(st->missing)) {
		st->missing[st->n_missing++] = fs;
		return 0;
	}
	if (r < 0) {
		tool_error("cannot list %s credentials (%s keyring): %s", fs, where,
			   last_error[0] ? last_error : strerror(-r));
		return r;
	}
	for (size_t i = 0; i < n; i++)
		show(st, where, &v[i]);
	return 0;
}

/* This uid's line of /proc/key-users: keys and bytes used against the quota. */
static int read_quota(uid_t uid, unsigned long q[4])
{
	char line[256];
	FILE *f = fopen("/proc/key-users", "re");
	int r = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long u, usage, nkeys, nikeys;

		if (sscanf(line, " %lu: %lu %lu/%lu %lu/%lu %lu/%lu", &u, &usage, &nkeys, &nikeys,
			   &q[0], &q[1], &q[2], &q[3]) == 8 && u == uid) {
			r = 0;
			break;
		}
	}
	fclose(f);
	return r;
}

static int status_run(struct nfskeys_ctx *ctx, struct status *st, bool session)
{
	unsigned long q[4];
	bool have_quota;
	int r = 0;

	st->now = (int64_t)time(NULL);
	nfskeys_ctx_set_log_fn(ctx, status_log, NULL);
	if (st->json)
		printf("{\"uid\":%u,\"credentials\":[", (unsigned)getuid());
	if (session) {
		r |= show_fs(ctx, st, "cifs", "session", 0);
		r |= show_fs(ctx, st, "afs", "session", 0);
	}
	r |= show_fs(ctx, st, "cifs", "user", NFSKEYS_CRED_USER_KEYRING);
	r |= show_fs(ctx, st, "afs", "user", NFSKEYS_CRED_USER_KEYRING);
	/* the NFS cache is KEYRING:persistent:<uid> whichever keyring the flags name */
	if (st->ccache) {
		struct nfskeys_cred_params p = { .ccache = st->ccache };
		struct nfskeys_cred_info info;
		int k;

		last_error[0] = '\0';
		k = nfskeys_cred_find(ctx, "nfs", &p, &info);
		if (k == 0)
			show(st, "ccache", &info);
		else if (k != -ENOKEY) {
			tool_error("cannot read the NFS credential cache %s: %s", st->ccache,
				   last_error[0] ? last_error : strerror(-k));
			r = -1;
		}
	} else
		r |= show_fs(ctx, st, "nfs", "persist", 0);
	have_quota = read_quota(getuid(), q) == 0;
	if (st->json) {
		printf("],\"quota\":");
		if (have_quota)
			printf("{\"keys\":%lu,\"max_keys\":%lu,\"bytes\":%lu,\"max_bytes\":%lu}", q[0],
			       q[1], q[2], q[3]);
		else
			printf("null");
		printf(",\"not_installed\":[");
		for (unsigned i = 0; i < st->n_missing; i++) {
			printf("%s", i ? "," : "");
			print_json_str(st->missing[i]);
		}
		printf("],\"warnings\":%u,\"expired\":%u}\n", st->warnings, st->expired);
	} else {
		if (st->shown == 0)
			printf("No CIFS keys, AFS tokens or NFS Kerberos credentials.\n");
		for (unsigned i = 0; i < st->n_missing; i++)
			printf("%s support is not installed (no cred-%s plugin)\n", st->missing[i],
			       st->missing[i]);
		if (have_quota)
			printf("key quota: %lu of %lu keys, %lu of %lu bytes used\n", q[0], q[1], q[2],
			       q[3]);
	}
	if (r < 0)
		return EXIT_FAIL;
	return st->expired ? EXIT_FAIL : EXIT_OK;
}

/* Become @pw for good, in a keyring session of our own (the inherited one is root's). */
static int become(const struct passwd *pw)
{
	int r = become_user_named(pw->pw_name, pw->pw_uid, pw->pw_gid);

	if (r < 0)
		return tool_error("cannot become %s for good: %s", pw->pw_name, strerror(-r));
	if (keyctl_join_session_keyring(NULL) < 0)
		return tool_error("cannot make a keyring session for %s: %m", pw->pw_name);
	return EXIT_OK;
}

static void status_usage(FILE *f)
{
	fprintf(f, "Usage: nfskeys status [--json] [--warn MINUTES] [--user NAME] [-c CCACHE]\n"
		   "\n"
		   "Show every credential held for NFS, CIFS and AFS: CIFS logon keys and AFS\n"
		   "tokens in the session and user keyrings, the NFS Kerberos cache\n"
		   "(KEYRING:persistent:<uid>), each with its expiry, and the key quota.\n"
		   "Payloads are never shown.\n"
		   "\n"
		   "  -j, --json          one JSON object\n"
		   "  -w, --warn MINUTES  warn about what runs out sooner (default 60)\n"
		   "  -c, --ccache NAME   the NFS credential cache (default KEYRING:persistent:<uid>)\n"
		   "  -u, --user NAME     (root) look at NAME's user keyring and Kerberos cache,\n"
		   "                      as NAME; a login session's own keyring is not reachable\n"
		   "  -h, --help          show this help\n"
		   "\n"
		   "Exit status: 0 nothing expired, 1 something expired or could not be read,\n"
		   "2 usage error.\n");
}

int cmd_status(struct nfskeys_ctx *ctx, int argc, char *argv[])
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "warn", required_argument, NULL, 'w' },
		{ "user", required_argument, NULL, 'u' },
		{ "ccache", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct status st = { .warn = WARN_SECONDS_DEFAULT };
	const char *user = NULL;
	struct passwd *pw;
	int c, status;
	pid_t pid;

	argv[0] = program_invocation_short_name; /* getopt's messages name the program */
	while ((c = getopt_long(argc, argv, "jw:u:c:h", opts, NULL)) >= 0) {
		switch (c) {
		case 'j':
			st.json = true;
			break;
		case 'w': {
			char *end;
			long m;

			errno = 0;
			m = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || m < 0 || m > 525600) {
				tool_error("--warn: '%s' is not a number of minutes (0-525600)", optarg);
				return EXIT_USAGE;
			}
			st.warn = (int64_t)m * 60;
			break;
		}
		case 'u':
			user = optarg;
			break;
		case 'c':
			st.ccache = optarg;
			break;
		case 'h':
			status_usage(stdout);
			return EXIT_OK;
		default:
			status_usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		tool_error("status: unexpected argument '%s'", argv[optind]);
		return EXIT_USAGE;
	}
	if (!user)
		return status_run(ctx, &st, true);

	errno = 0;
	pw = getpwnam(user);
	if (!pw)
		return tool_error("--user: no user '%s'%s%s", user, errno ? ": " : "",
				  errno ? strerror(errno) : "");
	if (geteuid() != 0 && pw->pw_uid != getuid())
		return tool_error("--user %s: only root may look at another user's credentials",
				  user);
	/* the plugins load now, as root: the child may not be able to read the directory
	 * they come from (a build tree in a 0700 directory); listing loads them */
	for (size_t i = 0; i < 3; i++) {
		static const char *const fs[] = { "cifs", "afs", "nfs" };
		_cleanup_free_ struct nfskeys_cred_info *v = NULL;
		size_t n;

		nfskeys_ctx_set_log_fn(ctx, status_log, NULL);
		(void)nfskeys_cred_list(ctx, fs[i], NFSKEYS_CRED_USER_KEYRING, &v, &n);
	}
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return tool_error("cannot fork: %m");
	if (pid == 0) {
		int r = become(pw);
		if (r == EXIT_OK)
			r = status_run(ctx, &st, false);
		fflush(stdout);
		_exit(r);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return tool_error("waitpid: %m");
	return WIFEXITED(status) ? WEXITSTATUS(status) : EXIT_FAIL;
}
