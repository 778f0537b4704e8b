/* An intrusive recency list, the LRU half of both answer caches (libnfskeys/idmap-cache.c,
 * idmapd/idmapd-cache.c) over their common/hashmap tables: the head is the most recently
 * used, the tail the next to evict.  An entry embeds a struct lru_link and is found again
 * with LRU_ENTRY().  Header only: every operation is a few stores. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

struct lru_link {
	struct lru_link *prev, *next;
};

struct lru_list {
	struct lru_link *head, *tail;
};

#define LRU_ENTRY(link, type, member) ((type *)((char *)(link) - offsetof(type, member)))

static inline void lru_unlink(struct lru_list *l, struct lru_link *e)
{
	if (e->prev)
		e->prev->next = e->next;
	else
		l->head = e->next;
	if (e->next)
		e->next->prev = e->prev;
	else
		l->tail = e->prev;
	e->prev = e->next = NULL;
}

static inline void lru_push_front(struct lru_list *l, struct lru_link *e)
{
	e->prev = NULL;
	e->next = l->head;
	if (l->head)
		l->head->prev = e;
	l->head = e;
	if (!l->tail)
		l->tail = e;
}
