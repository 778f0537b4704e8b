/* idmap backend "krb5": a Kerberos principal to local ids through the realm's
 * auth_to_local rules (krb5_aname_to_localname), then NSS.  The principal's realm must be
 * in [General] Local-Realms (default: the Kerberos default realm).  Only this plugin links
 * libkrb5; the core library and the upcall helper stay free of it. */
#include <krb5.h>
#include <pthread.h>

#include "idmap-util.h"

struct krb5_data_ {
	pthread_mutex_t lock;
	krb5_context k;
	char *default_realm;
};

static void krb5_done(void *data)
{
	struct krb5_data_ *d = data;

	if (!d)
		return;
	if (d->k) {
		krb5_free_default_realm(d->k, d->default_realm);
		krb5_free_context(d->k);
	}
	pthread_mutex_destroy(&d->lock);
	free(d);
}

static int krb5_init_backend(struct nfskeys_ctx *ctx, void **ret_data)
{
	struct krb5_data_ *d = calloc(1, sizeof(*d));
	krb5_error_code kr;

	if (!d)
		return -ENOMEM;
	pthread_mutex_init(&d->lock, NULL);
	kr = krb5_init_context(&d->k);
	if (kr) {
		plog(ctx, LOG_ERR, "idmap krb5: cannot initialise Kerberos (error %d)", (int)kr);
		d->k = NULL;
		krb5_done(d);
		return -EIO;
	}
	if (krb5_get_default_realm(d->k, &d->default_realm) != 0)
		d->default_realm = NULL;
	*ret_data = d;
	return 0;
}

static bool realm_local(struct krb5_data_ *d, struct nfskeys_ctx *ctx, const char *realm,
			const char *nfs_domain)
{
	const char *list = nfskeys_conf_get(ctx, "General", "Local-Realms");

	if (!list || !*list)
		return d->default_realm && streq(realm, d->default_realm);
	return util_realm_is_local(ctx, realm, nfs_domain);
}

static int krb5_lookup(void *data, struct nfskeys_ctx *ctx, struct nfskeys_idmap_request *req,
		       struct nfskeys_idmap_answer *ret)
{
	struct krb5_data_ *d = data;
	krb5_principal p = NULL;
	char local[NFSKEYS_IDMAP_NAME_MAX];
	krb5_error_code kr;

	if (req->kind != NFSKEYS_IDMAP_PRINCIPAL_TO_IDS)
		return -ENOENT;
	if (!req->domain)
		return util_reason(req, IDMAP_CAUSE_NOT_HANDLED, "'%s' has no realm", req->key);
	if (!realm_local(d, ctx, req->domain, req->nfs_domain))
		return util_reason(req, IDMAP_CAUSE_REALM, "realm '%s' is not in Local-Realms (%s)",
				   req->domain,
				   nfskeys_conf_get(ctx, "General", "Local-Realms") ?:
					   (d->default_realm ?: "no default realm"));
	pthread_mutex_lock(&d->lock);
	kr = krb5_parse_name(d->k, req->key, &p);
	if (kr == 0)
		kr = krb5_aname_to_localname(d->k, p, sizeof(local) - 1, local);
	if (p)
		krb5_free_principal(d->k, p);
	pthread_mutex_unlock(&d->lock);
	if (kr == KRB5_LNAME_NOTRANS || kr == KRB5_NO_LOCALNAME)
		return util_reason(req, IDMAP_CAUSE_NO_SUCH,
				   "no auth_to_local rule of realm %s maps '%s'", req->domain,
				   req->key);
	if (kr == KRB5_PARSE_MALFORMED)
		return util_reason(req, IDMAP_CAUSE_NOT_HANDLED, "'%s' is not a principal", req->key);
	if (kr)
		return -EIO;
	return util_answer_local(req, local, ret);
}

static const struct nfskeys_idmap_ops ops = {
	.size = sizeof(ops),
	.init = krb5_init_backend,
	.done = krb5_done,
	.lookup = krb5_lookup,
	.kinds = IDMAP_PRINCIPAL_KINDS,
};

static const struct nfskeys_plugin plugin = {
	.abi = NFSKEYS_PLUGIN_ABI,
	.size = sizeof(plugin),
	.kind = NFSKEYS_PLUGIN_IDMAP,
	.name = "idmap-krb5",
	.description = "Kerberos principals to local ids by auth_to_local rules",
	.ops = &ops,
	.ops_size = sizeof(ops),
};

_public_ const struct nfskeys_plugin *nfskeys_plugin_entry(void)
{
	return &plugin;
}
