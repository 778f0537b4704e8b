/* What attrd-ldap.c (settings, the worker thread, applying a sync, metrics) and
 * attrd-ldap-fetch.c (one sync's LDAP conversation, in the worker) share.  Internal to the
 * fleet sync. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ldap-tls.h"
#include "nfskeys-attr-daemon.h"

struct attrd_ldap;

struct settings {
	char *uri, *base, *bind_dn, *pw_file, *ca_file;
	bool start_tls;
	unsigned interval, timeout;
	uint64_t splay_usec; /* [Attrd] Sync-Splay; unset: a tenth of Sync-Interval */
};

/* What the subtree looked like at a sync, from the entries' names and change stamps only:
 * how many entries, and an order-independent digest of each entry's DN with its entryCSN
 * (OpenLDAP) or else modifyTimestamp.  valid is false when there is nothing to compare
 * with (no good sync since start or reload) or when some entry had no stamp. */
struct sync_mark {
	bool valid;
	bool all_csn; /* every entry had an entryCSN: the next check asks for nothing else */
	uint64_t entries, digest;
};

struct result {
	struct attrd_ldap *l;
	struct attr_sync_row *rows;
	char **strings; /* everything rows point to */
	size_t n, nstrings;
	int error;
	char msg[512];
	bool unchanged;	      /* the cheap search matched the last mark: no rows read */
	struct sync_mark mark; /* of what this sync saw */
	uint64_t generation;   /* of the settings it ran with (a reload starts afresh) */
};

/* The TLS settings of s for common/ldap-tls.c. */
struct ldap_tls attrd_ldap_tls(const struct settings *s);
/* One sync with settings s: when last is valid, a search for the entries' change stamps
 * only, and when they match last, res->unchanged and nothing more; otherwise (or when last
 * is not valid) the full read of every entry into res->rows.  res->mark is what was seen;
 * res->error (negative errno) and res->msg on failure. */
void ldap_fetch(struct result *res, const struct settings *s, const struct sync_mark *last);
