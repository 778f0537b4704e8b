/* nfskeys doctor: the request-key routes.  request-key.conf and request-key.d are read the
 * way request-key(8) reads them, and each route for the key types nfskeys serves is
 * judged: found, installed, and owned by nfskeys. */
#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <inttypes.h>
#include <pwd.h>
#include <strings.h>
#include <sys/wait.h>
#include <time.h>

#include "attrd-client.h"
#include "idmapd-client.h"
#include "log-escape.h"
#include "nfskeys-idmap.h"
#include "nfskeys-tool.h"
#include "request-key-conf.h"
#include "doctor.h"

/* request-key(8) semantics (request-key.conf(5)): each of type, description and callout
 * info may hold one '*'; the best line is the one whose wildcards skip the fewest
 * characters, compared column by column from the left; on a tie the first read wins.
 * Files: /etc/request-key.d/ *.conf (in name order), then /etc/request-key.conf. */
static long wild_skip(const char *pat, const char *s)
{
	const char *star = strchr(pat, '*');
	size_t pl, sl = strlen(s), tl;

	if (!star)
		return streq(pat, s) ? 0 : -1;
	pl = (size_t)(star - pat);
	tl = strlen(star + 1);
	if (sl < pl + tl || strncmp(pat, s, pl) != 0 || strcmp(star + 1, s + sl - tl) != 0)
		return -1;
	return (long)(sl - pl - tl);
}

struct route {
	const char *type, *desc, *callout; /* the probe */
	const char *label;                 /* what it stands for */
	bool ours_expected;                /* nfskeys-upcall should answer it */
	long skip[3];                      /* the best match so far */
	bool found;
	char prog[512], file[PATH_MAX + 16];
	unsigned line;
};

static void route_match(const char *shown, unsigned line, const struct rk_rule *rule,
			const char *text, void *userdata)
{
	struct route *r = userdata;
	long skip[3];

	(void)text;
	if (!rule || !streq(rule->op, "create"))
		return;
	skip[0] = wild_skip(rule->type, r->type);
	skip[1] = wild_skip(rule->desc, r->desc);
	skip[2] = wild_skip(rule->callout, r->callout);
	if (skip[0] < 0 || skip[1] < 0 || skip[2] < 0)
		return;
	if (r->found) {
		bool better = false;

		for (int i = 0; i < 3; i++)
			if (skip[i] != r->skip[i]) {
				better = skip[i] < r->skip[i];
				break;
			}
		if (!better)
			return;
	}
	memcpy(r->skip, skip, sizeof(skip));
	r->found = true;
	r->line = line;
	snprintf(r->prog, sizeof(r->prog), "%s", rule->prog[0] == '|' ? rule->prog + 1 : rule->prog);
	snprintf(r->file, sizeof(r->file), "%s", shown);
}

/* request-key's files under --root */
static void rk_files(const struct doctor *d, char *ddir, char *conf)
{
	rooted(d, "/etc/request-key.d", ddir, PATH_MAX);
	rooted(d, "/etc/request-key.conf", conf, PATH_MAX);
}

static void route_find(const struct doctor *d, struct route *r)
{
	char ddir[PATH_MAX], conf[PATH_MAX];

	rk_files(d, ddir, conf);
	rk_for_each_line(ddir, conf, strlen(d->root), route_match, r);
}

/* request-key stops at a line it cannot read ("Syntax error") and fails the key: one bad
 * line in any file fails every upcall, ours included (tests/kernel/nfs-failure.ktest). */
static void report_malformed(const char *shown, unsigned line, const struct rk_rule *rule,
			     const char *text, void *userdata)
{
	struct doctor *d = userdata;
	char subject[PATH_MAX + 16];

	if (rule)
		return;
	snprintf(subject, sizeof(subject), "%s:%u", shown, line);
	finding(d, "request-key", subject, ST_PROBLEM, "correct the line or remove it",
		"'%.200s' is not a rule (op type description callout program): request-key "
		"gives up on it, so every upcall fails, nfskeys-upcall's too", text);
}

void check_request_key_syntax(struct doctor *d)
{
	char ddir[PATH_MAX], conf[PATH_MAX];
	unsigned before = d->problems;

	rk_files(d, ddir, conf);
	rk_for_each_line(ddir, conf, strlen(d->root), report_malformed, d);
	if (d->problems == before)
		finding(d, "request-key", "files", ST_OK, NULL,
			"every line of /etc/request-key.d/*.conf and /etc/request-key.conf is a rule");
}

static const char *owner_of(const char *prog)
{
	const char *base = strrchr(prog, '/') ? strrchr(prog, '/') + 1 : prog;

	if (startswith(base, "nfskeys-upcall"))
		return "nfskeys";
	if (streq(base, "nfsidmap"))
		return "nfs-common's nfsidmap";
	if (streq(base, "cifs.idmap") || streq(base, "cifs.upcall"))
		return "cifs-utils";
	if (streq(base, "keyctl"))
		return "keyutils (keyctl)";
	return "another program";
}

enum route_verdict { RV_OK, RV_INFO, RV_NOT_FOUND, RV_MISSING, RV_FOREIGN };

static const char *route_fix(const struct route *r, enum route_verdict v, unsigned n)
{
	switch (v) {
	case RV_NOT_FOUND:
		return r->ours_expected ?
			       "run 'nfskeys idmap enable-upcalls' as root" :
			       "install cifs-utils (it routes cifs.spnego to cifs.upcall)";
	case RV_MISSING:
		return n > 1 ? "install the program or remove the lines" :
			       "install the program or remove the line";
	case RV_FOREIGN:
		return n > 1 ? "run 'nfskeys idmap enable-upcalls' as root; if it is installed, "
			       "remove or narrow the lines named here (they match as closely as "
			       "ours and are read first)" :
			       "run 'nfskeys idmap enable-upcalls' as root; if it is installed, "
			       "remove or narrow the line named here (it matches as closely as ours "
			       "and is read first)";
	default:
		return NULL;
	}
}

/* Two routes with the same problem share one finding: the same verdict, the same fix and,
 * for a program, the same program and error. */
static bool route_same_problem(const struct route *a, enum route_verdict va, int ea,
			       const struct route *b, enum route_verdict vb, int eb)
{
	if (va != vb || a->ours_expected != b->ours_expected)
		return false;
	if (va == RV_MISSING)
		return ea == eb && streq(a->prog, b->prog);
	return va != RV_FOREIGN || streq(a->prog, b->prog);
}

/* Append to buf (size bytes, *len used so far); past the end the text is cut. */
_printf_(4, 5) static void append(char *buf, size_t size, size_t *len, const char *fmt, ...)
{
	va_list ap;
	int r;

	if (*len >= size)
		return;
	va_start(ap, fmt);
	r = vsnprintf(buf + *len, size - *len, fmt, ap);
	va_end(ap);
	*len = r < 0 ? size : *len + (size_t)r;
}

/* One problem finding for the routes in grp (n of them): the single route's own line, or
 * one line naming how many routes share it, each with its file and line. */
static void route_problem(struct doctor *d, struct route *const *grp, size_t n,
			  enum route_verdict v, int err)
{
	const struct route *r = grp[0];
	char subject[512] = "", list[2048] = "";
	size_t sl = 0, ll = 0;

	for (size_t i = 0; i < n; i++) {
		const struct route *g = grp[i];
		int plen = (int)(g->ours_expected ? strchr(g->desc, ':') - g->desc + 1 : 0);
		bool same_type = i && streq(g->type, grp[i - 1]->type);

		if (same_type)
			append(subject, sizeof(subject), &sl, ", %.*s*", plen, g->desc);
		else
			append(subject, sizeof(subject), &sl, "%s%s %.*s*", i ? "; " : "", g->type,
			       plen, g->desc);
		if (v == RV_NOT_FOUND)
			append(list, sizeof(list), &ll, "%s%s", i ? ", " : "", g->label);
		else
			append(list, sizeof(list), &ll, "%s%s (%s:%u)", i ? ", " : "", g->label,
			       g->file, g->line);
	}
	if (n == 1) {
		if (v == RV_NOT_FOUND)
			finding(d, "route", subject, ST_PROBLEM, route_fix(r, v, n),
				"no request-key line matches %s keys (%s): the kernel's request fails",
				r->type, r->label);
		else if (v == RV_MISSING)
			finding(d, "route", subject, ST_PROBLEM, route_fix(r, v, n),
				"%s:%u routes %s to %s, which is missing or not executable (%s)",
				r->file, r->line, r->label, r->prog, strerror(err));
		else
			finding(d, "route", subject, ST_PROBLEM, route_fix(r, v, n),
				"%s:%u routes %s to %s (%s), not to nfskeys-upcall", r->file,
				r->line, r->label, r->prog, owner_of(r->prog));
		return;
	}
	if (v == RV_NOT_FOUND)
		finding(d, "route", subject, ST_PROBLEM, route_fix(r, v, n),
			"no request-key line matches %zu routes (%s): the kernel's requests fail",
			n, list);
	else if (v == RV_MISSING)
		finding(d, "route", subject, ST_PROBLEM, route_fix(r, v, n),
			"%zu routes go to %s, which is missing or not executable (%s): %s", n,
			r->prog, strerror(err), list);
	else
		finding(d, "route", subject, ST_PROBLEM, route_fix(r, v, n),
			"%zu routes go to %s (%s), not to nfskeys-upcall: %s", n, r->prog,
			owner_of(r->prog), list);
}

void check_routes(struct doctor *d)
{
	struct route routes[] = {
		{ "id_resolver", "uid:alice@example.org", "", "NFS name to uid", true },
		{ "id_resolver", "gid:staff@example.org", "", "NFS group to gid", true },
		{ "id_resolver", "user:1000", "", "NFS uid to name", true },
		{ "id_resolver", "group:1000", "", "NFS gid to group", true },
		{ "cifs.idmap", "os:S-1-5-21-1-2-3-1000", "", "CIFS SID to uid", true },
		{ "cifs.idmap", "gs:S-1-5-21-1-2-3-1000", "", "CIFS SID to gid", true },
		{ "cifs.idmap", "oi:1000", "", "CIFS uid to SID", true },
		{ "cifs.idmap", "gi:1000", "", "CIFS gid to SID", true },
		{ "cifs.spnego", "ver=0x2;host=server;ip4=192.0.2.1;sec=krb5;uid=0x0;creduid=0x0",
		  "", "CIFS Kerberos tickets", false },
	};
	enum route_verdict v[ARRAY_SIZE(routes)];
	int err[ARRAY_SIZE(routes)] = {};
	bool done[ARRAY_SIZE(routes)] = {};

	for (size_t i = 0; i < ARRAY_SIZE(routes); i++) {
		struct route *r = &routes[i];
		char real[PATH_MAX + 8];

		route_find(d, r);
		if (!r->found) {
			v[i] = RV_NOT_FOUND;
			continue;
		}
		rooted(d, r->prog, real, sizeof(real));
		if (access(real, X_OK) != 0) {
			v[i] = RV_MISSING;
			err[i] = errno;
		} else if (!r->ours_expected) {
			v[i] = RV_INFO;
		} else {
			v[i] = streq(owner_of(r->prog), "nfskeys") ? RV_OK : RV_FOREIGN;
		}
	}
	for (size_t i = 0; i < ARRAY_SIZE(routes); i++) {
		struct route *r = &routes[i], *grp[ARRAY_SIZE(routes)];
		char subject[160];
		size_t n = 0;

		if (done[i])
			continue;
		snprintf(subject, sizeof(subject), "%s %.*s*", r->type,
			 (int)(r->ours_expected ? strchr(r->desc, ':') - r->desc + 1 : 0), r->desc);
		if (v[i] == RV_INFO) {
			finding(d, "route", subject, ST_INFO, NULL, "%s:%u: %s by %s (%s)", r->file,
				r->line, r->label, r->prog, owner_of(r->prog));
			continue;
		}
		if (v[i] == RV_OK) {
			finding(d, "route", subject, ST_OK, NULL, "%s:%u: %s by %s (ours)", r->file,
				r->line, r->label, r->prog);
			continue;
		}
		for (size_t j = i; j < ARRAY_SIZE(routes); j++) {
			if (done[j] ||
			    !route_same_problem(r, v[i], err[i], &routes[j], v[j], err[j]))
				continue;
			grp[n++] = &routes[j];
			done[j] = true;
		}
		route_problem(d, grp, n, v[i], err[i]);
	}
}
