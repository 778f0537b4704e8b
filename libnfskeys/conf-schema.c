/* The configuration vocabulary: which sections and keys nfskeys knows, so that a typo is
 * warned about instead of silently ignored.  Each area keeps its own block; "*" accepts
 * any key (tables such as [Static]). */
#include <strings.h>

#include "libnfskeys-private.h"

struct conf_key {
	const char *section;
	const char *key;
};

static const struct conf_key schema[] = {
	/* core */
	{ "General", "Verbosity" },
	{ "General", "State-Dir" },
	{ "General", "Runtime-Dir" },

	/* credentials (cred area) */
	{ "Cred", "*" },
	{ "PAM", "*" }, /* pam_nfskeys (issue 19) */

	/* idmap area: idmapd.conf vocabulary */
	{ "General", "Domain" },
	{ "General", "Local-Realms" },
	{ "Mapping", "*" },
	{ "Translation", "Method" },
	{ "Translation", "GSS-Methods" },
	{ "Translation", "No-Strip" },
	{ "Static", "*" },
	{ "Regex", "*" },
	{ "LDAP", "*" },
	{ "SID", "*" },
	{ "Idmap", "*" },
	/* nfskeys-idmapd(8): every key by name, so a typo is warned about */
	{ "Idmapd", "Socket" },
	{ "Idmapd", "Workers" },
	{ "Idmapd", "Cache-Size" },
	{ "Idmapd", "Negative-TTL" },
	{ "Idmapd", "Refresh-Ahead" },
	{ "Idmapd", "Refresh-Hits" },
	{ "Idmapd", "Stale-Limit" },
	{ "Idmapd", "Stale-TTL" },
	{ "Idmapd", "Stale-Wait" },
	{ "Idmapd", "Max-Clients" },
	{ "Idmapd", "Max-Clients-Per-User" },
	{ "Idmapd", "Max-Queue" },
	{ "Idmapd", "Max-Queue-Per-User" },
	{ "Idmapd", "Max-Request" },
	{ "Idmapd", "Max-Inflight" },
	{ "Idmapd", "Idle-Timeout" },
	{ "Idmapd", "Kernel-Keyrings" },
	{ "Idmapd", "Helper-Timeout" },
	/* nfskeys-idmapd's kernel paths (knfsd channels, NFS client pipes) */
	{ "Kernel", "Server-Channels" },
	{ "Kernel", "Client-Pipe" },
	{ "Kernel", "Channel-Dir" },
	{ "Kernel", "Pipefs-Directory" },
	{ "Kernel", "Negative-TTL" },
	{ "Kernel", "Client-Cache-Timeout" },

	/* attr area */
	{ "Attr", "*" },
	/* nfskeys-attrd(8) */
	{ "Attrd", "Socket" },
	{ "Attrd", "Admin-Group" },
	{ "Attrd", "Max-Clients" },
	{ "Attrd", "Max-Clients-Per-User" },
	{ "Attrd", "Idle-Timeout" },
	{ "Attrd", "Max-Policies-Per-User" },
	{ "Attrd", "Max-Bytes-Per-User" },
	{ "Attrd", "Orphan-Check-Interval" },
	{ "Attrd", "Trust-Synthesized-Owners" },
	{ "Attrd", "LDAP-URI" },
	{ "Attrd", "LDAP-Base" },
	{ "Attrd", "LDAP-Bind-DN" },
	{ "Attrd", "LDAP-Bind-Password-File" },
	{ "Attrd", "LDAP-StartTLS" },
	{ "Attrd", "LDAP-CA-File" },
	{ "Attrd", "LDAP-Allow-Cleartext-Bind" },
	{ "Attrd", "Sync-Interval" },
	{ "Attrd", "LDAP-Timeout" },
	/* nfskeys-attrd(8): sub-mounts for policy on live mounts (issue 23 item 1) */
	{ "Mounts", "Apply-Mounts" },

	/* writeback area */
	{ "Writeback", "*" },
};

int conf_schema_check(const char *section, const char *key)
{
	bool section_known = false;

	for (size_t i = 0; i < ARRAY_SIZE(schema); i++) {
		if (!strcaseeq(schema[i].section, section))
			continue;
		section_known = true;
		if (!key || streq(schema[i].key, "*") || strcaseeq(schema[i].key, key))
			return 1;
	}
	return section_known ? 0 : -1;
}
