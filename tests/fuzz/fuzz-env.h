/* The environment of the fuzz targets that resolve through a real nfskeys context: a
 * private directory (in /dev/shm when writable) holding the target's configuration and
 * its State-Dir, the build tree's plugins, and a context that formats but drops its log
 * messages; all removed again at exit.  Call fuzz_env_init() from LLVMFuzzerInitialize. */
#pragma once

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "macros.h"
#include "nfskeys.h"

/* The start of both idmap targets' configurations: the real static and sid backends, no
 * cache, nobody 65534; each adds its own [Static] and [SID] entries. */
#define FUZZ_ENV_IDMAP_CONFIG                                                                \
	"[General]\nDomain = example.org\n[Translation]\nMethod = static, sid\n"             \
	"[Mapping]\nNobody-User = 65534\nNobody-Group = 65534\n"

static char fuzz_env_dir[64], fuzz_env_conf[128];
static struct nfskeys_ctx *ctx;

_printf_(6, 0) static void fuzz_env_quiet(void *u, int p, const char *f, int l, const char *fn,
					  const char *fmt, va_list ap)
{
	char buf[512];

	vsnprintf(buf, sizeof(buf), fmt, ap); /* format it: bad arguments show up here */
}

static void fuzz_env_cleanup(void)
{
	char p[160];

	nfskeys_ctx_unref(ctx);
	snprintf(p, sizeof(p), "%s/idmap-sid-slices", fuzz_env_dir);
	unlink(p);
	unlink(fuzz_env_conf);
	rmdir(fuzz_env_dir);
}

/* name: a short tag for the directory; config: the INI text (State-Dir is appended). */
static void fuzz_env_init(const char *name, const char *config)
{
	FILE *f;

	snprintf(fuzz_env_dir, sizeof(fuzz_env_dir), "%s/nfskeys-fuzz-%s.XXXXXX",
		 access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp", name);
	if (!mkdtemp(fuzz_env_dir))
		abort();
	snprintf(fuzz_env_conf, sizeof(fuzz_env_conf), "%s/nfskeys.conf", fuzz_env_dir);
	f = fopen(fuzz_env_conf, "we");
	if (!f)
		abort();
	fprintf(f, "%s[General]\nState-Dir = %s\n", config, fuzz_env_dir);
	if (fclose(f) != 0)
		abort();
	atexit(fuzz_env_cleanup);
	unsetenv("NFSKEYS_CONF");
	setenv("NFSKEYS_PLUGIN_DIR", FUZZ_PLUGIN_DIR, 1);
	if (nfskeys_ctx_new_full(fuzz_env_conf, fuzz_env_quiet, NULL, &ctx) < 0)
		abort();
}
