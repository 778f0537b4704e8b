/* The in-memory index of directory policies: per domain a path-compressed trie of path
 * components (a chain of directories without policies or branches is one edge), held in
 * flat arrays (nodes, one open-addressing table keyed by the hash of the child's path up
 * to its first component, a label arena and an attribute arena).  Each node caches its
 * effective attribute set (interned, computed lazily, dropped on any change).  A second
 * table holds every node under a keyed fingerprint of its whole path, with its set: an
 * effective lookup in a large index fingerprints all the query's prefixes in one pass,
 * fetches their entries at once and copies out the set of the deepest one present, one
 * round of memory accesses where walking the trie takes one per level. */
#include <limits.h>
#include <sys/mman.h>
#include <sys/random.h>

#include "attr-private.h"
#include "time-util.h"

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

/* Big tables (nodes, slots, labels, attributes) live in their own 2 MiB-aligned
 * mappings with MADV_HUGEPAGE given before the first touch: lookups hit them at random,
 * and with 4 KiB pages nearly every probe of a large index is also a TLB miss (a costly
 * one under virtualization).  Advice given after realloc() came too late: the pages were
 * already there, and most of a 1M-policy index stayed on 4 KiB pages.  Smaller tables use
 * malloc() (from 8 MiB on, a mapping rounded up to 2 MiB costs at most a fifth more).
 * Which one holds a table follows from its size, so no flag is kept. */
#define HUGE_SIZE ((size_t)2 << 20)
static size_t big_min = 4 * HUGE_SIZE;
#define BIG_MIN big_min

void attr_index_set_big_min(size_t bytes)
{
	big_min = bytes ? bytes : 4 * HUGE_SIZE;
}

static size_t big_span(size_t size)
{
	return size >= BIG_MIN ? (size + HUGE_SIZE - 1) & ~(HUGE_SIZE - 1) : size;
}

static void *big_map(size_t size)
{
	size_t span = big_span(size);
	uint8_t *p = mmap(NULL, span + HUGE_SIZE, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uintptr_t a;

	if (p == MAP_FAILED)
		return NULL;
	a = ((uintptr_t)p + HUGE_SIZE - 1) & ~(uintptr_t)(HUGE_SIZE - 1);
	if (a > (uintptr_t)p)
		munmap(p, a - (uintptr_t)p);
	munmap((uint8_t *)a + span, (uintptr_t)p + HUGE_SIZE - a);
#ifdef MADV_HUGEPAGE
	(void)madvise((void *)a, span, MADV_HUGEPAGE);
#endif
	return (void *)a;
}

static void big_free(void *p, size_t size)
{
	if (!p)
		return;
	if (size >= BIG_MIN)
		munmap(p, big_span(size));
	else
		free(p);
}

/* Resize a table of old bytes to size bytes (contents kept, new bytes zeroed when zero);
 * NULL (and p untouched) when out of memory. */
static void *big_realloc(void *p, size_t old, size_t size, bool zero)
{
	void *np;

	if (size < BIG_MIN && old < BIG_MIN) {
		np = realloc(p, size ? size : 1);
		if (np && zero && size > old)
			memset((uint8_t *)np + old, 0, size - old);
		return np;
	}
	if (size >= BIG_MIN && old >= BIG_MIN) {
		if (big_span(size) == big_span(old))
			return p;
		if (big_span(size) < big_span(old)) { /* give the tail back */
			munmap((uint8_t *)p + big_span(size), big_span(old) - big_span(size));
			return p;
		}
	}
	np = size >= BIG_MIN ? big_map(size) : (zero ? calloc(1, size) : malloc(size ? size : 1));
	if (!np)
		return NULL;
	if (p)
		memcpy(np, p, MIN(old, size));
	big_free(p, old);
	return np;
}

static int grow(void **p, uint32_t *cap, uint32_t need, size_t elem)
{
	uint64_t ncap;
	void *np;

	if (need <= *cap)
		return 0;
	ncap = *cap ? (uint64_t)*cap * 2 : 64;
	while (ncap < need)
		ncap *= 2;
	if (ncap > UINT32_MAX)
		return -E2BIG;
	np = big_realloc(*p, (size_t)*cap * elem, ncap * elem, false);
	if (!np)
		return -ENOMEM;
	*p = np;
	*cap = (uint32_t)ncap;
	return 0;
}

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

/* The fingerprint of the path s[0..len) below the directory with fingerprint h (the
 * root of a domain: its id + 1). */
static uint64_t fp_path_from(uint64_t key, uint64_t h, const char *s, size_t len)
{
	size_t i = 0, n;

	for (;;) {
		while (i < len && s[i] == '/')
			i++;
		if (i == len)
			return fp_canon(h);
		h = fp_comp(key, h, s + i, len - i, &n);
		i += n;
	}
}

static uint64_t fp_newkey(void)
{
	uint64_t k = 0;

	if (getrandom(&k, sizeof(k), GRND_NONBLOCK) != sizeof(k) &&
	    getrandom(&k, sizeof(k), GRND_INSECURE) != sizeof(k))
		k = mix64(mono_nsec() ^ (uint64_t)(uintptr_t)&k ^ ((uint64_t)getpid() << 32));
	return 2 + k % (FP_P - 3);
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

static struct fent *fp_find(const struct ftable *t, uint64_t fp)
{
	for (uint32_t i = fp_pos(fp, t->size);; i = fp_next(i, t->size)) {
		struct fent *e = &t->e[i];

		if (!e->node)
			return NULL;
		if (e->fp == fp)
			return e;
	}
}

static void ft_free(struct ftable *t)
{
	big_free(t->e, (size_t)t->size * sizeof(struct fent));
	big_free(t->filter, ((size_t)t->ffmask + 1) * sizeof(uint64_t));
	*t = (struct ftable){ 0 };
}

int attr_index_new(struct attr_index **ret)
{
	struct attr_index *ix = calloc(1, sizeof(*ix));

	if (!ix)
		return -ENOMEM;
	/* node 0 and arena offset 0 are reserved as "none" */
	if (grow((void **)&ix->nodes, &ix->nodecap, 1, sizeof(struct node)) < 0 ||
	    grow((void **)&ix->arena, &ix->arenacap, 1, sizeof(struct aent)) < 0) {
		attr_index_free(ix);
		return -ENOMEM;
	}
	ix->nnodes = 1;
	ix->arenalen = 1;
	ix->fp_min = FP_MIN_NODES;
	ix->slotmask = 1023;
	ix->slots = big_realloc(NULL, 0, ((size_t)ix->slotmask + 1) * sizeof(struct slot), true);
	ix->fpkey = fp_newkey();
	ix->strmask = 255;
	ix->strslots = calloc(ix->strmask + 1, sizeof(uint32_t));
	ix->esmask = 63;
	ix->eslots = calloc(ix->esmask + 1, sizeof(uint32_t));
	if (!ix->slots || !ix->strslots || !ix->eslots ||
	    grow((void **)&ix->esets, &ix->esetscap, 1, sizeof(struct aent)) < 0) {
		attr_index_free(ix);
		return -ENOMEM;
	}
	ix->esetslen = 1;
	*ret = ix;
	return 0;
}

struct attr_index *attr_index_free(struct attr_index *ix)
{
	if (!ix)
		return NULL;
	for (uint32_t i = 0; i < ix->nstrs; i++)
		free(ix->strs[i].s);
	for (size_t i = 0; i < ix->ndomains; i++)
		free(ix->domains[i].name);
	big_free(ix->strs, (size_t)ix->strscap * sizeof(struct istr));
	free(ix->strslots);
	free(ix->domains);
	big_free(ix->nodes, (size_t)ix->nodecap * sizeof(struct node));
	big_free(ix->slots, ((size_t)ix->slotmask + 1) * sizeof(struct slot));
	ft_free(&ix->ft);
	big_free(ix->names, ix->namescap);
	big_free(ix->arena, (size_t)ix->arenacap * sizeof(struct aent));
	big_free(ix->esets, (size_t)ix->esetscap * sizeof(struct aent));
	for (uint32_t i = 0; i < ix->eimgcap; i++)
		nfskeys_attr_policy_free(ix->eimg[i]);
	big_free(ix->eimg, (size_t)ix->eimgcap * sizeof(*ix->eimg));
	free(ix->eslots);
	big_free(ix->estack, (size_t)ix->estackcap * sizeof(uint32_t));
	free(ix);
	return NULL;
}

/* ---------------------------------------------------------------- interned strings */

static uint32_t str_find(const struct attr_index *ix, int key, const char *s, uint32_t h)
{
	for (uint32_t i = h & ix->strmask;; i = (i + 1) & ix->strmask) {
		uint32_t id = ix->strslots[i];
		if (id == 0)
			return 0;
		if (ix->strs[id - 1].hash == h && ix->strs[id - 1].key == key &&
		    streq(ix->strs[id - 1].s, s))
			return id;
	}
}

static int str_rehash(struct attr_index *ix)
{
	uint32_t mask = ix->strmask * 2 + 1;
	uint32_t *slots = calloc((size_t)mask + 1, sizeof(uint32_t));

	if (!slots)
		return -ENOMEM;
	for (uint32_t id = 1; id <= ix->nstrs; id++) {
		uint32_t i = ix->strs[id - 1].hash & mask;
		while (slots[i])
			i = (i + 1) & mask;
		slots[i] = id;
	}
	free(ix->strslots);
	ix->strslots = slots;
	ix->strmask = mask;
	return 0;
}

/* Intern (key, s); returns the id (>= 1) or a negative errno. */
static int64_t str_intern(struct attr_index *ix, int key, const char *s, uint64_t number)
{
	uint32_t h = hash_bytes((uint64_t)(key + 7), s, strlen(s));
	uint32_t id = str_find(ix, key, s, h), i;
	int r;

	if (id)
		return id;
	if ((ix->nstrs + 1) * 4 > (ix->strmask + 1) * 3) {
		r = str_rehash(ix);
		if (r < 0)
			return r;
	}
	r = grow((void **)&ix->strs, &ix->strscap, ix->nstrs + 1, sizeof(struct istr));
	if (r < 0)
		return r;
	ix->strs[ix->nstrs] = (struct istr){ .s = strdup(s), .number = number, .hash = h,
					     .len = (uint32_t)strlen(s), .key = key };
	if (!ix->strs[ix->nstrs].s)
		return -ENOMEM;
	id = ++ix->nstrs;
	for (i = h & ix->strmask; ix->strslots[i]; i = (i + 1) & ix->strmask)
		;
	ix->strslots[i] = id;
	return id;
}

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
static uint64_t hadvance(uint64_t h, const char *s, size_t len)
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
static uint32_t child_find(const struct attr_index *ix, uint32_t parent, const char *name,
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

static int slots_rehash(struct attr_index *ix)
{
	uint32_t mask = ix->slotmask * 2 + 1;
	struct slot *slots = big_realloc(NULL, 0, ((size_t)mask + 1) * sizeof(struct slot), true);

	if (!slots)
		return -ENOMEM;
	for (uint32_t j = 0; j <= ix->slotmask; j++) {
		uint32_t i;
		if (!ix->slots[j].node)
			continue;
		for (i = ix->slots[j].key & mask; slots[i].node; i = (i + 1) & mask)
			;
		slots[i] = ix->slots[j];
	}
	big_free(ix->slots, ((size_t)ix->slotmask + 1) * sizeof(struct slot));
	ix->slots = slots;
	ix->slotmask = mask;
	return 0;
}

static int slot_insert(struct attr_index *ix, uint32_t h, uint32_t id)
{
	uint32_t i;
	int r;

	if ((uint64_t)(ix->nslots_used + 1) * 10 > (uint64_t)(ix->slotmask + 1) * 7) {
		r = slots_rehash(ix);
		if (r < 0)
			return r;
	}
	for (i = h & ix->slotmask; ix->slots[i].node; i = (i + 1) & ix->slotmask)
		;
	ix->slots[i] = (struct slot){ .key = h, .node = id };
	ix->nslots_used++;
	return 0;
}

static int64_t node_new(struct attr_index *ix, uint32_t parent)
{
	int r = grow((void **)&ix->nodes, &ix->nodecap, ix->nnodes + 1, sizeof(struct node));

	if (r < 0)
		return r;
	ix->nodes[ix->nnodes] = (struct node){ .parent = parent };
	return ix->nnodes++;
}

/* Give node id the label src[0..len): inline, at arena offset off (>= 0: bytes already
 * there), or copied into the arena. */
static int node_set_label(struct attr_index *ix, uint32_t id, const char *src, size_t len,
			  int64_t off)
{
	struct node *nd = &ix->nodes[id];
	const char *slash = memchr(src, '/', len);

	if (len == 0 || len > UINT16_MAX)
		return -EINVAL;
	nd->namelen = (uint16_t)len;
	nd->firstlen = (uint16_t)(slash ? (size_t)(slash - src) : len);
	if (len <= INLINE_MAX) {
		uint64_t w = 0;
		memcpy(&w, src, len);
		memcpy(nd->name, &w, sizeof(w));
		return 0;
	}
	if (off < 0) {
		if (ix->nameslen + len > ix->namescap) {
			size_t cap = MAX(ix->namescap * 2, ix->nameslen + len + 4096);
			char *p;
			if (cap > UINT32_MAX)
				return -E2BIG;
			p = big_realloc(ix->names, ix->namescap, cap, false);
			if (!p)
				return -ENOMEM;
			ix->names = p;
			ix->namescap = cap;
		}
		memcpy(ix->names + ix->nameslen, src, len);
		off = (int64_t)ix->nameslen;
		ix->nameslen += len;
	}
	ix->nodes[id].name[0] = (uint32_t)off;
	return 0;
}

/* A new child of parent labelled with the rest of the path at p (all its components);
 * h is its slot key (the path up to p's first component). */
static int64_t child_add(struct attr_index *ix, uint32_t parent, const char *p, uint32_t h)
{
	size_t len = strlen(p);
	int64_t id;
	int r;

	while (len > 0 && p[len - 1] == '/')
		len--;
	id = node_new(ix, parent);
	if (id < 0)
		return id;
	r = node_set_label(ix, (uint32_t)id, p, len, -1);
	if (r < 0) {
		ix->nnodes--;
		return r;
	}
	r = slot_insert(ix, h, (uint32_t)id);
	if (r < 0) {
		ix->nnodes--;
		return r;
	}
	ix->nodes[parent].flags |= N_HASCHILD;
	return id;
}

/* Split the edge to x after its first k label bytes (a component boundary): a new node
 * mid takes x's place under its parent with label[0..k), and x hangs below mid with the
 * rest.  hs is the hash state of the parent's path, h_old x's slot key.  Returns mid. */
static int64_t edge_split(struct attr_index *ix, uint32_t x, size_t k, uint64_t hs,
			  uint32_t h_old)
{
	uint32_t parent = ix->nodes[x].parent, i;
	size_t m = ix->nodes[x].namelen;
	int64_t mid, off;
	char buf[INLINE_MAX];
	const char *lbl;
	uint64_t w;
	uint32_t h;
	int r;

	/* room first, so nothing below can fail half-way */
	if ((uint64_t)(ix->nslots_used + 1) * 10 > (uint64_t)(ix->slotmask + 1) * 7 &&
	    (r = slots_rehash(ix)) < 0)
		return r;
	mid = node_new(ix, parent);
	if (mid < 0)
		return mid;
	off = m > INLINE_MAX ? (int64_t)ix->nodes[x].name[0] : -1;
	if (m <= INLINE_MAX) { /* copy: x's inline bytes change below */
		memcpy(buf, ix->nodes[x].name, INLINE_MAX);
		lbl = buf;
	} else {
		lbl = ix->names + off;
	}
	node_set_label(ix, (uint32_t)mid, lbl, k, off);
	node_set_label(ix, x, lbl + k + 1, m - k - 1, off >= 0 ? off + (int64_t)k + 1 : -1);
	ix->nodes[mid].flags = N_HASCHILD;
	ix->nodes[x].parent = (uint32_t)mid;
	/* mid keeps x's key (same parent, same first component): repoint x's slot */
	for (i = h_old & ix->slotmask; ix->slots[i].node != x; i = (i + 1) & ix->slotmask)
		;
	ix->slots[i].node = (uint32_t)mid;
	hs = hadvance(hs, label(ix, &ix->nodes[mid]), k);
	lbl = label(ix, &ix->nodes[x]);
	h = hkey(hstep(hs, lbl, ix->nodes[x].firstlen, &w));
	r = slot_insert(ix, h, x);
	return r < 0 ? r : mid;
}

/* ---------------------------------------------------------------- fingerprint table */

/* The size that holds n entries 75% full. */
static uint32_t ft_size_for(uint32_t n)
{
	return (uint32_t)MIN((uint64_t)n / 3 * 4 + 4, (uint64_t)UINT32_MAX / 2);
}

/* An empty table of at least size entries. */
static int ft_alloc(struct ftable *t, uint32_t size)
{
	size_t bytes, words = 1;

	size = MAX((size + 3) & ~3u, 64u);
	bytes = (size_t)size * sizeof(struct fent);
	while (words * 16 < size)
		words *= 2;
	*t = (struct ftable){ .size = size, .ffmask = (uint32_t)words - 1 };
	if (bytes >= BIG_MIN) {
		t->e = big_map(bytes);
	} else {
		t->e = aligned_alloc(64, bytes);
		if (t->e)
			memset(t->e, 0, bytes);
	}
	t->filter = big_realloc(NULL, 0, words * sizeof(uint64_t), true);
	if (!t->e || !t->filter) {
		ft_free(t);
		return -ENOMEM;
	}
	return 0;
}

static void ft_put(struct ftable *t, uint64_t fp, uint32_t node, uint32_t eff)
{
	uint64_t bits;
	uint32_t i;

	*ff_pos(t, fp, &bits) |= bits;
	for (i = fp_pos(fp, t->size); t->e[i].node; i = fp_next(i, t->size))
		;
	t->e[i] = (struct fent){ .fp = fp, .node = node, .eff = eff };
}

/* Move the entries to a table of size entries. */
static int fp_resize(struct attr_index *ix, uint32_t size)
{
	struct ftable t;
	int r = ft_alloc(&t, size);

	if (r < 0)
		return r;
	for (uint32_t j = 0; j < ix->ft.size; j++)
		if (ix->ft.e[j].node)
			ft_put(&t, ix->ft.e[j].fp, ix->ft.e[j].node, ix->ft.e[j].eff);
	ft_free(&ix->ft);
	ix->ft = t;
	return 0;
}

/* Room for extra more entries (the table doubles past 80% full). */
static int fp_reserve(struct attr_index *ix, uint32_t extra)
{
	if (!ix->ft.e || (uint64_t)(ix->nftab + extra) * 5 <= (uint64_t)ix->ft.size * 4)
		return 0;
	if (ix->ft.size > UINT32_MAX / 2)
		return -E2BIG;
	return fp_resize(ix, ix->ft.size * 2);
}

/* Fingerprint every node again under key (0: a random one; two stored paths had the same
 * fingerprint), drawing new keys while stored paths collide.  Should that fail, lookups
 * walk the trie until a rebuild works.  1 when key was given but collided. */
static int fp_rebuild(struct attr_index *ix, uint64_t key)
{
	_cleanup_free_ uint64_t *fps = malloc((size_t)ix->nnodes * sizeof(uint64_t));
	_cleanup_free_ uint32_t *chain = malloc((size_t)ix->nnodes * sizeof(uint32_t));

	if (!ix->ft.e)
		return -EINVAL;
	ix->fp_off = true;
	if (!fps || !chain)
		return -ENOMEM;
	for (int attempt = 0; attempt < 4; attempt++) {
		bool clash = false;

		ix->fpkey = attempt == 0 && key ? key : fp_newkey();
		memset(ix->ft.e, 0, (size_t)ix->ft.size * sizeof(struct fent));
		memset(ix->ft.filter, 0, ((size_t)ix->ft.ffmask + 1) * sizeof(uint64_t));
		ix->nftab = 0;
		memset(fps, 0xff, (size_t)ix->nnodes * sizeof(uint64_t));
		for (uint32_t id = 1; id < ix->nnodes && !clash; id++) {
			uint32_t n = 0;

			/* up to the first node with a fingerprint (or a domain root), then down */
			for (uint32_t u = id; fps[u] == UINT64_MAX; u = ix->nodes[u].parent) {
				if (ix->nodes[u].namelen == 0) {
					fps[u] = (uint64_t)u + 1;
					break;
				}
				chain[n++] = u;
			}
			while (n > 0 && !clash) {
				uint32_t u = chain[--n];
				const struct node *nd = &ix->nodes[u];

				fps[u] = fp_path_from(ix->fpkey, fps[nd->parent], label(ix, nd), nd->namelen);
				clash = fp_find(&ix->ft, fps[u]) != NULL;
				ft_put(&ix->ft, fps[u], u, 0);
				ix->nftab++;
			}
		}
		if (!clash) {
			ix->fp_off = false;
			return attempt > 0 && key;
		}
	}
	return -EBUSY;
}

/* Create the table, for the nodes there are, and fingerprint them under key (0: a random
 * one).  Small indexes have none: they walk the trie, which is faster for them. */
static int fp_enable(struct attr_index *ix, uint64_t key)
{
	int r;

	if (!ix->ft.e && (r = ft_alloc(&ix->ft, ft_size_for(ix->nnodes))) < 0)
		return r;
	return fp_rebuild(ix, key); /* failing, lookups walk */
}

/* Enter node id under fingerprint fp (room reserved).  While the table is off, nothing:
 * attr_index_compact() tries the rebuild again. */
static void fp_add(struct attr_index *ix, uint64_t fp, uint32_t id)
{
	if (!ix->ft.e || ix->fp_off)
		return;
	if (fp_find(&ix->ft, fp)) {
		(void)fp_rebuild(ix, 0);
		return;
	}
	ft_put(&ix->ft, fp, id, 0);
	ix->nftab++;
}

static int64_t domain_root(struct attr_index *ix, const char *domain, bool create)
{
	struct domain *d;
	int r;

	for (size_t i = 0; i < ix->ndomains; i++)
		if (streq(ix->domains[i].name, domain))
			return ix->domains[i].root;
	if (!create)
		return 0;
	d = realloc(ix->domains, (ix->ndomains + 1) * sizeof(*d));
	if (!d)
		return -ENOMEM;
	ix->domains = d;
	r = grow((void **)&ix->nodes, &ix->nodecap, ix->nnodes + 1, sizeof(struct node));
	if (r < 0)
		return r;
	d[ix->ndomains].name = strdup(domain);
	if (!d[ix->ndomains].name)
		return -ENOMEM;
	d[ix->ndomains].root = ix->nnodes;
	ix->nodes[ix->nnodes] = (struct node){ 0 };
	ix->ndomains++;
	return ix->nnodes++;
}

/* The node for (domain, path): created when create, else 0 when absent. */
static int64_t node_get(struct attr_index *ix, const char *domain, const char *path, bool create)
{
	int64_t cur = domain_root(ix, domain, create), id;
	const char *p = path;
	uint64_t hs, root = (uint64_t)cur + 1;
	int r;

	if (cur <= 0)
		return cur;
	if (create && (r = fp_reserve(ix, 2)) < 0) /* so that nothing below fails half-way */
		return r;
	hs = hroot((uint32_t)cur);
	for (;;) {
		const struct node *x;
		const char *lbl;
		size_t n, m, i, k;
		uint64_t w, nh;
		uint32_t h, next;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		nh = comp_scan(hs, p, &n, &w);
		h = hkey(nh);
		next = child_find(ix, (uint32_t)cur, p, n, h, w);
		if (!next) {
			if (!create)
				return 0;
			id = child_add(ix, (uint32_t)cur, p, h);
			if (id > 0)
				fp_add(ix, fp_path_from(ix->fpkey, root, path, strlen(path)), (uint32_t)id);
			return id;
		}
		x = &ix->nodes[next];
		if (edge_matches(ix, x, p, n)) {
			cur = next;
			hs = x->namelen > n ? hadvance(nh, p + n + 1, x->namelen - n - 1) : nh;
			p += x->namelen;
			continue;
		}
		if (!create)
			return 0;
		/* the path leaves (or ends inside) this edge: split it at the last common
		 * component boundary */
		lbl = label(ix, x);
		m = x->namelen;
		for (i = 0; i < m && p[i] && lbl[i] == p[i]; i++)
			;
		if (i < m && lbl[i] == '/' && (p[i] == '\0' || p[i] == '/'))
			k = i;
		else /* before i: where the label has a '/' the path has one too (not at i:
		      * label "a.b/a/x" against path "a.b/ab" splits after "a.b") */
			for (k = (i < m ? i : m) - 1; k > 0 && lbl[k] != '/'; k--)
				;
		if (k == 0 || k >= m)
			return -EINVAL; /* not a normalized path */
		cur = edge_split(ix, next, k, hs, h);
		if (cur < 0)
			return cur;
		fp_add(ix, fp_path_from(ix->fpkey, root, path, (size_t)(p - path) + k), (uint32_t)cur);
		hs = hadvance(hs, p, k);
		p += k;
	}
	return cur;
}

/* ---------------------------------------------------------------- attribute blocks */

static int block_reserve(struct attr_index *ix, uint32_t nid, uint32_t need)
{
	struct node *nd = &ix->nodes[nid];
	uint32_t cnt = nd->attrs ? ix->arena[nd->attrs].key : 0;
	uint32_t cap = nd->attrs ? ix->arena[nd->attrs].value : 0;
	uint32_t ncap, off;
	int r;

	if (need <= cap)
		return 0;
	ncap = MAX(need, cap ? cap * 2 : 2);
	r = grow((void **)&ix->arena, &ix->arenacap, ix->arenalen + 1 + ncap, sizeof(struct aent));
	if (r < 0)
		return r;
	nd = &ix->nodes[nid];
	off = ix->arenalen;
	ix->arena[off] = (struct aent){ cnt, ncap };
	if (nd->attrs) {
		memcpy(&ix->arena[off + 1], &ix->arena[nd->attrs + 1], cnt * sizeof(struct aent));
		ix->arenagarbage += cap + 1;
	}
	ix->arenalen += 1 + ncap;
	nd->attrs = off;
	return 0;
}

static int put_one(struct attr_index *ix, const char *domain, const char *path, int key,
		   const char *keyname, const char *value, uint64_t number, bool from_ldap)
{
	int64_t nid, vid, uname = 0;
	uint32_t k, off, cnt;
	int r;

	if (!ix || !domain || !path || !value)
		return -EINVAL;
	if (key == NFSKEYS_ATTR_USER) {
		if (!keyname)
			return -EINVAL;
		uname = str_intern(ix, -1, keyname, 0);
		if (uname < 0)
			return (int)uname;
		if (uname > UNAME_MAX_ID)
			return -E2BIG;
	} else if (key < 0 || key >= _NFSKEYS_ATTR_MAX) {
		return -EINVAL;
	}
	vid = str_intern(ix, key == NFSKEYS_ATTR_USER ? -2 : key, value, number);
	if (vid < 0)
		return (int)vid;
	nid = node_get(ix, domain, path, true);
	if (nid < 0)
		return (int)nid;
	k = AK_MAKE(key, from_ldap, uname);

	off = ix->nodes[nid].attrs;
	cnt = off ? ix->arena[off].key : 0;
	for (uint32_t i = 1; i <= cnt; i++) {
		if (ix->arena[off + i].key == k) {
			if (ix->arena[off + i].value != (uint32_t)vid)
				ix->eff_stale = true;
			ix->arena[off + i].value = (uint32_t)vid;
			return 0;
		}
	}
	r = block_reserve(ix, (uint32_t)nid, cnt + 1);
	if (r < 0)
		return r;
	off = ix->nodes[nid].attrs;
	ix->arena[off + 1 + cnt] = (struct aent){ k, (uint32_t)vid };
	ix->arena[off].key = cnt + 1;
	ix->nentries++;
	ix->eff_stale = true;
	if (cnt == 0)
		ix->npolicies++;
	return 0;
}

static int del_one(struct attr_index *ix, const char *domain, const char *path, int key,
		   const char *keyname, bool from_ldap)
{
	int64_t nid, uname = 0;
	uint32_t off, cnt, out = 0;

	if (!ix || !domain || !path)
		return -EINVAL;
	nid = node_get(ix, domain, path, false);
	if (nid <= 0)
		return (int)nid;
	off = ix->nodes[nid].attrs;
	if (!off)
		return 0;
	if (key == NFSKEYS_ATTR_USER && keyname) {
		uint32_t h = hash_bytes(6, keyname, strlen(keyname));
		uname = str_find(ix, -1, keyname, h);
		if (!uname)
			return 0;
	}
	cnt = ix->arena[off].key;
	for (uint32_t i = 1; i <= cnt; i++) {
		uint32_t k = ix->arena[off + i].key;
		bool match = (k & AK_LDAP) == (from_ldap ? AK_LDAP : 0) &&
			     (key < 0 || (AK_TYPE(k) == (uint32_t)key &&
					  (key != NFSKEYS_ATTR_USER || !keyname ||
					   AK_UNAME(k) == (uint32_t)uname)));
		if (!match)
			ix->arena[off + 1 + out++] = ix->arena[off + i];
	}
	if (out != cnt)
		ix->eff_stale = true;
	ix->nentries -= cnt - out;
	ix->arena[off].key = out;
	if (out == 0) {
		ix->arenagarbage += ix->arena[off].value + 1;
		ix->nodes[nid].attrs = 0;
		ix->npolicies--;
	}
	return 0;
}

/* ---------------------------------------------------------------- garbage */

/* Changes leave garbage: attribute blocks outgrown or emptied (the arena only appends) and
 * interned values no attribute uses any more (a value replaced by another, an attribute
 * removed).  Without collecting it, setting one directory's attribute over and over
 * would grow the index without bound.  Both are collected once they are the larger part
 * (so a collection costs O(1) amortized per change): the arena is rebuilt tight, and the
 * strings in use are kept, renumbered, in the same order. */
static int arena_collect(struct attr_index *ix)
{
	uint32_t len = 1, cap = 0;
	struct aent *a = NULL;
	int r;

	r = grow((void **)&a, &cap, (uint32_t)MAX(ix->arenalen - ix->arenagarbage, 1u),
		 sizeof(struct aent));
	if (r < 0)
		return r;
	for (uint32_t i = 1; i < ix->nnodes; i++) {
		uint32_t off = ix->nodes[i].attrs, cnt;

		if (!off)
			continue;
		cnt = ix->arena[off].key;
		a[len] = (struct aent){ cnt, cnt };
		memcpy(&a[len + 1], &ix->arena[off + 1], cnt * sizeof(struct aent));
		ix->nodes[i].attrs = len;
		len += 1 + cnt;
	}
	big_free(ix->arena, (size_t)ix->arenacap * sizeof(struct aent));
	ix->arena = a;
	ix->arenacap = cap;
	ix->arenalen = len;
	ix->arenagarbage = 0;
	return 0;
}

static int strs_collect(struct attr_index *ix)
{
	_cleanup_free_ uint32_t *map = calloc((size_t)ix->nstrs + 1, sizeof(uint32_t));
	uint32_t n = 0;

	if (!map)
		return -ENOMEM;
	for (uint32_t i = 1; i < ix->nnodes; i++) {
		uint32_t off = ix->nodes[i].attrs;

		for (uint32_t j = 1; off && j <= ix->arena[off].key; j++) {
			const struct aent *e = &ix->arena[off + j];

			map[e->value] = 1;
			if (AK_TYPE(e->key) == NFSKEYS_ATTR_USER)
				map[AK_UNAME(e->key)] = 1;
		}
	}
	for (uint32_t id = 1; id <= ix->nstrs; id++) {
		if (!map[id]) {
			free(ix->strs[id - 1].s);
			continue;
		}
		ix->strs[n] = ix->strs[id - 1];
		map[id] = ++n;
	}
	ix->nstrs = n;
	for (uint32_t i = 1; i < ix->nnodes; i++) {
		uint32_t off = ix->nodes[i].attrs;

		for (uint32_t j = 1; off && j <= ix->arena[off].key; j++) {
			struct aent *e = &ix->arena[off + j];

			e->value = map[e->value];
			if (AK_TYPE(e->key) == NFSKEYS_ATTR_USER)
				e->key = AK_MAKE(NFSKEYS_ATTR_USER, e->key & AK_LDAP,
						 map[AK_UNAME(e->key)]);
		}
	}
	/* the computed sets name strings by id: recompute them */
	ix->eff_stale = true;
	memset(ix->strslots, 0, ((size_t)ix->strmask + 1) * sizeof(uint32_t));
	for (uint32_t id = 1; id <= ix->nstrs; id++) {
		uint32_t i = ix->strs[id - 1].hash & ix->strmask;
		while (ix->strslots[i])
			i = (i + 1) & ix->strmask;
		ix->strslots[i] = id;
	}
	return 0;
}

/* Collect when garbage is the larger part.  Failing to is no error: it stays for later. */
static void collect(struct attr_index *ix)
{
	if (ix->arenagarbage > 4096 && ix->arenagarbage * 2 > ix->arenalen)
		(void)arena_collect(ix);
	if (ix->nstrs > 4 * (uint64_t)ix->nentries + 512)
		(void)strs_collect(ix);
}

int attr_index_put(struct attr_index *ix, const char *domain, const char *path, int key,
		   const char *keyname, const char *value, uint64_t number, bool from_ldap)
{
	int r = put_one(ix, domain, path, key, keyname, value, number, from_ldap);

	if (r == 0) {
		collect(ix);
		if (!ix->ft.e && ix->nnodes >= ix->fp_min)
			(void)fp_enable(ix, 0); /* failing, lookups walk: tried again next time */
	}
	return r;
}

int attr_index_del(struct attr_index *ix, const char *domain, const char *path, int key,
		   const char *keyname, bool from_ldap)
{
	int r = del_one(ix, domain, path, key, keyname, from_ldap);

	if (r == 0)
		collect(ix);
	return r;
}

/* ---------------------------------------------------------------- lookups */

#define MAX_USER_ATTRS (ATTR_MAX_PER_DIR * 2)

struct resolved {
	uint32_t tval[_NFSKEYS_ATTR_MAX], tsrc[_NFSKEYS_ATTR_MAX];
	uint32_t tmask, tldap;
	struct {
		uint32_t uname, val, src;
		bool ldap;
	} user[MAX_USER_ATTRS];
	size_t nuser;
	uint32_t cut;
};

/* Overlay one node's attributes: LDAP-sourced first, then local ones, so that a local
 * value wins on the same directory. */
static void apply(const struct attr_index *ix, uint32_t nid, struct resolved *rs)
{
	uint32_t off = ix->nodes[nid].attrs, cnt = ix->arena[off].key;
	const struct aent *e = &ix->arena[off + 1];
	int inherit = -1;

	for (int pass = 0; pass < 2; pass++)
		for (uint32_t i = 0; i < cnt; i++)
			if (AK_TYPE(e[i].key) == NFSKEYS_ATTR_INHERIT &&
			    !!(e[i].key & AK_LDAP) == (pass == 0))
				inherit = (int)ix->strs[e[i].value - 1].number;
	if (inherit == 1) { /* "no": nothing from above applies here or below */
		rs->tmask = 0;
		rs->tldap = 0;
		rs->nuser = 0;
		rs->cut = nid;
	}
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t i = 0; i < cnt; i++) {
			uint32_t k = e[i].key, t = AK_TYPE(k);
			bool ldap = k & AK_LDAP;

			if (ldap != (pass == 0))
				continue;
			if (t < _NFSKEYS_ATTR_MAX) {
				rs->tval[t] = e[i].value;
				rs->tsrc[t] = nid;
				rs->tmask |= 1u << t;
				rs->tldap = ldap ? rs->tldap | (1u << t) : rs->tldap & ~(1u << t);
				continue;
			}
			size_t j;
			for (j = 0; j < rs->nuser; j++)
				if (rs->user[j].uname == AK_UNAME(k))
					break;
			if (j == rs->nuser) {
				if (rs->nuser == MAX_USER_ATTRS)
					continue;
				rs->nuser++;
			}
			rs->user[j].uname = AK_UNAME(k);
			rs->user[j].val = e[i].value;
			rs->user[j].src = nid;
			rs->user[j].ldap = ldap;
		}
	}
}

/* domain + path of a node into buf. */
static const char *node_format(const struct attr_index *ix, uint32_t nid, char *buf, size_t size)
{
	uint32_t chain[PATH_MAX / 2];
	size_t depth = 0, len;
	uint32_t cur = nid;
	const char *dom = "";

	while (cur && ix->nodes[cur].namelen && depth < ARRAY_SIZE(chain)) {
		chain[depth++] = cur;
		cur = ix->nodes[cur].parent;
	}
	for (size_t i = 0; i < ix->ndomains; i++)
		if (ix->domains[i].root == cur)
			dom = ix->domains[i].name;
	len = (size_t)snprintf(buf, size, "%s", dom);
	if (depth == 0 && len + 1 < size) {
		buf[len++] = '/';
		buf[len] = '\0';
	}
	while (depth-- > 0 && len < size) {
		const struct node *nd = &ix->nodes[chain[depth]];
		len += (size_t)snprintf(buf + len, size - len, "/%.*s", (int)nd->namelen,
					label(ix, nd));
	}
	return buf;
}

static int emit(const struct attr_index *ix, struct resolved *rs, unsigned flags,
		struct nfskeys_attr_policy *policy)
{
	char src[8192];
	bool sources = flags & NFSKEYS_ATTR_SOURCES;
	int r;

	nfskeys_attr_policy_clear(policy);
	for (uint32_t m = rs->tmask; m; m &= m - 1) {
		int t = __builtin_ctz(m);
		const struct istr *v = &ix->strs[rs->tval[t] - 1];

		r = attr_policy_append(policy, t, NULL, v->s, v->len, v->number,
				       sources ? node_format(ix, rs->tsrc[t], src, sizeof(src)) : NULL,
				       rs->tldap & (1u << t));
		if (r < 0)
			return r;
	}
	/* user.* by name: insertion sort, there are few */
	for (size_t j = 1; j < rs->nuser; j++) {
		for (size_t k = j; k > 0 && strcmp(ix->strs[rs->user[k - 1].uname - 1].s,
						   ix->strs[rs->user[k].uname - 1].s) > 0; k--) {
			__typeof__(rs->user[0]) tmp = rs->user[k];
			rs->user[k] = rs->user[k - 1];
			rs->user[k - 1] = tmp;
		}
	}
	for (size_t j = 0; j < rs->nuser; j++) {
		const struct istr *v = &ix->strs[rs->user[j].val - 1];

		r = attr_policy_append(policy, NFSKEYS_ATTR_USER, ix->strs[rs->user[j].uname - 1].s,
				       v->s, v->len, 0,
				       sources ? node_format(ix, rs->user[j].src, src, sizeof(src)) :
						 NULL,
				       rs->user[j].ldap);
		if (r < 0)
			return r;
	}
	if (rs->cut && sources)
		attr_policy_set_cut(policy, node_format(ix, rs->cut, src, sizeof(src)));
	return 0;
}

/* ---------------------------------------------------------------- effective sets */

#define ESET_MAX (_NFSKEYS_ATTR_MAX + MAX_USER_ATTRS)

/* Forget every computed set (after a change): they are recomputed on demand. */
static void eff_reset(struct attr_index *ix)
{
	for (uint32_t i = 1; i < ix->nnodes; i++)
		ix->nodes[i].eff = 0;
	for (uint32_t i = 0; i < ix->ft.size; i++)
		ix->ft.e[i].eff = 0;
	memset(ix->eslots, 0, ((size_t)ix->esmask + 1) * sizeof(uint32_t));
	ix->esetslen = 1;
	ix->nesets = 0;
	for (uint32_t i = 0; i < ix->eimgcap; i++)
		ix->eimg[i] = nfskeys_attr_policy_free(ix->eimg[i]);
	ix->eff_stale = false;
}

static uint32_t eset_hash(const struct aent *e, uint32_t n)
{
	uint64_t h = 0x243f6a8885a308d3ULL ^ n;

	for (uint32_t i = 0; i < n; i++) {
		h = (h ^ (((uint64_t)e[i].key << 32) | e[i].value)) * 0x100000001b3ULL;
		h ^= h >> 29;
	}
	return (uint32_t)mix64(h);
}

/* Intern the set e[0..n); returns its offset (> 0) or a negative errno. */
static int64_t eset_intern(struct attr_index *ix, const struct aent *e, uint32_t n)
{
	uint32_t h = eset_hash(e, n), i, off;
	int r;

	for (i = h & ix->esmask; (off = ix->eslots[i]); i = (i + 1) & ix->esmask)
		if (ix->esets[off].key == n && ix->esets[off].value == h &&
		    memcmp(&ix->esets[off + 1], e, n * sizeof(*e)) == 0)
			return off;
	if ((ix->nesets + 1) * 4 > (ix->esmask + 1) * 3) {
		uint32_t mask = ix->esmask * 2 + 1;
		uint32_t *slots = calloc((size_t)mask + 1, sizeof(uint32_t));

		if (!slots)
			return -ENOMEM;
		for (uint32_t j = 0; j <= ix->esmask; j++) {
			uint32_t o = ix->eslots[j], k;
			if (!o)
				continue;
			for (k = ix->esets[o].value & mask; slots[k]; k = (k + 1) & mask)
				;
			slots[k] = o;
		}
		free(ix->eslots);
		ix->eslots = slots;
		ix->esmask = mask;
		for (i = h & mask; ix->eslots[i]; i = (i + 1) & mask)
			;
	}
	r = grow((void **)&ix->esets, &ix->esetscap, ix->esetslen + 1 + n, sizeof(struct aent));
	if (r < 0)
		return r;
	off = ix->esetslen;
	ix->esets[off] = (struct aent){ n, h };
	memcpy(&ix->esets[off + 1], e, n * sizeof(*e));
	ix->esetslen += 1 + n;
	ix->eslots[i] = off;
	ix->nesets++;
	return off;
}

/* The inherit value a node sets itself (a local one over an LDAP one): the entry, or
 * NULL. */
static const struct aent *own_inherit(const struct attr_index *ix, uint32_t nid)
{
	uint32_t off = ix->nodes[nid].attrs, cnt;
	const struct aent *found = NULL;

	if (!off)
		return NULL;
	cnt = ix->arena[off].key;
	for (uint32_t i = 1; i <= cnt; i++) {
		const struct aent *e = &ix->arena[off + i];
		if (AK_TYPE(e->key) == NFSKEYS_ATTR_INHERIT && (!found || !(e->key & AK_LDAP)))
			found = e;
	}
	return found;
}

/* The set in effect at nid, whose parent's set is known (or nid is a domain root):
 * the parent's (nothing when nid sets inherit=no) overlaid with nid's own attributes,
 * LDAP-sourced ones first so that local ones win. */
static int64_t eff_compute(struct attr_index *ix, uint32_t nid)
{
	const struct node *nd = &ix->nodes[nid];
	uint32_t off = nd->attrs, cnt, n = 0, base = nd->parent ? ix->nodes[nd->parent].eff : 0;
	const struct aent *inh = own_inherit(ix, nid);
	struct aent e[ESET_MAX];
	uint32_t nuser = 0;

	if (!off && base)
		return base;
	if (inh && ix->strs[inh->value - 1].number == 1)
		base = 0; /* inherit=no: nothing from above */
	if (base) {
		n = ix->esets[base].key;
		memcpy(e, &ix->esets[base + 1], n * sizeof(*e));
		for (uint32_t i = 0; i < n; i++)
			nuser += AK_TYPE(e[i].key) == NFSKEYS_ATTR_USER;
	}
	cnt = off ? ix->arena[off].key : 0;
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t i = 1; i <= cnt; i++) {
			struct aent a = ix->arena[off + i];
			uint32_t t = AK_TYPE(a.key), j;

			if (!!(a.key & AK_LDAP) != (pass == 0) || t == NFSKEYS_ATTR_INHERIT)
				continue;
			for (j = 0; j < n; j++)
				if (AK_TYPE(e[j].key) == t &&
				    (t != NFSKEYS_ATTR_USER || AK_UNAME(e[j].key) == AK_UNAME(a.key)))
					break;
			if (j == n) {
				if (t == NFSKEYS_ATTR_USER && nuser == MAX_USER_ATTRS)
					continue;
				nuser += t == NFSKEYS_ATTR_USER;
				n++;
			}
			e[j] = a;
		}
	}
	/* policy order: typed keys by enum, then user.* by name; few entries */
	for (uint32_t j = 1; j < n; j++) {
		for (uint32_t k = j; k > 0; k--) {
			uint32_t ta = AK_TYPE(e[k - 1].key), tb = AK_TYPE(e[k].key);
			struct aent tmp;

			if (ta < tb || (ta == tb && (ta != NFSKEYS_ATTR_USER ||
						     strcmp(ix->strs[AK_UNAME(e[k - 1].key) - 1].s,
							    ix->strs[AK_UNAME(e[k].key) - 1].s) <= 0)))
				break;
			tmp = e[k];
			e[k] = e[k - 1];
			e[k - 1] = tmp;
		}
	}
	return eset_intern(ix, e, n);
}

/* The set in effect at nid, computing it (and those of its ancestors) when unknown. */
static int64_t eff_get(struct attr_index *ix, uint32_t nid)
{
	uint32_t n = 0;

	if (ix->nodes[nid].eff)
		return ix->nodes[nid].eff;
	for (uint32_t u = nid; u && !ix->nodes[u].eff; u = ix->nodes[u].parent) {
		int r = grow((void **)&ix->estack, &ix->estackcap, n + 1, sizeof(uint32_t));
		if (r < 0)
			return r;
		ix->estack[n++] = u;
	}
	while (n > 0) {
		uint32_t u = ix->estack[--n];
		int64_t e = eff_compute(ix, u);
		if (e < 0)
			return e;
		ix->nodes[u].eff = (uint32_t)e;
	}
	return ix->nodes[nid].eff;
}

/* Copy set es out as the policy, with inherit (the queried directory's own) in its
 * place when inh is not NULL. */
static int emit_entries(const struct attr_index *ix, uint32_t es, const struct aent *inh,
			struct nfskeys_attr_policy *policy)
{
	uint32_t n = ix->esets[es].key;
	const struct aent *e = &ix->esets[es + 1];
	int r;

	nfskeys_attr_policy_clear(policy);
	for (uint32_t i = 0; i <= n; i++) {
		const struct istr *v;
		uint32_t t;

		if (inh && (i == n || AK_TYPE(e[i].key) > NFSKEYS_ATTR_INHERIT)) {
			v = &ix->strs[inh->value - 1];
			r = attr_policy_append(policy, NFSKEYS_ATTR_INHERIT, NULL, v->s, v->len,
					       v->number, NULL, inh->key & AK_LDAP);
			if (r < 0)
				return r;
			inh = NULL;
		}
		if (i == n)
			break;
		t = AK_TYPE(e[i].key);
		v = &ix->strs[e[i].value - 1];
		r = attr_policy_append(policy, (int)t,
				       t == NFSKEYS_ATTR_USER ? ix->strs[AK_UNAME(e[i].key) - 1].s : NULL,
				       v->s, v->len, t == NFSKEYS_ATTR_USER ? 0 : v->number, NULL,
				       e[i].key & AK_LDAP);
		if (r < 0)
			return r;
	}
	return 0;
}

/* emit_entries(), from set es's ready-made policy when there is one (or can be made). */
static int emit_set(struct attr_index *ix, uint32_t es, const struct aent *inh,
		    struct nfskeys_attr_policy *policy)
{
	struct nfskeys_attr_policy *img;

	if (inh || !ix->ft.e)
		return emit_entries(ix, es, inh, policy);
	if (es >= ix->eimgcap) {
		uint32_t old = ix->eimgcap;

		if (grow((void **)&ix->eimg, &ix->eimgcap, es + 1, sizeof(*ix->eimg)) < 0)
			return emit_entries(ix, es, NULL, policy);
		memset(ix->eimg + old, 0, (size_t)(ix->eimgcap - old) * sizeof(*ix->eimg));
	}
	img = ix->eimg[es];
	if (!img) {
		if (nfskeys_attr_policy_new(&img) < 0)
			return emit_entries(ix, es, NULL, policy);
		if (emit_entries(ix, es, NULL, img) < 0) {
			nfskeys_attr_policy_free(img);
			return emit_entries(ix, es, NULL, policy);
		}
		ix->eimg[es] = img;
	}
	return attr_policy_copy(policy, img);
}

/* The effective policy without sources, walking the trie: the set of the deepest stored
 * directory on the path, with inherit when that is the queried directory itself. */
static int resolve_walk(struct attr_index *ix, uint32_t root, const char *path,
			struct nfskeys_attr_policy *policy)
{
	uint64_t hs = hroot(root), w, nh;
	uint32_t cur = root, next;
	const char *p = path;
	bool full = true;
	int64_t es;
	size_t n;

	for (;;) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		if (!(ix->nodes[cur].flags & N_HASCHILD)) {
			full = false;
			break;
		}
		nh = comp_scan(hs, p, &n, &w);
		next = child_find(ix, cur, p, n, hkey(nh), w);
		if (!next || !edge_matches(ix, &ix->nodes[next], p, n)) {
			full = false;
			break;
		}
		cur = next;
		hs = ix->nodes[cur].namelen > n ?
			     hadvance(nh, p + n + 1, ix->nodes[cur].namelen - n - 1u) : nh;
		p += ix->nodes[cur].namelen;
	}
	es = eff_get(ix, cur);
	if (es < 0)
		return (int)es;
	return emit_set(ix, (uint32_t)es, full ? own_inherit(ix, cur) : NULL, policy);
}

#define FP_DEPTH 48

/* The same from the fingerprint table: the fingerprints of all the path's prefixes come
 * out of one pass, their entries are fetched at once, and the deepest one present is the
 * deepest stored directory on the path (see fp_comp() for how far that is trusted). */
static int resolve_fp(struct attr_index *ix, uint32_t root, const char *path,
		      struct nfskeys_attr_policy *policy)
{
	uint64_t fps[FP_DEPTH], h = (uint64_t)root + 1, key = ix->fpkey;
	const char *q = path, *end = path + strlen(path);
	const struct ftable *t = &ix->ft;
	struct fent *hit = NULL;
	uint32_t nk = 0, cur = root, es, own;
	bool full = true;
	size_t n;

	uint64_t *ffw[FP_DEPTH], ffb[FP_DEPTH];

	/* the fingerprints, fetching their filter words on the way */
	for (;;) {
		while (*q == '/')
			q++;
		if (!*q)
			break;
		if (nk == FP_DEPTH)
			return resolve_walk(ix, root, path, policy);
		h = fp_comp(key, h, q, (size_t)(end - q), &n);
		if (n > UINT16_MAX) { /* no stored path goes through here */
			full = false;
			break;
		}
		fps[nk] = fp_canon(h);
		ffw[nk] = ff_pos(t, fps[nk], &ffb[nk]);
		__builtin_prefetch(ffw[nk]);
		nk++;
		q += n;
	}
	/* then the entries of the prefixes the filter lets through, all at once (testing
	 * the filter inside the loop above is slower: a filter word from memory then holds
	 * up the hashing) */
	for (uint32_t i = 0; i < nk; i++) {
		if ((*ffw[i] & ffb[i]) == ffb[i])
			__builtin_prefetch(&t->e[fp_pos(fps[i], t->size)]);
		else
			fps[i] = UINT64_MAX; /* no fingerprint is */
	}
	for (uint32_t i = nk; i-- > 0; full = false)
		if (fps[i] != UINT64_MAX && (hit = fp_find(t, fps[i])))
			break;
	if (hit) {
		cur = hit->node;
		es = FE_EFF(hit->eff);
		own = hit->eff & FE_OWN_INHERIT;
		if (!es) {
			int64_t e = eff_get(ix, cur);

			if (e < 0)
				return (int)e;
			es = (uint32_t)e;
			own = own_inherit(ix, cur) ? FE_OWN_INHERIT : 0;
			hit->eff = es | own;
		}
	} else {
		int64_t e = eff_get(ix, root);

		if (e < 0)
			return (int)e;
		es = (uint32_t)e;
		own = FE_OWN_INHERIT;
	}
	return emit_set(ix, es, full && own ? own_inherit(ix, cur) : NULL, policy);
}

int attr_index_resolve(struct attr_index *ix, const char *domain, const char *path,
		       unsigned flags, struct nfskeys_attr_policy *policy)
{
	struct resolved rs;
	const char *p = path;
	uint32_t cur, last = 0;
	int64_t root;
	size_t n;
	bool full = true;
	uint64_t hs;

	if (!ix || !domain || !path || !policy)
		return -EINVAL;
	rs.tmask = 0;
	rs.tldap = 0;
	rs.nuser = 0;
	rs.cut = 0;
	root = domain_root(ix, domain, false);
	if (root <= 0) {
		nfskeys_attr_policy_clear(policy);
		return 0;
	}
	if (!(flags & NFSKEYS_ATTR_SOURCES)) {
		if (ix->eff_stale)
			eff_reset(ix);
		if (ix->ft.e && !ix->fp_off && ix->nnodes >= ix->fp_min)
			return resolve_fp(ix, (uint32_t)root, path, policy);
		return resolve_walk(ix, (uint32_t)root, path, policy);
	}
	cur = (uint32_t)root;
	hs = hroot(cur);
	if (ix->nodes[cur].attrs)
		apply(ix, cur, &rs);
	last = cur;
	for (;;) {
		uint64_t w, nh;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		if (!(ix->nodes[cur].flags & N_HASCHILD)) {
			full = false;
			break;
		}
		nh = comp_scan(hs, p, &n, &w);
		cur = child_find(ix, cur, p, n, hkey(nh), w);
		if (!cur || !edge_matches(ix, &ix->nodes[cur], p, n)) {
			full = false;
			break;
		}
		hs = ix->nodes[cur].namelen > n ?
			     hadvance(nh, p + n + 1, ix->nodes[cur].namelen - n - 1u) : nh;
		p += ix->nodes[cur].namelen;
		if (ix->nodes[cur].attrs)
			apply(ix, cur, &rs);
		last = cur;
	}
	/* inherit describes the directory that sets it; it is not inherited. */
	if ((rs.tmask & (1u << NFSKEYS_ATTR_INHERIT)) &&
	    (!full || rs.tsrc[NFSKEYS_ATTR_INHERIT] != last))
		rs.tmask &= ~(1u << NFSKEYS_ATTR_INHERIT);
	return emit(ix, &rs, flags, policy);
}

int attr_index_explicit(struct attr_index *ix, const char *domain, const char *path,
			struct nfskeys_attr_policy *policy)
{
	struct resolved rs = { 0 };
	int64_t nid;

	if (!ix || !domain || !path || !policy)
		return -EINVAL;
	nid = node_get(ix, domain, path, false);
	if (nid < 0)
		return (int)nid;
	if (nid > 0 && ix->nodes[nid].attrs)
		apply(ix, (uint32_t)nid, &rs);
	rs.cut = 0;
	return emit(ix, &rs, 0, policy);
}

int attr_index_set_fpkey(struct attr_index *ix, uint64_t key)
{
	if (!ix || key < 2 || key > FP_P - 2)
		return -EINVAL;
	return fp_enable(ix, key);
}

void attr_index_set_fp_min(struct attr_index *ix, uint32_t min_nodes)
{
	if (!ix)
		return;
	ix->fp_min = min_nodes;
	if (!ix->ft.e && ix->nnodes >= min_nodes)
		(void)fp_enable(ix, 0);
}

/* Cut a table's capacity down to len elements. */
static void shrink(void **p, uint32_t *cap, uint32_t len, size_t elem)
{
	void *np;

	if (*cap <= len || !len)
		return;
	np = big_realloc(*p, (size_t)*cap * elem, (size_t)len * elem, false);
	if (np) {
		*p = np;
		*cap = len;
	}
}

void attr_index_compact(struct attr_index *ix)
{
	void *p;

	if (!ix)
		return;
	shrink((void **)&ix->nodes, &ix->nodecap, ix->nnodes, sizeof(struct node));
	shrink((void **)&ix->arena, &ix->arenacap, ix->arenalen, sizeof(struct aent));
	shrink((void **)&ix->strs, &ix->strscap, ix->nstrs, sizeof(struct istr));
	if (ix->ft.e && ix->fp_off)
		(void)fp_rebuild(ix, 0);
	if (ix->ft.e && ix->ft.size > ft_size_for(ix->nftab) + 64)
		(void)fp_resize(ix, ft_size_for(ix->nftab)); /* failing, it stays as it is */
	/* every set now, in the entries too: the first lookups after a load would otherwise
	 * compute them (and write to the table) one by one */
	if (ix->eff_stale)
		eff_reset(ix);
	for (uint32_t i = 0; i < ix->ft.size; i++) {
		struct fent *e = &ix->ft.e[i];
		int64_t es;

		if (!e->node || e->eff)
			continue;
		es = eff_get(ix, e->node);
		if (es < 0)
			break; /* no memory: computed on demand then */
		e->eff = (uint32_t)es | (own_inherit(ix, e->node) ? FE_OWN_INHERIT : 0);
	}
	if (ix->namescap > ix->nameslen && ix->nameslen &&
	    (p = big_realloc(ix->names, ix->namescap, ix->nameslen, false))) {
		ix->names = p;
		ix->namescap = ix->nameslen;
	}
}

size_t attr_index_count(const struct attr_index *ix)
{
	return ix ? ix->npolicies : 0;
}

size_t attr_index_memory(const struct attr_index *ix)
{
	size_t m;

	if (!ix)
		return 0;
	/* big tables count whole 2 MiB pages */
	m = sizeof(*ix) + big_span((size_t)ix->nodecap * sizeof(struct node)) +
	    big_span((size_t)ix->esetscap * sizeof(struct aent)) +
	    ((size_t)ix->esmask + 1) * sizeof(uint32_t) +
	    big_span((size_t)ix->estackcap * sizeof(uint32_t)) +
	    big_span(((size_t)ix->slotmask + 1) * sizeof(struct slot)) +
	    big_span((size_t)ix->ft.size * sizeof(struct fent)) +
	    big_span(((size_t)ix->ft.ffmask + 1) * sizeof(uint64_t)) +
	    big_span(ix->namescap) +
	    big_span((size_t)ix->arenacap * sizeof(struct aent)) +
	    big_span((size_t)ix->strscap * sizeof(struct istr)) +
	    ((size_t)ix->strmask + 1) * sizeof(uint32_t) + ix->ndomains * sizeof(struct domain);
	for (uint32_t i = 0; i < ix->nstrs; i++)
		m += strlen(ix->strs[i].s) + 1;
	m += big_span((size_t)ix->eimgcap * sizeof(*ix->eimg));
	for (uint32_t i = 0; i < ix->eimgcap; i++)
		m += attr_policy_memory(ix->eimg[i]);
	return m;
}
