/* What the cifs.spnego upcall's parts share: the log line (upcall-spnego-say.c), the
 * SPNEGO token made through GSSAPI (upcall-spnego-token.c), the search of the user's
 * credential caches (upcall-spnego-ccache.c) and the application's cache for
 * upcall_target=app (upcall-spnego-app.c), called by the upcall (upcall-spnego.c). */
#pragma once

#include <gssapi/gssapi.h>
#include <limits.h>
#include <stdbool.h>
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

/* upcall-spnego-app.c: upcall_target=app */
struct spnego_app {
	uint32_t pid;
	bool container;   /* pid= is in another mount or user namespace than the helper */
	uid_t uid;        /* creduid as that user namespace sees it */
	char path[PATH_MAX]; /* the cache read there: KRB5CCNAME's, or /tmp/krb5cc_UID */
	uint8_t *data;    /* its bytes */
	size_t len;
};

/* As root, before becoming the user: check pid= (exists, runs as creduid= or root) and,
 * when it lives in other namespaces, read the user's cache file there (a child that
 * enters them, becomes the user and only reads).  0 with app->container false when the
 * namespaces are the helper's; 0 with the bytes; -ENOENT: no cache there; other negative
 * errno: refused (logged). */
int spnego_app_read(const struct spnego_desc *d, gid_t gid, const gid_t *groups, size_t ngroups,
		    struct spnego_app *app);
/* As root: the KRB5CCNAME of the pid= process, in name, when that process runs as the
 * creduid= user (real or effective uid; not a mounter's, whose environment is root's).
 * 1 with it, 0 without ("" in name). */
int spnego_pid_ccname(const struct spnego_desc *d, char *name, size_t size);
/* As the user: the bytes read into a MEMORY cache, its name in cache. */
int spnego_app_cache(const struct spnego_app *app, char *cache, size_t size);
void spnego_app_free(struct spnego_app *app);
