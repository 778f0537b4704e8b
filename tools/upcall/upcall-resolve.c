/* The resolution step of nfskeys-upcall: ask nfskeys-idmapd first (one shared cache, a
 * short timeout), and resolve in-process through the library's ID-mapping engine only
 * when the daemon cannot be reached.  Kept apart from the key handling. */
#include <syslog.h>

#include "conf-get.h"
#include "idmap-desc.h"
#include "idmapd-client.h"
#include "macros.h"
#include "upcall.h"
#include "upcall-args.h"
#include "idmap.h"

static int ask_daemon(struct nfskeys_ctx *ctx, enum nfskeys_idmap_kind kind, const char *key,
		      struct nfskeys_idmap_answer *answer, bool *ret_transport)
{
	struct rpc_client *c = NULL;
	int64_t timeout = UPCALL_DAEMON_TIMEOUT_MS;
	char err[256];
	int r;

	*ret_transport = true;
	/* a duration in ms: bounds and default from the schema */
	r = conf_get_typed(ctx, "Idmapd", "Helper-Timeout", &timeout, err, sizeof(err));
	if (r == 0 && timeout == 0)
		return -ENOTCONN; /* daemon disabled for the helper */
	if (r < 0 && r != -ENOENT) {
		nfskeys_ctx_log(ctx, LOG_WARNING, __FILE__, __LINE__, __func__,
				"%s; using %d ms", err, UPCALL_DAEMON_TIMEOUT_MS);
		timeout = UPCALL_DAEMON_TIMEOUT_MS;
	}
	r = idmapd_client_new(idmapd_socket_path(ctx, NULL), (int)timeout, &c);
	if (r < 0)
		return r;
	r = idmapd_client_lookup(c, kind, key, idmap_desc_nobody(kind) ? IDMAPD_LOOKUP_NOBODY : 0,
				 answer, NULL, ret_transport);
	rpc_client_free(c);
	return r;
}

bool upcall_no_daemon;

int upcall_resolve(struct nfskeys_ctx *ctx, enum nfskeys_idmap_kind kind, const char *key,
		   struct nfskeys_idmap_answer *answer)
{
	bool transport = true;
	unsigned flags;
	int r = -ENOTCONN;

	if (!upcall_no_daemon)
		r = ask_daemon(ctx, kind, key, answer, &transport);
	/* The daemon's verdict stands (its backends are ours); only an unreachable or
	 * broken daemon sends us to in-process resolution. */
	if (r == 0 || !transport)
		return r;
	nfskeys_ctx_log(ctx, LOG_DEBUG, __FILE__, __LINE__, __func__,
			"nfskeys-idmapd not reachable (%s); resolving in-process", strerror(-r));
	flags = idmap_desc_nobody(kind) ? NFSKEYS_IDMAP_LOOKUP_NOBODY : 0;
	return nfskeys_idmap_lookup_full(ctx, kind, key, flags, answer);
}
