/* The "sid" idmap backend's table of known domains, writer side: entries added and the
 * table grown under the backend's lock, published with release stores for the lock-free
 * readers of idmap-sid.c, replaced memory kept until the backend is done. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "idmap-sid.h"

/* Keep p allocated until done(): lock-free readers may still hold it. */
int sid_retire(struct sid_data *d, void *p)
{
	void **n = realloc(d->retired, (d->n_retired + 1) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	d->retired = n;
	d->retired[d->n_retired++] = p;
	return 0;
}

struct fast_table *sid_fast_table_new(uint32_t slots)
{
	struct fast_table *t = calloc(1, sizeof(*t) + slots * sizeof(t->slots[0]));

	if (t)
		t->mask = slots - 1;
	return t;
}

/* The entry of dom, created when absent (writer side, d->lock held or in init); NULL when
 * memory runs out (the fast path then just misses: lookup still answers). */
static struct fast_dom *fast_dom_get(struct sid_data *d, const uint32_t dom[3])
{
	char buf[48], *key = buf + 9;
	int len = snprintf(buf, sizeof(buf), "S-1-5-21-%" PRIu32 "-%" PRIu32 "-%" PRIu32, dom[0],
			   dom[1], dom[2]);
	size_t klen = (size_t)len - 9;
	uint32_t hash = dom_hash(key, klen);
	struct fast_table *t = d->fast;
	struct fast_dom *e = fast_slot(t, key, klen, hash);

	if (e->klen)
		return e;
	if ((t->count + 1) * 2 > t->mask + 1) {
		/* grow: re-insert into a table twice the size, publish it, retire this one */
		struct fast_table *n = sid_fast_table_new((t->mask + 1) * 2);

		if (!n)
			return NULL;
		if (sid_retire(d, t) < 0) {
			free(n);
			return NULL;
		}
		for (uint32_t i = 0; i <= t->mask; i++)
			if (t->slots[i].klen)
				*fast_slot(n, t->slots[i].text, t->slots[i].klen,
					   t->slots[i].hash) = t->slots[i];
		n->count = t->count;
		__atomic_store_n(&d->fast, n, __ATOMIC_RELEASE);
		t = n;
		e = fast_slot(t, key, klen, hash);
	}
	e->hash = hash;
	memcpy(e->text, key, klen);
	t->count++;
	__atomic_store_n(&e->klen, (uint32_t)klen, __ATOMIC_RELEASE);
	return e;
}

void sid_fast_add_fixed(struct sid_data *d, const struct fixed_range *fr)
{
	struct fast_dom *e = fast_dom_get(d, fr->dom);

	/* fixed ranges are known before any slice, so readers never see the entry without
	 * them; the first [SID] line of a domain wins, as in find_fixed() */
	if (e && !e->fixed) {
		e->fixed_min = fr->min;
		e->fixed_span = fr->max - fr->min;
		e->fixed = true;
	}
}

void sid_fast_add_slice(struct sid_data *d, const uint32_t dom[3], uint32_t first_rid,
			uint32_t slice)
{
	struct fast_dom *e = fast_dom_get(d, dom);
	uint32_t base = d->lower + slice * d->size;
	struct fast_secs *s;

	if (!e || e->fixed)
		return;
	if (first_rid == 0) {
		e->base0 = base;
		__atomic_store_n(&e->primary, 1, __ATOMIC_RELEASE);
		return;
	}
	s = e->secs;
	if (!s || s->n == s->cap) {
		uint32_t cap = s ? s->cap * 2 : 4;
		struct fast_secs *n = malloc(sizeof(*n) + cap * sizeof(n->v[0]));

		if (!n || (s && sid_retire(d, s) < 0)) {
			free(n);
			return;
		}
		n->cap = cap;
		n->n = s ? s->n : 0;
		if (s)
			memcpy(n->v, s->v, s->n * sizeof(s->v[0]));
		__atomic_store_n(&e->secs, n, __ATOMIC_RELEASE);
		s = n;
	}
	s->v[s->n].first_rid = first_rid;
	s->v[s->n].base = base;
	__atomic_store_n(&s->n, s->n + 1, __ATOMIC_RELEASE);
}
