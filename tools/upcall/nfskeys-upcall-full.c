/* nfskeys-upcall-full: the request-key helper for NFS id_resolver and CIFS cifs.idmap keys
 * with the in-process engine; the lean nfskeys-upcall (nfskeys-upcall.c) answers from
 * the daemon itself and execs this for everything else.  It parses the key's description,
 * resolves it (upcall_resolve), sets the key's timeout and instantiates it with the exact
 * kernel payload, or rejects it with a short timeout. */
#include <inttypes.h>
#include <limits.h>
#include <syslog.h>

#include "macros.h"
#include "cli.h"
#include "conf-get.h"
#include "helper-path.h"
#include "log-escape.h"
#include "nfskeys.h"
#include "upcall.h"
#include "upcall-args.h"

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
		"request-key helper for id_resolver (uid:, gid:, user:, group:), cifs.idmap\n"
		"(os:, gs:, oi:, gi:) and cifs.spnego (Kerberos for sec=krb5 mounts) keys.\n"
		"Run by request-key as: nfskeys-upcall %%k %%d\n"
		"\n"
		"Options:\n"
		"  -t, --timeout SEC   key timeout for answers in seconds, or with a unit\n"
		"                      (10m, 1h; default: the answer's TTL)\n"
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
	log_vsyslog(priority, format, args);
}

/* cifs.spnego keys are nfskeys-upcall-spnego's (Kerberos lives there, not here): run it
 * with our arguments, from next to this program in the build tree (never in a setuid
 * run), else from the libexec directory. */
static int run_spnego_helper(char *argv[])
{
	char path[PATH_MAX + 32];

	helper_path("nfskeys-upcall-spnego", LIBEXECDIR, path, sizeof(path));
	argv[0] = path;
	execv(path, argv);
	syslog(LOG_ERR, "cannot run %s: %s", path, strerror(errno));
	fprintf(stderr, "nfskeys-upcall: cannot run %s: %s\n", path, strerror(errno));
	return UP_KEYERR;
}

static int reject(int32_t key, unsigned timeout, int error)
{
	int r = nfskeys_key_reject(key, timeout, (unsigned)error, 0);

	if (r < 0) {
		log_syslogf(LOG_ERR, "cannot reject key %" PRId32 ": %s", key, strerror(-r));
		/* run by hand (not by request-key) this is the usual end: say why on stderr,
		 * which request-key does not show, as well as in the log */
		fprintf(stderr, "%s: cannot reject key %" PRId32 ": %s%s\n",
			program_invocation_short_name, key, strerror(-r),
			r == -EPERM || r == -EACCES || r == -ENOKEY ?
				" (only request-key may: it is not a key under construction "
				"by this process)" : "");
		return UP_KEYERR;
	}
	return UP_REJECTED;
}

int main(int argc, char *argv[])
{
	struct nfskeys_ctx *ctx = NULL;
	struct nfskeys_idmap_answer answer;
	struct nfskeys_key_info info;
	enum nfskeys_idmap_kind kind;
	struct upcall_args a;
	const char *type, *key, *desc;
	char payload[NFSKEYS_IDMAP_NAME_MAX + NFSKEYS_SID_BINARY_MAX];
	unsigned reject_timeout = REJECT_TIMEOUT_DEFAULT, ttl;
	int32_t serial;
	int r, len, rc;

	/* exec'd by the lean nfskeys-upcall, whose name it answers to */
	cli_set_program_name("nfskeys-upcall");
	argv[0] = program_invocation_short_name; /* getopt's messages too */
	r = upcall_args_parse(argc, argv, &a);
	switch (r) {
	case 0:
		break;
	case UPCALL_ARGS_BAD_TIMEOUT:
		fprintf(stderr, "nfskeys-upcall: bad timeout '%s'\n", a.bad);
		return UP_USAGE;
	case UPCALL_ARGS_BAD_SERIAL:
		fprintf(stderr, "nfskeys-upcall: bad key serial '%s'\n", a.bad);
		return UP_USAGE;
	case UPCALL_ARGS_BAD_COUNT:
		usage(stderr);
		return UP_USAGE;
	default:
		return cli_std_option(r, "nfskeys-upcall", usage);
	}
	upcall_no_daemon = a.no_daemon;
	openlog("nfskeys-upcall", LOG_PID, LOG_AUTHPRIV);
	serial = a.serial;
	desc = a.desc;
	type = a.type;
	if (type && streq(type, "cifs.spnego")) /* -T: a route for tests, see upcall-spnego.c */
		return run_spnego_helper(argv);

	/* The key type decides which prefixes are valid (a test routes user keys here). */
	if (!type) {
		r = nfskeys_key_describe(serial, &info);
		if (r < 0) {
			log_syslogf(LOG_ERR, "cannot describe key %" PRId32 ": %s", serial,
			       strerror(-r));
			fprintf(stderr, "nfskeys-upcall: cannot describe key %" PRId32 ": %s\n",
				serial, strerror(-r));
			return reject(serial, reject_timeout, EKEYREJECTED);
		}
		type = info.type;
		if (streq(type, "cifs.spnego"))
			return run_spnego_helper(argv);
		if (!streq(info.description, desc)) {
			log_syslogf(LOG_ERR, "key %" PRId32 " is '%s', not '%s'", serial,
			       info.description, desc);
			return reject(serial, reject_timeout, EKEYREJECTED);
		}
	}

	/* A file with an error (a broken drop-in) must not stop the upcalls: the rest of the
	 * configuration still names the daemon, which runs on the one it loaded. */
	{
		unsigned skipped = 0;

		r = nfskeys_ctx_new_partial(a.config, a.verbose ? NULL : log_syslog, NULL, &ctx,
					    &skipped);
		if (r == 0 && skipped)
			syslog(LOG_WARNING, "going on without the configuration lines the "
					    "errors above spoil");
	}
	if (r < 0) {
		log_syslogf(LOG_ERR, "cannot load configuration: %s", strerror(-r));
		reject(serial, reject_timeout, EKEYREJECTED);
		return UP_CONFIG;
	}
	nfskeys_ctx_set_log_fn(ctx, log_syslog, NULL);
	if (a.verbose)
		nfskeys_ctx_set_log_priority(ctx, LOG_DEBUG);
	{
		int64_t v;

		char err[256];

		/* the schema's duration, as the library reads it ("30s" too); 0 or a bad
		 * value keeps the built-in 60 s */
		if (conf_get_typed(ctx, "Mapping", "Nobody-TTL", &v, err, sizeof(err)) == 0 && v > 0)
			reject_timeout = (unsigned)v;
	}

	r = nfskeys_idmap_parse_description(type, desc, &kind, &key);
	if (r < 0) {
		log_syslogf(LOG_WARNING, "%s key %" PRId32 ": bad description '%.200s': %s", type,
		       serial, desc, r == -EOPNOTSUPP ? "prefix not valid for this key type" :
							 "malformed");
		rc = reject(serial, reject_timeout, EINVAL);
		goto out;
	}

	r = upcall_resolve(ctx, kind, key, &answer);
	if (r < 0) {
		log_syslogf(LOG_INFO, "%s: no mapping: %s", desc, strerror(-r));
		rc = reject(serial, reject_timeout, r == -ENOENT ? ENOKEY : (unsigned)-r);
		goto out;
	}
	len = nfskeys_idmap_payload(&answer, payload, sizeof(payload));
	if (len < 0) {
		log_syslogf(LOG_ERR, "%s: cannot build the payload: %s", desc, strerror(-len));
		rc = reject(serial, reject_timeout, EINVAL);
		goto out;
	}

	ttl = upcall_key_ttl(&a, answer.ttl, answer.flags & NFSKEYS_IDMAP_ANSWER_NOBODY);

	/* Possess the type's private keyring so the key stays ours to change after it is
	 * instantiated (the authorisation to construct it ends then); set the timeout
	 * while we still hold that authorisation. */
	if (upcall_private_keyring(type))
		(void)nfskeys_key_possess_keyring(upcall_private_keyring(type), NULL);
	if (ttl > 0) {
		r = nfskeys_key_set_timeout(serial, ttl);
		if (r < 0)
			log_syslogf(LOG_WARNING, "%s: cannot set the key timeout: %s", desc,
			       strerror(-r));
	}
	r = nfskeys_key_instantiate(serial, payload, (size_t)len, 0);
	if (r < 0) {
		/* e.g. EDQUOT: the requester's key quota is full.  Reject with the reason
		 * (rejecting needs no quota) so the caller fails at once and briefly, instead
		 * of a key negated for the kernel's default 60 s; touch no other key. */
		log_syslogf(LOG_ERR, "%s: cannot instantiate key %" PRId32 ": %s", desc, serial,
		       strerror(-r));
		fprintf(stderr, "nfskeys-upcall: %s: cannot instantiate key %" PRId32 ": %s\n",
			desc, serial, strerror(-r));
		reject(serial, reject_timeout, -r);
		rc = UP_KEYERR;
		goto out;
	}
	log_syslogf(LOG_DEBUG, "%s: %s backend, ttl %u", desc, answer.backend, ttl);
	rc = UP_OK;
out:
	nfskeys_ctx_unref(ctx);
	return rc;
}
