/* libFuzzer target: nfskeys-idmapd's request decoding for one connection's byte stream,
 * without sockets: record marking, the call header and the error replies of
 * common/rpc-server.c (fuzz-rpc.h), then the dispatcher's step for each procedure of
 * proto/idmap.x: the strict XDR decode of the arguments (rpc_args_decode, as the daemon),
 * the daemon's checks, and for a lookup the worker's call (nfskeys_idmap_lookup_full with
 * nobody and no cache, through the real static and sid plugins) and the encoding of
 * the result.  Decoded arguments must re-encode to the same bytes. */
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz-env.h"
#include "fuzz-rpc.h"
#include "rpc-args.h"
#include "idmap.h"
#include "nfskeys.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static const char config[] =
	FUZZ_ENV_IDMAP_CONFIG
	"[Static]\n"
	"alice@example.org = 5001\n"
	"alice@EXAMPLE.ORG = 5001\n"
	"group:staff@example.org = 6001\n"
	"[SID]\n"
	"Auto-Domains = no\n"
	"S-1-5-21-1-2-3 = 100000-199999\n";

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_env_init("idmapd", config);
	return 0;
}

/* The worker's lookup and the reply the daemon would encode from its answer. */
static void lookup(const idmapd_lookup_args *a)
{
	struct nfskeys_idmap_answer ans;
	idmapd_lookup_res res = {};
	static char buf[FUZZ_RPC_MAX_MSG * 2];
	uint8_t sid[NFSKEYS_SID_BINARY_MAX];
	XDR x;
	int r;

	memset(&ans, 0, sizeof(ans));
	r = nfskeys_idmap_lookup_full(ctx, a->kind, a->key,
				      NFSKEYS_IDMAP_LOOKUP_NOBODY | NFSKEYS_IDMAP_LOOKUP_NO_CACHE,
				      &ans);
	check(r <= 0 && r != -ENOMEM);
	res.status = r;
	if (r == 0) {
		idmapd_answer *w = &res.idmapd_lookup_res_u.answer;

		check(ans.kind == a->kind && ans.n_groups <= NFSKEYS_IDMAP_GROUPS_MAX);
		w->kind = ans.kind;
		w->flags = ans.flags;
		w->error = ans.error;
		w->ttl = ans.ttl;
		w->id = ans.id;
		w->gid = ans.gid;
		w->groups.groups_len = ans.n_groups;
		w->groups.groups_val = ans.groups;
		if (ans.kind == NFSKEYS_IDMAP_UID_TO_SID || ans.kind == NFSKEYS_IDMAP_GID_TO_SID) {
			int n = nfskeys_sid_to_binary(&ans.sid, sid, sizeof(sid));

			check(n == NFSKEYS_SID_BINARY_MAX);
			w->sid.sid_len = (u_int)n;
			w->sid.sid_val = (char *)sid;
		}
		check(strnlen(ans.name, sizeof(ans.name)) < sizeof(ans.name));
		check(strnlen(ans.backend, sizeof(ans.backend)) < sizeof(ans.backend));
		w->name = ans.name;
		w->backend = ans.backend;
	}
	/* whatever the engine answers fits the protocol's limits */
	xdrmem_create(&x, buf, sizeof(buf), XDR_ENCODE);
	check(xdr_idmapd_lookup_res(&x, &res));
	xdr_destroy(&x);
}

static enum rpc_status dispatch(const struct rpc_call *call, XDR *args)
{
	u_int start = xdr_getpos(args);

	switch (call->proc) {
	case IDMAPD_NULL:
	case IDMAPD_PING:
	case IDMAPD_STATS:
	case IDMAPD_RELOAD:
	case IDMAPD_NAMESPACES:
		return RPC_STATUS_SUCCESS; /* no arguments; trailing bytes are ignored */
	case IDMAPD_LOOKUP: {
		idmapd_lookup_args a = {};

		if (!rpc_args_decode(args, (xdrproc_t)xdr_idmapd_lookup_args, &a)) {
			return RPC_STATUS_GARBAGE_ARGS;
		}
		check(a.key && strlen(a.key) <= IDMAPD_KEY_MAX);
		FUZZ_RPC_ROUNDTRIP(idmapd_lookup_args, xdr_idmapd_lookup_args, &a, args, start);
		/* the daemon's checks before it queues the lookup */
		if (a.kind != 0 && a.kind < _NFSKEYS_IDMAP_KIND_MAX && *a.key)
			lookup(&a);
		xdr_free((xdrproc_t)xdr_idmapd_lookup_args, (char *)&a);
		return RPC_STATUS_SUCCESS;
	}
	case IDMAPD_FLUSH: {
		idmapd_flush_args a = {};

		if (!rpc_args_decode(args, (xdrproc_t)xdr_idmapd_flush_args, &a)) {
			return RPC_STATUS_GARBAGE_ARGS;
		}
		check(a.key && strlen(a.key) <= IDMAPD_KEY_MAX && (a.all == TRUE || a.all == FALSE));
		FUZZ_RPC_ROUNDTRIP(idmapd_flush_args, xdr_idmapd_flush_args, &a, args, start);
		xdr_free((xdrproc_t)xdr_idmapd_flush_args, (char *)&a);
		return RPC_STATUS_SUCCESS;
	}
	default:
		return RPC_STATUS_PROC_UNAVAIL;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_rpc_stream(data, size, NFSKEYS_IDMAPD_PROG, NFSKEYS_IDMAPD_V1, dispatch);
	return 0;
}
