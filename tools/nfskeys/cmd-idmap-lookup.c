/* nfskeys idmap: the lookups (lookup, reverse, sid), batched to nfskeys-idmapd or resolved
 * in this process, and how an answer or an explanation is printed. */
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
void print_answer_json(const char *key, const struct nfskeys_idmap_answer *a)
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
		printf("],\"groups_cut\":%s",
		       (a->flags & NFSKEYS_IDMAP_ANSWER_TRUNCATED) ? "true" : "false");
	}
	printf(",\"backend\":");
	print_json_str(a->backend);
	printf(",\"ttl\":%" PRIu32 ",\"nobody\":%s", a->ttl,
	       (a->flags & NFSKEYS_IDMAP_ANSWER_NOBODY) ? "true" : "false");
	if (a->flags & NFSKEYS_IDMAP_ANSWER_NOBODY)
		printf(",\"reason\":\"%s\"", strerror(-a->error));
	printf("}");
}

void print_answer(const char *key, const struct nfskeys_idmap_answer *a, bool json)
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
		printf(" (%s%s", a->backend,
		       (a->flags & NFSKEYS_IDMAP_ANSWER_CACHED) ? ", cached" : "");
		/* the principal is in more groups than an answer holds */
		if (k == NFSKEYS_IDMAP_PRINCIPAL_TO_IDS &&
		    (a->flags & NFSKEYS_IDMAP_ANSWER_TRUNCATED))
			printf(", groups cut at %d", NFSKEYS_IDMAP_GROUPS_MAX);
		printf(", ttl %" PRIu32 "s)\n", a->ttl);
	}
}

/* explain's text for a person: the key it quotes (which may hold a newline) shown as
 * one escaped word, then every line escaped (a backend's answer may hold control bytes). */
void print_explanation(const char *text, const char *key)
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
int lookup_keys(struct nfskeys_ctx *ctx, const char *cmd, enum nfskeys_idmap_kind kind,
		bool sid_auto, int argc, char *argv[], unsigned flags, bool json, bool local)
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
