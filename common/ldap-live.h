/* Whether an LDAP server is answering, as all the connections a backend keeps to it see
 * it: a search that times out is a slow search when the server sent a reply (to a search
 * or a bind) on any of them after that search went out, and a sign that the server is
 * gone or stopped when all were silent since.  Only the silent case should back the
 * backend off: a slow search fails its own lookup alone.  Thread-safe (atomics). */
#pragma once

#include <ldap.h>
#include <stdbool.h>
#include <stdint.h>

struct ldap_live {
	uint64_t last_reply_ns; /* CLOCK_MONOTONIC of the newest reply; 0: none yet */
	uint64_t slow;		/* slow searches so far */
	uint64_t slow_said;	/* of those, the ones a notice has counted */
	uint64_t said_ns;	/* when the last notice of slow searches was due */
};

/* A reply from the server came just now (a bind that succeeded, ...). */
void ldap_live_replied(struct ldap_live *l);

/* ldap_search_ext_s() on ld, with tv as both the server's time limit and ours, noting
 * any reply the server sent (every result but libldap's own negative codes).  When it
 * returns LDAP_TIMEOUT (libldap then abandoned the search), *ret_slow says whether the
 * server replied on another connection of l since this search was sent. */
int ldap_live_search(struct ldap_live *l, LDAP *ld, const char *base, int scope, const char *filter,
		     char **attrs, struct timeval *tv, int limit, LDAPMessage **res,
		     bool *ret_slow);

/* Count one slow search; true when a notice is due: the first, then at most one every
 * interval_s seconds, with *ret_n the slow searches since the last notice (this one
 * included) and *ret_total all of them. */
bool ldap_live_slow_due(struct ldap_live *l, unsigned interval_s, uint64_t *ret_n,
			uint64_t *ret_total);
