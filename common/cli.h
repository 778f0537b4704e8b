/* What every nfskeys program (tools, daemons, helpers) does alike on its command line:
 * -h/--help prints the usage on standard output and exits 0, -V/--version prints
 * "NAME VERSION" and exits 0, an option getopt did not accept prints the usage on
 * standard error and exits 2 (each program's documented usage exit code). */
#pragma once

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "log-escape.h"

#define CLI_EXIT_USAGE 2

/* Every message a program prints names it by program_invocation_short_name (glibc): the
 * name it was run as, which a helper exec'd under another file name (nfskeys-upcall-full
 * for nfskeys-upcall) sets once at the start of main.  The library's default log sink
 * reads the same variable, so a tool's own errors and the library's agree. */
static inline void cli_set_program_name(const char *name)
{
	program_invocation_short_name = (char *)name;
}

/* An error message on standard error: "NAME: MESSAGE\n", one line.  It often quotes what
 * a user typed or a server sent (a name, a path), so control bytes in it are escaped
 * (display_escape) and cannot drive the terminal or forge a second line. */
static inline void cli_verror(const char *name, const char *fmt, va_list ap)
{
	char raw[LOG_LINE_MAX], shown[LOG_LINE_MAX];

	vsnprintf(raw, sizeof(raw), fmt, ap);
	display_escape(shown, sizeof(shown), raw);
	fprintf(stderr, "%s: %s\n", name, shown);
}

/* An error message on standard error, named after the running program. */
static inline void cli_verror_self(const char *fmt, va_list ap)
{
	cli_verror(program_invocation_short_name, fmt, ap);
}

/* Print "NAME VERSION"; returns the exit code, 0. */
static inline int cli_version(const char *name)
{
	printf("%s %s\n", name, PACKAGE_VERSION);
	return 0;
}

/* The end of a getopt switch: 'h' and 'V' and the default case go here.  Returns the
 * exit code. */
static inline int cli_std_option(int c, const char *name, void (*usage)(FILE *f))
{
	if (c == 'V')
		return cli_version(name);
	usage(c == 'h' ? stdout : stderr);
	return c == 'h' ? 0 : CLI_EXIT_USAGE;
}
