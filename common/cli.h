/* What every nfskeys program (tools, daemons, helpers) does alike on its command line:
 * -h/--help prints the usage on standard output and exits 0, -V/--version prints
 * "NAME VERSION" and exits 0, an option getopt did not accept prints the usage on
 * standard error and exits 2 (each program's documented usage exit code). */
#pragma once

#include <stdarg.h>
#include <stdio.h>

#define CLI_EXIT_USAGE 2

/* An error message on standard error: "NAME: MESSAGE\n". */
static inline void cli_verror(const char *name, const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: ", name);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
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
