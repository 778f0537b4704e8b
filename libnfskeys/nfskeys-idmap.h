/* Identity mapping: names, principals and SIDs to and from ids (doc/DESIGN.md §4).
 * Included by nfskeys.h; do not include directly.  All calls are safe to use from several
 * threads on one context (the cache and the backends lock internally). */
#pragma once

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- SIDs */

#define NFSKEYS_SID_MAX_SUBAUTH 15
/* The binary form as the kernel's struct cifs_sid: 8-byte header + 15 sub-authorities. */
#define NFSKEYS_SID_BINARY_MAX 68
/* Longest text form, with its NUL. */
#define NFSKEYS_SID_STRING_MAX 192

/* A Windows security identifier, host byte order in memory. */
struct nfskeys_sid {
	uint8_t revision;
	uint8_t num_subauth;
	uint8_t authority[6]; /* big-endian 48-bit identifier authority */
	uint32_t subauth[NFSKEYS_SID_MAX_SUBAUTH];
};

/* Parse "S-1-5-21-1-2-3" (authority decimal, or 0x-hex as the kernel writes values of 2^32
 * and above; case-insensitive "S").  -EINVAL naming nothing but the failure for text that
 * is not a SID (empty part, non-digit, overflow, more than 15 sub-authorities). */
int nfskeys_sid_from_string(const char *text, struct nfskeys_sid *ret_sid);
/* Write the text form as the kernel does into buf; -ENOBUFS when size is too small.
 * Returns the length written (without the NUL). */
int nfskeys_sid_to_string(const struct nfskeys_sid *sid, char *buf, size_t size);
/* Parse the binary form (revision, count, 6-byte BE authority, LE u32 sub-authorities);
 * len must cover 8 + 4*count bytes. */
int nfskeys_sid_from_binary(const void *buf, size_t len, struct nfskeys_sid *ret_sid);
/* Write the binary form: the full 68-byte structure (unused sub-authorities zero) as
 * cifs.idmap sends it when size >= 68, else the minimal 8 + 4*count bytes when they fit
 * (-ENOBUFS otherwise).  Returns the number of bytes written. */
int nfskeys_sid_to_binary(const struct nfskeys_sid *sid, void *buf, size_t size);

/* ---------------------------------------------------------------- lookups */

enum nfskeys_idmap_kind {
	NFSKEYS_IDMAP_NAME_TO_UID = 1,  /* key "user@domain" (or "user") -> id */
	NFSKEYS_IDMAP_GROUP_TO_GID,     /* key "group@domain" (or "group") -> id */
	NFSKEYS_IDMAP_UID_TO_NAME,      /* key decimal uid -> name "user@domain" */
	NFSKEYS_IDMAP_GID_TO_GROUP,     /* key decimal gid -> name "group@domain" */
	NFSKEYS_IDMAP_PRINCIPAL_TO_IDS, /* key "user@REALM" -> id (uid), gid, groups[] */
	NFSKEYS_IDMAP_SID_TO_UID,       /* key SID text -> id */
	NFSKEYS_IDMAP_SID_TO_GID,       /* key SID text -> id */
	NFSKEYS_IDMAP_UID_TO_SID,       /* key decimal uid -> sid (and its text in name) */
	NFSKEYS_IDMAP_GID_TO_SID,       /* key decimal gid -> sid (and its text in name) */
	_NFSKEYS_IDMAP_KIND_MAX
};

#define NFSKEYS_IDMAP_NAME_MAX 256   /* name buffer, NUL included */
#define NFSKEYS_IDMAP_GROUPS_MAX 64  /* supplementary groups kept for a principal */
#define NFSKEYS_IDMAP_BACKEND_MAX 32 /* backend name buffer, NUL included */

/* Flags of an answer. */
enum {
	NFSKEYS_IDMAP_ANSWER_NOBODY = 1 << 0,    /* the nobody fallback, not a real mapping */
	NFSKEYS_IDMAP_ANSWER_CACHED = 1 << 1,    /* served from the in-process cache */
	NFSKEYS_IDMAP_ANSWER_TRUNCATED = 1 << 2, /* more groups than NFSKEYS_IDMAP_GROUPS_MAX */
};

/* One answer, a plain value (no pointers) so a daemon can copy it into a reply.  Only the
 * members the kind uses are written (groups for principals, sid for *_TO_SID, name for
 * *_TO_NAME/GROUP/SID; name is "" otherwise); zero the struct first if you copy it whole. */
struct nfskeys_idmap_answer {
	uint32_t kind;  /* enum nfskeys_idmap_kind */
	uint32_t flags; /* NFSKEYS_IDMAP_ANSWER_* */
	int32_t error;  /* for a nobody answer: why (-ENOENT, -EHOSTDOWN, ...); else 0 */
	uint32_t ttl;   /* seconds the answer may be cached by the caller */
	uint32_t id;    /* uid or gid (the uid for a principal) */
	uint32_t gid;   /* principal: primary gid */
	uint32_t n_groups;
	uint32_t groups[NFSKEYS_IDMAP_GROUPS_MAX];
	struct nfskeys_sid sid;              /* *_TO_SID kinds */
	char name[NFSKEYS_IDMAP_NAME_MAX];   /* *_TO_NAME/GROUP: "name@domain"; *_TO_SID: text */
	char backend[NFSKEYS_IDMAP_BACKEND_MAX]; /* "nsswitch", "static", ..., or "nobody" */
};

/* Flags of nfskeys_idmap_lookup_full(). */
enum {
	NFSKEYS_IDMAP_LOOKUP_NOBODY = 1 << 0,   /* name->id: answer nobody instead of failing */
	NFSKEYS_IDMAP_LOOKUP_NO_CACHE = 1 << 1, /* neither read nor fill the cache */
	/* answer only from memory (the cache, backends that cannot block, the nsswitch
	 * backend's index of /etc/passwd and /etc/group): -EWOULDBLOCK at once, with no
	 * I/O done, when a backend the chain has to ask could block; never nobody for that */
	NFSKEYS_IDMAP_LOOKUP_NOWAIT = 1 << 2,
};

/* Resolve key by kind through the backend chain ([Translation] Method; GSS-Methods for
 * principals), using the in-process cache.  Returns 0 and fills ret; -ENOENT when no
 * backend knows the key; -EHOSTDOWN/-EIO/-ETIMEDOUT when a backend failed and none
 * after it answered; -EINVAL for a malformed key (bad SID text, non-numeric id, ...). */
int nfskeys_idmap_lookup(struct nfskeys_ctx *ctx, enum nfskeys_idmap_kind kind,
			 const char *key, struct nfskeys_idmap_answer *ret);
/* As nfskeys_idmap_lookup() with NFSKEYS_IDMAP_LOOKUP_* flags.  With LOOKUP_NOBODY a
 * name/group/principal/SID that cannot be mapped gives the configured nobody id with the
 * short Nobody-TTL, flag ANSWER_NOBODY and the reason in ret->error (id->name kinds have
 * no nobody answer and still fail).  With LOOKUP_NOWAIT, -EWOULDBLOCK when the answer
 * needs a backend that may block (ask again without it, e.g. from a worker thread).
 * -EINVAL for an unknown flag. */
int nfskeys_idmap_lookup_full(struct nfskeys_ctx *ctx, enum nfskeys_idmap_kind kind,
			      const char *key, unsigned flags, struct nfskeys_idmap_answer *ret);
/* As nfskeys_idmap_lookup_full(), and for a name -> id kind (NAME_TO_UID, GROUP_TO_GID)
 * also the id -> name answer for ret->id when the backend that answered found it in the
 * same search ([LDAP] Unique-Ids) and no backend before it in the chain knows that id:
 * then ret_reverse is that answer (kind UID_TO_NAME / GID_TO_GROUP, as a lookup of the id
 * would give it; without LOOKUP_NO_CACHE it is cached as well).  For an id -> name kind
 * (UID_TO_NAME, GID_TO_GROUP) the same the other way ([LDAP] Unique-Names): the name -> id
 * answer for ret->name (kind NAME_TO_UID / GROUP_TO_GID).  Otherwise (a cache hit,
 * a nobody answer, another kind or backend) ret_reverse->kind is 0.  -EINVAL when
 * ret_reverse is NULL; other errors as nfskeys_idmap_lookup_full(). */
int nfskeys_idmap_lookup_pair(struct nfskeys_ctx *ctx, enum nfskeys_idmap_kind kind,
			      const char *key, unsigned flags, struct nfskeys_idmap_answer *ret,
			      struct nfskeys_idmap_answer *ret_reverse);

/* Typed shortcuts; ret_answer may be NULL.  Errors as nfskeys_idmap_lookup(). */
int nfskeys_idmap_name_to_uid(struct nfskeys_ctx *ctx, const char *name, uid_t *ret_uid,
			      struct nfskeys_idmap_answer *ret_answer);
int nfskeys_idmap_group_to_gid(struct nfskeys_ctx *ctx, const char *group, gid_t *ret_gid,
			       struct nfskeys_idmap_answer *ret_answer);
/* *ret_name is malloc()ed "name@domain". */
int nfskeys_idmap_uid_to_name(struct nfskeys_ctx *ctx, uid_t uid, char **ret_name,
			      struct nfskeys_idmap_answer *ret_answer);
int nfskeys_idmap_gid_to_group(struct nfskeys_ctx *ctx, gid_t gid, char **ret_group,
			       struct nfskeys_idmap_answer *ret_answer);
/* A Kerberos principal to the local uid, primary gid and supplementary groups
 * (*ret_groups malloc()ed; ret_groups/ret_ngroups may be NULL). */
int nfskeys_idmap_principal_to_ids(struct nfskeys_ctx *ctx, const char *principal,
				   uid_t *ret_uid, gid_t *ret_gid, gid_t **ret_groups,
				   size_t *ret_ngroups, struct nfskeys_idmap_answer *ret_answer);
int nfskeys_idmap_sid_to_uid(struct nfskeys_ctx *ctx, const char *sid, uid_t *ret_uid,
			     struct nfskeys_idmap_answer *ret_answer);
int nfskeys_idmap_sid_to_gid(struct nfskeys_ctx *ctx, const char *sid, gid_t *ret_gid,
			     struct nfskeys_idmap_answer *ret_answer);
int nfskeys_idmap_uid_to_sid(struct nfskeys_ctx *ctx, uid_t uid, struct nfskeys_sid *ret_sid,
			     struct nfskeys_idmap_answer *ret_answer);
int nfskeys_idmap_gid_to_sid(struct nfskeys_ctx *ctx, gid_t gid, struct nfskeys_sid *ret_sid,
			     struct nfskeys_idmap_answer *ret_answer);

/* Drop every cached answer (positive and negative). */
int nfskeys_idmap_flush(struct nfskeys_ctx *ctx);
/* Drop the cached answer for one key; -ENOENT when none was cached. */
int nfskeys_idmap_flush_key(struct nfskeys_ctx *ctx, enum nfskeys_idmap_kind kind,
			    const char *key);

struct nfskeys_idmap_cache_stats {
	uint64_t hits, misses, negative_hits, insertions, evictions, expired;
	uint32_t entries, capacity;
};
int nfskeys_idmap_cache_stats(struct nfskeys_ctx *ctx, struct nfskeys_idmap_cache_stats *ret);

/* The NFSv4 ID-mapping domain in use: configured [General] Domain, else the DNS TXT record
 * _nfsv4idmapdomain, else the host's DNS domain, else "localdomain".  *ret_source (may be
 * NULL) says which: "config", "dns-txt", "hostname" or "default".  Valid while ctx is. */
int nfskeys_idmap_get_domain(struct nfskeys_ctx *ctx, const char **ret_domain,
			     const char **ret_source);

/* Check the ID-mapping configuration as a daemon does before it takes it: the backends
 * load and every name in [Translation] Method and GSS-Methods is an installed backend.
 * 0, or -EINVAL after logging (at LOG_ERR) which name is unknown and which backends are
 * installed.  (Lookups stay lenient: an unknown name there is a failing backend.) */
int nfskeys_idmap_check_config(struct nfskeys_ctx *ctx);

/* Explain in a few lines of text how key maps (each backend's verdict, the cause of a
 * nobody answer and the configuration line to change).  *ret_text malloc()ed. */
int nfskeys_idmap_explain(struct nfskeys_ctx *ctx, enum nfskeys_idmap_kind kind,
			  const char *key, char **ret_text);

/* "name-to-uid", "sid-to-gid", ... and back; NULL / -EINVAL when unknown. */
const char *nfskeys_idmap_kind_to_string(enum nfskeys_idmap_kind kind);
int nfskeys_idmap_kind_from_string(const char *s, enum nfskeys_idmap_kind *ret_kind);

/* ---------------------------------------------------------------- kernel upcalls */

/* Parse a request-key description of key type type ("id_resolver", "cifs.idmap", or any
 * other type, e.g. "user" in tests, which accepts every prefix): "uid:", "gid:", "user:",
 * "group:", "os:", "gs:", "oi:", "gi:".  *ret_key points into description.  -EINVAL for
 * an unknown prefix, an empty or overlong key, an empty name or domain part for uid:/gid:
 * ("uid:@x", "uid:alice@"; a bare "uid:alice" is accepted), a non-numeric id or bad SID
 * text; -EOPNOTSUPP for a prefix not valid for the type. */
int nfskeys_idmap_parse_description(const char *type, const char *description,
				    enum nfskeys_idmap_kind *ret_kind, const char **ret_key);
/* Build the kernel payload for an answer (doc/DESIGN.md §4): decimal id + NUL for name->id,
 * "name@domain" without NUL for id->name, 4 host-order bytes for SID->id, the 68-byte
 * binary SID for id->SID.  Returns the payload length; -ENOBUFS when size is too small. */
int nfskeys_idmap_payload(const struct nfskeys_idmap_answer *answer, void *buf, size_t size);

#ifdef __cplusplus
}
#endif
