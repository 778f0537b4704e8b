/* idmap backend "ldap": RFC 2307 posixAccount/posixGroup entries, or Active Directory's
 * users and groups with their RFC 2307 attributes ([LDAP] Schema = ad), plus a
 * configurable attribute holding the NFSv4 name ("name@domain").  A small pool of
 * persistent connections ([LDAP] Pool-Size), each used by one lookup at a time, so that
 * searches of concurrent lookups run in parallel; connect and search timeouts; after a
 * failure the server is not retried until a backoff (1 s doubling to Backoff-Max)
 * passes, so a dead server costs callers a bounded, immediate -EHOSTDOWN instead of a
 * timeout each.  A search that times out while the server answers others (a slow one,
 * common/ldap-live.c) fails its own lookup alone (-ETIMEDOUT), with no backoff.
 * Filters are escaped with ldap_bv2escaped_filter_value().  TLS (StartTLS, ldaps://, the
 * CA, no bind password in clear) is common/ldap-tls.c, shared with nfskeys-attrd's
 * fleet sync; the keytab's SASL GSSAPI bind is ldap-gss.c.  Names:
 * the NFSv4-name attribute always; the user/group name attribute for name@our-domain
 * (the NFSv4 domain, Name-Domain, a Local-Realms realm), and for a bare name (no
 * @domain) only with [Translation] No-Strip, as the nsswitch backend and nfsidmap.  Ids
 * as AD keeps them too: 2^31 and more stored negative (ldap-values.c).  With [LDAP]
 * Unique-Ids a name -> id search also gives the engine that id's name, formatted from
 * the same entry as an id -> name search would (lookup_pair): one search per new owner
 * instead of two.  A principal's groups ([LDAP] Group-Membership): memberUid, or in AD
 * the user's tokenGroups or its nested member (principal_groups). */
#include <fcntl.h>
#include <inttypes.h>
#include <ldap.h>
#include <pthread.h>
#include <strings.h>
#include <time.h>

#include "idmap-ldap.h"
#include "ldap-gss.h"
#include "ldap-live.h"
#include "ldap-tls.h"
#include "ldap-values.h"

/* One pooled connection: used by one lookup at a time, opened when first needed. */
struct ldap_slot {
	LDAP *ld;
	struct ldap_tls tls; /* d->tls, with this handle's handshake state (outlives ld) */
	bool busy;
	char last_error[320]; /* of the lookup using it */
};

struct ldap_data {
	pthread_mutex_t lock; /* the slots' busy flags and the shared state below */
	pthread_cond_t free_slot;
	struct nfskeys_ctx *ctx;
	struct ldap_conf c;
	struct ldap_gss gss; /* SASL-Mech = GSSAPI */
	bool gss_ready;      /* gss initialised (to be released) */
	struct ldap_tls tls; /* points into c; each connection works on its own copy */
	unsigned pool_size;
	struct ldap_slot *slots;
	/* the server's state, shared by all connections: one failure backs them all off */
	int64_t retry_at; /* mono_ms(); 0: not backed off */
	int backoff;
	char last_error[320];
	struct ldap_live live; /* its last reply on any connection; slow searches */
	/* the notice that a user's tokenGroups cannot be read was logged, and no lookup has
	 * read tokenGroups since (atomic) */
	bool tg_unreadable_said;
};

/* Milliseconds: failures of the connections a moment apart fall in one backoff, even
 * across a second's boundary. */
static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void ldap_done(void *data)
{
	struct ldap_data *d = data;

	if (!d)
		return;
	for (unsigned i = 0; d->slots && i < d->pool_size; i++)
		if (d->slots[i].ld)
			ldap_unbind_ext_s(d->slots[i].ld, NULL, NULL);
	free(d->slots);
	if (d->gss_ready)
		ldap_gss_done(&d->gss);
	ldap_conf_free(&d->c);
	pthread_cond_destroy(&d->free_slot);
	pthread_mutex_destroy(&d->lock);
	free(d);
}

static int ldap_init_backend(struct nfskeys_ctx *ctx, void **ret_data)
{
	struct ldap_data *d = calloc(1, sizeof(*d));
	int r;

	if (!d)
		return -ENOMEM;
	ldap_pin_library();
	pthread_mutex_init(&d->lock, NULL);
	pthread_cond_init(&d->free_slot, NULL);
	d->ctx = ctx;
	r = ldap_conf_read(ctx, &d->c);
	if (r < 0) {
		ldap_done(d);
		return r;
	}
	d->pool_size = (unsigned)d->c.pool_size;
	d->slots = calloc(d->pool_size, sizeof(*d->slots));
	if (!d->slots) {
		ldap_done(d);
		return -ENOMEM;
	}
	if (ldap_is_ldap_url(d->c.uri) == 0 && strncmp(d->c.uri, "ldapi://", 8) != 0) {
		plog(ctx, LOG_ERR, "[LDAP] URI: '%s' is not an ldap:// or ldaps:// URL", d->c.uri);
		ldap_done(d);
		return -EINVAL;
	}
	d->tls = (struct ldap_tls){ .uri = d->c.uri, .ca_file = d->c.ca_file,
				    .start_tls = d->c.start_tls, .section = "[LDAP] ",
				    .key_prefix = "" };
	/* a bind password never goes over a cleartext connection unless the admin says so */
	if (d->c.bind_dn[0] && d->c.bind_pw_file[0]) {
		char err[512];

		r = ldap_tls_check_bind(&d->tls, d->c.allow_cleartext_bind, err, sizeof(err));
		if (r < 0) {
			plog(ctx, LOG_ERR, "%s", err);
			ldap_done(d);
			return r == -EPERM ? -EINVAL : r;
		}
	}
	/* GSSAPI: the keytab must be there and hold the principal now, not at the first
	 * lookup (no password: Kerberos protects the bind, and signs and seals the rest) */
	if (d->c.gssapi) {
		char err[512];

		r = ldap_gss_init(&d->gss, "[LDAP] ", d->c.keytab, d->c.principal, err,
				  sizeof(err));
		d->gss_ready = true;
		if (r < 0) {
			plog(ctx, LOG_ERR, "idmap ldap: %s", err);
			ldap_done(d);
			return r;
		}
	}
	*ret_data = d;
	return 0;
}

/* Read the bind password from its file into a secret buffer (wiped by the caller). */
static int read_password(struct ldap_data *d, struct nfskeys_secret **ret)
{
	int fd = open(d->c.bind_pw_file, O_RDONLY | O_CLOEXEC), r;

	if (fd < 0)
		return negerrno();
	r = nfskeys_secret_read_password(fd, NULL, 512, ret);
	close(fd);
	return r;
}

static int fail_down(struct ldap_data *d, struct ldap_slot *s, int err, const char *what)
{
	bool said = false;
	int backoff;

	/* libldap's text and the server's diagnostic, or the certificate named when a TLS
	 * handshake failed */
	if (what)
		ldap_tls_error(&s->tls, s->ld, what, err, s->last_error, sizeof(s->last_error));
	if (s->ld) {
		ldap_unbind_ext_s(s->ld, NULL, NULL);
		s->ld = NULL;
	}
	pthread_mutex_lock(&d->lock);
	/* connections failing together (a server gone under several searches) back off
	 * once, and say so once, not once each */
	if (!d->retry_at || mono_ms() >= d->retry_at) {
		d->backoff = d->backoff ? MIN(d->backoff * 2, d->c.backoff_max) : 1;
		d->retry_at = mono_ms() + (int64_t)d->backoff * 1000;
		said = true;
	}
	backoff = d->backoff;
	memcpy(d->last_error, s->last_error, sizeof(d->last_error));
	pthread_mutex_unlock(&d->lock);
	if (said)
		plog(d->ctx, LOG_WARNING, "idmap ldap: %s (next try in %d s)", s->last_error,
		     backoff);
	return -EHOSTDOWN;
}

/* A failed GSSAPI bind: its message (principal, keytab, cause) is already in
 * s->last_error; the server is backed off as for any failed bind. */
static int fail_gss(struct ldap_data *d, struct ldap_slot *s, int err)
{
	char msg[sizeof(s->last_error) + 256];
	size_t n;

	snprintf(msg, sizeof(msg), "%s: %s", d->c.uri, s->last_error);
	n = MIN(strlen(msg), sizeof(s->last_error) - 1);
	memcpy(s->last_error, msg, n);
	s->last_error[n] = '\0';
	return fail_down(d, s, err, NULL);
}

/* libldap reads a reply's BER header and then its body, two reads a message and a poll
 * between the entry and the result: a read-ahead layer above TCP (below TLS) takes what
 * the socket holds in one read, and a result already read needs no poll.  Best effort:
 * without it the connection only costs more system calls. */
static void sockbuf_readahead(LDAP *ld)
{
	Sockbuf *sb = NULL;

	if (ldap_get_option(ld, LDAP_OPT_SOCKBUF, &sb) == LDAP_OPT_SUCCESS && sb)
		(void)ber_sockbuf_add_io(sb, &ber_sockbuf_io_readahead, LBER_SBIOD_LEVEL_PROVIDER,
					 NULL);
}

/* Make sure s->ld is a bound connection (s is ours: the lock is not held). */
static int ensure_connected(struct ldap_data *d, struct ldap_slot *s)
{
	struct timeval tv = { .tv_sec = d->c.timeout };
	int version = LDAP_VERSION3, r;
	bool down;

	if (s->ld)
		return 0;
	pthread_mutex_lock(&d->lock);
	down = d->retry_at && mono_ms() < d->retry_at;
	if (down)
		memcpy(s->last_error, d->last_error, sizeof(s->last_error));
	pthread_mutex_unlock(&d->lock);
	if (down)
		return -EHOSTDOWN;
	s->tls = d->tls; /* the handshake flag is the connection's own */
	r = ldap_initialize(&s->ld, d->c.uri);
	if (r != LDAP_SUCCESS)
		return fail_down(d, s, r, "initialize");
	ldap_set_option(s->ld, LDAP_OPT_PROTOCOL_VERSION, &version);
	ldap_set_option(s->ld, LDAP_OPT_NETWORK_TIMEOUT, &tv);
	ldap_set_option(s->ld, LDAP_OPT_TIMEOUT, &tv);
	ldap_set_option(s->ld, LDAP_OPT_REFERRALS, LDAP_OPT_OFF);
	/* the CA applies to StartTLS and to ldaps:// alike; the certificate is always
	 * verified, and a failed StartTLS never falls back to plain LDAP: the backend is
	 * then down */
	r = ldap_tls_setup(s->ld, &s->tls);
	if (r != LDAP_SUCCESS)
		return fail_down(d, s, r, d->c.start_tls ? "StartTLS" : "connect");
	if (d->c.gssapi) {
		r = ldap_gss_bind(&d->gss, s->ld, s->last_error, sizeof(s->last_error));
		if (r != LDAP_SUCCESS)
			return fail_gss(d, s, r);
	} else if (d->c.bind_dn[0]) {
		struct nfskeys_secret *pw = NULL;
		struct berval cred;

		if (!d->c.bind_pw_file[0] || read_password(d, &pw) < 0) {
			snprintf(s->last_error, sizeof(s->last_error),
				 "cannot read [LDAP] Bind-Password-File");
			plog(d->ctx, LOG_ERR, "idmap ldap: %s", s->last_error);
			ldap_unbind_ext_s(s->ld, NULL, NULL);
			s->ld = NULL;
			return -EACCES;
		}
		cred.bv_val = nfskeys_secret_data(pw);
		cred.bv_len = nfskeys_secret_len(pw);
		r = ldap_sasl_bind_s(s->ld, d->c.bind_dn, LDAP_SASL_SIMPLE, &cred, NULL, NULL, NULL);
		nfskeys_secret_free(pw);
		if (r != LDAP_SUCCESS)
			return fail_down(d, s, r, "bind");
	} else {
		/* an anonymous "whoami" proves the server is there */
		struct berval anon = { 0, NULL };

		r = ldap_sasl_bind_s(s->ld, NULL, LDAP_SASL_SIMPLE, &anon, NULL, NULL, NULL);
		if (r != LDAP_SUCCESS)
			return fail_down(d, s, r, "anonymous bind");
	}
	sockbuf_readahead(s->ld);
	ldap_live_replied(&d->live);
	pthread_mutex_lock(&d->lock);
	d->backoff = 0;
	d->retry_at = 0;
	d->last_error[0] = '\0';
	pthread_mutex_unlock(&d->lock);
	return 0;
}

static bool server_gone(int r)
{
	return r == LDAP_SERVER_DOWN || r == LDAP_CONNECT_ERROR || r == LDAP_TIMEOUT ||
	       r == LDAP_UNAVAILABLE || r == LDAP_BUSY;
}

/* Escape one value for a filter; *ret malloc()ed by libldap (ber_memfree). */
static int escape(const char *value, char **ret)
{
	struct berval in = { strlen(value), (char *)value }, out = { 0, NULL };

	if (ldap_bv2escaped_filter_value(&in, &out) != 0)
		return -ENOMEM;
	*ret = out.bv_val;
	return 0;
}

/* Notices of slow searches: the first, then one a minute at most with the count. */
#define SLOW_NOTICE_INTERVAL 60

/* A search of kind what ("user name", "uid", ...: never the filter, which holds the name
 * asked for) timed out on s while the server answered others: it fails alone.  libldap
 * abandoned it; its connection is closed (what it still holds is unknown), the backend
 * is not backed off. */
static int fail_slow(struct ldap_data *d, struct ldap_slot *s, const char *what)
{
	uint64_t n, total;

	ldap_unbind_ext_s(s->ld, NULL, NULL);
	s->ld = NULL;
	snprintf(s->last_error, sizeof(s->last_error),
		 "%s: a %s search took longer than [LDAP] Search-Timeout (%d s) while the "
		 "server answered others",
		 d->c.uri, what, d->c.search_timeout);
	if (ldap_live_slow_due(&d->live, SLOW_NOTICE_INTERVAL, &n, &total))
		plog(d->ctx, LOG_WARNING,
		     "idmap ldap: %s: that lookup failed, the server is not backed off (%" PRIu64
		     " slow search%s since the last notice, %" PRIu64 " in all; next notice in "
		     "%d s at the earliest)",
		     s->last_error, n, n == 1 ? "" : "es", total, SLOW_NOTICE_INTERVAL);
	return -ETIMEDOUT;
}

/* Run one search of scope, at most limit entries (retrying once on a dropped connection);
 * *ret_msg on success, and *cut (when not NULL) whether the server had more entries.
 * what names the kind of search in messages.  -EHOSTDOWN when the server is down (backed
 * off), -ETIMEDOUT when this search alone was slow, -EIO for another failure. */
static int search_ext(struct ldap_data *d, struct ldap_slot *s, const char *what, const char *base,
		      int scope, const char *filter, char **attrs, int limit, LDAPMessage **ret_msg,
		      bool *cut)
{
	struct timeval tv = { .tv_sec = d->c.search_timeout };
	bool slow;
	int r;

	if (cut)
		*cut = false;
	for (int attempt = 0; attempt < 2; attempt++) {
		LDAPMessage *msg = NULL;

		r = ensure_connected(d, s);
		if (r < 0)
			return r;
		r = ldap_live_search(&d->live, s->ld, base, scope, filter, attrs, &tv, limit, &msg,
				     &slow);
		if (r == LDAP_SUCCESS || r == LDAP_SIZELIMIT_EXCEEDED) {
			if (cut)
				*cut = r == LDAP_SIZELIMIT_EXCEEDED;
			*ret_msg = msg;
			return 0;
		}
		if (msg)
			ldap_msgfree(msg);
		if (r == LDAP_NO_SUCH_OBJECT) {
			*ret_msg = NULL;
			return 0;
		}
		/* slow, not gone: another connection had a reply since this search went */
		if (r == LDAP_TIMEOUT && slow)
			return fail_slow(d, s, what);
		if (!server_gone(r)) {
			snprintf(s->last_error, sizeof(s->last_error), "search %s: %s", filter,
				 ldap_err2string(r));
			return -EIO;
		}
		/* a stale persistent connection: reconnect once now; a timeout with every
		 * connection silent since the search went: the server is gone or stopped */
		ldap_unbind_ext_s(s->ld, NULL, NULL);
		s->ld = NULL;
		if (attempt == 1 || r == LDAP_TIMEOUT)
			return fail_down(d, s, r, "search");
	}
	return -EHOSTDOWN;
}

static int search(struct ldap_data *d, struct ldap_slot *s, const char *what, const char *base,
		  const char *filter, char **attrs, LDAPMessage **ret_msg)
{
	return search_ext(d, s, what, base, LDAP_SCOPE_SUBTREE, filter, attrs, 16, ret_msg, NULL);
}

static int first_value(LDAP *ld, LDAPMessage *e, const char *attr, char *buf, size_t size)
{
	struct berval **v = ldap_get_values_len(ld, e, attr);
	int r = -ENOENT;

	if (v && v[0] && v[0]->bv_len < size && !memchr(v[0]->bv_val, '\0', v[0]->bv_len)) {
		memcpy(buf, v[0]->bv_val, v[0]->bv_len);
		buf[v[0]->bv_len] = '\0';
		r = 0;
	}
	ldap_value_free_len(v);
	return r;
}

static int value_id(LDAP *ld, LDAPMessage *e, const char *attr, uint32_t *ret)
{
	struct berval **v = ldap_get_values_len(ld, e, attr);
	int r = v && v[0] ? ldap_value_id(v[0]->bv_val, v[0]->bv_len, ret) : -ENOENT;

	ldap_value_free_len(v);
	return r;
}

/* The id in attribute attr of entry e, the entry the key named; when it has none or
 * one that is no id, -ENOENT with a reason naming the attribute and the entry (`explain`
 * then tells "found, but no uidNumber" from "no such user"). */
static int entry_id(struct ldap_data *d, LDAP *ld, LDAPMessage *e, const char *attr,
		    struct nfskeys_idmap_request *req, uint32_t *ret)
{
	const char *what = req->kind == NFSKEYS_IDMAP_GROUP_TO_GID ? "group" : "user";
	struct berval **v = ldap_get_values_len(ld, e, attr);
	char val[40] = "", *dn;
	int r = v && v[0] ? ldap_value_id(v[0]->bv_val, v[0]->bv_len, ret) : -ENOENT;

	if (r == 0) {
		ldap_value_free_len(v);
		return 0;
	}
	/* the value as it is when short and printable, else what it is */
	for (size_t i = 0; v && v[0] && i < v[0]->bv_len && i < sizeof(val) - 1; i++)
		val[i] = v[0]->bv_val[i] >= 0x20 && v[0]->bv_val[i] < 0x7f ? v[0]->bv_val[i] : '?';
	ldap_value_free_len(v);
	dn = ldap_get_dn(ld, e);
	for (char *p = dn; p && *p; p++) /* the server's text: no control characters */
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	if (r == -ENOENT)
		util_reason(req, IDMAP_CAUSE_NO_ID,
			    "%s%s '%s' is in the directory but has no %s (entry %s)",
			    d->c.ad ? "AD " : "", what, req->key, attr, dn ? dn : "?");
	else
		util_reason(req, IDMAP_CAUSE_NO_ID,
			    "%s%s '%s' is in the directory but its %s '%s' is %s (entry %s)",
			    d->c.ad ? "AD " : "", what, req->key, attr, val,
			    r == -ERANGE ? "out of the range of ids" : "not a decimal id",
			    dn ? dn : "?");
	ldap_memfree(dn);
	return -ENOENT;
}

/* name@X is ours when X is the NFSv4 domain, [LDAP] Name-Domain or a realm of [General]
 * Local-Realms: in AD, user@dns.domain and user@REALM name the same account */
static bool domain_ok(struct ldap_data *d, const struct nfskeys_idmap_request *req)
{
	return util_domain_is_ours(req) ||
	       (d->c.name_domain[0] && strcaseeq(req->domain, d->c.name_domain)) ||
	       util_realm_is_local(d->ctx, req->domain, req->nfs_domain);
}

/* Whether name is user@domain (case as the domain comparison of util_domain_is_ours). */
static bool name_in_domain(const char *name, const char *domain)
{
	const char *at = strrchr(name, '@');

	return at && at != name && domain && strcaseeq(at + 1, domain);
}

/* The id -> name answer of entry e: its NFSv4 name when that has an @domain, else its
 * user/group name in our domain.  One formatting for both paths, so that a reverse
 * answer taken from a name search is byte for byte what the id search gives. */
static int entry_name(struct ldap_data *d, LDAP *ld, LDAPMessage *e, const char *name_attr,
		      const char *nfs_domain, struct nfskeys_idmap_answer *ret)
{
	char v[NFSKEYS_IDMAP_NAME_MAX];

	if (first_value(ld, e, d->c.nfs_attr, v, sizeof(v)) == 0 && strchr(v, '@'))
		return util_answer_name(ret, v, NULL);
	if (first_value(ld, e, name_attr, v, sizeof(v)) == 0)
		return util_answer_name(ret, v, d->c.name_domain[0] ? d->c.name_domain : nfs_domain);
	return -EBADMSG;
}

/* SIDs of tokenGroups taken into one search at most: a token of AD holds 1015 groups at
 * most, so a real one is never cut. */
#define AD_TOKEN_SIDS_MAX 1024

/* The filter value of a binary SID: each byte escaped (what AD and Samba match
 * objectSid with in any version).  0, or -EINVAL when v is no SID. */
static int sid_filter(const struct berval *v, char **p, char *end)
{
	const unsigned char *b = (const unsigned char *)v->bv_val;

	if (v->bv_len < 8 || v->bv_len != 8 + 4 * (size_t)b[1] || b[1] > 15 ||
	    (size_t)(end - *p) < 16 + 3 * v->bv_len)
		return -EINVAL;
	*p += sprintf(*p, "(objectSid=");
	for (size_t i = 0; i < v->bv_len; i++)
		*p += sprintf(*p, "\\%02x", b[i]);
	*p += sprintf(*p, ")");
	return 0;
}

/* Whether the notice that tokenGroups cannot be read is due after a lookup that could
 * (readable) or could not read them: once, as a bind without the right stays so, and
 * again only after tokenGroups were read in between. */
static bool tg_notice_due(struct ldap_data *d, bool readable)
{
	if (readable) {
		if (__atomic_load_n(&d->tg_unreadable_said, __ATOMIC_RELAXED))
			__atomic_store_n(&d->tg_unreadable_said, false, __ATOMIC_RELAXED);
		return false;
	}
	return !__atomic_exchange_n(&d->tg_unreadable_said, true, __ATOMIC_RELAXED);
}

/* Schema = ad: the filter of the groups (with a gid) user entry e is in, transitively,
 * into *ret: those of its tokenGroups (Group-Membership = token-groups; one base
 * search of the user's entry, AD computes the closure), or those whose member has the
 * user's DN through any chain of nested groups (member, or token-groups when the
 * tokenGroups cannot be read: one search, the server follows the nesting).  Groups
 * without gidNumber are left out: this backend maps names and ids of the directory
 * only; a gid for a SID is the sid backend's. */
static int ad_groups_filter(struct ldap_data *d, struct ldap_slot *s, LDAPMessage *e,
			    struct nfskeys_idmap_request *req, char **ret)
{
	const struct ldap_conf *c = &d->c;
	char *attrs[] = { "tokenGroups", NULL };
	char *dn = ldap_get_dn(s->ld, e), *edn = NULL, *f, *p;
	struct berval **v = NULL;
	LDAPMessage *msg = NULL;
	size_t n = 0, size;
	int r;

	if (!dn)
		return -ENOMEM;
	if (c->groups == LDAP_GROUPS_TOKEN_GROUPS) {
		r = search_ext(d, s, "tokenGroups", dn, LDAP_SCOPE_BASE, "(objectClass=*)", attrs,
			       1, &msg, NULL);
		if (r < 0) {
			ldap_memfree(dn);
			return r;
		}
		if (msg && ldap_first_entry(s->ld, msg))
			v = ldap_get_values_len(s->ld, ldap_first_entry(s->ld, msg), "tokenGroups");
		ldap_msgfree(msg);
		n = v ? (size_t)ldap_count_values_len(v) : 0;
		/* every account is in one group at least (its primary group): none is no
		 * right to read them, or a directory that computes none */
		if (tg_notice_due(d, n > 0))
			plog(d->ctx, LOG_NOTICE,
			     "idmap ldap: the tokenGroups of %s cannot be read: groups by nested "
			     "member instead (not said again until tokenGroups are read)",
			     req->key);
	}
	if (n) {
		if (n > AD_TOKEN_SIDS_MAX) {
			plog(d->ctx, LOG_WARNING,
			     "idmap ldap: %s has %zu tokenGroups: only the first %d are looked up",
			     req->key, n, AD_TOKEN_SIDS_MAX);
			n = AD_TOKEN_SIDS_MAX;
		}
		size = 64 + strlen(c->group_class) + strlen(c->gidnum_attr) + n * (16 + 3 * 68);
		f = malloc(size);
		if (!f) {
			ldap_value_free_len(v);
			ldap_memfree(dn);
			return -ENOMEM;
		}
		p = f + sprintf(f, "(&(objectClass=%s)(%s=*)(|", c->group_class, c->gidnum_attr);
		for (size_t i = 0; i < n; i++)
			(void)sid_filter(v[i], &p, f + size - 8); /* (a value no SID: skipped) */
		strcpy(p, "))");
		ldap_value_free_len(v);
		ldap_memfree(dn);
		*ret = f;
		return 0;
	}
	ldap_value_free_len(v);
	r = escape(dn, &edn);
	ldap_memfree(dn);
	if (r < 0)
		return r;
	r = asprintf(ret, "(&(objectClass=%s)(%s=*)(member:1.2.840.113556.1.4.1941:=%s))",
		     c->group_class, c->gidnum_attr, edn);
	ber_memfree(edn);
	return r < 0 ? -ENOMEM : 0;
}

/* The supplementary gids of a principal after ret->groups[0], its primary gid: at most
 * NFSKEYS_IDMAP_GROUPS_MAX in all, a log and NFSKEYS_IDMAP_ANSWER_TRUNCATED when the user
 * is in more.  Schema = ad: AD's membership (ad_groups_filter); else the groups whose
 * Member-Attr is the user's name (the user name attribute of entry e).  A server down
 * or a search timed out fails the lookup: the primary gid alone would be a wrong
 * answer, cached as a right one. */
static int principal_groups(struct ldap_data *d, struct ldap_slot *s, LDAPMessage *e,
			    struct nfskeys_idmap_request *req, struct nfskeys_idmap_answer *ret)
{
	const struct ldap_conf *c = &d->c;
	char *gattrs[] = { c->gidnum_attr, NULL };
	char *filter = NULL, uname[NFSKEYS_IDMAP_NAME_MAX], *euname = NULL;
	LDAPMessage *gm = NULL;
	bool cut = false;
	int r;

	if (c->groups != LDAP_GROUPS_MEMBER_UID) {
		r = ad_groups_filter(d, s, e, req, &filter);
		if (r < 0)
			return r;
	} else {
		if (first_value(s->ld, e, c->uid_attr, uname, sizeof(uname)) < 0 ||
		    escape(uname, &euname) < 0)
			return 0;
		r = asprintf(&filter, "(&(objectClass=%s)(%s=%s))", c->group_class, c->member_attr,
			     euname);
		ber_memfree(euname);
		if (r < 0)
			return -ENOMEM;
	}
	/* one entry more than fits, the primary group's among them, tells "more" */
	r = search_ext(d, s, "group membership", c->group_base, LDAP_SCOPE_SUBTREE, filter, gattrs,
		       NFSKEYS_IDMAP_GROUPS_MAX + 1, &gm, &cut);
	free(filter);
	if (r == -EHOSTDOWN || r == -ETIMEDOUT || (r < 0 && c->groups != LDAP_GROUPS_MEMBER_UID))
		return r;
	if (r < 0) /* member-uid, another failure (-EIO): the primary gid alone, as before */
		return 0;
	for (LDAPMessage *g = gm ? ldap_first_entry(s->ld, gm) : NULL; g;
	     g = ldap_next_entry(s->ld, g)) {
		uint32_t gid;
		bool dup = false;

		if (value_id(s->ld, g, c->gidnum_attr, &gid) < 0)
			continue;
		for (uint32_t i = 0; i < ret->n_groups && !dup; i++)
			dup = ret->groups[i] == gid;
		if (dup)
			continue;
		if (ret->n_groups >= NFSKEYS_IDMAP_GROUPS_MAX) {
			cut = true;
			break;
		}
		ret->groups[ret->n_groups++] = gid;
	}
	ldap_msgfree(gm);
	if (cut) {
		ret->flags |= NFSKEYS_IDMAP_ANSWER_TRUNCATED;
		plog(d->ctx, LOG_WARNING,
		     "idmap ldap: %s is in more than %d groups with a %s: the list is cut there",
		     req->key, NFSKEYS_IDMAP_GROUPS_MAX, c->gidnum_attr);
	}
	return 0;
}

/* The kind of a lookup's search, for messages. */
static const char *kind_what(enum nfskeys_idmap_kind kind)
{
	switch (kind) {
	case NFSKEYS_IDMAP_NAME_TO_UID:
		return "user name";
	case NFSKEYS_IDMAP_GROUP_TO_GID:
		return "group name";
	case NFSKEYS_IDMAP_PRINCIPAL_TO_IDS:
		return "principal";
	case NFSKEYS_IDMAP_UID_TO_NAME:
		return "uid";
	case NFSKEYS_IDMAP_GID_TO_GROUP:
		return "gid";
	default:
		return "";
	}
}

/* One lookup on connection s.  rev: also the reverse answer from the entry found, rev->kind 0
 * when there is none to give: for the name -> id kinds the id's name (Unique-Ids), for the
 * id -> name kinds the name's id (Unique-Names, a name in our domain only). */
static int lookup_on(struct ldap_data *d, struct ldap_slot *s, struct nfskeys_idmap_request *req,
		     struct nfskeys_idmap_answer *ret, struct nfskeys_idmap_answer *rev)
{
	const struct ldap_conf *c = &d->c;
	bool group = req->kind == NFSKEYS_IDMAP_GROUP_TO_GID ||
		     req->kind == NFSKEYS_IDMAP_GID_TO_GROUP;
	const char *oc = group ? c->group_class : c->user_class;
	const char *base = group ? c->group_base : c->user_base;
	const char *name_attr = group ? c->group_attr : c->uid_attr;
	char *attrs[] = { c->nfs_attr, (char *)name_attr, c->uidnum_attr, c->gidnum_attr, NULL };
	_cleanup_free_ char *filter = NULL;
	char *ekey = NULL, *ename = NULL;
	LDAPMessage *msg = NULL, *e;
	int r;

	switch (req->kind) {
	case NFSKEYS_IDMAP_NAME_TO_UID:
	case NFSKEYS_IDMAP_GROUP_TO_GID:
	case NFSKEYS_IDMAP_PRINCIPAL_TO_IDS:
		if (req->kind == NFSKEYS_IDMAP_PRINCIPAL_TO_IDS && req->domain &&
		    !util_realm_is_local(d->ctx, req->domain, req->nfs_domain))
			return util_reason(req, IDMAP_CAUSE_REALM, "realm '%s' is not in Local-Realms",
					   req->domain);
		if (escape(req->key, &ekey) < 0 || escape(req->name, &ename) < 0) {
			ber_memfree(ekey);
			return -ENOMEM;
		}
		/* the NFSv4-name attribute always; the name attribute in our own domain, and
		 * for a bare name only with No-Strip (as nsswitch: "alice" is not known to be
		 * in our domain) */
		if (req->kind != NFSKEYS_IDMAP_PRINCIPAL_TO_IDS &&
		    (req->domain ? !domain_ok(d, req) :
				   !(c->no_strip & util_no_strip_bit(req))))
			r = asprintf(&filter, "(&(objectClass=%s)(%s=%s))", oc, c->nfs_attr, ekey);
		else
			r = asprintf(&filter, "(&(objectClass=%s)(|(%s=%s)(%s=%s)))", oc, c->nfs_attr,
				     ekey, name_attr, ename);
		ber_memfree(ekey);
		ber_memfree(ename);
		if (r < 0)
			return -ENOMEM;
		break;
	case NFSKEYS_IDMAP_UID_TO_NAME:
	case NFSKEYS_IDMAP_GID_TO_GROUP:
	{
		char idf[128];

		/* AD keeps ids of 2^31 and more negative: either form matches */
		if (ldap_id_filter(group ? c->gidnum_attr : c->uidnum_attr, req->id, idf,
				   sizeof(idf)) < 0 ||
		    asprintf(&filter, "(&(objectClass=%s)%s)", oc, idf) < 0)
			return -ENOMEM;
		break;
	}
	default:
		return -ENOENT;
	}

	r = search(d, s, kind_what(req->kind), base, filter, attrs, &msg);
	if (r < 0) {
		if (r == -EHOSTDOWN || r == -ETIMEDOUT)
			util_reason(req, IDMAP_CAUSE_BACKEND_DOWN, "%s", s->last_error);
		return r;
	}
	e = msg ? ldap_first_entry(s->ld, msg) : NULL;
	if (!e) {
		ldap_msgfree(msg);
		if ((req->kind == NFSKEYS_IDMAP_NAME_TO_UID ||
		     req->kind == NFSKEYS_IDMAP_GROUP_TO_GID) &&
		    !req->domain && !(c->no_strip & util_no_strip_bit(req)))
			return util_reason(req, IDMAP_CAUSE_DOMAIN_MISMATCH,
					   "'%s' has no @domain (NFSv4 domain '%s') and is no %s "
					   "value; bare names map by %s only with [Translation] "
					   "No-Strip",
					   req->name, req->nfs_domain, c->nfs_attr, name_attr);
		if (req->domain && req->kind != NFSKEYS_IDMAP_PRINCIPAL_TO_IDS && !domain_ok(d, req))
			return util_reason(req, IDMAP_CAUSE_DOMAIN_MISMATCH,
					   "'%s' is in neither the NFSv4 domain '%s' nor [LDAP] "
					   "Name-Domain nor a realm of Local-Realms, and no %s "
					   "value (%s under %s)",
					   req->domain, req->nfs_domain, c->nfs_attr, filter, base);
		return util_reason(req, IDMAP_CAUSE_NO_SUCH, "no %s entry matches %s under %s", oc,
				   filter, base);
	}
	/* prefer the entry whose NFSv4 name is the key */
	for (LDAPMessage *x = e; x && req->domain; x = ldap_next_entry(s->ld, x)) {
		char v[NFSKEYS_IDMAP_NAME_MAX];

		if (first_value(s->ld, x, c->nfs_attr, v, sizeof(v)) == 0 && strcaseeq(v, req->key)) {
			e = x;
			break;
		}
	}
	switch (req->kind) {
	case NFSKEYS_IDMAP_NAME_TO_UID:
	case NFSKEYS_IDMAP_GROUP_TO_GID:
		r = entry_id(d, s->ld, e, group ? c->gidnum_attr : c->uidnum_attr, req, &ret->id);
		/* the id is this entry's alone (Unique-Ids): a search by it finds this entry
		 * (same objectClass, same base), so its name is the id -> name answer */
		if (r == 0 && rev && c->unique_ids) {
			rev->id = ret->id;
			if (entry_name(d, s->ld, e, name_attr, req->nfs_domain, rev) == 0)
				rev->kind = group ? NFSKEYS_IDMAP_GID_TO_GROUP :
						    NFSKEYS_IDMAP_UID_TO_NAME;
		}
		break;
	case NFSKEYS_IDMAP_PRINCIPAL_TO_IDS:
		r = entry_id(d, s->ld, e, c->uidnum_attr, req, &ret->id);
		if (r == 0)
			r = entry_id(d, s->ld, e, c->gidnum_attr, req, &ret->gid);
		if (r == 0) {
			ret->groups[0] = ret->gid;
			ret->n_groups = 1;
			r = principal_groups(d, s, e, req, ret);
			if (r == -EHOSTDOWN || r == -ETIMEDOUT)
				util_reason(req, IDMAP_CAUSE_BACKEND_DOWN, "%s", s->last_error);
		}
		break;
	default:
		ret->id = req->id;
		r = entry_name(d, s->ld, e, name_attr, req->nfs_domain, ret);
		/* the name is this entry's alone (Unique-Names): a search by it finds this
		 * entry (same objectClass, same base), whose id is the one searched for.  Only
		 * in our domain: a name elsewhere is searched by the NFSv4 name alone, and
		 * what the engine makes of a foreign domain is not the backend's to say. */
		if (r == 0 && rev && c->unique_names && name_in_domain(ret->name, req->nfs_domain)) {
			rev->id = req->id;
			rev->kind = group ? NFSKEYS_IDMAP_GROUP_TO_GID : NFSKEYS_IDMAP_NAME_TO_UID;
		}
		break;
	}
	ldap_msgfree(msg);
	/* (-ENOENT: entry_id() named the attribute) */
	if (r == -EBADMSG)
		return util_reason(req, IDMAP_CAUSE_NO_ID,
				   "the entry of '%s' has no usable %s or %s: no name to give",
				   req->key, c->nfs_attr, name_attr);
	return r;
}

static int lookup_with(struct ldap_data *d, struct nfskeys_idmap_request *req,
		       struct nfskeys_idmap_answer *ret, struct nfskeys_idmap_answer *rev)
{
	struct ldap_slot *s = NULL;
	int r;

	/* the first free connection (the lowest: a steady trickle keeps using one) */
	pthread_mutex_lock(&d->lock);
	for (;;) {
		for (unsigned i = 0; i < d->pool_size && !s; i++)
			if (!d->slots[i].busy)
				s = &d->slots[i];
		if (s)
			break;
		pthread_cond_wait(&d->free_slot, &d->lock);
	}
	s->busy = true;
	pthread_mutex_unlock(&d->lock);

	s->last_error[0] = '\0';
	r = lookup_on(d, s, req, ret, rev);
	if (r == -EHOSTDOWN && !req->reason[0])
		util_reason(req, IDMAP_CAUSE_BACKEND_DOWN, "%s (retrying after a backoff)",
			    s->last_error[0] ? s->last_error : "server unreachable");

	pthread_mutex_lock(&d->lock);
	s->busy = false;
	pthread_cond_signal(&d->free_slot);
	pthread_mutex_unlock(&d->lock);
	return r;
}

static int ldap_lookup(void *data, struct nfskeys_ctx *ctx, struct nfskeys_idmap_request *req,
		       struct nfskeys_idmap_answer *ret)
{
	return lookup_with(data, req, ret, NULL);
}

static int ldap_lookup_pair(void *data, struct nfskeys_ctx *ctx,
			    struct nfskeys_idmap_request *req, struct nfskeys_idmap_answer *ret,
			    struct nfskeys_idmap_answer *ret_reverse)
{
	ret_reverse->kind = 0;
	return lookup_with(data, req, ret, ret_reverse);
}

static const struct nfskeys_idmap_ops ops = {
	.size = sizeof(ops),
	.init = ldap_init_backend,
	.done = ldap_done,
	.lookup = ldap_lookup,
	.kinds = IDMAP_NAME_KINDS | IDMAP_ID_KINDS | IDMAP_PRINCIPAL_KINDS,
	.lookup_pair = ldap_lookup_pair,
};

static const struct nfskeys_plugin plugin = {
	.abi = NFSKEYS_PLUGIN_ABI,
	.size = sizeof(plugin),
	.kind = NFSKEYS_PLUGIN_IDMAP,
	.name = "idmap-ldap",
	.description = "ID mapping from LDAP (RFC 2307 or Active Directory, NFSv4 names)",
	.ops = &ops,
	.ops_size = sizeof(ops),
};

_public_ const struct nfskeys_plugin *nfskeys_plugin_entry(void)
{
	return &plugin;
}
