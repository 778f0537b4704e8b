/* nfskeys doctor: the kernel's per-user key quota, one finding per uid of /proc/key-users
 * ("UID: USAGE NKEYS/NIKEYS QNKEYS/MAXKEYS QNBYTES/MAXBYTES").  The quota belongs to the
 * uid, not to a user namespace or a session: every container that runs as a uid shares it
 * (doc/KERNEL-INTERFACES.md, "Key quota"), and a container sees only the uids mapped into
 * it.  A warning from 80 % of the keys or bytes on; a problem when the quota is full, that
 * is when it has no room left for one more credential: 'nfskeys cifs add' needs 2 keys
 * (the key and the thread keyring it is staged in) and a few dozen bytes. */
#include <limits.h>
#include <pwd.h>

#include "doctor.h"
#include "nfskeys-tool.h"

#define KEY_QUOTA_WARN_PERCENT 80
/* room for one more credential: its key and its staging keyring; a "cifs:a:" key for an
 * IPv4 address with a short user name and password, its link, and the keyring's own */
#define KEY_QUOTA_ROOM_KEYS 2
#define KEY_QUOTA_ROOM_BYTES 64

struct quota_line {
	unsigned long uid, keys, max_keys, bytes, max_bytes;
};

static bool parse_line(const char *line, struct quota_line *q)
{
	unsigned long usage, nkeys, nikeys;

	return sscanf(line, " %lu: %lu %lu/%lu %lu/%lu %lu/%lu", &q->uid, &usage, &nkeys, &nikeys,
		      &q->keys, &q->max_keys, &q->bytes, &q->max_bytes) == 8;
}

/* used as a share of max, rounded down; a quota of 0 is full from the start */
static unsigned percent(unsigned long used, unsigned long max)
{
	if (max == 0)
		return 100;
	return (unsigned)MIN(used * 100 / max, 999UL);
}

/* A value that puts the use under the warning level: twice the quota, or more when the use
 * already overran it (session and request keyrings may). */
static unsigned long suggest(unsigned long used, unsigned long max)
{
	unsigned long v = MAX(max * 2, 1UL);

	while (used * 100 >= v * KEY_QUOTA_WARN_PERCENT)
		v *= 2;
	return v;
}

static void judge(struct doctor *d, const struct quota_line *q)
{
	unsigned pk = percent(q->keys, q->max_keys), pb = percent(q->bytes, q->max_bytes);
	bool root = q->uid == 0;
	bool full = q->keys + KEY_QUOTA_ROOM_KEYS > q->max_keys ||
		    q->bytes + KEY_QUOTA_ROOM_BYTES > q->max_bytes;
	char user[64], fix[900];
	struct passwd *pw = d->root[0] ? NULL : getpwuid((uid_t)q->uid);

	if (pw)
		snprintf(user, sizeof(user), "%s", pw->pw_name);
	else
		snprintf(user, sizeof(user), "uid %lu", q->uid);
	if (!full && pk < KEY_QUOTA_WARN_PERCENT && pb < KEY_QUOTA_WARN_PERCENT) {
		finding(d, "quota", user, ST_OK, NULL,
			"%lu of %lu keys and %lu of %lu bytes used (%u %%, %u %%)", q->keys,
			q->max_keys, q->bytes, q->max_bytes, pk, pb);
		return;
	}
	if (root)
		snprintf(fix, sizeof(fix),
			 "raise kernel.keys.root_maxkeys and kernel.keys.root_maxbytes, e.g. "
			 "/etc/sysctl.d/60-keys.conf with 'kernel.keys.root_maxkeys = %lu' and "
			 "'kernel.keys.root_maxbytes = %lu', then 'sysctl --system'.  Root's count "
			 "holds the kernel's own keys that our request-key helpers answer "
			 "(id_resolver, cifs.idmap, cifs.spnego: 'nfskeys idmap flush' clears the "
			 "ID mappings)",
			 suggest(q->keys, q->max_keys), suggest(q->bytes, q->max_bytes));
	else
		snprintf(fix, sizeof(fix),
			 "raise kernel.keys.maxkeys and kernel.keys.maxbytes (for every uid but "
			 "root), e.g. /etc/sysctl.d/60-keys.conf with 'kernel.keys.maxkeys = %lu' "
			 "and 'kernel.keys.maxbytes = %lu', then 'sysctl --system'; or remove "
			 "unused keys.  The count holds every container's and session's keys of "
			 "the uid: each session keyring, each CIFS credential (one logon key per "
			 "server address or domain: 'nfskeys cifs list', 'nfskeys cifs clear'), "
			 "the Kerberos caches in KEYRING:persistent (a keyring and a key per "
			 "ticket: 'nfskeys nfs logout')",
			 suggest(q->keys, q->max_keys), suggest(q->bytes, q->max_bytes));
	if (full)
		finding(d, "quota", user, ST_PROBLEM, fix,
			"%lu of %lu keys and %lu of %lu bytes used (%u %%, %u %%): full, no room "
			"for one more credential (%d keys, %d bytes); new keys fail with EDQUOT",
			q->keys, q->max_keys, q->bytes, q->max_bytes, pk, pb, KEY_QUOTA_ROOM_KEYS,
			KEY_QUOTA_ROOM_BYTES);
	else
		finding(d, "quota", user, ST_INFO, fix,
			"warning: %lu of %lu keys and %lu of %lu bytes used (%u %%, %u %%): "
			"from %d %% on, the next containers or logins of this uid may fail with "
			"EDQUOT",
			q->keys, q->max_keys, q->bytes, q->max_bytes, pk, pb,
			KEY_QUOTA_WARN_PERCENT);
}

void check_key_quota(struct doctor *d)
{
	char path[PATH_MAX], line[256];
	unsigned users = 0;
	FILE *f;

	rooted(d, "/proc/key-users", path, sizeof(path));
	f = fopen(path, "re");
	if (!f) {
		finding(d, "quota", "keys", ST_INFO, NULL, "cannot read %s: %s", path,
			strerror(errno));
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		struct quota_line q;

		if (!parse_line(line, &q))
			continue;
		users++;
		judge(d, &q);
	}
	fclose(f);
	if (!users)
		finding(d, "quota", "keys", ST_INFO, NULL, "%s lists no users", path);
}
