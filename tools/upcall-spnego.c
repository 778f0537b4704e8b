/* nfskeys-upcall-full's cifs.spnego answer: the Kerberos half of a sec=krb5 CIFS mount.
 * The kernel asks (as root, through its private spnego credential) for a key whose
 * description names the server and whose credentials to use (creduid=); we find that
 * user's Kerberos credentials, as that user, get a cifs/<host> ticket through GSSAPI and
 * hand the kernel the session key and the SPNEGO NegTokenInit it sends to the server.
 * The description is untrusted: any local user can ask for a key with a forged one on
 * kernels that do not guard the type, so the key must belong to root, every field is
 * checked (tools/spnego-desc.c), and nothing of the user's is touched before we are the
 * user.  No setns(): everything runs in the helper's own (init) namespaces. */
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

#include "conf-get.h"
#include "macros.h"
#include "nfskeys.h"
#include "spnego-desc.h"
#include "upcall-spnego.h"

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
static const uint8_t oid_spnego[] = { 0x06, 0x06, 0x2b, 0x06, 0x01, 0x05, 0x05, 0x02 };
static const uint8_t oid_krb5[] = { 0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7,
				    0x12, 0x01, 0x02, 0x02 };
static const uint8_t oid_mskrb5[] = { 0x06, 0x09, 0x2a, 0x86, 0x48, 0x82, 0xf7,
				      0x12, 0x01, 0x02, 0x02 };

/* Log to syslog and standard error (request-key keeps the helper's stderr nowhere, a
 * wrapper in tests keeps it). Never given a secret. */
static __attribute__((format(printf, 2, 3))) void say(int prio, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsyslog(prio, fmt, ap);
	va_end(ap);
	if (prio <= LOG_INFO) {
		fputs("nfskeys-upcall: ", stderr);
		va_start(ap, fmt);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
		fputc('\n', stderr);
	}
}

static int reject(int32_t key, unsigned timeout, unsigned error)
{
	int r = nfskeys_key_reject(key, timeout, error, 0);

	if (r < 0) {
		say(LOG_ERR, "cannot reject key %" PRId32 ": %s", key, strerror(-r));
		return SP_KEYERR;
	}
	return SP_REJECTED;
}

/* ------------------------------------------------------------ DER for the NegTokenInit */

static size_t der_len_size(size_t len)
{
	return len < 0x80 ? 1 : len < 0x100 ? 2 : len < 0x10000 ? 3 : 4;
}

static uint8_t *der_put_hdr(uint8_t *p, uint8_t tag, size_t len)
{
	*p++ = tag;
	if (len < 0x80) {
		*p++ = (uint8_t)len;
	} else if (len < 0x100) {
		*p++ = 0x81;
		*p++ = (uint8_t)len;
	} else if (len < 0x10000) {
		*p++ = 0x82;
		*p++ = (uint8_t)(len >> 8);
		*p++ = (uint8_t)len;
	} else {
		*p++ = 0x83;
		*p++ = (uint8_t)(len >> 16);
		*p++ = (uint8_t)(len >> 8);
		*p++ = (uint8_t)len;
	}
	return p;
}

#define TLV(len) (1 + der_len_size(len) + (len))

/* The SPNEGO initial context token (RFC 4178): [APPLICATION 0] { spnego OID,
 * [0] NegTokenInit { [0] mechTypes { oid }, [2] mechToken OCTET STRING } }, the form
 * cifs.upcall sends with the krb5 AP-REQ token as the optimistic mechanism token. */
static int spnego_wrap(const uint8_t *oid, size_t oid_len, const void *tok, size_t tok_len,
		       uint8_t **ret, size_t *ret_len)
{
	size_t mechlist, mechtypes, octets, mechtoken, seq, nti, inner, total;
	uint8_t *buf, *p;

	if (tok_len > 0xffff00)
		return -E2BIG;
	mechlist = TLV(oid_len);
	mechtypes = TLV(mechlist);
	octets = TLV(tok_len);
	mechtoken = TLV(octets);
	seq = TLV(mechtypes + mechtoken);
	nti = TLV(seq);
	inner = sizeof(oid_spnego) + nti;
	total = TLV(inner);
	buf = malloc(total);
	if (!buf)
		return -ENOMEM;
	p = der_put_hdr(buf, 0x60, inner);
	memcpy(p, oid_spnego, sizeof(oid_spnego));
	p += sizeof(oid_spnego);
	p = der_put_hdr(p, 0xa0, seq);
	p = der_put_hdr(p, 0x30, mechtypes + mechtoken);
	p = der_put_hdr(p, 0xa0, mechlist);
	p = der_put_hdr(p, 0x30, oid_len);
	memcpy(p, oid, oid_len);
	p += oid_len;
	p = der_put_hdr(p, 0xa2, octets);
	p = der_put_hdr(p, 0x04, tok_len);
	memcpy(p, tok, tok_len);
	p += tok_len;
	if ((size_t)(p - buf) != total) {
		free(buf);
		return -EINVAL;
	}
	*ret = buf;
	*ret_len = total;
	return 0;
}

/* ------------------------------------------------------------ GSSAPI */

static void gss_message(OM_uint32 major, OM_uint32 minor, char *buf, size_t size)
{
	OM_uint32 min, ctx = 0;
	gss_buffer_desc m;
	size_t n = 0;

	buf[0] = 0;
	do {
		if (GSS_ERROR(gss_display_status(&min, major, GSS_C_GSS_CODE, GSS_C_NO_OID,
						 &ctx, &m)))
			break;
		n += (size_t)snprintf(buf + n, n < size ? size - n : 0, "%s%.*s", n ? "; " : "",
				      (int)m.length, (char *)m.value);
		gss_release_buffer(&min, &m);
	} while (ctx && n < size);
	ctx = 0;
	if (minor && n < size) {
		do {
			if (GSS_ERROR(gss_display_status(&min, minor, GSS_C_MECH_CODE,
							 (gss_OID)gss_mech_krb5, &ctx, &m)))
				break;
			n += (size_t)snprintf(buf + n, n < size ? size - n : 0, ": %.*s",
					      (int)m.length, (char *)m.value);
			gss_release_buffer(&min, &m);
		} while (ctx && n < size);
	}
}

static void wipe_release(gss_buffer_t b)
{
	OM_uint32 min;

	if (b->value && b->length)
		explicit_bzero(b->value, b->length);
	gss_release_buffer(&min, b);
}

/* One attempt: the krb5 mechanism token for service@host with cred, and the session key
 * (the initiator's subkey, what the server will derive its signing keys from).  On
 * failure *why says what GSSAPI answered. */
static int gss_token(gss_cred_id_t cred, const char *host, struct nfskeys_secret **ret_key,
		     gss_buffer_t ret_token, char *why, size_t why_size)
{
	OM_uint32 maj, min;
	gss_name_t target = GSS_C_NO_NAME;
	gss_ctx_id_t ctx = GSS_C_NO_CONTEXT;
	gss_buffer_desc name, out = GSS_C_EMPTY_BUFFER;
	gss_buffer_set_t keyset = GSS_C_NO_BUFFER_SET;
	struct nfskeys_secret *key = NULL;
	char service[SPNEGO_HOST_MAX + 8];
	int r = -EKEYREJECTED;

	snprintf(service, sizeof(service), "cifs@%s", host);
	name.value = service;
	name.length = strlen(service);
	maj = gss_import_name(&min, &name, GSS_C_NT_HOSTBASED_SERVICE, &target);
	if (GSS_ERROR(maj)) {
		gss_message(maj, min, why, why_size);
		return -EINVAL;
	}
	/* No mutual authentication: one token, complete at once (as cifs.upcall). */
	maj = gss_init_sec_context(&min, cred, &ctx, target, (gss_OID)gss_mech_krb5, 0, 0,
				   GSS_C_NO_CHANNEL_BINDINGS, GSS_C_NO_BUFFER, NULL, &out, NULL,
				   NULL);
	if (maj != GSS_S_COMPLETE) {
		if (!GSS_ERROR(maj))
			snprintf(why, why_size, "GSSAPI wants another round trip (0x%x)", maj);
		else
			gss_message(maj, min, why, why_size);
		goto out;
	}
	maj = gss_inquire_sec_context_by_oid(&min, ctx, GSS_C_INQ_SSPI_SESSION_KEY, &keyset);
	if (GSS_ERROR(maj) || !keyset || keyset->count < 1 || !keyset->elements[0].length) {
		if (GSS_ERROR(maj))
			gss_message(maj, min, why, why_size);
		else
			snprintf(why, why_size, "no session key in the security context");
		goto out;
	}
	r = nfskeys_secret_new(keyset->elements[0].length, &key);
	if (r < 0) {
		snprintf(why, why_size, "%s", strerror(-r));
		goto out;
	}
	memcpy(nfskeys_secret_data(key), keyset->elements[0].value, keyset->elements[0].length);
	nfskeys_secret_set_len(key, keyset->elements[0].length);
	*ret_key = key;
	*ret_token = out;
	out.value = NULL;
	out.length = 0;
	r = 0;
out:
	if (keyset) {
		for (size_t i = 0; i < keyset->count; i++)
			if (keyset->elements[i].value)
				explicit_bzero(keyset->elements[i].value,
					       keyset->elements[i].length);
		gss_release_buffer_set(&min, &keyset);
	}
	gss_release_buffer(&min, &out);
	gss_delete_sec_context(&min, &ctx, GSS_C_NO_BUFFER);
	gss_release_name(&min, &target);
	return r;
}

/* ------------------------------------------------------------ credential caches */

/* A FILE or DIR cache must be the user's own: not a link, owned by uid, writable by no
 * one else (the defaults of krb5.conf put them in shared /tmp).  KEYRING and KCM
 * are guarded by the kernel and the KCM daemon.  -ENOENT: no such cache. */
static int check_cache_owner(const char *name, uid_t uid, char *why, size_t why_size)
{
	const char *path = NULL;
	struct stat st;
	bool dir = false;

	if (!strncmp(name, "FILE:", 5)) {
		path = name + 5;
	} else if (!strncmp(name, "DIR::", 5)) {
		path = name + 5; /* one cache of a collection: the file */
	} else if (!strncmp(name, "DIR:", 4)) {
		path = name + 4;
		dir = true;
	} else if (name[0] == '/') {
		path = name; /* a bare path is a FILE cache */
	}
	if (!path)
		return 0;
	if (lstat(path, &st) < 0) {
		if (errno == ENOENT)
			return -ENOENT;
		snprintf(why, why_size, "cannot stat it: %s", strerror(errno));
		return -errno;
	}
	if (dir ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode)) {
		snprintf(why, why_size, "not a %s (a link or special file)",
			 dir ? "directory" : "regular file");
		return -EPERM;
	}
	if (st.st_uid != uid) {
		snprintf(why, why_size, "owned by uid %u, not %u", (unsigned)st.st_uid,
			 (unsigned)uid);
		return -EPERM;
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		snprintf(why, why_size, "writable by group or others (mode %04o)",
			 (unsigned)(st.st_mode & 07777));
		return -EPERM;
	}
	return 0;
}

/* The cache's principal, for the log (also when its tickets have expired). */
static void cache_principal(const char *cache, char *buf, size_t size)
{
	krb5_context k5;
	krb5_ccache cc;
	krb5_principal p;
	char *u;

	if (krb5_init_context(&k5) != 0)
		return;
	if (krb5_cc_resolve(k5, cache, &cc) == 0) {
		if (krb5_cc_get_principal(k5, cc, &p) == 0) {
			if (krb5_unparse_name(k5, p, &u) == 0) {
				snprintf(buf, size, "%s", u);
				krb5_free_unparsed_name(k5, u);
			}
			krb5_free_principal(k5, p);
		}
		krb5_cc_close(k5, cc);
	}
	krb5_free_context(k5);
}

struct attempt {
	const struct spnego_desc *d;
	uid_t uid;
	struct nfskeys_secret *key; /* out */
	gss_buffer_desc token;      /* out */
	unsigned tried;
};

/* Everything for one cache: acquire the initiator credential from it, then try the
 * service names.  0 when the token is made. */
static int try_cache(struct attempt *at, const char *cache)
{
	OM_uint32 maj, min, lifetime = 0;
	gss_key_value_element_desc el = { "ccache", cache };
	gss_key_value_set_desc store = { 1, &el };
	gss_OID_set_desc mechs = { 1, (gss_OID)gss_mech_krb5 };
	gss_cred_id_t cred = GSS_C_NO_CREDENTIAL;
	char why[512], principal[512] = "(unknown principal)", hosts[2][SPNEGO_HOST_MAX + 1];
	size_t nhosts = 0;
	int r;

	why[0] = 0;
	r = check_cache_owner(cache, at->uid, why, sizeof(why));
	if (r == -ENOENT) {
		say(LOG_INFO, "uid %u: no credential cache %s", (unsigned)at->uid, cache);
		return r;
	}
	at->tried++;
	if (r < 0) {
		say(LOG_ERR, "uid %u: credential cache %s refused: %s", (unsigned)at->uid, cache,
		    why);
		return -EACCES;
	}
	cache_principal(cache, principal, sizeof(principal));
	maj = gss_acquire_cred_from(&min, GSS_C_NO_NAME, GSS_C_INDEFINITE, &mechs,
				    GSS_C_INITIATE, &store, &cred, NULL, &lifetime);
	if (GSS_ERROR(maj)) {
		gss_message(maj, min, why, sizeof(why));
		if (GSS_ROUTINE_ERROR(maj) == GSS_S_CREDENTIALS_EXPIRED) {
			say(LOG_ERR, "uid %u: the credentials of %s in %s have expired: %s",
			    (unsigned)at->uid, principal, cache, why);
			return -EKEYEXPIRED;
		}
		say(LOG_ERR, "uid %u: no usable credentials of %s in %s: %s", (unsigned)at->uid,
		    principal, cache, why);
		return -ENOKEY;
	}
	(void)gss_inquire_cred(&min, cred, NULL, &lifetime, NULL, NULL);
	if (lifetime == 0) {
		say(LOG_ERR, "uid %u: the credentials of %s in %s have expired", (unsigned)at->uid,
		    principal, cache);
		gss_release_cred(&min, &cred);
		return -EKEYEXPIRED;
	}

	/* The host as given (lower case, as cifs.upcall), then its canonical name. */
	snprintf(hosts[nhosts], sizeof(hosts[0]), "%s", at->d->host);
	for (char *c = hosts[nhosts]; *c; c++)
		*c = (char)((*c >= 'A' && *c <= 'Z') ? *c + 32 : *c);
	nhosts++;
	r = -ENOKEY;
	for (size_t i = 0; i < 2; i++) {
		if (i == 1) {
			struct addrinfo hints = { .ai_flags = AI_CANONNAME }, *ai = NULL;

			if (getaddrinfo(hosts[0], NULL, &hints, &ai) != 0 || !ai ||
			    !ai->ai_canonname || !ai->ai_canonname[0] ||
			    strlen(ai->ai_canonname) > SPNEGO_HOST_MAX) {
				if (ai)
					freeaddrinfo(ai);
				break;
			}
			snprintf(hosts[1], sizeof(hosts[1]), "%s", ai->ai_canonname);
			freeaddrinfo(ai);
			for (char *c = hosts[1]; *c; c++)
				*c = (char)((*c >= 'A' && *c <= 'Z') ? *c + 32 : *c);
			if (streq(hosts[1], hosts[0]))
				break;
			nhosts++;
		}
		r = gss_token(cred, hosts[i], &at->key, &at->token, why, sizeof(why));
		if (r == 0) {
			say(LOG_DEBUG, "uid %u: %s: ticket for cifs/%s from %s", (unsigned)at->uid,
			    principal, hosts[i], cache);
			break;
		}
		say(LOG_ERR, "uid %u: %s (cache %s) cannot get a ticket for service cifs/%s: %s",
		    (unsigned)at->uid, principal, cache, hosts[i], why);
	}
	gss_release_cred(&min, &cred);
	return r;
}

/* Root mounts may use a keytab: kinit from it into a MEMORY cache. */
static int keytab_cache(const char *keytab, const char *princ_name, char *cache, size_t size)
{
	krb5_context k5 = NULL;
	krb5_keytab kt = NULL;
	krb5_principal me = NULL;
	krb5_ccache cc = NULL;
	krb5_creds creds;
	krb5_error_code e;
	const char *what = "krb5_init_context";
	char *unparsed = NULL;
	int r = -ENOKEY;

	memset(&creds, 0, sizeof(creds));
	if ((e = krb5_init_context(&k5)) != 0)
		goto fail;
	what = "keytab";
	if ((e = krb5_kt_resolve(k5, keytab, &kt)) != 0)
		goto fail;
	if (princ_name) {
		what = "principal";
		if ((e = krb5_parse_name(k5, princ_name, &me)) != 0)
			goto fail;
	} else {
		krb5_kt_cursor cur;
		krb5_keytab_entry ent;

		what = "keytab";
		if ((e = krb5_kt_start_seq_get(k5, kt, &cur)) != 0)
			goto fail;
		e = krb5_kt_next_entry(k5, kt, &ent, &cur);
		krb5_kt_end_seq_get(k5, kt, &cur);
		if (e)
			goto fail;
		e = krb5_copy_principal(k5, ent.principal, &me);
		krb5_free_keytab_entry_contents(k5, &ent);
		if (e)
			goto fail;
	}
	krb5_unparse_name(k5, me, &unparsed);
	what = "initial credentials from the keytab";
	if ((e = krb5_get_init_creds_keytab(k5, &creds, me, kt, 0, NULL, NULL)) != 0)
		goto fail;
	snprintf(cache, size, "MEMORY:nfskeys-spnego-%d", (int)getpid());
	what = "MEMORY cache";
	if ((e = krb5_cc_resolve(k5, cache, &cc)) != 0 || (e = krb5_cc_initialize(k5, cc, me)) != 0 ||
	    (e = krb5_cc_store_cred(k5, cc, &creds)) != 0)
		goto fail;
	/* cc stays open: a MEMORY cache lives while a handle does (this process only) */
	r = 0;
	goto out;
fail: {
	const char *m = k5 ? krb5_get_error_message(k5, e) : NULL;

	say(LOG_ERR, "root: keytab %s, principal %s: %s: %s", keytab,
	    unparsed ? unparsed : princ_name ? princ_name : "(first entry)", what,
	    m ? m : strerror(ENOMEM));
	if (m)
		krb5_free_error_message(k5, m);
}
out:
	krb5_free_cred_contents(k5, &creds);
	if (unparsed)
		krb5_free_unparsed_name(k5, unparsed);
	if (me)
		krb5_free_principal(k5, me);
	if (kt)
		krb5_kt_close(k5, kt);
	/* closing keeps a MEMORY cache's contents for this process (MIT) */
	if (cc)
		krb5_cc_close(k5, cc);
	if (k5)
		krb5_free_context(k5);
	return r;
}

/* The default cache of the current (already switched) user, as krb5.conf's
 * default_ccache_name says (KRB5CCNAME was removed: the environment is root's). */
static int default_cache(char *cache, size_t size)
{
	krb5_context k5;
	const char *n;

	if (krb5_init_context(&k5) != 0)
		return -ENOMEM;
	n = krb5_cc_default_name(k5);
	if (n)
		snprintf(cache, size, "%s", n);
	krb5_free_context(k5);
	return n ? 0 : -ENOENT;
}

/* Become uid with its primary and supplementary groups, for good.  The NSS lookups were
 * done before, as root, in the helper's own namespaces. */
static int become(uid_t uid, gid_t gid, const gid_t *groups, int ngroups)
{
	uid_t r, e, s;

	if (setgroups((size_t)ngroups, groups) < 0 || setresgid(gid, gid, gid) < 0 ||
	    setresuid(uid, uid, uid) < 0)
		return -errno;
	if (getresuid(&r, &e, &s) < 0 || r != uid || e != uid || s != uid)
		return -EPERM;
	if (uid != 0 && setresuid(0, 0, 0) == 0)
		return -EPERM; /* still able to regain root: refuse to go on */
	return 0;
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
	gid_t gid = 0, groups[MAX_GROUPS];
	int ngroups = MAX_GROUPS, r, rc = SP_REJECTED;
	unsigned reject_timeout = SPNEGO_REJECT_TIMEOUT, error = ENOKEY;
	int32_t serial = a->serial;
	uint8_t *blob = NULL;
	size_t blob_len = 0;

	/* Only the CIFS client's requests: it asks under its spnego credential, so the key
	 * it wants belongs to root.  A key a user requested belongs to that user. */
	r = nfskeys_key_describe(serial, &info);
	if (r < 0) {
		say(LOG_ERR, "cifs.spnego: cannot describe key %" PRId32 ": %s", serial,
		    strerror(-r));
		return reject(serial, reject_timeout, EKEYREJECTED);
	}
	if (!streq(info.type, "cifs.spnego") &&
	    !(a->type && streq(a->type, "cifs.spnego") && streq(info.type, "user"))) {
		say(LOG_ERR, "key %" PRId32 " is of type %s, not cifs.spnego: refused", serial,
		    info.type);
		return reject(serial, reject_timeout, EKEYREJECTED);
	}
	if (info.uid != 0) {
		say(LOG_ERR,
		    "cifs.spnego key %" PRId32 " belongs to uid %u, not root: not a request of "
		    "the kernel's CIFS client, refused",
		    serial, (unsigned)info.uid);
		return reject(serial, reject_timeout, EKEYREJECTED);
	}
	if (!streq(info.description, a->desc)) {
		say(LOG_ERR, "key %" PRId32 " is '%.200s', not the description given: refused",
		    serial, info.description);
		return reject(serial, reject_timeout, EKEYREJECTED);
	}
	if (spnego_desc_parse(info.description, &d, &why) < 0) {
		say(LOG_ERR, "cifs.spnego key %" PRId32 ": bad description '%.300s': %s", serial,
		    info.description, why);
		return reject(serial, reject_timeout, EINVAL);
	}
	if (d.sec == SPNEGO_SEC_IAKERB) {
		say(LOG_ERR, "cifs.spnego key %" PRId32 ": sec=iakerb is not supported (host %s)",
		    serial, d.host);
		return reject(serial, reject_timeout, EOPNOTSUPP);
	}

	/* Root-only work first: configuration, the user's groups. */
	r = nfskeys_ctx_new_full(a->config, NULL, NULL, &ctx);
	if (r < 0) {
		say(LOG_ERR, "cifs.spnego: cannot load the configuration: %s", strerror(-r));
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
		say(LOG_ERR, "cifs.spnego for %s: creduid %u: %s", d.host, (unsigned)d.creduid,
		    r == -ENOENT ? "no such user" : strerror(-r));
		rc = reject(serial, reject_timeout, ENOKEY);
		goto out;
	}
	/* The environment is root's; the user's cache is chosen by krb5.conf, never by it. */
	unsetenv("KRB5CCNAME");
	if (d.creduid == 0 && keytab && keytab_cache(keytab, ktprinc ? ktprinc : d.have_user ?
						      d.user : NULL, cache, sizeof(cache)) == 0)
		snprintf(defcache, sizeof(defcache), "%s", cache);
	r = become(d.creduid, gid, groups, ngroups);
	if (r < 0) {
		say(LOG_ERR, "cifs.spnego: cannot switch to uid %u: %s", (unsigned)d.creduid,
		    strerror(-r));
		rc = reject(serial, reject_timeout, EKEYREJECTED);
		goto out;
	}

	/* As the user: the persistent keyring cache (nfskeys nfs login), the default
	 * cache, then (root) the keytab. */
	at.uid = d.creduid;
	snprintf(cache, sizeof(cache), "KEYRING:persistent:%u", (unsigned)d.creduid);
	r = -ENOKEY;
	{
		char def[CACHE_NAME_MAX] = "";
		const char *list[3];
		size_t n = 0;

		list[n++] = cache;
		if (default_cache(def, sizeof(def)) == 0 && !streq(def, cache))
			list[n++] = def;
		if (defcache[0])
			list[n++] = defcache;
		for (size_t i = 0; i < n && r < 0; i++) {
			/* An empty persistent keyring is no cache at all: skip it quietly. */
			if (i == 0) {
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
					say(LOG_INFO, "uid %u: %s holds no credentials",
					    (unsigned)d.creduid, list[i]);
					continue;
				}
			}
			r = try_cache(&at, list[i]);
			if (r == -EKEYEXPIRED || r == -EACCES)
				error = (unsigned)-r;
		}
	}
	if (r < 0) {
		say(LOG_ERR,
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
			say(LOG_ERR, "cifs.spnego: cannot build the SPNEGO blob: %s",
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
		say(LOG_ERR, "cifs.spnego: cannot instantiate key %" PRId32 ": %s", serial,
		    strerror(-r));
		reject(serial, reject_timeout, (unsigned)-r);
		rc = SP_KEYERR;
		goto out;
	}
	say(LOG_DEBUG, "cifs.spnego for //%s: key %" PRId32 " instantiated for uid %u", d.host,
	    serial, (unsigned)d.creduid);
	rc = SP_OK;
out:
	if (blob) {
		explicit_bzero(blob, blob_len);
		free(blob);
	}
	nfskeys_secret_free(payload);
	nfskeys_secret_free(at.key);
	if (at.token.value)
		wipe_release(&at.token);
	nfskeys_ctx_unref(ctx);
	return rc;
}
