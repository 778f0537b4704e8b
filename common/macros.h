/* Small helpers shared by every nfskeys component: cleanup attributes, ownership
 * hand-off and the usual array/string shorthands.  Internal; never installed. */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define _public_ __attribute__((visibility("default")))
#define _unused_ __attribute__((unused))
#define _printf_(a, b) __attribute__((format(printf, a, b)))
#define _cleanup_(f) __attribute__((cleanup(f)))
#define _likely_(x) __builtin_expect(!!(x), 1)
#define _unlikely_(x) __builtin_expect(!!(x), 0)

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define streq(a, b) (strcmp((a), (b)) == 0)
#define strcaseeq(a, b) (strcasecmp((a), (b)) == 0)
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

/* Take ownership of a pointer out of a _cleanup_ variable. */
#define TAKE_PTR(p)                          \
	({                                   \
		__typeof__(p) _tp_ = (p);    \
		(p) = NULL;                  \
		_tp_;                        \
	})

#define TAKE_FD(fd)                          \
	({                                   \
		int _tf_ = (fd);             \
		(fd) = -1;                   \
		_tf_;                        \
	})

static inline void freep(void *p)
{
	free(*(void **)p);
}

static inline void closep(int *fd)
{
	if (*fd >= 0) {
		int saved = errno;
		close(*fd);
		errno = saved;
	}
}

static inline void fclosep(FILE **f)
{
	if (*f)
		fclose(*f);
}

#define _cleanup_free_ _cleanup_(freep)
#define _cleanup_close_ _cleanup_(closep)
#define _cleanup_fclose_ _cleanup_(fclosep)

/* Negative errno from the last failing libc call, never 0. */
static inline int negerrno(void)
{
	return errno > 0 ? -errno : -EIO;
}

static inline bool startswith(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}
