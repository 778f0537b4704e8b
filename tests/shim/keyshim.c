/* LD_PRELOAD shim for the interop tests: records every add_key(2) and the keyctl(2)
 * operations that shape a key (setperm, set_timeout, update) a program makes through
 * libc's syscall(), then performs the call.  Lines go to $KEYSHIM_LOG:
 *   add_key TYPE_HEX DESC_HEX PAYLOAD_HEX KEYRING
 *   keyctl OP ARG2 (serials are replaced by "K" so runs can be compared)
 * $KEYSHIM_ADD_KEY_DELAY_MS makes every add_key(2) wait that long first, which widens a
 * check-then-add window so that a race test can hit it every time.
 * Built without sanitizers so it can be preloaded into any program. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define KEYCTL_UPDATE 2
#define KEYCTL_SETPERM 5
#define KEYCTL_SET_TIMEOUT 15

static void hex(FILE *f, const void *p, size_t n)
{
	const unsigned char *b = p;

	if (n == 0)
		fputc('-', f);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%02x", b[i]);
}

static FILE *logfile(void)
{
	const char *path = getenv("KEYSHIM_LOG");
	int fd;

	if (!path)
		return NULL;
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	return fd < 0 ? NULL : fdopen(fd, "a");
}

long syscall(long nr, ...)
{
	static long (*real)(long, ...);
	long a[6];
	va_list ap;
	FILE *f;

	va_start(ap, nr);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (!real)
		real = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	if (nr == SYS_add_key && getenv("KEYSHIM_ADD_KEY_DELAY_MS"))
		usleep((useconds_t)atoi(getenv("KEYSHIM_ADD_KEY_DELAY_MS")) * 1000);

	if (nr == SYS_add_key && (f = logfile())) {
		fputs("add_key ", f);
		hex(f, (const char *)a[0], strlen((const char *)a[0]));
		fputc(' ', f);
		hex(f, (const char *)a[1], strlen((const char *)a[1]));
		fputc(' ', f);
		hex(f, (const void *)a[2], (size_t)a[3]);
		fprintf(f, " %d\n", (int)a[4]);
		fclose(f);
	} else if (nr == SYS_keyctl &&
		   (a[0] == KEYCTL_SETPERM || a[0] == KEYCTL_SET_TIMEOUT) && (f = logfile())) {
		fprintf(f, "keyctl %ld K %lx\n", a[0], (unsigned long)a[2]);
		fclose(f);
	} else if (nr == SYS_keyctl && a[0] == KEYCTL_UPDATE && (f = logfile())) {
		fprintf(f, "keyctl %ld K ", a[0]);
		hex(f, (const void *)a[2], (size_t)a[3]);
		fputc('\n', f);
		fclose(f);
	}
	return real(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}
