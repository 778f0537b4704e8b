/* Helpers shared by the ID-mapping backends (compiled into each plugin that needs them):
 * reentrant NSS lookups, the NFSv4 domain and Local-Realms checks, answer filling. */
#pragma once

#include <stdarg.h>
#include <syslog.h>

#include "idmap-plugin.h"
#include "macros.h"

/* Log through the context (plugins cannot use the library's internal macros). */
#define plog(ctx, prio, ...)                                                              \
	do {                                                                              \
		if (nfskeys_ctx_get_log_priority(ctx) >= (prio))                          \
			nfskeys_ctx_log(ctx, prio, __FILE__, __LINE__, __func__, __VA_ARGS__); \
	} while (0)

/* NSS lookups: 0, -ENOENT when absent, -EIO (or the NSS errno) when NSS failed. */
int util_getpwnam(const char *name, uint32_t *ret_uid, uint32_t *ret_gid);
int util_getgrnam(const char *name, uint32_t *ret_gid);
int util_getpwuid(uint32_t uid, char *buf, size_t size);
int util_getgrgid(uint32_t gid, char *buf, size_t size);

/* Fill ret->id (and for principals gid and groups) for a local user/group name. */
int util_answer_local(struct nfskeys_idmap_request *req, const char *local,
		      struct nfskeys_idmap_answer *ret);
/* "name@domain" into ret->name (just name when it already has '@' or domain is NULL). */
int util_answer_name(struct nfskeys_idmap_answer *ret, const char *name, const char *domain);

/* Is realm one of [General] Local-Realms (default: the NFSv4 domain in upper case)? */
bool util_realm_is_local(struct nfskeys_ctx *ctx, const char *realm, const char *nfs_domain);
/* Does the request's domain equal the NFSv4 domain (case-insensitively)? */
bool util_domain_is_ours(const struct nfskeys_idmap_request *req);

/* [Translation] No-Strip (none, user, group, both) as IDMAP_NO_STRIP_* bits; -EINVAL
 * (logged) for another value.  It decides whether names are looked up with their @domain
 * and whether bare names (no @domain) are mapped at all (nsswitch and ldap alike). */
enum { IDMAP_NO_STRIP_USER = 1, IDMAP_NO_STRIP_GROUP = 2 };
int util_no_strip(struct nfskeys_ctx *ctx, unsigned *ret_bits);
/* The IDMAP_NO_STRIP_* bit that applies to req's kind. */
unsigned util_no_strip_bit(const struct nfskeys_idmap_request *req);

/* Set req->cause and a formatted req->reason; returns -ENOENT for convenience. */
int util_reason(struct nfskeys_idmap_request *req, uint32_t cause, const char *fmt, ...)
	_printf_(3, 4);
