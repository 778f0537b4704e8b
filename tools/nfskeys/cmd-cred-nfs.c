/* nfskeys nfs: Kerberos credentials for NFS (rpc.gssd), a thin front end over
 * nfskeys_cred_*(); what it shares with the other credential commands (the argument
 * parser, the password prompt, error reporting) is in cmd-cred.c, cmd-cred-private.h. */
#include <errno.h>
#include <getopt.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmd-cred-private.h"
#include "nfskeys-tool.h"

/* nfs renew warns when the renewable life ends within this time (two runs of the hourly
 * nfskeys-nfs-renew.timer) */
#define RENEW_WARN_SECONDS (2 * 60 * 60)
/* the timer's period plus its randomized delay: a renewable ticket that ends sooner can
 * end between two runs, and an ended ticket cannot be renewed (a KEYRING cache is even
 * gone: MIT times the cache's keyring out at the ticket's end) */
#define RENEW_TIMER_SECONDS (60 * 60 + 2 * 60)

/* ------------------------------------------------------------------- nfs */

static int nfs_login(void *state, int argc, char *argv[]);
static int nfs_status(void *state, int argc, char *argv[]);
static int nfs_renew(void *state, int argc, char *argv[]);
static int nfs_logout(void *state, int argc, char *argv[]);

const struct cli_sub nfs_subs[] = {
	{ "login", NULL, "[-p PRINCIPAL] [-k KEYTAB] [-c CCACHE] [--renew]",
	  "get a ticket (password, or a keytab)", nfs_login },
	{ "status", NULL, "[-c CCACHE]", "the ticket held, its expiry and renewal", nfs_status },
	{ "renew", NULL, "[-k KEYTAB] [-p PRINCIPAL] [-c CCACHE]",
	  "renew the ticket (a new one with a keytab)", nfs_renew },
	{ "logout", NULL, "[-c CCACHE]", "destroy the credential cache", nfs_logout },
	{},
};

static void nfs_usage(FILE *f)
{
	fprintf(f, "Usage: nfskeys nfs COMMAND [OPTIONS]\n"
		   "\n"
		   "Keep Kerberos credentials for NFS (rpc.gssd) in KEYRING:persistent:<uid>.\n"
		   "The password is read from the terminal without echo, or standard input.\n"
		   "\n"
		   "Commands:\n");
	cli_sub_usage(f, nfs_subs, 48);
	fprintf(f, "\n"
		   "  -p, --principal NAME  client principal (default: your user name)\n"
		   "  -k, --keytab FILE     get the ticket with this keytab instead of a password\n"
		   "  -c, --ccache NAME     credential cache (default KEYRING:persistent:<uid>)\n"
		   "      --renew           login: also enable your hourly renewal timer\n");
	usage_common_options(f, 24, false);
}

/* A renewable ticket the hourly renewal timer cannot keep: say so (login and renew). */
static void warn_short_ticket(const struct nfskeys_cred_info *info)
{
	int64_t life = info->expiry - (int64_t)time(NULL);

	if (info->renew_until <= info->expiry || life <= 0 || life >= RENEW_TIMER_SECONDS)
		return;
	fprintf(stderr,
		"nfskeys: warning: the ticket for %s ends in %lld min, before the next run of the "
		"hourly renewal timer; renew more often (nfskeys-nfs-renew.timer) or ask for "
		"longer tickets\n",
		info->principal, (long long)(life + 59) / 60);
}

static void print_nfs_status(const struct nfskeys_cred_info *info)
{
	char exp[64], ren[64];

	tool_format_time(info->expiry, exp, sizeof(exp));
	tool_format_time(info->renew_until, ren, sizeof(ren));
	printf("principal: %s\ncache:     %s\nexpires:   %s\nrenewable: %s\n", info->principal,
	       info->description, exp, info->renew_until ? ren : "no");
}

/* nfs login --renew: the hourly renewal timer, enabled and started for this user alone
 * (never for every user of the machine).  systemctl does it, in the user's manager. */
static int enable_renew_timer(void)
{
	static const char timer[] = "nfskeys-nfs-renew.timer";
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return tool_error("cannot enable %s: fork: %s", timer, strerror(errno));
	if (pid == 0) {
		execlp("systemctl", "systemctl", "--user", "enable", "--now", timer, (char *)NULL);
		fprintf(stderr, "nfskeys: cannot run systemctl: %s\n", strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return tool_error("the ticket is held, but the renewal timer was not enabled "
				  "(systemctl --user enable --now %s failed; is your systemd user "
				  "manager running?)", timer);
	printf("renewal:   %s enabled for you (hourly)\n", timer);
	return EXIT_OK;
}

static int nfs_login(void *state, int argc, char *argv[])
{
	struct cred_args *a = state;
	struct nfskeys_cred_params p = a->p;
	struct nfskeys_secret *pw = NULL;
	struct nfskeys_cred_info info;
	int r;

	if (!p.keytab) {
		if (read_password("Password: ", &pw) < 0)
			return EXIT_FAIL;
		p.password = pw;
	}
	r = nfskeys_cred_add(a->ctx, "nfs", &p);
	nfskeys_secret_free(pw);
	if (r < 0)
		return lib_error("nfs login", NULL, r);
	if (nfskeys_cred_find(a->ctx, "nfs", &p, &info) == 0) {
		print_nfs_status(&info);
		if (!p.keytab)
			warn_short_ticket(&info);
	}
	return a->renew ? enable_renew_timer() : EXIT_OK;
}

static int nfs_status(void *state, int argc, char *argv[])
{
	struct cred_args *a = state;
	struct nfskeys_cred_info info;
	int r;

	r = nfskeys_cred_find(a->ctx, "nfs", &a->p, &info);
	if (r == -ENOKEY && !cred_logged_error)
		return tool_error("no NFS credentials (run 'nfskeys nfs login')");
	if (r < 0)
		return lib_error("nfs status", NULL, r);
	print_nfs_status(&info);
	if (info.expiry > 0 && info.expiry <= (int64_t)time(NULL))
		return tool_error("the credentials have expired");
	return EXIT_OK;
}

static int nfs_renew(void *state, int argc, char *argv[])
{
	struct cred_args *a = state;
	struct nfskeys_cred_params *p = &a->p;
	struct nfskeys_cred_info info;
	int64_t left;
	int r;

	r = nfskeys_cred_renew(a->ctx, "nfs", p, &info);
	if (r < 0)
		return lib_error("nfs renew", NULL, r);
	print_nfs_status(&info);
	if (!p->keytab)
		warn_short_ticket(&info);
	/* the renewal timer runs hourly: say so while two runs can still reach the
	 * user, before the renewable life ends and the next renewal fails */
	left = info.renew_until - (int64_t)time(NULL);
	if (!p->keytab && info.renew_until > 0 && left < RENEW_WARN_SECONDS) {
		char until[64];

		tool_format_time(info.renew_until, until, sizeof(until));
		fprintf(stderr,
			"nfskeys: warning: the ticket for %s can be renewed only until %s "
			"(in %lld min); log in again with 'nfskeys nfs login' before then\n",
			info.principal, until, (long long)(left > 0 ? left : 0) / 60);
	}
	return EXIT_OK;
}

static int nfs_logout(void *state, int argc, char *argv[])
{
	struct cred_args *a = state;
	int r;

	r = nfskeys_cred_clear(a->ctx, "nfs", &a->p);
	if (r == -ENOKEY && !cred_logged_error)
		return tool_error("no NFS credentials to remove");
	if (r < 0)
		return lib_error("nfs logout", NULL, r);
	return EXIT_OK;
}

int cmd_nfs(struct nfskeys_ctx *ctx, int argc, char *argv[])
{
	static const struct option opts[] = {
		{ "principal", required_argument, NULL, 'p' },
		{ "keytab", required_argument, NULL, 'k' },
		{ "ccache", required_argument, NULL, 'c' },
		{ "renew", no_argument, NULL, OPT_RENEW },
		{}
	};
	static const struct cred_syntax syn = {
		"p:k:c:", opts, false,
		{ CRED_ARG('p', p.user), CRED_ARG('k', p.keytab), CRED_ARG('c', p.ccache) }, nfs_usage,
		"nfs", nfs_subs
	};
	struct cred_args a = {};
	int r;

	r = parse_cred_args(ctx, &syn, argc, argv, &a);
	if (r >= 0)
		return r;
	if (a.n_operands > 0) {
		tool_error("unexpected argument '%s'", a.operands[0]);
		return EXIT_USAGE;
	}
	if (a.renew && a.sub->fn != nfs_login) {
		tool_error("--renew goes with 'nfs login' only");
		return EXIT_USAGE;
	}
	return a.sub->fn(&a, 0, NULL);
}
