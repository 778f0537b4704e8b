/* What the cifs.spnego upcall's parts share: the log line (upcall-spnego-say.c), the
 * SPNEGO token made through GSSAPI (upcall-spnego-token.c) and the search of the user's
 * credential caches (upcall-spnego-ccache.c), called by the upcall (upcall-spnego.c). */
#pragma once

#include <gssapi/gssapi.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct nfskeys_secret;
struct spnego_desc;

struct attempt {
	const struct spnego_desc *d;
	uid_t uid;
	struct nfskeys_secret *key; /* out */
	gss_buffer_desc token;      /* out */
	unsigned tried;
};

/* Log to syslog, and to standard error up to LOG_INFO.  Never given a secret. */
__attribute__((format(printf, 2, 3))) void spnego_say(int prio, const char *fmt, ...);

/* upcall-spnego-token.c */
void spnego_gss_message(OM_uint32 major, OM_uint32 minor, char *buf, size_t size);
void spnego_wipe_release(gss_buffer_t b);
int spnego_gss_token(gss_cred_id_t cred, const char *host, struct nfskeys_secret **ret_key,
		     gss_buffer_t ret_token, char *why, size_t why_size);
int spnego_wrap(const uint8_t *oid, size_t oid_len, const void *tok, size_t tok_len,
		uint8_t **ret, size_t *ret_len);

/* upcall-spnego-ccache.c */
int spnego_try_cache(struct attempt *at, const char *cache);
int spnego_keytab_cache(const char *keytab, const char *princ_name, char *cache, size_t size);
int spnego_default_cache(char *cache, size_t size);
