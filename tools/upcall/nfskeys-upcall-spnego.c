/* nfskeys-upcall-spnego: the request-key helper for cifs.spnego keys (Kerberos for
 * sec=krb5 CIFS mounts).  A program of its own so that the ID-mapping helpers, run on
 * every kernel ID-mapping miss, keep loading no Kerberos library
 * (tests/integration/idmap-lean.sh); nfskeys-upcall-full executes it for cifs.spnego
 * keys with the same arguments.  The work is in upcall-spnego.c. */
#include <syslog.h>

#include "macros.h"
#include "cli.h"
#include "upcall-args.h"
#include "upcall-spnego.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: nfskeys-upcall-spnego [OPTIONS] KEY DESCRIPTION\n"
		"\n"
		"request-key helper for cifs.spnego keys: the session key and SPNEGO blob of a\n"
		"sec=krb5 CIFS mount, from the Kerberos credentials of the creduid= user.\n"
		"Run by request-key (through nfskeys-upcall) as: nfskeys-upcall %%k %%d\n"
		"\n"
		"Options:\n"
		"  -c, --config FILE   configuration file ([Cred] CIFS-* keys)\n"
		"  -T, --type TYPE     cifs.spnego: also answer a routed user key (tests)\n"
		"  -v, --verbose       log debug messages too\n"
		"  -h, --help          show this help\n"
		"  -V, --version       show the version\n"
		"\n"
		"Exit status: 0 instantiated, 1 rejected, 2 usage, 3 configuration,\n"
		"4 the key could not be instantiated or rejected.  See nfskeys-upcall-spnego(8).\n");
}

int main(int argc, char *argv[])
{
	struct upcall_args a;
	int r;

	argv[0] = program_invocation_short_name; /* getopt's messages: the name, not a path */
	r = upcall_args_parse(argc, argv, &a);

	switch (r) {
	case 0:
		break;
	case UPCALL_ARGS_BAD_TIMEOUT:
	case UPCALL_ARGS_BAD_SERIAL:
		fprintf(stderr, "nfskeys-upcall-spnego: bad argument '%s'\n", a.bad);
		return CLI_EXIT_USAGE;
	case UPCALL_ARGS_BAD_COUNT:
		usage(stderr);
		return CLI_EXIT_USAGE;
	default:
		return cli_std_option(r, "nfskeys-upcall-spnego", usage);
	}
	openlog("nfskeys-upcall", LOG_PID, LOG_AUTHPRIV);
	if (!a.verbose)
		setlogmask(LOG_UPTO(LOG_INFO));
	return upcall_spnego(&a);
}
