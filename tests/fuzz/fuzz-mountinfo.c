/* libFuzzer target: mount table to directory identity (attr_id_from_table and
 * attr_id_from_mount, libnfskeys/attr-id.c).  The first input line is a path; the rest
 * is parsed by libmount as a mountinfo file (mnt_table_parse_stream, the parser behind
 * mnt_table_parse_file).  An identity found must be well formed: a valid domain of the
 * right scheme for the fstype, a normalized absolute path that nfskeys_attr_id_new()
 * reproduces, and the mount point that covers the path. */
#include <ctype.h>
#include <libmount.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "attr-private.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static void check(bool ok)
{
	if (!ok)
		abort();
}

static int quiet_errcb(struct libmnt_table *tb, const char *filename, int line)
{
	return 1; /* skip the bad line, as libmount does by default, without printing */
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	unsetenv("LIBMOUNT_DEBUG");
	return 0;
}

/* A normalized path: absolute, no empty, "." or ".." components, no trailing slash. */
static bool normalized(const char *p)
{
	if (p[0] != '/')
		return false;
	if (streq(p, "/"))
		return true;
	for (const char *s = p; *s;) {
		const char *c = ++s; /* after the slash */
		size_t n;

		while (*s && *s != '/')
			s++;
		n = (size_t)(s - c);
		if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
			return false;
	}
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nfskeys_attr_id *id = NULL, *again = NULL;
	struct libmnt_table *tb;
	const char *nl, *domain, *path, *fstype, *mnt;
	char *where;
	FILE *f;
	int r;

	if (size > 16384)
		return 0;
	nl = memchr(data, '\n', size);
	if (!nl)
		return 0;
	where = strndup((const char *)data, (size_t)(nl - (const char *)data));
	check(where != NULL);
	tb = mnt_new_table();
	check(tb != NULL);
	mnt_table_set_parser_errcb(tb, quiet_errcb);
	f = fmemopen((void *)(nl + 1), size - (size_t)(nl + 1 - (const char *)data), "r");
	if (f) {
		(void)mnt_table_parse_stream(tb, f, "mountinfo");
		fclose(f);
	}
	/* an empty stream gives no FILE from fmemopen: an empty table then */

	r = attr_id_from_table(tb, where, &id);
	if (r < 0) {
		check(r == -ENOENT || r == -EINVAL || r == -EXDEV || r == -ENAMETOOLONG);
		if (where[0] == '/' && r == -EINVAL)
			check(mnt_table_get_nents(tb) > 0);
		goto out;
	}
	domain = nfskeys_attr_id_get_domain(id);
	path = nfskeys_attr_id_get_path(id);
	fstype = nfskeys_attr_id_get_fstype(id);
	mnt = nfskeys_attr_id_get_mountpoint(id);
	check(domain && path && fstype && mnt && nfskeys_attr_id_get_source(id));
	check(normalized(path));
	/* the mount point covers the directory the path leads to */
	{
		char *norm = NULL;

		check(attr_path_normalize(where, &norm) == 0);
		check(streq(mnt, "/") ||
		      (strncmp(norm, mnt, strlen(mnt)) == 0 &&
		       (norm[strlen(mnt)] == '\0' || norm[strlen(mnt)] == '/')));
		free(norm);
	}
	/* the scheme fits the filesystem type */
	if (startswith(domain, "nfs://"))
		check(streq(fstype, "nfs") || streq(fstype, "nfs4"));
	else if (startswith(domain, "cifs://"))
		check(streq(fstype, "cifs") || streq(fstype, "smb3"));
	else if (startswith(domain, "afs://"))
		check(streq(fstype, "afs"));
	else
		check(startswith(domain, "local://"));
	for (const char *p = domain; *p; p++)
		check(!isupper((unsigned char)*p) || startswith(domain, "local://") ||
		      startswith(domain, "afs://")); /* afs volume names keep their case */
	/* "." and ".." in the path asked about name the directory they lead to: the same
	 * identity as the normalized path (not one that climbs out of the export) */
	{
		char *norm = NULL;
		struct nfskeys_attr_id *nid = NULL;

		check(attr_path_normalize(where, &norm) == 0);
		check(attr_id_from_table(tb, norm, &nid) == 0);
		check(streq(nfskeys_attr_id_get_domain(nid), domain) &&
		      streq(nfskeys_attr_id_get_path(nid), path));
		nfskeys_attr_id_free(nid);
		free(norm);
	}
	/* the two parts make the same identity again */
	check(nfskeys_attr_id_new(domain, path, &again) == 0);
	check(streq(nfskeys_attr_id_get_domain(again), domain) &&
	      streq(nfskeys_attr_id_get_path(again), path));
out:
	nfskeys_attr_id_free(again);
	nfskeys_attr_id_free(id);
	mnt_unref_table(tb);
	free(where);
	return 0;
}
