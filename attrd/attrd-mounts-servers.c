/* Which server a sub-mount belongs to, and which servers get a worker: the two decisions
 * behind nfskeys-attrd's per-server jobs, kept free of libmount, threads and the loop so a
 * unit test can state them (tests/unit/test-attrd-servers.c). */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "attrd-mounts-private.h"
#include "macros.h"

/* The value of option name in "a,b=c,..." (name must match whole: addr is not
 * clientaddr or mountaddr), as a new string; NULL when absent. */
static char *option_value(const char *opts, const char *name)
{
	size_t nl = strlen(name);

	for (const char *o = opts; o && *o;) {
		size_t len = strcspn(o, ",");

		if (len > nl && strncmp(o, name, nl) == 0 && o[nl] == '=')
			return strndup(o + nl + 1, len - nl - 1);
		o += len;
		if (*o == ',')
			o++;
	}
	return NULL;
}

/* The server of a parent mount: its addr= option, the address the kernel's client talks
 * to (NFS and CIFS both show it in mountinfo's superblock options); without one, the host
 * of the source (SERVER:/path, [v6]:/path or //SERVER/share), in lower case.  Two exports
 * of one server are one server; two addresses of one machine are two (each has its own
 * connection, and either can stop answering alone). */
int mounts_server_of(const char *fs_options, const char *source, char **ret)
{
	char *s = option_value(fs_options, "addr");
	size_t len;

	if (s && *s) {
		*ret = s;
		return 0;
	}
	free(s);
	if (!source || !*source)
		return -EINVAL;
	if (startswith(source, "//")) {
		source += 2;
		len = strcspn(source, "/");
	} else if (*source == '[') {
		source++;
		len = strcspn(source, "]");
		if (source[len] != ']')
			return -EINVAL;
	} else {
		const char *colon = strstr(source, ":/");

		if (!colon)
			return -EINVAL;
		len = (size_t)(colon - source);
	}
	if (len == 0)
		return -EINVAL;
	s = strndup(source, len);
	if (!s)
		return -ENOMEM;
	for (char *p = s; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	*ret = s;
	return 0;
}

static bool listed(const char *const *v, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (streq(v[i], s))
			return true;
	return false;
}

/* The servers to start a worker for now: each server with an entry that needs work
 * (need[i]), never one whose worker still runs (its change waits for it), and no more than
 * max_workers running in all.  Oldest first: the server whose waiting entry a job last
 * covered longest ago (seen[i], the smallest generation; table order among equals), so a
 * server with more work coming cannot keep the ninth waiting for ever; seen NULL: table
 * order.  ret_start holds up to n names (pointers into server[], NULL meaning "");
 * *ret_waiting says whether a server was left waiting for a free worker.  Returns how
 * many to start.  Work: n times at most 2 * max_workers + 1. */
size_t mounts_plan(const char *const *server, const bool *need, const uint64_t *seen, size_t n,
		   const char *const *running, size_t n_running, size_t max_workers,
		   const char **ret_start, bool *ret_waiting)
{
	size_t k = 0;

	*ret_waiting = false;
	for (;;) {
		size_t pick = n;

		for (size_t i = 0; i < n; i++) {
			const char *s = mounts_server_name(server[i]);

			if (!need[i] || listed(running, n_running, s) || listed(ret_start, k, s))
				continue;
			if (pick == n || (seen && seen[i] < seen[pick]))
				pick = i;
		}
		if (pick == n)
			return k;
		if (n_running + k >= max_workers) {
			*ret_waiting = true;
			return k;
		}
		ret_start[k++] = mounts_server_name(server[pick]);
	}
}
