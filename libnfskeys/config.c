/* Configuration: the main INI file plus conf.d/ drop-ins read in lexical order, later
 * values overriding earlier ones.  Section and key names compare case-insensitively. */
#include <dirent.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <strings.h>
#include <sys/stat.h>

#include "ini.h"
#include "libnfskeys-private.h"

struct conf_entry {
	char *section;
	char *key;
	char *value;
};

struct conf {
	struct conf_entry *entries;
	size_t n, cap;
};

struct conf_load_state {
	struct nfskeys_ctx *ctx;
	struct conf *conf;
};

static struct conf_entry *conf_find(const struct conf *conf, const char *section,
				    const char *key)
{
	if (!conf)
		return NULL;
	for (size_t i = 0; i < conf->n; i++)
		if (strcaseeq(conf->entries[i].section, section) &&
		    strcaseeq(conf->entries[i].key, key))
			return &conf->entries[i];
	return NULL;
}

static int conf_set(struct conf *conf, const char *section, const char *key, const char *value)
{
	struct conf_entry *e = conf_find(conf, section, key);
	char *v = strdup(value);

	if (!v)
		return -ENOMEM;
	if (e) {
		free(e->value);
		e->value = v;
		return 0;
	}
	if (conf->n == conf->cap) {
		size_t cap = conf->cap ? conf->cap * 2 : 32;
		struct conf_entry *n = realloc(conf->entries, cap * sizeof(*n));
		if (!n) {
			free(v);
			return -ENOMEM;
		}
		conf->entries = n;
		conf->cap = cap;
	}
	e = &conf->entries[conf->n];
	e->section = strdup(section);
	e->key = strdup(key);
	e->value = v;
	if (!e->section || !e->key) {
		free(e->section);
		free(e->key);
		free(v);
		return -ENOMEM;
	}
	conf->n++;
	return 0;
}

static int on_section(void *userdata, const char *file, unsigned line, const char *section)
{
	struct conf_load_state *st = userdata;

	if (conf_schema_check(section, NULL) < 0)
		log_warning(st->ctx, "%s:%u: unknown section [%s], ignored", file, line, section);
	return 0;
}

static int on_value(void *userdata, const char *file, unsigned line, const char *section,
		    const char *key, const char *value)
{
	struct conf_load_state *st = userdata;
	int known = conf_schema_check(section, key);

	if (known < 0)
		return 0; /* already warned about the section */
	if (known == 0)
		log_warning(st->ctx, "%s:%u: unknown key '%s' in [%s], ignored", file, line, key,
			    section);
	return conf_set(st->conf, section, key, value);
}

static int conf_parse_one(struct conf_load_state *st, const char *path)
{
	char err[512] = "";
	int r;

	r = ini_parse_file(path, on_section, on_value, st, err, sizeof(err));
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
	if ((st.st_uid != 0 && st.st_uid != geteuid()) || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		log_warning(state->ctx, "%s: ignored: owned by uid %u or writable by others",
			    dir, (unsigned)st.st_uid);
		goto out;
	}
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		if (de->d_name[0] == '.' || len < 6 || !streq(de->d_name + len - 5, ".conf"))
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

int conf_load(struct nfskeys_ctx *ctx, const char *path, bool explicit_path, struct conf **ret)
{
	struct conf_load_state st = { .ctx = ctx };
	char dir[PATH_MAX];
	int r;

	st.conf = calloc(1, sizeof(*st.conf));
	if (!st.conf)
		return -ENOMEM;

	r = conf_parse_one(&st, path);
	if (r == -ENOENT && explicit_path)
		log_err(ctx, "%s: configuration file not found", path);
	if (r < 0 && !(r == -ENOENT && !explicit_path))
		goto fail;

	if (snprintf(dir, sizeof(dir), "%s", path) >= (int)sizeof(dir)) {
		r = -ENAMETOOLONG;
		goto fail;
	}
	{
		char dropins[PATH_MAX];
		if (snprintf(dropins, sizeof(dropins), "%s/conf.d", dirname(dir)) >=
		    (int)sizeof(dropins)) {
			r = -ENAMETOOLONG;
			goto fail;
		}
		r = conf_parse_dropins(&st, dropins);
		if (r < 0)
			goto fail;
	}
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
	free(conf);
	return NULL;
}

_public_ const char *nfskeys_conf_get(const struct nfskeys_ctx *ctx, const char *section,
				      const char *key)
{
	const struct conf_entry *e;

	if (!ctx || !section || !key)
		return NULL;
	e = conf_find(ctx_get_conf(ctx), section, key);
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

_public_ int nfskeys_conf_foreach(const struct nfskeys_ctx *ctx, const char *section,
				  int (*fn)(void *userdata, const char *key, const char *value),
				  void *userdata)
{
	const struct conf *conf;

	if (!ctx || !section || !fn)
		return -EINVAL;
	conf = ctx_get_conf(ctx);
	for (size_t i = 0; conf && i < conf->n; i++) {
		if (!strcaseeq(conf->entries[i].section, section))
			continue;
		int r = fn(userdata, conf->entries[i].key, conf->entries[i].value);
		if (r < 0)
			return r;
	}
	return 0;
}
