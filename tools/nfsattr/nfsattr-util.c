/* What nfsattr's commands share to speak to a person (nfsattr-private.h): the error
 * line, the library's log sink and the escaped display of names.  It calls nothing of
 * the commands, so they and nfsattr.c depend on it, never it on them. */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>

#include "macros.h"
#include "log-escape.h"
#include "nfsattr-private.h"

/* The message escaped whole (ours is plain text): the paths, names and errors in it come
 * from users, servers and the kernel. */
_printf_(1, 2) int nfsattr_fail(const char *fmt, ...)
{
	char raw[LOG_LINE_MAX], line[4 * LOG_LINE_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	display_escape(line, sizeof(line), raw);
	fprintf(stderr, "nfsattr: %s\n", line);
	return EXIT_FAIL;
}

bool nfsattr_library_said;

/* The library's messages as its default sink prints them (libnfskeys/log.c), noting that an error was said,
 * so that the command does not say the same failure again (nfsattr_store_fail). */
void nfsattr_log(void *userdata, int priority, const char *file, int line, const char *fn,
		 const char *format, va_list args)
{
	static const char *const names[] = { "emerg", "alert", "crit", "error",
					     "warning", "notice", "info", "debug" };
	char raw[LOG_LINE_MAX], shown[LOG_LINE_MAX];

	(void)userdata, (void)file, (void)line, (void)fn;
	if (priority <= LOG_ERR)
		nfsattr_library_said = true;
	vsnprintf(raw, sizeof(raw), format, args);
	display_escape(shown, sizeof(shown), raw);
	fprintf(stderr, "nfsattr: %s: %s\n", names[priority & 7], shown);
}

int nfsattr_store_fail(int r)
{
	if (nfsattr_library_said)
		return EXIT_FAIL;
	return nfsattr_fail("cannot read the policy store: %s", strerror(-r));
}

const char *nfsattr_shown(const char *s)
{
	static char bufs[8][4 * PATH_MAX + 1];
	static unsigned next;
	char *b = bufs[next++ % ARRAY_SIZE(bufs)];

	display_escape(b, sizeof(bufs[0]), s ? s : "");
	return b;
}
