/* IDMAPD_NAMESPACES: the other network namespaces (containers) whose NFS client idmap
 * pipes nfskeys-idmapd serves, for `nfskeys idmapd namespaces` and `nfskeys doctor
 * --namespace` (nfskeys-idmapd(8) CONTAINERS).  Anyone may ask, as for the statistics,
 * which already count them: the list is namespace identities and pipe counts, no name. */
#include <errno.h>
#include <stdlib.h>

#include "idmapd.h"

void idmapd_handle_namespaces(struct idmapd *d, struct rpc_request *req, XDR *args)
{
	_cleanup_free_ struct kpaths_ns_info *info = NULL;
	_cleanup_free_ idmapd_namespace *out = NULL;
	idmapd_namespaces_res res = {};
	char kernel[IDMAPD_MESSAGE_MAX];
	size_t n;

	(void)args; /* no arguments; trailing bytes are ignored, as for STATS */
	if (!idmapd_allowed(d, IDMAPD_OP_NAMESPACES, req)) {
		res.status = -EPERM;
		res.kernel = (char *)"";
		idmapd_reply(d, IDMAPD_OP_NAMESPACES, req, (xdrproc_t)xdr_idmapd_namespaces_res,
			     &res);
		return;
	}
	info = calloc(IDMAPD_NAMESPACES_MAX, sizeof(*info));
	out = calloc(IDMAPD_NAMESPACES_MAX, sizeof(*out));
	if (!info || !out) {
		rpc_request_error(req, RPC_STATUS_SYSTEM_ERR);
		return;
	}
	n = kpaths_netns_list(d->kpaths, info, IDMAPD_NAMESPACES_MAX);
	res.total = (unsigned)MIN(n, (size_t)UINT_MAX);
	n = MIN(n, (size_t)IDMAPD_NAMESPACES_MAX);
	for (size_t i = 0; i < n; i++)
		out[i] = (idmapd_namespace){ .netns = info[i].ino,
					     .userns = info[i].userns_ino,
					     .pipes = info[i].pipes,
					     .open = info[i].open,
					     .translate = info[i].translate,
					     .maps_read = info[i].maps_read };
	res.enabled = d->kpaths_namespaces;
	kpaths_describe(d->kpaths, kernel, sizeof(kernel));
	res.kernel = kernel;
	res.namespaces.namespaces_len = (u_int)n;
	res.namespaces.namespaces_val = out;
	idmapd_reply(d, IDMAPD_OP_NAMESPACES, req, (xdrproc_t)xdr_idmapd_namespaces_res, &res);
}
