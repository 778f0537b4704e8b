/* Scaffolding shared by the cmocka unit tests (test-util.h). */
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <keyutils.h>

#include "test-util.h"

char tu_dir[64];
char tu_last_log[1024];

int tu_dir_setup(const char *name)
{
	if ((size_t)snprintf(tu_dir, sizeof(tu_dir), "/tmp/nfskeys-test-%s.XXXXXX", name) >=
	    sizeof(tu_dir))
		return -1;
	return mkdtemp(tu_dir) ? 0 : -1;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

int tu_dir_teardown(void)
{
	if (!tu_dir[0])
		return 0;
	return nftw(tu_dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS) == 0 ? 0 : -1;
}

char *tu_path(char *buf, size_t size, const char *name)
{
	assert_true((size_t)snprintf(buf, size, "%s/%s", tu_dir, name) < size);
	return buf;
}

static void vwrite_file(const char *path, const char *fmt, va_list ap)
{
	FILE *f = fopen(path, "we");

	assert_non_null(f);
	assert_true(vfprintf(f, fmt, ap) >= 0);
	assert_int_equal(fclose(f), 0);
}

void tu_write_file(const char *path, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwrite_file(path, fmt, ap);
	va_end(ap);
}

static char conf_path[160];

const char *tu_write_conf(const char *fmt, ...)
{
	va_list ap;

	tu_path(conf_path, sizeof(conf_path), "nfskeys.conf");
	va_start(ap, fmt);
	vwrite_file(conf_path, fmt, ap);
	va_end(ap);
	return conf_path;
}

void tu_log_quiet(void *u, int p, const char *f, int l, const char *fn, const char *fmt,
		  va_list ap)
{
}

void tu_log_capture(void *u, int p, const char *f, int l, const char *fn, const char *fmt,
		    va_list ap)
{
	vsnprintf(tu_last_log, sizeof(tu_last_log), fmt, ap);
}

struct nfskeys_ctx *tu_ctx_conf(const char *fmt, ...)
{
	struct nfskeys_ctx *ctx = NULL;
	va_list ap;

	tu_path(conf_path, sizeof(conf_path), "nfskeys.conf");
	va_start(ap, fmt);
	vwrite_file(conf_path, fmt, ap);
	va_end(ap);
	assert_int_equal(nfskeys_ctx_new(conf_path, &ctx), 0);
	return ctx;
}

struct nfskeys_ctx *tu_ctx_attr(void)
{
	return tu_ctx_conf("[Attr]\nStore = %s/attr.db\n[Attrd]\nSocket = %s/attrd.sock\n", tu_dir,
			   tu_dir);
}

struct nfskeys_ctx *tu_ctx_empty(nfskeys_log_fn log)
{
	struct nfskeys_ctx *ctx = NULL;

	assert_int_equal(nfskeys_ctx_new_full("/dev/null", log, NULL, &ctx), 0);
	tu_last_log[0] = '\0';
	return ctx;
}

int32_t tu_session_keyring(void)
{
	int32_t s = keyctl_join_session_keyring(NULL);

	return s < 0 ? -1 : s;
}
