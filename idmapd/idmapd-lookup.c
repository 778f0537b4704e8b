/* nfskeys-idmapd lookups: answers from the shared cache, misses fetched on a small pool
 * of worker threads, refresh-ahead for hot entries and serve-stale through outages. */
#include <syslog.h>
#include <unistd.h>

#include "idmapd.h"
#include "rpc-args.h"

struct daemon *the_daemon;

/* ---------------------------------------------------------------- lookups */

static bool is_backend_failure(int r, const struct nfskeys_idmap_answer *a)
{
	int e = r < 0 ? r : ((a->flags & NFSKEYS_IDMAP_ANSWER_NOBODY) ? a->error : 0);

	return e < 0 && e != -ENOENT && e != -EINVAL && e != -EOPNOTSUPP && e != -ENOMEM;
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

/* Answer a kernel query (knfsd channel, client pipe) from an entry's current state. */
static void answer_kernel(struct daemon *d, struct idmapd_entry *e, struct kquery *kq,
			  unsigned lflags, enum lres result)
{
	int64_t left = e->expires - evloop_now(d->loop);
	int status = e->status;
	unsigned ttl;

	if (status == 0 && (e->ans.flags & NFSKEYS_IDMAP_ANSWER_NOBODY) &&
	    !(lflags & IDMAPD_LOOKUP_NOBODY))
		status = e->ans.error < 0 ? e->ans.error : -ENOENT;
	if (status == 0 && (e->ans.flags & NFSKEYS_IDMAP_ANSWER_NOBODY))
		result = result == LR_STALE ? LR_STALE : LR_NOBODY;
	else if (status < 0 && result != LR_NEGATIVE_HIT)
		result = LR_ERROR;
	d->st.lookups[result]++;
	ttl = e->stale ? d->set.stale_ttl
		       : left > 0 ? (unsigned)((left + USEC_PER_SEC - 1) / USEC_PER_SEC) : 1;
	if (daemon_log_level() >= LOG_DEBUG)
		daemon_log(LOG_DEBUG, "lookup %s %s for the kernel (%s): %s (%s)",
			nfskeys_idmap_kind_to_string(e->kind), e->key,
			kpath_src_name(kquery_source(kq)), status ? strerror(-status) : "ok",
			lres_names[result]);
	recent_note(d, e, recent_path_of(kq), NULL, status, result);
	kquery_answer(kq, status, status ? NULL : &e->ans, ttl);
}

/* Answer one caller from an entry's current state. */
static void answer_waiter(struct daemon *d, struct idmapd_entry *e, struct rpc_request *req,
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
	res.status = e->status;
	if (res.status == 0 && (e->ans.flags & NFSKEYS_IDMAP_ANSWER_NOBODY) &&
	    !(lflags & IDMAPD_LOOKUP_NOBODY))
		res.status = e->ans.error < 0 ? e->ans.error : -ENOENT;
	if (res.status == 0) {
		idmapd_answer *w = &res.idmapd_lookup_res_u.answer;
		int64_t left = e->expires - now;

		answer_to_wire(&e->ans, w, sidbuf);
		w->flags |= extra_flags;
		if (e->stale) {
			w->flags |= IDMAPD_ANSWER_STALE;
			w->ttl = d->set.stale_ttl;
		} else {
			w->ttl = left > 0 ? (uint32_t)((left + USEC_PER_SEC - 1) / USEC_PER_SEC) : 1;
		}
		if (e->ans.flags & NFSKEYS_IDMAP_ANSWER_NOBODY)
			result = result == LR_STALE ? LR_STALE : LR_NOBODY;
	} else if (result != LR_NEGATIVE_HIT) {
		result = LR_ERROR;
	}
	d->st.lookups[result]++;
	if (daemon_log_level() >= LOG_DEBUG)
		daemon_log(LOG_DEBUG, "lookup %s %s for pid %d uid %u: %s (%s)",
			nfskeys_idmap_kind_to_string(e->kind), e->key, (int)req->peer.pid,
			(unsigned)req->peer.uid, res.status ? strerror(-res.status) : "ok",
			lres_names[result]);
	recent_note(d, e, RP_SOCKET, req, res.status, result);
	reply(d, OP_LOOKUP, req, (xdrproc_t)xdr_idmapd_lookup_res, &res);
}

static void job_run(struct job *j)
{
	uint64_t t0 = mono_nsec();

	memset(&j->ans, 0, sizeof(j->ans));
	j->r = nfskeys_idmap_lookup_full(j->ctx, j->kind, j->key,
					 NFSKEYS_IDMAP_LOOKUP_NOBODY |
						 NFSKEYS_IDMAP_LOOKUP_NO_CACHE,
					 &j->ans);
	j->latency_ns = mono_nsec() - t0;
}

static void job_done(struct evloop *loop, void *userdata);

static void *worker_main(void *arg)
{
	struct daemon *d = arg;

	for (;;) {
		struct job *j;

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
		while (evloop_post(d->loop, job_done, j) < 0)
			usleep(1000); /* out of memory: retry rather than lose the callers */
	}
}

int pool_start(struct daemon *d, unsigned n)
{
	d->threads = calloc(n, sizeof(*d->threads));
	if (!d->threads)
		return -ENOMEM;
	for (unsigned i = 0; i < n; i++) {
		int r = pthread_create(&d->threads[i], NULL, worker_main, d);

		if (r)
			return -r;
		d->n_threads++;
	}
	return 0;
}

void pool_stop(struct daemon *d)
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
static bool queue_full(struct daemon *d, uid_t uid)
{
	return d->quota.total >= d->set.max_queue ||
	       (uid != 0 && idmapd_quota_get(&d->quota, uid) >= d->set.max_queue_user);
}

static int fetch_start(struct daemon *d, struct idmapd_entry *e, bool refresh, uid_t uid)
{
	struct job *j;

	if (queue_full(d, uid) || idmapd_quota_inc(&d->quota, uid) < 0)
		return -EAGAIN;
	j = calloc(1, sizeof(*j));
	if (!j) {
		idmapd_quota_dec(&d->quota, uid);
		return -ENOMEM;
	}
	j->uid = uid;
	j->key = strdup(e->key);
	if (!j->key) {
		idmapd_quota_dec(&d->quota, uid);
		free(j);
		return -ENOMEM;
	}
	j->d = d;
	j->ctx = nfskeys_ctx_ref(d->ctx);
	j->e = e;
	j->kind = e->kind;
	e->busy = true;
	idmapd_cache_pin(d->cache, e); /* until job_done has answered its callers */
	e->refresh = refresh;
	e->fetch_start = evloop_now(d->loop);
	pthread_mutex_lock(&d->lock);
	*d->queue_tail = j;
	d->queue_tail = &j->next;
	d->queued++;
	pthread_cond_signal(&d->cond);
	pthread_mutex_unlock(&d->lock);
	return 0;
}

/* A positive answer past expiry that may still be served while backends fail. */
static bool stale_ok(struct daemon *d, struct idmapd_entry *e, int64_t now)
{
	return d->set.stale_limit > 0 && e->have_answer && e->positive &&
	       now <= e->good_expires + (int64_t)d->set.stale_limit * USEC_PER_SEC;
}

static void answer_all(struct daemon *d, struct idmapd_entry *e, unsigned extra,
		       enum lres result)
{
	while (e->waiters) {
		struct idmapd_waiter *w = e->waiters;

		e->waiters = w->next;
		answer_waiter(d, e, w->req, w->kq, w->flags, extra, result);
		free(w);
	}
}

static void job_done(struct evloop *loop, void *userdata)
{
	struct job *j = userdata;
	struct daemon *d = j->d;
	struct idmapd_entry *e = j->e;
	int64_t now = evloop_now(loop);
	bool failed = is_backend_failure(j->r, &j->ans);
	struct backend_stats *b;

	idmapd_quota_dec(&d->quota, j->uid);
	b = backend_slot(d, failed ? "failed" : j->ans.backend[0] ? j->ans.backend : "none");
	b->requests++;
	b->failures += failed;
	stats_hist_add(&b->latency, j->latency_ns);

	e->busy = false;
	evloop_timer_free(e->stale_timer);
	e->stale_timer = NULL;
	if (failed && (e->refresh || stale_ok(d, e, now))) {
		/* Keep serving what we had: fresh until it expires (refresh-ahead), then stale
		 * until the limit, retrying every Stale-TTL seconds. */
		if (!e->refresh || now >= e->expires) {
			e->stale = true;
			e->expires = now + (int64_t)d->set.stale_ttl * USEC_PER_SEC;
		}
		daemon_log(LOG_NOTICE, "%s %s: backends failing (%s); serving the %s answer",
			nfskeys_idmap_kind_to_string(e->kind), e->key,
			strerror(-(j->r < 0 ? j->r : j->ans.error)),
			e->stale ? "stale" : "cached");
		answer_all(d, e, IDMAPD_ANSWER_STALE, LR_STALE);
	} else {
		unsigned ttl;

		e->have_answer = true;
		e->status = j->r;
		e->ans = j->ans;
		e->positive = j->r == 0 && !(j->ans.flags & NFSKEYS_IDMAP_ANSWER_NOBODY);
		e->stale = false;
		e->hits = 0;
		e->fetched = now;
		if (j->r == 0)
			ttl = j->ans.ttl;
		else if (failed)
			ttl = d->set.stale_ttl;
		else
			ttl = d->set.negative_ttl;
		if (failed && j->r == 0)
			ttl = MIN(ttl, d->set.stale_ttl);
		e->expires = now + (int64_t)ttl * USEC_PER_SEC;
		if (e->positive)
			e->good_expires = e->expires;
		answer_all(d, e, 0, LR_MISS);
	}
	idmapd_cache_unpin(d->cache, e); /* frees it when it was orphaned meanwhile */
	nfskeys_ctx_unref(j->ctx);
	free(j->key);
	free(j);
}

static void stale_wait_fired(struct evloop *loop, struct evtimer *t, void *userdata);

/* ---------------------------------------------------------------- gone callers */

void lookups_orphaned(void *userdata, uid_t uid, unsigned inflight)
{
	struct daemon *d = userdata;

	/* Called from inside the RPC server, maybe from a reply in answer_all: the queue is
	 * swept from the loop instead, once for any number of closes. */
	if (!d->stopping && d->cancel_timer)
		evloop_timer_set(d->cancel_timer, 0);
}

/* Whether anybody still waits for this entry's fetch: a kernel query, or a socket call
 * whose connection is open.  A refresh-ahead (no waiters) is kept: it serves the cache. */
static bool entry_abandoned(const struct idmapd_entry *e)
{
	if (!e->waiters)
		return false;
	for (const struct idmapd_waiter *w = e->waiters; w; w = w->next)
		if (w->kq || rpc_request_connected(w->req))
			return false;
	return true;
}

/* Lookups queued for the workers whose every caller has gone are dropped before a worker
 * starts them (a running one goes on: its answer fills the cache and goes to nobody, and
 * it counts against its uid's queue bound until it is done, so closing connections never
 * frees a user's share while the workers are still busy with its work). */
void cancel_sweep(struct evloop *loop, struct evtimer *t, void *userdata)
{
	struct daemon *d = userdata;
	struct job *gone = NULL, **pp;

	evloop_timer_cancel(t);
	pthread_mutex_lock(&d->lock);
	for (pp = &d->queue_head; *pp;) {
		struct job *j = *pp;

		if (!entry_abandoned(j->e)) {
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
		struct job *j = gone;
		struct idmapd_entry *e = j->e;

		gone = j->next;
		idmapd_quota_dec(&d->quota, j->uid);
		d->st.cancelled++;
		e->busy = false;
		evloop_timer_free(e->stale_timer);
		e->stale_timer = NULL;
		while (e->waiters) {
			struct idmapd_waiter *w = e->waiters;

			e->waiters = w->next;
			rpc_request_error(w->req, RPC_STATUS_SYSTEM_ERR); /* gone: only freed */
			free(w);
		}
		/* a new entry never fetched holds nothing worth caching */
		if (!e->have_answer && !e->orphan)
			idmapd_cache_drop(d->cache, e);
		idmapd_cache_unpin(d->cache, e);
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

static void add_waiter(struct daemon *d, struct idmapd_entry *e, struct rpc_request *req,
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
	w->next = e->waiters;
	e->waiters = w;
}

static void lookup_key(struct daemon *d, uint32_t kind, const char *key, unsigned flags,
		       struct rpc_request *req, struct kquery *kq);

void do_lookup(struct daemon *d, struct rpc_request *req, XDR *args)
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
		reply(d, OP_LOOKUP, req, (xdrproc_t)xdr_idmapd_lookup_res, &res);
		return;
	}
	lookup_key(d, a.kind, a.key, a.flags, req, NULL);
	/* nothing to free: the key is d->keybuf */
}

void kernel_lookup(void *userdata, struct kquery *q, uint32_t kind, const char *key, bool nobody)
{
	lookup_key(userdata, kind, key, nobody ? IDMAPD_LOOKUP_NOBODY : 0, NULL, q);
}

/* One lookup of kind/key for a socket caller (req) or a kernel query (kq): from the cache
 * when fresh, else joined to (or starting) a fetch on the worker pool. */
static void lookup_key(struct daemon *d, uint32_t kind, const char *key, unsigned flags,
		       struct rpc_request *req, struct kquery *kq)
{
	struct idmapd_entry *e;
	int64_t now = evloop_now(d->loop);
	uid_t uid = req ? req->peer.uid : 0; /* kernel queries: root's */
	int r;

	e = idmapd_cache_find(d->cache, kind, key);
	if (e && e->have_answer && (now < e->expires || (e->busy && e->stale))) {
		/* Fresh (or known stale while a retry runs): answer from memory. */
		unsigned extra = IDMAPD_ANSWER_CACHED;

		e->hits++;
		if (e->positive && !e->busy && !e->stale && d->set.refresh_pct > 0 &&
		    e->hits >= d->set.refresh_hits &&
		    now >= e->fetched + (e->expires - e->fetched) * d->set.refresh_pct / 100) {
			if (fetch_start(d, e, true, uid) == 0) {
				extra |= IDMAPD_ANSWER_REFRESHING;
				d->st.lookups[LR_REFRESH_AHEAD]++;
			}
		}
		answer_waiter(d, e, req, kq, flags, extra,
			      e->stale ? LR_STALE : e->status ? LR_NEGATIVE_HIT : LR_HIT);
		return;
	}
	if ((!e || !e->busy) && queue_full(d, uid)) {
		d->st.queue_refused++;
		d->st.lookups[LR_ERROR]++;
		if (req) {
			idmapd_lookup_res res = { .status = -EAGAIN };

			reply(d, OP_LOOKUP, req, (xdrproc_t)xdr_idmapd_lookup_res, &res);
		} else {
			kquery_answer(kq, -EAGAIN, NULL, 0);
		}
		return;
	}
	if (!e) {
		r = idmapd_cache_add(d->cache, kind, key, &e);
		if (r < 0) {
			fail_caller(req, kq);
			return;
		}
	} else if (e->busy && !e->refresh) {
		d->st.lookups[LR_COALESCED]++;
	}
	add_waiter(d, e, req, kq, flags);
	if (!e->busy && fetch_start(d, e, false, uid) < 0) {
		answer_all(d, e, 0, LR_ERROR);
		return;
	}
	e->refresh = false; /* callers wait on this fetch now */
	/* An expired positive answer is served stale if the refetch is slow. */
	if (!e->stale_timer && stale_ok(d, e, now))
		(void)evloop_add_timer(d->loop, e->fetch_start + d->set.stale_wait_ms * USEC_PER_MSEC,
				       stale_wait_fired, e, &e->stale_timer);
}

static void stale_wait_fired(struct evloop *loop, struct evtimer *t, void *userdata)
{
	struct daemon *d = the_daemon;
	struct idmapd_entry *e = userdata;

	evloop_timer_free(t);
	e->stale_timer = NULL;
	if (!stale_ok(d, e, evloop_now(loop)))
		return;
	daemon_log(LOG_NOTICE, "%s %s: backend slow; serving the stale answer",
		nfskeys_idmap_kind_to_string(e->kind), e->key);
	answer_all(d, e, IDMAPD_ANSWER_STALE, LR_STALE);
}

/* ---------------------------------------------------------------- other operations */

void do_ping(struct daemon *d, struct rpc_request *req)
{
	idmapd_ping_res res = {
		.release = (char *)PACKAGE_VERSION,
		.pid = (unsigned)getpid(),
		.generation = d->generation,
		.uptime_ms = (evloop_now(d->loop) - d->start) / USEC_PER_MSEC,
	};

	reply(d, OP_PING, req, (xdrproc_t)xdr_idmapd_ping_res, &res);
}
