/* upcall_target=app (Linux 6.13 and later, the default there): the credentials of the
 * application that caused the upcall, as that application sees them.  When its pid= lives
 * in the helper's own mount and user namespaces nothing changes (the caches of
 * upcall-spnego.c).  When it lives in a container (another mount or user namespace) only
 * the container's cache is used, never the helper's (the host's cache leaking into
 * containers was CVE-2025-2312), and it is read like this:
 *
 *   - as root, in the helper's own root: the pid checked (it exists, and runs as the
 *     creduid= user or as root: the mounter), a pidfd held so that a recycled pid cannot
 *     stand in for it, the user and groups looked up (NSS) by the caller beforehand;
 *   - in a child: the groups set, setns() into the application's user and mount
 *     namespaces (those that differ), the user's ids (mapped into its user namespace)
 *     taken for good, and then only open(2), fstat(2) and read(2) of the cache file
 *     (the application's KRB5CCNAME when it names a FILE or DIR cache, else
 *     /tmp/krb5cc_UID, as the application sees them) into a pipe.  No library call that
 *     could load a module (NSS, PAM, Kerberos plugins, GSSAPI mechanisms, iconv) and no
 *     exec ever runs there, as root or as the user; the child does not log (syslog
 *     would connect to the container's /dev/log);
 *   - back in the helper's root, as the user: the bytes copied into a MEMORY cache, from
 *     which upcall-spnego.c gets the ticket with the helper's own Kerberos libraries,
 *     configuration and network.
 *
 * Only FILE caches (and a DIR collection's primary one) are read in a container: the one
 * the application's KRB5CCNAME names (read from /proc/PID/environ as cifs.upcall does)
 * when the application runs as the user, else the default path.  Its krb5.conf is never
 * parsed (MIT's profile can load a module named in it), so a default_ccache_name there is
 * not followed, and its KEYRING or KCM caches (its user namespace's keyrings, a daemon of
 * its own) are not read. */
#include <ctype.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <krb5.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <syslog.h>
#include <unistd.h>

#include "become-user.h"
#include "macros.h"
#include "spnego-desc.h"
#include "upcall-spnego-private.h"

#define APP_CACHE_MAX (1024 * 1024) /* a FILE cache larger than this is refused */

/* What the child reports first on the pipe, then the cache's bytes. */
enum app_step {
	STEP_OK = 0,
	STEP_SETGROUPS,
	STEP_SETNS,
	STEP_BECOME,
	STEP_OPEN,
	STEP_NOT_REGULAR,
	STEP_OWNER,
	STEP_MODE,
	STEP_SIZE,
	STEP_READ,
	STEP_PRIMARY, /* a DIR collection's primary file: missing, unreadable or bad */
};

struct app_report {
	int32_t step;
	int32_t err;     /* errno of the step */
	uint32_t detail; /* the owner or mode found */
	uint32_t len;    /* bytes that follow */
};

static int pidfd_open_(pid_t pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

static bool pidfd_alive(int pidfd)
{
	return syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) == 0;
}

/* The real, effective and file-system uids of /proc/PID/status. */
static int proc_uids(pid_t pid, uid_t *ruid, uid_t *euid, uid_t *fsuid)
{
	char path[64], line[256];
	FILE *f;
	unsigned r, e, s, fs;
	int found = -ENODATA;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Uid: %u %u %u %u", &r, &e, &s, &fs) == 4) {
			*ruid = r;
			*euid = e;
			*fsuid = fs;
			found = 0;
			break;
		}
	fclose(f);
	return found;
}

/* 1 when /proc/PID/ns/NAME is another namespace than the helper's, 0 when the same. */
static int ns_differs(pid_t pid, const char *name)
{
	char path[64];
	struct stat self, other;

	snprintf(path, sizeof(path), "/proc/self/ns/%s", name);
	if (stat(path, &self) < 0)
		return -errno;
	snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)pid, name);
	if (stat(path, &other) < 0)
		return -errno;
	return self.st_dev != other.st_dev || self.st_ino != other.st_ino;
}

/* The id inside PID's user namespace of the global id (/proc/PID/uid_map or gid_map,
 * read from the initial namespace: "inside outside count"). */
static int map_id(pid_t pid, const char *map, uint32_t id, uint32_t *ret)
{
	char path[64];
	FILE *f;
	unsigned long in, out, count;
	int r = -ENOENT;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, map);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fscanf(f, "%lu %lu %lu", &in, &out, &count) == 3)
		if (id >= out && id - out < count) {
			*ret = (uint32_t)(in + (id - out));
			r = 0;
			break;
		}
	fclose(f);
	return r;
}

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* KRB5CCNAME in /proc/PID/environ: 1 with its value in *ret (to free), 0 when unset or
 * empty, -errno when the environment cannot be read. */
static int environ_ccname(pid_t pid, char **ret)
{
	char file[64], *ent = NULL;
	size_t cap = 0;
	FILE *f;
	int r = 0;

	*ret = NULL;
	snprintf(file, sizeof(file), "/proc/%d/environ", (int)pid);
	f = fopen(file, "re");
	if (!f)
		return -errno;
	while (getdelim(&ent, &cap, '\0', f) > 0)
		if (!strncmp(ent, "KRB5CCNAME=", 11) && ent[11]) {
			memmove(ent, ent + 11, strlen(ent + 11) + 1);
			*ret = ent;
			r = 1;
			break;
		}
	fclose(f);
	if (r <= 0)
		free(ent);
	return r;
}

/* The cache the application's KRB5CCNAME names (/proc/PID/environ, read as root in the
 * helper's own root; the path is opened later as the user in the application's
 * namespaces): FILE:PATH or PATH, DIR::PATH (one cache of a collection), or DIR:PATH (a
 * collection: *dir set, its primary cache read).  1 with path set; 0 when KRB5CCNAME is
 * unset or names a type not read in a container (its name in type, "" when unset);
 * -errno when the environment cannot be read. */
static int app_ccname(pid_t pid, char *path, size_t size, bool *dir, char *type, size_t tsize)
{
	char *ent = NULL;
	const char *v, *colon;
	int r;

	*dir = false;
	type[0] = '\0';
	r = environ_ccname(pid, &ent);
	if (r <= 0)
		return r;
	v = ent;
	r = 0;
	if (!strncmp(v, "FILE:", 5))
		v += 5;
	else if (!strncmp(v, "DIR::", 5))
		v += 5;
	else if (!strncmp(v, "DIR:", 4)) {
		v += 4;
		*dir = true;
	} else if (v[0] != '/') {
		/* the type's name goes to the log: letters and digits only */
		colon = strchr(v, ':');
		snprintf(type, tsize, "%.*s", colon ? (int)(colon - v) : 0, v);
		for (char *c = type; *c; c++)
			if (!isalnum((unsigned char)*c)) {
				type[0] = '\0';
				break;
			}
		if (!type[0])
			snprintf(type, tsize, "unknown");
		goto out;
	}
	if (v[0] != '/' || strlen(v) + 1 > size) {
		snprintf(type, tsize, "%s", v[0] != '/' ? "relative FILE" : "too long a FILE");
		*dir = false;
		goto out;
	}
	memcpy(path, v, strlen(v) + 1);
	r = 1;
out:
	free(ent);
	return r;
}

/* DIR:path's cache: path/NAME, NAME the first line of path/primary ("tkt..."), a plain
 * file name.  Read as the user in the application's namespaces. */
static int dir_primary(char *path, size_t size)
{
	char name[256];
	size_t len = strlen(path), n = 0;
	int pfd;

	if (len + sizeof("/primary") > size)
		return -ENAMETOOLONG;
	memcpy(path + len, "/primary", sizeof("/primary"));
	pfd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	path[len] = '\0';
	if (pfd < 0)
		return -errno;
	for (;;) {
		ssize_t r = read(pfd, name + n, sizeof(name) - 1 - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
		if (n == sizeof(name) - 1)
			break;
	}
	close(pfd);
	name[n] = '\0';
	name[strcspn(name, "\n")] = '\0';
	if (!name[0] || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, "..") ||
	    len + 1 + strlen(name) + 1 > size)
		return -EINVAL;
	path[len] = '/';
	memcpy(path + len + 1, name, strlen(name) + 1);
	return 0;
}

/* The child: enter, become the user, read the cache; report on fd.  System calls only
 * (and string functions).  dir: path is a DIR collection, its primary cache is read;
 * the path read is sent back after the report. */
static int app_child(int fd, int pidfd, int nsflags, uid_t uid, gid_t gid, const gid_t *groups,
		     size_t ngroups, char *path, size_t size, bool dir)
{
	struct app_report rep = { 0 };
	static char buf[APP_CACHE_MAX];
	struct stat st;
	size_t len = 0;
	int cfd, r;

	/* the groups as global ids, while still root in the helper's own user namespace */
	if (setgroups(ngroups, groups) < 0) {
		rep.step = STEP_SETGROUPS;
		goto fail;
	}
	if (setns(pidfd, nsflags) < 0) {
		rep.step = STEP_SETNS;
		goto fail;
	}
	errno = 0;
	if (become_user_ids(uid, gid) < 0) {
		rep.step = STEP_BECOME;
		goto fail;
	}
	if (dir && (r = dir_primary(path, size)) < 0) {
		rep.step = STEP_PRIMARY;
		errno = -r;
		goto fail;
	}
	cfd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (cfd < 0) {
		rep.step = STEP_OPEN;
		goto fail;
	}
	if (fstat(cfd, &st) < 0) {
		rep.step = STEP_OPEN;
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		rep.step = STEP_NOT_REGULAR;
		rep.detail = (uint32_t)st.st_mode;
	} else if (st.st_uid != uid) {
		rep.step = STEP_OWNER;
		rep.detail = (uint32_t)st.st_uid;
	} else if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		rep.step = STEP_MODE;
		rep.detail = (uint32_t)(st.st_mode & 07777);
	} else if (st.st_size > APP_CACHE_MAX) {
		rep.step = STEP_SIZE;
		rep.detail = APP_CACHE_MAX;
	}
	if (rep.step != STEP_OK) {
		(void)write_all(fd, &rep, sizeof(rep));
		(void)write_all(fd, path, size);
		return 1;
	}
	for (;;) {
		ssize_t n = read(cfd, buf + len, sizeof(buf) - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rep.step = STEP_READ;
			goto fail;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (len == sizeof(buf)) {
			rep.step = STEP_SIZE;
			rep.detail = APP_CACHE_MAX;
			(void)write_all(fd, &rep, sizeof(rep));
			(void)write_all(fd, path, size);
			return 1;
		}
	}
	rep.len = (uint32_t)len;
	if (write_all(fd, &rep, sizeof(rep)) < 0 || write_all(fd, path, size) < 0 ||
	    write_all(fd, buf, len) < 0)
		return 1;
	explicit_bzero(buf, len);
	return 0;
fail:
	rep.err = errno ? errno : EPERM;
	(void)write_all(fd, &rep, sizeof(rep));
	(void)write_all(fd, path, size);
	return 1;
}

static int read_all(int fd, void *buf, size_t len)
{
	char *p = buf;

	while (len > 0) {
		ssize_t n = read(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int spnego_pid_ccname(const struct spnego_desc *d, char *name, size_t size)
{
	pid_t pid = (pid_t)d->pid;
	uid_t ruid, euid, fsuid;
	char *v = NULL;
	int pidfd, r;

	name[0] = '\0';
	if (d->pid == 0 || d->pid > INT32_MAX)
		return 0;
	pidfd = pidfd_open_(pid);
	if (pidfd < 0)
		return 0;
	r = proc_uids(pid, &ruid, &euid, &fsuid);
	if (r == 0 && (ruid == d->creduid || euid == d->creduid))
		r = environ_ccname(pid, &v);
	else
		r = 0;
	/* still that process: not a recycled pid's environment; a name fit for the log */
	for (const char *c = r > 0 ? v : ""; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			r = 0;
	if (r > 0 && pidfd_alive(pidfd) && strlen(v) < size) {
		memcpy(name, v, strlen(v) + 1);
	} else
		r = 0;
	close(pidfd);
	free(v);
	return r > 0;
}

void spnego_app_free(struct spnego_app *app)
{
	if (app->data) {
		explicit_bzero(app->data, app->len);
		free(app->data);
	}
	app->data = NULL;
	app->len = 0;
}

int spnego_app_read(const struct spnego_desc *d, gid_t gid, const gid_t *groups, size_t ngroups,
		    struct spnego_app *app)
{
	pid_t pid = (pid_t)d->pid, child;
	uid_t ruid = 0, euid = 0, fsuid = 0, cuid = d->creduid;
	gid_t cgid = gid;
	int pidfd, mnt, user, nsflags = 0, p[2], status, r;
	struct app_report rep;
	char type[32];
	bool dir = false;

	memset(app, 0, sizeof(*app));
	app->pid = d->pid;
	if (d->pid == 0 || d->pid > INT32_MAX) {
		spnego_say(LOG_ERR, "cifs.spnego for //%s: upcall_target=app with pid=%" PRIu32
		    ": not a process id, refused", d->host, d->pid);
		return -EINVAL;
	}
	/* a pidfd first: what is read under /proc afterwards is this process's as long as
	 * the pidfd still reaches it at the end */
	pidfd = pidfd_open_(pid);
	if (pidfd < 0) {
		spnego_say(LOG_ERR, "cifs.spnego for //%s: upcall_target=app: pid %d: %s, refused",
		    d->host, (int)pid, errno == ESRCH ? "no such process" : strerror(errno));
		return -ESRCH;
	}
	r = proc_uids(pid, &ruid, &euid, &fsuid);
	mnt = r < 0 ? r : ns_differs(pid, "mnt");
	user = mnt < 0 ? mnt : ns_differs(pid, "user");
	if (r < 0 || mnt < 0 || user < 0 || !pidfd_alive(pidfd)) {
		spnego_say(LOG_ERR, "cifs.spnego for //%s: upcall_target=app: pid %d: cannot read its "
		    "credentials and namespaces: %s, refused", d->host, (int)pid,
		    strerror(r < 0 ? -r : mnt < 0 ? -mnt : user < 0 ? -user : ESRCH));
		close(pidfd);
		return -ESRCH;
	}
	/* The kernel's pid= is the task that asked: the user's own process (multiuser: its
	 * fsuid), or the mounter (root, or a set-uid mount helper's real uid) for creduid= */
	if (ruid != d->creduid && euid != d->creduid && fsuid != d->creduid && ruid != 0 &&
	    euid != 0 && fsuid != 0) {
		spnego_say(LOG_ERR, "cifs.spnego for //%s: upcall_target=app: pid %d runs as uid %u "
		    "(effective %u, fs %u), neither creduid %" PRIu32 " nor root: not the "
		    "requester, refused", d->host, (int)pid, (unsigned)ruid, (unsigned)euid,
		    (unsigned)fsuid, d->creduid);
		close(pidfd);
		return -EPERM;
	}
	if (!mnt && !user) {
		close(pidfd);
		spnego_say(LOG_DEBUG, "cifs.spnego: upcall_target=app: pid %d shares the helper's "
		    "namespaces", (int)pid);
		return 0;
	}
	app->container = true;
	if (mnt)
		nsflags |= CLONE_NEWNS;
	if (user) {
		nsflags |= CLONE_NEWUSER;
		if (map_id(pid, "uid_map", d->creduid, &cuid) < 0 ||
		    map_id(pid, "gid_map", gid, &cgid) < 0) {
			spnego_say(LOG_ERR, "cifs.spnego for //%s: upcall_target=app: uid %" PRIu32
			    " or gid %u is not mapped in the user namespace of pid %d, refused",
			    d->host, d->creduid, (unsigned)gid, (int)pid);
			close(pidfd);
			return -EPERM;
		}
	}
	app->uid = cuid;
	/* the application's KRB5CCNAME when it names a file, else the default path; not a
	 * mounter's (root mounting for creduid=): its environment is root's */
	type[0] = '\0';
	r = ruid == d->creduid || euid == d->creduid ?
		    app_ccname(pid, app->path, sizeof(app->path), &dir, type, sizeof(type)) :
		    0;
	if (r <= 0) {
		if (type[0])
			spnego_say(LOG_NOTICE, "uid %" PRIu32 ": KRB5CCNAME of pid %d names a %s "
			    "cache, not read in a container: the default /tmp/krb5cc_%u instead",
			    d->creduid, (int)pid, type, (unsigned)cuid);
		snprintf(app->path, sizeof(app->path), "/tmp/krb5cc_%u", (unsigned)cuid);
	}

	if (pipe2(p, O_CLOEXEC) < 0) {
		r = -errno;
		close(pidfd);
		return r;
	}
	child = fork();
	if (child < 0) {
		r = -errno;
		close(p[0]);
		close(p[1]);
		close(pidfd);
		return r;
	}
	if (child == 0) {
		close(p[0]);
		_exit(app_child(p[1], pidfd, nsflags, cuid, cgid, groups, ngroups, app->path,
				sizeof(app->path), dir));
	}
	close(p[1]);
	close(pidfd);
	r = read_all(p[0], &rep, sizeof(rep)) < 0 ||
		    read_all(p[0], app->path, sizeof(app->path)) < 0 ?
		-EIO :
		0;
	app->path[sizeof(app->path) - 1] = '\0';
	/* the application chose the path and it goes to the log: no control characters
	 * (it is not opened again) */
	for (char *c = app->path; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
	if (r == 0 && rep.step == STEP_OK) {
		if (rep.len > APP_CACHE_MAX || !(app->data = malloc(rep.len ? rep.len : 1)))
			r = -ENOMEM;
		else if (read_all(p[0], app->data, rep.len) < 0)
			r = -EIO;
		else
			app->len = rep.len;
	}
	close(p[0]);
	while (waitpid(child, &status, 0) < 0 && errno == EINTR)
		;
	if (r < 0) {
		spnego_say(LOG_ERR, "cifs.spnego for //%s: upcall_target=app: pid %d: no answer from "
		    "the reader in its namespaces", d->host, (int)pid);
		spnego_app_free(app);
		return r;
	}
	switch (rep.step) {
	case STEP_OK:
		spnego_say(LOG_DEBUG, "cifs.spnego: uid %" PRIu32 ": %s of pid %d's namespaces read "
		    "(%zu bytes)", d->creduid, app->path, (int)pid, app->len);
		return 0;
	case STEP_OPEN:
		if (rep.err == ENOENT) {
			spnego_say(LOG_INFO, "uid %" PRIu32 ": no credential cache %s in the "
			    "namespaces of pid %d (upcall_target=app)", d->creduid, app->path,
			    (int)pid);
			return -ENOENT;
		}
		spnego_say(LOG_ERR, "uid %" PRIu32 ": credential cache %s in the namespaces of pid "
		    "%d refused: cannot open it: %s", d->creduid, app->path, (int)pid,
		    rep.err == ELOOP ? "a symbolic link" : strerror(rep.err));
		return -EACCES;
	case STEP_NOT_REGULAR:
	case STEP_OWNER:
	case STEP_MODE:
	case STEP_SIZE:
		spnego_say(LOG_ERR, "uid %" PRIu32 ": credential cache %s in the namespaces of pid "
		    "%d refused: %s %u", d->creduid, app->path, (int)pid,
		    rep.step == STEP_NOT_REGULAR ? "not a regular file, mode" :
		    rep.step == STEP_OWNER ? "owned by another uid:" :
		    rep.step == STEP_MODE ? "writable by group or others, mode" :
					    "larger than bytes:",
		    rep.step == STEP_MODE ? (unsigned)rep.detail : (unsigned)rep.detail);
		return -EACCES;
	case STEP_PRIMARY:
		spnego_say(rep.err == ENOENT ? LOG_INFO : LOG_ERR, "uid %" PRIu32 ": credential "
		    "cache collection DIR:%s in the namespaces of pid %d: %s", d->creduid,
		    app->path, (int)pid, rep.err == ENOENT ? "no primary file" :
		    rep.err == EINVAL ? "its primary file names no cache in it" :
		    rep.err == ELOOP ? "its primary file is a symbolic link" :
					 strerror(rep.err));
		return rep.err == ENOENT ? -ENOENT : -EACCES;
	default:
		spnego_say(LOG_ERR, "cifs.spnego for //%s: upcall_target=app: pid %d: cannot %s: %s",
		    d->host, (int)pid,
		    rep.step == STEP_SETGROUPS ? "set the user's groups" :
		    rep.step == STEP_SETNS ? "enter its namespaces" :
		    rep.step == STEP_BECOME ? "become the user in its namespaces" :
					      "read the cache",
		    strerror(rep.err));
		return -EPERM;
	}
}

/* As the user, in the helper's root: the bytes into a MEMORY cache named in cache. */
int spnego_app_cache(const struct spnego_app *app, char *cache, size_t size)
{
	krb5_context k5 = NULL;
	krb5_ccache in = NULL, out = NULL;
	krb5_principal princ = NULL;
	krb5_error_code e = 0;
	char src[64];
	int fd, r = -ENOKEY;

	fd = memfd_create("nfskeys-app-ccache", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write_all(fd, app->data, app->len) < 0) {
		r = -EIO;
		goto out;
	}
	snprintf(src, sizeof(src), "FILE:/proc/self/fd/%d", fd);
	snprintf(cache, size, "MEMORY:nfskeys-app-%d", (int)getpid());
	if ((e = krb5_init_context(&k5)) != 0 || (e = krb5_cc_resolve(k5, src, &in)) != 0 ||
	    (e = krb5_cc_get_principal(k5, in, &princ)) != 0 ||
	    (e = krb5_cc_resolve(k5, cache, &out)) != 0 ||
	    (e = krb5_cc_initialize(k5, out, princ)) != 0 ||
	    (e = krb5_cc_copy_creds(k5, in, out)) != 0) {
		const char *m = k5 ? krb5_get_error_message(k5, e) : NULL;

		spnego_say(LOG_ERR, "uid %u: credential cache %s of pid %" PRIu32 "'s namespaces: %s",
		    (unsigned)getuid(), app->path, app->pid, m ? m : strerror(ENOMEM));
		if (m)
			krb5_free_error_message(k5, m);
		goto out;
	}
	r = 0;
out:
	if (princ)
		krb5_free_principal(k5, princ);
	if (in)
		krb5_cc_close(k5, in);
	/* closing keeps a MEMORY cache's contents for this process (MIT) */
	if (out)
		krb5_cc_close(k5, out);
	if (k5)
		krb5_free_context(k5);
	close(fd);
	return r;
}
