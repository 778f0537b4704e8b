/* Fleet sync for nfskeys-attrd: a worker thread reads every nfskeysDirectoryPolicy entry
 * below [Attrd] LDAP-Base (bounded by LDAP-Timeout), and the loop thread swaps them in as
 * the store's LDAP-sourced rows in one transaction.  A failed sync changes nothing: the
 * copy from the last good sync stays in the store (and survives restarts).  TLS (StartTLS,
 * ldaps://, the CA, no bind password in clear) is common/ldap-tls.c, shared with the idmap
 * ldap backend. */
#include <fcntl.h>
#include <ldap.h>
#include <pthread.h>
#include <syslog.h>

#include "attrd-ldap.h"
#include "conf-get.h"
#include "evloop.h"
#include "ldap-tls.h"
#include "macros.h"
#include "nfskeys-attr-daemon.h"
/* after macros.h: <rpc/rpc.h> redefines MIN/MAX in its system header */
#include "attr.h"

struct settings {
	char *uri, *base, *bind_dn, *pw_file, *ca_file;
	bool start_tls;
	unsigned interval, timeout;
};

struct result {
	struct attrd_ldap *l;
	struct attr_sync_row *rows;
	char **strings; /* everything rows point to */
	size_t n, nstrings;
	int error;
	char msg[512];
};

struct attrd_ldap {
	struct nfskeys_ctx *ctx;
	struct settings cur;
	pthread_mutex_t lock;
	bool running;
	pthread_t thread;
	bool have_thread;
	struct result *pending; /* posted, not yet applied */
	struct nfskeys_attr_store **store;
	uint64_t syncs, failures, rows, invalid;
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

static struct ldap_tls settings_tls(const struct settings *s)
{
	return (struct ldap_tls){ .uri = s->uri, .ca_file = s->ca_file,
				  .start_tls = s->start_tls, .section = "[Attrd] ",
				  .key_prefix = "LDAP-" };
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
	/* a bind password never goes over a cleartext connection unless the admin says so */
	tls = settings_tls(&tmp);
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
		log_notice(ctx, "LDAP-URI removed: syncing stops at the next restart; the "
				"LDAP-sourced policies stay");
		return 0;
	}
	pthread_mutex_lock(&l->lock);
	settings_done(&l->cur);
	l->cur = s;
	pthread_mutex_unlock(&l->lock);
	return 0;
}

unsigned attrd_ldap_interval(const struct attrd_ldap *l)
{
	return l ? l->cur.interval : 0;
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

static char *keep(struct result *res, const char *s, size_t n)
{
	char **ns = realloc(res->strings, (res->nstrings + 1) * sizeof(*ns));
	char *c;

	if (!ns)
		return NULL;
	res->strings = ns;
	c = strndup(s, n);
	if (c)
		res->strings[res->nstrings++] = c;
	return c;
}

static int add_row(struct result *res, const char *domain, const char *path, const char *kv,
		   size_t kvlen)
{
	const char *eq = memchr(kv, '=', kvlen);
	struct attr_sync_row *nr;
	char *k, *v;

	if (!eq)
		return -EINVAL;
	k = keep(res, kv, (size_t)(eq - kv));
	v = keep(res, eq + 1, kvlen - (size_t)(eq - kv) - 1);
	if (!k || !v)
		return -ENOMEM;
	nr = realloc(res->rows, (res->n + 1) * sizeof(*nr));
	if (!nr)
		return -ENOMEM;
	res->rows = nr;
	res->rows[res->n++] = (struct attr_sync_row){ domain, path, k, v };
	return 0;
}

static void fetch(struct result *res, const struct settings *s)
{
	static char *attrs[] = { "nfskeysDomain", "nfskeysPath", "nfskeysAttribute", NULL };
	struct timeval tv = { .tv_sec = s->timeout };
	struct ldap_tls tls = settings_tls(s);
	const char *step = "initialize";
	LDAP *ld = NULL;
	LDAPMessage *msg = NULL;
	int v3 = LDAP_VERSION3, rc;

	rc = ldap_initialize(&ld, s->uri);
	if (rc != LDAP_SUCCESS)
		goto fail;
	ldap_set_option(ld, LDAP_OPT_PROTOCOL_VERSION, &v3);
	ldap_set_option(ld, LDAP_OPT_NETWORK_TIMEOUT, &tv);
	ldap_set_option(ld, LDAP_OPT_TIMEOUT, &tv);
	ldap_set_option(ld, LDAP_OPT_REFERRALS, LDAP_OPT_OFF);
	/* the certificate is always checked; a failed StartTLS never falls back to plain
	 * LDAP: the sync fails and the last good copy stays */
	step = s->start_tls ? "StartTLS" : "connect";
	rc = ldap_tls_setup(ld, &tls);
	if (rc != LDAP_SUCCESS)
		goto fail;
	if (s->bind_dn) {
		/* Read into a secret buffer (wiped, and the process made non-dumpable), not
		 * through stdio, whose buffer would keep a copy in freed heap. */
		struct nfskeys_secret *pw = NULL;
		struct berval cred = { .bv_val = (char *)"", .bv_len = 0 };
		int fd = s->pw_file ? open(s->pw_file, O_RDONLY | O_CLOEXEC | O_NOCTTY) : -1;

		if (s->pw_file && fd < 0) {
			snprintf(res->msg, sizeof(res->msg), "cannot read LDAP-Bind-Password-File: %m");
			res->error = -EACCES;
			goto out;
		}
		if (fd >= 0) {
			int r = nfskeys_secret_read_password(fd, NULL, 511, &pw);

			close(fd);
			if (r < 0 && r != -ENODATA) {
				snprintf(res->msg, sizeof(res->msg),
					 "cannot read LDAP-Bind-Password-File: %s", strerror(-r));
				res->error = r;
				goto out;
			}
		}
		if (pw) {
			cred.bv_val = nfskeys_secret_data(pw);
			cred.bv_len = nfskeys_secret_len(pw);
		}
		step = "bind";
		rc = ldap_sasl_bind_s(ld, s->bind_dn, LDAP_SASL_SIMPLE, &cred, NULL, NULL, NULL);
		nfskeys_secret_free(pw);
		if (rc != LDAP_SUCCESS)
			goto fail;
	}
	step = "search";
	rc = ldap_search_ext_s(ld, s->base, LDAP_SCOPE_SUBTREE,
			       "(objectClass=nfskeysDirectoryPolicy)", attrs, 0, NULL, NULL, &tv,
			       0, &msg);
	if (rc != LDAP_SUCCESS)
		goto fail;
	for (LDAPMessage *e = ldap_first_entry(ld, msg); e; e = ldap_next_entry(ld, e)) {
		struct berval **dom = ldap_get_values_len(ld, e, "nfskeysDomain");
		struct berval **path = ldap_get_values_len(ld, e, "nfskeysPath");
		struct berval **kvs = ldap_get_values_len(ld, e, "nfskeysAttribute");
		char *d = NULL, *p = NULL;

		if (dom && dom[0] && path && path[0]) {
			d = keep(res, dom[0]->bv_val, dom[0]->bv_len);
			p = keep(res, path[0]->bv_val, path[0]->bv_len);
		}
		for (size_t i = 0; d && p && kvs && kvs[i]; i++)
			if (add_row(res, d, p, kvs[i]->bv_val, kvs[i]->bv_len) == -ENOMEM)
				res->error = -ENOMEM;
		ldap_value_free_len(dom);
		ldap_value_free_len(path);
		ldap_value_free_len(kvs);
	}
	goto out;
fail:
	ldap_tls_error(&tls, ld, step, rc, res->msg, sizeof(res->msg));
	res->error = rc == LDAP_SERVER_DOWN || rc == LDAP_TIMEOUT || rc == LDAP_CONNECT_ERROR ?
			     -EHOSTDOWN : -EIO;
out:
	ldap_msgfree(msg);
	if (ld)
		ldap_unbind_ext_s(ld, NULL, NULL);
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
	l->syncs++;
	if (res->error < 0) {
		l->failures++;
		log_warning(l->ctx, "LDAP sync failed (%s); keeping the %llu LDAP-sourced "
				    "attributes from the last good sync",
			    res->msg[0] ? res->msg : strerror(-res->error),
			    (unsigned long long)l->rows);
		goto out;
	}
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
out:
	result_free(res);
}

struct job {
	struct attrd_ldap *l;
	struct evloop *loop;
	struct settings s;
};

static void *worker(void *arg)
{
	struct job *j = arg;
	struct result *res = calloc(1, sizeof(*res));

	if (res) {
		res->l = j->l;
		fetch(res, &j->s);
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

	if (!l)
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
