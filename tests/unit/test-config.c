/* Configuration loading: the main file, conf.d drop-in order, typed getters, warnings
 * for unknown keys and errors for malformed lines, all through a real temp directory. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <syslog.h>

#include "conf-get.h"
#include "macros.h"
#include "nfskeys.h"
#include "test-util.h"

static char logbuf[4096];

static void capture(void *userdata, int priority, const char *file, int line, const char *fn,
		    const char *format, va_list args)
{
	size_t n = strlen(logbuf);
	n += (size_t)snprintf(logbuf + n, sizeof(logbuf) - n, "<%d>", priority);
	if (n < sizeof(logbuf))
		n += (size_t)vsnprintf(logbuf + n, sizeof(logbuf) - n, format, args);
	if (n < sizeof(logbuf) - 1)
		strcat(logbuf, "\n");
}

static void write_file(const char *rel, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tu_dir, rel);
	f = fopen(path, "we");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int setup(void **state)
{
	char path[128];

	if (tu_dir_setup("config") < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/conf.d", tu_dir);
	mkdir(path, 0755);
	logbuf[0] = '\0';
	unsetenv("NFSKEYS_CONF");
	unsetenv("NFSKEYS_LOG");
	return 0;
}

static int teardown(void **state)
{
	return tu_dir_teardown();
}

static struct nfskeys_ctx *load(int expect)
{
	struct nfskeys_ctx *ctx = NULL;
	char path[128];

	snprintf(path, sizeof(path), "%s/nfskeys.conf", tu_dir);
	assert_int_equal(nfskeys_ctx_new_full(path, capture, NULL, &ctx), expect);
	if (expect == 0)
		assert_non_null(ctx);
	else
		assert_null(ctx);
	return ctx;
}

static void test_valid(void **state)
{
	struct nfskeys_ctx *ctx;
	bool b = false;
	int64_t i = 0;

	write_file("nfskeys.conf", "[General]\nDomain = example.com\nVerbosity = 3\n"
				   "[Mapping]\nNobody-User = nobody\nflag = yes\n");
	ctx = load(0);
	assert_string_equal(nfskeys_conf_get(ctx, "General", "Domain"), "example.com");
	/* names compare case-insensitively */
	assert_string_equal(nfskeys_conf_get(ctx, "general", "DOMAIN"), "example.com");
	assert_null(nfskeys_conf_get(ctx, "General", "Local-Realms"));
	assert_int_equal(nfskeys_conf_get_int(ctx, "General", "Verbosity", 0, 7, &i), 0);
	assert_int_equal(i, 3);
	assert_int_equal(nfskeys_conf_get_int(ctx, "General", "Verbosity", 0, 2, &i), -ERANGE);
	assert_int_equal(nfskeys_conf_get_int(ctx, "General", "Domain", 0, 2, &i), -EINVAL);
	assert_int_equal(nfskeys_conf_get_int(ctx, "General", "Missing", 0, 2, &i), -ENOENT);
	assert_int_equal(nfskeys_conf_get_bool(ctx, "Mapping", "flag", &b), 0);
	assert_true(b);
	assert_int_equal(nfskeys_conf_get_bool(ctx, "Mapping", "Nobody-User", &b), -EINVAL);
	assert_string_equal(logbuf, "");
	nfskeys_ctx_unref(ctx);
}

static void test_malformed(void **state)
{
	char expect[256];

	write_file("nfskeys.conf", "[General]\nDomain = example.com\nthis is not valid\n");
	load(-EINVAL);
	snprintf(expect, sizeof(expect),
		 "<3>%s/nfskeys.conf:3: expected 'key = value', '[section]' or a comment\n", tu_dir);
	assert_string_equal(logbuf, expect);
}

static void test_malformed_dropin(void **state)
{
	char expect[256];

	write_file("nfskeys.conf", "[General]\nDomain = a\n");
	write_file("conf.d/10-bad.conf", "[General\n");
	load(-EINVAL);
	snprintf(expect, sizeof(expect),
		 "<3>%s/conf.d/10-bad.conf:1: section header without closing ']'\n", tu_dir);
	assert_string_equal(logbuf, expect);
}

static void test_dropin_order(void **state)
{
	struct nfskeys_ctx *ctx;

	write_file("nfskeys.conf", "[General]\nDomain = main\nLocal-Realms = MAIN\n");
	write_file("conf.d/20-b.conf", "[General]\nDomain = twenty\n");
	write_file("conf.d/10-a.conf", "[General]\nDomain = ten\nLocal-Realms = TEN\n");
	write_file("conf.d/30-c.conf.disabled", "[General]\nDomain = ignored\n");
	write_file("conf.d/.hidden.conf", "[General]\nDomain = hidden\n");
	ctx = load(0);
	/* lexical order: main, 10-a, 20-b; later wins; non-.conf and dot files ignored */
	assert_string_equal(nfskeys_conf_get(ctx, "General", "Domain"), "twenty");
	assert_string_equal(nfskeys_conf_get(ctx, "General", "Local-Realms"), "TEN");
	nfskeys_ctx_unref(ctx);
}

static void test_dropin_masked_and_fifo(void **state)
{
	struct nfskeys_ctx *ctx;
	char path[256], expect[320];

	write_file("nfskeys.conf", "[General]\nDomain = main\n");
	/* a drop-in symlinked to /dev/null is empty (masked), not an error */
	snprintf(path, sizeof(path), "%s/conf.d/50-masked.conf", tu_dir);
	assert_int_equal(symlink("/dev/null", path), 0);
	ctx = load(0);
	assert_string_equal(nfskeys_conf_get(ctx, "General", "Domain"), "main");
	nfskeys_ctx_unref(ctx);
	/* a FIFO is refused at once (it used to block the reader forever) */
	snprintf(path, sizeof(path), "%s/conf.d/60-fifo.conf", tu_dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	load(-EINVAL);
	snprintf(expect, sizeof(expect), "<3>%s: not a regular file\n", path);
	assert_string_equal(logbuf, expect);
}

static void test_dropin_dir_unsafe(void **state)
{
	struct nfskeys_ctx *ctx;
	char path[256];

	write_file("nfskeys.conf", "[General]\nDomain = main\n");
	write_file("conf.d/50.conf", "[General]\nDomain = injected\n");
	snprintf(path, sizeof(path), "%s/conf.d", tu_dir);
	/* a conf.d others may write to is skipped, with a warning */
	assert_int_equal(chmod(path, 0777), 0);
	setenv("NFSKEYS_LOG", "warning", 1);
	ctx = load(0);
	unsetenv("NFSKEYS_LOG");
	assert_string_equal(nfskeys_conf_get(ctx, "General", "Domain"), "main");
	assert_non_null(strstr(logbuf, "conf.d: ignored: owned by uid"));
	nfskeys_ctx_unref(ctx);
	/* so is one owned by another user (only root can set that up) */
	assert_int_equal(chmod(path, 0755), 0);
	if (geteuid() == 0) {
		assert_int_equal(chown(path, 65534, 65534), 0);
		ctx = load(0);
		assert_string_equal(nfskeys_conf_get(ctx, "General", "Domain"), "main");
		nfskeys_ctx_unref(ctx);
		assert_int_equal(chown(path, 0, 0), 0);
	}
	/* and a safe one is read */
	ctx = load(0);
	assert_string_equal(nfskeys_conf_get(ctx, "General", "Domain"), "injected");
	nfskeys_ctx_unref(ctx);
}

static int collect(void *userdata, const char *key, const char *value)
{
	char *buf = userdata;
	strcat(buf, key);
	strcat(buf, "=");
	strcat(buf, value);
	strcat(buf, ";");
	return 0;
}

static void test_foreach(void **state)
{
	struct nfskeys_ctx *ctx;
	char buf[256] = "";

	write_file("nfskeys.conf", "[Static]\nalice@A = alice\nbob@A = bob\n[General]\nDomain=x\n");
	write_file("conf.d/50.conf", "[Static]\nalice@A = alice2\ncarol@A = carol\n");
	ctx = load(0);
	assert_int_equal(nfskeys_conf_foreach(ctx, "Static", collect, buf), 0);
	assert_string_equal(buf, "alice@A=alice2;bob@A=bob;carol@A=carol;");
	nfskeys_ctx_unref(ctx);
}

/* Many keys: the lookup index must agree with the linear semantics it replaced. */
#define MANY 50000

/* The value key i ends with: 30-c.conf overrides every 7th key, 10-a.conf repeats every
 * 5th of its own keys later in the same file, every other key keeps its first value. */
static void many_value(unsigned i, char *buf, size_t size)
{
	if (i % 7 == 0)
		snprintf(buf, size, "o%u", i);
	else if (i >= 20000 && i < 40000 && i % 5 == 0)
		snprintf(buf, size, "d%u", i);
	else
		snprintf(buf, size, "v%u", i);
}

static FILE *open_file(const char *rel)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tu_dir, rel);
	f = fopen(path, "we");
	assert_non_null(f);
	return f;
}

struct many_walk {
	unsigned n;
	const char *prefix;
	bool in_order;
};

/* foreach order is first appearance: k0, k1, ... whatever file or line changed a value. */
static int many_check(void *userdata, const char *key, const char *value)
{
	struct many_walk *w = userdata;
	char k[64], v[32];

	snprintf(k, sizeof(k), "k%u@example.test", w->n);
	many_value(w->n, v, sizeof(v));
	if (!streq(key, k) || !streq(value, w->prefix[0] ? w->prefix : v))
		w->in_order = false;
	w->n++;
	return 0;
}

static void test_many_keys(void **state)
{
	struct nfskeys_ctx *ctx;
	struct many_walk walk = { .prefix = "", .in_order = true };
	FILE *main_f = open_file("nfskeys.conf"), *a = open_file("conf.d/10-a.conf"),
	     *b = open_file("conf.d/20-b.conf"), *c = open_file("conf.d/30-c.conf");
	char k[64], v[32];

	/* keys 0..19999 in the main file, 20000..39999 in 10-a (every 5th again at its end),
	 * 40000..49999 in 20-b with a [Mapping] section sharing the first 1000 key names,
	 * then 30-c overriding every 7th key spelled in capitals (names are case-blind) */
	fputs("[Static]\n", main_f);
	fputs("[static]\n", a);
	fputs("[STATIC]\n", b);
	fputs("[Static]\n", c);
	for (unsigned i = 0; i < MANY; i++)
		fprintf(i < 20000 ? main_f : i < 40000 ? a : b, "k%u@example.test = v%u\n", i, i);
	for (unsigned i = 20000; i < 40000; i += 5)
		fprintf(a, "k%u@example.test = d%u\n", i, i);
	fputs("[Mapping]\n", b);
	for (unsigned i = 0; i < 1000; i++)
		fprintf(b, "k%u@example.test = mapping\n", i);
	for (unsigned i = 0; i < MANY; i += 7)
		fprintf(c, "K%u@EXAMPLE.TEST = o%u\n", i, i);
	fclose(main_f);
	fclose(a);
	fclose(b);
	fclose(c);

	ctx = load(0);
	assert_string_equal(logbuf, "");
	for (unsigned i = 0; i < MANY; i++) {
		const char *got;

		snprintf(k, sizeof(k), i % 2 ? "k%u@example.test" : "K%u@Example.Test", i);
		many_value(i, v, sizeof(v));
		got = nfskeys_conf_get(ctx, i % 3 ? "Static" : "sTaTiC", k);
		if (!got || !streq(got, v))
			fail_msg("[Static] %s: expected %s, got %s", k, v, got ? got : "(none)");
	}
	assert_int_equal(nfskeys_conf_foreach(ctx, "Static", many_check, &walk), 0);
	assert_int_equal(walk.n, MANY);
	assert_true(walk.in_order);

	/* the same key names in another section are other entries */
	walk = (struct many_walk){ .prefix = "mapping", .in_order = true };
	assert_int_equal(nfskeys_conf_foreach(ctx, "mapping", many_check, &walk), 0);
	assert_int_equal(walk.n, 1000);
	assert_true(walk.in_order);
	assert_string_equal(nfskeys_conf_get(ctx, "Mapping", "k999@example.test"), "mapping");
	assert_null(nfskeys_conf_get(ctx, "Mapping", "k1000@example.test"));
	assert_string_equal(nfskeys_conf_get(ctx, "Static", "k999@example.test"), "v999");

	/* absent names, a prefix of a name, section and key swapped, a non-ASCII name */
	assert_null(nfskeys_conf_get(ctx, "Static", "k50000@example.test"));
	assert_null(nfskeys_conf_get(ctx, "Static", "k1@example.tes"));
	assert_null(nfskeys_conf_get(ctx, "k1@example.test", "Static"));
	assert_null(nfskeys_conf_get(ctx, "Static", "k1@example.t\xc3\xa9st"));
	assert_null(nfskeys_conf_get(ctx, "Idmap", "k1@example.test"));
	nfskeys_ctx_unref(ctx);
}

static void test_unknown_warned(void **state)
{
	struct nfskeys_ctx *ctx;
	char expect[512];

	write_file("nfskeys.conf", "[General]\nDomian = typo\n[Nonsense]\nx = 1\n");
	ctx = load(0);
	/* warnings are below the default LOG_ERR threshold: raise it and reload */
	nfskeys_ctx_unref(ctx);
	assert_string_equal(logbuf, "");
	setenv("NFSKEYS_LOG", "warning", 1);
	ctx = load(0);
	unsetenv("NFSKEYS_LOG");
	snprintf(expect, sizeof(expect),
		 "<4>%s/nfskeys.conf:2: unknown key 'Domian' in [General], ignored\n"
		 "<4>%s/nfskeys.conf:3: unknown section [Nonsense], ignored\n",
		 tu_dir, tu_dir);
	assert_string_equal(logbuf, expect);
	assert_null(nfskeys_conf_get(ctx, "Nonsense", "x"));
	nfskeys_ctx_unref(ctx);
}

static void test_missing_explicit(void **state)
{
	load(-ENOENT);
	assert_non_null(strstr(logbuf, "configuration file not found"));
}

static void test_env_override(void **state)
{
	struct nfskeys_ctx *ctx = NULL;
	char path[128];

	write_file("nfskeys.conf", "[General]\nDomain = fromenv\n");
	snprintf(path, sizeof(path), "%s/nfskeys.conf", tu_dir);
	setenv("NFSKEYS_CONF", path, 1);
	assert_int_equal(nfskeys_ctx_new_full(NULL, capture, NULL, &ctx), 0);
	unsetenv("NFSKEYS_CONF");
	assert_string_equal(nfskeys_ctx_get_conf_path(ctx), path);
	assert_string_equal(nfskeys_conf_get(ctx, "General", "Domain"), "fromenv");
	nfskeys_ctx_unref(ctx);
}

static void test_ref_unref(void **state)
{
	struct nfskeys_ctx *ctx;

	write_file("nfskeys.conf", "[General]\nDomain = x\n");
	ctx = load(0);
	assert_ptr_equal(nfskeys_ctx_ref(ctx), ctx);
	assert_null(nfskeys_ctx_unref(ctx));
	/* still alive after one unref */
	assert_string_equal(nfskeys_conf_get(ctx, "General", "Domain"), "x");
	assert_null(nfskeys_ctx_unref(ctx));
	assert_null(nfskeys_ctx_unref(NULL));
	assert_null(nfskeys_ctx_ref(NULL));
	assert_int_equal(nfskeys_ctx_new(NULL, NULL), -EINVAL);
}

static void test_log_priority(void **state)
{
	struct nfskeys_ctx *ctx;

	write_file("nfskeys.conf", "[General]\n");
	setenv("NFSKEYS_LOG", "debug", 1);
	ctx = load(0);
	unsetenv("NFSKEYS_LOG");
	assert_int_equal(nfskeys_ctx_get_log_priority(ctx), LOG_DEBUG);
	logbuf[0] = '\0';
	nfskeys_ctx_set_log_priority(ctx, LOG_WARNING);
	nfskeys_ctx_log(ctx, LOG_INFO, __FILE__, __LINE__, __func__, "dropped %d", 1);
	nfskeys_ctx_log(ctx, LOG_WARNING, __FILE__, __LINE__, __func__, "kept %d", 2);
	assert_string_equal(logbuf, "<4>kept 2\n");
	nfskeys_ctx_unref(ctx);
}

static void test_verbosity(void **state)
{
	struct nfskeys_ctx *ctx;
	char expect[320];

	write_file("nfskeys.conf", "[General]\nVerbosity = info\n");
	ctx = load(0);
	assert_int_equal(nfskeys_ctx_get_log_priority(ctx), LOG_INFO);
	nfskeys_ctx_unref(ctx);
	/* of $NFSKEYS_LOG and the file, the more verbose wins */
	setenv("NFSKEYS_LOG", "debug", 1);
	ctx = load(0);
	assert_int_equal(nfskeys_ctx_get_log_priority(ctx), LOG_DEBUG);
	nfskeys_ctx_unref(ctx);
	setenv("NFSKEYS_LOG", "err", 1);
	ctx = load(0);
	unsetenv("NFSKEYS_LOG");
	assert_int_equal(nfskeys_ctx_get_log_priority(ctx), LOG_INFO);
	nfskeys_ctx_unref(ctx);
	/* a bad value is a configuration error naming the file, the line, the value and
	 * the schema's list, once */
	write_file("nfskeys.conf", "[General]\nVerbosity = loud\n");
	logbuf[0] = '\0';
	load(-EINVAL);
	snprintf(expect, sizeof(expect),
		 "<3>%s/nfskeys.conf:2: bad value: [General] Verbosity = loud: expected one of "
		 "err|warning|notice|info|debug|error|warn|emerg|alert|crit|0|1|2|3|4|5|6|7\n",
		 tu_dir);
	assert_string_equal(logbuf, expect);
}

/* ---------------------------------------------------------------- the typed schema */

/* Every row is well formed: a typed row's default parses and lies in its bounds, names are
 * unique, and only tables are wildcards. */
static void test_schema_rows(void **state)
{
	const struct conf_key_def *rows;
	size_t n;

	rows = conf_schema_rows(&n);
	assert_true(n > 100);
	for (size_t i = 0; i < n; i++) {
		const struct conf_key_def *d = &rows[i];
		char err[256] = "";
		int64_t v;

		assert_non_null(d->desc);
		assert_true(strchr(d->key, '*') == NULL || d->type == CONF_TABLE);
		if (d->type == CONF_TABLE)
			assert_int_equal(d->key[strlen(d->key) - 1], '*');
		if (d->type == CONF_INT || d->type == CONF_DURATION || d->type == CONF_SIZE)
			assert_true(d->min <= d->max);
		if (d->type == CONF_DURATION)
			assert_true(d->unit_ms == 1 || d->unit_ms == 1000);
		if (d->def && d->def[0] != '(' && conf_value_parse(d, d->def, &v, err, sizeof(err)) < 0)
			fail_msg("default of [%s] %s does not parse: %s", d->section, d->key, err);
		for (size_t j = 0; j < i; j++)
			if (strcaseeq(rows[j].section, d->section) && strcaseeq(rows[j].key, d->key))
				fail_msg("[%s] %s is in the table twice", d->section, d->key);
		assert_ptr_equal(conf_schema_find(d->section, d->type == CONF_TABLE ? "S-x" : d->key) ==
					 d || d->type == CONF_TABLE,
				 true);
	}
}

/* A bad value is said at load, once, with file, line, key, value and bounds, whoever
 * loads the file; the load goes on (the reader that needs the key refuses it). */
static void test_bad_value_at_load(void **state)
{
	struct nfskeys_ctx *ctx;
	char expect[1536];

	write_file("nfskeys.conf", "[Idmapd]\nWorkers = lots\nMax-Request = 2M\n"
				   "Stale-Wait = 2s\n[Writeback]\nDirty-Limit = 12Q\n"
				   "[PAM]\nKerberos = maybe\n[Kernel]\nChannel-Dir = relative\n"
				   "Server-Channels = sometimes\n[Cred]\nCIFS-Negative-TTL = 2h\n");
	setenv("NFSKEYS_LOG", "warning", 1);
	ctx = load(0);
	unsetenv("NFSKEYS_LOG");
	snprintf(expect, sizeof(expect),
		 "<4>%1$s/nfskeys.conf:2: bad value: [Idmapd] Workers = lots: expected a number "
		 "from 1 to 64\n"
		 "<4>%1$s/nfskeys.conf:3: bad value: [Idmapd] Max-Request = 2M: expected a size "
		 "from 64 to 1M (bytes, optionally with K, M, G or T)\n"
		 "<4>%1$s/nfskeys.conf:6: bad value: [Writeback] Dirty-Limit = 12Q: expected a "
		 "size from 1M to 1T (bytes, optionally with K, M, G or T)\n"
		 "<4>%1$s/nfskeys.conf:8: bad value: [PAM] Kerberos = maybe: expected yes or no\n"
		 "<4>%1$s/nfskeys.conf:10: bad value: [Kernel] Channel-Dir = relative: expected an "
		 "absolute path\n"
		 "<4>%1$s/nfskeys.conf:11: bad value: [Kernel] Server-Channels = sometimes: "
		 "expected one of auto|yes|no|true|false|on|off|1|0\n"
		 "<4>%1$s/nfskeys.conf:13: bad value: [Cred] CIFS-Negative-TTL = 2h: expected a "
		 "duration from 1 to 3600 s (a number, optionally with ms, s, m, h or d)\n",
		 tu_dir);
	assert_string_equal(logbuf, expect);
	/* the values are kept for the readers, which refuse them with their own words */
	assert_string_equal(nfskeys_conf_get(ctx, "Idmapd", "Workers"), "lots");
	nfskeys_ctx_unref(ctx);

	/* the message itself (which daemons hand to clients, not only to the log) shows a
	 * value with control bytes escaped and a long one cut at 64 bytes */
	{
		const struct conf_key_def *d = conf_schema_find("Idmapd", "Workers");
		char err[256], big[200];
		int64_t v;

		assert_int_equal(conf_value_parse(d, "1\x1b[2J", &v, err, sizeof(err)), -EINVAL);
		assert_string_equal(err, "[Idmapd] Workers = 1\\x1b[2J: expected a number from 1 "
					 "to 64");
		memset(big, 'x', sizeof(big) - 1);
		big[sizeof(big) - 1] = '\0';
		assert_int_equal(conf_value_parse(d, big, &v, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "xxx...: expected"));
		assert_true(strlen(err) < 64 + 60);
	}
}

/* The typed getter: the file's value in the one syntax, else the table's default. */
static void test_typed_getter(void **state)
{
	struct nfskeys_ctx *ctx;
	char err[256];
	int64_t v = -1;
	bool b;

	write_file("nfskeys.conf", "[Idmapd]\nStale-Wait = 2s\nMax-Request = 8K\nWorkers = 65\n"
				   "[Attrd]\nMax-Bytes-Per-User = 1G\nIdle-Timeout = 5m\n"
				   "Trust-Synthesized-Owners = maybe\n"
				   "[Mounts]\nApply-Mounts = on\n[Writeback]\nPolicy = WU2012\n");
	ctx = load(0);
	assert_int_equal(conf_get_typed(ctx, "Idmapd", "Stale-Wait", &v, err, sizeof(err)), 0);
	assert_int_equal(v, 2000); /* a milliseconds key */
	assert_int_equal(conf_get_typed(ctx, "Idmapd", "Max-Request", &v, err, sizeof(err)), 0);
	assert_int_equal(v, 8192);
	assert_int_equal(conf_get_typed(ctx, "Attrd", "Max-Bytes-Per-User", &v, err, sizeof(err)),
			 0);
	assert_int_equal(v, 1 << 30);
	assert_int_equal(conf_get_typed(ctx, "Attrd", "Idle-Timeout", &v, err, sizeof(err)), 0);
	assert_int_equal(v, 300);
	assert_int_equal(conf_get_typed(ctx, "Mounts", "Apply-Mounts", &v, err, sizeof(err)), 0);
	assert_int_equal(v, 1);
	assert_int_equal(conf_get_typed(ctx, "Writeback", "Policy", &v, err, sizeof(err)), 0);
	assert_int_equal(v, 2); /* kara2011|wu2011|wu2012|nfskeys */
	/* unset: the default of the table */
	assert_int_equal(conf_get_typed(ctx, "Idmapd", "Cache-Size", &v, err, sizeof(err)), 0);
	assert_int_equal(v, 65536);
	assert_int_equal(conf_get_typed(ctx, "Attrd", "Max-Bytes-Per-User", &v, err, 0), 0);
	assert_int_equal(conf_get_typed(ctx, "Attrd", "Orphan-Check-Interval", &v, err,
					sizeof(err)), 0);
	assert_int_equal(v, 300);
	assert_int_equal(conf_get_typed(ctx, "Kernel", "Client-Pipe", &v, err, sizeof(err)), 0);
	assert_int_equal(v, 0); /* auto */
	/* out of bounds: the error names key, value and bounds */
	assert_int_equal(conf_get_typed(ctx, "Idmapd", "Workers", &v, err, sizeof(err)), -ERANGE);
	assert_string_equal(err, "[Idmapd] Workers = 65: expected a number from 1 to 64");
	/* a yes/no row into a bool: the file's value, the default, a bad value named */
	b = false;
	assert_int_equal(conf_get_bool(ctx, "Mounts", "Apply-Mounts", &b, err, sizeof(err)), 0);
	assert_true(b);
	b = true;
	assert_int_equal(conf_get_bool(ctx, "Attrd", "LDAP-StartTLS", &b, err, sizeof(err)), 0);
	assert_false(b);
	assert_int_equal(conf_get_bool(ctx, "Attrd", "Trust-Synthesized-Owners", &b, err,
				       sizeof(err)), -EINVAL);
	assert_string_equal(err, "[Attrd] Trust-Synthesized-Owners = maybe: expected yes or no");
	/* unset without a default; not in the table */
	assert_int_equal(conf_get_typed(ctx, "Attrd", "Admin-Group", &v, err, sizeof(err)), -ENOENT);
	assert_int_equal(conf_get_typed(ctx, "Idmapd", "Wrokers", &v, err, sizeof(err)), -ENOKEY);
	assert_int_equal(conf_get_typed(ctx, "Static", "alice@X", &v, err, sizeof(err)), -ENOKEY);
	nfskeys_ctx_unref(ctx);
}

/* The sections that were wildcards now warn about typos; only data tables take any key. */
static void test_no_hidden_typos(void **state)
{
	struct nfskeys_ctx *ctx;
	char expect[1024];

	write_file("nfskeys.conf", "[LDAP]\nTmeout = 5\n[SID]\nRange-Mn = 1\n"
				   "S-1-5-21-1-2-3 = 1000 - 2000\n[Static]\nalice@X = alice\n"
				   "[Cred]\nCIFS-Keytab = /etc/krb5.keytab\nCIFS-Keytb = x\n"
				   "[PAM]\nKerberos = no\nKerberso = no\n[Attr]\nStroe = /x\n"
				   "[Writeback]\nDirty-Limt = 1M\n[Idmap]\nPositive-TL = 1\n"
				   "[Mapping]\nNobody-Usr = x\n");
	setenv("NFSKEYS_LOG", "warning", 1);
	ctx = load(0);
	unsetenv("NFSKEYS_LOG");
	snprintf(expect, sizeof(expect),
		 "<4>%1$s/nfskeys.conf:2: unknown key 'Tmeout' in [LDAP], ignored\n"
		 "<4>%1$s/nfskeys.conf:4: unknown key 'Range-Mn' in [SID], ignored\n"
		 "<4>%1$s/nfskeys.conf:10: unknown key 'CIFS-Keytb' in [Cred], ignored\n"
		 "<4>%1$s/nfskeys.conf:13: unknown key 'Kerberso' in [PAM], ignored\n"
		 "<4>%1$s/nfskeys.conf:15: unknown key 'Stroe' in [Attr], ignored\n"
		 "<4>%1$s/nfskeys.conf:17: unknown key 'Dirty-Limt' in [Writeback], ignored\n"
		 "<4>%1$s/nfskeys.conf:19: unknown key 'Positive-TL' in [Idmap], ignored\n"
		 "<4>%1$s/nfskeys.conf:21: unknown key 'Nobody-Usr' in [Mapping], ignored\n",
		 tu_dir);
	assert_string_equal(logbuf, expect);
	nfskeys_ctx_unref(ctx);
}

/* --help-config comes from the table and needs no configuration. */
static void test_schema_print(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	conf_schema_print(f, "Idmapd Mounts");
	fclose(f);
	assert_non_null(strstr(buf, "[Idmapd] Workers"));
	assert_non_null(strstr(buf, "int 1..64\n    default: 4; threads for blocking backends\n"));
	assert_non_null(strstr(buf, "[Idmapd] Stale-Wait                        duration-ms "
				    "0..60000ms\n    default: 500;"));
	assert_non_null(strstr(buf, "[Mounts] Apply-Mounts"));
	assert_null(strstr(buf, "[Attrd]"));
	assert_null(strstr(buf, "[General]"));
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_valid, setup, teardown),
		cmocka_unit_test_setup_teardown(test_malformed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_malformed_dropin, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dropin_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dropin_masked_and_fifo, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dropin_dir_unsafe, setup, teardown),
		cmocka_unit_test_setup_teardown(test_foreach, setup, teardown),
		cmocka_unit_test_setup_teardown(test_many_keys, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unknown_warned, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_explicit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_env_override, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ref_unref, setup, teardown),
		cmocka_unit_test_setup_teardown(test_log_priority, setup, teardown),
		cmocka_unit_test_setup_teardown(test_verbosity, setup, teardown),
		cmocka_unit_test_setup_teardown(test_schema_rows, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_value_at_load, setup, teardown),
		cmocka_unit_test_setup_teardown(test_typed_getter, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_hidden_typos, setup, teardown),
		cmocka_unit_test_setup_teardown(test_schema_print, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
