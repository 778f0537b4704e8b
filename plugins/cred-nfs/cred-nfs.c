/* cred-nfs: Kerberos credentials for NFS (rpc.gssd finds them through the default
 * credential cache).  Kept in KEYRING:persistent:<uid>, obtained from a password or a
 * keytab, shown with their expiry, renewed (or re-acquired from the keytab). */
#include <krb5.h>
#include <pwd.h>
#include <time.h>

#include "cred-plugin.h"
#include "libnfskeys-private.h"

#define NFS_RENEW_LIFE (7 * 24 * 3600)

struct k5 {
	krb5_context ctx;
	krb5_ccache cc;
	char ccname[256];
};

static void k5_done(struct k5 *k)
{
	if (k->cc)
		krb5_cc_close(k->ctx, k->cc);
	if (k->ctx)
		krb5_free_context(k->ctx);
	memset(k, 0, sizeof(*k));
}

static int k5_errno(krb5_error_code e)
{
	switch (e) {
	case KRB5_FCC_NOFILE:
	case KRB5_CC_NOTFOUND:
	case KRB5_CC_END:
		return -ENOKEY;
	case KRB5KDC_ERR_PREAUTH_FAILED:
	case KRB5KRB_AP_ERR_BAD_INTEGRITY:
		return -EKEYREJECTED;
	case KRB5KDC_ERR_C_PRINCIPAL_UNKNOWN:
	case KRB5_REALM_UNKNOWN:
		return -ENOENT;
	case KRB5_KDC_UNREACH:
	case KRB5_REALM_CANT_RESOLVE:
		return -EHOSTUNREACH;
	case KRB5KRB_AP_ERR_TKT_EXPIRED:
	case KRB5KDC_ERR_TGT_REVOKED:
		return -EKEYEXPIRED;
	case KRB5KDC_ERR_BADOPTION:
		return -EKEYEXPIRED; /* not renewable (any more) */
	case KRB5_KT_NOTFOUND:
	case KRB5_KT_END:
	case ENOENT:
		return -ENOENT;
	default:
		return -EIO;
	}
}

static int k5_fail(struct nfskeys_ctx *ctx, struct k5 *k, krb5_error_code e, const char *what)
{
	const char *msg = krb5_get_error_message(k->ctx, e);
	const char *hint = "";

	if (e == KRB5KDC_ERR_PREAUTH_FAILED || e == KRB5KRB_AP_ERR_BAD_INTEGRITY)
		hint = " (wrong password?)";
	else if (e == KRB5_KDC_UNREACH)
		hint = " (is the KDC reachable?)";
	log_err(ctx, "%s: %s%s", what, msg, hint);
	krb5_free_error_message(k->ctx, msg);
	return k5_errno(e);
}

/* Open the credential cache p->ccache or KEYRING:persistent:<uid>. */
static int k5_open(struct nfskeys_ctx *ctx, const struct nfskeys_cred_params *p, struct k5 *k)
{
	krb5_error_code e;

	memset(k, 0, sizeof(*k));
	e = krb5_init_context(&k->ctx);
	if (e) {
		log_err(ctx, "cannot initialise Kerberos (error %d)", (int)e);
		return -EIO;
	}
	if (p->ccache && *p->ccache)
		snprintf(k->ccname, sizeof(k->ccname), "%s", p->ccache);
	else
		snprintf(k->ccname, sizeof(k->ccname), "KEYRING:persistent:%u", (unsigned)getuid());
	e = krb5_cc_resolve(k->ctx, k->ccname, &k->cc);
	if (e) {
		int r = k5_fail(ctx, k, e, k->ccname);
		k5_done(k);
		return r == -EIO ? -EINVAL : r;
	}
	return 0;
}

/* Principal and times of the cache's ticket-granting ticket (or first ticket). */
static int cache_info(struct nfskeys_ctx *ctx, struct k5 *k, struct nfskeys_cred_info *ret)
{
	struct nfskeys_cred_info info = { 0 };
	krb5_principal client = NULL;
	krb5_cc_cursor cur;
	krb5_creds c;
	krb5_error_code e;
	char *name = NULL;
	bool found = false;

	e = krb5_cc_get_principal(k->ctx, k->cc, &client);
	if (e)
		return -ENOKEY;
	if (krb5_unparse_name(k->ctx, client, &name) == 0) {
		snprintf(info.principal, sizeof(info.principal), "%s", name);
		krb5_free_unparsed_name(k->ctx, name);
	}
	e = krb5_cc_start_seq_get(k->ctx, k->cc, &cur);
	if (e == 0) {
		while (krb5_cc_next_cred(k->ctx, k->cc, &cur, &c) == 0) {
			bool config = krb5_is_config_principal(k->ctx, c.server);
			bool tgt = !config && c.server->length == 2 &&
				   c.server->data[0].length == 6 &&
				   memcmp(c.server->data[0].data, "krbtgt", 6) == 0;

			/* the TGT's times; the first ticket's when there is no TGT */
			if (tgt || (!config && !found)) {
				info.expiry = (int64_t)(uint32_t)c.times.endtime;
				/* renewable only if renewal could take it past its end */
				info.renew_until = ((c.ticket_flags & TKT_FLG_RENEWABLE) &&
						    (uint32_t)c.times.renew_till >
							    (uint32_t)c.times.endtime)
							   ? (int64_t)(uint32_t)c.times.renew_till
							   : 0;
				found = true;
			}
			krb5_free_cred_contents(k->ctx, &c);
			if (tgt)
				break;
		}
		krb5_cc_end_seq_get(k->ctx, k->cc, &cur);
	}
	krb5_free_principal(k->ctx, client);
	if (!found)
		return -ENOKEY;
	snprintf(info.fs, sizeof(info.fs), "nfs");
	snprintf(info.type, sizeof(info.type), "ccache");
	snprintf(info.description, sizeof(info.description), "%s:%s",
		 krb5_cc_get_type(k->ctx, k->cc), krb5_cc_get_name(k->ctx, k->cc));
	*ret = info;
	return 0;
}

static int client_principal(struct nfskeys_ctx *ctx, struct k5 *k,
			    const struct nfskeys_cred_params *p, krb5_keytab kt,
			    krb5_principal *ret)
{
	krb5_error_code e;

	if (p->user && *p->user) {
		e = krb5_parse_name(k->ctx, p->user, ret);
		if (e) {
			k5_fail(ctx, k, e, "invalid principal name");
			return -EINVAL;
		}
		return 0;
	}
	if (kt) {
		krb5_kt_cursor cur;
		krb5_keytab_entry ent;

		e = krb5_kt_start_seq_get(k->ctx, kt, &cur);
		if (!e) {
			e = krb5_kt_next_entry(k->ctx, kt, &ent, &cur);
			krb5_kt_end_seq_get(k->ctx, kt, &cur);
		}
		if (e) {
			log_err(ctx, "keytab %s has no usable entry; give the principal with -p",
				p->keytab);
			return -ENOENT;
		}
		e = krb5_copy_principal(k->ctx, ent.principal, ret);
		krb5_free_keytab_entry_contents(k->ctx, &ent);
		return e ? -ENOMEM : 0;
	}
	{
		struct passwd *pw = getpwuid(getuid());
		if (!pw) {
			log_err(ctx, "no user name for uid %u; give the principal with -p",
				(unsigned)getuid());
			return -EINVAL;
		}
		e = krb5_parse_name(k->ctx, pw->pw_name, ret);
		return e ? -EINVAL : 0;
	}
}

/* Get a TGT for p from a password or keytab and store it in k's cache. */
static int acquire(struct nfskeys_ctx *ctx, struct k5 *k, const struct nfskeys_cred_params *p)
{
	krb5_get_init_creds_opt *opt = NULL;
	krb5_keytab kt = NULL;
	krb5_principal client = NULL;
	krb5_creds creds;
	krb5_error_code e;
	char *name = NULL, what[512];
	/* NUL-terminated: secret buffers keep a NUL after their length */
	const char *password = p->password
				       ? nfskeys_secret_data((struct nfskeys_secret *)p->password)
				       : NULL;
	int r;

	memset(&creds, 0, sizeof(creds));
	if (p->keytab) {
		if (access(p->keytab, R_OK) < 0) {
			r = negerrno();
			log_err(ctx, "cannot read keytab %s: %s", p->keytab, strerror(-r));
			return r;
		}
		e = krb5_kt_resolve(k->ctx, p->keytab, &kt);
		if (e)
			return k5_fail(ctx, k, e, "keytab");
	} else if (!p->password || nfskeys_secret_len(p->password) == 0) {
		log_err(ctx, "no password and no keytab given");
		return -EINVAL;
	}
	r = client_principal(ctx, k, p, kt, &client);
	if (r < 0)
		goto out;
	krb5_unparse_name(k->ctx, client, &name);
	e = krb5_get_init_creds_opt_alloc(k->ctx, &opt);
	if (e) {
		r = -ENOMEM;
		goto out;
	}
	krb5_get_init_creds_opt_set_renew_life(opt, NFS_RENEW_LIFE);
	if (kt)
		e = krb5_get_init_creds_keytab(k->ctx, &creds, client, kt, 0, NULL, opt);
	else
		e = krb5_get_init_creds_password(k->ctx, &creds, client, password, NULL, NULL, 0,
						 NULL, opt);
	if (e) {
		snprintf(what, sizeof(what), "cannot get a ticket for %s", name ? name : "?");
		r = k5_fail(ctx, k, e, what);
		goto out;
	}
	e = krb5_cc_initialize(k->ctx, k->cc, client);
	if (!e)
		e = krb5_cc_store_cred(k->ctx, k->cc, &creds);
	if (e) {
		snprintf(what, sizeof(what), "cannot store the ticket in %s", k->ccname);
		r = k5_fail(ctx, k, e, what);
		goto out;
	}
	log_debug(ctx, "ticket for %s stored in %s", name ? name : "?", k->ccname);
	r = 1;
out:
	krb5_free_cred_contents(k->ctx, &creds);
	if (opt)
		krb5_get_init_creds_opt_free(k->ctx, opt);
	if (name)
		krb5_free_unparsed_name(k->ctx, name);
	krb5_free_principal(k->ctx, client);
	if (kt)
		krb5_kt_close(k->ctx, kt);
	return r;
}

static int nfs_add(struct nfskeys_ctx *ctx, const struct nfskeys_cred_params *p,
		   int32_t keyring, bool update)
{
	struct k5 k;
	int r = k5_open(ctx, p, &k);

	if (r < 0)
		return r;
	/* A new login replaces what the cache held: that is what kinit does too. */
	r = acquire(ctx, &k, p);
	k5_done(&k);
	return r;
}

static int nfs_find(struct nfskeys_ctx *ctx, const struct nfskeys_cred_params *p,
		    int32_t keyring, struct nfskeys_cred_info *ret_info)
{
	struct k5 k;
	int r = k5_open(ctx, p, &k);

	if (r < 0)
		return r;
	r = cache_info(ctx, &k, ret_info);
	k5_done(&k);
	return r;
}

static int nfs_renew(struct nfskeys_ctx *ctx, const struct nfskeys_cred_params *p,
		     struct nfskeys_cred_info *ret_info)
{
	struct nfskeys_cred_info info;
	krb5_principal client = NULL;
	krb5_creds creds;
	krb5_error_code e;
	struct k5 k;
	int64_t now = (int64_t)time(NULL);
	int r;

	memset(&creds, 0, sizeof(creds));
	r = k5_open(ctx, p, &k);
	if (r < 0)
		return r;
	r = cache_info(ctx, &k, &info);
	if (r < 0 && !p->keytab) {
		log_err(ctx, "no credentials in %s to renew (log in first)", k.ccname);
		goto out;
	}
	if (r == 0 && info.renew_until > now && info.expiry > now &&
	    krb5_cc_get_principal(k.ctx, k.cc, &client) == 0) {
		e = krb5_get_renewed_creds(k.ctx, &creds, client, k.cc, NULL);
		if (!e)
			e = krb5_cc_initialize(k.ctx, k.cc, client);
		if (!e)
			e = krb5_cc_store_cred(k.ctx, k.cc, &creds);
		if (!e) {
			r = cache_info(ctx, &k, ret_info);
			goto out;
		}
		if (!p->keytab) {
			r = k5_fail(ctx, &k, e, "cannot renew the ticket");
			goto out;
		}
		log_debug(ctx, "renewal failed, getting a new ticket from %s", p->keytab);
	}
	if (!p->keytab) {
		log_err(ctx, "the ticket for %s %s; log in again or renew with a keytab",
			info.principal,
			info.expiry <= now ? "has expired" : "is not renewable any more");
		r = -EKEYEXPIRED;
		goto out;
	}
	{
		struct nfskeys_cred_params q = *p;
		if (!q.user && r == 0)
			q.user = info.principal;
		r = acquire(ctx, &k, &q);
	}
	if (r >= 0)
		r = cache_info(ctx, &k, ret_info);
out:
	krb5_free_cred_contents(k.ctx, &creds);
	krb5_free_principal(k.ctx, client);
	k5_done(&k);
	return r;
}

static int nfs_clear(struct nfskeys_ctx *ctx, const struct nfskeys_cred_params *p,
		     int32_t keyring)
{
	krb5_principal client = NULL;
	krb5_error_code e;
	struct k5 k;
	int r = k5_open(ctx, p, &k);

	if (r < 0)
		return r;
	if (krb5_cc_get_principal(k.ctx, k.cc, &client) != 0) {
		log_err(ctx, "no credentials in %s", k.ccname);
		k5_done(&k);
		return -ENOKEY;
	}
	krb5_free_principal(k.ctx, client);
	e = krb5_cc_destroy(k.ctx, k.cc);
	k.cc = NULL; /* destroy closes it */
	if (e)
		r = k5_fail(ctx, &k, e, "cannot destroy the credential cache");
	else
		r = 1;
	k5_done(&k);
	return r;
}

static int nfs_list(struct nfskeys_ctx *ctx, int32_t keyring, struct nfskeys_cred_info **ret,
		    size_t *ret_count)
{
	struct nfskeys_cred_params p = { 0 };
	struct nfskeys_cred_info info, *v;
	int r = nfs_find(ctx, &p, keyring, &info);

	if (r == -ENOKEY) {
		*ret = NULL;
		*ret_count = 0;
		return 0;
	}
	if (r < 0)
		return r;
	v = malloc(sizeof(*v));
	if (!v)
		return -ENOMEM;
	*v = info;
	*ret = v;
	*ret_count = 1;
	return 0;
}

static int nfs_clear_all(struct nfskeys_ctx *ctx, int32_t keyring)
{
	struct nfskeys_cred_params p = { 0 };
	int r = nfs_clear(ctx, &p, keyring);

	return r == -ENOKEY ? 0 : r;
}

static const struct nfskeys_cred_ops nfs_ops = {
	.size = sizeof(nfs_ops),
	.fs = "nfs",
	.add = nfs_add,
	.find = nfs_find,
	.clear = nfs_clear,
	.renew = nfs_renew,
	.list = nfs_list,
	.clear_all = nfs_clear_all,
};

static const struct nfskeys_plugin plugin = {
	.abi = NFSKEYS_PLUGIN_ABI,
	.size = sizeof(plugin),
	.kind = NFSKEYS_PLUGIN_CRED,
	.name = "cred-nfs",
	.description = "Kerberos credentials for NFS in KEYRING:persistent:<uid>",
	.ops = &nfs_ops,
	.ops_size = sizeof(nfs_ops),
};

_public_ const struct nfskeys_plugin *nfskeys_plugin_entry(void)
{
	return &plugin;
}
