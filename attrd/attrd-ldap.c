/* Fleet sync for nfskeys-attrd: a worker thread reads every nfskeysDirectoryPolicy entry
 * below [Attrd] LDAP-Base (bounded by LDAP-Timeout), and the loop thread swaps them in as
 * the store's LDAP-sourced rows in one transaction.  A failed sync changes nothing: the
 * copy from the last good sync stays in the store (and survives restarts).  TLS (StartTLS,
 * ldaps://, the CA, no bind password in clear) is common/ldap-tls.c, shared with the idmap
 * ldap backend. */
#include <pthread.h>
#include <sys/random.h>
#include <syslog.h>
#include <unistd.h>

#include "attrd-ldap.h"
#include "attrd-ldap-private.h"
#include "conf-get.h"
#include "evloop.h"
#include "macros.h"
#include "nfskeys-attr-daemon.h"
#include "time-util.h"
/* after macros.h: <rpc/rpc.h> redefines MIN/MAX in its system header */
#include "attr.h"

struct attrd_ldap {
	struct nfskeys_ctx *ctx;
	struct settings cur;
	pthread_mutex_t lock;
	bool running;
	pthread_t thread;
	bool have_thread;
	struct result *pending; /* posted, not yet applied */
	struct nfskeys_attr_store **store;
	/* the last good sync's mark, and the settings' generation it belongs to (loop
	 * thread only) */
	struct sync_mark mark;
	uint64_t generation;
	bool stopped; /* LDAP-URI removed by a reload: no sync until it comes back */
	uint64_t syncs, failures, rows, invalid, full_reads, unchanged;
};

static void settings_done(struct settings *s)
{
	free(s->uri);
	free(s->base);
	free(s->bind_dn);
	free(s->pw_file);
	free(s->ca_file);
	memset(s, 0, sizeof(*s));
}

static int settings_dup(const struct settings *from, struct settings *to)
{
	*to = *from;
	to->uri = from->uri ? strdup(from->uri) : NULL;
	to->base = from->base ? strdup(from->base) : NULL;
	to->bind_dn = from->bind_dn ? strdup(from->bind_dn) : NULL;
	to->pw_file = from->pw_file ? strdup(from->pw_file) : NULL;
	to->ca_file = from->ca_file ? strdup(from->ca_file) : NULL;
	if ((from->uri && !to->uri) || (from->base && !to->base) ||
	    (from->bind_dn && !to->bind_dn) || (from->pw_file && !to->pw_file) ||
	    (from->ca_file && !to->ca_file)) {
		settings_done(to);
		return -ENOMEM;
	}
	return 0;
}

/* The [Attrd] LDAP settings into *s (s->uri NULL when none); on error err says why. */
static int settings_read(struct nfskeys_ctx *ctx, struct settings *s, char *err,
			 size_t err_size)
{
	const char *uri = nfskeys_conf_get(ctx, "Attrd", "LDAP-URI");
	const char *base = nfskeys_conf_get(ctx, "Attrd", "LDAP-Base");
	const char *dn = nfskeys_conf_get(ctx, "Attrd", "LDAP-Bind-DN");
	const char *pw = nfskeys_conf_get(ctx, "Attrd", "LDAP-Bind-Password-File");
	const char *ca = nfskeys_conf_get(ctx, "Attrd", "LDAP-CA-File");
	struct settings tmp = { 0 };
	struct ldap_tls tls;
	bool cleartext;
	unsigned splay;
	int r;

	memset(s, 0, sizeof(*s));
	if (!uri || !*uri)
		return 0;
	if (!base || !*base) {
		snprintf(err, err_size, "[Attrd] LDAP-URI is set but LDAP-Base is not");
		return -EINVAL;
	}
	tmp.uri = (char *)uri;
	tmp.base = (char *)base;
	tmp.bind_dn = dn && *dn ? (char *)dn : NULL;
	tmp.pw_file = pw && *pw ? (char *)pw : NULL;
	tmp.ca_file = ca && *ca ? (char *)ca : NULL;
	/* type, bounds and default from the schema; a malformed value is an error naming it */
	if ((r = conf_get_unsigned(ctx, "Attrd", "Sync-Interval", &tmp.interval, err,
				   err_size)) < 0 ||
	    (r = conf_get_unsigned(ctx, "Attrd", "LDAP-Timeout", &tmp.timeout, err, err_size)) < 0 ||
	    (r = conf_get_bool(ctx, "Attrd", "LDAP-StartTLS", &tmp.start_tls, err, err_size)) < 0 ||
	    (r = conf_get_bool(ctx, "Attrd", "LDAP-Allow-Cleartext-Bind", &cleartext, err,
			       err_size)) < 0)
		return r;
	/* unset (the row's default is "(a tenth of Sync-Interval)"): -ENOENT */
	r = conf_get_unsigned(ctx, "Attrd", "Sync-Splay", &splay, err, err_size);
	if (r < 0 && r != -ENOENT)
		return r;
	tmp.splay_usec = r == 0 ? (uint64_t)splay * USEC_PER_SEC :
				  (uint64_t)tmp.interval * USEC_PER_SEC / 10;
	/* a bind password never goes over a cleartext connection unless the admin says so */
	tls = attrd_ldap_tls(&tmp);
	if (tmp.bind_dn && tmp.pw_file &&
	    (r = ldap_tls_check_bind(&tls, cleartext, err, err_size)) < 0)
		return -EINVAL;
	return settings_dup(&tmp, s);
}

int attrd_ldap_check(struct nfskeys_ctx *ctx, char *err, size_t err_size)
{
	struct settings s;
	int r = settings_read(ctx, &s, err, err_size);

	if (r == 0)
		settings_done(&s);
	return r;
}

int attrd_ldap_new(struct nfskeys_ctx *ctx, struct attrd_ldap **ret)
{
	struct attrd_ldap *l;
	struct settings s;
	int r;

	char err[512];

	*ret = NULL;
	r = settings_read(ctx, &s, err, sizeof(err));
	if (r < 0)
		log_err(ctx, "%s", err);
	if (r < 0 || !s.uri)
		return r;
	l = calloc(1, sizeof(*l));
	if (!l) {
		settings_done(&s);
		return -ENOMEM;
	}
	l->ctx = nfskeys_ctx_ref(ctx);
	l->cur = s;
	pthread_mutex_init(&l->lock, NULL);
	*ret = l;
	return 0;
}

int attrd_ldap_configure(struct attrd_ldap *l, struct nfskeys_ctx *ctx)
{
	struct settings s;
	char err[512];
	int r = settings_read(ctx, &s, err, sizeof(err));

	if (r < 0) {
		log_err(ctx, "%s", err);
		return r;
	}
	if (!s.uri) {
		if (!l->stopped)
			log_notice(ctx, "LDAP-URI removed: syncing stops; the LDAP-sourced "
					"policies stay until it is set again");
		l->stopped = true;
		/* a sync still running is dropped when it posts its result */
		l->generation++;
		return 0;
	}
	if (l->stopped)
		log_notice(ctx, "LDAP-URI set: syncing resumes");
	l->stopped = false;
	pthread_mutex_lock(&l->lock);
	settings_done(&l->cur);
	l->cur = s;
	pthread_mutex_unlock(&l->lock);
	/* another directory, base or bind DN may see other entries: the next sync reads
	 * them all, and a sync still running with the old settings leaves no mark */
	l->mark = (struct sync_mark){ 0 };
	l->generation++;
	return 0;
}

/* A uniform random number below n (0 when n is 0), from the kernel's generator: every
 * client of a fleet draws its own, whatever the clock. */
static uint64_t random_below(uint64_t n)
{
	uint64_t v = 0;

	if (n == 0)
		return 0;
	/* GRND_INSECURE: a splay needs no cryptographic quality, and must not wait for the
	 * pool at early boot; kernels before 5.6 refuse it, then GRND_NONBLOCK */
	if (getrandom(&v, sizeof(v), GRND_INSECURE) != sizeof(v) &&
	    getrandom(&v, sizeof(v), GRND_NONBLOCK) != sizeof(v))
		v = (uint64_t)getpid() * 0x9e3779b97f4a7c15ULL ^ (uint64_t)mono_nsec();
	return v % n; /* the bias is below n / 2^64 */
}

int64_t attrd_ldap_delay_usec(const struct attrd_ldap *l, bool first)
{
	uint64_t splay;

	if (!l)
		return 0;
	splay = random_below(l->cur.splay_usec + 1);
	return first ? (int64_t)splay : (int64_t)l->cur.interval * USEC_PER_SEC + (int64_t)splay;
}

static void result_free(struct result *res)
{
	if (!res)
		return;
	for (size_t i = 0; i < res->nstrings; i++)
		free(res->strings[i]);
	free(res->strings);
	free(res->rows);
	free(res);
}

static int row_cmp(const void *a, const void *b)
{
	const struct attr_sync_row *x = *(const struct attr_sync_row *const *)a,
				   *y = *(const struct attr_sync_row *const *)b;
	int c = strcmp(x->domain, y->domain);

	if (c == 0)
		c = strcmp(x->path, y->path);
	return c ? c : strcmp(x->key, y->key);
}

/* The bound local sets have (ATTR_MAX_PER_DIR attributes on one directory, counted by
 * distinct key across every entry naming it): a directory over it is dropped whole, as a
 * local set over it is refused whole, with a message naming it.  Keeps rows[0..n) in
 * order and returns how many are left, or -ENOMEM. */
static ssize_t drop_crowded(struct attrd_ldap *l, struct attr_sync_row *rows, size_t n)
{
	_cleanup_free_ const struct attr_sync_row **by = calloc(n ? n : 1, sizeof(*by));
	size_t out = 0;

	if (!by)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		by[i] = &rows[i];
	qsort(by, n, sizeof(*by), row_cmp);
	for (size_t i = 0, j; i < n; i = j) {
		size_t keys = 1;

		for (j = i + 1; j < n && streq(by[j]->domain, by[i]->domain) &&
				streq(by[j]->path, by[i]->path); j++)
			keys += !streq(by[j]->key, by[j - 1]->key);
		if (keys <= ATTR_MAX_PER_DIR)
			continue;
		l->invalid++;
		log_warning(l->ctx,
			    "LDAP entry %s%s: %zu attributes (at most %d on one directory): skipped",
			    by[i]->domain, by[i]->path, keys, ATTR_MAX_PER_DIR);
		for (size_t k = i; k < j; k++)
			((struct attr_sync_row *)by[k])->key = NULL; /* dropped below */
	}
	for (size_t i = 0; i < n; i++)
		if (rows[i].key)
			rows[out++] = rows[i];
	return (ssize_t)out;
}

/* On the loop thread: validate rows and swap them in. */
static void apply(struct evloop *loop, void *userdata)
{
	struct result *res = userdata;
	struct attrd_ldap *l = res->l;
	size_t good = 0;
	ssize_t kept;

	pthread_mutex_lock(&l->lock);
	l->pending = NULL;
	l->running = false;
	pthread_mutex_unlock(&l->lock);
	if (l->stopped) {
		/* started before a reload removed LDAP-URI: nothing of it is applied */
		result_free(res);
		return;
	}
	l->syncs++;
	if (res->error < 0) {
		l->failures++;
		log_warning(l->ctx, "LDAP sync failed (%s); keeping the %llu LDAP-sourced "
				    "attributes from the last good sync",
			    res->msg[0] ? res->msg : strerror(-res->error),
			    (unsigned long long)l->rows);
		goto out;
	}
	if (res->unchanged) {
		/* nothing read, nothing to apply: the store already holds this copy */
		l->unchanged++;
		log_debug(l->ctx, "LDAP sync: unchanged (%llu entries)",
			  (unsigned long long)res->mark.entries);
		goto out;
	}
	l->full_reads++;
	/* entries that do not validate are skipped, with a message naming them */
	for (size_t i = 0; i < res->n; i++) {
		struct attr_sync_row *row = &res->rows[i];
		struct nfskeys_attr_id *id = NULL;
		char err[256] = "";
		int r = nfskeys_attr_id_new(row->domain, row->path, &id);

		if (r == 0)
			r = nfskeys_attr_check(row->key, row->value, NULL, err, sizeof(err));
		else
			snprintf(err, sizeof(err), "bad domain or path");
		nfskeys_attr_id_free(id);
		if (r < 0) {
			l->invalid++;
			log_warning(l->ctx, "LDAP entry %s%s: %s: skipped", row->domain, row->path,
				    err);
			continue;
		}
		res->rows[good++] = *row;
	}
	kept = drop_crowded(l, res->rows, good);
	if (kept < 0) {
		l->failures++;
		log_warning(l->ctx, "LDAP sync: %s", strerror((int)-kept));
		goto out;
	}
	good = (size_t)kept;
	if (attr_store_replace_ldap(*l->store, res->rows, good) < 0) {
		l->failures++;
		goto out;
	}
	l->rows = good;
	log_info(l->ctx, "LDAP sync: %zu attributes", good);
	if (res->generation == l->generation)
		l->mark = res->mark;
	result_free(res);
	return;
out:
	/* a read that did not make it into the store leaves no mark: the next sync reads
	 * everything again */
	if (res->error == 0 && !res->unchanged)
		l->mark = (struct sync_mark){ 0 };
	result_free(res);
}

struct job {
	struct attrd_ldap *l;
	struct evloop *loop;
	struct settings s;
	struct sync_mark mark; /* the last good sync's, to compare with */
	uint64_t generation;
};

static void *worker(void *arg)
{
	struct job *j = arg;
	struct result *res = calloc(1, sizeof(*res));

	if (res) {
		res->l = j->l;
		res->generation = j->generation;
		ldap_fetch(res, &j->s, &j->mark);
		pthread_mutex_lock(&j->l->lock);
		j->l->pending = res;
		pthread_mutex_unlock(&j->l->lock);
		if (evloop_post(j->loop, apply, res) < 0) {
			pthread_mutex_lock(&j->l->lock);
			j->l->pending = NULL;
			j->l->running = false;
			pthread_mutex_unlock(&j->l->lock);
			result_free(res);
		}
	} else {
		pthread_mutex_lock(&j->l->lock);
		j->l->running = false;
		pthread_mutex_unlock(&j->l->lock);
	}
	settings_done(&j->s);
	free(j);
	return NULL;
}

void attrd_ldap_sync(struct attrd_ldap *l, struct evloop *loop, struct nfskeys_attr_store **store)
{
	struct job *j;

	if (!l || l->stopped)
		return;
	pthread_mutex_lock(&l->lock);
	if (l->running) {
		pthread_mutex_unlock(&l->lock);
		return;
	}
	if (l->have_thread) {
		pthread_join(l->thread, NULL); /* the previous one has finished */
		l->have_thread = false;
	}
	j = calloc(1, sizeof(*j));
	if (!j || settings_dup(&l->cur, &j->s) < 0) {
		free(j);
		pthread_mutex_unlock(&l->lock);
		return;
	}
	j->l = l;
	j->loop = loop;
	j->mark = l->mark;
	j->generation = l->generation;
	l->store = store;
	l->running = true;
	if (pthread_create(&l->thread, NULL, worker, j) != 0) {
		l->running = false;
		settings_done(&j->s);
		free(j);
	} else {
		l->have_thread = true;
	}
	pthread_mutex_unlock(&l->lock);
}

void attrd_ldap_free(struct attrd_ldap *l)
{
	if (!l)
		return;
	if (l->have_thread)
		pthread_join(l->thread, NULL);
	result_free(l->pending); /* posted but never applied: the loop is gone */
	settings_done(&l->cur);
	pthread_mutex_destroy(&l->lock);
	nfskeys_ctx_unref(l->ctx);
	free(l);
}

size_t attrd_ldap_metrics(struct attrd_ldap *l, struct stats_metric *m, size_t max)
{
	const struct {
		const char *name;
		stats_metric_type type;
		uint64_t v;
	} all[] = {
		{ "ldap_syncs_total", STATS_METRIC_COUNTER, l->syncs },
		{ "ldap_full_reads_total", STATS_METRIC_COUNTER, l->full_reads },
		{ "ldap_unchanged_total", STATS_METRIC_COUNTER, l->unchanged },
		{ "ldap_failures_total", STATS_METRIC_COUNTER, l->failures },
		{ "ldap_invalid_total", STATS_METRIC_COUNTER, l->invalid },
		{ "ldap_attributes", STATS_METRIC_GAUGE, l->rows },
	};
	size_t n = 0;

	for (; n < ARRAY_SIZE(all) && n < max; n++)
		m[n] = (stats_metric){ .name = (char *)all[n].name, .labels = "",
				       .type = all[n].type, .value = all[n].v };
	return n;
}
