/* Credentials: CIFS, AFS and NFS keys through the credential plugins (doc/DESIGN.md §3).
 * One set of calls for every filesystem; the plugin for fs ("cifs", "afs", "nfs") knows
 * the kernel format.  Included by nfskeys.h; do not include directly. */
#pragma once

#ifdef __cplusplus
extern "C" {
#endif

/* Flags for struct nfskeys_cred_params and the list/clear_all calls. */
enum {
	/* Use the user keyring instead of the session keyring (the default). */
	NFSKEYS_CRED_USER_KEYRING = 1u << 0,
	/* CIFS: the target is a domain name (key cifs:d:<domain>), not a host. */
	NFSKEYS_CRED_DOMAIN = 1u << 1,
};

/* What a credential is for.  Fields a filesystem does not use are ignored. */
struct nfskeys_cred_params {
	/* CIFS: host name or address (or domain with NFSKEYS_CRED_DOMAIN);
	 * AFS: cell (NULL: the realm's name in lower case); NFS: unused. */
	const char *target;
	/* CIFS: user name (1-256 bytes, no ':'); NFS: principal (NULL: the user's name in
	 * the default realm, or the keytab's first principal). */
	const char *user;
	/* AFS: Kerberos realm (NULL: the cell name in upper case when it has a KDC,
	 * else the default realm). */
	const char *realm;
	/* NFS: keytab to acquire the ticket from instead of a password. */
	const char *keytab;
	/* NFS: credential cache (NULL: KEYRING:persistent:<uid>). */
	const char *ccache;
	/* CIFS, NFS: the password (CIFS at most 512 bytes). */
	const struct nfskeys_secret *password;
	/* CIFS: key timeout in seconds, 0 for none. */
	unsigned timeout;
	unsigned flags;
};

/* One credential as the kernel (or the credential cache) holds it.  Never the secret. */
struct nfskeys_cred_info {
	char fs[8];            /* "cifs", "afs", "nfs" */
	char type[64];         /* kernel key type ("logon", "rxrpc"), "ccache" for NFS */
	char description[4096]; /* key description, or the credential cache name */
	char principal[256];   /* NFS: the client principal; AFS: the service principal */
	int32_t serial;        /* key serial, 0 when not a kernel key */
	int64_t expiry;        /* seconds since the epoch, 0 when it does not expire */
	int64_t renew_until;   /* NFS: renewable until, 0 when not renewable */
};

/* Add the credential for params->target.  Returns the number of keys added (CIFS adds
 * one per address the host resolves to).  -EEXIST when one is already there (use
 * nfskeys_cred_update()), -EINVAL on bad parameters (logged with the reason),
 * -EHOSTUNREACH when a CIFS host does not resolve, -ENOKEY without a session keyring,
 * -ENODEV when the kernel lacks the key type, -EPROTONOSUPPORT for an unknown fs. */
int nfskeys_cred_add(struct nfskeys_ctx *ctx, const char *fs,
		     const struct nfskeys_cred_params *params);

/* Replace the payload of existing credentials for params->target; -ENOKEY when there
 * are none.  Returns the number of keys updated. */
int nfskeys_cred_update(struct nfskeys_ctx *ctx, const char *fs,
			const struct nfskeys_cred_params *params);

/* Find the credential for params->target; -ENOKEY when absent.  An expired credential
 * is still found: compare ret_info->expiry with the time. */
int nfskeys_cred_find(struct nfskeys_ctx *ctx, const char *fs,
		      const struct nfskeys_cred_params *params,
		      struct nfskeys_cred_info *ret_info);

/* Build the key payload without adding it (AFS: the rxrpc token, for inspection).
 * *ret_payload is a secret buffer the caller frees; ret_info names the key it would
 * add.  -EOPNOTSUPP for filesystems whose credentials are not single kernel keys. */
int nfskeys_cred_build(struct nfskeys_ctx *ctx, const char *fs,
		       const struct nfskeys_cred_params *params,
		       struct nfskeys_secret **ret_payload, struct nfskeys_cred_info *ret_info);

/* Renew a credential that can be renewed (NFS tickets: renew, or re-acquire from
 * params->keytab).  -EOPNOTSUPP for the others, -ENOKEY when there is nothing to renew,
 * -EKEYEXPIRED when it expired (or is not renewable) and no keytab was given. */
int nfskeys_cred_renew(struct nfskeys_ctx *ctx, const char *fs,
		       const struct nfskeys_cred_params *params,
		       struct nfskeys_cred_info *ret_info);

/* Remove the credential for params->target.  Returns how many keys were removed;
 * -ENOKEY when there were none. */
int nfskeys_cred_clear(struct nfskeys_ctx *ctx, const char *fs,
		       const struct nfskeys_cred_params *params);

/* List the credentials of fs (NULL: every filesystem with a plugin) in the keyring the
 * flags select.  *ret is malloc()ed (NULL when *ret_count is 0). */
int nfskeys_cred_list(struct nfskeys_ctx *ctx, const char *fs, unsigned flags,
		      struct nfskeys_cred_info **ret, size_t *ret_count);

/* Remove every credential of fs (NULL: all of ours) from the keyring the flags select.
 * Returns how many were removed (0 is not an error). */
int nfskeys_cred_clear_all(struct nfskeys_ctx *ctx, const char *fs, unsigned flags);

/* Check the session keyring credentials would go to: 0 when the process has its own,
 * 1 when it is the user's default session keyring (shared by every session of the
 * user, and lost with no process left), -ENOKEY when there is none. */
int nfskeys_cred_check_session(struct nfskeys_ctx *ctx);

#ifdef __cplusplus
}
#endif
