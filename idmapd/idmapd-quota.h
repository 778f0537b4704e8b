/* Per-uid counts of work in progress (lookups queued or running for the worker pool), so
 * that one user cannot fill the queue: a chained hash keyed by uid, loop thread only.
 * Internal to nfskeys-idmapd. */
#pragma once

#include <stdlib.h>
#include <sys/types.h>

#define IDMAPD_QUOTA_BUCKETS 256

struct idmapd_quota_node {
	uid_t uid;
	unsigned n;
	struct idmapd_quota_node *next;
};

struct idmapd_quota {
	struct idmapd_quota_node *b[IDMAPD_QUOTA_BUCKETS];
	unsigned total;
};

static inline struct idmapd_quota_node **idmapd_quota_slot(struct idmapd_quota *q, uid_t uid)
{
	struct idmapd_quota_node **pp = &q->b[(uid * 2654435761u) % IDMAPD_QUOTA_BUCKETS];

	while (*pp && (*pp)->uid != uid)
		pp = &(*pp)->next;
	return pp;
}

static inline unsigned idmapd_quota_get(struct idmapd_quota *q, uid_t uid)
{
	struct idmapd_quota_node **pp = idmapd_quota_slot(q, uid);

	return *pp ? (*pp)->n : 0;
}

/* Count one more for uid; -ENOMEM. */
static inline int idmapd_quota_inc(struct idmapd_quota *q, uid_t uid)
{
	struct idmapd_quota_node **pp = idmapd_quota_slot(q, uid);

	if (!*pp) {
		*pp = calloc(1, sizeof(**pp));
		if (!*pp)
			return -ENOMEM;
		(*pp)->uid = uid;
	}
	(*pp)->n++;
	q->total++;
	return 0;
}

static inline void idmapd_quota_dec(struct idmapd_quota *q, uid_t uid)
{
	struct idmapd_quota_node **pp = idmapd_quota_slot(q, uid), *n = *pp;

	if (!n)
		return;
	q->total--;
	if (--n->n == 0) {
		*pp = n->next;
		free(n);
	}
}

static inline void idmapd_quota_clear(struct idmapd_quota *q)
{
	for (size_t i = 0; i < IDMAPD_QUOTA_BUCKETS; i++)
		while (q->b[i]) {
			struct idmapd_quota_node *n = q->b[i];

			q->b[i] = n->next;
			free(n);
		}
	q->total = 0;
}
