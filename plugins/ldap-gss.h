/* The ldap backend's SASL GSSAPI bind from a keytab, with no password anywhere: a ticket
 * is taken from the keytab into a MEMORY: credential cache of this process (never a
 * file, never KRB5CCNAME: nothing another user can name or read), the default cache of
 * the binding thread for the length of each bind; a new one is taken before it
 * expires. */
#pragma once

#include <ldap.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

struct ldap_gss {
	pthread_mutex_t lock; /* the credential and the binds using it */
	char keytab[1024];    /* "FILE:/path" */
	char principal[256];  /* the configured one, or the keytab's machine account */
	char ccache[64];      /* "MEMORY:nfskeys-ldap-PID-N" */
	int64_t endtime;      /* of the ticket in ccache (0: none yet) */
};

/* keys: how the configuration names the two settings, the section and a key prefix
 * ("[LDAP] " for [LDAP] Keytab and Principal, "[SID] AD-" for [SID] AD-Keytab and
 * AD-Principal), for the messages.  keytab: a path, or NULL/"" for the Kerberos default
 * keytab; principal: NULL/"" for the keytab's machine account (NAME$@REALM), else its
 * first entry.  Checks that the keytab can be read and has the principal: 0, or -EINVAL
 * (-ENAMETOOLONG) with a message in err. */
int ldap_gss_init(struct ldap_gss *g, const char *keys, const char *keytab, const char *principal,
		  char *err, size_t err_size);
void ldap_gss_done(struct ldap_gss *g);

/* Bind ld (fresh, TLS set up if any) with SASL GSSAPI as g's principal, to the service
 * ldap/HOST of the URI's host name as written (no reverse DNS).  An LDAP result code;
 * on failure a message naming the principal, the keytab and the cause in err. */
int ldap_gss_bind(struct ldap_gss *g, LDAP *ld, char *err, size_t err_size);
