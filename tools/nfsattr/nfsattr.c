/* nfsattr: per-directory cache policy for network filesystems.  Reads (get, show, list,
 * export, mount-options) come straight from the store through libnfskeys, so they work
 * without the daemon; changes (set, unset) go to nfskeys-attrd with the directory passed
 * as an open descriptor, or, for root only and when asked (--direct), into the store. */
/* Here: the options, the help and the command table; the commands are in nfsattr-show.c,
 * nfsattr-change.c and nfsattr-status.c, what they share in nfsattr-private.h and
 * nfsattr-util.c. */
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <syslog.h>

#include "macros.h"
#include "cli.h"
#include "cli-table.h"
#include "log-escape.h"
#include "attrd-client.h"
#include "nfsattr-json.h"
#include "nfskeys.h"
#include "stats.h"
#include "nfsattr-private.h"

static const struct cli_sub commands[];

static void usage(FILE *f)
{
	fputs("Usage: nfsattr [OPTIONS] COMMAND [ARGS...]\n"
	      "\n"
	      "Per-directory cache policy for NFS, CIFS/SMB and AFS, inherited by subtrees.\n"
	      "\n"
	      "Commands:\n",
	      f);
	cli_sub_usage(f, commands, 29);
	fputs("\n"
	      "TARGET is a local directory, SERVER:/EXPORT/SUB, //SERVER/SHARE/SUB, CELL:VOLUME,\n"
	      "or an identity as printed (nfs://SERVER/PATH, cifs://SERVER/SHARE/PATH, ...).\n"
	      "\n"
	      "Options:\n"
	      "  -c, --config FILE   configuration file\n"
	      "  -j, --json          machine-readable output\n"
	      "      --prometheus    stats in Prometheus text format\n"
	      "  -s, --socket PATH   nfskeys-attrd's socket\n"
	      "      --direct        root: write the store without the daemon\n"
	      "  -a, --all           unset: every attribute\n"
	      "  -t, --type TYPE     mount-options: nfs, nfs4, cifs, smb3 (default: from TARGET)\n"
	      "  -o, --options OPTS  mount-options: explicit options (they win)\n"
	      "  -v, --verbose       more messages\n"
	      "  -h, --help          show this help\n"
	      "  -V, --version       show the version\n"
	      "\n"
	      "Keys: cache=none|read|full fscache=on|off actimeo= acregmin= acregmax= acdirmin=\n"
	      "acdirmax= (seconds; s, m, h) lookupcache=all|positive|none cto=on|off\n"
	      "writeback=sync|async|throttled dirty_limit=BYTES (K, M, G) inherit=yes|no\n"
	      "user.NAME=TEXT.  See nfsattr(1).\n",
	      f);
}

/* ---------------------------------------------------------------- commands */

static int sub_set(void *o, int argc, char *argv[])
{
	return nfsattr_cmd_set(o, argc, argv);
}
static int sub_unset(void *o, int argc, char *argv[])
{
	return nfsattr_cmd_unset(o, argc, argv);
}
static int sub_get(void *o, int argc, char *argv[])
{
	return nfsattr_cmd_lookup(o, argc, argv, false);
}
static int sub_show(void *o, int argc, char *argv[])
{
	return nfsattr_cmd_lookup(o, argc, argv, true);
}
static int sub_list(void *o, int argc, char *argv[])
{
	return nfsattr_cmd_list(o, argc, argv, false);
}
static int sub_export(void *o, int argc, char *argv[])
{
	return nfsattr_cmd_list(o, argc, argv, true);
}
static int sub_import(void *o, int argc, char *argv[])
{
	return nfsattr_cmd_import(o, argc, argv);
}
static int sub_mount_options(void *o, int argc, char *argv[])
{
	return nfsattr_cmd_mount_options(o, argc, argv);
}
static int sub_stats(void *o, int argc, char *argv[])
{
	return nfsattr_cmd_stats(o, argc, argv);
}
static int sub_status(void *o, int argc, char *argv[])
{
	return nfsattr_cmd_status(o, argc, argv);
}
static int sub_writeback(void *o, int argc, char *argv[])
{
	return nfsattr_cmd_writeback(o, argc, argv);
}

/* The dispatch, the help's command list and "nfsattr help --commands" read these rows. */
static const struct cli_sub commands[] = {
	{ "set", NULL, "PATH KEY=VALUE...", "set attributes (through nfskeys-attrd)", sub_set },
	{ "unset", NULL, "PATH KEY... | --all", "remove attributes", sub_unset },
	{ "get", NULL, "TARGET", "attributes set on exactly this directory", sub_get },
	{ "show", NULL, "TARGET", "attributes in effect, with where each comes from", sub_show },
	{ "list", NULL, "[TARGET]", "every directory with a policy (below TARGET)", sub_list },
	{ "export", NULL, "[TARGET]", "local policies as JSON", sub_export },
	{ "import", NULL, "FILE|-", "load an export (root)", sub_import },
	{ "mount-options", NULL, "TARGET", "mount options for the policy (-t TYPE, -o OPTS)",
	  sub_mount_options },
	{ "stats", NULL, NULL, "the daemon's statistics", sub_stats },
	{ "status", NULL, NULL, "the daemon's sub-mounts for policy on live mounts", sub_status },
	{ "writeback", NULL, "TARGET", "the writeback mode and dirty limit in effect",
	  sub_writeback },
	{},
};

int main(int argc, char *argv[])
{
	enum { OPT_DIRECT = 0x100, OPT_PROM, OPT_COMMANDS };
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' }, { "json", no_argument, NULL, 'j' },
		{ "socket", required_argument, NULL, 's' }, { "direct", no_argument, NULL, OPT_DIRECT },
		{ "prometheus", no_argument, NULL, OPT_PROM }, { "all", no_argument, NULL, 'a' },
		{ "type", required_argument, NULL, 't' },   { "options", required_argument, NULL, 'o' },
		{ "verbose", no_argument, NULL, 'v' },	    { "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		/* "nfsattr help --commands" (not in the help: for tests): the command list */
		{ "commands", no_argument, NULL, OPT_COMMANDS },
		{}
	};
	struct opts o = { 0 };
	const char *config = NULL, *cmd;
	const struct cli_sub *sub;
	bool help = false, dump = false;
	int verbose = 0, c, r;

	while ((c = getopt_long(argc, argv, "c:js:at:o:vhV", longopts, NULL)) >= 0) {
		switch (c) {
		case 'c':
			config = optarg;
			break;
		case 'j':
			o.json = true;
			break;
		case 's':
			o.socket = optarg;
			break;
		case OPT_DIRECT:
			o.direct = true;
			break;
		case OPT_PROM:
			o.prometheus = true;
			break;
		case 'a':
			o.all = true;
			break;
		case 't':
			o.fstype = optarg;
			break;
		case 'o':
			o.options = optarg;
			break;
		case 'v':
			verbose++;
			break;
		case 'h':
			help = true; /* after the command is known: a wrong one is an error */
			break;
		case OPT_COMMANDS:
			dump = true;
			break;
		default:
			return cli_std_option(c, "nfsattr", usage);
		}
	}
	if (optind >= argc && help) {
		usage(stdout);
		return EXIT_OK;
	}
	if (optind >= argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	cmd = argv[optind++];
	if (streq(cmd, "help")) {
		if (dump)
			cli_sub_dump(stdout, NULL, commands);
		else
			usage(stdout);
		return EXIT_OK;
	}
	sub = cli_sub_find(commands, cmd);
	if (!sub) {
		fprintf(stderr, "nfsattr: unknown command '%s' (see nfsattr --help)\n",
			nfsattr_shown(cmd));
		return EXIT_USAGE;
	}
	if (help) {
		usage(stdout);
		return EXIT_OK;
	}
	{
		unsigned skipped = 0;

		/* a file with an error is named (by the library) and gone past */
		r = nfskeys_ctx_new_partial(config, nfsattr_log, NULL, &o.ctx, &skipped);
		if (r == 0 && skipped)
			fprintf(stderr, "nfsattr: going on without what the errors above spoil\n");
	}
	if (r < 0) {
		if (r != -EINVAL && r != -ENOENT)
			fprintf(stderr, "nfsattr: cannot load configuration: %s\n", strerror(-r));
		return EXIT_CONFIG;
	}
	if (verbose)
		nfskeys_ctx_set_log_priority(o.ctx, verbose > 1 ? LOG_DEBUG : LOG_INFO);
	argc -= optind;
	argv += optind;
	r = sub->fn(&o, argc, argv);
	nfskeys_ctx_unref(o.ctx);
	return r;
}
