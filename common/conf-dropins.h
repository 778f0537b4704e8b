/* The configuration's drop-ins, as libnfskeys and the lean nfskeys-upcall both read them:
 * conf.d/ next to the main file, its "*.conf" files (not hidden ones) in byte order, the
 * last value winning.  conf.d sits next to whatever file was named, /tmp included: a
 * directory someone else owns or may write to could inject configuration, so it is not
 * read.  Header only: the lean helper keeps its link promise. */
#pragma once

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The conf.d directory next to the configuration file path, in buf.  0, or -ENAMETOOLONG
 * when it does not fit. */
static inline int conf_dropin_dir(const char *path, char *buf, size_t size)
{
	char *slash;
	size_t len;

	if ((size_t)snprintf(buf, size, "%s", path) >= size)
		return -ENAMETOOLONG;
	slash = strrchr(buf, '/');
	if (slash && slash != buf)
		*slash = '\0';
	else
		snprintf(buf, size, "%s", slash ? "/" : ".");
	len = strlen(buf);
	if ((size_t)snprintf(buf + len, size - len, "/conf.d") >= size - len)
		return -ENAMETOOLONG;
	return 0;
}

/* A conf.d whose drop-ins may be read: owned by root or by this process's user, and
 * writable by nobody else. */
static inline bool conf_dropin_dir_trusted(const struct stat *st)
{
	return (st->st_uid == 0 || st->st_uid == geteuid()) &&
	       !(st->st_mode & (S_IWGRP | S_IWOTH));
}

/* A drop-in's name: "*.conf" with something before the suffix, not hidden. */
static inline bool conf_dropin_name(const char *name)
{
	size_t len = strlen(name);

	return name[0] != '.' && len >= 6 && strcmp(name + len - 5, ".conf") == 0;
}
