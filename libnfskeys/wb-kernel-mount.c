/* Writeback on kernel mounts: the mount object, from a path (its mount in
 * /proc/self/mountinfo, network filesystems only) or from a mount table entry, and its
 * bdi (/sys/class/bdi/MAJ:MIN).  The knobs and saved state are wb-kernel.c's. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "libnfskeys-private.h"
#include "nfskeys-attr-daemon.h"
#include "wb-kernel.h"
#include "wb-private.h"
#include "wb-kernel-private.h"

/* The root of /sys; a test-only override, ignored when setuid (secure_getenv). */
static const char *sys_root(void)
{
	const char *s = secure_getenv("NFSKEYS_WB_SYSFS");

	return s && *s ? s : "/sys";
}

static bool is_network_fs(const char *t)
{
	return streq(t, "nfs") || streq(t, "nfs4") || streq(t, "cifs") || streq(t, "smb3");
}

/* Does escaped path p lie in escaped mount point mp (whole components)? */
static bool under(const char *p, const char *mp)
{
	size_t n = strlen(mp);

	if (streq(mp, "/"))
		return true;
	return strncmp(p, mp, n) == 0 && (p[n] == '/' || p[n] == '\0');
}

/* Unescape \ooo in place (mountinfo's escaping). */
static void unescape(char *s)
{
	char *o = s;

	for (char *p = s; *p; p++) {
		if (p[0] == '\\' && p[1] >= '0' && p[1] <= '3' && p[2] >= '0' && p[2] <= '7' &&
		    p[3] >= '0' && p[3] <= '7') {
			*o++ = (char)((p[1] - '0') * 64 + (p[2] - '0') * 8 + (p[3] - '0'));
			p += 3;
		} else {
			*o++ = *p;
		}
	}
	*o = '\0';
}

/* From mountinfo: the mount of dev that holds escaped path esc (the longest mount point). */
static int find_mount(struct nfskeys_wb_mount *m, dev_t dev, const char *esc)
{
	char p[PATH_MAX], mp[PATH_MAX], fstype[64], best_mp[PATH_MAX] = "";
	_cleanup_fclose_ FILE *f = NULL;
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;
	int best_id = -1;
	char best_type[64] = "";

	snprintf(p, sizeof(p), "%s/self/mountinfo", wbk_proc_root());
	f = fopen(p, "re");
	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		unsigned maj, min;
		int id, parent, off = 0;
		char *sep;

		if (strlen(line) >= sizeof(p))
			continue;
		if (sscanf(line, "%d %d %u:%u %*s %4095s %n", &id, &parent, &maj, &min, mp, &off) < 5 ||
		    off == 0)
			continue;
		if (makedev(maj, min) != dev || !under(esc, mp))
			continue;
		sep = strstr(line + off, " - ");
		if (!sep || sscanf(sep + 3, "%63s", fstype) != 1)
			continue;
		if (strlen(mp) >= strlen(best_mp) || best_id < 0) {
			snprintf(best_mp, sizeof(best_mp), "%s", mp);
			snprintf(best_type, sizeof(best_type), "%s", fstype);
			best_id = id;
		}
	}
	if (best_id < 0)
		return -ENOENT;
	free(m->esc);
	m->esc = strdup(best_mp);
	unescape(best_mp);
	free(m->path);
	m->path = strdup(best_mp);
	if (!m->esc || !m->path)
		return -ENOMEM;
	m->mnt_id = best_id;
	snprintf(m->fstype, sizeof(m->fstype), "%s", best_type);
	return 0;
}

/* The bdi of superblock dev (its directory must exist) and which knobs it has. */
static int find_bdi(struct nfskeys_wb_mount *m, dev_t dev, const char *path)
{
	char knob[PATH_MAX + 32];

	snprintf(m->bdi, sizeof(m->bdi), "%u:%u", major(dev), minor(dev));
	snprintf(m->bdidir, sizeof(m->bdidir), "%s/class/bdi/%s", sys_root(), m->bdi);
	if (access(m->bdidir, F_OK) < 0) {
		log_err(m->ctx, "%s (%s on %s): the bdi %s does not exist", path, m->fstype,
			m->path, m->bdidir);
		return -ENODEV;
	}
	snprintf(knob, sizeof(knob), "%s/max_bytes", m->bdidir);
	m->knobs = access(knob, F_OK) == 0 ? 2 : 1;
	return 0;
}

_public_ int nfskeys_wb_mount_open(struct nfskeys_ctx *ctx, const char *path,
				   struct nfskeys_wb_mount **ret_mount)
{
	_cleanup_free_ char *rp = NULL;
	char esc[PATH_MAX * 4];
	struct nfskeys_wb_mount *m;
	struct stat st;
	int r;

	if (!ctx || !path || !*path || !ret_mount)
		return -EINVAL;
	rp = realpath(path, NULL);
	if (!rp || stat(rp, &st) < 0) {
		r = -errno;
		log_err(ctx, "%s: %s", path, strerror(-r));
		return r;
	}
	r = wbk_escape_path(rp, esc, sizeof(esc));
	if (r < 0)
		return r;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->ctx = nfskeys_ctx_ref(ctx);
	r = find_mount(m, st.st_dev, esc);
	if (r < 0) {
		log_err(ctx, "%s: no mount of device %u:%u holds it in %s/self/mountinfo", path,
			major(st.st_dev), minor(st.st_dev), wbk_proc_root());
		goto fail;
	}
	if (!is_network_fs(m->fstype)) {
		log_err(ctx, "%s is on %s (mounted on %s), not an NFS or CIFS mount",
			path, m->fstype, m->path);
		r = -EMEDIUMTYPE;
		goto fail;
	}
	r = find_bdi(m, st.st_dev, path);
	if (r < 0)
		goto fail;
	*ret_mount = m;
	return 0;
fail:
	nfskeys_wb_mount_free(m);
	return r;
}

int wbk_mount_from_table(struct nfskeys_ctx *ctx, int mnt_id, const char *target, dev_t dev,
			 const char *fstype, struct nfskeys_wb_mount **ret_mount)
{
	char esc[PATH_MAX * 4];
	struct nfskeys_wb_mount *m;
	int r;

	if (!ctx || !target || !fstype || !ret_mount)
		return -EINVAL;
	if (!is_network_fs(fstype))
		return -EMEDIUMTYPE;
	r = wbk_escape_path(target, esc, sizeof(esc));
	if (r < 0)
		return r;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->ctx = nfskeys_ctx_ref(ctx);
	m->mnt_id = mnt_id;
	m->path = strdup(target);
	m->esc = strdup(esc);
	snprintf(m->fstype, sizeof(m->fstype), "%s", fstype);
	r = m->path && m->esc ? find_bdi(m, dev, target) : -ENOMEM;
	if (r < 0) {
		nfskeys_wb_mount_free(m);
		return r;
	}
	*ret_mount = m;
	return 0;
}

_public_ struct nfskeys_wb_mount *nfskeys_wb_mount_free(struct nfskeys_wb_mount *m)
{
	if (!m)
		return NULL;
	free(m->path);
	free(m->esc);
	nfskeys_ctx_unref(m->ctx);
	free(m);
	return NULL;
}

_public_ const char *nfskeys_wb_mount_get_path(const struct nfskeys_wb_mount *m)
{
	return m ? m->path : NULL;
}

_public_ const char *nfskeys_wb_mount_get_bdi(const struct nfskeys_wb_mount *m)
{
	return m ? m->bdi : NULL;
}
