/* Where a daemon's socket is, from the configuration: the daemon's own key ([Idmapd]
 * Socket, [Attrd] Socket) when set, else NAME in [General] Runtime-Dir, else the built-in
 * path.  The one rule for the daemons, their clients and the lean nfskeys-upcall, which
 * reads the two values itself; the attr store's file ([Attr] Store, else attr.db in
 * [General] State-Dir) follows it too.  Header only: the lean helper links no internal
 * library. */
#pragma once

#include <stdio.h>

/* The socket path: socket when non-empty, else runtime_dir/name in buf (size bytes) when
 * runtime_dir is non-empty, else fallback.  Either value may be NULL. */
static inline const char *socket_path_pick(const char *socket, const char *runtime_dir,
					   const char *name, const char *fallback, char *buf,
					   size_t size)
{
	if (socket && *socket)
		return socket;
	if (runtime_dir && *runtime_dir) {
		snprintf(buf, size, "%s/%s", runtime_dir, name);
		return buf;
	}
	return fallback;
}
