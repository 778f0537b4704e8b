/* nfskeys-upcall-full: the request-key helper for NFS id_resolver and CIFS cifs.idmap keys
 * with the in-process engine; the lean nfskeys-upcall (nfskeys-upcall-lean.c) answers from
 * the daemon itself and execs this for everything else.  It parses the key's description, resolves it (upcall_resolve), sets the key's timeout
 * and instantiates it with the exact kernel payload, or rejects it with a short timeout. */
#include <getopt.h>
#include <inttypes.h>
#include <syslog.h>

#include "macros.h"
#include "cli.h"
#include "nfskeys.h"
#include "upcall.h"

enum {
	UP_OK = 0,       /* key instantiated */
	UP_REJECTED = 1, /* no mapping: key rejected with a short timeout */
	UP_USAGE = 2,    /* bad command line */
	UP_CONFIG = 3,   /* configuration could not be loaded (key rejected) */
	UP_KEYERR = 4,   /* the key could not be instantiated or rejected */
};

#define REJECT_TIMEOUT_DEFAULT 60u

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: nfskeys-upcall [OPTIONS] KEY DESCRIPTION\n"
		"\n"
		"request-key helper for id_resolver (uid:, gid:, user:, group:) and cifs.idmap\n"
		"(os:, gs:, oi:, gi:) keys.  Run by request-key as: nfskeys-upcall %%k %%d\n"
		"\n"
		"Options:\n"
		"  -t, --timeout SEC   key timeout for answers (default: the answer's TTL)\n"
		"  -c, --config FILE   configuration file\n"
		"  -T, --type TYPE     key type when the key cannot be described\n"
		"  -v, --verbose       log to syslog at debug level\n"
		"      --no-daemon     resolve in-process without asking nfskeys-idmapd\n"
		"  -h, --help          show this help\n"
		"  -V, --version       show the version\n"
		"\n"
		"Exit status: 0 instantiated, 1 rejected (no mapping), 2 usage, 3 configuration,\n"
		"4 the key could not be instantiated.  See nfskeys-upcall(8).\n");
}

static void log_syslog(void *userdata, int priority, const char *file, int line,
		       const char *fn, const char *format, va_list args)
{
	vsyslog(priority, format, args);
}

static int parse_uint(const char *s, unsigned max, unsigned *ret)
{
	char *end;
	unsigned long v;

	if (!s || !*s || *s == '-')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v > max)
		return -EINVAL;
	*ret = (unsigned)v;
	return 0;
}

/* The kernel's private keyring for a key type (possessing it lets us change its keys). */
static const char *private_keyring(const char *type)
{
	if (streq(type, "id_resolver"))
		return ".id_resolver";
	if (streq(type, "cifs.idmap"))
		return ".cifs_idmap";
	return NULL;
}

static int reject(int32_t key, unsigned timeout, int error)
{
	int r = nfskeys_key_reject(key, timeout, (unsigned)error, 0);

	if (r < 0) {
		syslog(LOG_ERR, "cannot reject key %" PRId32 ": %s", key, strerror(-r));
		return UP_KEYERR;
	}
	return UP_REJECTED;
}

int main(int argc, char *argv[])
{
	static const struct option opts[] = {
		{ "timeout", required_argument, NULL, 't' },
		{ "config", required_argument, NULL, 'c' },
		{ "type", required_argument, NULL, 'T' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ "no-daemon", no_argument, NULL, 'N' },
		{}
	};
	struct nfskeys_ctx *ctx = NULL;
	struct nfskeys_idmap_answer answer;
	struct nfskeys_key_info info;
	enum nfskeys_idmap_kind kind;
	const char *config = NULL, *type = NULL, *key, *desc;
	char payload[NFSKEYS_IDMAP_NAME_MAX + NFSKEYS_SID_BINARY_MAX];
	unsigned timeout = 0, reject_timeout = REJECT_TIMEOUT_DEFAULT, ttl;
	bool have_timeout = false, verbose = false;
	int32_t serial;
	int c, r, len, rc;

	while ((c = getopt_long(argc, argv, "t:c:T:vhV", opts, NULL)) >= 0) {
		switch (c) {
		case 't':
			if (parse_uint(optarg, INT32_MAX, &timeout) < 0) {
				fprintf(stderr, "nfskeys-upcall: bad timeout '%s'\n", optarg);
				return UP_USAGE;
			}
			have_timeout = true;
			break;
		case 'c':
			config = optarg;
			break;
		case 'T':
			type = optarg;
			break;
		case 'v':
			verbose = true;
			break;
		case 'N':
			upcall_no_daemon = true;
			break;
		default:
			return cli_std_option(c, "nfskeys-upcall", usage);
		}
	}
	if (argc - optind != 2) {
		usage(stderr);
		return UP_USAGE;
	}
	openlog("nfskeys-upcall", LOG_PID, LOG_AUTHPRIV);
	if (parse_uint(argv[optind], INT32_MAX, &ttl) < 0 || ttl == 0) {
		fprintf(stderr, "nfskeys-upcall: bad key serial '%s'\n", argv[optind]);
		return UP_USAGE;
	}
	serial = (int32_t)ttl;
	desc = argv[optind + 1];

	/* The key type decides which prefixes are valid (a test routes user keys here). */
	if (!type) {
		r = nfskeys_key_describe(serial, &info);
		if (r < 0) {
			syslog(LOG_ERR, "cannot describe key %" PRId32 ": %s", serial,
			       strerror(-r));
			return reject(serial, reject_timeout, EKEYREJECTED);
		}
		type = info.type;
		if (!streq(info.description, desc)) {
			syslog(LOG_ERR, "key %" PRId32 " is '%s', not '%s'", serial,
			       info.description, desc);
			return reject(serial, reject_timeout, EKEYREJECTED);
		}
	}

	r = nfskeys_ctx_new_full(config, verbose ? NULL : log_syslog, NULL, &ctx);
	if (r < 0) {
		syslog(LOG_ERR, "cannot load configuration: %s", strerror(-r));
		reject(serial, reject_timeout, EKEYREJECTED);
		return UP_CONFIG;
	}
	nfskeys_ctx_set_log_fn(ctx, log_syslog, NULL);
	if (verbose)
		nfskeys_ctx_set_log_priority(ctx, LOG_DEBUG);
	{
		int64_t v;

		if (nfskeys_conf_get_int(ctx, "Mapping", "Nobody-TTL", 0, 86400, &v) == 0 && v > 0)
			reject_timeout = (unsigned)v;
	}

	r = nfskeys_idmap_parse_description(type, desc, &kind, &key);
	if (r < 0) {
		syslog(LOG_WARNING, "%s key %" PRId32 ": bad description '%.200s': %s", type,
		       serial, desc, r == -EOPNOTSUPP ? "prefix not valid for this key type" :
							 "malformed");
		rc = reject(serial, reject_timeout, EINVAL);
		goto out;
	}

	r = upcall_resolve(ctx, kind, key, &answer);
	if (r < 0) {
		syslog(LOG_INFO, "%s: no mapping: %s", desc, strerror(-r));
		rc = reject(serial, reject_timeout, r == -ENOENT ? ENOKEY : (unsigned)-r);
		goto out;
	}
	len = nfskeys_idmap_payload(&answer, payload, sizeof(payload));
	if (len < 0) {
		syslog(LOG_ERR, "%s: cannot build the payload: %s", desc, strerror(-len));
		rc = reject(serial, reject_timeout, EINVAL);
		goto out;
	}

	/* -t caps good answers; a nobody answer keeps its short TTL whatever -t says. */
	ttl = answer.ttl;
	if (have_timeout && !(answer.flags & NFSKEYS_IDMAP_ANSWER_NOBODY))
		ttl = timeout;
	else if (have_timeout && timeout < ttl)
		ttl = timeout;

	/* Possess the type's private keyring so the key stays ours to change after it is
	 * instantiated (the authorisation to construct it ends then); set the timeout
	 * while we still hold that authorisation. */
	if (private_keyring(type))
		(void)nfskeys_key_possess_keyring(private_keyring(type), NULL);
	if (ttl > 0) {
		r = nfskeys_key_set_timeout(serial, ttl);
		if (r < 0)
			syslog(LOG_WARNING, "%s: cannot set the key timeout: %s", desc,
			       strerror(-r));
	}
	r = nfskeys_key_instantiate(serial, payload, (size_t)len, 0);
	if (r < 0) {
		/* e.g. EDQUOT: the requester's key quota is full.  Reject with the reason
		 * (rejecting needs no quota) so the caller fails at once and briefly, instead
		 * of a key negated for the kernel's default 60 s; touch no other key. */
		syslog(LOG_ERR, "%s: cannot instantiate key %" PRId32 ": %s", desc, serial,
		       strerror(-r));
		fprintf(stderr, "nfskeys-upcall: %s: cannot instantiate key %" PRId32 ": %s\n",
			desc, serial, strerror(-r));
		reject(serial, reject_timeout, -r);
		rc = UP_KEYERR;
		goto out;
	}
	syslog(LOG_DEBUG, "%s: %s backend, ttl %u", desc, answer.backend, ttl);
	rc = UP_OK;
out:
	nfskeys_ctx_unref(ctx);
	return rc;
}
