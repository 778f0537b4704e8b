/* The library's daemon side of directory attributes: exactly what nfskeys-attrd calls
 * beyond the public nfskeys-attr.h (the write path with quotas, the index, identity from
 * a descriptor, authorization facts).  Not installed; attrd/ includes no other private
 * header of the library (doc/ARCHITECTURE.md). */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "ctx-log.h"
#include "nfskeys.h"
#include "nfskeys-attr.h"

struct stat;

/* ---------------------------------------------------------------- limits */

#define ATTR_MAX_PER_DIR 64 /* attributes on one directory */
/* Bytes of a mountinfo file read while looking for one mount, a bound because a caller
 * can make its own namespace's table as long as it likes. */
#define ATTR_MOUNTINFO_MAX (4 * 1024 * 1024)

/* ------------------------------------------------ vocabulary (attr-model.c, attr.c) */

/* key: a typed attribute (enum nfskeys_attr_key), NFSKEYS_ATTR_USER for a valid
 * user.<name>, -EINVAL otherwise (message in errbuf). */
int attr_key_parse(const char *key, char *errbuf, size_t errlen);

/* The mount options of a (resolved) policy, as nfskeys_attr_mount_options() gives them for
 * an identity: the one mapping from attributes to options, also used by nfskeys-attrd's
 * sub-mounts (doc/LIVE-MOUNTS.md).  domain picks the family when fstype is NULL. */
int attr_policy_mount_options(const struct nfskeys_attr_policy *p, const char *fstype,
			      const char *domain, const char *explicit_opts, char **ret_options);

/* ------------------------------------------------------------ identity (attr-id.c) */

/* Build an identity from one mount-table entry and a path relative to its mount point
 * ("" or "a/b").  Exposed for the unit tests on recorded mountinfo samples. */
int attr_id_from_mount(const char *fstype, const char *source, const char *root, dev_t devno,
		       const char *mountpoint, const char *rel, struct nfskeys_attr_id **ret_id);
/* fstat() from cached attributes only (statx AT_STATX_DONT_SYNC: mode, uid, gid, ino,
 * dev), so a directory on a FUSE server that never answers cannot block the caller. */
int attr_fd_stat(int fd, struct stat *ret_st);
/* A directory's place in a mount of another namespace that the dentry cache alone could
 * not confirm: a directory on the way the filesystem must revalidate first (NFS with
 * actimeo=0, FUSE without entry caching). */
struct attr_id_check;
/* Identity of the directory open as fd, looking its mount up by mount id in each of the
 * NULL-terminated mountinfo files in turn (the daemon adds /proc/PID/mountinfo of the
 * caller, whose mount namespace may differ).  Nothing here waits on a file server: where
 * the directory's place in such a mount needs the server, ret_check NULL gives -EAGAIN;
 * else 0 with *ret_id NULL and *ret_check set: attr_id_check_run() then
 * attr_id_check_finish() give the identity. */
int attr_id_from_fd_tables(struct nfskeys_ctx *ctx, int fd, const char *const *mountinfo_files,
			   struct nfskeys_attr_id **ret_id, struct attr_id_check **ret_check);
/* Walk to the directory's place again, waiting on the file server as long as the mount
 * lets it (never on a daemon's loop): 0, -ESTALE when the directory moved meanwhile,
 * -errno. */
int attr_id_check_run(struct attr_id_check *c);
/* After a successful run: the identity. */
int attr_id_check_finish(struct attr_id_check *c, struct nfskeys_attr_id **ret_id);
struct attr_id_check *attr_id_check_free(struct attr_id_check *c);
/* domain + path as one display string ("nfs://srv/export/a"). */
char *attr_id_format(const char *domain, const char *path);
/* Of an identity made from a descriptor: the superblock options of its mount. */
const char *attr_id_get_options(const struct nfskeys_attr_id *id);
/* Does the kernel make up the owners of this mount's inodes?  Then the owner is no one to
 * authorize (doc/security/FINDINGS.md D9).  afs
 * (PTS ids), and cifs/smb3 with forceuid, or without unix, posix, cifsacl or
 * idsfromsid (every inode shows the mount's uid=).  options: mountinfo's superblock
 * options, comma-separated. */
bool attr_owner_synthesized(const char *fstype, const char *options);

/* --------------------------------------------------------- index (attr-index*.c) */

struct attr_index;

/* The effective policy of (domain, path), inherited and explicit attributes; flags
 * NFSKEYS_ATTR_SOURCES also fills each entry's source and the cut point. */
int attr_index_resolve(struct attr_index *index, const char *domain, const char *path,
		       unsigned flags, struct nfskeys_attr_policy *policy);
/* Only the attributes set on (domain, path) itself. */
int attr_index_explicit(struct attr_index *index, const char *domain, const char *path,
			struct nfskeys_attr_policy *policy);
/* Directories that hold at least one attribute, and the bytes the index uses. */
size_t attr_index_count(const struct attr_index *index);
size_t attr_index_memory(const struct attr_index *index);

/* --------------------------------------------------------- store (attr-store*.c) */

/* The store's index (kept in step with every change through this store). */
struct attr_index *attr_store_index(struct nfskeys_attr_store *store);
const char *attr_store_path(const struct nfskeys_attr_store *store);
/* Publish again if the last publication failed (a full disk): a committed change must not
 * stay invisible to readers until the next change.  0 when nothing was pending. */
int attr_store_publish_retry(struct nfskeys_attr_store *st);
/* Call fn with the stored policy of each directory at or below (domain, path) (every
 * directory when domain is NULL), in path order. */
int attr_store_list(struct nfskeys_attr_store *store, const char *domain, const char *path,
		    int (*fn)(void *userdata, const struct nfskeys_attr_id *id,
			      const struct nfskeys_attr_policy *policy),
		    void *userdata);
/* Call fn with each distinct (setter, origin, file handle) of the rows stored on (domain,
 * path) itself: who set the directory's policy and which directory it was (handle "TYPE:HEX"
 * as attr_store_set_checked() keyed it, NULL where none was recorded).  nfskeys-attrd's
 * sub-mounts use it to mount only over the directory the policy was set on. */
int attr_store_dir_rows(struct nfskeys_attr_store *store, const char *domain, const char *path,
			int (*fn)(void *userdata, uid_t by, bool ldap, const char *handle),
			void *userdata);
/* Replace all LDAP-sourced rows by the given set in one transaction (fleet sync). */
struct attr_sync_row {
	const char *domain, *path, *key, *value;
};
int attr_store_replace_ldap(struct nfskeys_attr_store *store, const struct attr_sync_row *rows,
			    size_t n);
/* A set through nfskeys-attrd, bounded per user and tied to the directory, not only its
 * name (doc/security/FINDINGS.md D4): the rows are keyed to the directory's
 * file handle (and our path to it) from id; rows on the same path keyed to another
 * handle (a removed directory's) are dropped first (o->dropped); the setter's local
 * rows must stay within max_dirs directories and max_bytes bytes (domain, path, key and
 * value of each row; 0: no limit), else -EDQUOT with the would-be usage in o. */
struct attr_set_opts {
	uint64_t max_dirs, max_bytes;
	uint64_t dirs, bytes; /* out: the setter's usage (when limited) */
	unsigned dropped;     /* out */
};
int attr_store_set_checked(struct nfskeys_attr_store *store, const struct nfskeys_attr_id *id,
			   const struct nfskeys_attr_policy *policy, uid_t by,
			   struct attr_set_opts *o);
/* Drop the local policy of directories that are gone: on local filesystems, those whose
 * stored file handle no longer opens (ESTALE) or opens a directory now elsewhere.
 * *ret_dropped: rows removed. */
int attr_store_sweep(struct nfskeys_attr_store *store, unsigned *ret_dropped);
/* The default store path for ctx ([Attr] Store or STATEDIR/attr.db). */
const char *attr_default_store_path(const struct nfskeys_ctx *ctx);

struct nfskeys_wb_mount;
/* A writeback mount object (nfskeys-wb.h) from what the mount table says, for
 * nfskeys-attrd's writeback policy (libnfskeys/wb-kernel-mount.c): a daemon must not stat a
 * path on a server that may have stopped answering.  The mount's id, its mount point
 * (unescaped), its superblock's device and fstype.  -EMEDIUMTYPE for a filesystem other
 * than NFS or CIFS (not logged), -ENODEV when the bdi has no directory (logged). */
int wbk_mount_from_table(struct nfskeys_ctx *ctx, int mnt_id, const char *target, dev_t dev,
			 const char *fstype, struct nfskeys_wb_mount **ret_mount);

/* name_to_handle_at() of fd as "TYPE:HEX" (malloc()ed), NULL when there is none. */
char *attr_fd_handle(int fd);
