/* nfskeys idmap: look up, reverse and explain ID mappings through the library engine,
 * flush the kernel's ID-mapping keyrings, convert /etc/idmapd.conf, and install the
 * request-key routing for nfskeys-upcall. */
/* Here: lookups, reverse, explain, query, flush, stats and the dispatch; import-conf and
 * enable-upcalls are in cmd-idmap-setup.c. */
#include <ctype.h>
#include <dirent.h>
#include <getopt.h>
#include <inttypes.h>
#include <keyutils.h>
#include <limits.h>
#include <sys/stat.h>
#include <syslog.h>

#include "cmd-idmap-private.h"
#include "idmapd-client.h"
#include "ini.h"
#include "nfskeys-tool.h"
#include "request-key-conf.h"
/* after macros.h: <rpc/rpc.h> redefines MIN/MAX silently in its system header */
#include "idmap.h"

static bool kind_gives_name(enum nfskeys_idmap_kind k)
{
	return k == NFSKEYS_IDMAP_UID_TO_NAME || k == NFSKEYS_IDMAP_GID_TO_GROUP ||
	       k == NFSKEYS_IDMAP_UID_TO_SID || k == NFSKEYS_IDMAP_GID_TO_SID;
}

/* One answer as a JSON object (no newline): lookup --json, query, explain --json. */
static void print_answer_json(const char *key, const struct nfskeys_idmap_answer *a)
{
	enum nfskeys_idmap_kind k = (enum nfskeys_idmap_kind)a->kind;

	printf("{\"kind\":\"%s\",\"key\":", nfskeys_idmap_kind_to_string(k));
	print_json_str(key);
	if (kind_gives_name(k)) {
		printf(",\"name\":");
		print_json_str(a->name);
	}
	if (!kind_gives_name(k) || k == NFSKEYS_IDMAP_UID_TO_SID || k == NFSKEYS_IDMAP_GID_TO_SID)
		printf(",\"id\":%" PRIu32, a->id);
	if (k == NFSKEYS_IDMAP_PRINCIPAL_TO_IDS) {
		printf(",\"gid\":%" PRIu32 ",\"groups\":[", a->gid);
		for (uint32_t i = 0; i < a->n_groups; i++)
			printf("%s%" PRIu32, i ? "," : "", a->groups[i]);
		printf("]");
	}
	printf(",\"backend\":");
	print_json_str(a->backend);
	printf(",\"ttl\":%" PRIu32 ",\"nobody\":%s", a->ttl,
	       (a->flags & NFSKEYS_IDMAP_ANSWER_NOBODY) ? "true" : "false");
	if (a->flags & NFSKEYS_IDMAP_ANSWER_NOBODY)
		printf(",\"reason\":\"%s\"", strerror(-a->error));
	printf("}");
}

static void print_answer(const char *key, const struct nfskeys_idmap_answer *a, bool json)
{
	enum nfskeys_idmap_kind k = (enum nfskeys_idmap_kind)a->kind;

	if (json) {
		print_answer_json(key, a);
		putchar('\n');
		return;
	}
	print_text_safe(key);
	printf(" -> ");
	if (kind_gives_name(k))
		print_text_safe(a->name);
	else
		printf("%" PRIu32, a->id);
	if (k == NFSKEYS_IDMAP_PRINCIPAL_TO_IDS) {
		printf(" gid %" PRIu32 " groups", a->gid);
		for (uint32_t i = 0; i < a->n_groups; i++)
			printf("%s%" PRIu32, i ? "," : " ", a->groups[i]);
	}
	if (a->flags & NFSKEYS_IDMAP_ANSWER_NOBODY) {
		printf(" (nobody: %s; ttl %" PRIu32 "s; see 'nfskeys idmap explain ",
		       strerror(-a->error), a->ttl);
		print_text_safe(key);
		printf("')\n");
	} else {
		printf(" (%s%s, ttl %" PRIu32 "s)\n", a->backend,
		       (a->flags & NFSKEYS_IDMAP_ANSWER_CACHED) ? ", cached" : "", a->ttl);
	}
}

/* explain's text for a person: the key it quotes (which may hold a newline) shown as
 * one escaped word, then every line escaped (a backend's answer may hold control bytes). */
static void print_explanation(const char *text, const char *key)
{
	size_t klen = strlen(key);
	const char *p = text;

	while (*p) {
		const char *nl = strchr(p, '\n');
		const char *end = nl ? nl : p + strlen(p);
		const char *k = klen ? memmem(p, (size_t)(text + strlen(text) - p), key, klen) : NULL;
		_cleanup_free_ char *part = NULL;

		/* the key, where it starts on this line, as one piece even across newlines */
		if (k && k < end) {
			part = strndup(p, (size_t)(k - p));
			if (part)
				print_text_safe(part);
			print_text_safe(key);
			p = k + klen;
			continue;
		}
		part = strndup(p, (size_t)(end - p));
		if (part)
			print_text_safe(part);
		putchar('\n');
		p = nl ? nl + 1 : end;
	}
}

/* Keys resolved together: one batch to nfskeys-idmapd (idmapd_client_lookup_many), and
 * a bound on what "lookup -" holds of stdin at once. */
#define LOOKUP_CHUNK 1024

struct lookup_run {
	struct nfskeys_ctx *ctx;
	const char *cmd;
	enum nfskeys_idmap_kind kind;
	bool sid_auto, json;
	unsigned flags;          /* NFSKEYS_IDMAP_LOOKUP_* */
	bool local;              /* never ask the daemon */
	struct rpc_client *daemon; /* the daemon's client once it answered, else NULL */
	bool daemon_tried;
};

static enum nfskeys_idmap_kind key_kind(const struct lookup_run *lr, const char *key)
{
	if (lr->sid_auto && (key[0] == 'S' || key[0] == 's') && key[1] == '-')
		return lr->kind == NFSKEYS_IDMAP_UID_TO_SID ? NFSKEYS_IDMAP_SID_TO_UID :
							       NFSKEYS_IDMAP_SID_TO_GID;
	return lr->kind;
}

/* Ask the daemon for keys[0..n) (a sid command may mix two kinds: one batch per kind).
 * 0 when it answered every key (status[i] is its verdict); a negative errno when it is
 * not there or the transport failed: the caller then resolves in process. */
static int daemon_resolve(struct lookup_run *lr, const char *const *keys, size_t n,
			  struct nfskeys_idmap_answer *ans, int *status)
{
	_cleanup_free_ const char **sub = NULL;
	_cleanup_free_ struct nfskeys_idmap_answer *sans = NULL;
	_cleanup_free_ int *sst = NULL;
	_cleanup_free_ size_t *idx = NULL;
	_cleanup_free_ bool *done = NULL;
	int r;

	if (!lr->daemon) {
		if (lr->local || lr->daemon_tried)
			return -ENOENT;
		lr->daemon_tried = true;
		r = idmapd_client_new(idmapd_socket_path(lr->ctx, NULL), 5000, &lr->daemon);
		if (r < 0)
			return r;
	}
	sub = calloc(n, sizeof(*sub));
	sans = calloc(n, sizeof(*sans));
	sst = calloc(n, sizeof(*sst));
	idx = calloc(n, sizeof(*idx));
	done = calloc(n, sizeof(*done));
	if (!sub || !sans || !sst || !idx || !done)
		return -ENOMEM;
	for (size_t first = 0; first < n; first++) {
		enum nfskeys_idmap_kind k = key_kind(lr, keys[first]);
		size_t m = 0;

		if (done[first])
			continue;
		for (size_t i = first; i < n; i++) {
			if (done[i] || key_kind(lr, keys[i]) != k)
				continue;
			done[i] = true;
			/* too long for the protocol: the engine refuses it the same way */
			if (strlen(keys[i]) > IDMAPD_KEY_MAX) {
				status[i] = nfskeys_idmap_lookup_full(lr->ctx, k, keys[i], lr->flags,
								      &ans[i]);
				continue;
			}
			idx[m] = i;
			sub[m++] = keys[i];
		}
		if (m == 0)
			continue;
		r = idmapd_client_lookup_many(lr->daemon, k, sub, m,
					      (lr->flags & NFSKEYS_IDMAP_LOOKUP_NOBODY) ?
						      IDMAPD_LOOKUP_NOBODY : 0,
					      sans, sst);
		if (r < 0) {
			lr->daemon = rpc_client_free(lr->daemon);
			return r;
		}
		for (size_t j = 0; j < m; j++) {
			status[idx[j]] = sst[j];
			if (sst[j] == 0)
				ans[idx[j]] = sans[j];
		}
	}
	return 0;
}

/* Why an id key was refused: a number out of the ids' range is one, not a non-number;
 * 4294967295 is (uid_t)-1, which chown(2) reads as "no change" and no user has. */
static const char *id_problem(const char *key)
{
	const char *p = key;

	while (*p >= '0' && *p <= '9')
		p++;
	if (p == key || *p)
		return "not a numeric id";
	return "out of range (an id is 0 to 4294967294; 4294967295 is (uid_t)-1, never an "
	       "owner)";
}

/* Resolve and print keys[0..n) in their order; EXIT_OK or EXIT_FAIL (a key failed). */
static int lookup_chunk(struct lookup_run *lr, const char *const *keys, size_t n)
{
	struct nfskeys_idmap_answer *ans = calloc(n, sizeof(*ans));
	int *status = calloc(n, sizeof(*status));
	int rc = EXIT_OK;

	if (!ans || !status) {
		free(ans);
		free(status);
		return tool_error("idmap %s: out of memory", lr->cmd);
	}
	if (daemon_resolve(lr, keys, n, ans, status) < 0)
		for (size_t i = 0; i < n; i++)
			status[i] = nfskeys_idmap_lookup_full(lr->ctx, key_kind(lr, keys[i]), keys[i],
							      lr->flags, &ans[i]);
	for (size_t i = 0; i < n; i++) {
		enum nfskeys_idmap_kind k = key_kind(lr, keys[i]);
		int r = status[i];

		if (r < 0) {
			fflush(stdout); /* in order with the answers when both go to one file */
			tool_error("idmap %s: %s: %s", lr->cmd, keys[i],
				   r == -ENOENT ? "no mapping (see 'nfskeys idmap explain')" :
				   r == -EINVAL ? (k == NFSKEYS_IDMAP_SID_TO_UID ||
							   k == NFSKEYS_IDMAP_SID_TO_GID ?
						   "not a SID such as S-1-5-21-1-2-3-1000" :
					   kind_gives_name(k) ? id_problem(keys[i]) :
								"malformed name") :
						  strerror(-r));
			rc = EXIT_FAIL;
			continue;
		}
		print_answer(keys[i], &ans[i], lr->json);
	}
	fflush(stdout);
	free(ans);
	free(status);
	return rc;
}

/* "lookup -": one key a line from stdin (blank lines skipped), LOOKUP_CHUNK at a time. */
static int lookup_stdin(struct lookup_run *lr)
{
	char *keys[LOOKUP_CHUNK], *line = NULL;
	size_t n = 0, cap = 0;
	int rc = EXIT_OK;
	ssize_t len;

	for (;;) {
		len = getline(&line, &cap, stdin);
		if (len >= 0) {
			while (len > 0 && isspace((unsigned char)line[len - 1]))
				line[--len] = 0;
			if (len == 0)
				continue;
			keys[n] = strdup(line);
			if (!keys[n]) {
				rc = tool_error("idmap %s: out of memory", lr->cmd);
				break;
			}
			n++;
		}
		if (n > 0 && (n == LOOKUP_CHUNK || len < 0)) {
			if (lookup_chunk(lr, (const char *const *)keys, n) != EXIT_OK)
				rc = EXIT_FAIL;
			for (size_t i = 0; i < n; i++)
				free(keys[i]);
			n = 0;
		}
		if (len < 0)
			break;
	}
	for (size_t i = 0; i < n; i++)
		free(keys[i]);
	free(line);
	return rc;
}

/* Look up the keys on the command line ("-": from stdin) through nfskeys-idmapd when it
 * answers at the configured socket (batched, in order, an error per key), else in this
 * process. */
static int lookup_keys(struct nfskeys_ctx *ctx, const char *cmd, enum nfskeys_idmap_kind kind,
		       bool sid_auto, int argc, char *argv[], unsigned flags, bool json,
		       bool local)
{
	struct lookup_run lr = { .ctx = ctx, .cmd = cmd, .kind = kind, .sid_auto = sid_auto,
				 .json = json, .flags = flags, .local = local };
	int rc = EXIT_OK;

	if (argc <= 0) {
		tool_error("idmap %s: nothing to look up (see 'nfskeys idmap --help')", cmd);
		return EXIT_USAGE;
	}
	/* --no-cache asks the engine itself, as before */
	if (flags & NFSKEYS_IDMAP_LOOKUP_NO_CACHE)
		lr.local = true;
	if (argc == 1 && streq(argv[0], "-"))
		rc = lookup_stdin(&lr);
	else
		for (int i = 0; i < argc; i += LOOKUP_CHUNK)
			if (lookup_chunk(&lr, (const char *const *)argv + i,
					 MIN(argc - i, LOOKUP_CHUNK)) != EXIT_OK)
				rc = EXIT_FAIL;
	rpc_client_free(lr.daemon);
	return rc;
}

/* Possess and clear the kernel's ID-mapping keyrings (as nfsidmap -c does). */
static int flush_kernel(bool quiet)
{
	static const char *const rings[] = { ".id_resolver", ".cifs_idmap" };

	for (size_t i = 0; i < ARRAY_SIZE(rings); i++) {
		int32_t ring;
		int r = nfskeys_key_possess_keyring(rings[i], &ring);

		if (r < 0) {
			if (!quiet)
				printf("%s: not present (%s)\n", rings[i],
				       r == -ENOKEY ? "the filesystem module is not loaded" :
						      strerror(-r));
			continue;
		}
		if (keyctl_clear(ring) < 0) {
			tool_error("idmap flush: cannot clear %s: %s", rings[i], strerror(errno));
			return EXIT_FAIL;
		}
		if (!quiet)
			printf("%s: cleared\n", rings[i]);
	}
	return EXIT_OK;
}

/* Batch mode: "KIND KEY" per input line, one JSON answer (or error) per output line,
 * flushed, so scripts (and tests) can drive one long-lived engine. */
static int cmd_query(struct nfskeys_ctx *ctx, unsigned flags)
{
	char line[2048];
	int rc = EXIT_OK;

	while (fgets(line, sizeof(line), stdin)) {
		enum nfskeys_idmap_kind k;
		struct nfskeys_idmap_answer a;
		char *key, *nl = strchr(line, '\n');
		int r;

		if (nl)
			*nl = '\0';
		if (!line[0] || line[0] == '#')
			continue;
		key = strchr(line, ' ');
		if (!key || (*key++ = '\0', nfskeys_idmap_kind_from_string(line, &k) < 0)) {
			printf("{\"error\":\"bad request: expected KIND KEY\"}\n");
			fflush(stdout);
			rc = EXIT_FAIL;
			continue;
		}
		r = nfskeys_idmap_lookup_full(ctx, k, key, flags, &a);
		if (r < 0) {
			printf("{\"kind\":\"%s\",\"key\":", line);
			print_json_str(key);
			printf(",\"error\":\"%s\",\"errno\":%d}\n", strerror(-r), -r);
			rc = EXIT_FAIL;
		} else {
			print_answer(key, &a, true);
		}
		fflush(stdout);
	}
	return rc;
}

/* ---------------------------------------------------------------- dispatch */

/* What "nfskeys idmap SUB" hands each subcommand: the context and, once
 * idmap_parse_options has run, the lookup options. */
struct idmap_call {
	struct nfskeys_ctx *ctx;
	bool group, principal, json, reverse, sid, local;
	unsigned flags;
};

static int idmap_lookup(void *state, int argc, char *argv[]);
static int idmap_reverse(void *state, int argc, char *argv[]);
static int idmap_sid(void *state, int argc, char *argv[]);
static int idmap_explain(void *state, int argc, char *argv[]);
static int idmap_query(void *state, int argc, char *argv[]);
static int idmap_flush(void *state, int argc, char *argv[]);
static int idmap_domain(void *state, int argc, char *argv[]);
static int idmap_stats(void *state, int argc, char *argv[]);
static int idmap_import_conf(void *state, int argc, char *argv[]);
static int idmap_enable_upcalls(void *state, int argc, char *argv[]);

const struct cli_sub idmap_subs[] = {
	{ "lookup", NULL, "NAME@DOMAIN...",
	  "name -> uid (--group: group -> gid;\n"
	  "--principal: Kerberos principal -> uid, gid, groups);\n"
	  "'-' reads the keys from stdin, one a line",
	  idmap_lookup },
	{ "reverse", NULL, "ID...", "uid -> name@domain (--group: gid -> group@domain)",
	  idmap_reverse },
	{ "sid", NULL, "SID|ID...", "SID -> uid, or uid -> SID (--group for gids)", idmap_sid },
	{ "explain", NULL, "NAME|ID|SID",
	  "why a key maps to what it maps to (--group,\n"
	  "--principal, --reverse, --sid as for the above)",
	  idmap_explain },
	{ "query", NULL, NULL,
	  "read \"KIND KEY\" lines (kinds: name-to-uid, uid-to-name,\n"
	  "sid-to-uid, ...) from stdin, answer each in JSON",
	  idmap_query },
	{ "flush", NULL, NULL, "clear the kernel's .id_resolver/.cifs_idmap keyrings",
	  idmap_flush },
	{ "domain", NULL, NULL, "show the NFSv4 domain and where it came from", idmap_domain },
	{ "stats", NULL, "[--json|--prometheus]",
	  "nfskeys-idmapd's counters and latency histograms", idmap_stats },
	{ "import-conf", NULL, "[FILE] [-o OUT]",
	  "convert /etc/idmapd.conf to nfskeys.conf settings", idmap_import_conf },
	{ "enable-upcalls", NULL, "[--dir DIR] [--helper PATH] [--print]",
	  "install request-key.d/nfskeys.conf for nfskeys-upcall", idmap_enable_upcalls },
	{},
};

static void idmap_usage(FILE *f)
{
	fprintf(f,
		"Usage: nfskeys idmap COMMAND [OPTIONS] ARGS...\n"
		"\n"
		"Commands:\n");
	cli_sub_usage(f, idmap_subs, 29);
	fprintf(f,
		"\n"
		"Options for lookups:\n"
		"  -g, --group      groups instead of users\n"
		"  -p, --principal  principal -> ids (lookup, explain)\n"
		"  -n, --nobody     answer nobody (with its short TTL) as the upcall would\n"
		"      --no-cache   bypass the in-process cache (implies --local)\n"
		"  -L, --local      resolve in this process even when nfskeys-idmapd answers\n"
		"                   (by default lookup, reverse and sid ask the daemon at\n"
		"                   [Idmapd] Socket first, in batches, and fall back to this\n"
		"                   process when it is not running)\n"
		"  -j, --json       one JSON object per answer\n"
		"\n"
		"Exit status: 0 all keys mapped, 1 a key did not map or an operation failed,\n"
		"2 usage error, 3 configuration error.  See nfskeys-idmap(1).\n");
}

/* The lookup options of argv (argv[0] the subcommand) into c; -1 when the command goes
 * on with the operands at argv + *used, else the exit code (help shown, usage error). */
static int idmap_parse_options(struct idmap_call *c, int argc, char *argv[], int *used)
{
	static const struct option opts[] = {
		{ "group", no_argument, NULL, 'g' },  { "principal", no_argument, NULL, 'p' },
		{ "nobody", no_argument, NULL, 'n' }, { "no-cache", no_argument, NULL, 'C' },
		{ "json", no_argument, NULL, 'j' },   { "reverse", no_argument, NULL, 'r' },
		{ "sid", no_argument, NULL, 's' },    { "help", no_argument, NULL, 'h' },
		{ "local", no_argument, NULL, 'L' },
		{}
	};
	int o;

	optind = 0;
	argv[0] = program_invocation_short_name; /* getopt's messages name the program */
	while ((o = getopt_long(argc, argv, "gpnjrsLh", opts, NULL)) >= 0) {
		switch (o) {
		case 'g':
			c->group = true;
			break;
		case 'p':
			c->principal = true;
			break;
		case 'n':
			c->flags |= NFSKEYS_IDMAP_LOOKUP_NOBODY;
			break;
		case 'C':
			c->flags |= NFSKEYS_IDMAP_LOOKUP_NO_CACHE;
			break;
		case 'j':
			c->json = true;
			break;
		case 'r':
			c->reverse = true;
			break;
		case 's':
			c->sid = true;
			break;
		case 'L':
			c->local = true;
			break;
		default:
			return cli_std_option(o, "nfskeys", idmap_usage);
		}
	}
	*used = optind;
	return -1;
}

/* The handlers that take the lookup options start with this: c and the operands. */
#define IDMAP_OPTIONS(c, state, argc, argv)                                 \
	struct idmap_call *c = state;                                       \
	do {                                                                \
		int used_, r_ = idmap_parse_options(c, argc, argv, &used_); \
		if (r_ >= 0)                                                \
			return r_;                                          \
		argc -= used_;                                              \
		argv += used_;                                              \
	} while (0)

static int idmap_lookup(void *state, int argc, char *argv[])
{
	IDMAP_OPTIONS(c, state, argc, argv);
	return lookup_keys(c->ctx, "lookup",
			   c->principal ? NFSKEYS_IDMAP_PRINCIPAL_TO_IDS :
			   c->group     ? NFSKEYS_IDMAP_GROUP_TO_GID :
					  NFSKEYS_IDMAP_NAME_TO_UID,
			   false, argc, argv, c->flags, c->json, c->local);
}

static int idmap_reverse(void *state, int argc, char *argv[])
{
	IDMAP_OPTIONS(c, state, argc, argv);
	return lookup_keys(c->ctx, "reverse",
			   c->group ? NFSKEYS_IDMAP_GID_TO_GROUP : NFSKEYS_IDMAP_UID_TO_NAME, false,
			   argc, argv, c->flags, c->json, c->local);
}

static int idmap_sid(void *state, int argc, char *argv[])
{
	IDMAP_OPTIONS(c, state, argc, argv);
	return lookup_keys(c->ctx, "sid",
			   c->group ? NFSKEYS_IDMAP_GID_TO_SID : NFSKEYS_IDMAP_UID_TO_SID, true,
			   argc, argv, c->flags, c->json, c->local);
}

static int idmap_query(void *state, int argc, char *argv[])
{
	IDMAP_OPTIONS(c, state, argc, argv);
	return cmd_query(c->ctx, c->flags);
}

static int idmap_flush(void *state, int argc, char *argv[])
{
	IDMAP_OPTIONS(c, state, argc, argv);
	int r = nfskeys_idmap_flush(c->ctx);

	if (r < 0)
		return tool_error("idmap flush: %s", strerror(-r));
	return flush_kernel(c->json);
}

static int idmap_domain(void *state, int argc, char *argv[])
{
	IDMAP_OPTIONS(c, state, argc, argv);
	const char *domain, *source;
	int r = nfskeys_idmap_get_domain(c->ctx, &domain, &source);

	if (r < 0)
		return tool_error("idmap domain: %s", strerror(-r));
	if (argc > 0) {
		tool_error("idmap domain: unexpected argument '%s'", argv[0]);
		return EXIT_USAGE;
	}
	if (c->json) {
		printf("{\"domain\":");
		print_json_str(domain);
		printf(",\"source\":");
		print_json_str(source);
		printf("}\n");
	} else {
		printf("%s (from %s)\n", domain, source);
	}
	return EXIT_OK;
}

static int idmap_explain(void *state, int argc, char *argv[])
{
	IDMAP_OPTIONS(c, state, argc, argv);
	bool group = c->group;
	enum nfskeys_idmap_kind k;
	_cleanup_free_ char *text = NULL;
	struct nfskeys_idmap_answer a;
	int r, config;

	if (argc != 1) {
		tool_error("idmap explain: give exactly one name, id or SID");
		return EXIT_USAGE;
	}
	/* a backend that is not installed: said once here, explained below, exit 3 */
	config = nfskeys_idmap_check_config(c->ctx);
	if (c->principal)
		k = NFSKEYS_IDMAP_PRINCIPAL_TO_IDS;
	else if (c->sid || ((argv[0][0] == 'S' || argv[0][0] == 's') && argv[0][1] == '-'))
		k = (argv[0][0] == 'S' || argv[0][0] == 's') ?
			    (group ? NFSKEYS_IDMAP_SID_TO_GID : NFSKEYS_IDMAP_SID_TO_UID) :
			    (group ? NFSKEYS_IDMAP_GID_TO_SID : NFSKEYS_IDMAP_UID_TO_SID);
	else if (c->reverse || isdigit((unsigned char)argv[0][0]))
		k = group ? NFSKEYS_IDMAP_GID_TO_GROUP : NFSKEYS_IDMAP_UID_TO_NAME;
	else
		k = group ? NFSKEYS_IDMAP_GROUP_TO_GID : NFSKEYS_IDMAP_NAME_TO_UID;
	r = nfskeys_idmap_explain(c->ctx, k, argv[0], &text);
	if (r < 0)
		return tool_error("idmap explain: %s", strerror(-r));
	/* The status says what the text does, for scripts: 0 mapped, 1 not (nobody, no
	 * mapping, a malformed key); see nfskeys-idmap(1). */
	r = nfskeys_idmap_lookup_full(c->ctx, k, argv[0], 0, &a);
	if (c->json) {
		/* {"kind","key","mapped","answer" (as lookup --json, or null),"error",
		 *  "explanation" (the text),"recent" (the daemon's records, or null)} */
		printf("{\"kind\":\"%s\",\"key\":", nfskeys_idmap_kind_to_string(k));
		print_json_str(argv[0]);
		printf(",\"mapped\":%s,\"answer\":", r < 0 ? "false" : "true");
		if (r < 0) {
			printf("null,\"error\":");
			print_json_str(strerror(-r));
		} else {
			print_answer_json(argv[0], &a);
		}
		printf(",\"explanation\":");
		print_json_str(text);
		printf(",\"recent\":");
		explain_recent_json(c->ctx, k, argv[0]);
		printf("}\n");
	} else {
		print_explanation(text, argv[0]);
		explain_recent(c->ctx, k, argv[0]);
	}
	if (config < 0)
		return EXIT_CONFIG;
	return r < 0 ? EXIT_FAIL : EXIT_OK;
}

/* the daemon's statistics (tools/cmd-idmapd.c); its own options */
static int idmap_stats(void *state, int argc, char *argv[])
{
	struct idmap_call *c = state;

	return cmd_idmapd_stats(c->ctx, argc, argv);
}

static int idmap_import_conf(void *state, int argc, char *argv[])
{
	return cmd_idmap_import_conf(argc - 1, argv + 1);
}

static int idmap_enable_upcalls(void *state, int argc, char *argv[])
{
	return cmd_idmap_enable_upcalls(argc - 1, argv + 1);
}

struct captured_log {
	char *buf;
	size_t size;
};

static void capture_log(void *userdata, int priority, const char *file, int line,
			const char *fn, const char *format, va_list args)
{
	struct captured_log *c = userdata;

	if (priority <= LOG_ERR && !c->buf[0])
		vsnprintf(c->buf, c->size, format, args);
}

int tool_idmap_config_problem(struct nfskeys_ctx *ctx, char *buf, size_t size)
{
	struct captured_log c = { buf, size };
	int r;

	buf[0] = '\0';
	nfskeys_ctx_set_log_fn(ctx, capture_log, &c);
	r = nfskeys_idmap_check_config(ctx);
	nfskeys_ctx_set_log_fn(ctx, NULL, NULL);
	if (r < 0 && !buf[0])
		snprintf(buf, size, "the ID-mapping configuration is not usable: %s",
			 strerror(-r));
	return r;
}

int cmd_idmap(struct nfskeys_ctx *ctx, int argc, char *argv[])
{
	struct idmap_call c = { .ctx = ctx };
	const struct cli_sub *sub;

	if (argc < 2 || streq(argv[1], "--help") || streq(argv[1], "-h") || streq(argv[1], "help")) {
		idmap_usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? EXIT_USAGE : EXIT_OK;
	}
	sub = cli_sub_find(idmap_subs, argv[1]);
	if (!sub) {
		tool_error("idmap: unknown command '%s' (see 'nfskeys idmap --help')", argv[1]);
		return EXIT_USAGE;
	}
	/* every subcommand's --help, those with their own parsers (stats, import-conf,
	 * enable-upcalls) too */
	for (int i = 2; i < argc && !streq(argv[i], "--"); i++) {
		if (streq(argv[i], "--help") || streq(argv[i], "-h")) {
			idmap_usage(stdout);
			return EXIT_OK;
		}
	}
	/* A backend named in [Translation] Method that is not installed is a configuration
	 * error, as the daemon says when it refuses the file: once, before any answer.
	 * explain checks it itself (it goes on to explain, then exits 3); stats,
	 * import-conf and enable-upcalls do not use the chain. */
	if (sub->fn != idmap_explain && sub->fn != idmap_stats && sub->fn != idmap_import_conf &&
	    sub->fn != idmap_enable_upcalls && nfskeys_idmap_check_config(ctx) < 0)
		return EXIT_CONFIG;
	return sub->fn(&c, argc - 1, argv + 1);
}
