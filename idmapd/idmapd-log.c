/* nfskeys-idmapd's log (stderr in front, syslog once daemonized) and its readiness
 * notifications to systemd. */
#include <stdarg.h>
#include <syslog.h>
#ifdef HAVE_SYSTEMD
#include <systemd/sd-daemon.h>
#endif

#include "idmapd.h"

bool log_to_stderr = true;
int log_level = LOG_INFO;

void vlog_msg(int prio, const char *fmt, va_list ap)
{
	if (prio > log_level)
		return;
	if (log_to_stderr) {
		fprintf(stderr, "nfskeys-idmapd: ");
		vfprintf(stderr, fmt, ap);
		fputc('\n', stderr);
	} else {
		vsyslog(prio, fmt, ap);
	}
}

void _printf_(2, 3) log_msg(int prio, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog_msg(prio, fmt, ap);
	va_end(ap);
}

void notify(const char *state)
{
#ifdef HAVE_SYSTEMD
	sd_notify(0, state);
#endif
	log_msg(LOG_DEBUG, "notify: %s", state);
}
