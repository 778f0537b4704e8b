/* The descriptions of the kernel's ID-mapping keys (id_resolver "uid:alice@dom", "user:1000",
 * ...; cifs.idmap "os:S-1-5-...", "oi:1000", ...): one prefix table for libnfskeys
 * (nfskeys_idmap_parse_description) and the lean nfskeys-upcall, which links neither
 * libnfskeys nor anything but libc and libkeyutils.  Header only: no link dependency.  It
 * lives in libnfskeys/ because it is written in the library's kinds (nfskeys-idmap.h);
 * common/ is below the library and includes nothing of it. */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "nfskeys.h" /* the kinds and limits of nfskeys-idmap.h (values only) */

#define IDMAP_DESC_NAME_MAX 128 /* the kernel's IDMAP_NAMESZ: names it sends are shorter */

/* Split description by its prefix into kind (enum nfskeys_idmap_kind) and the key after
 * the prefix.  0; -EOPNOTSUPP when the prefix is not one of type's (id_resolver takes
 * uid/gid/user/group, cifs.idmap os/gs/oi/gi, any other type both); -EINVAL when no
 * prefix matches or the key is empty or longer than the kernel ever sends.  The key's own
 * syntax (a name, an id, a SID) is left to the caller. */
static inline int idmap_desc_split(const char *type, const char *description,
				   unsigned *ret_kind, const char **ret_key)
{
	static const struct {
		const char *prefix;
		unsigned char len;
		unsigned char kind;
		bool cifs;
	} prefixes[] = {
		{ "uid:", 4, NFSKEYS_IDMAP_NAME_TO_UID, false },
		{ "gid:", 4, NFSKEYS_IDMAP_GROUP_TO_GID, false },
		{ "user:", 5, NFSKEYS_IDMAP_UID_TO_NAME, false },
		{ "group:", 6, NFSKEYS_IDMAP_GID_TO_GROUP, false },
		{ "os:", 3, NFSKEYS_IDMAP_SID_TO_UID, true },
		{ "gs:", 3, NFSKEYS_IDMAP_SID_TO_GID, true },
		{ "oi:", 3, NFSKEYS_IDMAP_UID_TO_SID, true },
		{ "gi:", 3, NFSKEYS_IDMAP_GID_TO_SID, true },
	};

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		const char *key = description + prefixes[i].len;

		if (strncmp(description, prefixes[i].prefix, prefixes[i].len))
			continue;
		if ((!strcmp(type, "id_resolver") && prefixes[i].cifs) ||
		    (!strcmp(type, "cifs.idmap") && !prefixes[i].cifs))
			return -EOPNOTSUPP;
		if (!*key || strlen(key) >= (prefixes[i].cifs ? NFSKEYS_SID_STRING_MAX
							       : IDMAP_DESC_NAME_MAX))
			return -EINVAL;
		*ret_kind = prefixes[i].kind;
		*ret_key = key;
		return 0;
	}
	return -EINVAL;
}

/* Whether the kernel's key of this kind gets the nobody id when no backend maps its key:
 * an id_resolver name does (nfsidmap answers nobody, and the NFS client shows it); a
 * cifs.idmap SID does not: the key is rejected and the CIFS client shows the mount's uid=
 * or gid= (fs/smb/client/cifsacl.c, sid_to_id), as it does for cifs-utils' cifs.idmap,
 * whose plugins (winbind's, SSSD's) fail such a SID.  The flag for the lookup:
 * NFSKEYS_IDMAP_LOOKUP_NOBODY and IDMAPD_LOOKUP_NOBODY, or none. */
static inline bool idmap_desc_nobody(unsigned kind)
{
	return kind != NFSKEYS_IDMAP_SID_TO_UID && kind != NFSKEYS_IDMAP_SID_TO_GID;
}
