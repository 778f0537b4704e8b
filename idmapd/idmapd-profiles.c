/* Configurations of other network namespaces ([Kernel] Namespace-Dir): one file per
 * configuration, a whole nfskeys.conf(5) of its own (domain, translation methods, LDAP...)
 * with a [Match] section naming the namespaces it is for, by /run/netns name or by the
 * cgroup of a process in them.  The NFS client pipes of a matching namespace are answered
 * with that file's engine; its answers are cached apart (idmapd_kind_profile). */
#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "idmapd.h"

struct idmapd_profiles *idmapd_profiles_free(struct idmapd_profiles *ps)
{
	if (!ps)
		return NULL;
	for (unsigned i = 0; i < ps->n; i++)
		nfskeys_ctx_unref(ps->p[i].ctx);
	free(ps);
	return NULL;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A file or directory root does not own, or that others may write: it could choose what
 * a root daemon answers the kernel. */
static const char *unsafe(const struct stat *st)
{
	if (st->st_uid != 0)
		return "not owned by root";
	if (st->st_mode & (S_IWGRP | S_IWOTH))
		return "writable by its group or others";
	return NULL;
}

static int profile_load(struct idmapd_profile *p, const char *dir, const char *file,
			int lib_priority, char *err, size_t errlen)
{
	const char *domain, *netns, *cgroup;
	char why[256] = "";
	struct stat st;
	size_t len = strlen(file) - 5; /* ".conf" */
	int r;

	snprintf(p->path, sizeof(p->path), "%s/%s", dir, file);
	snprintf(p->name, sizeof(p->name), "%.*s", (int)MIN(len, sizeof(p->name) - 1), file);
	if (lstat(p->path, &st) < 0 || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file", p->path);
		return -EINVAL;
	}
	if (unsafe(&st)) {
		snprintf(err, errlen, "%s: %s", p->path, unsafe(&st));
		return -EPERM;
	}
	daemon_capture_errors(why, sizeof(why));
	r = nfskeys_ctx_new_full(p->path, daemon_lib_log, NULL, &p->ctx);
	if (r == 0) {
		nfskeys_ctx_set_log_priority(p->ctx, lib_priority);
		nfskeys_conf_log_warnings(p->ctx);
		r = nfskeys_idmap_get_domain(p->ctx, &domain, NULL);
		if (r == 0)
			r = nfskeys_idmap_check_config(p->ctx);
	}
	daemon_capture_errors(NULL, 0);
	if (r < 0 || why[0]) {
		snprintf(err, errlen, "%s is not usable: %s%s%s%s", p->path,
			 r < 0 ? strerror(-r) : "", r < 0 && why[0] ? " (" : "", why,
			 r < 0 && why[0] ? ")" : "");
		return r < 0 ? r : -EINVAL;
	}
	netns = nfskeys_conf_get(p->ctx, "Match", "Netns");
	cgroup = nfskeys_conf_get(p->ctx, "Match", "Cgroup");
	if ((!netns || !*netns) && (!cgroup || !*cgroup)) {
		snprintf(err, errlen, "%s: [Match] names no namespace (Netns = or Cgroup =)",
			 p->path);
		return -EINVAL;
	}
	snprintf(p->netns, sizeof(p->netns), "%s", netns ? netns : "");
	snprintf(p->cgroup, sizeof(p->cgroup), "%s", cgroup ? cgroup : "");
	if (strlen(p->netns) != strlen(netns ? netns : "") ||
	    strlen(p->cgroup) != strlen(cgroup ? cgroup : "")) {
		snprintf(err, errlen, "%s: [Match] too long", p->path);
		return -EINVAL;
	}
	return 0;
}

int idmapd_profiles_load(const char *dir, int lib_priority, struct idmapd_profiles **ret,
			 char *err, size_t errlen)
{
	_cleanup_free_ struct idmapd_profiles *ps = calloc(1, sizeof(*ps));
	char *names[IDMAPD_PROFILES_MAX + 1];
	size_t n = 0;
	struct dirent *de;
	struct stat st;
	DIR *d;
	int r = 0;

	*ret = NULL;
	if (!ps)
		return -ENOMEM;
	d = opendir(dir);
	if (!d) {
		if (errno == ENOENT)
			return 0; /* none: every namespace takes the daemon's configuration */
		r = -errno;
		snprintf(err, errlen, "[Kernel] Namespace-Dir %s: %s", dir, strerror(errno));
		return r;
	}
	if (fstat(dirfd(d), &st) < 0) {
		r = -errno;
		snprintf(err, errlen, "[Kernel] Namespace-Dir %s: %s", dir, strerror(errno));
		closedir(d);
		return r;
	}
	if (unsafe(&st)) {
		snprintf(err, errlen, "[Kernel] Namespace-Dir %s: %s", dir, unsafe(&st));
		closedir(d);
		return -EPERM;
	}
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);

		if (de->d_name[0] == '.' || l <= 5 || strcmp(de->d_name + l - 5, ".conf"))
			continue;
		if (n == IDMAPD_PROFILES_MAX) {
			snprintf(err, errlen, "[Kernel] Namespace-Dir %s: more than %d files", dir,
				 IDMAPD_PROFILES_MAX);
			r = -E2BIG;
			break;
		}
		names[n] = strdup(de->d_name);
		if (!names[n]) {
			r = -ENOMEM;
			break;
		}
		n++;
	}
	closedir(d);
	if (r == 0)
		qsort(names, n, sizeof(names[0]), cmp_names);
	for (size_t i = 0; r == 0 && i < n; i++) {
		r = profile_load(&ps->p[ps->n], dir, names[i], lib_priority, err, errlen);
		if (r == 0 || ps->p[ps->n].ctx)
			ps->n++; /* a failed one's context is freed with the rest */
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	if (r < 0) {
		idmapd_profiles_free(TAKE_PTR(ps));
		return r;
	}
	*ret = TAKE_PTR(ps);
	return 0;
}

/* Whether one of the words of list (blanks or commas between) matches s as a glob. */
static bool list_matches(const char *list, const char *s)
{
	char word[256];

	if (!*s)
		return false;
	for (const char *p = list; *p;) {
		size_t w;

		p += strspn(p, " \t,");
		w = strcspn(p, " \t,");
		if (w && w < sizeof(word)) {
			memcpy(word, p, w);
			word[w] = '\0';
			if (fnmatch(word, s, 0) == 0)
				return true;
		}
		p += w;
	}
	return false;
}

unsigned idmapd_profiles_match(const struct idmapd_profiles *ps, const char *netns_name,
			       const char *cgroup)
{
	for (unsigned i = 0; ps && i < ps->n; i++)
		if (list_matches(ps->p[i].netns, netns_name) ||
		    list_matches(ps->p[i].cgroup, cgroup))
			return i + 1;
	return 0;
}

struct nfskeys_ctx *idmapd_kind_ctx(struct idmapd *d, uint32_t kind)
{
	unsigned p = IDMAPD_KIND_PROFILE(kind);

	const struct idmapd_profiles *ps = d->set.profiles;

	return p && ps && p <= ps->n ? ps->p[p - 1].ctx : d->ctx;
}

unsigned idmapd_ns_match(void *userdata, const char *netns_name, const char *cgroup)
{
	struct idmapd *d = userdata;

	return idmapd_profiles_match(d->set.profiles, netns_name, cgroup);
}
