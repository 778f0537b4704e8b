/* libFuzzer target: nfskeys-attrd's request decoding for one connection's byte stream,
 * without sockets: record marking, the call header and the error replies of
 * common/rpc-server.c (fuzz-rpc.h), then the dispatcher's step for each procedure of
 * proto/attr.x: the strict XDR decode of the arguments (rpc_args_decode, as the daemon), the
 * validation the daemon does before it needs the directory descriptor or the store
 * (attribute assignments into a policy, attribute names, the identity of a lookup),
 * then the encoding of the reply that carries the result.  Decoded arguments must
 * re-encode to the same bytes. */
#include <stdint.h>
#include <string.h>

#include "fuzz-rpc.h"
#include "rpc-args.h"
#include "attr.h"
#include "nfskeys-attr-daemon.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The reply with a status and message, as the daemon sends for a refused change. */
static void change_reply(int status, const char *msg)
{
	static char buf[FUZZ_RPC_MAX_MSG * 4];
	attrd_change_res res = { .status = status, .message = (char *)msg, .domain = "",
				 .path = "" };
	XDR x;

	check(strlen(msg) <= ATTRD_MESSAGE_MAX);
	xdrmem_create(&x, buf, sizeof(buf), XDR_ENCODE);
	check(xdr_attrd_change_res(&x, &res));
	xdr_destroy(&x);
}

static void do_set(const attrd_set_args *a)
{
	struct nfskeys_attr_policy *policy = NULL;
	char msg[ATTRD_MESSAGE_MAX + 1] = "";
	int r = 0;

	check(nfskeys_attr_policy_new(&policy) == 0);
	if (a->attrs.attrs_len == 0) {
		snprintf(msg, sizeof(msg), "no attributes given");
		r = -EINVAL;
	}
	for (u_int i = 0; r == 0 && i < a->attrs.attrs_len; i++) {
		const attrd_kv *kv = &a->attrs.attrs_val[i];
		struct nfskeys_attr_entry e;

		check(kv->key && kv->value);
		r = nfskeys_attr_policy_set(policy, kv->key, kv->value, msg, sizeof(msg));
		if (r < 0) {
			check(r == -EINVAL && msg[0]);
			break;
		}
		check(nfskeys_attr_policy_get(policy, kv->key, &e) == 0 && streq(e.key, kv->key));
	}
	if (r == 0) {
		/* next the daemon needs the descriptor; none came with this message */
		check(nfskeys_attr_policy_count(policy) >= 1 &&
		      nfskeys_attr_policy_count(policy) <= a->attrs.attrs_len);
		snprintf(msg, sizeof(msg), "no directory descriptor came with the request");
		r = -EBADF;
	}
	change_reply(r, msg);
	nfskeys_attr_policy_free(policy);
}

static void do_unset(const attrd_unset_args *a)
{
	char msg[ATTRD_MESSAGE_MAX + 1] = "";
	int r = 0;

	if (!a->all && a->keys.keys_len == 0) {
		snprintf(msg, sizeof(msg), "no attributes named");
		r = -EINVAL;
	}
	for (u_int i = 0; r == 0 && !a->all && i < a->keys.keys_len; i++) {
		check(a->keys.keys_val[i] != NULL);
		r = attr_key_parse(a->keys.keys_val[i], msg, sizeof(msg));
		if (r < 0)
			check(r == -EINVAL && msg[0]);
		else
			r = 0;
	}
	if (r == 0) {
		snprintf(msg, sizeof(msg), "no directory descriptor came with the request");
		r = -EBADF;
	}
	change_reply(r, msg);
}

static void do_lookup(const attrd_lookup_args *a)
{
	struct nfskeys_attr_id *id = NULL;
	int r;

	check(a->domain && a->path);
	r = nfskeys_attr_id_new(a->domain, a->path, &id);
	if (r < 0) {
		check(r == -EINVAL || r == -ENAMETOOLONG);
		return;
	}
	/* the identity fits the protocol's reply fields */
	check(strlen(nfskeys_attr_id_get_domain(id)) <= ATTRD_DOMAIN_MAX &&
	      strlen(nfskeys_attr_id_get_path(id)) <= ATTRD_PATH_MAX &&
	      nfskeys_attr_id_get_path(id)[0] == '/');
	nfskeys_attr_id_free(id);
}

static enum rpc_status dispatch(const struct rpc_call *call, XDR *args)
{
	u_int start = xdr_getpos(args);

	switch (call->proc) {
	case ATTRD_NULL:
	case ATTRD_PING:
	case ATTRD_STATS:
	case ATTRD_RELOAD:
		return RPC_STATUS_SUCCESS;
	case ATTRD_SET: {
		attrd_set_args a = {};

		if (!rpc_args_decode(args, (xdrproc_t)xdr_attrd_set_args, &a)) {
			return RPC_STATUS_GARBAGE_ARGS;
		}
		check(a.attrs.attrs_len <= ATTRD_ATTRS_MAX);
		FUZZ_RPC_ROUNDTRIP(attrd_set_args, xdr_attrd_set_args, &a, args, start);
		do_set(&a);
		xdr_free((xdrproc_t)xdr_attrd_set_args, (char *)&a);
		return RPC_STATUS_SUCCESS;
	}
	case ATTRD_UNSET: {
		attrd_unset_args a = {};

		if (!rpc_args_decode(args, (xdrproc_t)xdr_attrd_unset_args, &a)) {
			return RPC_STATUS_GARBAGE_ARGS;
		}
		check(a.keys.keys_len <= ATTRD_ATTRS_MAX);
		FUZZ_RPC_ROUNDTRIP(attrd_unset_args, xdr_attrd_unset_args, &a, args, start);
		do_unset(&a);
		xdr_free((xdrproc_t)xdr_attrd_unset_args, (char *)&a);
		return RPC_STATUS_SUCCESS;
	}
	case ATTRD_LOOKUP: {
		attrd_lookup_args a = {};

		if (!rpc_args_decode(args, (xdrproc_t)xdr_attrd_lookup_args, &a)) {
			return RPC_STATUS_GARBAGE_ARGS;
		}
		FUZZ_RPC_ROUNDTRIP(attrd_lookup_args, xdr_attrd_lookup_args, &a, args, start);
		do_lookup(&a);
		xdr_free((xdrproc_t)xdr_attrd_lookup_args, (char *)&a);
		return RPC_STATUS_SUCCESS;
	}
	default:
		return RPC_STATUS_PROC_UNAVAIL;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_rpc_stream(data, size, NFSKEYS_ATTRD_PROG, NFSKEYS_ATTRD_V1, dispatch);
	return 0;
}
