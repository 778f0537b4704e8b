/* The in-memory index of directory policies: per domain a path-compressed trie of path
 * components (a chain of directories without policies or branches is one edge), held in
 * flat arrays (nodes, one open-addressing table keyed by the hash of the child's path up
 * to its first component, a label arena and an attribute arena).  Each node caches its
 * effective attribute set (interned, computed lazily, dropped on any change).  A second
 * table holds every node under a keyed fingerprint of its whole path, with its set: an
 * effective lookup in a large index fingerprints all the query's prefixes in one pass,
 * fetches their entries at once and copies out the set of the deepest one present, one
 * round of memory accesses where walking the trie takes one per level. */
#include "attr-index-private.h"

/* Here: the index's life, changes (attribute blocks) and garbage collection.  The
 * mechanisms: attr-index-mem.c (tables), attr-index-fp.c (fingerprints),
 * attr-index-trie.c (strings, nodes, edges), attr-index-resolve.c (lookups, effective
 * sets); their shared layout and hot-path helpers in attr-index-private.h. */

int attr_index_new(struct attr_index **ret)
{
	struct attr_index *ix = calloc(1, sizeof(*ix));

	if (!ix)
		return -ENOMEM;
	/* node 0 and arena offset 0 are reserved as "none" */
	if (aix_grow((void **)&ix->nodes, &ix->nodecap, 1, sizeof(struct node)) < 0 ||
	    aix_grow((void **)&ix->arena, &ix->arenacap, 1, sizeof(struct aent)) < 0) {
		attr_index_free(ix);
		return -ENOMEM;
	}
	ix->nnodes = 1;
	ix->arenalen = 1;
	ix->fp_min = FP_MIN_NODES;
	ix->slotmask = 1023;
	ix->slots = aix_big_realloc(NULL, 0, ((size_t)ix->slotmask + 1) * sizeof(struct slot), true);
	ix->fpkey = aix_fp_newkey();
	ix->strmask = 255;
	ix->strslots = calloc(ix->strmask + 1, sizeof(uint32_t));
	ix->esmask = 63;
	ix->eslots = calloc(ix->esmask + 1, sizeof(uint32_t));
	if (!ix->slots || !ix->strslots || !ix->eslots ||
	    aix_grow((void **)&ix->esets, &ix->esetscap, 1, sizeof(struct aent)) < 0) {
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
	aix_big_free(ix->strs, (size_t)ix->strscap * sizeof(struct istr));
	free(ix->strslots);
	free(ix->domains);
	aix_big_free(ix->nodes, (size_t)ix->nodecap * sizeof(struct node));
	aix_big_free(ix->slots, ((size_t)ix->slotmask + 1) * sizeof(struct slot));
	aix_ft_free(&ix->ft);
	aix_big_free(ix->names, ix->namescap);
	aix_big_free(ix->arena, (size_t)ix->arenacap * sizeof(struct aent));
	aix_big_free(ix->esets, (size_t)ix->esetscap * sizeof(struct aent));
	for (uint32_t i = 0; i < ix->eimgcap; i++)
		nfskeys_attr_policy_free(ix->eimg[i]);
	aix_big_free(ix->eimg, (size_t)ix->eimgcap * sizeof(*ix->eimg));
	free(ix->eslots);
	aix_big_free(ix->estack, (size_t)ix->estackcap * sizeof(uint32_t));
	free(ix);
	return NULL;
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
	r = aix_grow((void **)&ix->arena, &ix->arenacap, ix->arenalen + 1 + ncap, sizeof(struct aent));
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
		uname = aix_str_intern(ix, -1, keyname, 0);
		if (uname < 0)
			return (int)uname;
		if (uname > UNAME_MAX_ID)
			return -E2BIG;
	} else if (key < 0 || key >= _NFSKEYS_ATTR_MAX) {
		return -EINVAL;
	}
	vid = aix_str_intern(ix, key == NFSKEYS_ATTR_USER ? -2 : key, value, number);
	if (vid < 0)
		return (int)vid;
	nid = aix_node_get(ix, domain, path, true);
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
	nid = aix_node_get(ix, domain, path, false);
	if (nid <= 0)
		return (int)nid;
	off = ix->nodes[nid].attrs;
	if (!off)
		return 0;
	if (key == NFSKEYS_ATTR_USER && keyname) {
		uint32_t h = hash_bytes(6, keyname, strlen(keyname));
		uname = aix_str_find(ix, -1, keyname, h);
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

	r = aix_grow((void **)&a, &cap, (uint32_t)MAX(ix->arenalen - ix->arenagarbage, 1u),
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
	aix_big_free(ix->arena, (size_t)ix->arenacap * sizeof(struct aent));
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
			(void)aix_fp_enable(ix, 0); /* failing, lookups walk: tried again next time */
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

int attr_index_set_fpkey(struct attr_index *ix, uint64_t key)
{
	if (!ix || key < 2 || key > FP_P - 2)
		return -EINVAL;
	return aix_fp_enable(ix, key);
}

void attr_index_set_fp_min(struct attr_index *ix, uint32_t min_nodes)
{
	if (!ix)
		return;
	ix->fp_min = min_nodes;
	if (!ix->ft.e && ix->nnodes >= min_nodes)
		(void)aix_fp_enable(ix, 0);
}

/* Cut a table's capacity down to len elements. */
static void shrink(void **p, uint32_t *cap, uint32_t len, size_t elem)
{
	void *np;

	if (*cap <= len || !len)
		return;
	np = aix_big_realloc(*p, (size_t)*cap * elem, (size_t)len * elem, false);
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
		(void)aix_fp_rebuild(ix, 0);
	if (ix->ft.e && ix->ft.size > aix_ft_size_for(ix->nftab) + 64)
		(void)aix_fp_resize(ix, aix_ft_size_for(ix->nftab)); /* failing, it stays as it is */
	/* every set now, in the entries too: the first lookups after a load would otherwise
	 * compute them (and write to the table) one by one */
	if (ix->eff_stale)
		aix_eff_reset(ix);
	for (uint32_t i = 0; i < ix->ft.size; i++) {
		struct fent *e = &ix->ft.e[i];
		int64_t es;

		if (!e->node || e->eff)
			continue;
		es = aix_eff_get(ix, e->node);
		if (es < 0)
			break; /* no memory: computed on demand then */
		e->eff = (uint32_t)es | (aix_own_inherit(ix, e->node) ? FE_OWN_INHERIT : 0);
	}
	if (ix->namescap > ix->nameslen && ix->nameslen &&
	    (p = aix_big_realloc(ix->names, ix->namescap, ix->nameslen, false))) {
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
	m = sizeof(*ix) + aix_big_span((size_t)ix->nodecap * sizeof(struct node)) +
	    aix_big_span((size_t)ix->esetscap * sizeof(struct aent)) +
	    ((size_t)ix->esmask + 1) * sizeof(uint32_t) +
	    aix_big_span((size_t)ix->estackcap * sizeof(uint32_t)) +
	    aix_big_span(((size_t)ix->slotmask + 1) * sizeof(struct slot)) +
	    aix_big_span((size_t)ix->ft.size * sizeof(struct fent)) +
	    aix_big_span(((size_t)ix->ft.ffmask + 1) * sizeof(uint64_t)) +
	    aix_big_span(ix->namescap) +
	    aix_big_span((size_t)ix->arenacap * sizeof(struct aent)) +
	    aix_big_span((size_t)ix->strscap * sizeof(struct istr)) +
	    ((size_t)ix->strmask + 1) * sizeof(uint32_t) + ix->ndomains * sizeof(struct domain);
	for (uint32_t i = 0; i < ix->nstrs; i++)
		m += strlen(ix->strs[i].s) + 1;
	m += aix_big_span((size_t)ix->eimgcap * sizeof(*ix->eimg));
	for (uint32_t i = 0; i < ix->eimgcap; i++)
		m += attr_policy_memory(ix->eimg[i]);
	return m;
}
