/* Internal declarations of the directory-attribute area: vocabulary, identity, the
 * in-memory index and the SQLite store, beyond what nfskeys-attr-daemon.h gives the
 * daemon.  Shared by libnfskeys/attr*.c and the unit tests, fuzzers and benchmarks
 * (which link the internal library); never by attrd/. */
#pragma once

#include <stdint.h>
#include <sys/types.h>

#include "libnfskeys-private.h"
#include "nfskeys-attr-daemon.h"

struct libmnt_fs;
struct libmnt_table;

/* ---------------------------------------------------------------- attr-model.c */

#define ATTR_USER_PREFIX "user."
#define ATTR_USER_NAME_MAX 64  /* bytes after "user." */
#define ATTR_USER_VALUE_MAX 1024

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

/* ---------------------------------------------------------------- attr-id.c */

/* Find the mount covering path in a parsed table by longest mount-point prefix (the last
 * mounted wins) and build the identity: for tests on samples, no filesystem access. */
int attr_id_from_table(struct libmnt_table *tb, const char *path, struct nfskeys_attr_id **ret_id);
/* Lexically normalize an absolute path: collapse '//', drop '.', resolve '..', no
 * trailing slash ("/" for the root).  -EINVAL when path is not absolute. */
int attr_path_normalize(const char *path, char **ret);
/* Of an identity made from a descriptor (its mount's options: nfskeys-attr-daemon.h): the
 * directory's file handle ("TYPE:HEX", NULL where the filesystem has none), and the
 * mount point it was reached through in our own mount namespace (NULL when the mount is
 * another namespace's). */
const char *attr_id_get_handle(const struct nfskeys_attr_id *id);
const char *attr_id_get_local(const struct nfskeys_attr_id *id);

/* ---------------------------------------------------------------- attr-id-source.c */

/* "server:/path" or "[v6addr]:/path": the server lower-cased (malloc()ed) and the path
 * (inside source). */
int attr_split_nfs_source(const char *source, char **ret_server, const char **ret_path);
/* "//server/share/prefix" (or with backslashes): "cifs://server/share" lower-cased and
 * "/prefix" as written, both malloc()ed. */
int attr_split_cifs_source(const char *source, char **ret_domain, char **ret_prefix);
/* kafs's "%cell:volume." / "#cell:volume." or "cell:volume": "afs://cell/volume" with
 * the snapshot suffix (.readonly, .backup) dropped, malloc()ed. */
int attr_split_afs_source(const char *source, char **ret_domain);

/* ---------------------------------------------------------------- attr-index.c */

int attr_index_new(struct attr_index **ret);
struct attr_index *attr_index_free(struct attr_index *index);
/* Set one attribute (already validated) on (domain, path); path normalized. */
int attr_index_put(struct attr_index *index, const char *domain, const char *path, int key,
		   const char *keyname, const char *value, uint64_t number, bool from_ldap);
/* Remove one attribute; keyname NULL (with key < 0) removes all of that origin. */
int attr_index_del(struct attr_index *index, const char *domain, const char *path, int key,
		   const char *keyname, bool from_ldap);
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

/* ---------------------------------------------------------------- attr-store.c */

#define ATTR_SCHEMA_VERSION 3

/* nfskeys_attr_store_open() with a choice: hold_ctx false for a store the context itself
 * keeps (CTX_EXT_ATTR), which must not keep the context alive in turn. */
int attr_store_open_full(struct nfskeys_ctx *ctx, const char *path, unsigned flags, bool hold_ctx,
			 struct nfskeys_attr_store **ret_store);
/* Publish the committed state of a writable store as PATH.snapshot for readers (done
 * after every commit and at open; readers never open the live database). */
int attr_store_publish(struct nfskeys_attr_store *st);
/* For read-only stores: rebuild the index when another connection changed the store.
 * Returns 1 when it was rebuilt. */
int attr_store_refresh(struct nfskeys_attr_store *store);
/* Directories and bytes of local policy rows last set by uid. */
int attr_store_usage(struct nfskeys_attr_store *store, uid_t uid, uint64_t *ret_dirs,
		     uint64_t *ret_bytes);
