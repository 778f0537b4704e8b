/* Strict INI parser.  Accepts "[Section]", "key = value", blank lines and lines starting
 * with '#' or ';'.  Keys may contain letters, digits, '-', '_', '.', '@', '/', ':' and '*'
 * (so [Static] lines like "alice@EXAMPLE.COM = alice" work).  No escapes, no line
 * continuation: what is not understood is an error naming the line. */
#include <fcntl.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "ini.h"
#include "macros.h"

#define INI_MAX_FILE (1024 * 1024)
#define INI_MAX_LINE 4096

_printf_(5, 6) static int ini_error(char *err, size_t errlen, const char *file, unsigned line,
				    const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!err || errlen == 0)
		return -EINVAL;
	n = snprintf(err, errlen, "%s:%u: ", file, line);
	if (n < 0 || (size_t)n >= errlen)
		return -EINVAL;
	va_start(ap, fmt);
	vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static char *strip(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		*--e = '\0';
	return s;
}

/* A character for an error message: itself when printable, else \xNN, so hostile
 * input cannot put terminal escapes or line breaks into logs. */
static const char *show_char(char buf[static 5], unsigned char c)
{
	if (c >= 0x20 && c < 0x7f)
		snprintf(buf, 5, "%c", c);
	else
		snprintf(buf, 5, "\\x%02x", c);
	return buf;
}

/* The same for a string, truncated to fit out. */
static const char *show_str(char *out, size_t outlen, const char *s)
{
	size_t n = 0;

	for (; *s && n + 5 < outlen; s++) {
		char c[5];
		n += (size_t)snprintf(out + n, outlen - n, "%s", show_char(c, (unsigned char)*s));
	}
	out[n] = '\0';
	return out;
}

/* ASCII only: isalnum() would follow the caller's locale. */
static bool ascii_alnum(unsigned char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool key_char_ok(unsigned char c)
{
	return ascii_alnum(c) || (c != '\0' && strchr("-_.@/:*$\\+", c));
}

int ini_parse_string(const char *text, const char *file, ini_section_fn on_section,
		     ini_handler_fn on_value, void *userdata, char *err, size_t errlen)
{
	char section[256] = "";
	bool have_section = false;
	const char *p = text;
	unsigned lineno = 0;
	int r;

	if (!text || !file)
		return -EINVAL;

	while (*p) {
		char buf[INI_MAX_LINE + 2];
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		char *line, *eq, *key, *value;

		lineno++;
		if (len > INI_MAX_LINE)
			return ini_error(err, errlen, file, lineno, "line longer than %d bytes",
					 INI_MAX_LINE);
		memcpy(buf, p, len);
		buf[len] = '\0';
		p = nl ? nl + 1 : p + len;


		line = strip(buf);
		if (*line == '\0' || *line == '#' || *line == ';')
			continue;

		if (*line == '[') {
			char *end = strchr(line, ']');
			char *name;

			if (!end)
				return ini_error(err, errlen, file, lineno,
						 "section header without closing ']'");
			if (*strip(end + 1) != '\0')
				return ini_error(err, errlen, file, lineno,
						 "text after section header");
			*end = '\0';
			name = strip(line + 1);
			if (*name == '\0')
				return ini_error(err, errlen, file, lineno, "empty section name");
			for (const char *c = name; *c; c++) {
				char cb[5];
				if (!ascii_alnum((unsigned char)*c) && !strchr("-_. ", *c))
					return ini_error(err, errlen, file, lineno,
							 "invalid character '%s' in section name",
							 show_char(cb, (unsigned char)*c));
			}
			if (strlen(name) >= sizeof(section))
				return ini_error(err, errlen, file, lineno, "section name too long");
			strcpy(section, name);
			have_section = true;
			if (on_section) {
				r = on_section(userdata, file, lineno, section);
				if (r < 0)
					return r;
			}
			continue;
		}

		eq = strchr(line, '=');
		if (!eq)
			return ini_error(err, errlen, file, lineno,
					 "expected 'key = value', '[section]' or a comment");
		*eq = '\0';
		key = strip(line);
		value = strip(eq + 1);
		if (*key == '\0')
			return ini_error(err, errlen, file, lineno, "missing key before '='");
		for (const char *c = key; *c; c++) {
			char cb[5], kb[128];
			if (!key_char_ok((unsigned char)*c))
				return ini_error(err, errlen, file, lineno,
						 "invalid character '%s' in key '%s'",
						 show_char(cb, (unsigned char)*c),
						 show_str(kb, sizeof(kb), key));
		}
		if (!have_section)
			return ini_error(err, errlen, file, lineno,
					 "key '%s' outside of any [section]", key);
		/* Accept one level of matching quotes around the value. */
		if (strlen(value) >= 2 && (value[0] == '"' || value[0] == '\'') &&
		    value[strlen(value) - 1] == value[0]) {
			value[strlen(value) - 1] = '\0';
			value++;
		}
		if (on_value) {
			r = on_value(userdata, file, lineno, section, key, value);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

int ini_parse_file(const char *path, ini_section_fn on_section, ini_handler_fn on_value,
		   void *userdata, char *err, size_t errlen)
{
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *buf = NULL;
	struct stat st;
	size_t have = 0;

	/* O_NONBLOCK: a FIFO must be refused below, not block the reader forever. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		int r = negerrno();
		if (err)
			snprintf(err, errlen, "%s: %s", path, strerror(-r));
		return r;
	}
	if (fstat(fd, &st) < 0)
		return negerrno();
	if (!S_ISREG(st.st_mode)) {
		/* /dev/null, or a drop-in symlinked to it, is the usual way to say "no
		 * configuration" (as in systemd's conf.d masking). */
		if (S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3))
			return 0;
		if (err)
			snprintf(err, errlen, "%s: not a regular file", path);
		return -EINVAL;
	}
	if (st.st_size > INI_MAX_FILE) {
		if (err)
			snprintf(err, errlen, "%s: larger than %d bytes", path, INI_MAX_FILE);
		return -EFBIG;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf)
		return -ENOMEM;
	while (have < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + have, (size_t)st.st_size - have);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return negerrno();
		}
		if (n == 0)
			break;
		have += (size_t)n;
	}
	buf[have] = '\0';
	if (strlen(buf) != have) {
		if (err)
			snprintf(err, errlen, "%s: contains a NUL byte", path);
		return -EINVAL;
	}
	return ini_parse_string(buf, path, on_section, on_value, userdata, err, errlen);
}
