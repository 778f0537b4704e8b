/* The findings of nfskeys doctor (doctor.h): one line each, or one JSON object. */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>

#include "doctor.h"
#include "log-escape.h"
#include "nfskeys-tool.h"

static const char *const status_name[] = { "ok", "info", "problem" };

/* One finding: check (routes, daemon, domain, channel, quota), subject, status, what was
 * found and, for a problem, the fix in words. */
void finding(struct doctor *d, const char *check, const char *subject, enum status st,
	     const char *fix, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (st == ST_PROBLEM)
		d->problems++;
	if (d->json) {
		printf("%s{\"check\":", d->n ? ",\n " : " ");
		print_json_str(check);
		printf(",\"subject\":");
		print_json_str(subject);
		printf(",\"status\":\"%s\",\"message\":", status_name[st]);
		print_json_str(msg);
		printf(",\"fix\":");
		print_json_str(fix ? fix : "");
		putchar('}');
	} else {
		/* names from request-key files, user names and the domains NFS clients sent:
		 * escaped, so that none can forge a finding or drive the terminal */
		char shown_subject[4 * PATH_MAX + 64], shown[4 * sizeof(msg)];

		display_escape(shown_subject, sizeof(shown_subject), subject);
		display_escape(shown, sizeof(shown), msg);
		if (fix)
			printf("%-7s %s %s: %s; fix: %s\n", status_name[st], check, shown_subject,
			       shown, fix);
		else
			printf("%-7s %s %s: %s\n", status_name[st], check, shown_subject, shown);
	}
	d->n++;
}

/* path under --root; an overlong one becomes "" (nothing is found there) */
void rooted(const struct doctor *d, const char *path, char *buf, size_t size)
{
	if ((size_t)snprintf(buf, size, "%s%s", d->root, path) >= size)
		buf[0] = '\0';
}
