/* SASL GSSAPI bind from a keytab (ldap-gss.h). */
#include <errno.h>
#include <gssapi/gssapi_krb5.h>
#include <krb5.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "ldap-gss.h"
#include "macros.h"

/* Whether keytab can be read and holds principal; when principal is "", choose it: the
 * keytab's machine account, else its first entry.  0, or -EINVAL (a configuration
 * error, not "no such plugin") with err filled. */
static int keytab_check(const char *keys, const char *keytab, char *principal, size_t size,
			char *err, size_t err_size)
{
	krb5_context k = NULL;
	krb5_keytab kt = NULL;
	krb5_kt_cursor cur;
	krb5_keytab_entry e;
	krb5_error_code kr;
	bool found = false;
	char want[2] = { principal[0], 0 }; /* "" when the caller left the choice */
	int r = -EINVAL;

	if (krb5_init_context(&k) != 0) {
		snprintf(err, err_size, "cannot initialise Kerberos");
		return -EIO;
	}
	kr = krb5_kt_resolve(k, keytab, &kt);
	if (kr == 0)
		kr = krb5_kt_start_seq_get(k, kt, &cur);
	if (kr) {
		const char *m = krb5_get_error_message(k, kr);

		snprintf(err, err_size, "%sKeytab %s: %s", keys, keytab, m);
		krb5_free_error_message(k, m);
		if (kt)
			krb5_kt_close(k, kt);
		krb5_free_context(k);
		return -EINVAL;
	}
	while (!found && krb5_kt_next_entry(k, kt, &e, &cur) == 0) {
		char *name = NULL;

		if (krb5_unparse_name(k, e.principal, &name) == 0) {
			/* unset: the machine account (NAME$@REALM, as AD knows the host)
			 * when the keytab has one, else its first entry */
			if (!want[0] && strlen(name) < size) {
				if (!principal[0])
					snprintf(principal, size, "%s", name);
				if (strstr(name, "$@")) {
					snprintf(principal, size, "%s", name);
					found = true;
				}
			} else {
				found = strcmp(name, principal) == 0;
			}
			krb5_free_unparsed_name(k, name);
		}
		krb5_free_keytab_entry_contents(k, &e);
	}
	krb5_kt_end_seq_get(k, kt, &cur);
	krb5_kt_close(k, kt);
	krb5_free_context(k);
	if (found || (!want[0] && principal[0]))
		r = 0;
	else if (principal[0])
		snprintf(err, err_size, "%sKeytab %s has no key of %sPrincipal %s", keys, keytab,
			 keys, principal);
	else
		snprintf(err, err_size, "%sKeytab %s has no key", keys, keytab);
	return r;
}

int ldap_gss_init(struct ldap_gss *g, const char *keys, const char *keytab, const char *principal,
		  char *err, size_t err_size)
{
	static unsigned serial;

	memset(g, 0, sizeof(*g));
	pthread_mutex_init(&g->lock, NULL);
	snprintf(g->ccache, sizeof(g->ccache), "MEMORY:nfskeys-ldap-%d-%u", (int)getpid(),
		 __atomic_add_fetch(&serial, 1, __ATOMIC_RELAXED));
	if (keytab && keytab[0]) {
		if (snprintf(g->keytab, sizeof(g->keytab), "FILE:%s", keytab) >=
		    (int)sizeof(g->keytab)) {
			snprintf(err, err_size, "%sKeytab: path too long", keys);
			return -ENAMETOOLONG;
		}
	} else {
		krb5_context k = NULL;

		if (krb5_init_context(&k) != 0 ||
		    krb5_kt_default_name(k, g->keytab, sizeof(g->keytab)) != 0) {
			if (k)
				krb5_free_context(k);
			snprintf(err, err_size, "no default keytab: set %sKeytab", keys);
			return -EINVAL;
		}
		krb5_free_context(k);
	}
	if (principal && snprintf(g->principal, sizeof(g->principal), "%s", principal) >=
				 (int)sizeof(g->principal)) {
		snprintf(err, err_size, "%sPrincipal: too long", keys);
		return -ENAMETOOLONG;
	}
	return keytab_check(keys, g->keytab, g->principal, sizeof(g->principal), err, err_size);
}

void ldap_gss_done(struct ldap_gss *g)
{
	krb5_context k = NULL;
	krb5_ccache cc = NULL;

	/* the ticket goes with the backend */
	if (g->endtime && krb5_init_context(&k) == 0) {
		if (krb5_cc_resolve(k, g->ccache, &cc) == 0)
			krb5_cc_destroy(k, cc);
		krb5_free_context(k);
	}
	pthread_mutex_destroy(&g->lock);
}

/* A ticket-granting ticket from the keytab into the MEMORY cache (the lock is held) */
static int get_ticket(struct ldap_gss *g, char *err, size_t err_size)
{
	krb5_context k = NULL;
	krb5_principal p = NULL;
	krb5_keytab kt = NULL;
	krb5_ccache cc = NULL;
	krb5_creds creds;
	krb5_error_code kr;
	bool have_creds = false;

	memset(&creds, 0, sizeof(creds));
	/* the keytab's keys and then the machine's ticket are in this process's memory: no
	 * core dump, and only root may read it, as for a bind password (secret.c) */
	(void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	kr = krb5_init_context(&k);
	if (kr) {
		snprintf(err, err_size, "cannot initialise Kerberos");
		return -EIO;
	}
	kr = krb5_parse_name(k, g->principal, &p);
	if (!kr)
		kr = krb5_kt_resolve(k, g->keytab, &kt);
	if (!kr) {
		kr = krb5_get_init_creds_keytab(k, &creds, p, kt, 0, NULL, NULL);
		have_creds = kr == 0;
	}
	if (!kr)
		kr = krb5_cc_resolve(k, g->ccache, &cc);
	if (!kr)
		kr = krb5_cc_initialize(k, cc, p);
	if (!kr)
		kr = krb5_cc_store_cred(k, cc, &creds);
	if (!kr)
		g->endtime = creds.times.endtime;
	else {
		const char *m = krb5_get_error_message(k, kr);

		snprintf(err, err_size, "no ticket for %s from keytab %s: %s", g->principal,
			 g->keytab, m);
		krb5_free_error_message(k, m);
	}
	if (have_creds)
		krb5_free_cred_contents(k, &creds);
	if (cc)
		krb5_cc_close(k, cc);
	if (kt)
		krb5_kt_close(k, kt);
	if (p)
		krb5_free_principal(k, p);
	krb5_free_context(k);
	return kr ? -EACCES : 0;
}

/* A ticket in the MEMORY cache, taken from the keytab again a minute before the one
 * there expires (the lock is held). */
static int ensure_ticket(struct ldap_gss *g, char *err, size_t err_size)
{
	if (g->endtime && time(NULL) + 60 < g->endtime)
		return 0;
	return get_ticket(g, err, err_size);
}

/* libldap's prompt hook: GSSAPI asks for nothing it needs (the authorization id is the
 * principal's own) */
static int sasl_quiet(LDAP *ld, unsigned flags, void *defaults, void *interact)
{
	(void)ld;
	(void)flags;
	(void)defaults;
	(void)interact;
	return LDAP_SUCCESS;
}

int ldap_gss_bind(struct ldap_gss *g, LDAP *ld, char *err, size_t err_size)
{
	char *diag = NULL;
	void *tls = NULL;
	OM_uint32 minor;
	int r;

	pthread_mutex_lock(&g->lock);
	if (ensure_ticket(g, err, err_size) < 0) {
		pthread_mutex_unlock(&g->lock);
		return LDAP_LOCAL_ERROR;
	}
	/* the service is ldap/ the URI's host as written: no reverse DNS decides it */
	r = ldap_set_option(ld, LDAP_OPT_X_SASL_NOCANON, LDAP_OPT_ON);
	/* over TLS (ldaps://, StartTLS) no SASL security layer on top: TLS protects the
	 * connection, and AD refuses GSSAPI signing or sealing inside TLS */
	if (r == LDAP_OPT_SUCCESS && ldap_get_option(ld, LDAP_OPT_X_TLS_SSL_CTX, &tls) ==
					     LDAP_OPT_SUCCESS && tls)
		r = ldap_set_option(ld, LDAP_OPT_X_SASL_SECPROPS, "minssf=0,maxssf=0");
	/* SASL's GSSAPI takes the default credentials: for this thread, during this bind
	 * only, they are the MEMORY cache's (MIT keeps the name per thread; nothing of the
	 * environment's is read or changed) */
	if (r == LDAP_OPT_SUCCESS && !GSS_ERROR(gss_krb5_ccache_name(&minor, g->ccache, NULL))) {
		r = ldap_sasl_interactive_bind_s(ld, NULL, "GSSAPI", NULL, NULL, LDAP_SASL_QUIET,
						 sasl_quiet, NULL);
		(void)gss_krb5_ccache_name(&minor, NULL, NULL);
	} else {
		r = LDAP_LOCAL_ERROR;
	}
	pthread_mutex_unlock(&g->lock);
	if (r == LDAP_SUCCESS)
		return r;
	ldap_get_option(ld, LDAP_OPT_DIAGNOSTIC_MESSAGE, &diag);
	snprintf(err, err_size, "SASL GSSAPI bind as %s (keytab %s): %s%s%s%s%s", g->principal,
		 g->keytab, ldap_err2string(r), diag && *diag ? " (" : "",
		 diag && *diag ? diag : "", diag && *diag ? ")" : "",
		 r == LDAP_AUTH_UNKNOWN ? "; is Cyrus SASL's GSSAPI module installed "
					  "(libsasl2-modules-gssapi-mit)?" :
					  "");
	ldap_memfree(diag);
	return r;
}
