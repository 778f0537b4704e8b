/* The workers of nfskeys-attrd's sub-mounts: one job per server, each on a copy of that
 * server's entries in a detached thread, at most MOUNTS_MAX_WORKERS at once.  A server
 * that stops answering holds its own worker only: the other servers' sub-mounts go on,
 * and its own change waits until its worker returns (the entries it holds are busy). */
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "attrd-mounts-private.h"
#include "evloop.h"
#include "macros.h"
#include "nfskeys-attr-daemon.h"
#include "thread-util.h"
#include "time-util.h"

/* A job that waits this long on the kernel is worth a word in the log (once). */
#define SLOW_JOB_USEC (10 * USEC_PER_SEC)

static void entries_free(struct mentry *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		mounts_entry_done(&v[i]);
	free(v);
}

static char *dup_or_null(const char *s, bool *ok)
{
	char *d = s ? strdup(s) : NULL;

	if (s && !d)
		*ok = false;
	return d;
}

static bool same_str(const char *a, const char *b)
{
	return (!a && !b) || (a && b && streq(a, b));
}

static bool of_server(const struct mentry *e, const char *server)
{
	return streq(mounts_server_name(e->server), server);
}

/* A deep copy of the loop's entries of one server (not busy ones) for its worker. */
static int entries_copy(const struct mentry *v, size_t n, const char *server, struct mentry **ret,
			size_t *ret_n)
{
	struct mentry *c;
	size_t k = 0;
	bool ok = true;

	for (size_t i = 0; i < n; i++)
		k += !v[i].busy && of_server(&v[i], server);
	c = k ? calloc(k, sizeof(*c)) : NULL;
	if (k && !c)
		return -ENOMEM;
	k = 0;
	for (size_t i = 0; i < n; i++) {
		const struct mentry *e = &v[i];
		struct mentry *d;

		if (e->busy || !of_server(e, server))
			continue;
		d = &c[k++];
		*d = (struct mentry){ .parent_id = e->parent_id,
				      .mnt_attr = e->mnt_attr,
				      .n_ids = e->n_ids,
				      .state = e->state,
				      .since = e->since,
				      .wanted = e->wanted,
				      .cifs = e->cifs,
				      .orphan = e->orphan };
		d->handles = dup_or_null(e->handles, &ok);
		d->setters = dup_or_null(e->setters, &ok);
		d->blocked = dup_or_null(e->blocked, &ok);
		d->target = dup_or_null(e->target, &ok);
		d->source = dup_or_null(e->source, &ok);
		d->fstype = dup_or_null(e->fstype, &ok);
		d->options = dup_or_null(e->options, &ok);
		d->applied = dup_or_null(e->applied, &ok);
		d->base = dup_or_null(e->base, &ok);
		d->parent_mp = dup_or_null(e->parent_mp, &ok);
		d->server = dup_or_null(e->server, &ok);
		d->error = dup_or_null(e->error, &ok);
		if (e->n_ids) {
			d->ids = malloc(e->n_ids * sizeof(*d->ids));
			if (d->ids)
				memcpy(d->ids, e->ids, e->n_ids * sizeof(*d->ids));
			else
				ok = false;
		}
	}
	if (!ok) {
		entries_free(c, k);
		return -ENOMEM;
	}
	*ret = c;
	*ret_n = k;
	return 0;
}

static void job_free(struct mjob *j)
{
	if (!j)
		return;
	entries_free(j->s.v, j->s.n);
	nfskeys_ctx_unref(j->s.ctx);
	free(j->server);
	pthread_mutex_destroy(&j->lock);
	free(j);
}

static void job_at(struct mjob *j, const char *target)
{
	pthread_mutex_lock(&j->lock);
	j->current = target;
	pthread_mutex_unlock(&j->lock);
}

static void job_done(struct evloop *loop, void *userdata);
static void job_progress(struct evloop *loop, void *userdata);

/* One entry's kernel side as a job left it, on its way to the loop (job_progress()). */
struct mprogress {
	struct attrd_mounts *m;
	struct mentry d;
};

static void progress_free(void *userdata)
{
	struct mprogress *p = userdata;

	if (!p)
		return;
	mounts_entry_done(&p->d);
	free(p);
}

/* What the kernel side of e was before the worker touched it: a change is reported. */
struct mbefore {
	size_t n_ids;
	unsigned top;
	char *applied;
};

static void before_take(struct mbefore *b, const struct mentry *e)
{
	b->n_ids = e->n_ids;
	b->top = e->n_ids ? e->ids[e->n_ids - 1] : 0;
	b->applied = e->applied ? strdup(e->applied) : NULL;
}

/* The worker made or removed a mount at e (or changed its options): the loop records it
 * and saves the state file now, not when the job returns, so that a daemon killed while
 * a later target of this server hangs still adopts this mount after a restart.  Best
 * effort: for want of memory the job's return carries it as before. */
static void report_progress(struct mjob *j, const struct mentry *e, struct mbefore *b)
{
	struct mprogress *p = NULL;
	bool ok = true;

	if (b->n_ids == e->n_ids && b->top == (e->n_ids ? e->ids[e->n_ids - 1] : 0) &&
	    same_str(b->applied, e->applied))
		goto out;
	p = calloc(1, sizeof(*p));
	if (!p)
		goto out;
	p->m = j->m;
	p->d = (struct mentry){
		.n_ids = e->n_ids, .state = e->state, .since = e->since, .orphan = e->orphan
	};
	p->d.target = dup_or_null(e->target, &ok);
	p->d.options = dup_or_null(e->options, &ok);
	p->d.applied = dup_or_null(e->applied, &ok);
	p->d.error = dup_or_null(e->error, &ok);
	if (e->n_ids) {
		p->d.ids = malloc(e->n_ids * sizeof(*p->d.ids));
		if (p->d.ids)
			memcpy(p->d.ids, e->ids, e->n_ids * sizeof(*p->d.ids));
		else
			ok = false;
	}
	/* under the lock: once orphaned (the daemon stops) nothing more is posted */
	pthread_mutex_lock(&j->lock);
	if (ok && !j->orphaned && evloop_post_owned(j->loop, job_progress, p, progress_free) == 0)
		p = NULL;
	pthread_mutex_unlock(&j->lock);
	progress_free(p);
out:
	free(b->applied);
	b->applied = NULL;
}

/* The kernel's part of an apply, on the copy: our mounts no policy wants any more go
 * (deepest first, the table is sorted), then every wanted one is made or checked; each
 * mount made or removed is reported to the loop at once. */
static void *worker_main(void *arg)
{
	struct mjob *j = arg;
	struct mset *s = &j->s;
	struct evloop *loop = j->loop;
	struct mbefore b;

	for (size_t i = s->n; i-- > 0;) {
		if (!s->v[i].wanted && s->v[i].n_ids) {
			job_at(j, s->v[i].target);
			before_take(&b, &s->v[i]);
			mounts_remove_mounts(s, &s->v[i],
					     s->v[i].orphan ? "its directory was renamed: "
							      "the mount moved away from "
							      "where its policy is" :
							      "its policy no longer asks for it");
			report_progress(j, &s->v[i], &b);
		}
	}
	for (size_t i = 0; i < s->n; i++) {
		if (s->v[i].wanted) {
			job_at(j, s->v[i].target);
			before_take(&b, &s->v[i]);
			mounts_ensure(s, &s->v[i]);
			report_progress(j, &s->v[i], &b);
		}
	}
	pthread_mutex_lock(&j->lock);
	j->current = NULL;
	if (j->orphaned) {
		pthread_mutex_unlock(&j->lock);
		/* nfskeys-attrd is stopping: nobody waits for the result.  The context's
		 * count is the loop thread's to change: its reference is left behind. */
		j->s.ctx = NULL;
		job_free(j);
		return NULL;
	}
	/* under the lock, which job_done() takes before it frees the job: the loop may run
	 * it before this thread is out.  A post fails only for want of memory, and the
	 * loop waits for this job: retry. */
	while (evloop_post(loop, job_done, j) < 0)
		sleep(1);
	j->posted = true;
	pthread_mutex_unlock(&j->lock);
	return NULL;
}

/* The kernel side of a worker's entry d into the loop's e: our mounts, their options and
 * the outcome, unless the policy changed meanwhile (then the loop's 'pending' stays and
 * the next job applies the change). */
static void merge_kernel_side(struct mentry *e, struct mentry *d)
{
	free(e->ids);
	e->ids = TAKE_PTR(d->ids);
	e->n_ids = d->n_ids;
	d->n_ids = 0;
	free(e->applied);
	e->applied = TAKE_PTR(d->applied);
	if (same_str(e->options, d->options)) {
		e->state = d->state;
		free(e->error);
		e->error = TAKE_PTR(d->error);
		e->since = d->since;
	}
}

/* The worker's result for entry d goes back into the loop's table. */
static void merge_entry(struct attrd_mounts *m, struct mentry *d, uint64_t gen)
{
	struct mentry *e = d->orphan ? mounts_orphan_find(m, d->target) :
				       mounts_entry_find(m, d->target);

	/* busy entries are never dropped from the table; only memory can fail here */
	if (!e && !(e = mounts_entry_add(m, d->target)))
		return;
	e->orphan = d->orphan;
	merge_kernel_side(e, d);
	if (!e->parent_mp && d->parent_mp) {
		e->parent_mp = TAKE_PTR(d->parent_mp);
		e->parent_id = d->parent_id;
	}
	e->seen = gen;
	e->busy = false;
}

/* On the loop: a mount a running job made or removed.  Its entry stays busy (the job's
 * return has the last word); the table knows the mount from now on (mounts_ours(): never
 * taken for a parent) and the state file lists it. */
static void job_progress(struct evloop *loop, void *userdata)
{
	struct mprogress *p = userdata;
	struct mentry *e = p->d.orphan ? mounts_orphan_find(p->m, p->d.target) :
					 mounts_entry_find(p->m, p->d.target);

	(void)loop;
	/* posts run in order: the job's own return, which comes after, clears busy */
	if (e && e->busy) {
		merge_kernel_side(e, &p->d);
		mounts_state_save(p->m);
	}
	progress_free(p);
}

static void job_unlink(struct attrd_mounts *m, struct mjob *j)
{
	for (struct mjob **p = &m->jobs; *p; p = &(*p)->next) {
		if (*p == j) {
			*p = j->next;
			m->n_jobs--;
			return;
		}
	}
}

/* Back on the loop: the worker's entries go back into the table, the table is saved,
 * and whatever waits (this server's change, servers without a worker) gets its job. */
static void job_done(struct evloop *loop, void *userdata)
{
	struct mjob *j = userdata;
	struct attrd_mounts *m = j->m;

	(void)loop;
	/* the worker posted under the job's lock: once it is free the worker is gone */
	pthread_mutex_lock(&j->lock);
	pthread_mutex_unlock(&j->lock);
	job_unlink(m, j);
	for (size_t i = 0; i < j->s.n; i++)
		merge_entry(m, &j->s.v[i], j->gen);
	evloop_timer_free(j->slow);
	job_free(j);
	mounts_state_save(m);
	m->job_back(m);
}

static void on_slow(struct evloop *loop, struct evtimer *t, void *userdata)
{
	struct mjob *j = userdata;
	_cleanup_free_ char *at = NULL;

	(void)t;
	pthread_mutex_lock(&j->lock);
	at = j->current ? strdup(j->current) : NULL;
	pthread_mutex_unlock(&j->lock);
	log_warning(j->m->ctx,
		    "sub-mounts of server %s: the kernel has not answered for %lld s "
		    "(at %s; is the server down?); nfskeys-attrd goes on serving, the "
		    "sub-mounts of this server wait, other servers' go on",
		    *j->server ? j->server : "(no address)",
		    (long long)((evloop_now(loop) - j->started) / USEC_PER_SEC), at ? at : "?");
}

static int job_start(struct attrd_mounts *m, const char *server)
{
	struct mjob *j = calloc(1, sizeof(*j));
	int r;

	if (!j)
		return -ENOMEM;
	pthread_mutex_init(&j->lock, NULL);
	j->m = m;
	j->loop = m->loop;
	j->gen = m->gen;
	j->started = evloop_now(m->loop);
	j->s.ctx = nfskeys_ctx_ref(m->ctx);
	j->s.admin_gid = m->admin_gid;
	j->s.have_admin = m->have_admin;
	j->server = strdup(server);
	r = j->server ? entries_copy(m->v, m->n, server, &j->s.v, &j->s.n) : -ENOMEM;
	if (r < 0) {
		job_free(j);
		return r;
	}
	r = thread_start_detached(worker_main, j);
	if (r < 0) {
		job_free(j);
		return r;
	}
	/* from here the worker owns the kernel side of these entries */
	for (size_t i = 0; i < m->n; i++)
		if (!m->v[i].busy && of_server(&m->v[i], server))
			m->v[i].busy = true;
	j->next = m->jobs;
	m->jobs = j;
	m->n_jobs++;
	(void)evloop_add_timer(m->loop, j->started + SLOW_JOB_USEC, on_slow, j, &j->slow);
	return 0;
}

/* A job for each server with work (an entry not yet covered at this generation) that has
 * no worker, as long as workers are free; the rest get theirs when a worker returns. */
void mounts_jobs_start(struct attrd_mounts *m)
{
	_cleanup_free_ const char **server = calloc(m->n + 1, sizeof(*server));
	_cleanup_free_ const char **start = calloc(m->n + 1, sizeof(*start));
	_cleanup_free_ const char **running = calloc(m->n_jobs + 1, sizeof(*running));
	_cleanup_free_ bool *need = calloc(m->n + 1, sizeof(*need));
	_cleanup_free_ uint64_t *seen = calloc(m->n + 1, sizeof(*seen));
	size_t k = 0, r_n = 0;
	bool waiting = false;

	if (!server || !start || !running || !need || !seen) {
		log_err(m->ctx, "sub-mounts: out of memory; retrying at the next change");
		return;
	}
	for (struct mjob *j = m->jobs; j; j = j->next)
		running[r_n++] = j->server;
	for (size_t i = 0; i < m->n; i++) {
		server[i] = m->v[i].server;
		need[i] = !m->v[i].busy && m->v[i].seen < m->gen;
		seen[i] = m->v[i].seen;
	}
	k = mounts_plan(server, need, seen, m->n, running, r_n, MOUNTS_MAX_WORKERS, start,
			&waiting);
	/* start[] points into the entries, which job_start() leaves in place */
	for (size_t i = 0; i < k; i++) {
		int r = job_start(m, start[i]);

		if (r < 0)
			log_err(m->ctx,
				"sub-mounts of server %s: cannot start a worker: %s; "
				"retrying at the next change",
				*start[i] ? start[i] : "(no address)", strerror(-r));
	}
	if (waiting)
		log_info(m->ctx, "sub-mounts: %zu workers busy, the other servers wait for one",
			 m->n_jobs);
}

/* nfskeys-attrd stops: never wait for a worker stuck on a dead server, it frees its own
 * job; one already posted never runs (the loop is stopping) and is freed here. */
void mounts_jobs_orphan(struct attrd_mounts *m)
{
	while (m->jobs) {
		struct mjob *j = m->jobs;
		bool posted;

		m->jobs = j->next;
		m->n_jobs--;
		evloop_timer_free(j->slow);
		j->slow = NULL;
		pthread_mutex_lock(&j->lock);
		posted = j->posted;
		j->orphaned = !posted;
		pthread_mutex_unlock(&j->lock);
		if (posted)
			job_free(j);
	}
}
