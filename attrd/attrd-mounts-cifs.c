/* CIFS (cifs, smb3) parents of nfskeys-attrd's sub-mounts: which parent options a
 * sub-mount carries, whose credentials it may reuse (Kerberos: the kernel's cifs.spnego
 * upcall finds the cruid= user's ticket; never a password), which policy attributes
 * CIFS has no option for, and how a new mount's root is checked to be the directory it
 * goes on.  The kernel's side is in doc/LIVE-MOUNTS.md ("CIFS"). */
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attrd-mounts-private.h"
#include "macros.h"
#include "nfskeys-attr-daemon.h"

bool mounts_cifs_fstype(const char *fstype)
{
	return fstype && (streq(fstype, "cifs") || streq(fstype, "smb3"));
}

bool mounts_cifs_could_be_ours(struct libmnt_fs *fs)
{
	const char *src = mnt_fs_get_source(fs), *target = mnt_fs_get_target(fs), *share, *dir;

	if (!mounts_cifs_fstype(mnt_fs_get_fstype(fs)) || !src || !target || !startswith(src, "//"))
		return false;
	/* //SERVER/SHARE/DIR...: a sub-mount's source names the directory, and its last
	 * component is the target's (the two paths end alike below the parent) */
	share = strchr(src + 2, '/');
	dir = share ? strchr(share + 1, '/') : NULL;
	if (!dir || !dir[1] || !strrchr(target, '/'))
		return false;
	return streq(strrchr(dir, '/') + 1, strrchr(target, '/') + 1);
}

/* Is word (a name, or name=) among the comma-separated options? */
static const char *opt_find(const char *opts, const char *name)
{
	size_t n = strlen(name);

	for (const char *o = opts; o && *o; o = strchr(o, ',') ? strchr(o, ',') + 1 : NULL) {
		if (strncmp(o, name, n) == 0 && (o[n] == ',' || o[n] == '=' || o[n] == '\0'))
			return o;
	}
	return NULL;
}

/* The value of name=VALUE among opts, copied; NULL when absent. */
static char *opt_value(const char *opts, const char *name)
{
	const char *o = opt_find(opts, name);

	if (!o || o[strlen(name)] != '=')
		return NULL;
	o += strlen(name) + 1;
	return strndup(o, strcspn(o, ","));
}

/* Parent options a sub-mount does not take: the caching ones (the policy decides them,
 * as on NFS) and, although mountinfo never shows them, anything that carries a secret. */
static const char *const cifs_drop[] = { "cache",	"actimeo", "acregmax", "acdirmax",
					 "fsc",		"noac",	   "password", "pass",
					 "credentials", "cred",	   NULL };

int mounts_cifs_base(const char *super, char **ret_base, char **ret_why)
{
	_cleanup_free_ char *sec = NULL;
	char *out;

	if (!super)
		super = "";
	sec = opt_value(super, "sec");
	/* Kerberos: the kernel asks cifs.spnego for a ticket of the cruid= user (or finds
	 * that user's session still open), so the same options reach the same identity.
	 * Any other sec= needs the password the parent was mounted with: only the kernel
	 * holds it, and a root daemon reads no user's password file. */
	if (!sec || (!streq(sec, "krb5") && !streq(sec, "krb5i"))) {
		if (asprintf(ret_why,
			     "not applied: the parent mount authenticates with %s%s, which needs "
			     "the password it was mounted with; only the kernel holds it and "
			     "nfskeys-attrd never reads a password or credentials file; mount "
			     "the share with sec=krb5 (cruid= or multiuser) for sub-mounts, or "
			     "mount this subtree with nfskeys-mount",
			     sec ? "sec=" : "no sec= shown (a guest session?)", sec ? sec : "") < 0)
			return -ENOMEM;
		*ret_base = NULL;
		return 0;
	}
	if (!opt_find(super, "cruid")) {
		if (asprintf(ret_why,
			     "not applied: the parent's sec=%s mount shows no cruid= "
			     "in mountinfo, so whose ticket it uses is unknown",
			     sec) < 0)
			return -ENOMEM;
		*ret_base = NULL;
		return 0;
	}
	out = mount_options_without(super, cifs_drop);
	if (!out)
		return -ENOMEM;
	*ret_base = out;
	*ret_why = NULL;
	return 0;
}

int mounts_cifs_user_option(const char *base, char **ret_opt)
{
	_cleanup_free_ char *cruid = NULL, *buf = NULL;
	struct passwd pw, *res = NULL;
	long size = sysconf(_SC_GETPW_R_SIZE_MAX);
	unsigned long uid;
	char *end;
	int r;

	*ret_opt = NULL;
	/* mountinfo shows username= except on multiuser mounts, and the kernel mounts
	 * nothing without one ("No username specified") */
	if (!opt_find(base, "multiuser") || opt_find(base, "username"))
		return 0;
	cruid = opt_value(base, "cruid");
	if (!cruid)
		return -EINVAL;
	errno = 0;
	uid = strtoul(cruid, &end, 10);
	if (errno || *end || end == cruid || uid > UINT32_MAX)
		return -EINVAL;
	size = size > 0 ? size : 16384;
	buf = malloc((size_t)size);
	if (!buf)
		return -ENOMEM;
	/* in the worker: the NSS lookup may wait on a directory server */
	r = getpwuid_r((uid_t)uid, &pw, buf, (size_t)size, &res);
	if (r != 0 || !res)
		return r ? -r : -ENOENT;
	if (strchr(pw.pw_name, ','))
		return -EINVAL;
	return asprintf(ret_opt, "username=%s", pw.pw_name) < 0 ? -ENOMEM : 0;
}

/* Attributes the 6.1 CIFS client has no mount option for: it keeps no lookup cache of
 * its own setting, has no close-to-open switch, and no attribute-cache minimums. */
static bool cifs_cannot_take(const char *key)
{
	static const char *const keys[] = { "lookupcache", "cto", "acregmin", "acdirmin" };

	for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
		if (streq(key, keys[i]))
			return true;
	return false;
}

char *mounts_cifs_refused_at(struct nfskeys_attr_store *store, const char *domain, const char *path)
{
	struct nfskeys_attr_policy *p = NULL;
	struct nfskeys_attr_entry e;
	char *out = strdup("");

	if (!out || nfskeys_attr_policy_new(&p) < 0 ||
	    attr_index_resolve(attr_store_index(store), domain, path, 0, p) < 0) {
		nfskeys_attr_policy_free(p);
		free(out);
		return NULL;
	}
	for (size_t i = 0; i < nfskeys_attr_policy_count(p); i++) {
		char *n = NULL;

		if (nfskeys_attr_policy_entry(p, i, &e) < 0 || !cifs_cannot_take(e.key))
			continue;
		if (asprintf(&n, "%s%s%s=%s", out, *out ? "," : "", e.key, e.value) < 0) {
			free(out);
			out = NULL;
			break;
		}
		free(out);
		out = n;
	}
	nfskeys_attr_policy_free(p);
	return out;
}

char *mounts_cifs_refused_why(const char *refused)
{
	char *why = NULL;

	if (asprintf(&why,
		     "not applied: CIFS has no mount option for %s in this directory's "
		     "policy (NFS-only attributes; cifs takes cache, actimeo, acregmax, "
		     "acdirmax, fscache=on, writeback); 'nfsattr show' names where they are "
		     "set",
		     refused) < 0)
		return NULL;
	return why;
}

/* CIFS has no file handles to compare (name_to_handle_at: EOPNOTSUPP without the
 * experimental export support), but with serverino the inode number is the server's
 * own file id (SMB2 IndexNumber), the same through every superblock.  (Not the creation
 * time: measured, the root of a new mount of the same directory showed another one,
 * smbd makes it up on file systems without birth times.) */
bool mounts_cifs_same_dir(const struct mentry *e, int mfd, int at, char *msg, size_t msg_size)
{
	struct statx a, b;

	if (!opt_find(e->base, "serverino")) {
		snprintf(msg, msg_size,
			 "not attached: the parent mount has no serverino, so the "
			 "inode numbers are made up by the client and %s cannot be checked to be "
			 "the directory at %s",
			 e->source, e->target);
		return false;
	}
	if (statx(mfd, "", AT_EMPTY_PATH, STATX_INO | STATX_TYPE, &a) < 0 ||
	    statx(at, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_INO | STATX_TYPE, &b) < 0) {
		snprintf(msg, msg_size, "cannot stat %s or %s: %m", e->source, e->target);
		return false;
	}
	if (!S_ISDIR(a.stx_mode) || a.stx_ino != b.stx_ino) {
		snprintf(msg, msg_size,
			 "%s on the server is no longer the directory at %s "
			 "(file id %llu, not %llu: moved or replaced while mounting); not "
			 "attached",
			 e->source, e->target, (unsigned long long)a.stx_ino,
			 (unsigned long long)b.stx_ino);
		return false;
	}
	return true;
}
