/* The kernel's ID-mapping upcall formats: key descriptions ("uid:alice@dom", "os:S-1-...")
 * parsed into lookups, and answers turned into the payloads each key type expects
 * (doc/DESIGN.md §4). */
#include <inttypes.h>

#include "idmap-desc.h"
#include "idmap-engine.h"

/* The prefix table is idmap-desc.h, shared with the lean nfskeys-upcall. */
_public_ int nfskeys_idmap_parse_description(const char *type, const char *description,
					     enum nfskeys_idmap_kind *ret_kind,
					     const char **ret_key)
{
	const char *key;
	unsigned kind;
	uint32_t id;
	struct nfskeys_sid sid;
	int r;

	if (!type || !description || !ret_kind || !ret_key)
		return -EINVAL;
	r = idmap_desc_split(type, description, &kind, &key);
	if (r < 0)
		return r;
	/* "uid:alice" (no domain) is a name like any other, as nfsidmap takes it: the
	 * backends decide (nsswitch maps it only with No-Strip, so the upcall answers
	 * nobody); "uid:@localdomain" (no user part) maps to nobody as nfsidmap does; an
	 * empty domain part ("uid:alice@", "uid:@") is malformed */
	if (kind_is_name(kind) && key[strlen(key) - 1] == '@')
		return -EINVAL;
	if (kind_is_id(kind) && idmap_parse_id(key, &id) < 0)
		return -EINVAL;
	if (kind_is_sid(kind) && nfskeys_sid_from_string(key, &sid) < 0)
		return -EINVAL;
	*ret_kind = (enum nfskeys_idmap_kind)kind;
	*ret_key = key;
	return 0;
}

_public_ int nfskeys_idmap_payload(const struct nfskeys_idmap_answer *a, void *buf, size_t size)
{
	size_t len;
	int n;

	if (!a || !buf)
		return -EINVAL;
	switch (a->kind) {
	case NFSKEYS_IDMAP_NAME_TO_UID:
	case NFSKEYS_IDMAP_GROUP_TO_GID:
		/* decimal id with its NUL */
		n = snprintf(buf, size, "%" PRIu32, a->id);
		if (n < 0 || (size_t)n >= size)
			return -ENOBUFS;
		return n + 1;
	case NFSKEYS_IDMAP_UID_TO_NAME:
	case NFSKEYS_IDMAP_GID_TO_GROUP:
		len = strnlen(a->name, sizeof(a->name));
		if (len == 0 || len == sizeof(a->name))
			return -EINVAL;
		if (len > size)
			return -ENOBUFS;
		memcpy(buf, a->name, len); /* no NUL */
		return (int)len;
	case NFSKEYS_IDMAP_SID_TO_UID:
	case NFSKEYS_IDMAP_SID_TO_GID:
		if (size < sizeof(uint32_t))
			return -ENOBUFS;
		memcpy(buf, &a->id, sizeof(uint32_t)); /* host byte order */
		return sizeof(uint32_t);
	case NFSKEYS_IDMAP_UID_TO_SID:
	case NFSKEYS_IDMAP_GID_TO_SID:
		if (size < NFSKEYS_SID_BINARY_MAX)
			return -ENOBUFS;
		return nfskeys_sid_to_binary(&a->sid, buf, size);
	default:
		return -EINVAL;
	}
}
