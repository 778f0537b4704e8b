/* libFuzzer target: the whole configuration loader (nfskeys_ctx_new_full) through real
 * files.  The input is split at its first NUL byte: the part before becomes the main
 * nfskeys.conf, the part after conf.d/50-fuzz.conf.  A loaded context is then queried
 * through every getter, which must agree with each other. */
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

#include "macros.h"
#include "nfskeys.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static char dir[64], main_path[128], dropin_path[128], dropin_dir[128];

_printf_(6, 0) static void quiet(void *u, int p, const char *f, int l, const char *fn, const char *fmt,
		  va_list ap)
{
	char buf[512];

	/* format the message anyway: a bad format argument must show up here */
	vsnprintf(buf, sizeof(buf), fmt, ap);
}

static void cleanup(void)
{
	unlink(dropin_path);
	unlink(main_path);
	rmdir(dropin_dir);
	rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	strcpy(dir, access("/dev/shm", W_OK) == 0 ? "/dev/shm/nfskeys-fuzz-config.XXXXXX"
						   : "/tmp/nfskeys-fuzz-config.XXXXXX");
	if (!mkdtemp(dir))
		abort();
	snprintf(main_path, sizeof(main_path), "%s/nfskeys.conf", dir);
	snprintf(dropin_dir, sizeof(dropin_dir), "%s/conf.d", dir);
	snprintf(dropin_path, sizeof(dropin_path), "%s/50-fuzz.conf", dropin_dir);
	if (mkdir(dropin_dir, 0700) < 0)
		abort();
	atexit(cleanup);
	unsetenv("NFSKEYS_CONF");
	setenv("NFSKEYS_LOG", "debug", 1); /* run every log statement */
	return 0;
}

static void write_all(const char *path, const uint8_t *data, size_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd < 0)
		abort();
	while (size > 0) {
		ssize_t n = write(fd, data, size);
		if (n <= 0)
			abort();
		data += n;
		size -= (size_t)n;
	}
	close(fd);
}

static int check_entry(void *userdata, const char *key, const char *value)
{
	struct nfskeys_ctx *ctx = userdata;
	const char *v = nfskeys_conf_get(ctx, "General", key);
	int64_t i;
	bool b;

	/* foreach and get see the same (last) value */
	if (!v || !streq(v, value))
		abort();
	if (nfskeys_conf_get_int(ctx, "General", key, -5, 5, &i) == 0 && (i < -5 || i > 5))
		abort();
	(void)nfskeys_conf_get_bool(ctx, "General", key, &b);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, '\0', size);
	size_t main_len = nul ? (size_t)(nul - data) : size;
	struct nfskeys_ctx *ctx = NULL;
	int r;

	if (size > 64 * 1024)
		return 0;
	write_all(main_path, data, main_len);
	if (nul)
		write_all(dropin_path, nul + 1, size - main_len - 1);
	else
		unlink(dropin_path);

	r = nfskeys_ctx_new_full(main_path, quiet, NULL, &ctx);
	if (r < 0) {
		if (ctx || (r != -EINVAL && r != -ENOMEM))
			abort();
		return 0;
	}
	if (!ctx || !streq(nfskeys_ctx_get_conf_path(ctx), main_path))
		abort();
	if (nfskeys_conf_foreach(ctx, "General", check_entry, ctx) < 0)
		abort();
	(void)nfskeys_conf_get(ctx, "Static", "*");
	nfskeys_ctx_unref(ctx);
	return 0;
}
