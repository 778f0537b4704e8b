/* nfskeys-idmapd lookups: answers from the shared cache (the library's one answer cache),
 * misses fetched on a small pool of worker threads (coordinated in the in-flight table,
 * idmapd-fetch.c), refresh-ahead for hot entries and serve-stale through outages. */
#include <inttypes.h>
#include <syslog.h>
#include <unistd.h>

#include "idmapd.h"
#include "rpc-args.h"

struct idmapd *idmapd_instance;

/* ---------------------------------------------------------------- lookups */

static bool is_backend_failure(int r, const struct nfskeys_idmap_answer *a)
{
	int e = r < 0 ? r : ((a->flags & NFSKEYS_IDMAP_ANSWER_NOBODY) ? a->error : 0);

	return e < 0 && !kquery_status_definitive(e) && e != -ENOMEM;
}

static void answer_to_wire(const struct nfskeys_idmap_answer *a, idmapd_answer *w,
			   uint8_t *sidbuf)
{
	int n;

	memset(w, 0, sizeof(*w));
	w->kind = a->kind;
	w->flags = a->flags;
	w->error = a->error;
	w->ttl = a->ttl;
	w->id = a->id;
	w->gid = a->gid;
	w->groups.groups_len = MIN(a->n_groups, (uint32_t)NFSKEYS_IDMAP_GROUPS_MAX);
	w->groups.groups_val = (unsigned *)a->groups;
	w->name = (char *)a->name;
	w->backend = (char *)a->backend;
	if (a->kind == NFSKEYS_IDMAP_UID_TO_SID || a->kind == NFSKEYS_IDMAP_GID_TO_SID) {
		n = nfskeys_sid_to_binary(&a->sid, sidbuf, NFSKEYS_SID_BINARY_MAX);
		if (n > 0) {
			w->sid.sid_len = n;
			w->sid.sid_val = (char *)sidbuf;
		}
	}
}

/* What a lookup counts as, from the status its caller gets: "no such owner" (-ENOENT, also
 * a nobody answer for a caller that asked for none) is an answer, a miss when fetched and a
 * negative_hit when it came from the cache; error is a lookup that failed (a backend down,
 * a malformed key), for an admin's alert. */
static enum lres lookup_result(int status, enum lres result)
{
	if (status == 0 || result == LR_NEGATIVE_HIT)
		return result;
	if (status != -ENOENT)
		return LR_ERROR;
	return result == LR_HIT ? LR_NEGATIVE_HIT : result;
}

/* Answer a kernel query (knfsd channel, client pipe) from an entry's current state. */
static void answer_kernel(struct idmapd *d, struct idmapd_entry *e, struct kquery *kq,
			  unsigned lflags, enum lres result)
{
	int64_t left = e->m.expires - evloop_now(d->loop);
	int status = e->m.status;
	unsigned ttl;

	if (status == 0 && (e->ans.flags & NFSKEYS_IDMAP_ANSWER_NOBODY) &&
	    !(lflags & IDMAPD_LOOKUP_NOBODY))
		status = e->ans.error < 0 ? e->ans.error : -ENOENT;
	if (status == 0 && (e->ans.flags & NFSKEYS_IDMAP_ANSWER_NOBODY))
		result = result == LR_STALE ? LR_STALE : LR_NOBODY;
	result = lookup_result(status, result);
	d->st.lookups[result]++;
	ttl = e->m.stale ? d->set.stale_ttl
		       : left > 0 ? (unsigned)((left + USEC_PER_SEC - 1) / USEC_PER_SEC) : 1;
	if (daemon_log_level() >= LOG_DEBUG)
		daemon_log(LOG_DEBUG, "lookup %s %s for the kernel (%s): %s (%s)",
			nfskeys_idmap_kind_to_string(IDMAPD_KIND_BASE(e->kind)), e->key,
			kpath_src_name(kquery_source(kq)), status ? strerror(-status) : "ok",
			lres_names[result]);
	idmapd_recent_note(d, e, idmapd_recent_path_of(kq), NULL, kq, status, result);
	kquery_answer(kq, status, status ? NULL : &e->ans, ttl);
}

/* Answer one caller from an entry's current state. */
static void answer_waiter(struct idmapd *d, struct idmapd_entry *e, struct rpc_request *req,
			  struct kquery *kq, unsigned lflags, unsigned extra_flags,
			  enum lres result)
{
	idmapd_lookup_res res = {};
	uint8_t sidbuf[NFSKEYS_SID_BINARY_MAX];
	int64_t now = evloop_now(d->loop);

	if (kq) {
		answer_kernel(d, e, kq, lflags, result);
		return;
	}
	res.status = e->m.status;
	if (res.status == 0 && (e->ans.flags & NFSKEYS_IDMAP_ANSWER_NOBODY) &&
	    !(lflags & IDMAPD_LOOKUP_NOBODY))
		res.status = e->ans.error < 0 ? e->ans.error : -ENOENT;
	if (res.status == 0) {
		idmapd_answer *w = &res.idmapd_lookup_res_u.answer;
		int64_t left = e->m.expires - now;

		answer_to_wire(&e->ans, w, sidbuf);
		w->flags |= extra_flags;
		if (e->m.stale) {
			w->flags |= IDMAPD_ANSWER_STALE;
			w->ttl = d->set.stale_ttl;
		} else {
			w->ttl = left > 0 ? (uint32_t)((left + USEC_PER_SEC - 1) / USEC_PER_SEC) : 1;
		}
		if (e->ans.flags & NFSKEYS_IDMAP_ANSWER_NOBODY)
			result = result == LR_STALE ? LR_STALE : LR_NOBODY;
	}
	result = lookup_result(res.status, result);
	d->st.lookups[result]++;
	if (daemon_log_level() >= LOG_DEBUG)
		daemon_log(LOG_DEBUG, "lookup %s %s for pid %d uid %u: %s (%s)",
			nfskeys_idmap_kind_to_string(IDMAPD_KIND_BASE(e->kind)), e->key, (int)req->peer.pid,
			(unsigned)req->peer.uid, res.status ? strerror(-res.status) : "ok",
			lres_names[result]);
	idmapd_recent_note(d, e, RP_SOCKET, req, NULL, res.status, result);
	idmapd_reply(d, IDMAPD_OP_LOOKUP, req, (xdrproc_t)xdr_idmapd_lookup_res, &res);
}

/* The kind that maps an answer back (0: none): name -> id to id -> name and back. */
static uint32_t reverse_kind(uint32_t kind)
{
	uint32_t base = IDMAPD_KIND_BASE(kind), prof = kind - base;

	switch (base) {
	case NFSKEYS_IDMAP_NAME_TO_UID:
		return NFSKEYS_IDMAP_UID_TO_NAME | prof;
	case NFSKEYS_IDMAP_GROUP_TO_GID:
		return NFSKEYS_IDMAP_GID_TO_GROUP | prof;
	case NFSKEYS_IDMAP_UID_TO_NAME:
		return NFSKEYS_IDMAP_NAME_TO_UID | prof;
	case NFSKEYS_IDMAP_GID_TO_GROUP:
		return NFSKEYS_IDMAP_GROUP_TO_GID | prof;
	default:
		return 0;
	}
}

static bool is_id_to_name(uint32_t kind)
{
	uint32_t base = IDMAPD_KIND_BASE(kind);

	return base == NFSKEYS_IDMAP_UID_TO_NAME || base == NFSKEYS_IDMAP_GID_TO_GROUP;
}

static void job_run(struct idmapd_job *j)
{
	const unsigned flags = NFSKEYS_IDMAP_LOOKUP_NOBODY | NFSKEYS_IDMAP_LOOKUP_NO_CACHE;
	uint64_t t0 = mono_nsec();
	char key[16];

	memset(&j->ans, 0, sizeof(j->ans));
	if (j->reverse) {
		/* the backend may answer the id's name from the same search ([LDAP]
		 * Unique-Ids): then no second lookup */
		memset(&j->rev_ans, 0, sizeof(j->rev_ans));
		j->r = nfskeys_idmap_lookup_pair(j->ctx, IDMAPD_KIND_BASE(j->kind), j->key, flags,
						 &j->ans, &j->rev_ans);
	} else {
		j->r = nfskeys_idmap_lookup_full(j->ctx, IDMAPD_KIND_BASE(j->kind), j->key, flags,
						 &j->ans);
	}
	j->latency_ns = mono_nsec() - t0;
	if (!j->reverse || j->r != 0 || (j->ans.flags & NFSKEYS_IDMAP_ANSWER_NOBODY))
		return;
	if (j->rev_ans.kind == IDMAPD_KIND_BASE(reverse_kind(j->kind)) &&
	    j->rev_ans.id == j->ans.id) {
		j->rev_r = 0;
		j->rev_latency_ns = 0;
		j->reverse_done = j->reverse_cocached = true;
		return;
	}
	/* an id's lookup takes its name's answer only when it comes with it: the clients that
	 * will ask for the name may never come */
	if (is_id_to_name(j->kind))
		return;
	/* the lookup the prime would make next, exactly as it would make it */
	snprintf(key, sizeof(key), "%" PRIu32, j->ans.id);
	t0 = mono_nsec();
	memset(&j->rev_ans, 0, sizeof(j->rev_ans));
	j->rev_r = nfskeys_idmap_lookup_full(j->ctx, IDMAPD_KIND_BASE(reverse_kind(j->kind)), key,
					     flags, &j->rev_ans);
	j->rev_latency_ns = mono_nsec() - t0;
	j->reverse_done = true;
}

static void idmapd_job_done(struct evloop *loop, void *userdata);

static void *idmapd_worker_main(void *arg)
{
	struct idmapd *d = arg;

	for (;;) {
		struct idmapd_job *j;

		pthread_mutex_lock(&d->lock);
		while (!d->queue_head && !d->pool_stop)
			pthread_cond_wait(&d->cond, &d->lock);
		if (!d->queue_head) {
			pthread_mutex_unlock(&d->lock);
			return NULL;
		}
		j = d->queue_head;
		d->queue_head = j->next;
		if (!d->queue_head)
			d->queue_tail = &d->queue_head;
		d->queued--;
		pthread_mutex_unlock(&d->lock);

		job_run(j);
		while (evloop_post(d->loop, idmapd_job_done, j) < 0)
			usleep(1000); /* out of memory: retry rather than lose the callers */
	}
}

int idmapd_pool_start(struct idmapd *d, unsigned n)
{
	d->threads = calloc(n, sizeof(*d->threads));
	if (!d->threads)
		return -ENOMEM;
	for (unsigned i = 0; i < n; i++) {
		int r = pthread_create(&d->threads[i], NULL, idmapd_worker_main, d);

		if (r)
			return -r;
		d->n_threads++;
	}
	return 0;
}

void idmapd_pool_stop(struct idmapd *d)
{
	pthread_mutex_lock(&d->lock);
	d->pool_stop = true;
	pthread_cond_broadcast(&d->cond);
	pthread_mutex_unlock(&d->lock);
	for (size_t i = 0; i < d->n_threads; i++)
		pthread_join(d->threads[i], NULL);
	free(d->threads);
	d->threads = NULL;
	d->n_threads = 0;
}

/* Work for the pool is bounded in all and per uid (root, the kernel's helpers and
 * channels, exempt from the latter): past it a lookup is answered -EAGAIN at once. */
static bool queue_full(struct idmapd *d, uid_t uid)
{
	return d->quota.total >= d->set.max_queue ||
	       (uid != 0 && idmapd_quota_get(&d->quota, uid) >= d->set.max_queue_user);
}

/* Queue a fetch of kind/key for the workers, tracked in the in-flight table; it pins the
 * key's cache entry (when there is one), so a stale answer to fall back on stays. */
static int fetch_start(struct idmapd *d, uint32_t kind, const char *key, bool refresh, bool reverse,
		       uid_t uid, struct idmapd_fetch **ret_fetch)
{
	struct idmapd_fetch *f;
	struct idmapd_job *j;

	if (queue_full(d, uid) || idmapd_quota_inc(&d->quota, uid) < 0)
		return -EAGAIN;
	j = calloc(1, sizeof(*j));
	if (!j) {
		idmapd_quota_dec(&d->quota, uid);
		return -ENOMEM;
	}
	j->uid = uid;
	j->key = strdup(key);
	if (!j->key || idmapd_fetch_add(d->fetches, kind, key, &f) < 0) {
		idmapd_quota_dec(&d->quota, uid);
		free(j->key);
		free(j);
		return -ENOMEM;
	}
	j->d = d;
	j->ctx = nfskeys_ctx_ref(idmapd_kind_ctx(d, kind));
	j->f = f;
	j->kind = kind;
	/* name -> id: the id's name for a prime (Prime-Reverse); id -> name: the name's id
	 * whenever the backend finds it in the same search */
	j->reverse = reverse_kind(kind) != 0 && (reverse || is_id_to_name(kind));
	f->pinned = idmap_cache_pin(d->cache, kind, key) == 0; /* until idmapd_job_done is over */
	f->refresh = refresh;
	f->start = evloop_now(d->loop);
	pthread_mutex_lock(&d->lock);
	*d->queue_tail = j;
	d->queue_tail = &j->next;
	d->queued++;
	pthread_mutex_unlock(&d->lock);
	/* after the unlock: a worker woken under the lock would only block on it again */
	pthread_cond_signal(&d->cond);
	*ret_fetch = f;
	return 0;
}

/* A positive answer past expiry that may still be served while backends fail. */
static bool stale_ok(struct idmapd *d, const struct idmapd_entry *e, int64_t now)
{
	return d->set.stale_limit > 0 && e && e->m.positive &&
	       now <= e->m.good_expires + (int64_t)d->set.stale_limit * USEC_PER_SEC;
}

/* The cache entry of a fetch's key as it is now (no hit counted); NULL when there is none
 * or the fetch was flushed (an orphan's key is no longer its to read). */
static struct idmapd_entry *fetch_entry(struct idmapd *d, struct idmapd_fetch *f,
					struct idmapd_entry *buf)
{
	buf->kind = f->kind;
	buf->key = f->key;
	if (f->orphan || !f->pinned ||
	    idmap_cache_read(d->cache, f->kind, f->key, &buf->m, &buf->ans) != 1)
		return NULL;
	return buf;
}

static void answer_all(struct idmapd *d, struct idmapd_fetch *f, struct idmapd_entry *e,
		       unsigned extra, enum lres result)
{
	while (f->waiters) {
		struct idmapd_waiter *w = f->waiters;

		f->waiters = w->next;
		answer_waiter(d, e, w->req, w->kq, w->flags, extra, result);
		free(w);
	}
}

/* A backend's fresh answer (r, ans) for kind/key as the entry callers are answered from
 * (in buf), stored in the cache unless store is false: the TTL of its kind of answer. */
static struct idmapd_entry *fresh_answer(struct idmapd *d, uint32_t kind, const char *key, int r,
					 const struct nfskeys_idmap_answer *ans, bool failed,
					 int64_t now, bool store, struct idmapd_entry *buf)
{
	struct idmapd_entry *e = buf;
	unsigned ttl;

	e->kind = kind;
	e->key = key;
	e->m.status = r;
	e->ans = *ans;
	e->m.positive = r == 0 && !(ans->flags & NFSKEYS_IDMAP_ANSWER_NOBODY);
	e->m.stale = false;
	e->m.hits = 0;
	e->m.fetched = now;
	if (r == 0)
		ttl = ans->ttl;
	else if (failed)
		ttl = d->set.stale_ttl;
	else
		ttl = d->set.negative_ttl;
	if (failed && r == 0)
		ttl = MIN(ttl, d->set.stale_ttl);
	e->m.expires = now + (int64_t)ttl * USEC_PER_SEC;
	e->m.good_expires = e->m.positive ? e->m.expires : 0;
	if (store)
		(void)idmap_cache_store(d->cache, kind, key, r == 0 ? ans : NULL, r, now,
					e->m.expires);
	return e;
}

/* Inline-Lookups: a miss the engine can answer from memory (LOOKUP_NOWAIT: no backend it
 * must ask could block) is answered here, in the loop, without the two thread switches
 * of a worker; true when it was.  A backend failure is left to the workers' path, which
 * owns serve-stale. */
static bool lookup_inline(struct idmapd *d, uint32_t kind, const char *key, unsigned flags,
			  struct rpc_request *req, struct kquery *kq)
{
	struct nfskeys_idmap_answer ans;
	struct idmapd_entry buf, *e;
	struct backend_stats *b;
	uint64_t t0 = mono_nsec();
	int r;

	if (!d->set.inline_lookups)
		return false;
	r = nfskeys_idmap_lookup_full(idmapd_kind_ctx(d, kind), IDMAPD_KIND_BASE(kind), key,
				      NFSKEYS_IDMAP_LOOKUP_NOBODY | NFSKEYS_IDMAP_LOOKUP_NO_CACHE |
					      NFSKEYS_IDMAP_LOOKUP_NOWAIT,
				      &ans);
	if (r == -EWOULDBLOCK || is_backend_failure(r, &ans))
		return false;
	/* a failed lookup writes nothing to ans (a malformed key fails before any backend):
	 * it counts under "none", and the cached and sent answer is all zeros, as from a
	 * worker */
	if (r < 0)
		memset(&ans, 0, sizeof(ans));
	b = idmapd_backend_slot(d, r == 0 && ans.backend[0] ? ans.backend : "none");
	b->requests++;
	stats_hist_add(&b->latency, mono_nsec() - t0);
	d->st.inlined++;
	e = fresh_answer(d, kind, key, r, &ans, false, evloop_now(d->loop), true, &buf);
	answer_waiter(d, e, req, kq, flags, 0, LR_MISS);
	return true;
}

static void idmapd_job_done(struct evloop *loop, void *userdata)
{
	struct idmapd_job *j = userdata;
	struct idmapd *d = j->d;
	struct idmapd_fetch *f = j->f;
	struct idmapd_entry buf, *e;
	int64_t now = evloop_now(loop);
	bool failed = is_backend_failure(j->r, &j->ans);
	struct backend_stats *b;

	idmapd_quota_dec(&d->quota, j->uid);
	b = idmapd_backend_slot(d, failed ? "failed" : j->ans.backend[0] ? j->ans.backend : "none");
	b->requests++;
	b->failures += failed;
	stats_hist_add(&b->latency, j->latency_ns);

	evloop_timer_free(f->stale_timer);
	f->stale_timer = NULL;
	/* the reverse first, so the prime that answering sets off finds it in the cache; a
	 * flushed fetch stores nothing, a failing backend leaves it to a fetch of its own */
	if (j->reverse_done && !f->orphan && is_id_to_name(j->kind)) {
		/* the name's id from the id's own search ([LDAP] Unique-Names): cached under
		 * the name the answer gives, which is what a client then asks for */
		d->st.names_cocached++;
		e = fresh_answer(d, reverse_kind(j->kind), j->ans.name, 0, &j->rev_ans, false, now,
				 true, &buf);
		idmapd_recent_note(d, e, RP_ID_SEARCH, NULL, NULL, 0, LR_MISS);
	} else if (j->reverse_done && !f->orphan && !is_id_to_name(j->kind) &&
		   !is_backend_failure(j->rev_r, &j->rev_ans)) {
		char key[16];

		snprintf(key, sizeof(key), "%" PRIu32, j->ans.id);
		if (j->reverse_cocached) {
			/* no request of its own went to the backend */
			d->st.rev_cocached++;
		} else {
			const char *be = j->rev_ans.backend[0] ? j->rev_ans.backend : "none";

			b = idmapd_backend_slot(d, be);
			b->requests++;
			stats_hist_add(&b->latency, j->rev_latency_ns);
		}
		d->st.rev_prefetched++;
		e = fresh_answer(d, reverse_kind(j->kind), key, j->rev_r, &j->rev_ans, false, now,
				 true, &buf);
		/* nobody asked it yet: the record says how it came, for explain's reader */
		if (e)
			idmapd_recent_note(d, e, j->reverse_cocached ? RP_NAME_SEARCH : RP_PREFETCH,
					   NULL, NULL, j->rev_r, LR_MISS);
	}
	e = fetch_entry(d, f, &buf);
	if (failed && e && (f->refresh || stale_ok(d, e, now))) {
		/* Keep serving what we had: fresh until it expires (refresh-ahead), then stale
		 * until the limit, retrying every Stale-TTL seconds. */
		if (!f->refresh || now >= e->m.expires) {
			e->m.stale = true;
			e->m.expires = now + (int64_t)d->set.stale_ttl * USEC_PER_SEC;
			(void)idmap_cache_mark_stale(d->cache, f->kind, f->key, e->m.expires);
		}
		daemon_log(LOG_NOTICE, "%s %s: backends failing (%s); serving the %s answer",
			nfskeys_idmap_kind_to_string(IDMAPD_KIND_BASE(f->kind)), f->key,
			strerror(-(j->r < 0 ? j->r : j->ans.error)),
			e->m.stale ? "stale" : "cached");
		answer_all(d, f, e, IDMAPD_ANSWER_STALE, LR_STALE);
	} else {
		/* a flushed fetch answers its callers but caches nothing */
		e = fresh_answer(d, f->kind, f->key, j->r, &j->ans, failed, now, !f->orphan, &buf);
		answer_all(d, f, e, 0, LR_MISS);
	}
	if (f->pinned && !f->orphan)
		(void)idmap_cache_unpin(d->cache, f->kind, f->key);
	idmapd_fetch_done(d->fetches, f);
	nfskeys_ctx_unref(j->ctx);
	free(j->key);
	free(j);
}

static void stale_wait_fired(struct evloop *loop, struct evtimer *t, void *userdata);

/* ---------------------------------------------------------------- gone callers */

void idmapd_lookups_orphaned(void *userdata, uid_t uid, unsigned inflight)
{
	struct idmapd *d = userdata;

	/* Called from inside the RPC server, maybe from a reply in answer_all: the queue is
	 * swept from the loop instead, once for any number of closes. */
	if (!d->stopping && d->cancel_timer)
		evloop_timer_set(d->cancel_timer, 0);
}

/* Whether anybody still waits for this fetch: a kernel query, or a socket call whose
 * connection is open.  A refresh-ahead (no waiters) is kept: it serves the cache. */
static bool fetch_abandoned(const struct idmapd_fetch *f)
{
	if (!f->waiters)
		return false;
	for (const struct idmapd_waiter *w = f->waiters; w; w = w->next)
		if (w->kq || rpc_request_connected(w->req))
			return false;
	return true;
}

/* Lookups queued for the workers whose every caller has gone are dropped before a worker
 * starts them (a running one goes on: its answer fills the cache and goes to nobody, and
 * it counts against its uid's queue bound until it is done, so closing connections never
 * frees a user's share while the workers are still busy with its work). */
void idmapd_cancel_sweep(struct evloop *loop, struct evtimer *t, void *userdata)
{
	struct idmapd *d = userdata;
	struct idmapd_job *gone = NULL, **pp;

	evloop_timer_cancel(t);
	pthread_mutex_lock(&d->lock);
	for (pp = &d->queue_head; *pp;) {
		struct idmapd_job *j = *pp;

		if (!fetch_abandoned(j->f)) {
			pp = &j->next;
			continue;
		}
		*pp = j->next;
		d->queued--;
		j->next = gone;
		gone = j;
	}
	d->queue_tail = pp;
	pthread_mutex_unlock(&d->lock);

	while (gone) {
		struct idmapd_job *j = gone;
		struct idmapd_fetch *f = j->f;

		gone = j->next;
		idmapd_quota_dec(&d->quota, j->uid);
		d->st.cancelled++;
		evloop_timer_free(f->stale_timer);
		f->stale_timer = NULL;
		while (f->waiters) {
			struct idmapd_waiter *w = f->waiters;

			f->waiters = w->next;
			rpc_request_error(w->req, RPC_STATUS_SYSTEM_ERR); /* gone: only freed */
			free(w);
		}
		if (f->pinned && !f->orphan)
			(void)idmap_cache_unpin(d->cache, f->kind, f->key);
		idmapd_fetch_done(d->fetches, f);
		nfskeys_ctx_unref(j->ctx);
		free(j->key);
		free(j);
	}
}

/* A caller that cannot be served (out of memory). */
static void fail_caller(struct rpc_request *req, struct kquery *kq)
{
	if (kq)
		kquery_answer(kq, -ENOMEM, NULL, 0);
	else
		rpc_request_error(req, RPC_STATUS_SYSTEM_ERR);
}

static void add_waiter(struct idmapd *d, struct idmapd_fetch *f, struct rpc_request *req,
		       struct kquery *kq, unsigned flags)
{
	struct idmapd_waiter *w = calloc(1, sizeof(*w));

	if (!w) {
		fail_caller(req, kq);
		return;
	}
	w->req = req;
	w->kq = kq;
	w->flags = flags;
	w->next = f->waiters;
	f->waiters = w;
}

static void lookup_key(struct idmapd *d, uint32_t kind, const char *key, unsigned flags,
		       struct rpc_request *req, struct kquery *kq);

void idmapd_handle_lookup(struct idmapd *d, struct rpc_request *req, XDR *args)
{
	idmapd_lookup_args a = {};

	/* The key decodes into the daemon's buffer (xdr_string fills a given one, up to
	 * IDMAPD_KEY_MAX); a failed decode frees it (xdr_free), so it is then made anew.
	 * a.key is not read after a reply: replying may dispatch the connection's next call,
	 * which decodes into the same buffer. */
	if (!d->keybuf && !(d->keybuf = malloc(IDMAPD_KEY_MAX + 1))) {
		rpc_request_error(req, RPC_STATUS_SYSTEM_ERR);
		return;
	}
	a.key = d->keybuf;
	if (!rpc_args_decode(args, (xdrproc_t)xdr_idmapd_lookup_args, &a)) {
		d->keybuf = NULL;
		rpc_request_error(req, RPC_STATUS_GARBAGE_ARGS);
		return;
	}
	if (a.kind == 0 || a.kind >= _NFSKEYS_IDMAP_KIND_MAX || !a.key || !*a.key) {
		idmapd_lookup_res res = { .status = -EINVAL };

		d->st.lookups[LR_ERROR]++;
		idmapd_reply(d, IDMAPD_OP_LOOKUP, req, (xdrproc_t)xdr_idmapd_lookup_res, &res);
		return;
	}
	lookup_key(d, a.kind, a.key, a.flags, req, NULL);
	/* nothing to free: the key is d->keybuf */
}

void idmapd_kernel_lookup(void *userdata, struct kquery *q, uint32_t kind, const char *key,
			  bool nobody)
{
	/* a namespace with a configuration of its own: that engine, its answers apart */
	kind |= kquery_profile(q) << IDMAPD_KIND_PROFILE_SHIFT;
	lookup_key(userdata, kind, key, nobody ? IDMAPD_LOOKUP_NOBODY : 0, NULL, q);
}

/* One lookup of kind/key for a socket caller (req) or a kernel query (kq): from the cache
 * when fresh, else joined to (or starting) a fetch on the worker pool. */
static void lookup_key(struct idmapd *d, uint32_t kind, const char *key, unsigned flags,
		       struct rpc_request *req, struct kquery *kq)
{
	struct idmapd_entry e; /* not zeroed: the cache fills what its kind uses (a hit's cost) */
	struct idmapd_fetch *f = NULL;
	int64_t now = evloop_now(d->loop);
	uid_t uid = req ? req->peer.uid : 0; /* kernel queries: root's */
	bool have;

	e.kind = kind;
	e.key = key;
	have = idmap_cache_peek(d->cache, kind, key, now,
				(int64_t)d->set.stale_limit * USEC_PER_SEC, &e.m, &e.ans) == 1;
	if (have && now >= e.m.expires)
		f = idmapd_fetch_find(d->fetches, kind, key);
	if (have && (now < e.m.expires || (f && e.m.stale))) {
		/* Fresh (or known stale while a retry runs): answer from memory. */
		unsigned extra = IDMAPD_ANSWER_CACHED;

		if (e.m.positive && !e.m.stale && d->set.refresh_pct > 0 &&
		    e.m.hits >= d->set.refresh_hits &&
		    now >= e.m.fetched + (e.m.expires - e.m.fetched) * d->set.refresh_pct / 100 &&
		    !idmapd_fetch_find(d->fetches, kind, key)) {
			if (fetch_start(d, kind, key, true, false, uid, &f) == 0) {
				extra |= IDMAPD_ANSWER_REFRESHING;
				d->st.lookups[LR_REFRESH_AHEAD]++;
			}
		}
		answer_waiter(d, &e, req, kq, flags, extra,
			      e.m.stale ? LR_STALE : e.m.status ? LR_NEGATIVE_HIT : LR_HIT);
		return;
	}
	if (!f)
		f = idmapd_fetch_find(d->fetches, kind, key);
	if (!f && lookup_inline(d, kind, key, flags, req, kq))
		return;
	if (!f && queue_full(d, uid)) {
		d->st.queue_refused++;
		d->st.lookups[LR_ERROR]++;
		if (req) {
			idmapd_lookup_res res = { .status = -EAGAIN };

			idmapd_reply(d, IDMAPD_OP_LOOKUP, req, (xdrproc_t)xdr_idmapd_lookup_res,
				     &res);
		} else {
			kquery_answer(kq, -EAGAIN, NULL, 0);
		}
		return;
	}
	if (!f) {
		if (fetch_start(d, kind, key, false, kquery_will_prime(kq), uid, &f) < 0) {
			if (have) /* what we had, as before the fetch could not start */
				answer_waiter(d, &e, req, kq, flags, 0, LR_ERROR);
			else
				fail_caller(req, kq);
			return;
		}
	} else if (!f->refresh) {
		d->st.lookups[LR_COALESCED]++;
	}
	add_waiter(d, f, req, kq, flags);
	f->refresh = false; /* callers wait on this fetch now */
	/* An expired positive answer is served stale if the refetch is slow. */
	if (!f->stale_timer && have && stale_ok(d, &e, now))
		(void)evloop_add_timer(d->loop, f->start + d->set.stale_wait_ms * USEC_PER_MSEC,
				       stale_wait_fired, f, &f->stale_timer);
}

static void stale_wait_fired(struct evloop *loop, struct evtimer *t, void *userdata)
{
	struct idmapd *d = idmapd_instance;
	struct idmapd_fetch *f = userdata;
	struct idmapd_entry buf, *e;

	evloop_timer_free(t);
	f->stale_timer = NULL;
	e = fetch_entry(d, f, &buf);
	if (!stale_ok(d, e, evloop_now(loop)))
		return;
	daemon_log(LOG_NOTICE, "%s %s: backend slow; serving the stale answer",
		nfskeys_idmap_kind_to_string(IDMAPD_KIND_BASE(f->kind)), f->key);
	answer_all(d, f, e, IDMAPD_ANSWER_STALE, LR_STALE);
}

/* ---------------------------------------------------------------- other operations */

void idmapd_handle_ping(struct idmapd *d, struct rpc_request *req, XDR *args)
{
	idmapd_ping_res res = {
		.release = (char *)PACKAGE_VERSION,
		.pid = (unsigned)getpid(),
		.generation = d->generation,
		.uptime_ms = (evloop_now(d->loop) - d->start) / USEC_PER_MSEC,
	};

	idmapd_reply(d, IDMAPD_OP_PING, req, (xdrproc_t)xdr_idmapd_ping_res, &res);
}
