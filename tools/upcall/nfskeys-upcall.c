/* nfskeys-upcall, the program request-key runs: the fast path only.  It asks nfskeys-idmapd
 * and instantiates the key from the daemon's answer, linked as a static PIE where the
 * build allows (no dynamic loader at all; otherwise it loads only libc and libkeyutils;
 * the RPC code and libtirpc's XDR are always linked in); for anything else (no daemon, a
 * negative answer, --help, --verbose, a bad command line) it execs nfskeys-upcall-full,
 * the helper with the in-process engine (libnfskeys), with the same arguments.  A
 * cifs.spnego key goes straight to nfskeys-upcall-spnego: one exec fewer on every
 * sec=krb5 session setup, part of what keeps it within 1.2x of cifs.upcall's time
 * (doc/PERFORMANCE.md). */
#include <dirent.h>
#include <inttypes.h>
#include <keyutils.h>
#include <limits.h>
#include <sys/stat.h>

/* macros.h first: <rpc/types.h> brings its own MIN/MAX (see rpc-client.h) */
#include "macros.h"
#include "conf-dropins.h"
#include "helper-path.h"
#include "idmap.h"
#include "idmap-desc.h"
#include "idmapd-client.h"
#include "ini.h"
#include "nfskeys.h"
#include "rpc-client.h"
#include "socket-path.h"
#include "units.h"
#include "upcall-args.h"
#include "upcall-wire.h"

struct lean_conf {
	char socket[PATH_MAX];
	char runtime_dir[PATH_MAX - 16]; /* [General] Runtime-Dir: the socket's directory */
	long helper_timeout; /* -1: not set */
	bool bad;            /* a value we cannot take: let the full helper say why */
};

static char **saved_argv;

/* Run helper prog (a libexec program) in our place; no_daemon: it must not ask the
 * daemon again. */
static __attribute__((noreturn)) void run_helper(const char *prog, bool no_daemon)
{
	char path[PATH_MAX + 32];
	char *argv[64];
	size_t n = 0;

	/* next to this program first (the build tree), else the installed one */
	helper_path(prog, LIBEXECDIR, path, sizeof(path));
	argv[n++] = path;
	if (no_daemon)
		argv[n++] = (char *)"--no-daemon";
	for (size_t i = 1; saved_argv[i] && n < ARRAY_SIZE(argv) - 1; i++)
		argv[n++] = saved_argv[i];
	argv[n] = NULL;
	execv(path, argv);
	fprintf(stderr, "nfskeys-upcall: cannot run %s: %s\n", path, strerror(errno));
	_exit(4); /* the key could not be instantiated (nfskeys-upcall(8)) */
}

static __attribute__((noreturn)) void fallback(bool no_daemon)
{
	run_helper("nfskeys-upcall-full", no_daemon);
}

static int on_value(void *userdata, const char *file, unsigned line, const char *section,
		    const char *key, const char *value)
{
	struct lean_conf *c = userdata;

	if (!strcasecmp(section, "Idmapd") && !strcasecmp(key, "Socket")) {
		if (strlen(value) >= sizeof(c->socket))
			c->bad = true;
		else
			snprintf(c->socket, sizeof(c->socket), "%s", value);
	} else if (!strcasecmp(section, "General") && !strcasecmp(key, "Runtime-Dir")) {
		if (strlen(value) + sizeof("/idmapd.sock") > sizeof(c->runtime_dir))
			c->bad = true;
		else
			snprintf(c->runtime_dir, sizeof(c->runtime_dir), "%s", value);
	} else if (!strcasecmp(section, "Idmapd") && !strcasecmp(key, "Helper-Timeout")) {
		uint64_t ms;

		/* the one duration syntax (common/units.h); a bad value: the full helper says so */
		if (units_parse_duration(value, 1, &ms, NULL) < 0 || ms > 60000)
			c->bad = true;
		else
			c->helper_timeout = (long)ms;
	}
	return 0;
}

static int dropin_filter(const struct dirent *de)
{
	return conf_dropin_name(de->d_name);
}

/* The two settings the fast path needs, read as libnfskeys reads the configuration (the
 * file, then conf.d/ drop-ins in lexical order; the last value wins).  false: the full
 * helper must handle this (an error to report, an untrusted conf.d). */
static bool read_conf(const char *path, bool explicit_path, struct lean_conf *c)
{
	char dir[PATH_MAX], err[256];
	struct dirent **names = NULL;
	struct stat st;
	bool ok = true;
	int n, r;

	r = ini_parse_file(path, NULL, on_value, c, err, sizeof(err));
	if (r < 0 && !(r == -ENOENT && !explicit_path))
		return false;
	if (conf_dropin_dir(path, dir, sizeof(dir)) < 0)
		return false;
	if (stat(dir, &st) < 0)
		return errno == ENOENT || errno == ENOTDIR;
	if (!S_ISDIR(st.st_mode))
		return true;
	/* libnfskeys skips (with a warning) a conf.d others may write to: leave that case,
	 * and its warning, to the full helper. */
	if (!conf_dropin_dir_trusted(&st))
		return false;
	n = scandir(dir, &names, dropin_filter, alphasort);
	if (n < 0)
		return false;
	for (int i = 0; i < n; i++) {
		char p[PATH_MAX];

		if (ok && snprintf(p, sizeof(p), "%s/%s", dir, names[i]->d_name) < (int)sizeof(p)) {
			r = ini_parse_file(p, NULL, on_value, c, err, sizeof(err));
			if (r < 0 && r != -ENOENT)
				ok = false;
		} else {
			ok = false;
		}
		free(names[i]);
	}
	free(names);
	return ok && !c->bad;
}

int main(int argc, char *argv[])
{
	struct lean_conf conf = { .helper_timeout = -1 };
	struct upcall_args a;
	const char *config, *type, *key = NULL;
	char kdesc[512], ktype[64]; /* kdesc: "type;uid;gid;perm;" + the longest description */
	char sock[PATH_MAX];
	idmapd_lookup_args args = {};
	idmapd_lookup_res res = {};
	struct rpc_client *client = NULL;
	uint8_t buf[NFSKEYS_IDMAP_NAME_MAX + NFSKEYS_SID_BINARY_MAX];
	unsigned kind = 0;
	int r, len;

	saved_argv = argv;
	opterr = 0; /* the full helper reports usage errors */
	/* --verbose, --help, --version, --no-daemon, errors: the full helper's */
	if (upcall_args_parse(argc, argv, &a) != 0 || a.verbose || a.no_daemon)
		fallback(false);
	type = a.type;
	if (!type) {
		/* "type;uid;gid;perm;description", read in one call (a longer one is not
		 * an ID-mapping key: the full helper says so) */
		long n = keyctl_describe(a.serial, kdesc, sizeof(kdesc));
		char *semi;

		if (n <= 0 || (size_t)n > sizeof(kdesc) || !(semi = strchr(kdesc, ';')) ||
		    (size_t)(semi - kdesc) >= sizeof(ktype))
			fallback(false);
		memcpy(ktype, kdesc, semi - kdesc);
		ktype[semi - kdesc] = 0;
		for (int i = 0; i < 3 && semi; i++)
			semi = strchr(semi + 1, ';');
		if (!semi || !streq(semi + 1, a.desc))
			fallback(false);
		type = ktype;
	}
	/* Kerberos for a sec=krb5 CIFS session (or its test route -T cifs.spnego): the
	 * spnego helper checks the key itself (owner, type, description). */
	if (streq(type, "cifs.spnego"))
		run_helper("nfskeys-upcall-spnego", false);
	/* The daemon validates the key; malformed ones are rejected by the full helper. */
	if (idmap_desc_split(type, a.desc, &kind, &key) < 0)
		fallback(false);

	config = a.config;
	if (!config) {
		/* secure_getenv(): NULL in a setuid/setgid run, as libnfskeys does */
		config = secure_getenv("NFSKEYS_CONF");
		bool explicit_path = config && *config;

		if (!explicit_path)
			config = SYSCONFDIR "/nfskeys/nfskeys.conf";
		if (!read_conf(config, explicit_path, &conf))
			fallback(false);
	} else if (!read_conf(config, true, &conf)) {
		fallback(false);
	}
	if (conf.helper_timeout == 0)
		fallback(true); /* the daemon is disabled for the helper */

	args.kind = kind;
	args.key = (char *)key;
	args.flags = idmap_desc_nobody(kind) ? IDMAPD_LOOKUP_NOBODY : 0;
	r = rpc_client_new(socket_path_pick(conf.socket, conf.runtime_dir, "idmapd.sock",
					    IDMAPD_SOCKET_DEFAULT, sock, sizeof(sock)),
			   NFSKEYS_IDMAPD_PROG, NFSKEYS_IDMAPD_V1,
			   conf.helper_timeout > 0 ? (int)conf.helper_timeout
						   : UPCALL_DAEMON_TIMEOUT_MS,
			   256 * 1024, &client);
	if (r < 0)
		fallback(false);
	r = rpc_client_call(client, IDMAPD_LOOKUP, (xdrproc_t)xdr_idmapd_lookup_args, &args,
			    (xdrproc_t)xdr_idmapd_lookup_res, &res);
	rpc_client_free(client);
	if (r < 0)
		fallback(true); /* daemon unreachable or broken: resolve in-process */
	if (res.status != 0)
		fallback(false); /* a verdict against: the full helper rejects and logs */
	len = upcall_wire_payload(&res.idmapd_lookup_res_u.answer, kind, buf, sizeof(buf));
	if (len < 0)
		fallback(false);

	/* As the full helper: possess the type's private keyring, set the timeout while we
	 * hold the authorisation, then instantiate. */
	if (upcall_private_keyring(type))
		(void)keyctl_search(KEY_SPEC_USER_KEYRING, "keyring", upcall_private_keyring(type),
				    KEY_SPEC_THREAD_KEYRING);
	{
		const idmapd_answer *w = &res.idmapd_lookup_res_u.answer;
		unsigned ttl = upcall_key_ttl(&a, w->ttl, w->flags & NFSKEYS_IDMAP_ANSWER_NOBODY);

		if (ttl > 0) /* a key without timeout still works */
			(void)keyctl_set_timeout(a.serial, ttl);
	}
	if (keyctl_instantiate(a.serial, buf, (size_t)len, 0) < 0)
		fallback(false); /* reports it (exit 4) */
	xdr_free((xdrproc_t)xdr_idmapd_lookup_res, (char *)&res);
	return 0;
}
