/* libFuzzer target: what nfskeys-upcall does with a key description when it resolves
 * in-process.  The first input byte picks the key type (id_resolver, cifs.idmap, or
 * "user", which accepts every prefix); the rest is the description.  It is parsed with
 * nfskeys_idmap_parse_description(), resolved through the real static and sid backends
 * (plugins, a fixed configuration, no cache) with the nobody fallback, and encoded by
 * nfskeys_idmap_payload(); the payload must have the kernel's exact shape. */
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz-env.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static const char config[] =
	FUZZ_ENV_IDMAP_CONFIG
	"Nobody-TTL = 30\n"
	"[Static]\n"
	"alice@example.org = 5001\n"
	"bob@EXAMPLE.ORG = 5002\n"
	"root@example.org = root\n"
	"alice@EXAMPLE.ORG = 5001\n"
	"group:staff@example.org = 6001\n"
	"group:wheel@example.org = 0\n"
	"[SID]\n"
	"Auto-Domains = no\n"
	"S-1-5-21-1-2-3 = 100000-199999\n"
	"S-1-5-21-4294967295-4294967295-4294967295 = 4000000000-4000000099\n";

static const char *const types[] = { "id_resolver", "cifs.idmap", "user" };

static void check(bool ok)
{
	if (!ok)
		abort();
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_env_init("upcall", config);
	return 0;
}

static bool is_prefix_of(const char *prefix, const char *s)
{
	return strncmp(prefix, s, strlen(prefix)) == 0;
}

static void check_payload(enum nfskeys_idmap_kind kind, const struct nfskeys_idmap_answer *a)
{
	/* the helper's buffer */
	char payload[NFSKEYS_IDMAP_NAME_MAX + NFSKEYS_SID_BINARY_MAX];
	char text[NFSKEYS_SID_STRING_MAX];
	struct nfskeys_sid sid;
	int len = nfskeys_idmap_payload(a, payload, sizeof(payload));

	check(a->kind == (uint32_t)kind);
	check(len > 0 && (size_t)len <= sizeof(payload));
	switch (kind) {
	case NFSKEYS_IDMAP_NAME_TO_UID:
	case NFSKEYS_IDMAP_GROUP_TO_GID: {
		/* decimal id and its NUL */
		char want[16];

		snprintf(want, sizeof(want), "%" PRIu32, a->id);
		check((size_t)len == strlen(want) + 1 && memcmp(payload, want, (size_t)len) == 0);
		break;
	}
	case NFSKEYS_IDMAP_UID_TO_NAME:
	case NFSKEYS_IDMAP_GID_TO_GROUP:
		/* the name without NUL, and it is a qualified name */
		check((size_t)len == strlen(a->name) && memcmp(payload, a->name, (size_t)len) == 0);
		check(memchr(payload, '@', (size_t)len) != NULL);
		break;
	case NFSKEYS_IDMAP_SID_TO_UID:
	case NFSKEYS_IDMAP_SID_TO_GID:
		check(len == 4 && memcmp(payload, &a->id, 4) == 0);
		break;
	case NFSKEYS_IDMAP_UID_TO_SID:
	case NFSKEYS_IDMAP_GID_TO_SID:
		check(len == NFSKEYS_SID_BINARY_MAX);
		check(nfskeys_sid_from_binary(payload, (size_t)len, &sid) == 0);
		check(nfskeys_sid_to_string(&sid, text, sizeof(text)) > 0 && streq(text, a->name));
		break;
	default:
		abort();
	}
	/* a buffer one byte short is refused, never overrun */
	check(nfskeys_idmap_payload(a, payload, (size_t)len - 1) == -ENOBUFS);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nfskeys_idmap_answer answer;
	enum nfskeys_idmap_kind kind;
	const char *type, *key = NULL;
	char *desc;
	int r;

	if (size < 1 || size > 4096)
		return 0;
	type = types[data[0] % ARRAY_SIZE(types)];
	desc = strndup((const char *)data + 1, size - 1);
	check(desc != NULL);
	r = nfskeys_idmap_parse_description(type, desc, &kind, &key);
	if (r < 0) {
		check(r == -EINVAL || r == -EOPNOTSUPP);
		if (r == -EOPNOTSUPP)
			check(!streq(type, "user"));
		goto out;
	}
	/* the key is the rest of the description after a prefix valid for the type */
	check(key > desc && key <= desc + strlen(desc) && *key && key[-1] == ':');
	check(!strchr(desc, ':') || strchr(desc, ':') == key - 1);
	if (streq(type, "id_resolver"))
		check(kind <= NFSKEYS_IDMAP_GID_TO_GROUP);
	else if (streq(type, "cifs.idmap"))
		check(kind >= NFSKEYS_IDMAP_SID_TO_UID);
	switch (kind) {
	case NFSKEYS_IDMAP_NAME_TO_UID:
		/* a bare name is accepted (as nfsidmap does), and "@domain" (no user part:
		 * nobody, as nfsidmap); a domain part is never empty */
		check(is_prefix_of("uid:", desc) && key[strlen(key) - 1] != '@');
		break;
	case NFSKEYS_IDMAP_GROUP_TO_GID:
		check(is_prefix_of("gid:", desc) && key[strlen(key) - 1] != '@');
		break;
	case NFSKEYS_IDMAP_UID_TO_NAME:
		check(is_prefix_of("user:", desc));
		break;
	case NFSKEYS_IDMAP_GID_TO_GROUP:
		check(is_prefix_of("group:", desc));
		break;
	case NFSKEYS_IDMAP_SID_TO_UID:
		check(is_prefix_of("os:", desc));
		break;
	case NFSKEYS_IDMAP_SID_TO_GID:
		check(is_prefix_of("gs:", desc));
		break;
	case NFSKEYS_IDMAP_UID_TO_SID:
		check(is_prefix_of("oi:", desc));
		break;
	case NFSKEYS_IDMAP_GID_TO_SID:
		check(is_prefix_of("gi:", desc));
		break;
	default:
		abort();
	}

	/* resolve as the helper does without a daemon */
	memset(&answer, 0xa5, sizeof(answer));
	r = nfskeys_idmap_lookup_full(ctx, kind, key,
				      NFSKEYS_IDMAP_LOOKUP_NOBODY | NFSKEYS_IDMAP_LOOKUP_NO_CACHE,
				      &answer);
	/* a key the description parser accepted is never malformed for the engine */
	check(r != -EINVAL);
	if (r < 0) {
		/* only id -> name/SID kinds have no nobody answer */
		check(r == -ENOENT && kind != NFSKEYS_IDMAP_NAME_TO_UID &&
		      kind != NFSKEYS_IDMAP_GROUP_TO_GID && kind != NFSKEYS_IDMAP_SID_TO_UID &&
		      kind != NFSKEYS_IDMAP_SID_TO_GID);
		goto out;
	}
	check(strnlen(answer.name, sizeof(answer.name)) < sizeof(answer.name));
	check(strnlen(answer.backend, sizeof(answer.backend)) < sizeof(answer.backend));
	check(!(answer.flags & NFSKEYS_IDMAP_ANSWER_CACHED));
	if (answer.flags & NFSKEYS_IDMAP_ANSWER_NOBODY)
		check(answer.id == 65534 && answer.ttl == 30 && answer.error < 0);
	else
		check(answer.error == 0);
	check_payload(kind, &answer);
out:
	free(desc);
	return 0;
}
