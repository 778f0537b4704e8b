/* nfskeys: the command-line front end of libnfskeys.  Each command lives in its own
 * file; this one holds the table, global options and dispatch. */
#include <getopt.h>
#include <stdarg.h>
#include <syslog.h>

#include "nfskeys-tool.h"

static int cmd_help(struct nfskeys_ctx *ctx, int argc, char *argv[]);
static int cmd_version(struct nfskeys_ctx *ctx, int argc, char *argv[]);

static const struct nfskeys_cmd commands[] = {
	{ "help", cmd_help, "Show this help", true },
	{ "version", cmd_version, "Show the version", true },
	{ "keys", cmd_keys, "List nfskeys-related keys in the session and user keyrings", false,
	  keys_subs },
	/* credential commands */
	{ "cifs", cmd_cifs, "CIFS/SMB credentials", false, cifs_subs },
	{ "afs", cmd_afs, "AFS tokens", false, afs_subs },
	{ "nfs", cmd_nfs, "NFS Kerberos credentials", false, nfs_subs },
	{ "status", cmd_status, "Every credential held for NFS, CIFS and AFS, with expiry" },
	/* idmap commands */
	{ "idmap", cmd_idmap, "ID mapping", false, idmap_subs },
	/* idmapd commands */
	{ "idmapd", cmd_idmapd, "The ID-mapping service", false, idmapd_subs },
	/* packaging: the installed system's health */
	{ "doctor", cmd_doctor, "Check request-key routes, services, domain, channels, key quotas" },
	/* writeback on kernel mounts */
	{ "wb", cmd_wb, "A kernel mount's dirty limit", false, wb_subs },
};

const char *tool_config_path;
bool tool_config_failed;

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: nfskeys [OPTIONS] COMMAND [ARGS...]\n"
		"\n"
		"Keys, identity mapping and credentials for NFS, CIFS/SMB and AFS.\n"
		"\n"
		"Options:\n"
		"  -c, --config FILE   configuration file (default %s/nfskeys/nfskeys.conf)\n"
		"  -v, --verbose       more messages (repeat for debug)\n"
		"  -h, --help          show this help\n"
		"  -V, --version       show the version\n"
		"\n"
		"Commands:\n",
		SYSCONFDIR);
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++) {
		const struct nfskeys_cmd *c = &commands[i];
		int col = fprintf(f, "  %-12s %s", c->name, c->help);

		/* the keys command's one subcommand is its default: the help says enough */
		if (c->subs && c->subs[1].name) {
			fputs(": ", f);
			cli_sub_names(f, c->subs, col + 2, 15);
		}
		fputc('\n', f);
	}
	fprintf(f, "\nRun 'nfskeys COMMAND --help' for a command's options. See nfskeys(1).\n");
}

/* "nfskeys help --commands" (not in the help: for tests) prints the command tree, one
 * "COMMAND [SUBCOMMAND]" a line, aliases included. */
static int cmd_help(struct nfskeys_ctx *ctx, int argc, char *argv[])
{
	if (argc > 1 && streq(argv[1], "--commands")) {
		for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
			cli_sub_dump(stdout, commands[i].name, commands[i].subs);
		return fflush(stdout) == 0 ? EXIT_OK : EXIT_FAIL;
	}
	usage(stdout);
	return EXIT_OK;
}

static int cmd_version(struct nfskeys_ctx *ctx, int argc, char *argv[])
{
	return cli_version("nfskeys");
}

/* -h or --help among a command's arguments (before a "--"). */
static bool wants_help(int argc, char *argv[])
{
	for (int i = 1; i < argc && !streq(argv[i], "--"); i++)
		if (streq(argv[i], "-h") || streq(argv[i], "--help"))
			return true;
	return false;
}

int main(int argc, char *argv[])
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{}
	};
	struct nfskeys_ctx *ctx = NULL;
	const char *config = NULL;
	const struct nfskeys_cmd *cmd = NULL;
	int verbose = 0, c, r;

	while ((c = getopt_long(argc, argv, "+c:vhV", opts, NULL)) >= 0) {
		switch (c) {
		case 'c':
			config = optarg;
			break;
		case 'v':
			verbose++;
			break;
		default:
			return cli_std_option(c, "nfskeys", usage);
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		if (streq(commands[i].name, argv[optind]))
			cmd = &commands[i];
	if (!cmd) {
		fprintf(stderr, "nfskeys: unknown command '%s' (see 'nfskeys help')\n",
			argv[optind]);
		return EXIT_USAGE;
	}
	if (!cmd->no_ctx) {
		unsigned skipped = 0;

		/* The library is quiet below LOG_ERR by default; a person at the command line
		 * wants configuration warnings (unknown keys) too.  $NFSKEYS_LOG still wins. */
		if (!getenv("NFSKEYS_LOG"))
			setenv("NFSKEYS_LOG", verbose > 1 ? "debug" : verbose ? "info" : "warning", 1);
		/* A command's --help, and the idmapd client (the daemon has its own
		 * configuration), go on past a file with an error; the rest need it whole. */
		if (streq(cmd->name, "idmapd") || wants_help(argc - optind, argv + optind))
			r = nfskeys_ctx_new_partial(config, NULL, NULL, &ctx, &skipped);
		else
			r = nfskeys_ctx_new(config, &ctx);
		if (r < 0 && r != -ENOMEM && streq(cmd->name, "idmapd")) {
			/* the daemon runs on the configuration it loaded: talking to it needs
			 * only its socket (cmd-idmapd.c finds it in what of the file parses) */
			tool_config_path = config;
			tool_config_failed = true;
			ctx = NULL;
		} else if (r < 0) {
			/* the library named file and line already; say more only when it did not */
			if (r != -EINVAL && r != -ENOENT)
				fprintf(stderr, "nfskeys: cannot load configuration: %s\n",
					strerror(-r));
			return EXIT_CONFIG;
		}
		if (skipped)
			fprintf(stderr, "nfskeys: going on without what the error%s above spoil%s\n",
				skipped > 1 ? "s" : "", skipped > 1 ? "" : "s");
		if (verbose && ctx)
			nfskeys_ctx_set_log_priority(ctx, verbose > 1 ? LOG_DEBUG : LOG_INFO);
	}
	argc -= optind;
	argv += optind;
	optind = 0; /* reset getopt for the command */
	r = cmd->fn(ctx, argc, argv);
	nfskeys_ctx_unref(ctx);
	return r;
}
