/* The credential API: picks the keyring the caller asked for, loads the plugin for the
 * filesystem ("cred-<fs>") and dispatches; lists and clears kernel-key credentials
 * generically from the plugin's key type and description prefix. */
#include <ctype.h>
#include <keyutils.h>

#include "cred-plugin.h"
#include "libnfskeys-private.h"

/* Per-context state (CTX_EXT_CRED): the ops tables already resolved. */
struct cred_state {
	struct {
		char fs[8];
		const struct nfskeys_cred_ops *ops;
	} cache[8];
	size_t n;
};

static void cred_state_free(void *data)
{
	free(data);
}

static bool fs_name_valid(const char *fs)
{
	size_t n = 0;

	if (!fs)
		return false;
	for (; fs[n]; n++)
		if (!islower((unsigned char)fs[n]) && !isdigit((unsigned char)fs[n]))
			return false;
	return n > 0 && n < sizeof(((struct cred_state *)0)->cache[0].fs);
}

static int cred_ops(struct nfskeys_ctx *ctx, const char *fs, const struct nfskeys_cred_ops **ret)
{
	struct cred_state *st = ctx_ext_get(ctx, CTX_EXT_CRED);
	const struct nfskeys_plugin *p;
	const struct nfskeys_cred_ops *ops;
	char name[32];
	int r;

	if (!fs_name_valid(fs)) {
		log_err(ctx, "invalid filesystem name '%s'", fs ? fs : "");
		return -EINVAL;
	}
	if (!st) {
		st = calloc(1, sizeof(*st));
		if (!st)
			return -ENOMEM;
		ctx_ext_set(ctx, CTX_EXT_CRED, st, cred_state_free);
	}
	for (size_t i = 0; i < st->n; i++)
		if (streq(st->cache[i].fs, fs)) {
			*ret = st->cache[i].ops;
			return 0;
		}

	snprintf(name, sizeof(name), NFSKEYS_CRED_PLUGIN_PREFIX "%s", fs);
	r = plugin_load(ctx, name, NFSKEYS_PLUGIN_CRED, NFSKEYS_CRED_OPS_MIN_SIZE, &p);
	if (r == -ENOENT) {
		log_err(ctx, "no credential plugin for '%s' (%s/%s.so)", fs, plugin_dir(), name);
		return -EPROTONOSUPPORT;
	}
	if (r < 0)
		return r;
	ops = p->ops;
	if (!ops->fs || !streq(ops->fs, fs) || !ops->add || !ops->find || !ops->clear ||
	    (!ops->key_type && (!ops->list || !ops->clear_all)) ||
	    (ops->key_type && !ops->desc_prefix)) {
		log_err(ctx, "plugin %s: incomplete credential operations", name);
		return -EPROTO;
	}
	if (st->n < ARRAY_SIZE(st->cache)) {
		snprintf(st->cache[st->n].fs, sizeof(st->cache[st->n].fs), "%s", fs);
		st->cache[st->n++].ops = ops;
	}
	*ret = ops;
	return 0;
}

/* Whether keyring ses is a user-session keyring ("_uid_ses.UID"): the default session
 * keyring of a process that has none of its own, shared by all of the user's sessions.
 * Told from its description, not by resolving KEY_SPEC_USER_SESSION_KEYRING and comparing:
 * that lookup creates the user and user-session keyrings of the caller's user namespace
 * when they do not exist yet, 2 keys and 34 bytes or more of the user's key quota (and,
 * in a user namespace of the user's own, its register keyring: 3 keys, 52 bytes) in
 * every container that only wanted a credential in its own session keyring
 * (doc/KERNEL-INTERFACES.md, "Key quota"). */
static bool is_user_session_keyring(key_serial_t ses)
{
	_cleanup_free_ char *text = NULL;
	struct nfskeys_key_info k;

	if (ses <= 0 || keyctl_describe_alloc(ses, &text) < 0 ||
	    nfskeys_key_parse_description(text, &k) < 0)
		return false;
	return streq(k.type, "keyring") && startswith(k.description, "_uid_ses.");
}

/* The keyring credentials go to and are looked up in.  A process without a session
 * keyring of its own (started by a service manager, setpriv, su without pam_keyinit) would
 * get a new anonymous session keyring from add_key(2) on KEY_SPEC_SESSION_KEYRING, which
 * dies with the process: the key is "added" and gone, and the kernel, which searches the
 * user-session keyring on that user's behalf, never sees it (found on a real CIFS
 * multiuser mount, tests/kernel/cifs-multiuser.ktest).  Resolving the special id without
 * creating gives the keyring the kernel searches for this process (the user-session
 * keyring, installed as the session keyring by that lookup): use its serial then.  A
 * process with a session keyring of its own keeps the special id, so the calls stay those
 * of cifscreds (tests/integration/cred-cifs-interop.sh). */
static int32_t cred_keyring(unsigned flags)
{
	key_serial_t ses;

	if (flags & NFSKEYS_CRED_USER_KEYRING)
		return KEY_SPEC_USER_KEYRING;
	ses = keyctl_get_keyring_ID(KEY_SPEC_SESSION_KEYRING, 0);
	return is_user_session_keyring(ses) ? ses : KEY_SPEC_SESSION_KEYRING;
}

_public_ int nfskeys_cred_check_session(struct nfskeys_ctx *ctx)
{
	key_serial_t ses;

	ses = keyctl_get_keyring_ID(KEY_SPEC_SESSION_KEYRING, 0);
	if (ses < 0) {
		int r = negerrno();
		log_debug(ctx, "session keyring: %s", strerror(-r));
		return r == -ENOKEY ? r : -ENOKEY;
	}
	return is_user_session_keyring(ses) ? 1 : 0;
}

/* The arguments every nfskeys_cred_*() call takes, checked, and fs's operations. */
static int cred_begin(struct nfskeys_ctx *ctx, const char *fs,
		      const struct nfskeys_cred_params *params,
		      const struct nfskeys_cred_ops **ret_ops)
{
	if (!ctx || !params)
		return -EINVAL;
	return cred_ops(ctx, fs, ret_ops);
}

/* Common checks before anything is written to a keyring. */
static int cred_prepare(struct nfskeys_ctx *ctx, const char *fs,
			const struct nfskeys_cred_params *params,
			const struct nfskeys_cred_ops **ret_ops)
{
	int r;

	r = cred_begin(ctx, fs, params, ret_ops);
	if (r < 0)
		return r;
	if ((*ret_ops)->key_type && !(params->flags & NFSKEYS_CRED_USER_KEYRING)) {
		r = nfskeys_cred_check_session(ctx);
		if (r == -ENOKEY) {
			log_err(ctx, "no session keyring (see pam_keyinit(8))");
			return r;
		}
		/* Callers warn their users (see nfskeys_cred_check_session()). */
		if (r == 1)
			log_debug(ctx, "the session keyring is the user's default one, shared "
				  "by all sessions of the user");
	}
	return 0;
}

static int cred_write(struct nfskeys_ctx *ctx, const char *fs,
		      const struct nfskeys_cred_params *params, bool update)
{
	const struct nfskeys_cred_ops *ops;
	int r = cred_prepare(ctx, fs, params, &ops);

	if (r < 0)
		return r;
	return ops->add(ctx, params, cred_keyring(params->flags), update);
}

_public_ int nfskeys_cred_add(struct nfskeys_ctx *ctx, const char *fs,
			      const struct nfskeys_cred_params *params)
{
	return cred_write(ctx, fs, params, false);
}

_public_ int nfskeys_cred_update(struct nfskeys_ctx *ctx, const char *fs,
				 const struct nfskeys_cred_params *params)
{
	return cred_write(ctx, fs, params, true);
}

_public_ int nfskeys_cred_find(struct nfskeys_ctx *ctx, const char *fs,
			       const struct nfskeys_cred_params *params,
			       struct nfskeys_cred_info *ret_info)
{
	const struct nfskeys_cred_ops *ops;
	struct nfskeys_cred_info info = { 0 };
	int r;

	if (!ret_info)
		return -EINVAL;
	r = cred_begin(ctx, fs, params, &ops);
	if (r < 0)
		return r;
	r = ops->find(ctx, params, cred_keyring(params->flags), &info);
	if (r < 0)
		return r;
	*ret_info = info;
	return 0;
}

_public_ int nfskeys_cred_build(struct nfskeys_ctx *ctx, const char *fs,
				const struct nfskeys_cred_params *params,
				struct nfskeys_secret **ret_payload,
				struct nfskeys_cred_info *ret_info)
{
	const struct nfskeys_cred_ops *ops;
	struct nfskeys_cred_info info = { 0 };
	struct nfskeys_secret *payload = NULL;
	int r;

	if (!ret_payload)
		return -EINVAL;
	r = cred_begin(ctx, fs, params, &ops);
	if (r < 0)
		return r;
	if (!ops->build)
		return -EOPNOTSUPP;
	r = ops->build(ctx, params, &payload, &info);
	if (r < 0)
		return r;
	*ret_payload = payload;
	if (ret_info)
		*ret_info = info;
	return 0;
}

_public_ int nfskeys_cred_renew(struct nfskeys_ctx *ctx, const char *fs,
				const struct nfskeys_cred_params *params,
				struct nfskeys_cred_info *ret_info)
{
	const struct nfskeys_cred_ops *ops;
	struct nfskeys_cred_info info = { 0 };
	int r;

	r = cred_begin(ctx, fs, params, &ops);
	if (r < 0)
		return r;
	if (!ops->renew)
		return -EOPNOTSUPP;
	r = ops->renew(ctx, params, &info);
	if (r < 0)
		return r;
	if (ret_info)
		*ret_info = info;
	return 0;
}

_public_ int nfskeys_cred_clear(struct nfskeys_ctx *ctx, const char *fs,
				const struct nfskeys_cred_params *params)
{
	const struct nfskeys_cred_ops *ops;
	int r;

	r = cred_begin(ctx, fs, params, &ops);
	if (r < 0)
		return r;
	return ops->clear(ctx, params, cred_keyring(params->flags));
}

/* The keys of ops' type and prefix linked directly in keyring. */
static int keys_scan(const struct nfskeys_cred_ops *ops, int32_t keyring,
		     struct nfskeys_cred_info **ret, size_t *ret_count)
{
	_cleanup_free_ int32_t *serials = NULL;
	struct nfskeys_cred_info *v = NULL;
	size_t n = 0, count = 0;
	int r;

	r = nfskeys_keyring_list(keyring, &serials, &count);
	if (r < 0)
		return r;
	for (size_t i = 0; i < count; i++) {
		struct nfskeys_key_info k;
		struct nfskeys_cred_info *nv;

		if (nfskeys_key_describe(serials[i], &k) < 0 || !streq(k.type, ops->key_type) ||
		    !startswith(k.description, ops->desc_prefix))
			continue;
		nv = realloc(v, (n + 1) * sizeof(*v));
		if (!nv) {
			free(v);
			return -ENOMEM;
		}
		v = nv;
		memset(&v[n], 0, sizeof(v[n]));
		snprintf(v[n].fs, sizeof(v[n].fs), "%s", ops->fs);
		snprintf(v[n].type, sizeof(v[n].type), "%s", k.type);
		snprintf(v[n].description, sizeof(v[n].description), "%s", k.description);
		v[n].serial = k.serial;
		v[n].expiry = k.expiry;
		n++;
	}
	*ret = v;
	*ret_count = n;
	return 0;
}

static int list_one(struct nfskeys_ctx *ctx, const struct nfskeys_cred_ops *ops,
		    int32_t keyring, struct nfskeys_cred_info **ret, size_t *ret_count)
{
	if (ops->list)
		return ops->list(ctx, keyring, ret, ret_count);
	return keys_scan(ops, keyring, ret, ret_count);
}

/* The filesystems to act on: fs itself, or every credential plugin installed. */
static int fs_names(const char *fs, char ***ret, size_t *ret_count)
{
	char **names = NULL;
	size_t n = 0, k = 0;
	int r;

	if (fs) {
		names = calloc(1, sizeof(*names));
		if (!names || !(names[0] = strdup(fs))) {
			free(names);
			return -ENOMEM;
		}
		*ret = names;
		*ret_count = 1;
		return 0;
	}
	r = plugin_list(NFSKEYS_PLUGIN_CRED, &names, &n);
	if (r == -ENOENT) { /* no plugin directory: no credentials of any kind */
		*ret = NULL;
		*ret_count = 0;
		return 0;
	}
	if (r < 0)
		return r;
	for (size_t i = 0; i < n; i++) {
		if (!startswith(names[i], NFSKEYS_CRED_PLUGIN_PREFIX) ||
		    !fs_name_valid(names[i] + strlen(NFSKEYS_CRED_PLUGIN_PREFIX))) {
			free(names[i]);
			continue;
		}
		memmove(names[i], names[i] + strlen(NFSKEYS_CRED_PLUGIN_PREFIX),
			strlen(names[i]) - strlen(NFSKEYS_CRED_PLUGIN_PREFIX) + 1);
		names[k++] = names[i];
	}
	*ret = names;
	*ret_count = k;
	return 0;
}

static void strv_free(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

_public_ int nfskeys_cred_list(struct nfskeys_ctx *ctx, const char *fs, unsigned flags,
			       struct nfskeys_cred_info **ret, size_t *ret_count)
{
	struct nfskeys_cred_info *all = NULL;
	char **names = NULL;
	size_t nnames = 0, total = 0;
	int r;

	if (!ctx || !ret || !ret_count)
		return -EINVAL;
	r = fs_names(fs, &names, &nnames);
	if (r < 0)
		return r;
	for (size_t i = 0; i < nnames; i++) {
		const struct nfskeys_cred_ops *ops;
		struct nfskeys_cred_info *v = NULL, *nall;
		size_t n = 0;

		r = cred_ops(ctx, names[i], &ops);
		if (r >= 0)
			r = list_one(ctx, ops, cred_keyring(flags), &v, &n);
		if (r == -ENOKEY && !fs) /* nothing of this kind (e.g. no ccache) */
			r = 0;
		if (r < 0)
			goto fail;
		if (n == 0) {
			free(v);
			continue;
		}
		nall = realloc(all, (total + n) * sizeof(*all));
		if (!nall) {
			free(v);
			r = -ENOMEM;
			goto fail;
		}
		all = nall;
		memcpy(all + total, v, n * sizeof(*v));
		total += n;
		free(v);
	}
	strv_free(names, nnames);
	*ret = all;
	*ret_count = total;
	return 0;
fail:
	strv_free(names, nnames);
	free(all);
	return r;
}

_public_ int nfskeys_cred_clear_all(struct nfskeys_ctx *ctx, const char *fs, unsigned flags)
{
	char **names = NULL;
	size_t nnames = 0;
	int r, removed = 0;

	if (!ctx)
		return -EINVAL;
	r = fs_names(fs, &names, &nnames);
	if (r < 0)
		return r;
	for (size_t i = 0; i < nnames; i++) {
		const struct nfskeys_cred_ops *ops;
		struct nfskeys_cred_info *v = NULL;
		size_t n = 0;

		r = cred_ops(ctx, names[i], &ops);
		if (r < 0)
			break;
		if (ops->clear_all) {
			r = ops->clear_all(ctx, cred_keyring(flags));
			if (r == -ENOKEY)
				r = 0;
			if (r < 0)
				break;
			removed += r;
			continue;
		}
		r = keys_scan(ops, cred_keyring(flags), &v, &n);
		if (r < 0)
			break;
		for (size_t j = 0; j < n; j++) {
			int k = nfskeys_key_unlink(v[j].serial, cred_keyring(flags));
			if (k < 0 && k != -ENOENT) {
				log_err(ctx, "cannot remove key %s: %s", v[j].description,
					strerror(-k));
				r = k;
				continue;
			}
			removed++;
		}
		free(v);
		if (r < 0)
			break;
	}
	strv_free(names, nnames);
	return r < 0 ? r : removed;
}
