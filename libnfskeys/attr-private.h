/* Internal declarations of the directory-attribute area: vocabulary, identity, the
 * in-memory index and the SQLite store.  Shared by libnfskeys/attr*.c, nfskeys-attrd
 * and the unit tests (which link the internal library). */
#pragma once

#include <stdint.h>
#include <sys/types.h>

#include "libnfskeys-private.h"

struct libmnt_fs;
struct libmnt_table;

/* ---------------------------------------------------------------- attr-model.c */

#define ATTR_USER_PREFIX "user."
#define ATTR_USER_NAME_MAX 64  /* bytes after "user." */
#define ATTR_USER_VALUE_MAX 1024
#define ATTR_MAX_PER_DIR 64     /* attributes on one directory */

/* key: a typed attribute (enum nfskeys_attr_key), NFSKEYS_ATTR_USER for a valid
 * user.<name>, -EINVAL otherwise (message in errbuf). */
int attr_key_parse(const char *key, char *errbuf, size_t errlen);
/* Validate value for key (typed or user); canonical text into *ret_value (malloc()ed),
 * its number into *ret_number. */
int attr_value_parse(int key, const char *keyname, const char *value, char **ret_value,
		     uint64_t *ret_number, char *errbuf, size_t errlen);

/* Policy internals used by the index and store to fill a policy without re-validating. */
int attr_policy_put(struct nfskeys_attr_policy *policy, int key, const char *keyname,
		    const char *value, uint64_t number, const char *source, bool from_ldap);
/* The same without the sorted insertion, for callers that add in order (typed keys by
 * enum, then user.* by name) into a cleared policy: the lookup hot path. */
int attr_policy_append(struct nfskeys_attr_policy *policy, int key, const char *keyname,
		       const char *value, size_t vlen, uint64_t number, const char *source,
		       bool from_ldap);
/* Make dst a copy of src (two copies, no allocation once dst has grown to src's size). */
int attr_policy_copy(struct nfskeys_attr_policy *dst, const struct nfskeys_attr_policy *src);
void attr_policy_set_cut(struct nfskeys_attr_policy *policy, const char *cut);
/* The bytes a policy object holds (entries and text). */
size_t attr_policy_memory(const struct nfskeys_attr_policy *policy);

/* The mount options of a (resolved) policy, as nfskeys_attr_mount_options() gives them for
 * an identity: the one mapping from attributes to options, also used by nfskeys-attrd's
 * sub-mounts (issue 23 item 1).  domain picks the family when fstype is NULL. */
int attr_policy_mount_options(const struct nfskeys_attr_policy *p, const char *fstype,
			      const char *domain, const char *explicit_opts, char **ret_options);

/* ---------------------------------------------------------------- attr-id.c */

/* Build an identity from one mount-table entry and a path relative to its mount point
 * ("" or "a/b").  Exposed for the unit tests on recorded mountinfo samples. */
int attr_id_from_mount(const char *fstype, const char *source, const char *root, dev_t devno,
		       const char *mountpoint, const char *rel, struct nfskeys_attr_id **ret_id);
/* fstat() from cached attributes only (statx AT_STATX_DONT_SYNC: mode, uid, gid, ino,
 * dev), so a directory on a FUSE server that never answers cannot block the caller. */
struct stat;
int attr_fd_stat(int fd, struct stat *ret_st);
/* Identity of the directory open as fd, looking its mount up by mount id in each of the
 * NULL-terminated mountinfo files in turn (the daemon adds /proc/PID/mountinfo of the
 * caller, whose mount namespace may differ). */
int attr_id_from_fd_tables(struct nfskeys_ctx *ctx, int fd, const char *const *mountinfo_files,
			   struct nfskeys_attr_id **ret_id);
/* Find the mount covering path in a parsed table by longest mount-point prefix (the last
 * mounted wins) and build the identity: for tests on samples, no filesystem access. */
int attr_id_from_table(struct libmnt_table *tb, const char *path, struct nfskeys_attr_id **ret_id);
/* Lexically normalize an absolute path: collapse '//', drop '.', resolve '..', no
 * trailing slash ("/" for the root).  -EINVAL when path is not absolute. */
int attr_path_normalize(const char *path, char **ret);
/* domain + path as one display string ("nfs://srv/export/a"). */
char *attr_id_format(const char *domain, const char *path);
/* Bytes of a mountinfo file read while looking for one mount (issue 21 item 7): a caller
 * can make its own namespace's table as long as it likes. */
#define ATTR_MOUNTINFO_MAX (4 * 1024 * 1024)
/* Of an identity made from a descriptor: the superblock options of its mount, the
 * directory's file handle ("TYPE:HEX", NULL where the filesystem has none), and the
 * mount point it was reached through in our own mount namespace (NULL when the mount is
 * another namespace's). */
const char *attr_id_get_options(const struct nfskeys_attr_id *id);
const char *attr_id_get_handle(const struct nfskeys_attr_id *id);
const char *attr_id_get_local(const struct nfskeys_attr_id *id);
/* name_to_handle_at() of fd as "TYPE:HEX" (malloc()ed), NULL when there is none. */
char *attr_fd_handle(int fd);
/* Does the kernel make up the owners of this mount's inodes (issue 21 item 6)?  afs
 * (PTS ids), and cifs/smb3 with forceuid, or without unix, posix, cifsacl or
 * idsfromsid (every inode shows the mount's uid=).  options: mountinfo's superblock
 * options, comma-separated. */
bool attr_owner_synthesized(const char *fstype, const char *options);

/* ---------------------------------------------------------------- attr-index.c */

struct attr_index;

int attr_index_new(struct attr_index **ret);
struct attr_index *attr_index_free(struct attr_index *index);
/* Set one attribute (already validated) on (domain, path); path normalized. */
int attr_index_put(struct attr_index *index, const char *domain, const char *path, int key,
		   const char *keyname, const char *value, uint64_t number, bool from_ldap);
/* Remove one attribute; keyname NULL (with key < 0) removes all of that origin. */
int attr_index_del(struct attr_index *index, const char *domain, const char *path, int key,
		   const char *keyname, bool from_ldap);
int attr_index_resolve(struct attr_index *index, const char *domain, const char *path,
		       unsigned flags, struct nfskeys_attr_policy *policy);
int attr_index_explicit(struct attr_index *index, const char *domain, const char *path,
			struct nfskeys_attr_policy *policy);
/* Lookups without sources use the fingerprint table (instead of walking the trie) once
 * the index has min_nodes nodes (default 65536; 0: always).  For the tests. */
void attr_index_set_fp_min(struct attr_index *index, uint32_t min_nodes);
/* Fingerprint with the evaluation point key (2 .. 2^61 - 2) from now on, rebuilding the
 * table: 0, or 1 when two stored paths collide under key and a random one was drawn
 * instead.  For the tests (a known key makes colliding paths easy to write). */
int attr_index_set_fpkey(struct attr_index *index, uint64_t key);
/* Tables of at least this many bytes get their own mapping with huge pages (default,
 * and 0: 8 MiB).  For the tests; only while no index exists. */
void attr_index_set_big_min(size_t bytes);
/* After a bulk load: give back growth slack and compute every directory's effective set
 * (the index stays usable and growable). */
void attr_index_compact(struct attr_index *index);
/* Directories that hold at least one attribute, and the bytes the index uses. */
size_t attr_index_count(const struct attr_index *index);
size_t attr_index_memory(const struct attr_index *index);

/* ---------------------------------------------------------------- attr-store.c */

#define ATTR_SCHEMA_VERSION 3

/* nfskeys_attr_store_open() with a choice: hold_ctx false for a store the context itself
 * keeps (CTX_EXT_ATTR), which must not keep the context alive in turn. */
int attr_store_open_full(struct nfskeys_ctx *ctx, const char *path, unsigned flags, bool hold_ctx,
			 struct nfskeys_attr_store **ret_store);
/* The store's index (kept in step with every change through this store). */
struct attr_index *attr_store_index(struct nfskeys_attr_store *store);
/* Publish the committed state of a writable store as PATH.snapshot for readers (done
 * after every commit and at open; readers never open the live database). */
int attr_store_publish(struct nfskeys_attr_store *st);
/* Publish again if the last publication failed (a full disk): a committed change must not
 * stay invisible to readers until the next change.  0 when nothing was pending. */
int attr_store_publish_retry(struct nfskeys_attr_store *st);
/* For read-only stores: rebuild the index when another connection changed the store.
 * Returns 1 when it was rebuilt. */
int attr_store_refresh(struct nfskeys_attr_store *store);
int attr_store_list(struct nfskeys_attr_store *store, const char *domain, const char *path,
		    int (*fn)(void *userdata, const struct nfskeys_attr_id *id,
			      const struct nfskeys_attr_policy *policy),
		    void *userdata);
/* Replace all LDAP-sourced rows by the given set in one transaction (fleet sync). */
struct attr_sync_row {
	const char *domain, *path, *key, *value;
};
int attr_store_replace_ldap(struct nfskeys_attr_store *store, const struct attr_sync_row *rows,
			    size_t n);
const char *attr_store_path(const struct nfskeys_attr_store *store);
/* A set through nfskeys-attrd (issue 21 item 4): the rows are keyed to the directory's
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
/* Directories and bytes of local policy rows last set by uid. */
int attr_store_usage(struct nfskeys_attr_store *store, uid_t uid, uint64_t *ret_dirs,
		     uint64_t *ret_bytes);
/* Drop the local policy of directories that are gone: on local filesystems, those whose
 * stored file handle no longer opens (ESTALE) or opens a directory now elsewhere.
 * *ret_dropped: rows removed. */
int attr_store_sweep(struct nfskeys_attr_store *store, unsigned *ret_dropped);
/* The default store path for ctx ([Attr] Store or STATEDIR/attr.db). */
const char *attr_default_store_path(const struct nfskeys_ctx *ctx);
/* The daemon socket for ctx ([Attrd] Socket or RUNDIR/attrd.sock). */
const char *attr_default_socket_path(const struct nfskeys_ctx *ctx);
