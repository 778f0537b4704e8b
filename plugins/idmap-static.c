/* idmap backend "static": the [Static] table, as in idmapd.conf.  "name@DOMAIN = local"
 * maps a user (or principal) to a local user name or a number; "group:name@DOMAIN =
 * local" does the same for groups.  Reverse lookups answer with the table's key. */
#include <strings.h>

#include "idmap-util.h"

struct static_entry {
	char *remote; /* without the "group:" prefix */
	char *local;
	bool group;
};

struct static_data {
	struct static_entry *e;
	size_t n, cap;
};

static void static_done(void *data)
{
	struct static_data *d = data;

	if (!d)
		return;
	for (size_t i = 0; i < d->n; i++) {
		free(d->e[i].remote);
		free(d->e[i].local);
	}
	free(d->e);
	free(d);
}

static int add_entry(void *userdata, const char *key, const char *value)
{
	struct static_data *d = userdata;
	struct static_entry *n;
	bool group = strncasecmp(key, "group:", 6) == 0;

	if (group)
		key += 6;
	if (!*key || !*value)
		return 0;
	if (d->n == d->cap) { /* doubling: one realloc per entry was quadratic under ASan */
		size_t cap = d->cap ? d->cap * 2 : 16;

		n = realloc(d->e, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		d->e = n;
		d->cap = cap;
	}
	n = d->e;
	n[d->n].remote = strdup(key);
	n[d->n].local = strdup(value);
	n[d->n].group = group;
	if (!n[d->n].remote || !n[d->n].local) {
		free(n[d->n].remote);
		free(n[d->n].local);
		return -ENOMEM;
	}
	d->n++;
	return 0;
}

static int static_init(struct nfskeys_ctx *ctx, void **ret_data)
{
	struct static_data *d = calloc(1, sizeof(*d));
	int r;

	if (!d)
		return -ENOMEM;
	r = nfskeys_conf_foreach(ctx, "Static", add_entry, d);
	if (r < 0 && r != -ENOENT) {
		static_done(d);
		return r;
	}
	*ret_data = d;
	return 0;
}

/* Parse a decimal id. */
static bool numeric(const char *s, uint32_t *ret)
{
	char *end;
	unsigned long v;

	if (!*s || *s == '-' || *s == '+')
		return false;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v >= UINT32_MAX)
		return false;
	*ret = (uint32_t)v;
	return true;
}

static int static_lookup(void *data, struct nfskeys_ctx *ctx, struct nfskeys_idmap_request *req,
			 struct nfskeys_idmap_answer *ret)
{
	struct static_data *d = data;
	bool group = req->kind == NFSKEYS_IDMAP_GROUP_TO_GID ||
		     req->kind == NFSKEYS_IDMAP_GID_TO_GROUP;
	uint32_t id;

	switch (req->kind) {
	case NFSKEYS_IDMAP_NAME_TO_UID:
	case NFSKEYS_IDMAP_GROUP_TO_GID:
	case NFSKEYS_IDMAP_PRINCIPAL_TO_IDS:
		for (size_t i = 0; i < d->n; i++) {
			/* Realms are case-sensitive, NFSv4 domains are not: compare the
			 * domain part case-insensitively for names, exactly for principals. */
			const struct static_entry *e = &d->e[i];

			if (e->group != group)
				continue;
			if (req->kind == NFSKEYS_IDMAP_PRINCIPAL_TO_IDS ? !streq(e->remote, req->key) :
									  !strcaseeq(e->remote, req->key))
				continue;
			if (numeric(e->local, &id)) {
				ret->id = id;
				ret->gid = id;
				return 0;
			}
			return util_answer_local(req, e->local, ret);
		}
		return util_reason(req, IDMAP_CAUSE_NOT_HANDLED, "no [Static] entry for '%s'",
				   req->key);
	case NFSKEYS_IDMAP_UID_TO_NAME:
	case NFSKEYS_IDMAP_GID_TO_GROUP: {
		char local[NFSKEYS_IDMAP_NAME_MAX] = "";
		int r = group ? util_getgrgid(req->id, local, sizeof(local)) :
				util_getpwuid(req->id, local, sizeof(local));

		if (r < 0 && r != -ENOENT)
			return r;
		for (size_t i = 0; i < d->n; i++) {
			const struct static_entry *e = &d->e[i];

			if (e->group != group)
				continue;
			if ((numeric(e->local, &id) && id == req->id) ||
			    (local[0] && streq(e->local, local))) {
				ret->id = req->id;
				return util_answer_name(ret, e->remote, NULL);
			}
		}
		return util_reason(req, IDMAP_CAUSE_NOT_HANDLED, "no [Static] entry for id %u",
				   req->id);
	}
	default:
		return -ENOENT;
	}
}

static const struct nfskeys_idmap_ops ops = {
	.size = sizeof(ops),
	/* no nowait_kinds/lookup_nowait: local names go through NSS (util_answer_local,
	 * util_getpwuid), which may block: a NOWAIT lookup stops here */
	.init = static_init,
	.done = static_done,
	.lookup = static_lookup,
	.kinds = IDMAP_NAME_KINDS | IDMAP_ID_KINDS | IDMAP_PRINCIPAL_KINDS,
};

static const struct nfskeys_plugin plugin = {
	.abi = NFSKEYS_PLUGIN_ABI,
	.size = sizeof(plugin),
	.kind = NFSKEYS_PLUGIN_IDMAP,
	.name = "idmap-static",
	.description = "ID mapping from the [Static] table",
	.ops = &ops,
	.ops_size = sizeof(ops),
};

_public_ const struct nfskeys_plugin *nfskeys_plugin_entry(void)
{
	return &plugin;
}
