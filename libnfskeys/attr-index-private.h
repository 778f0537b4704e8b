/* Internals of the directory-policy index (attr-index*.c): the layout of struct
 * attr_index, the hashing and fingerprint steps and trie probes the lookup hot paths
 * inline, and the functions one file of the index calls in another.  See
 * attr-index.c for what the index is. */
#pragma once

#include "attr-private.h"

/* ---------------------------------------------------------------- layout */

#define N_HASCHILD 0x1
#define N_CUT 0x2 /* the effective inherit here is "no" */

/* A node's label is the path from its parent: one or more components joined by '/'.
 * Labels of at most 8 bytes live in the node, longer ones in the label arena (a split
 * shares the arena bytes of the label it cuts).  28 bytes, 4-byte aligned. */
struct node {
	uint32_t parent;
	uint32_t attrs;	   /* offset into arena, 0 for none */
	uint16_t namelen;  /* label bytes */
	uint16_t firstlen; /* bytes of the label's first component (the hash key) */
	uint32_t name[2];  /* inline label (namelen <= 8), else name[0] = offset into names */
	uint32_t eff;	   /* effective set in effect here (offset into esets), 0: not known */
	uint8_t flags;
	uint8_t pad[3];
};
#define INLINE_MAX 8

static inline uint64_t node_word(const struct node *nd)
{
	uint64_t w;

	memcpy(&w, nd->name, sizeof(w));
	return w;
}

/* One attribute: key packs the typed key (low 8 bits, 255 for user.*), the LDAP origin
 * (bit 8) and for user.* the interned key name (bits 9-31); value is an interned
 * (key, text) pair.  A block starts with a header entry {count, capacity}. */
struct aent {
	uint32_t key;
	uint32_t value;
};
#define AK_TYPE(k) ((k) & 0xffu)
#define AK_LDAP 0x100u
#define AK_UNAME(k) ((k) >> 9)
#define AK_MAKE(type, ldap, uname) ((uint32_t)(type) | ((ldap) ? AK_LDAP : 0) | ((uint32_t)(uname) << 9))
#define UNAME_MAX_ID ((1u << 23) - 1)

struct istr {
	char *s;
	uint64_t number;
	uint32_t hash;
	uint32_t len;
	int key; /* which key's vocabulary; -1 for user key names */
};

struct domain {
	char *name;
	uint32_t root;
};

/* A slot of the child table: the key and the node (0: empty). */
struct slot {
	uint32_t key;
	uint32_t node;
};

/* An entry of the fingerprint table: every node but the domain roots under the
 * fingerprint of its whole path (see fp_comp()), with the effective set in force there
 * once known (FE_OWN_INHERIT: the node sets inherit itself).  node 0: empty. */
struct fent {
	uint64_t fp;
	uint32_t node;
	uint32_t eff;
};
#define FE_OWN_INHERIT 0x80000000u
#define FE_EFF(e) ((e) & ~FE_OWN_INHERIT)

/* The table: size entries in buckets of four (one cache line, the table is 64-byte
 * aligned); a fingerprint picks a bucket, and linear probing goes on from its start, so a
 * lookup mostly reads one line.  Not a power of two: after a load it is cut to 75% full.
 * With it a bit filter of the fingerprints (ffmask + 1 words), see ff_pos(). */
struct ftable {
	struct fent *e; /* NULL: no table (a small index) */
	uint64_t *filter;
	uint32_t size, ffmask;
};

struct attr_index {
	struct node *nodes;
	uint32_t nnodes, nodecap;
	struct slot *slots;
	uint32_t slotmask, nslots_used;
	struct ftable ft;
	uint32_t nftab;
	uint64_t fpkey; /* the secret evaluation point of the fingerprints, in [2, 2^61 - 2] */
	char *names;
	size_t nameslen, namescap;
	struct aent *arena;
	uint32_t arenalen, arenacap, arenagarbage;
	struct istr *strs;
	uint32_t nstrs, strscap;
	uint32_t *strslots;
	uint32_t strmask;
	struct domain *domains;
	size_t ndomains;
	size_t npolicies;
	size_t nentries; /* attributes held (arena entries in use) */
	/* interned effective sets: a header {count, hash} and count entries {key, value}
	 * sorted as a policy is (typed keys in enum order, then user.* by name); inherit is
	 * never in them.  Offset 0 is "none". */
	struct aent *esets;
	uint32_t esetslen, esetscap;
	uint32_t *eslots; /* offsets, 0 empty */
	uint32_t esmask, nesets;
	/* with the fingerprint table: set es ready-made as a policy object in eimg[es] (made
	 * when first looked up), so that a lookup copies it out in two copies */
	struct nfskeys_attr_policy **eimg;
	uint32_t eimgcap;
	bool eff_stale;	  /* attributes changed since the sets were computed */
	uint32_t *estack; /* scratch for computing a chain of sets */
	uint32_t estackcap;
	uint32_t fp_min; /* nodes from which lookups use the fingerprint table */
	bool fp_off;	 /* the table is incomplete (a rebuild failed): lookups walk */
};

/* Below this many nodes the index stays in the CPU caches and walking the trie (which
 * stops hashing where the stored paths end) costs less than fingerprinting every
 * component of the query. */
#define FP_MIN_NODES (1u << 16)

/* ---------------------------------------------------------------- hashing */

static inline uint64_t mix64(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h;
}

static inline uint32_t hash_bytes(uint64_t seed, const char *s, size_t n)
{
	uint64_t h = seed * 0x9e3779b97f4a7c15ULL ^ n;
	uint64_t w;

	while (n >= 8) {
		memcpy(&w, s, 8);
		h = (h ^ w) * 0x100000001b3ULL;
		h ^= h >> 29;
		s += 8;
		n -= 8;
	}
	w = 0;
	memcpy(&w, s, n);
	h ^= w;
	return (uint32_t)mix64(h);
}

/* ---------------------------------------------------------------- growth */

/* attr-index-mem.c */
/* tables from BIG_MIN bytes on live in 2 MiB-aligned mappings */
#define HUGE_SIZE ((size_t)2 << 20)
extern size_t aix_big_min;
#define BIG_MIN aix_big_min

size_t aix_big_span(size_t size);
void *aix_big_map(size_t size);
void aix_big_free(void *p, size_t size);
void *aix_big_realloc(void *p, size_t old, size_t size, bool zero);
int aix_grow(void **p, uint32_t *cap, uint32_t need, size_t elem);

/* ---------------------------------------------------------------- fingerprints */

/* The lookup without sources finds the deepest stored directory on the query's path in
 * one round of memory accesses: every node is also in a table under a fingerprint of its
 * whole path, so all the query's prefixes can be looked up at once, none waiting for
 * another.  A fingerprint is a polynomial over GF(2^61 - 1) evaluated at a secret random
 * point K (fpkey): the domain root's id, then each component as words of at most 56 bits
 * (its length and first 5 bytes, then 7 bytes a word), so that distinct paths are
 * distinct polynomials of degree at most d (the number of words).  Two distinct paths
 * get the same fingerprint for at most d of the 2^61 - 1 possible K: a lookup takes a
 * wrong directory for its own with probability below d * 2^-61 per stored fingerprint it
 * compares with (about 2^-55 for a 100-byte path), whatever the paths, since K is never
 * shown.  Collisions among stored paths are detected when they are added (fp_insert()
 * then draws a new K).  Lookups with sources, and all changes, walk the trie and compare
 * labels byte for byte. */
#define FP_P ((1ULL << 61) - 1)

/* a * b mod p, for a < 2^62 and b < 2^61; the result is below 2^61 + 4 (not reduced). */
static inline uint64_t fp_mul(uint64_t a, uint64_t b)
{
	unsigned __int128 z = (unsigned __int128)a * b;
	uint64_t r = ((uint64_t)z & FP_P) + (uint64_t)(z >> 61);

	return (r & FP_P) + (r >> 61);
}

static inline uint64_t fp_canon(uint64_t h)
{
	uint64_t r = (h & FP_P) + (h >> 61);

	return r >= FP_P ? r - FP_P : r;
}

static inline uint64_t fp_load(const char *p, size_t avail)
{
	uint64_t w = 0;

	if (__builtin_expect(avail >= 8, 1))
		memcpy(&w, p, 8);
	else
		memcpy(&w, p, avail);
	return w;
}

/* The state after the component at p (up to '/' or avail bytes; no NUL among them): its
 * length in *ret_len.  0 with *ret_len set when the component is too long for any label
 * (it has no fingerprint). */
static inline __attribute__((always_inline)) uint64_t
fp_comp(uint64_t key, uint64_t h, const char *p, size_t avail, size_t *ret_len)
{
	const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
	uint64_t w0 = fp_load(p, avail), w = w0;
	size_t n = 0;

	for (;;) {
		uint64_t x = w ^ (ones * '/'), z = (x - ones) & ~x & highs;
		size_t k = z ? (size_t)__builtin_ctzll(z) / 8 : 8;

		if (k > avail - n)
			k = avail - n;
		n += k;
		if (k < 8)
			break;
		w = fp_load(p + n, avail - n);
	}
	*ret_len = n;
	if (n < 8) { /* the usual case: all of it in w0, one or two words */
		h = fp_mul(h, key) +
		    (n | (n >= 5 ? w0 & 0xffffffffffULL : w0 & ((1ULL << (8 * n)) - 1)) << 16);
		if (n > 5)
			h = fp_mul(h, key) + ((w0 >> 40) & ((1ULL << (8 * (n - 5))) - 1));
		return h;
	}
	if (n > UINT16_MAX)
		return 0;
	h = fp_mul(h, key) + (n | (w0 & 0xffffffffffULL) << 16);
	for (size_t i = 5; i < n; i += 7) {
		size_t take = n - i < 7 ? n - i : 7;

		h = fp_mul(h, key) + (fp_load(p + i, avail - i) & ((1ULL << (8 * take)) - 1));
	}
	return h;
}

static inline uint32_t fp_pos(uint64_t fp, uint32_t size)
{
	return (uint32_t)(((fp & 0xffffffffULL) * (size / 4)) >> 32) * 4;
}

static inline uint32_t fp_next(uint32_t i, uint32_t size)
{
	return i + 1 == size ? 0 : i + 1;
}

/* The filter: about one 64-bit word per 16 entries of the table, two bits a fingerprint,
 * both in one word (a blocked Bloom filter, about 10% false positives).  Most prefixes of
 * a query are no stored directory (the components below the deepest one, those inside
 * path-compressed edges); testing this small, cache-resident array first keeps them from
 * costing a probe of the table. */
static inline uint64_t *ff_pos(const struct ftable *t, uint64_t fp, uint64_t *ret_bits)
{
	*ret_bits = (1ULL << (fp >> 55)) | (1ULL << ((fp >> 49) & 63));
	return &t->filter[(fp >> 20) & t->ffmask];
}

static inline struct fent *fp_find(const struct ftable *t, uint64_t fp)
{
	for (uint32_t i = fp_pos(fp, t->size);; i = fp_next(i, t->size)) {
		struct fent *e = &t->e[i];

		if (!e->node)
			return NULL;
		if (e->fp == fp)
			return e;
	}
}

uint64_t aix_fp_path_from(uint64_t key, uint64_t h, const char *s, size_t len);
uint64_t aix_fp_newkey(void);
void aix_ft_free(struct ftable *t);
uint32_t aix_ft_size_for(uint32_t n);
int aix_fp_resize(struct attr_index *ix, uint32_t size);
int aix_fp_reserve(struct attr_index *ix, uint32_t extra);
int aix_fp_rebuild(struct attr_index *ix, uint64_t key);
int aix_fp_enable(struct attr_index *ix, uint64_t key);
void aix_fp_add(struct attr_index *ix, uint64_t fp, uint32_t id);

/* ---------------------------------------------------------------- trie */

/* Slots are keyed by a hash of the child's path from its domain root up to the end of
 * the child label's first component, computed component by component: the state of a
 * path extended by one component is hstep(state, component).  So the keys of all the
 * prefixes of a query come out of one pass over it, independent of how the trie splits
 * the path into edges. */
static inline uint64_t hroot(uint32_t root)
{
	return ((uint64_t)root + 1) * 0x9e3779b97f4a7c15ULL;
}

/* The state after component s[0..n); its first eight bytes (zero-padded) in *ret_w.
 * Bytes are gathered into words in the loop (no variable-length memcpy). */
#define HWORD_MIX(h, w) ((h) = ((h) ^ (w)) * 0x100000001b3ULL, (h) ^= (h) >> 29)
#define HFINAL(h, w, n) ((h) = ((h) ^ (w) ^ ((uint64_t)(n) << 56)) * 0xbf58476d1ce4e5b9ULL, \
			 (h) ^= (h) >> 31)
static inline __attribute__((always_inline)) uint64_t
hscan(uint64_t h, const char *s, size_t n, bool to_slash, size_t *ret_len, uint64_t *ret_w)
{
	uint64_t w = 0, first = 0;
	size_t i;

	/* to_slash is a constant at each caller: two loops come out of this */
	for (i = 0; to_slash ? s[i] != '/' && s[i] != '\0' : i < n; i++) {
		w |= (uint64_t)(unsigned char)s[i] << (8 * (i & 7));
		if ((i & 7) == 7) {
			if (i == 7)
				first = w;
			HWORD_MIX(h, w);
			w = 0;
		}
	}
	if (i < 8)
		first = w;
	HFINAL(h, w, i);
	*ret_len = i;
	*ret_w = first;
	return h;
}

static inline uint64_t hstep(uint64_t h, const char *s, size_t n, uint64_t *ret_w)
{
	size_t len;

	return hscan(h, s, n, false, &len, ret_w);
}

/* The slot key of a state. */
static inline uint32_t hkey(uint64_t h)
{
	return (uint32_t)((h * 0x94d049bb133111ebULL) >> 32);
}

/* The state after all the components of s[0..len) ('/'-separated, no empty ones). */
static inline uint64_t hadvance(uint64_t h, const char *s, size_t len)
{
	uint64_t w;

	while (len > 0) {
		const char *slash = memchr(s, '/', len);
		size_t n = slash ? (size_t)(slash - s) : len;

		if (n > 0)
			h = hstep(h, s, n, &w);
		if (!slash)
			break;
		s += n + 1;
		len -= n + 1;
	}
	return h;
}

/* The component at p (up to '/' or the end): its length, word and the state after it
 * (hstep() fused with finding the component's end). */
static inline uint64_t comp_scan(uint64_t h, const char *p, size_t *ret_len, uint64_t *ret_w)
{
	return hscan(h, p, 0, true, ret_len, ret_w);
}

/* comp_scan() for the lookup hot path, a word at a time: the component at p, with avail
 * bytes (no NUL among them) left in the string.  Same results as comp_scan(). */
static inline uint64_t comp_scan_n(uint64_t h, const char *p, size_t avail, size_t *ret_len,
				   uint64_t *ret_w)
{
	const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
	uint64_t first = 0;
	size_t i = 0;

	for (;;) {
		size_t take = avail - i < 8 ? avail - i : 8, k;
		uint64_t w = 0, x, z;

		if (take == 8)
			memcpy(&w, p + i, 8);
		else
			memcpy(&w, p + i, take);
		x = w ^ (ones * '/');
		z = (x - ones) & ~x & highs; /* lowest set byte: the first '/' */
		k = z ? (size_t)__builtin_ctzll(z) / 8 : 8;
		if (k > take)
			k = take;
		if (k < 8) {
			uint64_t part = k ? w & ((1ULL << (8 * k)) - 1) : 0;

			if (i == 0)
				first = part;
			HFINAL(h, part, i + k);
			*ret_len = i + k;
			*ret_w = first;
			return h;
		}
		if (i == 0)
			first = w;
		HWORD_MIX(h, w);
		i += 8;
	}
}

static inline const char *label(const struct attr_index *ix, const struct node *nd)
{
	return nd->namelen <= INLINE_MAX ? (const char *)nd->name : ix->names + nd->name[0];
}

/* The child of parent whose label starts with component name[0..n). */
static inline uint32_t child_find(const struct attr_index *ix, uint32_t parent, const char *name,
			   size_t n, uint32_t h, uint64_t w)
{
	uint64_t mask = n >= 8 ? ~0ULL : (1ULL << (8 * n)) - 1;

	for (uint32_t i = h & ix->slotmask;; i = (i + 1) & ix->slotmask) {
		const struct slot *s = &ix->slots[i];
		const struct node *nd;

		if (!s->node)
			return 0;
		if (s->key != h)
			continue;
		nd = &ix->nodes[s->node];
		if (nd->parent != parent || nd->firstlen != n)
			continue;
		if (nd->namelen <= INLINE_MAX ? (node_word(nd) & mask) == w :
						memcmp(ix->names + nd->name[0], name, n) == 0)
			return s->node;
	}
}

/* Does the whole label of nd match the path at p (ending at a component boundary)? */
static inline bool edge_matches(const struct attr_index *ix, const struct node *nd, const char *p,
				size_t n)
{
	size_t m = nd->namelen;

	if (m == n)
		return true; /* child_find compared the first (only) component */
	return strncmp(p + n, label(ix, nd) + n, m - n) == 0 && (p[m] == '/' || p[m] == '\0');
}

/* ---------------------------------------------------------------- interned strings, nodes */

/* attr-index-trie.c */
uint32_t aix_str_find(const struct attr_index *ix, int key, const char *s, uint32_t h);
int64_t aix_str_intern(struct attr_index *ix, int key, const char *s, uint64_t number);
int64_t aix_domain_root(struct attr_index *ix, const char *domain, bool create);
int64_t aix_node_get(struct attr_index *ix, const char *domain, const char *path, bool create);

/* ---------------------------------------------------------------- effective sets */

/* attr-index-resolve.c */
void aix_eff_reset(struct attr_index *ix);
int64_t aix_eff_get(struct attr_index *ix, uint32_t nid);
const struct aent *aix_own_inherit(const struct attr_index *ix, uint32_t nid);
