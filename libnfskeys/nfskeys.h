/* libnfskeys: one user-space layer for network-filesystem keys, identity mapping,
 * directory cache policy and writeback throttling.  Every call returns 0 (or a
 * non-negative value) on success and a negative errno value on failure; output
 * parameters are named ret_* and written only on success. */
#pragma once

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- context */

struct nfskeys_ctx;

/* Log sink: priority is a syslog priority (LOG_ERR ... LOG_DEBUG). */
typedef void (*nfskeys_log_fn)(void *userdata, int priority, const char *file, int line,
			       const char *fn, const char *format, va_list args);

/* A context is not thread-safe (its reference count included): give each thread its own
 * or serialize access to it. */

/* Create a context and load configuration.  conf_path NULL means $NFSKEYS_CONF (ignored
 * when setuid) or SYSCONFDIR/nfskeys/nfskeys.conf; a missing default file is not an
 * error, a missing explicit file is (-ENOENT).  Drop-ins from conf.d/ next to the file
 * are read in lexical order after it; later values win.  Malformed configuration fails
 * with -EINVAL after logging "file:line: reason" at LOG_ERR to stderr. */
int nfskeys_ctx_new(const char *conf_path, struct nfskeys_ctx **ret_ctx);

/* As nfskeys_ctx_new(), but messages during loading already go to log_fn. */
int nfskeys_ctx_new_full(const char *conf_path, nfskeys_log_fn log_fn, void *userdata,
			 struct nfskeys_ctx **ret_ctx);

/* As nfskeys_ctx_new_full(), for a client that must go on when one conf.d drop-in has an
 * error (the request-key helper, `nfskeys idmapd ping`): a drop-in that cannot be parsed
 * is not fatal; its error is logged, the lines before it count and the rest of it does
 * not.  The main file must parse (-EINVAL otherwise, as nfskeys_ctx_new_full()).
 * *ret_skipped: how many drop-ins had errors. */
int nfskeys_ctx_new_partial(const char *conf_path, nfskeys_log_fn log_fn, void *userdata,
			    struct nfskeys_ctx **ret_ctx, unsigned *ret_skipped);

struct nfskeys_ctx *nfskeys_ctx_ref(struct nfskeys_ctx *ctx);
/* Drop a reference; NULL-safe; always returns NULL. */
struct nfskeys_ctx *nfskeys_ctx_unref(struct nfskeys_ctx *ctx);

/* Replace the log sink (NULL restores the default: stderr). */
void nfskeys_ctx_set_log_fn(struct nfskeys_ctx *ctx, nfskeys_log_fn log_fn, void *userdata);
/* Messages above this priority are dropped.  Default LOG_ERR, or $NFSKEYS_LOG
 * (err, warning, notice, info, debug or a number 0-7). */
int nfskeys_ctx_get_log_priority(const struct nfskeys_ctx *ctx);
void nfskeys_ctx_set_log_priority(struct nfskeys_ctx *ctx, int priority);
/* Log through the context's sink (for plugins and tools). */
void nfskeys_ctx_log(struct nfskeys_ctx *ctx, int priority, const char *file, int line,
		     const char *fn, const char *format, ...) __attribute__((format(printf, 6, 7)));

/* The main configuration file this context read (or would have read). */
const char *nfskeys_ctx_get_conf_path(const struct nfskeys_ctx *ctx);

/* ---------------------------------------------------------------- configuration */

/* The value of key in [section] (case-insensitive names), or NULL when unset. */
const char *nfskeys_conf_get(const struct nfskeys_ctx *ctx, const char *section,
			     const char *key);
/* Typed getters: -ENOENT when unset (ret untouched), -EINVAL when malformed. */
int nfskeys_conf_get_bool(const struct nfskeys_ctx *ctx, const char *section, const char *key,
			  bool *ret);
int nfskeys_conf_get_int(const struct nfskeys_ctx *ctx, const char *section, const char *key,
			 int64_t min, int64_t max, int64_t *ret);
/* Log (at LOG_WARNING, through the context's log function and priority as they are now)
 * the warnings of the configuration's load that the priority in force then dropped:
 * unknown sections and keys, with file and line.  For a daemon, which sets its priority
 * only after the context exists.  Returns how many. */
unsigned nfskeys_conf_log_warnings(struct nfskeys_ctx *ctx);
/* A duration: a number with an optional unit ms, s, m, h or d ("30", "30s", "5m", "1h");
 * without a unit it is in the key's own unit of unit_ms milliseconds (1000: seconds), and
 * the result is in that unit (rounded up), from min to max.  0; -ENOENT when unset;
 * -EINVAL when malformed; -ERANGE when out of range. */
int nfskeys_conf_get_duration(const struct nfskeys_ctx *ctx, const char *section,
			      const char *key, uint64_t unit_ms, int64_t min, int64_t max,
			      int64_t *ret);
/* A size in bytes with an optional K, M, G or T (powers of 1024), from min to max; the
 * returns of nfskeys_conf_get_duration(). */
int nfskeys_conf_get_size(const struct nfskeys_ctx *ctx, const char *section, const char *key,
			  int64_t min, int64_t max, int64_t *ret);
/* Call fn for every key of [section] in file order (after overrides); stops on fn < 0. */
int nfskeys_conf_foreach(const struct nfskeys_ctx *ctx, const char *section,
			 int (*fn)(void *userdata, const char *key, const char *value),
			 void *userdata);

/* ---------------------------------------------------------------- secrets */

/* A buffer for passwords, session keys and tickets: mlock()ed when possible, wiped
 * on free and never copied elsewhere by the library. */
struct nfskeys_secret;

int nfskeys_secret_new(size_t capacity, struct nfskeys_secret **ret_secret);
/* Wipe and free; NULL-safe; returns NULL. */
struct nfskeys_secret *nfskeys_secret_free(struct nfskeys_secret *secret);
void *nfskeys_secret_data(struct nfskeys_secret *secret);
size_t nfskeys_secret_len(const struct nfskeys_secret *secret);
size_t nfskeys_secret_capacity(const struct nfskeys_secret *secret);
/* Set the used length (<= capacity); bytes past it are wiped. */
int nfskeys_secret_set_len(struct nfskeys_secret *secret, size_t len);
/* Read one line (a password) of at most max bytes: from the terminal without echo when
 * fd is a terminal (prompt written to stderr), else from fd.  The newline is dropped.
 * -EMSGSIZE when longer than max, -ENODATA on empty input or end of input.  While echo is
 * off, SIGINT, SIGQUIT, SIGTERM and SIGHUP are caught: the terminal is restored, the
 * caller's handlers put back, and the signal raised again (by default the process ends
 * by it; -EINTR if a handler of the caller returns). */
int nfskeys_secret_read_password(int fd, const char *prompt, size_t max,
				 struct nfskeys_secret **ret_secret);

/* ---------------------------------------------------------------- kernel keys */

/* Thin wrappers over libkeyutils; serials are key_serial_t values (int32). */
int nfskeys_key_add(const char *type, const char *description, const void *payload,
		    size_t plen, int32_t keyring, int32_t *ret_serial);
/* Search keyring (and what it links) for a key; -ENOKEY when absent.  A matching key
 * that was revoked or invalidated but not yet unlinked by the kernel's garbage collector
 * gives -EKEYREVOKED (an expired one -EKEYEXPIRED) instead. */
int nfskeys_key_search(int32_t keyring, const char *type, const char *description,
		       int32_t dest_keyring, int32_t *ret_serial);
/* request_key(2); callout NULL only searches, "" triggers an upcall without info. */
int nfskeys_key_request(const char *type, const char *description, const char *callout,
			int32_t dest_keyring, int32_t *ret_serial);
int nfskeys_key_instantiate(int32_t key, const void *payload, size_t plen, int32_t keyring);
int nfskeys_key_reject(int32_t key, unsigned timeout, unsigned error, int32_t keyring);
int nfskeys_key_set_timeout(int32_t key, unsigned timeout);
int nfskeys_key_link(int32_t key, int32_t keyring);
int nfskeys_key_unlink(int32_t key, int32_t keyring);
int nfskeys_key_revoke(int32_t key);
int nfskeys_key_invalidate(int32_t key);
/* Read a key's payload (user/rxrpc types; logon keys cannot be read).  *ret is malloc()ed
 * and NUL-terminated past ret_len; callers handling secrets should wipe it. */
int nfskeys_key_read(int32_t key, void **ret, size_t *ret_len);
/* Gain possession of keys in a keyring the process does not possess (for example the
 * kernel's ".id_resolver" keyring) by searching it from the user keyring into the
 * thread keyring.  Returns the keyring serial, -ENOKEY when not found. */
int nfskeys_key_possess_keyring(const char *description, int32_t *ret_serial);

struct nfskeys_key_info {
	int32_t serial;
	uid_t uid;
	gid_t gid;
	uint32_t perm;
	char type[64];
	char description[4096];
	int64_t expiry; /* seconds since the epoch, 0 when the key does not expire */
};
/* Describe a key ("type;uid;gid;perm;description" parsed into info). */
int nfskeys_key_describe(int32_t key, struct nfskeys_key_info *ret_info);
/* Parse a describe string as the kernel writes it. */
int nfskeys_key_parse_description(const char *text, struct nfskeys_key_info *ret_info);
/* The serials linked in a keyring; *ret is malloc()ed. */
int nfskeys_keyring_list(int32_t keyring, int32_t **ret, size_t *ret_count);

#ifdef __cplusplus
}
#endif

#include "nfskeys-cred.h"
#include "nfskeys-idmap.h"
#include "nfskeys-attr.h"
#include "nfskeys-wb.h"
