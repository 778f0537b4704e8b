/* cred-afs: AFS rxrpc tokens (doc/DESIGN.md §3).  Gets afs/<cell>@REALM (or afs@REALM) from
 * the default credential cache with libkrb5, derives the rxkad session key (rxkad-kdf)
 * and builds the v1 rxrpc key payload the kernel AFS client takes as "afs@<cell>". */
#include <ctype.h>
#include <krb5.h>

#include "cred-plugin.h"
#include "libnfskeys-private.h"
#include "rxkad-kdf.h"

#define AFS_KEY_TYPE "rxrpc"
#define AFS_CELL_MAX 64
#define AFS_TICKET_MAX 12000 /* AFSTOKEN_RK_TIX_MAX */
#define RXKAD_SECURITY_INDEX 2
#define RXKAD_KVNO_KRB5 256 /* RXKAD_TKT_TYPE_KERBEROS_V5 */
#define RXRPC_V1_HEADER 24

/* A cell name as the kernel keys it: lower case letters, digits, '.', '-', '_'. */
static int cell_from(struct nfskeys_ctx *ctx, krb5_context k5, const char *in, char *cell)
{
	char *defrealm = NULL;
	size_t n;

	if (!in) {
		if (krb5_get_default_realm(k5, &defrealm) != 0) {
			log_err(ctx, "no cell given and no default Kerberos realm");
			return -EINVAL;
		}
		in = defrealm;
	}
	n = strlen(in);
	if (n == 0 || n > AFS_CELL_MAX) {
		log_err(ctx, "cell name must be 1-%d characters", AFS_CELL_MAX);
		krb5_free_default_realm(k5, defrealm);
		return -EINVAL;
	}
	for (size_t i = 0; i <= n; i++) {
		char c = (char)tolower((unsigned char)in[i]);
		if (c && !isalnum((unsigned char)c) && c != '.' && c != '-' && c != '_') {
			log_err(ctx, "cell name '%s' contains '%c'", in, in[i]);
			krb5_free_default_realm(k5, defrealm);
			return -EINVAL;
		}
		cell[i] = c;
	}
	krb5_free_default_realm(k5, defrealm);
	return 0;
}

static int k5_errno(krb5_error_code e)
{
	switch (e) {
	case KRB5_FCC_NOFILE:
	case KRB5_CC_NOTFOUND:
	case KRB5_CC_END:
	case KRB5_CC_NOSUPP:
	case KRB5_CC_BADNAME:
		return -ENOKEY;
	case KRB5KRB_AP_ERR_TKT_EXPIRED:
		return -EKEYEXPIRED;
	case KRB5KDC_ERR_S_PRINCIPAL_UNKNOWN:
	case KRB5_REALM_UNKNOWN:
		return -ENOENT;
	case KRB5_KDC_UNREACH:
	case KRB5_REALM_CANT_RESOLVE:
		return -EHOSTUNREACH;
	case KRB5_PROG_ETYPE_NOSUPP:
		return -EPROTONOSUPPORT;
	default:
		return -EIO;
	}
}

static void k5_log(struct nfskeys_ctx *ctx, krb5_context k5, krb5_error_code e,
		   const char *what)
{
	const char *msg = krb5_get_error_message(k5, e);

	log_err(ctx, "%s: %s", what, msg);
	krb5_free_error_message(k5, msg);
}

/* The token for p: payload in a secret buffer, info naming the key. */
static int afs_build(struct nfskeys_ctx *ctx, const struct nfskeys_cred_params *p,
		     struct nfskeys_secret **ret_payload, struct nfskeys_cred_info *ret_info)
{
	krb5_context k5 = NULL;
	krb5_ccache cc = NULL;
	krb5_principal client = NULL, server = NULL;
	krb5_creds in, *out = NULL;
	krb5_error_code e;
	struct nfskeys_secret *payload = NULL;
	struct nfskeys_cred_info info = { 0 };
	char cell[AFS_CELL_MAX + 1], realm[256], what[512];
	char *sname = NULL;
	unsigned char key[8];
	int r;

	memset(&in, 0, sizeof(in));
	e = krb5_init_context(&k5);
	if (e) {
		log_err(ctx, "cannot initialise Kerberos (error %d)", (int)e);
		return -EIO;
	}
	r = cell_from(ctx, k5, p->target, cell);
	if (r < 0)
		goto out;
	if (p->realm && *p->realm) {
		if (strlen(p->realm) >= sizeof(realm)) {
			log_err(ctx, "realm name too long");
			r = -EINVAL;
			goto out;
		}
		snprintf(realm, sizeof(realm), "%s", p->realm);
	} else {
		for (size_t i = 0; i <= strlen(cell); i++)
			realm[i] = (char)toupper((unsigned char)cell[i]);
	}

	e = krb5_cc_default(k5, &cc);
	if (!e)
		e = krb5_cc_get_principal(k5, cc, &client);
	if (e) {
		const char *ccname = cc ? krb5_cc_get_name(k5, cc) : NULL;
		snprintf(what, sizeof(what), "no Kerberos credentials in %s (run kinit)",
			 ccname ? ccname : "the default cache");
		k5_log(ctx, k5, e, what);
		r = -ENOKEY;
		goto out;
	}

	/* afs/<cell>@REALM, then the older afs@REALM */
	for (int attempt = 0; attempt < 2; attempt++) {
		e = attempt == 0 ? krb5_build_principal(k5, &server, (unsigned)strlen(realm), realm,
							"afs", cell, (char *)NULL)
				 : krb5_build_principal(k5, &server, (unsigned)strlen(realm), realm,
							"afs", (char *)NULL);
		if (e)
			break;
		in.client = client;
		in.server = server;
		e = krb5_get_credentials(k5, 0, cc, &in, &out);
		if (e != KRB5KDC_ERR_S_PRINCIPAL_UNKNOWN || attempt == 1)
			break;
		log_debug(ctx, "afs/%s@%s unknown, trying afs@%s", cell, realm, realm);
		krb5_free_principal(k5, server);
		server = NULL;
	}
	if (e) {
		if (e == KRB5KDC_ERR_S_PRINCIPAL_UNKNOWN || e == KRB5_REALM_UNKNOWN ||
		    e == KRB5_KDC_UNREACH)
			snprintf(what, sizeof(what),
				 "no ticket for afs/%s@%s or afs@%s (unknown cell or realm?)", cell,
				 realm, realm);
		else
			snprintf(what, sizeof(what), "cannot get a ticket for afs/%s@%s", cell,
				 realm);
		k5_log(ctx, k5, e, what);
		r = k5_errno(e);
		goto out;
	}

	if (out->ticket.length == 0 || out->ticket.length > AFS_TICKET_MAX) {
		log_err(ctx, "AFS service ticket is %u bytes, rxkad allows 1-%d",
			out->ticket.length, AFS_TICKET_MAX);
		r = -EMSGSIZE;
		goto out;
	}
	r = rxkad_session_key(out->keyblock.enctype, out->keyblock.contents,
			      out->keyblock.length, key);
	if (r < 0) {
		log_err(ctx, "cannot derive an rxkad key from a session key of enctype %d: %s",
			(int)out->keyblock.enctype, strerror(-r));
		goto out;
	}

	r = nfskeys_secret_new(RXRPC_V1_HEADER + out->ticket.length, &payload);
	if (r < 0)
		goto out;
	{
		/* struct { u32 kver; u16 security_index; u16 ticket_length; u32 expiry;
		 * u32 kvno; u8 session_key[8]; u8 ticket[]; } in host byte order */
		unsigned char *b = nfskeys_secret_data(payload);
		uint32_t kver = 1, expiry = (uint32_t)out->times.endtime, kvno = RXKAD_KVNO_KRB5;
		uint16_t sec = RXKAD_SECURITY_INDEX, tlen = (uint16_t)out->ticket.length;

		memcpy(b + 0, &kver, 4);
		memcpy(b + 4, &sec, 2);
		memcpy(b + 6, &tlen, 2);
		memcpy(b + 8, &expiry, 4);
		memcpy(b + 12, &kvno, 4);
		memcpy(b + 16, key, 8);
		memcpy(b + RXRPC_V1_HEADER, out->ticket.data, out->ticket.length);
		nfskeys_secret_set_len(payload, RXRPC_V1_HEADER + out->ticket.length);
	}
	snprintf(info.fs, sizeof(info.fs), "afs");
	snprintf(info.type, sizeof(info.type), AFS_KEY_TYPE);
	snprintf(info.description, sizeof(info.description), "afs@%s", cell);
	if (krb5_unparse_name(k5, server, &sname) == 0)
		snprintf(info.principal, sizeof(info.principal), "%s", sname);
	info.expiry = (int64_t)(uint32_t)out->times.endtime;
	*ret_payload = TAKE_PTR(payload);
	*ret_info = info;
	r = 0;
out:
	explicit_bzero(key, sizeof(key));
	nfskeys_secret_free(payload);
	if (sname)
		krb5_free_unparsed_name(k5, sname);
	if (out)
		krb5_free_creds(k5, out);
	krb5_free_principal(k5, server);
	krb5_free_principal(k5, client);
	if (cc)
		krb5_cc_close(k5, cc);
	krb5_free_context(k5);
	return r;
}

static int afs_description(struct nfskeys_ctx *ctx, const struct nfskeys_cred_params *p,
			   char *desc, size_t size)
{
	krb5_context k5 = NULL;
	char cell[AFS_CELL_MAX + 1];
	int r;

	if (!p->target && krb5_init_context(&k5) != 0)
		return -EIO;
	r = cell_from(ctx, k5, p->target, cell);
	if (k5)
		krb5_free_context(k5);
	if (r < 0)
		return r;
	snprintf(desc, size, "afs@%s", cell);
	return 0;
}

static int afs_add(struct nfskeys_ctx *ctx, const struct nfskeys_cred_params *p,
		   int32_t keyring, bool update)
{
	struct nfskeys_secret *payload = NULL;
	struct nfskeys_cred_info info;
	int32_t key;
	int r;

	r = afs_build(ctx, p, &payload, &info);
	if (r < 0)
		return r;
	r = nfskeys_key_search(keyring, AFS_KEY_TYPE, info.description, 0, &key);
	if (r == 0 && !update) {
		log_err(ctx, "a token for %s exists already", info.description);
		r = -EEXIST;
	} else if (r < 0 && update && r != -ENODEV) {
		log_err(ctx, "no token for %s to update", info.description);
		r = -ENOKEY;
	} else {
		r = nfskeys_key_add(AFS_KEY_TYPE, info.description, nfskeys_secret_data(payload),
				    nfskeys_secret_len(payload), keyring, &key);
		if (r == -ENODEV)
			log_err(ctx, "kernel lacks the rxrpc key type (load the kafs / af_rxrpc "
				     "module)");
		else if (r < 0)
			log_err(ctx, "cannot add key %s: %s", info.description, strerror(-r));
		else
			r = 1;
	}
	nfskeys_secret_free(payload);
	return r;
}

static int afs_find(struct nfskeys_ctx *ctx, const struct nfskeys_cred_params *p,
		    int32_t keyring, struct nfskeys_cred_info *ret_info)
{
	struct nfskeys_key_info k;
	char desc[AFS_CELL_MAX + 8];
	int32_t key;
	int r;

	r = afs_description(ctx, p, desc, sizeof(desc));
	if (r < 0)
		return r;
	r = nfskeys_key_search(keyring, AFS_KEY_TYPE, desc, 0, &key);
	if (r == -ENODEV)
		r = -ENOKEY; /* no rxrpc type: no token either */
	if (r < 0)
		return r;
	r = nfskeys_key_describe(key, &k);
	if (r < 0)
		return r;
	memset(ret_info, 0, sizeof(*ret_info));
	snprintf(ret_info->fs, sizeof(ret_info->fs), "afs");
	snprintf(ret_info->type, sizeof(ret_info->type), "%s", k.type);
	snprintf(ret_info->description, sizeof(ret_info->description), "%s", k.description);
	ret_info->serial = key;
	ret_info->expiry = k.expiry;
	return 0;
}

static int afs_clear(struct nfskeys_ctx *ctx, const struct nfskeys_cred_params *p,
		     int32_t keyring)
{
	char desc[AFS_CELL_MAX + 8];
	int32_t key;
	int r;

	r = afs_description(ctx, p, desc, sizeof(desc));
	if (r < 0)
		return r;
	r = nfskeys_key_search(keyring, AFS_KEY_TYPE, desc, 0, &key);
	if (r < 0) {
		log_err(ctx, "no token for %s", desc);
		return -ENOKEY;
	}
	r = nfskeys_key_unlink(key, keyring);
	if (r < 0) {
		log_err(ctx, "cannot remove %s: %s", desc, strerror(-r));
		return r;
	}
	return 1;
}

static const struct nfskeys_cred_ops afs_ops = {
	.size = sizeof(afs_ops),
	.fs = "afs",
	.key_type = AFS_KEY_TYPE,
	.desc_prefix = "afs@",
	.add = afs_add,
	.find = afs_find,
	.clear = afs_clear,
	.build = afs_build,
};

static const struct nfskeys_plugin plugin = {
	.abi = NFSKEYS_PLUGIN_ABI,
	.size = sizeof(plugin),
	.kind = NFSKEYS_PLUGIN_CRED,
	.name = "cred-afs",
	.description = "AFS rxrpc tokens from Kerberos 5 tickets (rxkad-kdf)",
	.ops = &afs_ops,
	.ops_size = sizeof(afs_ops),
};

_public_ const struct nfskeys_plugin *nfskeys_plugin_entry(void)
{
	return &plugin;
}
