/* nfskeys idmapd ...: talk to the nfskeys-idmapd service (ping, lookup, flush, reload,
 * recent, stats, namespaces); "nfskeys idmap stats" lands here too.  Stats, namespaces and
 * lookups need no privileges, flush, reload and recent are for root (the daemon checks the
 * caller with SO_PEERCRED). */
#include <getopt.h>

#include <limits.h>

#include "idmapd-client.h"
#include "ini.h"
#include "nfskeys-tool.h"
#include "stats.h"
#include "units.h"
#include "idmap.h"

#define DEFAULT_TIMEOUT_MS 5000
/* A reload is answered when the new configuration is in place (or refused), after the one
 * running when it came if any: a large configuration may take a while. */
#define RELOAD_TIMEOUT_MS 120000

static int idmapd_ping(void *state, int argc, char *argv[]);
static int idmapd_lookup(void *state, int argc, char *argv[]);
static int idmapd_flush(void *state, int argc, char *argv[]);
static int idmapd_reload(void *state, int argc, char *argv[]);
static int idmapd_recent(void *state, int argc, char *argv[]);
static int idmapd_stats(void *state, int argc, char *argv[]);
static int idmapd_namespaces(void *state, int argc, char *argv[]);

const struct cli_sub idmapd_subs[] = {
	{ "ping", NULL, NULL, "is the daemon there (version, pid, config generation)",
	  idmapd_ping },
	{ "lookup", NULL, "[--json] KIND KEY",
	  "map through the daemon's cache; KIND is name-to-uid,\n"
	  "group-to-gid, uid-to-name, gid-to-group,\n"
	  "principal-to-ids, sid-to-uid, sid-to-gid, uid-to-sid,\n"
	  "gid-to-sid (--nobody: nobody instead of failing)",
	  idmapd_lookup },
	{ "flush", NULL, "[KIND KEY]",
	  "drop the cache (all, or one key) and the kernel's\n"
	  "mapping keyrings (root only)",
	  idmapd_flush },
	{ "reload", NULL, NULL,
	  "reload the configuration (root only; as SIGHUP);\n"
	  "answers when it is in place (timeout 120 s)",
	  idmapd_reload },
	{ "recent", NULL, "[--json] [KIND KEY]",
	  "the last answers the daemon gave and which path\n"
	  "asked (socket, nfsd-idtoname, nfsd-nametoid,\n"
	  "client-pipe, nfsd-prime; name-search and prefetch\n"
	  "for an id's name fetched with a name, id-search\n"
	  "for a name's id with an id); newest first (root\n"
	  "only)",
	  idmapd_recent },
	{ "stats", NULL, "[--json|--prometheus]",
	  "counters and latency histograms (same as\n"
	  "'nfskeys idmap stats')",
	  idmapd_stats },
	{ "namespaces", NULL, "[--json]",
	  "the other network namespaces (containers) whose\n"
	  "NFS client idmap pipes the daemon serves",
	  idmapd_namespaces },
	{},
};

static void idmapd_usage(FILE *f)
{
	fprintf(f,
		"Usage: nfskeys idmapd [--socket PATH] [--timeout SECONDS] COMMAND [ARGS...]\n"
		"\n"
		"Commands:\n");
	cli_sub_usage(f, idmapd_subs, 28);
	fprintf(f,
		"\n"
		"--timeout: how long to wait for an answer, in seconds (as every nfskeys\n"
		"--timeout), or a duration with its unit (500ms, 2m); default 5, reload 120.\n"
		"\n"
		"Exit status: 0 success, 1 failure (daemon not running, no mapping, refused),\n"
		"2 usage error, 3 configuration error.  See nfskeys-idmapd(8).\n");
}

/* What of a configuration file that did not load still names the daemon's socket: the
 * lines before its first error, and of its drop-ins none (they may be what broke). */
struct socket_scan {
	char socket[PATH_MAX];
	char runtime_dir[PATH_MAX];
};

static int scan_value(void *userdata, const char *file, unsigned line, const char *section,
		      const char *key, const char *value)
{
	struct socket_scan *sc = userdata;

	if (strcaseeq(section, "Idmapd") && strcaseeq(key, "Socket"))
		snprintf(sc->socket, sizeof(sc->socket), "%s", value);
	else if (strcaseeq(section, "General") && strcaseeq(key, "Runtime-Dir"))
		snprintf(sc->runtime_dir, sizeof(sc->runtime_dir), "%s", value);
	return 0;
}

/* The socket when the configuration did not load, as idmapd_socket_path() would have
 * found it; says on stderr which it is and where it came from. */
static const char *fallback_socket_path(void)
{
	static char buf[PATH_MAX + 16];
	struct socket_scan sc = {};
	const char *file = tool_config_path, *from;
	char err[512];
	int r;

	if (!file) {
		file = secure_getenv("NFSKEYS_CONF");
		if (!file || !*file)
			file = SYSCONFDIR "/nfskeys/nfskeys.conf";
	}
	r = ini_parse_file(file, NULL, scan_value, &sc, err, sizeof(err));
	if (sc.socket[0] == '/') {
		snprintf(buf, sizeof(buf), "%s", sc.socket);
		from = "[Idmapd] Socket in";
	} else if (sc.runtime_dir[0] == '/') {
		snprintf(buf, sizeof(buf), "%s/idmapd.sock", sc.runtime_dir);
		from = "[General] Runtime-Dir in";
	} else {
		snprintf(buf, sizeof(buf), "%s", IDMAPD_SOCKET_DEFAULT);
		from = r < 0 && r != -EINVAL ? "the default:" : "the default, none in";
	}
	fprintf(stderr, "%s: idmapd: going on without the configuration: socket %s (%s %s%s%s)\n",
		program_invocation_short_name, buf, from, file, r < 0 && r != -EINVAL ? ": " : "",
		r < 0 && r != -EINVAL ? strerror(-r) : "");
	return buf;
}

static int connect_daemon(struct nfskeys_ctx *ctx, const char *socket, int timeout_ms,
			  struct rpc_client **ret, const char **ret_path)
{
	const char *path = socket || ctx || !tool_config_failed ?
				   idmapd_socket_path(ctx, socket) :
				   fallback_socket_path();
	int r = idmapd_client_new(path, timeout_ms, ret);

	*ret_path = path;
	return r;
}

static int daemon_error(const char *what, const char *path, int r)
{
	if (r == -ENOENT || r == -ECONNREFUSED)
		return tool_error("%s: nfskeys-idmapd is not running (no listener on %s)", what,
				  path);
	if (r == -EPERM || r == -EACCES)
		return tool_error("%s: permission denied (root only)", what);
	return tool_error("%s: %s", what, strerror(-r));
}

static int stats_cmd(struct rpc_client *c, const char *path, int argc, char *argv[])
{
	enum stats_format fmt = STATS_TEXT;
	int r;

	for (int i = 1; i < argc; i++) {
		if (streq(argv[i], "--json"))
			fmt = STATS_JSON;
		else if (streq(argv[i], "--prometheus"))
			fmt = STATS_PROMETHEUS;
		else if (startswith(argv[i], "--format=")) {
			if (stats_format_from_string(argv[i] + 9, &fmt) < 0) {
				tool_error("stats: unknown format '%s' (text, json, prometheus)",
					   argv[i] + 9);
				return EXIT_USAGE;
			}
		} else {
			tool_error("stats: unexpected argument '%s'", argv[i]);
			return EXIT_USAGE;
		}
	}
	r = idmapd_client_print_stats(c, stdout, fmt);
	return r < 0 ? daemon_error("stats", path, r) : EXIT_OK;
}

static int parse_kind(const char *s, enum nfskeys_idmap_kind *ret)
{
	if (nfskeys_idmap_kind_from_string(s, ret) < 0) {
		tool_error("unknown kind '%s' (see 'nfskeys idmapd --help')", s);
		return -EINVAL;
	}
	return 0;
}

/* lookup --json: {"kind","key", then "name", "sid" or "id" (and "gid" and "groups" for a
 * principal), "ttl","backend","cached","stale","nobody"} */
static int print_lookup_json(enum nfskeys_idmap_kind kind, const char *key,
			     const struct nfskeys_idmap_answer *a, unsigned aflags)
{
	char sid[MAX(NFSKEYS_SID_STRING_MAX, NFSKEYS_IDMAP_NAME_MAX)];

	printf("{\"kind\":\"%s\",\"key\":", nfskeys_idmap_kind_to_string(kind));
	print_json_str(key);
	switch (kind) {
	case NFSKEYS_IDMAP_UID_TO_NAME:
	case NFSKEYS_IDMAP_GID_TO_GROUP:
		printf(",\"name\":");
		print_json_str(a->name);
		break;
	case NFSKEYS_IDMAP_UID_TO_SID:
	case NFSKEYS_IDMAP_GID_TO_SID:
		if (nfskeys_sid_to_string(&a->sid, sid, sizeof(sid)) < 0)
			snprintf(sid, sizeof(sid), "%s", a->name);
		printf(",\"sid\":");
		print_json_str(sid);
		break;
	case NFSKEYS_IDMAP_PRINCIPAL_TO_IDS:
		printf(",\"id\":%u,\"gid\":%u,\"groups\":[", a->id, a->gid);
		for (uint32_t i = 0; i < a->n_groups; i++)
			printf("%s%u", i ? "," : "", a->groups[i]);
		printf("]");
		break;
	default:
		printf(",\"id\":%u", a->id);
	}
	printf(",\"ttl\":%u,\"backend\":", a->ttl);
	print_json_str(a->backend);
	printf(",\"cached\":%s,\"stale\":%s,\"nobody\":%s}\n",
	       aflags & IDMAPD_ANSWER_CACHED ? "true" : "false",
	       aflags & IDMAPD_ANSWER_STALE ? "true" : "false",
	       aflags & IDMAPD_ANSWER_NOBODY ? "true" : "false");
	return fflush(stdout) == 0 ? EXIT_OK : EXIT_FAIL;
}

static int lookup_cmd(struct rpc_client *c, const char *path, int argc, char *argv[])
{
	struct nfskeys_idmap_answer a;
	enum nfskeys_idmap_kind kind;
	unsigned flags = 0, aflags = 0;
	const char *kind_s = NULL, *key = NULL;
	char sid[MAX(NFSKEYS_SID_STRING_MAX, NFSKEYS_IDMAP_NAME_MAX)];
	bool json = false;
	int r;

	for (int i = 1; i < argc; i++) {
		if (streq(argv[i], "--nobody") || streq(argv[i], "-n"))
			flags |= IDMAPD_LOOKUP_NOBODY;
		else if (streq(argv[i], "--json") || streq(argv[i], "-j"))
			json = true;
		else if (argv[i][0] == '-' && argv[i][1] && !kind_s) {
			tool_error("lookup: unknown option '%s'", argv[i]);
			return EXIT_USAGE;
		} else if (!kind_s)
			kind_s = argv[i];
		else if (!key)
			key = argv[i];
		else {
			tool_error("lookup: unexpected argument '%s'", argv[i]);
			return EXIT_USAGE;
		}
	}
	if (!key) {
		tool_error("lookup: need KIND and KEY");
		return EXIT_USAGE;
	}
	if (parse_kind(kind_s, &kind) < 0)
		return EXIT_USAGE;
	r = idmapd_client_lookup(c, kind, key, flags, &a, &aflags, NULL);
	if (r < 0) {
		if (r == -ENOENT && access(path, F_OK) == 0)
			return tool_error("lookup %s %s: no mapping", kind_s, key);
		if (r == -EINVAL)
			return tool_error("lookup %s %s: the daemon refused the key as malformed"
					  " for %s", kind_s, key, kind_s);
		return daemon_error("lookup", path, r);
	}
	if (json)
		return print_lookup_json(kind, key, &a, aflags);
	switch (kind) {
	case NFSKEYS_IDMAP_UID_TO_NAME:
	case NFSKEYS_IDMAP_GID_TO_GROUP:
		print_text_safe(a.name);
		break;
	case NFSKEYS_IDMAP_UID_TO_SID:
	case NFSKEYS_IDMAP_GID_TO_SID:
		if (nfskeys_sid_to_string(&a.sid, sid, sizeof(sid)) < 0)
			snprintf(sid, sizeof(sid), "%s", a.name);
		printf("%s", sid);
		break;
	case NFSKEYS_IDMAP_PRINCIPAL_TO_IDS:
		printf("%u %u", a.id, a.gid);
		break;
	default:
		printf("%u", a.id);
	}
	printf("\tttl=%u backend=%s%s%s%s\n", a.ttl, a.backend,
	       aflags & IDMAPD_ANSWER_CACHED ? " cached" : "",
	       aflags & IDMAPD_ANSWER_STALE ? " stale" : "",
	       aflags & IDMAPD_ANSWER_NOBODY ? " nobody" : "");
	return EXIT_OK;
}

/* One recent answer per line (or a JSON array); netns names the network namespace of a
 * client pipe other than the daemon's own (null in JSON for every other answer). */
static void print_recent(const idmapd_recent_res *res, bool json, const char *indent)
{
	if (json)
		putchar('[');
	for (u_int i = 0; i < res->entries.entries_len; i++) {
		const idmapd_recent_entry *e = &res->entries.entries_val[i];
		const char *kind = nfskeys_idmap_kind_to_string((enum nfskeys_idmap_kind)e->kind);

		if (json) {
			printf("%s{\"path\":", i ? "," : "");
			print_json_str(e->path);
			printf(",\"pid\":%u,\"uid\":%u,\"kind\":", e->pid, e->uid);
			print_json_str(kind ? kind : "?");
			printf(",\"key\":");
			print_json_str(e->key);
			printf(",\"status\":%d,\"result\":", e->status);
			print_json_str(e->result);
			printf(",\"answer\":");
			print_json_str(e->answer);
			printf(",\"age_ms\":%llu,\"netns\":", (unsigned long long)e->age_ms);
			if (e->netns)
				printf("\"net:[%llu]\"}", (unsigned long long)e->netns);
			else
				printf("null}");
			continue;
		}
		printf("%s%8.1fs ago  %-13s ", indent, (double)e->age_ms / 1000.0, e->path);
		/* a container's NFS client, through its own namespace's pipe */
		if (e->netns)
			printf("net:[%llu] ", (unsigned long long)e->netns);
		if (streq(e->path, "socket"))
			printf("(pid %u uid %u) ", e->pid, e->uid);
		printf("%s ", kind ? kind : "?");
		print_text_safe(e->key);
		printf(" -> ");
		/* the daemon's -ENOENT is a verdict, not a missing file */
		if (e->status == -ENOENT)
			printf("no mapping");
		else if (e->status < 0)
			printf("%s", strerror(-e->status));
		else
			print_text_safe(e->answer);
		printf(" (%s)\n", e->result);
	}
	if (json)
		printf("]");
}

static int recent_cmd(struct rpc_client *c, const char *path, int argc, char *argv[])
{
	idmapd_recent_res res = {};
	enum nfskeys_idmap_kind kind = 0;
	const char *key = NULL, *kind_s = NULL;
	bool json = false;
	int r;

	for (int i = 1; i < argc; i++) {
		if (streq(argv[i], "--json") || streq(argv[i], "-j"))
			json = true;
		else if (!kind_s)
			kind_s = argv[i];
		else if (!key)
			key = argv[i];
		else {
			tool_error("recent: unexpected argument '%s'", argv[i]);
			return EXIT_USAGE;
		}
	}
	if (kind_s && !key) {
		tool_error("recent: takes nothing or KIND KEY");
		return EXIT_USAGE;
	}
	if (kind_s && parse_kind(kind_s, &kind) < 0)
		return EXIT_USAGE;
	r = idmapd_client_recent(c, kind, key, &res);
	if (r < 0)
		return daemon_error("recent", path, r);
	if (!json && res.entries.entries_len == 0)
		printf("no recent answers%s\n", key ? " for this key" : "");
	else
		print_recent(&res, json, "");
	if (json)
		putchar('\n');
	xdr_free((xdrproc_t)xdr_idmapd_recent_res, (char *)&res);
	return EXIT_OK;
}

/* One served namespace as an object of namespaces --json. */
static void print_namespace_json(const idmapd_namespace *ns)
{
	printf("{\"netns\":\"net:[%llu]\",\"served\":%s,\"pipes\":%u,\"userns\":",
	       (unsigned long long)ns->netns, ns->open ? "true" : "false", ns->pipes);
	if (!ns->open)
		printf("null");
	else if (!ns->translate)
		printf("\"initial\"");
	else
		printf("\"user:[%llu]\"", (unsigned long long)ns->userns);
	printf(",\"maps_read\":%s}", ns->open && ns->translate && ns->maps_read ? "true" : "false");
}

static int namespaces_cmd(struct rpc_client *c, const char *path, int argc, char *argv[])
{
	idmapd_namespaces_res res = {};
	bool json = false;
	u_int n;
	int r;

	for (int i = 1; i < argc; i++) {
		if (streq(argv[i], "--json") || streq(argv[i], "-j"))
			json = true;
		else {
			tool_error("namespaces: unexpected argument '%s'", argv[i]);
			return EXIT_USAGE;
		}
	}
	r = idmapd_client_namespaces(c, &res);
	if (r < 0)
		return daemon_error("namespaces", path, r);
	n = res.namespaces.namespaces_len;
	if (json) {
		printf("{\"enabled\":%s,\"kernel\":", res.enabled ? "true" : "false");
		print_json_str(res.kernel);
		printf(",\"total\":%u,\"namespaces\":[", res.total);
		for (u_int i = 0; i < n; i++) {
			if (i)
				putchar(',');
			print_namespace_json(&res.namespaces.namespaces_val[i]);
		}
		printf("]}\n");
	} else if (n == 0 && !res.enabled) {
		printf("no other network namespace is served: [Kernel] Namespaces = none when "
		       "nfskeys-idmapd started (set auto and restart it to serve containers)\n");
	} else if (n == 0) {
		printf("no other network namespace is served now (kernel paths: %s)\n", res.kernel);
	}
	for (u_int i = 0; !json && i < n; i++) {
		const idmapd_namespace *ns = &res.namespaces.namespaces_val[i];

		printf("net:[%llu]", (unsigned long long)ns->netns);
		if (!ns->open)
			printf("  not served: rpc_pipefs could not be opened\n");
		else if (!ns->translate)
			printf("  pipes %u  ids initial\n", ns->pipes);
		else
			printf("  pipes %u  ids through user:[%llu] (%s)\n", ns->pipes,
			       (unsigned long long)ns->userns,
			       ns->maps_read ? "ids mapped" : "maps unread");
	}
	if (!json && res.total > n)
		printf("(%u more not listed)\n", res.total - n);
	xdr_free((xdrproc_t)xdr_idmapd_namespaces_res, (char *)&res);
	return fflush(stdout) == 0 ? EXIT_OK : EXIT_FAIL;
}

/* The daemon's recent answers for kind/key (explain's two outputs): 0 or -errno, with the
 * socket path in *ret_path for the messages. */
static int explain_fetch_recent(struct nfskeys_ctx *ctx, enum nfskeys_idmap_kind kind,
				const char *key, idmapd_recent_res *res, const char **ret_path)
{
	struct rpc_client *c = NULL;
	int r = connect_daemon(ctx, NULL, 2000, &c, ret_path);

	if (r == 0)
		r = idmapd_client_recent(c, kind, key, res);
	rpc_client_free(c);
	return r;
}

void explain_recent(struct nfskeys_ctx *ctx, enum nfskeys_idmap_kind kind, const char *key)
{
	idmapd_recent_res res = {};
	const char *path;
	int r = explain_fetch_recent(ctx, kind, key, &res, &path);

	if (r == -ENOENT || r == -ECONNREFUSED)
		printf("nfskeys-idmapd is not running (%s): no record of which kernel path asked.\n",
		       path);
	else if (r == -EPERM || r == -EACCES)
		printf("Which path asked nfskeys-idmapd for it: root only (run as root).\n");
	else if (r < 0)
		printf("nfskeys-idmapd (%s) could not say which path asked: %s\n", path,
		       strerror(-r));
	else if (res.entries.entries_len == 0)
		printf("nfskeys-idmapd has not answered it lately (it keeps its last %u "
		       "answers).\n", (unsigned)IDMAPD_RECENT_RING);
	else {
		printf("Asked of nfskeys-idmapd lately (newest first):\n");
		print_recent(&res, false, "  ");
	}
	if (r == 0)
		xdr_free((xdrproc_t)xdr_idmapd_recent_res, (char *)&res);
}

void explain_recent_json(struct nfskeys_ctx *ctx, enum nfskeys_idmap_kind kind, const char *key)
{
	idmapd_recent_res res = {};
	const char *path;
	int r = explain_fetch_recent(ctx, kind, key, &res, &path);

	if (r < 0) {
		printf("null,\"recent_error\":");
		print_json_str(r == -ENOENT || r == -ECONNREFUSED ? "nfskeys-idmapd is not running" :
			       r == -EPERM || r == -EACCES	 ? "root only" :
								   strerror(-r));
		return;
	}
	print_recent(&res, true, "");
	xdr_free((xdrproc_t)xdr_idmapd_recent_res, (char *)&res);
}

int cmd_idmapd_stats(struct nfskeys_ctx *ctx, int argc, char *argv[])
{
	struct rpc_client *c = NULL;
	const char *path;
	int r;

	r = connect_daemon(ctx, NULL, DEFAULT_TIMEOUT_MS, &c, &path);
	if (r < 0)
		return daemon_error("stats", path, r);
	r = stats_cmd(c, path, argc, argv);
	rpc_client_free(c);
	return r;
}

/* What each subcommand gets: the connection to the daemon and the socket's path. */
struct idmapd_call {
	struct rpc_client *c;
	const char *path;
};

static int idmapd_ping(void *state, int argc, char *argv[])
{
	struct idmapd_call *d = state;
	char rel[64];
	uint32_t pid;
	uint64_t gen;
	int r;

	r = idmapd_client_ping(d->c, rel, sizeof(rel), &pid, &gen);
	if (r < 0)
		return daemon_error("ping", d->path, r);
	printf("nfskeys-idmapd %s pid %u generation %llu on %s\n", rel, pid,
	       (unsigned long long)gen, d->path);
	return EXIT_OK;
}

static int idmapd_lookup(void *state, int argc, char *argv[])
{
	struct idmapd_call *d = state;

	return lookup_cmd(d->c, d->path, argc, argv);
}

static int idmapd_flush(void *state, int argc, char *argv[])
{
	struct idmapd_call *d = state;
	enum nfskeys_idmap_kind kind = 0;
	unsigned dropped = 0, rings = 0;
	int r;

	if (argc != 1 && argc != 3) {
		tool_error("flush: takes nothing or KIND KEY");
		return EXIT_USAGE;
	}
	if (argc == 3 && parse_kind(argv[1], &kind) < 0)
		return EXIT_USAGE;
	r = idmapd_client_flush(d->c, kind, argc == 3 ? argv[2] : NULL, &dropped, &rings);
	if (r == -ENOENT)
		return tool_error("flush: %s %s is not cached (nor in a kernel keyring)", argv[1],
				  argv[2]);
	if (r < 0)
		return daemon_error("flush", d->path, r);
	if (argc == 3)
		printf("dropped %u cache entries, invalidated the kernel key in %u keyrings\n",
		       dropped, rings);
	else
		printf("dropped %u cache entries, cleared %u kernel keyrings\n", dropped, rings);
	return EXIT_OK;
}

static int idmapd_reload(void *state, int argc, char *argv[])
{
	struct idmapd_call *d = state;
	char msg[IDMAPD_MESSAGE_MAX];
	uint64_t gen = 0;
	int r;

	msg[0] = 0;
	r = idmapd_client_reload(d->c, msg, sizeof(msg), &gen);
	if (r == -EPERM || r == -EACCES)
		return daemon_error("reload", d->path, r);
	if (r < 0 && msg[0])
		return tool_error("reload failed, old configuration kept: %s", msg);
	if (r < 0)
		return daemon_error("reload", d->path, r);
	printf("%s\n", msg);
	return EXIT_OK;
}

static int idmapd_stats(void *state, int argc, char *argv[])
{
	struct idmapd_call *d = state;

	return stats_cmd(d->c, d->path, argc, argv);
}

static int idmapd_namespaces(void *state, int argc, char *argv[])
{
	struct idmapd_call *d = state;

	return namespaces_cmd(d->c, d->path, argc, argv);
}

static int idmapd_recent(void *state, int argc, char *argv[])
{
	struct idmapd_call *d = state;

	return recent_cmd(d->c, d->path, argc, argv);
}

int cmd_idmapd(struct nfskeys_ctx *ctx, int argc, char *argv[])
{
	const char *socket = NULL, *sub;
	const struct cli_sub *row;
	struct idmapd_call d = {};
	int timeout = DEFAULT_TIMEOUT_MS, i, r, rc;
	bool timeout_set = false;

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		if ((streq(argv[i], "--socket") || streq(argv[i], "-s")) && i + 1 < argc) {
			socket = argv[++i];
		} else if ((streq(argv[i], "--timeout") || streq(argv[i], "-t")) && i + 1 < argc) {
			const char *t = argv[++i];
			uint64_t v;
			int pr;

			/* --timeout is seconds in every nfskeys program (as nfsidmap -t): a bare
			 * number is seconds, a unit (500ms, 2m) says otherwise */
			pr = units_parse_duration(t, 1, &v, NULL);
			if (pr == 0 && t[strspn(t, "0123456789")] == '\0')
				pr = units_parse_duration(t, 1, &v, NULL) == 0 && v <= 600 ?
					     (v *= 1000, 0) : -ERANGE;
			if (pr < 0 || v == 0 || v > 600000) {
				tool_error("idmapd: bad timeout '%s' (seconds, up to 600; or a "
					   "duration with its unit: 500ms, 2m)",
					   t);
				return EXIT_USAGE;
			}
			timeout = (int)v;
			timeout_set = true;
		} else if (streq(argv[i], "--help") || streq(argv[i], "-h")) {
			idmapd_usage(stdout);
			return EXIT_OK;
		} else {
			tool_error("idmapd: unknown option '%s'", argv[i]);
			idmapd_usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (i >= argc) {
		idmapd_usage(stderr);
		return EXIT_USAGE;
	}
	sub = argv[i];
	argc -= i;
	argv += i;
	if (streq(sub, "help")) {
		idmapd_usage(stdout);
		return EXIT_OK;
	}
	/* known before the daemon is asked: a typo is a usage error, not "not running" */
	row = cli_sub_find(idmapd_subs, sub);
	if (!row) {
		tool_error("idmapd: unknown command '%s' (see 'nfskeys idmapd --help')", sub);
		return EXIT_USAGE;
	}
	for (i = 1; i < argc && !streq(argv[i], "--"); i++) {
		if (streq(argv[i], "--help") || streq(argv[i], "-h")) {
			idmapd_usage(stdout);
			return EXIT_OK;
		}
	}
	if (streq(sub, "reload") && !timeout_set)
		timeout = RELOAD_TIMEOUT_MS;
	r = connect_daemon(ctx, socket, timeout, &d.c, &d.path);
	if (r < 0)
		return daemon_error(sub, d.path, r);
	rc = row->fn(&d, argc, argv);
	rpc_client_free(d.c);
	return rc;
}
