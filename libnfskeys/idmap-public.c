/* The typed public wrappers of the ID-mapping lookup (name -> uid, uid -> name, SID -> uid,
 * ...).  Each is one nfskeys_idmap_lookup() call. */
#include <inttypes.h>

#include "idmap-engine.h"

static int lookup_answer(struct nfskeys_ctx *ctx, unsigned kind, const char *key,
			 struct nfskeys_idmap_answer *a, struct nfskeys_idmap_answer *ret_answer)
{
	int r = nfskeys_idmap_lookup(ctx, (enum nfskeys_idmap_kind)kind, key, a);

	if (r == 0 && ret_answer)
		*ret_answer = *a;
	return r;
}

_public_ int nfskeys_idmap_name_to_uid(struct nfskeys_ctx *ctx, const char *name,
				       uid_t *ret_uid, struct nfskeys_idmap_answer *ret_answer)
{
	struct nfskeys_idmap_answer a;
	int r = lookup_answer(ctx, NFSKEYS_IDMAP_NAME_TO_UID, name, &a, ret_answer);

	if (r == 0 && ret_uid)
		*ret_uid = a.id;
	return r;
}

_public_ int nfskeys_idmap_group_to_gid(struct nfskeys_ctx *ctx, const char *group,
					gid_t *ret_gid, struct nfskeys_idmap_answer *ret_answer)
{
	struct nfskeys_idmap_answer a;
	int r = lookup_answer(ctx, NFSKEYS_IDMAP_GROUP_TO_GID, group, &a, ret_answer);

	if (r == 0 && ret_gid)
		*ret_gid = a.id;
	return r;
}

static int id_to_name(struct nfskeys_ctx *ctx, unsigned kind, uint32_t id, char **ret_name,
		      struct nfskeys_idmap_answer *ret_answer)
{
	struct nfskeys_idmap_answer a;
	char key[16];
	char *s = NULL;
	int r;

	snprintf(key, sizeof(key), "%" PRIu32, id);
	r = nfskeys_idmap_lookup(ctx, (enum nfskeys_idmap_kind)kind, key, &a);
	if (r < 0)
		return r;
	if (ret_name) {
		s = strdup(a.name);
		if (!s)
			return -ENOMEM;
		*ret_name = s;
	}
	if (ret_answer)
		*ret_answer = a;
	return 0;
}

_public_ int nfskeys_idmap_uid_to_name(struct nfskeys_ctx *ctx, uid_t uid, char **ret_name,
				       struct nfskeys_idmap_answer *ret_answer)
{
	return id_to_name(ctx, NFSKEYS_IDMAP_UID_TO_NAME, uid, ret_name, ret_answer);
}

_public_ int nfskeys_idmap_gid_to_group(struct nfskeys_ctx *ctx, gid_t gid, char **ret_group,
					struct nfskeys_idmap_answer *ret_answer)
{
	return id_to_name(ctx, NFSKEYS_IDMAP_GID_TO_GROUP, gid, ret_group, ret_answer);
}

_public_ int nfskeys_idmap_principal_to_ids(struct nfskeys_ctx *ctx, const char *principal,
					    uid_t *ret_uid, gid_t *ret_gid, gid_t **ret_groups,
					    size_t *ret_ngroups,
					    struct nfskeys_idmap_answer *ret_answer)
{
	struct nfskeys_idmap_answer a;
	gid_t *groups = NULL;
	int r;

	r = nfskeys_idmap_lookup(ctx, NFSKEYS_IDMAP_PRINCIPAL_TO_IDS, principal, &a);
	if (r < 0)
		return r;
	if (ret_groups) {
		groups = calloc(a.n_groups ? a.n_groups : 1, sizeof(gid_t));
		if (!groups)
			return -ENOMEM;
		for (uint32_t i = 0; i < a.n_groups; i++)
			groups[i] = a.groups[i];
		*ret_groups = groups;
	}
	if (ret_ngroups)
		*ret_ngroups = a.n_groups;
	if (ret_uid)
		*ret_uid = a.id;
	if (ret_gid)
		*ret_gid = a.gid;
	if (ret_answer)
		*ret_answer = a;
	return 0;
}

_public_ int nfskeys_idmap_sid_to_uid(struct nfskeys_ctx *ctx, const char *sid, uid_t *ret_uid,
				      struct nfskeys_idmap_answer *ret_answer)
{
	struct nfskeys_idmap_answer a;
	int r = lookup_answer(ctx, NFSKEYS_IDMAP_SID_TO_UID, sid, &a, ret_answer);

	if (r == 0 && ret_uid)
		*ret_uid = a.id;
	return r;
}

_public_ int nfskeys_idmap_sid_to_gid(struct nfskeys_ctx *ctx, const char *sid, gid_t *ret_gid,
				      struct nfskeys_idmap_answer *ret_answer)
{
	struct nfskeys_idmap_answer a;
	int r = lookup_answer(ctx, NFSKEYS_IDMAP_SID_TO_GID, sid, &a, ret_answer);

	if (r == 0 && ret_gid)
		*ret_gid = a.id;
	return r;
}

static int id_to_sid(struct nfskeys_ctx *ctx, unsigned kind, uint32_t id,
		     struct nfskeys_sid *ret_sid, struct nfskeys_idmap_answer *ret_answer)
{
	struct nfskeys_idmap_answer a;
	char key[16];
	int r;

	snprintf(key, sizeof(key), "%" PRIu32, id);
	r = nfskeys_idmap_lookup(ctx, (enum nfskeys_idmap_kind)kind, key, &a);
	if (r < 0)
		return r;
	if (ret_sid)
		*ret_sid = a.sid;
	if (ret_answer)
		*ret_answer = a;
	return 0;
}

_public_ int nfskeys_idmap_uid_to_sid(struct nfskeys_ctx *ctx, uid_t uid,
				      struct nfskeys_sid *ret_sid,
				      struct nfskeys_idmap_answer *ret_answer)
{
	return id_to_sid(ctx, NFSKEYS_IDMAP_UID_TO_SID, uid, ret_sid, ret_answer);
}

_public_ int nfskeys_idmap_gid_to_sid(struct nfskeys_ctx *ctx, gid_t gid,
				      struct nfskeys_sid *ret_sid,
				      struct nfskeys_idmap_answer *ret_answer)
{
	return id_to_sid(ctx, NFSKEYS_IDMAP_GID_TO_SID, gid, ret_sid, ret_answer);
}
