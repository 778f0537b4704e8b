/* The cifs.spnego upcall's log line (upcall-spnego-private.h), in a file of its own so
 * that the upcall's parts all call it and it calls none of them. */
#include <stdarg.h>
#include <stdio.h>
#include <syslog.h>

#include "upcall-spnego-private.h"

/* Log to syslog and standard error (request-key keeps the helper's stderr nowhere, a
 * wrapper in tests keeps it). Never given a secret. */
__attribute__((format(printf, 2, 3))) void spnego_say(int prio, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsyslog(prio, fmt, ap);
	va_end(ap);
	if (prio <= LOG_INFO) {
		fputs("nfskeys-upcall: ", stderr);
		va_start(ap, fmt);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
		fputc('\n', stderr);
	}
}
