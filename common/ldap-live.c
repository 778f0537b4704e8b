/* A slow search told from a silent server (see ldap-live.h). */
#include "ldap-live.h"
#include "time-util.h"

void ldap_live_replied(struct ldap_live *l)
{
	uint64_t now = mono_nsec(), seen = __atomic_load_n(&l->last_reply_ns, __ATOMIC_RELAXED);

	/* the newest wins (threads store out of order) */
	while (seen < now && !__atomic_compare_exchange_n(&l->last_reply_ns, &seen, now, true,
							  __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

int ldap_live_search(struct ldap_live *l, LDAP *ld, const char *base, int scope, const char *filter,
		     char **attrs, struct timeval *tv, int limit, LDAPMessage **res, bool *ret_slow)
{
	uint64_t sent = mono_nsec();
	int r;

	*ret_slow = false;
	r = ldap_search_ext_s(ld, base, scope, filter, attrs, 0, NULL, NULL, tv, limit, res);
	/* libldap's own failures (no connection, timeout, ...) are negative: anything else is
	 * a result the server sent */
	if (r >= 0)
		ldap_live_replied(l);
	else if (r == LDAP_TIMEOUT)
		*ret_slow = __atomic_load_n(&l->last_reply_ns, __ATOMIC_RELAXED) > sent;
	return r;
}

bool ldap_live_slow_due(struct ldap_live *l, unsigned interval_s, uint64_t *ret_n,
			uint64_t *ret_total)
{
	uint64_t total = __atomic_add_fetch(&l->slow, 1, __ATOMIC_RELAXED);
	uint64_t now = mono_nsec(), said = __atomic_load_n(&l->said_ns, __ATOMIC_RELAXED);

	if (said && now - said < (uint64_t)interval_s * 1000000000ULL)
		return false;
	/* one thread of those finding the notice due says it */
	if (!__atomic_compare_exchange_n(&l->said_ns, &said, now, false, __ATOMIC_RELAXED,
					 __ATOMIC_RELAXED))
		return false;
	*ret_total = total;
	*ret_n = total - __atomic_exchange_n(&l->slow_said, total, __ATOMIC_RELAXED);
	return true;
}
