/* Directory attributes: per-directory cache policy and its inheritance (doc/DESIGN.md §6).
 * Included by nfskeys.h; do not include directly.  A directory is named by its
 * filesystem identity (domain + path inside it), so a policy follows an export to every
 * mount point; reads come straight from the store, writes go through nfskeys-attrd. */
#pragma once

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- vocabulary */

/* The typed attributes.  user.<name> strings are free-form and have no number. */
enum nfskeys_attr_key {
	NFSKEYS_ATTR_CACHE,	  /* none | read | full */
	NFSKEYS_ATTR_FSCACHE,	  /* on | off */
	NFSKEYS_ATTR_ACTIMEO,	  /* seconds */
	NFSKEYS_ATTR_ACREGMIN,	  /* seconds */
	NFSKEYS_ATTR_ACREGMAX,	  /* seconds */
	NFSKEYS_ATTR_ACDIRMIN,	  /* seconds */
	NFSKEYS_ATTR_ACDIRMAX,	  /* seconds */
	NFSKEYS_ATTR_LOOKUPCACHE, /* all | positive | none */
	NFSKEYS_ATTR_CTO,	  /* on | off */
	NFSKEYS_ATTR_WRITEBACK,	  /* sync | async | throttled */
	NFSKEYS_ATTR_DIRTY_LIMIT, /* bytes */
	NFSKEYS_ATTR_INHERIT,	  /* yes | no: "no" stops inheritance from above */
	_NFSKEYS_ATTR_MAX,
	NFSKEYS_ATTR_USER = 255, /* user.<name> */
};

/* The canonical name of a typed attribute ("cache", ...), NULL when out of range. */
const char *nfskeys_attr_key_name(enum nfskeys_attr_key key);

/* Validate key=value and return the canonical value (malloc()ed): enums in lower case,
 * seconds and sizes as plain decimal ("5m" -> "300", "64M" -> "67108864").  On bad input
 * returns -EINVAL (unknown key, bad value, out of range, bad size suffix) and writes a
 * sentence naming the problem into errbuf (when errbuf is not NULL). */
int nfskeys_attr_check(const char *key, const char *value, char **ret_value, char *errbuf,
		       size_t errlen);

/* ---------------------------------------------------------------- policies */

/* A set of attributes: what is set on one directory, or what is in effect there (each
 * value then carries the directory it came from).  Reusable: lookups clear and refill
 * it without allocating once it has grown. */
struct nfskeys_attr_policy;

int nfskeys_attr_policy_new(struct nfskeys_attr_policy **ret_policy);
/* NULL-safe; returns NULL. */
struct nfskeys_attr_policy *nfskeys_attr_policy_free(struct nfskeys_attr_policy *policy);
void nfskeys_attr_policy_clear(struct nfskeys_attr_policy *policy);
/* Validate and add (or replace) key=value; errors as nfskeys_attr_check(). */
int nfskeys_attr_policy_set(struct nfskeys_attr_policy *policy, const char *key,
			    const char *value, char *errbuf, size_t errlen);
/* Parse one "key=value" word. */
int nfskeys_attr_policy_parse(struct nfskeys_attr_policy *policy, const char *assignment,
			      char *errbuf, size_t errlen);
/* Number of attributes; they are kept sorted: typed ones in enum order, then user.*. */
size_t nfskeys_attr_policy_count(const struct nfskeys_attr_policy *policy);

struct nfskeys_attr_entry {
	const char *key;	  /* "cache", "user.project", ... */
	const char *value;	  /* canonical text */
	uint64_t number;	  /* seconds, bytes, or the enum index of the value; 0 for user.* */
	const char *source;	  /* effective lookups with NFSKEYS_ATTR_SOURCES: the directory
				   * (domain + path) that sets it; else NULL */
	bool from_ldap;		  /* set by the LDAP fleet sync rather than locally */
};
/* The idx-th attribute; pointers stay valid until the policy is changed or freed. */
int nfskeys_attr_policy_entry(const struct nfskeys_attr_policy *policy, size_t idx,
			      struct nfskeys_attr_entry *ret_entry);
/* Find one attribute by name; -ENOENT when the policy does not have it. */
int nfskeys_attr_policy_get(const struct nfskeys_attr_policy *policy, const char *key,
			    struct nfskeys_attr_entry *ret_entry);
/* For effective lookups: the directory where inheritance was cut by inherit=no (NULL
 * when nothing cut it, or sources were not asked for). */
const char *nfskeys_attr_policy_cut(const struct nfskeys_attr_policy *policy);

/* ---------------------------------------------------------------- identity */

/* A directory's filesystem identity: a domain naming the filesystem and an absolute
 * path inside it.  Domains: nfs://SERVER (nfs and nfs4; the path is the server-side
 * path, export + path inside it), cifs://SERVER/SHARE, afs://CELL/VOLUME and
 * local://MAJOR:MINOR (device identity; path inside that filesystem). */
struct nfskeys_attr_id;

/* Identity of a directory through the mount table (libmount, /proc/self/mountinfo). */
int nfskeys_attr_id_from_path(struct nfskeys_ctx *ctx, const char *path,
			      struct nfskeys_attr_id **ret_id);
/* The same for an open directory (O_PATH is enough). */
int nfskeys_attr_id_from_fd(struct nfskeys_ctx *ctx, int fd, struct nfskeys_attr_id **ret_id);
/* Identity named by a mount source: SERVER:/EXPORT/SUB (nfs), //SERVER/SHARE/SUB (cifs)
 * or CELL:VOLUME[/SUB] (afs); -EINVAL when spec is none of these. */
int nfskeys_attr_id_from_spec(const char *spec, struct nfskeys_attr_id **ret_id);
/* An identity from its two parts (validated, the path normalized). */
int nfskeys_attr_id_new(const char *domain, const char *path, struct nfskeys_attr_id **ret_id);
struct nfskeys_attr_id *nfskeys_attr_id_free(struct nfskeys_attr_id *id);
const char *nfskeys_attr_id_get_domain(const struct nfskeys_attr_id *id);
const char *nfskeys_attr_id_get_path(const struct nfskeys_attr_id *id);
/* What the mount table said: fstype ("nfs4", "ext4", ...), mount source and the local
 * mount point (NULL for identities not found through a mount). */
const char *nfskeys_attr_id_get_fstype(const struct nfskeys_attr_id *id);
const char *nfskeys_attr_id_get_source(const struct nfskeys_attr_id *id);
const char *nfskeys_attr_id_get_mountpoint(const struct nfskeys_attr_id *id);

/* ---------------------------------------------------------------- lookups */

enum {
	NFSKEYS_ATTR_SOURCES = 1 << 0, /* fill entry.source and the cut point */
};

/* What is in effect on a directory: each attribute from the nearest ancestor (or the
 * directory itself) that sets it, stopping at a directory with inherit=no (whose own
 * attributes still apply).  inherit itself is not inherited.  Reads the store directly
 * (read-only; no daemon needed) through an in-memory index that is rebuilt when the
 * store changes.  An empty policy when nothing applies. */
int nfskeys_attr_effective(struct nfskeys_ctx *ctx, const struct nfskeys_attr_id *id,
			   unsigned flags, struct nfskeys_attr_policy *policy);
/* What is set on exactly this directory; empty when nothing. */
int nfskeys_attr_explicit(struct nfskeys_ctx *ctx, const struct nfskeys_attr_id *id,
			  struct nfskeys_attr_policy *policy);
/* Every directory with a policy, in (domain, path) order; with prefix (may be NULL)
 * only that directory and those below it.  fn returning < 0 stops the walk. */
int nfskeys_attr_list(struct nfskeys_ctx *ctx, const struct nfskeys_attr_id *prefix,
		      int (*fn)(void *userdata, const struct nfskeys_attr_id *id,
				const struct nfskeys_attr_policy *policy),
		      void *userdata);

/* Mount options for the policy in effect at id, in the syntax of mount.nfs (fstype nfs
 * or nfs4) or mount.cifs (cifs, smb3); NULL fstype picks from the domain.  explicit_opts
 * (may be NULL) win over the policy: a policy option is dropped when an explicit option
 * sets the same thing.  *ret_options is malloc()ed, the explicit options last. */
int nfskeys_attr_mount_options(struct nfskeys_ctx *ctx, const struct nfskeys_attr_id *id,
			       const char *fstype, const char *explicit_opts, char **ret_options);

/* ---------------------------------------------------------------- writeback */

struct nfskeys_wb_dev;

/* What writeback= in effect asks of writers (see nfskeys_attr_wb_apply()). */
enum nfskeys_attr_wb_mode {
	NFSKEYS_ATTR_WB_DEFAULT = 0,   /* no writeback= in effect: as async */
	NFSKEYS_ATTR_WB_SYNC = 1,      /* sync mount: writes are stable on return, nothing
					* to throttle; writers need not call the throttler */
	NFSKEYS_ATTR_WB_ASYNC = 2,     /* async mount: the kernel's own dirty throttling */
	NFSKEYS_ATTR_WB_THROTTLED = 3, /* async, and writers are paced by the nfskeys
					* throttler: call nfskeys_wb_throttle() on dev */
};

/* Feed the policy in effect at id to the writeback throttler object of its
 * server/export (doc/DESIGN.md §6): dev's dirty limit becomes the effective dirty_limit
 * (raised to the throttler's minimum of 1 MiB), or, when none is in effect, the
 * configured default ([Writeback] Dirty-Limit, 256M), so that removing the attribute
 * undoes it.  dev may be NULL to only ask.  *ret_mode (optional) is the effective
 * writeback= as enum nfskeys_attr_wb_mode, *ret_limit (optional) the limit applied.
 * A device is per export: applying the policies of two directories of one export to
 * the same device leaves the last one in force.  -ERANGE (logged, naming the setting, its
 * value and the bounds) when [Writeback] Dirty-Limit is not a size from 1M to 1T. */
int nfskeys_attr_wb_apply(struct nfskeys_ctx *ctx, const struct nfskeys_attr_id *id,
			  struct nfskeys_wb_dev *dev, int *ret_mode, uint64_t *ret_limit);

/* ---------------------------------------------------------------- changes */

/* The store, for the daemon and for root without a daemon (nfsattr --direct).  path NULL
 * means [Attr] Store in the configuration, default STATEDIR/attr.db.  Opening for
 * writing creates or migrates the schema; each change is durable when the call returns. */
struct nfskeys_attr_store;
enum {
	NFSKEYS_ATTR_STORE_WRITE = 1 << 0,
};
int nfskeys_attr_store_open(struct nfskeys_ctx *ctx, const char *path, unsigned flags,
			    struct nfskeys_attr_store **ret_store);
struct nfskeys_attr_store *nfskeys_attr_store_close(struct nfskeys_attr_store *store);
/* Add or replace the policy's attributes on id; origin_ldap marks them as LDAP-sourced. */
int nfskeys_attr_store_set(struct nfskeys_attr_store *store, const struct nfskeys_attr_id *id,
			   const struct nfskeys_attr_policy *policy, uid_t by, bool origin_ldap);
/* Remove attributes (NULL-terminated keys; NULL keys removes all) from id. */
int nfskeys_attr_store_unset(struct nfskeys_attr_store *store, const struct nfskeys_attr_id *id,
			     const char *const *keys, bool origin_ldap);
/* The schema version of an open store (PRAGMA user_version). */
int nfskeys_attr_store_version(struct nfskeys_attr_store *store);

#ifdef __cplusplus
}
#endif
