/* Answers the engine gives without asking a backend, because the kernel, Samba or nfsidmap
 * already fixed what they mean (doc/KERNEL-INTERFACES.md §3-4):
 * - Samba's Unix SIDs S-1-22-1-N (uid N) and S-1-22-2-N (gid N), and the MS-NFS SIDs
 *   S-1-5-88-1-N / S-1-5-88-2-N, mean the id itself, whatever the backends say;
 * - after the chain found nothing: an id with no SID of any configured domain is given
 *   its S-1-22 SID (as smbd does), a bare decimal owner ("4242") is that id (as nfsidmap
 *   does), and the names the kernel sends for the server's nobody ("nobody", "nogroup",
 *   with no domain or ours) are the configured nobody ids. */
#include <inttypes.h>
#include <strings.h>

#include "idmap-builtin.h"

#define BUILTIN "builtin"

enum { AUTH_UNIX = 22, AUTH_NT = 5, RID_NFS = 88 };

static uint64_t sid_authority(const struct nfskeys_sid *sid)
{
	uint64_t a = 0;

	for (int i = 0; i < 6; i++)
		a = a << 8 | sid->authority[i];
	return a;
}

/* The id a Unix SID stands for: 1 for a uid, 2 for a gid in *ret_type; -ENOENT when sid
 * is not one of them. */
static int unix_sid_id(const struct nfskeys_sid *sid, unsigned *ret_type, uint32_t *ret_id)
{
	uint64_t auth = sid_authority(sid);

	if (sid->revision != 1)
		return -ENOENT;
	if (auth == AUTH_UNIX && sid->num_subauth == 2 &&
	    (sid->subauth[0] == 1 || sid->subauth[0] == 2)) {
		*ret_type = sid->subauth[0];
		*ret_id = sid->subauth[1];
		return 0;
	}
	if (auth == AUTH_NT && sid->num_subauth == 3 && sid->subauth[0] == RID_NFS &&
	    (sid->subauth[1] == 1 || sid->subauth[1] == 2)) {
		*ret_type = sid->subauth[1];
		*ret_id = sid->subauth[2];
		return 0;
	}
	return -ENOENT;
}

static void builtin_answer(const struct idmap_state *st, unsigned kind, uint32_t id,
			   struct nfskeys_idmap_answer *ret)
{
	ret->kind = kind;
	ret->flags = 0;
	ret->error = 0;
	ret->ttl = st->pos_ttl;
	ret->id = id;
	ret->gid = ret->n_groups = 0;
	ret->name[0] = '\0';
	snprintf(ret->backend, sizeof(ret->backend), BUILTIN);
}

/* Only "S-1-22-" and "S-1-5-88-" can be Unix SIDs: a cheap test before parsing. */
static bool maybe_unix_sid(const char *text)
{
	return (text[0] == 'S' || text[0] == 's') &&
	       (!strncmp(text + 1, "-1-22-", 6) || !strncmp(text + 1, "-1-5-88-", 8));
}

int idmap_builtin_sid(const struct idmap_state *st, unsigned kind, const char *text,
		      const struct nfskeys_sid *parsed, struct nfskeys_idmap_answer *ret)
{
	struct nfskeys_sid sid;
	unsigned type;
	uint32_t id;

	if (!kind_is_sid(kind) || !maybe_unix_sid(text))
		return -ENOENT;
	if (!parsed) {
		if (nfskeys_sid_from_string(text, &sid) < 0)
			return -ENOENT;
		parsed = &sid;
	}
	if (unix_sid_id(parsed, &type, &id) < 0)
		return -ENOENT;
	/* a user's SID asked as a group (or back) is no answer: the kernel then falls back
	 * to the mount's uid=/gid= */
	if ((type == 2) != (kind == NFSKEYS_IDMAP_SID_TO_GID) || id == UINT32_MAX)
		return -ENOENT;
	builtin_answer(st, kind, id, ret);
	return 0;
}

static bool is_nobody_name(const struct idmap_state *st, const struct nfskeys_idmap_request *req)
{
	bool group = req->kind == NFSKEYS_IDMAP_GROUP_TO_GID;

	if (req->domain && strcasecmp(req->domain, st->domain))
		return false;
	return !strcmp(req->name, "nobody") || (group && !strcmp(req->name, "nogroup"));
}

int idmap_builtin_fallback(const struct idmap_state *st, const struct nfskeys_idmap_request *req,
			   struct nfskeys_idmap_answer *ret)
{
	uint32_t id;

	switch (req->kind) {
	case NFSKEYS_IDMAP_NAME_TO_UID:
	case NFSKEYS_IDMAP_GROUP_TO_GID:
		if (!req->name || !*req->name)
			return -ENOENT;
		/* a bare number, as nfsidmap's id_as_chars (but the whole key must be one) */
		if (!req->domain && idmap_parse_id(req->name, &id) == 0) {
			builtin_answer(st, req->kind, id, ret);
			return 0;
		}
		if (is_nobody_name(st, req)) {
			builtin_answer(st, req->kind,
				       req->kind == NFSKEYS_IDMAP_GROUP_TO_GID ? st->nobody_gid
									: st->nobody_uid,
				       ret);
			return 0;
		}
		return -ENOENT;
	case NFSKEYS_IDMAP_UID_TO_SID:
	case NFSKEYS_IDMAP_GID_TO_SID:
		builtin_answer(st, req->kind, req->id, ret);
		memset(&ret->sid, 0, sizeof(ret->sid));
		ret->sid.revision = 1;
		ret->sid.num_subauth = 2;
		ret->sid.authority[5] = AUTH_UNIX;
		ret->sid.subauth[0] = req->kind == NFSKEYS_IDMAP_GID_TO_SID ? 2 : 1;
		ret->sid.subauth[1] = req->id;
		(void)nfskeys_sid_to_string(&ret->sid, ret->name, sizeof(ret->name));
		return 0;
	default:
		return -ENOENT;
	}
}
