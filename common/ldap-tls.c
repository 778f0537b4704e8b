/* TLS for both LDAP users (see ldap-tls.h).  libldap verifies the certificate itself; the
 * work here is to make sure it always does (demand, a context of the handle's own), to
 * refuse configurations that would send a bind password in clear, and to say which of
 * "the server is not there" and "its certificate was refused" happened. */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "ldap-tls.h"
#include "macros.h"

/* Calls fn for each URI of a list as ldap_initialize() takes it (separated by spaces or
 * commas); stops at the first non-zero return and returns it. */
static int each_uri(const char *list, int (*fn)(LDAPURLDesc *lud, void *arg), void *arg)
{
	const char *p = list;

	while (*p) {
		size_t n;
		char one[1024];
		LDAPURLDesc *lud = NULL;
		int r;

		p += strspn(p, " \t,");
		n = strcspn(p, " \t,");
		if (n == 0)
			break;
		if (n >= sizeof(one))
			return -EINVAL;
		memcpy(one, p, n);
		one[n] = '\0';
		p += n;
		if (ldap_url_parse(one, &lud) != LDAP_URL_SUCCESS)
			return -EINVAL;
		r = fn(lud, arg);
		ldap_free_urldesc(lud);
		if (r)
			return r;
	}
	return 0;
}

static int is_cleartext(LDAPURLDesc *lud, void *arg)
{
	(void)arg;
	/* ldapi:// is a local socket: nothing crosses the network */
	return strcaseeq(lud->lud_scheme, "ldaps") || strcaseeq(lud->lud_scheme, "ldapi") ? 0 : 1;
}

static int is_ldaps(LDAPURLDesc *lud, void *arg)
{
	(void)arg;
	return strcaseeq(lud->lud_scheme, "ldaps");
}

int ldap_tls_check_bind(const struct ldap_tls *t, bool allow_cleartext, char *err, size_t err_size)
{
	int r = each_uri(t->uri, is_cleartext, NULL);

	if (r < 0) {
		snprintf(err, err_size, "%s%s%s = %s: not a list of LDAP URLs", t->section,
			 t->uri_key ? "" : t->key_prefix, t->uri_key ? t->uri_key : "URI", t->uri);
		return -EINVAL;
	}
	if (r == 0 || t->start_tls || allow_cleartext)
		return 0;
	snprintf(err, err_size,
		 "%s%s%s with a password over %s would send the password in clear: use an "
		 "ldaps:// URI or %sStartTLS = yes (or set %sAllow-Cleartext-Bind = yes to "
		 "accept that)",
		 t->section, t->bind_dn_key ? "" : t->key_prefix,
		 t->bind_dn_key ? t->bind_dn_key : "Bind-DN", t->uri, t->key_prefix, t->key_prefix);
	return -EPERM;
}

/* libldap calls this when it starts a TLS session on the handle, after the TCP connect
 * and before the handshake (signature of libldap's LDAP_TLS_CONNECT_CB). */
static int on_tls_connect(LDAP *ld, void *session, void *ctx, void *arg)
{
	struct ldap_tls *t = arg;

	(void)ld;
	(void)session;
	(void)ctx;
	t->handshake = true;
	return 0;
}

int ldap_tls_setup(LDAP *ld, struct ldap_tls *t)
{
	bool ldaps = each_uri(t->uri, is_ldaps, NULL) > 0;
	int demand = LDAP_OPT_X_TLS_DEMAND, newctx = 0, r;

	t->handshake = false;
	if (!t->start_tls && !ldaps && !(t->ca_file && *t->ca_file))
		return LDAP_SUCCESS;
	/* set on the handle, then a context of its own: a global TLS_REQCERT never in
	 * ldap.conf does not apply to it */
	r = ldap_set_option(ld, LDAP_OPT_X_TLS_REQUIRE_CERT, &demand);
	if (r == LDAP_OPT_SUCCESS && t->ca_file && *t->ca_file)
		r = ldap_set_option(ld, LDAP_OPT_X_TLS_CACERTFILE, t->ca_file);
	if (r == LDAP_OPT_SUCCESS)
		r = ldap_set_option(ld, LDAP_OPT_X_TLS_CONNECT_CB, (void *)on_tls_connect);
	if (r == LDAP_OPT_SUCCESS)
		r = ldap_set_option(ld, LDAP_OPT_X_TLS_CONNECT_ARG, t);
	if (r == LDAP_OPT_SUCCESS)
		r = ldap_set_option(ld, LDAP_OPT_X_TLS_NEWCTX, &newctx);
	if (r != LDAP_OPT_SUCCESS)
		return LDAP_LOCAL_ERROR;
	if (t->start_tls)
		r = ldap_start_tls_s(ld, NULL, NULL);
	else if (ldaps)
		/* connect (and shake hands) now, so that a refused certificate is told from a
		 * failed bind or search; -1 (LDAP_SERVER_DOWN) when it fails */
		r = ldap_connect(ld);
	if (r != LDAP_SUCCESS)
		return r;
	t->handshake = false; /* done: later failures are not the certificate's */
	return LDAP_SUCCESS;
}

void ldap_tls_error(const struct ldap_tls *t, LDAP *ld, const char *what, int rc, char *buf,
		    size_t size)
{
	char *diag = NULL;

	if (t->handshake && (rc == LDAP_SERVER_DOWN || rc == LDAP_CONNECT_ERROR)) {
		snprintf(buf, size,
			 "%s: %s: TLS handshake failed: the server certificate is not trusted "
			 "(signed by %s%sCA-File %s?) or does not name the URI's host",
			 t->uri, what, t->section, t->key_prefix,
			 t->ca_file && *t->ca_file ? t->ca_file : "(unset: system CAs)");
		return;
	}
	if (ld)
		ldap_get_option(ld, LDAP_OPT_DIAGNOSTIC_MESSAGE, &diag);
	snprintf(buf, size, "%s: %s: %s%s%s%s", t->uri, what, ldap_err2string(rc),
		 diag && *diag ? " (" : "", diag && *diag ? diag : "", diag && *diag ? ")" : "");
	ldap_memfree(diag);
}

void ldap_pin_library(void)
{
	const void *syms[] = { (const void *)ldap_initialize, (const void *)ber_free };
	Dl_info info;

	for (size_t i = 0; i < ARRAY_SIZE(syms); i++)
		if (dladdr(syms[i], &info) && info.dli_fname)
			(void)dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
}
