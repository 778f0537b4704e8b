/* A command's subcommands as one table: each row names the subcommand, its alias, its
 * arguments, its one-line help and its handler.  The dispatch, the --help lists and
 * "help --commands" (the whole tree, for tests/integration/cli-tables.sh) all read the
 * rows, so the help and the man pages cannot drift from what runs. */
#pragma once

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

struct cli_sub {
	const char *name;
	const char *alias; /* another word for the same subcommand, or NULL */
	const char *args;  /* its arguments in the --help list, or NULL */
	const char *help;  /* one line; "\n" continues it, indented, on the next */
	/* state: what the command parsed before (its options, a context, a connection) */
	int (*fn)(void *state, int argc, char *argv[]);
};

/* The row whose name or alias is word, or NULL.  Tables end with a row whose name is
 * NULL. */
static inline const struct cli_sub *cli_sub_find(const struct cli_sub *subs, const char *word)
{
	for (; subs && subs->name; subs++)
		if (strcmp(subs->name, word) == 0 ||
		    (subs->alias && strcmp(subs->alias, word) == 0))
			return subs;
	return NULL;
}

/* The names as "a, b (c), d", lines of at most 80 columns and continued at column indent;
 * col is where the list starts. */
static inline void cli_sub_names(FILE *f, const struct cli_sub *subs, int col, int indent)
{
	for (const struct cli_sub *s = subs; s->name; s++) {
		int len = (int)strlen(s->name) + (s->alias ? (int)strlen(s->alias) + 3 : 0) +
			  (s[1].name ? 1 : 0);

		if (s != subs && col + 1 + len > 80) {
			fprintf(f, "\n%*s", indent, "");
			col = indent;
		} else if (s != subs) {
			fputc(' ', f);
			col++;
		}
		col += fprintf(f, "%s", s->name);
		if (s->alias)
			col += fprintf(f, " (%s)", s->alias);
		if (s[1].name)
			col += fprintf(f, ",");
	}
}

/* The "Commands:" rows of a command's --help: "  name|alias ARGS  help", the help at
 * column width (on the next line when the left part is longer). */
static inline void cli_sub_usage(FILE *f, const struct cli_sub *subs, int width)
{
	for (const struct cli_sub *s = subs; s->name; s++) {
		int n = fprintf(f, "  %s%s%s%s%s", s->name, s->alias ? "|" : "",
				s->alias ? s->alias : "", s->args ? " " : "",
				s->args ? s->args : "");

		if (n + 1 > width)
			fprintf(f, "\n%*s", width, "");
		else
			fprintf(f, "%*s", width - n, "");
		for (const char *p = s->help; *p; p++) {
			fputc(*p, f);
			if (*p == '\n')
				fprintf(f, "%*s", width, "");
		}
		fputc('\n', f);
	}
}

/* "cmd name" and "cmd alias" lines, one a line ("help --commands"); "cmd" alone when it
 * has no subcommands; "name" alone when cmd is NULL (a program's top-level table). */
static inline void cli_sub_dump(FILE *f, const char *cmd, const struct cli_sub *subs)
{
	if (!subs || !subs->name) {
		fprintf(f, "%s\n", cmd);
		return;
	}
	for (const struct cli_sub *s = subs; s->name; s++) {
		for (int i = 0; i < 2; i++) {
			const char *w = i ? s->alias : s->name;

			if (w)
				fprintf(f, "%s%s%s\n", cmd ? cmd : "", cmd ? " " : "", w);
		}
	}
}
