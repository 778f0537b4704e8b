/* idmap backend "regex": names matched against the [Regex] patterns of idmapd.conf.
 * User-Regex/Group-Regex (POSIX extended, one capture group = the local name) map remote
 * names (and principals) in; Prepend-/Append-Before/After-User/Group build the remote
 * name for reverse lookups; Group-Name-Prefix is added to local group names unless the
 * name matches Group-Name-No-Prefix-Regex. */
#include <regex.h>
#include <strings.h>

#include "idmap-util.h"

struct regex_data {
	regex_t user, group, no_prefix;
	bool have_user, have_group, have_no_prefix;
	const char *prepend_user, *append_user, *prepend_group, *append_group, *group_prefix;
};

static void regex_done(void *data)
{
	struct regex_data *d = data;

	if (!d)
		return;
	if (d->have_user)
		regfree(&d->user);
	if (d->have_group)
		regfree(&d->group);
	if (d->have_no_prefix)
		regfree(&d->no_prefix);
	free(d);
}

static int compile(struct nfskeys_ctx *ctx, const char *key, regex_t *re, bool *have)
{
	const char *v = nfskeys_conf_get(ctx, "Regex", key);
	char err[160];
	int r;

	if (!v || !*v)
		return 0;
	r = regcomp(re, v, REG_EXTENDED);
	if (r != 0) {
		regerror(r, re, err, sizeof(err));
		plog(ctx, LOG_ERR, "[Regex] %s = %s: %s", key, v, err);
		return -EINVAL;
	}
	*have = true;
	return 0;
}

static const char *conf_or_empty(struct nfskeys_ctx *ctx, const char *key)
{
	const char *v = nfskeys_conf_get(ctx, "Regex", key);

	return v ? v : "";
}

static int regex_init(struct nfskeys_ctx *ctx, void **ret_data)
{
	struct regex_data *d = calloc(1, sizeof(*d));
	int r;

	if (!d)
		return -ENOMEM;
	if ((r = compile(ctx, "User-Regex", &d->user, &d->have_user)) < 0 ||
	    (r = compile(ctx, "Group-Regex", &d->group, &d->have_group)) < 0 ||
	    (r = compile(ctx, "Group-Name-No-Prefix-Regex", &d->no_prefix, &d->have_no_prefix)) <
		    0) {
		regex_done(d);
		return r;
	}
	if (!d->have_user && !d->have_group) {
		plog(ctx, LOG_ERR, "[Regex] needs User-Regex or Group-Regex for the regex backend");
		regex_done(d);
		return -EINVAL;
	}
	/* configuration strings live as long as the context */
	d->prepend_user = conf_or_empty(ctx, "Prepend-Before-User");
	d->append_user = conf_or_empty(ctx, "Append-After-User");
	d->prepend_group = conf_or_empty(ctx, "Prepend-Before-Group");
	d->append_group = conf_or_empty(ctx, "Append-After-Group");
	d->group_prefix = conf_or_empty(ctx, "Group-Name-Prefix");
	*ret_data = d;
	return 0;
}

static bool prefixed(struct regex_data *d, const char *name)
{
	return d->group_prefix[0] &&
	       !(d->have_no_prefix && regexec(&d->no_prefix, name, 0, NULL, 0) == 0);
}

static int regex_lookup(void *data, struct nfskeys_ctx *ctx, struct nfskeys_idmap_request *req,
			struct nfskeys_idmap_answer *ret)
{
	struct regex_data *d = data;
	bool group = req->kind == NFSKEYS_IDMAP_GROUP_TO_GID ||
		     req->kind == NFSKEYS_IDMAP_GID_TO_GROUP;
	regex_t *re = group ? &d->group : &d->user;
	char local[NFSKEYS_IDMAP_NAME_MAX], name[NFSKEYS_IDMAP_NAME_MAX];
	regmatch_t m[2];
	int r, n;

	if (group ? !d->have_group : !d->have_user)
		return util_reason(req, IDMAP_CAUSE_NOT_HANDLED, "no [Regex] %s-Regex",
				   group ? "Group" : "User");
	switch (req->kind) {
	case NFSKEYS_IDMAP_NAME_TO_UID:
	case NFSKEYS_IDMAP_GROUP_TO_GID:
	case NFSKEYS_IDMAP_PRINCIPAL_TO_IDS:
		if (regexec(re, req->key, 2, m, 0) != 0 || m[1].rm_so < 0)
			return util_reason(req, IDMAP_CAUSE_NOT_HANDLED,
					   "'%s' does not match [Regex] %s-Regex", req->key,
					   group ? "Group" : "User");
		n = (int)(m[1].rm_eo - m[1].rm_so);
		if (n <= 0 || (size_t)n >= sizeof(local) - strlen(d->group_prefix))
			return util_reason(req, IDMAP_CAUSE_NOT_HANDLED, "empty or long capture");
		snprintf(name, sizeof(name), "%.*s", n, req->key + m[1].rm_so);
		if (group && prefixed(d, name))
			snprintf(local, sizeof(local), "%s%s", d->group_prefix, name);
		else
			snprintf(local, sizeof(local), "%s", name);
		return util_answer_local(req, local, ret);
	case NFSKEYS_IDMAP_UID_TO_NAME:
	case NFSKEYS_IDMAP_GID_TO_GROUP: {
		const char *base;

		r = group ? util_getgrgid(req->id, local, sizeof(local)) :
			    util_getpwuid(req->id, local, sizeof(local));
		if (r == -ENOENT)
			return util_reason(req, IDMAP_CAUSE_NO_SUCH, "no %s with id %u (NSS)",
					   group ? "group" : "user", req->id);
		if (r < 0)
			return r;
		base = local;
		if (group && d->group_prefix[0] &&
		    strncmp(local, d->group_prefix, strlen(d->group_prefix)) == 0 &&
		    prefixed(d, local + strlen(d->group_prefix)))
			base = local + strlen(d->group_prefix);
		n = snprintf(ret->name, sizeof(ret->name), "%s%s%s",
			     group ? d->prepend_group : d->prepend_user, base,
			     group ? d->append_group : d->append_user);
		if (n < 0 || (size_t)n >= sizeof(ret->name))
			return -ENAMETOOLONG;
		/* only answer with names our own regex maps back */
		if (regexec(re, ret->name, 0, NULL, 0) != 0)
			return util_reason(req, IDMAP_CAUSE_NOT_HANDLED,
					   "'%s' would not match [Regex] %s-Regex", ret->name,
					   group ? "Group" : "User");
		ret->id = req->id;
		return 0;
	}
	default:
		return -ENOENT;
	}
}

static const struct nfskeys_idmap_ops ops = {
	.size = sizeof(ops),
	/* no nowait_kinds/lookup_nowait: captured names go through NSS, which may block */
	.init = regex_init,
	.done = regex_done,
	.lookup = regex_lookup,
	.kinds = IDMAP_NAME_KINDS | IDMAP_ID_KINDS | IDMAP_PRINCIPAL_KINDS,
};

static const struct nfskeys_plugin plugin = {
	.abi = NFSKEYS_PLUGIN_ABI,
	.size = sizeof(plugin),
	.kind = NFSKEYS_PLUGIN_IDMAP,
	.name = "idmap-regex",
	.description = "ID mapping by the [Regex] patterns of idmapd.conf",
	.ops = &ops,
	.ops_size = sizeof(ops),
};

_public_ const struct nfskeys_plugin *nfskeys_plugin_entry(void)
{
	return &plugin;
}
