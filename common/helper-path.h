/* Finding a helper program next to the running one: the build tree keeps the programs
 * side by side, an install puts the helpers in the libexec directory.  The one rule for
 * the request-key helpers and nfskeys idmap enable-upcalls.  Header only: the lean
 * nfskeys-upcall links no internal library. */
#pragma once

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

/* The running program's directory (/proc/self/exe without its last component) in buf.
 * 0, or -ENOENT when it cannot be read or does not fit. */
static inline int self_dir(char *buf, size_t size)
{
	ssize_t n;
	char *slash;

	if (size < 2)
		return -ENOENT;
	n = readlink("/proc/self/exe", buf, size - 1);
	if (n <= 0)
		return -ENOENT;
	buf[n] = '\0';
	slash = strrchr(buf, '/');
	if (!slash)
		return -ENOENT;
	*slash = '\0';
	return 0;
}

/* The path of helper prog: next to this program when it is executable there (a libtool
 * build tree runs us from .libs/, the helper's wrapper is above it), else in
 * installed_dir.  Never next to us in a setuid run, where the directory is not to be
 * trusted.  Returns buf. */
static inline const char *helper_path(const char *prog, const char *installed_dir, char *buf,
				      size_t size)
{
	char self[4096];
	size_t l;

	if (!getauxval(AT_SECURE) && self_dir(self, sizeof(self)) == 0) {
		l = strlen(self);
		if (l > 6 && strcmp(self + l - 6, "/.libs") == 0)
			self[l - 6] = '\0';
		snprintf(buf, size, "%s/%s", self, prog);
		if (access(buf, X_OK) == 0)
			return buf;
	}
	snprintf(buf, size, "%s/%s", installed_dir, prog);
	return buf;
}
