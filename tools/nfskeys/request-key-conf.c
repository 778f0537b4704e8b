/* request-key-conf: request-key(8)'s configuration read the way request-key reads it
 * (request-key.conf(5)): one rule per line, "op type description callout-info program
 * [args...]", '#' starts a comment line; the files of /etc/request-key.d ending in
 * ".conf" in name order, then /etc/request-key.conf. */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macros.h"
#include "request-key-conf.h"

int rk_parse_line(const char *line, struct rk_rule *ret)
{
	const char *p = line + strspn(line, " \t");

	if (*p == '\0' || *p == '\n' || *p == '#')
		return 0;
	if (sscanf(p, "%31s %127s %511s %511s %511s", ret->op, ret->type, ret->desc,
		   ret->callout, ret->prog) != 5)
		return -1;
	return 1;
}

static int conf_filter(const struct dirent *de)
{
	size_t n = strlen(de->d_name);

	return de->d_name[0] != '.' && n > 5 && streq(de->d_name + n - 5, ".conf");
}

static void scan_file(const char *path, const char *shown, rk_line_cb cb, void *userdata)
{
	char line[2048];
	unsigned no = 0;
	FILE *f = fopen(path, "re");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		struct rk_rule rule;
		int r = rk_parse_line(line, &rule);

		no++;
		if (r == 0)
			continue;
		line[strcspn(line, "\n")] = '\0';
		cb(shown, no, r > 0 ? &rule : NULL, line, userdata);
	}
	fclose(f);
}

void rk_for_each_line(const char *ddir, const char *conf, size_t strip, rk_line_cb cb,
		      void *userdata)
{
	char path[PATH_MAX + 300];
	struct dirent **names = NULL;
	int n;

	n = scandir(ddir, &names, conf_filter, alphasort);
	for (int i = 0; i < n; i++) {
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", ddir, names[i]->d_name) <
		    sizeof(path))
			scan_file(path, path + MIN(strip, strlen(path)), cb, userdata);
		free(names[i]);
	}
	free(names);
	scan_file(conf, conf + MIN(strip, strlen(conf)), cb, userdata);
}
