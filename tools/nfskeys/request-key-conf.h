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

/* Every line of request-key's files that is a rule or malformed, in request-key's order:
 * DDIR/ *.conf by name (DDIR is normally /etc/request-key.d), then CONF (normally
 * /etc/request-key.conf).  cb gets the file as shown (its path without the first STRIP
 * characters: the length of a --root prefix, or 0), the line number, the rule (NULL for a
 * malformed line) and the line's text without its newline. */
typedef void (*rk_line_cb)(const char *shown, unsigned line, const struct rk_rule *rule,
			   const char *text, void *userdata);
void rk_for_each_line(const char *ddir, const char *conf, size_t strip, rk_line_cb cb,
		      void *userdata);
