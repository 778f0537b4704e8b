/* nfskeys idmap: look up, reverse and explain ID mappings through the library engine,
 * flush the kernel's ID-mapping keyrings, convert /etc/idmapd.conf, and install the
 * request-key routing for nfskeys-upcall. */
/* Here: query, flush, domain, explain, stats and the dispatch; the lookups and how
 * answers print are in cmd-idmap-lookup.c, import-conf and enable-upcalls in
 * cmd-idmap-setup.c. */
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

/* the daemon's statistics (tools/nfskeys/cmd-idmapd.c); its own options */
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
