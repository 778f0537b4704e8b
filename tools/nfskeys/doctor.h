/* What the checks of nfskeys doctor share: the run's state and the one way a finding is
 * printed (doctor.c).  The checks live by area in doctor-*.c; cmd-doctor.c is the
 * command. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "macros.h"

enum status { ST_OK, ST_INFO, ST_PROBLEM };

struct doctor {
	const char *root; /* "" for the real system */
	bool json;
	bool systemd; /* PID 1 is systemd: fixes name systemctl and journalctl */
	unsigned problems, n;
};

/* One finding: check (routes, daemon, domain, channel, quota), subject, status, what was
 * found and, for a problem, the fix in words. */
_printf_(6, 7) void finding(struct doctor *d, const char *check, const char *subject,
			    enum status st, const char *fix, const char *fmt, ...);

/* path under --root; an overlong one becomes "" (nothing is found there) */
void rooted(const struct doctor *d, const char *path, char *buf, size_t size);

/* doctor-routes.c: request-key's configuration, read the way request-key reads it */
void check_request_key_syntax(struct doctor *d);
void check_routes(struct doctor *d);

/* doctor-kernel.c: who holds the kernel's idmap channels, the key quotas, and whether
 * CIFS upcalls can run in a container's namespaces (upcall_target=app) */
void check_channels(struct doctor *d);
void check_cifs_upcall_target(struct doctor *d);

/* doctor-namespace.c: one network namespace (--namespace PID|PATH) */
struct nfskeys_ctx;
struct doctor_ns;
/* The network namespace arg names (a PID, /proc/PID/ns/net, /run/netns/NAME): 0, or
 * -errno with err saying what is wrong with arg. */
int doctor_ns_open(const char *arg, struct doctor_ns **ret, char *err, size_t errlen);
void doctor_ns_free(struct doctor_ns *ns);
/* Its identity and owner, its mounts' way of mapping ids, whether nfskeys-idmapd serves
 * it, and with name (NULL: none) what the daemon answers for it as the namespace sees it */
void check_namespace(struct doctor *d, struct nfskeys_ctx *ctx, const char *idmapd_sock,
		     const struct doctor_ns *ns, const char *name);

/* doctor-keys.c: each uid's key quota, warned from 80 % on, a problem when full */
void check_key_quota(struct doctor *d);
