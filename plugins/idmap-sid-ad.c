/* The "ad" ranges of the sid backend ("S-1-5-21-A-B-C = ad MIN - MAX" in [SID]): the
 * answers of Samba winbind's idmap_ad with schema_mode = rfc2307.  A SID's entry is found
 * in the directory by objectSid; a user account (sAMAccountType user, computer or trust)
 * has its uidNumber as uid and no gid, a group (or alias) its gidNumber as gid and no
 * uid.  Values outside MIN-MAX, and values that are no unsigned 32-bit number (AD keeps
 * uidNumber as a signed 32-bit integer: 3000000000 reads back as -1294967296), map to
 * nothing.  Back: the one account or group whose uidNumber/gidNumber is the id.
 * One connection per ad range ([SID] AD-URI, AD-Base; a SASL GSSAPI bind from a keytab,
 * AD-SASL-Mech, AD-Keytab and AD-Principal, as the ldap backend's: ldap-gss.c; or a
 * simple bind as AD-Bind-DN with the password in AD-Bind-Password-File; TLS as the ldap
 * backend does it: common/ldap-tls.c), opened on first use and once more when the server
 * went away.  A domain's own S-1-5-21-A-B-C.AD-URI, .AD-Base, .AD-Bind-DN and
 * .AD-Bind-Password-File replace [SID]'s for its range: the directory of a domain
 * reached through a trust, as winbind's idmap_ad asks each domain's DC. */
#include <fcntl.h>
#include <inttypes.h>
#include <ldap.h>
#include <strings.h>
#include <sys/stat.h>

#include "conf-get.h"
#include "idmap-sid.h"
#include "idmap-util.h"
#include "ldap-gss.h"
#include "ldap-tls.h"
#include "macros.h"
#include "time-util.h"

#define UF_USERS "(|(sAMAccountType=805306368)(sAMAccountType=805306369)(sAMAccountType=805306370))"
#define UF_GROUPS                                                                          \
	"(|(sAMAccountType=268435456)(sAMAccountType=268435457)(sAMAccountType=536870912)" \
	"(sAMAccountType=536870913))"

struct sid_ad {
	pthread_mutex_t lock;
	char *uri, *base, *bind_dn, *pw_file, *ca_file, *keytab, *principal;
	/* the keys uri, bind_dn and pw_file came from, as written (a domain's own
	 * S-1-5-21-A-B-C.AD-URI, or [SID]'s AD-URI), for messages */
	const char *uri_key, *bind_dn_key, *pw_file_key;
	bool start_tls, allow_cleartext;
	bool gssapi;	/* AD-SASL-Mech = GSSAPI */
	bool gss_ready; /* gss initialised (to be released) */
	struct ldap_gss gss;
	int timeout;
	struct ldap_tls tls;
	LDAP *ld;
	/* After the directory failed (no connection, or a search that timed out): searches
	 * fail at once until down_until (CLOCK_MONOTONIC ns), backoff_s doubling per failure */
	uint64_t down_until;
	unsigned backoff_s;
};

/* The longest wait between tries while the directory fails, as [LDAP] Backoff-Max's
 * default. */
#define AD_BACKOFF_MAX_S 30

/* A decimal number below 2^32 at *p (after blanks); *p moves past it and the blanks. */
static bool parse_u32(const char **p, uint32_t *ret)
{
	uint64_t v = 0;
	const char *s = *p + strspn(*p, " \t");

	if (*s < '0' || *s > '9')
		return false;
	for (; *s >= '0' && *s <= '9'; s++)
		if ((v = v * 10 + (uint64_t)(*s - '0')) > UINT32_MAX)
			return false;
	*ret = (uint32_t)v;
	*p = s + strspn(s, " \t");
	return true;
}

const char *sid_parse_range(const char *value, struct fixed_range *fr)
{
	const char *p = value + strspn(value, " \t");
	size_t n = strcspn(p, " \t0123456789");

	fr->ad = n == 2 && !strncmp(p, "ad", 2);
	if (n && !fr->ad && !(n == 3 && !strncmp(p, "rid", 3)))
		return "the kind of range is rid (the default) or ad";
	p += n;
	if (!parse_u32(&p, &fr->min) || *p++ != '-' || !parse_u32(&p, &fr->max) || *p)
		return "expected [rid|ad] MIN - MAX, numbers below 2^32";
	if (fr->min == 0 || fr->min > fr->max)
		return "MIN must be above 0 and at most MAX";
	return NULL;
}

/* [SID] key, or the domain's own S-1-5-21-A-B-C.key when it has one; *ret_key (when not
 * NULL) is the key the value came from as the file writes it, for messages */
static char *conf_dup(struct nfskeys_ctx *ctx, const struct sid_data *d,
		      const struct fixed_range *fr, const char *key, const char **ret_key)
{
	const char *v = nfskeys_conf_get(ctx, "SID", key);

	if (ret_key)
		*ret_key = key;
	for (size_t i = 0; i < d->n_dom_keys; i++)
		if (!memcmp(d->dom_keys[i].dom, fr->dom, sizeof(fr->dom)) &&
		    !strcmp(d->dom_keys[i].key, key)) {
			v = d->dom_keys[i].value;
			if (ret_key)
				*ret_key = d->dom_keys[i].text;
		}
	return strdup(v ? v : "");
}

void sid_ad_done(struct sid_ad *a)
{
	if (!a)
		return;
	if (a->ld)
		ldap_unbind_ext_s(a->ld, NULL, NULL);
	if (a->gss_ready)
		ldap_gss_done(&a->gss);
	pthread_mutex_destroy(&a->lock);
	free(a->keytab);
	free(a->principal);
	free(a->uri);
	free(a->base);
	free(a->bind_dn);
	free(a->pw_file);
	free(a->ca_file);
	free(a);
}

int sid_ad_init(struct nfskeys_ctx *ctx, struct sid_data *d, struct fixed_range *fr)
{
	struct sid_ad *a = calloc(1, sizeof(*a));
	const char *mech;
	char err[512];
	bool b;
	int r;

	if (!a)
		return -ENOMEM;
	fr->dir = a;
	pthread_mutex_init(&a->lock, NULL);
	a->uri = conf_dup(ctx, d, fr, "AD-URI", &a->uri_key);
	a->base = conf_dup(ctx, d, fr, "AD-Base", NULL);
	a->bind_dn = conf_dup(ctx, d, fr, "AD-Bind-DN", &a->bind_dn_key);
	a->pw_file = conf_dup(ctx, d, fr, "AD-Bind-Password-File", &a->pw_file_key);
	a->ca_file = conf_dup(ctx, d, fr, "AD-CA-File", NULL);
	a->keytab = conf_dup(ctx, d, fr, "AD-Keytab", NULL);
	a->principal = conf_dup(ctx, d, fr, "AD-Principal", NULL);
	if (!a->uri || !a->base || !a->bind_dn || !a->pw_file || !a->ca_file || !a->keytab ||
	    !a->principal)
		return -ENOMEM;
	mech = nfskeys_conf_get(ctx, "SID", "AD-SASL-Mech");
	if (mech && *mech && !strcaseeq(mech, "GSSAPI")) {
		plog(ctx, LOG_ERR, "[SID] AD-SASL-Mech = %s: only GSSAPI is supported", mech);
		return -EINVAL;
	}
	a->gssapi = mech && *mech;
	if (a->gssapi && (a->bind_dn[0] || a->pw_file[0])) {
		plog(ctx, LOG_ERR,
		     "[SID] AD-SASL-Mech = GSSAPI binds as the keytab's principal: "
		     "remove %s and %s",
		     a->bind_dn_key, a->pw_file_key);
		return -EINVAL;
	}
	if (!a->gssapi && (a->keytab[0] || a->principal[0])) {
		plog(ctx, LOG_ERR,
		     "[SID] AD-Keytab and AD-Principal are for AD-SASL-Mech = GSSAPI: "
		     "set it, or remove them");
		return -EINVAL;
	}
	if (!a->uri[0] || !a->base[0]) {
		plog(ctx, LOG_ERR,
		     "[SID] S-1-5-21-%" PRIu32 "-%" PRIu32 "-%" PRIu32 " = ad: no %s (AD-%s, or "
		     "the domain's own S-1-5-21-%" PRIu32 "-%" PRIu32 "-%" PRIu32 ".AD-%s)",
		     fr->dom[0], fr->dom[1], fr->dom[2], a->uri[0] ? "base" : "directory URI",
		     a->uri[0] ? "Base" : "URI", fr->dom[0], fr->dom[1], fr->dom[2],
		     a->uri[0] ? "Base" : "URI");
		return -EINVAL;
	}
	if (a->bind_dn[0] && !a->pw_file[0]) {
		plog(ctx, LOG_ERR, "[SID] %s needs AD-Bind-Password-File", a->bind_dn_key);
		return -EINVAL;
	}
	if (ldap_is_ldap_url(a->uri) == 0 && strncmp(a->uri, "ldapi://", 8) != 0) {
		plog(ctx, LOG_ERR, "[SID] %s = %s: not an ldap://, ldaps:// or ldapi:// URI",
		     a->uri_key, a->uri);
		return -EINVAL;
	}
	if (nfskeys_conf_get_bool(ctx, "SID", "AD-StartTLS", &b) == 0)
		a->start_tls = b;
	if (nfskeys_conf_get_bool(ctx, "SID", "AD-Allow-Cleartext-Bind", &b) == 0)
		a->allow_cleartext = b;
	if ((r = conf_get_int(ctx, "SID", "AD-Timeout", &a->timeout, err, sizeof(err))) < 0) {
		plog(ctx, LOG_ERR, "%s", err);
		return r;
	}
	a->tls = (struct ldap_tls){ .uri = a->uri,
				    .ca_file = a->ca_file,
				    .start_tls = a->start_tls,
				    .section = "[SID] ",
				    .key_prefix = "AD-",
				    .uri_key = a->uri_key,
				    .bind_dn_key = a->bind_dn_key };
	ldap_pin_library();
	if (a->bind_dn[0]) {
		r = ldap_tls_check_bind(&a->tls, a->allow_cleartext, err, sizeof(err));
		if (r < 0) {
			plog(ctx, LOG_ERR, "%s", err);
			return r;
		}
	}
	/* GSSAPI: the keytab must be there and hold the principal now, not at the first
	 * lookup */
	if (a->gssapi) {
		r = ldap_gss_init(&a->gss, "[SID] AD-", a->keytab, a->principal, err, sizeof(err));
		a->gss_ready = true;
		if (r < 0) {
			plog(ctx, LOG_ERR, "idmap sid ad: %s", err);
			return r;
		}
	}
	return 0;
}

/* The bind password: a file only its owner can read. */
static int read_password(struct nfskeys_ctx *ctx, const struct sid_ad *a,
			 struct nfskeys_secret **ret)
{
	int fd = open(a->pw_file, O_RDONLY | O_CLOEXEC), r;
	struct stat st;

	if (fd < 0 || fstat(fd, &st) < 0) {
		r = negerrno();
		plog(ctx, LOG_ERR, "idmap sid ad: [SID] %s %s: %s", a->pw_file_key, a->pw_file,
		     strerror(-r));
		if (fd >= 0)
			close(fd);
		return r;
	}
	if (st.st_mode & 077) {
		plog(ctx, LOG_ERR,
		     "idmap sid ad: [SID] %s %s: others may read it (mode %04o); make it 0600",
		     a->pw_file_key, a->pw_file, (unsigned)(st.st_mode & 07777));
		close(fd);
		return -EPERM;
	}
	r = nfskeys_secret_read_password(fd, NULL, 512, ret);
	close(fd);
	return r;
}

/* A bound connection in a->ld (a->lock held). */
static int connect_ad(struct nfskeys_ctx *ctx, struct sid_ad *a, char *err, size_t size)
{
	struct timeval tv = { .tv_sec = a->timeout };
	int version = LDAP_VERSION3, r;
	struct berval cred = { 0, NULL };
	struct nfskeys_secret *pw = NULL;

	if (a->ld)
		return 0;
	a->tls.handshake = false;
	r = ldap_initialize(&a->ld, a->uri);
	if (r != LDAP_SUCCESS) {
		ldap_tls_error(&a->tls, NULL, "initialize", r, err, size);
		return -EHOSTDOWN;
	}
	ldap_set_option(a->ld, LDAP_OPT_PROTOCOL_VERSION, &version);
	ldap_set_option(a->ld, LDAP_OPT_NETWORK_TIMEOUT, &tv);
	ldap_set_option(a->ld, LDAP_OPT_TIMEOUT, &tv);
	ldap_set_option(a->ld, LDAP_OPT_REFERRALS, LDAP_OPT_OFF);
	r = ldap_tls_setup(a->ld, &a->tls);
	if (r == LDAP_SUCCESS && a->gssapi) {
		/* the message names the principal, the keytab and the cause */
		r = ldap_gss_bind(&a->gss, a->ld, err, size);
		if (r != LDAP_SUCCESS) {
			ldap_unbind_ext_s(a->ld, NULL, NULL);
			a->ld = NULL;
			return -EHOSTDOWN;
		}
		return 0;
	}
	if (r == LDAP_SUCCESS && a->bind_dn[0]) {
		if ((r = read_password(ctx, a, &pw)) < 0) {
			snprintf(err, size, "cannot read [SID] %s", a->pw_file_key);
			ldap_unbind_ext_s(a->ld, NULL, NULL);
			a->ld = NULL;
			return r;
		}
		cred.bv_val = nfskeys_secret_data(pw);
		cred.bv_len = nfskeys_secret_len(pw);
	}
	if (r == LDAP_SUCCESS)
		r = ldap_sasl_bind_s(a->ld, a->bind_dn[0] ? a->bind_dn : NULL, LDAP_SASL_SIMPLE,
				     &cred, NULL, NULL, NULL);
	nfskeys_secret_free(pw);
	if (r != LDAP_SUCCESS) {
		ldap_tls_error(&a->tls, a->ld, "bind", r, err, size);
		ldap_unbind_ext_s(a->ld, NULL, NULL);
		a->ld = NULL;
		return -EHOSTDOWN;
	}
	return 0;
}

/* The first entry for filter in *ret_msg (NULL entry: none).  A connection the server
 * closed is made again and the search sent once more; a directory that cannot be reached
 * or leaves a search unanswered for AD-Timeout backs the range off: its searches fail at
 * once for 1 s, then 2, 4 ... up to AD_BACKOFF_MAX_S, logged once per failure, so lookups
 * queued behind the range's lock never wait AD-Timeout each.  a->lock held. */
static int search(struct nfskeys_ctx *ctx, struct sid_ad *a, const char *filter, char **attrs,
		  LDAPMessage **ret_msg, char *err, size_t size)
{
	struct timeval tv = { .tv_sec = a->timeout };
	uint64_t now = mono_nsec();
	int r = 0;

	*ret_msg = NULL;
	if (now < a->down_until) {
		snprintf(err, size, "%s failed; next try in %u s", a->uri,
			 (unsigned)((a->down_until - now + 999999999) / 1000000000));
		return -EHOSTDOWN;
	}
	for (int attempt = 0; attempt < 2; attempt++) {
		*ret_msg = NULL;
		if ((r = connect_ad(ctx, a, err, size)) < 0)
			break; /* no second try: it just failed (the password file: logged) */
		r = ldap_search_ext_s(a->ld, a->base, LDAP_SCOPE_SUBTREE, filter, attrs, 0, NULL,
				      NULL, &tv, 2, ret_msg);
		if (r == LDAP_SUCCESS || r == LDAP_SIZELIMIT_EXCEEDED) {
			a->backoff_s = 0;
			return 0;
		}
		ldap_msgfree(*ret_msg);
		*ret_msg = NULL;
		ldap_tls_error(&a->tls, a->ld, "search", r, err, size);
		if (r != LDAP_SERVER_DOWN && r != LDAP_CONNECT_ERROR && r != LDAP_TIMEOUT) {
			r = -EIO;
			break;
		}
		ldap_unbind_ext_s(a->ld, NULL, NULL);
		a->ld = NULL;
		if (r == LDAP_TIMEOUT) {
			r = -EHOSTDOWN;
			break; /* a second try would cost AD-Timeout again */
		}
		r = -EHOSTDOWN;
	}
	if (r == -EHOSTDOWN) {
		a->backoff_s = a->backoff_s ? MIN(2 * a->backoff_s, AD_BACKOFF_MAX_S) : 1;
		a->down_until = mono_nsec() + (uint64_t)a->backoff_s * 1000000000;
		plog(ctx, LOG_WARNING, "idmap sid ad: %s; next try in %u s", err, a->backoff_s);
	} else if (r == -EIO) {
		plog(ctx, LOG_WARNING, "idmap sid ad: %s", err);
	}
	return r;
}

/* The value of attr as text in buf; -ENOENT when absent. */
static int value(LDAP *ld, LDAPMessage *e, const char *attr, char *buf, size_t size)
{
	struct berval **v = ldap_get_values_len(ld, e, attr);
	int r = -ENOENT;

	if (v && v[0] && v[0]->bv_len < size) {
		memcpy(buf, v[0]->bv_val, v[0]->bv_len);
		buf[v[0]->bv_len] = '\0';
		r = 0;
	}
	ldap_value_free_len(v);
	return r;
}

/* Digits only, at most 2^32 - 1. */
static bool parse_id(const char *s, uint32_t *ret)
{
	uint64_t v = 0;

	if (!*s)
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || (v = v * 10 + (uint64_t)(*s - '0')) > UINT32_MAX)
			return false;
	}
	*ret = (uint32_t)v;
	return true;
}

static int answer_down(struct nfskeys_idmap_request *req, const char *err)
{
	return util_reason(req, IDMAP_CAUSE_BACKEND_DOWN, "idmap sid ad: %s", err);
}

int sid_ad_sid_to_id(struct nfskeys_ctx *ctx, struct sid_data *d, const struct fixed_range *fr,
		     struct nfskeys_idmap_request *req, struct nfskeys_idmap_answer *ret)
{
	struct sid_ad *a = fr->dir;
	const struct nfskeys_sid *sid = req->sid;
	bool user = req->kind == NFSKEYS_IDMAP_SID_TO_UID;
	char filter[32 + 3 * (8 + 4 * NFSKEYS_SID_MAX_SUBAUTH)], *p, type[16], num[32], err[512];
	char *attrs[] = { "sAMAccountType", user ? "uidNumber" : "gidNumber", NULL };
	LDAPMessage *msg = NULL, *e;
	unsigned long t;
	uint32_t id;
	int r;

	/* objectSid in its binary form, every byte escaped */
	p = filter + sprintf(filter, "(objectSid=\\%02x\\%02x", sid->revision, sid->num_subauth);
	for (int i = 0; i < 6; i++)
		p += sprintf(p, "\\%02x", sid->authority[i]);
	for (int i = 0; i < sid->num_subauth; i++)
		for (int k = 0; k < 4; k++)
			p += sprintf(p, "\\%02x", (sid->subauth[i] >> (8 * k)) & 0xff);
	strcpy(p, ")");
	pthread_mutex_lock(&a->lock);
	r = search(ctx, a, filter, attrs, &msg, err, sizeof(err));
	e = msg ? ldap_first_entry(a->ld, msg) : NULL;
	if (e && value(a->ld, e, "sAMAccountType", type, sizeof(type)) == 0 &&
	    (t = strtoul(type, NULL, 10)) && (user ? t >> 28 == 3 : t >> 28 == 1 || t >> 28 == 2))
		r = value(a->ld, e, attrs[1], num, sizeof(num)) == 0 ? 1 : 0;
	else if (r == 0)
		r = e ? 2 : 0;
	ldap_msgfree(msg);
	pthread_mutex_unlock(&a->lock);
	if (r < 0)
		return r == -EHOSTDOWN || r == -EIO ? answer_down(req, err) : r;
	if (r == 0)
		return util_reason(req, IDMAP_CAUSE_NO_SUCH, "%s: no such entry in %s or no %s",
				   req->key, a->base, attrs[1]);
	if (r == 2)
		return util_reason(req, IDMAP_CAUSE_NO_SUCH, "%s is no %s", req->key,
				   user ? "user account" : "group");
	if (!parse_id(num, &id))
		return util_reason(req, IDMAP_CAUSE_NO_SUCH, "%s: %s '%s' is no id", req->key,
				   attrs[1], num);
	if (id < fr->min || id > fr->max)
		return util_reason(req, IDMAP_CAUSE_NO_SUCH, "%s: %s %u is outside the range %u-%u",
				   req->key, attrs[1], id, fr->min, fr->max);
	ret->id = id;
	return 0;
}

int sid_ad_id_to_sid(struct nfskeys_ctx *ctx, struct sid_data *d, const struct fixed_range *fr,
		     struct nfskeys_idmap_request *req, struct nfskeys_idmap_answer *ret)
{
	struct sid_ad *a = fr->dir;
	bool user = req->kind == NFSKEYS_IDMAP_UID_TO_SID;
	const char *attr = user ? "uidNumber" : "gidNumber";
	char filter[256], err[512], num[32];
	char *attrs[] = { "objectSid", (char *)attr, NULL };
	uint32_t id;
	LDAPMessage *msg = NULL, *e;
	struct berval **v = NULL;
	struct nfskeys_sid *sid = &ret->sid;
	int r;

	snprintf(filter, sizeof(filter), "(&%s(%s=%u))", user ? UF_USERS : UF_GROUPS, attr,
		 req->id);
	memset(sid, 0, sizeof(*sid));
	pthread_mutex_lock(&a->lock);
	r = search(ctx, a, filter, attrs, &msg, err, sizeof(err));
	e = msg ? ldap_first_entry(a->ld, msg) : NULL;
	/* the entry's own value must read back as the id: AD matches 3000000000 with the
	 * -1294967296 it keeps, which is no id (as in the SID -> id direction) */
	if (e && value(a->ld, e, attr, num, sizeof(num)) == 0 && parse_id(num, &id) &&
	    id == req->id && (v = ldap_get_values_len(a->ld, e, "objectSid")) && v[0] &&
	    v[0]->bv_len >= 8 && v[0]->bv_len == 8 + 4 * (size_t)(unsigned char)v[0]->bv_val[1] &&
	    (unsigned char)v[0]->bv_val[1] <= NFSKEYS_SID_MAX_SUBAUTH) {
		const unsigned char *b = (const unsigned char *)v[0]->bv_val;

		sid->revision = b[0];
		sid->num_subauth = b[1];
		memcpy(sid->authority, b + 2, 6);
		for (int i = 0; i < sid->num_subauth; i++)
			sid->subauth[i] = (uint32_t)b[8 + 4 * i] | (uint32_t)b[9 + 4 * i] << 8 |
					  (uint32_t)b[10 + 4 * i] << 16 |
					  (uint32_t)b[11 + 4 * i] << 24;
	}
	ldap_value_free_len(v);
	ldap_msgfree(msg);
	pthread_mutex_unlock(&a->lock);
	if (r < 0)
		return r == -EHOSTDOWN || r == -EIO ? answer_down(req, err) : r;
	/* only the domain's own accounts */
	if (sid->num_subauth != 5 || sid->subauth[0] != 21 ||
	    memcmp(&sid->subauth[1], fr->dom, sizeof(fr->dom)) != 0)
		return util_reason(req, IDMAP_CAUSE_NO_SUCH, "no %s of %s has %s %u",
				   user ? "user account" : "group", a->base, attr, req->id);
	ret->id = req->id;
	return nfskeys_sid_to_string(sid, ret->name, sizeof(ret->name)) < 0 ? -EINVAL : 0;
}
