/* The service manager's file-descriptor store (daemon.h): descriptors a daemon hands to its
 * next run across a restart or an upgrade, by name.  Under systemd with
 * FileDescriptorStoreMax= set, the store keeps its own copy of each; the next run gets them
 * back through LISTEN_FDS/LISTEN_FDNAMES.  Without systemd every call is a no-op, and
 * daemon_fdstore_take() finds nothing. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef HAVE_SYSTEMD
#include <systemd/sd-daemon.h>
#endif

#include "daemon.h"

struct stored {
	int fd; /* -1 once taken or closed */
	char *name;
};

static struct stored *inherited;
static size_t n_inherited;
static bool collected;

/* The descriptors this run was started with, once. */
static void collect(void)
{
#ifdef HAVE_SYSTEMD
	char **names = NULL;
	int n;

	if (collected)
		return;
	collected = true;
	n = sd_listen_fds_with_names(1, &names);
	if (n <= 0)
		return;
	inherited = calloc((size_t)n, sizeof(*inherited));
	for (int i = 0; i < n; i++) {
		if (inherited) {
			inherited[i].fd = SD_LISTEN_FDS_START + i;
			inherited[i].name = names && names[i] ? names[i] : NULL;
		} else {
			close(SD_LISTEN_FDS_START + i);
			if (names)
				free(names[i]);
		}
	}
	free(names);
	n_inherited = inherited ? (size_t)n : 0;
#else
	collected = true;
#endif
}

bool daemon_fdstore_enabled(void)
{
#ifdef HAVE_SYSTEMD
	const char *m = getenv("FDSTORE");

	/* systemd sets $FDSTORE to FileDescriptorStoreMax= when it is above 0 (v254); on
	 * older ones, the notify socket and the unit's word (NFSKEYS_FDSTORE=1) */
	return getenv("NOTIFY_SOCKET") &&
	       ((m && atoi(m) > 0) || (getenv("NFSKEYS_FDSTORE") && !strcmp(getenv("NFSKEYS_FDSTORE"), "1")));
#else
	return false;
#endif
}

int daemon_fdstore_add(int fd, const char *name)
{
#ifdef HAVE_SYSTEMD
	char state[300];
	int r;

	if (!daemon_fdstore_enabled())
		return -EOPNOTSUPP;
	snprintf(state, sizeof(state), "FDSTORE=1\nFDNAME=%s", name);
	r = sd_pid_notify_with_fds(0, 0, state, &fd, 1);
	return r > 0 ? 0 : r < 0 ? r : -EOPNOTSUPP;
#else
	return -EOPNOTSUPP;
#endif
}

void daemon_fdstore_remove(const char *name)
{
#ifdef HAVE_SYSTEMD
	char state[300];

	if (!daemon_fdstore_enabled())
		return;
	snprintf(state, sizeof(state), "FDSTOREREMOVE=1\nFDNAME=%s", name);
	(void)sd_notify(0, state);
#endif
}

int daemon_fdstore_take(const char *name)
{
	collect();
	for (size_t i = 0; i < n_inherited; i++)
		if (inherited[i].fd >= 0 && inherited[i].name && !strcmp(inherited[i].name, name)) {
			int fd = inherited[i].fd;

			inherited[i].fd = -1;
			return fd;
		}
	return -ENOENT;
}

size_t daemon_fdstore_close_rest(void)
{
	size_t n = 0;

	collect();
	for (size_t i = 0; i < n_inherited; i++) {
		if (inherited[i].fd >= 0) {
			close(inherited[i].fd);
			inherited[i].fd = -1;
			if (inherited[i].name)
				daemon_fdstore_remove(inherited[i].name);
			n++;
		}
		free(inherited[i].name);
		inherited[i].name = NULL;
	}
	free(inherited);
	inherited = NULL;
	n_inherited = 0;
	return n;
}
