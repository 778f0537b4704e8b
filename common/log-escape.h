/* One way to put untrusted text into a log line: every byte that is not printable ASCII
 * becomes \xNN, so a key description, path or lookup key
 * with a newline cannot forge a log line (nor a terminal escape).  Used by both daemons,
 * libnfskeys' log dispatch and nfskeys-upcall.  Header only: the lean request-key
 * helper links nothing new (tests/integration/idmap-lean.sh). */
#pragma once

#include <stdarg.h>
#include <stdio.h>
#include <syslog.h>

#define LOG_LINE_MAX 2048

/* Copy src into dst (size > 0), escaped; always NUL-terminated, cut at a whole escape. */
static inline void log_escape(char *dst, size_t size, const char *src)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;

	for (const unsigned char *p = (const unsigned char *)src; *p; p++) {
		if (*p >= 0x20 && *p < 0x7f) {
			if (o + 1 >= size)
				break;
			dst[o++] = (char)*p;
		} else {
			if (o + 4 >= size)
				break;
			dst[o++] = '\\';
			dst[o++] = 'x';
			dst[o++] = hex[*p >> 4];
			dst[o++] = hex[*p & 15];
		}
	}
	dst[o] = '\0';
}

/* vsnprintf, then escape: the whole message, format text included (ours is plain). */
static inline void log_vformat(char *dst, size_t size, const char *fmt, va_list ap)
{
	char raw[LOG_LINE_MAX];

	vsnprintf(raw, sizeof(raw), fmt, ap);
	log_escape(dst, size, raw);
}

static inline void log_vsyslog(int priority, const char *fmt, va_list ap)
{
	char line[LOG_LINE_MAX];

	log_vformat(line, sizeof(line), fmt, ap);
	syslog(priority, "%s", line);
}

static inline void __attribute__((format(printf, 2, 3))) log_syslogf(int priority,
								    const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vsyslog(priority, fmt, ap);
	va_end(ap);
}
