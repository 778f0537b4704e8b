/* One way to put untrusted text into a log line: every byte that is not printable ASCII
 * becomes \xNN, so a key description, path or lookup key with a newline cannot forge a
 * log line (nor a terminal escape).  Used by both daemons, libnfskeys' log dispatch and
 * nfskeys-upcall; display_escape does the same for what a command prints for a person
 * (nfsattr), keeping UTF-8 names readable.  Header only: the lean request-key helper
 * links nothing new (tests/integration/idmap-lean.sh). */
#pragma once

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
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

/* Length of the valid UTF-8 sequence at p that is safe to show on a terminal (2 to 4),
 * or 0: an invalid or overlong sequence, a surrogate, a C1 control (U+0080..U+009F) or
 * a bidirectional override or isolate (U+202A..U+202E, U+2066..U+2069), which would
 * reorder what follows it on the screen. */
static inline size_t display_utf8_len(const unsigned char *p)
{
	size_t n = p[0] >= 0xf0 ? 4 : p[0] >= 0xe0 ? 3 : 2;
	unsigned long cp;

	if (p[0] < 0xc2 || p[0] > 0xf4)
		return 0;
	cp = p[0] & (0x7f >> n);
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp <= 0x9f || (cp >= 0x202a && cp <= 0x202e) ||
	    (cp >= 0x2066 && cp <= 0x2069))
		return 0;
	return n;
}

/* For text shown to a person (a path, a name, a server's error) in a command's output:
 * like log_escape, but valid UTF-8 stays as it is (names in any language) and a
 * backslash is written \\, so every \xNN in the output stands for a byte of the name.
 * Always NUL-terminated, cut at a whole character or escape. */
static inline void display_escape(char *dst, size_t size, const char *src)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;

	for (const unsigned char *p = (const unsigned char *)src; *p;) {
		size_t n = *p >= 0x80 ? display_utf8_len(p) : 0;

		if (n) {
			if (o + n >= size)
				break;
			memcpy(dst + o, p, n);
			o += n;
			p += n;
		} else if (*p == '\\') {
			if (o + 2 >= size)
				break;
			dst[o++] = '\\';
			dst[o++] = '\\';
			p++;
		} else if (*p >= 0x20 && *p < 0x7f) {
			if (o + 1 >= size)
				break;
			dst[o++] = (char)*p++;
		} else {
			if (o + 4 >= size)
				break;
			dst[o++] = '\\';
			dst[o++] = 'x';
			dst[o++] = hex[*p >> 4];
			dst[o++] = hex[*p & 15];
			p++;
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
