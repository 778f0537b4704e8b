/* nfskeys-idmapd: the ID-mapping system service (DESIGN.md §5).  One event-loop thread
 * answers every client from one shared cache; misses go to a small pool of worker
 * threads running the libnfskeys engine, so a slow backend never delays cached answers.
 * Refresh-ahead keeps hot entries warm; serve-stale bridges backend outages. */
#include <getopt.h>
#include <inttypes.h>
#include <keyutils.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <syslog.h>
#ifdef HAVE_SYSTEMD
#include <systemd/sd-daemon.h>
#endif

#include "cli.h"
#include "evloop.h"
#include "idmapd-cache.h"
#include "idmapd-client.h"
#include "idmapd-quota.h"
#include "log-escape.h"
#include "macros.h"
#include "nfskeys.h"
#include "rpc-args.h"
#include "rpc-server.h"
#include "stats.h"
#include "time-util.h"
#include "unix-socket.h"
/* after macros.h: <rpc/rpc.h> redefines MIN/MAX silently in its system header */
#include "idmap.h"

/* Exit codes (documented in nfskeys-idmapd(8)). */
enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2, EXIT_CONFIG = 3, EXIT_SOCKET = 4 };

#define MAX_BACKENDS 16

/* [Idmapd] settings; see nfskeys-idmapd(8). */
struct settings {
	char socket[UNIX_PATH_MAX_LEN + 1];
	unsigned workers;
	unsigned cache_size;
	unsigned negative_ttl;   /* s, cached errors of id -> name lookups */
	unsigned refresh_pct;    /* refresh-ahead after this % of the TTL; 0 = off */
	unsigned refresh_hits;   /* ... for entries hit at least this often */
	unsigned stale_limit;    /* s past expiry a positive answer may be served; 0 = off */
	unsigned stale_ttl;      /* s, TTL of stale answers and retry period while failing */
	unsigned stale_wait_ms;  /* wait this long for a refetch before answering stale */
	unsigned max_clients;
	unsigned max_request;
	unsigned max_inflight;
	unsigned idle_timeout;   /* s */
	unsigned max_clients_user; /* connections per uid (root exempt) */
	unsigned max_queue;      /* lookups queued or running for the workers, in all */
	unsigned max_queue_user; /* ... for one uid (root exempt) */
	char keyrings[256];      /* kernel keyrings cleared on flush/reload */
};

enum op { OP_NULL, OP_PING, OP_LOOKUP, OP_FLUSH, OP_STATS, OP_RELOAD, _OP_MAX };
static const char *const op_names[_OP_MAX] = { "null", "ping", "lookup", "flush", "stats",
					       "reload" };

enum lres { LR_HIT, LR_MISS, LR_NEGATIVE_HIT, LR_STALE, LR_COALESCED, LR_REFRESH_AHEAD,
	    LR_NOBODY, LR_ERROR, _LR_MAX };
static const char *const lres_names[_LR_MAX] = { "hit", "miss", "negative_hit", "stale",
						 "coalesced", "refresh_ahead", "nobody", "error" };

struct backend_stats {
	char name[NFSKEYS_IDMAP_BACKEND_MAX];
	uint64_t requests, failures;
	struct stats_hist latency;
};

struct daemon_stats {
	uint64_t requests[_OP_MAX];
	struct stats_hist latency[_OP_MAX];
	uint64_t denied[_OP_MAX];
	uint64_t lookups[_LR_MAX];
	struct backend_stats backends[MAX_BACKENDS];
	size_t n_backends;
	uint64_t flushes, keyrings_cleared, reloads, reload_failures;
	uint64_t queue_refused;  /* lookups refused: the worker queue bound (issue 21) */
};

struct job;
struct reload_job;
struct reload_waiter;

struct daemon {
	struct evloop *loop;
	struct rpc_server *srv;
	struct nfskeys_ctx *ctx; /* current configuration; jobs hold their own reference */
	const char *conf_arg;
	const char *socket_arg;
	uint64_t generation;
	struct settings set;
	struct idmapd_cache *cache;
	struct idmapd_quota quota; /* worker jobs per uid (loop thread) */
	struct daemon_stats st;
	char *keybuf; /* lookup keys decode here: no allocation per lookup (do_lookup) */
	int64_t start;
	bool foreground, debug, stopping;

	/* reload: the new configuration is built in a thread of its own and swapped in on
	 * the loop thread (reload_done); requests go on being answered meanwhile. */
	struct reload_job *reload;             /* the one running, NULL when none */
	bool reload_again;                     /* asked for while running: once more after */
	struct reload_waiter *reload_waiting;  /* RELOAD callers of the running one */
	struct reload_waiter *reload_next;     /* RELOAD callers of the one after */

	/* worker pool */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct job *queue_head, **queue_tail;
	size_t queued;
	bool pool_stop;
	pthread_t *threads;
	size_t n_threads;
};

/* The one daemon of this process, for timer callbacks that carry an entry. */
static struct daemon *the_daemon;

struct idmapd_waiter {
	struct rpc_request *req;
	unsigned flags; /* IDMAPD_LOOKUP_* */
	struct idmapd_waiter *next;
};

struct job {
	struct job *next;
	struct daemon *d;
	struct nfskeys_ctx *ctx;
	struct idmapd_entry *e;
	uid_t uid;               /* whose lookup started it (idmapd_quota) */
	uint32_t kind;
	char *key;
	int r;
	struct nfskeys_idmap_answer ans;
	uint64_t latency_ns;
};

/* ---------------------------------------------------------------- logging */

static bool log_to_stderr = true;
static int log_level = LOG_INFO;

static void vlog_msg(int prio, const char *fmt, va_list ap)
{
	char line[LOG_LINE_MAX];

	if (prio > log_level)
		return;
	log_vformat(line, sizeof(line), fmt, ap); /* keys and paths are the callers' text */
	if (log_to_stderr)
		fprintf(stderr, "nfskeys-idmapd: %s\n", line);
	else
		syslog(prio, "%s", line);
}

static void _printf_(2, 3) log_msg(int prio, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog_msg(prio, fmt, ap);
	va_end(ap);
}

/* The RPC transport's messages (clients refused, out of descriptors). */
static void rpc_log(void *userdata, int priority, const char *message)
{
	log_msg(priority, "%s", message);
}

/* While load_ctx() runs in a thread, the library's last error there (it names the bad
 * setting or backend), so that the reload's answer can say what is wrong. */
static __thread char *lib_error;
static __thread size_t lib_error_size;

/* The library's messages go the same way as ours. */
static void lib_log(void *userdata, int prio, const char *file, int line, const char *fn,
		    const char *fmt, va_list ap)
{
	if (lib_error && prio <= LOG_ERR) {
		va_list aq;

		va_copy(aq, ap);
		vsnprintf(lib_error, lib_error_size, fmt, aq);
		va_end(aq);
	}
	vlog_msg(prio, fmt, ap);
}

static void notify(const char *state)
{
#ifdef HAVE_SYSTEMD
	sd_notify(0, state);
#endif
	log_msg(LOG_DEBUG, "notify: %s", state);
}

/* ---------------------------------------------------------------- settings */

static int conf_uint(struct nfskeys_ctx *ctx, const char *key, unsigned min, unsigned max,
		     unsigned *val, char *err, size_t errlen)
{
	int64_t v;
	int r = nfskeys_conf_get_int(ctx, "Idmapd", key, min, max, &v);

	if (r == -ENOENT)
		return 0;
	if (r < 0) {
		snprintf(err, errlen, "[Idmapd] %s: expected a number from %u to %u", key, min,
			 max);
		return -EINVAL;
	}
	*val = (unsigned)v;
	return 0;
}

static int settings_load(struct nfskeys_ctx *ctx, const char *socket_arg, struct settings *ret,
			 char *err, size_t errlen)
{
	struct settings s = {
		.workers = 4,
		.cache_size = 65536,
		.negative_ttl = 60,
		.refresh_pct = 80,
		.refresh_hits = 2,
		.stale_limit = 3600,
		.stale_ttl = 30,
		.stale_wait_ms = 500,
		.max_clients = 1024,
		.max_request = 4096,
		.max_inflight = 16,
		.idle_timeout = 30,
		.max_clients_user = 64,
		.max_queue = 4096,
		.max_queue_user = 64,
	};
	const char *v;
	int r;

	v = idmapd_socket_path(ctx, socket_arg);
	if (strlen(v) > UNIX_PATH_MAX_LEN) {
		snprintf(err, errlen, "socket path too long (%zu > %d bytes): %s", strlen(v),
			 UNIX_PATH_MAX_LEN, v);
		return -ENAMETOOLONG;
	}
	snprintf(s.socket, sizeof(s.socket), "%s", v);
	v = nfskeys_conf_get(ctx, "Idmapd", "Kernel-Keyrings");
	snprintf(s.keyrings, sizeof(s.keyrings), "%s", v ? v : ".id_resolver .cifs_idmap");
	if ((r = conf_uint(ctx, "Workers", 1, 64, &s.workers, err, errlen)) < 0 ||
	    (r = conf_uint(ctx, "Cache-Size", 1, 1 << 24, &s.cache_size, err, errlen)) < 0 ||
	    (r = conf_uint(ctx, "Negative-TTL", 0, 86400, &s.negative_ttl, err, errlen)) < 0 ||
	    (r = conf_uint(ctx, "Refresh-Ahead", 0, 99, &s.refresh_pct, err, errlen)) < 0 ||
	    (r = conf_uint(ctx, "Refresh-Hits", 1, 1 << 30, &s.refresh_hits, err, errlen)) < 0 ||
	    (r = conf_uint(ctx, "Stale-Limit", 0, 7 * 86400, &s.stale_limit, err, errlen)) < 0 ||
	    (r = conf_uint(ctx, "Stale-TTL", 1, 86400, &s.stale_ttl, err, errlen)) < 0 ||
	    (r = conf_uint(ctx, "Stale-Wait", 0, 60000, &s.stale_wait_ms, err, errlen)) < 0 ||
	    (r = conf_uint(ctx, "Max-Clients", 1, 65536, &s.max_clients, err, errlen)) < 0 ||
	    (r = conf_uint(ctx, "Max-Request", 64, 1 << 20, &s.max_request, err, errlen)) < 0 ||
	    (r = conf_uint(ctx, "Max-Inflight", 1, 1024, &s.max_inflight, err, errlen)) < 0 ||
	    (r = conf_uint(ctx, "Idle-Timeout", 1, 86400, &s.idle_timeout, err, errlen)) < 0 ||
	    (r = conf_uint(ctx, "Max-Clients-Per-User", 1, 65536, &s.max_clients_user, err,
			   errlen)) < 0 ||
	    (r = conf_uint(ctx, "Max-Queue", 1, 1 << 20, &s.max_queue, err, errlen)) < 0 ||
	    (r = conf_uint(ctx, "Max-Queue-Per-User", 1, 1 << 20, &s.max_queue_user, err,
			   errlen)) < 0)
		return r;
	*ret = s;
	return 0;
}

/* A new context from the configuration, with the engine initialized (backends loaded,
 * domain found) so that a broken configuration fails here and not on first use. */
static int load_ctx(struct daemon *d, struct nfskeys_ctx **ret_ctx, struct settings *ret_set,
		    char *err, size_t errlen)
{
	struct nfskeys_ctx *ctx = NULL;
	struct settings s;
	const char *domain;
	char why[256] = "";
	int r;

	lib_error = why;
	lib_error_size = sizeof(why);
	r = nfskeys_ctx_new_full(d->conf_arg, lib_log, NULL, &ctx);
	if (r < 0) {
		snprintf(err, errlen, "cannot load configuration %s: %s%s%s%s",
			 d->conf_arg ? d->conf_arg : "(default)", strerror(-r),
			 why[0] ? " (" : "", why, why[0] ? ")" : "");
		goto out;
	}
	nfskeys_ctx_set_log_priority(ctx, d->debug ? LOG_DEBUG : LOG_WARNING);
	r = settings_load(ctx, d->socket_arg, &s, err, errlen);
	if (r < 0)
		goto out;
	r = nfskeys_idmap_get_domain(ctx, &domain, NULL);
	if (r < 0) {
		snprintf(err, errlen, "ID-mapping configuration in %s is not usable: %s%s%s%s",
			 nfskeys_ctx_get_conf_path(ctx), strerror(-r), why[0] ? " (" : "", why,
			 why[0] ? ")" : "");
		goto out;
	}
	*ret_ctx = TAKE_PTR(ctx);
	*ret_set = s;
out:
	lib_error = NULL;
	nfskeys_ctx_unref(ctx);
	return r;
}

/* ---------------------------------------------------------------- kernel keyrings */

/* Clear the kernel's cached mapping keys so a changed configuration applies at once.
 * Returns the number of keyrings cleared. */
static unsigned clear_kernel_keyrings(struct daemon *d)
{
	char buf[sizeof(d->set.keyrings)], *save = NULL;
	unsigned n = 0;

	snprintf(buf, sizeof(buf), "%s", d->set.keyrings);
	for (char *name = strtok_r(buf, " \t,", &save); name; name = strtok_r(NULL, " \t,", &save)) {
		int32_t serial;
		int r = nfskeys_key_possess_keyring(name, &serial);

		if (r < 0) {
			log_msg(LOG_DEBUG, "keyring %s: %s", name, strerror(-r));
			continue;
		}
		if (keyctl_clear(serial) < 0) {
			log_msg(LOG_WARNING, "cannot clear keyring %s: %m", name);
			continue;
		}
		log_msg(LOG_INFO, "cleared kernel keyring %s", name);
		n++;
	}
	d->st.keyrings_cleared += n;
	return n;
}

/* The description the kernel gives a mapping key of this kind ("uid:alice@dom", "os:S-1-..."). */
static const char *kernel_prefix(unsigned kind)
{
	switch (kind) {
	case NFSKEYS_IDMAP_NAME_TO_UID: return "uid:";
	case NFSKEYS_IDMAP_GROUP_TO_GID: return "gid:";
	case NFSKEYS_IDMAP_UID_TO_NAME: return "user:";
	case NFSKEYS_IDMAP_GID_TO_GROUP: return "group:";
	case NFSKEYS_IDMAP_SID_TO_UID: return "os:";
	case NFSKEYS_IDMAP_SID_TO_GID: return "gs:";
	case NFSKEYS_IDMAP_UID_TO_SID: return "oi:";
	case NFSKEYS_IDMAP_GID_TO_SID: return "gi:";
	}
	return NULL;
}

/* A single-key flush: invalidate only the kernel's key(s) for this mapping in the
 * configured keyrings (those whose description is the kernel's for kind and key),
 * leaving every other cached mapping alone.  Returns the number of keyrings in which a
 * key was invalidated. */
static unsigned invalidate_kernel_key(struct daemon *d, unsigned kind, const char *key)
{
	char buf[sizeof(d->set.keyrings)], want[512], *save = NULL;
	const char *prefix = kernel_prefix(kind);
	unsigned n = 0;

	if (!prefix || snprintf(want, sizeof(want), "%s%s", prefix, key) >= (int)sizeof(want))
		return 0;
	snprintf(buf, sizeof(buf), "%s", d->set.keyrings);
	for (char *name = strtok_r(buf, " \t,", &save); name; name = strtok_r(NULL, " \t,", &save)) {
		void *list = NULL;
		int32_t ring;
		long len;
		unsigned hit = 0;

		if (nfskeys_key_possess_keyring(name, &ring) < 0)
			continue;
		len = keyctl_read_alloc(ring, &list);
		for (long i = 0; len > 0 && i < len / (long)sizeof(key_serial_t); i++) {
			key_serial_t k = ((key_serial_t *)list)[i];
			char *desc = NULL, *p;

			if (keyctl_describe_alloc(k, &desc) < 0)
				continue;
			/* "type;uid;gid;perm;description" */
			p = desc;
			for (int f = 0; f < 4 && p; f++)
				p = strchr(p, ';') ? strchr(p, ';') + 1 : NULL;
			if (p && streq(p, want) && keyctl_invalidate(k) == 0)
				hit++;
			free(desc);
		}
		free(list);
		if (hit) {
			log_msg(LOG_INFO, "invalidated %s in kernel keyring %s", want, name);
			n++;
		}
	}
	d->st.keyrings_cleared += n;
	return n;
}

/* ---------------------------------------------------------------- statistics */

static struct backend_stats *backend_slot(struct daemon *d, const char *name)
{
	struct daemon_stats *st = &d->st;

	if (!name || !*name)
		name = "unknown";
	for (size_t i = 0; i < st->n_backends; i++)
		if (streq(st->backends[i].name, name))
			return &st->backends[i];
	if (st->n_backends == MAX_BACKENDS)
		return &st->backends[MAX_BACKENDS - 1]; /* shared overflow slot */
	snprintf(st->backends[st->n_backends].name, NFSKEYS_IDMAP_BACKEND_MAX, "%s", name);
	return &st->backends[st->n_backends++];
}

/* Reply and account the request's latency under its operation. */
static void reply(struct daemon *d, enum op op, struct rpc_request *req, xdrproc_t fn,
		  const void *res)
{
	uint64_t start = req->start_ns;

	rpc_request_reply(req, fn, res);
	stats_hist_add(&d->st.latency[op], mono_nsec() - start);
}

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

/* Answer one caller from an entry's current state. */
static void answer_waiter(struct daemon *d, struct idmapd_entry *e, struct rpc_request *req,
			  unsigned lflags, unsigned extra_flags, enum lres result)
{
	idmapd_lookup_res res = {};
	uint8_t sidbuf[NFSKEYS_SID_BINARY_MAX];
	int64_t now = evloop_now(d->loop);

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
	if (log_level >= LOG_DEBUG)
		log_msg(LOG_DEBUG, "lookup %s %s for pid %d uid %u: %s (%s)",
			nfskeys_idmap_kind_to_string(e->kind), e->key, (int)req->peer.pid,
			(unsigned)req->peer.uid, res.status ? strerror(-res.status) : "ok",
			lres_names[result]);
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

static int pool_start(struct daemon *d, unsigned n)
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

static void pool_stop(struct daemon *d)
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

/* Work for the pool is bounded in all and per uid (root, the kernel's helpers, exempt
 * from the latter): past it a lookup is answered -EAGAIN at once. */
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
		answer_waiter(d, e, w->req, w->flags, extra, result);
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
		log_msg(LOG_NOTICE, "%s %s: backends failing (%s); serving the %s answer",
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

static void add_waiter(struct daemon *d, struct idmapd_entry *e, struct rpc_request *req,
		       unsigned flags)
{
	struct idmapd_waiter *w = calloc(1, sizeof(*w));

	if (!w) {
		rpc_request_error(req, RPC_STATUS_SYSTEM_ERR);
		return;
	}
	w->req = req;
	w->flags = flags;
	w->next = e->waiters;
	e->waiters = w;
}

static void do_lookup(struct daemon *d, struct rpc_request *req, XDR *args)
{
	idmapd_lookup_args a = {};
	struct idmapd_entry *e;
	int64_t now = evloop_now(d->loop);
	int r;

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
	e = idmapd_cache_find(d->cache, a.kind, a.key);
	if (e && e->have_answer && (now < e->expires || (e->busy && e->stale))) {
		/* Fresh (or known stale while a retry runs): answer from memory. */
		unsigned extra = IDMAPD_ANSWER_CACHED;

		e->hits++;
		if (e->positive && !e->busy && !e->stale && d->set.refresh_pct > 0 &&
		    e->hits >= d->set.refresh_hits &&
		    now >= e->fetched + (e->expires - e->fetched) * d->set.refresh_pct / 100) {
			if (fetch_start(d, e, true, req->peer.uid) == 0) {
				extra |= IDMAPD_ANSWER_REFRESHING;
				d->st.lookups[LR_REFRESH_AHEAD]++;
			}
		}
		answer_waiter(d, e, req, a.flags, extra,
			      e->stale ? LR_STALE : e->status ? LR_NEGATIVE_HIT : LR_HIT);
		return;
	}
	if ((!e || !e->busy) && queue_full(d, req->peer.uid)) {
		idmapd_lookup_res res = { .status = -EAGAIN };

		d->st.queue_refused++;
		d->st.lookups[LR_ERROR]++;
		reply(d, OP_LOOKUP, req, (xdrproc_t)xdr_idmapd_lookup_res, &res);
		return;
	}
	if (!e) {
		r = idmapd_cache_add(d->cache, a.kind, a.key, &e);
		if (r < 0) {
			rpc_request_error(req, RPC_STATUS_SYSTEM_ERR);
			return;
		}
	} else if (e->busy && !e->refresh) {
		d->st.lookups[LR_COALESCED]++;
	}
	add_waiter(d, e, req, a.flags);
	if (!e->busy && fetch_start(d, e, false, req->peer.uid) < 0) {
		answer_all(d, e, 0, LR_ERROR);
		return;
	}
	e->refresh = false; /* callers wait on this fetch now */
	/* An expired positive answer is served stale if the refetch is slow. */
	if (!e->stale_timer && stale_ok(d, e, now))
		(void)evloop_add_timer(d->loop, e->fetch_start + d->set.stale_wait_ms * USEC_PER_MSEC,
				       stale_wait_fired, e, &e->stale_timer);
	/* nothing to free: the key is d->keybuf */
}

static void stale_wait_fired(struct evloop *loop, struct evtimer *t, void *userdata)
{
	struct daemon *d = the_daemon;
	struct idmapd_entry *e = userdata;

	evloop_timer_free(t);
	e->stale_timer = NULL;
	if (!stale_ok(d, e, evloop_now(loop)))
		return;
	log_msg(LOG_NOTICE, "%s %s: backend slow; serving the stale answer",
		nfskeys_idmap_kind_to_string(e->kind), e->key);
	answer_all(d, e, IDMAPD_ANSWER_STALE, LR_STALE);
}

/* ---------------------------------------------------------------- other operations */

static void do_ping(struct daemon *d, struct rpc_request *req)
{
	idmapd_ping_res res = {
		.release = (char *)PACKAGE_VERSION,
		.pid = (unsigned)getpid(),
		.generation = d->generation,
		.uptime_ms = (evloop_now(d->loop) - d->start) / USEC_PER_MSEC,
	};

	reply(d, OP_PING, req, (xdrproc_t)xdr_idmapd_ping_res, &res);
}

static bool allowed(struct daemon *d, enum op op, struct rpc_request *req)
{
	if (req->peer.uid == 0)
		return true;
	d->st.denied[op]++;
	log_msg(LOG_NOTICE, "%s refused for pid %d uid %u (root only)", op_names[op],
		(int)req->peer.pid, (unsigned)req->peer.uid);
	return false;
}

static void do_flush(struct daemon *d, struct rpc_request *req, XDR *args)
{
	idmapd_flush_args a = {};
	idmapd_flush_res res = {};

	if (!rpc_args_decode(args, (xdrproc_t)xdr_idmapd_flush_args, &a)) {
		rpc_request_error(req, RPC_STATUS_GARBAGE_ARGS);
		return;
	}
	if (!allowed(d, OP_FLUSH, req)) {
		res.status = -EPERM;
	} else if (a.all) {
		res.dropped = idmapd_cache_flush(d->cache);
		res.kernel_keyrings_cleared = clear_kernel_keyrings(d);
		d->st.flushes++;
		log_msg(LOG_INFO, "cache flushed by uid %u: %u entries", (unsigned)req->peer.uid,
			res.dropped);
	} else {
		struct idmapd_entry *e = NULL;

		if (a.kind > 0 && a.kind < _NFSKEYS_IDMAP_KIND_MAX && a.key)
			e = idmapd_cache_find(d->cache, a.kind, a.key);
		if (e) {
			idmapd_cache_drop(d->cache, e);
			res.dropped = 1;
		}
		/* Only this mapping's kernel key, even when we had no entry for it (the
		 * fallback helper may have answered it in-process). */
		if (a.kind > 0 && a.kind < _NFSKEYS_IDMAP_KIND_MAX && a.key)
			res.kernel_keyrings_cleared = invalidate_kernel_key(d, a.kind, a.key);
		if (res.dropped || res.kernel_keyrings_cleared)
			d->st.flushes++;
		else
			res.status = -ENOENT;
	}
	reply(d, OP_FLUSH, req, (xdrproc_t)xdr_idmapd_flush_res, &res);
	xdr_free((xdrproc_t)xdr_idmapd_flush_args, (char *)&a);
}

/* A reload: load_ctx() in its own thread (a large [Static] section or a slow backend
 * init would otherwise stall the loop), then reload_done() on the loop thread swaps the
 * configuration in or keeps the old one.  Requests are answered entirely by the old
 * configuration until the swap and entirely by the new one after it; lookups in flight
 * on the worker pool keep the old context alive through their own reference. */
struct reload_job {
	struct daemon *d;
	pthread_t thread;
	bool joined;
	int r;
	struct nfskeys_ctx *ctx;
	struct settings set;
	char msg[IDMAPD_MESSAGE_MAX];
};

struct reload_waiter {
	struct rpc_request *req;
	struct reload_waiter *next;
};

static void reload_done(struct evloop *loop, void *userdata);

static void *reload_main(void *arg)
{
	struct reload_job *j = arg;

	j->r = load_ctx(j->d, &j->ctx, &j->set, j->msg, sizeof(j->msg));
	while (evloop_post(j->d->loop, reload_done, j) < 0)
		usleep(1000); /* out of memory: retry rather than lose the callers */
	return NULL;
}

static void reload_answer(struct daemon *d, struct reload_waiter **list, int status,
			  const char *msg)
{
	while (*list) {
		struct reload_waiter *w = *list;
		idmapd_reload_res res = { .status = status, .message = (char *)msg,
					  .generation = d->generation };

		*list = w->next;
		reply(d, OP_RELOAD, w->req, (xdrproc_t)xdr_idmapd_reload_res, &res);
		free(w);
	}
}

/* Swap in the configuration a reload thread built (on the loop thread). */
static void reload_apply(struct daemon *d, struct reload_job *j)
{
	struct settings *s = &j->set;

	if (!streq(s->socket, d->set.socket) || s->workers != d->set.workers)
		log_msg(LOG_NOTICE, "Socket and Workers changes take effect at restart");
	snprintf(s->socket, sizeof(s->socket), "%s", d->set.socket);
	s->workers = d->set.workers;
	nfskeys_ctx_unref(d->ctx);
	d->ctx = TAKE_PTR(j->ctx);
	d->set = *s;
	d->generation++;
	idmapd_cache_set_capacity(d->cache, s->cache_size);
	idmapd_cache_flush(d->cache);
	clear_kernel_keyrings(d);
	snprintf(j->msg, sizeof(j->msg), "configuration %s loaded (generation %" PRIu64 ")",
		 nfskeys_ctx_get_conf_path(d->ctx), d->generation);
	log_msg(LOG_INFO, "%s", j->msg);
}

static void reload_start(struct daemon *d)
{
	struct reload_job *j = calloc(1, sizeof(*j));
	char state[64];
	int r;

	snprintf(state, sizeof(state), "RELOADING=1\nMONOTONIC_USEC=%" PRIu64,
		 (uint64_t)mono_usec());
	notify(state);
	d->st.reloads++;
	if (!j) {
		r = -ENOMEM;
		goto fail;
	}
	j->d = d;
	r = -pthread_create(&j->thread, NULL, reload_main, j);
	if (r < 0)
		goto fail;
	d->reload = j;
	return;
fail:
	free(j);
	d->st.reload_failures++;
	log_msg(LOG_ERR, "reload failed, keeping the running configuration: %s", strerror(-r));
	notify("READY=1\nSTATUS=reload failed; running configuration kept");
	reload_answer(d, &d->reload_waiting, r, "cannot start the reload");
}

static void reload_done(struct evloop *loop, void *userdata)
{
	struct reload_job *j = userdata;
	struct daemon *d = j->d;
	struct reload_waiter *callers;

	if (!j->joined)
		pthread_join(j->thread, NULL);
	d->reload = NULL;
	if (d->stopping) {
		snprintf(j->msg, sizeof(j->msg), "the daemon is stopping");
		j->r = -ESHUTDOWN;
	} else if (j->r < 0) {
		d->st.reload_failures++;
		log_msg(LOG_ERR, "reload failed, keeping the running configuration: %s", j->msg);
		notify("READY=1\nSTATUS=reload failed; running configuration kept");
	} else {
		reload_apply(d, j);
		notify("READY=1\nSTATUS=running");
	}
	/* A SIGHUP or RELOAD that came while this one ran may have followed a later edit:
	 * one more reload answers all of them.  It starts before this one's callers are
	 * answered, since answering may dispatch a RELOAD queued behind them. */
	callers = TAKE_PTR(d->reload_waiting);
	if (d->reload_again && !d->stopping) {
		d->reload_again = false;
		d->reload_waiting = TAKE_PTR(d->reload_next);
		reload_start(d);
	}
	reload_answer(d, &callers, j->r, j->msg);
	if (d->stopping)
		reload_answer(d, &d->reload_next, -ESHUTDOWN, "the daemon is stopping");
	nfskeys_ctx_unref(j->ctx);
	free(j);
}

/* Ask for a reload; req (NULL for SIGHUP) is answered when it is done. */
static void reload_request(struct daemon *d, struct rpc_request *req)
{
	struct reload_waiter *w = NULL;

	if (req) {
		w = calloc(1, sizeof(*w));
		if (!w) {
			rpc_request_error(req, RPC_STATUS_SYSTEM_ERR);
			return;
		}
		w->req = req;
	}
	if (d->reload) {
		d->reload_again = true;
		if (w) {
			w->next = d->reload_next;
			d->reload_next = w;
		}
		return;
	}
	if (w) {
		w->next = d->reload_waiting;
		d->reload_waiting = w;
	}
	reload_start(d);
}

/* At shutdown: wait for a running reload thread (its result is then discarded by
 * reload_done, which the final loop iteration runs). */
static void reload_wait(struct daemon *d)
{
	if (d->reload && !d->reload->joined) {
		pthread_join(d->reload->thread, NULL);
		d->reload->joined = true;
	}
}

static void do_reload(struct daemon *d, struct rpc_request *req)
{
	if (!allowed(d, OP_RELOAD, req)) {
		idmapd_reload_res res = { .status = -EPERM,
					  .message = (char *)"reload is reserved to root",
					  .generation = d->generation };

		reply(d, OP_RELOAD, req, (xdrproc_t)xdr_idmapd_reload_res, &res);
		return;
	}
	reload_request(d, req);
}

struct metrics {
	stats_metric *m;
	size_t n, cap;
	char labels[_OP_MAX * 4 + _LR_MAX + MAX_BACKENDS * 4][STATS_METRIC_LABELS_MAX];
	size_t nlabels;
};

/* A label pair name="v" kept alive in ms until the reply is sent. */
static const char *mlabel(struct metrics *ms, const char *name, const char *v)
{
	char *l;

	if (ms->nlabels >= ARRAY_SIZE(ms->labels))
		return "";
	l = ms->labels[ms->nlabels++];
	snprintf(l, STATS_METRIC_LABELS_MAX, "%s=\"%s\"", name, v);
	return l;
}

static void madd(struct metrics *ms, const char *name, const char *labels,
		 enum stats_metric_type type, uint64_t value, const struct stats_hist *h)
{
	stats_metric *m;

	if (ms->n == ms->cap)
		return;
	m = &ms->m[ms->n++];
	memset(m, 0, sizeof(*m));
	m->name = (char *)name;
	m->labels = (char *)(labels ? labels : "");
	m->type = type;
	m->value = value;
	if (h) {
		struct stats_hist s;
		static uint64_t bucket_store[STATS_METRICS_MAX][STATS_HIST_BUCKETS];
		uint64_t *bs = bucket_store[ms->n - 1];
		unsigned last = 0;

		stats_hist_snapshot(h, &s);
		m->value = s.count;
		m->sum_ns = s.sum;
		for (unsigned b = 0; b < STATS_HIST_BUCKETS; b++) {
			bs[b] = s.buckets[b];
			if (s.buckets[b])
				last = b + 1;
		}
		m->buckets.buckets_len = last;
		m->buckets.buckets_val = (u_quad_t *)bs;
	}
}

static void do_stats(struct daemon *d, struct rpc_request *req)
{
	_cleanup_free_ struct metrics *ms = calloc(1, sizeof(*ms));
	_cleanup_free_ stats_metric *m = calloc(STATS_METRICS_MAX, sizeof(*m));
	struct rpc_server_stats ss;
	stats_res res = {};

	if (!ms || !m) {
		rpc_request_error(req, RPC_STATUS_SYSTEM_ERR);
		return;
	}
	ms->m = m;
	ms->cap = STATS_METRICS_MAX;
	for (int op = 0; op < _OP_MAX; op++)
		madd(ms, "requests_total", mlabel(ms, "op", op_names[op]),
		     STATS_METRIC_COUNTER, d->st.requests[op], NULL);
	for (int op = 0; op < _OP_MAX; op++)
		if (d->st.denied[op])
			madd(ms, "denied_total", mlabel(ms, "op", op_names[op]),
			     STATS_METRIC_COUNTER, d->st.denied[op], NULL);
	for (int i = 0; i < _LR_MAX; i++)
		madd(ms, "lookups_total", mlabel(ms, "result", lres_names[i]),
		     STATS_METRIC_COUNTER, d->st.lookups[i], NULL);
	for (size_t i = 0; i < d->st.n_backends; i++)
		madd(ms, "backend_requests_total",
		     mlabel(ms, "backend", d->st.backends[i].name), STATS_METRIC_COUNTER,
		     d->st.backends[i].requests, NULL);
	for (size_t i = 0; i < d->st.n_backends; i++)
		madd(ms, "backend_failures_total",
		     mlabel(ms, "backend", d->st.backends[i].name), STATS_METRIC_COUNTER,
		     d->st.backends[i].failures, NULL);
	madd(ms, "cache_entries", NULL, STATS_METRIC_GAUGE, idmapd_cache_count(d->cache), NULL);
	madd(ms, "cache_capacity", NULL, STATS_METRIC_GAUGE, idmapd_cache_capacity(d->cache),
	     NULL);
	madd(ms, "cache_evictions_total", NULL, STATS_METRIC_COUNTER,
	     idmapd_cache_evictions(d->cache), NULL);
	madd(ms, "cache_flushes_total", NULL, STATS_METRIC_COUNTER, d->st.flushes, NULL);
	madd(ms, "queue_jobs", NULL, STATS_METRIC_GAUGE, d->quota.total, NULL);
	madd(ms, "queue_refused_total", NULL, STATS_METRIC_COUNTER, d->st.queue_refused, NULL);
	madd(ms, "kernel_keyrings_cleared_total", NULL, STATS_METRIC_COUNTER,
	     d->st.keyrings_cleared, NULL);
	madd(ms, "reloads_total", NULL, STATS_METRIC_COUNTER, d->st.reloads, NULL);
	madd(ms, "reload_failures_total", NULL, STATS_METRIC_COUNTER, d->st.reload_failures,
	     NULL);
	madd(ms, "config_generation", NULL, STATS_METRIC_GAUGE, d->generation, NULL);
	madd(ms, "workers", NULL, STATS_METRIC_GAUGE, d->n_threads, NULL);
	pthread_mutex_lock(&d->lock);
	madd(ms, "queue_depth", NULL, STATS_METRIC_GAUGE, d->queued, NULL);
	pthread_mutex_unlock(&d->lock);
	rpc_server_get_stats(d->srv, &ss);
	madd(ms, "connections_total", NULL, STATS_METRIC_COUNTER, ss.accepted, NULL);
	madd(ms, "connections", NULL, STATS_METRIC_GAUGE, ss.current, NULL);
	madd(ms, "connections_refused_total", NULL, STATS_METRIC_COUNTER, ss.refused, NULL);
	madd(ms, "connections_refused_user_total", NULL, STATS_METRIC_COUNTER, ss.refused_uid,
	     NULL);
	madd(ms, "bad_frames_total", NULL, STATS_METRIC_COUNTER, ss.bad_frames, NULL);
	madd(ms, "bad_headers_total", NULL, STATS_METRIC_COUNTER, ss.bad_headers, NULL);
	madd(ms, "idle_closed_total", NULL, STATS_METRIC_COUNTER, ss.idle_closed, NULL);
	madd(ms, "overflow_closed_total", NULL, STATS_METRIC_COUNTER, ss.overflow_closed, NULL);
	madd(ms, "uptime_seconds", NULL, STATS_METRIC_GAUGE,
	     (evloop_now(d->loop) - d->start) / USEC_PER_SEC, NULL);
	for (int op = 0; op < _OP_MAX; op++)
		madd(ms, "request_latency", mlabel(ms, "op", op_names[op]),
		     STATS_METRIC_HISTOGRAM, 0, &d->st.latency[op]);
	for (size_t i = 0; i < d->st.n_backends; i++)
		madd(ms, "backend_latency", mlabel(ms, "backend", d->st.backends[i].name),
		     STATS_METRIC_HISTOGRAM, 0, &d->st.backends[i].latency);
	res.metrics.metrics_len = ms->n;
	res.metrics.metrics_val = m;
	reply(d, OP_STATS, req, (xdrproc_t)xdr_stats_res, &res);
}

static void dispatch(struct rpc_server *srv, struct rpc_request *req, XDR *args, void *userdata)
{
	struct daemon *d = userdata;
	uint32_t proc = req->call.proc;

	if (proc < _OP_MAX)
		d->st.requests[proc]++;
	switch (proc) {
	case IDMAPD_NULL:
		reply(d, OP_NULL, req, NULL, NULL);
		return;
	case IDMAPD_PING:
		do_ping(d, req);
		return;
	case IDMAPD_LOOKUP:
		do_lookup(d, req, args);
		return;
	case IDMAPD_FLUSH:
		do_flush(d, req, args);
		return;
	case IDMAPD_STATS:
		do_stats(d, req);
		return;
	case IDMAPD_RELOAD:
		do_reload(d, req);
		return;
	default:
		rpc_request_error(req, RPC_STATUS_PROC_UNAVAIL);
	}
}

/* ---------------------------------------------------------------- main */

static void on_signal(struct evloop *loop, const struct signalfd_siginfo *si, void *userdata)
{
	struct daemon *d = userdata;

	switch (si->ssi_signo) {
	case SIGHUP:
		log_msg(LOG_INFO, "SIGHUP: reloading the configuration%s",
			d->reload ? " (after the running reload)" : "");
		reload_request(d, NULL);
		break;
	case SIGTERM:
	case SIGINT:
		log_msg(LOG_INFO, "signal %u: stopping", si->ssi_signo);
		notify("STOPPING=1");
		evloop_exit(loop, 0);
		break;
	}
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: nfskeys-idmapd [OPTIONS]\n"
		"\n"
		"The nfskeys ID-mapping service: answers nfskeys-upcall and nfskeys from one\n"
		"shared cache over %s.\n"
		"\n"
		"Options:\n"
		"  -c, --config FILE   configuration file (default %s/nfskeys/nfskeys.conf)\n"
		"  -s, --socket PATH   listen on PATH instead of [Idmapd] Socket\n"
		"  -f, --foreground    stay in the foreground and log to stderr\n"
		"  -d, --debug         log every request (implies more library messages)\n"
		"  -h, --help          show this help\n"
		"  -V, --version       show the version\n"
		"\n"
		"Signals: SIGHUP reloads the configuration, SIGTERM stops.  See nfskeys-idmapd(8).\n",
		IDMAPD_SOCKET_DEFAULT, SYSCONFDIR);
}

static void post_exit(struct evloop *loop, void *userdata)
{
	evloop_exit(loop, 0);
}

static int make_parent_dir(const char *path)
{
	char dir[UNIX_PATH_MAX_LEN + 1];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0;
	*slash = 0;
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return negerrno();
	return 0;
}

int main(int argc, char *argv[])
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "socket", required_argument, NULL, 's' },
		{ "foreground", no_argument, NULL, 'f' },
		{ "debug", no_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{}
	};
	static const int sigs[] = { SIGHUP, SIGTERM, SIGINT };
	struct daemon d = { .queue_tail = &d.queue_head };
	struct rpc_server_limits lim;
	char err[IDMAPD_MESSAGE_MAX];
	int c, r, lfd = -1, ret = EXIT_FAIL;

	the_daemon = &d;

	while ((c = getopt_long(argc, argv, "c:s:fdhV", opts, NULL)) >= 0) {
		switch (c) {
		case 'c':
			d.conf_arg = optarg;
			break;
		case 's':
			d.socket_arg = optarg;
			break;
		case 'f':
			d.foreground = true;
			break;
		case 'd':
			d.debug = true;
			break;
		default:
			return cli_std_option(c, "nfskeys-idmapd", usage);
		}
	}
	if (optind < argc) {
		fprintf(stderr, "nfskeys-idmapd: unexpected argument '%s'\n", argv[optind]);
		return EXIT_USAGE;
	}
	if (d.debug)
		log_level = LOG_DEBUG;
	pthread_mutex_init(&d.lock, NULL);
	pthread_cond_init(&d.cond, NULL);

	r = load_ctx(&d, &d.ctx, &d.set, err, sizeof(err));
	if (r < 0) {
		log_msg(LOG_ERR, "%s", err);
		return EXIT_CONFIG;
	}
	r = make_parent_dir(d.set.socket);
	if (r == 0)
		r = unix_listen(d.set.socket, 0666, 128, &lfd);
	if (r < 0) {
		log_msg(LOG_ERR, "cannot listen on %s: %s", d.set.socket, strerror(-r));
		nfskeys_ctx_unref(d.ctx);
		return EXIT_SOCKET;
	}
	if (!d.foreground) {
		if (daemon(0, 0) < 0) {
			log_msg(LOG_ERR, "cannot daemonize: %m");
			goto out;
		}
		openlog("nfskeys-idmapd", LOG_PID, LOG_DAEMON);
		log_to_stderr = false;
	}
	signal(SIGPIPE, SIG_IGN);

	if ((r = evloop_new(&d.loop)) < 0 ||
	    (r = evloop_add_signals(d.loop, sigs, ARRAY_SIZE(sigs), on_signal, &d)) < 0 ||
	    (r = idmapd_cache_new(d.set.cache_size, &d.cache)) < 0) {
		log_msg(LOG_ERR, "cannot set up the event loop: %s", strerror(-r));
		goto out;
	}
	lim = (struct rpc_server_limits){
		.max_msg = d.set.max_request,
		.max_inflight = d.set.max_inflight,
		.idle_timeout_ms = d.set.idle_timeout * 1000,
		.max_clients = d.set.max_clients,
		.max_clients_per_uid = d.set.max_clients_user,
		.log = rpc_log,
	};
	r = rpc_server_new(d.loop, lfd, NFSKEYS_IDMAPD_PROG, NFSKEYS_IDMAPD_V1, &lim, dispatch, &d,
			   &d.srv);
	if (r < 0) {
		log_msg(LOG_ERR, "cannot serve: %s", strerror(-r));
		goto out;
	}
	lfd = -1;
	/* Threads start after the signals are blocked, so they inherit the mask. */
	r = pool_start(&d, d.set.workers);
	if (r < 0) {
		log_msg(LOG_ERR, "cannot start workers: %s", strerror(-r));
		goto out;
	}
	d.start = mono_usec();
	d.generation = 1;
	log_msg(LOG_INFO, "listening on %s (%u workers, cache %u entries, config %s)",
		d.set.socket, d.set.workers, d.set.cache_size, nfskeys_ctx_get_conf_path(d.ctx));
	notify("READY=1\nSTATUS=running");
	r = evloop_run(d.loop);
	ret = r < 0 ? EXIT_FAIL : EXIT_OK;

	/* Stop: no new clients; let workers finish and deliver (answers to gone clients are
	 * dropped), then run the loop once more to process their results. */
	d.stopping = true;
	d.srv = rpc_server_free(d.srv);
	pool_stop(&d);
	reload_wait(&d);
	evloop_post(d.loop, post_exit, NULL);
	evloop_run(d.loop);
	unlink(d.set.socket);
out:
	pool_stop(&d);
	rpc_server_free(d.srv);
	idmapd_cache_free(d.cache);
	idmapd_quota_clear(&d.quota);
	evloop_free(d.loop);
	if (lfd >= 0)
		close(lfd);
	nfskeys_ctx_unref(d.ctx);
	free(d.keybuf);
	pthread_cond_destroy(&d.cond);
	pthread_mutex_destroy(&d.lock);
	log_msg(LOG_INFO, "stopped");
	return ret;
}
