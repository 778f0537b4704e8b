/* nfskeys doctor: what an admin runs when ID mapping or the services misbehave.  It reads
 * the request-key configuration the way request-key does, asks both daemons over their
 * sockets, looks at who holds knfsd's and rpc_pipefs' idmap files and at the key quotas,
 * and prints one line per finding with the fix.  --root DIR reads etc/ and proc/ under
 * DIR (tests build fake trees there); the daemons are always asked on their sockets.
 * --user NAME adds the user's Kerberos TGT expiry, read by a child that has become the
 * user first (libkrb5 never runs as root on a user's credential cache). */
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

#define PING_TIMEOUT_MS 2000
/* A quota is short when fewer than this share (percent) of the keys or bytes is left. */
#define QUOTA_LOW_PERCENT 10

enum status { ST_OK, ST_INFO, ST_PROBLEM };
static const char *const status_name[] = { "ok", "info", "problem" };

struct doctor {
	const char *root; /* "" for the real system */
	bool json;
	bool systemd; /* PID 1 is systemd: fixes name systemctl and journalctl */
	unsigned problems, n;
};


/* One finding: check (routes, daemon, domain, channel, quota), subject, status, what was
 * found and, for a problem, the fix in words. */
_printf_(6, 7) static void finding(struct doctor *d, const char *check, const char *subject,
				   enum status st, const char *fix, const char *fmt, ...)
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
static void rooted(const struct doctor *d, const char *path, char *buf, size_t size)
{
	if ((size_t)snprintf(buf, size, "%s%s", d->root, path) >= size)
		buf[0] = '\0';
}

/* ---------------------------------------------------------------- request-key routes */

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

static void check_request_key_syntax(struct doctor *d)
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

static void check_routes(struct doctor *d)
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

/* ---------------------------------------------------------------- daemons */

static void check_daemons(struct doctor *d, struct nfskeys_ctx *ctx, const char *idmapd_sock,
			  const char *attrd_sock)
{
	struct rpc_client *c = NULL;
	char rel[64], path[PATH_MAX], bin[PATH_MAX];
	uint32_t pid;
	uint64_t n;
	int r;

	snprintf(path, sizeof(path), "%s", idmapd_socket_path(ctx, idmapd_sock));
	r = idmapd_client_new(path, PING_TIMEOUT_MS, &c);
	if (r >= 0)
		r = idmapd_client_ping(c, rel, sizeof(rel), &pid, &n);
	rpc_client_free(c);
	c = NULL;
	if (r >= 0)
		finding(d, "daemon", "nfskeys-idmapd", ST_OK, NULL,
			"answers on %s (release %s, pid %u, configuration generation %llu)", path,
			rel, pid, (unsigned long long)n);
	else
		finding(d, "daemon", "nfskeys-idmapd", ST_PROBLEM,
			d->systemd ?
				"start it: systemctl start nfskeys-idmapd (journalctl -u "
				"nfskeys-idmapd says why it stopped); until then every upcall "
				"resolves in-process" :
				"start it as root: " SBINDIR "/nfskeys-idmapd (it logs to "
				"syslog; with -f it stays in front and says on the terminal why "
				"it stops); until then every upcall resolves in-process",
			"no answer on %s: %s", path,
			r == -ENOENT || r == -ECONNREFUSED ? "not running" : strerror(-r));

	snprintf(path, sizeof(path), "%s", attrd_socket_path(ctx, attrd_sock));
	r = attrd_client_new(path, PING_TIMEOUT_MS, &c);
	if (r >= 0)
		r = attrd_client_ping(c, rel, sizeof(rel), &pid, &n);
	rpc_client_free(c);
	rooted(d, SBINDIR "/nfskeys-attrd", bin, sizeof(bin));
	if (r >= 0)
		finding(d, "daemon", "nfskeys-attrd", ST_OK, NULL,
			"answers on %s (release %s, pid %u, %llu policies)", path, rel, pid,
			(unsigned long long)n);
	else if (!attrd_sock && access(bin, X_OK) != 0)
		finding(d, "daemon", "nfskeys-attrd", ST_INFO, NULL,
			"not installed (%s): directory policies are not served", bin);
	else
		finding(d, "daemon", "nfskeys-attrd", ST_PROBLEM,
			d->systemd ?
				"start it: systemctl start nfskeys-attrd (journalctl -u "
				"nfskeys-attrd says why it stopped)" :
				"start it as root: " SBINDIR "/nfskeys-attrd (it logs to syslog; "
				"with -f it stays in front and says on the terminal why it stops)",
			"no answer on %s: %s", path,
			r == -ENOENT || r == -ECONNREFUSED ? "not running" : strerror(-r));
}

/* ---------------------------------------------------------------- NFSv4 domain */

/* Domain = ... in [General] of nfs-common's idmapd.conf, NULL when unset. */
static bool idmapd_conf_domain(const struct doctor *d, char *buf, size_t size)
{
	char path[PATH_MAX], line[1024];
	bool general = false, found = false;
	FILE *f;

	rooted(d, "/etc/idmapd.conf", path, sizeof(path));
	f = fopen(path, "re");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		char *s = line, *eq, *e;

		while (isspace((unsigned char)*s))
			s++;
		if (*s == '[') {
			general = strncasecmp(s, "[General]", 9) == 0;
			continue;
		}
		eq = strchr(s, '=');
		if (!general || *s == '#' || *s == ';' || !eq || strncasecmp(s, "Domain", 6) != 0)
			continue;
		for (e = s + 6; isspace((unsigned char)*e); e++)
			;
		if (e != eq)
			continue;
		for (s = eq + 1; isspace((unsigned char)*s); s++)
			;
		for (e = s + strlen(s); e > s && isspace((unsigned char)e[-1]); e--)
			;
		*e = '\0';
		if (*s) {
			snprintf(buf, size, "%s", s);
			found = true;
		}
	}
	fclose(f);
	return found;
}

/* The domains in the names the kernel (or anyone) asked nfskeys-idmapd to map lately,
 * against ours: the usual cause of "everything is nobody" is a server that sends another
 * domain.  Root only (the daemon's record shows who looks up whom). */
static void check_recent_domains(struct doctor *d, struct nfskeys_ctx *ctx,
				 const char *idmapd_sock, const char *domain)
{
	struct {
		char name[128];
		unsigned n;
	} seen[8];
	idmapd_recent_res res = {};
	struct rpc_client *c = NULL;
	unsigned n_seen = 0, names = 0, foreign = 0;
	char path[PATH_MAX], list[512] = "";
	size_t len = 0;
	int r;

	snprintf(path, sizeof(path), "%s", idmapd_socket_path(ctx, idmapd_sock));
	r = idmapd_client_new(path, PING_TIMEOUT_MS, &c);
	if (r == 0)
		r = idmapd_client_recent(c, 0, NULL, &res);
	rpc_client_free(c);
	if (r == -EPERM || r == -EACCES) {
		finding(d, "domain", "requests", ST_INFO, NULL,
			"the domains nfskeys-idmapd was asked for lately are shown to root only");
		return;
	}
	if (r < 0)
		return; /* the daemon check says why it does not answer */
	for (u_int i = 0; i < res.entries.entries_len; i++) {
		const idmapd_recent_entry *e = &res.entries.entries_val[i];
		const char *at = strrchr(e->key, '@');
		unsigned j;

		if ((e->kind != NFSKEYS_IDMAP_NAME_TO_UID && e->kind != NFSKEYS_IDMAP_GROUP_TO_GID) ||
		    !at || !at[1])
			continue;
		names++;
		if (strcasecmp(at + 1, domain) == 0)
			continue;
		foreign++;
		for (j = 0; j < n_seen && strcasecmp(seen[j].name, at + 1) != 0; j++)
			;
		if (j == n_seen && n_seen < ARRAY_SIZE(seen))
			snprintf(seen[n_seen++].name, sizeof(seen[0].name), "%s", at + 1);
		if (j < n_seen)
			seen[j].n++;
	}
	xdr_free((xdrproc_t)xdr_idmapd_recent_res, (char *)&res);
	for (unsigned j = 0; j < n_seen && len < sizeof(list); j++)
		len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s (%u)", j ? ", " : "",
					seen[j].name, seen[j].n);
	if (foreign)
		finding(d, "domain", "requests", ST_PROBLEM,
			"set [General] Domain in nfskeys.conf to the NFS server's domain (and the same "
			"Domain in the server's idmapd.conf)",
			"%u of the last %u names asked of nfskeys-idmapd carry another domain than "
			"%s: %s; they map to nobody",
			foreign, names, domain, list);
	else if (names)
		finding(d, "domain", "requests", ST_OK, NULL,
			"the last %u names asked of nfskeys-idmapd all carry %s", names, domain);
}

static void check_domain(struct doctor *d, struct nfskeys_ctx *ctx, const char *idmapd_sock)
{
	const char *domain, *source;
	char other[256];
	int r = nfskeys_idmap_get_domain(ctx, &domain, &source);

	if (r < 0) {
		finding(d, "domain", "NFSv4", ST_PROBLEM,
			"set [General] Domain in nfskeys.conf to the domain the NFS server uses",
			"no usable NFSv4 domain: %s", strerror(-r));
		return;
	}
	if (idmapd_conf_domain(d, other, sizeof(other)) && strcasecmp(other, domain) != 0) {
		finding(d, "domain", "NFSv4", ST_PROBLEM,
			"make them agree (the server's domain wins): set [General] Domain in "
			"nfskeys.conf, or run 'nfskeys idmap import-conf'; a mismatch maps every "
			"owner to nobody",
			"nfskeys uses %s (from %s) but /etc/idmapd.conf says Domain = %s", domain,
			source, other);
		return;
	}
	finding(d, "domain", "NFSv4", ST_OK, NULL,
		"%s (from %s); it must equal the NFS server's domain, or owners map to nobody",
		domain, source);
	check_recent_domains(d, ctx, idmapd_sock, domain);
}

/* ---------------------------------------------------------------- kernel channels */

struct holder {
	char target[PATH_MAX];
	char who[512]; /* "comm[pid] ..." of the processes holding it */
};

static void comm_of(const struct doctor *d, const char *pid, char *buf, size_t size)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/proc/%s/comm", d->root, pid);
	snprintf(buf, size, "?");
	f = fopen(path, "re");
	if (!f)
		return;
	if (fgets(buf, (int)size, f))
		buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

/* Fill who for each target from the descriptors under <root>/proc/<pid>/fd. */
/* A descriptor opened through /proc/net (a link to self/net) reads back from
 * /proc/PID/fd as /proc/<opener's pid>/net/...: the form knfsd's channels show on a real
 * kernel (tests/kernel/systemd-debs.ktest).  Rewrite it to /proc/net/... in place. */
static void proc_net_canonical(char *target)
{
	const char *p = target + strlen("/proc/");

	if (!startswith(target, "/proc/") || !isdigit((unsigned char)*p))
		return;
	while (isdigit((unsigned char)*p))
		p++;
	if (startswith(p, "/net/"))
		memmove(target + strlen("/proc"), p, strlen(p) + 1);
}

static void scan_holders(const struct doctor *d, struct holder *h, size_t n)
{
	char procdir[PATH_MAX];
	struct dirent *pe;
	DIR *pd;

	rooted(d, "/proc", procdir, sizeof(procdir));
	pd = opendir(procdir);
	if (!pd)
		return;
	while ((pe = readdir(pd))) {
		char fddir[PATH_MAX + 300], comm[64];
		struct dirent *fe;
		DIR *fdd;

		if (!isdigit((unsigned char)pe->d_name[0]))
			continue;
		snprintf(fddir, sizeof(fddir), "%s/%s/fd", procdir, pe->d_name);
		fdd = opendir(fddir);
		if (!fdd)
			continue;
		comm[0] = '\0';
		while ((fe = readdir(fdd))) {
			char link[PATH_MAX + 600], target[PATH_MAX];
			ssize_t len;

			if (fe->d_name[0] == '.')
				continue;
			snprintf(link, sizeof(link), "%s/%s", fddir, fe->d_name);
			len = readlink(link, target, sizeof(target) - 1);
			if (len <= 0)
				continue;
			target[len] = '\0';
			proc_net_canonical(target);
			for (size_t i = 0; i < n; i++) {
				size_t used = strlen(h[i].who);

				if (!streq(target, h[i].target) || strstr(h[i].who, pe->d_name))
					continue;
				if (!comm[0])
					comm_of(d, pe->d_name, comm, sizeof(comm));
				snprintf(h[i].who + used, sizeof(h[i].who) - used, "%s%s[%s]",
					 used ? ", " : "", comm, pe->d_name);
			}
		}
		closedir(fdd);
	}
	closedir(pd);
}

/* The rpc_pipefs mount point from <root>/proc/mounts, if any. */
static bool find_pipefs(const struct doctor *d, char *buf, size_t size)
{
	char path[PATH_MAX], line[2048];
	bool found = false;
	FILE *f;

	rooted(d, "/proc/mounts", path, sizeof(path));
	f = fopen(path, "re");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		char dev[256], dir[1024], type[64];

		if (sscanf(line, "%255s %1023s %63s", dev, dir, type) == 3 &&
		    streq(type, "rpc_pipefs")) {
			snprintf(buf, size, "%s", dir);
			found = true;
		}
	}
	fclose(f);
	return found;
}

static void judge_holder(struct doctor *d, const char *subject, const struct holder *h)
{
	if (!h->who[0])
		finding(d, "channel", subject, ST_PROBLEM,
			"start nfskeys-idmapd ([Kernel] in nfskeys.conf) or rpc.idmapd",
			"%s: nobody holds it, so the kernel's ID-mapping requests wait and fail",
			h->target);
	else if (strstr(h->who, "nfskeys-idmapd"))
		finding(d, "channel", subject, ST_OK, NULL, "%s held by %s", h->target, h->who);
	else
		finding(d, "channel", subject, ST_INFO, NULL,
			"%s held by %s, not nfskeys-idmapd (to switch: %s, then restart "
			"nfskeys-idmapd)",
			h->target, h->who,
			d->systemd ? "stop and mask nfs-idmapd.service" :
				     "stop rpc.idmapd and keep its init script from starting it");
}

static void check_channels(struct doctor *d)
{
	struct holder h[66] = {};
	char path[PATH_MAX + 300], pipefs[PATH_MAX], dir[PATH_MAX + 8];
	size_t n = 0, server = 0;
	struct dirent *de;
	DIR *pd;

	/* knfsd's idmap caches */
	snprintf(h[0].target, sizeof(h[0].target), "/proc/net/rpc/nfs4.nametoid/channel");
	snprintf(h[1].target, sizeof(h[1].target), "/proc/net/rpc/nfs4.idtoname/channel");
	for (size_t i = 0; i < 2; i++) {
		rooted(d, h[i].target, path, sizeof(path));
		if (access(path, F_OK) == 0)
			h[n++] = h[i];
	}
	server = n;
	/* the NFS client's rpc_pipefs pipes */
	if (find_pipefs(d, pipefs, sizeof(pipefs))) {
		snprintf(dir, sizeof(dir), "%s/nfs", pipefs);
		rooted(d, dir, path, sizeof(path));
		pd = opendir(path);
		while (pd && (de = readdir(pd)) && n < ARRAY_SIZE(h)) {
			char pipe[PATH_MAX + 300];

			if (!startswith(de->d_name, "clnt"))
				continue;
			if ((size_t)snprintf(h[n].target, sizeof(h[n].target), "%s/%s/idmap", dir,
					     de->d_name) >= sizeof(h[n].target))
				continue;
			rooted(d, h[n].target, pipe, sizeof(pipe));
			if (access(pipe, F_OK) == 0)
				n++;
		}
		if (pd)
			closedir(pd);
	}
	scan_holders(d, h, n);
	if (server == 0)
		finding(d, "channel", "knfsd", ST_INFO, NULL,
			"no /proc/net/rpc/nfs4.nametoid: the NFS server (nfsd) is not loaded");
	for (size_t i = 0; i < n; i++)
		judge_holder(d, i < server ? "knfsd" : "rpc_pipefs", &h[i]);
	if (n == server)
		finding(d, "channel", "rpc_pipefs", ST_INFO, NULL,
			"no NFS client idmap pipes (%s)",
			find_pipefs(d, pipefs, sizeof(pipefs)) ? "no NFS mounts use them" :
								 "rpc_pipefs is not mounted");
}

/* ---------------------------------------------------------------- key quotas */

static void check_quotas(struct doctor *d)
{
	char path[PATH_MAX], line[256];
	unsigned users = 0;
	FILE *f;

	rooted(d, "/proc/key-users", path, sizeof(path));
	f = fopen(path, "re");
	if (!f) {
		finding(d, "quota", "keys", ST_INFO, NULL, "cannot read %s: %s", path,
			strerror(errno));
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		unsigned long uid, usage, nkeys, nikeys, qn, qmax, qb, qbmax;
		char user[64], subject[96];
		struct passwd *pw;
		bool low_keys, low_bytes;

		if (sscanf(line, " %lu: %lu %lu/%lu %lu/%lu %lu/%lu", &uid, &usage, &nkeys, &nikeys,
			   &qn, &qmax, &qb, &qbmax) != 8)
			continue;
		users++;
		pw = d->root[0] ? NULL : getpwuid((uid_t)uid);
		if (pw)
			snprintf(user, sizeof(user), "%s", pw->pw_name);
		else
			snprintf(user, sizeof(user), "uid %lu", uid);
		snprintf(subject, sizeof(subject), "%s", user);
		low_keys = qmax && (qmax - MIN(qn, qmax)) * 100 < qmax * QUOTA_LOW_PERCENT;
		low_bytes = qbmax && (qbmax - MIN(qb, qbmax)) * 100 < qbmax * QUOTA_LOW_PERCENT;
		if (low_keys || low_bytes)
			finding(d, "quota", subject, ST_PROBLEM,
				uid == 0 ? "raise kernel.keys.root_maxkeys / root_maxbytes (sysctl), or "
					   "drop cached mappings: nfskeys idmapd flush" :
					   "raise kernel.keys.maxkeys / maxbytes (sysctl), or clear the "
					   "user's unused keys (keyctl clear @u / nfskeys keys)",
				"%lu of %lu keys and %lu of %lu bytes used: new keys (tickets, ID "
				"mappings) fail with EDQUOT",
				qn, qmax, qb, qbmax);
		else
			finding(d, "quota", subject, ST_OK, NULL,
				"%lu of %lu keys, %lu of %lu bytes used", qn, qmax, qb, qbmax);
	}
	fclose(f);
	if (!users)
		finding(d, "quota", "keys", ST_INFO, NULL, "%s lists no users", path);
}

/* ---------------------------------------------------------------- ticket expiry */

/* What the child that became the user found in its KEYRING:persistent cache. */
struct ticket {
	int r; /* 0, or -errno from nfskeys_cred_find() / the drop */
	int64_t expiry, renew_until;
	char principal[256];
};

int tool_become_user(const struct passwd *pw)
{
	uid_t ru, eu, su;

	if (initgroups(pw->pw_name, pw->pw_gid) < 0 ||
	    setresgid(pw->pw_gid, pw->pw_gid, pw->pw_gid) < 0 ||
	    setresuid(pw->pw_uid, pw->pw_uid, pw->pw_uid) < 0)
		return -errno;
	if (getresuid(&ru, &eu, &su) < 0 || ru != pw->pw_uid || eu != pw->pw_uid ||
	    su != pw->pw_uid)
		return -EPERM;
	if (pw->pw_uid != 0 && setresuid(0, 0, 0) == 0)
		return -EPERM;
	return 0;
}

static void ticket_child(struct nfskeys_ctx *ctx, const struct passwd *pw, int fd)
{
	struct nfskeys_cred_params p = { 0 };
	struct nfskeys_cred_info info;
	struct ticket t = { 0 };

	t.r = getuid() == pw->pw_uid ? 0 : tool_become_user(pw);
	if (t.r == 0) {
		t.r = nfskeys_cred_find(ctx, "nfs", &p, &info);
		if (t.r == 0) {
			t.expiry = info.expiry;
			t.renew_until = info.renew_until;
			snprintf(t.principal, sizeof(t.principal), "%s", info.principal);
		}
	}
	if (write(fd, &t, sizeof(t)) != (ssize_t)sizeof(t))
		_exit(1);
	_exit(0);
}

/* "2026-12-04 21:00:00 (in 9h59m)" */
static void when(int64_t at, char *buf, size_t size)
{
	int64_t left = at - (int64_t)time(NULL);
	size_t n;

	tool_format_time(at, buf, size);
	n = strlen(buf);
	if (at > 0 && left > 0)
		snprintf(buf + n, size - n, " (in %" PRId64 "h%02" PRId64 "m)", left / 3600,
			 left % 3600 / 60);
}

static void check_ticket(struct doctor *d, struct nfskeys_ctx *ctx, const char *user)
{
	struct passwd *pw = getpwnam(user);
	struct ticket t = { .r = -EIO };
	char subject[300], cc[64], exp[96], ren[96];
	int fds[2], status;
	pid_t pid;

	snprintf(subject, sizeof(subject), "%s", user);
	if (!pw) {
		finding(d, "ticket", subject, ST_PROBLEM, "give an existing user name",
			"no such user");
		return;
	}
	snprintf(cc, sizeof(cc), "KEYRING:persistent:%u", (unsigned)pw->pw_uid);
	if (getuid() != 0 && getuid() != pw->pw_uid) {
		finding(d, "ticket", subject, ST_INFO, NULL,
			"%s: only root or the user may look at it", cc);
		return;
	}
	fflush(stdout);
	if (pipe2(fds, O_CLOEXEC) < 0 || (pid = fork()) < 0) {
		finding(d, "ticket", subject, ST_INFO, NULL, "%s: cannot start a child: %s", cc,
			strerror(errno));
		return;
	}
	if (pid == 0) {
		close(fds[0]);
		ticket_child(ctx, pw, fds[1]);
	}
	close(fds[1]);
	if (read(fds[0], &t, sizeof(t)) != (ssize_t)sizeof(t))
		t.r = -EIO;
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	t.principal[sizeof(t.principal) - 1] = '\0';
	/* the principal comes from the user's cache: no control bytes onto root's terminal */
	for (char *q = t.principal; *q; q++)
		if ((unsigned char)*q < 0x20 || (unsigned char)*q >= 0x7f)
			*q = '?';
	if (t.r == -ENOKEY || t.r == -ENOENT) {
		finding(d, "ticket", subject, ST_PROBLEM,
			"the user runs 'nfskeys nfs login' (or logs in with pam_nfskeys)",
			"no Kerberos TGT in %s: NFS sec=krb5 and CIFS sec=krb5 access fails", cc);
		return;
	}
	if (t.r < 0) {
		finding(d, "ticket", subject, ST_INFO, NULL, "cannot read %s as %s: %s", cc,
			user, strerror(-t.r));
		return;
	}
	when(t.expiry, exp, sizeof(exp));
	if (t.expiry > 0 && t.expiry <= (int64_t)time(NULL)) {
		finding(d, "ticket", subject, ST_PROBLEM,
			t.renew_until > (int64_t)time(NULL) ?
				"the user runs 'nfskeys nfs renew' (the nfskeys-nfs-renew timer "
				"does it before expiry)" :
				"the user runs 'nfskeys nfs login' again",
			"the TGT of %s in %s expired at %s", t.principal, cc, exp);
		return;
	}
	if (t.renew_until > 0)
		when(t.renew_until, ren, sizeof(ren));
	else
		snprintf(ren, sizeof(ren), "no");
	finding(d, "ticket", subject, ST_OK, NULL, "TGT of %s in %s expires %s, renewable: %s",
		t.principal, cc, exp, ren);
}

/* ---------------------------------------------------------------- command */

static void doctor_usage(FILE *f)
{
	fprintf(f,
		"Usage: nfskeys doctor [--json] [--root DIR] [--idmapd-socket PATH]\n"
		"                      [--attrd-socket PATH] [--user NAME]...\n"
		"\n"
		"Check an installed system: which program answers each request-key route\n"
		"(id_resolver, cifs.idmap, cifs.spnego), whether nfskeys-idmapd and\n"
		"nfskeys-attrd answer, the NFSv4 domain, who holds knfsd's idmap channels and\n"
		"the rpc_pipefs idmap pipes, and each user's key quota.  One line per finding,\n"
		"with the fix for each problem.\n"
		"\n"
		"Options:\n"
		"  -j, --json                one JSON object: findings and the problem count\n"
		"  -r, --root DIR            read etc/ and proc/ under DIR instead of /\n"
		"      --idmapd-socket PATH  ask nfskeys-idmapd here\n"
		"      --attrd-socket PATH   ask nfskeys-attrd here\n"
		"  -u, --user NAME           also the expiry of NAME's Kerberos TGT in\n"
		"                            KEYRING:persistent:UID (read as NAME, never as\n"
		"                            root; repeat for more users)\n"
		"  -h, --help                show this help\n"
		"\n"
		"Exit status: 0 nothing wrong, 1 at least one problem, 2 usage error,\n"
		"3 configuration error.  See nfskeys(1).\n");
}

/* A misspelt or uninstalled backend in [Translation] Method: the daemon will not start
 * on this file, and every in-process lookup is answered without it. */
static void check_idmap_config(struct doctor *d, struct nfskeys_ctx *ctx)
{
	char msg[1024];

	if (tool_idmap_config_problem(ctx, msg, sizeof(msg)) < 0)
		finding(d, "config", "idmap", ST_PROBLEM,
			"correct the name in [Translation] Method, or install the backend's "
			"plugin (nfskeys-idmapd will not start on this file)",
			"%s", msg);
	else
		finding(d, "config", "idmap", ST_OK, NULL,
			"every backend in [Translation] Method is installed");
}

int cmd_doctor(struct nfskeys_ctx *ctx, int argc, char *argv[])
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "root", required_argument, NULL, 'r' },
		{ "idmapd-socket", required_argument, NULL, 'I' },
		{ "attrd-socket", required_argument, NULL, 'A' },
		{ "user", required_argument, NULL, 'u' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct doctor d = { .root = "" };
	const char *idmapd_sock = NULL, *attrd_sock = NULL;
	const char *users[16];
	size_t n_users = 0;
	char root[PATH_MAX], sd_dir[PATH_MAX];
	int c;

	argv[0] = program_invocation_short_name; /* getopt's messages name the program */
	while ((c = getopt_long(argc, argv, "jr:u:h", opts, NULL)) >= 0) {
		switch (c) {
		case 'j':
			d.json = true;
			break;
		case 'r':
			if (!realpath(optarg, root))
				return tool_error("doctor: --root %s: %s", optarg, strerror(errno));
			d.root = streq(root, "/") ? "" : root;
			break;
		case 'I':
			idmapd_sock = optarg;
			break;
		case 'A':
			attrd_sock = optarg;
			break;
		case 'u':
			if (n_users == ARRAY_SIZE(users)) {
				tool_error("doctor: at most %zu --user options", ARRAY_SIZE(users));
				return EXIT_USAGE;
			}
			users[n_users++] = optarg;
			break;
		case 'h':
			doctor_usage(stdout);
			return EXIT_OK;
		default:
			doctor_usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		tool_error("doctor: unexpected argument '%s'", argv[optind]);
		return EXIT_USAGE;
	}
	/* sd_booted()'s test, under --root: the fixes name the service manager that runs */
	rooted(&d, "/run/systemd/system", sd_dir, sizeof(sd_dir));
	d.systemd = sd_dir[0] && access(sd_dir, F_OK) == 0;
	if (d.json)
		printf("{\"findings\":[\n");
	check_request_key_syntax(&d);
	check_routes(&d);
	check_daemons(&d, ctx, idmapd_sock, attrd_sock);
	check_idmap_config(&d, ctx);
	check_domain(&d, ctx, idmapd_sock);
	check_channels(&d);
	check_quotas(&d);
	for (size_t i = 0; i < n_users; i++)
		check_ticket(&d, ctx, users[i]);
	if (d.json)
		printf("\n],\"problems\":%u}\n", d.problems);
	else
		printf("%u problem%s found\n", d.problems, d.problems == 1 ? "" : "s");
	return d.problems ? EXIT_FAIL : EXIT_OK;
}
