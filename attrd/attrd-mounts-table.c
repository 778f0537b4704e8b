/* The table of nfskeys-attrd's sub-mount entries: finding, adding and freeing an entry,
 * and setting its strings.  The lowest of the mount files: the loop's side
 * (attrd-mounts.c), the workers (attrd-mounts-jobs.c), the state file
 * (attrd-mounts-state.c) and the kernel side (attrd-mounts-kernel.c) call down into it,
 * and it calls none of them. */
#include <time.h>

#include "attrd-mounts-private.h"
#include "macros.h"

void mounts_entry_done(struct mentry *e)
{
	free(e->target);
	free(e->server);
	free(e->source);
	free(e->fstype);
	free(e->options);
	free(e->applied);
	free(e->base);
	free(e->parent_mp);
	free(e->ids);
	free(e->error);
	free(e->blocked);
	free(e->handles);
	free(e->setters);
}

void mounts_set_str(char **p, const char *v)
{
	char *n = v ? strdup(v) : NULL;

	if (v && !n)
		return; /* keep the old text rather than lose it */
	free(*p);
	*p = n;
}

struct mentry *mounts_entry_find(struct attrd_mounts *m, const char *target)
{
	for (size_t i = 0; i < m->n; i++)
		if (!m->v[i].orphan && streq(m->v[i].target, target))
			return &m->v[i];
	return NULL;
}

struct mentry *mounts_orphan_find(struct attrd_mounts *m, const char *target)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->v[i].orphan && streq(m->v[i].target, target))
			return &m->v[i];
	return NULL;
}

struct mentry *mounts_entry_add(struct attrd_mounts *m, const char *target)
{
	struct mentry *v = realloc(m->v, (m->n + 1) * sizeof(*v));

	if (!v)
		return NULL;
	m->v = v;
	v[m->n] = (struct mentry){ .target = strdup(target), .since = (int64_t)time(NULL) };
	if (!v[m->n].target)
		return NULL;
	return &v[m->n++];
}
