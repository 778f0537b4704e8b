/* Lookups: the effective policy of a directory (walking the trie, or from the
 * fingerprint table), with sources, and a directory's own attributes; the interned
 * effective sets they copy out. */
#include <limits.h>

#include "attr-index-private.h"

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
void aix_eff_reset(struct attr_index *ix)
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
	r = aix_grow((void **)&ix->esets, &ix->esetscap, ix->esetslen + 1 + n, sizeof(struct aent));
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
const struct aent *aix_own_inherit(const struct attr_index *ix, uint32_t nid)
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
	const struct aent *inh = aix_own_inherit(ix, nid);
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
int64_t aix_eff_get(struct attr_index *ix, uint32_t nid)
{
	uint32_t n = 0;

	if (ix->nodes[nid].eff)
		return ix->nodes[nid].eff;
	for (uint32_t u = nid; u && !ix->nodes[u].eff; u = ix->nodes[u].parent) {
		int r = aix_grow((void **)&ix->estack, &ix->estackcap, n + 1, sizeof(uint32_t));
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

		if (aix_grow((void **)&ix->eimg, &ix->eimgcap, es + 1, sizeof(*ix->eimg)) < 0)
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

/* A walk down the trie along a path: the deepest node reached so far (cur), the rest of
 * the path (p), the hash state of the components taken (hs), and whether every component
 * so far matched a stored directory (full). */
struct trie_walk {
	const char *p;
	uint64_t hs;
	uint32_t cur;
	bool full;
};

static inline struct trie_walk trie_walk_start(uint32_t root, const char *path)
{
	return (struct trie_walk){ .p = path, .hs = hroot(root), .cur = root, .full = true };
}

/* One step: down to the child whose edge matches the next component(s) of the path
 * (true), or false when the path ends there (full kept) or leaves the trie (full
 * cleared); cur is then the deepest stored directory on the path.  The one trie-step
 * of every walk in this file: keep it inline, it is the hot loop of the lookups. */
static inline __attribute__((always_inline)) bool trie_step(const struct attr_index *ix,
							    struct trie_walk *tw)
{
	const char *p = tw->p;
	uint64_t w, nh;
	uint32_t next;
	size_t n;

	while (*p == '/')
		p++;
	tw->p = p;
	if (!*p)
		return false;
	if (!(ix->nodes[tw->cur].flags & N_HASCHILD))
		goto leave;
	nh = comp_scan(tw->hs, p, &n, &w);
	next = child_find(ix, tw->cur, p, n, hkey(nh), w);
	if (!next || !edge_matches(ix, &ix->nodes[next], p, n))
		goto leave;
	tw->cur = next;
	tw->hs = ix->nodes[next].namelen > n ?
			 hadvance(nh, p + n + 1, ix->nodes[next].namelen - n - 1u) : nh;
	tw->p = p + ix->nodes[next].namelen;
	return true;
leave:
	tw->full = false;
	return false;
}

/* The effective policy without sources, walking the trie: the set of the deepest stored
 * directory on the path, with inherit when that is the queried directory itself. */
static int resolve_walk(struct attr_index *ix, uint32_t root, const char *path,
			struct nfskeys_attr_policy *policy)
{
	struct trie_walk tw = trie_walk_start(root, path);
	int64_t es;

	while (trie_step(ix, &tw))
		;
	es = aix_eff_get(ix, tw.cur);
	if (es < 0)
		return (int)es;
	return emit_set(ix, (uint32_t)es, tw.full ? aix_own_inherit(ix, tw.cur) : NULL, policy);
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
			int64_t e = aix_eff_get(ix, cur);

			if (e < 0)
				return (int)e;
			es = (uint32_t)e;
			own = aix_own_inherit(ix, cur) ? FE_OWN_INHERIT : 0;
			hit->eff = es | own;
		}
	} else {
		int64_t e = aix_eff_get(ix, root);

		if (e < 0)
			return (int)e;
		es = (uint32_t)e;
		own = FE_OWN_INHERIT;
	}
	return emit_set(ix, es, full && own ? aix_own_inherit(ix, cur) : NULL, policy);
}

int attr_index_resolve(struct attr_index *ix, const char *domain, const char *path,
		       unsigned flags, struct nfskeys_attr_policy *policy)
{
	struct resolved rs;
	struct trie_walk tw;
	int64_t root;

	if (!ix || !domain || !path || !policy)
		return -EINVAL;
	rs.tmask = 0;
	rs.tldap = 0;
	rs.nuser = 0;
	rs.cut = 0;
	root = aix_domain_root(ix, domain, false);
	if (root <= 0) {
		nfskeys_attr_policy_clear(policy);
		return 0;
	}
	if (!(flags & NFSKEYS_ATTR_SOURCES)) {
		if (ix->eff_stale)
			aix_eff_reset(ix);
		if (ix->ft.e && !ix->fp_off && ix->nnodes >= ix->fp_min)
			return resolve_fp(ix, (uint32_t)root, path, policy);
		return resolve_walk(ix, (uint32_t)root, path, policy);
	}
	tw = trie_walk_start((uint32_t)root, path);
	do {
		if (ix->nodes[tw.cur].attrs)
			apply(ix, tw.cur, &rs);
	} while (trie_step(ix, &tw));
	/* inherit describes the directory that sets it; it is not inherited. */
	if ((rs.tmask & (1u << NFSKEYS_ATTR_INHERIT)) &&
	    (!tw.full || rs.tsrc[NFSKEYS_ATTR_INHERIT] != tw.cur))
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
	nid = aix_node_get(ix, domain, path, false);
	if (nid < 0)
		return (int)nid;
	if (nid > 0 && ix->nodes[nid].attrs)
		apply(ix, (uint32_t)nid, &rs);
	rs.cut = 0;
	return emit(ix, &rs, 0, policy);
}
