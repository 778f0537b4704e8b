/* nfskeys-upcall-full's cifs.spnego answer: the Kerberos half of a sec=krb5 CIFS mount.
 * The kernel asks (as root, through its private spnego credential) for a key whose
 * description names the server and whose credentials to use (creduid=); we find that
 * user's Kerberos credentials, as that user, get a cifs/<host> ticket through GSSAPI and
 * hand the kernel the session key and the SPNEGO NegTokenInit it sends to the server.
 * The description is untrusted: any local user can ask for a key with a forged one on
 * kernels that do not guard the type, so the key must belong to root, every field is
 * checked (tools/upcall/spnego-desc.c), and nothing of the user's is touched before we are the
 * user.  Everything runs in the helper's own (init) namespaces, except for
 * upcall_target=app from a container: there a child of ours enters the application's
 * namespaces only to read the user's cache file as the user (upcall-spnego-app.c); the
 * user is looked up before, in our own root. */
/* Here: the upcall itself (the description checked, the user looked up, the caches tried
 * as that user, the key instantiated or rejected); the token is made in
 * upcall-spnego-token.c, the caches searched in upcall-spnego-ccache.c. */
#include <grp.h>
#include <gssapi/gssapi.h>
#include <gssapi/gssapi_ext.h>
#include <gssapi/gssapi_krb5.h>
#include <inttypes.h>
#include <krb5.h>
#include <netdb.h>
#include <pwd.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <syslog.h>

#include "become-user.h"
#include "conf-get.h"
#include "macros.h"
#include "nfskeys.h"
#include "spnego-desc.h"
#include "upcall-spnego.h"
#include "upcall-spnego-private.h"

enum {
	SP_OK = 0,
	SP_REJECTED = 1,
	SP_CONFIG = 3,
	SP_KEYERR = 4,
};

#define SPNEGO_REJECT_TIMEOUT 5u /* short: the user may kinit and mount again at once */
#define SPNEGO_MSG_VERSION 2u     /* struct cifs_spnego_msg.version the kernel checks */
#define MAX_GROUPS 1024
#define CACHE_NAME_MAX 1024

/* The kernel's struct cifs_spnego_msg header (fs/smb/client/cifs_spnego.h), host order;
 * data[] holds the session key, then the security blob. */
struct spnego_msg_header {
	uint32_t version;
	uint32_t flags;
	uint32_t sesskey_len;
	uint32_t secblob_len;
};

/* The mechanism OIDs a NegTokenInit lists: RFC 4121 krb5, and the one Windows 2000 used
 * (sec=mskrb5), DER-encoded with their tag. */
static const uint8_t oid_krb5[] = { 0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7,
				    0x12, 0x01, 0x02, 0x02 };
static const uint8_t oid_mskrb5[] = { 0x06, 0x09, 0x2a, 0x86, 0x48, 0x82, 0xf7,
				      0x12, 0x01, 0x02, 0x02 };

static int reject(int32_t key, unsigned timeout, unsigned error)
{
	int r = nfskeys_key_reject(key, timeout, error, 0);

	if (r < 0) {
		spnego_say(LOG_ERR, "cannot reject key %" PRId32 ": %s", key, strerror(-r));
		return SP_KEYERR;
	}
	return SP_REJECTED;
}

/* ------------------------------------------------------------ the upcall */

static int lookup_user(uid_t uid, gid_t *ret_gid, gid_t *groups, int *ngroups, char *name,
		       size_t name_size)
{
	struct passwd pw, *res = NULL;
	char buf[16384];
	int r = getpwuid_r(uid, &pw, buf, sizeof(buf), &res);

	if (r != 0 || !res)
		return r ? -r : -ENOENT;
	snprintf(name, name_size, "%s", pw.pw_name);
	*ret_gid = pw.pw_gid;
	if (getgrouplist(pw.pw_name, pw.pw_gid, groups, ngroups) < 0)
		return -E2BIG;
	return 0;
}

int upcall_spnego(const struct upcall_args *a)
{
	struct nfskeys_ctx *ctx = NULL;
	struct nfskeys_key_info info;
	struct spnego_desc d;
	struct attempt at = { .d = &d };
	struct nfskeys_secret *payload = NULL;
	const char *why = NULL, *keytab = NULL, *ktprinc = NULL;
	char uname[256], cache[CACHE_NAME_MAX], defcache[CACHE_NAME_MAX] = "";
	char envcache[CACHE_NAME_MAX] = "";
	gid_t gid = 0, groups[MAX_GROUPS];
	struct spnego_app app = { 0 };
	int ngroups = MAX_GROUPS, r, rc = SP_REJECTED;
	unsigned reject_timeout = SPNEGO_REJECT_TIMEOUT, error = ENOKEY;
	int32_t serial = a->serial;
	uint8_t *blob = NULL;
	size_t blob_len = 0;

	/* Only the CIFS client's requests: it asks under its spnego credential, so the key
	 * it wants belongs to root.  A key a user requested belongs to that user. */
	r = nfskeys_key_describe(serial, &info);
	if (r < 0) {
		spnego_say(LOG_ERR, "cifs.spnego: cannot describe key %" PRId32 ": %s", serial,
		    strerror(-r));
		return reject(serial, reject_timeout, EKEYREJECTED);
	}
	if (!streq(info.type, "cifs.spnego") &&
	    !(a->type && streq(a->type, "cifs.spnego") && streq(info.type, "user"))) {
		spnego_say(LOG_ERR, "key %" PRId32 " is of type %s, not cifs.spnego: refused", serial,
		    info.type);
		return reject(serial, reject_timeout, EKEYREJECTED);
	}
	if (info.uid != 0) {
		spnego_say(LOG_ERR,
		    "cifs.spnego key %" PRId32 " belongs to uid %u, not root: not a request of "
		    "the kernel's CIFS client, refused",
		    serial, (unsigned)info.uid);
		return reject(serial, reject_timeout, EKEYREJECTED);
	}
	if (!streq(info.description, a->desc)) {
		spnego_say(LOG_ERR, "key %" PRId32 " is '%.200s', not the description given: refused",
		    serial, info.description);
		return reject(serial, reject_timeout, EKEYREJECTED);
	}
	if (spnego_desc_parse(info.description, &d, &why) < 0) {
		spnego_say(LOG_ERR, "cifs.spnego key %" PRId32 ": bad description '%.300s': %s", serial,
		    info.description, why);
		return reject(serial, reject_timeout, EINVAL);
	}
	if (d.sec == SPNEGO_SEC_IAKERB) {
		spnego_say(LOG_ERR, "cifs.spnego key %" PRId32 ": sec=iakerb is not supported (host %s)",
		    serial, d.host);
		return reject(serial, reject_timeout, EOPNOTSUPP);
	}

	/* Root-only work first: configuration, the user's groups. */
	r = nfskeys_ctx_new_full(a->config, NULL, NULL, &ctx);
	if (r < 0) {
		spnego_say(LOG_ERR, "cifs.spnego: cannot load the configuration: %s", strerror(-r));
		reject(serial, reject_timeout, EKEYREJECTED);
		return SP_CONFIG;
	}
	{
		int64_t v;

		char err[256];

		/* a bad value keeps the built-in 5 s; the load already said what is wrong */
		if (conf_get_typed(ctx, "Cred", "CIFS-Negative-TTL", &v, err, sizeof(err)) == 0)
			reject_timeout = (unsigned)v;
	}
	keytab = nfskeys_conf_get(ctx, "Cred", "CIFS-Keytab");
	ktprinc = nfskeys_conf_get(ctx, "Cred", "CIFS-Keytab-Principal");
	r = lookup_user(d.creduid, &gid, groups, &ngroups, uname, sizeof(uname));
	if (r < 0) {
		spnego_say(LOG_ERR, "cifs.spnego for %s: creduid %u: %s", d.host, (unsigned)d.creduid,
		    r == -ENOENT ? "no such user" : strerror(-r));
		rc = reject(serial, reject_timeout, ENOKEY);
		goto out;
	}
	/* upcall_target=app (the default of kernels that send the field): the application's
	 * view of the user's cache, read in its namespaces when they are not ours; never our
	 * own caches (nor root's keytab) for an application in a container. */
	if (d.target == SPNEGO_TARGET_APP) {
		r = spnego_app_read(&d, gid, groups, (size_t)ngroups, &app);
		if (r < 0 && r != -ENOENT) {
			rc = reject(serial, reject_timeout, r == -EACCES ? EACCES : EKEYREJECTED);
			goto out;
		}
		if (r == -ENOENT) {
			spnego_say(LOG_ERR,
			    "cifs.spnego for //%s (%s, uid %u %s, upcall_target=app): no credential "
			    "cache %s in the namespaces of pid %u; the helper's own caches are not "
			    "used for an application in a container; key rejected for %u s",
			    d.host, spnego_sec_name(d.sec), (unsigned)d.creduid, uname, app.path,
			    (unsigned)d.pid, reject_timeout);
			rc = reject(serial, reject_timeout, ENOKEY);
			goto out;
		}
	}
	/* The environment is root's; the user's cache is chosen by krb5.conf, never by it,
	 * or by the KRB5CCNAME of the user's own process that asked (as cifs.upcall reads
	 * it), tried as the user; not root's (creduid=0: its keytab and caches as before) */
	unsetenv("KRB5CCNAME");
	if (!app.container && d.creduid != 0)
		spnego_pid_ccname(&d, envcache, sizeof(envcache));
	if (!app.container && d.creduid == 0 && keytab &&
	    spnego_keytab_cache(keytab, ktprinc ? ktprinc : d.have_user ? d.user : NULL, cache,
				sizeof(cache)) == 0)
		snprintf(defcache, sizeof(defcache), "%s", cache);
	r = become_user(d.creduid, gid, groups, (size_t)ngroups);
	if (r < 0) {
		spnego_say(LOG_ERR, "cifs.spnego: cannot switch to uid %u: %s", (unsigned)d.creduid,
		    strerror(-r));
		rc = reject(serial, reject_timeout, EKEYREJECTED);
		goto out;
	}

	/* As the user: the KRB5CCNAME of the user's process that asked, the persistent
	 * keyring cache (nfskeys nfs login), the default cache, then (root) the keytab. */
	at.uid = d.creduid;
	snprintf(cache, sizeof(cache), "KEYRING:persistent:%u", (unsigned)d.creduid);
	r = -ENOKEY;
	if (app.container) {
		/* only the application's cache, copied into this process */
		r = spnego_app_cache(&app, cache, sizeof(cache));
		if (r == 0)
			r = spnego_try_cache(&at, cache);
		else
			at.tried++;
		if (r == -EKEYEXPIRED || r == -EACCES)
			error = (unsigned)-r;
	} else {
		char def[CACHE_NAME_MAX] = "";
		const char *list[4];
		size_t n = 0;

		/* the asking process's own choice first */
		if (envcache[0] && !streq(envcache, cache))
			list[n++] = envcache;
		list[n++] = cache;
		if (spnego_default_cache(def, sizeof(def)) == 0 && !streq(def, cache) &&
		    !streq(def, envcache))
			list[n++] = def;
		if (defcache[0])
			list[n++] = defcache;
		for (size_t i = 0; i < n && r < 0; i++) {
			/* An empty persistent keyring is no cache at all: skip it quietly. */
			if (list[i] == cache) {
				krb5_context k5;
				krb5_ccache cc;
				krb5_principal p;
				bool has = false;

				if (krb5_init_context(&k5) == 0) {
					if (krb5_cc_resolve(k5, list[i], &cc) == 0) {
						if (krb5_cc_get_principal(k5, cc, &p) == 0) {
							has = true;
							krb5_free_principal(k5, p);
						}
						krb5_cc_close(k5, cc);
					}
					krb5_free_context(k5);
				}
				if (!has) {
					spnego_say(LOG_INFO, "uid %u: %s holds no credentials",
					    (unsigned)d.creduid, list[i]);
					continue;
				}
			}
			r = spnego_try_cache(&at, list[i]);
			if (r == -EKEYEXPIRED || r == -EACCES)
				error = (unsigned)-r;
		}
	}
	if (r < 0) {
		spnego_say(LOG_ERR,
		    "cifs.spnego for //%s (%s, uid %u %s): no ticket for cifs/%s from %u cache(s) "
		    "tried; key rejected for %u s",
		    d.host, spnego_sec_name(d.sec), (unsigned)d.creduid, uname, d.host, at.tried,
		    reject_timeout);
		rc = reject(serial, reject_timeout, error);
		goto out;
	}

	/* The kernel's struct cifs_spnego_msg: header, session key, SPNEGO blob. */
	{
		const uint8_t *oid = d.sec == SPNEGO_SEC_MSKRB5 ? oid_mskrb5 : oid_krb5;
		struct spnego_msg_header h;
		size_t klen = nfskeys_secret_len(at.key), total;

		r = spnego_wrap(oid, sizeof(oid_krb5), at.token.value, at.token.length, &blob,
				&blob_len);
		if (r < 0) {
			spnego_say(LOG_ERR, "cifs.spnego: cannot build the SPNEGO blob: %s",
			    strerror(-r));
			rc = reject(serial, reject_timeout, EKEYREJECTED);
			goto out;
		}
		total = sizeof(h) + klen + blob_len;
		r = nfskeys_secret_new(total, &payload);
		if (r < 0) {
			rc = reject(serial, reject_timeout, ENOMEM);
			goto out;
		}
		h.version = SPNEGO_MSG_VERSION;
		h.flags = 0;
		h.sesskey_len = (uint32_t)klen;
		h.secblob_len = (uint32_t)blob_len;
		memcpy(nfskeys_secret_data(payload), &h, sizeof(h));
		memcpy((uint8_t *)nfskeys_secret_data(payload) + sizeof(h),
		       nfskeys_secret_data(at.key), klen);
		memcpy((uint8_t *)nfskeys_secret_data(payload) + sizeof(h) + klen, blob,
		       blob_len);
		nfskeys_secret_set_len(payload, total);
	}
	r = nfskeys_key_instantiate(serial, nfskeys_secret_data(payload),
				    nfskeys_secret_len(payload), 0);
	if (r < 0) {
		spnego_say(LOG_ERR, "cifs.spnego: cannot instantiate key %" PRId32 ": %s", serial,
		    strerror(-r));
		reject(serial, reject_timeout, (unsigned)-r);
		rc = SP_KEYERR;
		goto out;
	}
	spnego_say(LOG_DEBUG, "cifs.spnego for //%s: key %" PRId32 " instantiated for uid %u", d.host,
	    serial, (unsigned)d.creduid);
	rc = SP_OK;
out:
	if (blob) {
		explicit_bzero(blob, blob_len);
		free(blob);
	}
	nfskeys_secret_free(payload);
	nfskeys_secret_free(at.key);
	spnego_app_free(&app);
	if (at.token.value)
		spnego_wipe_release(&at.token);
	nfskeys_ctx_unref(ctx);
	return rc;
}
