/* nfskeys doctor: what an admin runs when ID mapping or the services misbehave.  It reads
 * the request-key configuration the way request-key does, asks both daemons over their
 * sockets, looks at who holds knfsd's and rpc_pipefs' idmap files and at the key quotas,
 * and prints one line per finding with the fix.  --root DIR reads etc/ and proc/ under
 * DIR (tests build fake trees there); the daemons are always asked on their sockets.
 * --user NAME adds the user's Kerberos TGT expiry, read by a child that has become the
 * user first (libkrb5 never runs as root on a user's credential cache).  --namespace
 * looks at one network namespace instead (doctor-namespace.c). */
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
#include "become-user.h"
#include "idmapd-client.h"
#include "log-escape.h"
#include "nfskeys-idmap.h"
#include "nfskeys-tool.h"
#include "request-key-conf.h"
#include "doctor.h"

#define PING_TIMEOUT_MS 2000

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

/* ---------------------------------------------------------------- ticket expiry */

/* What the child that became the user found in its KEYRING:persistent cache. */
struct ticket {
	int r; /* 0, or -errno from nfskeys_cred_find() / the drop */
	int64_t expiry, renew_until;
	char principal[256];
};

static void ticket_child(struct nfskeys_ctx *ctx, const struct passwd *pw, int fd)
{
	struct nfskeys_cred_params p = { 0 };
	struct nfskeys_cred_info info;
	struct ticket t = { 0 };

	t.r = getuid() == pw->pw_uid ? 0
					 : become_user_named(pw->pw_name, pw->pw_uid, pw->pw_gid);
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
		"       nfskeys doctor --namespace PID|PATH [--name USER@DOMAIN] [--json]\n"
		"                      [--idmapd-socket PATH]\n"
		"\n"
		"Check an installed system: which program answers each request-key route\n"
		"(id_resolver, cifs.idmap, cifs.spnego), whether nfskeys-idmapd and\n"
		"nfskeys-attrd answer, the NFSv4 domain, who holds knfsd's idmap channels and\n"
		"the rpc_pipefs idmap pipes, each user's key quota, and whether the kernel runs\n"
		"a container's CIFS upcalls in its namespaces.  One line per finding, with the\n"
		"fix for each problem.\n"
		"\n"
		"With --namespace, one network namespace (a container's) instead: its identity\n"
		"and the user namespace that owns it (with PID, its uid_map), which way its NFS\n"
		"mounts map ids, whether nfskeys-idmapd serves its rpc_pipefs pipe, and with\n"
		"--name what the daemon answers for USER@DOMAIN and the uid the namespace sees.\n"
		"\n"
		"Options:\n"
		"  -j, --json                one JSON object: findings and the problem count\n"
		"  -r, --root DIR            read etc/ and proc/ under DIR instead of /\n"
		"      --idmapd-socket PATH  ask nfskeys-idmapd here\n"
		"      --attrd-socket PATH   ask nfskeys-attrd here\n"
		"  -u, --user NAME           also the expiry of NAME's Kerberos TGT in\n"
		"                            KEYRING:persistent:UID (read as NAME, never as\n"
		"                            root; repeat for more users)\n"
		"  -n, --namespace PID|PATH  one network namespace: a process id, its\n"
		"                            /proc/PID/ns/net, or /run/netns/NAME\n"
		"      --name USER@DOMAIN    with --namespace: the daemon's answer for it and\n"
		"                            the uid the namespace sees (its uid_map)\n"
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
		{ "namespace", required_argument, NULL, 'n' },
		{ "name", required_argument, NULL, 'N' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct doctor d = { .root = "" };
	const char *idmapd_sock = NULL, *attrd_sock = NULL, *ns_arg = NULL, *name = NULL;
	struct doctor_ns *ns = NULL;
	const char *users[16];
	size_t n_users = 0;
	char root[PATH_MAX], sd_dir[PATH_MAX];
	int c;

	argv[0] = program_invocation_short_name; /* getopt's messages name the program */
	while ((c = getopt_long(argc, argv, "jr:u:n:h", opts, NULL)) >= 0) {
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
		case 'n':
			ns_arg = optarg;
			break;
		case 'N':
			name = optarg;
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
	if (name && !ns_arg) {
		tool_error("doctor: --name needs --namespace");
		return EXIT_USAGE;
	}
	if (ns_arg && n_users) {
		tool_error("doctor: --user is not for --namespace");
		return EXIT_USAGE;
	}
	if (ns_arg) {
		char err[PATH_MAX + 128];
		int r;

		/* a namespace is the running kernel's: nothing of it is under a copy */
		if (d.root[0]) {
			tool_error("doctor: --namespace examines the running system, not --root");
			return EXIT_USAGE;
		}
		r = doctor_ns_open(ns_arg, &ns, err, sizeof(err));
		if (r == -EACCES || r == -EPERM) {
			tool_error("doctor: --namespace %s: %s (root may look at any process)", ns_arg,
				   err);
			return EXIT_FAIL;
		}
		if (r < 0) {
			tool_error("doctor: --namespace %s: %s", ns_arg, err);
			return r == -ENOMEM ? EXIT_FAIL : EXIT_USAGE;
		}
	}
	/* sd_booted()'s test, under --root: the fixes name the service manager that runs */
	rooted(&d, "/run/systemd/system", sd_dir, sizeof(sd_dir));
	d.systemd = sd_dir[0] && access(sd_dir, F_OK) == 0;
	if (d.json)
		printf("{\"findings\":[\n");
	if (ns) {
		check_namespace(&d, ctx, idmapd_sock, ns, name);
		check_cifs_upcall_target(&d);
		doctor_ns_free(ns);
		goto done;
	}
	check_request_key_syntax(&d);
	check_routes(&d);
	check_daemons(&d, ctx, idmapd_sock, attrd_sock);
	check_idmap_config(&d, ctx);
	check_domain(&d, ctx, idmapd_sock);
	check_channels(&d);
	check_key_quota(&d);
	check_cifs_upcall_target(&d);
	for (size_t i = 0; i < n_users; i++)
		check_ticket(&d, ctx, users[i]);
done:
	if (d.json)
		printf("\n],\"problems\":%u}\n", d.problems);
	else
		printf("%u problem%s found\n", d.problems, d.problems == 1 ? "" : "s");
	return d.problems ? EXIT_FAIL : EXIT_OK;
}
