/* cred-cifs: CIFS/SMB credentials as cifscreds makes them (doc/DESIGN.md §3): logon keys
 * cifs:a:<address> per address the host resolves to, or cifs:d:<domain>, payload
 * "user:password" plus a NUL, in the session keyring by default. */
#include <arpa/inet.h>
#include <keyutils.h>
#include <netdb.h>
#include <sys/socket.h>

#include "cred-plugin.h"
#include "libnfskeys-private.h"

#define CIFS_KEY_TYPE "logon"
#define CIFS_MAX_USER 256
#define CIFS_MAX_PASSWORD 512
#define CIFS_MAX_DOMAIN 255
#define CIFS_MAX_ADDRESSES 16
/* What cifscreds sets: possessor and user may view, write (update) and search. */
#define CIFS_KEY_PERM                                                              \
	(KEY_POS_VIEW | KEY_POS_WRITE | KEY_POS_SEARCH | KEY_USR_VIEW | KEY_USR_WRITE | \
	 KEY_USR_SEARCH)
/* Characters Windows does not allow in user and domain names (as cifscreds checks). */
#define USER_BAD_CHARS "\\/\"[]:|<>+=;,?*"
#define DOMAIN_BAD_CHARS "\\/:*?\"<>|"

struct desc_list {
	char v[CIFS_MAX_ADDRESSES][8 + INET6_ADDRSTRLEN + 12 + CIFS_MAX_DOMAIN];
	size_t n;
};

static int check_chars(struct nfskeys_ctx *ctx, const char *what, const char *s,
		       const char *bad)
{
	const char *c = strpbrk(s, bad);

	if (c) {
		log_err(ctx, "%s '%s' contains '%c', which CIFS does not allow", what, s, *c);
		return -EINVAL;
	}
	for (c = s; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f) {
			log_err(ctx, "%s contains a control character", what);
			return -EINVAL;
		}
	return 0;
}

static int check_target(struct nfskeys_ctx *ctx, const struct nfskeys_cred_params *p)
{
	if (!p->target || !*p->target) {
		log_err(ctx, "no host or domain given");
		return -EINVAL;
	}
	if (p->flags & NFSKEYS_CRED_DOMAIN) {
		if (strlen(p->target) > CIFS_MAX_DOMAIN) {
			log_err(ctx, "domain name longer than %d bytes", CIFS_MAX_DOMAIN);
			return -EINVAL;
		}
		return check_chars(ctx, "domain name", p->target, DOMAIN_BAD_CHARS);
	}
	if (strlen(p->target) > NI_MAXHOST) {
		log_err(ctx, "host name longer than %d bytes", NI_MAXHOST);
		return -EINVAL;
	}
	return 0;
}

static int check_user(struct nfskeys_ctx *ctx, const struct nfskeys_cred_params *p)
{
	size_t len;

	if (!p->user || !*p->user) {
		log_err(ctx, "empty user name");
		return -EINVAL;
	}
	len = strlen(p->user);
	if (len > CIFS_MAX_USER) {
		log_err(ctx, "user name is %zu bytes, at most %d allowed", len, CIFS_MAX_USER);
		return -EINVAL;
	}
	return check_chars(ctx, "user name", p->user, USER_BAD_CHARS);
}

static int check_password(struct nfskeys_ctx *ctx, const struct nfskeys_cred_params *p)
{
	size_t len = nfskeys_secret_len(p->password);

	if (!p->password || len == 0) {
		log_err(ctx, "empty password");
		return -EINVAL;
	}
	if (len > CIFS_MAX_PASSWORD) {
		log_err(ctx, "password is %zu bytes, at most %d allowed", len, CIFS_MAX_PASSWORD);
		return -EINVAL;
	}
	if (memchr(nfskeys_secret_data((struct nfskeys_secret *)p->password), '\0', len)) {
		log_err(ctx, "password contains a NUL byte");
		return -EINVAL;
	}
	return 0;
}

/* The key descriptions for the target: cifs:d:<domain>, or cifs:a:<address> for each TCP
 * address of the host in resolver order (IPv6 compressed, with %scope when set). */
static int target_descriptions(struct nfskeys_ctx *ctx, const struct nfskeys_cred_params *p,
			       struct desc_list *ret)
{
	struct addrinfo *list = NULL;
	int r;

	ret->n = 0;
	r = check_target(ctx, p);
	if (r < 0)
		return r;
	if (p->flags & NFSKEYS_CRED_DOMAIN) {
		snprintf(ret->v[0], sizeof(ret->v[0]), "cifs:d:%s", p->target);
		ret->n = 1;
		return 0;
	}
	r = getaddrinfo(p->target, NULL, NULL, &list);
	if (r != 0) {
		log_err(ctx, "cannot resolve host '%s': %s", p->target,
			r == EAI_SYSTEM ? strerror(errno) : gai_strerror(r));
		return -EHOSTUNREACH;
	}
	for (struct addrinfo *a = list; a && ret->n < CIFS_MAX_ADDRESSES; a = a->ai_next) {
		char addr[INET6_ADDRSTRLEN + 12];
		bool dup = false;

		if (a->ai_socktype != SOCK_STREAM || a->ai_protocol != IPPROTO_TCP)
			continue;
		if (a->ai_family == AF_INET) {
			const struct sockaddr_in *sin = (const void *)a->ai_addr;
			inet_ntop(AF_INET, &sin->sin_addr, addr, sizeof(addr));
		} else if (a->ai_family == AF_INET6) {
			const struct sockaddr_in6 *sin6 = (const void *)a->ai_addr;
			inet_ntop(AF_INET6, &sin6->sin6_addr, addr, sizeof(addr));
			if (sin6->sin6_scope_id)
				snprintf(addr + strlen(addr), sizeof(addr) - strlen(addr), "%%%u",
					 sin6->sin6_scope_id);
		} else {
			continue;
		}
		snprintf(ret->v[ret->n], sizeof(ret->v[0]), "cifs:a:%s", addr);
		for (size_t i = 0; i < ret->n; i++)
			dup |= streq(ret->v[i], ret->v[ret->n]);
		if (!dup)
			ret->n++;
	}
	freeaddrinfo(list);
	if (ret->n == 0) {
		log_err(ctx, "host '%s' has no IPv4 or IPv6 address", p->target);
		return -EHOSTUNREACH;
	}
	return 0;
}

static int key_lookup(int32_t keyring, const char *desc, int32_t *ret)
{
	return nfskeys_key_search(keyring, CIFS_KEY_TYPE, desc, 0, ret);
}

/* Unlink from KEYRING the logon keys described DESC that a search cannot find: negative
 * ones (a CIFS access before the user had a key leaves one, the kernel's request-key
 * failing), expired or revoked ones.  A keyring holds one key per type and description:
 * when the search finds a live one (another process added it meanwhile), nothing goes.
 * Returns how many went. */
static int unlink_dead_keys(int32_t keyring, const char *desc)
{
	_cleanup_free_ void *buf = NULL;
	int32_t live;
	long n;
	int gone = 0;

	if (nfskeys_key_search(keyring, CIFS_KEY_TYPE, desc, 0, &live) == 0)
		return 0;
	n = keyctl_read_alloc(keyring, &buf);

	for (long i = 0; n > 0 && i < n / (long)sizeof(int32_t); i++) {
		int32_t k = ((int32_t *)buf)[i];
		_cleanup_free_ char *d = NULL;
		char *type_end, *p;
		int fields = 0;

		if (keyctl_describe_alloc(k, &d) < 0)
			continue;
		/* "type;uid;gid;perm;description" */
		type_end = strchr(d, ';');
		for (p = d; *p && fields < 4; p++)
			if (*p == ';')
				fields++;
		if (!type_end || fields < 4 || (size_t)(type_end - d) != strlen(CIFS_KEY_TYPE) ||
		    strncmp(d, CIFS_KEY_TYPE, strlen(CIFS_KEY_TYPE)) != 0 || !streq(p, desc))
			continue;
		if (nfskeys_key_unlink(k, keyring) == 0)
			gone++;
	}
	return gone;
}

/* What a failed add or move says: EDQUOT names the quota that is used up and where to
 * look, since the cure (raising kernel.keys.maxkeys/maxbytes, or removing keys) is not in
 * this command. */
static void log_key_error(struct nfskeys_ctx *ctx, const char *verb, const char *desc,
			  const char *where, int r)
{
	if (r == -EDQUOT)
		log_err(ctx,
			"cannot %s %s%s: uid %u has used up its key quota "
			"(kernel.keys.maxkeys and maxbytes; 'nfskeys doctor' shows the use)",
			verb, desc, where, (unsigned)getuid());
	else
		log_err(ctx, "cannot %s %s%s: %s", verb, desc, where, strerror(-r));
}

/* Take back a key that was made but not delivered: gone at once, payload and all, not
 * when the garbage collector comes. */
static void cifs_key_drop(int32_t key, bool staged_in_process)
{
	(void)keyctl_invalidate(key);
	nfskeys_key_unlink(key, KEY_SPEC_THREAD_KEYRING);
	if (staged_in_process)
		nfskeys_key_unlink(key, KEY_SPEC_PROCESS_KEYRING);
}

/* Add one new key, never displacing one: the search in cifs_add and the add are not
 * atomic, so two "add" calls for one target at once would both see no key and the second
 * add_key would silently replace the first one's password.  The key is made in the thread
 * keyring (possessed: its timeout may be set there), then moved into the target keyring
 * with KEYCTL_MOVE_EXCL, which fails with EEXIST when that keyring already holds such a
 * key, and only then given cifscreds' permissions (without Link the move would be
 * refused).  Setting them needs the key possessed: through the session keyring it now
 * sits in, or, for the user keyring (which a session keyring need not link), through a
 * link in the process keyring made before the move.  Every keyring is a key of the
 * user's quota while it lives, and an exiting process's ones live until the kernel's
 * garbage collector runs: only the thread keyring is made unless the process keyring is
 * needed (doc/KERNEL-INTERFACES.md, "Key quota"). */
static int cifs_key_new(struct nfskeys_ctx *ctx, const struct nfskeys_cred_params *p,
			const char *desc, struct nfskeys_secret *payload, int32_t keyring,
			int32_t *ret_key)
{
	bool via_process = keyring == KEY_SPEC_USER_KEYRING;
	int32_t key;
	int r;

	r = nfskeys_key_add(CIFS_KEY_TYPE, desc, nfskeys_secret_data(payload),
			    nfskeys_secret_len(payload), KEY_SPEC_THREAD_KEYRING, &key);
	if (r < 0) {
		log_key_error(ctx, "add key", desc, "", r);
		return r;
	}
	/* as cifscreds: the timeout first (it needs setattr, a possessor's right) */
	if (p->timeout > 0) {
		r = nfskeys_key_set_timeout(key, p->timeout);
		if (r < 0) {
			log_err(ctx, "cannot set the timeout of %s: %s", desc, strerror(-r));
			cifs_key_drop(key, false);
			return r;
		}
	}
	if (via_process) {
		r = nfskeys_key_link(key, KEY_SPEC_PROCESS_KEYRING);
		if (r < 0) {
			log_err(ctx, "cannot stage key %s: %s", desc, strerror(-r));
			cifs_key_drop(key, false);
			return r;
		}
	}
	r = keyctl_move(key, KEY_SPEC_THREAD_KEYRING, keyring, KEYCTL_MOVE_EXCL) < 0 ? negerrno() : 0;
	/* a dead key of that description (the kernel's negative one after a refused access)
	 * is not credentials: it goes, and the move is tried once more */
	if (r == -EEXIST && unlink_dead_keys(keyring, desc) > 0)
		r = keyctl_move(key, KEY_SPEC_THREAD_KEYRING, keyring, KEYCTL_MOVE_EXCL) < 0
			    ? negerrno()
			    : 0;
	if (r < 0) {
		if (r == -EEXIST)
			log_err(ctx, "credentials for %s already exist (%s was added meanwhile, "
				     "by another process; use update to change them)",
				p->target, desc);
		else
			log_key_error(ctx, "move", desc, " into the keyring", r);
		cifs_key_drop(key, via_process);
		return r;
	}
	r = keyctl_setperm(key, CIFS_KEY_PERM) < 0 ? negerrno() : 0;
	if (via_process)
		nfskeys_key_unlink(key, KEY_SPEC_PROCESS_KEYRING);
	if (r < 0) {
		log_err(ctx, "cannot set permissions on %s: %s", desc, strerror(-r));
		nfskeys_key_unlink(key, keyring);
		return r;
	}
	log_debug(ctx, "added key %s (serial %d)", desc, key);
	*ret_key = key;
	return 0;
}

static int cifs_add(struct nfskeys_ctx *ctx, const struct nfskeys_cred_params *p,
		    int32_t keyring, bool update)
{
	struct nfskeys_secret *payload = NULL;
	struct desc_list d;
	bool present[CIFS_MAX_ADDRESSES] = { false };
	int32_t added[CIFS_MAX_ADDRESSES];
	size_t ulen, plen, npresent = 0;
	int r, written = 0;

	r = target_descriptions(ctx, p, &d);
	if (r < 0)
		return r;
	if ((r = check_user(ctx, p)) < 0 || (r = check_password(ctx, p)) < 0)
		return r;
	if (update && p->timeout > 0) {
		/* The keys are not ours to set attributes on once their permissions are set. */
		log_err(ctx, "a timeout can only be given when adding (clear, then add)");
		return -EINVAL;
	}

	for (size_t i = 0; i < d.n; i++) {
		int32_t k;
		r = key_lookup(keyring, d.v[i], &k);
		if (r == 0) {
			present[i] = true;
			npresent++;
		} else if (r != -ENOKEY) {
			log_err(ctx, "searching for %s: %s", d.v[i], strerror(-r));
			return r;
		}
	}
	if (!update && npresent > 0) {
		log_err(ctx, "credentials for %s already exist (use update to change them)",
			p->target);
		return -EEXIST;
	}
	if (update && npresent == 0) {
		log_err(ctx, "no credentials for %s to update (use add)", p->target);
		return -ENOKEY;
	}

	ulen = strlen(p->user);
	plen = nfskeys_secret_len(p->password);
	r = nfskeys_secret_new(ulen + 1 + plen + 1, &payload);
	if (r < 0)
		return r;
	{
		unsigned char *b = nfskeys_secret_data(payload);
		memcpy(b, p->user, ulen);
		b[ulen] = ':';
		memcpy(b + ulen + 1,
		       nfskeys_secret_data((struct nfskeys_secret *)p->password), plen);
		b[ulen + 1 + plen] = '\0';
		nfskeys_secret_set_len(payload, ulen + 1 + plen + 1);
	}

	for (size_t i = 0; i < d.n; i++) {
		int32_t key;

		if (update && !present[i])
			continue;
		if (update) {
			/* add_key on an existing key of the keyring updates it in place */
			r = nfskeys_key_add(CIFS_KEY_TYPE, d.v[i], nfskeys_secret_data(payload),
					    nfskeys_secret_len(payload), keyring, &key);
			if (r < 0) {
				log_err(ctx, "cannot update key %s: %s", d.v[i], strerror(-r));
				break;
			}
			log_debug(ctx, "updated key %s (serial %d)", d.v[i], key);
			written++;
			continue;
		}
		r = cifs_key_new(ctx, p, d.v[i], payload, keyring, &added[written]);
		if (r < 0)
			break;
		written++;
	}
	if (r < 0 && !update) {
		/* all or nothing: take back the keys this call added for other addresses */
		for (int i = 0; i < written; i++)
			nfskeys_key_unlink(added[i], keyring);
		written = 0;
	}
	nfskeys_secret_free(payload);
	return r < 0 ? r : written;
}

static int cifs_find(struct nfskeys_ctx *ctx, const struct nfskeys_cred_params *p,
		     int32_t keyring, struct nfskeys_cred_info *ret_info)
{
	struct desc_list d;
	int r;

	r = target_descriptions(ctx, p, &d);
	if (r < 0)
		return r;
	for (size_t i = 0; i < d.n; i++) {
		struct nfskeys_key_info k;
		int32_t key;

		if (key_lookup(keyring, d.v[i], &key) < 0 || nfskeys_key_describe(key, &k) < 0)
			continue;
		memset(ret_info, 0, sizeof(*ret_info));
		snprintf(ret_info->fs, sizeof(ret_info->fs), "cifs");
		snprintf(ret_info->type, sizeof(ret_info->type), "%s", k.type);
		snprintf(ret_info->description, sizeof(ret_info->description), "%s",
			 k.description);
		ret_info->serial = key;
		ret_info->expiry = k.expiry;
		return 0;
	}
	return -ENOKEY;
}

static int cifs_clear(struct nfskeys_ctx *ctx, const struct nfskeys_cred_params *p,
		      int32_t keyring)
{
	struct desc_list d;
	int r, removed = 0;

	r = target_descriptions(ctx, p, &d);
	if (r < 0)
		return r;
	for (size_t i = 0; i < d.n; i++) {
		int32_t key;

		if (key_lookup(keyring, d.v[i], &key) < 0)
			continue;
		r = nfskeys_key_unlink(key, keyring);
		if (r < 0) {
			log_err(ctx, "cannot remove %s: %s", d.v[i], strerror(-r));
			return r;
		}
		removed++;
	}
	if (removed == 0) {
		log_err(ctx, "no credentials for %s", p->target);
		return -ENOKEY;
	}
	return removed;
}

static const struct nfskeys_cred_ops cifs_ops = {
	.size = sizeof(cifs_ops),
	.fs = "cifs",
	.key_type = CIFS_KEY_TYPE,
	.desc_prefix = "cifs:",
	.add = cifs_add,
	.find = cifs_find,
	.clear = cifs_clear,
};

static const struct nfskeys_plugin plugin = {
	.abi = NFSKEYS_PLUGIN_ABI,
	.size = sizeof(plugin),
	.kind = NFSKEYS_PLUGIN_CRED,
	.name = "cred-cifs",
	.description = "CIFS/SMB user name and password keys (cifscreds format)",
	.ops = &cifs_ops,
	.ops_size = sizeof(cifs_ops),
};

_public_ const struct nfskeys_plugin *nfskeys_plugin_entry(void)
{
	return &plugin;
}
