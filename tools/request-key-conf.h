/* request-key-conf: request-key(8)'s configuration read the way request-key reads it, for
 * `nfskeys doctor` and `nfskeys idmap enable-upcalls`. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

struct rk_rule {
	char op[32], type[128], desc[512], callout[512], prog[512];
};

/* One line: 1 = a rule (ret filled), 0 = blank or a comment, -1 = malformed (fewer than
 * the five fields op, type, description, callout info and program: request-key stops
 * at such a line with "Syntax error", and every key it was asked for fails). */
int rk_parse_line(const char *line, struct rk_rule *ret);

/* The files request-key reads, in its order: DDIR/ *.conf by name (DDIR is normally
 * /etc/request-key.d), then CONF (normally /etc/request-key.conf).  cb gets the path to
 * open and the path to show: the same path without its first STRIP characters (the
 * length of a --root prefix, or 0). */
typedef void (*rk_file_cb)(const char *path, const char *shown, void *userdata);
void rk_for_each_file(const char *ddir, const char *conf, size_t strip, rk_file_cb cb,
		      void *userdata);

/* Every malformed line of those files: cb(shown, line number, the line's text); returns
 * how many. */
typedef void (*rk_malformed_cb)(const char *shown, unsigned line, const char *text,
				void *userdata);
unsigned rk_find_malformed(const char *ddir, const char *conf, size_t strip,
			   rk_malformed_cb cb, void *userdata);
