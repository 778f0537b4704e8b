/* The pure checks of nfskeys-attrd's sub-mounts (no kernel, no store, no threads:
 * tests/unit/test-attrd-mounts-check.c): which per-mount attributes of a parent a
 * sub-mount carries, which parent options cannot be passed on safely, and whether the
 * directory at a sub-mount's target is the one its policy was set on. */
#include <errno.h>
#include <stdio.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "attrd-mounts-private.h"
#include "macros.h"

/* Is word (a name, or name=) among the comma-separated options? */
static bool opt_has(const char *opts, const char *name)
{
	size_t n = strlen(name);

	for (const char *o = opts; o && *o; o = strchr(o, ',') ? strchr(o, ',') + 1 : NULL)
		if (strncmp(o, name, n) == 0 && (o[n] == ',' || o[n] == '=' || o[n] == '\0'))
			return true;
	return false;
}

unsigned long mounts_attr_from_options(const char *vfs_opts, const char *super_opts,
				       const char **ret_refused)
{
	static const struct {
		const char *name;
		unsigned long attr;
	} map[] = { { "ro", MOUNT_ATTR_RDONLY },
		    { "nosuid", MOUNT_ATTR_NOSUID },
		    { "nodev", MOUNT_ATTR_NODEV },
		    { "noexec", MOUNT_ATTR_NOEXEC },
		    { "nosymfollow", MOUNT_ATTR_NOSYMFOLLOW },
		    { "noatime", MOUNT_ATTR_NOATIME },
		    { "nodiratime", MOUNT_ATTR_NODIRATIME },
		    { "strictatime", MOUNT_ATTR_STRICTATIME } };
	unsigned long a = MOUNT_ATTR_RELATIME;

	*ret_refused = NULL;
	for (size_t i = 0; i < ARRAY_SIZE(map); i++) {
		if (!opt_has(vfs_opts, map[i].name))
			continue;
		if (map[i].attr & MOUNT_ATTR__ATIME)
			a &= ~MOUNT_ATTR__ATIME;
		a |= map[i].attr;
	}
	/* a read-only superblock: the sub-mount's own one is read-write unless told */
	if (opt_has(super_opts, "ro"))
		a |= MOUNT_ATTR_RDONLY;
	/* the user namespace of an idmapped mount cannot be read back from the kernel, and a
	 * sub-mount without it would show the server's ids where the parent maps them */
	if (opt_has(vfs_opts, "idmapped"))
		*ret_refused = "idmapped";
	return a;
}

/* The value of one octal escape ("\054") at s, or -1. */
static int octal_at(const char *s)
{
	if (s[0] != '\\' || s[1] < '0' || s[1] > '3' || s[2] < '0' || s[2] > '7' || s[3] < '0' ||
	    s[3] > '7')
		return -1;
	return (s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0');
}

int mounts_options_unsafe(const char *raw, char **ret_option)
{
	*ret_option = NULL;
	for (const char *o = raw; o && *o;) {
		size_t len = strcspn(o, ",");
		bool comma = false;
		char *out, *p;

		for (size_t i = 0; i + 3 < len; i++)
			if (octal_at(o + i) == ',')
				comma = true;
		if (comma) {
			/* the option as the kernel was given it, for the log */
			out = malloc(len + 1);
			if (!out)
				return -ENOMEM;
			p = out;
			for (size_t i = 0; i < len; i++) {
				int c = i + 3 < len ? octal_at(o + i) : -1;

				if (c > 0) {
					*p++ = (char)c;
					i += 3;
				} else {
					*p++ = o[i];
				}
			}
			*p = '\0';
			*ret_option = out;
			return 1;
		}
		o += len;
		if (*o == ',')
			o++;
	}
	return 0;
}

int mounts_handle_fileid(const char *handle, uint64_t *ret)
{
	unsigned char b[12];
	const char *hex = handle ? strchr(handle, ':') : NULL;
	uint32_t hi, lo, mode;

	if (!hex || strlen(hex + 1) < 2 * sizeof(b))
		return -EINVAL;
	hex++;
	for (size_t i = 0; i < sizeof(b); i++) {
		unsigned v;

		if (sscanf(hex + 2 * i, "%2x", &v) != 1)
			return -EINVAL;
		b[i] = (unsigned char)v;
	}
	/* the Linux NFS client's handle (nfs_encode_fh): the file id's high and low 32 bits
	 * and the file type, as host-order words, then the server's own handle */
	memcpy(&hi, b, 4);
	memcpy(&lo, b + 4, 4);
	memcpy(&mode, b + 8, 4);
	if (mode != S_IFDIR)
		return -EINVAL;
	*ret = (uint64_t)hi << 32 | lo;
	return 0;
}

int mounts_handle_matches(const char *handles, const char *got, bool nfs, uint64_t ino)
{
	_cleanup_free_ char *copy = handles ? strdup(handles) : NULL;
	char *save = NULL;
	bool any = false;

	if (!handles || !*handles)
		return -ENODATA;
	if (!copy)
		return -ENOMEM;
	for (char *h = strtok_r(copy, " ", &save); h; h = strtok_r(NULL, " ", &save)) {
		uint64_t id;

		any = true;
		if (got && streq(h, got))
			return 1;
		/* no handle from the target's mount (NFSv4.0 on 6.1): the file id recorded in
		 * the handle, against the one the target shows */
		if (!got && nfs && mounts_handle_fileid(h, &id) == 0 && id == ino)
			return 1;
	}
	return any ? 0 : -ENODATA;
}

int mounts_setters_check(const char *setters, uid_t owner, bool (*is_admin)(uid_t, void *),
			 void *userdata, uid_t *ret_uid)
{
	for (const char *s = setters; s && *s;) {
		char *end;
		unsigned long u = strtoul(s, &end, 10);

		if (end == s)
			return -EINVAL;
		if ((uid_t)u != owner && !(is_admin && is_admin((uid_t)u, userdata))) {
			*ret_uid = (uid_t)u;
			return 1;
		}
		s = end;
		while (*s == ' ')
			s++;
	}
	return 0;
}
