/* idmap backend "nsswitch": names and ids through the system's NSS (getpwnam_r & co.).
 * name@domain is stripped to name when domain is the NFSv4 domain (case-insensitively);
 * [Translation] No-Strip = user|group|both looks the full name up as it is first. */
#include <strings.h>

#include "idmap-util.h"
#include "nss-files-index.h"

struct nss_data {
	unsigned no_strip; /* IDMAP_NO_STRIP_* bits */
	struct nfi *passwd, *group; /* used when nsswitch.conf lists files first */
};

static void nss_done(void *data)
{
	struct nss_data *d = data;

	if (!d)
		return;
	nfi_free(d->passwd);
	nfi_free(d->group);
	free(d);
}

static int nss_init(struct nfskeys_ctx *ctx, void **ret_data)
{
	struct nss_data *d = calloc(1, sizeof(*d));
	const char *etc;
	int r;

	if (!d)
		return -ENOMEM;
	r = util_no_strip(ctx, &d->no_strip);
	if (r < 0) {
		free(d);
		return r;
	}
	/* tests index their own files; never honoured in a setuid/setcap process */
	etc = secure_getenv("NFSKEYS_TEST_ETC_DIR");
	d->passwd = nfi_new(NFI_PASSWD, etc);
	d->group = nfi_new(NFI_GROUP, etc);
	if (!d->passwd || !d->group) {
		nss_done(d);
		return -ENOMEM;
	}
	*ret_data = d;
	return 0;
}

/* The local name's id: from the files index when it knows it (exactly nss_files'
 * answer), else NSS; for a NOWAIT lookup a miss in the index "would block" (a later NSS
 * source may know the name). */
static int local_id(struct nss_data *d, struct nfskeys_idmap_request *req, const char *local,
		    struct nfskeys_idmap_answer *ret)
{
	bool group = req->kind == NFSKEYS_IDMAP_GROUP_TO_GID;
	uint32_t id;

	if (nfi_name_to_id(group ? d->group : d->passwd, local, req->nowait, &id) == 0) {
		ret->id = id;
		return 0;
	}
	if (req->nowait)
		return -EWOULDBLOCK;
	return util_answer_local(req, local, ret);
}

/* The id's local name, as local_id. */
static int local_name(struct nss_data *d, const struct nfskeys_idmap_request *req, bool group,
		      char *name, size_t size)
{
	int r = nfi_id_to_name(group ? d->group : d->passwd, req->id, req->nowait, name, size);

	if (r != -EAGAIN)
		return r;
	if (req->nowait)
		return -EWOULDBLOCK;
	return group ? util_getgrgid(req->id, name, size) : util_getpwuid(req->id, name, size);
}

static int nss_lookup(void *data, struct nfskeys_ctx *ctx, struct nfskeys_idmap_request *req,
		      struct nfskeys_idmap_answer *ret)
{
	struct nss_data *d = data;
	bool group = req->kind == NFSKEYS_IDMAP_GROUP_TO_GID ||
		     req->kind == NFSKEYS_IDMAP_GID_TO_GROUP;
	unsigned bit = util_no_strip_bit(req);
	char name[NFSKEYS_IDMAP_NAME_MAX];
	int r;

	switch (req->kind) {
	case NFSKEYS_IDMAP_NAME_TO_UID:
	case NFSKEYS_IDMAP_GROUP_TO_GID:
		if ((d->no_strip & bit) && req->domain) {
			r = local_id(d, req, req->key, ret);
			if (r != -ENOENT)
				return r;
		}
		/* a bare name ("alice", no @domain) is not known to be in our domain: as
		 * nfsidmap, map it only with No-Strip (which looks names up as they are) */
		if (!req->domain && !(d->no_strip & bit))
			return util_reason(req, IDMAP_CAUSE_DOMAIN_MISMATCH,
					   "'%s' has no @domain (NFSv4 domain '%s'); bare names "
					   "map only with [Translation] No-Strip",
					   req->name, req->nfs_domain);
		if (req->domain && !util_domain_is_ours(req))
			return util_reason(req, IDMAP_CAUSE_DOMAIN_MISMATCH,
					   "domain '%s' is not the NFSv4 domain '%s'", req->domain,
					   req->nfs_domain);
		return local_id(d, req, req->name, ret);
	case NFSKEYS_IDMAP_PRINCIPAL_TO_IDS:
		/* ids and groups (getgrouplist): NSS only */
		if (req->nowait)
			return -EWOULDBLOCK;
		if (strchr(req->name, '/'))
			return util_reason(req, IDMAP_CAUSE_NOT_HANDLED,
					   "'%s' is a service principal, not a user", req->name);
		if (req->domain && !util_realm_is_local(ctx, req->domain, req->nfs_domain))
			return util_reason(req, IDMAP_CAUSE_REALM,
					   "realm '%s' is not in Local-Realms", req->domain);
		return util_answer_local(req, req->name, ret);
	case NFSKEYS_IDMAP_UID_TO_NAME:
	case NFSKEYS_IDMAP_GID_TO_GROUP:
		r = local_name(d, req, group, name, sizeof(name));
		if (r == -ENOENT)
			return util_reason(req, IDMAP_CAUSE_NO_SUCH, "no %s with id %u (NSS)",
					   group ? "group" : "user", req->id);
		if (r < 0)
			return r;
		ret->id = req->id;
		return util_answer_name(ret, name, (d->no_strip & bit) && strchr(name, '@') ?
							   NULL :
							   req->nfs_domain);
	default:
		return -ENOENT;
	}
}

static const struct nfskeys_idmap_ops ops = {
	.size = sizeof(ops),
	.init = nss_init,
	.done = nss_done,
	.lookup = nss_lookup,
	.kinds = IDMAP_NAME_KINDS | IDMAP_ID_KINDS | IDMAP_PRINCIPAL_KINDS,
	/* nss_lookup itself: it reads req->nowait and answers from the index only */
	.lookup_nowait = nss_lookup,
};

static const struct nfskeys_plugin plugin = {
	.abi = NFSKEYS_PLUGIN_ABI,
	.size = sizeof(plugin),
	.kind = NFSKEYS_PLUGIN_IDMAP,
	.name = "idmap-nsswitch",
	.description = "ID mapping through NSS (passwd, group)",
	.ops = &ops,
	.ops_size = sizeof(ops),
};

_public_ const struct nfskeys_plugin *nfskeys_plugin_entry(void)
{
	return &plugin;
}
