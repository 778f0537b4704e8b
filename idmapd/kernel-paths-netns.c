/* The NFS client idmap pipes of other network namespaces (containers), served from this
 * daemon: rpc_pipefs exists once per network namespace, and an NFS client whose mount
 * belongs to a non-initial user namespace, or whose id_resolver upcall fails, asks only
 * its own namespace's clnt*\/idmap pipe (doc/KERNEL-INTERFACES.md §1).
 *
 * Every Namespace-Scan seconds the namespaces of /proc/\*\/ns/net and /run/netns/\* are
 * listed.  For one not served yet the loop thread enters it with setns() only to make a
 * detached rpc_pipefs mount there (fsopen/fsmount: nothing is mounted in any mount
 * namespace), keeps one descriptor on its nfs/ directory, returns to its own namespace and
 * from then on serves that namespace's pipes exactly as its own (kernel-paths-pipes.c):
 * one inotify watch on nfs/, one descriptor per open pipe, no thread.  Ids are the initial
 * user namespace's, or with Namespace-Ids = owner as the user namespace that owns the
 * network namespace sees them (its uid_map/gid_map; an id outside the map is the overflow
 * id, as the kernel shows it).  The kernel reads them in the user namespace of the mount's
 * credentials, which the pipe does not show: the initial one on 6.1, a container's on 7.3
 * when its root opened the fs_context (FS_USERNS_DELEGATABLE).  A namespace with no
 * process, no /run/netns name and no open pipe left is released (the mount pins it). */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <syslog.h>
#include <unistd.h>

#include "daemon.h"
#include "kernel-paths-private.h"
#include "macros.h"
#include "time-util.h"

#define NETNS_RUN_DIR "/run/netns"
#define NSFS_MAGIC 0x6e736673 /* linux/magic.h */

static bool ns_eq(const void *ctx, uintptr_t val, const void *key)
{
	return ((const struct kns *)val)->ino == *(const uint64_t *)key;
}

static uint64_t ns_hash(const struct kpaths *kp, uint64_t ino)
{
	return hashmap_hash(kp->ns_seed, &ino, sizeof(ino));
}

static struct kns *ns_find(const struct kpaths *kp, uint64_t ino)
{
	return (struct kns *)hashmap_find(&kp->ns_by_ino, ns_hash(kp, ino), ns_eq, NULL, &ino);
}

/* "net:[4026531840]" (readlink of /proc/PID/ns/net) -> 4026531840; 0 when it is not one. */
static uint64_t ns_link_ino(const char *link, const char *type)
{
	size_t tl = strlen(type);
	char *end;
	uint64_t ino;

	if (strncmp(link, type, tl) || link[tl] != ':' || link[tl + 1] != '[')
		return 0;
	errno = 0;
	ino = strtoull(link + tl + 2, &end, 10);
	return errno || end[0] != ']' || end[1] ? 0 : ino;
}

/* ---------------------------------------------------------------- id maps */

/* One /proc/PID/{uid,gid}_map; -errno. */
static int idmap_read(int procfd, const char *pid, const char *file, struct userns_map *m)
{
	char path[64], buf[USERNS_MAP_MAX * 36];
	const char *why = NULL;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", pid, file);
	fd = openat(procfd, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n < 0)
		return -errno;
	return userns_map_parse(buf, (size_t)n, m, &why);
}

/* The user namespace that owns the network namespace nsfd; when it is not ours, its maps
 * from PID (a process of that network namespace whose user namespace it is). */
static void ns_read_userns(struct kns *ns, int nsfd, int procfd, const char *pid)
{
	struct kpaths *kp = ns->kp;
	char path[64], link[64];
	struct stat st;
	ssize_t n;
	int r, ufd = ioctl(nsfd, NS_GET_USERNS);

	ns->translate = false;
	if (ufd < 0 || fstat(ufd, &st) < 0) {
		kp->log(LOG_WARNING, "%s: cannot tell its user namespace (%m): ids as on the host",
			ns->label);
		if (ufd >= 0)
			close(ufd);
		return;
	}
	close(ufd);
	ns->userns_ino = (uint64_t)st.st_ino;
	/* Namespace-Ids = initial: the host's ids, whoever owns the network namespace.  (Its
	 * owner is the initial namespace wherever rpc_pipefs could be opened: sget_fc()
	 * refuses rpc_pipefs, which takes the owner of the network namespace and is not
	 * FS_USERNS_MOUNT, in any other, on 6.1 and 7.3 alike.) */
	if (ns->userns_ino == kp->self_userns_ino || !kp->cfg.namespace_owner_ids)
		return;
	ns->translate = true; /* until its maps are read, every id is outside them */
	ns->uid_map.n = ns->gid_map.n = 0;
	if (!pid)
		return;
	snprintf(path, sizeof(path), "%s/ns/user", pid);
	n = readlinkat(procfd, path, link, sizeof(link) - 1);
	if (n <= 0)
		return;
	link[n] = '\0';
	if (ns_link_ino(link, "user") != ns->userns_ino)
		return;
	if ((r = idmap_read(procfd, pid, "uid_map", &ns->uid_map)) < 0 ||
	    (r = idmap_read(procfd, pid, "gid_map", &ns->gid_map)) < 0) {
		kp->log(LOG_WARNING, "%s: cannot read the id maps of process %s: %s", ns->label,
			pid, strerror(-r));
		ns->uid_map.n = ns->gid_map.n = 0;
		return;
	}
	ns->maps_read = true;
}

/* ---------------------------------------------------------------- attach, release */

/* A detached rpc_pipefs of the network namespace nsfd; its nfs/ directory (-errno). */
static int pipefs_open_in(struct kpaths *kp, int nsfd)
{
	int fsfd = -1, mfd = -1, dfd = -1, r;

	if (setns(nsfd, CLONE_NEWNET) < 0)
		return -errno;
	fsfd = fsopen("rpc_pipefs", FSOPEN_CLOEXEC);
	if (fsfd >= 0 && fsconfig(fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) == 0)
		mfd = fsmount(fsfd, FSMOUNT_CLOEXEC,
			      MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
	r = mfd >= 0 ? 0 : -errno;
	if (setns(kp->self_netns_fd, CLONE_NEWNET) < 0) {
		/* the loop thread would go on in the other namespace: nothing safe is left */
		kp->log(LOG_CRIT, "cannot return to the daemon's network namespace: %m");
		abort();
	}
	if (fsfd >= 0)
		close(fsfd);
	if (r < 0)
		return r;
	dfd = openat(mfd, "nfs", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	r = dfd >= 0 ? dfd : -errno;
	/* the detached mount lives on through dfd (and the pipes opened under it) */
	close(mfd);
	return r;
}

static void ns_match(struct kns *ns)
{
	struct kpaths *kp = ns->kp;
	unsigned p = kp->ns_match ? kp->ns_match(kp->userdata, ns->name, ns->cgroup) : 0;

	if (p != ns->profile && ns->nfs_fd >= 0)
		kp->log(LOG_INFO, "%s%s%s: %s", ns->label, ns->name[0] ? " " : "", ns->name,
			p ? "its own configuration (Namespace-Dir)" : "the daemon's configuration");
	ns->profile = p;
}

/* The cgroup (v2) of process pid: "/machine.slice/libpod-....scope". */
static void read_cgroup(int procfd, const char *pid, char *buf, size_t size)
{
	char path[64], line[512];
	FILE *f;
	int fd;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "%s/cgroup", pid);
	fd = openat(procfd, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	f = fdopen(fd, "re");
	if (!f) {
		close(fd);
		return;
	}
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "0::", 3)) {
			size_t l = strcspn(line + 3, "\n");

			if (l >= size)
				l = size - 1; /* cut: matches no glob that names the whole path */
			memcpy(buf, line + 3, l);
			buf[l] = '\0';
			break;
		}
	fclose(f);
}

void kpaths_set_ns_match(struct kpaths *kp, kpaths_ns_match_fn match)
{
	kp->ns_match = match;
	for (struct kns *ns = kp->nss; ns; ns = ns->next)
		ns_match(ns);
}

unsigned kquery_profile(const struct kquery *q)
{
	return q->src == KPATH_PIPE && q->pipe && q->pipe->ns ? q->pipe->ns->profile : 0;
}

static void ns_scan_dir(struct kns *ns)
{
	struct dirent *de;
	int fd = dup(ns->nfs_fd);
	DIR *dir;

	if (fd < 0)
		return;
	dir = fdopendir(fd);
	if (!dir) {
		close(fd);
		return;
	}
	while ((de = readdir(dir)))
		kpaths_pipe_add(ns->kp, ns, de->d_name);
	closedir(dir);
}

/* Serve the network namespace at path (ino: its identity); pid names a process in it
 * (for its user namespace's maps), NULL for a /run/netns name. */
static void ns_attach(struct kpaths *kp, int procfd, const char *path, uint64_t ino,
		      const char *pid)
{
	struct kns *ns;
	struct stat st;
	char watch[64], store[48];
	int nsfd, r;

	if (kp->n_ns >= kp->cfg.namespaces_max) {
		if (!kp->ns_full_warned)
			kp->log(LOG_WARNING, "more than %u network namespaces ([Kernel] "
				"Namespaces-Max): net:[%" PRIu64 "] and later ones not served",
				kp->cfg.namespaces_max, ino);
		kp->ns_full_warned = true;
		return;
	}
	nsfd = openat(procfd, path, O_RDONLY | O_CLOEXEC);
	if (nsfd < 0)
		return; /* the process is gone */
	if (fstat(nsfd, &st) < 0 || (uint64_t)st.st_ino != ino) {
		close(nsfd);
		return; /* the pid was reused for another namespace: the next scan sees it */
	}
	ns = calloc(1, sizeof(*ns));
	if (!ns || hashmap_reserve(&kp->ns_by_ino, 1) < 0) {
		free(ns);
		close(nsfd);
		return;
	}
	ns->kp = kp;
	ns->ino = ino;
	ns->nfs_fd = ns->wd = -1;
	ns->seen = true;
	snprintf(ns->label, sizeof(ns->label), "net:[%" PRIu64 "]", ino);
	if (pid)
		read_cgroup(procfd, pid, ns->cgroup, sizeof(ns->cgroup));
	else if (!strncmp(path, NETNS_RUN_DIR "/", sizeof(NETNS_RUN_DIR)))
		snprintf(ns->name, sizeof(ns->name), "%s", path + sizeof(NETNS_RUN_DIR));
	kpaths_store_name(store, sizeof(store), NULL, ino, NULL);
	r = daemon_fdstore_take(store);
	if (r >= 0) {
		struct statfs sf;

		if (fstatfs(r, &sf) < 0 || (unsigned long)sf.f_type != RPC_PIPEFS_MAGIC) {
			close(r);
			daemon_fdstore_remove(store);
			r = pipefs_open_in(kp, nsfd);
		}
	} else {
		r = pipefs_open_in(kp, nsfd);
		if (r >= 0)
			kpaths_store(kp, r, store);
	}
	if (r < 0) {
		/* remembered, so that it is not tried again each scan */
		kp->log(LOG_WARNING, "%s: cannot open its rpc_pipefs: %s", ns->label, strerror(-r));
	} else {
		ns->nfs_fd = r;
		ns_read_userns(ns, nsfd, procfd, pid);
		snprintf(watch, sizeof(watch), "/proc/self/fd/%d", ns->nfs_fd);
		ns->wd = inotify_add_watch(kp->ino_fd, watch, IN_CREATE | IN_DELETE | IN_ONLYDIR);
		if (ns->wd < 0)
			kp->log(LOG_WARNING, "%s: cannot watch its rpc_pipefs: %m", ns->label);
	}
	close(nsfd);
	(void)hashmap_put(&kp->ns_by_ino, ns_hash(kp, ino), (uintptr_t)ns);
	ns->next = kp->nss;
	kp->nss = ns;
	kp->n_ns++;
	if (ns->nfs_fd >= 0) {
		kp->log(LOG_INFO, "serving network namespace %s%s", ns->label,
			ns->translate ? " (ids through its user namespace's maps)" : "");
		ns_match(ns); /* before its pipes are read */
		ns_scan_dir(ns);
	}
}

static void ns_release(struct kns *ns)
{
	struct kpaths *kp = ns->kp;
	struct kpipe *p, *next;
	unsigned closed = 0;

	for (p = kp->pipes; p; p = next) {
		next = p->next;
		if (p->ns == ns) {
			kpaths_pipe_close(p);
			closed++;
		}
	}
	for (struct kns **pp = &kp->nss; *pp; pp = &(*pp)->next)
		if (*pp == ns) {
			*pp = ns->next;
			break;
		}
	(void)hashmap_remove_val(&kp->ns_by_ino, ns_hash(kp, ns->ino), (uintptr_t)ns);
	kp->n_ns--;
	if (ns->wd >= 0)
		(void)inotify_rm_watch(kp->ino_fd, ns->wd);
	if (ns->nfs_fd >= 0) {
		char store[48];

		close(ns->nfs_fd);
		kpaths_store_name(store, sizeof(store), NULL, ns->ino, NULL);
		kpaths_unstore(kp, store);
		if (!kp->handing_over)
			kp->log(LOG_INFO, "namespace %s released (%u pipes closed)", ns->label,
				closed);
	}
	/* queries still out hold the pipes, not ns: they only read ns->translate etc. through
	 * the pipe, which is closed (p->ns is cleared by kpaths_pipe_close) */
	free(ns);
}

/* ---------------------------------------------------------------- the scan */

static void ns_saw(struct kpaths *kp, int procfd, const char *path, uint64_t ino,
		   const char *pid)
{
	struct kns *ns;

	if (!ino || ino == kp->self_netns_ino)
		return;
	ns = ns_find(kp, ino);
	if (ns) {
		ns->seen = true;
		/* found through a process first: its /run/netns name, once seen */
		if (!pid && !ns->name[0] && !strncmp(path, NETNS_RUN_DIR "/", sizeof(NETNS_RUN_DIR))) {
			snprintf(ns->name, sizeof(ns->name), "%s", path + sizeof(NETNS_RUN_DIR));
			ns_match(ns);
		}
		/* a namespace first met through /run/netns: its maps once a process shows up */
		if (ns->translate && !ns->maps_read && pid && ns->nfs_fd >= 0) {
			int nsfd = openat(procfd, path, O_RDONLY | O_CLOEXEC);

			if (nsfd >= 0) {
				ns_read_userns(ns, nsfd, procfd, pid);
				close(nsfd);
			}
		}
		return;
	}
	ns_attach(kp, procfd, path, ino, pid);
}

static void netns_scan(struct kpaths *kp)
{
	struct kns *ns, *next;
	struct dirent *de;
	int procfd, runfd;
	DIR *dir;

	procfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (procfd < 0)
		return;
	for (ns = kp->nss; ns; ns = ns->next)
		ns->seen = false;
	dir = opendir("/proc");
	while (dir && (de = readdir(dir))) {
		char path[NAME_MAX + 16], link[64];
		ssize_t n;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "%s/ns/net", de->d_name);
		n = readlinkat(procfd, path, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = '\0';
		ns_saw(kp, procfd, path, ns_link_ino(link, "net"), de->d_name);
	}
	if (dir)
		closedir(dir);
	/* ip netns add: a namespace bound to a name, maybe with no process in it */
	runfd = open(NETNS_RUN_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	dir = runfd >= 0 ? fdopendir(runfd) : NULL;
	while (dir && (de = readdir(dir))) {
		char rel[NAME_MAX + 16];
		struct statfs sf;
		struct stat st;

		/* `ip netns add` makes an empty file, then binds the namespace over it: only a
		 * namespace file (nsfs) is one */
		snprintf(rel, sizeof(rel), NETNS_RUN_DIR "/%s", de->d_name);
		if (de->d_name[0] == '.' || statfs(rel, &sf) < 0 ||
		    (unsigned long)sf.f_type != NSFS_MAGIC || fstatat(runfd, de->d_name, &st, 0) < 0)
			continue;
		{
			char path[NAME_MAX + 16];

			snprintf(path, sizeof(path), NETNS_RUN_DIR "/%s", de->d_name);
			ns_saw(kp, procfd, path, (uint64_t)st.st_ino, NULL);
		}
	}
	if (dir)
		closedir(dir);
	else if (runfd >= 0)
		close(runfd);
	close(procfd);
	for (ns = kp->nss; ns; ns = next) {
		next = ns->next;
		if (!ns->seen && ns->n_pipes == 0)
			ns_release(ns);
	}
}

static void scan_timer(struct evloop *loop, struct evtimer *t, void *userdata)
{
	struct kpaths *kp = userdata;

	netns_scan(kp);
	evloop_timer_set(t, mono_usec() + (int64_t)kp->cfg.namespace_scan * 1000000);
}

/* inotify event on a namespace's nfs/ directory: true when wd was one. */
static bool netns_event(struct kpaths *kp, int wd, uint32_t mask, const char *name)
{
	for (struct kns *ns = kp->nss; ns; ns = ns->next) {
		struct kpipe *p;

		if (ns->wd != wd)
			continue;
		if (!name || !name[0])
			return true;
		p = kpaths_pipe_find(kp, ns, name);
		if (mask & IN_CREATE)
			kpaths_pipe_add(kp, ns, name);
		else if ((mask & IN_DELETE) && p)
			kpaths_pipe_close(p);
		return true;
	}
	return false;
}

/* Bring every namespace's pipes in line with its nfs/ (inotify overflowed). */
static void netns_rescan_dirs(struct kpaths *kp)
{
	for (struct kns *ns = kp->nss; ns; ns = ns->next)
		if (ns->nfs_fd >= 0)
			ns_scan_dir(ns);
}

static unsigned read_overflow(const char *path)
{
	unsigned v = 65534;
	FILE *f = fopen(path, "re");

	if (f) {
		if (fscanf(f, "%u", &v) != 1)
			v = 65534;
		fclose(f);
	}
	return v;
}

int kpaths_netns_start(struct kpaths *kp)
{
	struct stat st;
	int r;

	if (!kp->cfg.namespaces)
		return 0;
	kp->ns_seed = hashmap_random_seed();
	kp->self_netns_fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (kp->self_netns_fd < 0 || fstat(kp->self_netns_fd, &st) < 0) {
		kp->log(LOG_WARNING, "not serving other network namespaces: /proc/self/ns/net: %m");
		return 0;
	}
	kp->self_netns_ino = (uint64_t)st.st_ino;
	/* a kernel without rpc_pipefs (no sunrpc) has no pipe in any namespace */
	r = fsopen("rpc_pipefs", FSOPEN_CLOEXEC);
	if (r < 0) {
		kp->log(errno == ENODEV ? LOG_DEBUG : LOG_WARNING,
			"not serving other network namespaces: rpc_pipefs: %m");
		close(kp->self_netns_fd);
		kp->self_netns_fd = -1;
		return 0;
	}
	close(r);
	if (stat("/proc/self/ns/user", &st) == 0)
		kp->self_userns_ino = (uint64_t)st.st_ino;
	/* a descriptor per namespace and per pipe: the soft limit up to the hard one (the loop
	 * uses epoll, never select) */
	{
		struct rlimit rl;

		if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
			rl.rlim_cur = rl.rlim_max;
			(void)setrlimit(RLIMIT_NOFILE, &rl);
		}
	}
	kp->overflow_uid = read_overflow("/proc/sys/kernel/overflowuid");
	kp->overflow_gid = read_overflow("/proc/sys/kernel/overflowgid");
	r = evloop_add_timer(kp->loop, 0, scan_timer, kp, &kp->ns_timer);
	if (r < 0) {
		kp->log(LOG_WARNING, "not serving other network namespaces: %s", strerror(-r));
		return 0;
	}
	kp->ns_event = netns_event;
	kp->ns_rescan = netns_rescan_dirs;
	netns_scan(kp);
	evloop_timer_set(kp->ns_timer, mono_usec() + (int64_t)kp->cfg.namespace_scan * 1000000);
	return 0;
}

void kpaths_netns_stop(struct kpaths *kp)
{
	evloop_timer_free(kp->ns_timer);
	kp->ns_timer = NULL;
	kp->ns_event = NULL;
	kp->ns_rescan = NULL;
	while (kp->nss)
		ns_release(kp->nss);
	hashmap_free(&kp->ns_by_ino);
	if (kp->self_netns_fd >= 0)
		close(kp->self_netns_fd);
	kp->self_netns_fd = -1;
}

unsigned kpaths_netns_count(const struct kpaths *kp)
{
	return kp ? kp->n_ns : 0;
}

size_t kpaths_netns_list(const struct kpaths *kp, struct kpaths_ns_info *out, size_t max)
{
	size_t n = 0;

	for (const struct kns *ns = kp ? kp->nss : NULL; ns; ns = ns->next, n++) {
		if (n >= max)
			continue;
		out[n] = (struct kpaths_ns_info){ .ino = ns->ino,
						  .userns_ino = ns->userns_ino,
						  .pipes = ns->n_open,
						  .open = ns->nfs_fd >= 0,
						  .translate = ns->translate,
						  .maps_read = ns->maps_read,
						  .profile = ns->profile };
		snprintf(out[n].name, sizeof(out[n].name), "%s", ns->name);
		snprintf(out[n].cgroup, sizeof(out[n].cgroup), "%s", ns->cgroup);
	}
	return n;
}

uint64_t kquery_netns(const struct kquery *q)
{
	return q->src == KPATH_PIPE && q->pipe && q->pipe->ns ? q->pipe->ns->ino : 0;
}
