/* The fingerprints of stored paths and their table (see attr-index-private.h for
 * what a fingerprint is and how far it is trusted). */
#include <sys/random.h>

#include "attr-index-private.h"
#include "time-util.h"

/* ---------------------------------------------------------------- fingerprints */

/* The fingerprint of the path s[0..len) below the directory with fingerprint h (the
 * root of a domain: its id + 1). */
uint64_t aix_fp_path_from(uint64_t key, uint64_t h, const char *s, size_t len)
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

uint64_t aix_fp_newkey(void)
{
	uint64_t k = 0;

	if (getrandom(&k, sizeof(k), GRND_NONBLOCK) != sizeof(k) &&
	    getrandom(&k, sizeof(k), GRND_INSECURE) != sizeof(k))
		k = mix64(mono_nsec() ^ (uint64_t)(uintptr_t)&k ^ ((uint64_t)getpid() << 32));
	return 2 + k % (FP_P - 3);
}

void aix_ft_free(struct ftable *t)
{
	aix_big_free(t->e, (size_t)t->size * sizeof(struct fent));
	aix_big_free(t->filter, ((size_t)t->ffmask + 1) * sizeof(uint64_t));
	*t = (struct ftable){ 0 };
}

/* ---------------------------------------------------------------- fingerprint table */

/* The size that holds n entries 75% full. */
uint32_t aix_ft_size_for(uint32_t n)
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
		t->e = aix_big_map(bytes);
	} else {
		t->e = aligned_alloc(64, bytes);
		if (t->e)
			memset(t->e, 0, bytes);
	}
	t->filter = aix_big_realloc(NULL, 0, words * sizeof(uint64_t), true);
	if (!t->e || !t->filter) {
		aix_ft_free(t);
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
int aix_fp_resize(struct attr_index *ix, uint32_t size)
{
	struct ftable t;
	int r = ft_alloc(&t, size);

	if (r < 0)
		return r;
	for (uint32_t j = 0; j < ix->ft.size; j++)
		if (ix->ft.e[j].node)
			ft_put(&t, ix->ft.e[j].fp, ix->ft.e[j].node, ix->ft.e[j].eff);
	aix_ft_free(&ix->ft);
	ix->ft = t;
	return 0;
}

/* Room for extra more entries (the table doubles past 80% full). */
int aix_fp_reserve(struct attr_index *ix, uint32_t extra)
{
	if (!ix->ft.e || (uint64_t)(ix->nftab + extra) * 5 <= (uint64_t)ix->ft.size * 4)
		return 0;
	if (ix->ft.size > UINT32_MAX / 2)
		return -E2BIG;
	return aix_fp_resize(ix, ix->ft.size * 2);
}

/* Fingerprint every node again under key (0: a random one; two stored paths had the same
 * fingerprint), drawing new keys while stored paths collide.  Should that fail, lookups
 * walk the trie until a rebuild works.  1 when key was given but collided. */
int aix_fp_rebuild(struct attr_index *ix, uint64_t key)
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

		ix->fpkey = attempt == 0 && key ? key : aix_fp_newkey();
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

				fps[u] = aix_fp_path_from(ix->fpkey, fps[nd->parent], label(ix, nd), nd->namelen);
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
int aix_fp_enable(struct attr_index *ix, uint64_t key)
{
	int r;

	if (!ix->ft.e && (r = ft_alloc(&ix->ft, aix_ft_size_for(ix->nnodes))) < 0)
		return r;
	return aix_fp_rebuild(ix, key); /* failing, lookups walk */
}

/* Enter node id under fingerprint fp (room reserved).  While the table is off, nothing:
 * attr_index_compact() tries the rebuild again. */
void aix_fp_add(struct attr_index *ix, uint64_t fp, uint32_t id)
{
	if (!ix->ft.e || ix->fp_off)
		return;
	if (fp_find(&ix->ft, fp)) {
		(void)aix_fp_rebuild(ix, 0);
		return;
	}
	ft_put(&ix->ft, fp, id, 0);
	ix->nftab++;
}
