/* nfskeys doctor --namespace PID|PATH: one network namespace (a container's) seen from the
 * host.  Its identity and the user namespace that owns it; which way its NFS mounts map
 * ids (the request-key id_resolver upcall only for a mount of the initial user namespace,
 * else only the rpc_pipefs pipe of the network namespace: doc/KERNEL-INTERFACES.md §1);
 * whether the running nfskeys-idmapd serves that pipe (IDMAPD_NAMESPACES); and with --name
 * what the daemon answers and how that id looks inside (its uid_map; an id outside the
 * map is the overflow id, as the kernel shows it). */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "doctor.h"
#include "idmapd-client.h"
#include "nfskeys-tool.h"

#define PING_TIMEOUT_MS 2000

/* The initial user namespace's inode number, fixed by the kernel (PROC_USER_INIT_INO):
 * what readlink /proc/1/ns/user shows on the host. */
#define USERNS_INIT_INO UINT64_C(0xEFFFFFFD)
#define MAP_LINES_MAX 340 /* lines of a uid_map the kernel takes at most */
#define MOUNTS_SHOWN 5

struct map_line {
	uint32_t inside, outside, count;
};

struct doctor_ns {
	char path[PATH_MAX];	  /* the namespace file */
	char what[PATH_MAX + 64]; /* "process 123 (sleep)" or the path given */
	char label[32];		  /* net:[INODE] */
	pid_t pid;		  /* a process in it (given, or from /proc/PID/ns/net); 0: none */
	uint64_t ino;
	uint64_t userns; /* the user namespace that owns it; 0: not known */
	int userns_errno;
	uint64_t pid_userns; /* pid's own user namespace */
	bool maps_read;	     /* pid is in userns and its uid_map was read */
	unsigned n_map;
	struct map_line map[MAP_LINES_MAX];
};

/* "user:[4026531837]" -> 4026531837; 0 when it is not one of type. */
static uint64_t link_ino(const char *link, const char *type)
{
	size_t tl = strlen(type);
	unsigned long long v;
	char *end;

	if (strncmp(link, type, tl) || link[tl] != ':' || link[tl + 1] != '[')
		return 0;
	errno = 0;
	v = strtoull(link + tl + 2, &end, 10);
	return errno || end[0] != ']' || end[1] ? 0 : (uint64_t)v;
}

static uint64_t proc_ns_ino(pid_t pid, const char *type)
{
	char path[64], link[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)pid, type);
	n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0)
		return 0;
	link[n] = '\0';
	return link_ino(link, type);
}

/* /proc/N/ns/net or /proc/self/ns/net -> N (self: this process); 0 for another path. */
static pid_t pid_of_path(const char *path)
{
	const char *p;
	unsigned long v;
	char *end;

	if (streq(path, "/proc/self/ns/net"))
		return getpid();
	if (!startswith(path, "/proc/") || !isdigit((unsigned char)path[6]))
		return 0;
	p = path + 6;
	errno = 0;
	v = strtoul(p, &end, 10);
	return errno || v > INT_MAX || !streq(end, "/ns/net") ? 0 : (pid_t)v;
}

static const char *ns_type_name(int type)
{
	switch (type) {
	case CLONE_NEWUSER:
		return "user";
	case CLONE_NEWNS:
		return "mount";
	case CLONE_NEWPID:
		return "pid";
	case CLONE_NEWUTS:
		return "uts";
	case CLONE_NEWIPC:
		return "ipc";
	case CLONE_NEWCGROUP:
		return "cgroup";
	default:
		return "another";
	}
}

static void read_uid_map(struct doctor_ns *ns)
{
	unsigned long long in, out, count;
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/uid_map", (int)ns->pid);
	f = fopen(path, "re");
	if (!f)
		return;
	ns->n_map = 0;
	while (ns->n_map < MAP_LINES_MAX && fscanf(f, "%llu %llu %llu", &in, &out, &count) == 3) {
		if (count == 0 || in > UINT32_MAX || out > UINT32_MAX || count > UINT32_MAX)
			continue;
		ns->map[ns->n_map++] =
			(struct map_line){ (uint32_t)in, (uint32_t)out, (uint32_t)count };
	}
	ns->maps_read = !ferror(f);
	fclose(f);
}

int doctor_ns_open(const char *arg, struct doctor_ns **ret, char *err, size_t errlen)
{
	struct doctor_ns *ns = calloc(1, sizeof(*ns));
	bool given_pid = arg[0] && strspn(arg, "0123456789") == strlen(arg);
	struct stat st;
	int fd, ufd, type, r;

	if (!ns)
		return -ENOMEM;
	if (given_pid) {
		unsigned long v;

		errno = 0;
		v = strtoul(arg, NULL, 10);
		if (errno || v == 0 || v > INT_MAX) {
			snprintf(err, errlen, "'%s' is not a process id", arg);
			free(ns);
			return -EINVAL;
		}
		ns->pid = (pid_t)v;
		snprintf(ns->path, sizeof(ns->path), "/proc/%lu/ns/net", v);
	} else if ((size_t)snprintf(ns->path, sizeof(ns->path), "%s", arg) >= sizeof(ns->path)) {
		snprintf(err, errlen, "the path is too long");
		free(ns);
		return -ENAMETOOLONG;
	} else {
		ns->pid = pid_of_path(arg);
	}
	/* a namespace file is a regular file of nsfs: anything else (a FIFO, a device) is
	 * refused before it is opened */
	if (stat(ns->path, &st) < 0) {
		r = -errno;
		if (given_pid && r == -ENOENT)
			snprintf(err, errlen, "no process %s (no %s)", arg, ns->path);
		else if (r == -ENOENT)
			snprintf(err, errlen,
				 "%s: no such file (give a PID, /proc/PID/ns/net or "
				 "/run/netns/NAME)",
				 ns->path);
		else
			snprintf(err, errlen, "%s: %s", ns->path, strerror(-r));
		free(ns);
		return r;
	}
	fd = S_ISREG(st.st_mode) ? open(ns->path, O_RDONLY | O_CLOEXEC | O_NOCTTY) : -1;
	if (fd < 0 && S_ISREG(st.st_mode)) {
		r = -errno;
		snprintf(err, errlen, "%s: %s", ns->path, strerror(-r));
		free(ns);
		return r;
	}
	type = fd >= 0 ? ioctl(fd, NS_GET_NSTYPE) : -1;
	if (type != CLONE_NEWNET) {
		if (type < 0)
			snprintf(err, errlen,
				 "%s is not a namespace file (give a PID, "
				 "/proc/PID/ns/net or /run/netns/NAME)",
				 ns->path);
		else
			snprintf(err, errlen,
				 "%s is a %s namespace, not a network namespace "
				 "(/proc/PID/ns/net)",
				 ns->path, ns_type_name(type));
		if (fd >= 0)
			close(fd);
		free(ns);
		return -EINVAL;
	}
	if (fstat(fd, &st) < 0) {
		r = -errno;
		snprintf(err, errlen, "%s: %s", ns->path, strerror(-r));
		close(fd);
		free(ns);
		return r;
	}
	ns->ino = (uint64_t)st.st_ino;
	snprintf(ns->label, sizeof(ns->label), "net:[%" PRIu64 "]", ns->ino);
	ufd = ioctl(fd, NS_GET_USERNS);
	if (ufd >= 0 && fstat(ufd, &st) == 0)
		ns->userns = (uint64_t)st.st_ino;
	else
		ns->userns_errno = errno;
	if (ufd >= 0)
		close(ufd);
	close(fd);
	if (ns->pid) {
		char comm[64] = "?", path[64];
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/comm", (int)ns->pid);
		f = fopen(path, "re");
		if (f) {
			if (fgets(comm, sizeof(comm), f))
				comm[strcspn(comm, "\n")] = '\0';
			fclose(f);
		}
		snprintf(ns->what, sizeof(ns->what), "process %d (%s)", (int)ns->pid, comm);
		ns->pid_userns = proc_ns_ino(ns->pid, "user");
		/* the map answers go through is that of the user namespace owning the network
		 * namespace: a process in a nested one has another */
		if (ns->userns && ns->pid_userns == ns->userns && ns->userns != USERNS_INIT_INO)
			read_uid_map(ns);
	} else {
		snprintf(ns->what, sizeof(ns->what), "%s", ns->path);
	}
	*ret = ns;
	return 0;
}

void doctor_ns_free(struct doctor_ns *ns)
{
	free(ns);
}

static bool initial_owner(const struct doctor_ns *ns)
{
	return ns->userns == USERNS_INIT_INO;
}

static void map_text(const struct doctor_ns *ns, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (unsigned i = 0; i < ns->n_map && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%" PRIu32 " %" PRIu32 " %" PRIu32,
					i ? ", " : "", ns->map[i].inside, ns->map[i].outside,
					ns->map[i].count);
	if (!ns->n_map)
		snprintf(buf, size, "empty");
}

/* A host uid as the namespace's user namespace sees it; false: outside its map. */
static bool uid_inside(const struct doctor_ns *ns, uint32_t host, uint32_t *inside)
{
	for (unsigned i = 0; i < ns->n_map; i++)
		if (host >= ns->map[i].outside && host - ns->map[i].outside < ns->map[i].count) {
			*inside = ns->map[i].inside + (host - ns->map[i].outside);
			return true;
		}
	return false;
}

static unsigned overflow_uid(void)
{
	unsigned v = 65534;
	FILE *f = fopen("/proc/sys/kernel/overflowuid", "re");

	if (f) {
		if (fscanf(f, "%u", &v) != 1)
			v = 65534;
		fclose(f);
	}
	return v;
}

/* (a) the namespace and the user namespace that owns it */
static void check_identity(struct doctor *d, const struct doctor_ns *ns, bool own, bool daemon_up)
{
	char owner[128], maps[1024], map[768];

	if (!ns->userns)
		snprintf(owner, sizeof(owner),
			 "the user namespace that owns it cannot be told (%s)",
			 strerror(ns->userns_errno));
	else if (initial_owner(ns))
		snprintf(owner, sizeof(owner),
			 "owned by the initial user namespace (user:[%" PRIu64
			 "]): ids as on the host",
			 ns->userns);
	else
		snprintf(owner, sizeof(owner),
			 "owned by user namespace user:[%" PRIu64 "], not the initial one",
			 ns->userns);
	maps[0] = '\0';
	if (ns->userns && !initial_owner(ns)) {
		map_text(ns, map, sizeof(map));
		if (ns->maps_read)
			snprintf(maps, sizeof(maps),
				 "; its uid_map (inside outside count, from "
				 "/proc/%d/uid_map): %s",
				 (int)ns->pid, map);
		else if (ns->pid && ns->pid_userns != ns->userns)
			snprintf(maps, sizeof(maps),
				 "; process %d is in user namespace "
				 "user:[%" PRIu64 "], not that one: its uid_map was not read",
				 (int)ns->pid, ns->pid_userns);
		else if (ns->pid)
			snprintf(maps, sizeof(maps), "; /proc/%d/uid_map could not be read",
				 (int)ns->pid);
		else
			snprintf(maps, sizeof(maps),
				 "; its uid_map is not read (give the PID of a "
				 "process of it)");
	}
	finding(d, "namespace", ns->label, ST_INFO, NULL, "network namespace of %s%s; %s%s",
		ns->what,
		own ? (daemon_up ? ", the daemon's own namespace" : ", this host's own namespace") :
		      "",
		owner, maps);
}

/* The nfs4 mounts process pid sees ("" when none): "/mnt (srv:/export), ..." */
static unsigned nfs4_mounts(pid_t pid, char *buf, size_t size)
{
	char path[64], line[4096];
	unsigned n = 0;
	size_t len = 0;
	FILE *f;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/mountinfo", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char mnt[1024], fstype[64], source[1024], opts[2048];
		const char *sep = strstr(line, " - ");

		/* ID PARENT MAJ:MIN ROOT MOUNTPOINT ... - FSTYPE SOURCE SUPEROPTS */
		if (!sep || sscanf(line, "%*s %*s %*s %*s %1023s", mnt) != 1 ||
		    sscanf(sep + 3, "%63s %1023s %2047s", fstype, source, opts) != 3)
			continue;
		if (!streq(fstype, "nfs4") && !(streq(fstype, "nfs") && strstr(opts, "vers=4")))
			continue;
		if (n++ < MOUNTS_SHOWN && len < size)
			len += (size_t)snprintf(buf + len, size - len, "%s%s (%s)",
						n > 1 ? ", " : "", mnt, source);
	}
	fclose(f);
	if (n > MOUNTS_SHOWN && len < size)
		snprintf(buf + len, size - len, " and %u more", n - MOUNTS_SHOWN);
	return n;
}

/* (b) the way its NFS mounts map ids */
static void check_paths(struct doctor *d, const struct doctor_ns *ns)
{
	char subject[64], way[512], mounts[1536], seen[1700] = "";
	unsigned n;

	snprintf(subject, sizeof(subject), "%s mounts", ns->label);
	if (!ns->userns)
		snprintf(way, sizeof(way),
			 "an NFS mount made in the initial user namespace asks the "
			 "request-key id_resolver upcall first and the rpc_pipefs pipe of %s when "
			 "that fails; one made in another user namespace asks only the pipe",
			 ns->label);
	else if (initial_owner(ns))
		snprintf(way, sizeof(way),
			 "its NFS mounts (of the initial user namespace) ask the "
			 "request-key id_resolver upcall (the routes checked by 'nfskeys doctor') "
			 "and the rpc_pipefs pipe of %s only when that fails",
			 ns->label);
	else
		snprintf(way, sizeof(way),
			 "NFS mounts made in its user namespace user:[%" PRIu64
			 "] never make the request-key upcall: their ids map only through the "
			 "rpc_pipefs pipe of %s",
			 ns->userns, ns->label);
	if (ns->pid) {
		n = nfs4_mounts(ns->pid, mounts, sizeof(mounts));
		if (n)
			snprintf(seen, sizeof(seen), "; process %d sees %u NFSv4 mount%s: %s",
				 (int)ns->pid, n, n == 1 ? "" : "s", mounts);
		else
			snprintf(seen, sizeof(seen), "; process %d sees no NFSv4 mount",
				 (int)ns->pid);
	}
	finding(d, "namespace", subject, ST_INFO, NULL, "%s%s", way, seen);
}

/* (c) whether nfskeys-idmapd serves its pipe; r: the NAMESPACES call's result */
static void check_served(struct doctor *d, const struct doctor_ns *ns, bool own, int r,
			 const char *sock, const idmapd_namespaces_res *res)
{
	const idmapd_namespace *found = NULL;

	if (r == -EOPNOTSUPP) {
		finding(d, "namespace", ns->label, ST_PROBLEM,
			"restart nfskeys-idmapd (the program installed is newer than the one running)",
			"nfskeys-idmapd on %s does not know the NAMESPACES call: it predates serving "
			"containers",
			sock);
		return;
	}
	if (r < 0) {
		finding(d, "namespace", ns->label, ST_PROBLEM,
			d->systemd ? "start it: systemctl start nfskeys-idmapd" :
				     "start it as root: " SBINDIR "/nfskeys-idmapd",
			"nfskeys-idmapd does not answer on %s (%s): nobody serves the NFS client "
			"pipe of %s",
			sock, r == -ENOENT || r == -ECONNREFUSED ? "not running" : strerror(-r),
			ns->label);
		return;
	}
	if (own) {
		finding(d, "namespace", ns->label, ST_OK, NULL,
			"the daemon's own namespace: its pipes are the daemon's own (kernel paths: "
			"%s; the channel checks of 'nfskeys doctor' name their holders)",
			res->kernel);
		return;
	}
	if (!res->enabled) {
		finding(d, "namespace", ns->label, ST_PROBLEM,
			"set [Kernel] Namespaces = auto in nfskeys.conf and restart nfskeys-idmapd "
			"(a reload does not change it)",
			"nfskeys-idmapd started with [Kernel] Namespaces = none: it serves no other "
			"network namespace's pipe, so NFS mounts there that need it map owners to "
			"nobody");
		return;
	}
	for (u_int i = 0; i < res->namespaces.namespaces_len && !found; i++)
		if (res->namespaces.namespaces_val[i].netns == ns->ino)
			found = &res->namespaces.namespaces_val[i];
	if (!found) {
		finding(d, "namespace", ns->label, ST_PROBLEM,
			"the daemon serves containers when the kernel has rpc_pipefs (the sunrpc "
			"module: modprobe nfs, then restart nfskeys-idmapd) and [Kernel] Client-Pipe "
			"is not no; a new namespace is found within [Kernel] Namespace-Scan seconds, "
			"up to Namespaces-Max of them",
			"nfskeys-idmapd does not serve it (%u other namespaces served; kernel paths: "
			"%s)",
			res->total, res->kernel);
		return;
	}
	if (!found->open) {
		finding(d, "namespace", ns->label, ST_PROBLEM,
			"the daemon needs CAP_SYS_ADMIN for setns and the rpc_pipefs mount "
			"(nfskeys-idmapd.service grants it); its log says why, then restart it",
			"nfskeys-idmapd found it but could not open its rpc_pipefs: not served");
		return;
	}
	if (found->translate && !found->maps_read) {
		finding(d, "namespace", ns->label, ST_PROBLEM,
			"the daemon reads them from a process of the namespace whose user namespace "
			"owns it, at its next scan: such a process must exist",
			"nfskeys-idmapd serves it (%u pipe%s) but has not read the maps of "
			"user:[%" PRIu64 "]: every id answers as the overflow id",
			found->pipes, found->pipes == 1 ? "" : "s", (uint64_t)found->userns);
		return;
	}
	if (found->translate)
		finding(d, "namespace", ns->label, ST_OK, NULL,
			"nfskeys-idmapd serves it: %u pipe%s, ids through the maps of user:[%" PRIu64
			"]",
			found->pipes, found->pipes == 1 ? "" : "s", (uint64_t)found->userns);
	else
		finding(d, "namespace", ns->label, ST_OK, NULL,
			"nfskeys-idmapd serves it: %u pipe%s, ids as on the host", found->pipes,
			found->pipes == 1 ? "" : "s");
}

/* (d) what the daemon answers for name, and how that uid looks in the namespace */
static void check_name(struct doctor *d, const struct doctor_ns *ns, bool own, struct rpc_client *c,
		       const char *sock, const char *name)
{
	struct nfskeys_idmap_answer a;
	char fix[1400], map[768];
	unsigned aflags = 0;
	uint32_t inside;
	int r = c ? idmapd_client_lookup(c, NFSKEYS_IDMAP_NAME_TO_UID, name, IDMAPD_LOOKUP_NOBODY,
					 &a, &aflags, NULL) :
		    -ECONNREFUSED;

	snprintf(fix, sizeof(fix), "'nfskeys idmap explain %s' says why", name);
	if (r == -ENOENT || r == -ECONNREFUSED) {
		finding(d, "namespace", name, ST_INFO, NULL,
			"nfskeys-idmapd does not answer on %s: its answer cannot be shown", sock);
		return;
	}
	if (r < 0) {
		finding(d, "namespace", name, ST_PROBLEM, fix, "nfskeys-idmapd cannot map it: %s",
			strerror(-r));
		return;
	}
	if (aflags & IDMAPD_ANSWER_NOBODY) {
		finding(d, "namespace", name, ST_PROBLEM, fix,
			"nfskeys-idmapd maps it to nobody (uid %" PRIu32 "): what it owns shows as "
			"nobody in %s too",
			a.id, ns->label);
		return;
	}
	if (own || initial_owner(ns)) {
		finding(d, "namespace", name, ST_OK, NULL,
			"nfskeys-idmapd answers uid %" PRIu32
			" (%s); %s sees the host's ids: uid %" PRIu32 " there too",
			a.id, a.backend, ns->label, a.id);
		return;
	}
	if (!ns->maps_read) {
		finding(d, "namespace", name, ST_INFO, NULL,
			"nfskeys-idmapd answers uid %" PRIu32 " (%s); how user:[%" PRIu64 "] sees "
			"it needs its uid_map (give the PID of a process of it)",
			a.id, a.backend, ns->userns);
		return;
	}
	map_text(ns, map, sizeof(map));
	if (uid_inside(ns, a.id, &inside)) {
		finding(d, "namespace", name, ST_OK, NULL,
			"nfskeys-idmapd answers uid %" PRIu32 " (%s); user:[%" PRIu64 "] sees it "
			"as uid %" PRIu32 " (uid_map %s)",
			a.id, a.backend, ns->userns, inside, map);
		return;
	}
	finding(d, "namespace", name, ST_PROBLEM,
		"map the host uid into the container's user namespace (its uid_map), or map the "
		"name to a uid inside the map ([Static] in nfskeys.conf, or the directory)",
		"nfskeys-idmapd answers uid %" PRIu32 " (%s), outside the uid_map of user:[%" PRIu64
		"] (%s): inside it is the overflow id %u, shown as nobody",
		a.id, a.backend, ns->userns, map, overflow_uid());
}

void check_namespace(struct doctor *d, struct nfskeys_ctx *ctx, const char *idmapd_sock,
		     const struct doctor_ns *ns, const char *name)
{
	idmapd_namespaces_res res = {};
	struct rpc_client *c = NULL;
	char sock[PATH_MAX];
	uint64_t own_ino = 0;
	uint32_t dpid = 0;
	int r;

	snprintf(sock, sizeof(sock), "%s", idmapd_socket_path(ctx, idmapd_sock));
	r = idmapd_client_new(sock, PING_TIMEOUT_MS, &c);
	if (r == 0)
		r = idmapd_client_ping(c, NULL, 0, &dpid, NULL);
	if (r == 0)
		r = idmapd_client_namespaces(c, &res);
	/* the daemon's namespace; this process's when it cannot be read (not running) */
	if (r == 0 && dpid)
		own_ino = proc_ns_ino((pid_t)dpid, "net");
	if (!own_ino)
		own_ino = proc_ns_ino(getpid(), "net");
	check_identity(d, ns, ns->ino == own_ino, r == 0);
	check_paths(d, ns);
	check_served(d, ns, ns->ino == own_ino, r, sock, &res);
	if (name)
		check_name(d, ns, ns->ino == own_ino, r == 0 ? c : NULL, sock, name);
	if (r == 0)
		xdr_free((xdrproc_t)xdr_idmapd_namespaces_res, (char *)&res);
	rpc_client_free(c);
}
