/* Helpers shared by the ID-mapping backends: reentrant NSS lookups with growing buffers,
 * Local-Realms, and filling answers.  Compiled into each plugin (plugins link only the
 * public libnfskeys and common/). */
#include <ctype.h>
#include <grp.h>
#include <pwd.h>
#include <strings.h>

#include "idmap-util.h"

#define NSS_BUF_MAX (1 << 20)

/* Run an NSS *_r call with a buffer that grows on ERANGE. */
#define NSS_CALL(call, found)                                                             \
	({                                                                                \
		size_t _sz = 1024;                                                        \
		int _r;                                                                   \
		for (;;) {                                                                \
			char *buf = malloc(_sz);                                          \
			if (!buf) {                                                       \
				_r = -ENOMEM;                                             \
				break;                                                    \
			}                                                                 \
			_r = (call);                                                      \
			if (_r == 0) {                                                    \
				_r = (found);                                             \
				free(buf);                                                \
				break;                                                    \
			}                                                                 \
			free(buf);                                                        \
			if (_r != ERANGE || _sz >= NSS_BUF_MAX) {                         \
				_r = (_r == ENOENT || _r == ESRCH || _r == EBADF ||       \
				      _r == EPERM) ? -ENOENT : -_r;                       \
				break;                                                    \
			}                                                                 \
			_sz *= 2;                                                         \
		}                                                                         \
		_r;                                                                       \
	})

int util_getpwnam(const char *name, uint32_t *ret_uid, uint32_t *ret_gid)
{
	struct passwd pw, *p = NULL;

	return NSS_CALL(getpwnam_r(name, &pw, buf, _sz, &p),
			p ? (*ret_uid = p->pw_uid, ret_gid ? *ret_gid = p->pw_gid : 0, 0) :
			    -ENOENT);
}

int util_getgrnam(const char *name, uint32_t *ret_gid)
{
	struct group gr, *g = NULL;

	return NSS_CALL(getgrnam_r(name, &gr, buf, _sz, &g),
			g ? (*ret_gid = g->gr_gid, 0) : -ENOENT);
}

static int copy_name(const char *s, char *out, size_t size)
{
	if (strlen(s) >= size)
		return -ENAMETOOLONG;
	memcpy(out, s, strlen(s) + 1);
	return 0;
}

int util_getpwuid(uint32_t uid, char *out, size_t size)
{
	struct passwd pw, *p = NULL;

	return NSS_CALL(getpwuid_r(uid, &pw, buf, _sz, &p),
			p ? copy_name(p->pw_name, out, size) : -ENOENT);
}

int util_getgrgid(uint32_t gid, char *out, size_t size)
{
	struct group gr, *g = NULL;

	return NSS_CALL(getgrgid_r(gid, &gr, buf, _sz, &g),
			g ? copy_name(g->gr_name, out, size) : -ENOENT);
}

int util_answer_local(struct nfskeys_idmap_request *req, const char *local,
		      struct nfskeys_idmap_answer *ret)
{
	uint32_t uid, gid;
	int r;

	switch (req->kind) {
	case NFSKEYS_IDMAP_GROUP_TO_GID:
	case NFSKEYS_IDMAP_SID_TO_GID:
		r = util_getgrnam(local, &gid);
		if (r == -ENOENT)
			return util_reason(req, IDMAP_CAUSE_NO_SUCH, "no group '%s' (NSS)", local);
		if (r < 0)
			return r;
		ret->id = gid;
		return 0;
	case NFSKEYS_IDMAP_PRINCIPAL_TO_IDS: {
		gid_t groups[NFSKEYS_IDMAP_GROUPS_MAX];
		int n = NFSKEYS_IDMAP_GROUPS_MAX;

		r = util_getpwnam(local, &uid, &gid);
		if (r == -ENOENT)
			return util_reason(req, IDMAP_CAUSE_NO_SUCH, "no user '%s' (NSS)", local);
		if (r < 0)
			return r;
		ret->id = uid;
		ret->gid = gid;
		if (getgrouplist(local, gid, groups, &n) < 0) {
			ret->flags |= NFSKEYS_IDMAP_ANSWER_TRUNCATED;
			n = NFSKEYS_IDMAP_GROUPS_MAX;
		}
		ret->n_groups = (uint32_t)n;
		for (int i = 0; i < n; i++)
			ret->groups[i] = groups[i];
		return 0;
	}
	default:
		r = util_getpwnam(local, &uid, NULL);
		if (r == -ENOENT)
			return util_reason(req, IDMAP_CAUSE_NO_SUCH, "no user '%s' (NSS)", local);
		if (r < 0)
			return r;
		ret->id = uid;
		return 0;
	}
}

int util_answer_name(struct nfskeys_idmap_answer *ret, const char *name, const char *domain)
{
	int n;

	if (!domain || strchr(name, '@'))
		n = snprintf(ret->name, sizeof(ret->name), "%s", name);
	else
		n = snprintf(ret->name, sizeof(ret->name), "%s@%s", name, domain);
	return n < 0 || (size_t)n >= sizeof(ret->name) ? -ENAMETOOLONG : 0;
}

bool util_realm_is_local(struct nfskeys_ctx *ctx, const char *realm, const char *nfs_domain)
{
	const char *list = nfskeys_conf_get(ctx, "General", "Local-Realms");
	char buf[1024], *save = NULL;

	if (!realm || !*realm)
		return false;
	if (!list || !*list)
		return strcaseeq(realm, nfs_domain);
	if (strlen(list) >= sizeof(buf))
		return false;
	snprintf(buf, sizeof(buf), "%s", list);
	for (char *t = strtok_r(buf, ", \t", &save); t; t = strtok_r(NULL, ", \t", &save))
		if (streq(t, realm))
			return true;
	return false;
}

int util_no_strip(struct nfskeys_ctx *ctx, unsigned *ret_bits)
{
	const char *v = nfskeys_conf_get(ctx, "Translation", "No-Strip");

	if (!v || strcaseeq(v, "none") || strcaseeq(v, "no") || strcaseeq(v, "false"))
		*ret_bits = 0;
	else if (strcaseeq(v, "user"))
		*ret_bits = IDMAP_NO_STRIP_USER;
	else if (strcaseeq(v, "group"))
		*ret_bits = IDMAP_NO_STRIP_GROUP;
	else if (strcaseeq(v, "both"))
		*ret_bits = IDMAP_NO_STRIP_USER | IDMAP_NO_STRIP_GROUP;
	else {
		plog(ctx, LOG_ERR, "[Translation] No-Strip: '%s' is not none, user, group or both", v);
		return -EINVAL;
	}
	return 0;
}

unsigned util_no_strip_bit(const struct nfskeys_idmap_request *req)
{
	return req->kind == NFSKEYS_IDMAP_GROUP_TO_GID || req->kind == NFSKEYS_IDMAP_GID_TO_GROUP ?
		       IDMAP_NO_STRIP_GROUP :
		       IDMAP_NO_STRIP_USER;
}

bool util_domain_is_ours(const struct nfskeys_idmap_request *req)
{
	return req->domain && strcaseeq(req->domain, req->nfs_domain);
}

int util_reason(struct nfskeys_idmap_request *req, uint32_t cause, const char *fmt, ...)
{
	va_list ap;

	req->cause = cause;
	if (req->reason && req->reason_size) {
		va_start(ap, fmt);
		vsnprintf(req->reason, req->reason_size, fmt, ap);
		va_end(ap);
	}
	return -ENOENT;
}
