/* A query's start, shared by knfsd's channels (kernel-paths-knfsd.c) and the client's
 * pipes (kernel-paths-pipes.c); it calls neither them nor kernel-paths-core.c, so calls
 * among the kernel paths go one way. */
#include <stdlib.h>

#include "kernel-paths-private.h"
#include "time-util.h"

struct kquery *kpaths_query_new(struct kpaths *kp, enum kpath_src src)
{
	struct kquery *q = calloc(1, sizeof(*q));

	if (!q)
		return NULL;
	q->kp = kp;
	q->src = src;
	q->start_ns = mono_nsec();
	kp->st[src].requests++;
	kp->refs++;
	return q;
}
