/* A mount as the kernel shows it, read without touching the filesystem: the export its
 * source names (NFS server:/path, SMB //server/share/prefix, AFS cell:volume) and whether
 * its options make the client show owners it made up.  Directory identity (attr-id.c)
 * is built on these. */
#include <ctype.h>

#include "attr-private.h"

/* Is the comma-separated option list opts holding exactly the option name? */
static bool has_option(const char *opts, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = opts; p && *p;) {
		const char *end = strchrnul(p, ',');
		size_t len = (size_t)(end - p);
		const char *eq = memchr(p, '=', len);

		if (eq)
			len = (size_t)(eq - p);
		if (len == n && strncmp(p, name, n) == 0)
			return true;
		p = *end ? end + 1 : end;
	}
	return false;
}

bool attr_owner_synthesized(const char *fstype, const char *options)
{
	if (!fstype)
		return false;
	/* kafs (and OpenAFS's client, also "afs") shows AFS PTS ids as owners */
	if (streq(fstype, "afs"))
		return true;
	if (!streq(fstype, "cifs") && !streq(fstype, "smb3"))
		return false;
	/* forceuid: every inode shows the mount's uid=, whatever the server says */
	if (has_option(options, "forceuid"))
		return true;
	/* real owners come from the Unix or POSIX extensions, or from the ACL's SIDs */
	return !has_option(options, "unix") && !has_option(options, "posix") &&
	       !has_option(options, "cifsacl") && !has_option(options, "idsfromsid");
}

static void lowercase(char *s)
{
	for (; *s; s++)
		*s = (char)tolower((unsigned char)*s);
}

/* "server:/path" or "[v6addr]:/path": server lower-cased and path out. */
int attr_split_nfs_source(const char *source, char **ret_server, const char **ret_path)
{
	const char *colon;
	char *server;

	if (source[0] == '[') {
		const char *end = strchr(source, ']');
		if (!end || end[1] != ':')
			return -EINVAL;
		colon = end + 1;
	} else {
		colon = strchr(source, ':');
	}
	if (!colon || colon == source || colon[1] != '/')
		return -EINVAL;
	server = strndup(source, (size_t)(colon - source));
	if (!server)
		return -ENOMEM;
	lowercase(server);
	*ret_server = server;
	*ret_path = colon + 1;
	return 0;
}

/* "//server/share/prefix" (or with backslashes): server and share lower-cased (SMB
 * names are case-insensitive), the prefix path kept as written. */
int attr_split_cifs_source(const char *source, char **ret_domain, char **ret_prefix)
{
	_cleanup_free_ char *s = strdup(source);
	char *server, *share, *prefix;

	if (!s)
		return -ENOMEM;
	for (char *p = s; *p; p++)
		if (*p == '\\')
			*p = '/';
	if (!startswith(s, "//"))
		return -EINVAL;
	server = s + 2;
	share = strchr(server, '/');
	if (!share || share == server)
		return -EINVAL;
	*share++ = '\0';
	prefix = strchr(share, '/');
	if (prefix)
		*prefix++ = '\0';
	if (!*share)
		return -EINVAL;
	lowercase(server);
	lowercase(share);
	if (asprintf(ret_domain, "cifs://%s/%s", server, share) < 0)
		return -ENOMEM;
	if (asprintf(ret_prefix, "/%s", prefix ? prefix : "") < 0) {
		free(*ret_domain);
		return -ENOMEM;
	}
	return 0;
}

/* kafs sources: "%cell:volume." or "#cell:volume." (the leading character picks the
 * read-write or read-only preference, the trailing dot is kafs's marker), or
 * "cell:volume" as written by users.  The volume names the tree; ".readonly" and
 * ".backup" are the same tree's snapshots and share its policy. */
int attr_split_afs_source(const char *source, char **ret_domain)
{
	_cleanup_free_ char *s = NULL;
	char *cell, *vol, *end;
	size_t n;

	if (source[0] == '%' || source[0] == '#')
		source++;
	s = strdup(source);
	if (!s)
		return -ENOMEM;
	cell = s;
	vol = strchr(s, ':');
	if (!vol || vol == cell)
		return -EINVAL;
	*vol++ = '\0';
	n = strlen(vol);
	if (n && vol[n - 1] == '.')
		vol[--n] = '\0';
	if ((end = strstr(vol, ".readonly")) && end[9] == '\0')
		*end = '\0';
	else if ((end = strstr(vol, ".backup")) && end[7] == '\0')
		*end = '\0';
	if (!*vol || strchr(vol, '/') || strchr(cell, '/'))
		return -EINVAL;
	lowercase(cell);
	if (asprintf(ret_domain, "afs://%s/%s", cell, vol) < 0)
		return -ENOMEM;
	return 0;
}
