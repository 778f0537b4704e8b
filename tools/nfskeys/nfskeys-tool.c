/* What every part of nfskeys calls (nfskeys-tool.h): the error line.  Kept out of
 * nfskeys.c, whose command table calls the commands, so that calls run one way: nfskeys.c
 * -> cmd-*.c -> this file. */
#include <stdarg.h>

#include "nfskeys-tool.h"

int tool_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cli_verror_self(fmt, ap);
	va_end(ap);
	return EXIT_FAIL;
}
