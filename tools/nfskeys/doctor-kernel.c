/* nfskeys doctor: the kernel side.  Who holds knfsd's and rpc_pipefs' idmap channels (a
 * second reader steals upcalls), how much of each user's key quota is left, and whether
 * CIFS upcalls can run in a container's namespaces. */
#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <inttypes.h>
#include <pwd.h>
#include <strings.h>
#include <sys/wait.h>
#include <time.h>

#include "attrd-client.h"
#include "idmapd-client.h"
#include "log-escape.h"
#include "nfskeys-idmap.h"
#include "nfskeys-tool.h"
#include "request-key-conf.h"
#include "doctor.h"

/* ---------------------------------------------------------------- kernel channels */

struct holder {
	char target[PATH_MAX];
	char who[512]; /* "comm[pid] ..." of the processes holding it */
};

static void comm_of(const struct doctor *d, const char *pid, char *buf, size_t size)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/proc/%s/comm", d->root, pid);
	snprintf(buf, size, "?");
	f = fopen(path, "re");
	if (!f)
		return;
	if (fgets(buf, (int)size, f))
		buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

/* Fill who for each target from the descriptors under <root>/proc/<pid>/fd. */
/* A descriptor opened through /proc/net (a link to self/net) reads back from
 * /proc/PID/fd as /proc/<opener's pid>/net/...: the form knfsd's channels show on a real
 * kernel (tests/kernel/systemd-debs.ktest).  Rewrite it to /proc/net/... in place. */
static void proc_net_canonical(char *target)
{
	const char *p = target + strlen("/proc/");

	if (!startswith(target, "/proc/") || !isdigit((unsigned char)*p))
		return;
	while (isdigit((unsigned char)*p))
		p++;
	if (startswith(p, "/net/"))
		memmove(target + strlen("/proc"), p, strlen(p) + 1);
}

static void scan_holders(const struct doctor *d, struct holder *h, size_t n)
{
	char procdir[PATH_MAX];
	struct dirent *pe;
	DIR *pd;

	rooted(d, "/proc", procdir, sizeof(procdir));
	pd = opendir(procdir);
	if (!pd)
		return;
	while ((pe = readdir(pd))) {
		char fddir[PATH_MAX + 300], comm[64];
		struct dirent *fe;
		DIR *fdd;

		if (!isdigit((unsigned char)pe->d_name[0]))
			continue;
		snprintf(fddir, sizeof(fddir), "%s/%s/fd", procdir, pe->d_name);
		fdd = opendir(fddir);
		if (!fdd)
			continue;
		comm[0] = '\0';
		while ((fe = readdir(fdd))) {
			char link[PATH_MAX + 600], target[PATH_MAX];
			ssize_t len;

			if (fe->d_name[0] == '.')
				continue;
			snprintf(link, sizeof(link), "%s/%s", fddir, fe->d_name);
			len = readlink(link, target, sizeof(target) - 1);
			if (len <= 0)
				continue;
			target[len] = '\0';
			proc_net_canonical(target);
			for (size_t i = 0; i < n; i++) {
				size_t used = strlen(h[i].who);

				if (!streq(target, h[i].target) || strstr(h[i].who, pe->d_name))
					continue;
				if (!comm[0])
					comm_of(d, pe->d_name, comm, sizeof(comm));
				snprintf(h[i].who + used, sizeof(h[i].who) - used, "%s%s[%s]",
					 used ? ", " : "", comm, pe->d_name);
			}
		}
		closedir(fdd);
	}
	closedir(pd);
}

/* The rpc_pipefs mount point from <root>/proc/mounts, if any. */
static bool find_pipefs(const struct doctor *d, char *buf, size_t size)
{
	char path[PATH_MAX], line[2048];
	bool found = false;
	FILE *f;

	rooted(d, "/proc/mounts", path, sizeof(path));
	f = fopen(path, "re");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		char dev[256], dir[1024], type[64];

		if (sscanf(line, "%255s %1023s %63s", dev, dir, type) == 3 &&
		    streq(type, "rpc_pipefs")) {
			snprintf(buf, size, "%s", dir);
			found = true;
		}
	}
	fclose(f);
	return found;
}

static void judge_holder(struct doctor *d, const char *subject, const struct holder *h)
{
	if (!h->who[0])
		finding(d, "channel", subject, ST_PROBLEM,
			"start nfskeys-idmapd ([Kernel] in nfskeys.conf) or rpc.idmapd",
			"%s: nobody holds it, so the kernel's ID-mapping requests wait and fail",
			h->target);
	else if (strstr(h->who, "nfskeys-idmapd"))
		finding(d, "channel", subject, ST_OK, NULL, "%s held by %s", h->target, h->who);
	else
		finding(d, "channel", subject, ST_INFO, NULL,
			"%s held by %s, not nfskeys-idmapd (to switch: %s, then restart "
			"nfskeys-idmapd)",
			h->target, h->who,
			d->systemd ? "stop and mask nfs-idmapd.service" :
				     "stop rpc.idmapd and keep its init script from starting it");
}

void check_channels(struct doctor *d)
{
	struct holder h[66] = {};
	char path[PATH_MAX + 300], pipefs[PATH_MAX], dir[PATH_MAX + 8];
	size_t n = 0, server = 0;
	struct dirent *de;
	DIR *pd;

	/* knfsd's idmap caches */
	snprintf(h[0].target, sizeof(h[0].target), "/proc/net/rpc/nfs4.nametoid/channel");
	snprintf(h[1].target, sizeof(h[1].target), "/proc/net/rpc/nfs4.idtoname/channel");
	for (size_t i = 0; i < 2; i++) {
		rooted(d, h[i].target, path, sizeof(path));
		if (access(path, F_OK) == 0)
			h[n++] = h[i];
	}
	server = n;
	/* the NFS client's rpc_pipefs pipes */
	if (find_pipefs(d, pipefs, sizeof(pipefs))) {
		snprintf(dir, sizeof(dir), "%s/nfs", pipefs);
		rooted(d, dir, path, sizeof(path));
		pd = opendir(path);
		while (pd && (de = readdir(pd)) && n < ARRAY_SIZE(h)) {
			char pipe[PATH_MAX + 300];

			if (!startswith(de->d_name, "clnt"))
				continue;
			if ((size_t)snprintf(h[n].target, sizeof(h[n].target), "%s/%s/idmap", dir,
					     de->d_name) >= sizeof(h[n].target))
				continue;
			rooted(d, h[n].target, pipe, sizeof(pipe));
			if (access(pipe, F_OK) == 0)
				n++;
		}
		if (pd)
			closedir(pd);
	}
	scan_holders(d, h, n);
	if (server == 0)
		finding(d, "channel", "knfsd", ST_INFO, NULL,
			"no /proc/net/rpc/nfs4.nametoid: the NFS server (nfsd) is not loaded");
	for (size_t i = 0; i < n; i++)
		judge_holder(d, i < server ? "knfsd" : "rpc_pipefs", &h[i]);
	if (n == server)
		finding(d, "channel", "rpc_pipefs", ST_INFO, NULL,
			"no NFS client idmap pipes (%s)",
			find_pipefs(d, pipefs, sizeof(pipefs)) ? "no NFS mounts use them" :
								 "rpc_pipefs is not mounted");
}

/* ---------------------------------------------------------------- CIFS in containers */

/* The CIFS mount option upcall_target=app (Linux 6.13) runs a mount's cifs.spnego and
 * cifs.idmap upcalls in the namespaces of the process that mounted, a container's; before
 * it they always run in the host's, where the credential caches are the host's. */
void check_cifs_upcall_target(struct doctor *d)
{
	char path[PATH_MAX], rel[128] = "";
	unsigned major = 0, minor = 0;
	FILE *f;

	rooted(d, "/proc/sys/kernel/osrelease", path, sizeof(path));
	f = fopen(path, "re");
	if (f) {
		if (!fgets(rel, sizeof(rel), f))
			rel[0] = '\0';
		rel[strcspn(rel, "\n")] = '\0';
		fclose(f);
	}
	if (sscanf(rel, "%u.%u", &major, &minor) != 2) {
		finding(d, "kernel", "cifs upcall_target", ST_INFO, NULL,
			"cannot read the kernel's release from %s: whether a container's CIFS "
			"upcalls can run in its own namespaces is not known", path);
		return;
	}
	if (major > 6 || (major == 6 && minor >= 13))
		finding(d, "kernel", "cifs upcall_target", ST_OK, NULL,
			"Linux %s has the CIFS mount option upcall_target=app: a container's CIFS "
			"mount made with it has its cifs.spnego (Kerberos) and cifs.idmap upcalls run "
			"in the container's namespaces, with its credential caches", rel);
	else
		finding(d, "kernel", "cifs upcall_target", ST_INFO,
			"a 6.13 or later kernel, and upcall_target=app on the container's CIFS mounts",
			"Linux %s predates the CIFS mount option upcall_target= (6.13): cifs.spnego "
			"and cifs.idmap upcalls always run in the host's namespaces, so a container's "
			"CIFS Kerberos mount gets the host's credential cache namespace, not the "
			"container's", rel);
}
