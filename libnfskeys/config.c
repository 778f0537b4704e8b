/* Configuration: the main INI file plus conf.d/ drop-ins read in lexical order, later
 * values overriding earlier ones.  Section and key names compare case-insensitively. */
#include <dirent.h>
#include <inttypes.h>
#include <limits.h>
#include <strings.h>
#include <sys/stat.h>

#include "conf-dropins.h"
#include "hashmap.h"
#include "ini.h"
#include "units.h"
#include "ctx-private.h"

struct conf_entry {
	char *section;
	char *key;
	char *value;
	uint64_t hash; /* of section and key, case-folded */
};

/* entries[] keeps the order in which each (section, key) first appeared, which is the
 * order nfskeys_conf_foreach() reports; index (common/hashmap) maps conf_hash() to entry
 * i + 1 so that parsing a section of n lines costs O(n), not O(n^2). */
struct conf {
	struct conf_entry *entries;
	size_t n, cap;
	struct hashmap index;
	/* The load's warnings (unknown sections and keys) the log priority then in force
	 * dropped, for nfskeys_conf_log_warnings() once the caller has set its own. */
	char *warnings;
	size_t warnings_len;
};

struct conf_load_state {
	struct nfskeys_ctx *ctx;
	struct conf *conf;
	unsigned *skipped; /* partial load: files with errors are counted here, not fatal */
	char error[512];   /* a value that stops the load (on_value), for conf_parse_one */
};

/* FNV-1a over ASCII-case-folded bytes.  Names stored here are ASCII (ini.c admits
 * nothing else) and two ASCII strings equal under strcasecmp() in any locale are equal
 * after ASCII folding, so equal names hash alike. */
static uint64_t fnv_fold(uint64_t h, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		h ^= (*p >= 'A' && *p <= 'Z') ? *p + ('a' - 'A') : *p;
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* Section, then a byte no name contains, then key. */
static uint64_t conf_hash(const char *section, const char *key)
{
	return fnv_fold((fnv_fold(0xcbf29ce484222325ULL, section) ^ 0xff) * 0x100000001b3ULL, key);
}

static bool ascii_only(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s >= 0x80)
			return false;
	return true;
}

struct conf_name {
	const char *section, *key;
};

static bool conf_eq(const void *ctx, uintptr_t id, const void *key)
{
	const struct conf_entry *e = &((const struct conf *)ctx)->entries[id - 1];
	const struct conf_name *name = key;

	return strcaseeq(e->section, name->section) && strcaseeq(e->key, name->key);
}

/* The entry for (section, key), or NULL. */
static struct conf_entry *conf_lookup(const struct conf *conf, const char *section, const char *key,
				      uint64_t hash)
{
	struct conf_name name = { section, key };
	uintptr_t id = hashmap_find(&conf->index, hash, conf_eq, conf, &name);

	return id ? &conf->entries[id - 1] : NULL;
}

static struct conf_entry *conf_find(const struct conf *conf, const char *section,
				    const char *key)
{
	if (!conf)
		return NULL;
	/* A name with a non-ASCII byte can only match a stored (ASCII) one through the
	 * locale's strcasecmp() (Turkish dotless i), which the hash does not model: scan. */
	if (!ascii_only(section) || !ascii_only(key)) {
		for (size_t i = 0; i < conf->n; i++)
			if (strcaseeq(conf->entries[i].section, section) &&
			    strcaseeq(conf->entries[i].key, key))
				return &conf->entries[i];
		return NULL;
	}
	return conf_lookup(conf, section, key, conf_hash(section, key));
}

/* Make room for one more entry: entries[] doubles when full, the index as it needs. */
static int conf_reserve(struct conf *conf)
{
	if (conf->n == conf->cap) {
		size_t cap = conf->cap ? conf->cap * 2 : 32;
		struct conf_entry *n = reallocarray(conf->entries, cap, sizeof(*n));

		if (!n)
			return -ENOMEM;
		conf->entries = n;
		conf->cap = cap;
	}
	return hashmap_reserve(&conf->index, 1);
}

/* Set (section, key) to value: a key seen before keeps its place and takes the new value
 * (later lines and drop-ins override earlier ones). */
static int conf_set(struct conf *conf, const char *section, const char *key, const char *value)
{
	uint64_t hash = conf_hash(section, key);
	struct conf_entry *e;
	char *v;
	int r;

	r = conf_reserve(conf);
	if (r < 0)
		return r;
	v = strdup(value);
	if (!v)
		return -ENOMEM;
	e = conf_lookup(conf, section, key, hash);
	if (e) {
		free(e->value);
		e->value = v;
		return 0;
	}
	e = &conf->entries[conf->n];
	e->section = strdup(section);
	e->key = strdup(key);
	e->value = v;
	e->hash = hash;
	if (!e->section || !e->key) {
		free(e->section);
		free(e->key);
		free(v);
		return -ENOMEM;
	}
	return hashmap_put(&conf->index, hash, ++conf->n); /* reserved: cannot fail */
}

/* A warning about the file: logged, and kept when the priority in force drops it. */
static void _printf_(2, 3) conf_warn(struct conf_load_state *st, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	int n;
	char *w;

	va_start(ap, fmt);
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (nfskeys_ctx_get_log_priority(st->ctx) >= LOG_WARNING) {
		log_warning(st->ctx, "%s", msg);
		return;
	}
	if (st->conf->warnings_len > 64 * 1024)
		return; /* enough to show the problem */
	n = (int)strlen(msg);
	w = realloc(st->conf->warnings, st->conf->warnings_len + (size_t)n + 2);
	if (!w)
		return;
	st->conf->warnings = w;
	memcpy(w + st->conf->warnings_len, msg, (size_t)n + 1);
	st->conf->warnings_len += (size_t)n + 1;
	w[st->conf->warnings_len] = '\0';
}

static int on_section(void *userdata, const char *file, unsigned line, const char *section)
{
	struct conf_load_state *st = userdata;

	if (conf_schema_check(section, NULL) < 0)
		conf_warn(st, "%s:%u: unknown section [%s], ignored", file, line, section);
	return 0;
}

static int on_value(void *userdata, const char *file, unsigned line, const char *section,
		    const char *key, const char *value)
{
	struct conf_load_state *st = userdata;
	/* one walk of the table for a known key (the common case, and every line of a
	 * large [Static] table); the unknown ones walk it again to tell key from section */
	const struct conf_key_def *d = conf_schema_find(section, key);
	int known = d ? 1 : conf_schema_check(section, key);
	char err[384];
	int64_t x;

	if (known < 0)
		return 0; /* already warned about the section */
	if (known == 0)
		conf_warn(st, "%s:%u: unknown key '%s' in [%s], ignored", file, line, key,
			  section);
	/* a bad value is said here, once, with its place, for every program; the reader
	 * that needs the key still refuses it.  [General] Verbosity is read by every
	 * program as its context is made: a bad one is an error of the file itself. */
	else if (d->type != CONF_TABLE && d->type != CONF_STRING &&
		 conf_value_parse(d, value, &x, err, sizeof(err)) < 0) {
		if (strcaseeq(section, "General") && strcaseeq(key, "Verbosity")) {
			snprintf(st->error, sizeof(st->error), "%s:%u: bad value: %s", file, line,
				 err);
			return -EINVAL;
		}
		conf_warn(st, "%s:%u: bad value: %s", file, line, err);
	}
	return conf_set(st->conf, section, key, value);
}

static int conf_parse_one(struct conf_load_state *st, const char *path)
{
	char err[512] = "";
	int r;

	st->error[0] = '\0';
	r = ini_parse_file(path, on_section, on_value, st, err, sizeof(err));
	if (r < 0 && !err[0] && st->error[0])
		snprintf(err, sizeof(err), "%s", st->error);
	if (r < 0 && r != -ENOENT && st->skipped) {
		/* a partial load goes on: the lines before the error count, the rest not */
		log_err(st->ctx, "%s (the rest of %s is skipped)", err[0] ? err : strerror(-r),
			path);
		(*st->skipped)++;
		return 0;
	}
	if (r < 0 && r != -ENOENT)
		log_err(st->ctx, "%s", err[0] ? err : strerror(-r));
	return r;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int conf_parse_dropins(struct conf_load_state *state, const char *dir)
{
	DIR *d = opendir(dir);
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	struct stat st;
	int r = 0;

	if (!d)
		return errno == ENOENT || errno == ENOTDIR ? 0 : negerrno();
	/* conf.d sits next to whatever file was named, /tmp included: a directory that
	 * someone else owns or may write to could inject configuration, so it is skipped. */
	if (fstat(dirfd(d), &st) < 0) {
		r = negerrno();
		goto out;
	}
	if (!conf_dropin_dir_trusted(&st)) {
		log_warning(state->ctx, "%s: ignored: owned by uid %u or writable by others",
			    dir, (unsigned)st.st_uid);
		goto out;
	}
	while ((de = readdir(d))) {
		if (!conf_dropin_name(de->d_name))
			continue;
		if (n == cap) {
			char **nn = realloc(names, (cap = cap ? cap * 2 : 16) * sizeof(*nn));
			if (!nn) {
				r = -ENOMEM;
				goto out;
			}
			names = nn;
		}
		names[n] = strdup(de->d_name);
		if (!names[n]) {
			r = -ENOMEM;
			goto out;
		}
		n++;
	}
	if (n > 1)
		qsort(names, n, sizeof(*names), cmp_str);
	for (size_t i = 0; i < n && r >= 0; i++) {
		char path[PATH_MAX];
		if (snprintf(path, sizeof(path), "%s/%s", dir, names[i]) >= (int)sizeof(path)) {
			r = -ENAMETOOLONG;
			break;
		}
		r = conf_parse_one(state, path);
		if (r == -ENOENT) /* raced with removal */
			r = 0;
	}
out:
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	closedir(d);
	return r;
}

int conf_load(struct nfskeys_ctx *ctx, const char *path, bool explicit_path,
	      unsigned *ret_skipped, struct conf **ret)
{
	struct conf_load_state st = { .ctx = ctx, .skipped = ret_skipped };
	char dir[PATH_MAX];
	int r;

	st.conf = calloc(1, sizeof(*st.conf));
	if (!st.conf)
		return -ENOMEM;

	/* the main file must parse even in a partial load: only a drop-in may be skipped */
	st.skipped = NULL;
	r = conf_parse_one(&st, path);
	st.skipped = ret_skipped;
	if (r == -ENOENT && explicit_path)
		log_err(ctx, "%s: configuration file not found", path);
	if (r < 0 && !(r == -ENOENT && !explicit_path))
		goto fail;

	r = conf_dropin_dir(path, dir, sizeof(dir));
	if (r < 0)
		goto fail;
	r = conf_parse_dropins(&st, dir);
	if (r < 0)
		goto fail;
	*ret = st.conf;
	return 0;
fail:
	conf_free(st.conf);
	return r;
}

struct conf *conf_free(struct conf *conf)
{
	if (!conf)
		return NULL;
	for (size_t i = 0; i < conf->n; i++) {
		free(conf->entries[i].section);
		free(conf->entries[i].key);
		free(conf->entries[i].value);
	}
	free(conf->entries);
	hashmap_free(&conf->index);
	free(conf->warnings);
	free(conf);
	return NULL;
}

_public_ const char *nfskeys_conf_get(const struct nfskeys_ctx *ctx, const char *section,
				      const char *key)
{
	const struct conf_entry *e;

	if (!ctx || !section || !key)
		return NULL;
	e = conf_find(ctx->conf, section, key);
	return e ? e->value : NULL;
}

_public_ int nfskeys_conf_get_bool(const struct nfskeys_ctx *ctx, const char *section,
				   const char *key, bool *ret)
{
	static const char *const yes[] = { "1", "yes", "true", "on" };
	static const char *const no[] = { "0", "no", "false", "off" };
	const char *v = nfskeys_conf_get(ctx, section, key);

	if (!ret)
		return -EINVAL;
	if (!v)
		return -ENOENT;
	for (size_t i = 0; i < ARRAY_SIZE(yes); i++) {
		if (strcaseeq(v, yes[i])) {
			*ret = true;
			return 0;
		}
		if (strcaseeq(v, no[i])) {
			*ret = false;
			return 0;
		}
	}
	return -EINVAL;
}

_public_ int nfskeys_conf_get_int(const struct nfskeys_ctx *ctx, const char *section,
				  const char *key, int64_t min, int64_t max, int64_t *ret)
{
	const char *v = nfskeys_conf_get(ctx, section, key);
	char *end;
	long long x;

	if (!ret || min > max)
		return -EINVAL;
	if (!v)
		return -ENOENT;
	errno = 0;
	x = strtoll(v, &end, 10);
	if (errno != 0 || end == v || *end != '\0')
		return -EINVAL;
	if (x < min || x > max)
		return -ERANGE;
	*ret = x;
	return 0;
}

_public_ unsigned nfskeys_conf_log_warnings(struct nfskeys_ctx *ctx)
{
	const struct conf *conf = ctx ? ctx->conf : NULL;
	unsigned n = 0;

	if (!conf || !conf->warnings)
		return 0;
	for (const char *w = conf->warnings; *w; w += strlen(w) + 1, n++)
		log_warning(ctx, "%s", w);
	return n;
}

_public_ int nfskeys_conf_get_duration(const struct nfskeys_ctx *ctx, const char *section,
				       const char *key, uint64_t unit_ms, int64_t min, int64_t max,
				       int64_t *ret)
{
	const char *v = nfskeys_conf_get(ctx, section, key);
	uint64_t x;
	int r;

	if (!ret || min > max || min < 0 || unit_ms == 0)
		return -EINVAL;
	if (!v)
		return -ENOENT;
	r = units_parse_duration(v, unit_ms, &x, NULL);
	if (r < 0)
		return r;
	if (x < (uint64_t)min || x > (uint64_t)max)
		return -ERANGE;
	*ret = (int64_t)x;
	return 0;
}

_public_ int nfskeys_conf_get_size(const struct nfskeys_ctx *ctx, const char *section,
				   const char *key, int64_t min, int64_t max, int64_t *ret)
{
	const char *v = nfskeys_conf_get(ctx, section, key);
	uint64_t x;
	int r;

	if (!ret || min > max || min < 0)
		return -EINVAL;
	if (!v)
		return -ENOENT;
	r = units_parse_size(v, &x, NULL);
	if (r < 0)
		return r;
	if (x < (uint64_t)min || x > (uint64_t)max)
		return -ERANGE;
	*ret = (int64_t)x;
	return 0;
}

_public_ int nfskeys_conf_foreach(const struct nfskeys_ctx *ctx, const char *section,
				  int (*fn)(void *userdata, const char *key, const char *value),
				  void *userdata)
{
	const struct conf *conf;

	if (!ctx || !section || !fn)
		return -EINVAL;
	conf = ctx->conf;
	for (size_t i = 0; conf && i < conf->n; i++) {
		if (!strcaseeq(conf->entries[i].section, section))
			continue;
		int r = fn(userdata, conf->entries[i].key, conf->entries[i].value);
		if (r < 0)
			return r;
	}
	return 0;
}
