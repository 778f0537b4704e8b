/* TLS for both LDAP users (the idmap ldap backend, nfskeys-attrd's fleet sync), written
 * once: which URIs are protected, the refusal of a bind password over a cleartext
 * connection, the libldap TLS options and StartTLS, and an error message that names a
 * failed certificate check.  Needs libldap, so it is a library of its own
 * (common/libldaptls.la), linked only by those two. */
#pragma once

#include <ldap.h>
#include <stdbool.h>
#include <stddef.h>

struct ldap_tls {
	const char *uri; /* one or more URIs, as ldap_initialize() takes them */
	const char *ca_file; /* PEM CA bundle; NULL or "": the system's (ldap.conf(5)) */
	bool start_tls;
	/* the names of the keys in messages: "[LDAP] " + "" or "[Attrd] " + "LDAP-" */
	const char *section, *key_prefix;
	/* NULL, or the whole name of the key uri (bind DN) came from when it is not
	 * key_prefix + "URI" ("Bind-DN"): a domain's own S-1-5-21-A-B-C.AD-URI in [SID] */
	const char *uri_key, *bind_dn_key;
	/* set by ldap_tls_setup()'s callback once a TLS handshake begins on the handle */
	bool handshake;
};

/* Whether a simple bind with a password may go over t's connection: yes when StartTLS
 * is on or every URI is ldaps:// or ldapi://; otherwise -EPERM with a message naming the
 * keys and the opt-out (KEY_PREFIX"Allow-Cleartext-Bind") in err, unless allow_cleartext.
 * -EINVAL (with a message) when a URI does not parse. */
int ldap_tls_check_bind(const struct ldap_tls *t, bool allow_cleartext, char *err, size_t err_size);

/* On a fresh handle, before anything is sent: when StartTLS is on, a CA file is set or a
 * URI is ldaps://, demand a certificate that chains to the CA file (or the system's CAs)
 * and names the URI's host, on a TLS context of the handle's own (so no ldap.conf or
 * other handle weakens it); then run StartTLS when configured (never falling back to
 * plain LDAP).  Returns an LDAP result code; t must outlive ld. */
int ldap_tls_setup(LDAP *ld, struct ldap_tls *t);

/* "URI: WHAT: reason" for an LDAP result code rc from step WHAT ("StartTLS", "bind",
 * ...): when a TLS handshake began and the connection then failed, the reason names the
 * certificate check and the CA file (libldap built with GnuTLS says only "Can't contact
 * LDAP server" or "Connect error"); otherwise libldap's text and the server's diagnostic. */
void ldap_tls_error(const struct ldap_tls *t, LDAP *ld, const char *what, int rc, char *buf,
		    size_t size);

/* libldap keeps process-global state (options, the TLS context, SASL's) that it never
 * frees; a plugin that uses libldap and is unloaded with its last context would take
 * libldap with it and leave that state lost (LeakSanitizer fails the process).  Called by
 * such a plugin while it is loaded: libldap and liblber stay mapped for the life of the
 * process, so the state stays reachable, as in any program linking libldap. */
void ldap_pin_library(void);
