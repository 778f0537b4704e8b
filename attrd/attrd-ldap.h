/* nfskeys-attrd's optional fleet sync: periodically read directory policies from an LDAP
 * subtree (layout in data/nfskeys-attr.schema) and make them the store's LDAP-sourced
 * rows, keeping the last good copy through LDAP outages.  Internal to the daemon. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nfskeys.h"

struct attrd_ldap;
struct stats_metric;
struct evloop;

/* From [Attrd] LDAP-URI, LDAP-Base, LDAP-Bind-DN, LDAP-Bind-Password-File,
 * LDAP-StartTLS, LDAP-CA-File, LDAP-Allow-Cleartext-Bind, Sync-Interval, Sync-Splay,
 * LDAP-Timeout.
 * *ret NULL (and 0) when no LDAP-URI is configured. */
int attrd_ldap_new(struct nfskeys_ctx *ctx, struct attrd_ldap **ret);
/* Validate those settings (a bad value, or a bind password that would go in clear):
 * 0, or a negative errno with err saying why.  Start and reload call it first. */
int attrd_ldap_check(struct nfskeys_ctx *ctx, char *err, size_t err_size);
void attrd_ldap_free(struct attrd_ldap *l);
/* Take new settings (SIGHUP); they apply from the next sync. */
int attrd_ldap_configure(struct attrd_ldap *l, struct nfskeys_ctx *ctx);
/* Microseconds until the next sync: Sync-Interval (none before the first) plus a random
 * splay of up to Sync-Splay, so that a fleet started together does not sync in lockstep. */
int64_t attrd_ldap_delay_usec(const struct attrd_ldap *l, bool first);
/* Fetch in a worker thread; the result is applied to *store on the loop thread (through
 * evloop_post).  A sync already running makes this a no-op. */
void attrd_ldap_sync(struct attrd_ldap *l, struct evloop *loop, struct nfskeys_attr_store **store);
/* Append the sync metrics to m (at most max); returns how many. */
size_t attrd_ldap_metrics(struct attrd_ldap *l, struct stats_metric *m, size_t max);
