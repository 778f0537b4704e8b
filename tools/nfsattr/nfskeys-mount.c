/* nfskeys-mount: mount an NFS or CIFS export with the options its directory policy asks
 * for.  The policy in effect at SPEC's identity becomes mount options (explicit -o
 * options win), then mount.nfs / mount.nfs4 / mount.cifs is run, or with --dry-run the
 * command is printed. */
#include <getopt.h>
#include <syslog.h>

#include "macros.h"
#include "cli.h"
#include "nfskeys.h"

enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2, EXIT_CONFIG = 3, EXIT_EXEC = 4 };

static void usage(FILE *f)
{
	fputs("Usage: nfskeys-mount [OPTIONS] SPEC DIR\n"
	      "\n"
	      "Mount SPEC (SERVER:/EXPORT[/SUB] or //SERVER/SHARE[/SUB]) on DIR with the mount\n"
	      "options of the nfsattr policy in effect there; explicit -o options win.\n"
	      "\n"
	      "Options:\n"
	      "  -t, --type TYPE     nfs, nfs4, cifs or smb3 (default: from SPEC)\n"
	      "  -o, --options OPTS  explicit mount options\n"
	      "  -n, --dry-run       print the mount command instead of running it\n"
	      "  -c, --config FILE   configuration file\n"
	      "  -v, --verbose       more messages\n"
	      "  -h, --help          show this help\n"
	      "  -V, --version       show the version\n"
	      "\n"
	      "See nfskeys-mount(8).\n",
	      f);
}

/* Print a word so that a POSIX shell reads it back unchanged. */
static void print_quoted(const char *s)
{
	bool plain = *s != '\0';

	for (const char *p = s; *p; p++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
			    "@%+=:,./-_[]",
			    *p))
			plain = false;
	if (plain) {
		fputs(s, stdout);
		return;
	}
	putchar('\'');
	for (; *s; s++) {
		if (*s == '\'')
			fputs("'\\''", stdout);
		else
			putchar(*s);
	}
	putchar('\'');
}

/* Options that carry secrets must not travel in argv (ps shows them to everyone). */
static bool has_secret(const char *opts)
{
	_cleanup_free_ char *copy = opts ? strdup(opts) : NULL;
	char *save = NULL;

	if (!copy)
		return false;
	for (char *o = strtok_r(copy, ",", &save); o; o = strtok_r(NULL, ",", &save))
		if (startswith(o, "password=") || startswith(o, "pass=") ||
		    startswith(o, "password2="))
			return true;
	return false;
}

/* Whether the library said why something failed: then the tool does not say it again. */
static bool logged_error;

static void mount_log(void *userdata, int priority, const char *file, int line, const char *fn,
		      const char *format, va_list args)
{
	static const char *const names[] = { "emerg", "alert", "crit", "error",
					     "warning", "notice", "info", "debug" };

	fprintf(stderr, "nfskeys-mount: %s: ", names[priority & 7]);
	vfprintf(stderr, format, args);
	fputc('\n', stderr);
	if (priority <= LOG_ERR)
		logged_error = true;
}

int main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "type", required_argument, NULL, 't' }, { "options", required_argument, NULL, 'o' },
		{ "dry-run", no_argument, NULL, 'n' },	  { "config", required_argument, NULL, 'c' },
		{ "verbose", no_argument, NULL, 'v' },	  { "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },	  {}
	};
	const char *type = NULL, *opts = NULL, *config = NULL, *spec, *dir;
	struct nfskeys_ctx *ctx = NULL;
	struct nfskeys_attr_id *id = NULL;
	_cleanup_free_ char *merged = NULL, *helper = NULL;
	bool dry = false;
	int verbose = 0, c, r;

	while ((c = getopt_long(argc, argv, "t:o:nc:vhV", longopts, NULL)) >= 0) {
		switch (c) {
		case 't':
			type = optarg;
			break;
		case 'o':
			opts = optarg;
			break;
		case 'n':
			dry = true;
			break;
		case 'c':
			config = optarg;
			break;
		case 'v':
			verbose++;
			break;
		default:
			return cli_std_option(c, "nfskeys-mount", usage);
		}
	}
	if (argc - optind != 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	spec = argv[optind];
	dir = argv[optind + 1];
	if (has_secret(opts)) {
		fprintf(stderr, "nfskeys-mount: refusing a password in the options (it would be "
				"visible to every user in the process list); use credentials=FILE or "
				"'nfskeys cred'\n");
		return EXIT_USAGE;
	}
	r = nfskeys_attr_id_from_spec(spec, &id);
	if (r < 0) {
		fprintf(stderr, "nfskeys-mount: %s: not SERVER:/EXPORT or //SERVER/SHARE\n", spec);
		return EXIT_USAGE;
	}
	if (!type)
		type = startswith(nfskeys_attr_id_get_domain(id), "cifs://") ? "cifs" :
		       startswith(nfskeys_attr_id_get_domain(id), "nfs://") ? "nfs" : NULL;
	if (!type || !(streq(type, "nfs") || streq(type, "nfs4") || streq(type, "cifs") ||
		       streq(type, "smb3"))) {
		fprintf(stderr, "nfskeys-mount: %s: cannot mount this type (nfs, nfs4, cifs, smb3)\n",
			type ? type : spec);
		nfskeys_attr_id_free(id);
		return EXIT_USAGE;
	}
	{
		unsigned skipped = 0;

		/* a broken drop-in must not stop a mount: it is named and gone past */
		r = nfskeys_ctx_new_partial(config, mount_log, NULL, &ctx, &skipped);
		if (r == 0 && skipped)
			fprintf(stderr,
				"nfskeys-mount: going on without what the errors above spoil\n");
	}
	if (r < 0) {
		if (r != -EINVAL && r != -ENOENT)
			fprintf(stderr, "nfskeys-mount: cannot load configuration: %s\n",
				strerror(-r));
		nfskeys_attr_id_free(id);
		return EXIT_CONFIG;
	}
	if (verbose)
		nfskeys_ctx_set_log_priority(ctx, verbose > 1 ? LOG_DEBUG : LOG_INFO);
	r = nfskeys_attr_mount_options(ctx, id, type, opts, &merged);
	nfskeys_attr_id_free(id);
	nfskeys_ctx_unref(ctx);
	if (r < 0) {
		/* a broken store must not keep the machine from mounting: say so, go on (once:
		 * when the library named the error, without repeating it) */
		if (logged_error)
			fprintf(stderr, "nfskeys-mount: warning: mounting without policy options\n");
		else
			fprintf(stderr, "nfskeys-mount: warning: no policy options (%s)\n",
				strerror(-r));
		merged = strdup(opts ? opts : "");
		if (!merged)
			return EXIT_FAIL;
	}
	if (asprintf(&helper, "mount.%s", streq(type, "smb3") ? "cifs" : type) < 0)
		return EXIT_FAIL;
	if (dry) {
		fputs(helper, stdout);
		putchar(' ');
		print_quoted(spec);
		putchar(' ');
		print_quoted(dir);
		if (*merged) {
			fputs(" -o ", stdout);
			print_quoted(merged);
		}
		putchar('\n');
		return EXIT_OK;
	}
	{
		char *args[] = { helper, (char *)spec, (char *)dir, *merged ? "-o" : NULL, merged, NULL };
		static const char *const dirs[] = { "/sbin/", "/usr/sbin/" };

		for (size_t i = 0; i < ARRAY_SIZE(dirs); i++) {
			char path[256];
			snprintf(path, sizeof(path), "%s%s", dirs[i], helper);
			if (access(path, X_OK) == 0)
				execv(path, args);
		}
		execvp(helper, args);
		fprintf(stderr, "nfskeys-mount: cannot run %s: %m (install nfs-common or cifs-utils)\n",
			helper);
		return EXIT_EXEC;
	}
}
