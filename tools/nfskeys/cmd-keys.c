/* nfskeys keys: list the network-filesystem keys the caller holds.  Shows type,
 * description and expiry, never payloads. */
#include <getopt.h>
#include <keyutils.h>
#include <time.h>

#include "log-escape.h"
#include "nfskeys-tool.h"

/* Is this a key nfskeys or a network filesystem puts into keyrings? */
static bool key_is_ours(const struct nfskeys_key_info *k)
{
	if (streq(k->type, "logon"))
		return startswith(k->description, "cifs:");
	if (streq(k->type, "rxrpc") || streq(k->type, "rxrpc_s"))
		return startswith(k->description, "afs@");
	if (streq(k->type, "id_resolver") || streq(k->type, "cifs.idmap") ||
	    streq(k->type, "cifs.spnego") || streq(k->type, "dns_resolver"))
		return true;
	if (streq(k->type, "keyring"))
		return startswith(k->description, "_krb") || startswith(k->description, "krb_ccache");
	return false;
}

/* Length of the valid UTF-8 sequence at s (1-4), or 0 when s does not start one. */
static size_t utf8_len(const unsigned char *s)
{
	size_t n;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4;
	else
		return 0;
	for (size_t i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	/* no overlong forms, surrogates or code points past U+10FFFF */
	if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] >= 0xa0) ||
	    (s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] >= 0x90))
		return 0;
	return n;
}

/* A JSON string; bytes that are not valid UTF-8 come out as \u00XX so the output stays
 * valid JSON whatever a key description or a name from the network holds. */
void print_json_str(const char *str)
{
	const unsigned char *s = (const unsigned char *)str;

	putchar('"');
	while (*s) {
		size_t n = utf8_len(s);
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if (*s < 0x20 || *s == 0x7f || n == 0)
			printf("\\u%04x", *s);
		else {
			fwrite(s, 1, n, stdout);
			s += n;
			continue;
		}
		s++;
	}
	putchar('"');
}

/* Descriptions come from whoever added the key: show control and non-ASCII bytes as
 * \xNN so they cannot drive the terminal. */
void print_text_safe(const char *s)
{
	/* each byte escapes to at most 4 ("\\xNN") */
	size_t size = 4 * strlen(s) + 1;
	_cleanup_free_ char *buf = malloc(size);

	if (!buf) {
		fputs("?", stdout);
		return;
	}
	display_escape(buf, size, s);
	fputs(buf, stdout);
}

struct list_state {
	bool all, json;
	unsigned shown;
	int32_t seen[256];
	unsigned nseen;
};

static void show_keyring(struct list_state *st, const char *where, int32_t ring, int depth)
{
	_cleanup_free_ int32_t *serials = NULL;
	size_t n = 0;

	if (depth > 4 || nfskeys_keyring_list(ring, &serials, &n) < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		struct nfskeys_key_info k;
		char expiry[64] = "never";
		bool dup = false;

		for (unsigned j = 0; j < st->nseen; j++)
			dup |= st->seen[j] == serials[i];
		if (dup || nfskeys_key_describe(serials[i], &k) < 0)
			continue;
		if (st->nseen < ARRAY_SIZE(st->seen))
			st->seen[st->nseen++] = serials[i];
		if (streq(k.type, "keyring"))
			show_keyring(st, where, serials[i], depth + 1);
		if (!st->all && !key_is_ours(&k))
			continue;
		if (k.expiry > 0) {
			time_t t = (time_t)k.expiry;
			struct tm tm;
			strftime(expiry, sizeof(expiry), "%Y-%m-%d %H:%M:%S", localtime_r(&t, &tm));
		}
		if (st->json) {
			printf("%s{\"keyring\":\"%s\",\"serial\":%d,\"type\":", st->shown ? "," : "",
			       where, k.serial);
			print_json_str(k.type);
			printf(",\"description\":");
			print_json_str(k.description);
			printf(",\"uid\":%u,\"perm\":\"%08x\",\"expiry\":%lld}", (unsigned)k.uid,
			       k.perm, (long long)k.expiry);
		} else {
			if (st->shown == 0)
				printf("%-8s %-10s %-12s %-20s %s\n", "KEYRING", "SERIAL", "TYPE",
				       "EXPIRES", "DESCRIPTION");
			printf("%-8s %-10d %-12s %-20s ", where, k.serial, k.type, expiry);
			print_text_safe(k.description);
			putchar('\n');
		}
		st->shown++;
	}
}

static int keys_list(void *state, int argc, char *argv[]);

/* "keys" alone is "keys list" */
const struct cli_sub keys_subs[] = {
	{ "list", NULL, "[--all] [--json]", "the keys (the default)", keys_list },
	{},
};

static void keys_usage(FILE *f)
{
	fprintf(f, "Usage: nfskeys keys [list] [--all] [--json]\n\n"
		   "List network-filesystem keys (CIFS logon, AFS rxrpc, ID-mapping and\n"
		   "Kerberos cache keyrings) in the session and user keyrings.\n"
		   "Payloads are never shown.\n\n"
		   "Commands:\n");
	cli_sub_usage(f, keys_subs, 28);
	fprintf(f, "\n"
		   "  -a, --all    list every key, not only network-filesystem ones\n"
		   "  -j, --json   print a JSON array\n");
}

static int keys_list(void *state, int argc, char *argv[])
{
	struct list_state *st = state;

	if (st->json)
		putchar('[');
	show_keyring(st, "session", KEY_SPEC_SESSION_KEYRING, 0);
	show_keyring(st, "user", KEY_SPEC_USER_KEYRING, 0);
	if (st->json)
		printf("]\n");
	else if (st->shown == 0)
		printf("No network-filesystem keys in the session or user keyring.\n");
	return EXIT_OK;
}

int cmd_keys(struct nfskeys_ctx *ctx, int argc, char *argv[])
{
	static const struct option opts[] = {
		{ "all", no_argument, NULL, 'a' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct list_state st = { 0 };
	const struct cli_sub *sub = keys_subs;
	bool help = false;
	int c;

	argv[0] = program_invocation_short_name; /* getopt's messages name the program */
	while ((c = getopt_long(argc, argv, "ajh", opts, NULL)) >= 0) {
		switch (c) {
		case 'a':
			st.all = true;
			break;
		case 'j':
			st.json = true;
			break;
		case 'h':
			help = true; /* after the subcommand is known: a wrong one is an error */
			break;
		default:
			return EXIT_USAGE;
		}
	}
	if (optind < argc && !(sub = cli_sub_find(keys_subs, argv[optind]))) {
		tool_error("keys: unknown subcommand '%s' (only 'list')", argv[optind]);
		return EXIT_USAGE;
	}
	if (help) {
		keys_usage(stdout);
		return EXIT_OK;
	}
	if (optind + 1 < argc) {
		tool_error("keys list: unexpected argument '%s'", argv[optind + 1]);
		return EXIT_USAGE;
	}
	return sub->fn(&st, 0, NULL);
}
