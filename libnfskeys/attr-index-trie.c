/* The trie of path components: interned strings, nodes, edges, the child table, and
 * finding or creating the node of a path. */
#include "attr-index-private.h"

/* ---------------------------------------------------------------- interned strings */

uint32_t aix_str_find(const struct attr_index *ix, int key, const char *s, uint32_t h)
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
int64_t aix_str_intern(struct attr_index *ix, int key, const char *s, uint64_t number)
{
	uint32_t h = hash_bytes((uint64_t)(key + 7), s, strlen(s));
	uint32_t id = aix_str_find(ix, key, s, h), i;
	int r;

	if (id)
		return id;
	if ((ix->nstrs + 1) * 4 > (ix->strmask + 1) * 3) {
		r = str_rehash(ix);
		if (r < 0)
			return r;
	}
	r = aix_grow((void **)&ix->strs, &ix->strscap, ix->nstrs + 1, sizeof(struct istr));
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

static int slots_rehash(struct attr_index *ix)
{
	uint32_t mask = ix->slotmask * 2 + 1;
	struct slot *slots = aix_big_realloc(NULL, 0, ((size_t)mask + 1) * sizeof(struct slot), true);

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
	aix_big_free(ix->slots, ((size_t)ix->slotmask + 1) * sizeof(struct slot));
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
	int r = aix_grow((void **)&ix->nodes, &ix->nodecap, ix->nnodes + 1, sizeof(struct node));

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
			p = aix_big_realloc(ix->names, ix->namescap, cap, false);
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

int64_t aix_domain_root(struct attr_index *ix, const char *domain, bool create)
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
	r = aix_grow((void **)&ix->nodes, &ix->nodecap, ix->nnodes + 1, sizeof(struct node));
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
int64_t aix_node_get(struct attr_index *ix, const char *domain, const char *path, bool create)
{
	int64_t cur = aix_domain_root(ix, domain, create), id;
	const char *p = path;
	uint64_t hs, root = (uint64_t)cur + 1;
	int r;

	if (cur <= 0)
		return cur;
	if (create && (r = aix_fp_reserve(ix, 2)) < 0) /* so that nothing below fails half-way */
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
				aix_fp_add(ix, aix_fp_path_from(ix->fpkey, root, path, strlen(path)), (uint32_t)id);
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
		aix_fp_add(ix, aix_fp_path_from(ix->fpkey, root, path, (size_t)(p - path) + k), (uint32_t)cur);
		hs = hadvance(hs, p, k);
		p += k;
	}
	return cur;
}
