/* The configuration vocabulary as one typed table (conf-schema.h): every (section, key)
 * nfskeys reads, with its type, bounds, default and description.  Tables whose keys are
 * data ([Static], [SID]'s S-1-5-21-... lines) are the only wildcards.  Bounds and
 * defaults are the ones the readers applied before the table existed. */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <strings.h>

#include "conf-schema.h"
#include "macros.h"
#include "units.h"

#define DUR_S(lo, hi) CONF_DURATION, (lo), (hi), 1000
#define DUR_MS(lo, hi) CONF_DURATION, (lo), (hi), 1
#define INT(lo, hi) CONF_INT, (lo), (hi), 0
#define SIZE(lo, hi) CONF_SIZE, (lo), (hi), 0
#define TEXT(t) (t), 0, 0, 0
#define ENUM(v) CONF_ENUM, 0, 0, 0, (v)
#define MODES "auto|yes|no|true|false|on|off|1|0"

static const struct conf_key_def schema[] = {
	/* core */
	{ "General", "Verbosity", ENUM("err|warning|notice|info|debug|error|warn|emerg|alert|"
				       "crit|0|1|2|3|4|5|6|7"),
	  "err", "which messages the library and the programs print" },
	{ "General", "State-Dir", TEXT(CONF_PATH), NULL, STATEDIR,
	  "where the daemons keep persistent state" },
	{ "General", "Runtime-Dir", TEXT(CONF_PATH), NULL, RUNDIR,
	  "where the daemons create their sockets" },

	/* credentials (cred area) */
	{ "Cred", "CIFS-Negative-TTL", DUR_S(1, 3600), NULL, "5",
	  "how long cifs.spnego's refusal stays in the kernel" },
	{ "Cred", "CIFS-Keytab", TEXT(CONF_PATH), NULL, NULL,
	  "keytab cifs.spnego uses when the user has no ticket" },
	{ "Cred", "CIFS-Keytab-Principal", TEXT(CONF_STRING), NULL, NULL,
	  "principal taken from CIFS-Keytab" },
	/* pam_nfskeys(8): the keys a login puts in place */
	{ "PAM", "Kerberos", TEXT(CONF_BOOL), NULL, "yes",
	  "get a Kerberos TGT into KEYRING:persistent at login" },
	{ "PAM", "CIFS-Servers", TEXT(CONF_LIST), NULL, NULL,
	  "CIFS servers to store the password for" },
	{ "PAM", "CIFS-Domains", TEXT(CONF_LIST), NULL, NULL,
	  "CIFS domains to store the password for" },
	{ "PAM", "AFS-Cells", TEXT(CONF_LIST), NULL, NULL, "AFS cells to get tokens for" },
	{ "PAM", "Drop-On-Close", TEXT(CONF_BOOL), NULL, "no",
	  "clear the credentials when the session closes" },
	{ "PAM", "Fail-Login", TEXT(CONF_BOOL), NULL, "no",
	  "fail the session when a credential cannot be made" },

	/* idmap area: idmapd.conf vocabulary */
	{ "General", "Domain", TEXT(CONF_STRING), NULL, "(DNS, then localdomain)",
	  "the NFSv4 identity-mapping domain" },
	{ "General", "Local-Realms", TEXT(CONF_LIST), NULL, "(the Domain)",
	  "Kerberos realms whose principals map to local users" },
	{ "Mapping", "Nobody-User", TEXT(CONF_STRING), NULL, "nobody",
	  "user that unmappable names map to" },
	{ "Mapping", "Nobody-Group", TEXT(CONF_STRING), NULL, "nogroup",
	  "group that unmappable names map to" },
	{ "Mapping", "Nobody-TTL", DUR_S(0, 86400), NULL, "60",
	  "how long a nobody answer is cached" },
	{ "Translation", "Method", TEXT(CONF_LIST), NULL, "nsswitch",
	  "the mapping backends, in order" },
	{ "Translation", "GSS-Methods", TEXT(CONF_LIST), NULL, "(Method)",
	  "the backends for Kerberos principals" },
	{ "Translation", "No-Strip", ENUM("none|no|false|user|group|both"), "none",
	  "which names keep their @domain" },
	{ "Static", "*", TEXT(CONF_TABLE), NULL, NULL, "a table: principal = local name" },
	{ "Regex", "User-Regex", TEXT(CONF_STRING), NULL, NULL,
	  "extended regex whose first group is the user" },
	{ "Regex", "Group-Regex", TEXT(CONF_STRING), NULL, NULL,
	  "extended regex whose first group is the group" },
	{ "Regex", "Group-Name-No-Prefix-Regex", TEXT(CONF_STRING), NULL, NULL,
	  "groups that take no prefix" },
	{ "Regex", "Prepend-Before-User", TEXT(CONF_STRING), NULL, NULL,
	  "text put before a user name" },
	{ "Regex", "Append-After-User", TEXT(CONF_STRING), NULL, NULL,
	  "text put after a user name" },
	{ "Regex", "Prepend-Before-Group", TEXT(CONF_STRING), NULL, NULL,
	  "text put before a group name" },
	{ "Regex", "Append-After-Group", TEXT(CONF_STRING), NULL, NULL,
	  "text put after a group name" },
	{ "LDAP", "URI", TEXT(CONF_STRING), NULL, NULL, "the directory (ldap:// or ldaps://)" },
	{ "LDAP", "Base", TEXT(CONF_STRING), NULL, NULL, "the search base" },
	{ "LDAP", "User-Base", TEXT(CONF_STRING), NULL, "(Base)", "the base for users" },
	{ "LDAP", "Group-Base", TEXT(CONF_STRING), NULL, "(Base)", "the base for groups" },
	{ "LDAP", "Schema", ENUM("rfc2307|ad"), "rfc2307",
	  "directory layout: RFC 2307 posixAccount/posixGroup, or Active Directory" },
	{ "LDAP", "User-Object-Class", TEXT(CONF_STRING), NULL, "(Schema)",
	  "objectClass of users (posixAccount; ad: user)" },
	{ "LDAP", "Group-Object-Class", TEXT(CONF_STRING), NULL, "(Schema)",
	  "objectClass of groups (posixGroup; ad: group)" },
	{ "LDAP", "Name-Domain", TEXT(CONF_STRING), NULL, "(the NFSv4 domain)",
	  "the @domain of id -> name answers (e.g. the Kerberos realm)" },
	{ "LDAP", "Bind-DN", TEXT(CONF_STRING), NULL, NULL, "DN to bind as (else anonymous)" },
	{ "LDAP", "SASL-Mech", ENUM("GSSAPI"), NULL,
	  "bind with SASL GSSAPI (Kerberos, from Keytab) instead of Bind-DN" },
	{ "LDAP", "Keytab", TEXT(CONF_PATH), NULL, "(the default keytab)",
	  "keytab of the GSSAPI bind's principal" },
	{ "LDAP", "Principal", TEXT(CONF_STRING), NULL, "(the keytab's machine account)",
	  "the principal the GSSAPI bind uses" },
	{ "LDAP", "Bind-Password-File", TEXT(CONF_PATH), NULL, NULL,
	  "file holding the bind password" },
	{ "LDAP", "CA-File", TEXT(CONF_PATH), NULL, NULL, "CA certificates for TLS" },
	{ "LDAP", "StartTLS", TEXT(CONF_BOOL), NULL, "no", "use StartTLS on ldap://" },
	{ "LDAP", "Allow-Cleartext-Bind", TEXT(CONF_BOOL), NULL, "no",
	  "allow a password bind without TLS" },
	{ "LDAP", "NFSv4-Name-Attr", TEXT(CONF_STRING), NULL, "NFSv4Name",
	  "attribute holding the NFSv4 name" },
	{ "LDAP", "User-Name-Attr", TEXT(CONF_STRING), NULL, "uid", "attribute of user names" },
	{ "LDAP", "UID-Number-Attr", TEXT(CONF_STRING), NULL, "uidNumber",
	  "attribute of uid numbers" },
	{ "LDAP", "GID-Number-Attr", TEXT(CONF_STRING), NULL, "gidNumber",
	  "attribute of gid numbers" },
	{ "LDAP", "Group-Name-Attr", TEXT(CONF_STRING), NULL, "cn", "attribute of group names" },
	{ "LDAP", "Member-Attr", TEXT(CONF_STRING), NULL, "memberUid",
	  "attribute of group members" },
	{ "LDAP", "Group-Membership", ENUM("token-groups|member|member-uid"), "(Schema)",
	  "a principal's groups: AD's tokenGroups or nested member, or Member-Attr "
	  "(ad: token-groups, else member-uid)" },
	{ "LDAP", "Timeout", DUR_S(1, 3600), NULL, "5", "connect and bind timeout" },
	{ "LDAP", "Search-Timeout", DUR_S(1, 3600), NULL, "5", "search timeout" },
	{ "LDAP", "Backoff-Max", DUR_S(1, 3600), NULL, "30",
	  "longest wait before reconnecting" },
	{ "LDAP", "Pool-Size", INT(1, 64), NULL, "4", "connections kept open" },
	{ "LDAP", "Unique-Ids", TEXT(CONF_BOOL), NULL, "no",
	  "no two entries share a uidNumber/gidNumber: one search per new owner" },
	{ "LDAP", "Unique-Names", TEXT(CONF_BOOL), NULL, "no",
	  "each name is one entry's: an id's search also answers its name" },
	{ "SID", "Range-Min", INT(1, 4294967294), NULL, "200000",
	  "first id of the algorithmic SID ranges" },
	{ "SID", "Range-Max", INT(1, 4294967294), NULL, "2000200000",
	  "end of the algorithmic SID ranges" },
	{ "SID", "Range-Size", INT(1, 4294967294), NULL, "200000", "ids per domain slice" },
	{ "SID", "Auto-Domains", TEXT(CONF_BOOL), NULL, "yes",
	  "give unknown domains slices on first use" },
	{ "SID", "State-File", TEXT(CONF_PATH), NULL,
	  "(State-Dir/idmap-sid-slices or idmap-sid-autorid)",
	  "where slice or autorid range assignments are kept" },
	{ "SID", "Domains", TEXT(CONF_LIST), NULL, NULL,
	  "domain SIDs given primary slices (autorid: ranges) first, in order" },
	{ "SID", "Algorithm", ENUM("sssd|autorid"), "sssd",
	  "how domains without a range of their own get ids: SSSD's or winbind autorid's" },
	{ "SID", "S-*", TEXT(CONF_TABLE), NULL, NULL,
	  "a table: domain SID = [rid|ad] MIN - MAX (a range of its own); "
	  "SID.AD-URI and the like: its own directory" },
	{ "SID", "AD-URI", TEXT(CONF_STRING), NULL, NULL, "the directory of the ad ranges" },
	{ "SID", "AD-Base", TEXT(CONF_STRING), NULL, NULL, "its search base" },
	{ "SID", "AD-Bind-DN", TEXT(CONF_STRING), NULL, NULL, "DN to bind as (else anonymous)" },
	{ "SID", "AD-Bind-Password-File", TEXT(CONF_PATH), NULL, NULL,
	  "file holding the bind password (mode 0600)" },
	{ "SID", "AD-SASL-Mech", ENUM("GSSAPI"), NULL,
	  "bind with SASL GSSAPI (Kerberos, from AD-Keytab) instead of AD-Bind-DN" },
	{ "SID", "AD-Keytab", TEXT(CONF_PATH), NULL, "(the default keytab)",
	  "keytab of the GSSAPI bind's principal" },
	{ "SID", "AD-Principal", TEXT(CONF_STRING), NULL, "(the keytab's machine account)",
	  "the principal the GSSAPI bind uses" },
	{ "SID", "AD-CA-File", TEXT(CONF_PATH), NULL, NULL, "CA certificates for TLS" },
	{ "SID", "AD-StartTLS", TEXT(CONF_BOOL), NULL, "no", "use StartTLS on ldap://" },
	{ "SID", "AD-Allow-Cleartext-Bind", TEXT(CONF_BOOL), NULL, "no",
	  "allow a bind password over plain ldap://" },
	{ "SID", "AD-Timeout", DUR_S(1, 3600), NULL, "5",
	  "connect, bind and search timeout; a directory that misses it is not asked again "
	  "for 1 s, doubling to 30 s" },
	{ "Idmap", "Positive-TTL", DUR_S(0, 7 * 86400), NULL, "600",
	  "how long a mapping is cached" },
	{ "Idmap", "Negative-TTL", DUR_S(0, 86400), NULL, "60",
	  "how long a failed mapping is cached" },
	{ "Idmap", "Cache-Size", INT(0, 1 << 24), NULL, "4096", "entries of the library cache" },
	/* nfskeys-idmapd(8) */
	{ "Idmapd", "Socket", TEXT(CONF_PATH), NULL, "(Runtime-Dir/idmapd.sock)",
	  "the daemon's socket" },
	{ "Idmapd", "Workers", INT(1, 64), NULL, "4", "threads for blocking backends" },
	{ "Idmapd", "Inline-Lookups", TEXT(CONF_BOOL), NULL, "yes",
	  "answer lookups that need no I/O in the event loop" },
	{ "Idmapd", "Cache-Size", INT(1, 1 << 24), NULL, "65536", "entries of the shared cache" },
	{ "Idmapd", "Cache-Snapshot", TEXT(CONF_STRING), NULL,
	  "($STATE_DIRECTORY/idmapd-cache.snap under systemd, else none)",
	  "file the fresh answers are kept in across a restart, or none" },
	{ "Idmapd", "Negative-TTL", DUR_S(0, 86400), NULL, "60",
	  "how long a failed mapping is cached" },
	{ "Idmapd", "Refresh-Ahead", INT(0, 99), NULL, "80",
	  "percent of the TTL after which a hot entry is refreshed" },
	{ "Idmapd", "Refresh-Hits", INT(1, 1 << 30), NULL, "2",
	  "hits that make an entry hot" },
	{ "Idmapd", "Stale-Limit", DUR_S(0, 7 * 86400), NULL, "3600",
	  "how long past its TTL an answer may be served when a backend fails" },
	{ "Idmapd", "Stale-TTL", DUR_S(1, 86400), NULL, "30", "TTL given to a stale answer" },
	{ "Idmapd", "Stale-Wait", DUR_MS(0, 60000), NULL, "500",
	  "wait for a backend before serving stale" },
	{ "Idmapd", "Max-Clients", INT(1, 65536), NULL, "1024", "connections at once" },
	{ "Idmapd", "Max-Clients-Per-User", INT(1, 65536), NULL, "64",
	  "connections of one uid at once" },
	{ "Idmapd", "Max-Queue", INT(1, 1 << 20), NULL, "4096", "requests waiting for workers" },
	{ "Idmapd", "Max-Queue-Per-User", INT(1, 1 << 20), NULL, "64",
	  "requests of one uid waiting" },
	{ "Idmapd", "Max-Request", SIZE(64, 1 << 20), NULL, "4096", "largest request" },
	{ "Idmapd", "Max-Inflight", INT(1, 1024), NULL, "16",
	  "requests of one connection at once" },
	{ "Idmapd", "Idle-Timeout", DUR_S(1, 86400), NULL, "30",
	  "idle connections are closed after this" },
	{ "Idmapd", "Kernel-Keyrings", TEXT(CONF_LIST), NULL, ".id_resolver .cifs_idmap",
	  "kernel keyrings cleared with the cache" },
	{ "Idmapd", "Helper-Timeout", DUR_MS(0, 60000), NULL, "500",
	  "how long nfskeys-upcall waits for the daemon (0: never asks)" },
	/* nfskeys-idmapd's kernel paths (knfsd channels, NFS client pipes) */
	{ "Kernel", "Server-Channels", ENUM(MODES), "auto", "serve knfsd's idmap channels" },
	{ "Kernel", "Client-Pipe", ENUM(MODES), "auto",
	  "serve the NFS client's rpc_pipefs pipes" },
	{ "Kernel", "Namespaces", ENUM("auto|none"), "auto",
	  "also serve the client pipes of other network namespaces (containers)" },
	{ "Kernel", "Namespace-Ids", ENUM("initial|owner"), "initial",
	  "ids of other namespaces' clients: the initial user namespace's, or its owner's" },
	{ "Kernel", "Namespace-Scan", DUR_S(1, 3600), NULL, "2",
	  "how often other network namespaces are looked for" },
	{ "Kernel", "Namespace-Dir", TEXT(CONF_PATH), NULL, "(namespaces.d next to the main file)",
	  "configurations of other network namespaces, one file each" },
	/* a file of Namespace-Dir: which namespaces it is for */
	{ "Match", "Netns", TEXT(CONF_LIST), NULL, NULL,
	  "names of /run/netns (ip netns) this configuration is for (globs)" },
	{ "Match", "Cgroup", TEXT(CONF_LIST), NULL, NULL,
	  "cgroups of processes in the namespaces this configuration is for (globs)" },
	{ "Kernel", "Namespaces-Max", INT(1, 65536), NULL, "4096",
	  "network namespaces served at most" },
	{ "Kernel", "Channel-Dir", TEXT(CONF_PATH), NULL, "/proc/net/rpc",
	  "where knfsd's channels are" },
	{ "Kernel", "Pipefs-Directory", TEXT(CONF_PATH), NULL, "(the usual places)",
	  "where rpc_pipefs is mounted" },
	{ "Kernel", "Negative-TTL", DUR_S(1, 86400), NULL, "60",
	  "TTL of failed answers to knfsd" },
	{ "Kernel", "Client-Cache-Timeout", DUR_S(0, 7 * 86400), NULL, "0",
	  "the NFS client's idmap cache timeout (0: leave it)" },
	{ "Kernel", "Prime-Reverse", TEXT(CONF_BOOL), NULL, "yes",
	  "with a name's id, give knfsd the id's name too" },

	/* attr area */
	{ "Attr", "Store", TEXT(CONF_PATH), NULL, "(State-Dir/attr.db)",
	  "the policy database" },
	/* nfskeys-attrd(8) */
	{ "Attrd", "Socket", TEXT(CONF_PATH), NULL, "(Runtime-Dir/attrd.sock)",
	  "the daemon's socket" },
	{ "Attrd", "Admin-Group", TEXT(CONF_STRING), NULL, NULL,
	  "group whose members may set any directory's policy" },
	{ "Attrd", "Max-Clients", INT(1, 65536), NULL, "1024", "connections at once" },
	{ "Attrd", "Max-Clients-Per-User", INT(1, 65536), NULL, "64",
	  "connections of one uid at once" },
	{ "Attrd", "Idle-Timeout", DUR_S(1, 86400), NULL, "30",
	  "idle connections are closed after this" },
	{ "Attrd", "Max-Policies-Per-User", INT(0, 10000000), NULL, "1000",
	  "policies one uid may own (0: no limit)" },
	{ "Attrd", "Max-Bytes-Per-User", SIZE(0, 1 << 30), NULL, "1M",
	  "policy bytes one uid may own (0: no limit)" },
	{ "Attrd", "Orphan-Check-Interval", DUR_S(1, 86400), NULL, "300",
	  "how often policies of removed directories are swept" },
	{ "Attrd", "Trust-Synthesized-Owners", TEXT(CONF_BOOL), NULL, "no",
	  "trust owners a filesystem synthesizes" },
	{ "Attrd", "LDAP-URI", TEXT(CONF_STRING), NULL, NULL, "directory of the fleet sync" },
	{ "Attrd", "LDAP-Base", TEXT(CONF_STRING), NULL, NULL, "base of the fleet's policies" },
	{ "Attrd", "LDAP-Bind-DN", TEXT(CONF_STRING), NULL, NULL, "DN to bind as" },
	{ "Attrd", "LDAP-Bind-Password-File", TEXT(CONF_PATH), NULL, NULL,
	  "file holding the bind password" },
	{ "Attrd", "LDAP-StartTLS", TEXT(CONF_BOOL), NULL, "no", "use StartTLS on ldap://" },
	{ "Attrd", "LDAP-CA-File", TEXT(CONF_PATH), NULL, NULL, "CA certificates for TLS" },
	{ "Attrd", "LDAP-Allow-Cleartext-Bind", TEXT(CONF_BOOL), NULL, "no",
	  "allow a password bind without TLS" },
	{ "Attrd", "Sync-Interval", DUR_S(1, 86400), NULL, "300", "how often the fleet syncs" },
	{ "Attrd", "Sync-Splay", DUR_S(0, 86400), NULL, "(a tenth of Sync-Interval)",
	  "random delay added to each sync, so a fleet does not sync at once (0: none)" },
	{ "Attrd", "LDAP-Timeout", DUR_S(1, 600), NULL, "10", "LDAP operation timeout" },
	/* nfskeys-attrd(8): sub-mounts for policy on live mounts (doc/LIVE-MOUNTS.md) */
	{ "Mounts", "Apply-Mounts", TEXT(CONF_BOOL), NULL, "no",
	  "give subtrees with their own mount options their own sub-mounts" },
	{ "Mounts", "Retry-Interval", DUR_S(1, 3600), NULL, "30",
	  "first retry of a failed sub-mount (then doubling, to 32 times)" },

	/* writeback area */
	{ "Writeback", "Policy", ENUM("kara2011|wu2011|wu2012|nfskeys"), "nfskeys",
	  "the throttling policy" },
	{ "Writeback", "Dirty-Limit", SIZE(1LL << 20, 1LL << 40), NULL, "256M",
	  "dirty bytes allowed per device" },
};

static bool key_matches(const struct conf_key_def *d, const char *key)
{
	size_t n;

	if (d->type != CONF_TABLE)
		return strcaseeq(d->key, key);
	n = strlen(d->key) - 1; /* "PREFIX*" */
	return strncasecmp(d->key, key, n) == 0;
}

const struct conf_key_def *conf_schema_find(const char *section, const char *key)
{
	if (!section || !key)
		return NULL;
	for (size_t i = 0; i < ARRAY_SIZE(schema); i++)
		if (strcaseeq(schema[i].section, section) && key_matches(&schema[i], key))
			return &schema[i];
	return NULL;
}

int conf_schema_check(const char *section, const char *key)
{
	bool section_known = false;

	for (size_t i = 0; i < ARRAY_SIZE(schema); i++) {
		if (!strcaseeq(schema[i].section, section))
			continue;
		section_known = true;
		if (!key || key_matches(&schema[i], key))
			return 1;
	}
	return section_known ? 0 : -1;
}

const struct conf_key_def *conf_schema_rows(size_t *ret_n)
{
	*ret_n = ARRAY_SIZE(schema);
	return schema;
}

const char *conf_type_name(const struct conf_key_def *d)
{
	static const char *const names[] = {
		[CONF_STRING] = "string", [CONF_LIST] = "list",	    [CONF_PATH] = "path",
		[CONF_BOOL] = "bool",	  [CONF_INT] = "int",	    [CONF_DURATION] = "duration",
		[CONF_SIZE] = "size",	  [CONF_ENUM] = "enum",	    [CONF_TABLE] = "table",
	};

	return d->type == CONF_DURATION && d->unit_ms == 1 ? "duration-ms" : names[d->type];
}

void conf_schema_expect(const struct conf_key_def *d, char *buf, size_t len)
{
	char lo[32], hi[32];

	switch (d->type) {
	case CONF_BOOL:
		snprintf(buf, len, "yes or no");
		break;
	case CONF_INT:
		snprintf(buf, len, "a number from %" PRId64 " to %" PRId64, d->min, d->max);
		break;
	case CONF_DURATION:
		snprintf(buf, len,
			 "a duration from %" PRId64 " to %" PRId64 " %s (a number, optionally "
			 "with ms, s, m, h or d)",
			 d->min, d->max, d->unit_ms == 1 ? "ms" : "s");
		break;
	case CONF_SIZE:
		units_size_text((uint64_t)d->min, lo, sizeof(lo));
		units_size_text((uint64_t)d->max, hi, sizeof(hi));
		snprintf(buf, len, "a size from %s to %s (bytes, optionally with K, M, G or T)",
			 lo, hi);
		break;
	case CONF_ENUM:
		snprintf(buf, len, "one of %s", d->values);
		break;
	case CONF_PATH:
		snprintf(buf, len, "an absolute path");
		break;
	default:
		snprintf(buf, len, "text");
		break;
	}
}

static int enum_index(const char *values, const char *v)
{
	size_t n = strlen(v);
	int i = 0;

	for (const char *p = values; *p; i++) {
		const char *bar = strchrnul(p, '|');

		if ((size_t)(bar - p) == n && strncasecmp(p, v, n) == 0)
			return i;
		p = *bar ? bar + 1 : bar;
	}
	return -1;
}

/* value for a message: at most 64 bytes, bytes that are not printable ASCII as \\xNN */
static void quote_value(const char *value, char *buf, size_t len)
{
	size_t o = 0;

	for (const unsigned char *p = (const unsigned char *)value; *p && o + 5 < len; p++) {
		if (p - (const unsigned char *)value >= 64) {
			o += (size_t)snprintf(buf + o, len - o, "...");
			break;
		}
		if (*p >= 0x20 && *p < 0x7f)
			buf[o++] = (char)*p;
		else
			o += (size_t)snprintf(buf + o, len - o, "\\x%02x", *p);
	}
	buf[o < len ? o : len - 1] = '\0';
}

int conf_value_parse(const struct conf_key_def *d, const char *value, int64_t *ret, char *err,
		     size_t errlen)
{
	char expect[160], quoted[96];
	uint64_t x = 0;
	int r = 0;

	switch (d->type) {
	case CONF_BOOL:
		r = enum_index("0|no|false|off|1|yes|true|on", value);
		if (r < 0)
			break;
		x = r >= 4;
		r = 0;
		break;
	case CONF_INT: {
		char *end;
		long long v;

		errno = 0;
		v = strtoll(value, &end, 10);
		if (errno || end == value || *end)
			r = -EINVAL;
		else if (v < d->min || v > d->max)
			r = -ERANGE;
		else
			x = (uint64_t)v;
		if (r == 0) {
			*ret = v;
			return 0;
		}
		break;
	}
	case CONF_DURATION:
		r = units_parse_duration(value, d->unit_ms, &x, NULL);
		if (r == 0 && (x < (uint64_t)d->min || x > (uint64_t)d->max))
			r = -ERANGE;
		break;
	case CONF_SIZE:
		r = units_parse_size(value, &x, NULL);
		if (r == 0 && (x < (uint64_t)d->min || x > (uint64_t)d->max))
			r = -ERANGE;
		break;
	case CONF_ENUM:
		r = enum_index(d->values, value);
		if (r >= 0) {
			x = (uint64_t)r;
			r = 0;
		}
		break;
	case CONF_PATH:
		if (value[0] && value[0] != '/')
			r = -EINVAL;
		break;
	default:
		break;
	}
	if (r < 0) {
		conf_schema_expect(d, expect, sizeof(expect));
		quote_value(value, quoted, sizeof(quoted));
		if (err && errlen)
			snprintf(err, errlen, "[%s] %s = %s: expected %s", d->section, d->key,
				 quoted, expect);
		return r == -ERANGE ? -ERANGE : -EINVAL;
	}
	*ret = (int64_t)x;
	return 0;
}

static bool section_listed(const char *sections, const char *section)
{
	size_t n = strlen(section);

	if (!sections)
		return true;
	for (const char *p = sections; *p;) {
		size_t w;

		p += strspn(p, " ,");
		w = strcspn(p, " ,");
		if (w == n && strncasecmp(p, section, n) == 0)
			return true;
		p += w;
	}
	return false;
}

void conf_schema_print(FILE *f, const char *sections)
{
	for (size_t i = 0; i < ARRAY_SIZE(schema); i++) {
		const struct conf_key_def *d = &schema[i];
		char name[96], bounds[96] = "";

		if (!section_listed(sections, d->section))
			continue;
		snprintf(name, sizeof(name), "[%s] %s", d->section, d->key);
		if (d->type == CONF_INT || d->type == CONF_DURATION)
			snprintf(bounds, sizeof(bounds), " %" PRId64 "..%" PRId64 "%s", d->min,
				 d->max, d->type == CONF_INT ? "" : d->unit_ms == 1 ? "ms" : "s");
		else if (d->type == CONF_SIZE) {
			char lo[32], hi[32];

			units_size_text((uint64_t)d->min, lo, sizeof(lo));
			units_size_text((uint64_t)d->max, hi, sizeof(hi));
			snprintf(bounds, sizeof(bounds), " %s..%s", lo, hi);
		}
		fprintf(f, "%-42s %s%s\n    default: %s; %s\n", name, conf_type_name(d), bounds,
			d->def ? d->def : "(unset)", d->desc);
		if (d->type == CONF_ENUM)
			fprintf(f, "    values: %s\n", d->values);
	}
}
