/* nfskeys cifs|afs|nfs: the credential commands, thin front ends over nfskeys_cred_*().
 * Passwords are read here (terminal without echo, else standard input), never taken
 * from the command line, and live only in secret buffers.  Here: what every credential
 * command shares (cmd-cred-private.h), and cifs and afs; nfs is in cmd-cred-nfs.c. */
#include <getopt.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdarg.h>
#include <sys/prctl.h>
#include <syslog.h>
#include <time.h>

#include "cmd-cred-private.h"
#include "log-escape.h"
#include "nfskeys-tool.h"

#define PASSWORD_READ_MAX 4096

/* The library names the problem when it logs an error; then the command adds nothing. */
bool cred_logged_error;

static void cred_log(void *userdata, int priority, const char *file, int line, const char *fn,
		     const char *format, va_list args)
{
	static const char *const names[] = { "emerg", "alert", "crit", "error",
					     "warning", "notice", "info", "debug" };

	fputs("nfskeys: ", stderr);
	if (priority != LOG_ERR)
		fprintf(stderr, "%s: ", names[priority & 7]);
	vfprintf(stderr, format, args);
	fputc('\n', stderr);
	if (priority <= LOG_ERR)
		cred_logged_error = true;
}

/* Set up every credential command: errors to stderr, and the process made non-dumpable
 * before it holds a password, key or ticket (no core dump; no ptrace or /proc/PID/mem by
 * other processes of the same user). */
static void use_cred_log(struct nfskeys_ctx *ctx)
{
	(void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	cred_logged_error = false;
	nfskeys_ctx_set_log_fn(ctx, cred_log, NULL);
}

/* Report a failed library call unless the library already said why. */
int lib_error(const char *what, const char *target, int r)
{
	if (cred_logged_error)
		return EXIT_FAIL;
	if (target)
		return tool_error("%s %s: %s", what, target, strerror(-r));
	return tool_error("%s: %s", what, strerror(-r));
}

void tool_format_time(int64_t t, char *buf, size_t size)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (t <= 0)
		snprintf(buf, size, "never");
	else
		strftime(buf, size, "%Y-%m-%d %H:%M:%S", localtime_r(&tt, &tm));
}

int read_password(const char *prompt, struct nfskeys_secret **ret)
{
	int r = nfskeys_secret_read_password(STDIN_FILENO, prompt, PASSWORD_READ_MAX, ret);

	if (r == -ENODATA)
		return tool_error("no password given (empty line or end of input)"), -EINVAL;
	if (r == -EMSGSIZE)
		return tool_error("password longer than %d bytes", PASSWORD_READ_MAX), -EINVAL;
	if (r < 0)
		return tool_error("cannot read the password: %s", strerror(-r)), r;
	return 0;
}

static int print_list(struct nfskeys_ctx *ctx, const char *fs, unsigned flags)
{
	_cleanup_free_ struct nfskeys_cred_info *v = NULL;
	size_t n = 0;
	int r = nfskeys_cred_list(ctx, fs, flags, &v, &n);

	if (r < 0)
		return lib_error("list", fs, r);
	/* an empty list says so, as 'nfskeys keys' does: no output reads like a failure */
	if (n == 0)
		printf("No %s in the %s keyring.\n",
		       streq(fs, "afs") ? "AFS tokens" : "CIFS credentials",
		       flags & NFSKEYS_CRED_USER_KEYRING ? "user" : "session");
	for (size_t i = 0; i < n; i++) {
		/* whoever added the key chose its description: escaped, as 'nfskeys keys' does */
		char exp[64], desc[4 * sizeof(v[i].description)], princ[4 * sizeof(v[i].principal)];

		tool_format_time(v[i].expiry, exp, sizeof(exp));
		display_escape(desc, sizeof(desc), v[i].description);
		display_escape(princ, sizeof(princ), v[i].principal);
		printf("%-6s %-8s %-40s expires %s%s%s\n", v[i].fs, v[i].type, desc, exp,
		       princ[0] ? "  " : "", princ);
	}
	return EXIT_OK;
}

static bool parse_uint(const char *s, unsigned *ret)
{
	char *end;
	unsigned long v;

	if (!s || !*s || *s == '-' || *s == '+')
		return false;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v == 0 || v > UINT32_MAX)
		return false;
	*ret = (unsigned)v;
	return true;
}

/* The usage lines of the options parse_cred_args adds, descriptions at column width. */
void usage_common_options(FILE *f, int width, bool user_keyring)
{
	if (user_keyring)
		fprintf(f, "      %-*s%s\n", width - 6, "--user-keyring",
			"use the user keyring instead of the session keyring");
	fprintf(f, "  %-*s%s\n", width - 2, "-h, --help", "show this help");
}

/* Parse the verb and options of a cifs/afs/nfs command line into a; -1 when the command
 * goes on, else the exit code (help shown, or a usage error reported). */
int parse_cred_args(struct nfskeys_ctx *ctx, const struct cred_syntax *syn, int argc,
		    char *argv[], struct cred_args *a)
{
	struct option longopts[CRED_OPTS_MAX + 3] = {};
	char shortopts[32];
	size_t n = 0;
	int c;

	if (argc < 2 || streq(argv[1], "--help") || streq(argv[1], "-h")) {
		syn->usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? EXIT_USAGE : EXIT_OK;
	}
	a->sub = cli_sub_find(syn->subs, argv[1]);
	if (!a->sub) {
		tool_error("unknown %s command '%s'", syn->fs, argv[1]);
		syn->usage(stderr);
		return EXIT_USAGE;
	}
	a->ctx = ctx;
	a->verb = a->sub->name;
	use_cred_log(ctx);
	for (; n < CRED_OPTS_MAX && syn->longopts[n].name; n++)
		longopts[n] = syn->longopts[n];
	if (syn->user_keyring)
		longopts[n++] = (struct option){ "user-keyring", no_argument, NULL, 'U' };
	longopts[n] = (struct option){ "help", no_argument, NULL, 'h' };
	snprintf(shortopts, sizeof(shortopts), "%sh", syn->shortopts);
	optind = 0;
	argv[1] = program_invocation_short_name; /* getopt's messages name the program */
	while ((c = getopt_long(argc - 1, argv + 1, shortopts, longopts, NULL)) >= 0) {
		size_t i;

		for (i = 0; i < ARRAY_SIZE(syn->args) && (!c || syn->args[i].c != c); i++)
			;
		if (i < ARRAY_SIZE(syn->args)) {
			*(const char **)((char *)a + syn->args[i].offset) = optarg ? optarg : "";
		} else if (c == 'U') {
			a->p.flags |= NFSKEYS_CRED_USER_KEYRING;
		} else if (c == OPT_RENEW) {
			a->renew = true;
		} else if (c == 't') {
			if (!parse_uint(optarg, &a->p.timeout)) {
				tool_error("invalid timeout '%s' (seconds, > 0)", optarg);
				return EXIT_USAGE;
			}
		} else {
			return cli_std_option(c, "nfskeys", syn->usage);
		}
	}
	a->operands = argv + 1 + optind;
	a->n_operands = argc - 1 - optind;
	return -1;
}

/* "removed N key(s)" after clear / clearall. */
static int print_removed(int n, const char *noun)
{
	printf("removed %d %s%s\n", n, noun, n == 1 ? "" : "s");
	return EXIT_OK;
}

/* FS list or FS clearall (verb); none: the error when clearall found nothing (NULL: say
 * "removed 0 NOUNs"). */
static int list_or_clear_all(struct nfskeys_ctx *ctx, const char *fs, const char *verb,
			     unsigned flags, const char *noun, const char *none)
{
	char what[32];
	int r;

	if (streq(verb, "list"))
		return print_list(ctx, fs, flags);
	r = nfskeys_cred_clear_all(ctx, fs, flags);
	snprintf(what, sizeof(what), "%s clearall", fs);
	if (r < 0)
		return lib_error(what, NULL, r);
	if (r == 0 && none)
		return tool_error("%s", none);
	return print_removed(r, noun);
}

/* ------------------------------------------------------------------- cifs */

static int cifs_all(void *state, int argc, char *argv[]);
static int cifs_one(void *state, int argc, char *argv[]);

const struct cli_sub cifs_subs[] = {
	{ "add", NULL, "HOST|--domain DOMAIN [-u USER] [-t SECS]",
	  "keep a user name and password for HOST (or DOMAIN)", cifs_one },
	{ "update", NULL, "HOST|--domain DOMAIN [-u USER]", "replace the password kept", cifs_one },
	{ "clear", "remove", "HOST|--domain DOMAIN", "remove them", cifs_one },
	{ "clearall", NULL, NULL, "remove every CIFS credential", cifs_all },
	{ "list", NULL, "[--json]", "list them (never the passwords)", cifs_all },
	{},
};

static void cifs_usage(FILE *f)
{
	fprintf(f, "Usage: nfskeys cifs COMMAND [OPTIONS]\n"
		   "\n"
		   "Keep CIFS/SMB user names and passwords for multiuser mounts in the\n"
		   "session keyring, in the format cifscreds uses.  The password is read\n"
		   "from the terminal without echo, or from standard input.\n"
		   "\n"
		   "Commands:\n");
	cli_sub_usage(f, cifs_subs, 41);
	fprintf(f, "\n"
		   "  -d, --domain DOMAIN  credentials for a domain instead of a host\n"
		   "  -u, --user USER      user name (default: the caller's login name)\n"
		   "  -t, --timeout SECS   remove the keys after SECS seconds\n"
		   "  -j, --json           list: a JSON array, one object per key\n");
	usage_common_options(f, 23, true);
}

/* cifs list --json, afs list --json: a JSON array, one object per key (never a password
 * or a token); [] when there is none */
static int print_list_json(struct nfskeys_ctx *ctx, const char *fs, unsigned flags)
{
	_cleanup_free_ struct nfskeys_cred_info *v = NULL;
	size_t n = 0;
	int r = nfskeys_cred_list(ctx, fs, flags, &v, &n);

	if (r < 0)
		return lib_error("list", fs, r);
	putchar('[');
	for (size_t i = 0; i < n; i++) {
		printf("%s{\"fs\":", i ? "," : "");
		print_json_str(v[i].fs);
		printf(",\"type\":");
		print_json_str(v[i].type);
		printf(",\"description\":");
		print_json_str(v[i].description);
		printf(",\"serial\":%" PRId32 ",\"expiry\":%" PRId64 "}", v[i].serial,
		       v[i].expiry);
	}
	printf("]\n");
	return fflush(stdout) == 0 ? EXIT_OK : EXIT_FAIL;
}

/* cifs list, cifs clearall */
static int cifs_all(void *state, int argc, char *argv[])
{
	struct cred_args *a = state;

	if (a->n_operands > 0 || a->domain || a->p.user || a->p.timeout) {
		tool_error("cifs %s takes no host, domain, user or timeout", a->verb);
		return EXIT_USAGE;
	}
	if (a->json && !streq(a->verb, "list")) {
		tool_error("cifs %s: --json is for list", a->verb);
		return EXIT_USAGE;
	}
	if (a->json)
		return print_list_json(a->ctx, "cifs", a->p.flags);
	return list_or_clear_all(a->ctx, "cifs", a->verb, a->p.flags, "key",
				 "no CIFS credentials to clear");
}

/* cifs add, update, clear: one host or domain */
static int cifs_one(void *state, int argc, char *argv[])
{
	struct cred_args *a = state;
	struct nfskeys_ctx *ctx = a->ctx;
	struct nfskeys_cred_params p = a->p;
	struct nfskeys_secret *pw = NULL;
	struct nfskeys_cred_info info;
	const char *verb = a->verb, *domain = a->domain;
	int r;

	if (p.timeout && !streq(verb, "add")) {
		tool_error("-t/--timeout is only for cifs add");
		return EXIT_USAGE;
	}
	if (domain) {
		if (a->n_operands > 0) {
			tool_error("give either a host or --domain, not both");
			return EXIT_USAGE;
		}
		p.target = domain;
		p.flags |= NFSKEYS_CRED_DOMAIN;
	} else if (a->n_operands == 1) {
		p.target = a->operands[0];
	} else {
		tool_error("cifs %s needs one HOST or --domain DOMAIN", verb);
		return EXIT_USAGE;
	}

	if (streq(verb, "clear")) {
		r = nfskeys_cred_clear(ctx, "cifs", &p);
		if (r < 0)
			return lib_error("cifs clear", p.target, r);
		return print_removed(r, "key");
	}

	if (!p.user) {
		struct passwd *pwd = getpwuid(getuid());
		if (!pwd)
			return tool_error("cannot find the user name of uid %u; use -u",
					  (unsigned)getuid());
		p.user = pwd->pw_name;
	}
	r = nfskeys_cred_check_session(ctx);
	if (r == -ENOKEY && !(p.flags & NFSKEYS_CRED_USER_KEYRING))
		return tool_error("no session keyring (see pam_keyinit(8))");
	if (r == 1 && !(p.flags & NFSKEYS_CRED_USER_KEYRING))
		fprintf(stderr, "nfskeys: warning: the session keyring is your default one, "
				"shared by all your sessions (see pam_keyinit(8))\n");

	/* Say "exists" / "missing" before asking for a password, as cifscreds does. */
	r = nfskeys_cred_find(ctx, "cifs", &p, &info);
	if (r < 0 && r != -ENOKEY)
		return lib_error(verb, p.target, r);
	if (streq(verb, "add") && r == 0)
		return tool_error("credentials for %s already exist (%s); use 'nfskeys cifs "
				  "update'", p.target, info.description);
	if (streq(verb, "update") && r == -ENOKEY)
		return tool_error("no credentials for %s; use 'nfskeys cifs add'", p.target);

	if (read_password("Password: ", &pw) < 0)
		return EXIT_FAIL;
	p.password = pw;
	r = streq(verb, "add") ? nfskeys_cred_add(ctx, "cifs", &p)
			       : nfskeys_cred_update(ctx, "cifs", &p);
	nfskeys_secret_free(pw);
	if (r < 0)
		return lib_error(verb, p.target, r);
	return EXIT_OK;
}

int cmd_cifs(struct nfskeys_ctx *ctx, int argc, char *argv[])
{
	static const struct option opts[] = {
		{ "domain", required_argument, NULL, 'd' },
		{ "user", required_argument, NULL, 'u' },
		{ "username", required_argument, NULL, 'u' },
		{ "timeout", required_argument, NULL, 't' },
		{ "json", no_argument, NULL, 'j' },
		{}
	};
	static const struct cred_syntax syn = {
		"d:u:t:j", opts, true,
		{ CRED_ARG('d', domain), CRED_ARG('u', p.user), CRED_ARG('j', json) }, cifs_usage,
		"cifs", cifs_subs
	};
	struct cred_args a = {};
	int r;

	r = parse_cred_args(ctx, &syn, argc, argv, &a);
	if (r >= 0)
		return r;
	return a.sub->fn(&a, 0, NULL);
}

/* ------------------------------------------------------------------- afs */

static int afs_login(void *state, int argc, char *argv[]);
static int afs_all(void *state, int argc, char *argv[]);
static int afs_clear(void *state, int argc, char *argv[]);

const struct cli_sub afs_subs[] = {
	{ "login", NULL, "[CELL] [-k REALM] [--print]",
	  "an rxrpc token for CELL from the Kerberos ticket", afs_login },
	{ "list", NULL, "[--json]", "list the AFS tokens", afs_all },
	{ "clear", "logout", "CELL", "remove the token for CELL", afs_clear },
	{ "clearall", NULL, NULL, "remove every AFS token", afs_all },
	{},
};

static void afs_usage(FILE *f)
{
	fprintf(f, "Usage: nfskeys afs COMMAND [OPTIONS]\n"
		   "\n"
		   "Turn the Kerberos ticket for afs/CELL@REALM from the default credential cache\n"
		   "into an rxrpc token (key afs@CELL) for the kernel AFS client.\n"
		   "\n"
		   "Commands:\n");
	cli_sub_usage(f, afs_subs, 36);
	fprintf(f, "\n"
		   "  -k, --realm REALM   Kerberos realm (default: the cell name in upper case)\n"
		   "      --print         write the token payload in hex instead of adding it\n"
		   "  -j, --json          list: a JSON array, one object per token\n");
	usage_common_options(f, 22, true);
}

/* afs list, afs clearall */
static int afs_all(void *state, int argc, char *argv[])
{
	struct cred_args *a = state;

	if (a->p.target || a->print || a->p.realm) {
		tool_error("afs %s takes no arguments", a->verb);
		return EXIT_USAGE;
	}
	if (a->json && !streq(a->verb, "list")) {
		tool_error("afs %s: --json is for list", a->verb);
		return EXIT_USAGE;
	}
	if (a->json)
		return print_list_json(a->ctx, "afs", a->p.flags);
	return list_or_clear_all(a->ctx, "afs", a->verb, a->p.flags, "token", NULL);
}

static int afs_clear(void *state, int argc, char *argv[])
{
	struct cred_args *a = state;
	int r;

	if (!a->p.target) {
		tool_error("afs clear needs a CELL");
		return EXIT_USAGE;
	}
	r = nfskeys_cred_clear(a->ctx, "afs", &a->p);
	if (r < 0)
		return lib_error("afs clear", a->p.target, r);
	return EXIT_OK;
}

static int afs_login(void *state, int argc, char *argv[])
{
	struct cred_args *a = state;
	struct nfskeys_ctx *ctx = a->ctx;
	struct nfskeys_cred_params p = a->p;
	struct nfskeys_cred_info info;
	int r;

	if (a->print) {
		struct nfskeys_secret *payload = NULL;
		const unsigned char *b;

		r = nfskeys_cred_build(ctx, "afs", &p, &payload, &info);
		if (r < 0)
			return lib_error("afs login", NULL, r);
		b = nfskeys_secret_data(payload);
		printf("# type %s description %s principal %s\n", info.type, info.description,
		       info.principal);
		for (size_t i = 0; i < nfskeys_secret_len(payload); i++)
			printf("%02x", b[i]);
		putchar('\n');
		nfskeys_secret_free(payload);
		return fflush(stdout) == 0 ? EXIT_OK : EXIT_FAIL;
	}
	r = nfskeys_cred_add(ctx, "afs", &p);
	if (r == -EEXIST)
		r = nfskeys_cred_update(ctx, "afs", &p);
	if (r == -ENODEV && !cred_logged_error)
		return tool_error("kernel lacks the rxrpc key type (load the kafs / af_rxrpc "
				  "module)");
	if (r < 0)
		return lib_error("afs login", NULL, r);
	r = nfskeys_cred_find(ctx, "afs", &p, &info);
	if (r == 0)
		printf("token %s added (serial %d)\n", info.description, info.serial);
	return EXIT_OK;
}

int cmd_afs(struct nfskeys_ctx *ctx, int argc, char *argv[])
{
	static const struct option opts[] = {
		{ "realm", required_argument, NULL, 'k' },
		{ "print", no_argument, NULL, 'p' },
		{ "json", no_argument, NULL, 'j' },
		{}
	};
	static const struct cred_syntax syn = {
		/* --print has no -p: -p is --principal in every other command */
		"k:j", opts, true,
		{ CRED_ARG('k', p.realm), CRED_ARG('p', print), CRED_ARG('j', json) }, afs_usage,
		"afs", afs_subs
	};
	struct cred_args a = {};
	int r;

	r = parse_cred_args(ctx, &syn, argc, argv, &a);
	if (r >= 0)
		return r;
	if (a.n_operands > 1) {
		tool_error("afs %s takes at most one cell", a.verb);
		return EXIT_USAGE;
	}
	a.p.target = a.n_operands ? a.operands[0] : NULL;
	return a.sub->fn(&a, 0, NULL);
}
