/* The ID-mapping engine's state: the backend chains named by [Translation] Method (and
 * GSS-Methods for principals) loaded as plugins, the TTLs, nobody ids and domain read from
 * the configuration, and the check that every chain entry names an installed backend.  Made
 * once per context on first use (idmap_state_get()). */
#include <ctype.h>
#include <grp.h>
#include <pthread.h>
#include <pwd.h>

#include "conf-get.h"
#include "idmap-engine.h"

/* Serializes the lazy creation of the per-context state (not state itself). */
static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;

static int resolve_nobody(const char *value, bool group, uint32_t *ret)
{
	char buf[4096];
	uint32_t id;

	if (idmap_parse_id(value, &id) == 0) {
		*ret = id;
		return 0;
	}
	if (group) {
		struct group gr, *g = NULL;

		if (getgrnam_r(value, &gr, buf, sizeof(buf), &g) == 0 && g) {
			*ret = g->gr_gid;
			return 0;
		}
	} else {
		struct passwd pw, *p = NULL;

		if (getpwnam_r(value, &pw, buf, sizeof(buf), &p) == 0 && p) {
			*ret = p->pw_uid;
			return 0;
		}
	}
	return -ENOENT;
}

/* Find or load the backend for method.  A backend that cannot be loaded stays in the
 * chain as a failing one (the others still answer; explain names it). */
static struct backend *backend_get(struct nfskeys_ctx *ctx, struct idmap_state *st,
				   const char *method, int *ret_error)
{
	const struct nfskeys_plugin *p;
	struct backend *b;
	char plugname[64];
	int r;

	for (size_t i = 0; i < st->n_backends; i++)
		if (strcaseeq(st->backends[i].method, method))
			return &st->backends[i];
	if (st->n_backends >= MAX_BACKENDS || strlen(method) >= sizeof(b->method)) {
		*ret_error = -E2BIG;
		return NULL;
	}
	b = &st->backends[st->n_backends++];
	snprintf(b->method, sizeof(b->method), "%s", method);
	/* idmapd.conf spells the LDAP backend umich_ldap. */
	if (strcaseeq(method, "umich_ldap"))
		method = "ldap";
	snprintf(plugname, sizeof(plugname), "idmap-%s", method);
	for (char *c = plugname; *c; c++)
		*c = (char)tolower((unsigned char)*c);
	r = plugin_load(ctx, plugname, NFSKEYS_PLUGIN_IDMAP,
			offsetof(struct nfskeys_idmap_ops, ttl) + sizeof(uint32_t), &p);
	if (r < 0) {
		/* a name with no plugin is a typo, said once by nfskeys_idmap_check_config()
		 * (the tools and daemons call it first); a plugin that will not load is not */
		if (r != -ENOENT)
			log_err(ctx, "[Translation] Method: cannot load backend '%s' (%s/%s.so): %s",
				method, plugin_dir(), plugname, strerror(-r));
		b->load_error = r;
		return b;
	}
	if (!((const struct nfskeys_idmap_ops *)p->ops)->lookup) {
		b->load_error = -EPROTO;
		return b;
	}
	if (((const struct nfskeys_idmap_ops *)p->ops)->init) {
		r = ((const struct nfskeys_idmap_ops *)p->ops)->init(ctx, &b->data);
		if (r < 0) {
			log_err(ctx, "idmap backend %s: initialisation failed: %s", method,
				strerror(-r));
			b->load_error = r;
			return b;
		}
	}
	b->ops = p->ops;
	return b;
}

static int chain_parse(struct nfskeys_ctx *ctx, struct idmap_state *st, const char *text,
		       struct backend **chain, size_t *ret_n)
{
	char buf[256], *save = NULL, *tok;
	size_t n = 0;
	int r = 0;

	if (strlen(text) >= sizeof(buf))
		return -EINVAL;
	snprintf(buf, sizeof(buf), "%s", text);
	for (tok = strtok_r(buf, ", \t", &save); tok; tok = strtok_r(NULL, ", \t", &save)) {
		struct backend *b;

		if (n >= MAX_BACKENDS) {
			log_err(ctx, "[Translation] Method: more than %d backends", MAX_BACKENDS);
			return -E2BIG;
		}
		b = backend_get(ctx, st, tok, &r);
		if (!b)
			return r;
		chain[n++] = b;
	}
	if (n == 0) {
		log_err(ctx, "[Translation] Method: empty");
		return -EINVAL;
	}
	*ret_n = n;
	return 0;
}

static bool backend_has_pure_sid(const struct backend *b)
{
	return b->ops &&
	       b->ops->size >= offsetof(struct nfskeys_idmap_ops, pure_sid_to_id) +
					sizeof(b->ops->pure_sid_to_id) &&
	       b->ops->pure_sid_to_id;
}

/* Which backend, if any, answers SID->uid/gid by pure computation (see pure_sid). */
static void pure_sid_find(struct idmap_state *st)
{
	for (unsigned k = 0; k < 2; k++) {
		unsigned kind = k ? NFSKEYS_IDMAP_SID_TO_GID : NFSKEYS_IDMAP_SID_TO_UID;

		for (size_t i = 0; i < st->n_chain; i++) {
			struct backend *b = st->chain[i];

			if (!b->ops)
				break; /* it might have answered: no shortcut past it */
			if (!(b->ops->kinds & IDMAP_KIND_BIT(kind)))
				continue;
			if (backend_has_pure_sid(b))
				st->pure_sid[k] = b;
			break;
		}
	}
}

static void state_free(void *p)
{
	struct idmap_state *st = p;

	if (!st)
		return;
	for (size_t i = 0; i < st->n_backends; i++)
		if (st->backends[i].ops && st->backends[i].ops->done)
			st->backends[i].ops->done(st->backends[i].data);
	idmap_cache_free(st->cache);
	free(st);
}

static int state_new(struct nfskeys_ctx *ctx, struct idmap_state **ret)
{
	struct idmap_state *st;
	const char *v;
	unsigned cache_size;
	char err[256];
	int r;

	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	r = idmap_discover_domain(ctx, st->domain, sizeof(st->domain), &st->domain_source);
	if (r < 0)
		goto fail;
	/* numbers and durations of the schema (common/conf-schema.c: bounds, default) */
	if ((r = conf_get_unsigned(ctx, "Idmap", "Positive-TTL", &st->pos_ttl, err,
				   sizeof(err))) < 0 ||
	    (r = conf_get_unsigned(ctx, "Idmap", "Negative-TTL", &st->neg_ttl, err,
				   sizeof(err))) < 0 ||
	    (r = conf_get_unsigned(ctx, "Mapping", "Nobody-TTL", &st->nobody_ttl, err,
				   sizeof(err))) < 0 ||
	    (r = conf_get_unsigned(ctx, "Idmap", "Cache-Size", &cache_size, err,
				   sizeof(err))) < 0) {
		log_err(ctx, "%s", err);
		goto fail;
	}

	v = nfskeys_conf_get(ctx, "Mapping", "Nobody-User");
	if (resolve_nobody(v ? v : "nobody", false, &st->nobody_uid) < 0) {
		if (v)
			log_warning(ctx, "[Mapping] Nobody-User: no user '%s'; using 65534", v);
		st->nobody_uid = 65534;
	}
	v = nfskeys_conf_get(ctx, "Mapping", "Nobody-Group");
	if (resolve_nobody(v ? v : "nogroup", true, &st->nobody_gid) < 0 &&
	    (v || resolve_nobody("nobody", true, &st->nobody_gid) < 0)) {
		if (v)
			log_warning(ctx, "[Mapping] Nobody-Group: no group '%s'; using 65534", v);
		st->nobody_gid = 65534;
	}

	v = nfskeys_conf_get(ctx, "Translation", "Method");
	snprintf(st->method_text, sizeof(st->method_text), "%s", v && *v ? v : "nsswitch");
	r = chain_parse(ctx, st, st->method_text, st->chain, &st->n_chain);
	if (r < 0)
		goto fail;
	v = nfskeys_conf_get(ctx, "Translation", "GSS-Methods");
	snprintf(st->gss_method_text, sizeof(st->gss_method_text), "%s",
		 v && *v ? v : st->method_text);
	r = chain_parse(ctx, st, st->gss_method_text, st->gss_chain, &st->n_gss_chain);
	if (r < 0)
		goto fail;

	pure_sid_find(st);
	st->cache = idmap_cache_new(cache_size ? cache_size : 1);
	if (!st->cache) {
		r = -ENOMEM;
		goto fail;
	}
	log_debug(ctx, "idmap: domain %s (%s), Method %s, GSS-Methods %s", st->domain,
		  st->domain_source, st->method_text, st->gss_method_text);
	*ret = st;
	return 0;
fail:
	state_free(st);
	return r;
}

int idmap_state_get(struct nfskeys_ctx *ctx, struct idmap_state **ret)
{
	struct idmap_state *st;
	int r = 0;

	st = ctx_ext_get(ctx, CTX_EXT_IDMAP);
	if (_likely_(st != NULL)) {
		*ret = st;
		return 0;
	}
	pthread_mutex_lock(&init_lock);
	st = ctx_ext_get(ctx, CTX_EXT_IDMAP);
	if (!st) {
		r = state_new(ctx, &st);
		if (r == 0)
			ctx_ext_set(ctx, CTX_EXT_IDMAP, st, state_free);
	}
	pthread_mutex_unlock(&init_lock);
	if (r == 0)
		*ret = st;
	return r;
}

/* "nsswitch, sid, static" from the idmap-*.so plugins installed; "" when none. */
void idmap_installed_backends(char *buf, size_t size)
{
	char **names = NULL;
	size_t n = 0, len = 0;

	buf[0] = '\0';
	if (plugin_list(NFSKEYS_PLUGIN_IDMAP, &names, &n) < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		const char *m = strncmp(names[i], "idmap-", 6) == 0 ? names[i] + 6 : names[i];
		int w = snprintf(buf + len, size - len, "%s%s", len ? ", " : "", m);

		if (w > 0 && (size_t)w < size - len)
			len += (size_t)w;
		free(names[i]);
	}
	free(names);
}

/* A chain entry that names no installed backend is a typo, not an outage. */
static const struct backend *unknown_backend(struct backend *const *chain, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!chain[i]->ops && chain[i]->load_error == -ENOENT)
			return chain[i];
	return NULL;
}

_public_ int nfskeys_idmap_check_config(struct nfskeys_ctx *ctx)
{
	const struct backend *b;
	struct idmap_state *st;
	const char *key = "Method", *text;
	char installed[256];
	int r;

	if (!ctx)
		return -EINVAL;
	r = idmap_state_get(ctx, &st);
	if (r < 0)
		return r;
	text = st->method_text;
	b = unknown_backend(st->chain, st->n_chain);
	if (!b) {
		key = "GSS-Methods";
		text = st->gss_method_text;
		b = unknown_backend(st->gss_chain, st->n_gss_chain);
	}
	if (!b)
		return 0;
	idmap_installed_backends(installed, sizeof(installed));
	log_err(ctx, "unknown backend '%s' ([Translation] %s = %s in %s): no idmap-%s.so in %s "
		"(installed: %s)", b->method, key, text, nfskeys_ctx_get_conf_path(ctx),
		strcaseeq(b->method, "umich_ldap") ? "ldap" : b->method, plugin_dir(),
		installed[0] ? installed : "none");
	return -EINVAL;
}

_public_ int nfskeys_idmap_get_domain(struct nfskeys_ctx *ctx, const char **ret_domain,
				      const char **ret_source)
{
	struct idmap_state *st;
	int r;

	if (!ctx || !ret_domain)
		return -EINVAL;
	r = idmap_state_get(ctx, &st);
	if (r < 0)
		return r;
	*ret_domain = st->domain;
	if (ret_source)
		*ret_source = st->domain_source;
	return 0;
}
