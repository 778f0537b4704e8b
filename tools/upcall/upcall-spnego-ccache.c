/* The cifs.spnego upcall's credential caches: each checked to be the user's own before
 * use, the initiator credential acquired from it and the service names tried; a cache
 * made from a keytab, the default cache's name, and becoming the user for good. */
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
#include "upcall-spnego-private.h"

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

/* Everything for one cache: acquire the initiator credential from it, then try the
 * service names.  0 when the token is made. */
int spnego_try_cache(struct attempt *at, const char *cache)
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
		spnego_say(LOG_INFO, "uid %u: no credential cache %s", (unsigned)at->uid, cache);
		return r;
	}
	at->tried++;
	if (r < 0) {
		spnego_say(LOG_ERR, "uid %u: credential cache %s refused: %s", (unsigned)at->uid, cache,
		    why);
		return -EACCES;
	}
	cache_principal(cache, principal, sizeof(principal));
	maj = gss_acquire_cred_from(&min, GSS_C_NO_NAME, GSS_C_INDEFINITE, &mechs,
				    GSS_C_INITIATE, &store, &cred, NULL, &lifetime);
	if (GSS_ERROR(maj)) {
		spnego_gss_message(maj, min, why, sizeof(why));
		if (GSS_ROUTINE_ERROR(maj) == GSS_S_CREDENTIALS_EXPIRED) {
			spnego_say(LOG_ERR, "uid %u: the credentials of %s in %s have expired: %s",
			    (unsigned)at->uid, principal, cache, why);
			return -EKEYEXPIRED;
		}
		spnego_say(LOG_ERR, "uid %u: no usable credentials of %s in %s: %s", (unsigned)at->uid,
		    principal, cache, why);
		return -ENOKEY;
	}
	(void)gss_inquire_cred(&min, cred, NULL, &lifetime, NULL, NULL);
	if (lifetime == 0) {
		spnego_say(LOG_ERR, "uid %u: the credentials of %s in %s have expired", (unsigned)at->uid,
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
		r = spnego_gss_token(cred, hosts[i], &at->key, &at->token, why, sizeof(why));
		if (r == 0) {
			spnego_say(LOG_DEBUG, "uid %u: %s: ticket for cifs/%s from %s", (unsigned)at->uid,
			    principal, hosts[i], cache);
			break;
		}
		spnego_say(LOG_ERR, "uid %u: %s (cache %s) cannot get a ticket for service cifs/%s: %s",
		    (unsigned)at->uid, principal, cache, hosts[i], why);
	}
	gss_release_cred(&min, &cred);
	return r;
}

/* Root mounts may use a keytab: kinit from it into a MEMORY cache. */
int spnego_keytab_cache(const char *keytab, const char *princ_name, char *cache, size_t size)
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

	spnego_say(LOG_ERR, "root: keytab %s, principal %s: %s: %s", keytab,
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
int spnego_default_cache(char *cache, size_t size)
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
